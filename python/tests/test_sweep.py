"""Sweeps on any executor write the bytes `bubblesim sweep` writes, and resume."""

import concurrent.futures
import shutil

import pytest

import bubblesim
from conftest import ROOT, run_cli

GRID = """base: base.yaml
axes:
  pipeline.stages: [2, 4]
  pipeline.microbatches: [4, 8, 0]
  communication.delay: [0ms, 0.1ms]
"""


@pytest.fixture()
def sweep_file(tmp_path):
    shutil.copy(ROOT / "scenarios" / "sweeps" / "base.yaml", tmp_path / "base.yaml")
    path = tmp_path / "grid.yaml"
    path.write_text(GRID)  # 12 points, microbatches 0 invalid: rows with the error
    return path


@pytest.fixture()
def cli_csv(cli, sweep_file, tmp_path):
    out = tmp_path / "cli.csv"
    done = run_cli(cli, "sweep", str(sweep_file), "-o", str(out), "-q")
    assert done.returncode == 0, done.stderr
    return out.read_bytes()


def test_thread_executor_equals_cli(sweep_file, cli_csv, tmp_path):
    out = tmp_path / "py.csv"
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        summary = bubblesim.sweep(str(sweep_file), str(out), executor=pool, window=2)
    assert out.read_bytes() == cli_csv
    assert (summary.points, summary.failed, summary.resumed) == (12, 4, 0)
    assert summary.rows == cli_csv.count(b"\n") - 2
    assert not (tmp_path / "py.csv.partial").exists()


def test_default_process_pool_equals_cli(sweep_file, cli_csv, tmp_path):
    out = tmp_path / "proc.csv"
    bubblesim.sweep(str(sweep_file), str(out), max_workers=2)
    assert out.read_bytes() == cli_csv


def test_dask_local_cluster_equals_cli(sweep_file, cli_csv, tmp_path):
    distributed = pytest.importorskip("distributed")
    out = tmp_path / "dask.csv"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            bubblesim.sweep(str(sweep_file), str(out), executor=client.get_executor())
    assert out.read_bytes() == cli_csv


class FailingExecutor(concurrent.futures.ThreadPoolExecutor):
    """Runs points until the `fail_at`-th submission, which raises: an interrupted sweep."""

    def __init__(self, fail_at):
        super().__init__(1)
        self.fail_at, self.submitted = fail_at, 0

    def submit(self, fn, *args, **kwargs):
        self.submitted += 1
        if self.submitted == self.fail_at:
            raise KeyboardInterrupt("interrupted")
        return super().submit(fn, *args, **kwargs)


def test_interrupted_sweep_resumes_to_the_same_bytes(sweep_file, cli_csv, tmp_path):
    out = tmp_path / "resumed.csv"
    with FailingExecutor(fail_at=7) as pool, pytest.raises(KeyboardInterrupt):
        bubblesim.sweep(str(sweep_file), str(out), executor=pool, window=1)
    partial = (tmp_path / "resumed.csv.partial").read_bytes()
    assert not out.exists() and 0 < len(partial) < len(cli_csv)
    assert cli_csv.startswith(partial)
    summary = bubblesim.sweep(str(sweep_file), str(out), resume=True,
                              executor=concurrent.futures.ThreadPoolExecutor(2))
    assert summary.resumed > 0
    assert out.read_bytes() == cli_csv


def test_shards_and_python_generators(sweep_file, tmp_path):
    example = str(ROOT / "python" / "examples" / "one_f_one_b.py")
    text = (ROOT / "scenarios" / "sweeps" / "base.yaml").read_text()
    (tmp_path / "base.yaml").write_text(text.replace("[gpipe, 1f1b]", "[1f1b, py-1f1b]"))
    out = tmp_path / "shard.csv"
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        summary = bubblesim.sweep(str(sweep_file), str(out), executor=pool, shard="1/2",
                                  plugins=[example])
    assert summary.points == 6
    import csv
    lines = out.read_text().splitlines()
    assert lines[0].endswith("shard=1/2")
    rows = list(csv.reader(lines[1:]))
    header, rows = rows[0], rows[1:]
    status = header.index("status")
    assert header[status - 2:status] == ["schedule", "label"]
    by_point = {}
    for row in rows:
        assert int(row[0]) % 2 == 1
        by_point.setdefault(row[0], {})[row[status - 2]] = row
    compared = 0
    for point, schedules in by_point.items():
        if set(schedules) == {"1f1b", "py-1f1b"}:  # the same numbers, every metric
            assert schedules["1f1b"][status:] == schedules["py-1f1b"][status:]
            compared += 1
    assert compared == 4  # the points with microbatches 4 and 8 of this shard


def test_bad_sweep_file_is_a_scenario_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("base: none.yaml\naxes: {pipeline.stages: [2]}\n")
    with pytest.raises(bubblesim.ScenarioError):
        bubblesim.sweep(str(bad), str(tmp_path / "o.csv"))


def test_zipped_sweep_at_a_fixed_gpu_count_equals_cli(cli, tmp_path):
    """Stages and dp advance together (zip) and a constraint keeps tp x pp x dp == 16: the same
    points and bytes from Python as from the CLI."""
    for name in ("fixed_gpus_base.yaml",):
        shutil.copy(ROOT / "scenarios" / "sweeps" / name, tmp_path / name)
    spec = tmp_path / "zipped.yaml"
    spec.write_text("base: fixed_gpus_base.yaml\naxes:\n"
                    "  pipeline.stages: [1, 2, 4]\n  parallelism.dp: [8, 4, 2]\n"
                    "  parallelism.tp: [1, 2, 4]\n"
                    "zip: [[pipeline.stages, parallelism.dp]]\n"
                    "constraints: ['tp * pp * dp == 16']\n")
    cli_out, py_out = tmp_path / "cli.csv", tmp_path / "py.csv"
    done = run_cli(cli, "sweep", str(spec), "-o", str(cli_out), "-q")
    assert done.returncode == 0, done.stderr
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        summary = bubblesim.sweep(str(spec), str(py_out), executor=pool)
    assert py_out.read_bytes() == cli_out.read_bytes()
    # (pp, dp) pairs (1, 8), (2, 4), (4, 2) times tp 1, 2, 4: tp x pp x dp == 16 keeps tp 2 of
    # the first pair, tp 2 of the second and tp 2 of the third.
    rows = [line.split(",") for line in py_out.read_text().splitlines()[2:]]
    layouts = sorted({(int(r[4]), int(r[2]), int(r[3])) for r in rows})
    assert layouts == [(2, 1, 8), (2, 2, 4), (2, 4, 2)]
    assert summary.points == 3
