#!/usr/bin/env python3
"""Predict published measured throughput of large MoE training runs and write docs/validation-moe.md.

Every row of scenarios/validation/moe_published.csv names a scenario under
scenarios/validation/moe/ written from the run's publication (presets, parallelism, model.moe.*,
parallelism.a2a_overlap, topology, schedule; nothing fitted). This runs `bubblesim run --format
json` on it, converts the published number to an iteration time, and compares it with
`simulation.iteration_time_s`. Each MoE mechanism is then switched alone (the ablation) and the
run repeated.

Usage:
  tools/validation/validate_moe.py [--bubblesim build/bin/bubblesim] [--write-docs] [--check]
                                   [--jobs N]
--write-docs rewrites docs/validation-moe.md; --check exits 1 when the generated text differs
from the file (the ctest `validation_moe` runs it that way) or a row did not run.
"""
import os
import re
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

from validation_common import ROOT, pct, published_rows, run_scenario_text, validation_main

PUBLISHED = os.path.join(ROOT, "scenarios", "validation", "moe_published.csv")
SCENARIO_DIR = os.path.join(ROOT, "scenarios", "validation")
DOC = os.path.join(ROOT, "docs", "validation-moe.md")


def measured_iteration_s(row):
    """The published number as the time of one iteration (one global batch) of the whole job."""
    tokens = int(row["global_batch"]) * int(row["seq_len"])
    gpus = int(row["gpus"])
    value = float(row["measured_value"])
    metric = row["measured_metric"]
    if metric == "tokens/s/GPU":
        return tokens / (value * gpus)
    if metric == "H800 GPU hours per trillion tokens":
        return tokens * value * 3600 / 1e12 / gpus
    sys.exit(f"{row['id']}: unknown measured_metric {metric!r}")


def edit(text, model=None, parallelism=None, overlap=None):
    """The scenario text with keys added to its one-line `model:` and `parallelism:` maps and
    `overlap.comm_sm_fraction` set (added when absent). A scenario's `model.moe` keys override the
    preset's key by key (docs/moe.md)."""
    for key, extra in (("model", model), ("parallelism", parallelism)):
        if not extra:
            continue
        for k in extra:  # a key already given is replaced, not repeated
            text = re.sub(rf"^({key}: \{{.*?)\b{k}: [^,}}\n]+,? ?", r"\1", text, flags=re.M)
            text = re.sub(rf"^({key}: \{{.*?), \}}", r"\1}", text, flags=re.M)
        fields = ", ".join(f"{k}: {v}" for k, v in extra.items())
        text, n = re.subn(rf"^{key}: \{{", f"{key}: {{{fields}, ", text, count=1, flags=re.M)
        if n != 1:
            sys.exit(f"no one-line `{key}:` map in the scenario")
    if overlap is not None:
        line = f"overlap: {{comm_sm_fraction: {overlap}}}"
        text, n = re.subn(r"^overlap: \{[^}]*\}", line, text, flags=re.M)
        if n == 0:
            text += line + "\n"
    return text


def has_key(text, key):
    return re.search(rf"\b{key}:", text) is not None


def ablations(text, gemm_max):
    """(name, what changes, scenario text) for each mechanism of this scenario, switched alone;
    `gemm_max` is the BF16 ceiling of the scenario's GPU (its resolved `cluster.gpu`)."""
    flip = "false" if re.search(r"a2a_overlap: true", text) else "true"
    out = [("a2a_overlap " + flip,
            "`parallelism.a2a_overlap` flipped (true: each B directly followed by an F on its "
            "device becomes one F&B op whose halves hide each other's all-to-all, Megatron's "
            "combined 1F1B; DualPipe's fused pairs overlap either way)",
            edit(text, parallelism={"a2a_overlap": flip}))]
    sm = re.search(r"comm_sm_fraction: ([0-9.]+)", text)
    if sm and float(sm.group(1)) > 0:
        out.append(("comm_sm_fraction 0", "the all-to-all holds no SMs while it hides",
                    edit(text, overlap=0)))
    else:
        out.append(("comm_sm_fraction 0.1515", "the all-to-all holds 20 of 132 SMs while it hides "
                    "(DeepSeek's share)", edit(text, overlap=0.1515)))
    out.append(("all-to-all on an idle network", "`communication.all_to_all: idle`: each stage's "
                "all-to-all timed once on an otherwise idle network and folded into the ops, "
                "sharing no link with the pipeline's transfers or the gradient buckets",
                text + "communication: {all_to_all: idle}\n"))
    out += [
        ("imbalance 1.5", "`model.moe.imbalance: 1.5` (the runs balance their experts: "
         "DeepSeek's auxiliary-loss-free bias, Megatron's forced balance)",
         edit(text, model={"moe": "{imbalance: 1.5}"})),
        ("max_nodes off", "`model.moe.max_nodes: 0` (no node-limited routing)",
         edit(text, model={"moe": "{max_nodes: 0}"})),
        ("fp8_linear off", "`model.fp8_linear: false`: the linear GEMMs in BF16 too",
         edit(text, model={"fp8_linear": "false"})),
        ("dtype fp8", "`model.dtype: fp8` on top: every tensor 1 byte (activations, p2p, the "
         "all-to-all) and every GEMM at the FP8 peak, more than the runs do",
         edit(text, model={"dtype": "fp8"})),
        ("MTP off", "`model.mtp_depth: 0`: without the runs' multi-token prediction module "
         "(its projection, MoE block and second LM-head pass and loss on the head's stage)",
         edit(text, model={"mtp_depth": "0"})),
        ("permute fused", "`model.moe.permute: fused`: no token permutation passes of their own "
         "(the dispatch and combine kernels place the tokens)",
         edit(text, model={"moe": "{permute: fused}"})),
    ]
    gpu = re.search(r"^cluster: \{gpu: \{preset: ([\w-]+)\}\}$", text, flags=re.M)
    if gpu:
        out.append(("first principles off", "`cluster.gpu.first_principles: false`: the "
                    "datasheet roofline alone, without the mechanisms the GPU preset gives "
                    "numbers for (docs/first-principles.md; the default path runs them)",
                    text.replace(gpu.group(0), "cluster: {gpu: {preset: %s, first_principles: "
                                 "false}}" % gpu.group(1))))
        out.append(("NCCL tuning off", "`cluster.gpu.first_principles: {nccl_tuning: false}`: "
                    "every collective over the topology as rings with its route latencies instead "
                    "of NCCL's algorithm, latency and bandwidth floor (docs/first-principles.md)",
                    text.replace(gpu.group(0), "cluster: {gpu: {preset: %s, first_principles: "
                                 "{nccl_tuning: false}}}" % gpu.group(1))))
    if gpu and gemm_max is not None:
        out.append(("FP8 ceiling as BF16", f"`cluster.gpu.efficiency.gemm_max_fp8: {gemm_max}`, "
                    "the preset's BF16 `gemm_max`: FP8 GEMMs at the same fraction of their doubled "
                    "peak, instead of the 0.64 measured on an H100 (docs/models.md)",
                    text.replace(gpu.group(0), "cluster: {gpu: {preset: %s, efficiency: "
                                 "{gemm_max_fp8: %s}}}" % (gpu.group(1), gemm_max))))
    return out


def simulate(binary, text):
    report = run_scenario_text(binary, text)
    results = report["results"]
    if len(results) != 1:
        sys.exit("a validation scenario runs one schedule")
    sim = results[0]["simulation"]
    efficiency = report["scenario"].get("cluster", {}).get("gpu", {}).get("efficiency")
    return {"label": results[0]["label"], "iteration_s": sim["iteration_time_s"],
            "gemm_max": efficiency.get("gemm_max") if isinstance(efficiency, dict) else None,
            "a2a_s": sim.get("a2a_s", 0.0), "a2a_exposed_s": sim.get("a2a_exposed_s", 0.0),
            "a2a_slowdown_s": sim.get("a2a_slowdown_s", 0.0), "dp_sync_s": sim["dp_sync_s"],
            "oom": bool(sim["out_of_memory"])}


def run_rows(binary, jobs):
    rows = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for row, text in published_rows(PUBLISHED, SCENARIO_DIR):
            meas = measured_iteration_s(row)
            base = simulate(binary, text)
            variants = ablations(text, base["gemm_max"])
            runs = pool.map(lambda v: simulate(binary, v[2]), variants)
            abl = [(name, what, r) for (name, what, _), r in zip(variants, runs)]
            rows.append(dict(row=row, measured=meas, base=base, ablations=abl))
            print(f"{row['id']}: measured {meas:.2f} s, predicted {base['iteration_s']:.2f} s "
                  f"({pct((base['iteration_s'] - meas) / meas)})")
            for name, _, r in abl:
                print(f"  {name:24s} {r['iteration_s']:.2f} s "
                      f"({pct((r['iteration_s'] - meas) / meas)})")
    return rows


def tok_per_gpu(row, seconds):
    return int(row["global_batch"]) * int(row["seq_len"]) / (seconds * int(row["gpus"]))


def doc_text(rows):
    lines = [
        "# Validation against published MoE runs",
        "",
        "Generated by `tools/validation/validate_moe.py --write-docs` (do not edit by hand). "
        "Rerun: `cmake --build build --target bubblesim && tools/validation/validate_moe.py "
        "--write-docs`; the ctest `validation_moe` (label `validation`) checks that this file is "
        "what the script writes.",
        "",
        "## What is compared",
        "",
        "Each row of `scenarios/validation/moe_published.csv` is a published measurement of a "
        "large MoE training run with its stated setup and source. Its scenario "
        "(`scenarios/validation/moe/`) states that setup with the keys a user would write: the "
        "`deepseek-v3` model preset (its `model.moe` includes `max_nodes: 4`), the `h800` / "
        "`h100-sxm` GPU presets, `parallelism: {tp, dp, ep, zero, order, a2a_overlap}`, a "
        "multi-node topology of the cluster, the schedule and batch layout used. Nothing is "
        "fitted. The published number is converted to the time of one global batch (tokens per "
        "iteration = global batch x sequence) and compared with `simulation.iteration_time_s`.",
        "",
        "## Results",
        "",
        "| row | setup | measured | predicted | error | tokens/s/GPU measured / predicted | "
        "a2a (exposed) | BF16 GEMMs (`fp8_linear: false`) | error |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        row, meas, b = r["row"], r["measured"], r["base"]
        fp8 = dict((n, x) for n, _, x in r["ablations"])["fp8_linear off"]
        setup = (f"{row['gpus']} x {row['hardware'].split(' (')[0]}, TP {row['tp']} PP "
                 f"{row['pp']} VP {row['vp']} EP {row['ep']} DP {row['dp']}, {row['schedule']}, "
                 f"batch {row['global_batch']} x {row['seq_len']}")
        lines.append(
            f"| {row['id']} | {setup} | {meas:.2f} s | {b['iteration_s']:.2f} s | "
            f"{pct((b['iteration_s'] - meas) / meas)} | {tok_per_gpu(row, meas):.0f} / "
            f"{tok_per_gpu(row, b['iteration_s']):.0f} | {b['a2a_s']:.2f} s "
            f"({b['a2a_exposed_s']:.2f} s) | {fp8['iteration_s']:.2f} s | "
            f"{pct((fp8['iteration_s'] - meas) / meas)} |")
    lines += ["", "Measured, as published:", ""]
    for r in rows:
        row = r["row"]
        lines.append(f"- **{row['id']}**: {row['measured_value']} {row['measured_metric']} "
                     f"({row['source']}; {row['source_location']}). Setup: "
                     f"{row['setup_source']}. Precision: {row['precision']}.")
    lines += ["", "## Ablation: each MoE mechanism switched alone", "",
              "Prediction with the mechanism changed, and the change against the base prediction "
              "(the default path) relative to the measured time.", "",
              "| row | mechanism | what changes | predicted | error | change |",
              "|---|---|---|---:|---:|---:|"]
    for r in rows:
        meas, base = r["measured"], r["base"]["iteration_s"]
        for name, what, x in r["ablations"]:
            lines.append(f"| {r['row']['id']} | {name} | {what} | {x['iteration_s']:.2f} s | "
                         f"{pct((x['iteration_s'] - meas) / meas)} | "
                         f"{pct((x['iteration_s'] - base) / meas)} |")
    lines += ["", "## What the scenarios leave out", ""]
    for r in rows:
        lines.append(f"- **{r['row']['id']}**: {r['row']['not_in_scenario']}.")
    lines += ["", "## Reading the errors", "", reading(rows), "", "## Not used: what could not be sourced or stated",
              "", NOT_USED, ""]
    return "\n".join(lines)


def reading(rows):
    """The discussion of the errors, its numbers taken from the rows (row ids of the CSV)."""
    by = {r["row"]["id"]: r for r in rows}
    ds, mg = by["deepseek-v3-h800"], by["deepseek-v3-h100-megatron"]

    def abl(r, name):
        return dict((n, x) for n, _, x in r["ablations"])[name]["iteration_s"]

    def err(r, seconds):
        return pct((seconds - r["measured"]) / r["measured"])

    def change(r, name):
        return pct((abl(r, name) - r["base"]["iteration_s"]) / r["measured"])

    base = {k: r["base"]["iteration_s"] for k, r in (("ds", ds), ("mg", mg))}
    bf16 = {k: abl(r, "fp8_linear off") for k, r in (("ds", ds), ("mg", mg))}
    a2a = mg["base"]["a2a_s"]
    microbatches = int(mg["row"]["global_batch"]) // int(mg["row"]["dp"])
    return reflow(f"""\
The scenarios state the runs' FP8 as they used it (`model.fp8_linear: true`: the linear GEMMs at
the FP8 peak with the casts of their inputs, everything else in BF16) and their multi-token
prediction module (`model.mtp_depth: 1`). With FP8 GEMMs the rows are predicted at
{err(ds, base["ds"])} (DeepSeek) and {err(mg, base["mg"])} (Megatron) of the measured time; with
every GEMM in BF16 (`fp8_linear off`) at {err(ds, bf16["ds"])} and {err(mg, bf16["mg"])}. On the
Megatron row the whole all-to-all is exposed (the recipe turns the overlap off) and predicted at
{a2a:.2f} s of the iteration ({1000 * a2a / microbatches:.1f} ms per microbatch on the busiest
device: 8 MoE layers x 4 all-to-alls of 2048 tokens x 8 copies x 7168 x 2 bytes over 16 nodes,
about 2.2 ms each); the rest of the measured iteration, {mg["measured"] - a2a:.1f} s, compares
with {base["mg"] - a2a:.1f} s of predicted compute with FP8 GEMMs and {bf16["mg"] - a2a:.1f} s
with BF16 GEMMs. Mechanisms missing or wrong, none fitted here:

- **FP8 GEMM speed**: `fp8_linear` runs FP8 GEMMs at the GPU preset's measured FP8 ceiling
  (`gemm_max_fp8` 0.64 of the FP8 peak, where BF16 reaches 0.72-0.75 of its own: measured on an
  H100 with per-tensor-scaled cuBLAS FP8, docs/models.md "Efficiency") and times the casts of
  their inputs, but not DeepSeek's own kernels with their promotion of partial sums to CUDA cores
  every 128 elements (report sec. 3.3.2), nor the DeepSeek-V3 expert shapes' lower FP8 efficiency
  (0.48-0.55 of the FP8 peak measured, under the fitted ceiling). The model's FP8 gain on the
  iteration is {bf16["ds"] / base["ds"]:.2f}x (DeepSeek) and {bf16["mg"] / base["mg"]:.2f}x
  (Megatron); the runs' own BF16 times on these layouts are not published.
- **multi-token prediction**: both runs train one MTP module (DeepSeek-V3 report sec. 2.2 and
  4.2, D = 1; the Megatron-Bridge recipe's `mtp_num_layers = 1`, the `m` of its layout
  `Et|(tt|)*30mL`, with the loss in the last virtual stage): per microbatch a 2h -> h projection,
  one MoE block and a second LM-head GEMM and loss on the head's stage (docs/models.md). Without
  it (`MTP off`) the prediction changes by {change(ds, "MTP off")} of the measured time on DualPipe, whose
  head's stage (3 layers, the LM head and the loss, on rank 0 with the embedding's stage) becomes
  the longest, {change(mg, "MTP off")} on Megatron's layout, whose last virtual stage held only
  the head and now holds the module too. The block alone as one more layer, this ablation's
  earlier approximation, added +8.0% and +0.7%: the projection and the second head pass (a
  129280-wide logits GEMM in BF16 and the loss over it, `cross_entropy` as the scenario states
  it) are the larger part.
- **recompute**: DeepSeek recomputes RMSNorm and the MLA up-projections in the backward, the
  Megatron recipe `mla_up_proj` and the dense MLPs (small extra forwards); not in the scenarios.
- **token permutation**: timed since `model.moe.permute` (default `copies`, docs/moe.md): the
  gathers into expert order and back, about 1.25 ms of F and of B per DeepSeek-V3 MoE layer at
  the H800's HBM rate, in both rows (Megatron's flex dispatcher also permutes the tokens DeepEP
  receives into expert order, `get_permuted_hidden_states_by_experts`); `fused` would drop
  them.
- **host and launch overhead**: the Megatron H100 recipe runs without CUDA graphs; many small
  kernels per MoE layer (router, permutation, grouped GEMM, activation) each pay a launch, and a
  dropless MoE layer synchronises with the host to size its buffers. bubblesim times kernels by
  FLOPs and bytes only.
- **row deepseek-v3-h800 only**: the GPU hours are the whole pre-training's, including the
  batch-size ramp (3072 to 15360 sequences over the first 469B tokens, smaller batches and so
  more pipeline bubble), checkpoints and restarts; the steady-state iteration is faster than the
  average this row converts to.

The ablation shows which switches matter at these scales (changes relative to the measured
time): `max_nodes` (without node-limited routing the cross-node all-to-all carries twice the
bytes; DeepSeek states its limit of 4 nodes; whether Megatron's forced load balancing keeps
DeepSeek's group-limited routing, which the preset's `max_nodes: 4` stands for, is not stated),
`a2a_overlap` on the Megatron row (its whole all-to-all is exposed: the recipe turns the overlap
off; `comm_sm_fraction` changes nothing there, as nothing hides), `imbalance` (the runs balance
their experts; 1.5 would cost {change(ds, "imbalance 1.5")} and {change(mg, "imbalance 1.5")}),
`fp8_linear` and the MTP module. On the Megatron row the EP group is modelled as the 64
data-parallel ranks at TP rank 0 (16 nodes, 4 GPUs each); Megatron folds EP 64 over the stage's
128 GPUs (8 nodes): EP inside the TP group is not modelled (docs/moe.md). The all-to-all runs as
flows sharing the links with the pipeline's transfers and the gradient buckets
(`communication.all_to_all: shared`); timed on an idle network instead it changes the rows by
{change(ds, "all-to-all on an idle network")} and {change(mg, "all-to-all on an idle network")}:
with the MTP module the head's stage is the longest, and the other devices' transfers, slowed
where they cross a NIC the all-to-all holds, arrive within its slack (without it DualPipe's do
not: docs/moe.md, "The DeepSeek-V3-like scenario").""")


def reflow(text, width=96):
    """Paragraphs and `- ` bullets rewrapped at `width` (the numbers above vary in length)."""
    blocks = []
    for para in text.split("\n\n"):
        items, current = [], []
        for line in para.split("\n"):
            if line.startswith("- ") and current:
                items.append(current)
                current = []
            current.append(line.strip())
        items.append(current)
        out = []
        for item in items:
            words = " ".join(item)
            bullet = words.startswith("- ")
            out.append(textwrap.fill(words, width, subsequent_indent="  " if bullet else "",
                                     break_long_words=False, break_on_hyphens=False))
        blocks.append("\n".join(out))
    return "\n\n".join(blocks)


NOT_USED = """\
- **Mixtral-8x7B**: Megatron-Core's MoE README (MCore v0.9) quotes 468 TFLOPS for Mixtral 8x7B
  in BF16 without the parallelism, batch and GPU count in the text found; no NeMo or
  Megatron-Bridge performance table consulted has a Mixtral row with its setup. Not used.
- **Qwen3-235B-A22B** (Megatron-Bridge tables, DGX-H100, 256 GPUs, TP 2 PP 8 VP 4 EP 32, e.g.
  1204 tokens/s/GPU in 25.09) and **GPT-OSS 120B**: their attention has more query columns than
  the hidden size (Qwen3: 64 heads of 128 at hidden 4096) and GPT-OSS sliding-window layers;
  bubblesim's head dimension is hidden / heads, so the model cannot be stated as published.
- **The Megatron-Core MoE report** (arXiv 2603.07685): DeepSeek-V3 on 1024 H100 in blockwise FP8,
  368 TFLOPS and 1412 tokens/s/GPU, was read only in secondary summaries, which note that its
  Table 17 (PP 8) and Table 20 (PP 4) disagree on the layout. Not used until checked against the
  paper."""


if __name__ == "__main__":
    validation_main(__doc__.splitlines()[0], DOC, run_rows, doc_text,
                    lambda r: r["base"]["oom"])
