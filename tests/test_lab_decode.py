"""The decode lab against bounds derived from the config: DRAM bandwidth at batch 1, the FP32 peak and the
ridge point (peak / sustained bandwidth) for the batch sweep on the CUDA cores (``math="fp32"``); the
tensor-core sweep (the default) against the mma.sync ridge, and 8-bit weights halving the bytes per token."""

import numpy as np
import pytest

import gpusim
from gpusim.errors import LaunchError
from gpusim.labs import LABS, decode

BATCHES = (1, 2, 4, 8, 16, 32, 64, 128)


@pytest.fixture(scope="module")
def config():
    return gpusim.load_config("h100-sxm", sms=1)


@pytest.fixture(scope="module")
def ridge(config):
    """FP32 peak / sustained DRAM bandwidth of the one-SM slice, in FLOP per byte."""
    peak = 2 * config.fp32_lanes_per_sm * config.sms * config.core_clock_mhz * 1e6
    return peak / (config.dram_bandwidth_gbs * 1e9 * config.dram_efficiency)


@pytest.fixture(scope="module")
def result():
    return decode.run(progress=False, sms=1, gemv_rows=1024, gemv_k=2048, sweep_rows=1024, sweep_k=1024,
                      batches=BATCHES, math="fp32")


@pytest.fixture(scope="module")
def points(result):
    return {p["batch"]: p for p in result.values["points"]}


def test_registered():
    assert LABS["decode"] is decode


def test_batch_one_gemv_streams_weights_near_dram_peak(result):
    assert result.values["fp16_correct"] and result.values["int8_correct"]
    assert result.values["fp16_pct_of_peak"] >= 80


def test_tokens_per_second_of_a_70b_model(result):
    config = gpusim.load_config("h100-sxm")
    bound = config.dram_bandwidth_gbs * 1e9 / (2 * 70e9)  # weight bytes / bandwidth
    assert result.values["analytic_tokens_per_s_fp16"] == pytest.approx(bound)
    assert result.values["tokens_per_s_fp16"] == pytest.approx(bound, rel=0.2)


def test_int8_weights_double_tokens_per_second(result):
    assert result.values["int8_speedup"] == pytest.approx(2.0, rel=0.15)


def test_every_batch_is_correct_and_served_by_the_gemv_or_the_tiled_gemm(points):
    assert all(p["correct"] for p in points.values())
    assert points[1]["kernel"] == "gemv_f16_b1"
    for batch, point in points.items():
        if batch > 1:
            tile_batch, kernel, _, _ = decode.gemm_tile(batch)
            assert point["kernel"] == kernel
            assert tile_batch >= batch  # the smallest tile that covers the batch (all do up to 128)
            assert all(smaller[0] < batch for smaller in decode.GEMM_TILES if smaller[0] < tile_batch)


def test_memory_side_step_time_is_flat_and_tokens_rise_with_the_batch(points, ridge, config):
    bandwidth = config.dram_bandwidth_gbs * 1e9 * config.dram_efficiency
    memory_side = [b for b in BATCHES if b <= ridge / 2]
    assert memory_side == [1, 2, 4, 8]
    for batch in memory_side:
        # memory-bound: FLOP/s = batch FLOP per weight byte x the bandwidth (within 25 %)
        assert points[batch]["flop_per_weight_byte"] == pytest.approx(batch)
        assert points[batch]["flops_per_s"] >= 0.75 * batch * bandwidth
    for small, large in zip(memory_side, memory_side[1:], strict=False):
        # twice the batch, nearly the same step time: tokens/s at least 1.5x
        assert points[large]["tokens_per_s"] >= 0.75 * (large / small) * points[small]["tokens_per_s"]


def test_tokens_rise_until_the_knee_and_flatten_beyond_the_ridge(result, points, ridge):
    knee = result.values["knee"]
    below_knee = [b for b in BATCHES if b <= knee]
    assert len(below_knee) >= 4
    for small, large in zip(below_knee, below_knee[1:], strict=False):
        assert points[large]["tokens_per_s"] > points[small]["tokens_per_s"]
    compute_side = [b for b in BATCHES if b >= 2 * ridge]
    assert compute_side == [64, 128]
    # compute-bound: FLOP/s flat, the step time doubles with the batch
    assert points[128]["flops_per_s"] == pytest.approx(points[64]["flops_per_s"], rel=0.1)
    assert points[128]["seconds"] == pytest.approx(2 * points[64]["seconds"], rel=0.1)


def test_plateau_near_the_fp32_peak_and_knee_near_the_ridge_point(result, ridge, config):
    peak = 2 * config.fp32_lanes_per_sm * config.sms * config.core_clock_mhz * 1e6
    assert result.values["peak_flops"] == pytest.approx(peak)
    assert result.values["ridge_point"] == pytest.approx(ridge)
    assert 0.6 * peak <= result.values["plateau_flops"] <= peak
    assert 0.65 * ridge <= result.values["knee"] <= 1.35 * ridge


@pytest.fixture(scope="module")
def gpu_and_module():
    gpu = gpusim.GPU("h100-sxm", sms=1)
    return gpu, gpu.load(str(decode.PROGRAM))


@pytest.mark.parametrize("rows", [200, 1000])
def test_gemm_handles_rows_and_batches_off_the_tile(gpu_and_module, rows):
    gpu, module = gpu_and_module
    rng = np.random.default_rng(1)
    weights = rng.standard_normal((rows, 64)).astype(np.float16)
    for batch in (3, 24, 100, 130):
        activations = rng.standard_normal((batch, 64)).astype(np.float32)
        run, ok, kernel = decode.serve_batch(gpu, module, weights, activations)
        assert ok, (rows, batch, kernel)
        assert kernel == decode.gemm_tile(batch)[1]
        # the swizzled tile stores and the float4 fragment reads are free of bank conflicts
        counters = run.counters
        assert counters["shared_load_wavefronts"] == counters["shared_load_ideal_wavefronts"]
        assert counters["shared_store_wavefronts"] == counters["shared_store_ideal_wavefronts"]


def test_unsupported_shapes_are_launch_errors(gpu_and_module):
    gpu, module = gpu_and_module
    weights = np.zeros((64, 1000), np.float16)
    with pytest.raises(LaunchError, match="k=1000"):
        decode.serve_batch(gpu, module, weights, np.zeros((1, 1000), np.float32))
    with pytest.raises(LaunchError, match="sweep_k=1000"):
        decode.run(progress=False, sweep_k=1000, math="fp32")
    with pytest.raises(LaunchError, match="k=1001"):  # the tensor GEMM's rows are 16-byte cp.async chunks
        decode.run(progress=False, sweep_k=1001)
    with pytest.raises(LaunchError, match="math='fp16'"):
        decode.run(progress=False, math="fp16")


# ---- the tensor-core sweep (math="tensor", the default): BF16 weights, and INT8 / FP8 at batch 1
TENSOR_BATCHES = (1, 4, 16, 256, 512)
TENSOR_SMS = 4


@pytest.fixture(scope="module")
def tensor_result():  # ~1.5 min: the tests that use it are marked slow
    return decode.run(progress=False, sms=1, gemv_rows=1024, gemv_k=2048, sweep_rows=1024, sweep_k=1024,
                      batches=TENSOR_BATCHES, tensor_sms=TENSOR_SMS)


@pytest.fixture(scope="module")
def tensor_config():
    return gpusim.load_config("h100-sxm", sms=TENSOR_SMS)


def _rates(config):
    scale = config.sms * config.core_clock_mhz * 1e6
    dense = config.tensor_flops_per_cycle_per_sm * scale
    mma_sync = 4096 / config.mma_f16_m16n8k16_interval_cycles * config.sub_partitions_per_sm * scale
    return dense, mma_sync, config.dram_bandwidth_gbs * 1e9, config.dram_bandwidth_gbs * 1e9 * config.dram_efficiency


@pytest.mark.slow
def test_tensor_sweep_is_correct_and_prints_both_ridges(tensor_result, tensor_config):
    values = tensor_result.values
    assert all(p["correct"] for p in values["points"])
    assert all(q["point"]["correct"] for q in values["quantized"].values())
    dense, mma_sync, peak_bw, sustained = _rates(tensor_config)
    assert values["dense_ridge"] == pytest.approx(dense / peak_bw)  # 320 at 1980 MHz (295 at NVIDIA's 1830)
    assert values["ridge_point"] == pytest.approx(mma_sync / sustained)
    assert values["ridge_point"] < values["dense_ridge"]
    assert f"{values['dense_ridge']:.0f}" in tensor_result.lesson
    assert f"{values['ridge_point']:.0f}" in tensor_result.lesson
    assert "wgmma" in tensor_result.lesson


@pytest.mark.slow
def test_tensor_sweep_rises_until_its_knee_near_its_rate_over_bandwidth(tensor_result, tensor_config):
    values = tensor_result.values
    points = {p["batch"]: p for p in values["points"]}
    _, mma_sync, _, sustained = _rates(tensor_config)
    # memory side: a flat step time, FLOP/s = batch x weight bandwidth. A batch under 128 still computes the
    # 128-token tile, 128 FLOPs per weight byte at the mma.sync rate: the weights stream at no less than 90 % of
    # the rate of DRAM's and the tensor pipe's time per byte one after the other (the prefill lab's decode bound)
    padded_bytes_per_s = mma_sync / 128
    for batch in (1, 4, 16):
        assert points[batch]["flops_per_s"] >= 0.9 * batch / (1 / sustained + 1 / padded_bytes_per_s)
        assert points[batch]["flops_per_s"] <= 1.02 * batch * sustained
        assert points[batch]["seconds"] == pytest.approx(points[1]["seconds"], rel=0.05)
    assert points[512]["flops_per_s"] == pytest.approx(points[256]["flops_per_s"], rel=0.05)  # the plateau
    assert points[512]["tokens_per_s"] > 10 * points[1]["tokens_per_s"]
    plateau = values["plateau_flops"]
    assert plateau <= mma_sync
    # where the arithmetic puts the knee for the rate this kernel reaches: plateau / its memory-side bandwidth,
    # which the bounds above hold between the sustained bandwidth and 90 % of the padded tile's serial rate
    assert values["reached_ridge"] == pytest.approx(plateau / sustained)
    assert values["knee"] == pytest.approx(plateau / values["measured_bandwidth"])
    serial = 1 / (1 / sustained + 1 / padded_bytes_per_s)
    assert plateau / (1.02 * sustained) <= values["knee"] <= plateau / (0.9 * serial)


@pytest.mark.slow
def test_eight_bit_weights_halve_the_bytes_per_token(tensor_result):
    quantized = tensor_result.values["quantized"]
    assert set(quantized) == {"int8", "fp8"}
    for q in quantized.values():
        assert q["bytes_per_token_vs_bf16"] == 0.5
        assert q["step_time_vs_bf16"] == pytest.approx(0.5, rel=0.15)


@pytest.mark.slow
def test_hopper_sweep_knee_is_near_the_ridge_of_the_rate_its_kernels_reach(tensor_result):
    """Hopper's sweep (16 SMs, a 4096 x 4096 layer): every point matches numpy, in the narrow wgmma kernel up to
    256 sequences and the persistent cluster GEMM past it; the memory side streams the weights at >= 85 % of the
    slice's sustained DRAM bandwidth with a flat step time; the plateau passes the mma.sync rate (so no mma.sync
    kernel could reach it) and stays under the dense peak; and the measured knee (plateau / memory-side
    bandwidth) is within 15 % of the ridge of the rate the kernels reach (plateau / sustained DRAM) and within
    15 % of the dense ridge's ~300 sequences."""
    hopper = tensor_result.values["hopper"]
    config = gpusim.load_config("h100-sxm", sms=hopper["sms"])
    dense, mma_sync, peak_bw, sustained = _rates(config)
    points = {p["batch"]: p for p in hopper["points"]}
    assert all(p["correct"] for p in points.values())
    assert all(p["kernel"].startswith("decode_hopper_n") for b, p in points.items() if b <= 256)
    assert points[512]["kernel"] == "gemm_hopper_persistent_bf16"
    for batch in (1, 4, 16):
        assert points[batch]["flops_per_s"] >= 0.85 * batch * sustained
        assert points[batch]["seconds"] == pytest.approx(points[1]["seconds"], rel=0.05)
    assert mma_sync < hopper["plateau_flops"] <= dense
    assert hopper["knee"] == pytest.approx(hopper["plateau_flops"] / hopper["measured_bandwidth"])
    assert hopper["knee"] == pytest.approx(hopper["plateau_flops"] / sustained, rel=0.15)
    assert hopper["knee"] == pytest.approx(dense / peak_bw, rel=0.15)
    assert "about 300 sequences" in tensor_result.lesson
