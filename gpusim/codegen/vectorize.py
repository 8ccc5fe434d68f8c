"""Vectorising adjacent shared-memory loads.

What ptxas does: consecutive 4-byte shared loads off one base register whose alignment it can prove become
one LDS.64 or LDS.128 (programs/matmul_tiled: the 16 loads of a tile row ``As[ty][k]`` for k = 0..15 are
four LDS.128 in its SASS), one instruction and one shared-memory request in place of two or four.

What is modelled: in a block, 2 or 4 unguarded-alike (same guard) ``ld.shared`` of 32-bit values off the
same base at offsets ``o, o+4 (, o+8, o+12)`` become one ``ld.shared.v2``/``.v4`` at the first one's place,
when ``o`` and the base are provably aligned to the vector's size (the alignment of a register written
once follows its definition: immediates and shared symbols, shifts, multiplies, adds, multiply-adds; the
engine checks an access's alignment, so a vector load that might be misaligned is never made), the
destinations are distinct, and nothing between the first load and each later one writes the base, reads
or writes that load's destination, stores or fences. The vector load keeps the first load's PTX line; the
others' lines then show no instructions of their own.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.codegen import deps
from gpusim.codegen.fold import definitions

_CAP = 1 << 20


def _lowbit(value: int) -> int:
    value &= (1 << 64) - 1
    return _CAP if value == 0 else min(value & -value, _CAP)


class Alignment:
    """Known power-of-two divisors of register values (1 when nothing is known)."""

    def __init__(self, kernel):
        self.defs = definitions(kernel)
        self.row_of = {}
        for block in kernel.blocks:
            for inst in block.insts:
                for r in deps.writes(inst.row):
                    self.row_of[r] = inst.row
        self.memo: dict[int, int] = {}

    def source(self, kind: int, value: int) -> int:
        if kind == L.SK_IMM:
            return _lowbit(value)
        if kind == L.SK_REG:
            return self.reg(value)
        return 1

    def reg(self, r: int) -> int:
        if r in self.memo:
            return self.memo[r]
        self.memo[r] = 1                       # a cycle through a definition knows nothing
        row = self.row_of.get(r)
        if row is None or self.defs.get(r) != 1 or row[L.F_GUARD] >= 0 or row[L.F_NDST] != 1:
            return 1
        srcs = deps.sources(row)
        a = [self.source(kind, value) for kind, value in srcs]
        op = int(row[L.F_OP])
        width = c.mods_mul(int(row[L.F_MODS]))
        out = 1
        if op == c.OP_MOV and len(a) == 1 and row[L.F_VEC] == 1:
            out = a[0]
        elif op in (c.OP_ADD, c.OP_SUB) and len(a) == 2:
            out = min(a)
        elif op == c.OP_SHL and len(a) == 2 and srcs[1][0] == L.SK_IMM and 0 <= srcs[1][1] < 20:
            out = a[0] << srcs[1][1]
        elif op == c.OP_MUL and len(a) == 2 and width != c.MUL_HI:
            out = a[0] * a[1]
        elif op == c.OP_MAD and len(a) == 3 and width != c.MUL_HI:
            out = min(a[0] * a[1], a[2])
        elif op == c.OP_CVT and len(a) == 1 and not c.TYPE_FLOAT[int(row[L.F_TY])] and \
                not c.TYPE_FLOAT[int(row[L.F_TY2])]:
            out = a[0]
        out = min(out, _CAP)
        self.memo[r] = out
        return out


def _candidate(row) -> bool:
    return (int(row[L.F_OP]) == c.OP_LD and int(row[L.F_SPACE]) == L.SP_SHARED and row[L.F_VEC] == 1 and
            row[L.F_NDST] == 1 and int(row[L.F_SIZE]) == 4 and row[L.F_DST0] >= 0)


def vectorize_shared_loads(kernel) -> int:
    """Rewrite in place; returns the number of loads removed."""
    align = Alignment(kernel)
    removed = 0
    for block in kernel.blocks:
        insts = block.insts
        dead: set[int] = set()
        for k, inst in enumerate(insts):
            if id(inst) in dead or not _candidate(inst.row):
                continue
            for width in (4, 2):
                group = _group(insts, k, width, align, dead)
                if group:
                    first = inst.row
                    first[L.F_VEC] = width
                    first[L.F_NDST] = width
                    for i, g in enumerate(group):
                        first[L.F_DST0 + i] = int(insts[g].row[L.F_DST0])
                    dead |= {id(insts[g]) for g in group[1:]}
                    break
        block.insts = [i for i in insts if id(i) not in dead]
        removed += len(dead)
    return removed


def _group(insts: list, k: int, width: int, align: Alignment, dead: set) -> list[int] | None:
    first = insts[k].row
    base, offset = int(first[L.F_ABASE]), int(first[L.F_AOFF])
    nbytes = 4 * width
    base_align = _CAP if base < 0 else align.reg(base)
    if offset % nbytes or base_align < nbytes:
        return None
    guard = (int(first[L.F_GUARD]), int(first[L.F_GUARD_NEG]))
    wanted = {offset + 4 * i: i for i in range(1, width)}
    found = {0: k}
    for j in range(k + 1, len(insts)):
        row = insts[j].row
        if id(insts[j]) not in dead and _candidate(row) and int(row[L.F_ABASE]) == base and \
                int(row[L.F_AOFF]) in wanted and (int(row[L.F_GUARD]), int(row[L.F_GUARD_NEG])) == guard and \
                int(row[L.F_AOFF]) - offset not in [4 * i for i in found]:
            found[wanted[int(row[L.F_AOFF])]] = j
            if len(found) == width:
                break
            continue
        if deps.is_store(row) or deps.is_fence(row) or ({base, guard[0]} - {-1}) & deps.writes(row):
            return None
    if len(found) != width:
        return None
    group = [found[i] for i in range(width)]
    dsts = [int(insts[g].row[L.F_DST0]) for g in group]
    if len(set(dsts)) != width or base in dsts or guard[0] in dsts:
        return None
    for g in group[1:]:
        d = int(insts[g].row[L.F_DST0])
        for j in range(k + 1, g):
            if j in group:
                continue
            if d in deps.reads(insts[j].row) | deps.writes(insts[j].row):
                return None
    return group
