"""Lab `warp-granularity`: blocks of 250 and of 256 threads (programs/vecadd.cu).

Threads are scheduled in warps of 32: a 250-thread block is ceil(250 / 32) = 8 warps, the same as a
256-thread block, and its last warp has 250 - 7 x 32 = 26 busy lanes and 6 idle ones. Both occupy the same
warp slots; the 250-thread grid issues as many warp-instructions per block for less work. The lab reads
warps per block from the occupancy rules, SIMD efficiency from the instruction counters, and compares
with those counts.

Simplifications: the vector length is a whole number of blocks, so no lane is masked by the bounds check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.arch.config import WARP_SIZE
from gpusim.labs.support import PROGRAMS_DIR, LabResult, format_table, progress_items

NAME = "warp-granularity"
TITLE = "Warp granularity: 250 against 256 threads per block"
DEFAULT_CONFIG = "h100-sxm"
BLOCK_SIZES = (250, 256)


def run(config: Any = None, plot_dir: str | Path | None = None, progress: bool = True, *, sms: int = 1,
        blocks: int = 16) -> LabResult:
    from gpusim.api.gpu import GPU

    del plot_dir  # the table is the whole result
    gpu = GPU(config or DEFAULT_CONFIG, sms=sms)
    kernel = gpu.load(str(PROGRAMS_DIR / "vecadd.ptx"))["vecadd"]
    results = {}
    for threads in progress_items(BLOCK_SIZES, NAME, progress):
        n = blocks * threads
        x = gpu.to_device(np.arange(n, dtype=np.float32))
        y = gpu.to_device(np.ones(n, np.float32))
        out = gpu.zeros(n, np.float32)
        result = gpu.launch(kernel, grid=blocks, block=threads, args=[x, y, out, np.int32(n)])
        metrics = result.metrics
        warps = -(-threads // WARP_SIZE)
        results[threads] = {
            "warps_per_block": result.occupancy.warps_per_block, "analytic_warps_per_block": warps,
            "last_warp_lanes": threads - (warps - 1) * WARP_SIZE,
            "simd_efficiency": metrics["smsp__thread_inst_executed_per_inst_executed.ratio"] / WARP_SIZE,
            "analytic_simd_efficiency": threads / (warps * WARP_SIZE),
            "warp_instructions_per_block": metrics["smsp__inst_executed.sum"] / blocks,
            "cycles": result.cycles, "correct": bool(np.array_equal(out.get(), x.get() + 1.0))}
    rows = [[threads, r["warps_per_block"], r["last_warp_lanes"], r["simd_efficiency"],
             r["analytic_simd_efficiency"], r["warp_instructions_per_block"], r["cycles"]]
            for threads, r in results.items()]
    table = format_table(["threads/block", "warps/block", "busy lanes in last warp", "SIMD efficiency",
                          "analytic", "warp-inst/block", "cycles"], rows)
    r250 = results[250]
    lesson = (f"A block of 250 threads still runs {r250['warps_per_block']} warps: the last has "
              f"{r250['last_warp_lanes']} busy lanes and {WARP_SIZE - r250['last_warp_lanes']} idle ones, so "
              f"{100 * (1 - r250['simd_efficiency']):.1f}% of every instruction's lanes are wasted and the block "
              f"issues as many warp-instructions as a 256-thread block. Choose block sizes that are multiples "
              f"of 32.")
    values = {"config": gpu.config.name, "blocks": blocks, **{f"threads_{t}": r for t, r in results.items()}}
    return LabResult(NAME, TITLE, table, lesson, values, [])
