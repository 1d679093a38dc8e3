"""bubblesim.plan: the CLI's search and reports from Python, and its best layout run alone."""

import json

import pytest

import bubblesim
from conftest import ROOT, run_cli

PLAN = str(ROOT / "tests" / "plan" / "small_plan.yaml")


def without_run(d):
    d = dict(d)
    d.pop("run", None)
    return d


def test_plan_equals_the_cli_and_its_best_layout_runs_alone(cli, tmp_path):
    report = bubblesim.plan(PLAN, replays=6, time_budget=0)
    out = tmp_path / "plan.json"
    done = run_cli(cli, "plan", PLAN, "--replays", "6", "--time-budget", "0", "--format", "json",
                   "-o", str(out), "-q")
    assert done.returncode == 0, done.stderr
    assert without_run(report.to_dict()) == without_run(json.loads(out.read_text()))
    ranked = report.ranked
    assert len(ranked) >= 5
    assert ranked[0]["beats_next"].startswith("#1 beats #2 by ")
    # The best layout's scenario, run alone, gives the plan's iteration time.
    best = report.best
    run = bubblesim.run(best)
    assert run.results[0].simulation["iteration_time_s"] == ranked[0]["iteration_time_s"]
    # ... and edits like any scenario.
    assert best.with_({"model.micro_batch_size": 1}).get("model.micro_batch_size") == 1
    assert "Ranked by the replay" in report.text
    assert report.csv.startswith("candidate,family,label,")
    assert "class=\"cmp-row\"" in report.html()
    with pytest.raises(IndexError):
        report.scenario(len(ranked) + 1)


def test_plan_from_keywords_and_what_is_refused():
    report = bubblesim.plan(model="llama3-8b", gpu="h100-sxm", nodes=1, global_batch=16,
                            seq_len=1024, replays=2, time_budget=0)
    assert report.to_dict()["gpus"] == 8
    with pytest.raises(ValueError):
        bubblesim.plan(PLAN, model="llama3-8b")
    with pytest.raises(bubblesim.ScenarioError) as info:
        bubblesim.plan({"model": {"preset": "llama3-8b", "seq_len": 1024},
                        "cluster": {"gpu": {"preset": "h100-sxm"}},
                        "topology": {"builder": "multi-node", "nodes": 1},
                        "training": {"global_batch": 16}, "search": {"tp": [3]}},
                       time_budget=0)
    assert "heads" in str(info.value) or "tp" in str(info.value)
