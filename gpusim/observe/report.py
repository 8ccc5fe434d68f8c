"""The text report of a run, in the spirit of Nsight Compute's sections, and its verdict.

Sections: speed of light (SM issue, busiest pipe, L1/shared, L2, DRAM as % of peak), launch statistics,
occupancy, warp states, memory workload, instruction statistics, the five hottest PTX lines, the
verdict and the suggestions, each naming the PTX line (and CUDA line) it is about. Once ``run.what_if()``
has run, the verdict, the suggestions and a what-if section quote its measured speed-ups.

The verdict is ``gpusim.observe.regime.classify`` of the run's metrics: memory-, compute-, launch- or
latency-bound (the rules are in that module and in docs/observability.md). The suggestions are
``gpusim.observe.advice.findings``: each has a ``kind`` and the families of regimes it fixes, and the
findings of the verdict's family come first, so the top suggestion follows from the verdict (a
memory-bound run is told to move fewer bytes, never to add warps).

Simplifications: thresholds are fixed rules of thumb, not a model; the report is plain text (the
``gpusim`` command prints it as is).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpusim.observe.advice import (  # noqa: F401  (re-exported: the report's public names)
    COALESCING_SLACK,
    DIVERGENCE_LANES_FRACTION,
    Finding,
    findings,
    latency_hiding,
)
from gpusim.observe.regime import (  # noqa: F401
    COMPUTE_BOUND_PCT,
    MEMORY_BOUND_PCT,
    Regime,
    classify,
    dominant_stall,
)
from gpusim.observe.source_view import SourceView

HOT_LINES = 5
BAR_WIDTH = 30


@dataclass
class Verdict:
    """What limits the run: ``kind`` is memory-bound, compute-bound, latency-bound, launch-bound (or
    functional); ``findings`` are the suggestions, the verdict's ``family`` first."""

    kind: str
    reason: str
    suggestion: str
    limiter: str = ""
    findings: list = field(default_factory=list)

    @property
    def family(self) -> str:
        """memory, compute, latency or launch ("" for a functional run)."""
        from gpusim.observe.regime import FAMILY_OF_KIND

        return FAMILY_OF_KIND[self.kind]

    @property
    def top(self) -> Finding | None:
        """The top suggestion as a Finding (its ``kind`` and ``families``), or None."""
        return self.findings[0] if self.findings else None

    def __str__(self) -> str:
        return f"{self.kind}: {self.reason}" + (
            f"\n  suggestion: {self.suggestion}" if self.suggestion else ""
        )


# ------------------------------------------------------------------------------------------------ numbers
def _pct(x: float) -> str:
    return f"{x:5.1f}%"


def speed_of_light(run) -> dict[str, float]:
    """% of peak: SM issue, each math pipe, L1/shared, L2 and DRAM throughput."""
    m = run.metrics
    out = {
        "SM issue": m["smsp__issue_active.avg.pct_of_peak_sustained_active"],
        "L1/shared": m["l1tex__throughput.avg.pct_of_peak_sustained_active"],
        "L2": m["lts__throughput.avg.pct_of_peak_sustained_elapsed"],
        "DRAM": m["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
    }
    out.update({f"{name} pipe": pct for name, pct in pipe_utilization(run).items()})
    return out


def pipe_utilization(run) -> dict[str, float]:
    """% of the SMs' active cycles each math pipe was busy (issues x cycles per warp-instruction)."""
    from gpusim.observe.regime import pipes_from_metrics

    return pipes_from_metrics(run.metrics)


def stall_shares(run) -> dict[str, float]:
    """Each warp state's share of all resident warp-cycles, largest first."""
    total = sum(run.stalls.values())
    shares = {k: v / total for k, v in run.stalls.items() if v} if total else {}
    return dict(sorted(shares.items(), key=lambda kv: -kv[1]))


def top_stall(run) -> tuple[str, float]:
    """The state (other than issuing) warps spend most warp-cycles in, and its share."""
    return dominant_stall(run.stalls)


def simd_lanes(run) -> float:
    return run.metrics["smsp__thread_inst_executed_per_inst_executed.ratio"]


# ------------------------------------------------------------------------------------------------ verdict
def verdict(run, view: SourceView | None = None) -> Verdict:
    """Classify the run (memory-, compute-, launch- or latency-bound), with the reason and the suggestions."""
    if not run.timing:
        return Verdict("functional", "a functional-only run has no timing (launch with timing=True)", "")
    view = view or SourceView(run)
    regime = classify(run.metrics, run.config, run.stalls)
    found = findings(run, view, regime)
    top = found[0].text if found else ""
    reason = regime.reason
    what_if = run.__dict__.get("_what_if")      # run.what_if() was called: quote what it measured
    if what_if is not None:
        reason += f"; measured (what-if): {what_if.headline()}"
    return Verdict(regime.kind, reason, top, regime.limiter, found)


# ------------------------------------------------------------------------------------------------ text
def _bar(fraction: float) -> str:
    n = int(round(max(0.0, min(1.0, fraction)) * BAR_WIDTH))
    return "#" * n + "." * (BAR_WIDTH - n)


def _bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def report_text(run) -> str:
    """The whole report as plain text."""
    view = SourceView(run)
    config = run.config
    head = f"{run.program.name} on {config.name} ({config.sms} SMs @ {config.core_clock_mhz:g} MHz): "
    head += f"{run.cycles} cycles, {run.seconds * 1e6:.3f} us" if run.timing else "functional run (no timing)"
    sampling = getattr(run, "sampling", None) if run.timing else None
    if sampling is not None and sampling.sampled:
        head += " (sampled)"
    out = [head, "=" * len(head)]
    if sampling is not None:          # GPU(sampling=...): gpusim.launch.sampling
        out += [f"Sampling: {sampling.summary()}"]
        if sampling.sampled:
            out += ["  cycles, stalls, memory and pipe counters are extrapolated from the timed blocks (the "
                    "instruction counts are " + ("exact" if not sampling.blocks_not_executed else "extrapolated")
                    + "); the source view's stalls and the trace cover the timed blocks only"]
    out += [f"Warning: {line}" for line in getattr(run, "warnings", ())]
    v = verdict(run, view)
    out += [f"Verdict: {v.kind.upper()}: {v.reason}"]
    if v.suggestion:
        out += [f"  Top suggestion: {v.suggestion}"]
    out += [""] + _launch_section(run)
    if run.timing:
        out += [""] + _sol_section(run) + [""] + _warp_section(run) + [""] + _memory_section(run)
    out += [""] + _instruction_section(run)
    out += ["", f"Hottest PTX lines (of {run.program.file})", view.table(view.hottest(HOT_LINES))]
    if run.__dict__.get("_what_if") is not None:
        out += ["", run.__dict__["_what_if"].to_text()]
    if len(v.findings) > 1:
        out += ["", f"Suggestions (fixes for a {v.kind} run first, then the others)"]
        out += [f"  {i + 1}. [{f.kind}] {f.text}" for i, f in enumerate(v.findings)]
    if getattr(run, "sanitizer_report", ""):
        out += ["", "Sanitizer report", run.sanitizer_report]
    trace = run.trace if run.has_trace else None
    if trace is not None and trace.truncated:
        out += [
            "",
            f"Note: the trace was cut at {trace.capacity} rows per table (a memory budget); "
            "launch with trace=N for a larger one. The report itself uses full counters.",
        ]
    return "\n".join(out)


def _codegen_line(program) -> str:
    from gpusim.codegen import timed_mode

    mode, reason = timed_mode(program)
    if mode == "none":
        return f"none (the PTX in program order, as written; {reason})"
    return f"ptxas-like ({mode}: folding, unrolling, if-conversion, scheduling; gpusim.codegen)"


def _launch_section(run) -> list[str]:
    occ = run.occupancy
    blocks = run.grid[0] * run.grid[1] * run.grid[2]
    threads = run.block[0] * run.block[1] * run.block[2]
    per_wave = max(1, occ.blocks_per_sm * run.config.sms)
    lines = [
        "Launch statistics",
        f"  grid {run.grid} x block {run.block}: {blocks} blocks of {threads} threads "
        f"({occ.warps_per_block} warps)",
        f"  registers/thread {run.regs_per_thread} ({run.regs_source}), shared memory/block "
        f"{run.shared_bytes} B, waves: {blocks / per_wave:.2f} ({occ.blocks_per_sm} blocks/SM x "
        f"{run.config.sms} SMs)",
        f"  code generation: {_codegen_line(run.program)}",
        "Occupancy",
        f"  theoretical {100 * occ.occupancy:.1f}% ({occ.warps_per_sm} of {occ.max_warps_per_sm} warps/SM, "
        f"limited by {occ.limiter})",
    ]
    if run.timing:
        lines.append(
            f"  achieved    {run.metrics['sm__warps_active.avg.pct_of_peak_sustained_active']:.1f}% "
            f"({run.metrics['sm__warps_active.avg.per_cycle_active']:.1f} warps/SM on average)"
        )
    return lines


def _sol_section(run) -> list[str]:
    lines = ["Speed of light (% of peak)"]
    for name, pct in speed_of_light(run).items():
        lines.append(f"  {name:<12} {_pct(pct)}  {_bar(pct / 100)}")
    return lines


def _warp_section(run) -> list[str]:
    cycles_per_issue, warps_per_scheduler = latency_hiding(run)
    lines = [
        f"Warp states (warp-cycles per issued instruction: {cycles_per_issue:.1f}; "
        f"{warps_per_scheduler:.1f} warps per scheduler)"
    ]
    for name, share in stall_shares(run).items():
        lines.append(f"  {name:<18} {_pct(100 * share)}  {_bar(share)}")
    return lines


def _memory_section(run) -> list[str]:
    m = run.metrics
    c = run.counters
    lines = [
        "Memory workload",
        f"  DRAM  read {_bytes(m['dram__bytes_read.sum'])}, write {_bytes(m['dram__bytes_write.sum'])}, "
        f"{m['gpusim__dram_bytes_per_second'] / 1e9:.1f} GB/s",
        f"  L2    {_bytes(m['lts__t_bytes.sum'])}, hit rate {m['lts__t_sector_hit_rate.pct']:.1f}%",
        f"  L1    hit rate {m['l1tex__t_sector_hit_rate.pct']:.1f}%",
    ]
    for kind, req, sec, ideal in (
        ("loads", "global_load_requests", "global_load_sectors", "global_load_ideal_sectors"),
        ("stores", "global_store_requests", "global_store_sectors", "global_store_ideal_sectors"),
    ):
        if c[req]:
            lines.append(
                f"  global {kind:<6} {c[req]} requests, {c[sec] / c[req]:.1f} sectors/request "
                f"(ideal {c[ideal] / c[req]:.1f})"
            )
    for kind in ("load", "store"):
        req, wav = c[f"shared_{kind}_requests"], c[f"shared_{kind}_wavefronts"]
        if req:
            ideal = c[f"shared_{kind}_ideal_wavefronts"]
            lines.append(
                f"  shared {kind}s {req} requests, {wav / req:.2f} wavefronts/request "
                f"(ideal {ideal / req:.2f}), {wav - ideal} bank-conflict wavefronts"
            )
    return lines


def _instruction_section(run) -> list[str]:
    from gpusim.observe.metrics import pipe_mix

    m = run.metrics
    mix = {k: v for k, v in pipe_mix(run.program, run.pc_counts, run.config).items() if v}
    total = sum(mix.values()) or 1
    lines = [
        "Instruction statistics",
        f"  {m['smsp__inst_executed.sum']} warp-instructions, {m['smsp__thread_inst_executed.sum']} "
        f"thread-instructions; SIMD efficiency {simd_lanes(run):.1f} of 32 lanes "
        f"({100 * simd_lanes(run) / 32:.0f}%)",
        f"  FLOPs {m['gpusim__flops.sum']} (FP32 {m['gpusim__fp32_flops.sum']}, FP64 "
        f"{m['gpusim__fp64_flops.sum']})",
        "  mix by pipe: " + ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in mix.items()),
    ]
    return lines


def run_dict(run) -> dict:
    """Everything about a run as plain data (JSON-ready): metrics, stalls, config, verdict, source view."""
    view = SourceView(run)
    v = verdict(run, view)
    from gpusim.observe.export import RUN_SCHEMA_VERSION, metric_unit

    what_if = run.__dict__.get("_what_if")
    out = {
        "schema_version": RUN_SCHEMA_VERSION,
        "kernel": run.program.name,
        "ptx": str(run.program.file),
        "config": run.config.to_dict(),
        "grid": list(run.grid),
        "block": list(run.block),
        "timing": run.timing,
        "codegen": run.codegen,
        "codegen_requested": getattr(run.program, "codegen", "none"),
        "codegen_reason": run.codegen_reason,
        "codegen_passes": list(getattr(run.program, "codegen_notes", [])),
        "cycles": int(run.cycles) if run.timing else None,
        "seconds": float(run.seconds) if run.timing else None,
        "metrics": {k: (float(x) if isinstance(x, float) else int(x)) for k, x in run.metrics.items()},
        "metric_units": {k: metric_unit(k) for k in run.metrics},
        "stalls": {k: int(x) for k, x in run.stalls.items()},
        "verdict": {
            "kind": v.kind,
            "reason": v.reason,
            "suggestion": v.suggestion,
            "limiter": v.limiter,
            "family": v.family,
            "top_kind": v.top.kind if v.top else "",
            "suggestions": [f.text for f in v.findings],
            "findings": [f.as_dict() for f in v.findings],
        },
        "source_view": view.to_records(),
    }
    if what_if is not None:
        out["what_if"] = what_if.to_dict()
    if run.timing and getattr(run, "sampling", None) is not None:     # GPU(sampling=...)
        out["sampling"] = run.sampling.to_dict()
    return out
