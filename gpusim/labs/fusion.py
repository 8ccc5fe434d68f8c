"""Lab `fusion`: y = relu(alpha * x + beta) on one array as three kernels (scale, shift, relu: each reads
the array and writes a new one) or as one fused kernel (programs/labs/unary_chain.cu).

The chain moves 6 arrays through DRAM (3 reads, 3 writes); the fused kernel moves 2 (read x, write y):
fusion removes 2/3 of the traffic, and since each kernel is memory-bound, 2/3 of the time. The lab
compares the DRAM bytes of each with those counts. Arrays are several times the slice's L2 so that
intermediates do not survive in it between kernels.

Simplifications: the three kernels are timed back to back without launch overhead (the ``overhead`` lab
covers that); dirty L2 lines still resident at the end of a kernel are not counted as DRAM writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.labs.support import PROGRAMS_DIR, LabResult, format_table, progress_items, pyplot, save

NAME = "fusion"
TITLE = "Kernel fusion: three elementwise kernels against one"
DEFAULT_CONFIG = "h100-sxm"
BLOCK_THREADS = 256
ARRAYS_MOVED_CHAIN = 6
ARRAYS_MOVED_FUSED = 2
ALPHA = 1.5
BETA = -0.25


def run(config: Any = None, plot_dir: str | Path | None = None, progress: bool = True, *, sms: int = 2,
        l2_multiple: float = 3.0) -> LabResult:
    from gpusim.api.gpu import GPU

    gpu = GPU(config or DEFAULT_CONFIG, sms=sms)
    cfg = gpu.config
    elements = int(l2_multiple * cfg.l2_bytes / 4) // BLOCK_THREADS * BLOCK_THREADS
    array_bytes = 4 * elements
    module = gpu.load(str(PROGRAMS_DIR / "labs" / "unary_chain.ptx"))
    rng = np.random.default_rng(0)
    x = gpu.to_device(rng.uniform(-1, 1, elements).astype(np.float32))
    scaled, shifted, out_chain, out_fused = (gpu.zeros(elements, np.float32) for _ in range(4))
    n = np.int32(elements)
    alpha, beta = np.float32(ALPHA), np.float32(BETA)
    grid = elements // BLOCK_THREADS
    steps = [(module["unary_scale"], [x, scaled, alpha, n]), (module["unary_shift"], [scaled, shifted, beta, n]),
             (module["unary_relu"], [shifted, out_chain, n]), (module["unary_fused"], [x, out_fused, alpha, beta, n])]
    runs = [gpu.launch(kernel, grid=grid, block=BLOCK_THREADS, args=args)
            for kernel, args in progress_items(steps, NAME, progress)]

    def dram(result: Any) -> float:
        return result.metrics["dram__bytes_read.sum"] + result.metrics["dram__bytes_write.sum"]

    chain_bytes = sum(dram(result) for result in runs[:3])
    chain_cycles = sum(result.cycles for result in runs[:3])
    fused_bytes, fused_cycles = dram(runs[3]), runs[3].cycles
    values = {"config": cfg.name, "sms": sms, "elements": elements,
              "chain_dram_bytes": chain_bytes, "fused_dram_bytes": fused_bytes,
              "chain_analytic_bytes": ARRAYS_MOVED_CHAIN * array_bytes,
              "fused_analytic_bytes": ARRAYS_MOVED_FUSED * array_bytes,
              "chain_cycles": chain_cycles, "fused_cycles": fused_cycles,
              "bytes_ratio": fused_bytes / chain_bytes, "time_ratio": fused_cycles / chain_cycles,
              "analytic_ratio": ARRAYS_MOVED_FUSED / ARRAYS_MOVED_CHAIN,
              "outputs_equal": bool(np.array_equal(out_chain.get(), out_fused.get()))}
    rows = [[name, result.cycles, dram(result), f"{moved} x {array_bytes}"]
            for name, result, moved in (("unary_scale", runs[0], 2), ("unary_shift", runs[1], 2),
                                        ("unary_relu", runs[2], 2), ("unary_fused", runs[3], 2))]
    table = format_table(["kernel", "cycles", "DRAM bytes", "analytic arrays x bytes"], rows)
    table += (f"\n\nfused / chain: DRAM bytes {values['bytes_ratio']:.2f} (analytic "
              f"{values['analytic_ratio']:.2f}), time {values['time_ratio']:.2f}")
    lesson = (f"Each elementwise kernel is memory-bound, so its time is its DRAM traffic. The chain writes two "
              f"intermediates and reads them back ({ARRAYS_MOVED_CHAIN} arrays through DRAM); the fused kernel "
              f"keeps them in registers ({ARRAYS_MOVED_FUSED} arrays). DRAM bytes fall to "
              f"{values['bytes_ratio']:.2f} of the chain's (analytic {values['analytic_ratio']:.2f}: fusion "
              f"removes 2/3 of the traffic) and time to {values['time_ratio']:.2f}.")
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figure, axes = plt.subplots(figsize=(5, 3.5))
        axes.bar(["chain bytes", "fused bytes", "chain time", "fused time"],
                 [1.0, values["bytes_ratio"], 1.0, values["time_ratio"]], color=["C0", "C1", "C0", "C1"])
        axes.axhline(values["analytic_ratio"], color="k", linestyle="--", label="analytic bytes ratio")
        axes.set_ylabel("relative to the chain")
        axes.legend()
        figures.append(save(figure, plot_dir, "fusion.png"))
    return LabResult(NAME, TITLE, table, lesson, values, figures)
