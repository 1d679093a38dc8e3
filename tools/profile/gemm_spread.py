#!/usr/bin/env python3
"""Sustained GEMM rate and chip-to-chip spread from a table of per-GPU GEMM times (no GPU needed).

Reads a CSV with a `Time` column (seconds per n x n x n GEMM, one row per GPU and run; `#`
comment lines allowed), such as scenarios/profiles/perlmutter_a100_gemm.csv, and prints the rate
of each row as 2 n^3 / Time: its median, mean, coefficient of variation (sample standard
deviation over the mean) and range, the mean as a fraction of `--peak`, and that rate over the
ceiling of the preset's efficiency curve (`--gemm-max` x `--peak`): the preset's
`sustained_clock`. The coefficient of variation is the preset's `chip_spread` (it also holds the
run-to-run noise of each measurement, so it bounds the chips' own spread from above).

    python3 tools/profile/gemm_spread.py scenarios/profiles/perlmutter_a100_gemm.csv --nodes 40g

`--nodes 40g` / `80g` keeps the rows of one Perlmutter GPU model by the `Node` column: the 256
nodes with A100-SXM4-80GB are nid008000 and up, the 1536 with A100-SXM4-40GB below (the split
the dataset's own plotting scripts make; the two groups' rates do not overlap).

Exit status: 0 ok, 2 bad arguments or an unreadable table.
"""

import argparse
import csv
import statistics
import sys


def keep(row, nodes):
    if nodes == "all":
        return True
    number = int(row["Node"].removeprefix("nid"))
    return number >= 8000 if nodes == "80g" else number < 8000


def rates(text, n, nodes="all"):
    rows = list(csv.DictReader(line for line in text.splitlines() if line and not line.startswith("#")))
    if not rows or "Time" not in rows[0] or (nodes != "all" and "Node" not in rows[0]):
        raise ValueError("no rows with a Time (and, with --nodes, a Node) column")
    values = [2.0 * n**3 / float(r["Time"]) for r in rows if keep(r, nodes)]
    if len(values) < 2:
        raise ValueError("fewer than two rows to compare")
    return values


def summary(values, peak, gemm_max):
    mean = statistics.fmean(values)
    return {
        "rows": len(values),
        "median_tflops": statistics.median(values) / 1e12,
        "mean_tflops": mean / 1e12,
        "cv": statistics.stdev(values) / mean,
        "min_tflops": min(values) / 1e12,
        "max_tflops": max(values) / 1e12,
        "fraction_of_peak": mean / peak,
        "sustained_clock": mean / (gemm_max * peak),
    }


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("csv")
    p.add_argument("--n", type=int, default=32768, help="GEMM size n x n x n (default 32768)")
    p.add_argument("--peak", type=float, default=312e12, help="datasheet FLOP/s (default 312e12)")
    p.add_argument("--gemm-max", type=float, default=0.85, help="the preset's gemm_max (default 0.85)")
    p.add_argument("--nodes", choices=("all", "40g", "80g"), default="all",
                   help="Perlmutter rows of one GPU model (default all)")
    args = p.parse_args(argv)
    try:
        with open(args.csv, encoding="utf-8") as f:
            values = rates(f.read(), args.n, args.nodes)
    except (OSError, ValueError, KeyError) as e:
        print(f"gemm_spread: {args.csv}: {e}", file=sys.stderr)
        return 2
    s = summary(values, args.peak, args.gemm_max)
    print(f"rows {s['rows']}: median {s['median_tflops']:.1f} TFLOP/s, mean {s['mean_tflops']:.1f} "
          f"({s['fraction_of_peak']:.4f} of peak), range {s['min_tflops']:.1f}-{s['max_tflops']:.1f}")
    print(f"chip_spread (cv) {s['cv']:.4f}")
    print(f"sustained_clock (mean / (gemm_max x peak)) {s['sustained_clock']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
