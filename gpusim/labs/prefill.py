"""Lab `prefill`: the same layer's weights, a long prompt against one decode step -- compute-bound on the
tensor cores against memory-bound on DRAM, with the report's verdict for each.

One linear layer, ``rows`` x ``k`` BF16 weights (several times the slice's L2), multiplied on the tensor
cores by gpusim.labs.tensor_gemm (programs/gemm_bf16_mma.cu: cp.async double buffering, ldmatrix,
mma.sync m16n8k16) on a slice of ``sms`` SMs:

* **prefill**: ``prompt`` tokens at once. Each weight byte serves every token, 2 x prompt / 2 = prompt
  FLOP per weight byte (~1000 here), and with the activations (held in the slice's L2, which is why the slice
  has 8 SMs) and the bf16 outputs ~350 FLOP per DRAM byte: right of the mma.sync ridge, DRAM is not the
  limit. What is, on h100-sxm as configured, is the L2: a 128 x 128 tile does 64 FLOPs per byte it loads from
  L2, and 2500 B/cycle (18.9 per SM) feed 45 % of the mma.sync rate (gpusim.labs.tensor_gemm.l2_cap_flops);
  the lab prints that cap and the report's verdict names the L2;
* **decode**: one token. 1 FLOP per weight byte, ~240x left of that ridge: the weights stream from DRAM
  near its sustained peak and the tensor cores idle.

For each the lab prints FLOP per DRAM byte, TFLOP/s as % of the mma.sync rate and of the dense peak, DRAM
throughput as % of peak, tokens per second, and the verdict of gpusim.observe.report (memory-bound /
compute-bound) next to the roofline's side of the ridge.

Simplifications: one GEMM stands for the layer (no attention, no activations' own traffic beyond the
GEMM's input); the 128-token tile computes 128 columns even for the one decode token, which costs FLOPs
but no bytes (the zero-filled rows are not read), and at 128 FLOP per weight byte is still left of the ridge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpusim.analytic.models import roofline
from gpusim.labs.support import LabResult, format_table, progress_items, pyplot, save
from gpusim.labs.tensor_gemm import TILE_FLOP_PER_L2_BYTE, LayerGemm, l2_cap_flops
from gpusim.labs.tensor_roofline import WGMMA_NOTE
from gpusim.observe.report import verdict

NAME = "prefill"
TITLE = "Prefill vs decode: one layer's weights, right of the tensor ridge vs memory-bound on DRAM"
DEFAULT_CONFIG = "h100-sxm"
PHASE_LABELS = ("prefill", "decode")


def _measure(layer: LayerGemm, tokens: int, roofs: Any) -> dict:
    result, correct = layer.run(tokens)
    metrics = result.metrics
    flops = layer.flops(tokens)
    dram_bytes = metrics["dram__bytes_read.sum"] + metrics["dram__bytes_write.sum"]
    judged = verdict(result)
    kind = layer.kind
    achieved = flops / result.seconds
    return {
        "tokens": tokens, "correct": correct, "seconds": result.seconds, "flops_per_s": achieved,
        "flop_per_weight_byte": flops / layer.weight_bytes, "intensity": flops / dram_bytes,
        "pct_of_mma_sync": 100.0 * achieved / roofs.peak_flops[kind.mma_sync],
        "pct_of_dense": 100.0 * achieved / roofs.peak_flops[kind.dense],
        "dram_pct": metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
        "tokens_per_s": tokens / result.seconds,
        "roofline_side": roofs.bound(flops / dram_bytes, kind.mma_sync, "dram_sustained"),
        "verdict": judged.kind, "reason": judged.reason, "limiter": judged.limiter,
    }


def run(config: Any = None, plot_dir: str | Path | None = None, progress: bool = True, *, sms: int = 8,
        rows: int = 2048, k: int = 1024, prompt: int = 1024) -> LabResult:
    """A ``prompt``-token prefill and a one-token decode step through the same ``rows`` x ``k`` BF16 layer."""
    from gpusim.api.gpu import GPU

    gpu = GPU(config or DEFAULT_CONFIG, sms=sms)
    cfg = gpu.config
    roofs = roofline(cfg)
    layer = LayerGemm(gpu, "bf16", rows, k)
    phases = {}
    for label in progress_items(PHASE_LABELS, NAME, progress):
        phases[label] = _measure(layer, prompt if label == "prefill" else 1, roofs)
    ridge = roofs.ridge_point("mma_sync_bf16", "dram_sustained")
    dense_ridge = roofs.ridge_point("tensor_bf16", "dram")
    mma_pct_of_dense = 100.0 * roofs.peak_flops["mma_sync_bf16"] / roofs.peak_flops["tensor_bf16"]
    values = {"config": cfg.name, "sms": sms, "rows": rows, "k": k, "prompt": prompt,
              "weight_bytes": layer.weight_bytes, "phases": phases, "mma_sync_ridge": ridge,
              "dense_ridge": dense_ridge, "mma_sync_pct_of_dense": mma_pct_of_dense}
    table = format_table(
        ["phase", "tokens", "FLOP/weight B", "FLOP/DRAM B", "step us", "TFLOP/s", "% of mma.sync",
         "% of dense", "DRAM %", "tokens/s", "roofline", "report verdict"],
        [[label, p["tokens"], p["flop_per_weight_byte"], p["intensity"], p["seconds"] * 1e6, p["flops_per_s"] / 1e12,
          p["pct_of_mma_sync"], p["pct_of_dense"], p["dram_pct"], p["tokens_per_s"], p["roofline_side"],
          p["verdict"]] for label, p in phases.items()])
    table += (f"\n\n{rows} x {k} BF16 weights ({layer.weight_bytes / 1e6:.1f} MB) on {sms} SMs of {cfg.name}; "
              f"mma.sync ridge {ridge:.0f} FLOP/B (vs sustained DRAM), dense BF16 ridge {dense_ridge:.0f}\n"
              + "\n".join(f"{label}: {p['reason']}" for label, p in phases.items()))
    prefill, decode = phases["prefill"], phases["decode"]
    l2_cap = l2_cap_flops(cfg)
    values["l2_cap_flops"] = l2_cap
    values["l2_cap_pct_of_mma_sync"] = 100.0 * l2_cap / roofs.peak_flops["mma_sync_bf16"]
    table += (f"\nL2 cap of the 128 x 128 tile: {TILE_FLOP_PER_L2_BYTE:.0f} FLOP per L2 byte x "
              f"{cfg.l2_bytes_per_cycle * cfg.clock_hz / 1e9:.0f} GB/s = {l2_cap / 1e12:.2f} TFLOP/s, "
              f"{values['l2_cap_pct_of_mma_sync']:.0f}% of the mma.sync rate")
    if prefill["verdict"] == "compute-bound":
        prefill_text = (f"the tensor pipe is the limit, at {prefill['pct_of_mma_sync']:.0f}% of the rate mma.sync "
                        f"attains ({prefill['pct_of_dense']:.0f}% of the dense BF16 peak), and the report says "
                        f"{prefill['verdict']}")
    else:
        prefill_text = (
            f"DRAM is no longer the limit (it runs at {prefill['dram_pct']:.0f}% of its peak), but the report says "
            f"{prefill['verdict']}: {prefill['reason']}. A 128 x 128 tile takes {TILE_FLOP_PER_L2_BYTE:.0f} "
            f"FLOPs per byte it loads from L2, and the configured L2 feeds "
            f"{cfg.l2_bytes_per_cycle / cfg.sms:.1f} B/cycle per SM, so mma.sync GEMMs top out near "
            f"{values['l2_cap_pct_of_mma_sync']:.0f}% of the mma.sync rate; the run reaches "
            f"{prefill['pct_of_mma_sync']:.0f}% ({prefill['pct_of_dense']:.0f}% of the dense peak). Hopper answers "
            f"with TMA multicast and wgmma's larger tiles")
    lesson = (
        f"The same weights, two regimes. Prefill pushes {prompt} tokens through each weight byte "
        f"({prefill['flop_per_weight_byte']:.0f} FLOP per weight byte, {prefill['intensity']:.0f} per DRAM byte "
        f"with the activations and outputs: right of the {ridge:.0f} FLOP/B ridge): {prefill_text}. Decode pushes "
        f"one token ({decode['flop_per_weight_byte']:.0f} FLOP per byte, {ridge / decode['flop_per_weight_byte']:.0f}x "
        f"left of the ridge): DRAM runs at {decode['dram_pct']:.0f}% of its peak streaming the weights, the tensor "
        f"cores idle, and the report says {decode['verdict']}. Decode is fixed with bytes (batching, "
        f"quantization), prefill with FLOPs and on-chip reuse. " + WGMMA_NOTE.format(pct=mma_pct_of_dense) + "."
    )
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figure, axes = plt.subplots(figsize=(6, 3.5))
        labels = list(phases)
        axes.bar([0, 1], [phases[p]["pct_of_mma_sync"] for p in labels], width=0.35, label="% of mma.sync rate")
        axes.bar([0.35, 1.35], [phases[p]["dram_pct"] for p in labels], width=0.35, label="DRAM % of peak")
        axes.set_xticks([0.175, 1.175], [f"{p}\n({phases[p]['verdict']})" for p in labels])
        axes.set_ylim(0, 105)
        axes.legend()
        figures.append(save(figure, plot_dir, "prefill.png"))
    return LabResult(NAME, TITLE, table, lesson, values, figures)
