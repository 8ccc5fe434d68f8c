"""Lab `coalescing`: out[i] = in[i * stride] for stride 1 -> 32 (programs/strided_copy.cu).

A warp's 32 four-byte loads touch min(4 x stride, 32) distinct 32-byte sectors: 4 when coalesced, 32
(one per lane) from stride 8 on. DRAM read bytes grow with them, up to 8x the useful bytes, and time
follows. The lab compares sectors per request and the DRAM read bytes with those counts.

Simplifications: the source is larger than the slice's L2 only at large strides; at stride 1 the useful
bytes are the DRAM bytes because nothing is reused; stores are always coalesced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.labs.support import PROGRAMS_DIR, LabResult, format_table, progress_items, pyplot, save

NAME = "coalescing"
TITLE = "Coalescing: sectors per request and DRAM bytes against the stride"
DEFAULT_CONFIG = "h100-sxm"
STRIDES = (1, 2, 4, 8, 16, 32)
BLOCK_THREADS = 256
ELEMENT_BYTES = 4


def analytic_sectors_per_request(stride: int, sector_bytes: int, warp_size: int = 32) -> float:
    """Distinct sectors one warp's loads touch (aligned start)."""
    span_bytes = warp_size * stride * ELEMENT_BYTES
    return float(min(span_bytes // sector_bytes, warp_size)) if stride * ELEMENT_BYTES < sector_bytes \
        else float(warp_size)


def run(config: Any = None, plot_dir: str | Path | None = None, progress: bool = True, *, sms: int = 2,
        elements: int = 65536, strides: tuple = STRIDES) -> LabResult:
    from gpusim.api.gpu import GPU

    gpu = GPU(config or DEFAULT_CONFIG, sms=sms)
    cfg = gpu.config
    kernel = gpu.load(str(PROGRAMS_DIR / "strided_copy.ptx"))["strided_copy"]
    out = gpu.zeros(elements, np.float32)
    points = []
    for stride in progress_items(strides, NAME, progress):
        source = gpu.to_device(np.arange(elements * stride, dtype=np.float32))
        result = gpu.launch(kernel, grid=elements // BLOCK_THREADS, block=BLOCK_THREADS,
                            args=[source, out, np.int32(elements), np.int32(stride)])
        metrics = result.metrics
        requests = metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
        points.append({"stride": stride,
                       "sectors_per_request": metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] / requests,
                       "analytic_sectors_per_request": analytic_sectors_per_request(stride, cfg.sector_bytes),
                       "dram_read_bytes": metrics["dram__bytes_read.sum"],
                       "useful_bytes": elements * ELEMENT_BYTES, "cycles": result.cycles,
                       "correct": bool(np.array_equal(out.get(), source.get()[::stride]))})
    base = points[0]
    for point in points:
        point["dram_ratio"] = point["dram_read_bytes"] / base["dram_read_bytes"]
        point["analytic_dram_ratio"] = point["analytic_sectors_per_request"] / base["analytic_sectors_per_request"]
        point["time_ratio"] = point["cycles"] / base["cycles"]
    rows = [[p["stride"], p["sectors_per_request"], p["analytic_sectors_per_request"], p["dram_read_bytes"],
             p["dram_ratio"], p["analytic_dram_ratio"], p["time_ratio"]] for p in points]
    table = format_table(["stride", "sectors/request", "analytic", "DRAM read B", "DRAM x", "analytic x",
                          "time x"], rows)
    worst = points[-1]
    lesson = (f"A warp of 32 four-byte loads needs {base['sectors_per_request']:.0f} sectors when neighbouring "
              f"lanes read neighbouring words, and one sector per lane once the stride reaches "
              f"{cfg.sector_bytes // ELEMENT_BYTES}: the memory system moves whole 32-byte sectors, so a "
              f"scattered read costs up to {cfg.sector_bytes // ELEMENT_BYTES}x the useful bytes (measured "
              f"{worst['dram_ratio']:.1f}x) and the kernel slows by {worst['time_ratio']:.1f}x.")
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figure, axes = plt.subplots(figsize=(6, 4))
        axes.plot(strides, [p["dram_ratio"] for p in points], "o-", label="DRAM bytes (sim)")
        axes.plot(strides, [p["analytic_dram_ratio"] for p in points], "k--", label="sectors model")
        axes.plot(strides, [p["time_ratio"] for p in points], "s-", label="time (sim)")
        axes.set_xscale("log", base=2)
        axes.set_xlabel("stride (elements)")
        axes.set_ylabel("relative to stride 1")
        axes.legend()
        figures.append(save(figure, plot_dir, "coalescing.png"))
    values = {"config": cfg.name, "sms": sms, "elements": elements, "points": points}
    return LabResult(NAME, TITLE, table, lesson, values, figures)
