"""The overhead targets of docs/python.md, timed (marked `benchmark`: not in the pass/fail run).

    PYTHONPATH=build/python python3 -m pytest -m benchmark -s -c python/tests/pytest.ini python/tests

1. A replay called from Python costs less than 5% over the CLI's in-process time for a 100k-op
   run (the JSON report's run.wall_time_s, which `bubblesim run` measures around the same work).
2. 10,000 small scenarios (p 4, m 8) run from a Python loop in under 10 s on one core.
"""

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


@pytest.mark.benchmark
def test_replay_overhead_under_5_percent():
    scenario = bubblesim.load(LARGE)
    ratios = []
    for _ in range(5):
        start = time.perf_counter()
        report = bubblesim.run(scenario, stream="off")
        python_s = time.perf_counter() - start
        inside_s = report.to_dict()["run"]["wall_time_s"]
        ratios.append(python_s / inside_s)
    assert report["1f1b"].table["makespan_s"] > 0
    best = min(ratios)
    print(f"\n100k-op run: Python call / in-process time = {best:.4f} (best of 5: "
          f"{', '.join(f'{r:.4f}' for r in ratios)})")
    assert best < 1.05


@pytest.mark.benchmark
def test_ten_thousand_small_scenarios_under_10_s():
    texts = [SMALL.format(f=1 + (i % 100) / 100) for i in range(10_000)]
    start = time.perf_counter()
    makespans = [bubblesim.run(bubblesim.load(t), threads=1)["1f1b"].makespan_s for t in texts]
    elapsed = time.perf_counter() - start
    print(f"\n10,000 small scenarios (load + run, one thread): {elapsed:.2f} s")
    assert len(set(makespans)) == 100
    assert elapsed < 10
