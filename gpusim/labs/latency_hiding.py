"""Lab `latency-hiding`: resident warps per SM from 1 to the maximum against Little's law.

Kernel programs/labs/stream_loads.ptx (``stream_loads_v4``): each loop iteration issues 4 float4 loads,
then uses them. As the PTX is written (``codegen="none"``) a warp keeps 4 loads = 2 KiB in flight, then
waits; as ptxas compiles it (``codegen="ptxas"``, the default) the loop is unrolled 4 times and all 16
loads = 8 KiB go out before the first use, so a quarter of the warps reach the plateau. The lab counts the
loads in flight from the instruction stream the engine times (``compiler.loads_before_first_use``).
On a slice of ``sms`` SMs the lab launches exactly ``warps`` warps per SM
(one wave) and measures DRAM bytes per cycle per SM. Little's law (gpusim.analytic.latency_hiding)
predicts min(the SM's sustained share of DRAM bandwidth, warps x bytes in flight per warp / time in
flight): linear in the warps until bytes in flight = bandwidth x time, flat after. The time a warp's
request spends in flight is the unloaded DRAM latency plus the time the SM's share of bandwidth needs to
deliver the warp's own bytes (8 KiB at ~11.5 B/cycle is ~710 cycles on h100-sxm with ptxas's unroll,
2 KiB ~180 as written); the table shows the prediction with the bare latency too, which puts the knee
one warp early. The lab locates the measured knee (the plateau over the measured slope per warp)
against the predicted one.

The warp timeline (``trace=True``) shows why: with one warp the SM's schedulers sit idle while its loads
are out; with enough warps some warp is always ready. The table gives the idle-issue fraction of SM 0:
the share of its cycles in which no warp issued (no ``selected`` interval in the trace), and the share of
the DRAM's peak left unused. This kernel issues little (a few instructions per 2 KiB), so its schedulers
stay mostly idle even when saturated; the gaps that close are the DRAM's.

Simplifications: the latency in the model is the unloaded DRAM latency; near the knee queueing adds to
it, so the measured curve rounds the corner (the table shows the error per point).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.analytic.models import latency_hiding, littles_law_knee
from gpusim.arch.config import WARP_SIZE
from gpusim.codegen import DEFAULT_CODEGEN
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.stalls import STATE_NAMES
from gpusim.labs.compiler import loads_before_first_use
from gpusim.labs.support import LAB_PROGRAMS_DIR, LabResult, format_table, progress_items, pyplot, save

NAME = "latency-hiding"
TITLE = "Latency hiding: warps per SM against Little's law"
DEFAULT_CONFIG = "h100-sxm"
PROGRAM = LAB_PROGRAMS_DIR / "stream_loads.ptx"
LOADS_PER_ITERATION = 4
BYTES_PER_LANE_PER_LOAD = 16
BYTES_IN_FLIGHT_PER_WARP = LOADS_PER_ITERATION * BYTES_PER_LANE_PER_LOAD * WARP_SIZE  # as the PTX is written
WARPS = (1, 2, 3, 4, 6, 8, 16, 32, 64)
TRACE_ROWS = 400_000
SELECTED = STATE_NAMES.index("selected")


def idle_issue_fraction(run, sm: int = 0) -> float:
    """Share of the run's cycles in which no warp of ``sm`` issued (from the trace's ``selected`` rows)."""
    rows = run.trace.raw_intervals
    mine = (run.trace.sm_of(rows[:, T.TR_WARP]) == sm) & (rows[:, T.TR_STATE] == SELECTED)
    busy = np.zeros(int(run.cycles) + 1, dtype=bool)
    for start, end in rows[mine][:, [T.TR_START, T.TR_END]]:
        busy[int(start) : max(int(end), int(start) + 1)] = True
    return 1.0 - float(busy[: int(run.cycles)].mean())


def launch_shape(warps_per_sm: int, sms: int) -> tuple[int, int]:
    """(grid, block) giving exactly ``warps_per_sm`` resident warps per SM in one wave."""
    warps_per_block = 2 if warps_per_sm % 2 == 0 else 1
    return warps_per_sm // warps_per_block * sms, warps_per_block * WARP_SIZE


def run(
    config: Any = None,
    plot_dir: str | Path | None = None,
    progress: bool = True,
    *,
    sms: int = 1,
    warps: tuple = WARPS,
    iterations: int = 8,
    timeline_warps: tuple = (1, 4, 16),
    codegen: str = DEFAULT_CODEGEN,
) -> LabResult:
    """Sweep resident warps per SM (each traced for its idle-issue fraction); ``timeline_warps`` are drawn."""
    from gpusim.api.gpu import GPU

    gpu = GPU(config or DEFAULT_CONFIG, sms=sms, codegen=codegen)
    cfg = gpu.config
    kernel = gpu.load(str(PROGRAM))["stream_loads_v4"]
    # the loads one warp has in flight: 4 as the PTX is written; 16 as ptxas compiles it (the loop unrolled
    # 4 times, every load issued before the first add reads one)
    loads_in_flight = loads_before_first_use(kernel.program)
    bytes_in_flight = loads_in_flight * BYTES_PER_LANE_PER_LOAD * WARP_SIZE
    model = latency_hiding(cfg, bytes_in_flight, "dram")
    knee = littles_law_knee(model)
    transfer_cycles, in_flight_cycles, knee_warps = knee.transfer_cycles, knee.in_flight_cycles, knee.warps
    points = []
    timelines = {}
    for count in progress_items(warps, NAME, progress):
        grid, block = launch_shape(count, sms)
        threads = grid * block
        source = gpu.to_device(np.ones(threads * 4 * LOADS_PER_ITERATION * iterations + 16, np.float32))
        out = gpu.empty(threads, np.float32)
        result = gpu.launch(
            kernel, grid=grid, block=block, args=[source, out, np.uint32(iterations)], trace=TRACE_ROWS
        )
        measured = result.metrics["dram__bytes_read.sum"] / result.cycles / sms
        predicted = knee.bytes_per_cycle_per_sm(model, count)
        point = {
            "warps": count,
            "bytes_per_cycle_per_sm": measured,
            "predicted_bytes_per_cycle_per_sm": predicted,
            "bare_latency_bytes_per_cycle_per_sm": model.throughput(count, 1, 1.0),
            "error_pct": 100.0 * (predicted - measured) / measured,
            "achieved_warps": result.metrics["sm__warps_active.avg.per_cycle_active"],
            "issue_pct": result.metrics["smsp__issue_active.avg.pct_of_peak_sustained_active"],
            "dram_idle_pct": 100.0 - result.metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
            "correct": bool(np.all(out.get() == LOADS_PER_ITERATION * iterations)),
            "idle_issue": idle_issue_fraction(result),
        }
        if count in timeline_warps:
            timelines[count] = result
        points.append(point)
    linear = [p for p in points if p["warps"] <= knee_warps / 2]
    slope = float(np.median([p["bytes_per_cycle_per_sm"] / p["warps"] for p in (linear or points[:1])]))
    saturated = [p["bytes_per_cycle_per_sm"] for p in points if p["warps"] >= 2 * knee_warps]
    plateau = float(np.median(saturated)) if saturated else max(p["bytes_per_cycle_per_sm"] for p in points)
    values = {
        "config": cfg.name,
        "sms": sms,
        "points": points,
        "codegen": kernel.program.codegen,
        "loads_in_flight_per_warp": loads_in_flight,
        "bytes_in_flight_per_warp": bytes_in_flight,
        "predicted_knee_warps": knee_warps,
        "bare_latency_knee_warps": model.warps_per_sm_to_saturate,
        "measured_knee_warps": plateau / slope,
        "in_flight_cycles": in_flight_cycles,
        "predicted_plateau": model.bytes_per_cycle_per_sm,
        "measured_plateau": plateau,
        "predicted_slope": bytes_in_flight / in_flight_cycles,
        "measured_slope": slope,
    }
    rows = [
        [
            p["warps"],
            p["achieved_warps"],
            p["bytes_per_cycle_per_sm"],
            p["predicted_bytes_per_cycle_per_sm"],
            p["error_pct"],
            p["bare_latency_bytes_per_cycle_per_sm"],
            p["issue_pct"],
            100.0 * p["idle_issue"],
            p["dram_idle_pct"],
        ]
        for p in points
    ]
    table = format_table(
        [
            "warps/SM",
            "achieved",
            "B/cycle/SM",
            "Little's law",
            "error %",
            "bare latency",
            "issue %",
            "idle issue %",
            "DRAM idle %",
        ],
        rows,
    )
    table += (
        f"\n\nLittle's law: {model.bytes_per_cycle_per_sm:.2f} B/cycle/SM x ({model.latency_cycles:.0f} "
        f"latency + {transfer_cycles:.0f} transfer) cycles = {knee_warps * bytes_in_flight:.0f} B "
        f"in flight per SM = {knee_warps:.1f} warps of {bytes_in_flight} B (bare latency: "
        f"{model.warps_per_sm_to_saturate:.1f}); measured knee "
        f"{values['measured_knee_warps']:.1f} warps (plateau {plateau:.2f} B/cycle / slope "
        f"{slope:.1f} B/cycle per warp)"
    )
    lesson = (
        f"Each warp keeps {bytes_in_flight} bytes in flight and then waits "
        f"{in_flight_cycles:.0f} cycles for them, so bandwidth grows by one warp's bytes per latency "
        f"for every warp added -- until the SM has bandwidth x time in flight = "
        f"{knee_warps * bytes_in_flight / 1024:.1f} KiB in flight, at "
        f"{knee_warps:.1f} warps (measured {values['measured_knee_warps']:.1f}). "
        f"More warps add nothing: the DRAM is busy. The gaps show in the timeline: with one warp the "
        f"SM issues a burst of loads and then nothing for ~{in_flight_cycles:.0f} cycles "
        f"({100 * points[0]['idle_issue']:.0f}% of cycles idle) and the DRAM idles "
        f"{points[0]['dram_idle_pct']:.0f}% of the time; with enough warps another warp's loads fill "
        f"each wait ({points[-1]['dram_idle_pct']:.0f}% DRAM idle at {points[-1]['warps']} warps). GPUs hide "
        f"latency with parallelism, not with caches or prediction."
    )
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
        grid_warps = np.linspace(0.5, max(warps), 200)
        left.plot(
            grid_warps,
            [knee.bytes_per_cycle_per_sm(model, w) for w in grid_warps],
            "k-",
            label="Little's law",
        )
        left.plot(
            [p["warps"] for p in points],
            [p["bytes_per_cycle_per_sm"] for p in points],
            "o",
            label="simulated",
        )
        left.set_xscale("log", base=2)
        left.set_xlabel("resident warps per SM")
        left.set_ylabel("DRAM bytes per cycle per SM")
        left.legend()
        for offset, (_count, result) in enumerate(sorted(timelines.items())):
            rows_trace = result.trace.raw_intervals
            issued = rows_trace[
                (result.trace.sm_of(rows_trace[:, T.TR_WARP]) == 0) & (rows_trace[:, T.TR_STATE] == SELECTED)
            ]
            right.broken_barh(
                [(float(s), float(max(e - s, 1))) for s, e in issued[:, [T.TR_START, T.TR_END]]],
                (offset - 0.4, 0.8),
                color=f"C{offset}",
            )
        right.set_yticks(range(len(timelines)), [f"{count} warps" for count in sorted(timelines)])
        right.set_xlabel("cycle")
        right.set_title("issue on SM 0 (gaps: nothing ready)")
        figures.append(save(figure, plot_dir, "latency_hiding.png"))
    return LabResult(NAME, TITLE, table, lesson, values, figures)
