"""Registers per thread after code generation: the linear scan of ``gpusim.ptx.regs`` under the launch
bounds' cap, and the spill code above it.

What ptxas does: ``.maxnreg N`` caps a kernel's registers at N; ``.maxntid``/``.reqntid`` (threads per
block) with ``.minnctapersm`` (blocks per SM, 1 without it) cap them at the most registers per thread for
which that many blocks of that many threads fit the register file at its allocation granularity
(``__launch_bounds__(1024, 2)`` on a 64 K-register SM: 32). Values that do not fit under the cap are
spilled to local memory: a store (``STL``) after each definition, a load (``LDL``) before each use,
which ``ptxas -v`` reports as spill stores and loads.

What is modelled: the cap exactly as above, from the config's register file, allocation unit and
per-thread limit (``gpusim.arch.occupancy``'s rules); above it the linear scan spills the interval ending
furthest away, and ``spill_code`` inserts, for every spilled register, an unguarded ``st.local`` of the
register to its own local slot after each instruction that writes it and an ``ld.local`` of the slot into
the register before each instruction that reads it. The engine executes them, so spills are timed as
local-memory traffic (L1, L2, DRAM) and counted in the local-memory metrics; the values are unchanged
(the slot always holds the register's latest value). The kernel's local memory grows by the slots.

Rematerialisation: ptxas reloads a kernel parameter (a constant-bank value) with LDC where a loop needs
it rather than keep it in a register through code that does not, when registers are short. Modelled:
where the allocation exceeds the register target (``gpusim.codegen.pressure``: full occupancy's 32, or
the launch bounds' cap), each parameter's register is released through every loop that does not read it
(``rematerialised``) and the scan is redone; the count is the lower of the two. Below the target the
ranges are left as they are (ptxas then spreads values over the registers it may use: the corpus's
kernels that fit report up to 32). The reload itself is not added to the stream (an LDC per loop entry).

Simplified: one slot per spilled register for the whole kernel; no spill of part of an interval, no
rematerialisation. Kernels the code-generation stage leaves as written (calls, tensor-core and
``cp.async`` instructions, textures: ``gpusim.codegen.deps.unmodelled_ops``) get the capped count but no
spill code, and their notes say so.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L
from gpusim.arch.occupancy import occupancy
from gpusim.codegen.deps import reads, unmodelled_ops, writes
from gpusim.codegen.ir import decode, encode
from gpusim.ptx.regs import (
    MIN_REGISTERS,
    RESERVED,
    STACK_POINTER,
    Range,
    linear_scan,
    live_intervals,
    parameter_registers,
    widths_of,
)


@dataclass
class Allocation:
    """What the allocator decided for one kernel."""

    registers: int                     # registers per thread (capped; RESERVED included)
    peak: int                          # registers the values need at the busiest point, uncapped
    cap: int | None                    # the launch bounds' cap, None when the kernel has none
    cap_reason: str = ""               # the directives that set the cap
    spilled: list = field(default_factory=list)   # register indices spilled to local memory


def register_cap(directives: dict, config) -> tuple[int | None, str]:
    """The launch bounds' register cap (None without bounds) and the directive that sets it."""
    caps = []
    maxnreg = directives.get("maxnreg")
    if isinstance(maxnreg, int) and maxnreg > 0:
        caps.append((min(maxnreg, config.max_registers_per_thread), f".maxnreg {maxnreg}"))
    dims = directives.get("maxntid") or directives.get("reqntid")
    if dims:
        threads = int(np.prod([int(d) for d in dims]))
        blocks = directives.get("minnctapersm")
        blocks = int(blocks) if isinstance(blocks, int) and blocks > 0 else 1
        best = 0
        for regs in range(config.max_registers_per_thread, 0, -1):
            if threads <= config.max_threads_per_block and occupancy(config, threads, regs).blocks_per_sm >= blocks:
                best = regs
                break
        if best:
            what = ".reqntid" if "maxntid" not in directives else ".maxntid"
            caps.append((best, f"{what} {threads}" + (f", .minnctapersm {blocks}" if blocks > 1 else "")))
    if not caps:
        return None, ""
    return min(caps)


def allocate(program, config) -> Allocation:
    """Linear scan over ``program``'s code under its launch bounds' cap."""
    if program.code.shape[0] == 0:
        return Allocation(MIN_REGISTERS, MIN_REGISTERS, None)
    widths = widths_of(program.reg_names, dict(zip(program.reg_names, program.reg_types, strict=False)))
    intervals = live_intervals(program.code, widths)
    top, _ = linear_scan(intervals, widths)
    if top + RESERVED > target_for(program.directives, config):
        relieved = rematerialised(program.code, intervals)
        fewer, _ = linear_scan(relieved, widths)
        if fewer < top:
            intervals, top = relieved, fewer
    total = max(MIN_REGISTERS, min(top + RESERVED, config.max_registers_per_thread))
    cap, reason = register_cap(program.directives, config)
    if cap is None or total <= cap:
        return Allocation(total, top + RESERVED, cap, reason)
    capped, spilled = linear_scan(intervals, widths, limit=max(cap - RESERVED, STACK_POINTER + 3))
    return Allocation(max(capped + RESERVED, MIN_REGISTERS), top + RESERVED, cap, reason, spilled)


def target_for(directives: dict, config) -> int:
    """The register target of a kernel with these directives (``gpusim.codegen.pressure.register_target``):
    full occupancy's registers per thread, or the launch bounds' cap when lower."""
    threads = int(config.max_warps_per_sm) * 32
    target = min(int(config.registers_per_sm) // threads, int(config.max_registers_per_thread))
    cap, _ = register_cap(directives, config)
    return target if cap is None else min(target, cap)


def loop_spans(code: np.ndarray) -> list[tuple[int, int]]:
    """(first pc, last pc) of each loop of ``code``: a back edge's target to the branch."""
    return [(int(code[pc, L.F_TARGET]), pc) for pc in range(code.shape[0])
            if int(code[pc, L.F_OP]) == c.OP_BRA and 0 <= code[pc, L.F_TARGET] <= pc]


def rematerialised(code: np.ndarray, intervals: dict) -> dict:
    """``intervals`` with no kernel parameter held through a loop that does not read it: a parameter is a
    constant (``c[0x0][...]``), which ptxas under register pressure reloads with LDC after such a loop
    rather than keep it in a register through it (layernorm.sass, ``layernorm_backward``: the ``dweight``
    and ``dbias`` pointers are loaded with ``LDC.64`` only before the loop that adds to them, not held
    through the unrolled loop before it; ``weight``'s ``LDC.64 R10, c[0x0][0x238]`` is issued again before
    the loop for the remaining trips). A parameter keeps its points elsewhere (where it is read, and
    between reads outside loops)."""
    params = parameter_registers(code) & intervals.keys()
    if not params:
        return intervals
    spans = [(a, b, set().union(*(reads(code[pc]) for pc in range(a, b + 1)))) for a, b in loop_spans(code)]
    out = dict(intervals)
    for r in params:
        mask = intervals[r].points
        for a, b, read in spans:
            if r not in read:
                mask &= ~(((1 << (2 * (b - a + 1))) - 1) << (2 * a))
        if mask != intervals[r].points:
            if mask:
                out[r] = Range(((mask & -mask).bit_length() - 1) // 2, (mask.bit_length() - 1) // 2, mask)
            else:
                del out[r]
    return out


def _spill_row(store: bool, reg: int, width: int, offset: int, line: int) -> np.ndarray:
    ty = c.T_B64 if width == 2 else c.T_B32
    row = np.zeros(L.N_FIELDS, dtype=np.int64)
    row[L.F_DST0:L.F_DST0 + L.MAX_DST] = -1
    row[L.F_GUARD] = -1
    row[L.F_OP] = c.OP_ST if store else c.OP_LD
    row[L.F_TY] = ty
    row[L.F_VEC] = 1
    row[L.F_SIZE] = 4 * width
    row[L.F_SPACE] = L.SP_LOCAL
    row[L.F_ABASE] = -1
    row[L.F_AOFF] = offset
    row[L.F_LINE] = line
    if store:
        row[L.F_NSRC] = 1
        row[L.F_SK0], row[L.F_SK0 + 1] = L.SK_REG, reg
    else:
        row[L.F_NDST] = 1
        row[L.F_DST0] = reg
    row[L.F_ISA] = isa.isa_row(row[L.F_OP], ty)
    return row


def spill_code(program, allocation: Allocation):
    """``program`` with the spill stores and loads of ``allocation`` inserted (itself when nothing spills
    or the kernel is left as written); the note says what was inserted."""
    if not allocation.spilled or unmodelled_ops(program.code):
        return program
    widths = widths_of(program.reg_names, dict(zip(program.reg_names, program.reg_types, strict=False)))
    base = -(-program.local_bytes // 8) * 8
    slots = {r: base + 8 * i for i, r in enumerate(allocation.spilled)}
    kernel = decode(program)
    origin = program.origin or list(range(program.n_inst))
    stores = loads = 0
    for block in kernel.blocks:
        out = []
        for inst in block.insts:
            inst.origin = origin[inst.origin]
            for r in sorted(reads(inst.row) & slots.keys()):
                row = _spill_row(False, r, widths[r], slots[r], inst.line)
                out.append(dataclasses.replace(inst, row=row, text=f"ld.local (spill reload of {program.reg_names[r]})",
                                               target=None, companion=False))
                loads += 1
            out.append(inst)
            if inst.op in (c.OP_BRA, c.OP_EXIT, c.OP_RET):
                continue
            for r in sorted(writes(inst.row) & slots.keys()):
                row = _spill_row(True, r, widths[r], slots[r], inst.line)
                out.append(dataclasses.replace(inst, row=row, text=f"st.local (spill of {program.reg_names[r]})",
                                               target=None, companion=False))
                stores += 1
        block.insts = out
    kernel.notes = list(program.codegen_notes) + [
        f"regalloc: {allocation.peak} registers needed, capped at {allocation.cap} by {allocation.cap_reason}: "
        f"{len(slots)} values spilled to local memory ({stores} st.local, {loads} ld.local inserted)"]
    spilled = encode(kernel, program.codegen)
    return dataclasses.replace(spilled, local_bytes=base + 8 * len(slots), regs_estimate=allocation.registers)
