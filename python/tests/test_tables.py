"""Schedule tables as Python objects, and the PyTorch CSV both ways."""

import pytest

import bubblesim
from conftest import QUICKSTART, run_cli


def test_build_a_table_op_by_op():
    t = bubblesim.Table(devices=2, microbatches=1)
    assert (t.devices, t.stages, t.chunks, t.microbatches) == (2, 2, 1, 1)
    assert t.placement == [[0, 1]]
    assert t.validate()  # empty: every op is missing
    for device, op in [(0, bubblesim.Op("F", 0, 0)), (1, bubblesim.Op("F", 1, 0)),
                       (1, bubblesim.Op("B", 1, 0)), (0, bubblesim.Op("B", 0, 0))]:
        t.append(device, op)
    assert t.validate() == []
    assert t.ops(1) == [bubblesim.Op("F", 1, 0), bubblesim.Op("B", 1, 0)]
    assert [str(op) for op in t.device_ops[0]] == ["F0.0", "B0.0"]
    assert t.op_count() == 4
    with pytest.raises(IndexError):
        t.append(2, bubblesim.Op("F", 0, 0))
    with pytest.raises(ValueError, match="op kind"):
        bubblesim.Op("Q", 0, 0)
    op = bubblesim.Op("X", 1, 2, 0, 1)
    assert (op.kind, op.stage, op.microbatch, op.backward_stage, op.backward_microbatch) == (
        "X", 1, 2, 0, 1)
    assert len({bubblesim.Op("F", 0, 0), bubblesim.Op("F", 0, 0)}) == 1


def test_placements_and_device_ops_assignment():
    t = bubblesim.Table(devices=2, microbatches=2, chunks=2)
    assert t.placement == [[0, 1, 0, 1]] and t.stages == 4
    v = bubblesim.Table(devices=2, microbatches=2, chunks=2, placement="V")
    assert v.placement == [[0, 1, 1, 0]]
    custom = bubblesim.Table(devices=2, microbatches=1, placement=[[1, 0]])
    assert custom.placement == [[1, 0]]
    custom.device_ops = [[bubblesim.Op("F", 1, 0), bubblesim.Op("B", 1, 0)],
                         [bubblesim.Op("F", 0, 0), bubblesim.Op("B", 0, 0)]]
    assert custom.validate() == []
    custom.device_ops = [[bubblesim.Op("F", 1, 0)], [bubblesim.Op("F", 0, 0)]]
    assert any("B" in problem or "backward" in problem for problem in custom.validate())
    with pytest.raises(ValueError):
        custom.device_ops = [[]]
    with pytest.raises(ValueError, match="placement"):
        bubblesim.Table(devices=2, microbatches=1, placement="zigzag")


def test_torch_csv_round_trip_and_cli_equality(cli):
    table = bubblesim.generate(QUICKSTART, "1f1b")
    assert table.devices == 8 and table.op_count() == 2 * 8 * 24
    text = table.to_torch_csv()
    done = run_cli(cli, "table", QUICKSTART, "--schedule", "1f1b", "--format", "torch-csv")
    assert done.returncode == 0, done.stderr
    assert text == done.stdout
    back = bubblesim.Table.from_torch_csv(text)
    assert back == table
    assert bubblesim.Table.from_torch_csv(table.to_torch_csv("2024"), "2024") == table


def test_torch_csv_file_and_errors(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text(bubblesim.generate(QUICKSTART, "gpipe").to_torch_csv())
    assert bubblesim.read_torch_csv(path).op_count() == 2 * 8 * 24
    path.write_text("0F0,0Q1\n")
    with pytest.raises(bubblesim.ScenarioError) as info:
        bubblesim.read_torch_csv(path)
    assert f"{path}:1:" in str(info.value)
    with pytest.raises(ValueError):
        bubblesim.generate(QUICKSTART, "1f1b").to_torch_csv("1999")


def test_bubblesim_table_csv_round_trip():
    table = bubblesim.generate(QUICKSTART, "zb-h1")
    assert bubblesim.Table.from_csv(table.to_csv()) == table
    with pytest.raises(bubblesim.ScenarioError):
        bubblesim.generate(QUICKSTART, "no-such")
