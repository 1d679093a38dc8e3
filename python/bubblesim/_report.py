"""Report objects: the results of one run, as the CLI's JSON report gives them.

A Report wraps the exact JSON that ``bubblesim run --format json`` writes (rendered by the same C++
writer) parsed into Python dicts, with properties on top: the verdict, per-schedule results at the
formula, table and simulation levels, per-device memory, the schedule tables as replayed, the text
report and the HTML report for Jupyter.
"""

from __future__ import annotations

import copy
import html as _html
import json
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple


def visible(text: str) -> str:
    """``text`` as the text report writes a user string: every control character (C0 such as
    ESC, BEL, CR and the newline; DEL; C1 such as U+009B) as \\xHH of its UTF-8 bytes, so a name
    cannot drive a terminal or forge a line (the C++ writers' visible_controls)."""
    out = []
    for ch in text:
        o = ord(ch)
        if o < 0x20 or o == 0x7F or 0x80 <= o < 0xA0:
            out.append("".join(f"\\x{b:02x}" for b in ch.encode("utf-8")))
        elif 0xD800 <= o < 0xE000:  # a lone surrogate is not UTF-8 either
            out.append(f"\\u{o:04X}")
        else:
            out.append(ch)
    return "".join(out)


class VerdictEntry:
    """One ranked schedule: rank (1 = fastest), label, the time it is ranked by (``time_s``: the
    simulated iteration time where an iteration completed, as the CLI's verdict; the report's
    ``ranking_metric`` names it), its makespan and its speed-up."""

    __slots__ = ("rank", "label", "time_s", "makespan_s", "speedup_vs_baseline")

    def __init__(self, rank: int, label: str, time_s: Optional[float],
                 makespan_s: Optional[float], speedup_vs_baseline: Optional[float]):
        self.rank = rank
        self.label = label
        self.time_s = time_s
        self.makespan_s = makespan_s
        self.speedup_vs_baseline = speedup_vs_baseline

    def __repr__(self) -> str:
        return (f"VerdictEntry(rank={self.rank}, label={self.label!r}, time_s={self.time_s!r}, "
                f"makespan_s={self.makespan_s!r}, speedup_vs_baseline={self.speedup_vs_baseline!r})")


class Verdict(list):
    """The ranking: schedules that ran without failing, fastest first (a list of VerdictEntry).

    ``str(verdict)`` is one line per schedule: rank, label, the ranking time (``metric``, the
    iteration time as the CLI ranks by) and speed-up; labels are written as the text report
    writes them (control characters as \\xHH), so no name starts a line of its own.
    """

    metric: str = ""
    baseline: Optional[str] = None

    def labels(self) -> List[str]:
        """The ranked labels, fastest first."""
        return [e.label for e in self]

    def __str__(self) -> str:
        if not self:
            return "no schedule ran without failing"
        shown = [visible(e.label) for e in self]
        width = max(len(s) for s in shown)
        lines = []
        for e, label in zip(self, shown):
            ms = "-" if e.time_s is None else f"{e.time_s * 1e3:.3f} ms"
            speed = "" if e.speedup_vs_baseline is None else (
                f"  {e.speedup_vs_baseline:.3f}x vs {visible(self.baseline or '')}")
            lines.append(f"{e.rank}. {label:<{width}}  {ms}{speed}")
        return "\n".join(lines)


class ScheduleResult:
    """One schedule's results: ``formula``, ``table`` and ``simulation`` are the JSON report's
    level objects (dicts; ``formula`` is None without a closed form), ``status`` is ``ok``,
    ``out_of_memory``, ``deadlock`` or ``infeasible``."""

    def __init__(self, data: Dict[str, Any], table_of: Callable[[str], Any],
                 timeline_of: Callable[[str, str], List[tuple]]):
        self._data = data
        self._table_of = table_of
        self._timeline_of = timeline_of

    label = property(lambda self: self._data["label"], doc="Name plus non-default parameters.")
    schedule = property(lambda self: self._data["schedule"], doc="The generator name.")
    status = property(lambda self: self._data["status"], doc="ok, out_of_memory, deadlock, ...")
    params = property(lambda self: self._data.get("params", {}), doc="Its parameter values.")
    formula = property(lambda self: self._data.get("formula"), doc="Closed-form level (or None).")
    table = property(lambda self: self._data.get("table"), doc="Idealized table-replay level.")
    simulation = property(lambda self: self._data.get("simulation"), doc="Simulation level.")

    @property
    def makespan_s(self) -> Optional[float]:
        """The simulated makespan in seconds (None for an infeasible schedule)."""
        sim = self.simulation
        return None if sim is None else sim.get("makespan_s")

    @property
    def memory(self) -> List[Dict[str, Any]]:
        """Per device: peak memory (bytes), when it peaked (s), peak activations (bytes)."""
        sim = self.simulation or {}
        peaks = sim.get("peak_memory_bytes_per_device") or []
        times = sim.get("peak_memory_time_s_per_device") or [None] * len(peaks)
        acts = sim.get("peak_activation_bytes_per_device") or [None] * len(peaks)
        return [{"device": d, "peak_memory_bytes": peaks[d], "peak_memory_time_s": times[d],
                 "peak_activation_bytes": acts[d]} for d in range(len(peaks))]

    @property
    def schedule_table(self):
        """The schedule as replayed (a bubblesim.Table; ops are empty for a streamed replay;
        None for an infeasible schedule)."""
        return self._table_of(self.label)

    def timeline(self, level: str = "simulation") -> List[Tuple[int, str, int, int, float, float]]:
        """Every op's (device, kind, stage, microbatch, start_s, end_s) in the ``simulation``
        replay or the idealized ``table`` replay, device by device in execution order (what the
        HTML report and the Chrome trace draw). Empty for a streamed replay (run with
        ``stream="off"`` to keep per-op timings) and an infeasible schedule."""
        if level not in ("simulation", "table"):
            raise ValueError(f"level {level!r}: use simulation or table")
        return self._timeline_of(self.label, level)

    def to_dict(self) -> Dict[str, Any]:
        """The JSON report's object of this schedule (a deep copy)."""
        return copy.deepcopy(self._data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __repr__(self) -> str:
        return f"<ScheduleResult {self.label} {self.status} makespan_s={self.makespan_s}>"


class Report:
    """The report of one run (see ``bubblesim.run``)."""

    def __init__(self, output: Any, scenario: Any, html_renderer: Callable[[], str]):
        self._data = json.loads(output.json)
        self._output = output  # renders the text report and the tables on first use
        self._text: Optional[str] = None
        self._html = output.html or None
        self._html_renderer = html_renderer
        self.scenario = scenario
        #: True when a schedule ran out of memory, deadlocked or was infeasible.
        self.failed = bool(output.failed)
        self._tables: Optional[Dict[str, Any]] = None
        self._results = [ScheduleResult(r, self._table_of, self._timeline_of)
                         for r in self._data["results"]]

    def _table_of(self, label: str) -> Any:
        if self._tables is None:
            self._tables = dict(zip(self._output.labels(), self._output.tables()))
        return self._tables.get(label)

    def _timeline_of(self, label: str, level: str) -> List[tuple]:
        labels = self._output.labels()
        if label not in labels:
            return []
        return self._output.timeline(labels.index(label), level == "table")

    @property
    def verdict(self) -> Verdict:
        """The ranked schedules, fastest first (``print(report.verdict)`` shows them)."""
        makespans = {r.label: r.makespan_s for r in self._results}
        v = Verdict(VerdictEntry(e["rank"], e["schedule"], e.get("time_s"),
                                 makespans.get(e["schedule"]), e.get("speedup_vs_baseline"))
                    for e in self._data["ranking"])
        v.metric = self._data.get("ranking_metric", "")
        v.baseline = self._data.get("baseline")
        return v

    @property
    def results(self) -> List[ScheduleResult]:
        """Every schedule that ran (and each infeasible one), in the scenario's order."""
        return list(self._results)

    def __getitem__(self, label: str) -> ScheduleResult:
        """The result of the schedule with this label (or generator name)."""
        for r in self._results:
            if r.label == label:
                return r
        for r in self._results:
            if r.schedule == label:
                return r
        raise KeyError(f"no schedule '{label}' in this report (labels: "
                       f"{', '.join(r.label for r in self._results)})")

    def __iter__(self) -> Iterator[ScheduleResult]:
        return iter(self._results)

    def __len__(self) -> int:
        return len(self._results)

    @property
    def skipped(self) -> List[Dict[str, Any]]:
        """Defaulted schedules that were skipped, with the reason."""
        return copy.deepcopy(self._data.get("skipped", []))

    @property
    def tables(self) -> Dict[str, Any]:
        """Label -> bubblesim.Table of every schedule that ran, as replayed."""
        return {r.label: r.schedule_table for r in self._results if r.schedule_table is not None}

    @property
    def text(self) -> str:
        """The text report, as ``bubblesim run`` prints it."""
        if self._text is None:
            self._text = self._output.text()
        return self._text

    def to_dict(self) -> Dict[str, Any]:
        """The whole JSON report (``bubblesim run --format json``) as Python objects."""
        return copy.deepcopy(self._data)

    def to_json(self, indent: Optional[int] = 2) -> str:
        """The JSON report as text."""
        return json.dumps(self._data, indent=indent)

    def to_pandas(self):
        """One row per schedule: label, schedule, status, rank, and every numeric metric of the
        formula, table and simulation levels as ``LEVEL.METRIC`` columns. Needs pandas."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the machine
            raise ImportError(
                "Report.to_pandas() needs pandas: install Debian's package with "
                "`apt-get install python3-pandas` (or `pip install pandas`)") from e
        ranks = {e["schedule"]: e["rank"] for e in self._data["ranking"]}
        rows = []
        for r in self._results:
            row: Dict[str, Any] = {"label": r.label, "schedule": r.schedule, "status": r.status,
                                   "rank": ranks.get(r.label)}
            for level in ("formula", "table", "simulation"):
                for key, value in (r._data.get(level) or {}).items():
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        row[f"{level}.{key}"] = value
            rows.append(row)
        return pd.DataFrame(rows).set_index("label")

    def html(self) -> str:
        """The self-contained HTML report (``bubblesim run --html``): verdict, timelines, memory.
        Rendered on first use (the scenario is run again with memory timelines)."""
        if self._html is None:
            self._html = self._html_renderer()
        return self._html

    def _repr_html_(self) -> str:
        page = _html.escape(self.html(), quote=True)
        return (f'<iframe srcdoc="{page}" style="width:100%;height:720px;border:none" '
                f'sandbox="allow-scripts"></iframe>')

    def __repr__(self) -> str:
        return f"<bubblesim.Report {self.scenario.name!r}: {', '.join(self.verdict.labels())}>"

    def __str__(self) -> str:
        return self.text
