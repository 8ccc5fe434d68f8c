"""The analytical models against formulas written here from the config, and compare() on a real run."""

import numpy as np
import pytest

import gpusim
from gpusim.analytic import (
    bytes_in_flight_needed,
    latency_hiding,
    mwp_cwp,
    roofline,
    roofline_point,
    throughput_at_warps,
    warps_needed_for_alu,
)
from gpusim.compare import compare


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


def test_mwp_cwp_is_fed_from_the_run_and_predicts_the_right_order(stream_run):
    prediction = mwp_cwp(stream_run)
    warps = 64 * 256 // 32
    assert prediction.instructions_per_warp == pytest.approx(stream_run.warp_instructions / warps)
    assert prediction.memory_instructions_per_warp == pytest.approx(3.0)  # two loads, one store
    assert prediction.case in ("no_overlap", "memory")  # not compute: few instructions per load
    assert prediction.mwp <= prediction.warps_per_sm
    assert 0.3 < prediction.cycles / stream_run.cycles < 3.0


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
