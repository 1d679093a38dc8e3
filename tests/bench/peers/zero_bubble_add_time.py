#!/usr/bin/env python3
"""Times the zero-bubble repository's re-simulator on a 1F1B table (docs/performance.md, "Peers").

The re-simulator is add_time() in megatron/core/pipeline_parallel/zerobubble/scheduler/passes.py
of sail-sg/zero-bubble-pipeline-parallelism: given each stage's op order, it computes every op's
start and completion time (one device per stage, a fixed communication cost between stages). The
table is the repository's own 1F1B (scheduler/basic1f1b.py: F and a fused BW per microbatch), the
same table as bubblesim's `1f1b` with an unsplit backward.

Usage: zero_bubble_add_time.py CHECKOUT P M [REPEATS]
  CHECKOUT  a local checkout of the repository (this script downloads nothing and imports only
            the scheduler modules, by path, so neither torch nor Megatron is needed)
Prints one JSON line: p, m, ops, median seconds of add_time over REPEATS runs (default 3),
ops per second, the same over the process's CPU time (the machine is shared; bubblesim_bench's
rates are CPU time too) and the makespan (F = 1, B = 2, W = 0, communication 0.1, in its units).
"""
import contextlib
import importlib
import io
import json
import statistics
import sys
import time
import types

SCHEDULER = "megatron.core.pipeline_parallel.zerobubble.scheduler"


def load(checkout):
    # Package modules with a path but without their __init__ (which imports torch).
    parts = SCHEDULER.split(".")
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        module = types.ModuleType(name)
        module.__path__ = [checkout + "/" + "/".join(parts[:i])]
        sys.modules[name] = module
    training = types.ModuleType("megatron.training")  # communication.py imports get_args
    training.get_args = lambda: None
    sys.modules["megatron.training"] = training
    graph = importlib.import_module(SCHEDULER + ".graph")
    passes = importlib.import_module(SCHEDULER + ".passes")
    basic = importlib.import_module(SCHEDULER + ".basic1f1b")
    return graph, passes, basic


def main():
    checkout, p, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    graph, passes, basic = load(checkout)
    config = graph.GraphConfig.basic_config(1.0, 2.0, 0.0, p, m, 1)
    config.cost_comm = 0.1
    with contextlib.redirect_stdout(io.StringIO()):  # create_schedule prints every stage's order
        order = basic.create_schedule(config)
    ops = sum(len(stage) for stage in order)
    seconds = []
    cpu_seconds = []
    makespan = None
    for _ in range(repeats):
        start = time.perf_counter()
        cpu_start = time.process_time()
        timed = passes.add_time(config, order)
        seconds.append(time.perf_counter() - start)
        cpu_seconds.append(time.process_time() - cpu_start)
        makespan = max(node.completion_time for stage in timed for node in stage)
    median = statistics.median(seconds)
    cpu = statistics.median(cpu_seconds)
    print(json.dumps({"peer": "zero-bubble add_time", "p": p, "m": m, "ops": ops,
                      "seconds": median, "ops_per_s": ops / median,
                      "cpu_seconds": cpu, "cpu_ops_per_s": ops / cpu, "makespan": makespan}))


if __name__ == "__main__":
    main()
