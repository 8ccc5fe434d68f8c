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
from gpusim.codegen.knownbits import Alignment

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
    overfetch = _overfetch_safe(kernel.program)
    removed = 0
    for block in kernel.blocks:
        insts = block.insts
        dead: set[int] = set()
        for k, inst in enumerate(insts):
            if id(inst) in dead or not _candidate(inst.row):
                continue
            for lanes in _shapes(inst.row, align, overfetch):
                group = _group(insts, k, lanes, align, dead)
                if group:
                    first = inst.row
                    dsts = [SINK if g is None else int(insts[g].row[L.F_DST0]) for g in group]
                    first[L.F_AOFF] = int(first[L.F_AOFF]) - lanes.index(0) * int(first[L.F_SIZE])
                    first[L.F_VEC] = len(lanes)
                    first[L.F_NDST] = len(lanes)
                    for i, d in enumerate(dsts):
                        first[L.F_DST0 + i] = d
                    dead |= {id(insts[g]) for g in group if g is not None and g != k}
                    break
        block.insts = [i for i in insts if id(i) not in dead]
        removed += len(dead)
    return removed


SINK = -2
"""A vector load's destination for a word it over-fetches (nothing reads it)."""


def _overfetch_safe(program) -> bool:
    """Whether a 16-byte shared load may read a word the kernel does not: the static shared variables end on
    a 16-byte boundary and there is no dynamic shared memory, so a 16-byte-aligned chunk holding a word the
    kernel reads lies inside what it declared."""
    return program.shared_static_bytes % 16 == 0 and not program.dynamic_shared


def _shapes(row, align: Alignment, overfetch: bool) -> list[tuple[int | None, ...]]:
    """The vector loads that could start with ``row``, widest first, each as its lanes: the word offset
    (relative to ``row``'s) each lane loads, None for a word over-fetched. Plain vectors need the address
    aligned to their size; a shared 16-byte load may also cover three 4-byte loads of a 16-byte-aligned
    chunk, over-fetching its first or its last word, as ptxas's SASS of the SGEMM ladder's padded B rows
    does (``LDS.128 [0x1210]`` for the words at 0x1214..0x121c: tests/data/vectorize/)."""
    base, offset, size = int(row[L.F_ABASE]), int(row[L.F_AOFF]), int(row[L.F_SIZE])
    out: list[tuple[int | None, ...]] = []
    for width in (4, 2) if size == 4 else (2,):
        nbytes = width * size
        residue = 0 if base < 0 else align.residue(base, nbytes)
        if residue is not None and (residue + offset) % nbytes == 0:
            out.append(tuple(range(width)))
        if width == 4 and overfetch and int(row[L.F_SPACE]) == L.SP_SHARED:   # nbytes is 16: the same residue
            if residue is not None and (residue + offset) % 16 == 0:
                out.append((0, 1, 2, None))
            elif residue is not None and (residue + offset) % 16 == 4:
                out.append((None, 0, 1, 2))
    return out


def _group(insts: list, k: int, lanes: tuple[int | None, ...], align: Alignment,
           dead: set) -> list[int | None] | None:
    """The instructions that load ``lanes`` (word ``j`` of a lane: the load at ``row``'s offset plus ``j``
    elements), the first being ``insts[k]``, all merged into one vector load at ``insts[k]``'s place; None when
    a lane's load is missing or something in between forbids the move."""
    first = insts[k].row
    base, offset = int(first[L.F_ABASE]), int(first[L.F_AOFF])
    size = int(first[L.F_SIZE])
    guard = (int(first[L.F_GUARD]), int(first[L.F_GUARD_NEG]))
    kind = _kind(first)
    wanted = {offset + size * j: j for j in lanes if j is not None and j > 0}
    found = {0: k}
    loads = sum(j is not None for j in lanes)
    for j in range(k + 1, len(insts)):
        row = insts[j].row
        if id(insts[j]) not in dead and _candidate(row) and int(row[L.F_ABASE]) == base and \
                int(row[L.F_AOFF]) in wanted and (int(row[L.F_GUARD]), int(row[L.F_GUARD_NEG])) == guard and \
                _kind(row) == kind and wanted[int(row[L.F_AOFF])] not in found:
            found[wanted[int(row[L.F_AOFF])]] = j
            if len(found) == loads:
                break
            continue
        if deps.is_store(row) or deps.is_fence(row) or ({base, guard[0]} - {-1}) & deps.writes(row):
            return None
    if len(found) != loads:
        return None
    group = [None if j is None else found[j] for j in lanes]
    members = [g for g in group if g is not None]
    dsts = [int(insts[g].row[L.F_DST0]) for g in members]
    if len(set(dsts)) != loads or base in dsts or guard[0] in dsts:
        return None
    for g in members:
        if g == k:
            continue
        d = int(insts[g].row[L.F_DST0])
        for j in range(k + 1, g):
            if j in members:
                continue
            if d in deps.reads(insts[j].row) | deps.writes(insts[j].row):
                return None
    return group
