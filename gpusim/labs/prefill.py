"""Lab `prefill`: the same layer's weights, a long prompt against one decode step -- compute-bound on the
tensor cores against memory-bound on DRAM, with the report's verdict for each.

One linear layer, ``rows`` x ``k`` 16-bit weights (several times the slice's L2), multiplied on the tensor
cores by gpusim.labs.tensor_gemm on a slice of ``sms`` SMs, in three phases:

* **prefill**: ``prompt`` tokens at once through the BF16 weights with fp32 accumulators
  (programs/gemm_mma_wide.cu, gemm_bf16_mma_128x256: cp.async pieces interleaved with the mma.syncs,
  double-buffered ldmatrix fragments). Each weight byte serves every token, 2 x prompt / 2 = prompt FLOP per
  weight byte (512 here), and with the activations (held in the slice's L2, which is why the slice has 8
  SMs) and the outputs ~350 FLOP per DRAM byte: right of the mma.sync ridge, DRAM is not the limit. On
  h100-sxm as configured the L2 nearly is: a 128 x 256 tile does 85 FLOPs per byte it loads from L2, and 3815
  B/cycle (28.9 per SM) feed 90 % of the mma.sync rate (gpusim.labs.tensor_gemm.l2_cap_flops);
* **prefill, f16 accumulate**: the same prompt through the layer in FP16 with f16 accumulators
  (gemm_f16_mma_256x256): two accumulators per register let a 256 x 256 tile fit, 128 FLOPs per L2 byte, and
  the tensor pipe runs near the rate mma.sync attains, with the L2 close behind it;
* **prefill, wgmma** (Hopper configs only): a prompt through a layer at the size a 7B-class model has
  (``wgmma_rows`` x ``wgmma_k`` = 4096 x 4096, ``wgmma_prompt`` = 1024 tokens) on the whole chip
  (``wgmma_sms``: 0) by programs/gemm_hopper.cu's persistent kernel (wgmma m64n256k16 fed by TMA, 2 x 2
  clusters multicasting each K slice, bf16 output through TMA stores): 1/(1/4096 + 1/4096 + 1/1024) = 683 FLOP
  per compulsory DRAM byte, twice the dense ridge, and 64 K slices per tile against one pipeline fill and one
  epilogue: the tensor roof. The 8-SM slice cannot show it: its L2 share (3 MB) holds only a small layer's
  activations, so the layer it can run is near the ridge (294 FLOP per compulsory byte at 2048 x 1024 x 512)
  and each tile's 16 K slices are short against its fill and its epilogue;
* **decode**: one token through the BF16 weights (gemm_bf16_mma_4stage, 128 x 128 tiles: a wider token tile
  would spend more cycles on the zero columns than on the bytes). 1 FLOP per weight byte, ~240x left of the
  ridge: the weights stream from DRAM near its sustained peak and the tensor cores idle.

For each the lab prints FLOP per DRAM byte, TFLOP/s as % of the mma.sync rate and of the dense peak, DRAM
throughput as % of peak, tensor-pipe and L2 utilization, tokens per second, and the verdict of
gpusim.observe.report (memory-bound / compute-bound) next to the roofline's side of the ridge.

Simplifications: one GEMM stands for the layer (no attention, no activations' own traffic beyond the
GEMM's input); a token tile computes all its columns even for the one decode token, which costs FLOPs
but no bytes (the zero-filled rows are not read), and at 128 FLOP per weight byte is still left of the ridge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.analytic.models import roofline
from gpusim.labs.support import LabResult, format_table, progress_items, pyplot, save
from gpusim.labs.tensor_gemm import HOPPER_TYPES, LayerGemm, gemm_type, l2_cap_flops, layer_gemm
from gpusim.labs.tensor_roofline import WGMMA_NOTE
from gpusim.observe.report import verdict

NAME = "prefill"
TITLE = "Prefill vs decode: one layer's weights, right of the tensor ridge vs memory-bound on DRAM"
DEFAULT_CONFIG = "h100-sxm"
PHASE_LABELS = ("prefill", "prefill-f16acc", "prefill-wgmma", "decode")
PHASE_KINDS = {"prefill": "bf16-wide", "prefill-f16acc": "f16acc", "prefill-wgmma": "bf16-wgmma", "decode": "bf16"}
"""The gpusim.labs.tensor_gemm type each phase multiplies with."""
HOPPER_PHASES = ("prefill-wgmma",)
"""Phases that need wgmma and clusters: run only on a GPU that has them."""


def _measure(layer: LayerGemm, tokens: int, roofs: Any) -> dict:
    result, correct = layer.run(tokens)
    metrics = result.metrics
    flops = layer.flops(tokens)
    dram_bytes = metrics["dram__bytes_read.sum"] + metrics["dram__bytes_write.sum"]
    judged = verdict(result)
    kind = layer.kind
    achieved = flops / result.seconds
    mma_sync = roofs.peak_flops[kind.mma_sync]
    l2_cap = l2_cap_flops(layer.gpu.config, kind.name)
    l2_cap_with_stores = l2_cap_flops(layer.gpu.config, kind.name, layer.k)
    return {
        "kind": kind.name, "kernel": layer.kernel_name, "tile": f"{kind.tile_rows}x{kind.tile_tokens}",
        "accumulate": "f16" if kind.output == "f16" else "fp32",
        "tokens": tokens, "correct": correct, "seconds": result.seconds, "flops_per_s": achieved,
        "flop_per_weight_byte": flops / layer.weight_bytes, "intensity": flops / dram_bytes,
        "pct_of_mma_sync": 100.0 * achieved / mma_sync,
        "pct_of_dense": 100.0 * achieved / roofs.peak_flops[kind.dense],
        "dram_pct": metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
        "l2_pct": metrics["lts__throughput.avg.pct_of_peak_sustained_elapsed"],
        "tensor_pct": metrics["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"],
        "l2_cap_flops": l2_cap, "l2_cap_flops_with_stores": l2_cap_with_stores,
        "l2_cap_pct_of_mma_sync": 100.0 * l2_cap / mma_sync,
        "l2_cap_with_stores_pct": 100.0 * l2_cap_with_stores / mma_sync,
        "tokens_per_s": tokens / result.seconds,
        "roofline_side": roofs.bound(flops / dram_bytes, kind.dense if kind.name in HOPPER_TYPES else kind.mma_sync,
                                     "dram_sustained"),
        "verdict": judged.kind, "reason": judged.reason, "limiter": judged.limiter,
    }


def _wgmma_lesson(phases: dict, cfg: Any) -> str:
    """The wgmma phase's sentence (Hopper configs only)."""
    if "prefill-wgmma" not in phases:
        return (f" {cfg.name} has no wgmma or no room for 4-CTA clusters: the prefill-wgmma phase (Hopper) does "
                "not run.")
    wg = phases["prefill-wgmma"]
    kind = gemm_type(wg["kind"])
    ridge = roofline(cfg).ridge_point(kind.dense, "dram_sustained")
    return (f" On Hopper, a prompt at the size people run it ({wg['tokens']} tokens through a {wg['rows']} x "
            f"{wg['k']} layer, {wg['sms']} SMs) through programs/gemm_hopper.cu's persistent kernel ({wg['tile']} "
            f"tiles of wgmma m64n256k16 fed by TMA, each slice multicast across a 2 x 2 cluster: "
            f"{kind.flop_per_l2_byte * 2:.0f} FLOP per L2 byte, twice the tile's own) does "
            f"{wg['intensity']:.0f} FLOP per DRAM byte, {wg['intensity'] / ridge:.1f}x the {ridge:.0f} FLOP/B "
            f"dense ridge (sustained DRAM), and reaches {wg['pct_of_dense']:.0f}% of the dense peak with the "
            f"tensor pipe busy {wg['tensor_pct']:.0f}% of the time, the L2 at {wg['l2_pct']:.0f}% and DRAM at "
            f"{wg['dram_pct']:.0f}% (report: {wg['verdict']}, {wg['limiter']}): prefill at the tensor roof. Each "
            f"tile's {wg['k'] // 64} K slices keep the tensor pipe busy between one pipeline fill and one epilogue; "
            f"the slice above cannot show it, as its L2 share holds only a small layer's activations and a small "
            f"layer sits near the ridge")


def run(config: Any = None, plot_dir: str | Path | None = None, progress: bool = True, *, sms: int = 8,
        rows: int = 2048, k: int = 1024, prompt: int = 512, wgmma_rows: int = 4096, wgmma_k: int = 4096,
        wgmma_prompt: int = 1024, wgmma_sms: int = 0) -> LabResult:
    """A ``prompt``-token prefill (fp32, then f16 accumulation) and a one-token decode step through the same
    ``rows`` x ``k`` layer on ``sms`` SMs; on Hopper a ``wgmma_prompt``-token prefill through a ``wgmma_rows`` x
    ``wgmma_k`` layer on ``wgmma_sms`` SMs (0: the whole chip)."""
    from gpusim.api.gpu import GPU

    gpu = GPU(config or DEFAULT_CONFIG, sms=sms)
    cfg = gpu.config
    roofs = roofline(cfg)
    hopper_gpu = GPU(config or DEFAULT_CONFIG, sms=wgmma_sms or cfg.chip_sms)
    hopper = int(cfg.wgmma_n8_interval_cycles) > 0 and hopper_gpu.max_active_clusters((2, 2, 1)) > 0
    labels = tuple(label for label in PHASE_LABELS if hopper or label not in HOPPER_PHASES)
    layers = {PHASE_KINDS[label]: (layer_gemm(hopper_gpu, PHASE_KINDS[label], wgmma_rows, wgmma_k)
                                   if label in HOPPER_PHASES else layer_gemm(gpu, PHASE_KINDS[label], rows, k))
              for label in labels}
    tokens = {label: 1 if label == "decode" else wgmma_prompt if label in HOPPER_PHASES else prompt
              for label in labels}
    phases = {}
    for label in progress_items(labels, NAME, progress):
        layer = layers[PHASE_KINDS[label]]
        phases[label] = _measure(layer, tokens[label], roofline(layer.gpu.config))
        phases[label].update(sms=layer.gpu.config.sms, rows=layer.rows, k=layer.k)
    ridge = roofs.ridge_point("mma_sync_bf16", "dram_sustained")
    dense_ridge = roofs.ridge_point("tensor_bf16", "dram")
    mma_pct_of_dense = 100.0 * roofs.peak_flops["mma_sync_bf16"] / roofs.peak_flops["tensor_bf16"]
    weight_bytes = layers["bf16"].weight_bytes
    values = {"config": cfg.name, "sms": sms, "rows": rows, "k": k, "prompt": prompt,
              "weight_bytes": weight_bytes, "phases": phases, "mma_sync_ridge": ridge,
              "dense_ridge": dense_ridge, "mma_sync_pct_of_dense": mma_pct_of_dense}
    table = format_table(
        ["phase", "layer", "SMs", "tile", "acc", "tokens", "FLOP/weight B", "FLOP/DRAM B", "step us", "TFLOP/s",
         "% of mma.sync", "% of dense", "tensor %", "L2 %", "DRAM %", "roofline", "report verdict"],
        [[label, f"{p['rows']}x{p['k']}", p["sms"], p["tile"], p["accumulate"], p["tokens"],
          p["flop_per_weight_byte"], p["intensity"], p["seconds"] * 1e6, p["flops_per_s"] / 1e12,
          p["pct_of_mma_sync"], p["pct_of_dense"], p["tensor_pct"], p["l2_pct"], p["dram_pct"],
          p["roofline_side"], f"{p['verdict']} ({p['limiter']})"]
         for label, p in phases.items()])
    table += (f"\n\n{rows} x {k} 16-bit weights ({weight_bytes / 1e6:.1f} MB) on {sms} SMs of {cfg.name}"
              + (f" (prefill-wgmma: {wgmma_rows} x {wgmma_k}, {2 * wgmma_rows * wgmma_k / 1e6:.1f} MB, on "
                 f"{phases['prefill-wgmma']['sms']} SMs)" if "prefill-wgmma" in phases else "")
              + f"; mma.sync ridge {ridge:.0f} FLOP/B (vs sustained DRAM), dense BF16 ridge {dense_ridge:.0f} "
              f"({roofs.ridge_point('tensor_bf16', 'dram_sustained'):.0f} vs sustained DRAM)\n"
              + "\n".join(f"{label}: {p['reason']}" for label, p in phases.items()))
    l2_rate = cfg.l2_bytes_per_cycle * cfg.clock_hz
    for label in PHASE_LABELS[:2]:
        p = phases[label]
        kind = gemm_type(p["kind"])
        table += (f"\nL2 cap of the {p['tile']} tile ({label}): {kind.flop_per_l2_byte:.0f} FLOP per L2 byte x "
                  f"{l2_rate / 1e9:.0f} GB/s = {p['l2_cap_flops'] / 1e12:.2f} TFLOP/s, "
                  f"{p['l2_cap_pct_of_mma_sync']:.0f}% of the mma.sync rate; with its output stores over "
                  f"k = {k}: {kind.flop_per_l2_byte_with_stores(k):.0f} FLOP/B, {p['l2_cap_with_stores_pct']:.0f}%")
    prefill, wide, decode = phases["prefill"], phases["prefill-f16acc"], phases["decode"]
    lesson = (
        f"The same weights, two regimes. Prefill pushes {prompt} tokens through each weight byte "
        f"({prefill['flop_per_weight_byte']:.0f} FLOP per weight byte, {prefill['intensity']:.0f} per DRAM byte "
        f"with the activations and outputs: right of the {ridge:.0f} FLOP/B ridge, DRAM at "
        f"{prefill['dram_pct']:.0f}%). With fp32 accumulators the widest tile that fits the registers is "
        f"{prefill['tile']}, {gemm_type(prefill['kind']).flop_per_l2_byte:.0f} FLOPs per byte it loads from L2; "
        f"the configured L2 feeds {cfg.l2_bytes_per_cycle / cfg.sms:.1f} B/cycle per SM, so the run stops at "
        f"{prefill['pct_of_mma_sync']:.0f}% of the mma.sync rate (cap {prefill['l2_cap_pct_of_mma_sync']:.0f}%) "
        f"and the report says {prefill['verdict']} ({prefill['limiter']}). With f16 accumulators a {wide['tile']} "
        f"tile fits ({gemm_type(wide['kind']).flop_per_l2_byte:.0f} FLOP per L2 byte, "
        f"{gemm_type(wide['kind']).flop_per_l2_byte_with_stores(k):.0f} with its output over k = {k}, a cap of "
        f"{wide['l2_cap_with_stores_pct']:.0f}%): the tensor pipe is busy {wide['tensor_pct']:.0f}% of the time and "
        f"the run reaches {wide['pct_of_mma_sync']:.0f}% of the mma.sync rate ({wide['pct_of_dense']:.0f}% of the "
        f"dense peak), near the tensor roof, with the L2 at {wide['l2_pct']:.0f}%: "
        + (f"the report still names the L2, the busiest unit, ahead of the tensor pipe ({wide['verdict']}, "
           f"{wide['limiter']})" if "L2" in wide["limiter"] else
           f"the report says {wide['verdict']} ({wide['limiter']})")
        + f"; a deeper K "
        f"amortizes the output and the first slices' wait (tests/test_tensor_gemm_wide.py holds k = 8192 to at "
        f"least 80% of the rate). Decode pushes one token "
        f"({decode['flop_per_weight_byte']:.0f} FLOP per byte, {ridge / decode['flop_per_weight_byte']:.0f}x left "
        f"of the ridge): DRAM runs at {decode['dram_pct']:.0f}% of its peak streaming the weights, the tensor "
        f"cores idle, and the report says {decode['verdict']} ({decode['limiter']}). Decode is fixed with bytes "
        f"(batching, quantization), prefill with FLOPs and on-chip reuse: Hopper's TMA multicast and wgmma's "
        f"larger tiles take the L2 out of the way. " + WGMMA_NOTE.format(pct=mma_pct_of_dense) + "."
        + _wgmma_lesson(phases, cfg)
    )
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figure, axes = plt.subplots(figsize=(7, 3.5))
        shown = list(phases)
        positions = np.arange(len(shown))
        axes.bar(positions - 0.2, [phases[p]["pct_of_mma_sync"] for p in shown], width=0.2,
                 label="% of mma.sync rate")
        axes.bar(positions, [phases[p]["l2_pct"] for p in shown], width=0.2, label="L2 % of peak")
        axes.bar(positions + 0.2, [phases[p]["dram_pct"] for p in shown], width=0.2, label="DRAM % of peak")
        axes.set_xticks(positions, [f"{p}\n({phases[p]['verdict']})" for p in shown])
        axes.set_ylim(0, 105)
        axes.legend()
        figures.append(save(figure, plot_dir, "prefill.png"))
    return LabResult(NAME, TITLE, table, lesson, values, figures)
