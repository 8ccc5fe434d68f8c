"""The prefill lab: one decode step through a layer is memory-bound on DRAM; a long prompt through the same
weights is right of the mma.sync ridge on the DRAM roofline. On h100-sxm the fp32-accumulate 128 x 256 tiles
are fed by the L2, whose bandwidth caps them (85 FLOP per L2 byte x the config's L2 rate) below the mma.sync
rate: the report names the L2. The f16-accumulate 256 x 256 tiles do 128 FLOP per L2 byte and run the tensor
pipe harder. Every bound is derived here from config fields and the tiles' shapes: a run is at most the lower
of its two rates (the mma.sync rate, the rate its bytes can arrive at) and at least 90 % of the rate it would
have if its K loop did not overlap the two at all (each block's loads, then its tensor work, one after the
other: the 4-stage pipelines must overlap them at least that well)."""

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


def _l2_cap(config, bm=128, bn=256, k=None):
    """A BM x BN tile of 16-bit operands: 2 BM BN FLOPs per (BM + BN) x 2 bytes of A and B per K step, and with
    ``k`` its BM x BN x 2-byte output written once: 2 BM BN k / ((BM + BN) 2 k + 2 BM BN) FLOP per L2 byte."""
    per_byte = 2 * bm * bn / ((bm + bn) * 2) if k is None else 2 * bm * bn * k / ((bm + bn) * 2 * k + 2 * bm * bn)
    return per_byte * config.l2_bytes_per_cycle * config.core_clock_mhz * 1e6


def _sustained(config):
    return config.dram_bandwidth_gbs * 1e9 * config.dram_efficiency


def _serial(rate_a, rate_b):
    """The rate of a run that spends, per FLOP, the time of ``rate_a`` and then that of ``rate_b`` (FLOP/s)."""
    return 1.0 / (1.0 / rate_a + 1.0 / rate_b)


def test_both_phases_match_numpy(result):
    assert all(phase["correct"] for phase in result.values["phases"].values())


def test_decode_is_memory_bound_on_dram(result, config):
    phase = result.values["phases"]["decode"]
    assert phase["verdict"] == "memory-bound" and phase["limiter"] == "DRAM"
    assert phase["roofline_side"] == "memory" and phase["flop_per_weight_byte"] == pytest.approx(1.0)
    # one token through 128 x 128 tiles: the tensor pipe computes the whole tile, 128 tokens' FLOPs per weight
    # byte's 128 x 128 x 2 / (128 x 2): its time per weight byte at the mma.sync rate, against DRAM's
    bandwidth = result.values["weight_bytes"] / phase["seconds"]
    tensor_bytes_per_s = _mma_sync_rate(config) / 128
    assert bandwidth <= 1.02 * _sustained(config)
    assert bandwidth >= 0.9 * _serial(_sustained(config), tensor_bytes_per_s)


def test_prefill_is_right_of_the_ridge_and_bound_by_the_l2(result, config):
    phase = result.values["phases"]["prefill"]
    ridge = _mma_sync_rate(config) / _sustained(config)
    assert phase["tile"] == "128x256" and phase["accumulate"] == "fp32"
    assert phase["flop_per_weight_byte"] == pytest.approx(result.values["prompt"])
    assert phase["intensity"] > ridge and phase["roofline_side"] == "compute"
    assert phase["dram_pct"] < MEMORY_BOUND_PCT
    cap = min(_mma_sync_rate(config), _l2_cap(config))
    assert phase["l2_cap_flops"] == pytest.approx(_l2_cap(config))
    assert _l2_cap(config) < _mma_sync_rate(config)  # h100-sxm's L2: 28.9 B/cycle/SM x 85 < 2731 FLOP/cycle/SM
    assert 0.9 * _serial(_mma_sync_rate(config), _l2_cap(config)) <= phase["flops_per_s"] <= 1.02 * cap
    assert phase["verdict"] == "memory-bound" and phase["limiter"] == "L2"
    assert phase["pct_of_mma_sync"] == pytest.approx(100 * phase["flops_per_s"] / _mma_sync_rate(config))
    assert "wgmma" in result.lesson


def test_f16_accumulate_prefill_runs_the_tensor_pipe_near_the_mma_sync_rate(result, config):
    """Right of the ridge too; the tensor pipe is busier than with fp32 accumulators; the run stays within the
    lower of the mma.sync rate and the cap that the tile's L2 bytes (its loads and its output, over this K) set,
    and above 90 % of the two one after the other."""
    wide, narrow = result.values["phases"]["prefill-f16acc"], result.values["phases"]["prefill"]
    ridge = _mma_sync_rate(config) / _sustained(config)
    assert wide["tile"] == "256x256" and wide["accumulate"] == "f16" and wide["correct"]
    assert wide["intensity"] > ridge and wide["roofline_side"] == "compute"
    cap = _l2_cap(config, 256, 256, result.values["k"])
    assert wide["l2_cap_flops_with_stores"] == pytest.approx(cap)
    assert 0.9 * _serial(_mma_sync_rate(config), cap) <= wide["flops_per_s"] <= 1.02 * min(cap, _mma_sync_rate(config))
    # more FLOPs per L2 byte, the same tensor pipe: never slower, the pipe never less busy
    assert wide["pct_of_mma_sync"] > narrow["pct_of_mma_sync"]
    assert wide["tensor_pct"] > narrow["tensor_pct"]
    assert wide["limiter"] in ("L2", "tensor pipe")


def test_registered():
    assert LABS["prefill"] is prefill


def test_wgmma_prefill_passes_the_mma_sync_phases(result, config):
    """Hopper's phase: the persistent wgmma kernel (2 x 2 clusters multicasting each slice, bf16 output) matches
    numpy, stays under the dense peak (4096 FLOP/clk/SM: tensor_flops_per_cycle_per_sm), is right of the dense
    ridge on the DRAM roofline, and beats both mma.sync phases, whose instruction alone caps them at the mma.sync
    rate."""
    wg, phases = result.values["phases"]["prefill-wgmma"], result.values["phases"]
    chip = gpusim.load_config("h100-sxm")
    assert wg["sms"] == chip.sms                     # the default: the whole chip
    dense = chip.tensor_flops_per_cycle_per_sm * chip.sms * chip.core_clock_mhz * 1e6
    assert wg["correct"] and wg["tile"] == "128x256" and wg["roofline_side"] == "compute"
    assert wg["flops_per_s"] <= 1.01 * dense
    assert wg["pct_of_dense"] == pytest.approx(100 * wg["flops_per_s"] / dense)
    assert wg["flops_per_s"] > max(phases["prefill"]["flops_per_s"], phases["prefill-f16acc"]["flops_per_s"])
    assert wg["tensor_pct"] > phases["prefill"]["tensor_pct"]
    assert "wgmma" in result.lesson and "2 x 2 cluster" in result.lesson


def test_wgmma_prefill_runs_at_the_tensor_roof(result):
    """The issue's target: prefill with the tensor pipe >= 80 % busy on h100-sxm. The default layer (4096 x 4096,
    1024 tokens: weights, activations and output together 42 MB, inside the 50 MB L2) reads each byte from DRAM
    at most once, so its intensity is at least 1 / (1/tokens + 1/rows + 1/k) FLOP per byte, twice the dense ridge;
    its 128 x 256 tiles are one per SM (4096 / 128 x 1024 / 256 = 128 CTAs on 132 SMs). Each SM's run is at most
    its tile's tensor time (64 slices of 128 x 256 x 64 x 2 FLOP at 4096 FLOP/clk) plus what a pipeline cannot
    overlap with it: the first slice's fill (DRAM and L2 latency, one stage's 24 KB at the SM's L2 share) and the
    epilogue's 64 KB of bf16 stores at the SM's share of the L2 store rate; the pipe is busy at least 90 % of
    that share of the time (the fixtures' other bounds' margin) -- and the report names the tensor pipe."""
    wg = result.values["phases"]["prefill-wgmma"]
    chip = gpusim.load_config("h100-sxm")
    rows, k, tokens = wg["rows"], wg["k"], wg["tokens"]
    assert (rows, k, tokens) == (4096, 4096, 1024)
    assert wg["intensity"] >= 1.0 / (1 / tokens + 1 / rows + 1 / k)
    assert wg["intensity"] > 2 * chip.tensor_flops_per_cycle_per_sm * chip.core_clock_mhz * 1e6 * chip.sms \
        / (chip.dram_bandwidth_gbs * 1e9)
    tensor = (k // 64) * 128 * 256 * 64 * 2 / chip.tensor_flops_per_cycle_per_sm
    per_sm_l2 = chip.l2_bytes_per_cycle / chip.sms
    fill = chip.dram_latency_cycles + chip.l2_latency_cycles + (64 + 128) * 128 / per_sm_l2
    epilogue = 128 * 256 * 2 / (chip.l2_write_bytes_per_cycle / chip.sms)
    bound = 100 * 0.9 * tensor / (tensor + fill + epilogue)
    assert bound >= 80
    assert bound <= wg["tensor_pct"] <= 100
    assert wg["verdict"] == "compute-bound" and wg["limiter"] == "tensor pipe"


def test_no_wgmma_phase_without_hopper():
    """On a100 (no wgmma, no clusters) the lab runs its three mma.sync phases and says why not the fourth."""
    lab = prefill.run("a100", progress=False, sms=4, rows=256, k=256, prompt=256)
    assert list(lab.values["phases"]) == ["prefill", "prefill-f16acc", "decode"]
    assert "no wgmma" in lab.lesson
