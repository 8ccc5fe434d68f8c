"""The glossary of the interactive report: what each term the report shows means on the hardware.

One entry per warp state (stall reason, as ``gpusim.engine.sm.stalls`` names them after Nsight Compute),
per metric the report shows (under its Nsight Compute name), per unit, and per concept (SM, warp, sector,
L2, DRAM, roofline, ...). ``term_link(key)`` makes the link a page puts on a term; ``glossary_html()`` the
section the links point at; the report's test checks that every link resolves.

Simplifications: the entries describe the hardware as gpusim models it (docs/design.md); where a real
GPU does more (for example the L1 also caching textures), the entry says what the model counts.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """One glossary entry: its title, its unit ("" for a concept) and what it means on the hardware."""

    title: str
    unit: str
    meaning: str


_STALLS = {
    "selected": "The warp issued an instruction this cycle: its scheduler picked it. The only state that "
                "does work; every other state is a reason the warp did not issue.",
    "not_selected": "The warp was ready to issue, but its sub-partition's scheduler (one issue per cycle) "
                    "picked another ready warp. Many of these mean the scheduler is never idle: enough warps.",
    "long_scoreboard": "The warp waits for the result of a global or local memory load (through L1TEX, L2 and "
                       "maybe DRAM): hundreds of cycles. Hide it with more warps or more independent loads "
                       "in flight per warp; avoid it by moving fewer bytes.",
    "short_scoreboard": "The warp waits for an MIO result: a shared-memory load, a special function (SFU) or a "
                        "shuffle. Tens of cycles; bank conflicts lengthen it.",
    "wait": "The warp waits a fixed number of cycles for a fixed-latency result (ALU, FMA, FP64) its next "
            "instruction needs: the dependent instruction right after its producer.",
    "barrier": "The warp waits at bar.sync (__syncthreads) for the other warps of its block to arrive.",
    "math_pipe_throttle": "The math pipe (FMA, ALU, FP64, SFU, tensor) the next instruction needs is busy with "
                          "earlier instructions: the pipe is the limit.",
    "lg_throttle": "The LSU queue for global/local memory instructions is full, or every miss-status holding "
                   "register (MSHR) is in use: too many memory instructions in flight.",
    "mio_throttle": "The MIO queue (shared memory, shuffles, special functions) is full.",
    "branch_resolving": "The warp waits for a taken branch to resolve its target and active mask.",
    "no_instruction": "The warp waits for its first instruction after its block started (instruction fetch).",
    "drain": "The warp has exited and waits for its outstanding stores to drain to memory.",
    "membar": "The warp waits at a memory barrier (membar/fence) for its outstanding memory operations.",
    "dispatch_stall": "The warp waits for its block's dispatch onto the SM to finish.",
    "sleeping": "The warp waits in nanosleep.",
}

_METRICS = {
    "sm__cycles_elapsed.max": ("cycle", "The kernel's duration in SM clock cycles, launch to last warp done."),
    "gpu__time_duration.sum": ("ns", "The kernel's duration in nanoseconds at the config's core clock."),
    "smsp__issue_active.avg.pct_of_peak_sustained_active":
        ("%", "Issue slots used: warp-instructions issued over the schedulers' issue slots (one per "
              "sub-partition per active cycle). 100 % means a scheduler issued every cycle."),
    "sm__warps_active.avg.pct_of_peak_sustained_active":
        ("%", "Achieved occupancy: resident warps per active cycle over the most an SM holds."),
    "l1tex__throughput.avg.pct_of_peak_sustained_active":
        ("%", "L1/shared data path use: sectors and shared-memory wavefronts moved over what the SMs' "
              "L1 data paths move at peak in their active cycles."),
    "lts__throughput.avg.pct_of_peak_sustained_elapsed":
        ("%", "L2 use: bytes through the L2 slices over their peak bytes per cycle for the kernel's duration."),
    "dram__throughput.avg.pct_of_peak_sustained_elapsed":
        ("%", "DRAM (HBM) use: bytes read and written over the peak bandwidth for the kernel's duration."),
    "l1tex__t_sector_hit_rate.pct": ("%", "Share of the global load sectors L1 held already."),
    "lts__t_sector_hit_rate.pct": ("%", "Share of the sectors looked up in L2 that L2 held already."),
    "dram__bytes_read.sum": ("byte", "Bytes read from DRAM (L2 misses, 32-byte sectors)."),
    "dram__bytes_write.sum": ("byte", "Bytes written to DRAM (L2 write-backs)."),
    "lts__t_bytes.sum": ("byte", "Bytes through L2: every sector L1 sent to or fetched from L2."),
    "gpusim__flop_per_second": ("FLOP/s", "Floating-point operations per second achieved (an FMA is two)."),
    "gpusim__arithmetic_intensity": ("FLOP/byte", "FLOPs per DRAM byte: the roofline's x axis."),
    "gpusim__warp_instructions_per_cycle": ("warp-instruction/cycle", "Warp-instructions issued per cycle, "
                                                                      "all SMs together."),
}

_UNITS = {
    "cycle": "One tick of the SM clock (the config's core clock).",
    "warp-cycle": "One warp resident for one cycle: each resident warp is charged one warp-cycle per cycle to "
                  "exactly one state (issuing, or one stall reason).",
    "warp-instruction": "One instruction issued for a warp: up to 32 threads execute it at once.",
    "sector": "32 bytes: the unit L1, L2 and DRAM move and tag data in (a 128-byte line holds four).",
    "byte": "Eight bits of data moved between two units.",
    "GB/s": "10^9 bytes per second at the config's clock.",
    "FLOP/s": "Floating-point operations per second (a fused multiply-add counts two).",
    "FLOP/byte": "FLOPs per byte moved from DRAM: arithmetic intensity.",
    "%": "Percent of the unit's peak (its most per cycle, from the config) over the cycles it could work.",
    "ns": "10^-9 seconds.",
    "warp-instruction/cycle": "Warp-instructions issued per clock cycle.",
}

_CONCEPTS = {
    "sm": ("SM", "Streaming multiprocessor: one of the GPU's cores. It holds resident blocks' warps, four "
                 "sub-partitions each with a warp scheduler, register file and math pipes, and an L1/shared "
                 "memory."),
    "warp": ("warp", "32 threads that issue together, one instruction at a time (SIMT); the unit the "
                     "scheduler picks."),
    "block": ("block", "A thread block (CTA): threads that run on one SM together, share its shared memory and "
                       "synchronize at barriers; the SM holds several at once, as occupancy allows."),
    "grid": ("grid", "All the blocks of one launch; the block dispatcher hands them to the SMs as room frees."),
    "pipe": ("pipe", "An execution unit of a sub-partition an instruction issues to: FMA, ALU, FP64, SFU (special "
                     "functions), tensor, LSU (global/local memory), MIO (shared memory, shuffles), branch."),
    "warp_slot": ("warp slot", "A place for one resident warp on an SM; the timeline has one row per slot, "
                               "which holds successive warps as blocks finish and new ones arrive."),
    "l1": ("L1 / shared memory", "The SM's on-chip memory: an L1 cache for global loads (sectored, write-through "
                                  "for stores) and the shared memory of the resident blocks, one data path."),
    "shared": ("shared memory", "On-chip memory a block's threads share: 32 banks of 4 bytes; a wavefront "
                                "serves one access per bank, so threads hitting one bank serialize "
                                "(bank conflicts)."),
    "l2": ("L2 cache", "The chip-wide cache between the SMs and DRAM, sliced by address hash; write-back."),
    "dram": ("DRAM (HBM)", "The GPU's off-chip memory; the farthest and slowest level, hundreds of cycles."),
    "coalescing": ("coalescing", "A warp's 32 addresses merged into as few 32-byte sectors as they touch; "
                                 "sectors per request over the ideal shows waste."),
    "bank_conflict": ("bank conflict", "Shared-memory wavefronts beyond the conflict-free count: threads of a "
                                       "warp hitting different words of one bank are served one after another."),
    "roofline": ("roofline", "Attainable FLOP/s at an arithmetic intensity: the lower of the compute peak and "
                             "bandwidth x intensity. A point under the slanted part is memory-bound."),
    "occupancy": ("occupancy", "Resident warps over the most an SM can hold; limited by registers, shared "
                               "memory, block size and block count per SM."),
    "ptx": ("PTX", "The virtual ISA nvcc emits; gpusim lowers and runs it."),
    "cuda_line": ("CUDA line", "The CUDA source line the PTX instruction came from (PTX .loc)."),
    "stream": ("scheduled stream", "The instruction stream gpusim times: with codegen='ptxas' the PTX after "
                                   "ptxas-like passes (folding, unrolling, scheduling), position = issue order "
                                   "in the kernel; with codegen='none' the PTX as written."),
    "what_if": ("what-if", "The same launch simulated again with one limit of the machine removed; the "
                           "speed-up is measured, not estimated."),
    "sectors_per_request": ("sectors per request", "32-byte sectors a warp's memory instruction touched, per "
                                                   "request; the ideal is what its lanes' bytes need."),
    "stall_cycles": ("stall cycles", "Warp-cycles charged to an instruction while a warp waited to issue it "
                                     "(every state except selected)."),
    "lanes": ("active lanes", "Threads of the warp active per executed warp-instruction (32 = no divergence)."),
}


_VERDICTS = {
    "memory-bound": "A memory unit (L1/shared, L2 or DRAM) runs near its peak: the kernel's time is its bytes over "
                    "that bandwidth. Only moving fewer bytes (or reusing them closer to the SM) makes it faster.",
    "compute-bound": "A math pipe or the issue slots run near their peak: the time is instructions over the "
                     "issue rate. Fewer or cheaper instructions (or tensor cores) make it faster.",
    "latency-bound": "Nothing runs near its peak: warps wait (for memory, dependences, barriers) and there is not "
                     "enough independent work to hide it. More warps or more work in flight per warp help.",
    "launch-bound": "The kernel is so short that the host's launch cost, or a grid too small to fill the SMs, "
                    "sets the time. Give each launch more work, fuse kernels or use CUDA graphs.",
}

_FINDINGS = {
    "coalescing": "suggestion: make a warp's addresses contiguous, so its loads and stores touch fewer sectors.",
    "fewer_bytes": "suggestion: move fewer bytes: fuse kernels, lower precision, reuse data in shared memory.",
    "bank_conflicts": "suggestion: pad or swizzle shared-memory arrays so a warp's accesses hit distinct banks.",
    "divergence": "suggestion: keep the threads of a warp on one path of a branch.",
    "stall": "suggestion: the dominant stall reason and the line it is charged to: remove its cause.",
    "more_parallelism": "suggestion: more warps per SM (occupancy) or more independent work per warp.",
    "fewer_instructions": "suggestion: fewer instructions per result (vector loads, less index arithmetic).",
    "math_pipe": "suggestion: move work off the saturated math pipe (another pipe, tensor cores).",
    "grid": "suggestion: launch enough blocks to fill every SM for several waves.",
    "launch_overhead": "suggestion: the kernel is shorter than a launch: batch, fuse or capture in a CUDA graph.",
}


def _build() -> dict[str, Entry]:
    entries = {name: Entry(name, "warp-cycle", text) for name, text in _STALLS.items()}
    entries.update({name: Entry(name, unit, text) for name, (unit, text) in _METRICS.items()})
    entries.update({f"unit:{name}": Entry(name, "", text) for name, text in _UNITS.items()})
    entries.update({name: Entry(title, "", text) for name, (title, text) in _CONCEPTS.items()})
    entries.update({name: Entry(name, "", text) for name, text in _VERDICTS.items()})
    entries.update({f"finding:{name}": Entry(name, "", text) for name, text in _FINDINGS.items()})
    return entries


GLOSSARY: dict[str, Entry] = _build()
"""Every term the report links, by key: a stall reason, a metric name, ``unit:<unit>``, a concept, a verdict
kind, or ``finding:<kind>`` (a suggestion's kind)."""


def anchor(key: str) -> str:
    """The element id of a glossary entry (``g-`` and the key with every other character as ``-``)."""
    return "g-" + re.sub(r"[^A-Za-z0-9_-]", "-", key)


def term_link(key: str, text: str | None = None) -> str:
    """``text`` (default: the entry's title) linked to its glossary entry; the tooltip is the meaning."""
    entry = GLOSSARY[key]
    shown = entry.title if text is None else text
    return (f'<a class="term" href="#{anchor(key)}" title="{html.escape(entry.meaning)}">'
            f"{html.escape(shown)}</a>")


def unit_link(unit: str) -> str:
    """A unit linked to its glossary entry."""
    return term_link(f"unit:{unit}", unit)


def glossary_html(keys=None) -> str:
    """The glossary as a definition list (every entry, or those of ``keys``, in the glossary's order)."""
    chosen = [k for k in GLOSSARY if keys is None or k in set(keys)]
    items = []
    for key in chosen:
        entry = GLOSSARY[key]
        unit = f' <span class="unit">[{unit_link(entry.unit)}]</span>' if entry.unit else ""
        items.append(f'<dt id="{anchor(key)}"><code>{html.escape(entry.title)}</code>{unit}</dt>'
                     f"<dd>{html.escape(entry.meaning)}</dd>")
    return f'<dl class="glossary">{"".join(items)}</dl>'
