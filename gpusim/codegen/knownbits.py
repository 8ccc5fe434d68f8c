"""Known low bits of integer registers: the alignment ptxas proves before it makes a vector access.

What ptxas does: it merges adjacent loads into LDS.64/LDS.128 (LDG.E.64/.128) only where it can prove the
address a multiple of the vector's size, since a misaligned vector access faults. nvcc computes tile
addresses as ``(tid * 4) & -128``, ``(row & 0x3fffffe0) | col``, ``base + (k << 7)``, ``mad``; ptxas
places the shared variables itself, so a shared symbol's address is a known constant. It also knows an
address's residue when it is not aligned: the SGEMM ladder's padded B rows (133 words apart) start at a
known word of a 16-byte chunk in each unrolled copy (``bs + 4 * (8 tc + 133 k)`` with ``k`` a constant),
and its SASS covers them with 16-byte loads chosen by that residue (tests/data/vectorize/).

What is modelled: a known-bits lattice (which bits of a register are known, and their values; LLVM's
KnownBits), queried at its low end: the residue of a register modulo a power of two when its low bits are
all known, and the largest power of two known to divide it. The analysis is flow-insensitive: a register's
knowledge is what every instruction that writes it (guarded or not) guarantees, computed optimistically and
iterated to a fixpoint, so loop-carried pointers (``mov p, base`` outside a loop, ``add p, p, 32`` inside)
keep what every definition preserves. It is sound because every value a register holds was made by one of
its definitions from operands that themselves satisfy the facts (registers start at 0 in the engine, which
every fact about a never-written register holds for). Transfer rules (two's complement, so low bits survive
wrap-around, truncation and sign extension): immediates and shared symbols (their placed offsets) are
known; ``mov``/integer ``cvt`` (not ``.sat``) keep the low bits of the narrower type; ``and``/``or``/``xor``
bit by bit; ``selp``: what both values share; ``add``/``sub``/``neg``: the low bits below the first unknown
bit of an operand (a carry reaches no lower bit); ``mul.lo``/``.wide``: likewise, and at least as many low
zero bits as the operands' together; ``mad``: the product, then the sum; ``shl``/``shr`` by an immediate:
shifted (``shr`` of an unsigned value fills known zeros). Everything else (loads, ``ld.param`` pointers,
special registers such as ``%tid``, ``mul.hi``, vector moves) knows nothing. A register written by more than
one instruction (a loop-carried value, a value set on two paths) keeps only its known low zero bits: ptxas
proves nonzero residues of single values (the unrolled copies above) but not of loop-carried ones --
programs/labs/attention.ptx's ``attn_softmax`` reads ``scratch[i .. i+3]`` with ``i = 1, 5, 9, ...``, a word
past a 16-byte boundary, and its SASS keeps the four LDS scalar.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.codegen import deps

_ALL = (1 << 64) - 1
_UNKNOWN = (0, 0)
"""(known mask, known values): nothing known."""


def _exact(value: int) -> tuple[int, int]:
    return _ALL, value & _ALL


def _low_run(known: int) -> int:
    """How many low bits are known: the index of the lowest unknown bit."""
    unknown = ~known & _ALL
    return 64 if unknown == 0 else (unknown & -unknown).bit_length() - 1


def _low(value: int, bits: int) -> tuple[int, int]:
    mask = (1 << bits) - 1
    return mask, value & mask


def _zeros(fact: tuple[int, int]) -> int:
    """How many low bits are known to be zero."""
    known, value = fact
    run = _low_run(known)
    low = value & ((1 << run) - 1)
    return run if low == 0 else (low & -low).bit_length() - 1


def _arith(a: tuple[int, int], b: tuple[int, int], combine) -> tuple[int, int]:
    """The low bits of ``combine(a, b)`` that an add, subtract or multiply determines: those below the first
    unknown bit of either operand (carries and partial products only move upwards)."""
    return _low(combine(a[1], b[1]), min(_low_run(a[0]), _low_run(b[0])))


def _multiply(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The low bits of a product: with ``a = a0 + 2**ra x`` and ``b = b0 + 2**rb y`` (``a0``, ``b0`` the known
    low ``ra``, ``rb`` bits), ``ab = a0 b0 + a0 2**rb y + b0 2**ra x + 2**(ra + rb) xy``, so the low
    ``min(ra + rb, rb + tz(a0), ra + tz(b0))`` bits are those of ``a0 b0`` (``tz``: trailing zeros)."""
    ra, rb = _low_run(a[0]), _low_run(b[0])
    a0, b0 = a[1] & ((1 << ra) - 1), b[1] & ((1 << rb) - 1)

    def tz(v: int) -> int:
        return 128 if v == 0 else (v & -v).bit_length() - 1

    return _low(a0 * b0, min(ra + rb, rb + tz(a0), ra + tz(b0), 64))


class Alignment:
    """Known low bits of every register of ``kernel``: :meth:`fact` and :meth:`residue` (None when the low bits
    are not known)."""

    def __init__(self, kernel):
        self.defs: dict[int, list] = {}
        for block in kernel.blocks:
            for inst in block.insts:
                for r in deps.writes(inst.row):
                    self.defs.setdefault(r, []).append(inst.row)
        # None: no definition has constrained the register yet (the optimistic start). A register whose every
        # definition reads itself (``add r, r, 32`` alone) then starts from the engine's initial 0.
        self.facts: dict[int, tuple[int, int] | None] = {r: None for r in self.defs}
        self._fixpoint()
        pending = [r for r, fact in self.facts.items() if fact is None]
        if pending:
            for r in pending:
                self.facts[r] = _exact(0)
            self._fixpoint()

    def _fixpoint(self) -> None:
        changed = True
        while changed:                      # knowledge only shrinks, over finitely many bits: terminates
            changed = False
            for r, rows in self.defs.items():
                new: tuple[int, int] | None = None
                for row in rows:
                    fact = self._transfer(row, r)
                    if fact is not None:
                        new = fact if new is None else _meet(new, fact)
                if new is not None and len(rows) > 1:
                    new = _low(0, _zeros(new))    # see the docstring: a merged value keeps its zero low bits
                old = self.facts[r]
                if new is None:
                    continue
                merged = new if old is None else _meet(new, old)
                if merged != old:
                    self.facts[r] = merged
                    changed = True

    def fact(self, r: int) -> tuple[int, int]:
        """(known mask, known values) of register ``r`` (never written: 0, the engine's initial value)."""
        fact = self.facts.get(r, _exact(0))
        return _UNKNOWN if fact is None else fact

    def residue(self, r: int, modulus: int) -> int | None:
        """``r``'s value modulo ``modulus`` (a power of two) when its low bits are known, else None."""
        known, value = self.fact(r)
        bits = modulus.bit_length() - 1
        return value & (modulus - 1) if _low_run(known) >= bits else None

    def _source(self, kind: int, value: int) -> tuple[int, int] | None:
        if kind == L.SK_IMM:
            return _exact(value)
        if kind == L.SK_REG:
            return self.facts.get(value, _exact(0))
        return _UNKNOWN

    def _transfer(self, row, r: int) -> tuple[int, int] | None:
        """What one definition of ``r`` guarantees (None while an operand is still unconstrained)."""
        op = int(row[L.F_OP])
        if row[L.F_NDST] != 1 or row[L.F_VEC] != 1 or int(row[L.F_DST0]) != r or \
                c.TYPE_FLOAT[int(row[L.F_TY])]:
            return _UNKNOWN
        srcs = deps.sources(row)
        given = [self._source(kind, value) for kind, value in srcs]
        a = [fact for fact in given if fact is not None]
        if len(a) != len(given):
            return None
        mul = c.mods_mul(int(row[L.F_MODS]))
        width = 8 * c.TYPE_BYTES[int(row[L.F_TY])]
        if op == c.OP_MOV and len(a) == 1:
            return a[0]
        if op == c.OP_CVT and len(a) == 1:
            if c.TYPE_FLOAT[int(row[L.F_TY2])] or int(row[L.F_MODS]) & c.MOD_SAT:
                return _UNKNOWN
            field = (1 << min(width, 8 * c.TYPE_BYTES[int(row[L.F_TY2])])) - 1
            return a[0][0] & field, a[0][1] & field
        if int(row[L.F_MODS]) & c.MOD_SAT:
            return _UNKNOWN                   # a clamped result keeps no low bits
        if op == c.OP_NEG and len(a) == 1:
            return _arith(_exact(0), a[0], lambda x, y: x - y)
        if op in (c.OP_ADD, c.OP_SUB) and len(a) == 2:
            return _arith(a[0], a[1], (lambda x, y: x + y) if op == c.OP_ADD else (lambda x, y: x - y))
        if op == c.OP_AND and len(a) == 2:
            zeros = (a[0][0] & ~a[0][1]) | (a[1][0] & ~a[1][1])
            ones = a[0][1] & a[1][1]
            return (zeros | ones) & _ALL, ones
        if op == c.OP_OR and len(a) == 2:
            ones = a[0][1] | a[1][1]
            zeros = a[0][0] & ~a[0][1] & a[1][0] & ~a[1][1]
            return (zeros | ones) & _ALL, ones
        if op == c.OP_XOR and len(a) == 2:
            known = a[0][0] & a[1][0]
            return known, (a[0][1] ^ a[1][1]) & known
        if op == c.OP_SELP and len(a) >= 2:
            return _meet(a[0], a[1])
        if op == c.OP_SHL and len(a) == 2 and srcs[1][0] == L.SK_IMM and 0 <= srcs[1][1] < 64:
            k = srcs[1][1]
            return ((a[0][0] << k) | ((1 << k) - 1)) & _ALL, (a[0][1] << k) & _ALL
        if op == c.OP_SHR and len(a) == 2 and srcs[1][0] == L.SK_IMM and 0 <= srcs[1][1] < width:
            k = srcs[1][1]
            field = (1 << width) - 1
            known, value = (a[0][0] & field) >> k, (a[0][1] & field) >> k
            if not c.TYPE_SIGNED[int(row[L.F_TY])]:
                known |= field & ~(field >> k)   # the bits shifted in from above: zeros
            elif (a[0][0] >> (width - 1)) & 1 == 0:
                known &= field >> k              # an unknown sign fills the top bits with it
            else:
                sign = (a[0][1] >> (width - 1)) & 1
                top = field & ~(field >> k)
                known |= top
                value |= top if sign else 0
            return known, value & known
        if op == c.OP_MUL and len(a) == 2 and mul != c.MUL_HI:
            return _multiply(a[0], a[1])
        if op == c.OP_MAD and len(a) == 3 and mul != c.MUL_HI:
            return _arith(_multiply(a[0], a[1]), a[2], lambda x, y: x + y)
        return _UNKNOWN


def _meet(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """What two facts agree on: the bits both know with the same value."""
    known = a[0] & b[0] & ~(a[1] ^ b[1]) & _ALL
    return known, a[1] & known
