"""Live ranges and a linear-scan register count of a lowered or generated kernel's code.

What ptxas does: it allocates the SASS stream's values to a thread's general registers (predicates live
in their own 7-register file), reading kernel parameters from constant bank 0 (``c[0x0][0x210]``) as
operands or loading them just before use, instead of holding them from the kernel's start.

What is modelled (Poletto and Sarkar's linear scan, TOPLAS 1999, over live ranges with holes as in
Traub, Holloway and Smith's second-chance binpacking, PLDI 1998):

* live ranges from a liveness analysis over the basic blocks: a register occupies the point before each
  instruction where it is live or read and the point after each where it is live or written; between two
  loops that reuse a register name (an unrolled loop and the loop kept for its remaining trips) it
  occupies nothing, so another value may take its register there;
* a 32-bit register every definition of which is an unguarded ``ld.param`` is a constant-bank operand: it
  takes no register while only ALU instructions read it; where it must be materialised (an address base,
  a stored value, an operand of a non-ALU instruction) it takes one from its first such use on;
* a 64-bit parameter (a pointer) likewise, unless it is the addend of a ``mad.wide`` (the IMAD.WIDE that
  ``gpusim.codegen.address`` makes of ``mul.wide`` + ``add.s64``): IMAD.WIDE takes its 64-bit addend from
  a register pair, which ptxas loads with ``LDC.64`` (tests/data/regalloc_sass/gaussian.sass,
  ``gauss_fan2``: ``LDC.64 R4, c[0x0][0x210]`` then ``IMAD.WIDE R4, R7, 0x4, R4``), so such a pointer is
  an ordinary register pair from its ``ld.param`` (scheduled like any load) on. A pointer ptxas adds with
  LEA stays in a uniform register (numba_map_add10.sass: ``ULDC.64 UR4, c[0x0][0x230]`` and
  ``LEA R2, P1, R3, UR4, 0x2``) and takes no general register;
* a 64-bit value takes 2 registers, a 32-bit or narrower one 1, a predicate none (predicates are not in
  ``ptxas -v``'s count);
* each range, in order of start, gets the lowest register that holds no other value at any of its points
  (a 64-bit value an even-aligned pair, as SASS's 64-bit operands need), never R1, and the count is the
  highest register used + 1 + ``RESERVED``: ptxas's listings (programs/sass/sm_90/scale.sass: R1 holds
  the stack pointer, loaded from ``c[0x0][0x28]``, and "Used 8 registers" is the highest register used,
  R5, plus 1 plus 2) keep R1 and report two more than the highest register used. At least
  ``MIN_REGISTERS``.

Simplified: no coalescing, and no rematerialisation here (``gpusim.codegen.regalloc`` releases a kernel
parameter's register through loops that do not read it when the count is above the register target, as
ptxas reloads it with LDC); registers are chosen lowest-first (ptxas spreads them:
rgba_invert's SASS puts a LOP3's result in a fresh register rather than the operand's, which dies there);
uniform registers (sm_75+) are modelled only for pointers. The count is only as faithful as the code it is
given (``gpusim.codegen.schedule`` weighs register pressure as ptxas does): ptxas unrolls some loops
further (polybench's ``covar_mean``: x16, 16 loads in flight), turns warp-uniform atomics into REDUX plus
one atomic, and gives shuffles in divergent code a BRA.DIV fallback path with registers of its own, so those
kernels get fewer registers here than ``ptxas -v`` reports (tests/test_regalloc.py prints by how much).
``gpusim.codegen.regalloc`` adds the launch bounds' cap and spilling.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.ptx.cfg import basic_blocks

RESERVED = 2
"""Registers ptxas's count includes beyond the highest register used + 1 (see the module docstring)."""
STACK_POINTER = 1
"""R1: the stack pointer in every SASS listing (``LDC R1, c[0x0][0x28]``), never allocated to a value."""
MIN_REGISTERS = 8
"""The fewest registers the count reports (the allocation granule of a thread on sm_70..sm_90 is 8)."""
_WIDE = {"b64", "u64", "s64", "f64"}
_MEMORY = (c.OP_LD, c.OP_ST, c.OP_ATOM, c.OP_RED)


def widths_of(reg_names: list, reg_types: dict) -> list[int]:
    """32-bit registers each register takes: 2 (64-bit), 1, or 0 (predicate). A register a code-generation
    pass added (``NAME$pass``) has the type of the register it was made from."""
    out = []
    for name in reg_names:
        kind = reg_types.get(name.split("$", 1)[0], "b32")
        out.append(0 if kind == "pred" else 2 if kind in _WIDE else 1)
    return out


def _operands(row) -> tuple[list[int], list[int], list[int]]:
    """(ALU-operand reads, reads that need a register even for a parameter, writes) of one row."""
    op = int(row[L.F_OP])
    alu = c.OP_MOV <= op <= c.OP_LAST_ALU
    soft: list[int] = []
    hard: list[int] = []
    for i in range(int(row[L.F_NSRC])):
        if row[L.F_SK0 + 2 * i] in (L.SK_REG, L.SK_REGNEG):
            (soft if alu else hard).append(int(row[L.F_SK0 + 2 * i + 1]))
    if op in _MEMORY and row[L.F_ABASE] >= 0:
        hard.append(int(row[L.F_ABASE]))
    if row[L.F_GUARD] >= 0:
        hard.append(int(row[L.F_GUARD]))
    writes = [int(row[L.F_DST0 + i]) for i in range(int(row[L.F_NDST])) if row[L.F_DST0 + i] >= 0]
    return soft, hard, writes


def parameter_registers(code: np.ndarray) -> set[int]:
    """Registers written only by unguarded ``ld.param`` (constant-bank operands in SASS)."""
    param: set[int] = set()
    other: set[int] = set()
    for pc in range(code.shape[0]):
        row = code[pc]
        writes = _operands(row)[2]
        is_param = int(row[L.F_OP]) == c.OP_LD and int(row[L.F_SPACE]) == L.SP_PARAM and row[L.F_GUARD] < 0
        (param if is_param else other).update(writes)
    return param - other


def pointer_operands(code: np.ndarray, widths: list[int]) -> set[int]:
    """64-bit registers read as the addend of a ``mad.wide`` (SASS's IMAD.WIDE takes its 64-bit addend from
    a register pair: neither a constant-bank nor a uniform operand)."""
    out: set[int] = set()
    for pc in range(code.shape[0]):
        row = code[pc]
        wide = (int(row[L.F_MODS]) >> c.MOD_MUL_SHIFT) & c.MOD_MUL_MASK == c.MUL_WIDE
        if int(row[L.F_OP]) == c.OP_MAD and wide:
            out.update(r for r in _operands(row)[0] if widths[r] == 2)
    return out


def live_intervals(code: np.ndarray, widths: list[int]) -> dict[int, Range]:
    """Register -> its live :class:`Range`, for registers that take a general register.

    The dataflow runs on bit sets over the registers the code names, numbered densely in register order (a
    kernel may declare a million registers and use ten: sets over the declared numbers would be that wide)."""
    n = int(code.shape[0])
    param = parameter_registers(code) - pointer_operands(code, widths)
    operands = [_operands(code[pc]) for pc in range(n)]
    named = sorted({r for soft, hard, writes in operands for r in (*soft, *hard, *writes)})
    dense = {r: i for i, r in enumerate(named)}
    uses_defs = []
    first_hard: dict[int, int] = {}
    for pc, (soft, hard, writes) in enumerate(operands):
        uses = 0
        for r in soft:
            if r not in param:
                uses |= 1 << dense[r]
        for r in hard:
            uses |= 1 << dense[r]
            if r in param:
                first_hard.setdefault(r, pc)
        defs = 0
        for r in writes:
            if r not in param:
                defs |= 1 << dense[r]
        uses_defs.append((uses, defs))
    starts, succs = basic_blocks(code)
    ends = starts[1:] + [n]
    live_in = [0] * (len(starts) + 1)
    changed = True
    while changed:
        changed = False
        for b in reversed(range(len(starts))):
            live = 0
            for s in succs[b]:
                live |= live_in[s]
            for pc in range(ends[b] - 1, starts[b] - 1, -1):
                uses, defs = uses_defs[pc]
                live = (live & ~defs) | uses
            if live != live_in[b]:
                live_in[b] = live
                changed = True
    counted = 0
    for i, r in enumerate(named):
        if widths[r]:
            counted |= 1 << i
    masks: dict[int, int] = {}
    for b in range(len(starts)):
        live = 0
        for s in succs[b]:
            live |= live_in[s]
        for pc in range(ends[b] - 1, starts[b] - 1, -1):
            uses, defs = uses_defs[pc]
            after = (live | defs) & counted              # point 2pc+1: live out of pc or written by it
            live = (live & ~defs) | uses
            for bits, point in ((after, 2 * pc + 1), (live & counted, 2 * pc)):
                while bits:
                    low = bits & -bits
                    r = named[low.bit_length() - 1]
                    bits ^= low
                    masks[r] = masks.get(r, 0) | 1 << point
    out = {}
    for r, mask in masks.items():
        if r in param:                  # a constant-bank operand until its first use that needs a register
            cut = 2 * first_hard.get(r, n)
            mask = mask >> cut << cut
        if mask:
            out[r] = Range(((mask & -mask).bit_length() - 1) // 2, (mask.bit_length() - 1) // 2, mask)
    return out


class Range(NamedTuple):
    """A register's live range: its first and last pc, and the points where it is live (bit 2*pc: before
    instruction pc, with its operands; bit 2*pc+1: after it, with its results), holes included."""

    start: int
    end: int
    points: int


def _fit(occupied: list[int], points: int, width: int, limit: int) -> int:
    """The lowest register (aligned to ``width``, as a 64-bit pair must be) none of the ``width`` registers
    from which holds a value at any of ``points``, below ``limit``; -1 if none."""
    for i in range(0, limit - width + 1, width):
        if i <= STACK_POINTER < i + width:
            continue
        if not any(occupied[j] & points for j in range(i, i + width)):
            return i
    return -1


def linear_scan(intervals: dict[int, Range], widths: list[int], limit: int = 253):
    """(registers the assignment reaches: its highest register + 1, registers spilled) of a linear scan that
    gives each live range, in order of start, the lowest register that holds no other value at any point
    where this one is live (live ranges with holes, as Traub, Holloway and Smith's second-chance binpacking
    allocates them: a register reused in two loops is not kept between them); a 64-bit value gets an
    even-aligned pair; R1, the stack pointer, never. Registers at or above ``limit`` are not used: when
    nothing fits, of the values in the way and this one, the one ending furthest away is spilled
    (Poletto and Sarkar's heuristic)."""
    order = sorted(intervals, key=lambda r: (intervals[r].start, r))
    occupied = [0] * 256
    where: dict[int, int] = {}          # register -> its first physical register
    top = STACK_POINTER + 1
    spilled = []
    for r in order:
        points = intervals[r].points
        while (phys := _fit(occupied, points, widths[r], limit)) < 0:
            rivals = [a for a in where if intervals[a].points & points]
            victim = max([*rivals, r], key=lambda a: (intervals[a].end, a))
            spilled.append(victim)
            if victim == r:
                break
            vphys = where.pop(victim)
            for j in range(vphys, vphys + widths[victim]):
                occupied[j] &= ~intervals[victim].points
        if phys < 0:
            continue
        for j in range(phys, phys + widths[r]):
            occupied[j] |= points
        where[r] = phys
        top = max(top, phys + widths[r])
    return top, sorted(spilled)


def estimate_registers(code: np.ndarray, reg_names: list, reg_types: dict) -> int:
    """Registers per thread of ``code`` by the linear scan above, uncapped (at least MIN_REGISTERS)."""
    if code.shape[0] == 0:
        return MIN_REGISTERS
    widths = widths_of(reg_names, reg_types)
    top, _ = linear_scan(live_intervals(code, widths), widths)
    return max(MIN_REGISTERS, min(top + RESERVED, 255))
