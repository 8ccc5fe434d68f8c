"""Suggestions for one run, ordered so that the advice follows the verdict.

Each ``Finding`` has a ``kind`` (what it is about: ``coalescing``, ``fewer_bytes``, ``more_parallelism``,
...) and the ``families`` of regimes it is a fix for. A regime's family decides what can help:

* **memory** (memory-bound): only fewer bytes -- ``coalescing`` (sectors per request above the ideal),
  ``bank_conflicts`` (shared wavefronts above the conflict-free count), ``fewer_bytes`` (fusion, lower
  precision, reuse through shared-memory tiling; names the level at its roof). Once a level is at its
  roof more warps cannot help, so the stall finding of a memory-bound run says so instead of asking for
  more warps;
* **compute** (compute-bound): fewer or cheaper instructions on the right pipe -- ``math_pipe`` (a
  saturated pipe), ``fewer_instructions`` (issue slots full; names the mix), ``divergence``;
* **latency** (latency-bound): more warps or more independent work per warp -- ``more_parallelism``
  (a dominant stall with the latency-hiding arithmetic: a warp issues once every L cycles, so a scheduler
  needs about L warps to issue every cycle), ``stall`` (a dominant stall that more warps would not fix),
  ``grid`` (fewer blocks than SMs), ``divergence`` (it wastes issue slots either way);
* **launch** (launch-bound): more work per launch -- ``launch_overhead`` (the kernel is shorter than a
  host launch call: fuse it with its neighbours, capture a CUDA graph, launch a bigger grid), ``grid``.

Each finding has a score in [0, 1] (roughly the share of the run's work or time it wastes; generic
advice is scored at half its regime's utilisation so that a concrete waste of the same family outranks
it). ``ordered`` puts the findings of the verdict's family first, each group by score: the top
suggestion always belongs to the verdict's family.

Once ``run.what_if()`` has run, a finding a what-if limit covers (``WHAT_IF_OF_KIND``) quotes the measured
speed-up of removing that limit and is scored by it (``quote_what_if``).

Simplifications: the scores are rules of thumb (measured ones after a what-if); a finding names the worst
line, not every line.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.arch import isa
from gpusim.arch import layout as L
from gpusim.observe.metrics import pipe_mix
from gpusim.observe.regime import COMPUTE_BOUND_PCT, MEMORY_BOUND_PCT, Regime, dominant_stall, pipes_from_metrics
from gpusim.observe.source_view import SourceView, where

COALESCING_SLACK = 1.25
"""Sectors (or wavefronts) per request above this multiple of the ideal count as waste worth naming."""
DIVERGENCE_LANES_FRACTION = 0.85
"""Active lanes per instruction below this fraction of 32 count as divergence worth naming."""
GENERIC_WEIGHT = 0.5
"""Generic advice (fewer bytes, fewer instructions) is scored at this fraction of the utilisation."""
WAIT_STALLS = ("long_scoreboard", "short_scoreboard", "wait", "barrier")
FINDING_KINDS = {
    "coalescing": ("memory",),
    "bank_conflicts": ("memory",),
    "fewer_bytes": ("memory",),
    "math_pipe": ("compute",),
    "fewer_instructions": ("compute",),
    "divergence": ("compute", "latency"),
    "more_parallelism": ("latency",),
    "stall": ("latency",),
    "grid": ("latency", "launch"),
    "launch_overhead": ("launch",),
}
"""Finding kind -> the families (regimes) it is a fix for."""


@dataclass
class Finding:
    """One suggestion: what to change, where, and how much it is worth (score in [0, 1])."""

    kind: str
    text: str
    score: float
    ptx_line: int | None = None

    @property
    def families(self) -> tuple[str, ...]:
        return FINDING_KINDS[self.kind]

    @property
    def category(self) -> str:
        """The families as one string ("compute/latency")."""
        return "/".join(self.families)

    def as_dict(self) -> dict:
        return {
            "kind": self.kind,
            "families": list(self.families),
            "text": self.text,
            "score": float(self.score),
            "ptx_line": self.ptx_line,
        }


def findings(run, view: SourceView, regime: Regime) -> list[Finding]:
    """Every finding of a timed run, the verdict's family first (``ordered``)."""
    out: list[Finding] = []
    out += _coalescing(view)
    out += _bank_conflicts(view)
    out += _fewer_bytes(run, regime)
    out += _divergence(run, view)
    out += _stall(run, view, regime)
    out += _grid(run)
    out += _launch(run, regime)
    out += _compute(run, regime)
    return ordered(quote_what_if(out, run.__dict__.get("_what_if")), regime.family)


WHAT_IF_OF_KIND = {"coalescing": ("coalescing",), "bank_conflicts": ("shared_bank_conflicts",),
                   "fewer_bytes": ("dram_bandwidth", "l2_bandwidth"), "math_pipe": ("math_pipes",),
                   "more_parallelism": ("occupancy",), "launch_overhead": ("launch_overhead",)}
"""Finding kind -> the what-if limits (gpusim.launch.what_if) whose removal measures what fixing it buys."""


def quote_what_if(found: list[Finding], what_if) -> list[Finding]:
    """With a what-if measured (``run.what_if()``), each finding it covers quotes the measured speed-up and is
    scored by it (the share of the time it would save: 1 - 1 / speed-up) instead of by a rule of thumb."""
    if what_if is None:
        return found
    measured = {row.limit: row for row in what_if.rows if row.measured}
    out = []
    for finding in found:
        rows = [measured[limit] for limit in WHAT_IF_OF_KIND.get(finding.kind, ()) if limit in measured]
        if rows:
            best = max(rows, key=lambda row: row.speedup)
            text = (f"{finding.text} Measured: with {best.description.lower()} this kernel runs "
                    f"{best.speedup:.2f}x faster.")
            finding = Finding(finding.kind, text, max(0.0, 1.0 - 1.0 / best.speedup), finding.ptx_line)
        out.append(finding)
    return out


def ordered(found: list[Finding], family: str) -> list[Finding]:
    """The findings of ``family`` first, then the rest; each group by score, highest first."""
    return sorted(found, key=lambda f: (family not in f.families, -f.score))


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
                "coalescing",
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
            "bank_conflicts",
            f"shared {kind} take {worst.wavefronts / worst.requests:.1f} wavefronts per request "
            f"of an ideal {worst.ideal_wavefronts / worst.requests:.1f}: bank conflicts on {where(worst)}",
            sum(r.bank_conflicts for r in rows) / total,
            worst.ptx_line,
        )
    ]


def _fewer_bytes(run, regime: Regime) -> list[Finding]:
    if regime.memory_pct < MEMORY_BOUND_PCT:
        return []
    m = run.metrics
    level, pct = regime.memory_level, regime.memory_pct
    if level == "DRAM":
        moved = m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]
        how = (
            "fuse it with the kernels that produce or consume its data, store the data in lower precision "
            "(fp16/bf16/int8), or reuse each loaded byte (tiling through shared memory)"
        )
    elif level == "L2":
        moved = m["lts__t_bytes.sum"]
        how = "reuse data from L1 or shared memory (tiling) instead of reloading it, or use fewer sectors per request"
    else:
        moved = None
        how = "fewer shared-memory wavefronts (no bank conflicts, wider accesses) and keep reused values in registers"
    amount = f"moves {_bytes(moved)} " if moved is not None else "runs "
    intensity = m.get("gpusim__arithmetic_intensity", 0.0)
    return [
        Finding(
            "fewer_bytes",
            f"{level} {amount}at {pct:.0f}% of its peak ({intensity:.2g} FLOP per DRAM byte): the time is "
            f"bytes / bandwidth, so more warps cannot help; move fewer bytes: {how}",
            GENERIC_WEIGHT * min(1.0, pct / 100.0),
        )
    ]


def _divergence(run, view: SourceView) -> list[Finding]:
    lanes = run.metrics["smsp__thread_inst_executed_per_inst_executed.ratio"]
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
    line = branches[0].ptx_line if branches else worst.ptx_line
    return [Finding("divergence", text, 1.0 - lanes / 32, line)]


def latency_hiding(run) -> tuple[float, float]:
    """(cycles between one warp's issues, resident warps per scheduler), both averaged over the run."""
    m = run.metrics
    per_sm = m["sm__warps_active.avg.per_cycle_active"]
    return m["smsp__average_warp_latency_per_inst_issued.ratio"], per_sm / run.config.sub_partitions_per_sm


def _stall(run, view: SourceView, regime: Regime) -> list[Finding]:
    stall, share = dominant_stall(run.stalls)
    if not stall:
        return []
    issue_idle = 1.0 - run.metrics["smsp__issue_active.avg.pct_of_peak_sustained_active"] / 100.0
    rows = [r for r in view.by_ptx_line() if r.stalls.get(stall)]
    at = max(rows, key=lambda r: r.stalls[stall]) if rows else None
    text = f"warps stall in {stall} {share:.0%} of warp-cycles" + (f", most before {where(at)}" if at else "")
    line = at.ptx_line if at else None
    if regime.memory_pct >= MEMORY_BOUND_PCT:
        text += (
            f"; that is the queue for {regime.memory_level} at {regime.memory_pct:.0f}% of its peak: "
            "more warps would only lengthen it"
        )
        return [Finding("stall", text, share * issue_idle, line)]
    cycles_per_issue, warps_per_scheduler = latency_hiding(run)
    if stall in WAIT_STALLS and warps_per_scheduler < 0.9 * cycles_per_issue:
        occ = run.occupancy
        text += (
            f"; each warp issues once every {cycles_per_issue:.1f} cycles and a scheduler holds "
            f"{warps_per_scheduler:.1f} warps, so about {cycles_per_issue:.0f} warps per scheduler "
            f"(or more independent work per warp: several loads in flight, independent chains) would fill "
            f"the idle issue slots (occupancy allows {occ.warps_per_sm / run.config.sub_partitions_per_sm:.0f}, "
            f"limited by {occ.limiter})"
        )
        return [Finding("more_parallelism", text, share * issue_idle, line)]
    return [Finding("stall", text, share * issue_idle, line)]


def _grid(run) -> list[Finding]:
    blocks = run.grid[0] * run.grid[1] * run.grid[2]
    sms = run.config.sms
    if blocks >= sms:
        return []
    return [
        Finding(
            "grid",
            f"the grid has {blocks} block{'s' if blocks > 1 else ''} for {sms} SMs: "
            f"{sms - blocks} SMs stay idle; launch more blocks",
            1.0 - blocks / sms,
        )
    ]


def _launch(run, regime: Regime) -> list[Finding]:
    launch_us = float(run.config.launch_cpu_us)
    us = regime.microseconds
    if us is None or us >= launch_us:
        return []
    return [
        Finding(
            "launch_overhead",
            f"the kernel runs {us:.2f} us, less than one {launch_us:g} us host launch call: back to back "
            "such launches are paced by the launch calls; give each launch more work (a bigger grid, "
            "several elements per thread), fuse it with its neighbouring kernels or capture the sequence "
            "in a CUDA graph",
            1.0 - us / launch_us,
        )
    ]


def _uses_wgmma(program) -> bool:
    forms = {int(f) for f in program.code[:program.n_inst, L.F_ISA]} if program.n_inst else set()
    return any(isa.FORMS[f].name.startswith("wgmma.m64") for f in forms)


def _tensor_advice(run, pct: float) -> str:
    """What raises a tensor-bound run's speed: on Hopper mma.sync's ceiling is 2/3 of the dense peak and wgmma
    reaches the rest; a wgmma kernel's idle tensor time is its feeding; everywhere a lower precision."""
    head = f"the tensor pipe is busy {pct:.0f}% of active cycles"
    lower = "a lower precision (FP8/INT8 runs twice the FLOPs per cycle)"
    if _uses_wgmma(run.program):
        return (f"{head} with wgmma (100% is the dense peak): the rest of the time it waits for operands (fewer "
                "bytes per FLOP: wider tiles, TMA multicast in a cluster), for the pipeline to fill or for the "
                f"epilogue's stores (a persistent kernel overlaps them with the next tile's loads); or {lower}")
    if int(getattr(run.config, "wgmma_n8_interval_cycles", 0)) > 0:
        return (f"{head}, near the rate mma.sync attains, which on this GPU is below the dense peak: wgmma "
                f"(warpgroup MMA from shared memory, programs/gemm_hopper, docs/tensor-cores.md) reaches the rest; "
                f"or {lower}")
    return f"{head}, near the rate mma.sync attains: {lower} is the way to go faster"


def _compute(run, regime: Regime) -> list[Finding]:
    out = []
    pipes = pipes_from_metrics(run.metrics)
    if pipes:
        busiest = max(pipes, key=lambda pipe: pipes[pipe])
        pct = pipes[busiest]
        if pct >= COMPUTE_BOUND_PCT and busiest == "tensor":
            out.append(Finding("math_pipe", _tensor_advice(run, pct), min(1.0, pct / 100.0)))
        elif pct >= COMPUTE_BOUND_PCT:
            out.append(
                Finding(
                    "math_pipe",
                    f"the {busiest} pipe is busy {pct:.0f}% of active cycles: fewer or cheaper "
                    "instructions on it (fused multiply-add for multiply-add pairs, lower precision, tensor "
                    "cores) are the way to go faster",
                    min(1.0, pct / 100.0),
                )
            )
    issue = run.metrics["smsp__issue_active.avg.pct_of_peak_sustained_active"]
    if issue >= COMPUTE_BOUND_PCT:
        mix = {k: v for k, v in pipe_mix(run.program, run.pc_counts, run.config).items() if v}
        total = sum(mix.values()) or 1
        top = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in sorted(mix.items(), key=lambda kv: -kv[1])[:3])
        out.append(
            Finding(
                "fewer_instructions",
                f"the schedulers issue in {issue:.0f}% of active cycles: every instruction costs an issue "
                f"slot (mix: {top}), so fewer instructions are the way to go faster -- less index "
                "arithmetic (unrolling, wider loads), fused multiply-add, no divergent paths",
                GENERIC_WEIGHT * min(1.0, issue / 100.0),
            )
        )
    return out


def _bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"
