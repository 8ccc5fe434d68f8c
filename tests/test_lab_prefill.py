"""The prefill lab: one decode step through a layer is memory-bound, streaming the weights near the DRAM
peak; a long prompt through the same weights is right of the mma.sync ridge on the DRAM roofline, and on
h100-sxm as configured its 128 x 128 mma.sync tiles are fed by the L2, whose bandwidth caps them (64 FLOP per
L2 byte x the config's L2 rate) below the mma.sync rate: the report names the L2. Every bound is derived
here from config fields."""

import pytest

import gpusim
from gpusim.labs import LABS, prefill
from gpusim.observe.regime import MEMORY_BOUND_PCT

SMS = 8


pytestmark = pytest.mark.slow  # one 4.3 GFLOP GEMM on 8 SMs: ~1 min


@pytest.fixture(scope="module")
def result():
    return prefill.run(progress=False, sms=SMS)


@pytest.fixture(scope="module")
def config():
    return gpusim.load_config("h100-sxm", sms=SMS)


def _mma_sync_rate(config):
    return 4096 / config.mma_f16_m16n8k16_interval_cycles * config.sub_partitions_per_sm * config.sms \
        * config.core_clock_mhz * 1e6


def _l2_cap(config):
    """A 128 x 128 tile: 2 x 128 x 128 FLOPs per (128 + 128) x 2 bytes of A and B = 64 FLOP per L2 byte."""
    return 2 * 128 * 128 / ((128 + 128) * 2) * config.l2_bytes_per_cycle * config.core_clock_mhz * 1e6


def _sustained(config):
    return config.dram_bandwidth_gbs * 1e9 * config.dram_efficiency


def test_both_phases_match_numpy(result):
    assert all(phase["correct"] for phase in result.values["phases"].values())


def test_decode_is_memory_bound_near_the_dram_peak(result, config):
    phase = result.values["phases"]["decode"]
    assert phase["verdict"] == "memory-bound" and phase["limiter"] == "DRAM"
    assert phase["roofline_side"] == "memory" and phase["flop_per_weight_byte"] == pytest.approx(1.0)
    assert result.values["weight_bytes"] / phase["seconds"] >= 0.85 * _sustained(config)


def test_prefill_is_right_of_the_ridge_and_bound_by_the_l2(result, config):
    phase = result.values["phases"]["prefill"]
    ridge = _mma_sync_rate(config) / _sustained(config)
    assert phase["flop_per_weight_byte"] == pytest.approx(result.values["prompt"])
    assert phase["intensity"] > ridge and phase["roofline_side"] == "compute"
    assert phase["dram_pct"] < MEMORY_BOUND_PCT
    cap = min(_mma_sync_rate(config), _l2_cap(config))
    assert result.values["l2_cap_flops"] == pytest.approx(_l2_cap(config))
    assert _l2_cap(config) < _mma_sync_rate(config)  # h100-sxm's L2: 18.9 B/cycle/SM x 64 < 2731 FLOP/cycle/SM
    assert 0.6 * cap <= phase["flops_per_s"] <= 1.02 * cap
    assert phase["verdict"] == "memory-bound" and phase["limiter"] == "L2"
    assert phase["pct_of_mma_sync"] == pytest.approx(100 * phase["flops_per_s"] / _mma_sync_rate(config))
    assert "wgmma" in result.lesson


def test_registered():
    assert LABS["prefill"] is prefill
