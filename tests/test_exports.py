"""Exports (gpusim.observe.export): the ncu raw-page CSV matches run.metrics exactly, tables for pandas,
warp-state views, the versioned JSON layout against its schema."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

import gpusim
from benchmarks.kernels import STREAM_COPY
from gpusim.errors import GpusimError
from gpusim.observe.export import (
    ID_COLUMNS,
    RUN_SCHEMA_VERSION,
    metric_unit,
    run_schema,
    stall_rows,
    validate,
)

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "docs" / "run-schema.json"


@pytest.fixture(scope="module")
def run():
    gpu = gpusim.GPU("h100-sxm", sms=2)
    kernel = gpu.load_ptx(STREAM_COPY)["stream_copy"]
    n = 1 << 13
    src, dst = gpu.to_device(np.arange(n, dtype=np.float32)), gpu.empty(n, np.float32)
    return gpu.launch(kernel, grid=8, block=256, args=[src, dst, n])


def test_metrics_table_rows_are_the_metrics_with_units(run):
    table = run.metrics_table()
    assert [(name, value) for name, _, value in table] == list(run.metrics.items())
    units = {name: unit for name, unit, _ in table}
    assert units["dram__bytes_read.sum"] == "byte"
    assert units["gpu__time_duration.sum"] == "nsecond"
    assert units["sm__cycles_elapsed.max"] == "cycle"
    assert units["dram__throughput.avg.pct_of_peak_sustained_elapsed"] == "%"
    assert units["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == "sector"
    assert units["smsp__inst_executed.sum"] == "inst"


def test_csv_has_ncu_raw_layout_and_parses_back_exactly(run, tmp_path):
    pd = pytest.importorskip("pandas")
    path = tmp_path / "run.csv"
    run.to_csv(path)
    rows = list(csv.reader(io.StringIO(path.read_text())))
    assert len(rows) == 3
    assert rows[0][:len(ID_COLUMNS)] == list(ID_COLUMNS)
    assert rows[1][:len(ID_COLUMNS)] == [""] * len(ID_COLUMNS)
    assert rows[1][len(ID_COLUMNS):] == [metric_unit(name) for name in run.metrics]
    assert path.read_text().startswith('"ID","Process ID"')            # every field quoted, as ncu does
    frame = pd.read_csv(path, skiprows=[1])
    assert frame.loc[0, "Kernel Name"] == "stream_copy"
    for name, value in run.metrics.items():
        assert frame.loc[0, name] == value, name
    assert run.to_csv() == path.read_text()


def test_to_pandas_metrics_stalls_source(run):
    pytest.importorskip("pandas")
    metrics = run.to_pandas()
    assert list(metrics.columns) == ["metric", "unit", "value"]
    assert dict(zip(metrics["metric"], metrics["value"], strict=True)) == run.metrics
    stalls = run.to_pandas("stalls")
    assert "selected" not in set(stalls["state"])
    everything = run.to_pandas("stalls", view="all")
    assert int(everything["warp_cycles"].sum()) == sum(run.stalls.values())
    source = run.to_pandas("source")
    assert int(source["warp_inst"].sum()) == run.warp_instructions
    with pytest.raises(GpusimError):
        run.to_pandas("lines")


def test_warp_state_views(run):
    not_issued = stall_rows(run)
    assert all(name != "selected" for name, _, _ in not_issued)
    total = sum(value for name, value in run.stalls.items() if name != "selected")
    assert sum(cycles for _, cycles, _ in not_issued) == total
    assert abs(sum(pct for _, _, pct in not_issued) - 100.0) < 1e-9
    everything = stall_rows(run, "all")
    assert dict((name, cycles) for name, cycles, _ in everything)["selected"] == run.stalls["selected"]
    assert [c for _, c, _ in everything] == sorted((c for _, c, _ in everything), reverse=True)
    with pytest.raises(GpusimError, match="not_issued"):
        stall_rows(run, "issued")


def test_json_is_versioned_and_valid_against_its_schema(run, tmp_path):
    path = tmp_path / "run.json"
    run.to_json(path)
    document = json.loads(path.read_text())
    assert document["schema_version"] == RUN_SCHEMA_VERSION
    assert validate(document, run_schema()) == []
    assert set(document["metric_units"]) == set(document["metrics"])


def test_the_validator_can_fail(run):
    document = run.to_dict()
    broken = dict(document, schema_version=RUN_SCHEMA_VERSION + 1)
    del broken["stalls"]
    broken["grid"] = ["8"]
    errors = validate(broken, run_schema())
    assert any("schema_version" in e for e in errors)
    assert any("missing key 'stalls'" in e for e in errors)
    assert any("$.grid[0]" in e for e in errors)


def test_committed_schema_file_is_current():
    """docs/run-schema.json is written by scripts/write_run_schema.py from run_schema()."""
    assert json.loads(SCHEMA_FILE.read_text()) == run_schema()


def test_a_functional_run_exports_too():
    gpu = gpusim.GPU("h100-sxm", sms=2)
    kernel = gpu.load_ptx(STREAM_COPY)["stream_copy"]
    src, dst = gpu.to_device(np.ones(256, np.float32)), gpu.empty(256, np.float32)
    run = gpu.launch(kernel, grid=1, block=256, args=[src, dst, 256], timing=False)
    document = run.to_dict()
    assert document["cycles"] is None and validate(document, run_schema()) == []
    assert [row[0] for row in run.metrics_table()] == list(run.metrics)
