#!/usr/bin/env python3
"""Turn a variability sweep CSV into the robustness tables of docs/variability.md.

Reads the CSV `bubblesim sweep` writes for a sweep over `variability.cv` (for example
scenarios/variability/robustness_sweep.yaml) and prints Markdown:

1. per schedule: the noiseless makespan and, at each cv, the mean makespan's slowdown over the
   noiseless replay, (mean / noiseless_makespan - 1), with twice its standard error;
2. the ranking by mean makespan at each cv, and every pair of schedules whose order differs from
   the noiseless order, marked significant when the two means differ by more than 3 standard
   errors of their difference (sd_a^2 / n + sd_b^2 / n, square-rooted).

Usage: robustness_table.py SWEEP.csv [--axis variability.cv]
"""

import argparse
import csv
import math
import sys


def read(path, axis):
    rows = []
    with open(path, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            if r.get("status", "ok") != "ok" or not r.get("makespan_s"):
                continue
            rows.append({
                "cv": float(r[axis]),
                "label": r["label"],
                "mean": float(r["makespan_s"]),
                "sd": float(r["makespan_sd_s"] or 0),
                "n": float(r["samples"] or 1),
                "noiseless": float(r["noiseless_makespan_s"] or r["makespan_s"]),
                "p95": float(r["makespan_p95_s"] or r["makespan_s"]),
            })
    return rows


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("csv")
    p.add_argument("--axis", default="variability.cv", help="the sweep column of the cv")
    args = p.parse_args(argv)
    rows = read(args.csv, args.axis)
    if not rows:
        sys.exit(f"{args.csv}: no rows with status ok and a makespan")
    cvs = sorted({r["cv"] for r in rows})
    labels = []
    for r in rows:
        if r["label"] not in labels:
            labels.append(r["label"])
    at = {(r["label"], r["cv"]): r for r in rows}

    def pct(x):
        return f"{100 * x:+.2f}%"

    print("| schedule | noiseless makespan | " + " | ".join(f"cv {100 * c:g}%" for c in cvs if c > 0)
          + " | sd at " + f"{100 * cvs[-1]:g}%" + " |")
    print("|---|---:|" + "---:|" * (len([c for c in cvs if c > 0]) + 1))
    for label in labels:
        base = at[(label, cvs[0])]["noiseless"]
        cells = []
        for c in cvs:
            if c == 0:
                continue
            r = at.get((label, c))
            if r is None:
                cells.append("-")
                continue
            se = r["sd"] / math.sqrt(r["n"]) / base
            cells.append(f"{pct(r['mean'] / base - 1)} ± {100 * 2 * se:.2f}")
        last = at.get((label, cvs[-1]))
        sd = f"{1e3 * last['sd']:.2f} ms" if last else "-"
        print(f"| {label} | {1e3 * base:.2f} ms | " + " | ".join(cells) + f" | {sd} |")

    print()
    print("Ranking by mean makespan (fastest first):")
    print()
    order0 = sorted(labels, key=lambda l: at[(l, cvs[0])]["mean"])
    for c in cvs:
        ranked = sorted([l for l in labels if (l, c) in at], key=lambda l: at[(l, c)]["mean"])
        print(f"- cv {100 * c:g}%: " + ", ".join(ranked))
    print()
    print("Pairs whose order differs from the noiseless order (significant: > 3 standard errors):")
    print()
    any_change = False
    for c in cvs[1:]:
        changes = []
        for i, a in enumerate(order0):
            for b in order0[i + 1:]:
                ra, rb = at.get((a, c)), at.get((b, c))
                if ra is None or rb is None or ra["mean"] <= rb["mean"]:
                    continue
                se = math.sqrt(ra["sd"] ** 2 / ra["n"] + rb["sd"] ** 2 / rb["n"])
                gap = ra["mean"] - rb["mean"]
                mark = "significant" if se > 0 and gap > 3 * se else "within the sampling error"
                changes.append(f"{b} now ahead of {a} by {1e3 * gap:.2f} ms ({mark})")
        if changes:
            any_change = True
            print(f"- cv {100 * c:g}%: " + "; ".join(changes))
    if not any_change:
        print("- none")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
