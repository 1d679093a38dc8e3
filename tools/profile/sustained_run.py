#!/usr/bin/env python3
"""Run F, B and W of GPT-style blocks back to back for a while and record every repetition.

profile_block.py gives an op's median over a short burst with a synchronisation between
repetitions. A training run keeps the GPU busy for minutes, and its pace can drift (clocks fall
as the GPU heats and meets its power limit) or wander from one iteration to the next. This
script builds the same blocks (profile_block.py's `build`), runs F, B, W of one microbatch after
another without synchronising between them for `--seconds`, times each op with CUDA events, and
writes one CSV row per repetition:

    rep,wall_s,forward_s,backward_input_s,backward_weight_s

Summary lines (`#`, also on stderr) give, per op, the median and the coefficient of variation
over all repetitions; the drift, the median F+B+W of the last quarter over the first quarter;
and the coefficient of variation of the sums over consecutive windows of `--window`
repetitions (an iteration's microbatches on one stage), which is what bubblesim's
`variability: {per: device}` draws once per device and iteration (docs/variability.md).

Exit status: 0 ok, 2 bad arguments, PyTorch missing or no CUDA GPU.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_block  # noqa: E402  (the same blocks as the profile)

OPS = ("forward", "backward_input", "backward_weight")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hidden", type=int, required=True)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--seq-len", type=int, required=True)
    p.add_argument("--micro-batch-size", type=int, default=1)
    p.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--seconds", type=float, default=60.0, help="how long to run (default 60)")
    p.add_argument("--window", type=int, default=24, help="repetitions per window (default 24)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-o", "--output", default="-", help="series CSV (default: stdout)")
    args = p.parse_args(argv)
    if args.seconds <= 0 or args.window < 1 or args.layers < 1:
        p.error("--seconds must be positive, --window and --layers at least 1")
    if args.hidden % args.heads != 0:
        p.error(f"--hidden {args.hidden} is not divisible by --heads {args.heads}")
    return args


def cv(samples):
    return statistics.stdev(samples) / statistics.fmean(samples) if len(samples) > 1 else 0.0


def run(torch, args):
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
    device = torch.device("cuda")
    torch.manual_seed(args.seed)
    stack, queue = profile_block.build(torch, args, device, dtype)
    shape = (args.seq_len, args.micro_batch_size, args.hidden)
    x = torch.randn(*shape, device=device, dtype=dtype, requires_grad=True)
    grad_out = torch.randn(*shape, device=device, dtype=dtype)
    params = list(stack.parameters())
    rows, pending = [], []
    start = time.perf_counter()
    rep = 0
    while True:
        events = profile_block.timed_microbatch(torch, stack, queue, x, grad_out)
        pending.append((rep, time.perf_counter() - start, events))
        rep += 1
        if len(pending) == 16:  # read the events in batches: no synchronisation per repetition
            torch.cuda.synchronize()
            for r, wall, ev in pending:
                rows.append((r, wall) + tuple(ev[i].elapsed_time(ev[i + 1]) * 1e-3 for i in range(3)))
            pending.clear()
            for p in params:  # a new iteration's gradients
                p.grad = None
            if time.perf_counter() - start >= args.seconds:
                return rows


def summary(rows, window):
    lines = [f"# {len(rows)} repetitions over {rows[-1][1]:.1f} s"]
    for i, op in enumerate(OPS):
        samples = [r[2 + i] for r in rows]
        lines.append(f"# {op}: median {statistics.median(samples) * 1e3:.3f} ms, cv {100 * cv(samples):.2f}%")
    totals = [sum(r[2:]) for r in rows]
    quarter = max(1, len(totals) // 4)
    drift = statistics.median(totals[-quarter:]) / statistics.median(totals[:quarter])
    lines.append(f"# drift: median F+B+W of the last quarter / first quarter = {drift:.4f}")
    sums = [sum(totals[i:i + window]) for i in range(0, len(totals) - window + 1, window)]
    lines.append(f"# windows of {window} repetitions: {len(sums)}, cv of their sums {100 * cv(sums):.2f}%")
    return lines


def main(argv):
    args = parse_args(argv)
    torch = profile_block.cuda_torch("sustained_run.py")
    if torch is None:
        return 2
    rows = run(torch, args)
    lines = [f"# device: {torch.cuda.get_device_name()}; hidden={args.hidden} heads={args.heads} "
             f"seq_len={args.seq_len} micro_batch_size={args.micro_batch_size} dtype={args.dtype} "
             f"layers={args.layers}"] + summary(rows, args.window)
    sys.stderr.write("\n".join(lines) + "\n")
    lines.append("rep,wall_s," + ",".join(f"{op}_s" for op in OPS))
    lines += [f"{r[0]},{r[1]:.6f},{r[2]:.9f},{r[3]:.9f},{r[4]:.9f}" for r in rows]
    profile_block.write_output(args.output, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
