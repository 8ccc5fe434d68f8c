"""Lab `flash-attention`: attention as three kernels that round-trip the n x n scores through DRAM, against
one FlashAttention-2-style kernel that keeps them on chip (programs/labs/attention.cu, gpusim.labs.attention)
and, on GPUs with wgmma, a FlashAttention-3-style one (programs/labs/attention_hopper.cu).

For each sequence length n, ``heads`` heads of dimension 64 (fp16 in, fp32 accumulate, fp16 out) on a slice
of ``sms`` SMs:

* **naive**: ``attn_scores`` writes S = scale Q K^T in fp32 (4 n^2 bytes per head), ``attn_softmax`` reads it
  and writes P in fp16 (2 n^2), ``attn_pv`` reads P and computes O = P V: 12 n^2 + 8 n d bytes per head, and
  4 n^2 d FLOPs, so ~21 FLOP per byte at d = 64, far left of the mma.sync ridge: DRAM-bound;
* **fused**: ``attn_flash``, one block per (head, 128-row Q tile); K and V tiles double-buffered in shared
  memory by cp.async, S in registers by mma.sync, the online softmax (running max and sum), P re-used in
  registers as the A operand of O += P V. It moves Q, K, V and O once, 8 n d bytes per head: n / 2 FLOP per
  byte, so at n = 1024 already right of the ridge;
* **fused (wgmma+TMA)**: ``attn_flash3`` (on GPUs with wgmma: h100-sxm, the default, has it), FlashAttention-3's
  structure: persistent blocks of 384 threads (one per SM) looping over the (head, 128-row Q tile) pairs; a
  producer warpgroup loads each Q tile once and 128-key tiles of K and V by TMA into 128-byte-swizzled buffers
  through a two-stage mbarrier pipeline; two consumer warpgroups (64 Q rows each) compute S = Q K^T with wgmma
  (both operands in shared memory), the online softmax in registers, and O += P V with wgmma (P from registers, V
  as an MN-major shared operand), one tile's softmax overlapping the next tile's products; O leaves by a TMA
  store. The same bytes as the fused kernel (Q, K, V and O once); its compute roof is the dense tensor peak,
  which wgmma reaches and mma.sync does not.

The lab reports each kernel's measured DRAM bytes (reads, writes and the write-back of what it left dirty in
L2), the analytic bytes (gpusim.labs.attention.analytic_bytes), time, achieved TFLOP/s and its share of the
mma.sync rate and of the dense tensor peak, DRAM and tensor-pipe utilization, the side of the roofline it sits
on, and the verdict of gpusim.observe.report with its limiter; each output is checked against numpy within a
derived error bound.

Simplifications: those of gpusim.labs.attention (no causal mask, head dimension 64); the naive kernels are
timed back to back without launch overhead and each starts with cold caches (so a tail of S left in L2 is not
reused by the next kernel); the wgmma kernel has FlashAttention-3's warp specialisation, TMA pipeline and
wgmma with P in registers, but not its overlap of one tile's softmax with the next tile's Q K^T inside a
warpgroup, its ping-pong scheduling of the two warpgroups by named barriers, or its FP8 path; its roofline side
is judged against the dense tensor peak, the others' against the mma.sync rate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.analytic.models import roofline
from gpusim.labs.attention import (
    FLASH_ROWS,
    FUSED_KERNEL,
    HEAD_DIM,
    HOPPER_KERNEL,
    Attention,
    analytic_bytes,
    has_wgmma,
    kernel_flops,
)
from gpusim.labs.support import LabResult, format_table, progress_items, pyplot, save
from gpusim.observe.report import verdict

NAME = "flash-attention"
TITLE = "FlashAttention: the n x n scores never leave the chip"
DEFAULT_CONFIG = "h100-sxm"
TILES_PER_SM = 8
"""With ``heads=None`` each length gets enough heads for the fused grid to have this many Q tiles per SM."""
CAUSAL_NOTE = (" Causal: the naive path still computes and moves every score (the masked ones as -inf) for half the "
               "useful FLOPs, while the fused kernel skips the key tiles past each Q tile's last row, about half "
               "its work, and starts with the Q tiles that have the most.")
PRECISION = "mma_sync_fp16"
DENSE = "tensor_fp16"
"""The dense tensor peak (wgmma's rate): the wgmma kernel's compute roof."""
HOPPER_LABEL = "fused (wgmma+TMA)"
LEVEL = "dram_sustained"


def heads_for(n: int, sms: int) -> int:
    """The heads that give the fused kernel at least TILES_PER_SM Q tiles (blocks) per SM: several waves."""
    return max(1, -(-TILES_PER_SM * sms // (n // FLASH_ROWS)))


def _measure(runs: list, n: int, heads: int, roofs: Any, causal: bool) -> dict:
    """One kernel or a sequence of kernels (summed): bytes, time, rate, utilization, verdict."""
    label = "naive" if len(runs) > 1 else runs[0].name
    precision = DENSE if label == HOPPER_KERNEL else PRECISION
    work, predicted = kernel_flops(n, heads, causal=causal)[label], analytic_bytes(n, heads)[label]
    seconds = sum(k.run.seconds for k in runs)
    cycles = sum(k.run.cycles for k in runs)
    dram_bytes = sum(k.dram_bytes for k in runs)
    longest = max(runs, key=lambda k: k.run.seconds)
    judged = verdict(longest.run)

    def weighted(metric: str) -> float:  # a utilization over the sequence: each kernel's by its time
        return sum(k.run.metrics[metric] * k.run.seconds for k in runs) / seconds

    achieved = work / seconds
    return {
        "kernel": label, "seconds": seconds, "cycles": cycles, "dram_bytes": dram_bytes,
        "analytic_bytes": predicted, "bytes_vs_analytic": dram_bytes / predicted, "flops": work,
        "flops_per_s": achieved, "pct_of_mma_sync": 100.0 * achieved / roofs.peak_flops[PRECISION],
        "pct_of_dense": 100.0 * achieved / roofs.peak_flops[DENSE],
        "intensity": work / dram_bytes,
        "roofline_side": roofs.bound(work / dram_bytes, precision, LEVEL) if work else "memory",
        "dram_pct": weighted("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
        "tensor_pct": weighted("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
        "tensor_flops": sum(k.run.metrics["gpusim__tensor_flops_src_fp16_dst_fp32.sum"] for k in runs),
        "verdict": judged.kind, "limiter": judged.limiter, "reason": judged.reason,
        "verdict_of": longest.name,
    }


def measure_length(gpu: Any, n: int, heads: int, roofs: Any, causal: bool = False) -> dict:
    """Every path at one length: per-kernel figures, the naive sum, the fused kernel(s), errors and ratios; the
    wgmma kernel's ("hopper", "hopper_error", ...) when the GPU has wgmma."""
    attention = Attention(gpu, n, heads, causal=causal)
    expected, bound = attention.expected()
    naive_runs, naive_out = attention.naive()
    fused_run, fused_out = attention.fused()
    kernels = {k.name: _measure([k], n, heads, roofs, causal) for k in naive_runs}
    naive = _measure(naive_runs, n, heads, roofs, causal)
    fused = _measure([fused_run], n, heads, roofs, causal)
    predicted = analytic_bytes(n, heads)
    naive_error = float(np.abs(naive_out - expected).max())
    fused_error = float(np.abs(fused_out - expected).max())
    point = {
        "n": n, "heads": heads, "kernels": kernels, "naive": naive, "fused": fused,
        "bytes_ratio": fused["dram_bytes"] / naive["dram_bytes"],
        "analytic_ratio": predicted[FUSED_KERNEL] / predicted["naive"],
        "speedup": naive["seconds"] / fused["seconds"],
        "naive_error": naive_error, "fused_error": fused_error, "error_bound": bound,
        "correct": naive_error <= bound and fused_error <= bound,
    }
    if has_wgmma(gpu.config):
        hopper_run, hopper_out = attention.fused_hopper()
        hopper = _measure([hopper_run], n, heads, roofs, causal)
        hopper_error = float(np.abs(hopper_out - expected).max())
        point.update({"hopper": hopper, "hopper_error": hopper_error,
                      "hopper_bytes_ratio": hopper["dram_bytes"] / naive["dram_bytes"],
                      "hopper_analytic_ratio": predicted[HOPPER_KERNEL] / predicted["naive"],
                      "hopper_speedup": naive["seconds"] / hopper["seconds"],
                      "hopper_vs_fused": fused["seconds"] / hopper["seconds"],
                      "correct": point["correct"] and hopper_error <= bound})
    return point


def _rows(point: dict) -> list[list[object]]:
    rows = []
    hopper = [(HOPPER_LABEL, point["hopper"])] if "hopper" in point else []
    for label, p in [*point["kernels"].items(), ("naive (3 kernels)", point["naive"]),
                     ("fused", point["fused"]), *hopper]:
        tflops = p["flops_per_s"] / 1e12 if p["flops"] else "-"
        rows.append([point["n"], point["heads"], label, p["dram_bytes"] / 1e6, p["analytic_bytes"] / 1e6,
                     p["seconds"] * 1e6, tflops, p["pct_of_mma_sync"], p["pct_of_dense"], p["dram_pct"],
                     p["tensor_pct"],
                     p["roofline_side"], f"{p['verdict']} ({p['limiter']})"])
    return rows


def _lesson(points: list[dict], cfg: Any, sms: int, ridge: float, causal: bool) -> str:
    last = points[-1]
    naive, fused = last["naive"], last["fused"]
    useful = " (about half of them useful: causal)" if causal else ""
    per_length = "; ".join(
        f"n = {p['n']}: {100 * p['bytes_ratio']:.1f}% of the bytes (analytic {100 * p['analytic_ratio']:.1f}%), "
        f"{p['speedup']:.1f}x faster, {p['fused']['flops_per_s'] / 1e12:.2f} against "
        f"{p['naive']['flops_per_s'] / 1e12:.2f} TFLOP/s" for p in points)
    return (
        f"Attention's n x n scores are the bytes. The naive path writes S in fp32, reads it back, writes P in "
        f"fp16 and reads that: 12 n^2 bytes per head against 4 n^2 d FLOPs{useful}, "
        f"{naive['intensity']:.0f} FLOP per DRAM byte at n = {last['n']}, far left of the {ridge:.0f} FLOP/B "
        f"mma.sync ridge: DRAM runs at {naive['dram_pct']:.0f}% and the report says {naive['verdict']} "
        f"({naive['limiter']}) for its longest kernel, {naive['verdict_of']}. The fused kernel keeps each "
        f"{FLASH_ROWS} x 64 tile of S and P in registers, rescales its running output when a row's max grows (the "
        f"online softmax) and reads K and V from L2 for every Q tile after the first: 8 n d bytes per head "
        f"({100 * fused['bytes_vs_analytic']:.0f}% of that measured at n = {last['n']}), "
        f"{fused['intensity']:.0f} FLOP per byte, and its limiter is {fused['limiter']} ({fused['verdict']}, "
        f"tensor pipe {fused['tensor_pct']:.0f}% busy, {fused['pct_of_mma_sync']:.0f}% of the mma.sync rate). "
        f"Fused against naive on {sms} SMs of {cfg.name}: {per_length}. Both outputs match numpy within the "
        f"rounding bound (max error {max(p['fused_error'] for p in points):.1e} fused, "
        f"{max(p['naive_error'] for p in points):.1e} naive)." + _hopper_lesson(points, cfg))


def _hopper_lesson(points: list[dict], cfg: Any) -> str:
    if "hopper" not in points[-1]:
        return " This GPU has no wgmma, so FlashAttention-3's Hopper kernel is not run."
    last = points[-1]
    hopper = last["hopper"]
    per_length = "; ".join(
        f"n = {p['n']}: {p['hopper']['flops_per_s'] / 1e12:.2f} TFLOP/s, {p['hopper_vs_fused']:.2f}x the "
        f"mma.sync kernel's speed" for p in points)
    # one exponential per (query, key) pair against 4 d tensor FLOPs: their time ratio at the SM's two rates
    exp_vs_mma = cfg.tensor_flops_per_cycle_per_sm / (4 * HEAD_DIM * cfg.sfu_lanes_per_sm)
    return (
        f" FlashAttention-3's Hopper kernel moves the same bytes ({100 * last['hopper_bytes_ratio']:.1f}% of "
        f"naive's at n = {last['n']}) with a TMA producer warpgroup and two wgmma consumer warpgroups that "
        f"overlap one tile's softmax with the next tile's products and take turns on the tensor cores: "
        f"{per_length}; at n = {last['n']} it reaches {hopper['pct_of_dense']:.0f}% of the dense tensor peak "
        f"(tensor pipe {hopper['tensor_pct']:.0f}% busy), {hopper['verdict']} ({hopper['limiter']}). At d = "
        f"{HEAD_DIM} the softmax's one exponential per {4 * HEAD_DIM} tensor FLOPs takes {exp_vs_mma:.1f}x the "
        f"products' time on {cfg.sfu_lanes_per_sm} special-function lanes against "
        f"{cfg.tensor_flops_per_cycle_per_sm} tensor FLOP per cycle per SM, which is why FlashAttention-3 "
        f"hides one behind the other (max error {max(p['hopper_error'] for p in points):.1e}).")


def run(config: Any = None, plot_dir: str | Path | None = None, progress: bool = True, *, sms: int = 4,
        lengths: tuple = (1024, 2048, 4096), heads: int | None = None, causal: bool = False) -> LabResult:
    """Naive and fused attention at each sequence length of ``lengths``; ``heads=None`` picks enough heads per
    length to give the fused kernel TILES_PER_SM Q tiles per SM."""
    from gpusim.api.gpu import GPU

    gpu = GPU(config or DEFAULT_CONFIG, sms=sms)
    cfg = gpu.config
    roofs = roofline(cfg)
    ridge = roofs.ridge_point(PRECISION, LEVEL)
    points = [measure_length(gpu, n, heads or heads_for(n, sms), roofs, causal)
              for n in progress_items(lengths, NAME, progress)]
    values = {"config": cfg.name, "sms": sms, "lengths": tuple(lengths), "causal": causal, "ridge": ridge,
              "mma_sync_flops": roofs.peak_flops[PRECISION], "dense_flops": roofs.peak_flops[DENSE],
              "points": points}
    table = format_table(
        ["n", "heads", "kernel", "DRAM MB", "analytic MB", "time us", "TFLOP/s", "% of mma.sync", "% of dense",
         "DRAM %",
         "tensor %", "roofline", "report verdict"],
        [row for point in points for row in _rows(point)])
    table += "\n\n" + ("causal: each query weighs the keys up to its own position; TFLOP/s count those pairs\n"
                         if causal else "") + "\n".join(
        f"n = {p['n']}: fused / naive DRAM bytes {p['bytes_ratio']:.4f} (analytic {p['analytic_ratio']:.4f}), "
        f"speedup {p['speedup']:.2f}x, max error naive {p['naive_error']:.1e} fused {p['fused_error']:.1e} "
        f"(bound {p['error_bound']:.1e})" + (
            f"; wgmma+TMA / naive DRAM bytes {p['hopper_bytes_ratio']:.4f}, speedup {p['hopper_speedup']:.2f}x "
            f"({p['hopper_vs_fused']:.2f}x the fused kernel's), max error {p['hopper_error']:.1e}"
            if "hopper" in p else "") for p in points)
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figures.append(_plot(plt, points, plot_dir))
    lesson = _lesson(points, cfg, sms, ridge, causal) + (CAUSAL_NOTE if causal else "")
    return LabResult(NAME, TITLE, table, lesson, values, figures)


def _plot(plt: Any, points: list[dict], plot_dir: str | Path) -> Path:
    figure, (bytes_axes, time_axes) = plt.subplots(1, 2, figsize=(9, 3.5))
    positions = np.arange(len(points))
    labels = [str(p["n"]) for p in points]
    for axes, key, scale, unit in ((bytes_axes, "dram_bytes", 1e-6, "DRAM MB"), (time_axes, "seconds", 1e6, "us")):
        paths = [("naive", "naive (3 kernels)"), ("fused", "fused"),
                 *([("hopper", HOPPER_LABEL)] if "hopper" in points[0] else [])]
        width = 0.8 / len(paths)
        for index, (path, label) in enumerate(paths):
            axes.bar(positions + (index - (len(paths) - 1) / 2) * width, [p[path][key] * scale for p in points],
                     width=width, label=label)
        axes.set_xticks(positions, labels)
        axes.set_xlabel("sequence length")
        axes.set_ylabel(unit)
        axes.set_yscale("log")
        axes.set_title(f"{'DRAM bytes' if key == 'dram_bytes' else 'time'} per length (log scale)")
    bytes_axes.legend()
    return save(figure, plot_dir, "flash_attention.png")
