"""Traces: Chrome trace event JSON that follows the format, tables that match the counters, the budget cut."""

from __future__ import annotations

import json
import warnings
from collections import Counter, defaultdict

import numpy as np
import pytest

from gpusim.observe.trace import TraceTruncatedWarning
from gpusim.programs.catalog import run_program


@pytest.fixture(scope="module")
def traced():
    return run_program("strided_copy", trace=True).runs[0]


def test_trace_covers_every_warp_cycle(traced):
    trace = traced.trace
    assert not trace.truncated
    iv = trace.raw_intervals
    assert int((iv[:, 3] - iv[:, 2]).sum()) == sum(traced.stalls.values())
    assert sum(trace.warp_issue_counts().values()) == traced.metrics["smsp__inst_executed.sum"]


def test_chrome_json_follows_the_trace_event_format(traced, tmp_path):
    path = traced.trace.to_chrome(tmp_path / "t.json")
    document = json.loads(path.read_text())
    events = document["traceEvents"]
    assert {e["ph"] for e in events} == {"M", "X", "C"}
    last = defaultdict(lambda: -1.0)
    selected = Counter()
    us_per_cycle = 1.0 / traced.config.core_clock_mhz
    for e in events:
        for key in ("ph", "name", "pid", "tid", "ts"):
            assert key in e
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0
        if e["ph"] == "X":
            assert e["dur"] >= 0
            assert e["ts"] >= last[(e["pid"], e["tid"])]  # monotonic per track
            last[(e["pid"], e["tid"])] = e["ts"]
            assert e["ts"] == pytest.approx(e["args"]["cycle"] * us_per_cycle)
            assert e["pid"] == e["tid"] // traced.trace.slots_per_sm
            if e["name"] == "selected":
                selected[e["tid"]] += 1
        if e["ph"] == "C":
            assert all(isinstance(v, (int, float)) for v in e["args"].values())
    assert dict(selected) == traced.trace.warp_issue_counts()
    assert sum(selected.values()) == traced.metrics["smsp__inst_executed.sum"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {f"SM {i}" for i in range(traced.config.sms)} | {"memory"}


def test_binned_series_integrate_to_the_counters(traced):
    trace = traced.trace
    edges, warps = trace.active_warps()
    assert (warps * np.diff(edges)).sum() == pytest.approx(sum(traced.stalls.values()))
    edges, bandwidth = trace.bandwidth()
    seconds = np.diff(edges) / traced.config.clock_hz
    assert (bandwidth["DRAM"] * 1e9 * seconds).sum() == pytest.approx(traced.metrics["dram__bytes_read.sum"])
    assert (bandwidth["L2"] * 1e9 * seconds).sum() == pytest.approx(traced.metrics["lts__t_bytes.sum"])


def test_tables(traced):
    pytest.importorskip("pandas")
    trace = traced.trace
    inst = trace.instructions()
    assert len(inst) == traced.warp_instructions
    assert (
        inst.groupby("pc").size().reindex(range(traced.program.n_inst), fill_value=0).to_numpy()
        == traced.pc_counts[:, 0]
    ).all()
    assert inst["active_lanes"].sum() == traced.pc_counts[:, 1].sum()
    assert (inst["sm"] == inst["warp_slot"] // trace.slots_per_sm).all()
    lines = np.asarray(traced.program.lines)
    assert (inst["ptx_line"].to_numpy() == lines[inst["pc"].to_numpy()]).all()
    mem = trace.memory()
    c = traced.counters
    assert len(mem) == c["global_load_requests"] + c["global_store_requests"]
    loads = mem[mem["kind"] == "load"]
    assert loads["sectors"].sum() == c["global_load_sectors"]
    assert (mem["latency"] >= 0).all()
    assert set(mem["level"].astype(str)) <= {"L1", "L2", "DRAM", "shared"}
    iv = trace.intervals()
    assert len(iv) == len(trace.raw_intervals)


def test_a_trace_over_budget_is_cut_with_a_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = run_program("strided_copy", trace=64).runs[0]
    assert run.trace.truncated
    assert len(run.trace.raw_intervals) == 64
    assert any(issubclass(w.category, TraceTruncatedWarning) and "trace=N" in str(w.message) for w in caught)
    assert "trace was cut at 64 rows" in run.report()
    # the counters stay complete
    assert run.metrics["smsp__inst_executed.sum"] == run_program("strided_copy").runs[0].warp_instructions


def test_memory_table_names_distributed_shared_memory_and_every_kind():
    """A cluster kernel's trace: each thread of tests/data/hopper/clusters.cu's dsm_ring stores one word into the
    next rank's shared memory (one warp request per warp, space shared::cluster) and adds to rank 0's counter
    (an atomic per warp); the table names every space and kind it records (it raised IndexError on the DSM
    space code before)."""
    from pathlib import Path

    from gpusim import GPU

    gpu = GPU("h100-sxm")
    mod = gpu.load(Path(__file__).parent / "data" / "hopper" / "clusters.ptx")
    ranks, clusters, threads = 4, 3, 64
    out = gpu.zeros(ranks * clusters * threads + clusters, np.uint32)
    run = gpu.launch(mod["dsm_ring"], (ranks * clusters,), (threads,), [out], cluster=(ranks, 1, 1), trace=True)
    mem = run.trace.memory()
    remote = mem[mem["space"] == "shared::cluster"]
    warps = ranks * clusters * threads // 32
    assert (remote["kind"] == "store").sum() == warps
    assert (remote["kind"] == "atomic").sum() >= warps
    assert "" not in set(mem["kind"].astype(str)) | set(mem["space"].astype(str))
