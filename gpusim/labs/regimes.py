"""Lab `regimes`: memory-bound, compute-bound, latency-bound -- three kernels and the report's verdict.

The three-way diagnosis every profile starts with: is the DRAM (or another memory level) near its peak,
are the issue slots or a math pipe near theirs, or is neither -- the warps just wait. Three kernels, one
per regime, on a slice of ``sms`` SMs:

* **memory** -- programs/labs/stream_loads.ptx ``stream_loads_v4`` with every warp slot filled: each warp
  keeps 2 KiB in flight, far more than Little's law needs, so DRAM runs at its sustained peak;
* **compute** -- programs/labs/roofline_fma.cu with ``fma_rounds`` rounds: hundreds of FLOPs per DRAM
  byte, far right of the ridge point, so the FMA pipe is the limit;
* **latency** -- programs/pointer_chase.cu, one thread of dependent loads: nothing is busy.

For each the lab prints the speed-of-light percentages (gpusim.observe.report.speed_of_light), the analytic
regime (roofline bound from the arithmetic intensity, or Little's law when the bytes in flight are far
below bandwidth x latency) and the report's verdict (gpusim.observe.report.verdict), which must agree.

Simplifications: the analytic regime uses the roofline for the two throughput-bound kernels and, for the
pointer chase, the bytes in flight (one sector) against Little's law's need; thresholds are the report's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.analytic.models import bytes_in_flight_needed, roofline, roofline_point
from gpusim.arch.config import WARP_SIZE
from gpusim.labs.support import LAB_PROGRAMS_DIR, PROGRAMS_DIR, LabResult, format_table, progress_items, pyplot, save
from gpusim.observe.report import speed_of_light, verdict

NAME = "regimes"
TITLE = "Regimes: memory-, compute- and latency-bound, and the report's verdict"
DEFAULT_CONFIG = "h100-sxm"
STREAM_LOADS_PER_ITERATION = 4
FMA_BLOCK_THREADS = 256
VERDICT_OF_REGIME = {"memory": "memory-bound", "compute": "compute-bound", "latency": "latency-bound"}


def _memory_kernel(gpu: Any, iterations: int) -> Any:
    cfg = gpu.config
    kernel = gpu.load(str(LAB_PROGRAMS_DIR / "stream_loads.ptx"))["stream_loads_v4"]
    block = 2 * WARP_SIZE
    grid = cfg.max_warps_per_sm // 2 * cfg.sms
    threads = grid * block
    source = gpu.to_device(np.ones(threads * 4 * STREAM_LOADS_PER_ITERATION * iterations + 16, np.float32))
    return gpu.launch(
        kernel, grid=grid, block=block, args=[source, gpu.empty(threads, np.float32), np.uint32(iterations)]
    )


def _compute_kernel(gpu: Any, rounds: int) -> Any:
    cfg = gpu.config
    kernel = gpu.load(str(LAB_PROGRAMS_DIR / "roofline_fma.ptx"))["roofline_fma"]
    threads = cfg.max_warps_per_sm * WARP_SIZE * cfg.sms
    source = gpu.to_device(np.ones(4 * threads, np.float32))
    return gpu.launch(
        kernel,
        grid=threads // FMA_BLOCK_THREADS,
        block=FMA_BLOCK_THREADS,
        args=[source, gpu.empty(4 * threads, np.float32), np.int32(threads), np.int32(rounds)],
    )


def _latency_kernel(gpu: Any, hops: int) -> Any:
    cfg = gpu.config
    kernel = gpu.load(str(PROGRAMS_DIR / "pointer_chase.ptx"))["pointer_chase"]
    elements = 2 * cfg.l2_bytes // 4
    step = cfg.line_bytes * 129 // 4  # a new line (and sector) per hop
    chain = gpu.to_device(((np.arange(elements, dtype=np.int64) + step) % elements).astype(np.int32))
    return gpu.launch(
        kernel, grid=1, block=1, args=[chain, np.int32(hops), gpu.zeros(1, np.int32), gpu.zeros(1, np.int64)]
    )


def analytic_regime(run) -> str:
    """The regime the models predict: Little's law says latency when a lone warp keeps less than a tenth
    of bandwidth x latency in flight (bytes in flight = DRAM bytes per cycle x latency, per SM); otherwise
    the roofline's side of the ridge point."""
    cfg = run.config
    metrics = run.metrics
    warps = metrics["sm__warps_active.avg.per_cycle_active"]
    in_flight_per_sm = (
        metrics["dram__bytes_read.sum"] / max(1, run.cycles) / cfg.sms * cfg.dram_latency_cycles
    )
    if warps < 2 and in_flight_per_sm < 0.1 * bytes_in_flight_needed(cfg, "dram"):
        return "latency"
    return roofline_point(run).bound


def run(
    config: Any = None,
    plot_dir: str | Path | None = None,
    progress: bool = True,
    *,
    sms: int = 1,
    stream_iterations: int = 4,
    fma_rounds: int = 64,
    hops: int = 64,
) -> LabResult:
    """Run the three kernels; compare the analytic regime and the report's verdict."""
    from gpusim.api.gpu import GPU

    gpu = GPU(config or DEFAULT_CONFIG, sms=sms)
    cfg = gpu.config
    roofs = roofline(cfg)
    makers = {
        "memory": lambda: _memory_kernel(gpu, stream_iterations),
        "compute": lambda: _compute_kernel(gpu, fma_rounds),
        "latency": lambda: _latency_kernel(gpu, hops),
    }
    cases = {}
    for regime in progress_items(makers, NAME, progress):
        result = makers[regime]()
        sol = speed_of_light(result)
        judged = verdict(result)
        cases[regime] = {
            "cycles": result.cycles,
            "dram_pct": sol["DRAM"],
            "issue_pct": sol["SM issue"],
            "fma_pipe_pct": sol.get("fma pipe", 0.0),
            "intensity": result.metrics["gpusim__arithmetic_intensity"],
            "analytic": analytic_regime(result),
            "verdict": judged.kind,
            "reason": judged.reason,
            "cycles_per_hop": result.cycles / hops if regime == "latency" else None,
        }
    ridge = roofs.ridge_point("fp32", "dram_sustained")
    rows = [
        [
            regime,
            c["dram_pct"],
            c["issue_pct"],
            c["fma_pipe_pct"],
            c["intensity"],
            c["analytic"],
            c["verdict"],
        ]
        for regime, c in cases.items()
    ]
    table = format_table(
        ["kernel", "DRAM %", "issue %", "FMA pipe %", "FLOP/B", "analytic", "report verdict"], rows
    )
    table += "\n\n" + "\n".join(f"{regime}: {c['reason']}" for regime, c in cases.items())
    table += (
        f"\n\nridge point {ridge:.1f} FLOP/B; pointer chase {cases['latency']['cycles_per_hop']:.0f} "
        f"cycles per hop against the DRAM latency {cfg.dram_latency_cycles}"
    )
    values = {
        "config": cfg.name,
        "sms": sms,
        "cases": cases,
        "ridge_point": ridge,
        "dram_efficiency_pct": 100.0 * cfg.dram_efficiency,
    }
    lesson = (
        f"Three numbers sort most kernels. The stream keeps DRAM at {cases['memory']['dram_pct']:.0f}% of "
        f"peak: memory-bound, so only fewer bytes help (fusion, quantization, better reuse). The FMA "
        f"loop keeps the FMA pipe {cases['compute']['fma_pipe_pct']:.0f}% busy: compute-bound, so only "
        f"fewer or cheaper instructions help. The pointer chase uses {cases['latency']['dram_pct']:.1f}% "
        f"of DRAM and {cases['latency']['issue_pct']:.1f}% of issue slots: latency-bound -- the fix is "
        f"more parallelism (more warps, more independent loads per warp), not a faster memory or ALU."
    )
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figure, axes = plt.subplots(figsize=(6, 3.5))
        positions = np.arange(len(cases))
        axes.bar(positions - 0.2, [c["dram_pct"] for c in cases.values()], width=0.4, label="DRAM % of peak")
        axes.bar(
            positions + 0.2,
            [max(c["issue_pct"], c["fma_pipe_pct"]) for c in cases.values()],
            width=0.4,
            label="issue / FMA pipe %",
        )
        axes.set_xticks(positions, [f"{r}\n({c['verdict']})" for r, c in cases.items()])
        axes.set_ylim(0, 105)
        axes.legend()
        figures.append(save(figure, plot_dir, "regimes.png"))
    return LabResult(NAME, TITLE, table, lesson, values, figures)
