"""Lab `occupancy`: registers per thread and shared memory per block against resident warps and speed.

Kernel programs/labs/stream_loads.ptx (``stream_loads_v1``: 4 float loads per loop iteration,
memory-latency-bound, so its speed depends on how many warps are resident). As the PTX is written a warp
has those 4 loads = 512 bytes in flight; as ptxas compiles it (``codegen="ptxas"``, the default) the loop
is unrolled 4 times and 16 loads = 2 KiB are in flight, so a quarter of the warps cover the latency: the
lab counts the loads from the stream the engine times (``compiler.loads_before_first_use``). The lab launches it with
``regs=`` (registers per thread) and ``shared_bytes=`` (dynamic shared memory per block, unused by the
kernel but allocated) and reports, per point, the occupancy calculator's limiter and theoretical
occupancy (gpusim.arch.occupancy), the achieved occupancy (sm__warps_active.avg.pct_of_peak_sustained_active),
DRAM bytes per cycle per SM, and Little's law's prediction at the theoretical warps:
min(the SM's sustained DRAM share, warps x B / (DRAM latency + B / that share)), B the bytes in flight
per warp.

More occupancy helps only until the resident warps keep bandwidth x latency in flight; the lab reports
the lowest occupancy within 5 % of the best throughput against that analytic point.

Each point reads a fresh source array, so its bytes come from DRAM (the L2 persists across launches).

Simplifications: the grid is ``waves`` full waves at the highest occupancy, so lower occupancies run more
waves and pay a tail per wave; the register and shared-memory figures are requests (the engine does not
spill or use the shared memory).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.analytic.models import latency_hiding, littles_law_knee
from gpusim.arch.config import WARP_SIZE
from gpusim.arch.occupancy import occupancy
from gpusim.codegen import DEFAULT_CODEGEN
from gpusim.labs.compiler import loads_before_first_use
from gpusim.labs.support import LAB_PROGRAMS_DIR, LabResult, format_table, progress_items, pyplot, save

NAME = "occupancy"
TITLE = "Occupancy: registers and shared memory against resident warps and throughput"
DEFAULT_CONFIG = "h100-sxm"
PROGRAM = LAB_PROGRAMS_DIR / "stream_loads.ptx"
BLOCK_THREADS = 128
LOADS_PER_ITERATION = 4
BYTES_PER_LANE_PER_LOAD = 4
BYTES_IN_FLIGHT_PER_WARP = LOADS_PER_ITERATION * BYTES_PER_LANE_PER_LOAD * WARP_SIZE  # as the PTX is written
BASE_REGS = 32
REGISTER_SWEEP = (32, 64, 96, 128, 168, 255)
SHARED_SWEEP_KIB = (0, 16, 32, 48, 72, 112, 200)
SATURATION_FRACTION = 0.95


def run(
    config: Any = None,
    plot_dir: str | Path | None = None,
    progress: bool = True,
    *,
    sms: int = 1,
    registers: tuple = REGISTER_SWEEP,
    shared_kib: tuple = SHARED_SWEEP_KIB,
    iterations: int = 16,
    waves: int = 2,
    codegen: str = DEFAULT_CODEGEN,
) -> LabResult:
    """Sweep registers per thread (no shared memory), then shared memory per block (``BASE_REGS`` regs)."""
    from gpusim.api.gpu import GPU

    gpu = GPU(config or DEFAULT_CONFIG, sms=sms, codegen=codegen)
    cfg = gpu.config
    kernel = gpu.load(str(PROGRAM))["stream_loads_v1"]
    # 4 float loads in flight per warp as the PTX is written, 16 as ptxas compiles it (loop unrolled x4)
    loads_in_flight = loads_before_first_use(kernel.program)
    bytes_in_flight = loads_in_flight * BYTES_PER_LANE_PER_LOAD * WARP_SIZE
    model = latency_hiding(cfg, bytes_in_flight, "dram")
    knee = littles_law_knee(model)
    warps_to_saturate = knee.warps
    best_blocks = occupancy(cfg, BLOCK_THREADS, BASE_REGS, 0).blocks_per_sm
    grid = waves * best_blocks * sms
    threads = grid * BLOCK_THREADS
    out = gpu.empty(threads, np.float32)
    cases = [("regs", count, count, 0) for count in registers]
    cases += [("shared", kib, BASE_REGS, kib * 1024) for kib in shared_kib]
    points = []
    for sweep, setting, regs, shared_bytes in progress_items(cases, NAME, progress):
        theory = occupancy(cfg, BLOCK_THREADS, regs, shared_bytes)
        # a fresh source per point: the L2 persists across launches and would serve a re-read
        source = gpu.to_device(np.ones(threads * LOADS_PER_ITERATION * iterations + 16, np.float32))
        result = gpu.launch(
            kernel,
            grid=grid,
            block=BLOCK_THREADS,
            args=[source, out, np.uint32(iterations)],
            regs=regs,
            shared_bytes=shared_bytes,
        )
        measured = result.metrics["dram__bytes_read.sum"] / result.cycles / sms
        predicted = knee.bytes_per_cycle_per_sm(model, theory.warps_per_sm)
        points.append(
            {
                "sweep": sweep,
                "setting": setting,
                "regs": regs,
                "shared_bytes": shared_bytes,
                "limiter": theory.limiter,
                "theoretical_pct": 100.0 * theory.occupancy,
                "warps_per_sm": theory.warps_per_sm,
                "achieved_pct": result.metrics["sm__warps_active.avg.pct_of_peak_sustained_active"],
                "bytes_per_cycle_per_sm": measured,
                "predicted_bytes_per_cycle_per_sm": predicted,
                "correct": bool(np.all(out.get() == LOADS_PER_ITERATION * iterations)),
            }
        )
    best = max(p["bytes_per_cycle_per_sm"] for p in points)
    enough = [p for p in points if p["bytes_per_cycle_per_sm"] >= SATURATION_FRACTION * best]
    stops_helping_pct = min(p["theoretical_pct"] for p in enough)
    analytic_stops_pct = 100.0 * min(1.0, warps_to_saturate / cfg.max_warps_per_sm)
    values = {
        "config": cfg.name,
        "sms": sms,
        "codegen": kernel.program.codegen,
        "loads_in_flight_per_warp": loads_in_flight,
        "bytes_in_flight_per_warp": bytes_in_flight,
        "points": points,
        "best_bytes_per_cycle_per_sm": best,
        "stops_helping_pct": stops_helping_pct,
        "analytic_stops_helping_pct": analytic_stops_pct,
        "warps_to_saturate": warps_to_saturate,
        "sustained_bytes_per_cycle_per_sm": model.bytes_per_cycle_per_sm,
    }
    rows = [
        [
            p["sweep"],
            p["setting"],
            p["limiter"],
            p["warps_per_sm"],
            p["theoretical_pct"],
            p["achieved_pct"],
            p["bytes_per_cycle_per_sm"],
            p["predicted_bytes_per_cycle_per_sm"],
        ]
        for p in points
    ]
    table = format_table(
        [
            "sweep",
            "regs / KiB",
            "limiter",
            "warps/SM",
            "occupancy %",
            "achieved %",
            "B/cycle/SM",
            "Little's law",
        ],
        rows,
    )
    table += (
        f"\n\nmore occupancy stops helping at {stops_helping_pct:.0f}% (lowest occupancy within "
        f"{100 * (1 - SATURATION_FRACTION):.0f}% of the best); Little's law: {warps_to_saturate:.1f} warps "
        f"of {bytes_in_flight} B = {analytic_stops_pct:.0f}% of {cfg.max_warps_per_sm}"
    )
    lesson = (
        f"Registers and shared memory are split among resident blocks: past "
        f"{cfg.registers_per_sm // (cfg.max_warps_per_sm * WARP_SIZE)} registers per thread, or once a "
        f"block's shared memory leaves room for fewer blocks than the "
        f"warp slots, fewer warps are resident, and the calculator's limiter says which resource is to "
        f"blame. Occupancy matters only while it limits the bytes in flight: this kernel needs "
        f"{warps_to_saturate:.0f} warps ({analytic_stops_pct:.0f}% occupancy) to cover the DRAM latency, "
        f"and the measured curve stops rising at {stops_helping_pct:.0f}%. Above that, trading occupancy "
        f"for registers (more work per thread, more independent loads) costs nothing."
    )
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figure, axes = plt.subplots(figsize=(6, 4))
        for sweep, marker in (("regs", "o"), ("shared", "s")):
            mine = [p for p in points if p["sweep"] == sweep]
            axes.plot(
                [p["achieved_pct"] for p in mine],
                [p["bytes_per_cycle_per_sm"] for p in mine],
                marker,
                label=f"{sweep} sweep",
            )
        grid_pct = np.linspace(1, 100, 100)
        axes.plot(
            grid_pct,
            [knee.bytes_per_cycle_per_sm(model, pct / 100 * cfg.max_warps_per_sm) for pct in grid_pct],
            "k-",
            label="Little's law",
        )
        axes.set_xlabel("achieved occupancy %")
        axes.set_ylabel("DRAM bytes per cycle per SM")
        axes.legend()
        figures.append(save(figure, plot_dir, "occupancy.png"))
    return LabResult(NAME, TITLE, table, lesson, values, figures)
