#!/usr/bin/env python3
"""Measure a GPU's roofline parameters and print them as a bubblesim `efficiency:` block.

bubblesim times each kernel of a layer with a GPU preset's roofline (scenarios/presets/gpus.yaml,
docs/models.md): a GEMM of F FLOPs takes `gemm_overhead + F / (peak x gemm_max)`, FlashAttention
runs at `attention.forward` / `attention.backward` of peak, and memory-bound kernels at `memory` x
the HBM bandwidth. This script measures those four numbers directly on the GPU at hand:

  gemm_max, gemm_overhead  least squares (relative error) of t = overhead + F / (peak x gemm_max) over
                           square and transformer-shaped GEMMs (--dtype) of at least 10 GFLOP,
                           timed with CUDA events
  memory                   bytes moved / time / bandwidth of large copies and adds
  attention.forward/backward
                           causal scaled_dot_product_attention on the flash backend (head
                           dim 128; the cuDNN backend is shown beside it where it runs), FLOPs
                           as docs/models.md counts them (forward 4 b a s^2 d / 2, backward
                           2.5x), over peak

`peak` and `bandwidth` come from the preset named by --preset (or --peak / --bandwidth), so the
fractions are comparable with the preset's. Output: one row per measurement, then the fitted
block next to the preset's. Each time is the median of --reps batches after warm-up; a batch
repeats the call for about a millisecond, so launch latency is hidden as in a training loop.

Exit status: 0 ok, 2 bad arguments, PyTorch missing or no CUDA GPU.
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_block  # noqa: E402  (its PyTorch check)

PRESETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scenarios", "presets", "gpus.yaml")
MIN_FIT_FLOPS = 1e10  # smaller GEMMs are bound by eager PyTorch's launch rate, not by the GPU
UNITS = {"TFLOPS": 1e12, "GFLOPS": 1e9, "TB/s": 1e12, "GB/s": 1e9}


def quantity(text):
    for unit, scale in UNITS.items():
        if str(text).endswith(unit):
            return float(str(text)[: -len(unit)]) * scale
    return float(text)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--preset", help="GPU preset of scenarios/presets/gpus.yaml giving peak and bandwidth")
    p.add_argument("--presets", default=PRESETS, help="the presets file (default: the repository's)")
    p.add_argument("--peak", help="peak dense FLOP/s for --dtype, e.g. 989.4TFLOPS (overrides the preset)")
    p.add_argument("--bandwidth", help="HBM bandwidth, e.g. 3.35TB/s (overrides the preset)")
    p.add_argument("--dtype", choices=["bf16", "fp16", "fp8"], default="bf16",
                   help="fp8: the GEMMs only, e4m3 operands with per-tensor scales through "
                   "torch._scaled_mm (bf16 output), against the preset's flops_fp8; prints "
                   "gemm_max_fp8")
    p.add_argument("--warmup", type=float, default=0.0,
                   help="seconds of 8192^3 GEMMs in --dtype before measuring, so that the clocks "
                   "settle where sustained work holds them (default 0)")
    p.add_argument("--reps", type=int, default=20, help="timed repetitions per measurement (default 20)")
    p.add_argument("--tokens", type=int, default=8192, help="tokens of the transformer-shaped GEMMs")
    args = p.parse_args(argv)
    if args.reps < 3:
        p.error("--reps must be at least 3")
    preset = {}
    if args.preset:
        try:
            import yaml
        except ImportError:
            p.error("--preset needs PyYAML; give --peak and --bandwidth instead")
        with open(args.presets, encoding="utf-8") as f:
            presets = yaml.safe_load(f)
        if args.preset not in presets:
            p.error(f"--preset {args.preset}: not in {args.presets} (allowed: {', '.join(presets)})")
        preset = presets[args.preset]
    peak = args.peak or preset.get(f"flops_{args.dtype}")
    bandwidth = args.bandwidth or preset.get("memory_bandwidth")
    if peak is None or bandwidth is None:
        p.error("give --preset, or --peak and --bandwidth")
    args.peak_value, args.bandwidth_value = quantity(peak), quantity(bandwidth)
    args.preset_efficiency = preset.get("efficiency")
    return args


def timer(torch, reps):
    """Median seconds of one fn() call, from reps CUDA-event-timed batches after warm-up.

    A batch runs fn() back to back often enough to last about a millisecond, so that the
    host's launch latency (tens of microseconds from Python) overlaps the GPU's work, as it
    does in a training loop, and small kernels are not timed by their launch.
    """

    def batch(fn, calls):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) * 1e-3 / calls

    def run(fn):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        calls = max(1, min(1000, round(1e-3 / batch(fn, 1))))
        return statistics.median(batch(fn, calls) for _ in range(reps))

    return run


def gemm_call(torch, m, n, k, dtype):
    """A function computing one m x n x k GEMM in `dtype` (None: FP8 through torch._scaled_mm)."""
    if dtype is not None:
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(k, n, device="cuda", dtype=dtype)
        return lambda: a @ b
    # FP8 e4m3, per-tensor scales, bf16 output: the second operand column-major, as cuBLASLt wants.
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda")
    return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)


def gemm_rows(torch, args, dtype, time_it):
    shapes = [(n, n, n) for n in (512, 1024, 2048, 4096, 8192)]
    t = args.tokens
    for h in (2304, 4096, 8192):  # QKV, FC1, FC2 of a GPT layer at `t` tokens
        shapes += [(t, 3 * h, h), (t, 4 * h, h), (t, h, 4 * h)]
    # A DeepSeek-V3 routed expert (hidden 7168, expert FFN 2048): gate and up, down.
    shapes += [(t, 2 * 2048, 7168), (t, 7168, 2048)]
    rows = []
    for m, n, k in shapes:
        seconds = time_it(gemm_call(torch, m, n, k, dtype))
        rows.append((f"gemm {m}x{n}x{k}", 2.0 * m * n * k, seconds))
    return rows


def warm_up(torch, dtype, seconds):
    """Runs 8192^3 GEMMs for `seconds`, so that the measurement sees sustained clocks."""
    import time

    fn = gemm_call(torch, 8192, 8192, 8192, dtype)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(20):
            fn()
        torch.cuda.synchronize()


def fit_gemm(rows, peak):
    """t = overhead + F * slope by least squares on the relative error; gemm_max = 1 / (peak * slope)."""
    # minimise sum((overhead / t + slope * F / t - 1)^2): linear in (overhead, slope)
    u = [1.0 / t for _, _, t in rows]
    v = [f / t for _, f, t in rows]
    suu, svv, suv = sum(x * x for x in u), sum(x * x for x in v), sum(a * b for a, b in zip(u, v))
    su, sv = sum(u), sum(v)
    det = suu * svv - suv * suv
    overhead = (su * svv - sv * suv) / det
    slope = (sv * suu - su * suv) / det
    return 1.0 / (peak * slope), overhead


def memory_rows(torch, dtype, time_it):
    n = 1 << 28  # 256 Mi elements: 512 MiB in 16 bits
    x = torch.randn(n, device="cuda", dtype=dtype)
    y = torch.empty_like(x)
    z = torch.randn(n, device="cuda", dtype=dtype)
    size = n * x.element_size()
    return [("copy 512MiB", 2.0 * size, time_it(lambda: y.copy_(x))),
            ("add 512MiB", 3.0 * size, time_it(lambda: torch.add(x, z, out=y)))]


def attention_rows(torch, dtype, time_it):
    """Causal attention, head dim 128, on each fused backend PyTorch has for this GPU."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    fn = torch.nn.functional.scaled_dot_product_attention
    rows = []
    for backend, label in ((SDPBackend.FLASH_ATTENTION, "flash"), (SDPBackend.CUDNN_ATTENTION, "cudnn")):
        for b, a, s in ((1, 32, 4096), (2, 16, 8192)):
            d = 128
            q, k, v = (torch.randn(b, a, s, d, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3))
            grad = torch.randn(b, a, s, d, device="cuda", dtype=dtype)
            flops = 4.0 * b * a * s * s * d / 2  # causal: half the score matrix
            try:
                with sdpa_kernel(backend):
                    forward = time_it(lambda: fn(q, k, v, is_causal=True))
                    both = time_it(lambda: torch.autograd.grad(fn(q, k, v, is_causal=True), (q, k, v), grad))
            except RuntimeError as e:  # the backend does not run here
                print(f"# {label} attention not available: {str(e).splitlines()[0]}")
                break
            rows.append((f"{label} forward b{b} a{a} s{s} d{d}", flops, forward))
            rows.append((f"{label} backward b{b} a{a} s{s} d{d}", 2.5 * flops, max(both - forward, 1e-9)))
    return rows


def gemm_fit(gemms, peak):
    """(GEMMs fitted, gemm_max, overhead, the fit's largest relative error): the GEMMs of at
    least MIN_FIT_FLOPS, fitted by fit_gemm."""
    fitted = [r for r in gemms if r[1] >= MIN_FIT_FLOPS]
    gemm_max, overhead = fit_gemm(fitted, peak)
    worst = max(abs((overhead + f / (peak * gemm_max)) / t - 1) for _, f, t in fitted)
    return fitted, gemm_max, overhead, worst


def print_flop_rows(rows, peak):
    """The table header, then one line per (name, FLOPs, seconds) row with its rate and its
    fraction of `peak`."""
    print(f"{'measurement':<40} {'work':>12} {'ms':>9} {'rate':>14} {'of peak':>8}")
    for name, work, seconds in rows:
        rate = work / seconds
        print(f"{name:<40} {work / 1e9:>9.1f} GF {seconds * 1e3:>9.3f} {rate / 1e12:>9.1f} TF/s {rate / peak:>8.3f}")


def print_preset(args):
    if args.preset_efficiency:
        print(f"preset {args.preset}: efficiency: {args.preset_efficiency}")


def report_fp8(args, gemms):
    """The FP8 GEMM rows and their ceiling as a fraction of the FP8 peak (gemm_max_fp8)."""
    fitted, gemm_max, overhead, worst = gemm_fit(gemms, args.peak_value)
    print_flop_rows(gemms, args.peak_value)
    print(f"measured: efficiency: {{gemm_max_fp8: {gemm_max:.3f}}}  (gemm_overhead {overhead * 1e6:.1f}us; "
          f"the fit's largest error over its {len(fitted)} GEMMs: {100 * worst:.1f}%)")
    print_preset(args)
    return 0


def main(argv):
    args = parse_args(argv)
    torch = profile_block.cuda_torch("roofline_probe.py")
    if torch is None:
        return 2
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp8": None}[args.dtype]
    time_it = timer(torch, args.reps)
    peak, bandwidth = args.peak_value, args.bandwidth_value
    print(f"# device: {torch.cuda.get_device_name()}; torch {torch.__version__}; dtype {args.dtype}; "
          f"peak {peak / 1e12:.1f} TFLOP/s; HBM {bandwidth / 1e12:.3f} TB/s")
    if args.warmup > 0:
        warm_up(torch, dtype, args.warmup)
    gemms = gemm_rows(torch, args, dtype, time_it)
    if dtype is None:
        return report_fp8(args, gemms)
    mems = memory_rows(torch, dtype, time_it)
    attn = attention_rows(torch, dtype, time_it)
    fitted, gemm_max, overhead, worst = gemm_fit(gemms, peak)
    print_flop_rows(gemms + attn, peak)
    for name, work, seconds in mems:
        rate = work / seconds
        print(f"{name:<40} {work / 1e9:>9.2f} GB {seconds * 1e3:>9.3f} {rate / 1e12:>9.3f} TB/s {rate / bandwidth:>8.3f}")
    memory = statistics.fmean(w / s / bandwidth for _, w, s in mems)
    flash = [r for r in attn if r[0].startswith("flash")] or attn or [("forward", 0, 1), ("backward", 0, 1)]
    forward = statistics.fmean(w / s / peak for n, w, s in flash if "forward" in n)  # 0: none ran
    backward = statistics.fmean(w / s / peak for n, w, s in flash if "backward" in n)
    print(f"measured: efficiency: {{gemm_max: {gemm_max:.3f}, gemm_overhead: {overhead * 1e6:.1f}us, "
          f"attention: {{forward: {forward:.2f}, backward: {backward:.2f}}}, memory: {memory:.2f}}}")
    print(f"  (the GEMM fit's largest error over its {len(fitted)} GEMMs: {100 * worst:.1f}%; GEMMs under "
          f"{MIN_FIT_FLOPS / 1e9:.0f} GFLOP are left out: from Python they time the host's launch rate)")
    print_preset(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
