"""Sweeps on any ``concurrent.futures.Executor``.

The points of a sweep file (docs/sweep-files.md) run wherever the executor runs them: local
processes by default, a Dask ``Client.get_executor()``, Ray's, or ``mpi4py.futures``. Each point's
rows come from the C++ code of ``bubblesim sweep`` and the main process writes them in point order
to the same streamed, locked, resumable file, so the CSV is byte for byte the one
``bubblesim sweep`` writes for the same sweep file and ``--max-ops``.
"""

from __future__ import annotations

import collections
import concurrent.futures
import os
import threading
from typing import Dict, List, Optional, Sequence, Tuple

from . import _core
from ._generators import load_plugin

DEFAULT_MAX_OPS = 50_000_000

_plans: Dict[Tuple[str, int], "_core._SweepPlan"] = {}
_plans_lock = threading.Lock()


class SweepSummary:
    """What a sweep did: ``points`` (in this shard), ``resumed`` (kept from an earlier run),
    ``failed`` (points whose scenario was invalid: rows with an error), ``rows`` written by this
    run, and ``notes`` (what resuming repaired)."""

    def __init__(self, output: str, points: int, resumed: int, failed: int, rows: int,
                 notes: List[str]):
        self.output, self.points, self.resumed = output, points, resumed
        self.failed, self.rows, self.notes = failed, rows, notes

    def __repr__(self) -> str:
        return (f"SweepSummary(output={self.output!r}, points={self.points}, "
                f"resumed={self.resumed}, failed={self.failed}, rows={self.rows})")


def _plan(path: str, max_ops: int) -> "_core._SweepPlan":
    with _plans_lock:
        plan = _plans.get((path, max_ops))
        if plan is None:
            plan = _plans[(path, max_ops)] = _core._SweepPlan(path, max_ops, 0, 1)
        return plan


def _run_point(path: str, cwd: str, max_ops: int, point: int,
               plugins: Sequence[str]) -> Tuple[str, bool]:
    """Runs on the executor's worker: the CSV rows of one point and whether it failed."""
    for plugin in plugins:
        load_plugin(plugin)
    if not os.path.isabs(path) and os.getcwd() != cwd:
        path = os.path.join(cwd, path)  # rows then name the file as the worker reaches it
    return _plan(path, max_ops).run_point(point, 1)


def _parse_shard(shard) -> Tuple[int, int]:
    """None: from the environment as `bubblesim sweep` (Slurm arrays, Kubernetes indexed Jobs);
    "I/N" parsed as --shard; or a pair."""
    if shard is None or isinstance(shard, str):
        return tuple(_core._shard(shard or ""))
    index, count = shard
    return int(index), int(count)


def sweep(sweep_file: str, output: str, *,
          executor: Optional[concurrent.futures.Executor] = None, resume: bool = False,
          max_ops: int = DEFAULT_MAX_OPS, shard=None, plugins: Sequence[str] = (),
          max_workers: Optional[int] = None, window: Optional[int] = None) -> SweepSummary:
    """Runs every point of ``sweep_file`` (or one shard: ``"I/N"`` or ``(I, N)``) and writes the
    CSV ``output`` as ``bubblesim sweep SWEEP -o OUTPUT`` does.

    ``shard`` None reads it from SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT or
    JOB_COMPLETION_INDEX/BUBBLESIM_SHARD_COUNT when set, as ``bubblesim sweep`` does.
    ``executor``: any ``concurrent.futures.Executor``; None runs on a local process pool of
    ``max_workers`` processes. ``resume=True`` keeps the verified rows of an interrupted run
    (``OUTPUT.partial``) and runs the rest, giving the bytes an uninterrupted run writes.
    ``plugins``: Python files that register generators, imported on every worker first.
    ``window`` bounds the points in flight (default 4 per worker, at least 64).
    Raises ScenarioError when the sweep file or its first point is invalid.
    """
    shard_index, shard_count = _parse_shard(shard)
    plugins = [os.path.abspath(p) for p in plugins]
    for plugin in plugins:
        load_plugin(plugin)
    plan = _core._SweepPlan(os.fspath(sweep_file), max_ops, shard_index, shard_count)
    remaining, notes = plan.start(os.fspath(output), resume)
    own = executor is None
    if own:
        executor = concurrent.futures.ProcessPoolExecutor(max_workers=max_workers)
    workers = max_workers or os.cpu_count() or 1
    window = window or max(64, 4 * workers)
    summary = SweepSummary(os.fspath(output), len(plan.points), plan.resumed, 0, 0, notes)
    cwd = os.getcwd()
    pending: "collections.deque" = collections.deque()
    try:
        todo = iter(remaining)
        for point in todo:
            pending.append(executor.submit(_run_point, os.fspath(sweep_file), cwd, max_ops,
                                           point, plugins))
            if len(pending) >= window:
                _write(plan, pending.popleft().result(), summary)
        while pending:
            _write(plan, pending.popleft().result(), summary)
        plan.finish()
    except BaseException:
        for f in pending:
            f.cancel()
        plan.abandon()  # OUTPUT.partial keeps the rows written so far: resume=True continues
        raise
    finally:
        if own:
            executor.shutdown(wait=True, cancel_futures=True)
    return summary


def _write(plan, result: Tuple[str, bool], summary: SweepSummary) -> None:
    rows, failed = result
    plan.append(rows)
    summary.rows += rows.count("\n")
    summary.failed += int(failed)
