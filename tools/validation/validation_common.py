"""Helpers shared by the validation scripts of tools/validation/ (python3 stdlib only).

run_scenario_text (run_scenario_raw): run `bubblesim run --format json --allow-oom` on a scenario
given as YAML text and return the parsed report (the exit code and output); validation_main: the
--write-docs / --check command line of the doc-generating scripts; pct: a signed percentage as the generated docs print it;
summary and order_violations: the mean and largest error of (key, measured, predicted, error)
rows, and the pairs whose predicted order differs from the measured one.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_BUBBLESIM = os.path.join(ROOT, "build", "bin", "bubblesim")


def run_scenario_raw(binary, text):
    """`bubblesim run --format json --allow-oom` on the scenario `text`: (exit code, stdout,
    stderr)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        out = subprocess.run([binary, "run", path, "--format", "json", "--allow-oom"],
                             capture_output=True, text=True)
    finally:
        os.unlink(path)
    return out.returncode, out.stdout, out.stderr


def run_scenario_text(binary, text):
    """The JSON report of `bubblesim run` on the scenario `text`; exits on a failed run (exit
    codes 0 and 1, an out-of-memory verdict, are reports)."""
    code, stdout, stderr = run_scenario_raw(binary, text)
    if code not in (0, 1):
        sys.exit(f"bubblesim failed (exit {code}) on\n{text}\n{stderr}")
    return json.loads(stdout)


def published_rows(csv_path, scenario_dir):
    """(row, scenario text) for each row of a published-runs CSV whose `scenario` column names a
    file under `scenario_dir`."""
    with open(csv_path) as f:
        for row in csv.DictReader(f):
            with open(os.path.join(scenario_dir, row["scenario"])) as s:
                yield row, s.read()


def validation_main(description, doc, run_rows, doc_text, out_of_memory):
    """The command line every doc-generating validation script shares: run the rows
    (`run_rows(binary, jobs)`), write `doc_text(rows)` to `doc` with --write-docs, and with --check
    exit 1 when `doc` differs from it or a row ran out of memory (`out_of_memory(row)`)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--bubblesim", default=DEFAULT_BUBBLESIM)
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--jobs", type=int, default=2, help="bubblesim runs at a time (default 2)")
    args = ap.parse_args()
    rows = run_rows(args.bubblesim, max(1, args.jobs))
    text = doc_text(rows)
    if args.write_docs:
        with open(doc, "w") as f:
            f.write(text)
    if args.check:
        bad = [r["row"]["id"] for r in rows if out_of_memory(r)]
        with open(doc) as f:
            stale = f.read() != text
        if stale:
            print(f"{doc} is not what the script writes: rerun with --write-docs")
        if bad:
            print(f"out of memory: {bad}")
        sys.exit(1 if stale or bad else 0)


def multi_node_topology(nodes, nvlink, pcie, per_switch, nic):
    """The `topology:` block of a cluster of 8-GPU nodes (the `multi-node` builder): NVLink and
    PCIe each way at `nvlink` and `pcie`, `per_switch` GPUs a PCIe switch, one NIC of `nic` per
    GPU, the latencies of scenarios/topologies/dgx-h100-4nodes.yaml."""
    return (f"topology:\n  builder: multi-node\n  nodes: {nodes}\n  gpus_per_node: 8\n"
            f"  nvlink: {{bandwidth: {nvlink}, latency: 500ns}}\n"
            f"  pcie: {{bandwidth: {pcie}, latency: 1us}}\n"
            f"  gpus_per_pcie_switch: {per_switch}\n"
            f"  nic: {{bandwidth: {nic}, latency: 2us}}\n"
            f"  network: {{latency: 1us}}")


def closing_sections(rows, reading):
    """The doc's last two sections: what each row's scenario leaves out (its `not_in_scenario`)
    and the discussion `reading`."""
    lines = ["", "## What the scenarios leave out", ""]
    for r in rows:
        lines.append(f"- **{r['row']['id']}**: {r['row']['not_in_scenario']}.")
    return lines + ["", "## Reading the errors", "", reading, ""]


def pct(x):
    return f"{100 * x:+.1f}%"


def order_violations(rows):
    """Pairs of schedules (same model and m) whose measured times differ by more than 2% and
    whose predicted order differs."""
    bad, pairs = [], 0
    for i, (ka, ma, pa, _) in enumerate(rows):
        for kb, mb, pb, _ in rows[i + 1:]:
            if ka[:2] != kb[:2] or abs(ma - mb) / min(ma, mb) <= 0.02:
                continue
            pairs += 1
            if (ma < mb) != (pa < pb):
                bad.append((ka, kb))
    return bad, pairs


def summary(rows):
    e = [abs(r[3]) for r in rows]
    return statistics.mean(e), max(e)
