#!/usr/bin/env python3
"""Times minPP's 1F1B simulation (docs/performance.md, "Peers").

minPP (ailzhang/minPP, pp.py) simulates a schedule tick by tick: every time unit, each idle worker
picks its highest-priority ready work item (1F1B: depth first, at most p - rank microbatches in
flight), and finished items feed the next stage at once. FWD takes 1 unit, BWD 2, transfers are
free: the same table and result as bubblesim's `1f1b` with F = 1, B = 2 and no communication.

Usage: minpp_1f1b.py CHECKOUT P M [REPEATS]
  CHECKOUT  a local checkout of the repository; pp.py is imported by path with matplotlib
            replaced by an empty module and plotting switched off (this script downloads nothing)
Prints one JSON line: p, m, ops, median seconds of the simulation over REPEATS runs (default 1;
its per-op trace goes to an in-memory buffer), ops per second, the same over the process's CPU
time (the machine is shared; bubblesim_bench's rates are CPU time too) and the makespan in units.
"""
import contextlib
import importlib.util
import io
import json
import statistics
import sys
import time
import types


def load(checkout):
    for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.patches"):
        module = types.ModuleType(name)
        module.Patch = object
        sys.modules[name] = module
    sys.modules["matplotlib"].pyplot = sys.modules["matplotlib.pyplot"]
    spec = importlib.util.spec_from_file_location("minpp_pp", checkout + "/pp.py")
    pp = importlib.util.module_from_spec(spec)
    sys.modules["minpp_pp"] = pp
    spec.loader.exec_module(pp)
    pp.PPSchedule.plot = lambda self: None
    return pp


def main():
    checkout, p, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    pp = load(checkout)
    seconds = []
    cpu_seconds = []
    makespan = None
    for _ in range(repeats):
        schedule = pp.PPSchedule.create_1f1b(full_model=pp.FullModelList(num_layers=p), pp_size=p)
        start = time.perf_counter()
        cpu_start = time.process_time()
        with contextlib.redirect_stdout(io.StringIO()):
            schedule.run_schedule_and_plot(num_microbatches=m)
        seconds.append(time.perf_counter() - start)
        cpu_seconds.append(time.process_time() - cpu_start)
        makespan = max(w.busy_until() if w.current_item else
                       max(s.start_timestamp + s.duration for s in w.assigned_segments)
                       for w in schedule.workers)
    median = statistics.median(seconds)
    cpu = statistics.median(cpu_seconds)
    ops = 2 * p * m
    print(json.dumps({"peer": "minPP 1f1b", "p": p, "m": m, "ops": ops, "seconds": median,
                      "ops_per_s": ops / median,
                      "cpu_seconds": cpu, "cpu_ops_per_s": ops / cpu, "makespan": makespan}))


if __name__ == "__main__":
    main()
