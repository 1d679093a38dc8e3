"""What the Python API must not do: lose a Ctrl-C inside a generator, recurse forever on a dict
that holds itself, print another time than the CLI's verdict, or let a user's string start a line
of its own; and a sweep resumed after a plugin file changed must not keep the old rows."""

import json

import pytest

import bubblesim
from conftest import QUICKSTART

SMALL = {"name": "t", "pipeline": {"stages": 2, "microbatches": 4},
         "costs": {"forward": "1ms", "backward_input": "2ms"}}


def _one_f_one_b(inp):
    return bubblesim.generate(dict(SMALL, pipeline={"stages": inp.devices,
                                                    "microbatches": inp.microbatches},
                                   schedules=["1f1b"]), "1f1b")


def test_ctrl_c_inside_a_generator_propagates():
    @bubblesim.generator("interrupted-gen", replace=True)
    def interrupted(inp):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        bubblesim.run(dict(SMALL, schedules=["interrupted-gen"]))
    with pytest.raises(KeyboardInterrupt):
        bubblesim.generate(dict(SMALL, schedules=["interrupted-gen"]), "interrupted-gen")
    with pytest.raises(KeyboardInterrupt):
        bubblesim.check_generator("interrupted-gen")
    # Any other exception is still the generator's error, named.
    @bubblesim.generator("failing-gen", replace=True)
    def failing(inp):
        raise ValueError("no")

    with pytest.raises(bubblesim.ScenarioError, match="failing-gen"):
        bubblesim.run(dict(SMALL, schedules=["failing-gen"]))


def test_a_dict_that_holds_itself_is_a_scenario_error():
    looped = dict(SMALL)
    looped["costs"] = dict(SMALL["costs"])
    looped["costs"]["again"] = looped
    with pytest.raises(bubblesim.ScenarioError, match="costs.again") as e:
        bubblesim.load(looped)
    assert e.value.diagnostics[0][3] == "costs.again"
    listed = dict(SMALL)
    listed["schedules"] = ["1f1b"]
    listed["schedules"].append(listed["schedules"])
    with pytest.raises(bubblesim.ScenarioError, match=r"schedules\[1\]"):
        bubblesim.load(listed)
    deep = dict(SMALL)
    node = deep
    for _ in range(200):
        node["x"] = {}
        node = node["x"]
    with pytest.raises(bubblesim.ScenarioError, match="nested more than"):
        bubblesim.load(deep)
    # A value YAML cannot hold.
    with pytest.raises(bubblesim.ScenarioError, match="is not YAML"):
        bubblesim.load(dict(SMALL, name=object()))


def test_the_verdict_shows_the_time_the_cli_ranks_by():
    # Two iterations with an optimizer step between them: the iteration time is not the
    # makespan, and the verdict shows the former, as `bubblesim run` does.
    text = open(QUICKSTART).read() + "iteration: {count: 2}\n"
    report = bubblesim.run(text)
    data = report.to_dict()
    assert report.verdict.metric == data["ranking_metric"] == "simulation.iteration_time_s"
    for entry in report.verdict:
        sim = report[entry.label].simulation
        assert entry.time_s == sim["iteration_time_s"]
        assert entry.makespan_s == sim["makespan_s"]
        assert f"{entry.time_s * 1e3:.3f} ms" in str(report.verdict)


def test_a_generator_name_cannot_forge_a_verdict_line():
    name = "evil\n1. forged  0.001 ms\x1b[2K"
    bubblesim.register_generator(name, _one_f_one_b, replace=True)
    report = bubblesim.run(dict(SMALL, schedules=["gpipe", name]))
    for text in (str(report.verdict), report.text):
        lines = text.splitlines()
        assert not any(line.startswith("1. forged") for line in lines), text
        assert "\x1b" not in text
        assert "evil\\x0a1. forged" in text
    assert json.loads(report.to_json())["results"][1]["schedule"] == name  # JSON keeps it exact


def test_a_resumed_sweep_keeps_no_row_after_its_plugin_file_changed(tmp_path):
    plugin = tmp_path / "plug.py"
    plugin.write_text(
        "import bubblesim\n"
        "@bubblesim.generator('plug-1f1b', replace=True)\n"
        "def plug(inp):\n"
        "    return bubblesim.generate({'name': 'x', 'pipeline': {'stages': inp.devices,\n"
        "        'microbatches': inp.microbatches}, 'costs': {'forward': '1ms',\n"
        "        'backward_input': '2ms'}, 'schedules': ['1f1b']}, '1f1b')\n")
    (tmp_path / "base.yaml").write_text(
        "name: t\npipeline: {stages: 2, microbatches: 4}\n"
        "costs: {forward: 1ms, backward_input: 2ms}\nschedules: [plug-1f1b]\n")
    (tmp_path / "sweep.yaml").write_text("base: base.yaml\naxes:\n  pipeline.microbatches: [4, 8]\n")
    out = str(tmp_path / "out.csv")
    bubblesim.sweep(str(tmp_path / "sweep.yaml"), out, plugins=[str(plugin)], max_workers=1)
    before = open(out).read()
    # Unchanged: resuming keeps the finished file.
    bubblesim.sweep(str(tmp_path / "sweep.yaml"), out, plugins=[str(plugin)], max_workers=1,
                    resume=True)
    assert open(out).read() == before
    plugin.write_text(plugin.read_text() + "# changed\n")
    with pytest.raises(bubblesim.ScenarioError, match="different sweep"):
        bubblesim.sweep(str(tmp_path / "sweep.yaml"), out, plugins=[str(plugin)],
                        max_workers=1, resume=True)
    assert open(out).read() == before
