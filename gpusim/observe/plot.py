"""Matplotlib figures of runs and chips: roofline, stall breakdown, warp timeline, occupancy vs throughput.

matplotlib is an optional extra (``pip install 'gpusim[plot]'``); it is imported when a figure is
made, with the Agg backend when no display backend was chosen, and a GpusimError names the extra
when it is missing. Every function returns a ``matplotlib.figure.Figure``; ``save_figure`` writes
it as PNG and SVG, ``save_run_figures`` writes every figure of one run.

The roofline takes plain numbers (``roofline``) so analytic models and labs can draw theirs too;
``chip_ceilings(config)`` gives a config's ceilings: FP32, FP64 and the tensor-core peaks per input type
(and the rate mma.sync attains), and the L1/shared (all SMs), L2 and DRAM bandwidths. A run's point is its
FLOPs per DRAM byte and FLOP/s.

Simplifications: the hierarchical ceilings all use FLOPs per *DRAM* byte on the x axis (one point
per run), as Nsight's basic roofline chart does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from gpusim.engine.sm.stalls import STATE_NAMES
from gpusim.errors import GpusimError

STATE_COLORS = {
    "selected": "#2ca02c",
    "not_selected": "#98df8a",
    "long_scoreboard": "#d62728",
    "short_scoreboard": "#ff9896",
    "wait": "#ffbb78",
    "barrier": "#9467bd",
    "math_pipe_throttle": "#ff7f0e",
    "lg_throttle": "#8c564b",
    "mio_throttle": "#c49c94",
    "branch_resolving": "#17becf",
    "no_instruction": "#bcbd22",
    "drain": "#7f7f7f",
    "membar": "#e377c2",
    "dispatch_stall": "#c7c7c7",
    "sleeping": "#dbdb8d",
}
TIMELINE_COLUMNS = 1500
"""Time columns of the warp timeline image (each shows the state at its centre cycle)."""
TIMELINE_MAX_WARPS = 64
"""Warp slots drawn by ``warp_timeline`` unless told otherwise (the first ones of SM 0, then SM 1, ...)."""
FONT_SMALL, FONT_TINY = 9, 7
"""Point sizes of legends and labels, and of the timeline's warp labels when there are many."""


def pyplot():
    """matplotlib.pyplot, or a GpusimError naming the ``plot`` extra."""
    try:
        import matplotlib
    except ImportError:
        raise GpusimError(
            "matplotlib is not installed: pip install 'gpusim[plot]' (or pip install matplotlib)"
        ) from None
    if "matplotlib.pyplot" not in __import__("sys").modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


TENSOR_CEILING_NAMES = {
    "tensor_tf32": "tensor TF32",
    "tensor_fp8": "tensor FP8",
    "tensor_int8": "tensor INT8",
    "mma_sync_fp16": "mma.sync FP16/BF16",
}
"""The tensor-core ceilings a chip's roofline draws beside "tensor FP16" (the dense FP16 peak; BF16 runs at
the same rate) and their labels: gpusim.analytic.models.tensor_peaks's dense peaks per input type and the
rate mma.sync attains."""


def chip_ceilings(config) -> tuple[dict[str, float], dict[str, float]]:
    """({name: peak FLOP/s}, {name: peak bytes/s}) of a config: FP32, FP64 and the tensor-core ceilings side
    by side; zero peaks are left out."""
    from gpusim.analytic.models import tensor_peaks

    tensor = tensor_peaks(config)
    compute = {
        "FP32": config.peak_fp32_flops,
        "FP64": config.peak_fp64_flops,
        "tensor FP16": config.peak_tensor_flops,
        **{label: tensor[key] for key, label in TENSOR_CEILING_NAMES.items() if key in tensor},
    }
    memory = {
        "L1/shared": config.l1_bytes_per_cycle_per_sm * config.sms * config.clock_hz,
        "L2": config.l2_bytes_per_cycle * config.clock_hz,
        "DRAM": config.dram_bandwidth_gbs * 1e9,
    }
    return ({k: v for k, v in compute.items() if v > 0}, {k: v for k, v in memory.items() if v > 0})


def roofline(
    compute_ceilings: dict[str, float],
    memory_ceilings: dict[str, float],
    points: Sequence[tuple[str, float, float]] = (),
    title: str = "Roofline",
):
    """A log-log roofline: one horizontal line per compute peak (FLOP/s), one slanted line per
    bandwidth (bytes/s) up to the highest peak, and points (label, FLOPs per byte, FLOP/s)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    top = max(compute_ceilings.values())
    intensities = [p[1] for p in points if p[1] > 0]
    x_lo = min([1e-2] + [x / 4 for x in intensities])
    x_hi = max([1e4] + [x * 4 for x in intensities])
    x = np.logspace(np.log10(x_lo), np.log10(x_hi), 400)
    for i, (name, bandwidth) in enumerate(sorted(memory_ceilings.items(), key=lambda kv: -kv[1])):
        ax.plot(
            x,
            np.minimum(bandwidth * x, top),
            color=f"C{i}",
            lw=1.5,
            label=f"{name} {bandwidth / 1e9:,.0f} GB/s",
        )
    for name, peak in sorted(compute_ceilings.items(), key=lambda kv: -kv[1]):
        ax.axhline(peak, color="black", lw=0.8, ls="--")
        ax.text(x_lo * 1.2, peak * 1.08, f"{name} {peak / 1e12:.3g} TFLOP/s", fontsize=FONT_SMALL)
    for label, intensity, flops in points:
        if intensity > 0 and flops > 0:
            ax.plot(
                [intensity],
                [flops],
                "o",
                ms=8,
                label=f"{label}: {intensity:.3g} FLOP/B, {flops / 1e9:.3g} GFLOP/s",
            )
    for label, intensity, flops in points:
        if intensity <= 0 or flops <= 0:
            ax.text(0.02, 0.02, f"{label}: no FLOPs, so no point", transform=ax.transAxes, fontsize=FONT_SMALL)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(min(memory_ceilings.values()) * x_lo / 2, top * 3)
    ax.set_xlabel("arithmetic intensity (FLOPs per DRAM byte)")
    ax.set_ylabel("FLOP/s")
    ax.set_title(title)
    ax.legend(fontsize=FONT_SMALL, loc="lower right")
    fig.tight_layout()
    return fig


def chip_roofline(config, points: Sequence[tuple[str, float, float]] = ()):
    """The roofline of a config, with optional points."""
    compute, memory = chip_ceilings(config)
    return roofline(compute, memory, points, title=f"Roofline: {config.name} ({config.sms} SMs)")


def run_roofline(run):
    """The chip's roofline with the run's point (FLOPs per DRAM byte, achieved FLOP/s)."""
    m = run.metrics
    point = (
        run.program.name,
        m.get("gpusim__arithmetic_intensity", 0.0),
        m.get("gpusim__flop_per_second", 0.0),
    )
    return chip_roofline(run.config, [point])


def stall_breakdown(run):
    """Horizontal bars: warp-cycles per state, as % of all resident warp-cycles."""
    plt = pyplot()
    total = sum(run.stalls.values()) or 1
    items = sorted(((k, v) for k, v in run.stalls.items() if v), key=lambda kv: kv[1])
    fig, ax = plt.subplots(figsize=(7, 0.35 * max(len(items), 3) + 1.2))
    names = [k for k, _ in items]
    shares = [100.0 * v / total for _, v in items]
    ax.barh(names, shares, color=[STATE_COLORS.get(k, "gray") for k in names])
    for i, share in enumerate(shares):
        ax.text(share, i, f" {share:.1f}%", va="center", fontsize=FONT_SMALL)
    ax.set_xlabel("% of resident warp-cycles")
    ax.set_title(f"Warp states: {run.program.name} ({run.cycles} cycles)")
    ax.set_xlim(0, max(shares + [1]) * 1.15)
    fig.tight_layout()
    return fig


def warp_timeline(run, max_warps: int = TIMELINE_MAX_WARPS):
    """Which warp did what when: one row per warp slot, colored by state (needs ``trace=True``).

    The lower panel shows issue-slot use per bin (instructions issued / schedulers x cycles): the idle
    gaps are where every resident warp was waiting; more warps, or more independent work per warp,
    fill them."""
    trace = run.trace if run.has_trace else None
    if trace is None:
        raise GpusimError(
            f"kernel '{run.program.name}': the warp timeline needs a trace: launch with trace=True "
            "(gpusim run ... --trace FILE or --plot)"
        )
    plt = pyplot()
    r = trace.raw_intervals
    slots = np.unique(r[:, 0])[:max_warps]
    fig, (ax, ax_issue) = plt.subplots(
        2,
        1,
        figsize=(10, 1.5 + 0.14 * len(slots) + 1.5),
        sharex=True,
        gridspec_kw={"height_ratios": [max(len(slots), 4), 4]},
    )
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    edges = np.linspace(0, max(int(run.cycles), 1), TIMELINE_COLUMNS + 1)
    image = state_image(r, slots, (edges[:-1] + edges[1:]) / 2)
    colors = ["white"] + [STATE_COLORS.get(name, "gray") for name in STATE_NAMES]
    ax.imshow(
        image + 1,
        aspect="auto",
        interpolation="nearest",
        cmap=ListedColormap(colors),
        vmin=0,
        vmax=len(STATE_NAMES),
        extent=(0, edges[-1], len(slots) - 0.5, -0.5),
    )
    present = sorted(set(np.unique(image).tolist()) - {-1})
    ax.legend(
        handles=[
            Patch(color=STATE_COLORS.get(STATE_NAMES[i], "gray"), label=STATE_NAMES[i]) for i in present
        ],
        fontsize=FONT_SMALL,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
    )
    ax.set_yticks(range(len(slots)))
    ax.set_yticklabels(
        [
            f"SM{int(trace.sm_of(s))} sp{int(trace.sub_partition_of(s))} w{int(s % trace.slots_per_sm)}"
            for s in slots
        ],
        fontsize=FONT_TINY if len(slots) > 24 else FONT_SMALL,
    )
    ax.set_title(f"Warp timeline: {run.program.name} ({len(slots)} of {len(np.unique(r[:, 0]))} warp slots)")
    edges = trace.bin_edges()
    issued, _ = np.histogram(trace.raw_issues[:, 0], bins=edges)
    schedulers = run.config.sms * run.config.sub_partitions_per_sm
    ax_issue.bar(
        edges[:-1],
        100.0 * issued / (schedulers * np.diff(edges)),
        width=np.diff(edges),
        align="edge",
        color=STATE_COLORS["selected"],
    )
    ax_issue.set_ylabel("issue slots\nused %")
    ax_issue.set_ylim(0, 100)
    ax_issue.set_xlabel("cycle")
    fig.tight_layout()
    return fig


def state_image(intervals: np.ndarray, slots: np.ndarray, cycles: np.ndarray) -> np.ndarray:
    """[len(slots), len(cycles)] warp state at each cycle (-1 where the slot holds no warp)."""
    image = np.full((len(slots), len(cycles)), -1, dtype=np.int64)
    for row, slot in enumerate(slots):
        mine = intervals[intervals[:, 0] == slot]
        mine = mine[np.argsort(mine[:, 2], kind="stable")]
        index = np.searchsorted(mine[:, 2], cycles, side="right") - 1
        inside = (index >= 0) & (cycles < mine[np.maximum(index, 0), 3])
        image[row, inside] = mine[index[inside], 1]
    return image


def occupancy_vs_throughput(runs, labels: list[str] | None = None):
    """Achieved occupancy (x) against warp-instructions per cycle and DRAM GB/s (y) for a set of runs."""
    plt = pyplot()
    runs = [r for r in runs if r.timing]
    if not runs:
        raise GpusimError("occupancy_vs_throughput needs timed runs")
    labels = labels or [f"{r.block[0] * r.block[1] * r.block[2]} thr" for r in runs]
    occ = [r.metrics["sm__warps_active.avg.pct_of_peak_sustained_active"] for r in runs]
    ipc = [r.metrics["gpusim__warp_instructions_per_cycle"] for r in runs]
    dram = [r.metrics["gpusim__dram_bytes_per_second"] / 1e9 for r in runs]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot(occ, ipc, "o-", color="C0", label="warp-instructions / cycle")
    for x, y, label in zip(occ, ipc, labels, strict=True):
        ax.annotate(label, (x, y), fontsize=FONT_SMALL, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("achieved occupancy (% of max warps)")
    ax.set_ylabel("warp-instructions per cycle", color="C0")
    other = ax.twinx()
    other.plot(occ, dram, "s--", color="C3", label="DRAM GB/s")
    other.set_ylabel("DRAM GB/s", color="C3")
    ax.set_title("Occupancy vs throughput")
    fig.tight_layout()
    return fig


def save_figure(fig, directory, stem: str) -> list[Path]:
    """Write ``stem.png`` and ``stem.svg`` into directory (created if needed); close the figure."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        path = directory / f"{stem}.{ext}"
        fig.savefig(path, dpi=120)
        paths.append(path)
    pyplot().close(fig)
    return paths


def run_figures(run) -> dict[str, object]:
    """{name: Figure} for one run: roofline, stalls and (with a trace) the warp timeline."""
    if not run.timing:
        raise GpusimError(f"kernel '{run.program.name}': figures need a timed run (timing=True)")
    figures = {"roofline": run_roofline(run), "stalls": stall_breakdown(run)}
    if run.has_trace:
        figures["timeline"] = warp_timeline(run)
    return figures


def save_run_figures(run, directory, prefix: str | None = None) -> list[Path]:
    """Write every figure of a run as PNG and SVG; returns the paths."""
    prefix = prefix or run.program.name
    paths = []
    for name, fig in run_figures(run).items():
        paths += save_figure(fig, directory, f"{prefix}_{name}")
    return paths
