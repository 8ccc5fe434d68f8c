"""The prefill lab: a long prompt through one layer is compute-bound on the tensor cores, near the mma.sync
rate from the config; one decode step through the same weights is memory-bound, near the DRAM peak. The
prefill GEMM is also issue 14's throughput check: a tiled GEMM of a compute-bound size at >= 80 % of the
configured mma.sync rate."""

import pytest

import gpusim
from gpusim.labs import LABS, prefill

SMS = 2


@pytest.fixture(scope="module")
def result():
    return prefill.run(progress=False, sms=SMS)


@pytest.fixture(scope="module")
def config():
    return gpusim.load_config("h100-sxm", sms=SMS)


def _mma_sync_rate(config):
    return 4096 / config.mma_f16_m16n8k16_interval_cycles * config.sub_partitions_per_sm * config.sms \
        * config.core_clock_mhz * 1e6


def test_registered():
    assert LABS["prefill"] is prefill


def test_both_phases_match_numpy(result):
    assert all(phase["correct"] for phase in result.values["phases"].values())


def test_prefill_is_compute_bound_at_80_percent_of_the_mma_sync_rate(result, config):
    phase = result.values["phases"]["prefill"]
    rate = _mma_sync_rate(config)
    assert phase["flops_per_s"] >= 0.8 * rate
    assert phase["flops_per_s"] <= rate * 1.001
    assert phase["pct_of_mma_sync"] == pytest.approx(100 * phase["flops_per_s"] / rate)
    assert phase["verdict"] == "compute-bound" and phase["roofline_side"] == "compute"
    assert phase["flop_per_weight_byte"] == pytest.approx(result.values["prompt"])


def test_decode_is_memory_bound_near_the_dram_peak(result, config):
    phase = result.values["phases"]["decode"]
    assert phase["verdict"] == "memory-bound" and phase["roofline_side"] == "memory"
    assert phase["flop_per_weight_byte"] == pytest.approx(1.0)
    # the weights stream at >= 85 % of the sustained bandwidth
    weight_bytes = result.values["weight_bytes"]
    assert weight_bytes / phase["seconds"] >= 0.85 * config.dram_bandwidth_gbs * 1e9 * config.dram_efficiency
    assert "wgmma" in result.lesson
