"""The text report of a run, in the spirit of Nsight Compute's sections, and its verdict.

Sections: speed of light (SM issue, busiest pipe, L1/shared, L2, DRAM as % of peak), launch statistics,
occupancy, warp states, memory workload, instruction statistics, the five hottest PTX lines, the
verdict and the suggestions, each naming the PTX line (and CUDA line) it is about.

The verdict rules (documented in docs/observability.md, tested in tests/test_report.py):

1. **memory-bound** when the busiest memory level (DRAM, L2 or L1/shared throughput) runs at
   ``MEMORY_BOUND_PCT`` (60 %) of its peak or more;
2. **compute-bound** when the schedulers issue in ``COMPUTE_BOUND_PCT`` (60 %) of the SMs' active
   cycles or more, or the busiest math pipe is that busy (whichever of 1 and 2 is further above its
   threshold wins when both hold);
3. otherwise **latency-bound**: nothing is near its peak, so warps spend their time waiting; the
   reason names the stall that holds them most (``long_scoreboard``, ``barrier``, ...).

Suggestions are findings read from the source view, each with a score (roughly: the share of the
run's work or time it wastes), weighted 1.0 when it matches the verdict and 0.5 when it does not
(divergence matches both compute- and latency-bound runs: it wastes issue slots either way);
the highest is the top suggestion. Findings: uncoalesced global/local access (sectors per request
above the ideal), shared-memory bank conflicts (wavefronts above the conflict-free count), SIMT
divergence (active lanes per instruction below 32, naming the branch that splits warps and the
least efficient line), a dominant stall with the latency-hiding arithmetic (a warp issues once every
L cycles, so a scheduler needs about L warps to issue every cycle), a grid too small to fill the
SMs, and a saturated math pipe.

Simplifications: thresholds are fixed rules of thumb, not a model; the report is plain text (the
``gpusim`` command prints it as is).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpusim.arch import isa as I
from gpusim.observe.source_view import SourceView, where

MEMORY_BOUND_PCT = 60.0
"""A memory level at or above this % of peak throughput makes a run memory-bound."""
COMPUTE_BOUND_PCT = 60.0
"""Issue slots or a math pipe at or above this % of peak make a run compute-bound."""
COALESCING_SLACK = 1.25
"""Sectors (or wavefronts) per request above this multiple of the ideal count as waste worth naming."""
DIVERGENCE_LANES_FRACTION = 0.85
"""Active lanes per instruction below this fraction of 32 count as divergence worth naming."""
MATCHING_WEIGHT, OTHER_WEIGHT = 1.0, 0.5
HOT_LINES = 5
BAR_WIDTH = 30


@dataclass
class Finding:
    """One suggestion: what to change, where, and how much it is worth (score in [0, 1])."""

    category: str  # "memory", "compute", "latency" (or "a/b"): the verdicts it matters most for
    text: str
    score: float
    ptx_line: int | None = None


@dataclass
class Verdict:
    """What limits the run: ``kind`` is memory-bound, compute-bound, latency-bound (or functional)."""

    kind: str
    reason: str
    suggestion: str
    limiter: str = ""
    findings: list = field(default_factory=list)

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
    from gpusim.arch.isa import pipe_intervals

    intervals = pipe_intervals(run.config)
    capacity = run.counters["sm_active_cycles"] * run.config.sub_partitions_per_sm
    out = {}
    for pipe, name in enumerate(I.PIPE_NAMES):
        if name in ("fma", "alu", "fp64", "sfu") and capacity:
            out[name] = 100.0 * run.counters[f"pipe_{name}_issues"] * int(intervals[pipe]) / capacity
    return out


def stall_shares(run) -> dict[str, float]:
    """Each warp state's share of all resident warp-cycles, largest first."""
    total = sum(run.stalls.values())
    shares = {k: v / total for k, v in run.stalls.items() if v} if total else {}
    return dict(sorted(shares.items(), key=lambda kv: -kv[1]))


def top_stall(run) -> tuple[str, float]:
    """The state (other than issuing) warps spend most warp-cycles in, and its share."""
    shares = {k: v for k, v in stall_shares(run).items() if k not in ("selected", "not_selected")}
    if not shares:
        return "", 0.0
    name = max(shares, key=shares.get)
    return name, shares[name]


def simd_lanes(run) -> float:
    return run.metrics["smsp__thread_inst_executed_per_inst_executed.ratio"]


# ------------------------------------------------------------------------------------------------ verdict
def verdict(run, view: SourceView | None = None) -> Verdict:
    """Classify the run as memory-, compute- or latency-bound, with the reason and the top suggestion."""
    if not run.timing:
        return Verdict("functional", "a functional-only run has no timing (launch with timing=True)", "")
    view = view or SourceView(run)
    sol = speed_of_light(run)
    memory_level = max(("DRAM", "L2", "L1/shared"), key=lambda k: sol[k])
    pipes = pipe_utilization(run)
    busiest_pipe = max(pipes, key=pipes.get) if pipes else "fma"
    compute_name, compute_pct = ("SM issue", sol["SM issue"])
    if pipes and pipes[busiest_pipe] > compute_pct:
        compute_name, compute_pct = f"{busiest_pipe} pipe", pipes[busiest_pipe]
    memory_pct = sol[memory_level]
    memory_over = memory_pct - MEMORY_BOUND_PCT
    compute_over = compute_pct - COMPUTE_BOUND_PCT
    stall, share = top_stall(run)
    if memory_over >= 0 and memory_over >= compute_over:
        kind, limiter = "memory-bound", memory_level
        reason = f"{memory_level} throughput at {memory_pct:.0f}% of peak (threshold {MEMORY_BOUND_PCT:.0f}%)"
    elif compute_over >= 0:
        kind, limiter = "compute-bound", compute_name
        reason = (
            f"{compute_name} busy {compute_pct:.0f}% of active cycles (threshold {COMPUTE_BOUND_PCT:.0f}%)"
        )
    else:
        kind, limiter = "latency-bound", stall
        reason = (
            f"no unit near its peak (busiest: {memory_level} {memory_pct:.0f}%, {compute_name} "
            f"{compute_pct:.0f}%); warps wait in {stall or 'no stall'} {share:.0%} of warp-cycles"
        )
    findings = _findings(run, view, busiest_pipe, pipes.get(busiest_pipe, 0.0))
    category = kind.split("-")[0]
    for f in findings:
        f.score *= MATCHING_WEIGHT if category in f.category.split("/") else OTHER_WEIGHT
    findings.sort(key=lambda f: -f.score)
    top = findings[0].text if findings else ""
    return Verdict(kind, reason, top, limiter, findings)


def _findings(run, view: SourceView, busiest_pipe: str, pipe_pct: float) -> list[Finding]:
    out: list[Finding] = []
    out += _coalescing(view)
    out += _bank_conflicts(view)
    out += _divergence(run, view)
    out += _latency(run, view)
    out += _grid(run)
    if pipe_pct >= COMPUTE_BOUND_PCT:
        out.append(
            Finding(
                "compute",
                f"the {busiest_pipe} pipe is busy {pipe_pct:.0f}% of active cycles: "
                "fewer or cheaper instructions (fused multiply-add, lower precision, tensor "
                "cores) are the way to go faster",
                pipe_pct / 100.0,
            )
        )
    return out


def _coalescing(view: SourceView) -> list[Finding]:
    rows = [r for r in view.rows if r.requests and r.space != "shared" and r.sectors]
    total = sum(r.sectors for r in rows)
    wasteful = [r for r in rows if r.sectors > COALESCING_SLACK * r.ideal_sectors]
    out = []
    for kind, prefix in (("loads", "ld"), ("stores", "st"), ("atomics", "")):
        group = [
            r
            for r in wasteful
            if (r.opcode.startswith(prefix) if prefix else not r.opcode.startswith(("ld", "st")))
        ]
        if not group or not total:
            continue
        worst = max(group, key=lambda r: r.sectors - r.ideal_sectors)
        waste = sum(r.sectors - r.ideal_sectors for r in group)
        more = f" (and {len(group) - 1} more line{'s' if len(group) > 2 else ''})" if len(group) > 1 else ""
        out.append(
            Finding(
                "memory",
                f"{kind} use {worst.sectors_per_request:.1f} sectors per request of an "
                f"ideal {worst.ideal_sectors_per_request:.1f}: uncoalesced access on "
                f"{where(worst)}{more}",
                waste / total,
                worst.ptx_line,
            )
        )
    return out


def _bank_conflicts(view: SourceView) -> list[Finding]:
    rows = [r for r in view.rows if r.wavefronts > COALESCING_SLACK * r.ideal_wavefronts and r.requests]
    total = sum(r.wavefronts for r in view.rows)
    if not rows or not total:
        return []
    worst = max(rows, key=lambda r: r.bank_conflicts)
    kind = (
        "loads" if worst.opcode.startswith("ld") else "stores" if worst.opcode.startswith("st") else "atomics"
    )
    return [
        Finding(
            "memory",
            f"shared {kind} take {worst.wavefronts / worst.requests:.1f} wavefronts per request "
            f"of an ideal {worst.ideal_wavefronts / worst.requests:.1f}: bank conflicts on {where(worst)}",
            sum(r.bank_conflicts for r in rows) / total,
            worst.ptx_line,
        )
    ]


def _divergence(run, view: SourceView) -> list[Finding]:
    lanes = simd_lanes(run)
    if not run.warp_instructions or lanes >= DIVERGENCE_LANES_FRACTION * 32:
        return []
    executed = [r for r in view.by_ptx_line() if r.warp_inst]
    worst = max(executed, key=lambda r: (32 - r.active_lanes) * r.warp_inst)
    branches = view.divergent_branches()
    text = f"warps run {lanes:.1f} of 32 lanes per instruction"
    if branches:
        b = branches[0]
        text += (
            f": the branch on {where(b)} splits warps from {b.active_lanes:.1f} to "
            f"{b.active_lanes - b.lanes_lost_at_branch:.1f} active lanes"
        )
    text += f"; least efficient line: {where(worst)} at {worst.active_lanes:.1f} lanes"
    return [
        Finding(
            "compute/latency", text, 1.0 - lanes / 32, branches[0].ptx_line if branches else worst.ptx_line
        )
    ]


def _latency(run, view: SourceView) -> list[Finding]:
    stall, share = top_stall(run)
    if not stall:
        return []
    issue_idle = 1.0 - run.metrics["smsp__issue_active.avg.pct_of_peak_sustained_active"] / 100.0
    rows = [r for r in view.by_ptx_line() if r.stalls.get(stall)]
    at = max(rows, key=lambda r: r.stalls[stall]) if rows else None
    text = f"warps stall in {stall} {share:.0%} of warp-cycles" + (f", most before {where(at)}" if at else "")
    cycles_per_issue, warps_per_scheduler = latency_hiding(run)
    if (
        stall in ("long_scoreboard", "short_scoreboard", "wait", "barrier")
        and warps_per_scheduler < 0.9 * cycles_per_issue
    ):
        occ = run.occupancy
        text += (
            f"; each warp issues once every {cycles_per_issue:.1f} cycles and a scheduler holds "
            f"{warps_per_scheduler:.1f} warps, so about {cycles_per_issue:.0f} warps per scheduler "
            f"(or more independent work per warp) would fill the idle issue slots "
            f"(occupancy allows {occ.warps_per_sm / run.config.sub_partitions_per_sm:.0f}, "
            f"limited by {occ.limiter})"
        )
    return [Finding("latency", text, share * issue_idle, at.ptx_line if at else None)]


def latency_hiding(run) -> tuple[float, float]:
    """(cycles between one warp's issues, resident warps per scheduler), both averaged over the run."""
    m = run.metrics
    per_sm = m["sm__warps_active.avg.per_cycle_active"]
    return m["smsp__average_warp_latency_per_inst_issued.ratio"], per_sm / run.config.sub_partitions_per_sm


def _grid(run) -> list[Finding]:
    blocks = run.grid[0] * run.grid[1] * run.grid[2]
    sms = run.config.sms
    if blocks >= sms:
        return []
    return [
        Finding(
            "latency",
            f"the grid has {blocks} block{'s' if blocks > 1 else ''} for {sms} SMs: "
            f"{sms - blocks} SMs stay idle; launch more blocks",
            1.0 - blocks / sms,
        )
    ]


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
    out = [head, "=" * len(head)]
    v = verdict(run, view)
    out += [f"Verdict: {v.kind.upper()}: {v.reason}"]
    if v.suggestion:
        out += [f"  Top suggestion: {v.suggestion}"]
    out += [""] + _launch_section(run)
    if run.timing:
        out += [""] + _sol_section(run) + [""] + _warp_section(run) + [""] + _memory_section(run)
    out += [""] + _instruction_section(run)
    out += ["", f"Hottest PTX lines (of {run.program.file})", view.table(view.hottest(HOT_LINES))]
    if len(v.findings) > 1:
        out += ["", "Suggestions (most valuable first)"]
        out += [f"  {i + 1}. {f.text}" for i, f in enumerate(v.findings)]
    trace = run.trace if run.has_trace else None
    if trace is not None and trace.truncated:
        out += [
            "",
            f"Note: the trace was cut at {trace.capacity} rows per table (a memory budget); "
            "launch with trace=N for a larger one. The report itself uses full counters.",
        ]
    return "\n".join(out)


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
    mix = {k: v for k, v in pipe_mix(run.program, run.pc_counts).items() if v}
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
    return {
        "kernel": run.program.name,
        "ptx": str(run.program.file),
        "config": run.config.to_dict(),
        "grid": list(run.grid),
        "block": list(run.block),
        "timing": run.timing,
        "cycles": int(run.cycles) if run.timing else None,
        "seconds": float(run.seconds) if run.timing else None,
        "metrics": {k: (float(x) if isinstance(x, float) else int(x)) for k, x in run.metrics.items()},
        "stalls": {k: int(x) for k, x in run.stalls.items()},
        "verdict": {
            "kind": v.kind,
            "reason": v.reason,
            "suggestion": v.suggestion,
            "limiter": v.limiter,
            "suggestions": [f.text for f in v.findings],
        },
        "source_view": view.to_records(),
    }
