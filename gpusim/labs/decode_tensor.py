"""The decode lab's batch sweep on tensor cores (``gpusim lab decode``, the default ``math=tensor``).

Every weight byte fetched serves ``batch`` sequences: with BF16 weights, 2 FLOPs per weight per token over 2
bytes make the FLOPs per weight byte equal to the batch. The step time stays flat (the weights stream at
the DRAM bandwidth) while that is left of the tensor ridge, and tokens/s grow with the batch; right of it
the tensor pipe is the bound and tokens/s stop growing. Two ridges matter, both printed:

* the **dense peak's**: peak BF16 FLOP/s / peak DRAM bandwidth (~300 sequences on H100 at NVIDIA's
  989 TFLOP/s; 320 at the configs' 1980 MHz clock);
* the **attainable one**: the rate mma.sync reaches (~67 % of the dense peak on H100: one HMMA.16816 per
  ~6 cycles per sub-partition) / sustained DRAM bandwidth -- fewer sequences, and where a mma.sync kernel's
  knee falls. The last third of the peak needs wgmma (programs/gemm_wgmma, docs/tensor-cores.md).

The GEMM is gpusim.labs.tensor_gemm (programs/gemm_bf16_mma.cu). INT8 (W8A8, s32 accumulate) and FP8 (e4m3)
weights halve the bytes per token -- half the step time at batch 1 -- and their mma.sync runs twice as many
FLOPs per cycle, so their ridge, in sequences, stays where BF16's is (the lab runs them at batch 1 only).
The GEMM's plateau is bound by the configured L2 bandwidth (gpusim.labs.tensor_gemm.l2_cap_flops), so
its own ridge, plateau / sustained DRAM, is lower still; the measured knee is compared with that one.

On Hopper configs a second sweep runs the batch through kernels that reach the dense peak's neighbourhood
(``hopper_sweep``), on a ``hopper_sms`` slice (16) with a 7B-class 4096 x 4096 layer: up to 256 sequences
programs/labs/decode_hopper.cu (wgmma m64nNk16 with the token tile as narrow as the batch, TMA-fed, one CTA
per 128 weight rows), past that programs/gemm_hopper.cu's persistent 2 x 2-cluster kernel (256 x 512
super-tiles, TMA multicast) -- the kernel a library picks for each shape. Its plateau is near the dense peak,
so its measured knee falls near the dense ridge the seeds quote (~300 sequences). The slice has 16 SMs so that
its L2 share (6 MB) holds the 4 MB of activations at batch 512 and the layer's weights (32 MB) are many
times the activations and outputs.

Simplifications: activations have the weights' type; the GEMM writes fp32 (int32) outputs, whose bytes add to
the DRAM traffic at large batches (the table's DRAM/weights column); a 128-sequence tile computes 128
columns, so batches under 128 cost 128 sequences' FLOPs (still left of the ridge).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpusim.analytic.models import roofline
from gpusim.labs.tensor_gemm import TYPES, LayerGemm, NarrowHopperGemm, l2_cap_flops, layer_gemm

TENSOR_BATCHES = (1, 4, 16, 64, 128, 256, 512)
QUANTIZED = ("int8", "fp8")


def _point(layer: LayerGemm, batch: int, roofs: Any, ceiling: str | None = None) -> dict:
    """One batch through ``layer``: its time, rates, bytes and the roofline's attainable rate under ``ceiling``
    (a roofline peak's name; None: the mma.sync rate of the layer's type)."""
    result, correct = layer.run(batch)
    flops = layer.flops(batch)
    kind = layer.kind
    dense = roofs.peak_flops.get(kind.dense, 0.0)
    return {
        "batch": batch, "kernel": layer.kernel_name, "correct": correct, "seconds": result.seconds,
        "tokens_per_s": batch / result.seconds, "flops_per_s": flops / result.seconds,
        "flop_per_weight_byte": flops / layer.weight_bytes,
        "roof_flops_per_s": roofs.attainable(flops / layer.weight_bytes, ceiling or kind.mma_sync, "dram_sustained"),
        "dram_bytes_per_weight_byte": result.metrics["dram__bytes_read.sum"] / layer.weight_bytes,
        "pct_of_mma_sync": 100.0 * flops / result.seconds / roofs.peak_flops[kind.mma_sync],
        "pct_of_dense": 100.0 * flops / result.seconds / dense if dense else 0.0,
        "tensor_pct": result.metrics["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"],
    }


def knee_of(points: list[dict], ridge: float) -> tuple[float, float, float]:
    """(knee in FLOP per weight byte, plateau FLOP/s, weight bandwidth on the memory side): the plateau over
    the median bandwidth of the points at or under a quarter of ``ridge`` (the first point if none is)."""
    plateau = max(p["flops_per_s"] for p in points)
    memory_side = [p for p in points if p["flop_per_weight_byte"] <= ridge / 4] or points[:1]
    bandwidth = float(np.median([p["flops_per_s"] / p["flop_per_weight_byte"] for p in memory_side]))
    return plateau / bandwidth, plateau, bandwidth


def tensor_sweep(gpu: Any, roofs: Any, rows: int, k: int, batches: tuple, bar: Any) -> dict:
    """The BF16 sweep over ``batches`` and, for INT8 and FP8 weights, batch 1 and the largest batch."""
    cfg = gpu.config
    bf16 = LayerGemm(gpu, "bf16", rows, k)
    points = []
    for batch in batches:
        next(bar, None)
        points.append(_point(bf16, int(batch), roofs))
    for point in points:
        point["time_vs_first"] = point["seconds"] / points[0]["seconds"]
    ridge = roofs.ridge_point("mma_sync_bf16", "dram_sustained")
    knee, plateau, bandwidth = knee_of(points, ridge)
    bf16_bytes_per_weight = TYPES["bf16"].element_bytes
    out = {
        "points": points, "ridge_point": ridge, "dense_ridge": roofs.ridge_point("tensor_bf16", "dram"),
        "knee": knee, "knee_sequences": knee * bf16_bytes_per_weight / 2, "plateau_flops": plateau,
        "measured_bandwidth": bandwidth, "peak_flops": roofs.peak_flops["mma_sync_bf16"],
        "dense_peak_flops": roofs.peak_flops["tensor_bf16"],
        "plateau_pct_of_mma_sync": 100.0 * plateau / roofs.peak_flops["mma_sync_bf16"],
        "mma_sync_pct_of_dense": 100.0 * roofs.peak_flops["mma_sync_bf16"] / roofs.peak_flops["tensor_bf16"],
        "quantized": {},
    }
    sustained = roofs.bandwidth_bytes_per_s["dram_sustained"]
    out["reached_ridge"] = plateau / sustained
    out["knee_vs_reached_ridge"] = knee / out["reached_ridge"]
    out["l2_cap_flops"] = l2_cap_flops(cfg)
    for name in QUANTIZED:
        if TYPES[name].mma_sync not in roofs.peak_flops:
            continue  # the config has no mma.sync of this type
        layer = LayerGemm(gpu, name, rows, k)
        next(bar, None)
        point = _point(layer, 1, roofs)
        out["quantized"][name] = {
            "point": point, "ridge_point": roofs.ridge_point(TYPES[name].mma_sync, "dram_sustained"),
            "step_time_vs_bf16": point["seconds"] / points[0]["seconds"] if int(batches[0]) == 1 else None,
            "bytes_per_token_vs_bf16": TYPES[name].element_bytes / bf16_bytes_per_weight,
            # 2 FLOPs per weight per sequence over 1 byte per weight: the ridge in sequences is half the FLOP/B
            "ridge_sequences": roofs.ridge_point(TYPES[name].mma_sync, "dram_sustained") / 2,
        }
    out["config"] = cfg.name
    return out


HOPPER_SMS = 16
HOPPER_SIZE = 4096
NARROW_MAX_TOKENS = 256
"""Batches up to this run decode_hopper.cu's narrow tiles; larger ones the persistent 2 x 2-cluster kernel."""


def has_hopper_sweep(gpu: Any) -> bool:
    """Whether ``gpu`` has wgmma and room for 2 x 2 clusters (the Hopper sweep's kernels)."""
    return int(gpu.config.wgmma_n8_interval_cycles) > 0 and gpu.max_active_clusters((2, 2, 1)) > 0


def hopper_sweep(gpu: Any, rows: int, k: int, batches: tuple, bar: Any) -> dict:
    """The BF16 sweep over ``batches`` on Hopper's kernels (narrow wgmma tiles up to NARROW_MAX_TOKENS, the
    persistent cluster kernel past it), its knee against the dense ridge and the ridge of the rate it reaches."""
    roofs = roofline(gpu.config)
    narrow = NarrowHopperGemm(gpu, rows, k)
    wide: LayerGemm | None = None
    points = []
    for batch in (int(b) for b in batches):
        next(bar, None)
        layer: LayerGemm = narrow
        if batch > NARROW_MAX_TOKENS:
            layer = wide = wide or layer_gemm(gpu, "bf16-wgmma", rows, k)
        points.append(_point(layer, batch, roofs, layer.kind.dense))
    for point in points:
        point["time_vs_first"] = point["seconds"] / points[0]["seconds"]
    ridge = roofs.ridge_point("tensor_bf16", "dram_sustained")
    knee, plateau, bandwidth = knee_of(points, ridge)
    reached = plateau / roofs.bandwidth_bytes_per_s["dram_sustained"]
    return {
        "points": points, "sms": gpu.config.sms, "rows": rows, "k": k, "dense_ridge_sustained": ridge,
        "dense_ridge": roofs.ridge_point("tensor_bf16", "dram"), "knee": knee, "plateau_flops": plateau,
        "measured_bandwidth": bandwidth, "plateau_pct_of_dense": 100.0 * plateau / roofs.peak_flops["tensor_bf16"],
        "reached_ridge": reached, "knee_vs_reached_ridge": knee / reached,
    }


def hopper_table(hopper: dict) -> str:
    """The Hopper sweep's table and its ridges."""
    from gpusim.labs.support import format_table

    table = format_table(
        ["batch", "kernel", "FLOP/weight B", "step us", "time x", "tokens/s", "TFLOP/s", "roof TFLOP/s",
         "% of dense", "tensor %", "DRAM/weights"],
        [[p["batch"], p["kernel"], p["flop_per_weight_byte"], p["seconds"] * 1e6, p["time_vs_first"],
          p["tokens_per_s"], p["flops_per_s"] / 1e12, p["roof_flops_per_s"] / 1e12, p["pct_of_dense"],
          p["tensor_pct"], p["dram_bytes_per_weight_byte"]] for p in hopper["points"]])
    return (f"\n\nHopper: {hopper['rows']} x {hopper['k']} BF16 weights on {hopper['sms']} SMs, wgmma kernels "
            f"(decode_hopper_nN up to {NARROW_MAX_TOKENS} sequences, the persistent 2 x 2-cluster GEMM past it)\n"
            + table
            + f"\n\ndense ridge {hopper['dense_ridge']:.0f} sequences (peak DRAM), "
            f"{hopper['dense_ridge_sustained']:.0f} (sustained). Measured knee {hopper['knee']:.0f} = plateau "
            f"{hopper['plateau_flops'] / 1e12:.2f} TFLOP/s ({hopper['plateau_pct_of_dense']:.0f}% of dense) / "
            f"{hopper['measured_bandwidth'] / 1e9:.1f} GB/s of weights; the rate these kernels reach / sustained "
            f"DRAM = {hopper['reached_ridge']:.0f}: the knee is {hopper['knee_vs_reached_ridge']:.2f}x that")


def hopper_lesson(hopper: dict) -> str:
    """The Hopper sweep's sentence."""
    return (f" On Hopper, kernels written for it -- wgmma with the token tile as narrow as the batch, then the "
            f"persistent TMA-multicast GEMM -- reach {hopper['plateau_pct_of_dense']:.0f}% of the dense peak, and "
            f"the knee of a {hopper['rows']} x {hopper['k']} layer's sweep moves to {hopper['knee']:.0f} "
            f"sequences, {hopper['knee_vs_reached_ridge']:.2f}x the ridge of the rate they reach and near the "
            f"dense ridge ({hopper['dense_ridge']:.0f} against peak DRAM): about 300 sequences make decode "
            f"compute-bound.")


def tensor_table(values: dict) -> str:
    """The sweep's table, the two ridges and the quantized weights' rows."""
    from gpusim.labs.support import format_table

    table = format_table(
        ["batch", "kernel", "FLOP/weight B", "step us", "time x", "tokens/s", "TFLOP/s", "roof TFLOP/s",
         "% of roof", "% of mma.sync", "DRAM/weights"],
        [[p["batch"], p["kernel"], p["flop_per_weight_byte"], p["seconds"] * 1e6, p["time_vs_first"],
          p["tokens_per_s"], p["flops_per_s"] / 1e12, p["roof_flops_per_s"] / 1e12,
          100 * p["flops_per_s"] / p["roof_flops_per_s"], p["pct_of_mma_sync"], p["dram_bytes_per_weight_byte"]]
         for p in values["points"]])
    table += (
        f"\n\nridges in sequences (BF16: FLOP per weight byte = batch): dense peak "
        f"{values['dense_peak_flops'] / 1e12:.2f} TFLOP/s / peak DRAM = {values['dense_ridge']:.0f}; mma.sync "
        f"{values['peak_flops'] / 1e12:.2f} TFLOP/s ({values['mma_sync_pct_of_dense']:.0f}% of it) / sustained "
        f"DRAM = {values['ridge_point']:.0f}. Measured knee {values['knee']:.0f} = plateau "
        f"{values['plateau_flops'] / 1e12:.2f} TFLOP/s ({values['plateau_pct_of_mma_sync']:.0f}% of mma.sync) / "
        f"{values['measured_bandwidth'] / 1e9:.1f} GB/s of weights (batches <= ridge / 4)"
    )
    table += (f"\nthe rate this GEMM reaches / sustained DRAM = {values['reached_ridge']:.0f}: the knee is "
              f"{values['knee_vs_reached_ridge']:.2f}x that")
    if values["quantized"]:
        table += "\n\n" + format_table(
            ["weights", "kernel", "batch 1 step us", "x BF16 step", "bytes x BF16", "mma.sync ridge FLOP/B",
             "ridge sequences"],
            [[name, q["point"]["kernel"], q["point"]["seconds"] * 1e6, q["step_time_vs_bf16"] or 0.0,
              q["bytes_per_token_vs_bf16"], q["ridge_point"], q["ridge_sequences"]]
             for name, q in values["quantized"].items()])
    return table


def tensor_lesson(values: dict) -> str:
    """What the sweep shows, with the ridges and why they differ."""
    quantized = values["quantized"]
    halves = ", ".join(f"{name} {q['step_time_vs_bf16']:.2f}x" for name, q in quantized.items()
                       if q["step_time_vs_bf16"])
    ridges = ", ".join(f"{name} {q['ridge_sequences']:.0f}" for name, q in quantized.items())
    return (
        f"On tensor cores batching pays for much longer: each BF16 weight byte carries one FLOP per sequence, "
        f"and the step time stays flat until the batch reaches the tensor ridge. At the dense BF16 peak that "
        f"ridge is {values['dense_ridge']:.0f} sequences (peak / DRAM bandwidth); mma.sync reaches only "
        f"{values['mma_sync_pct_of_dense']:.0f}% of that peak, so against the sustained bandwidth its ridge is "
        f"{values['ridge_point']:.0f} -- fewer sequences, because a lower roof meets the same bandwidth line "
        f"sooner. This GEMM reaches {values['plateau_pct_of_mma_sync']:.0f}% of the mma.sync rate (its "
        f"128 x 128 tiles do 64 FLOPs per byte they load from L2, and the configured L2 caps that at "
        f"{100 * values['l2_cap_flops'] / values['peak_flops']:.0f}%), so its own ridge is "
        f"{values['reached_ridge']:.0f}, and the measured knee is {values['knee']:.0f} sequences; beyond it "
        f"tokens/s stop growing. "
        + (f"8-bit weights halve the bytes per token (batch-1 step time {halves} of BF16's) and their mma.sync "
           f"runs twice the FLOPs per cycle on half the bytes, so their ridge in sequences stays where BF16's is "
           f"({ridges}). " if quantized else "")
        + "The last third of H100's dense peak needs wgmma (programs/gemm_wgmma, docs/tensor-cores.md)."
    )
