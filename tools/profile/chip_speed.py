#!/usr/bin/env python3
"""Measure one GPU's sustained speed and say which physical chip it was, to compare chips.

A pipeline runs at the pace of its slowest device. GPUs of one model differ: each power-capped
chip settles at its own clock (manufacturing spread, cooling), which is what bubblesim's
`variability: {per: device}` describes (docs/variability.md). Run this on several GPUs of the
same model (one at a time is fine: the chip's identity is printed) and compare the rows.

After `--warmup` seconds of work the script runs bf16 GEMMs (n x n x n, default 8192) for
`--seconds`, timing windows of `--chain` GEMMs with CUDA events, while `nvidia-smi` samples the
SM clock, power and temperature every 500 ms. Then it times `--copy-mib` device-to-device copies
for a few seconds. Output (stdout or `-o`): `#` summary lines and one CSV row

    name,uuid,serial,power_limit_w,gemm_tflops,gemm_window_cv,sm_clock_mhz,power_w,temp_c,copy_gbs

with the medians over the measured windows. `--series` also writes every GEMM window.
Collect the rows of several chips in one CSV (`#` comment lines allowed) and
`chip_speed.py --spread FILE` prints, for each numeric speed column (gemm_tflops, copy_gbs and
any *_ms column such as a layer's time), the chips' coefficient of variation and range over the
median: the `cv` of `variability: {per: device}` for a pipeline on such chips. It needs no GPU.

Exit status: 0 ok, 2 bad arguments, PyTorch missing or no CUDA GPU.
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_block  # noqa: E402  (its PyTorch check and output helper)

IDENTITY = "name,uuid,serial,power.limit"
SAMPLES = "clocks.sm,power.draw,temperature.gpu"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=8192, help="GEMM size n x n x n (default 8192)")
    p.add_argument("--chain", type=int, default=20, help="GEMMs per timed window (default 20)")
    p.add_argument("--warmup", type=float, default=10.0, help="seconds before measuring (default 10)")
    p.add_argument("--seconds", type=float, default=40.0, help="seconds measured (default 40)")
    p.add_argument("--copy-mib", type=int, default=1024, help="copy size in MiB (default 1024)")
    p.add_argument("--series", default=None, help="write every GEMM window here (CSV)")
    p.add_argument("-o", "--output", default="-", help="summary and row (default: stdout)")
    p.add_argument("--spread", default=None, metavar="CSV",
                   help="no measurement: the spread between the chips of a collected CSV")
    args = p.parse_args(argv)
    if args.n < 256 or args.chain < 1 or args.seconds <= 0 or args.warmup < 0 or args.copy_mib < 1:
        p.error("--n >= 256, --chain >= 1, --seconds > 0, --warmup >= 0, --copy-mib >= 1")
    return args


def smi(fields, extra=()):
    return ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits", *extra]


def identity():
    """name, uuid, serial, power limit of GPU 0 (CUDA_VISIBLE_DEVICES order); '?' without nvidia-smi."""
    try:
        out = subprocess.run(smi(IDENTITY, ["-i", "0"]), capture_output=True, text=True, timeout=30)
        parts = [s.strip() for s in out.stdout.strip().split(",")]
        if out.returncode == 0 and len(parts) == 4:
            return parts
    except (OSError, subprocess.SubprocessError):
        pass
    return ["?"] * 4


def median_samples(lines):
    """Median SM clock, power and temperature over nvidia-smi's `clocks.sm,power.draw,temp` lines."""
    columns = [[], [], []]
    for line in lines:
        parts = [s.strip() for s in line.split(",")]
        if len(parts) != 3:
            continue
        try:
            values = [float(s) for s in parts]
        except ValueError:
            continue
        for column, value in zip(columns, values):
            column.append(value)
    return [statistics.median(c) if c else float("nan") for c in columns]


SPEED_COLUMNS = ("gemm_tflops", "copy_gbs")


def spread(text):
    """Per speed column of a chips CSV: (column, chips, cv, (max - min) / median)."""
    rows = list(csv.DictReader(line for line in text.splitlines() if line and not line.startswith("#")))
    columns = [c for c in (rows[0].keys() if rows else []) if c in SPEED_COLUMNS or c.endswith("_ms")]
    out = []
    for column in columns:
        values = [float(r[column]) for r in rows]
        cv = statistics.stdev(values) / statistics.fmean(values) if len(values) > 1 else 0.0
        out.append((column, len(values), cv, (max(values) - min(values)) / statistics.median(values)))
    return out


def gemm_windows(torch, args, seconds):
    a = torch.randn(args.n, args.n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(args.n, args.n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty_like(a)
    flops = 2.0 * args.n**3 * args.chain
    windows, start = [], time.perf_counter()
    while time.perf_counter() - start < seconds:
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(args.chain):
            torch.matmul(a, b, out=c)
        end.record()
        end.synchronize()
        windows.append(flops / (begin.elapsed_time(end) * 1e-3) / 1e12)
    return windows


def copy_gbs(torch, mib):
    src = torch.empty(mib * 2**20, device="cuda", dtype=torch.uint8)
    dst = torch.empty_like(src)
    rates = []
    for _ in range(20):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(10):
            dst.copy_(src)
        end.record()
        end.synchronize()
        rates.append(2 * 10 * src.numel() / (begin.elapsed_time(end) * 1e-3) / 1e9)  # read + write
    return statistics.median(rates)


def main(argv):
    args = parse_args(argv)
    if args.spread:
        try:
            with open(args.spread, encoding="utf-8") as f:
                columns = spread(f.read())
        except (OSError, ValueError, KeyError) as e:
            sys.stderr.write(f"chip_speed.py: --spread {args.spread}: {e}\n")
            return 2
        if not columns:
            sys.stderr.write(f"chip_speed.py: --spread {args.spread}: no speed column "
                             f"({', '.join(SPEED_COLUMNS)} or *_ms)\n")
            return 2
        profile_block.write_output(args.output, "".join(
            f"{c}: {n} chips, cv {100 * cv:.2f}%, range {100 * r:.2f}% of the median\n" for c, n, cv, r in columns))
        return 0
    torch = profile_block.cuda_torch("chip_speed.py")
    if torch is None:
        return 2
    name, uuid, serial, power_limit = identity()
    gemm_windows(torch, args, args.warmup)
    sampler = None
    try:
        sampler = subprocess.Popen(smi(SAMPLES, ["-i", "0", "-lms", "500"]), stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True)
    except OSError:
        pass
    windows = gemm_windows(torch, args, args.seconds)
    samples = []
    if sampler is not None:
        sampler.terminate()
        samples = sampler.communicate(timeout=30)[0].splitlines()
    clock, power, temp = median_samples(samples)
    copy = copy_gbs(torch, args.copy_mib)
    tflops = statistics.median(windows)
    window_cv = statistics.stdev(windows) / statistics.fmean(windows) if len(windows) > 1 else 0.0
    lines = [f"# device: {torch.cuda.get_device_name()} uuid {uuid} serial {serial}",
             f"# bf16 GEMM {args.n}^3: median {tflops:.1f} TFLOP/s over {len(windows)} windows of "
             f"{args.chain}, cv {100 * window_cv:.2f}%; SM clock {clock:.0f} MHz, power {power:.0f} W "
             f"(limit {power_limit}), {temp:.0f} C; copy {copy:.0f} GB/s",
             "name,uuid,serial,power_limit_w,gemm_tflops,gemm_window_cv,sm_clock_mhz,power_w,temp_c,copy_gbs",
             f"{name},{uuid},{serial},{power_limit},{tflops:.2f},{window_cv:.5f},{clock:.0f},{power:.1f},"
             f"{temp:.0f},{copy:.1f}"]
    sys.stderr.write(lines[1] + "\n")
    profile_block.write_output(args.output, "\n".join(lines) + "\n")
    if args.series:
        profile_block.write_output(args.series, "window,tflops\n" +
                                   "".join(f"{i},{w:.3f}\n" for i, w in enumerate(windows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
