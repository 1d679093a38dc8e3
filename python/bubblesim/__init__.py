"""bubblesim: a discrete-event simulator for pipeline-parallel training schedules, from Python.

The C++ engine (the same one as the ``bubblesim`` command) runs with the GIL released::

    import bubblesim
    report = bubblesim.run("scenarios/quickstart.yaml")
    print(report.verdict)                 # ranked schedules, fastest first
    report["1f1b"].simulation["makespan_s"]

Entry points: :func:`load` (path, YAML text or dict -> Scenario), :func:`run` (-> Report),
:class:`Table` and :class:`Op` (schedule tables, PyTorch CSV import/export), :func:`generator` /
:func:`register_generator` (schedules written in Python), :func:`sweep` (on any executor),
:func:`presets` / :func:`preset`. Bad input raises :class:`ScenarioError` carrying every
diagnostic. docs/python.md documents the whole API.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import yaml as _yaml

from . import _core
from ._core import Op, Scenario, ScenarioError, ScheduleConstraintError, Table
from ._generators import (ContractResult, GeneratorInput, Param, check_generator, explain,
                          generator, generators, load_plugin, register_generator)
from ._report import Report, ScheduleResult, Verdict, VerdictEntry
from ._sweep import SweepSummary, sweep

__version__ = _core.__version__

__all__ = [
    "ContractResult", "GeneratorInput", "Op", "Param", "Report", "Scenario", "ScenarioError",
    "ScheduleConstraintError", "ScheduleResult", "SweepSummary", "Table", "Verdict",
    "VerdictEntry", "check_generator", "explain", "generate", "generator", "generators", "load",
    "load_plugin", "preset", "presets", "read_torch_csv", "run", "sweep", "__version__",
]

DEFAULT_MAX_OPS = 50_000_000
ScenarioSource = Union[str, "os.PathLike[str]", Mapping[str, Any], Scenario]


def _looks_like_yaml(text: str) -> bool:
    return "\n" in text or (":" in text and not os.path.exists(text))


def load(source: ScenarioSource, *, name: Optional[str] = None,
         base_dir: str = ".") -> Scenario:
    """A validated Scenario from a file path, YAML text or a dict (the layout of a scenario file).

    Validation is the CLI's: every problem is collected and raised once as ScenarioError whose
    message names FILE:LINE:COL, the key, the bad value and what is allowed. YAML text and dicts
    are named ``name`` in messages (default ``<string>`` / ``<dict>``; a dict's lines are those
    of its YAML dump) and resolve relative files against ``base_dir``.
    """
    if isinstance(source, Scenario):
        return source
    if isinstance(source, Mapping):
        try:
            text = _yaml.safe_dump(_plain(source), sort_keys=False, default_flow_style=False)
        except _yaml.representer.RepresenterError as e:
            value = e.args[1] if len(e.args) > 1 else None
            raise _dict_error("", f"a value of type {type(value).__name__} is not YAML (use "
                                  "str, int, float, bool, None, dicts and lists)") from None
        return _core._load_string(text, name or "<dict>", base_dir)
    if isinstance(source, os.PathLike):
        return _core._load_file(os.fspath(source))
    if isinstance(source, str):
        if _looks_like_yaml(source):
            return _core._load_string(source, name or "<string>", base_dir)
        return _core._load_file(source)
    raise TypeError(f"load(): expected a path, YAML text, a dict or a Scenario, not "
                    f"{type(source).__name__}")


# Deeper than any scenario needs; the YAML loader refuses deeper nesting too (tests/errors/
# deep_nesting.yaml), and Python's own recursion limit is not an error a user should read.
_MAX_DEPTH = 64


def _plain(value: Any, path: str = "", active: Optional[set] = None, depth: int = 0) -> Any:
    """Mappings and sequences as dicts and lists, so safe_dump accepts them. A container that
    holds itself (a cycle) or nesting past _MAX_DEPTH raises ScenarioError naming the key path,
    as a bad file does."""
    if not isinstance(value, (Mapping, list, tuple)):
        return value
    active = set() if active is None else active
    where = path or "the top level"
    if id(value) in active:
        raise _dict_error(path, f"{where} holds itself (the dict or list refers back to one that "
                                "contains it): a scenario is a tree")
    if depth >= _MAX_DEPTH:
        raise _dict_error(path, f"{where} is nested more than {_MAX_DEPTH} levels deep")
    active.add(id(value))
    try:
        if isinstance(value, Mapping):
            return {str(k): _plain(v, f"{path}.{k}" if path else str(k), active, depth + 1)
                    for k, v in value.items()}
        return [_plain(v, f"{path}[{i}]", active, depth + 1) for i, v in enumerate(value)]
    finally:
        active.discard(id(value))


def _dict_error(path: str, message: str) -> ScenarioError:
    """A ScenarioError for a dict given to load(), as the loader words one for a file."""
    error = ScenarioError(f"<dict>: error: {path + ': ' if path else ''}{message}")
    error.diagnostics = [("<dict>", 0, 0, path, message)]
    return error


def run(scenario: ScenarioSource, *, schedules: Sequence[str] = (), baseline: str = "",
        max_ops: int = DEFAULT_MAX_OPS, threads: int = 0, stream: str = "auto",
        html: bool = False, html_max_ops: int = 100_000) -> Report:
    """Runs a scenario (anything :func:`load` takes) and returns its Report.

    ``schedules``: run only these generator names (those the scenario does not list run with
    their defaults), as ``bubblesim run --schedule``. ``baseline``: speed-ups against this label
    or name (default 1f1b when it ran). ``max_ops``, ``threads`` (Monte Carlo workers, 0 = every
    core) and ``stream`` (``auto``, ``on``, ``off``) are the CLI's --max-ops, --threads and
    --stream. ``html=True`` renders the HTML report during the run (otherwise
    ``Report.html()`` renders it on first use).
    A schedule that fails (out of memory, deadlock, infeasible) is reported, not raised:
    ``report.failed`` says whether any did.
    """
    if stream not in ("auto", "on", "off"):
        raise ValueError(f"stream={stream!r}: use auto, on or off")
    sc = load(scenario)
    args = (sc, list(schedules), baseline)
    settings = (max_ops, threads, stream)

    def render_html() -> str:
        return _core._run(*args, True, html_max_ops, *settings).html

    return Report(_core._run(*args, html, html_max_ops, *settings), sc, render_html)


def generate(scenario: ScenarioSource, schedule: str) -> Table:
    """The table of generator ``schedule`` for a scenario (anything :func:`load` takes), with the
    scenario's parameters for it when it lists it, else the defaults: what
    ``bubblesim table SCENARIO --schedule NAME`` exports (before the memory passes)."""
    return _core._generate(load(scenario), schedule)


def presets(kind: Optional[str] = None) -> Union[Dict[str, List[str]], List[str]]:
    """The preset names: ``{"models": [...], "gpus": [...], "frameworks": [...]}``, or one list
    for kind ``model`` / ``gpu`` / ``framework`` (``model: {preset: NAME}``, ``cluster.gpu:
    {preset: NAME}``, ``model: {framework: NAME}`` in scenarios)."""
    if kind is None:
        return {"models": list(_core._preset_names("model")),
                "gpus": list(_core._preset_names("gpu")),
                "frameworks": list(_core._preset_names("framework"))}
    return list(_core._preset_names(_kind(kind)))


def preset(kind: str, name: str) -> Dict[str, Any]:
    """The values of one preset, with their sources, as a dict (KeyError for an unknown name)."""
    text = _core._preset_yaml(_kind(kind), name)
    if text is None:
        known = ", ".join(_core._preset_names(_kind(kind)))
        raise KeyError(f"no {_kind(kind)} preset '{name}' (known: {known})")
    return _yaml.safe_load(text)


def _kind(kind: str) -> str:
    k = kind.rstrip("s")
    if k not in ("model", "gpu", "framework"):
        raise ValueError(f"preset kind {kind!r}: use model, gpu or framework")
    return k


def read_torch_csv(path: Union[str, "os.PathLike[str]"], dialect: str = "detect") -> Table:
    """Reads a PyTorch per-rank schedule CSV file into a Table (``Table.from_torch_csv`` reads
    text). ``dialect``: ``current``, ``2024`` or ``detect``."""
    with open(path, encoding="utf-8") as f:
        return Table.from_torch_csv(f.read(), dialect, os.fspath(path))
