#!/usr/bin/env python3
"""End-to-end test of the profiler (ctest label `torch`).

  usage: profile_e2e.py BUBBLESIM SOURCE_DIR OUT_DIR

1. runs tools/profile/profile_block.py on CPU for a tiny block (h 64, 4 heads, s 32, b 2, fp32,
   2 stages of 2 layers) with --check, giving OUT_DIR/profile.csv;
2. runs a scenario with `costs: {profile: profile.csv}` through `bubblesim table --format csv`
   (idealized replay) and `bubblesim run --trace` (simulation) for 1f1b (full backward = B + W)
   and zb-h1 (separate W), and checks every op lasts exactly the profile's duration;
3. runs `bubblesim calibrate` on the profile and checks the ratios, the fitted efficiency and the
   W < F < B line.
Fails (exit 1) when no Python with PyTorch is found: install Debian's python3-torch
(BUBBLESIM_WITH_TORCH=1 tools/setup) or point BUBBLESIM_TORCH_PYTHON at an interpreter with torch.
"""

import csv
import decimal
import json
import os
import subprocess
import sys

failures = []


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}", file=sys.stderr)


def torch_python():
    candidates = [os.environ.get("BUBBLESIM_TORCH_PYTHON", ""), sys.executable, "/usr/bin/python3"]
    for exe in candidates:
        if exe and os.path.exists(exe):
            if subprocess.run([exe, "-c", "import torch"], capture_output=True).returncode == 0:
                return exe
    return None


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        print(r.stdout, r.stderr, sep="\n", file=sys.stderr)
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {r.returncode}")
    return r.stdout


def ps(duration):
    """Picoseconds of a profile duration like '123.456789us' (exact decimal)."""
    for unit, scale in (("us", 10**6), ("ms", 10**9), ("ns", 10**3), ("ps", 1), ("s", 10**12)):
        if duration.endswith(unit):
            return int((decimal.Decimal(duration[: -len(unit)]) * scale).to_integral_value(decimal.ROUND_HALF_EVEN))
    raise ValueError(duration)


def main():
    bubblesim, source, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    python = torch_python()
    if python is None:
        print("FAIL: no Python with PyTorch found (tried BUBBLESIM_TORCH_PYTHON, python3, /usr/bin/python3); the torch "
              "test needs it: run BUBBLESIM_WITH_TORCH=1 tools/setup or apt-get install python3-torch", file=sys.stderr)
        return 1

    # 1. profile
    profile = os.path.join(out, "profile.csv")
    run([python, os.path.join(source, "tools/profile/profile_block.py"), "--device", "cpu", "--threads", "1",
         "--hidden", "64", "--heads", "4", "--seq-len", "32", "--micro-batch-size", "2", "--dtype", "fp32",
         "--layers", "1", "--layers-per-stage", "2", "--stages", "2", "--warmup", "2", "--reps", "5", "--check",
         "-o", profile])
    with open(profile, encoding="utf-8") as f:
        text = f.read()
    for needle in ("# device: CPU", "# software: torch ", "# model: hidden=64 heads=4 seq_len=32 micro_batch_size=2 "
                   "dtype=fp32", "# date: ", "B/W split checked", "# forward of the measured layers: median "):
        if needle not in text:
            fail(f"the profile header lacks '{needle}'")
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    got = {(r["op"], int(r["stage"])): r for r in rows}
    ops = ("forward", "backward_input", "backward_weight", "activation", "weight_grad", "p2p")
    for op in ops:
        for stage in (0, 1):
            if (op, stage) not in got:
                fail(f"the profile has no {op} row for stage {stage}")
    if failures:
        return 1
    for op in ops:  # the cv column: a fraction on every time row, empty on the size rows
        for stage in (0, 1):
            cv = got[(op, stage)].get("cv")
            if op in ops[:3] and (cv is None or not 0.0 <= float(cv) <= 10.0):
                fail(f"{op} of stage {stage} has no plausible cv: {cv!r}")
            if op not in ops[:3] and cv:
                fail(f"{op} of stage {stage} is a size but has a cv: {cv!r}")
    dur = {op: [ps(got[(op, s)]["duration"]) for s in (0, 1)] for op in ops[:3]}
    for op, values in dur.items():
        if min(values) <= 0:
            fail(f"{op} is not positive: {values}")
    p2p = got[("p2p", 0)]["bytes"]
    if p2p != f"{32 * 2 * 64 * 4}B":
        fail(f"p2p is {p2p}, expected s b h 4 = 16384B")
    activation = int(got[("activation", 0)]["bytes"][:-1])
    if not 2 * 64 * 64 * 4 <= activation <= 50 * 2 * 64 * 64 * 4:  # at least 2 layers' inputs, at most 50x
        fail(f"implausible activation bytes {activation}")

    # 1b. --attention flash: torch's fused attention where this PyTorch has it (2.0+), else a
    # clear refusal (exit 2) rather than a traceback
    flash_cmd = [python, os.path.join(source, "tools/profile/profile_block.py"), "--device", "cpu", "--threads", "1",
                 "--hidden", "64", "--heads", "4", "--seq-len", "32", "--dtype", "fp32", "--warmup", "1", "--reps", "2",
                 "--check", "--attention", "flash"]
    has_sdpa = subprocess.run([python, "-c", "import torch, sys; sys.exit(0 if hasattr(torch.nn.functional, "
                               "'scaled_dot_product_attention') else 1)"]).returncode == 0
    flash = subprocess.run(flash_cmd, capture_output=True, text=True)
    if has_sdpa and (flash.returncode != 0 or "attention=flash" not in flash.stdout):
        fail(f"--attention flash with scaled_dot_product_attention: exit {flash.returncode}, {flash.stderr[-300:]}")
    if not has_sdpa and (flash.returncode != 2 or "needs torch's scaled_dot_product_attention" not in flash.stderr):
        fail(f"--attention flash without scaled_dot_product_attention: exit {flash.returncode}, {flash.stderr[-300:]}")

    # 2. a scenario with the profile, table (idealized replay) and simulation
    scenario = os.path.join(out, "profiled.yaml")
    with open(scenario, "w", encoding="utf-8") as f:
        f.write("name: profiled-e2e\npipeline: {stages: 2, microbatches: 4}\ncosts: {profile: profile.csv}\n"
                "communication: {model: fixed-delay, delay: 0ms}\nschedules: [1f1b, zb-h1]\n")
    for schedule, separate_w in (("1f1b", False), ("zb-h1", True)):
        want = {"F": dur["forward"], "W": dur["backward_weight"],
                "B": dur["backward_input"] if separate_w else [b + w for b, w in
                                                               zip(dur["backward_input"], dur["backward_weight"])]}
        table = run([bubblesim, "table", scenario, "--schedule", schedule, "--format", "csv"])
        checked = 0
        for r in csv.DictReader(line for line in table.splitlines() if not line.startswith("#")):
            length = round((decimal.Decimal(r["end_s"]) - decimal.Decimal(r["start_s"])) * 10**12)
            expected = want[r["kind"]][int(r["stage"])]
            if abs(length - expected) > 2:  # the CSV prints seconds with 12 significant digits
                fail(f"{schedule} table: {r['kind']}{r['stage']}.{r['microbatch']} lasts {length}ps, the profile "
                     f"says {expected}ps")
            checked += 1
        if checked != (3 if separate_w else 2) * 2 * 4:
            fail(f"{schedule} table: {checked} ops checked")
        trace = os.path.join(out, f"{schedule}.trace.json")
        run([bubblesim, "run", scenario, "--schedule", schedule, "--trace", trace], cwd=out)
        with open(trace, encoding="utf-8") as f:
            events = json.load(f)
        events = events["traceEvents"] if isinstance(events, dict) else events
        # compute slices are named KIND STAGE.MICROBATCH ("F0.1") with args.stage
        slices = [e for e in events if e.get("ph") == "X" and e.get("name", "")[:1] in want and "stage" in e.get("args", {})]
        if len(slices) != checked:
            fail(f"{schedule} simulation: {len(slices)} compute slices, the table has {checked} ops")
        for e in slices:
            length = round(decimal.Decimal(str(e["dur"])) * 10**6)  # exact microseconds -> ps
            expected = want[e["name"][0]][e["args"]["stage"]]
            if length != expected:
                fail(f"{schedule} simulation: {e['name']} lasts {length}ps, the profile says {expected}ps")
    # 3. calibrate
    out_text = run([bubblesim, "calibrate", profile, "--hidden", "64", "--heads", "4", "--seq-len", "32",
                    "--micro-batch-size", "2", "--dtype", "fp32", "--layers-per-stage", "2", "--flops", "1TFLOPS"])
    print(out_text)
    for needle in ("measured/model", "forward ", "backward_input ", "backward_weight ", "activation ", "weight_grad ",
                   "p2p ", "fitted efficiency (least squares on the F/B/W times): ",
                   "efficiency from the totals", "W < F < B: ", "measured cv"):
        if needle not in out_text:
            fail(f"calibrate's output lacks '{needle}'")
    p2p_rows = [line.split() for line in out_text.splitlines() if line.startswith("p2p ")]
    if len(p2p_rows) != 2 or any(r[4] != "1.000" for r in p2p_rows):
        fail(f"calibrate: the p2p rows should match the model exactly (ratio 1.000): {p2p_rows}")
    if failures:
        return 1
    print(f"ok: profile {profile}, table and simulation reproduce its durations, calibrate ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
