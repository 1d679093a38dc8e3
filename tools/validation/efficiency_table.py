#!/usr/bin/env python3
"""The per-layer F, B, W table of docs/calibration.md ("The zero-bubble paper's layers").

For the zero-bubble paper's 1.5B and 6.2B models (Table 9, A100) and the 22B model of Korthikanti
et al. 2022 (Table 4, A100, TP 8), prints the measured per-layer times next to the model's at the
a100-80g datasheet curve and at the curve `bubblesim calibrate` fits to the 1.5B profile, with
every kernel mechanism on, each one off alone, and all off (the model before them). Each variant
refits the curve on the 1.5B profile, so a mechanism's effect on the held-out sizes is what is
left after the fit has absorbed what it can.

    tools/validation/efficiency_table.py build/bin/bubblesim
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAL = os.path.join(ROOT, "scenarios", "calibration")
# name, scenario, profile (None: no F/B/W split), layers of the measured stage, measured F, B, W
# per layer (ms; W None when only B + W is published)
MODELS = [
    ("1.5B (ZB Table 9)", "zb_1.5b_a100.yaml", 3, (18.522 / 3, 18.086 / 3, 9.337 / 3)),
    ("6.2B (ZB Table 9)", "zb_6.2b_a100.yaml", 4, (29.718 / 4, 29.444 / 4, 19.927 / 4)),
    ("22B (Korthikanti Table 4)", "korthikanti_22b_a100.yaml", 48, (7.7, 11.9, None)),
]
VARIANTS = [
    ("all mechanisms", {}),
    ("activation_fusion: fused", {"activation_fusion": "fused"}),
    ("glue_kernels: false", {"glue_kernels": "false"}),
    ("bias_grad: backward_weight", {"bias_grad": "backward_weight"}),
    ("none (the model before)", {"activation_fusion": "fused", "glue_kernels": "false",
                                 "bias_grad": "backward_weight"}),
]


def with_model_keys(text, keys, efficiency=None):
    """The scenario text with `keys` set in its model mapping and optionally the curve."""
    for k, v in keys.items():
        if re.search(rf"\b{k}: \w+", text):
            text = re.sub(rf"\b{k}: \w+", f"{k}: {v}", text)
        elif re.search(r"^  attention: standard$", text, re.M):  # block mapping
            text = re.sub(r"^  attention: standard$", f"  attention: standard\n  {k}: {v}", text,
                          flags=re.M)
        else:  # flow mapping
            text = text.replace("attention: standard", f"attention: standard, {k}: {v}", 1)
    if efficiency:
        text = re.sub(r"gpu: \{preset: a100-80g\}",
                      "gpu: {preset: a100-80g, efficiency: " + efficiency + "}", text)
    return text


def per_layer(binary, text, layers):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=CAL, delete=False) as f:
        f.write(text)
    try:
        out = subprocess.run([binary, "validate", f.name], capture_output=True, text=True,
                             check=True).stdout
    finally:
        os.unlink(f.name)
    rows = [line.split() for line in out.splitlines() if re.match(r"^\d+(-\d+)?\s+\d", line)]
    stage = rows[1] if len(rows) > 1 else rows[0]  # the middle stage (no embedding or head)
    return tuple(float(x) / layers for x in stage[1:4])


def fitted_curve(binary, text):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=CAL, delete=False) as f:
        f.write(text)
    try:
        out = subprocess.run([binary, "calibrate", os.path.join(CAL, "zb_1.5b_a100.csv"),
                              "--model", f.name, "--layers-per-stage", "3"],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(f.name)
    m = re.search(r"as a scenario: cluster.gpu.efficiency: (\{.*\})", out)
    return m.group(1)


def cells(pred, meas):
    f, b, w = pred
    mf, mb, mw = meas
    if mw is None:
        return [f"{f:.2f} ({f / mf - 1:+.0%})", f"{b + w:.2f} ({(b + w) / mb - 1:+.0%}) B+W", "-"]
    return [f"{p:.2f} ({p / m - 1:+.0%})" for p, m in zip(pred, meas)]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bin", "bubblesim")
    texts = {s: open(os.path.join(CAL, s)).read() for _, s, _, _ in MODELS}
    print("| variant | curve | model | F ms | B ms | W ms |")
    print("|---|---|---|---|---|---|")
    for name, m_file, layers, meas in MODELS:
        mw = "-" if meas[2] is None else f"{meas[2]:.3f}"
        mb = f"{meas[1]:.3f}" + (" (B+W)" if meas[2] is None else "")
        print(f"| measured | | {name} | {meas[0]:.3f} | {mb} | {mw} |")
    for vname, keys in VARIANTS:
        curve = fitted_curve(binary, with_model_keys(texts["zb_1.5b_a100.yaml"], keys))
        for cname, eff in (("datasheet", None), ("fitted on 1.5B", curve)):
            for name, m_file, layers, meas in MODELS:
                pred = per_layer(binary, with_model_keys(texts[m_file], keys, eff), layers)
                print(f"| {vname} | {cname} | {name} | " + " | ".join(cells(pred, meas)) + " |")
        print(f"| {vname} | fitted curve | | {curve} | | |")


if __name__ == "__main__":
    main()
