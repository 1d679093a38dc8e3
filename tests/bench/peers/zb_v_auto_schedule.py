#!/usr/bin/env python3
"""Runs the zero-bubble repository's V-shape scheduler (`v_auto_schedule.schedule`), to compare V placement against it.

The zero-bubble repository (sail-sg/zero-bubble-pipeline-parallelism, commit 39f2c186) builds
V-shaped schedules (two chunks per device, as ZB-V) from repeated building blocks under a memory
limit counted in chunk activations (F +1, W -1: a chunk's activation lives until its W), and keeps
the one with the least stage span. This driver imports
megatron/core/pipeline_parallel/zerobubble/scheduler/v_auto_schedule.py by path (it needs only
the standard library), runs it at a limit of FACTOR x 1F1B's memory (1F1B holds p M_B = 2p chunk
activations, so max_mem = FACTOR x 2p) with per-chunk costs F, B, W and the delay C, and prints
the stage span (largest per-device span, first F start to last W end) of the schedule it returns.

Usage: zb_v_auto_schedule.py CHECKOUT [--grid]
  --grid    the wider grid of tests/data/zb_v_auto_schedule_grid.csv (rows the scheduler cannot
            serve left out), not the six cases of tests/data/zb_v_auto_schedule.csv
  CHECKOUT  a local copy of the repository's scheduler folder, e.g.
            git -C MIRROR archive 39f2c186 megatron/core/pipeline_parallel/zerobubble/scheduler |
            tar -x -C /tmp/zbv
Prints CSV rows: p,m,f,b,w,c,factor,span,peak (peak in chunk activations).
"""
import contextlib
import importlib.util
import io
import os
import sys

SCHEDULER = "megatron/core/pipeline_parallel/zerobubble/scheduler"
CASES = [(4, 8, 1, 1, 1, 0), (4, 16, 1, 1, 1, 0), (4, 8, 2, 3, 1, 1), (4, 16, 2, 3, 1, 1),
         (8, 16, 1, 1, 1, 0), (8, 16, 2, 3, 1, 1)]
# --grid (tests/data/zb_v_auto_schedule_grid.csv): p 2 to 8, m 4 to 24 with m >= p, both costs.
GRID = [(p, m, *costs) for p in (2, 3, 4, 6, 8) for m in (4, 8, 12, 16, 24) if m >= p
        for costs in ((1, 1, 1, 0), (2, 3, 1, 1))]
FACTORS = [0.5, 0.75, 1.0]


def load(checkout):
    path = os.path.join(checkout, SCHEDULER, "v_auto_schedule.py")
    spec = importlib.util.spec_from_file_location("v_auto_schedule", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    v = load(sys.argv[1])
    grid = "--grid" in sys.argv[2:]
    print("p,m,f,b,w,c,factor,span,peak")
    for p, m, f, b, w, c in GRID if grid else CASES:
        for factor in FACTORS:
            max_mem = int(factor * 2 * p)
            with contextlib.redirect_stdout(io.StringIO()):  # it prints its memory table
                try:
                    nodes = v.schedule(p, m, (f, b, w, c), max_mem)
                except Exception:  # no building block fits the limit
                    nodes = None
            if nodes is None:
                if not grid:
                    print(f"{p},{m},{f},{b},{w},{c},{factor},,")
                continue
            span, peak = 0, 0
            for stage in nodes:
                first = min(n.start_time for n in stage)
                last = max(n.completion_time for n in stage)
                span = max(span, last - first)
                mem = 0
                for n in sorted(stage, key=lambda n: n.start_time):
                    mem += 1 if n.type == "F" else -1 if n.type == "W" else 0
                    peak = max(peak, mem)
            print(f"{p},{m},{f},{b},{w},{c},{factor},{span},{peak}")


if __name__ == "__main__":
    main()
