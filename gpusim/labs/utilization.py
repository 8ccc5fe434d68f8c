"""Lab `utilization`: "100 % GPU utilization" (nvidia-smi) while the issue slots and DRAM sit idle.

nvidia-smi's utilization is the share of time in which *some* kernel is running on the GPU, however
little of it that kernel uses. The lab runs a latency-bound kernel -- programs/pointer_chase.cu, one
thread following ``hops`` dependent loads through a chain larger than the L2 -- ``kernels`` times, issued
alternately to two streams so that each kernel's launch latency hides under the previous kernel
(gpusim.host.system), and reads the system timeline over the window from the first kernel's start to the last
one's end: ``timeline.utilization()`` gives the nvidia-smi figure beside the SM issue activity and DRAM
throughput of the same window.

Analytic side: each hop is one load that waits a full DRAM round trip, so a kernel lasts about
hops x DRAM latency cycles, the schedulers issue ``instructions per hop`` warp-instructions per round trip
(issue-slot share = instructions per hop / (latency x sub-partitions x SMs)), and the DRAM moves one
sector per round trip (share = sector bytes / (latency x the slice's DRAM bytes per cycle)).

Simplifications: the chain's stride (``step`` elements) puts each hop in a new sector, and every kernel
walks a fresh copy of the chain (the L2 persists across launches), so every hop goes to DRAM; kernels
run one at a time on the compute engine (no concurrent kernels, see gpusim.host.system).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.labs.support import PROGRAMS_DIR, LabResult, format_table, progress_items, pyplot, save

NAME = "utilization"
TITLE = "Utilization: a busy GPU that does almost nothing"
DEFAULT_CONFIG = "h100-sxm"
PROGRAM = PROGRAMS_DIR / "pointer_chase.ptx"
STREAMS = 2


def run(
    config: Any = None,
    plot_dir: str | Path | None = None,
    progress: bool = True,
    *,
    sms: int = 1,
    hops: int = 200,
    kernels: int = 4,
    l2_multiple: float = 2.0,
    step: int = 1031 * 16,
) -> LabResult:
    """Run the pointer chase ``kernels`` times over two streams; utilization over their window."""
    from gpusim.api.gpu import GPU

    gpu = GPU(config or DEFAULT_CONFIG, sms=sms)
    cfg = gpu.config
    kernel = gpu.load(str(PROGRAM))["pointer_chase"]
    elements = int(l2_multiple * cfg.l2_bytes / 4)
    host_chain = ((np.arange(elements, dtype=np.int64) + step) % elements).astype(np.int32)
    final_index = gpu.zeros(1, np.int32)
    elapsed = gpu.zeros(1, np.int64)
    streams = [gpu.stream() for _ in range(STREAMS)]
    for index in progress_items(range(kernels), NAME, progress):
        chain = gpu.to_device(host_chain)  # a fresh copy: the L2 persists and would hold the last walk
        streams[index % STREAMS].launch(kernel, 1, 1, [chain, np.int32(hops), final_index, elapsed])
    gpu.synchronize()
    timeline = gpu.timeline
    spans = timeline.kernels()
    window_start_s, window_end_s = spans[0].start_s, spans[-1].end_s
    util = timeline.utilization(window_start_s, window_end_s)
    last_run = gpu.launch(kernel, 1, 1, [gpu.to_device(host_chain), np.int32(hops), final_index, elapsed])
    metrics = last_run.metrics
    instructions_per_hop = metrics["smsp__inst_executed.sum"] / hops
    round_trip_cycles = last_run.cycles / hops
    issue_slots_per_cycle = cfg.sub_partitions_per_sm * cfg.sms
    analytic_issue_pct = 100.0 * instructions_per_hop / (cfg.dram_latency_cycles * issue_slots_per_cycle)
    analytic_dram_pct = 100.0 * cfg.sector_bytes / (cfg.dram_latency_cycles * cfg.dram_bytes_per_cycle)
    kernel_us = float(np.mean([span.duration_s for span in spans])) * 1e6
    analytic_kernel_us = hops * cfg.dram_latency_cycles / cfg.clock_hz * 1e6
    values = {
        "config": cfg.name,
        "sms": sms,
        "kernels": len(spans),
        "gpu_utilization_pct": util["gpu_utilization_pct"],
        "sm_issue_pct": util["sm_issue_pct"],
        "dram_throughput_pct": util["dram_throughput_pct"],
        "analytic_issue_pct": analytic_issue_pct,
        "analytic_dram_pct": analytic_dram_pct,
        "kernel_us": kernel_us,
        "analytic_kernel_us": analytic_kernel_us,
        "round_trip_cycles": round_trip_cycles,
        "instructions_per_hop": instructions_per_hop,
        "correct": int(final_index.get()[0]) == hops * step % elements,
    }
    table = format_table(
        ["quantity", "simulated", "analytic"],
        [
            ["GPU utilization (nvidia-smi) %", util["gpu_utilization_pct"], 100.0],
            ["SM issue slots busy %", util["sm_issue_pct"], analytic_issue_pct],
            ["DRAM throughput % of peak", util["dram_throughput_pct"], analytic_dram_pct],
            ["kernel time us", kernel_us, analytic_kernel_us],
            ["cycles per hop", round_trip_cycles, float(cfg.dram_latency_cycles)],
        ],
    )
    table += (
        f"\n\n{len(spans)} kernels on {STREAMS} streams, "
        f"window {1e6 * (window_end_s - window_start_s):.1f} us; "
        f"{instructions_per_hop:.1f} warp-instructions per hop, {cfg.sub_partitions_per_sm} x {cfg.sms} "
        f"issue slots per cycle"
    )
    lesson = (
        f"nvidia-smi would show {util['gpu_utilization_pct']:.0f}% GPU utilization: a kernel is running "
        f"the whole time. Yet the schedulers issue in {util['sm_issue_pct']:.2f}% of their slots and the "
        f"DRAM runs at {util['dram_throughput_pct']:.2f}% of its peak: one thread waits "
        f"~{round_trip_cycles:.0f} cycles for each dependent load. 'Utilization' says the GPU is "
        f"occupied, not that it is working; look at SM throughput and memory throughput (Nsight's "
        f"speed of light) to know how much of the machine a kernel uses."
    )
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figure, axes = plt.subplots(figsize=(6, 3.5))
        names = ["GPU util.\n(nvidia-smi)", "SM issue", "DRAM"]
        axes.bar(names, [util["gpu_utilization_pct"], util["sm_issue_pct"], util["dram_throughput_pct"]])
        axes.set_ylabel("% over the window")
        axes.set_ylim(0, 105)
        axes.set_title(f"pointer chase, {cfg.name} x{sms} SMs")
        figures.append(save(figure, plot_dir, "utilization.png"))
    return LabResult(NAME, TITLE, table, lesson, values, figures)
