"""Shared fixtures of the Python package's tests: the repository root, and the `bubblesim` CLI
(BUBBLESIM_CLI, which the ctest entry sets; else build/bin/bubblesim) for the equality tests."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
QUICKSTART = str(ROOT / "scenarios" / "quickstart.yaml")


@pytest.fixture(scope="session")
def root() -> pathlib.Path:
    return ROOT


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("BUBBLESIM_CLI") or str(ROOT / "build" / "bin" / "bubblesim")
    if not os.access(path, os.X_OK):
        pytest.skip("the bubblesim CLI is not built (set BUBBLESIM_CLI)")
    return path


def run_cli(cli: str, *args: str, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="100")
    return subprocess.run([cli, *args], capture_output=True, text=True, env=env, cwd=cwd)


def without_run(value):
    """A JSON report without its `run` objects (wall times, which differ between runs)."""
    if isinstance(value, dict):
        return {k: without_run(v) for k, v in value.items() if k != "run"}
    if isinstance(value, list):
        return [without_run(v) for v in value]
    return value
