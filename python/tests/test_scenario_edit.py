"""Scenarios edited by key path (Scenario.with_ / set / get), relative files against base_dir,
errors at the edit or at the key in the source, and a failed schedule's reason on the Report."""

import os
import pathlib
import shutil

import pytest

import bubblesim
from conftest import QUICKSTART, ROOT

TWO_NODES = """name: fsdp-two-nodes
pipeline: {stages: 1}
training: {global_batch: 32}
model: {preset: llama3-8b, seq_len: 2048, micro_batch_size: 1}
cluster: {gpu: {preset: h100-sxm}}
topology: topology.yaml
parallelism: {dp: 8, zero: 3}
schedules: [1f1b]
"""


@pytest.fixture()
def two_nodes(tmp_path):
    """An FSDP scenario on one of two nodes, its topology a relative file beside it."""
    (tmp_path / "topology.yaml").write_text(
        "topology: {builder: multi-node, nodes: 2, gpus_per_node: 8}\n")
    path = tmp_path / "fsdp.yaml"
    path.write_text(TWO_NODES)
    return path


def test_with_returns_an_edited_copy_that_runs(two_nodes, tmp_path, monkeypatch):
    s = bubblesim.load(str(two_nodes))
    s2 = s.with_({"parallelism.dp": 16})
    # The original is unchanged; the copy has the edit; relative files still resolve against the
    # scenario's folder, from any working folder.
    monkeypatch.chdir(ROOT)
    assert s.get("parallelism.dp") == 8 and s2.get("parallelism.dp") == 16
    assert s2.edits == {"parallelism.dp": 16}
    assert s2.base_dir == str(tmp_path)
    report = bubblesim.run(s2)
    assert not report.failed
    sim = report["1f1b"].simulation
    # 32 sequences over 16 replicas: 2 microbatches per pipeline, every GPU of both nodes.
    assert report.to_dict()["scenario"]["pipeline"]["microbatches"] == 2
    assert sim["tokens_per_s_per_gpu"] > 0
    assert report.scenario is s2


def test_set_edits_in_place_and_keeps_the_scenario_on_an_error(two_nodes):
    s = bubblesim.load(str(two_nodes))
    s.set("model.micro_batch_size", 2)
    assert s.get("model.micro_batch_size") == 2
    assert s.microbatches == 2  # 32 / (2 x 8)
    with pytest.raises(bubblesim.ScenarioError) as info:
        s.set("parallelism.dp", "many")
    assert "parallelism.dp: expected an integer, got 'many'" in str(info.value)
    assert "(set by an edit: parallelism.dp = many)" in str(info.value)
    assert s.get("parallelism.dp") == 8 and s.microbatches == 2
    # Mappings and lists as values; keyword arguments set top-level keys.
    s3 = s.with_({"memory.recompute": {"policy": "full"}}, schedules=["1f1b"])
    assert s3.get("memory.recompute") == {"policy": "full"}
    assert s3.to_dict()["memory"]["recompute"] == {"policy": "full"}


def test_errors_away_from_the_edit_point_at_the_key_in_the_file(two_nodes):
    s = bubblesim.load(str(two_nodes))
    with pytest.raises(bubblesim.ScenarioError) as info:
        s.with_({"parallelism.zero": 1, "parallelism.dp": 1})
    # ZeRO needs dp > 1: reported at the edit that set zero ...
    assert any(d[3] == "parallelism.zero" and d[1] == 0 for d in info.value.diagnostics)
    # ... and a key the edit did not touch keeps its place in the file: 32 sequences over 7
    # replicas is refused at training (line 3).
    with pytest.raises(bubblesim.ScenarioError) as info:
        s.with_({"parallelism.dp": 7})
    located = [d for d in info.value.diagnostics if d[3].startswith("training")]
    assert located and located[0][0] == str(two_nodes) and located[0][1] == 3
    with pytest.raises(bubblesim.ScenarioError) as info:
        s.with_({"pipeline.stages.count": 2})
    assert "'pipeline.stages' is '1' in the scenario, not a mapping" in str(info.value)


def test_dicts_and_text_resolve_relative_files_against_base_dir(two_nodes, tmp_path):
    import yaml
    doc = yaml.safe_load(TWO_NODES)
    with pytest.raises(bubblesim.ScenarioError):
        bubblesim.load(doc)  # topology.yaml is not in the working folder
    s = bubblesim.load(doc, base_dir=str(tmp_path))
    assert s.base_dir == str(tmp_path)
    assert not bubblesim.run(s.with_({"parallelism.dp": 16})).failed
    t = bubblesim.load(TWO_NODES, base_dir=str(tmp_path))
    assert t.with_({"parallelism.dp": 4}).get("parallelism") == {"dp": 4, "zero": 3}


def test_a_failed_schedules_reason_is_on_the_report():
    s = bubblesim.load(QUICKSTART).with_({"memory.budget": "20GiB"})
    report = bubblesim.run(s)
    assert report.failed
    failures = report.failures
    assert [f.label for f in failures] == ["gpipe"]
    assert failures[0].status == "out_of_memory"
    assert failures[0].reason.startswith("out of memory on device")
    assert report["gpipe"].failed and report["gpipe"].failure == failures[0].reason
    assert report["1f1b"].failure is None and not report["1f1b"].failed
    assert str(failures[0]).startswith("gpipe: out_of_memory: out of memory on device")
