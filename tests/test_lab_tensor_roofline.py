"""The tensor-roofline lab against the config: ridges = peak / DRAM bandwidth from the fields, the sweep's
measured knee within 15 % of the mma.sync ridge on h100-sxm and h200, and a kernel between the two ridges
memory-bound on one chip and compute-bound on the other (the report's verdict)."""

import pytest

import gpusim
from gpusim.labs import LABS, tensor_roofline

SMS = 4
ROUNDS = (4, 8, 16, 32, 64, 128)
CHIPS = ("h100-sxm", "h200")


@pytest.fixture(scope="module")
def result():
    return tensor_roofline.run(progress=False, sms=SMS, rounds=ROUNDS)


def _slice(name):
    return gpusim.load_config(name, sms=SMS)


def _mma_sync_ridge(config):
    """The rate mma.sync m16n8k16 attains (4096 FLOPs per interval per sub-partition) / sustained DRAM."""
    rate = 4096 / config.mma_f16_m16n8k16_interval_cycles * config.sub_partitions_per_sm * config.sms \
        * config.core_clock_mhz * 1e6
    return rate / (config.dram_bandwidth_gbs * 1e9 * config.dram_efficiency)


def test_registered():
    assert LABS["tensor-roofline"] is tensor_roofline


@pytest.mark.parametrize("name", CHIPS)
def test_ceilings_are_the_config_peaks_over_dram(result, name):
    config = gpusim.load_config(name)
    dram = config.dram_bandwidth_gbs * 1e9
    table = result.values["ceilings"][name]
    fp32 = 2 * config.fp32_lanes_per_sm * config.sms * config.core_clock_mhz * 1e6
    bf16 = config.tensor_flops_per_cycle_per_sm * config.sms * config.core_clock_mhz * 1e6
    assert table["fp32"][0] == pytest.approx(fp32) and table["fp32"][1] == pytest.approx(fp32 / dram)
    assert table["tensor_bf16"][0] == pytest.approx(bf16) and table["tensor_bf16"][1] == pytest.approx(bf16 / dram)
    assert table["mma_sync_bf16"][2] == pytest.approx(_mma_sync_ridge(config))


@pytest.mark.parametrize("name", CHIPS)
def test_measured_knee_within_15_percent_of_the_mma_sync_ridge(result, name):
    sweep = result.values["sweeps"][name]
    ridge = _mma_sync_ridge(_slice(name))
    assert sweep["attainable_ridge"] == pytest.approx(ridge)
    assert sweep["knee"] == pytest.approx(ridge, rel=0.15)
    points = sweep["points"]
    for point in points:  # the kernel's arithmetic: rounds x 4096 FLOPs per 512-byte tile, every tile from DRAM
        assert point["intensity"] == pytest.approx(4096 / 512 * point["rounds"], rel=0.05)
    # memory side: FLOP/s = intensity x sustained bandwidth (within 20 %); compute side: near the mma.sync rate
    config = _slice(name)
    sustained = config.dram_bandwidth_gbs * 1e9 * config.dram_efficiency
    for point in points:
        if point["intensity"] < ridge / 2:
            assert point["flops_per_s"] == pytest.approx(point["intensity"] * sustained, rel=0.2)
        if point["intensity"] > 2 * ridge:
            assert 85 <= point["pct_of_mma_sync"] <= 100.5


def test_between_the_ridges_memory_bound_on_h100_and_compute_bound_on_h200(result):
    ridges = sorted(_mma_sync_ridge(_slice(name)) for name in CHIPS)
    intensity = result.values["between_intensity"]
    assert ridges[0] < intensity < ridges[1]
    between = result.values["between"]
    assert between["h100-sxm"]["verdict"] == "memory-bound"
    assert between["h200"]["verdict"] == "compute-bound"
    assert "wgmma" in result.lesson
