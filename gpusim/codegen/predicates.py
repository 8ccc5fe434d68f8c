"""Predicate combining: a comparison and the predicate logic after it in one SASS instruction.

What ptxas does: ISETP/FSETP take a third predicate and a boolean operation (``ISETP.GE.OR P1, PT,
R9, UR6, P0``), so nvcc's ``setp.ge.s32 %p2, ...; or.pred %p3, %p1, %p2;`` is one instruction in
SASS (programs/transpose_naive: four bounds checks, four ISETP.GE.OR).

What is modelled: ``setp.CMP p, a, b`` (no boolean part, one destination, ``p`` written once and read
only by the next ``and.pred``/``or.pred``/``xor.pred`` in the same block under the same guard) and that
instruction ``q = p OP r`` become ``setp.CMP.OP q, a, b, r`` at the logic instruction's place (``a`` and
``b`` not written in between); the result is the same predicate: ``(a CMP b) OP r``.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.codegen import deps
from gpusim.codegen.fold import definitions

_BOOL = {c.OP_AND: c.BOOL_AND, c.OP_OR: c.BOOL_OR, c.OP_XOR: c.BOOL_XOR}


def combine_predicates(kernel) -> int:
    """Rewrite in place; returns the number of instructions removed."""
    defs = definitions(kernel)
    uses: dict[int, int] = {}
    for block in kernel.blocks:
        for inst in block.insts:
            for r in deps.reads(inst.row):
                uses[r] = uses.get(r, 0) + 1
    removed = 0
    for block in kernel.blocks:
        dead = set()
        insts = block.insts
        for k, inst in enumerate(insts):
            row = inst.row
            if inst.op != c.OP_SETP or row[L.F_NDST] != 1 or row[L.F_NSRC] != 2 or \
                    (int(row[L.F_MODS]) >> c.MOD_BOOL_SHIFT) & c.MOD_BOOL_MASK:
                continue
            p = int(row[L.F_DST0])
            if defs.get(p) != 1 or uses.get(p) != 1:
                continue
            j = next((j for j in range(k + 1, len(insts)) if p in deps.reads(insts[j].row)), None)
            if j is None:
                continue
            user = insts[j].row
            if insts[j].op not in _BOOL or int(user[L.F_TY]) != c.T_PRED or user[L.F_NSRC] != 2 or \
                    user[L.F_NDST] != 1 or user[L.F_GUARD] != row[L.F_GUARD] or \
                    user[L.F_GUARD_NEG] != row[L.F_GUARD_NEG]:
                continue
            srcs = deps.sources(user)
            others = [s for s in srcs if s != (L.SK_REG, p)]
            if len(others) != 1 or len(srcs) != 2:
                continue
            operands = {v for kind, v in deps.sources(row) if kind in (L.SK_REG, L.SK_REGNEG)}
            if any(deps.writes(insts[m].row) & operands for m in range(k + 1, j)):
                continue
            new = row.copy()
            new[L.F_MODS] = int(new[L.F_MODS]) | (_BOOL[insts[j].op] << c.MOD_BOOL_SHIFT)
            new[L.F_NSRC] = 3
            new[L.F_SK0 + 4], new[L.F_SK0 + 5] = others[0]
            new[L.F_DST0] = user[L.F_DST0]
            user[:] = new
            dead.add(id(inst))
        block.insts = [i for i in insts if id(i) not in dead]
        removed += len(dead)
    return removed
