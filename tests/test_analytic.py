"""The analytical models against formulas written here from the config, and compare() on a real run."""

import numpy as np
import pytest

import gpusim
from gpusim.analytic.compare import compare
from gpusim.analytic.models import (
    bytes_in_flight_needed,
    latency_hiding,
    littles_law_knee,
    mwp_cwp,
    roofline,
    roofline_point,
    throughput_at_warps,
    warps_needed_for_alu,
)


@pytest.fixture(scope="module")
def config():
    return gpusim.load_config("h100-sxm")


def test_roofline_peaks_and_ridge_follow_the_config(config):
    roofs = roofline(config)
    peak = 2 * config.fp32_lanes_per_sm * config.sms * config.core_clock_mhz * 1e6
    bandwidth = config.dram_bandwidth_gbs * 1e9
    assert roofs.peak_flops["fp32"] == pytest.approx(peak)
    assert roofs.ridge_point("fp32", "dram") == pytest.approx(peak / bandwidth)
    assert roofs.ridge_point("fp32", "dram_sustained") == pytest.approx(peak / (bandwidth * config.dram_efficiency))
    assert roofs.attainable(1.0) == pytest.approx(bandwidth)
    assert roofs.attainable(1e6) == pytest.approx(peak)
    assert roofs.bound(1.0) == "memory" and roofs.bound(1e6) == "compute"


def test_littles_law(config):
    per_sm_rate = config.dram_bandwidth_gbs * 1e9 / config.clock_hz * config.dram_efficiency / config.sms
    needed = per_sm_rate * config.dram_latency_cycles
    assert bytes_in_flight_needed(config) == pytest.approx(needed)
    model = latency_hiding(config, bytes_in_flight_per_warp=128.0)
    assert model.warps_per_sm_to_saturate == pytest.approx(needed / 128.0)
    low = throughput_at_warps(config, 1, 128.0)
    assert low == pytest.approx(128.0 / config.dram_latency_cycles * config.sms * config.clock_hz)
    assert throughput_at_warps(config, 1e6, 128.0) == pytest.approx(model.saturated_bytes_per_s)
    assert warps_needed_for_alu(config, 4, 1) == config.sub_partitions_per_sm * 4


@pytest.mark.parametrize("bytes_per_warp", [512.0, 2048.0, 8192.0])
def test_littles_law_knee_counts_each_warps_own_transfer_time(config, bytes_per_warp):
    """Little's law with the request's time in flight = latency + its bytes / the SM's share of bandwidth:
    the knee is rate x (latency + transfer) / bytes per warp = the bare-latency knee + 1 warp."""
    rate = config.dram_bandwidth_gbs * 1e9 / config.clock_hz * config.dram_efficiency / config.sms
    model = latency_hiding(config, bytes_per_warp, "dram")
    knee = littles_law_knee(model)
    transfer = bytes_per_warp / rate
    assert knee.transfer_cycles == pytest.approx(transfer)
    assert knee.in_flight_cycles == pytest.approx(config.dram_latency_cycles + transfer)
    assert knee.warps == pytest.approx(rate * (config.dram_latency_cycles + transfer) / bytes_per_warp)
    assert knee.warps == pytest.approx(model.warps_per_sm_to_saturate + 1.0)
    # below the knee each warp adds its bytes per time in flight; at and past it the SM's share is the cap
    assert knee.bytes_per_cycle_per_sm(model, 1) == pytest.approx(bytes_per_warp / (config.dram_latency_cycles
                                                                                      + transfer))
    assert knee.bytes_per_cycle_per_sm(model, knee.warps) == pytest.approx(rate)
    assert knee.bytes_per_cycle_per_sm(model, 2 * knee.warps) == pytest.approx(rate)


@pytest.fixture(scope="module")
def stream_run():
    gpu = gpusim.GPU("h100-sxm", sms=1)
    kernel = gpu.load("programs/vecadd.ptx")["vecadd"]
    n = 64 * 256
    a = gpu.to_device(np.ones(n, np.float32))
    out = gpu.zeros(n, np.float32)
    return gpu.launch(kernel, grid=n // 256, block=256, args=[a, a, out, np.int32(n)])


def test_roofline_point_of_a_streaming_kernel(stream_run):
    point = roofline_point(stream_run)
    metrics = stream_run.metrics
    assert point.arithmetic_intensity == pytest.approx(metrics["gpusim__arithmetic_intensity"])
    assert point.bound == "memory"
    assert point.achieved_flops <= point.attainable_flops * 1.05
    assert point.pct_of_roof == pytest.approx(100 * point.achieved_flops / point.attainable_flops)


def test_mwp_cwp_is_fed_from_the_run(stream_run):
    prediction = mwp_cwp(stream_run)
    config = stream_run.config
    warps = 64 * 256 // 32
    assert prediction.instructions_per_warp == pytest.approx(stream_run.warp_instructions / warps)
    assert prediction.memory_instructions_per_warp == pytest.approx(3.0)  # two loads, one store
    # the two loads are issued back to back before the add uses them: one memory waiting period per warp
    assert prediction.memory_periods_per_warp == pytest.approx(1.0)
    resident_warps = config.max_warps_per_sm  # 256-thread blocks fill the SM's warp slots
    assert prediction.warps_per_sm == resident_warps
    assert prediction.repetitions == pytest.approx(warps / (resident_warps * config.sms))
    assert prediction.mwp <= prediction.warps_per_sm
    # Mem_L is the DRAM latency plus the spread of one period's sectors over the SM's port
    assert config.dram_latency_cycles <= prediction.memory_latency_cycles < 1.05 * config.dram_latency_cycles


@pytest.fixture(scope="module")
def streaming_and_compute_runs():
    """vecadd over distinct arrays (memory-bound) and flops_per_byte at 64 FLOP/B (compute-bound), 64 blocks
    of 256 threads on one SM."""
    gpu = gpusim.GPU("h100-sxm", sms=1)
    n = 64 * 256
    rng = np.random.default_rng(0)
    a, b = gpu.to_device(rng.random(n, dtype=np.float32)), gpu.to_device(rng.random(n, dtype=np.float32))
    out = gpu.zeros(n, np.float32)
    vecadd = gpu.load("programs/vecadd.ptx")["vecadd"]
    flops = gpu.load("programs/flops_per_byte.ptx")["flops_per_byte"]
    streaming = gpu.launch(vecadd, grid=n // 256, block=256, args=[a, b, out, np.int32(n)])
    compute = gpu.launch(flops, grid=n // 256, block=256, args=[a, out, np.int32(n), np.int32(64)])
    return streaming, compute


# The model's remaining error: fixed repetitions (blocks start in lockstep), the unloaded latency, an average
# of L2 and DRAM latency per period, issue at the full rate: within 35 % on a streaming and a compute-bound
# kernel (the paper reports 13 % geometric mean on its GPU against hardware).
MWP_CWP_TOLERANCE = 0.35


def _streaming_case(config, distinct_arrays_read: int) -> str:
    """The MWP-CWP case of vecadd on one full SM, from the config: each warp's one memory period reads 128 bytes
    from DRAM per distinct input array; MWP is below N (the 'memory' case) only when N warps' bytes per latency
    exceed the SM's DRAM share, otherwise every warp's period overlaps ('no_overlap': MWP = N = CWP)."""
    warps = config.max_warps_per_sm
    demand = warps * 128 * distinct_arrays_read / config.dram_latency_cycles
    return "memory" if demand > config.dram_bytes_per_cycle * config.dram_efficiency else "no_overlap"


def test_mwp_cwp_within_tolerance_on_a_streaming_and_a_compute_bound_kernel(stream_run, streaming_and_compute_runs):
    streaming, compute = streaming_and_compute_runs
    config = stream_run.config
    cases = ((stream_run, _streaming_case(config, 1)), (streaming, _streaming_case(config, 2)), (compute, "compute"))
    assert [case for _, case in cases[:2]] == ["no_overlap", "memory"]   # h100-sxm, one SM: 9.8 and 19.6 B/clk
    for run, case in cases:
        prediction = mwp_cwp(run)
        assert prediction.case == case, run.kernel_name
        assert prediction.cycles == pytest.approx(run.cycles, rel=MWP_CWP_TOLERANCE), run.kernel_name


def test_mwp_cwp_compute_case_is_issue_time(streaming_and_compute_runs):
    _, compute = streaming_and_compute_runs
    prediction = mwp_cwp(compute)
    config = compute.config
    comp = compute.warp_instructions / (64 * 8) / config.sub_partitions_per_sm  # FFMA/ALU issue: 1 per cycle
    assert prediction.comp_cycles == pytest.approx(comp)
    expected = (prediction.memory_latency_cycles + comp * prediction.warps_per_sm) * prediction.repetitions
    assert prediction.cycles == pytest.approx(expected)
    # streaming: a bandwidth share (DRAM or L2) or the departure rate, not the warp count, limits the
    # overlapping warps
    streaming = mwp_cwp(streaming_and_compute_runs[0])
    config = streaming_and_compute_runs[0].config
    dram = streaming_and_compute_runs[0].metrics
    bytes_per_warp = (dram["dram__bytes_read.sum"] + dram["dram__bytes_write.sum"]) / (64 * 8)
    per_warp_rate = bytes_per_warp / streaming.memory_latency_cycles
    dram_share = config.dram_bytes_per_cycle * config.dram_efficiency / per_warp_rate
    assert streaming.mwp_peak_bandwidth <= dram_share * (1 + 1e-9)      # the DRAM share or a tighter L2 one
    departure = streaming.memory_latency_cycles / streaming.departure_delay_cycles
    assert streaming.mwp_without_bandwidth == pytest.approx(departure)
    assert streaming.mwp == pytest.approx(min(streaming.mwp_peak_bandwidth, departure))
    assert streaming.mwp < streaming.warps_per_sm


def test_mwp_cwp_needs_a_timed_run():
    gpu = gpusim.GPU("h100-sxm", sms=1)
    kernel = gpu.load("programs/vecadd.ptx")["vecadd"]
    a = gpu.to_device(np.ones(256, np.float32))
    run = gpu.launch(kernel, grid=1, block=256, args=[a, a, a, np.int32(256)], timing=False)
    with pytest.raises(gpusim.errors.GpusimError, match="timed run"):
        mwp_cwp(run)


def test_compare_table_and_errors(stream_run):
    comparison = compare(stream_run, {"cycles": 2 * stream_run.cycles})
    assert comparison["cycles"].relative_error == pytest.approx(1.0)
    assert "cycles" in comparison.table()
    roof = compare(stream_run, roofline(stream_run.config))
    assert roof["gpusim__flop_per_second"].simulated == stream_run.metrics["gpusim__flop_per_second"]
    with pytest.raises(KeyError):
        compare(stream_run, {"no_such_metric": 1.0})


def test_compare_plot(stream_run, tmp_path):
    pytest.importorskip("matplotlib")
    path = compare(stream_run, mwp_cwp(stream_run)).plot(tmp_path / "compare.png")
    assert path.exists()
