"""Lab `decode`: one token of LLM decode is a GEMV bounded by weight bytes / DRAM bandwidth.

Kernels in programs/labs/decode_gemv.cu. Three experiments on a slice of ``sms`` SMs:

1. **Batch 1, fp16** (``gemv_f16_b1``, one warp per weight row, 2 KiB of loads in flight per warp):
   the weight matrix (``gemv_rows`` x ``gemv_k``, several times the slice's L2) streams from DRAM once;
   the lab reports the weight bytes per second against the slice's DRAM peak.
2. **Extrapolation to a model.** A slice of N SMs owns N / chip_sms of the chip's DRAM bandwidth (the
   config scales it that way), so the chip streams weights at measured x chip_sms / N bytes/s, and one
   token of a ``model_params`` fp16 model takes 2 x params / that. The analytic bound is
   weight bytes / peak DRAM bandwidth (h100-sxm, 70B: 140 GB / 3.35 TB/s = 24 tokens/s).
3. **int8 weights with one fp32 scale per row** (``gemv_u8``, the same loop, 16 weights per 16-byte load):
   half the bytes, so about twice the tokens/s.
4. **Batch sweep** (``gemv_f16_b1`` per activation row below 16, ``gemm_f16_r8_b16`` above: 8 weight rows x
   16 activation rows per warp): every weight byte fetched serves ``batch`` tokens, so at first the step
   time stays flat and tokens/s rise with the batch; they stop rising at the knee, where the FLOPs per
   weight byte (= batch for fp16: 2 FLOPs per weight per token over 2 bytes) reach the kernel's compute
   ceiling over the bandwidth. The table gives the roofline's ridge point (FP32 peak / sustained DRAM) and
   the knee of this kernel (its measured FLOP/s plateau / the measured bandwidth).

Simplifications: activations are fp32 and fit in L1/L2; the math is FP32 on the CUDA cores (no tensor
cores), so the ridge is the FP32 one; the engine runs fp16 -> fp32 conversions on the narrow SFU pipe, which
with a tile of 8 x 16 per warp keeps this kernel's plateau well under the FP32 peak (the table's
``% of peak``); the sweep's matrix is smaller than the batch-1 one to keep large batches quick.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.analytic import roofline
from gpusim.compare import compare
from gpusim.labs import LabResult, format_table
from gpusim.labs.support import LAB_PROGRAMS_DIR, progress_items, pyplot, save

NAME = "decode"
TITLE = "LLM decode: GEMV at batch 1, tokens/s from bandwidth, int8, batching"
DEFAULT_CONFIG = "h100-sxm"
PROGRAM = LAB_PROGRAMS_DIR / "decode_gemv.ptx"
BLOCK_THREADS = 256
WARPS_PER_BLOCK = 8
GEMV_ROWS_PER_WARP = 1
TILE_ROWS_PER_WARP = 8
TILE_BATCH = 16
FP16_BYTES = 2
INT8_BYTES = 1
FLOPS_PER_MAC = 2
BATCHES = (1, 2, 4, 16, 32, 64, 128, 256, 512)
MODEL_PARAMS = 70e9


def _pack_u32(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(np.uint32).ravel()


def _matmul_f16(gpu: Any, kernel: Any, weights: np.ndarray, activations: np.ndarray, grid: tuple) -> tuple[Any, bool]:
    """y = activations @ weights.T with an fp16-weight kernel over ``grid``; checked against numpy."""
    rows, k = weights.shape
    batch = activations.shape[0]
    out = gpu.zeros(rows * batch, np.float32)
    run = gpu.launch(
        kernel,
        grid=grid,
        block=BLOCK_THREADS,
        args=[
            gpu.to_device(_pack_u32(weights)),
            gpu.to_device(activations.ravel()),
            out,
            np.int32(rows),
            np.int32(k // 8),
        ],
    )
    expected = activations @ weights.astype(np.float32).T
    return run, bool(np.allclose(out.get().reshape(batch, rows), expected, rtol=1e-3, atol=1e-2))


def _gemv_f16(gpu: Any, kernel: Any, weights: np.ndarray, activations: np.ndarray) -> tuple[Any, bool]:
    """The batch-1 kernel: one launch row per activation row."""
    grid = (weights.shape[0] // (WARPS_PER_BLOCK * GEMV_ROWS_PER_WARP), activations.shape[0])
    return _matmul_f16(gpu, kernel, weights, activations, grid)


def _gemm_f16(gpu: Any, kernel: Any, weights: np.ndarray, activations: np.ndarray) -> tuple[Any, bool]:
    """The batched kernel: tiles of TILE_BATCH activation rows."""
    grid = (weights.shape[0] // (WARPS_PER_BLOCK * TILE_ROWS_PER_WARP), activations.shape[0] // TILE_BATCH)
    return _matmul_f16(gpu, kernel, weights, activations, grid)


def _gemv_u8(
    gpu: Any, kernel: Any, quantized: np.ndarray, scales: np.ndarray, activation: np.ndarray
) -> tuple[Any, bool]:
    rows, k = quantized.shape
    stored = (quantized.astype(np.int16) + 128).astype(np.uint8)  # u8 = s8 + 128 (see the kernel)
    out = gpu.zeros(rows, np.float32)
    run = gpu.launch(
        kernel,
        grid=(rows // WARPS_PER_BLOCK, 1),
        block=BLOCK_THREADS,
        args=[
            gpu.to_device(_pack_u32(stored)),
            gpu.to_device(scales),
            gpu.to_device(activation),
            out,
            np.int32(rows),
            np.int32(k // 16),
        ],
    )
    expected = (quantized.astype(np.float32) @ activation) * scales
    return run, bool(np.allclose(out.get(), expected, rtol=1e-3, atol=1e-2))


def run(
    config: Any = None,
    plot_dir: str | Path | None = None,
    progress: bool = True,
    *,
    sms: int = 1,
    gemv_rows: int = 2048,
    gemv_k: int = 2048,
    sweep_rows: int = 128,
    sweep_k: int = 2048,
    batches: tuple = BATCHES,
    model_params: float = MODEL_PARAMS,
) -> LabResult:
    """Batch-1 GEMV (fp16, int8), the tokens/s extrapolation and the batch sweep."""
    from gpusim.gpu import GPU

    gpu = GPU(config or DEFAULT_CONFIG, sms=sms)
    cfg = gpu.config
    module = gpu.load(str(PROGRAM))
    roofs = roofline(cfg)
    peak_bandwidth = roofs.bandwidth_bytes_per_s["dram"]
    sustained_bandwidth = roofs.bandwidth_bytes_per_s["dram_sustained"]
    peak_flops = roofs.peak_flops["fp32"]
    ridge = roofs.ridge_point("fp32", "dram_sustained")
    rng = np.random.default_rng(0)
    chip_scale = cfg.chip_sms / cfg.sms

    steps = ["fp16 batch 1", "int8 batch 1"] + [f"batch {b}" for b in batches]
    bar = progress_items(steps, NAME, progress)
    next(bar)
    weights = rng.standard_normal((gemv_rows, gemv_k)).astype(np.float16)
    activation = rng.standard_normal(gemv_k).astype(np.float32)
    fp16_run, fp16_ok = _gemv_f16(gpu, module["gemv_f16_b1"], weights, activation[None, :])
    fp16_bandwidth = weights.nbytes / fp16_run.seconds
    next(bar)
    quantized = rng.integers(-127, 128, size=(gemv_rows, gemv_k)).astype(np.int8)
    scales = (rng.random(gemv_rows) / 64).astype(np.float32)
    int8_run, int8_ok = _gemv_u8(gpu, module["gemv_u8"], quantized, scales, activation)
    int8_bytes = quantized.nbytes + scales.nbytes
    int8_bandwidth = int8_bytes / int8_run.seconds

    model_fp16_bytes = FP16_BYTES * model_params
    model_int8_bytes = INT8_BYTES * model_params
    chip_peak_bandwidth = peak_bandwidth * chip_scale
    tokens_fp16 = fp16_bandwidth * chip_scale / model_fp16_bytes
    tokens_int8 = int8_bandwidth * chip_scale / model_int8_bytes
    analytic_tokens_fp16 = chip_peak_bandwidth / model_fp16_bytes
    analytic_tokens_int8 = chip_peak_bandwidth / model_int8_bytes
    fp16_vs_model = compare(
        fp16_run, {"dram__throughput.avg.pct_of_peak_sustained_elapsed": 100.0 * cfg.dram_efficiency}
    )

    sweep_weights = rng.standard_normal((sweep_rows, sweep_k)).astype(np.float16)
    points = []
    for batch in batches:
        next(bar, None)
        activations = rng.standard_normal((batch, sweep_k)).astype(np.float32)
        if batch >= TILE_BATCH and batch % TILE_BATCH == 0:
            result, ok = _gemm_f16(gpu, module["gemm_f16_r8_b16"], sweep_weights, activations)
        else:
            result, ok = _gemv_f16(gpu, module["gemv_f16_b1"], sweep_weights, activations)
        flops = FLOPS_PER_MAC * sweep_weights.size * batch
        points.append(
            {
                "batch": batch,
                "correct": ok,
                "seconds": result.seconds,
                "tokens_per_s": batch / result.seconds,
                "flops_per_s": flops / result.seconds,
                "flop_per_weight_byte": flops / sweep_weights.nbytes,
                "roof_flops_per_s": roofs.attainable(flops / sweep_weights.nbytes, "fp32", "dram_sustained"),
                "dram_bytes_per_weight_byte": (result.metrics["dram__bytes_read.sum"] / sweep_weights.nbytes),
            }
        )
    for point in points:
        point["time_vs_batch1"] = point["seconds"] / points[0]["seconds"]
    plateau = max(p["flops_per_s"] for p in points)
    memory_side = [p for p in points if p["flop_per_weight_byte"] <= ridge / 4]
    measured_bandwidth = (
        float(np.median([p["flops_per_s"] / p["flop_per_weight_byte"] for p in memory_side]))
        if memory_side
        else sustained_bandwidth
    )
    knee = plateau / measured_bandwidth

    values = {
        "config": cfg.name,
        "sms": sms,
        "fp16_correct": fp16_ok,
        "int8_correct": int8_ok,
        "fp16_pct_of_peak": 100.0 * fp16_bandwidth / peak_bandwidth,
        "dram_pct_metric": fp16_run.metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
        "int8_pct_of_peak": 100.0 * int8_bandwidth / peak_bandwidth,
        "tokens_per_s_fp16": tokens_fp16,
        "analytic_tokens_per_s_fp16": analytic_tokens_fp16,
        "tokens_per_s_int8": tokens_int8,
        "analytic_tokens_per_s_int8": analytic_tokens_int8,
        "int8_speedup": tokens_int8 / tokens_fp16,
        "ridge_point": ridge,
        "knee": knee,
        "plateau_flops": plateau,
        "peak_flops": peak_flops,
        "measured_bandwidth": measured_bandwidth,
        "points": points,
        "chip_scale": chip_scale,
    }
    table = format_table(
        ["weights", "GB/s (slice)", "% of DRAM peak", "tokens/s (chip)", "analytic tokens/s"],
        [
            ["fp16", fp16_bandwidth / 1e9, values["fp16_pct_of_peak"], tokens_fp16, analytic_tokens_fp16],
            [
                "int8 + scale",
                int8_bandwidth / 1e9,
                values["int8_pct_of_peak"],
                tokens_int8,
                analytic_tokens_int8,
            ],
        ],
    )
    table += (
        f"\n\n{model_params / 1e9:.0f}B-parameter model on {cfg.chip_sms} SMs: slice bandwidth x "
        f"{cfg.chip_sms}/{cfg.sms}; analytic = weight bytes / peak {chip_peak_bandwidth / 1e12:.2f} TB/s."
        f"\nint8 / fp16 tokens/s: {values['int8_speedup']:.2f}\n\n{fp16_vs_model.table()}\n\n"
    )
    table += format_table(
        [
            "batch",
            "FLOP/weight B",
            "step us",
            "time x",
            "tokens/s",
            "GFLOP/s",
            "roof GFLOP/s",
            "DRAM/weights",
        ],
        [
            [
                p["batch"],
                p["flop_per_weight_byte"],
                p["seconds"] * 1e6,
                p["time_vs_batch1"],
                p["tokens_per_s"],
                p["flops_per_s"] / 1e9,
                p["roof_flops_per_s"] / 1e9,
                p["dram_bytes_per_weight_byte"],
            ]
            for p in points
        ],
    )
    table += (
        f"\n\nroofline ridge point {ridge:.1f} FLOP/B (FP32 peak / sustained DRAM); this kernel's knee "
        f"{knee:.1f} FLOP/B (plateau {plateau / 1e9:.0f} GFLOP/s = {100 * plateau / peak_flops:.0f}% of "
        f"the FP32 peak / {measured_bandwidth / 1e9:.1f} GB/s)"
    )
    lesson = (
        f"At batch 1 every weight is used for one multiply-add, so the GEMV streams the weights at "
        f"{values['fp16_pct_of_peak']:.0f}% of the DRAM peak and nothing else matters: a "
        f"{model_params / 1e9:.0f}B fp16 model gives {tokens_fp16:.1f} tokens/s against the bound "
        f"weight bytes / bandwidth = {analytic_tokens_fp16:.1f}. Halving the bytes with int8 weights "
        f"gives {values['int8_speedup']:.2f}x the tokens/s. Batching reuses each weight byte for "
        f"every sequence: the step time stays flat and tokens/s grow with the batch until the FLOPs "
        f"per weight byte reach the knee ({knee:.0f} for this kernel; the FP32 ridge point is "
        f"{ridge:.0f}); beyond it the GPU is compute-bound and tokens/s stop growing."
    )
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figure, axes = plt.subplots(figsize=(6, 4))
        axes.loglog(
            [p["batch"] for p in points], [p["flops_per_s"] / 1e9 for p in points], "o-", label="simulated"
        )
        axes.loglog(
            [p["batch"] for p in points],
            [p["roof_flops_per_s"] / 1e9 for p in points],
            "k--",
            label="roofline (FP32, DRAM)",
        )
        axes.axvline(ridge, color="grey", linestyle=":", label="ridge point")
        axes.set_xlabel("batch (= FLOP per fp16 weight byte)")
        axes.set_ylabel("GFLOP/s")
        axes.set_title(f"decode batch sweep, {cfg.name} x{sms} SMs")
        axes.legend()
        figures.append(save(figure, plot_dir, "decode.png"))
    return LabResult(NAME, TITLE, table, lesson, values, figures)
