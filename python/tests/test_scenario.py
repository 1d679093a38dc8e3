"""Loading scenarios from a path, YAML text and a dict; the errors carry every diagnostic."""

import os
import pathlib

import pytest

import bubblesim
from conftest import QUICKSTART


def test_load_path_text_and_dict_give_the_same_scenario():
    from_path = bubblesim.load(QUICKSTART)
    from_pathlike = bubblesim.load(pathlib.Path(QUICKSTART))
    text = pathlib.Path(QUICKSTART).read_text()
    from_text = bubblesim.load(text)
    import yaml
    from_dict = bubblesim.load(yaml.safe_load(text))
    for s in (from_path, from_pathlike, from_text, from_dict):
        assert (s.name, s.stages, s.microbatches, s.schedules) == ("quickstart", 8, 24,
                                                                  ["gpipe", "1f1b"])
    assert from_path.file == QUICKSTART
    assert bubblesim.load(from_path) is from_path
    assert "quickstart" in repr(from_path)
    # Same inputs, same numbers.
    a = bubblesim.run(from_dict).to_dict()["results"][1]["simulation"]["makespan_s"]
    b = bubblesim.run(from_path).to_dict()["results"][1]["simulation"]["makespan_s"]
    assert a == b


def test_errors_name_file_line_column_and_carry_every_diagnostic(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\npipeline: {stages: 0, microbatches: 8}\n"
                   "costs: {forward: 1ms, backward_input: 1ms, backward_weight: 1ms,"
                   " activation_memory: 1GiB}\nschedules: [1f1b, no-such-schedule]\n")
    with pytest.raises(bubblesim.ScenarioError) as info:
        bubblesim.load(str(bad))
    error = info.value
    assert isinstance(error, ValueError)
    assert len(error.diagnostics) >= 2
    files = {d[0] for d in error.diagnostics}
    assert files == {str(bad)}
    keys = " ".join(d[3] for d in error.diagnostics)
    assert "pipeline.stages" in keys and "schedules" in keys
    # The message is the CLI's: FILE:LINE:COL per diagnostic.
    assert f"{bad}:2:" in str(error)
    assert "no-such-schedule" in str(error)


def test_yaml_text_and_dict_errors_are_named():
    with pytest.raises(bubblesim.ScenarioError) as info:
        bubblesim.load("name: x\npipeline: {stages: 2, microbatches: -1}\n", name="inline.yaml")
    assert {d[0] for d in info.value.diagnostics} == {"inline.yaml"}
    assert "inline.yaml:2:37: error: pipeline.microbatches: -1 is out of range" in str(info.value)
    with pytest.raises(bubblesim.ScenarioError) as info:
        bubblesim.load({"name": "x", "pipeline": {"stages": 2, "microbatches": 4},
                        "costs": {"forward": "1ms", "backward_input": "1ms",
                                  "backward_weight": "1ms", "activation_memory": "1GiB"},
                        "schedules": ["1f1b"], "unknown_key": 3})
    assert any(d[0] == "<dict>" and "unknown_key" in (d[3] + d[4]) for d in info.value.diagnostics)


def test_missing_file_and_wrong_type():
    with pytest.raises(bubblesim.ScenarioError):
        bubblesim.load("does/not/exist.yaml")
    with pytest.raises(TypeError):
        bubblesim.load(42)
