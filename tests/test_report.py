"""The report's verdict on kernels built to be memory-, compute- and latency-bound, and its suggestions."""

from __future__ import annotations

import re

import numpy as np
import pytest

import gpusim
from benchmarks.kernels import FFMA_LOOP, STREAM_COPY
from gpusim.observe.report import COMPUTE_BOUND_PCT, MEMORY_BOUND_PCT, report_text, verdict
from gpusim.programs.catalog import run_program


def _ptx_line_of(path, needle: str) -> int:
    """1-based line number of the first PTX line containing needle."""
    for number, text in enumerate(open(path, encoding="utf-8"), start=1):
        if needle in text:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


@pytest.fixture(scope="module")
def stream_run():
    gpu = gpusim.GPU("h100-sxm", sms=2)
    kernel = gpu.load_ptx(STREAM_COPY)["stream_copy"]
    n = 1 << 17
    src = gpu.to_device(np.arange(n, dtype=np.float32))
    dst = gpu.empty(n, np.float32)
    # 16 blocks x 8 warps = 64 warps per SM: enough loads in flight to approach DRAM bandwidth
    return gpu.launch(kernel, grid=16, block=256, args=[src, dst, n])


@pytest.fixture(scope="module")
def ffma_run():
    gpu = gpusim.GPU("teaching")
    kernel = gpu.load_ptx(FFMA_LOOP)["ffma_loop"]
    out = gpu.empty(8 * 256, np.float32)
    return gpu.launch(kernel, grid=8, block=256, args=[out, 64])


def test_streaming_copy_is_memory_bound(stream_run):
    v = verdict(stream_run)
    m = stream_run.metrics
    dram = m["dram__throughput.avg.pct_of_peak_sustained_elapsed"]
    assert dram >= MEMORY_BOUND_PCT
    assert v.kind == "memory-bound"
    assert v.limiter in ("DRAM", "L2", "L1/shared")
    assert (
        f"{m['dram__throughput.avg.pct_of_peak_sustained_elapsed']:.0f}%" in v.reason or v.limiter != "DRAM"
    )


def test_independent_ffma_chains_are_compute_bound(ffma_run):
    v = verdict(ffma_run)
    assert v.kind == "compute-bound"
    # the fma pipe is busy: issues x cycles per instruction over the schedulers' active cycles
    config = ffma_run.config
    lanes = config.fp32_lanes_per_sm / config.sub_partitions_per_sm
    busy = ffma_run.counters["pipe_fma_issues"] * int(np.ceil(32 / lanes))
    pct = 100 * busy / (ffma_run.counters["sm_active_cycles"] * config.sub_partitions_per_sm)
    assert pct >= COMPUTE_BOUND_PCT
    assert "fma pipe" in v.reason and f"{pct:.0f}%" in v.reason


def test_single_warp_pointer_chase_is_latency_bound():
    run = run_program("pointer_chase").runs[0]
    v = verdict(run)
    assert v.kind == "latency-bound"
    biggest = max((k for k in run.stalls if k not in ("selected", "not_selected")), key=run.stalls.get)
    assert biggest == "long_scoreboard"
    assert "long_scoreboard" in v.reason
    # the suggestion names the line whose instruction waits for the chased load's result
    line = int(re.search(r"line (\d+)", v.suggestion).group(1))
    pcs = [pc for pc in range(run.program.n_inst) if run.program.lines[pc] == line]
    assert run.pc_stalls[pcs].sum() > 0


def test_strided_copy_suggestion_names_the_uncoalesced_load():
    result = run_program("strided_copy")
    run = result.runs[0]
    v = verdict(run)
    line = _ptx_line_of(result.spec.ptx, "ld.global")
    c = run.counters
    per_request = c["global_load_sectors"] / c["global_load_requests"]
    ideal = c["global_load_ideal_sectors"] / c["global_load_requests"]
    assert per_request > 1.25 * ideal
    assert v.suggestion.startswith(f"loads use {per_request:.1f} sectors per request of an ideal {ideal:.1f}")
    assert f"line {line}" in v.suggestion


def test_divergence_suggestion_names_the_splitting_branch():
    result = run_program("divergence")
    run = result.runs[0]
    v = verdict(run)
    # the branch on threadIdx.x & 1 (after `not.pred %p5`) is the one that sends even and odd lanes apart
    branch_line = _ptx_line_of(result.spec.ptx, "@%p5 bra")
    lanes = run.pc_counts[:, 1].sum() / run.pc_counts[:, 0].sum()
    assert lanes < 0.85 * 32
    divergence = [f for f in v.findings if "lanes per instruction" in f.text]
    assert divergence and divergence[0].ptx_line == branch_line
    assert f"{lanes:.1f} of 32 lanes" in divergence[0].text
    assert "divergence.cu:12" in divergence[0].text


def test_report_sections_and_hot_lines(stream_run):
    text = report_text(stream_run)
    for section in (
        "Verdict:",
        "Speed of light",
        "Launch statistics",
        "Occupancy",
        "Warp states",
        "Memory workload",
        "Instruction statistics",
        "Hottest PTX lines",
    ):
        assert section in text
    assert f"{stream_run.cycles} cycles" in text
    assert stream_run.report() == text


def test_functional_run_report_has_no_timing():
    result = run_program("vecadd", timing=False)
    run = result.runs[0]
    assert verdict(run).kind == "functional"
    text = run.report()
    assert "functional run" in text and "Speed of light" not in text
    assert str(run.warp_instructions) in text


def test_run_to_json_holds_metrics_stalls_config(tmp_path, ffma_run):
    import json

    path = tmp_path / "run.json"
    ffma_run.to_json(path)
    data = json.loads(path.read_text())
    assert data["cycles"] == ffma_run.cycles
    assert data["stalls"] == ffma_run.stalls
    assert data["metrics"]["smsp__inst_executed.sum"] == ffma_run.warp_instructions
    assert data["config"]["sms"] == ffma_run.config.sms
    assert data["verdict"]["kind"] == "compute-bound"
    assert len(data["source_view"]) == ffma_run.program.n_inst
