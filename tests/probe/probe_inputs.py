#!/usr/bin/env python3
"""Adversarial input probe: hostile scenarios and table files into the real CLI.

Two kinds of probe, drawn deterministically (fixed seed) so a failure reproduces:
- scenario scalars: a scalar of a bundled scenario (scenarios/**, except perf/ and sweeps/)
  replaced by a hostile value (0, -1, 1e308, NaN, 2^31, 2^63, '1e30GiB', '1e-30ms', [], {}, ...)
  and the result given to `validate` or `run` on stdin;
- table files: a torch-csv or bubblesim-csv table exported from a small scenario, mutated (cells
  swapped, deleted, duplicated, numbers made hostile, bytes inserted, lines repeated or dropped,
  truncation) and read with `from-file`.
Every probe must end with exit 0, 1 or 2 within the timeout, and stderr must carry no abort,
assertion, sanitizer or internal-error text. Under the asan preset this is what shows that
ASan/UBSan stay clean on hostile input.

Usage: probe_inputs.py BUBBLESIM [--scenario-probes N] [--table-probes N] [--seed S]
Exit 1 and a list of the failing probes (with what reproduces each) when any fails.
"""
import argparse
import copy
import glob
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOSTILE = [0, -1, 1e308, 1e-300, float("nan"), float("inf"), "", 2**31, 2**63, 10**30,
           "1e30GiB", "-0ms", "1e-30ms", [], {}, "0x10", True, "1e400ms", "NaNms", "  ",
           "\u2603", "9223372036854775807ps"]
CELL_HOSTILE = ["-1", "2147483648", "99999999999999999999", "", "nan", "1e308", "-0", "0x7f",
                "\u2603", "1e-300"]
ALARMS = ("terminate called", "Assertion", "Sanitizer", "runtime error:", "internal error")
SMALL = """name: probe
pipeline: {stages: 4, microbatches: 8}
costs: {forward: 1ms, backward_input: 1ms, backward_weight: 1ms, activation_memory: 1GiB,
        weight_grad_memory: 0.5GiB, p2p_bytes: 1MiB}
communication: {model: fixed-delay, delay: 0.1ms}
"""


def scalar_paths(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from scalar_paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from scalar_paths(v, path + (i,))
    else:
        yield path


def run(binary, args, stdin, timeout):
    """(verdict, detail): verdict None when the answer is acceptable."""
    try:
        r = subprocess.run([binary] + args, input=stdin, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    err = r.stderr.decode(errors="replace")
    if r.returncode not in (0, 1, 2):
        return f"exit {r.returncode}", err[-400:]
    if any(a in err for a in ALARMS):
        return "alarm on stderr", err[-400:]
    return None, ""


# Seconds each in a Release build, up to minutes under ASan beside another test: the recipes of
# 1,024 GPUs and more, and the schedule zoo's 8 schedules x Monte Carlo samples (3 s Release,
# 18 s ASan alone; a probe of it passed the 60 s timeout under load).
SLOW_SCENARIOS = {"scenarios/recipes/llama3-405b.yaml", "scenarios/recipes/llama3-405b-paper.yaml",
                  "scenarios/recipes/deepseek-v3.yaml", "scenarios/variability/zoo_1p5b.yaml"}


def scenario_probes(binary, rng, count, timeout):
    docs = []
    for f in sorted(glob.glob(os.path.join(ROOT, "scenarios", "**", "*.yaml"), recursive=True)):
        rel = os.path.relpath(f, ROOT)
        if "/perf/" in rel or "/sweeps/" in rel or "/moe/" in rel or rel in SLOW_SCENARIOS:
            continue  # large on purpose: each run takes seconds
        try:
            doc = yaml.safe_load(open(f))
        except yaml.YAMLError:
            continue
        if isinstance(doc, dict):
            docs += [(rel, doc, p) for p in scalar_paths(doc)]
    failures = []
    for _ in range(count):
        rel, doc, path = rng.choice(docs)
        value = rng.choice(HOSTILE)
        mutated = copy.deepcopy(doc)
        node = mutated
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        command = rng.choice(["validate", "run"])
        args = [command, "-"] + (["--format", "json"] if command == "run" else [])
        text = yaml.safe_dump(mutated).encode()
        verdict, detail = run(binary, args, text, timeout)
        if verdict:
            failures.append(f"{verdict}: {command} {rel} with {'.'.join(map(str, path))} = "
                            f"{value!r}\n{detail}")
    return failures


def mutate_table(text, rng):
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    cells = lines[i].split(",")
    kind = rng.randrange(8)
    if kind == 0 and len(cells) > 1:
        a, b = rng.randrange(len(cells)), rng.randrange(len(cells))
        cells[a], cells[b] = cells[b], cells[a]
    elif kind == 1 and cells:
        del cells[rng.randrange(len(cells))]
    elif kind == 2 and cells:
        cells.insert(rng.randrange(len(cells)), rng.choice(cells))
    elif kind == 3 and cells:
        j = rng.randrange(len(cells))
        cells[j] = re.sub(r"\d+", lambda _: rng.choice(CELL_HOSTILE), cells[j], count=1)
    elif kind == 4:
        pos = rng.randrange(len(text) + 1)
        extra = rng.choice(CELL_HOSTILE + [",", "\n", "(", ";", ")OVERLAP_F_B", "\0"])
        return text[:pos] + extra + text[pos:]
    elif kind == 5:
        return text[: rng.randrange(len(text) + 1)]
    elif kind == 6:
        lines.insert(i, lines[i])
        return "\n".join(lines)
    elif kind == 7:
        del lines[i]
        return "\n".join(lines)
    lines[i] = ",".join(cells)
    return "\n".join(lines)


def table_probes(binary, rng, count, timeout, folder):
    base = os.path.join(folder, "base.yaml")
    with open(base, "w") as f:
        f.write(SMALL + "schedules: [1f1b]\n")
    tables = []
    for schedule in ("1f1b", "zb-h1", "zb-v", "interleaved-1f1b"):
        for fmt, option in (("torch-csv", "torch-csv"), ("bubblesim-csv", "csv")):
            out = os.path.join(folder, f"{fmt}-{schedule}.csv")
            r = subprocess.run([binary, "-q", "table", base, "--schedule", schedule, "--format",
                                option, "-o", out], capture_output=True)
            if r.returncode == 0:
                tables.append((fmt, schedule, open(out, encoding="utf-8").read()))
    if not tables:
        return ["no table could be exported from the probe scenario"]
    failures = []
    for n in range(count):
        fmt, schedule, text = rng.choice(tables)
        for _ in range(rng.randrange(1, 4)):
            text = mutate_table(text, rng)
        table = os.path.join(folder, "mutated.csv")
        with open(table, "w", encoding="utf-8") as f:
            f.write(text)
        stages = 8 if schedule in ("zb-v", "interleaved-1f1b") else 4
        scenario = SMALL.replace("stages: 4", f"stages: {stages}") if fmt == "torch-csv" else SMALL
        scenario += f"schedules:\n  - {{name: from-file, params: {{path: mutated.csv, format: {fmt}}}}}\n"
        path = os.path.join(folder, "mutated.yaml")
        with open(path, "w") as f:
            f.write(scenario)
        verdict, detail = run(binary, ["run", path, "--format", "json"], None, timeout)
        if verdict:
            keep = os.path.join(folder, f"failing-{n}.csv")
            os.replace(table, keep)
            failures.append(f"{verdict}: from-file {fmt} mutated from {schedule} (kept: {keep})\n"
                            f"{detail}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bubblesim")
    ap.add_argument("--scenario-probes", type=int, default=300)
    ap.add_argument("--table-probes", type=int, default=200)
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    folder = tempfile.mkdtemp(prefix="bubblesim-probe-")
    failures = scenario_probes(args.bubblesim, rng, args.scenario_probes, args.timeout)
    failures += table_probes(args.bubblesim, rng, args.table_probes, args.timeout, folder)
    total = args.scenario_probes + args.table_probes
    print(f"{total} probes (seed {args.seed}): {len(failures)} failed")
    for f in failures:
        print(f)
    if not failures:
        shutil.rmtree(folder)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
