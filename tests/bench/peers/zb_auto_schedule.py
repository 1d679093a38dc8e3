#!/usr/bin/env python3
"""Runs the zero-bubble repository's automatic scheduler on its paper's memory curve.

The zero-bubble repository (sail-sg/zero-bubble-pipeline-parallelism, commit 39f2c186) schedules
F, B and W with a greedy (`Graph.manual_order` in
megatron/core/pipeline_parallel/zerobubble/scheduler/zb.py) and keeps the best of its 8 flag
combinations (`initial_solution`). This driver imports that file by path (torch and pulp, which
the greedy itself does not use, are replaced by empty modules) and runs it on the ZB paper's
Table 9 costs (tests/data/zb_paper_table5_subset.csv, in microseconds: ms x 1000) with the
paper's per-layer memory, M_B = s b (34 h + 5 a s) and M_W = 32 s b h (only M_W / M_B matters),
under a limit of FACTOR x p M_B. Cost = the largest per-stage span (first F start to last W end),
bubble = 1 - m (T_F + T_B + T_W) / cost, as tests/data/zb_heuristic_curve.csv records them.

Usage: zb_auto_schedule.py CHECKOUT [FACTOR ...]
  CHECKOUT  a local copy of the repository (at least the scheduler folder above), e.g.
            git -C MIRROR archive 39f2c186 megatron/core/pipeline_parallel/zerobubble/scheduler |
            tar -x -C /tmp/zbpp
  FACTOR    limits in p M_B (default 1 1.25 1.5 2 3)
Prints the CSV rows of tests/data/zb_heuristic_curve.csv (model,p,m,factor,cost,bubble).
"""
import csv
import importlib.util
import os
import sys
import types

SCHEDULER = "megatron/core/pipeline_parallel/zerobubble/scheduler"
TABLE = os.path.join(os.path.dirname(__file__), "..", "..", "data", "zb_paper_table5_subset.csv")
SHAPE = {"1.5B": (2304, 24), "6.2B": (4096, 32)}  # hidden size h, attention heads a
SEQUENCE = 1024


def load(checkout):
    for name in ("torch", "pulp"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["torch"].Tensor = object  # only an annotation in zb.py
    # zb.py imports graph.py by its package path; register empty packages above it.
    parts = SCHEDULER.split("/")
    for k in range(1, len(parts) + 1):
        name = ".".join(parts[:k])
        package = types.ModuleType(name)
        package.__path__ = [os.path.join(checkout, *parts[:k])]
        sys.modules.setdefault(name, package)
    modules = {}
    for leaf in ("graph", "zb"):
        name = ".".join(parts) + "." + leaf
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(checkout, SCHEDULER, leaf + ".py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        modules[leaf] = module
    return modules["graph"], modules["zb"]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    graph, zb = load(sys.argv[1])
    factors = sys.argv[2:] or ["1", "1.25", "1.5", "2", "3"]
    print("model,p,m,factor,cost,bubble")
    with open(TABLE) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    for row in rows:
        model, p, m = row["model"], int(row["p"]), int(row["m"])
        h, a = SHAPE[model]
        mb = SEQUENCE * (34 * h + 5 * a * SEQUENCE)
        mw = 32 * SEQUENCE * h
        tf, tb, tw = (float(row[k]) * 1000 for k in ("t_f_ms", "t_b_ms", "t_w_ms"))
        for factor in factors:
            config = graph.GraphConfig(
                mem_f=[float(mb)] * p, mem_b=[float(mw - mb)] * p, mem_w=[float(-mw)] * p,
                max_mem=[float(factor) * p * mb] * p, cost_f=[tf] * p, cost_b=[tb] * p,
                cost_w=[tw] * p, cost_comm=float(row["t_comm_ms"]) * 1000, n_stages=p,
                n_micro=m)
            g = zb.Graph.build_graph(p, m, config)
            cost, _, _ = zb.initial_solution(g, print_result=False)
            bubble = 1 - m * (tf + tb + tw) / cost
            print(f"{model},{p},{m},{factor},{round(cost, 1)},{bubble:.4f}")


if __name__ == "__main__":
    main()
