"""Lab `roofline`: sweep a kernel's FLOPs per byte across the ridge point of the config.

Kernel programs/labs/roofline_stream.cu: a grid-stride loop in which each element is a float4 loaded,
put through ``iterations`` rounds of 8 independent FMAs and stored (32 DRAM bytes, 16 x iterations + 4
FLOPs per element); each warp issues the load of its next element before computing the current one, so
its memory traffic overlaps its arithmetic. The arrays are larger than the slice's L2 so every byte goes
to DRAM. The grid is sized to the SMs' occupancy (every SM full of warps, each looping). For each point the
lab compares the achieved FLOP/s with the roofline min(peak FP32, intensity x sustained DRAM bandwidth) and
locates the measured knee: the plateau FLOP/s over the bandwidth measured on the memory-bound points.

Simplifications: the compute roof is the FP32 FMA peak; the kernel's loop overhead (a few integer and
branch instructions per 32 FMAs) keeps it ~10 % under that peak, which the table shows as the instruction-
mix ceiling (peak x FP32 share of issued warp-instructions); the loop is unrolled 16 times to keep that
share high.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.analytic.models import roofline
from gpusim.arch.config import WARP_SIZE
from gpusim.labs.support import LAB_PROGRAMS_DIR, LabResult, format_table, progress_items, pyplot, save

NAME = "roofline"
TITLE = "Roofline: FLOPs per byte against the ridge point"
DEFAULT_CONFIG = "h100-sxm"
PROGRAM = LAB_PROGRAMS_DIR / "roofline_stream.ptx"
ITERATIONS = (0, 1, 2, 4, 8, 16, 32, 64, 128, 256)
BLOCK_THREADS = 256
FLOPS_PER_ROUND_PER_THREAD = 16
BYTES_PER_THREAD = 32
FINAL_FLOPS_PER_THREAD = 4  # the four a + b sums before the store


def run(config: Any = None, plot_dir: str | Path | None = None, progress: bool = True, *, sms: int = 2,
        iterations: tuple = ITERATIONS, l2_multiple: float = 1.5) -> LabResult:
    """Sweep ``iterations``; arrays are ``l2_multiple`` x the slice's L2 so traffic reaches DRAM."""
    from gpusim.api.gpu import GPU

    gpu = GPU(config or DEFAULT_CONFIG, sms=sms)
    cfg = gpu.config
    kernel = gpu.load(str(PROGRAM))["roofline_stream"]
    roofs = roofline(cfg)
    bandwidth = roofs.bandwidth_bytes_per_s["dram_sustained"]
    peak = roofs.peak_flops["fp32"]
    ridge = roofs.ridge_point("fp32", "dram_sustained")
    threads = int(l2_multiple * cfg.l2_bytes / 16) // BLOCK_THREADS * BLOCK_THREADS
    source = gpu.to_device(np.random.default_rng(0).random(4 * threads, dtype=np.float32))
    out = gpu.zeros(4 * threads, np.float32)
    points = []
    blocks = cfg.sms * cfg.max_warps_per_sm * WARP_SIZE // BLOCK_THREADS
    for count in progress_items(iterations, NAME, progress):
        result = gpu.launch(kernel, grid=blocks, block=BLOCK_THREADS,
                            args=[source, out, np.int32(threads), np.int32(count)])
        metrics = result.metrics
        intensity = metrics["gpusim__arithmetic_intensity"]
        achieved = metrics["gpusim__flop_per_second"]
        ffma_warp_instructions = metrics["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] / WARP_SIZE
        ffma_share = ffma_warp_instructions / metrics["smsp__inst_executed.sum"]
        points.append({"iterations": count, "intensity": intensity,
                       "analytic_intensity": (FLOPS_PER_ROUND_PER_THREAD * count + FINAL_FLOPS_PER_THREAD)
                       / BYTES_PER_THREAD,
                       "achieved_flops": achieved, "roof_flops": roofs.attainable(intensity, "fp32",
                                                                                   "dram_sustained"),
                       "mix_ceiling_flops": peak * ffma_share,
                       "dram_pct": metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
                       "issue_pct": metrics["smsp__issue_active.avg.pct_of_peak_sustained_active"]})
    for point in points:
        point["pct_of_roof"] = 100.0 * point["achieved_flops"] / point["roof_flops"]
    memory_side = [p for p in points if p["intensity"] < ridge / 2]
    measured_bandwidth = float(np.median([p["achieved_flops"] / p["intensity"] for p in memory_side]))
    plateau = max(p["achieved_flops"] for p in points)
    knee = plateau / measured_bandwidth
    values = {"config": cfg.name, "sms": sms, "peak_flops": peak, "sustained_bandwidth": bandwidth,
              "ridge_point": ridge, "measured_bandwidth": measured_bandwidth, "plateau_flops": plateau,
              "knee": knee, "points": points}
    rows = [[p["iterations"], p["intensity"], p["analytic_intensity"], p["achieved_flops"] / 1e9,
             p["roof_flops"] / 1e9, p["pct_of_roof"], p["mix_ceiling_flops"] / 1e9, p["dram_pct"],
             p["issue_pct"]] for p in points]
    table = format_table(["rounds", "FLOP/B", "analytic FLOP/B", "GFLOP/s", "roof GFLOP/s", "% of roof",
                          "mix ceiling", "DRAM %", "issue %"], rows)
    table += (f"\n\nridge point {ridge:.1f} FLOP/B (peak {peak / 1e9:.0f} GFLOP/s / sustained DRAM "
              f"{bandwidth / 1e9:.1f} GB/s); measured knee {knee:.1f} FLOP/B "
              f"(plateau {plateau / 1e9:.0f} GFLOP/s / measured {measured_bandwidth / 1e9:.1f} GB/s)")
    lesson = (f"Left of the ridge point ({ridge:.1f} FLOP/B) FLOP/s grow in proportion to the intensity: "
              f"the kernel is memory-bound and DRAM runs near its sustained peak. Right of it the FLOP/s "
              f"flatten at the compute roof (less the loop overhead). The knee measured from the sweep "
              f"sits at {knee:.1f} FLOP/B. Near the knee neither roof is reached: memory and compute "
              f"overlap imperfectly, which is why real kernels round the corner of the roofline.")
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figure, axes = plt.subplots(figsize=(6, 4))
        grid = np.logspace(-1.5, 3, 100)
        axes.loglog(grid, [roofs.attainable(x, "fp32", "dram_sustained") / 1e9 for x in grid], "k-",
                    label="roofline")
        axes.loglog([p["intensity"] for p in points], [p["achieved_flops"] / 1e9 for p in points], "o",
                    label="simulated")
        axes.axvline(ridge, color="grey", linestyle=":", label="ridge point")
        axes.set_xlabel("FLOP per DRAM byte")
        axes.set_ylabel("GFLOP/s")
        axes.set_title(f"roofline, {cfg.name} x{sms} SMs")
        axes.legend()
        figures.append(save(figure, plot_dir, "roofline.png"))
    return LabResult(NAME, TITLE, table, lesson, values, figures)

