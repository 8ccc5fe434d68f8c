"""alu_eval dispatch, the bit primitives of gpusim.engine.bits, and float comparisons (setp)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from gpusim.arch.codes import (
    CMP_EQ,
    CMP_EQU,
    CMP_GE,
    CMP_GEU,
    CMP_GT,
    CMP_GTU,
    CMP_LE,
    CMP_LEU,
    CMP_LT,
    CMP_LTU,
    CMP_NAN,
    CMP_NE,
    CMP_NEU,
    CMP_NUM,
    MOD_CMP_SHIFT,
    MOD_FTZ,
    OP_ADD,
    OP_FMA,
    OP_LAST_ALU,
    OP_MAD,
    OP_MOV,
    OP_SETP,
    RND_RN,
    T_B32,
    T_F32,
    T_F64,
    T_S32,
)
from gpusim.engine.bits import (
    bits_from_f32,
    bits_from_f64,
    f32_from_bits,
    f64_from_bits,
    fused_multiply_add,
    leading_zeros64,
    popcount64,
)
from gpusim.engine.semantics.alu import alu_eval
from tests.test_alu_reference import f32_bits, float_to_bits


@settings(max_examples=200, deadline=None)
@given(bits=st.integers(0, 2**64 - 1))
def test_f64_bit_reinterpretation_round_trips(bits):
    value = f64_from_bits(np.uint64(bits))
    assert struct.unpack("<Q", struct.pack("<d", value))[0] == bits
    assert int(bits_from_f64(value)) == bits


@settings(max_examples=200, deadline=None)
@given(bits=st.integers(0, 2**32 - 1))
def test_f32_bit_reinterpretation_round_trips(bits):
    # in compiled code every pattern survives, signaling-NaN payloads included
    assert int(_f32_round_trip(np.uint64(bits))) == bits
    value = f32_from_bits(np.uint64(bits))
    if not math.isnan(value):   # returning a float32 to Python widens it to a double, which quiets an sNaN
        assert struct.unpack("<I", struct.pack("<f", value))[0] == bits
        assert int(bits_from_f32(value)) == bits


@njit(cache=True)
def _f32_round_trip(bits):
    return bits_from_f32(f32_from_bits(bits))


@settings(max_examples=200, deadline=None)
@given(bits=st.integers(0, 2**64 - 1))
def test_bit_counting(bits):
    assert int(popcount64(np.uint64(bits))) == bin(bits).count("1")
    assert int(leading_zeros64(np.uint64(bits))) == 64 - bits.bit_length()


def test_fused_multiply_add_rounds_once():
    a = 1.0 + 2.0**-30
    # a*a = 1 + 2^-29 + 2^-60: the unfused product loses the 2^-60
    assert fused_multiply_add(a, a, -(1.0 + 2.0**-29)) == 2.0**-60


FLOAT_COMPARISONS = {
    CMP_EQ: lambda x, y: x == y,
    CMP_NE: lambda x, y: x != y and not (math.isnan(x) or math.isnan(y)),
    CMP_LT: lambda x, y: x < y,
    CMP_LE: lambda x, y: x <= y,
    CMP_GT: lambda x, y: x > y,
    CMP_GE: lambda x, y: x >= y,
    CMP_EQU: lambda x, y: not (x < y or x > y),
    CMP_NEU: lambda x, y: x != y,
    CMP_LTU: lambda x, y: not x >= y,
    CMP_LEU: lambda x, y: not x > y,
    CMP_GTU: lambda x, y: not x <= y,
    CMP_GEU: lambda x, y: not x < y,
    CMP_NUM: lambda x, y: not (math.isnan(x) or math.isnan(y)),
    CMP_NAN: lambda x, y: math.isnan(x) or math.isnan(y),
}
SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.0, 2.5, math.inf, -math.inf, math.nan, 1e-40, -1e-40]


@pytest.mark.parametrize("ty", [T_F32, T_F64])
@pytest.mark.parametrize("comparison", list(FLOAT_COMPARISONS))
def test_setp_float(ty, comparison):
    relation = FLOAT_COMPARISONS[comparison]
    for x in SPECIAL_FLOATS:
        for y in SPECIAL_FLOATS:
            a, b = float_to_bits(x, ty), float_to_bits(y, ty)
            got = int(
                alu_eval(
                    OP_SETP,
                    ty,
                    0,
                    comparison << MOD_CMP_SHIFT,
                    np.uint64(a),
                    np.uint64(b),
                    np.uint64(0),
                    np.uint64(0),
                )
            )
            t = relation(x, y)
            assert got == int(t) | (int(not t) << 1), (x, y)


def test_setp_ftz_treats_subnormals_as_zero():
    mods = CMP_EQ << MOD_CMP_SHIFT
    tiny = np.uint64(f32_bits(1e-40))
    assert int(alu_eval(OP_SETP, T_F32, 0, mods, tiny, np.uint64(0), np.uint64(0), np.uint64(0))) & 1 == 0
    assert (
        int(alu_eval(OP_SETP, T_F32, 0, mods | MOD_FTZ, tiny, np.uint64(0), np.uint64(0), np.uint64(0))) & 1
        == 1
    )


def test_garbage_in_high_bits_is_ignored():
    garbage = 0xDEADBEEF << 32
    one, two = f32_bits(1.0), f32_bits(2.0)
    got = alu_eval(
        OP_ADD,
        T_F32,
        0,
        RND_RN,
        np.uint64(one | garbage),
        np.uint64(two | garbage),
        np.uint64(0),
        np.uint64(0),
    )
    assert int(got) == f32_bits(3.0)
    got = alu_eval(
        OP_ADD, T_S32, 0, 0, np.uint64(0xFFFFFFFF | garbage), np.uint64(1), np.uint64(0), np.uint64(0)
    )
    assert int(got) == 0


def test_every_alu_op_code_returns_a_value():
    for op in range(OP_MOV, OP_LAST_ALU + 1):
        for ty in (T_B32, T_S32, T_F32, T_F64):
            result = alu_eval(op, ty, T_S32, RND_RN, np.uint64(7), np.uint64(3), np.uint64(1), np.uint64(0))
            assert 0 <= int(result) < 2**64


def test_mad_and_fma_agree_for_floats():
    a, b, c = (np.uint64(float_to_bits(v, T_F64)) for v in (0.1, 10.0, -1.0))
    fused = alu_eval(OP_FMA, T_F64, 0, RND_RN, a, b, c, np.uint64(0))
    assert alu_eval(OP_MAD, T_F64, 0, RND_RN, a, b, c, np.uint64(0)) == fused
    # exact: 0.1 (as a double) * 10 - 1 = 2^-54
    assert f64_from_bits(fused) == 2.0**-54
