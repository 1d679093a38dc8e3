#!/usr/bin/env python3
"""The GPU probes' arithmetic, and their refusal without a GPU (no GPU or PyTorch needed).

tools/profile/roofline_probe.py and sustained_run.py measure on a CUDA GPU, which no test may
need; what they compute from the times is checked here on made-up samples.
Usage: gpu_probe_math_test.py SOURCE_DIR
"""

import os
import subprocess
import sys

source = sys.argv[1]
tools = os.path.join(source, "tools", "profile")
sys.path.insert(0, tools)
import roofline_probe  # noqa: E402
import sustained_run  # noqa: E402
import chip_speed  # noqa: E402
import gemm_spread  # noqa: E402

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


# The GEMM fit recovers a known curve: t = 6.5 us + F / (989.4 TF x 0.72).
peak = 989.4e12
rows = [("g", f, 6.5e-6 + f / (peak * 0.72)) for f in (1e10, 5e10, 2e11, 1e12, 4e12)]
gemm_max, overhead = roofline_probe.fit_gemm(rows, peak)
check(abs(gemm_max - 0.72) < 1e-9, f"fit_gemm gemm_max {gemm_max} != 0.72")
check(abs(overhead - 6.5e-6) < 1e-12, f"fit_gemm overhead {overhead} != 6.5e-6")
check(roofline_probe.quantity("3.35TB/s") == 3.35e12, "quantity(3.35TB/s)")
check(roofline_probe.quantity("989.4TFLOPS") == 989.4e12, "quantity(989.4TFLOPS)")

# The sustained summary: 48 repetitions of F+B+W = 10 ms, then 16 of 11 ms (the last quarter
# 10% slower), windows of 16: sums 160, 160, 160, 176 ms.
series = [(i, 0.01 * i, 0.004, 0.004, 0.002) for i in range(48)]
series += [(48 + i, 0.5 + 0.011 * i, 0.0044, 0.0044, 0.0022) for i in range(16)]
lines = sustained_run.summary(series, 16)
text = "\n".join(lines)
check("drift: median F+B+W of the last quarter / first quarter = 1.1000" in text, "drift line:\n" + text)
# sample cv of (160, 160, 160, 176): mean 164, stdev 8 -> 4.88%
check("windows of 16 repetitions: 4, cv of their sums 4.88%" in text, "window line:\n" + text)
check("forward: median 4.000 ms" in text, "forward median:\n" + text)

# chip_speed: nvidia-smi's samples (a malformed line skipped) and the spread between chips.
clock, power, temp = chip_speed.median_samples(["1400, 690.0, 60", "1500, 700.5, 62", "[N/A], 1, 2",
                                                "1450, 695.0, 61"])
check((clock, power, temp) == (1450.0, 695.0, 61.0), f"median_samples {clock, power, temp}")
chips = "# comment\nname,gemm_tflops,temp_c,layer_ms\na,600,50,10\nb,660,60,11\nc,630,70,12\n"
got = {c: (n, round(cv, 6), round(r, 6)) for c, n, cv, r in chip_speed.spread(chips)}
# gemm: mean 630, sample stdev 30 -> cv 4.7619%, range 60/630; layer: mean 11, stdev 1, range 2/11
check(got == {"gemm_tflops": (3, 0.047619, 0.095238), "layer_ms": (3, 0.090909, 0.181818)},
      f"spread {got}")

# gemm_spread: rate = 2 n^3 / Time, per Perlmutter node group, and the A100 presets' numbers are
# what it computes from scenarios/profiles/perlmutter_a100_gemm.csv (gpus.yaml cites the command).
table = "# c\nNode,GPU,Time\nnid001000,0,2.0\nnid001001,1,1.0\nnid008000,0,0.5\n"
check([round(r) for r in gemm_spread.rates(table, 10, "40g")] == [1000, 2000], "gemm_spread 40g rates")
check([round(r) for r in gemm_spread.rates(table + "nid008001,1,0.5\n", 10, "80g")] == [4000, 4000],
      "gemm_spread 80g rates")
s40 = gemm_spread.summary(gemm_spread.rates(table, 10, "40g"), 2000.0, 0.75)
check(abs(s40["sustained_clock"] - 1500 / 1500) < 1e-12 and abs(s40["fraction_of_peak"] - 0.75) < 1e-12,
      f"gemm_spread summary {s40}")
import yaml  # noqa: E402  (python3-yaml, a tools/setup package)
with open(os.path.join(source, "scenarios", "presets", "gpus.yaml")) as f:
    presets = yaml.safe_load(f)
with open(os.path.join(source, "scenarios", "profiles", "perlmutter_a100_gemm.csv")) as f:
    perlmutter = f.read()
for preset, nodes in (("a100-40g", "40g"), ("a100-80g", "80g")):
    got = gemm_spread.summary(gemm_spread.rates(perlmutter, 32768, nodes), 312e12, 0.85)
    check(round(got["cv"], 4) == presets[preset]["chip_spread"],
          f"{preset} chip_spread {presets[preset]['chip_spread']} != {got['cv']:.4f} from the data")
    if "sustained_clock" in presets[preset]:
        check(round(got["sustained_clock"], 3) == presets[preset]["sustained_clock"],
              f"{preset} sustained_clock != {got['sustained_clock']:.3f} from the data")
    else:  # refused only where the data shows no throttling below the curve
        check(got["sustained_clock"] > 1.0, f"{preset}: {got['sustained_clock']:.3f} <= 1 yet no sustained_clock")

# Without a CUDA GPU (or without PyTorch) each refuses with exit 2 and say why.
for script, extra in (("roofline_probe.py", ["--peak", "989.4TFLOPS", "--bandwidth", "3.35TB/s"]),
                      ("sustained_run.py", ["--hidden", "64", "--heads", "4", "--seq-len", "16", "--seconds", "1"]),
                      ("chip_speed.py", ["--seconds", "1"])):
    run = subprocess.run([sys.executable, os.path.join(tools, script)] + extra, capture_output=True, text=True)
    check(run.returncode == 2, f"{script} without a GPU: exit {run.returncode}, stderr {run.stderr!r}")
    check(script in run.stderr and ("GPU" in run.stderr or "PyTorch" in run.stderr),
          f"{script} without a GPU: unclear message {run.stderr!r}")
bad = subprocess.run([sys.executable, os.path.join(tools, "roofline_probe.py"), "--preset", "nope"],
                     capture_output=True, text=True)
check(bad.returncode == 2 and "allowed: a100-40g" in bad.stderr, f"unknown preset: {bad.returncode} {bad.stderr!r}")

if failures:
    print("FAIL:\n" + "\n".join(failures))
    sys.exit(1)
print("ok: gemm fit, sustained summary, chip spread, the A100 presets from their data, refusals")
