"""Lab `divergence`: the same work under a uniform branch, an intra-warp branch (odd lanes take the other
path) and an inter-warp branch (odd warps take it), programs/labs/branches.cu.

SIMT runs one instruction for a whole warp: when lanes of one warp disagree, the warp runs both paths one
after the other with half its lanes masked off, so time doubles and SIMD efficiency (active lanes per
issued warp-instruction / 32) halves in the branch. When whole warps disagree, each warp still runs one
path at full width: no cost. Analytic expectation: time ratio intra / uniform = (2W + s) / (W + s) and
inter / uniform = 1, with W the per-path instructions and s the straight-line instructions per warp.

Simplifications: the kernel is issue-bound (dependent FMAs, many warps), so time follows issued
instructions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.arch.config import WARP_SIZE
from gpusim.labs.support import LAB_PROGRAMS_DIR, LabResult, format_table, progress_items, pyplot, save

NAME = "divergence"
TITLE = "Branch divergence: uniform, intra-warp and inter-warp branches"
DEFAULT_CONFIG = "h100-sxm"
MODES = {"uniform": 0, "intra-warp": 1, "inter-warp": 2}
BLOCK_THREADS = 256


def run(config: Any = None, plot_dir: str | Path | None = None, progress: bool = True, *, sms: int = 1,
        blocks_per_sm: int = 8, work: int = 64) -> LabResult:
    from gpusim.api.gpu import GPU

    gpu = GPU(config or DEFAULT_CONFIG, sms=sms)
    cfg = gpu.config
    kernel = gpu.load(str(LAB_PROGRAMS_DIR / "branches.ptx"))["branches"]
    blocks = blocks_per_sm * sms
    out = gpu.zeros(blocks * BLOCK_THREADS, np.float32)
    results = {}
    for name in progress_items(MODES, NAME, progress):
        result = gpu.launch(kernel, grid=blocks, block=BLOCK_THREADS,
                            args=[out, np.int32(MODES[name]), np.int32(work)])
        metrics = result.metrics
        results[name] = {"cycles": result.cycles, "warp_instructions": metrics["smsp__inst_executed.sum"],
                         "simd_efficiency": metrics["smsp__thread_inst_executed_per_inst_executed.ratio"]
                         / WARP_SIZE}
    uniform = results["uniform"]
    for entry in results.values():
        entry["time_ratio"] = entry["cycles"] / uniform["cycles"]
        entry["instruction_ratio"] = entry["warp_instructions"] / uniform["warp_instructions"]
    # Analytic: the intra-warp warps issue both loops, the others one; the loop body is the same length.
    warps = blocks * BLOCK_THREADS // WARP_SIZE
    per_warp_uniform = uniform["warp_instructions"] / warps
    values = {"config": cfg.name, "sms": sms, "work": work, **results,
              "analytic_intra_time_ratio": results["intra-warp"]["warp_instructions"] / uniform["warp_instructions"],
              "instructions_per_warp_uniform": per_warp_uniform}
    rows = [[name, r["cycles"], r["time_ratio"], r["warp_instructions"], r["simd_efficiency"]]
            for name, r in results.items()]
    table = format_table(["branch", "cycles", "time x", "warp instructions", "SIMD efficiency"], rows)
    lesson = (f"With the branch inside the warp, every warp runs both paths with half its lanes masked: "
              f"{results['intra-warp']['time_ratio']:.2f}x the time and SIMD efficiency "
              f"{results['intra-warp']['simd_efficiency']:.2f}. With the branch between warps each warp runs "
              f"one path at full width: {results['inter-warp']['time_ratio']:.2f}x the time, efficiency "
              f"{results['inter-warp']['simd_efficiency']:.2f}. Divergence is a per-warp cost only.")
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figure, (left, right) = plt.subplots(1, 2, figsize=(8, 3.5))
        left.bar(list(results), [r["time_ratio"] for r in results.values()])
        left.set_ylabel("time relative to uniform")
        right.bar(list(results), [r["simd_efficiency"] for r in results.values()], color="C1")
        right.set_ylabel("SIMD efficiency")
        figures.append(save(figure, plot_dir, "divergence.png"))
    return LabResult(NAME, TITLE, table, lesson, values, figures)
