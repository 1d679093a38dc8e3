"""Helpers shared by the validation scripts of tools/validation/ (python3 stdlib only).

run_scenario_text: run `bubblesim run --format json --allow-oom` on a scenario given as YAML text
and return the parsed report; pct: a signed percentage as the generated docs print it;
summary and order_violations: the mean and largest error of (key, measured, predicted, error)
rows, and the pairs whose predicted order differs from the measured one.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_BUBBLESIM = os.path.join(ROOT, "build", "bin", "bubblesim")


def run_scenario_text(binary, text):
    """The JSON report of `bubblesim run` on the scenario `text`; exits on a failed run (exit
    codes 0 and 1, an out-of-memory verdict, are reports)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        out = subprocess.run([binary, "run", path, "--format", "json", "--allow-oom"],
                             capture_output=True, text=True)
    finally:
        os.unlink(path)
    if out.returncode not in (0, 1):
        sys.exit(f"bubblesim failed (exit {out.returncode}) on\n{text}\n{out.stderr}")
    return json.loads(out.stdout)


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
