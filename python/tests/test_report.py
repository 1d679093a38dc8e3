"""Reports: identical to `bubblesim run --format json`, the verdict, the three levels, memory,
to_dict, to_pandas and the HTML report."""

import json

import pytest

import bubblesim
from conftest import QUICKSTART, run_cli, without_run


@pytest.fixture(scope="module")
def report():
    return bubblesim.run(QUICKSTART)


def test_report_equals_the_cli_json_report(cli, report):
    done = run_cli(cli, "run", QUICKSTART, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert without_run(report.to_dict()) == without_run(json.loads(done.stdout))
    # And with options: one schedule, another baseline.
    other = bubblesim.run(QUICKSTART, schedules=["zb-h1", "1f1b"], baseline="zb-h1")
    done = run_cli(cli, "run", QUICKSTART, "--format", "json", "--schedule", "zb-h1",
                   "--schedule", "1f1b", "--baseline", "zb-h1")
    assert without_run(other.to_dict()) == without_run(json.loads(done.stdout))
    assert [r.label for r in other] == ["1f1b", "zb-h1"]


def test_text_report_equals_the_cli(cli, report):
    done = run_cli(cli, "run", QUICKSTART)
    assert done.returncode == 0, done.stderr
    assert report.text == done.stdout
    assert str(report) == report.text


def test_verdict(report):
    verdict = report.verdict
    assert verdict.labels() == ["1f1b", "gpipe"] or verdict.labels() == ["gpipe", "1f1b"]
    data = report.to_dict()
    assert verdict.labels() == [e["schedule"] for e in data["ranking"]]
    assert [e.rank for e in verdict] == [1, 2]
    assert verdict[0].makespan_s <= verdict[1].makespan_s
    assert verdict.metric == data["ranking_metric"] and verdict.metric.startswith("simulation.")
    assert verdict.baseline == data["baseline"] == "1f1b"
    text = str(verdict)
    assert text.splitlines()[0].startswith("1. " + verdict[0].label)
    assert "ms" in text


def test_levels_memory_and_tables(report):
    r = report["1f1b"]
    assert r.schedule == "1f1b" and r.status == "ok"
    assert r.formula["bubble_ratio"] == pytest.approx(7 / 31)
    assert 0 < r.table["bubble_ratio"] < 1
    assert r.simulation["makespan_s"] == r.makespan_s > 0
    memory = r.memory
    assert [m["device"] for m in memory] == list(range(8))
    peaks = report.to_dict()["results"][1]["simulation"]["peak_memory_bytes_per_device"]
    assert [m["peak_memory_bytes"] for m in memory] == peaks
    assert memory[0]["peak_memory_bytes"] > memory[7]["peak_memory_bytes"]
    assert r.to_dict()["label"] == "1f1b" and r["status"] == "ok"
    with pytest.raises(KeyError):
        report["nope"]
    assert len(report) == 2 and report.failed is False
    table = report.tables["gpipe"]
    assert isinstance(table, bubblesim.Table) and table.devices == 8
    assert table.op_count() == 2 * 8 * 24
    assert report.skipped == []


def test_to_dict_is_a_copy(report):
    d = report.to_dict()
    d["results"].clear()
    assert len(report.to_dict()["results"]) == 2
    assert json.loads(report.to_json())["schema_version"] == d["schema_version"]


def test_to_pandas(report):
    pd = pytest.importorskip("pandas")
    frame = report.to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.index) == ["gpipe", "1f1b"]
    assert frame.loc["1f1b", "simulation.makespan_s"] == report["1f1b"].makespan_s
    assert frame.loc["1f1b", "formula.bubble_ratio"] == pytest.approx(7 / 31)
    assert set(frame["rank"]) == {1, 2}


def test_to_pandas_without_pandas_says_how_to_get_it(report, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match="apt-get install python3-pandas"):
        report.to_pandas()


def test_html_report_inline(cli, report, tmp_path):
    page = report.html()
    assert page.startswith("<!DOCTYPE html>") or page.lstrip().lower().startswith("<!doctype")
    cell = report._repr_html_()
    assert cell.startswith("<iframe srcdoc=")
    # The verdict and the timelines are in the page: the same page `bubblesim run --html` writes
    # but for its run times.
    out = tmp_path / "r.html"
    assert run_cli(cli, "run", QUICKSTART, "--html", str(out), "-q").returncode == 0
    cli_page = out.read_text()
    assert len(page) == pytest.approx(len(cli_page), rel=0.01)
    for label in ("gpipe", "1f1b"):
        assert label in page
    eager = bubblesim.run(QUICKSTART, html=True).html()
    assert len(eager) == pytest.approx(len(page), rel=0.01)


def test_failed_schedule_is_reported_not_raised(tmp_path):
    text = open(QUICKSTART).read().replace("budget: 80GiB", "budget: 14GiB")
    report = bubblesim.run(text)
    assert report.failed
    assert {r.status for r in report} == {"out_of_memory"} or "out_of_memory" in {
        r.status for r in report}


def test_timeline(report):
    rows = report["gpipe"].timeline()
    assert len(rows) == 2 * 8 * 24
    device, kind, stage, microbatch, start, end = rows[0]
    assert (device, kind, stage, microbatch, start) == (0, "F", 0, 0, 0.0) and end > 0
    assert max(r[5] for r in rows) == pytest.approx(report["gpipe"].makespan_s)
    ideal = report["gpipe"].timeline("table")
    assert max(r[5] for r in ideal) == pytest.approx(report["gpipe"].table["makespan_s"])
    assert len(report["1f1b"].timeline()) == 2 * 8 * 24
    # Replayed from its order stream (--stream on) 1F1B has no per-op timings.
    unbounded = open(QUICKSTART).read().replace("memory: {budget: 80GiB}\n", "")
    streamed = bubblesim.run(unbounded, stream="on", schedules=["1f1b"])["1f1b"]
    assert streamed.timeline() == [] and streamed.makespan_s == report["1f1b"].makespan_s
    with pytest.raises(ValueError):
        report["gpipe"].timeline("formula")
