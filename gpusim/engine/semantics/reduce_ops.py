"""The reductions of the bulk asynchronous copies: ``cp.reduce.async.bulk.tensor`` (semantics/tma.py) and the
non-tensor ``cp.reduce.async.bulk.global.shared::cta.bulk_group`` (semantics/mbarrier.py), element by element,
as the PTX ISA defines .add .min .max .inc .dec .and .or .xor: floats rounded once to nearest even (the sum of
two values of the element type is exact in float64), integers wrapping, .inc/.dec as ``atom``'s."""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.bits import bits_from_f64
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics.alu_convert import float_to_float
from gpusim.engine.semantics.alu_float import load_float
from gpusim.engine.semantics.alu_int import type_width


@compiled_only
def combine(old, new, op, ty, elem):
    """``op`` (TMA_RED_*) of two raw element values of type ``ty`` (``elem`` bytes)."""
    bits = np.uint64(8 * elem)
    mask = np.uint64(0xFFFFFFFFFFFFFFFF) if elem == 8 else (np.uint64(1) << bits) - np.uint64(1)
    if op == L.TMA_RED_AND:
        return old & new
    if op == L.TMA_RED_OR:
        return old | new
    if op == L.TMA_RED_XOR:
        return old ^ new
    if ty == c.T_F16 or ty == c.T_BF16 or ty == c.T_F32 or ty == c.T_F64:
        a = load_float(old, ty, False)
        b = load_float(new, ty, False)
        if op == L.TMA_RED_ADD:
            v = a + b
        elif op == L.TMA_RED_MIN:
            v = b if (b < a or a != a) else a
        else:
            v = b if (b > a or a != a) else a
        return float_to_float(bits_from_f64(v), ty, c.T_F64, c.RND_RN) & mask
    if op == L.TMA_RED_ADD:
        return (old + new) & mask
    if op == L.TMA_RED_INC:
        return np.uint64(0) if old >= new else (old + np.uint64(1)) & mask
    if op == L.TMA_RED_DEC:
        return new if (old == 0 or old > new) else old - np.uint64(1)
    signed = ty == c.T_S8 or ty == c.T_S16 or ty == c.T_S32 or ty == c.T_S64
    sa, sb = np.int64(old), np.int64(new)
    if signed and elem < 8:
        shift = np.int64(64 - 8 * elem)
        sa, sb = (sa << shift) >> shift, (sb << shift) >> shift
    less = sb < sa if signed else new < old
    if op == L.TMA_RED_MIN:
        return new if less else old
    return old if less or old == new else new


@compiled_only
def reduce_element(m, bslot, goff, soff, op, ty, elem):
    """Combine the ``elem``-byte little-endian element of block slot ``bslot``'s shared memory at ``soff`` into
    the heap's at ``goff`` (``op``: TMA_RED_*, ``ty`` the element type)."""
    old = np.uint64(0)
    new = np.uint64(0)
    for b in range(elem):
        old |= np.uint64(m.mem8[goff + b]) << np.uint64(8 * b)
        new |= np.uint64(m.shared8[bslot, soff + b]) << np.uint64(8 * b)
    value = combine(old, new, op, ty, elem)
    for b in range(elem):
        m.mem8[goff + b] = np.uint8((value >> np.uint64(8 * b)) & np.uint64(255))
        m.valid[goff + b] = 2


@compiled_only
def reduce_into_heap(m, bslot, goff, soff, size, op, ty):
    """Combine ``size`` bytes of block slot ``bslot``'s shared memory at ``soff`` into the heap at ``goff``,
    element by element (``op``: TMA_RED_*; elements of type ``ty``)."""
    elem = type_width(ty) // 8
    for e in range(0, size, elem):
        reduce_element(m, bslot, goff + e, soff + e, op, ty, elem)
