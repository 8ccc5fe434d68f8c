"""dp4a / dp2a: integer dot products of packed bytes and half-words with a 32-bit accumulator.

PTX ISA, "Integer Arithmetic Instructions: dp4a / dp2a": ``dp4a.atype.btype d, a, b, c`` adds the four
products of the bytes of ``a`` and ``b`` to ``c``; ``dp2a.mode.atype.btype d, a, b, c`` adds the two
products of the 16-bit halves of ``a`` with bytes 0-1 (``.lo``) or 2-3 (``.hi``) of ``b``. Each element is
sign- or zero-extended by its operand's type (``.s32`` / ``.u32``); ``c`` and ``d`` are ``.u32`` when both
types are unsigned, else ``.s32``; the sum wraps modulo 2^32. Nothing is simplified.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch.codes import TYPE_SIGNED
from gpusim.engine.jit import compiled_only

_SIGNED = np.array(TYPE_SIGNED, dtype=np.int64)
_LOW32 = np.uint64(0xFFFFFFFF)


@compiled_only
def packed_element(value, index, bits, signed):
    """Element ``index`` of ``bits``-wide elements packed in the low 32 bits of ``value``, extended."""
    raw = np.int64((value >> np.uint64(index * bits)) & np.uint64((1 << bits) - 1))
    if signed and raw >= (1 << (bits - 1)):
        raw -= np.int64(1 << bits)
    return raw


@compiled_only
def dot_product_accumulate(two_way, a_type, b_type, high, a, b, c):
    """One lane of dp4a (``two_way`` False) or dp2a (``high``: b's bytes 2-3), as raw 32-bit result bits."""
    a_signed = _SIGNED[a_type] != 0
    b_signed = _SIGNED[b_type] != 0
    total = np.int64(c & _LOW32)
    if two_way:
        first = 2 if high else 0
        for k in range(2):
            total += packed_element(a, k, 16, a_signed) * packed_element(b, first + k, 8, b_signed)
    else:
        for k in range(4):
            total += packed_element(a, k, 8, a_signed) * packed_element(b, k, 8, b_signed)
    return np.uint64(total) & _LOW32
