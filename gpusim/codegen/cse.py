"""Common subexpressions: a value computed twice in a block is computed once.

What ptxas does: it numbers values and keeps one copy of each. A fully unrolled loop's copies recompute the
loop-invariant part of their addresses (``(tid * 8) & 120`` of the SGEMM ladder's B rows, once per k), and
ptxas's SASS of that kernel computes it once: every row's loads read one base register with the row's
offset as an immediate (``LDS.128 R4, [R85.X4+0x1210]``, tests/data/vectorize/sgemm_ladder.sm_86.sass).

What is modelled: local value numbering inside each basic block. An unguarded ALU instruction with one
destination that is written nowhere else, whose operation, types, modifiers and operands are those of an
earlier such instruction of the block, with no operand register written in between, is removed and its
destination's readers read the earlier destination. Both destinations are written once and the earlier one
is defined first in the same block, so it holds the same value wherever the later one was read. Not
modelled: values shared across blocks (ptxas's global value numbering and loop-invariant code motion).
Results are bit-identical: the same operation on the same operands.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.codegen import deps
from gpusim.codegen.fold import definitions

_KEY_FIELDS = (L.F_OP, L.F_TY, L.F_TY2, L.F_MODS, L.F_AUX, L.F_NSRC)


def _key(row) -> tuple | None:
    """What makes two instructions compute the same value, or None when ``row`` is not such a pure one."""
    op = int(row[L.F_OP])
    if not c.OP_MOV <= op <= c.OP_LAST_ALU or row[L.F_GUARD] >= 0 or row[L.F_NDST] != 1 or row[L.F_VEC] != 1 \
            or int(row[L.F_DST0]) < 0 or deps.is_fence(row) or deps.is_load(row) or deps.is_store(row):
        return None
    return tuple(int(row[f]) for f in _KEY_FIELDS) + tuple(deps.sources(row))


def eliminate_common(kernel) -> int:
    """Remove recomputed values in place; returns the number of instructions removed."""
    defs = definitions(kernel)
    renamed: dict[int, int] = {}
    for block in kernel.blocks:
        seen: dict[tuple, int] = {}           # key -> the destination that holds it
        readers: dict[int, set] = {}          # register -> keys whose operands read it
        kept = []
        for inst in block.insts:
            row = inst.row
            _rename(row, renamed)
            key = _key(row)
            d = int(row[L.F_DST0]) if row[L.F_NDST] >= 1 else -1
            if key is not None and defs.get(d) == 1 and key in seen:
                renamed[d] = seen[key]
                continue
            kept.append(inst)
            for r in deps.writes(row):         # values read from a register written here are stale
                for stale in readers.pop(r, ()):
                    seen.pop(stale, None)
            if key is not None and defs.get(d) == 1:
                seen.setdefault(key, d)
                for kind, value in deps.sources(row):
                    if kind in (L.SK_REG, L.SK_REGNEG):
                        readers.setdefault(value, set()).add(key)
        block.insts = kept
    if renamed:
        for block in kernel.blocks:
            for inst in block.insts:
                _rename(inst.row, renamed)
    return len(renamed)


def _rename(row, renamed: dict[int, int]) -> None:
    if not renamed:
        return
    for i in range(int(row[L.F_NSRC])):
        if int(row[L.F_SK0 + 2 * i]) in (L.SK_REG, L.SK_REGNEG):
            value = int(row[L.F_SK0 + 2 * i + 1])
            row[L.F_SK0 + 2 * i + 1] = renamed.get(value, value)
    if row[L.F_GUARD] >= 0:
        row[L.F_GUARD] = renamed.get(int(row[L.F_GUARD]), int(row[L.F_GUARD]))
    if int(row[L.F_OP]) in deps.MEMORY_OPS and row[L.F_ABASE] >= 0:
        row[L.F_ABASE] = renamed.get(int(row[L.F_ABASE]), int(row[L.F_ABASE]))
