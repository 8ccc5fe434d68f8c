"""Known low zero bits of integer registers: the alignment ptxas proves before it makes a vector access.

What ptxas does: it merges adjacent loads into LDS.64/LDS.128 (LDG.E.64/.128) only where it can prove the
address a multiple of the vector's size, since a misaligned vector access faults. nvcc computes tile
addresses as ``(tid * 4) & -128``, ``(row & 0x3fffffe0) | col``, ``base + (k << 7)``, ``mad``; ptxas
places the shared variables itself, so a shared symbol's address is a known constant.

What is modelled: a known-bits lattice reduced to its low end, the largest power of two known to divide a
register's value (1: nothing known; :data:`CAP`: the value is 0). The analysis is flow-insensitive: a
register's alignment is the minimum over every instruction that writes it (guarded or not), computed
optimistically and iterated to a fixpoint, so loop-carried pointers (``mov p, base`` outside a loop,
``add p, p, 32`` inside) keep what every definition preserves. It is sound because every value a
register holds was made by one of its definitions from operands that themselves satisfy the bound
(registers start at 0 in the engine, which every bound holds for). Transfer rules (two's complement,
so low bits survive wrap-around, truncation and sign extension): immediates and shared symbols (their
placed offsets) by their lowest set bit; ``mov``/``neg``/integer ``cvt`` (not ``.sat``) keep it; ``add``,
``sub``, ``or``, ``xor``, ``selp``: the minimum; ``and``: the maximum (a mask ``-128`` clears 7 bits);
``mul.lo``/``.wide``: the product; ``mad.lo``/``.wide``: min(product, addend); ``shl`` by ``k``: times
``2**k``; ``shr`` by ``k``: divided by ``2**k``. Everything else (loads, ``ld.param`` pointers, special
registers such as ``%tid``, ``mul.hi``, vector moves) knows nothing.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.codegen import deps

CAP = 1 << 20
"""The alignment of a value known to be 0 (larger than any access size)."""

_MIN_OPS = (c.OP_ADD, c.OP_SUB, c.OP_OR, c.OP_XOR, c.OP_SELP)


def lowbit(value: int) -> int:
    """The largest power of two dividing ``value`` (capped at :data:`CAP`; 0 is :data:`CAP`)."""
    value &= (1 << 64) - 1
    return CAP if value == 0 else min(value & -value, CAP)


class Alignment:
    """Known power-of-two divisors of every register of ``kernel`` (1 when nothing is known)."""

    def __init__(self, kernel):
        self.defs: dict[int, list] = {}
        for block in kernel.blocks:
            for inst in block.insts:
                for r in deps.writes(inst.row):
                    self.defs.setdefault(r, []).append(inst.row)
        self.value = {r: CAP for r in self.defs}
        changed = True
        while changed:                      # monotone decreasing over a finite lattice: terminates
            changed = False
            for r, rows in self.defs.items():
                new = min(self._transfer(row, r) for row in rows)
                if new < self.value[r]:
                    self.value[r] = new
                    changed = True

    def reg(self, r: int) -> int:
        """The alignment of register ``r`` (never written: 0, the engine's initial value)."""
        return self.value.get(r, CAP)

    def source(self, kind: int, value: int) -> int:
        if kind == L.SK_IMM:
            return lowbit(value)
        if kind == L.SK_REG:
            return self.reg(value)
        return 1

    def _transfer(self, row, r: int) -> int:
        op = int(row[L.F_OP])
        if row[L.F_NDST] != 1 or row[L.F_VEC] != 1 or int(row[L.F_DST0]) != r or \
                c.TYPE_FLOAT[int(row[L.F_TY])]:
            return 1
        srcs = deps.sources(row)
        a = [self.source(kind, value) for kind, value in srcs]
        mul = c.mods_mul(int(row[L.F_MODS]))
        if op == c.OP_MOV and len(a) == 1 or op == c.OP_NEG and len(a) == 1:
            return a[0]
        if op == c.OP_CVT and len(a) == 1:
            if c.TYPE_FLOAT[int(row[L.F_TY2])] or int(row[L.F_MODS]) & c.MOD_SAT:
                return 1
            return a[0]
        if int(row[L.F_MODS]) & c.MOD_SAT:
            return 1                          # a clamped result keeps no low bits
        if op in _MIN_OPS and len(a) >= 2:
            return min(a[:2])
        if op == c.OP_AND and len(a) == 2:
            return max(a)
        if op == c.OP_SHL and len(a) == 2:
            shift = srcs[1][1] if srcs[1][0] == L.SK_IMM and 0 <= srcs[1][1] < 64 else 0
            return min(a[0] << shift, CAP)
        if op == c.OP_SHR and len(a) == 2 and srcs[1][0] == L.SK_IMM and 0 <= srcs[1][1] < 64:
            return max(a[0] >> srcs[1][1], 1) if a[0] < CAP else CAP
        if op == c.OP_MUL and len(a) == 2 and mul != c.MUL_HI:
            return min(a[0] * a[1], CAP)
        if op == c.OP_MAD and len(a) == 3 and mul != c.MUL_HI:
            return min(a[0] * a[1], a[2], CAP)
        return 1
