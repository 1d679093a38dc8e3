"""The overhead targets of docs/python.md, timed (marked `benchmark`: not in the pass/fail run).

    PYTHONPATH=build/python BUBBLESIM_CLI=build/bin/bubblesim \
        python3 -m pytest -m benchmark -s -c python/tests/pytest.ini python/tests

1. A replay called from Python costs less than 5% over the CLI's in-process time for a 100k-op
   run: `bubblesim.run(path)` against `bubblesim run path --format json` less the CLI's start-up
   (`bubblesim --version`), best of 5 each. The replay's own time (the JSON report's
   run.wall_time_s) is printed too.
2. 10,000 small scenarios (p 4, m 8) loaded and run from a Python loop in under 10 s on one core:
   the process is pinned to one CPU and its CPU time is measured (wall time is printed too; on a
   shared machine it includes other processes' turns).
"""

import os
import subprocess
import time

import pytest

import bubblesim

SMALL = """name: small
pipeline: {{stages: 4, microbatches: 8}}
costs: {{forward: {f}ms, backward_input: 1.2ms, backward_weight: 0.6ms, activation_memory: 1GiB}}
communication: {{model: fixed-delay, delay: 0.1ms}}
schedules: [1f1b]
"""

LARGE = """name: large
pipeline: {stages: 8, microbatches: 6250}
costs: {forward: 1ms, backward_input: 1.2ms, backward_weight: 0.6ms, activation_memory: 1MiB}
communication: {model: fixed-delay, delay: 0.1ms}
schedules: [{name: 1f1b}]
"""


def _best(fn, times=5):
    best = float("inf")
    for _ in range(times):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.benchmark
def test_replay_overhead_under_5_percent(cli, tmp_path):
    path = tmp_path / "large.yaml"
    path.write_text(LARGE)
    out = tmp_path / "large.json"
    reports = []
    python_s = _best(lambda: reports.append(bubblesim.run(str(path), stream="off")))
    command = [cli, "run", str(path), "--format", "json", "--stream", "off", "-o", str(out), "-q"]
    process_s = _best(lambda: subprocess.run(command, check=True))
    startup_s = _best(lambda: subprocess.run([cli, "--version"], check=True, capture_output=True))
    in_process_s = process_s - startup_s
    replay_s = min(r.to_dict()["run"]["wall_time_s"] for r in reports)
    assert reports[0]["1f1b"].table["makespan_s"] > 0 and reports[0].tables["1f1b"].op_count() == 100_000
    print(f"\n100k-op run: Python {python_s * 1e3:.1f} ms, CLI in-process {in_process_s * 1e3:.1f} ms "
          f"(process {process_s * 1e3:.1f} ms - start-up {startup_s * 1e3:.1f} ms), replay alone "
          f"{replay_s * 1e3:.1f} ms; Python / CLI = {python_s / in_process_s:.3f}")
    assert python_s < 1.05 * in_process_s


@pytest.mark.benchmark
def test_ten_thousand_small_scenarios_under_10_s():
    texts = [SMALL.format(f=1 + (i % 100) / 100) for i in range(10_000)]
    affinity = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(affinity)})
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        makespans = [bubblesim.run(bubblesim.load(t), threads=1)["1f1b"].makespan_s for t in texts]
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        os.sched_setaffinity(0, affinity)
    print(f"\n10,000 small scenarios (load + run) on one core: {cpu:.2f} s CPU, {wall:.2f} s wall")
    assert len(set(makespans)) == 100
    assert cpu < 10
