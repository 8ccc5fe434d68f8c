"""The advice follows the verdict: on kernels built for each regime, the top suggestion (a structured
``Finding.kind``) belongs to the verdict's family; a memory-bound run is never told to add warps."""

from __future__ import annotations

import pytest

import gpusim
from gpusim.labs import regimes
from gpusim.observe.advice import FINDING_KINDS, Finding, ordered
from gpusim.observe.regime import COMPUTE_BOUND_PCT, MEMORY_BOUND_PCT, classify
from gpusim.observe.report import report_text, run_dict, verdict
from gpusim.programs.catalog import run_program

MEMORY_FIXES = {kind for kind, families in FINDING_KINDS.items() if "memory" in families}


@pytest.fixture(scope="module")
def lab_gpu():
    return gpusim.GPU(regimes.DEFAULT_CONFIG, sms=1)


def _assert_follows(v):
    assert v.top is not None
    assert v.family in v.top.families, (v.kind, v.top.kind)
    # every finding of the verdict's family comes before every other one
    matches = [v.family in f.families for f in v.findings]
    assert matches == sorted(matches, reverse=True)


def test_streaming_kernel_is_memory_bound_and_told_to_move_fewer_bytes(lab_gpu):
    run = regimes._memory_kernel(lab_gpu, 3)
    v = verdict(run)
    level = max(("DRAM", "L2", "L1/shared"), key=lambda k: {
        "DRAM": run.metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
        "L2": run.metrics["lts__throughput.avg.pct_of_peak_sustained_elapsed"],
        "L1/shared": run.metrics["l1tex__throughput.avg.pct_of_peak_sustained_active"]}[k])
    assert v.kind == "memory-bound" and v.limiter == level
    _assert_follows(v)
    assert v.top.kind in MEMORY_FIXES
    assert "more_parallelism" not in {f.kind for f in v.findings}
    c = run.counters
    assert c["global_load_sectors"] == c["global_load_ideal_sectors"]  # coalesced float4 loads...
    assert v.top.kind == "fewer_bytes"  # ...so the only fix left is fewer bytes


def test_fma_loop_is_compute_bound_and_told_to_cut_instructions(lab_gpu):
    run = regimes._compute_kernel(lab_gpu, 64)
    v = verdict(run)
    assert v.kind == "compute-bound"
    _assert_follows(v)
    assert v.top.kind in ("math_pipe", "fewer_instructions")


def test_pointer_chase_is_latency_bound_and_told_to_add_parallelism(lab_gpu):
    run = regimes._latency_kernel(lab_gpu, 32)
    v = verdict(run)
    assert v.kind == "latency-bound"
    _assert_follows(v)
    assert v.top.kind == "more_parallelism"


def test_big_vecadd_on_8_sms_is_memory_bound_and_never_told_to_add_warps():
    n = 1 << 19
    run = _vecadd(n)
    dram = run.metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"]
    assert dram >= MEMORY_BOUND_PCT
    v = verdict(run)
    assert v.kind == "memory-bound" and v.limiter == "DRAM"
    _assert_follows(v)
    assert v.top.kind == "fewer_bytes"  # vecadd is perfectly coalesced: the only fix is fewer bytes
    assert "more_parallelism" not in {f.kind for f in v.findings}
    assert "would fill the idle issue slots" not in report_text(run)
    data = run_dict(run)["verdict"]
    assert data["family"] == "memory" and data["top_kind"] == "fewer_bytes"
    assert [f["kind"] for f in data["findings"]] == [f.kind for f in v.findings]


def test_small_vecadd_on_8_sms_is_launch_bound():
    run = _vecadd(5000)
    config = run.config
    blocks = run.grid[0] * run.grid[1] * run.grid[2]
    # the whole grid fits at once and the kernel is shorter than one host launch call
    assert blocks < run.occupancy.blocks_per_sm * config.sms
    assert run.seconds * 1e6 < config.launch_cpu_us
    v = verdict(run)
    assert v.kind == "launch-bound"
    _assert_follows(v)
    assert v.top.kind == "launch_overhead"


def _vecadd(n: int):
    gpu = gpusim.GPU("h100-sxm", sms=8)
    return run_program("vecadd", gpu=gpu, sizes={"n": n}).runs[0]


def test_classify_rules_on_plain_metrics():
    class Config:
        sms = 4
        launch_cpu_us = 3.0

    base = {
        "smsp__issue_active.avg.pct_of_peak_sustained_active": 10.0,
        "dram__throughput.avg.pct_of_peak_sustained_elapsed": 10.0,
        "smsp__pcsamp_warps_issue_stalled_long_scoreboard.sum": 90,
        "smsp__pcsamp_warps_issue_stalled_selected.sum": 10,
    }
    at_memory = dict(base, **{"lts__throughput.avg.pct_of_peak_sustained_elapsed": MEMORY_BOUND_PCT})
    assert classify(at_memory, Config).kind == "memory-bound"
    assert classify(at_memory, Config).limiter == "L2"
    fma = "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
    at_compute = dict(base, **{fma: COMPUTE_BOUND_PCT + 5})
    assert classify(at_compute, Config).kind == "compute-bound"
    assert classify(at_compute, Config).limiter == "fma pipe"
    # both above: the one further above its threshold wins
    both = dict(at_compute, **{"dram__throughput.avg.pct_of_peak_sustained_elapsed": MEMORY_BOUND_PCT + 1})
    assert classify(both, Config).kind == "compute-bound"
    waiting = classify(base, Config)
    assert waiting.kind == "latency-bound" and waiting.limiter == "long_scoreboard"
    assert "90%" in waiting.reason
    short = {"gpu__time_duration.sum": 1000.0, "launch__grid_size": 3, "launch__occupancy_limit_blocks": 2}
    assert classify(dict(base, **short), Config).kind == "launch-bound"  # 1 us, 3 of 8 blocks
    long_run = dict(short, **{"gpu__time_duration.sum": 3000.0})
    assert classify(dict(base, **long_run), Config).kind == "latency-bound"
    full_grid = dict(short, **{"launch__grid_size": 8})
    assert classify(dict(base, **full_grid), Config).kind == "latency-bound"


def test_ordered_puts_the_family_first_whatever_the_scores():
    found = [Finding("more_parallelism", "add warps", 0.9), Finding("coalescing", "coalesce", 0.2),
             Finding("fewer_bytes", "fewer bytes", 0.4), Finding("divergence", "diverge", 0.5)]
    assert [f.kind for f in ordered(found, "memory")] == ["fewer_bytes", "coalescing", "more_parallelism",
                                                          "divergence"]
    assert [f.kind for f in ordered(found, "latency")] == ["more_parallelism", "divergence", "fewer_bytes",
                                                           "coalescing"]


def test_tensor_advice_follows_the_kernels_instructions_and_the_gpu():
    """A tensor-bound run is told what its instructions and GPU leave: a wgmma kernel is at the dense peak's
    scale (its idle time is feeding); mma.sync on a GPU with wgmma (the config's wgmma interval > 0) is told of
    wgmma; mma.sync or wmma where there is no wgmma only of lower precision."""
    from gpusim.observe.advice import _tensor_advice

    wgmma = run_program("gemm_wgmma").runs[0]
    mma_hopper = run_program("gemm_bf16_mma").runs[0]
    mma_ampere = run_program("wmma_gemm", gpu=gpusim.GPU("a100")).runs[0]
    assert mma_hopper.config.wgmma_n8_interval_cycles > 0 and mma_ampere.config.wgmma_n8_interval_cycles == 0
    said = {name: _tensor_advice(run, 90.0) for name, run in
            (("wgmma", wgmma), ("mma_hopper", mma_hopper), ("mma_ampere", mma_ampere))}
    assert "with wgmma" in said["wgmma"] and "mma.sync" not in said["wgmma"]
    assert "wgmma" in said["mma_hopper"] and "mma.sync" in said["mma_hopper"]
    assert "wgmma" not in said["mma_ampere"] and "lower precision" in said["mma_ampere"]
    assert all(text.startswith("the tensor pipe is busy 90%") for text in said.values())
