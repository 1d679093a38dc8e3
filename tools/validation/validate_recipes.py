#!/usr/bin/env python3
"""Run the shipped recipe scenarios and write docs/validation-recipes.md: each prediction beside
the figure its recipe's publication reports.

Every row of scenarios/validation/recipes_published.csv names a scenario under scenarios/ written
in the recipe's own terms (global batch, micro-batch, TP / PP / CP / VP / EP, FSDP, sequence
length, presets; nothing fitted) and the published throughput of that run with its source. This
runs `bubblesim run --format json` on it and compares the recipe schedule's tokens/s per GPU (or
the published unit) with the publication's. Each mechanism the scenario uses is then switched
alone (the ablation) and the run repeated.

The command line is validation_common.validation_main's: --write-docs rewrites
docs/validation-recipes.md, --check (the ctest `validation_recipes`) fails when the file is not
what this run writes or a row ran out of memory, --bubblesim and --jobs choose the binary and the
runs at a time.
"""
import json
import os
import re
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor

from validation_common import (ROOT, closing_sections, pct, published_rows, run_scenario_raw,
                               validation_main)

PUBLISHED = os.path.join(ROOT, "scenarios", "validation", "recipes_published.csv")
SCENARIOS = os.path.join(ROOT, "scenarios")
DOC = os.path.join(ROOT, "docs", "validation-recipes.md")


def run(binary, text, schedule):
    """The recipe schedule's simulation block, or the error line when the scenario is refused."""
    code, stdout, stderr = run_scenario_raw(binary, text)
    if code == 2:
        return {"refused": stderr.strip().splitlines()[0].split("error: ", 1)[-1]}
    if code not in (0, 1):
        sys.exit(f"bubblesim failed (exit {code}):\n{stderr}")
    report = json.loads(stdout)
    mechanisms = report["scenario"].get("cluster", {}).get("gpu", {}).get("first_principles", {})
    for r in report["results"]:
        if r["label"] == schedule:
            return dict(r["simulation"], mechanisms_on=sorted(mechanisms.get("on", {})))
    sys.exit(f"no schedule {schedule!r} in the report")


def predicted(row, sim):
    """The prediction in the published unit."""
    metric = row["measured_metric"]
    if metric == "tokens/s/GPU":
        return sim["tokens_per_s_per_gpu"]
    if metric == "TFLOP/s/GPU":
        return sim["model_tflops_per_gpu"]
    if metric == "H800 GPU hours per trillion tokens":
        return sim["gpu_hours_per_trillion_tokens"]
    sys.exit(f"{row['id']}: unknown measured_metric {metric!r}")


def error(row, value):
    """How much faster (+) or slower (-) than measured the prediction runs."""
    measured = float(row["measured_value"])
    if row["measured_metric"].startswith("H800 GPU hours"):
        return measured / value - 1.0  # fewer GPU hours: faster
    return value / measured - 1.0


def edit_map(text, key, extra):
    """`text` with `extra` (key: value) added to the flow map `key: {...}` (one or more lines),
    a key already there replaced."""
    m = re.search(rf"^{key}: \{{", text, flags=re.M)
    if not m:
        return None
    start = m.end()
    depth, i = 1, start
    while depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    body = text[start:i - 1]
    for k, v in extra.items():
        if re.search(rf"\b{k}: ", body):
            body = re.sub(rf"\b{k}: [^,}}\n]+", f"{k}: {v}", body)
        else:
            body = f"{k}: {v}, " + body
    return text[:start] + body + text[i - 1:]


def edit_model(text, extra):
    """The model section (a flow map or a block) with `extra` set."""
    flow = edit_map(text, "model", extra)
    if flow is not None:
        return flow
    for k, v in extra.items():
        if re.search(rf"^  {k}: ", text, flags=re.M):
            text = re.sub(rf"^  {k}: .*$", f"  {k}: {v}", text, flags=re.M)
        else:
            text = re.sub(r"^model:\n", f"model:\n  {k}: {v}\n", text, flags=re.M)
    return text


# What each first-principles mechanism's ablation row says it removes (docs/first-principles.md).
MECHANISM_OFF = {
    "nccl": "TP and ZeRO collectives inside a node at the link rate instead of nccl-tests' bus "
            "bandwidth and NCCL's latency, the NICs at their line rate",
    "sustained_clock": "compute at the curve's ceiling instead of the clock the chip holds at "
                       "its power cap",
    "gemm_waves": "GEMM time from its FLOPs alone, no tile and wave quantization",
    "optimizer_step": "the optimizer step as two passes over the static memory instead of "
                      "Megatron's kernels",
    "slowest_gpu": "compute at the median chip's pace instead of the slowest of the run's GPUs",
    "attention_kernels": "attention at the efficiency's flat fractions instead of the "
                         "framework's kernel at its published rate for the length",
    "nccl_tuning": "every collective over the topology as rings with its route latencies instead "
                   "of NCCL's algorithm, latency and bandwidth floor",
}


def ablations(text, mechanisms_on):
    """(name, what changes, scenario text) for each mechanism the scenario uses, switched alone;
    `mechanisms_on`: the first-principles mechanisms its default path ran (the report's list)."""
    out = []
    gpu = re.search(r"^cluster: \{gpu: \{preset: ([\w-]+)\}\}$", text, flags=re.M)
    if gpu and mechanisms_on:
        out.append(("first_principles off", "`cluster.gpu.first_principles: false`: the "
                    "datasheet roofline alone, none of " + ", ".join(mechanisms_on),
                    text.replace(gpu.group(0), "cluster: {gpu: {preset: %s, "
                                 "first_principles: false}}" % gpu.group(1))))
        for key in mechanisms_on:
            out.append((f"{key} off", f"`first_principles: {{{key}: false}}`: "
                        f"{MECHANISM_OFF[key]}",
                        text.replace(gpu.group(0), "cluster: {gpu: {preset: %s, "
                                     "first_principles: {%s: false}}}" % (gpu.group(1), key))))
    if re.search(r"sp: true", text):
        out.append(("tp_comm_overlap on", "`parallelism.tp_comm_overlap: true`: the sequence-"
                    "parallel collectives pipelined with their GEMMs as the recipe's Transformer "
                    "Engine userbuffers run them, the GEMMs beside the reduce-scatters and bulk collectives on "
                    "132 - 16 SMs (overlap.tp_comm_sms default; docs/parallelism.md)",
                    edit_map(text, "parallelism", {"tp_comm_overlap": "true"})))
        if not re.search(r"^overlap:", text, flags=re.M):
            out.append(("tp_comm_overlap on, no SMs reserved", "the same with "
                        "`overlap.tp_comm_sms: 0`: the GEMMs keep every SM (the SM cost off "
                        "alone)",
                        edit_map(text, "parallelism", {"tp_comm_overlap": "true"}) +
                        "overlap: {tp_comm_sms: 0}\n"))
    if re.search(r"fp8_linear: true", text):
        out.append(("fp8_linear off", "the linear GEMMs in BF16 too",
                    edit_model(text, {"fp8_linear": "false"})))
    if re.search(r"zero: 3", text):
        out.append(("zero_overlap off", "ZeRO-3's per-op gathers and reduce-scatters of the whole "
                    "stage, exposed (`parallelism.zero_overlap: false`)",
                    edit_map(text, "parallelism", {"zero_overlap": "false"})))
        if not re.search(r"^overlap:", text, flags=re.M):
            out.append(("comm_sm_fraction 0.121", "the NCCL kernels of the hidden ZeRO-3 "
                        "collectives and gradient buckets on 16 of the 132 SMs (NCCL's NVLS "
                        "channel default, src/transport/nvls.cc), the compute beside them slower "
                        "(`overlap.comm_sm_fraction: 0.121`, docs/models.md, docs/parallelism.md)",
                        text + "overlap: {comm_sm_fraction: 0.121}\n"))
    return [a for a in out if a[2] is not None]


def run_rows(binary, jobs):
    rows = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for row, text in published_rows(PUBLISHED, SCENARIOS):
            base = run(binary, text, row["schedule"])
            if "refused" in base:
                sys.exit(f"{row['id']}: {base['refused']}")
            variants = ablations(text, base["mechanisms_on"])
            runs = list(pool.map(lambda v: run(binary, v[2], row["schedule"]), variants))
            abl = [(name, what, r) for (name, what, _), r in zip(variants, runs)]
            value = predicted(row, base)
            rows.append(dict(row=row, base=base, value=value, ablations=abl))
            print(f"{row['id']}: published {row['measured_value']} {row['measured_metric']}, "
                  f"predicted {value:.0f} ({pct(error(row, value))})")
            for name, _, r in abl:
                shown = r.get("refused") or f"{predicted(row, r):.0f} " \
                                            f"({pct(error(row, predicted(row, r)))})"
                print(f"  {name:22s} {shown}")
    return rows


def setup(row):
    return row["source_location"].split(": ", 1)[-1].rsplit(";", 1)[0]


def doc_text(rows):
    errors = [error(r["row"], r["value"]) for r in rows]
    lines = [
        "# Validation: shipped recipes against their published figures",
        "",
        "Generated by `tools/validation/validate_recipes.py --write-docs` (do not edit by hand). "
        "Rerun: `cmake --build build --target bubblesim && tools/validation/validate_recipes.py "
        "--write-docs`; the ctest `validation_recipes` (label `validation`) checks that this file "
        "is what the script writes.",
        "",
        "Each recipe under `scenarios/recipes/` states a published training run in its own terms "
        "(docs/recipes.md): `training.global_batch`, the micro-batch, TP / PP / CP / VP / EP, FSDP "
        "as `zero: 3`, the sequence length, the model and GPU presets and the cluster. Nothing is "
        "fitted: these are the model-card-and-datasheet predictions on the default path, every "
        "first-principles mechanism the GPU preset gives numbers for on (docs/first-principles."
        "md; the ablation below switches each off, and all of them at once). The error is how "
        "much faster (+) or slower (-) than the published run the prediction is, in the "
        "published unit.",
        "",
        "| row | recipe | published | predicted | error | MFU | iteration |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        row, b = r["row"], r["base"]
        unit = row["measured_metric"]
        lines.append(
            f"| {row['id']} | `scenarios/{row['scenario']}` ({row['schedule']}) | "
            f"{float(row['measured_value']):.0f} {unit} | {r['value']:.0f} | "
            f"{pct(error(row, r['value']))} | {100 * b['mfu']:.1f}% | "
            f"{b['iteration_time_s']:.2f} s |")
    lines += [
        "",
        f"Mean absolute error {100 * statistics.mean(abs(e) for e in errors):.1f}%, largest "
        f"{100 * max(abs(e) for e in errors):.1f}%; {sum(e > 0 for e in errors)} of "
        f"{len(errors)} predictions are faster than measured.",
        "",
        "## Sources",
        "",
    ]
    for r in rows:
        row = r["row"]
        lines.append(f"- **{row['id']}**: {row['measured_value']} {row['measured_metric']} "
                     f"({row['source']}; {row['source_location']}).")
    lines += ["", "## Ablation: each mechanism switched alone", "",
              "| row | mechanism | what changes | predicted | error |", "|---|---|---|---:|---:|"]
    for r in rows:
        for name, what, x in r["ablations"]:
            if "refused" in x:
                lines.append(f"| {r['row']['id']} | {name} | {what} | refused: "
                             f"{x['refused']} | - |")
                continue
            value = predicted(r["row"], x)
            lines.append(f"| {r['row']['id']} | {name} | {what} | {value:.0f} | "
                         f"{pct(error(r['row'], value))} |")
    return "\n".join(lines + closing_sections(rows, READING))


READING = """\
Model TFLOP/s are compared only where a publication gives nothing else (the Llama 3 paper): the
frameworks count them differently (recent Megatron-Bridge tables and bubblesim's
`model_tflops_per_gpu` count the causal half of attention, the Llama 3 paper does not say,
docs/recipes.md), so tokens/s per GPU is the unit of every other row. What makes a real step
slower than the datasheet roofline (NCCL's achieved bandwidth, GEMM tile waves, the attention
kernel's published rate, the optimizer's kernels) is the subject of docs/first-principles.md;
those mechanisms run by default where the preset gives their numbers, and the `off` rows of the
ablation show what each one changes (`first_principles off`: the datasheet roofline alone). In the MFU column an FP8 row's
linear GEMMs count against the FP8 peak and the rest against the BF16 peak (docs/recipes.md), so
it is a fraction the GPUs can reach; the publications divide by the BF16 peak alone."""


if __name__ == "__main__":
    validation_main(__doc__.splitlines()[0], DOC, run_rows, doc_text,
                    lambda r: r["base"]["out_of_memory"])
