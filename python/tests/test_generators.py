"""Generators written in Python: registered under a name, used in scenarios like a built-in,
checked by the generator contract, their errors naming them; the 1F1B example equals the built-in."""

import pytest

import bubblesim
from conftest import QUICKSTART, ROOT, run_cli, without_run

EXAMPLE = str(ROOT / "python" / "examples" / "one_f_one_b.py")


def _same_except_names(a, b):
    a, b = without_run(a), without_run(b)
    for r in (a, b):
        r.pop("schedule"), r.pop("label")
    return a == b


def test_python_1f1b_equals_the_builtin():
    bubblesim.load_plugin(EXAMPLE)
    assert "py-1f1b" in bubblesim.generators()
    for text in (open(QUICKSTART).read(),
                 open(QUICKSTART).read().replace("stages: 8, microbatches: 24",
                                                 "stages: 4, microbatches: 5")):
        text = text.replace("schedules: [gpipe, 1f1b]", "schedules: [1f1b, py-1f1b]")
        report = bubblesim.run(text, stream="off")
        builtin, python = report.to_dict()["results"]
        assert python["schedule"] == "py-1f1b" and builtin["schedule"] == "1f1b"
        assert _same_except_names(builtin, python)
        assert report.tables["1f1b"] == report.tables["py-1f1b"]
    # The built-in streams its order by default; the numbers are still the same.
    report = bubblesim.run(QUICKSTART, schedules=["1f1b", "py-1f1b"])
    assert report["py-1f1b"].makespan_s == report["1f1b"].makespan_s


def test_python_1f1b_passes_the_contract():
    bubblesim.load_plugin(EXAMPLE)
    result = bubblesim.check_generator("py-1f1b")
    assert result.ok, result.failures
    assert result.accepted == 5 * 9 and result.rejected == 0
    info = bubblesim.explain("py-1f1b")
    assert info["placement"] == "straight" and info["has_formula"]
    assert info["origin"].startswith("python: one_f_one_b")


def test_a_broken_generator_fails_the_contract_and_names_itself():
    @bubblesim.generator("py-broken", replace=True)
    def broken(inp):
        t = bubblesim.Table(devices=inp.devices, microbatches=inp.microbatches)
        for r in range(inp.devices):  # forwards only: every backward is missing
            for j in range(inp.microbatches):
                t.append(r, bubblesim.Op("F", r, j))
        return t

    result = bubblesim.check_generator("py-broken", devices=[2], microbatches=[2])
    assert not result.ok and result.failures
    assert all(f.startswith("py-broken p=2 m=2") for f in result.failures)
    text = open(QUICKSTART).read().replace("[gpipe, 1f1b]", "[py-broken]")
    with pytest.raises(bubblesim.ScenarioError, match="py-broken"):
        bubblesim.run(text)


def test_exceptions_and_wrong_returns_name_the_generator():
    @bubblesim.generator("py-raises", replace=True)
    def raises(inp):
        raise RuntimeError("boom")

    bubblesim.register_generator("py-returns-list", lambda inp: [], replace=True)
    for name, expected in (("py-raises", "python generator 'py-raises'.*RuntimeError: boom"),
                           ("py-returns-list", "py-returns-list.*returned list, not a")):
        text = open(QUICKSTART).read().replace("[gpipe, 1f1b]", f"[{name}]")
        with pytest.raises(bubblesim.ScenarioError, match=expected):
            bubblesim.run(text)


def test_constraint_error_makes_the_schedule_infeasible_and_params_reach_the_generator():
    seen = {}

    def needs_even(inp):
        seen.update(inp.params)
        seen["costs"] = inp.costs
        if inp.microbatches % 2:
            raise bubblesim.ScheduleConstraintError(f"m={inp.microbatches} must be even")
        return bubblesim.generate(QUICKSTART, "gpipe") if inp.devices == 8 else None

    bubblesim.register_generator(
        "py-even", needs_even, replace=True,
        params=[bubblesim.Param("depth", "integer", 2, "how deep", minimum=1),
                bubblesim.Param("mode", "choice", "a", "which", choices=["a", "b"])])
    text = open(QUICKSTART).read().replace("[gpipe, 1f1b]", "[1f1b, {name: py-even, params: {depth: 3}}]")
    report = bubblesim.run(text)
    assert report["py-even"].status == "ok" and seen["depth"] == 3 and seen["mode"] == "a"
    assert seen["costs"][0]["forward_s"] == pytest.approx(18.522e-3)
    odd = bubblesim.run(text.replace("microbatches: 24", "microbatches: 23"))
    assert [r.status for r in odd] == ["ok", "infeasible"]
    assert odd.failed
    with pytest.raises(bubblesim.ScenarioError, match="depth"):
        bubblesim.load(text.replace("depth: 3", "depth: 0"))
    with pytest.raises(bubblesim.ScenarioError, match="mode"):
        bubblesim.load(text.replace("depth: 3", "mode: c"))


def test_registration_rules():
    with pytest.raises(ValueError, match="built-in"):
        bubblesim.register_generator("1f1b", lambda inp: None)
    bubblesim.register_generator("py-once", lambda inp: None, replace=True)
    with pytest.raises(ValueError, match="replace=True"):
        bubblesim.register_generator("py-once", lambda inp: None)
    with pytest.raises(TypeError):
        bubblesim.register_generator("py-not-callable", 3)
    with pytest.raises(ValueError, match="type"):
        bubblesim.Param("x", "complex", 1)
    assert bubblesim.generators().index("1f1b") < bubblesim.generators().index("py-once")


def test_module_cli_runs_a_python_plugin(cli, tmp_path):
    import json
    import subprocess
    import sys
    text = open(QUICKSTART).read().replace("[gpipe, 1f1b]", "[py-1f1b]")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(text)
    done = subprocess.run([sys.executable, "-m", "bubblesim", "run", "--plugin", EXAMPLE,
                           str(scenario), "--format", "json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    ours = json.loads(done.stdout)["results"][0]
    builtin = json.loads(run_cli(cli, "run", QUICKSTART, "--format", "json",
                                 "--schedule", "1f1b").stdout)["results"][0]
    assert _same_except_names(builtin, ours)
    checked = subprocess.run([sys.executable, "-m", "bubblesim", "check-plugin", EXAMPLE],
                             capture_output=True, text=True)
    assert checked.returncode == 0 and "py-1f1b: pass" in checked.stdout
    bad = subprocess.run([sys.executable, "-m", "bubblesim", "run", str(tmp_path / "none.yaml")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "none.yaml" in bad.stderr
