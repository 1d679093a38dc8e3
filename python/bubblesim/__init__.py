"""bubblesim: a discrete-event simulator for pipeline-parallel training schedules, from Python.

The C++ engine (the same one as the ``bubblesim`` command) runs with the GIL released::

    import bubblesim
    report = bubblesim.run("scenarios/quickstart.yaml")
    print(report.verdict)                 # ranked schedules, fastest first
    report["1f1b"].simulation["makespan_s"]

Entry points: :func:`load` (path, YAML text or dict -> Scenario, edited by key path with
``Scenario.with_`` / ``Scenario.set``), :func:`run` (-> Report), :func:`plan` (the layouts of a
job on a cluster, ranked -> PlanReport),
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
from ._core import Op, ScenarioError, ScheduleConstraintError, Table
from ._generators import (ContractResult, GeneratorInput, Param, check_generator, explain,
                          generator, generators, load_plugin, register_generator)
from ._plan import PlanReport, plan
from ._report import Failure, Report, ScheduleResult, Verdict, VerdictEntry
from ._scenario import Scenario, load_scenario, native
from ._sweep import SweepSummary, sweep

__version__ = _core.__version__

__all__ = [
    "ContractResult", "Failure", "GeneratorInput", "Op", "Param", "PlanReport", "Report",
    "Scenario", "ScenarioError", "ScheduleConstraintError", "ScheduleResult", "SweepSummary",
    "Table", "Verdict", "VerdictEntry", "check_generator", "explain", "generate", "generator",
    "generators", "load", "load_plugin", "plan", "preset", "presets", "read_torch_csv", "run",
    "sweep", "__version__",
]

DEFAULT_MAX_OPS = 50_000_000
ScenarioSource = Union[str, "os.PathLike[str]", Mapping[str, Any], Scenario]


def load(source: ScenarioSource, *, name: Optional[str] = None,
         base_dir: str = ".") -> Scenario:
    """A validated Scenario from a file path, YAML text or a dict (the layout of a scenario file).

    Validation is the CLI's: every problem is collected and raised once as ScenarioError whose
    message names FILE:LINE:COL, the key, the bad value and what is allowed. YAML text and dicts
    are named ``name`` in messages (default ``<string>`` / ``<dict>``; a dict's lines are those
    of its YAML dump) and resolve relative files against ``base_dir`` (a file: against its own
    folder). ``Scenario.with_`` / ``Scenario.set`` edit it by key path.
    """
    return load_scenario(source, name, base_dir)


def run(scenario: ScenarioSource, *, schedules: Sequence[str] = (), baseline: str = "",
        max_ops: int = DEFAULT_MAX_OPS, threads: int = 0, stream: str = "auto",
        symmetry: str = "auto", html: bool = False, html_max_ops: int = 100_000) -> Report:
    """Runs a scenario (anything :func:`load` takes) and returns its Report.

    ``schedules``: run only these generator names (those the scenario does not list run with
    their defaults), as ``bubblesim run --schedule``. ``baseline``: speed-ups against this label
    or name (default 1f1b when it ran). ``max_ops``, ``threads`` (Monte Carlo workers, 0 = every
    core), ``stream`` (``auto``, ``on``, ``off``) and ``symmetry`` (``auto``, ``off``: the
    flows of collectives over many replicas solved one class at a time, or each on its own) are
    the CLI's --max-ops, --threads, --stream and --symmetry. ``html=True`` renders the HTML report during the run (otherwise
    ``Report.html()`` renders it on first use).
    A schedule that fails (out of memory, deadlock, infeasible) is reported, not raised:
    ``report.failed`` says whether any did.
    """
    if stream not in ("auto", "on", "off"):
        raise ValueError(f"stream={stream!r}: use auto, on or off")
    if symmetry not in ("auto", "off"):
        raise ValueError(f"symmetry={symmetry!r}: use auto or off")
    sc = load(scenario)
    args = (native(sc), list(schedules), baseline)
    settings = (max_ops, threads, stream, symmetry)

    def render_html() -> str:
        return _core._run(*args, True, html_max_ops, *settings).html

    return Report(_core._run(*args, html, html_max_ops, *settings), sc, render_html)


def generate(scenario: ScenarioSource, schedule: str) -> Table:
    """The table of generator ``schedule`` for a scenario (anything :func:`load` takes), with the
    scenario's parameters for it when it lists it, else the defaults: what
    ``bubblesim table SCENARIO --schedule NAME`` exports (before the memory passes)."""
    return _core._generate(native(load(scenario)), schedule)


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
