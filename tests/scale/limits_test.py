#!/usr/bin/env python3
"""Inputs at the documented limits (docs/reliability.md) run, under a memory bound.

Each case runs `bubblesim run --format json` in a child process and must exit 0 with a report,
its peak resident memory (getrusage of the child) under 2 GiB. Run time is not asserted here
(speed targets live in tests/bench/); ctest's timeout only stops a hang.

  limits_test.py BUBBLESIM
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LIMIT_KIB = 2 * 1024 * 1024


def chain_yaml(vertices):
    """A general-form chain topology of `vertices` GPUs (about 10 MB of YAML for 10^5)."""
    lines = ["name: chain", "pipeline: {stages: 64, microbatches: 64}",
             "costs: {forward: 1ms, backward_input: 1ms, p2p_bytes: 8MiB}",
             "communication: {model: topology}", "topology:", "  vertices:"]
    lines += [f"    - {{name: v{v}, kind: gpu}}" for v in range(vertices)]
    lines.append("  links:")
    lines += [f"    - {{between: [v{v - 1}, v{v}], bandwidth: 50GB/s, latency: 1us}}"
              for v in range(1, vertices)]
    lines.append("schedules: [1f1b]")
    return "\n".join(lines) + "\n"


def run_case(bubblesim, name, path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run([bubblesim, "run", path, "--format", "json"], capture_output=True,
                          text=True, check=False)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    problems = []
    if proc.returncode != 0:
        problems.append(f"exit {proc.returncode}: {proc.stderr.strip()[:400]}")
    else:
        report = json.loads(proc.stdout)
        if not report.get("results"):
            problems.append("the report has no results")
    if peak > max(before, 0) and peak > LIMIT_KIB:
        problems.append(f"peak memory {peak / 1024:.0f} MiB over {LIMIT_KIB / 1024:.0f} MiB")
    print(f"{name}: exit {proc.returncode}, peak {peak / 1024:.0f} MiB"
          + ("" if not problems else " -- " + "; ".join(problems)))
    return not problems


def main():
    bubblesim = sys.argv[1]
    ok = run_case(bubblesim, "65,536 stages on a 65,536-GPU fat tree",
                  os.path.join(HERE, "fat_tree_65536_stages.yaml"))
    ok = run_case(bubblesim, "DP 4,096 with default gradient buckets",
                  os.path.join(HERE, "dp_4096_default_buckets.yaml")) and ok
    ok = run_case(bubblesim, "DP 4,096 with default buckets, NCCL's algorithms",
                  os.path.join(HERE, "dp_4096_nccl_tuning.yaml")) and ok
    with tempfile.TemporaryDirectory() as tmp:
        chain = os.path.join(tmp, "chain.yaml")
        with open(chain, "w", encoding="utf-8") as f:
            f.write(chain_yaml(100_000))
        ok = run_case(bubblesim, "a 10^5-vertex chain topology", chain) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
