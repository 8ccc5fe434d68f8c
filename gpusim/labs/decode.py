"""Lab `decode`: one token of LLM decode is a GEMV bounded by weight bytes / DRAM bandwidth; batching
reuses every weight byte until the arithmetic, not the bandwidth, sets the step time.

``math="tensor"`` (the default) runs the batch sweep (experiment 4) on tensor cores, on a slice of
``tensor_sms`` SMs, with BF16 weights and INT8/FP8 ones: gpusim.labs.decode_tensor, whose docstring has the
details; its knee is the tensor ridge (a hundred sequences and more). ``math="fp32"`` runs the sweep
described below, on the CUDA cores, whose knee is the FP32 ridge (~20). Experiments 1-3 are the same in both.

Kernels in programs/labs/decode_gemv.cu. Four experiments on a slice of ``sms`` SMs:

1. **Batch 1, fp16** (``gemv_f16_b1``, one warp per weight row, 2 KiB of loads in flight per warp):
   the weight matrix (``gemv_rows`` x ``gemv_k``, several times the slice's L2) streams from DRAM once;
   the lab reports the weight bytes per second against the slice's DRAM peak.
2. **Extrapolation to a model.** A slice of N SMs owns N / chip_sms of the chip's DRAM bandwidth (the
   config scales it that way), so the chip streams weights at measured x chip_sms / N bytes/s, and one
   token of a ``model_params`` fp16 model takes 2 x params / that. The analytic bound is
   weight bytes / peak DRAM bandwidth (h100-sxm, 70B: 140 GB / 3.35 TB/s = 24 tokens/s).
3. **int8 weights with one fp32 scale per row** (``gemv_u8``, the same loop, 16 weights per 16-byte load):
   half the bytes, so about twice the tokens/s.
4. **Batch sweep** (``sweep_rows`` x ``sweep_k`` fp16 weights, batch 1 -> 512): batch 1 runs the GEMV;
   larger batches run ``gemm_f16_nN``, a shared-memory tiled GEMM (fp16 weight tiles converted to fp32
   once per block, each thread accumulating a 4..16 x 8 register tile with FFMAs) with the smallest batch
   tile N in ``GEMM_TILES`` that covers the batch (the table names the kernel of every point). Every
   weight byte fetched serves ``batch`` tokens: 2 FLOPs per weight per token over 2 bytes make the FLOPs
   per weight byte equal to the batch. While that is below the ridge point (FP32 peak / sustained DRAM
   bandwidth) the step time stays flat and tokens/s grow with the batch; above it the FFMA pipes are the
   bound and tokens/s stop growing. The lab measures the knee as the FLOP/s plateau over the weight
   bandwidth measured on the memory side (batches <= ridge / 4) and reports it beside the ridge point.

Simplifications: activations are fp32 and small beside the weights (their bytes are counted in the DRAM
column, not on the x-axis); the math is FP32 on the CUDA cores (no tensor cores), so the ridge is the FP32
one. The GEMM's plateau stays under the FP32 peak by its instruction mix (the column ``FFMA share``: weight
conversions, shared-memory reads and stores, barriers) and by the shared-memory data path, which the
engine charges per lane-byte (a broadcast float4 read costs as much as a distinct one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.analytic.compare import compare
from gpusim.analytic.models import roofline
from gpusim.arch.config import WARP_SIZE
from gpusim.errors import LaunchError
from gpusim.labs.decode_tensor import (
    HOPPER_SIZE,
    HOPPER_SMS,
    QUANTIZED,
    TENSOR_BATCHES,
    has_hopper_sweep,
    hopper_lesson,
    hopper_sweep,
    hopper_table,
    tensor_lesson,
    tensor_sweep,
    tensor_table,
)
from gpusim.labs.support import LAB_PROGRAMS_DIR, LabResult, format_table, progress_items, pyplot, save
from gpusim.labs.tensor_gemm import TYPES, check_shape

NAME = "decode"
TITLE = "LLM decode: GEMV at batch 1, tokens/s from bandwidth, int8, batching up to the ridge point"
DEFAULT_CONFIG = "h100-sxm"
PROGRAM = LAB_PROGRAMS_DIR / "decode_gemv.ptx"
GEMV_BLOCK_THREADS = 256
GEMV_WARPS_PER_BLOCK = GEMV_BLOCK_THREADS // WARP_SIZE
GEMV_K_MULTIPLE = 8 * WARP_SIZE * 4  # halves per 16-byte load x lanes x UNROLL (decode_gemv.cu)
GEMV_U8_K_MULTIPLE = 16 * WARP_SIZE * 4
GEMM_K_MULTIPLE = 16  # BK, the K-slice of gemm_f16_tiled
# (batch tile, kernel, weight rows per block, threads per block): the GEMM_F16 lines of decode_gemv.cu
GEMM_TILES = (
    (8, "gemm_f16_n8", 128, 32),
    (16, "gemm_f16_n16", 128, 32),
    (32, "gemm_f16_n32", 256, 64),
    (64, "gemm_f16_n64", 256, 128),
    (128, "gemm_f16_n128", 256, 256),
)
FP16_BYTES = 2
INT8_BYTES = 1
FLOPS_PER_MAC = 2
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
MODEL_PARAMS = 70e9
MATH = ("tensor", "fp32")
TENSOR_SWEEP_SIZE = 1024
"""Default rows and K of the tensor sweep's BF16 layer (2 MB): at batch 512 the activations (1 MB) still fit the
L2 of the tensor sweep's slice, so they are read from DRAM once."""
FP32_SWEEP_SIZE = 1024


def _pack_u32(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(np.uint32).ravel()


def _check_multiple(name: str, value: int, multiple: int, why: str) -> None:
    if value <= 0 or value % multiple:
        raise LaunchError(f"decode lab: {name}={value} must be a positive multiple of {multiple} ({why})")


def gemm_tile(batch: int) -> tuple[int, str, int, int]:
    """The GEMM_TILES row that serves ``batch`` (> 1): the smallest batch tile covering it, else the largest."""
    for tile in GEMM_TILES:
        if batch <= tile[0]:
            return tile
    return GEMM_TILES[-1]


def serve_batch(gpu: Any, module: Any, weights: np.ndarray, activations: np.ndarray) -> tuple[Any, bool, str]:
    """y = activations @ weights.T (fp16 weights, fp32 activations): the GEMV at batch 1, else the tiled GEMM.

    Returns the run, whether the result matches numpy and the kernel's name. Raises LaunchError for shapes
    the kernels do not support (K a multiple of 1024 for the GEMV and of 16 for the GEMM; GEMV rows a
    multiple of its warps per block).
    """
    rows, k = weights.shape
    batch = activations.shape[0]
    out = gpu.zeros(rows * batch, np.float32)
    packed = gpu.to_device(_pack_u32(weights))
    inputs = gpu.to_device(np.ascontiguousarray(activations, dtype=np.float32).ravel())
    if batch == 1:
        _check_multiple("k", k, GEMV_K_MULTIPLE, "gemv_f16_b1 reads 4 x 32 x 8 halves per step")
        _check_multiple("rows", rows, GEMV_WARPS_PER_BLOCK, "gemv_f16_b1 runs one warp per row")
        name = "gemv_f16_b1"
        run = gpu.launch(module[name], grid=(rows // GEMV_WARPS_PER_BLOCK, 1), block=GEMV_BLOCK_THREADS,
                         args=[packed, inputs, out, np.int32(rows), np.int32(k // 8)])
    else:
        _check_multiple("k", k, GEMM_K_MULTIPLE, "the GEMM stages K-slices of 16")
        tile_batch, name, tile_rows, threads = gemm_tile(batch)
        grid = (-(-rows // tile_rows), -(-batch // tile_batch))
        run = gpu.launch(module[name], grid=grid, block=threads,
                         args=[packed, inputs, out, np.int32(rows), np.int32(batch), np.int32(k // 8)])
    expected = activations.astype(np.float32) @ weights.astype(np.float32).T
    return run, bool(np.allclose(out.get().reshape(batch, rows), expected, rtol=1e-3, atol=1e-2)), name


def _gemv_u8(
    gpu: Any, kernel: Any, quantized: np.ndarray, scales: np.ndarray, activation: np.ndarray
) -> tuple[Any, bool]:
    rows, k = quantized.shape
    _check_multiple("gemv_k", k, GEMV_U8_K_MULTIPLE, "gemv_u8 reads 4 x 32 x 16 bytes per step")
    stored = (quantized.astype(np.int16) + 128).astype(np.uint8)  # u8 = s8 + 128 (see the kernel)
    out = gpu.zeros(rows, np.float32)
    run = gpu.launch(
        kernel,
        grid=(rows // GEMV_WARPS_PER_BLOCK, 1),
        block=GEMV_BLOCK_THREADS,
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


def _sweep_point(gpu: Any, module: Any, roofs: Any, weights: np.ndarray, batch: int, rng: Any) -> dict:
    activations = rng.standard_normal((batch, weights.shape[1])).astype(np.float32)
    result, ok, kernel = serve_batch(gpu, module, weights, activations)
    metrics = result.metrics
    flops = FLOPS_PER_MAC * weights.size * batch
    ffma = metrics["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] / WARP_SIZE
    return {
        "batch": batch,
        "kernel": kernel,
        "correct": ok,
        "seconds": result.seconds,
        "tokens_per_s": batch / result.seconds,
        "flops_per_s": flops / result.seconds,
        "flop_per_weight_byte": flops / weights.nbytes,
        "roof_flops_per_s": roofs.attainable(flops / weights.nbytes, "fp32", "dram_sustained"),
        "dram_bytes_per_weight_byte": metrics["dram__bytes_read.sum"] / weights.nbytes,
        "ffma_share": ffma / metrics["smsp__inst_executed.sum"],
    }


def run(
    config: Any = None,
    plot_dir: str | Path | None = None,
    progress: bool = True,
    *,
    sms: int = 1,
    gemv_rows: int = 2048,
    gemv_k: int = 2048,
    sweep_rows: int | None = None,
    sweep_k: int | None = None,
    batches: tuple = (),
    model_params: float = MODEL_PARAMS,
    math: str = "tensor",
    tensor_sms: int = 4,
    hopper_sms: int = HOPPER_SMS,
    hopper_rows: int = HOPPER_SIZE,
    hopper_k: int = HOPPER_SIZE,
) -> LabResult:
    """Batch-1 GEMV (fp16, int8), the tokens/s extrapolation and the batch sweep (``math``: on tensor cores
    in BF16/INT8/FP8, or in FP32 on the CUDA cores; on tensor cores of a Hopper config also the sweep through
    wgmma kernels on ``hopper_sms`` SMs, a ``hopper_rows`` x ``hopper_k`` layer; ``hopper_sms=0`` skips it).
    Unset sizes (None) and batches (()) take the defaults of ``math``."""
    from gpusim.api.gpu import GPU

    if math not in MATH:
        raise LaunchError(f"decode lab: math={math!r}; expected one of {', '.join(MATH)}")
    tensor = math == "tensor"
    default_size = TENSOR_SWEEP_SIZE if tensor else FP32_SWEEP_SIZE
    sweep_rows = default_size if sweep_rows is None else sweep_rows
    sweep_k = default_size if sweep_k is None else sweep_k
    batches = batches or (TENSOR_BATCHES if tensor else BATCHES)

    _check_multiple("gemv_rows", gemv_rows, GEMV_WARPS_PER_BLOCK, "one warp per row, 8 warps per block")
    _check_multiple("gemv_k", gemv_k, GEMV_U8_K_MULTIPLE, "the int8 GEMV reads 4 x 32 x 16 bytes per step")
    if tensor:
        for kind in TYPES.values():
            check_shape(kind, sweep_rows, sweep_k, 1)
    else:
        _check_multiple("sweep_k", sweep_k, GEMV_K_MULTIPLE if 1 in batches else GEMM_K_MULTIPLE,
                        "the K step of the kernels the sweep runs")
    if sweep_rows <= 0 or any(int(b) < 1 for b in batches):
        raise LaunchError(f"decode lab: sweep_rows ({sweep_rows}) and every batch ({batches}) must be >= 1")
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

    hopper_gpu = GPU(config or DEFAULT_CONFIG, sms=hopper_sms) if tensor and hopper_sms else None
    hopper = hopper_gpu is not None and has_hopper_sweep(hopper_gpu)
    steps = ["fp16 batch 1", "int8 batch 1"] + [f"batch {b}" for b in batches] + (list(QUANTIZED) if tensor else []) \
        + ([f"wgmma batch {b}" for b in batches] if hopper else [])
    bar = progress_items(steps, NAME, progress)
    next(bar)
    weights = rng.standard_normal((gemv_rows, gemv_k)).astype(np.float16)
    activation = rng.standard_normal(gemv_k).astype(np.float32)
    fp16_run, fp16_ok, _ = serve_batch(gpu, module, weights, activation[None, :])
    fp16_bandwidth = weights.nbytes / fp16_run.seconds
    next(bar)
    quantized = rng.integers(-127, 128, size=(gemv_rows, gemv_k)).astype(np.int8)
    scales = (rng.random(gemv_rows) / 64).astype(np.float32)
    int8_run, int8_ok = _gemv_u8(gpu, module["gemv_u8"], quantized, scales, activation)
    int8_bandwidth = (quantized.nbytes + scales.nbytes) / int8_run.seconds

    model_fp16_bytes = FP16_BYTES * model_params
    chip_peak_bandwidth = peak_bandwidth * chip_scale
    tokens_fp16 = fp16_bandwidth * chip_scale / model_fp16_bytes
    tokens_int8 = int8_bandwidth * chip_scale / (INT8_BYTES * model_params)
    analytic_tokens_fp16 = chip_peak_bandwidth / model_fp16_bytes
    analytic_tokens_int8 = chip_peak_bandwidth / (INT8_BYTES * model_params)
    fp16_vs_model = compare(
        fp16_run, {"dram__throughput.avg.pct_of_peak_sustained_elapsed": 100.0 * cfg.dram_efficiency}
    )

    gemv_values = {
        "config": cfg.name, "sms": sms, "fp16_correct": fp16_ok, "int8_correct": int8_ok,
        "fp16_pct_of_peak": 100.0 * fp16_bandwidth / peak_bandwidth,
        "dram_pct_metric": fp16_run.metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
        "int8_pct_of_peak": 100.0 * int8_bandwidth / peak_bandwidth,
        "tokens_per_s_fp16": tokens_fp16, "analytic_tokens_per_s_fp16": analytic_tokens_fp16,
        "tokens_per_s_int8": tokens_int8, "analytic_tokens_per_s_int8": analytic_tokens_int8,
        "int8_speedup": tokens_int8 / tokens_fp16, "chip_scale": chip_scale,
        "sustained_bandwidth": sustained_bandwidth, "math": math,
    }
    gemv_table = _gemv_table(gemv_values, cfg, model_params, chip_peak_bandwidth, fp16_bandwidth, int8_bandwidth,
                             fp16_vs_model)
    if tensor:
        tensor_gpu = GPU(config or DEFAULT_CONFIG, sms=tensor_sms)  # an L2 that holds the activations
        sweep = tensor_sweep(tensor_gpu, roofline(tensor_gpu.config), sweep_rows, sweep_k, tuple(batches), bar)
        values = {**gemv_values, **sweep, "tensor_sms": tensor_sms}
        if hopper:
            values["hopper"] = hopper_sweep(hopper_gpu, hopper_rows, hopper_k, tuple(batches), bar)
        figures = []
        plt = pyplot()
        if plot_dir is not None and plt is not None:
            figures.append(_plot(plt, plot_dir, values, cfg.name, sms))
        return LabResult(NAME, TITLE, gemv_table + tensor_table(values)
                         + (hopper_table(values["hopper"]) if hopper else ""),
                         _gemv_lesson(values, model_params) + " " + tensor_lesson(values)
                         + (hopper_lesson(values["hopper"]) if hopper else ""), values, figures)
    sweep_weights = rng.standard_normal((sweep_rows, sweep_k)).astype(np.float16)
    points = []
    for batch in batches:
        next(bar, None)
        points.append(_sweep_point(gpu, module, roofs, sweep_weights, int(batch), rng))
    for point in points:
        point["time_vs_first"] = point["seconds"] / points[0]["seconds"]
    plateau = max(p["flops_per_s"] for p in points)
    memory_side = [p for p in points if p["flop_per_weight_byte"] <= ridge / 4]
    measured_bandwidth = (
        float(np.median([p["flops_per_s"] / p["flop_per_weight_byte"] for p in memory_side]))
        if memory_side
        else sustained_bandwidth
    )
    knee = plateau / measured_bandwidth

    values = {
        **gemv_values,
        "ridge_point": ridge,
        "knee": knee,
        "plateau_flops": plateau,
        "peak_flops": peak_flops,
        "measured_bandwidth": measured_bandwidth,
        "sustained_bandwidth": sustained_bandwidth,
        "points": points,
        "chip_scale": chip_scale,
    }
    table = gemv_table + _fp32_sweep_table(values)
    lesson = (
        _gemv_lesson(values, model_params) + " Batching reuses each weight byte for "
        f"every sequence: the step time stays flat and tokens/s grow with the batch until the FLOPs "
        f"per weight byte (= the batch) reach the knee, {knee:.0f} for the tiled GEMM, near the FP32 ridge "
        f"point {ridge:.0f} (peak / bandwidth; the GEMM's plateau is {100 * plateau / peak_flops:.0f}% of the "
        f"peak); beyond it the FFMA pipes are the bound and tokens/s stop growing."
    )
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figures.append(_plot(plt, plot_dir, values, cfg.name, sms))
    return LabResult(NAME, TITLE, table, lesson, values, figures)


def _gemv_lesson(values: dict, model_params: float) -> str:
    return (
        f"At batch 1 every weight is used for one multiply-add, so the GEMV streams the weights at "
        f"{values['fp16_pct_of_peak']:.0f}% of the DRAM peak and nothing else matters: a "
        f"{model_params / 1e9:.0f}B fp16 model gives {values['tokens_per_s_fp16']:.1f} tokens/s against the "
        f"bound weight bytes / bandwidth = {values['analytic_tokens_per_s_fp16']:.1f}. Halving the bytes with "
        f"int8 weights gives {values['int8_speedup']:.2f}x the tokens/s."
    )


def _gemv_table(values: dict, cfg: Any, model_params: float, chip_peak_bandwidth: float, fp16_bandwidth: float,
                int8_bandwidth: float, fp16_vs_model: Any) -> str:
    table = format_table(
        ["weights", "GB/s (slice)", "% of DRAM peak", "tokens/s (chip)", "analytic tokens/s"],
        [
            ["fp16", fp16_bandwidth / 1e9, values["fp16_pct_of_peak"], values["tokens_per_s_fp16"],
             values["analytic_tokens_per_s_fp16"]],
            ["int8 + scale", int8_bandwidth / 1e9, values["int8_pct_of_peak"], values["tokens_per_s_int8"],
             values["analytic_tokens_per_s_int8"]],
        ],
    )
    table += (
        f"\n\n{model_params / 1e9:.0f}B-parameter model on {cfg.chip_sms} SMs: slice bandwidth x "
        f"{cfg.chip_sms}/{cfg.sms}; analytic = weight bytes / peak {chip_peak_bandwidth / 1e12:.2f} TB/s."
        f"\nint8 / fp16 tokens/s: {values['int8_speedup']:.2f}\n\n{fp16_vs_model.table()}\n\n"
    )
    return table


def _fp32_sweep_table(values: dict) -> str:
    points = values["points"]
    table = format_table(
        ["batch", "kernel", "FLOP/weight B", "step us", "time x", "tokens/s", "GFLOP/s", "roof GFLOP/s",
         "% of roof", "FFMA share", "DRAM/weights"],
        [
            [p["batch"], p["kernel"], p["flop_per_weight_byte"], p["seconds"] * 1e6, p["time_vs_first"],
             p["tokens_per_s"], p["flops_per_s"] / 1e9, p["roof_flops_per_s"] / 1e9,
             100 * p["flops_per_s"] / p["roof_flops_per_s"], p["ffma_share"], p["dram_bytes_per_weight_byte"]]
            for p in points
        ],
    )
    table += (
        f"\n\nroofline ridge point {values['ridge_point']:.1f} FLOP/B (FP32 peak / sustained DRAM); measured "
        f"knee {values['knee']:.1f} FLOP/B = plateau {values['plateau_flops'] / 1e9:.0f} GFLOP/s "
        f"({100 * values['plateau_flops'] / values['peak_flops']:.0f}% of the FP32 peak) / "
        f"{values['measured_bandwidth'] / 1e9:.1f} GB/s of weights (median of the batches <= ridge / 4; "
        f"{100 * values['measured_bandwidth'] / values['sustained_bandwidth']:.0f}% of sustained DRAM)"
    )
    return table


def _plot(plt: Any, plot_dir: str | Path, values: dict, config_name: str, sms: int) -> Path:
    points = values["points"]
    figure, axes = plt.subplots(figsize=(6, 4))
    batches = [p["batch"] for p in points]
    axes.loglog(batches, [p["flops_per_s"] / 1e9 for p in points], "o-", label="simulated")
    dense = np.geomspace(min(batches), max(batches), 200)
    roof = np.minimum(values["peak_flops"], dense * values["sustained_bandwidth"])
    ceiling = "mma.sync BF16" if values.get("math") == "tensor" else "FP32"
    axes.loglog(dense, roof / 1e9, "k--", label=f"roofline ({ceiling}, DRAM)")
    axes.axvline(values["ridge_point"], color="grey", linestyle=":", label="ridge point")
    axes.axvline(values["knee"], color="C1", linestyle="-.", label="measured knee")
    axes.set_xlabel("batch (= FLOP per 16-bit weight byte)")
    axes.set_ylabel("GFLOP/s")
    axes.set_title(f"decode batch sweep, {config_name} x{sms} SMs")
    axes.legend(loc="lower right")
    return save(figure, plot_dir, "decode.png")
