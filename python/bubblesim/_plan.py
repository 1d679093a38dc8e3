"""``bubblesim.plan``: the layouts of one training job on one cluster, ranked (docs/plan.md).

The same search as ``bubblesim plan`` (C++, the GIL released): enumerate the knobs, reject what
cannot divide or fit, estimate the rest, replay the best in full and rank them. The result is a
:class:`PlanReport`: the JSON report as dicts, the text, Markdown, CSV and HTML reports, and each
ranked layout's scenario to run or edit.
"""

from __future__ import annotations

import copy
import html as _html
import json
import os
from typing import Any, Dict, List, Mapping, Optional, Union


from . import _core
from ._scenario import Scenario, _dump_mapping, load_scenario


class PlanReport:
    """What ``bubblesim.plan`` found.

    ``ranked``: the replayed layouts, fastest first (dicts of the JSON report: ``label``,
    ``layout``, ``schedule``, ``iteration_time_s``, ``tokens_per_s_per_gpu``, ``mfu``,
    ``peak_memory_bytes``, ``split``, ``estimate``, ``beats_next``, ``scenario``);
    ``rejected_families``: the parallel layouts with no candidate left and why; ``summary``: what
    was searched and pruned. ``scenario(rank)`` is a ranked layout's Scenario (``best`` the
    first's), ready for ``bubblesim.run`` or ``with_``. ``text``, ``markdown``, ``csv``,
    ``html()`` and ``to_dict()`` are the CLI's reports.
    """

    def __init__(self, output: "_core._PlanOutput", base_dir: str):
        self._data = json.loads(output.json)
        self._output = output
        self._base_dir = base_dir

    ranked = property(lambda self: copy.deepcopy(self._data["ranked"]),
                      doc="The replayed layouts, fastest first.")
    rejected_families = property(lambda self: copy.deepcopy(self._data["rejected_families"]),
                                 doc="Parallel layouts with no candidate left, and why.")
    summary = property(lambda self: list(self._data["summary"]),
                       doc="What was searched and what became of it, one line each.")
    text = property(lambda self: self._output.text, doc="The text report.")
    markdown = property(lambda self: self._output.markdown, doc="The Markdown report.")
    csv = property(lambda self: self._output.csv, doc="One CSV row per candidate.")

    def scenario(self, rank: int = 1) -> Scenario:
        """The scenario of the layout ranked ``rank`` (1 = fastest), to run alone or edit."""
        ranked = self._data["ranked"]
        if not 1 <= rank <= len(ranked):
            raise IndexError(f"rank {rank}: the plan ranked {len(ranked)} layouts")
        entry = ranked[rank - 1]
        return load_scenario(entry["scenario"], f"<plan rank {rank}: {entry['label']}>",
                             self._base_dir)

    @property
    def best(self) -> Scenario:
        """The fastest layout's scenario."""
        return self.scenario(1)

    def to_dict(self) -> Dict[str, Any]:
        """The JSON report of ``bubblesim plan --format json``."""
        return copy.deepcopy(self._data)

    def html(self) -> str:
        """The self-contained HTML page (``bubblesim plan --html``)."""
        return self._output.html

    def _repr_html_(self) -> str:
        page = _html.escape(self.html(), quote=True)
        return (f'<iframe srcdoc="{page}" style="width:100%;height:720px;border:none" '
                f'sandbox=""></iframe>')

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        best = self._data["ranked"][0]["label"] if self._data["ranked"] else "none"
        return f"<bubblesim.PlanReport {self._data['name']!r}: best {best}>"


def plan(source: Union[str, "os.PathLike[str]", Mapping[str, Any], None] = None, *,
         model: str = "", gpu: str = "", nodes: int = 0, gpus_per_node: int = 8,
         topology: str = "", global_batch: int = 0, seq_len: int = 0,
         replays: int = 32, per_layout: int = 4, time_budget: float = 60.0, jobs: int = 0,
         name: Optional[str] = None, base_dir: str = ".") -> PlanReport:
    """Ranks the layouts of a job: ``bubblesim plan`` from Python.

    ``source``: a plan file's path, its YAML text or a dict of the same layout (the scenario
    sections the layouts share, and ``search``); or leave it out and give the job as
    ``model=``, ``gpu=``, ``nodes=`` (``gpus_per_node=``) or ``topology=``, ``global_batch=``
    and ``seq_len=``. ``replays``, ``per_layout``, ``time_budget`` (seconds, 0: none) and ``jobs``
    are the CLI's ``--replays``, ``--per-layout``, ``--time-budget`` and ``--jobs``. Relative
    files of a text or dict plan resolve against ``base_dir`` (a file's against its folder).
    Raises ScenarioError for a bad plan.
    """
    if source is None:
        text = _core._plan_flags_yaml(model, gpu, nodes, gpus_per_node, topology, global_batch,
                                      seq_len)
        label, folder = "<flags>", base_dir
    elif any((model, gpu, nodes, topology, global_batch, seq_len)):
        raise ValueError("plan(): give the job either as a plan (source) or as keywords "
                         "(model=, gpu=, ...), not both")
    elif isinstance(source, Mapping):
        text = _dump_mapping(source)
        label, folder = name or "<dict>", base_dir
    else:
        path = os.fspath(source)
        if "\n" in path or (":" in path and not os.path.exists(path)):
            text, label, folder = path, name or "<string>", base_dir
        else:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            label, folder = path, os.path.dirname(path) or "."
    return PlanReport(_core._plan(text, label, folder, replays, per_layout, time_budget, jobs),
                      folder)


__all__: List[str] = ["PlanReport", "plan"]
