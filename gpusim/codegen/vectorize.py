"""Vectorising adjacent shared- and global-memory loads.

What ptxas does: consecutive loads off one base register whose alignment it can prove become one LDS.64 or
LDS.128 (LDG.E.64/.128 for global memory): programs/matmul_tiled's 16 loads of a tile row ``As[ty][k]``
are four LDS.128 in its SASS, and the SGEMM ladder's ``As[(tid * 4) & -128 ...]`` rows are LDS.128 on
sm_86 (validation/kernels/sgemm_ladder.ptx; the counts per kernel are checked against committed SASS
listings in tests/data/vectorize/). A global pointer from a kernel parameter has no alignment ptxas can
prove, so scalar ``ld.global`` off it stays scalar, as in ptxas's SASS.

What is modelled: in a block, 2 or 4 same-guard ``ld.shared``/``ld.global`` (``.nc`` too) of 32-bit values,
or 2 of 64-bit values, of one kind (space, type, modifiers) off the same base at offsets ``o, o+s (, o+2s,
o+3s)`` become one ``.v2``/``.v4`` load at the first one's place, when ``o`` and the base are provably
aligned to the vector's size (:mod:`gpusim.codegen.knownbits`: a known-low-zero-bits analysis through
``and``/``or``/``shl``/``mad``/``add`` and constant offsets; the engine checks an access's alignment,
so a vector load that might be misaligned is never made), the destinations are distinct, and nothing
between the first load and each later one writes the base, reads or writes that load's destination,
stores or fences. The vector load keeps the first load's PTX line; the others' lines then show no
instructions of their own. Stores are not merged.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.codegen import deps
from gpusim.codegen.knownbits import CAP, Alignment

_SPACES = (L.SP_SHARED, L.SP_GLOBAL)


def _candidate(row) -> bool:
    return (int(row[L.F_OP]) == c.OP_LD and int(row[L.F_SPACE]) in _SPACES and row[L.F_VEC] == 1 and
            row[L.F_NDST] == 1 and int(row[L.F_SIZE]) in (4, 8) and row[L.F_DST0] >= 0)


def _kind(row) -> tuple[int, ...]:
    """What must agree for loads to merge: space, element size and type, modifiers (.nc, cache hints)."""
    return (int(row[L.F_SPACE]), int(row[L.F_SIZE]), int(row[L.F_TY]), int(row[L.F_MODS]))


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
            for width in (4, 2) if int(inst.row[L.F_SIZE]) == 4 else (2,):
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
    size = int(first[L.F_SIZE])
    nbytes = size * width
    base_align = CAP if base < 0 else align.reg(base)
    if offset % nbytes or base_align < nbytes:
        return None
    guard = (int(first[L.F_GUARD]), int(first[L.F_GUARD_NEG]))
    kind = _kind(first)
    wanted = {offset + size * i: i for i in range(1, width)}
    found = {0: k}
    for j in range(k + 1, len(insts)):
        row = insts[j].row
        if id(insts[j]) not in dead and _candidate(row) and int(row[L.F_ABASE]) == base and \
                int(row[L.F_AOFF]) in wanted and (int(row[L.F_GUARD]), int(row[L.F_GUARD_NEG])) == guard and \
                _kind(row) == kind and wanted[int(row[L.F_AOFF])] not in found:
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
