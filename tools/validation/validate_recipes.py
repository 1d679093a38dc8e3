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
    for r in json.loads(stdout)["results"]:
        if r["label"] == schedule:
            return r["simulation"]
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


def ablations(text):
    """(name, what changes, scenario text) for each mechanism the scenario uses, switched alone."""
    out = []
    gpu = re.search(r"^cluster: \{gpu: \{preset: ([\w-]+)\}\}$", text, flags=re.M)
    if gpu:
        out.append(("first_principles on", "`cluster.gpu.first_principles: true`: every "
                    "first-principles mechanism the preset gives numbers for (docs/first-"
                    "principles.md)", text.replace(gpu.group(0), "cluster: {gpu: {preset: %s, "
                                                   "first_principles: true}}" % gpu.group(1))))
    if gpu and gpu.group(1) in ("h100-sxm", "h200"):
        out.append(("slowest_gpu on", "`first_principles: {slowest_gpu: true}` alone: compute at "
                    "the pace of the slowest of the run's GPUs at the preset's measured chip "
                    "spread (docs/first-principles.md)",
                    text.replace(gpu.group(0), "cluster: {gpu: {preset: %s, first_principles: "
                                 "{slowest_gpu: true}}}" % gpu.group(1))))
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
            variants = ablations(text)
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
        "fitted: these are the model-card-and-datasheet predictions, with the presets' default "
        "mechanisms (`first_principles` off). The error is how much faster (+) or slower (-) "
        "than the published run the prediction is, in the published unit.",
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
docs/recipes.md), so tokens/s per GPU is the unit of every other row. The predictions from the presets alone run faster than the published
runs on the larger H100 jobs: the op times are the datasheet roofline's, and what makes a real
step slower (NCCL's achieved bandwidth, launches, the slowest GPU of thousands) is the subject of
docs/first-principles.md; the `first_principles on` rows show what those mechanisms change where
the preset gives their numbers. In the MFU column an FP8 row's linear GEMMs count against the
FP8 peak and the rest against the BF16 peak (docs/recipes.md), so it is a fraction the GPUs can
reach; the publications divide by the BF16 peak alone."""


if __name__ == "__main__":
    validation_main(__doc__.splitlines()[0], DOC, run_rows, doc_text,
                    lambda r: r["base"]["out_of_memory"])
