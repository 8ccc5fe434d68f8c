"""Float semantics of alu_eval: correctly rounded add/sub/mul/fma/div/sqrt in all four IEEE directions.

Expected values come from exact rational arithmetic (fractions.Fraction) rounded by the
independent reference in test_alu_reference.py, or from numpy/math for special values.
"""

from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpusim.arch.codes import (
    MOD_APPROX,
    MOD_FTZ,
    MOD_NAN,
    MOD_SAT,
    MOD_TESTP_SHIFT,
    OP_ABS,
    OP_ADD,
    OP_COPYSIGN,
    OP_COS,
    OP_DIV,
    OP_EX2,
    OP_FMA,
    OP_LG2,
    OP_MAD,
    OP_MAX,
    OP_MIN,
    OP_MUL,
    OP_NEG,
    OP_RCP,
    OP_RSQRT,
    OP_SIN,
    OP_SQRT,
    OP_SUB,
    OP_TANH,
    OP_TESTP,
    RND_RM,
    RND_RN,
    RND_RP,
    RND_RZ,
    T_BF16,
    T_F16,
    T_F16X2,
    T_F32,
    T_F64,
    TESTP_FINITE,
    TESTP_INFINITE,
    TESTP_NORMAL,
    TESTP_NOTANUMBER,
    TESTP_NUMBER,
    TESTP_SUBNORMAL,
)
from gpusim.engine.semantics.alu import alu_eval
from tests.test_alu_reference import (
    ALL_DIRECTED,
    CANONICAL_NAN,
    FORMATS,
    bits_to_float,
    exact,
    f32_bits,
    f32_value,
    float_to_bits,
    is_nan,
    round_fraction,
    sign_of_zero_sum,
    sqrt_fraction_sticky,
)

# GPUSIM_ALU_EXAMPLES raises the number of random cases for a deeper (slower) check
SETTINGS = settings(
    max_examples=int(os.environ.get("GPUSIM_ALU_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def run(op, ty, mods, a, b=0, c=0, d=0, ty2=0):
    u = np.uint64
    return int(alu_eval(op, ty, ty2, mods, u(a), u(b), u(c), u(d)))


def special_bits(fmt):
    precision, max_exponent, width = FORMATS[fmt]
    infinity = ((1 << (width - precision)) - 1) << (precision - 1)
    sign = 1 << (width - 1)
    one = max_exponent << (precision - 1)
    values = [
        0,
        1,
        infinity - 1,
        infinity,
        infinity + 1,
        one,
        one + 1,
        one - 1,
        (1 << (precision - 1)) - 1,
        1 << (precision - 1),
    ]
    return values + [v | sign for v in values]


def float_bits(fmt):
    """Random bit patterns, values near 1.0 (to make sums cancel and round often) and special values."""
    precision, max_exponent, width = FORMATS[fmt]
    random_bits = st.integers(0, (1 << width) - 1)
    near_one = st.builds(
        lambda sign, exponent, fraction: (sign << (width - 1)) | (exponent << (precision - 1)) | fraction,
        st.integers(0, 1),
        st.integers(max_exponent - 3, max_exponent + 3),
        st.integers(0, (1 << (precision - 1)) - 1),
    )
    return st.one_of(random_bits, near_one, near_one, st.sampled_from(special_bits(fmt)))


def expected_arithmetic(op, fmt, mode, a, b, c=0):
    """Reference result bits for op on raw operands a, b, c."""
    x, y, z = bits_to_float(a, fmt), bits_to_float(b, fmt), bits_to_float(c, fmt)
    operands = (x,) if op == OP_SQRT else ((x, y, z) if op == OP_FMA else (x, y))
    special = (
        any(not math.isfinite(v) for v in operands)
        or (op == OP_DIV and y == 0.0)
        or (op == OP_SQRT and x < 0)
    )
    if special:
        with np.errstate(all="ignore"):
            if op == OP_ADD:
                value = np.float64(x) + np.float64(y)
            elif op == OP_SUB:
                value = np.float64(x) - np.float64(y)
            elif op == OP_MUL:
                value = np.float64(x) * np.float64(y)
            elif op == OP_DIV:
                value = np.float64(x) / np.float64(y)
            elif op == OP_SQRT:
                value = np.sqrt(np.float64(x))
            elif math.isfinite(x) and math.isfinite(y):
                value = np.float64(z)  # a finite product (even one beyond the range) plus inf or NaN
            else:
                value = np.float64(x) * np.float64(y) + np.float64(z)
        return CANONICAL_NAN[fmt] if math.isnan(value) else float_to_bits(float(value), fmt)
    negative_x, negative_y, negative_z = (math.copysign(1, v) < 0 for v in (x, y, z))
    if op in (OP_ADD, OP_SUB):
        second = Fraction(y) if op == OP_ADD else -Fraction(y)
        second_negative = negative_y if op == OP_ADD else not negative_y
        value = Fraction(x) + second
        zero_sign = sign_of_zero_sum(negative_x, second_negative, x == 0 and y == 0, mode)
    elif op == OP_MUL:
        value = Fraction(x) * Fraction(y)
        zero_sign = negative_x != negative_y
    elif op == OP_DIV:
        value = Fraction(x) / Fraction(y)
        zero_sign = negative_x != negative_y
    elif op == OP_SQRT:
        value = sqrt_fraction_sticky(Fraction(x))
        zero_sign = negative_x
    else:
        product = Fraction(x) * Fraction(y)
        value = product + Fraction(z)
        zero_sign = sign_of_zero_sum(negative_x != negative_y, negative_z, product == 0 and z == 0, mode)
    return round_fraction(value, mode, fmt, negative_zero=zero_sign)


MODES = st.sampled_from(ALL_DIRECTED)


@pytest.mark.parametrize("op", [OP_ADD, OP_SUB, OP_MUL, OP_DIV])
@pytest.mark.parametrize("fmt", [T_F32, T_F64])
@SETTINGS
@given(data=st.data())
def test_binary_correctly_rounded(op, fmt, data):
    a = data.draw(float_bits(fmt))
    b = data.draw(float_bits(fmt))
    mode = data.draw(MODES)
    assert run(op, fmt, mode, a, b) == expected_arithmetic(op, fmt, mode, a, b)


@pytest.mark.parametrize("fmt", [T_F32, T_F64])
@SETTINGS
@given(data=st.data())
def test_fma_correctly_rounded(fmt, data):
    a = data.draw(float_bits(fmt))
    b = data.draw(float_bits(fmt))
    c = data.draw(float_bits(fmt))
    mode = data.draw(MODES)
    assert run(OP_FMA, fmt, mode, a, b, c) == expected_arithmetic(OP_FMA, fmt, mode, a, b, c)


@pytest.mark.parametrize("fmt", [T_F32, T_F64])
@SETTINGS
@given(data=st.data())
def test_fma_cancellation(fmt, data):
    """c close to -a*b: the exact residue decides everything."""
    a = data.draw(float_bits(fmt))
    b = data.draw(float_bits(fmt))
    mode = data.draw(MODES)
    x, y = bits_to_float(a, fmt), bits_to_float(b, fmt)
    product = Fraction(x) * Fraction(y) if math.isfinite(x) and math.isfinite(y) else Fraction(0)
    c = round_fraction(-product, data.draw(MODES), fmt)
    c ^= data.draw(st.integers(0, 3))
    assert run(OP_FMA, fmt, mode, a, b, c) == expected_arithmetic(OP_FMA, fmt, mode, a, b, c)


@pytest.mark.parametrize("fmt", [T_F32, T_F64])
@SETTINGS
@given(data=st.data())
def test_sqrt_correctly_rounded(fmt, data):
    a = data.draw(float_bits(fmt))
    mode = data.draw(MODES)
    assert run(OP_SQRT, fmt, mode, a) == expected_arithmetic(OP_SQRT, fmt, mode, a, 0)


@SETTINGS
@given(a=st.integers(0, 2**32 - 1), b=st.integers(0, 2**32 - 1), c=st.integers(0, 2**32 - 1))
def test_f32_round_to_nearest_matches_numpy(a, b, c):
    x, y, z = (np.uint32(v).view(np.float32) for v in (a, b, c))
    with np.errstate(all="ignore"):
        references = {OP_ADD: x + y, OP_MUL: x * y, OP_DIV: x / y, OP_SQRT: np.sqrt(x)}
    for op, value in references.items():
        want = 0x7FFFFFFF if np.isnan(value) else int(np.float32(value).view(np.uint32))
        assert run(op, T_F32, RND_RN, a, b) == want


def test_mad_f32_is_fused():
    a = f32_bits(1.0 + 2.0**-23)
    c = f32_bits(-(1.0 + 2.0**-22))
    # exact product is 1 + 2^-22 + 2^-46; unfused rounding would give exactly 0
    assert f32_value(run(OP_MAD, T_F32, RND_RN, a, a, c)) == 2.0**-46
    assert f32_value(run(OP_FMA, T_F32, RND_RN, a, a, c)) == 2.0**-46


def test_directed_rounding_hand_cases():
    one, tiny = f32_bits(1.0), f32_bits(2.0**-30)
    assert run(OP_ADD, T_F32, RND_RN, one, tiny) == one
    assert run(OP_ADD, T_F32, RND_RP, one, tiny) == one + 1
    assert run(OP_ADD, T_F32, RND_RZ, one, tiny) == one
    assert run(OP_SUB, T_F32, RND_RZ, one, tiny) == f32_bits(1.0 - 2.0**-24)
    assert run(OP_SUB, T_F32, RND_RM, one, tiny) == f32_bits(1.0 - 2.0**-24)
    third = run(OP_DIV, T_F32, RND_RN, one, f32_bits(3.0))
    assert third == 0x3EAAAAAB  # 1/3 = 0x3EAAAAAA.AAA... rounds up
    assert run(OP_DIV, T_F32, RND_RP, one, f32_bits(3.0)) == third
    assert run(OP_DIV, T_F32, RND_RZ, one, f32_bits(3.0)) == third - 1
    assert run(OP_DIV, T_F32, RND_RM, one, f32_bits(-3.0)) == (third | 0x80000000)
    # x - x is +0, but -0 when rounding toward -inf
    assert run(OP_SUB, T_F32, RND_RN, one, one) == 0
    assert run(OP_SUB, T_F32, RND_RM, one, one) == 0x80000000
    big = f32_bits(3.0e38)
    assert run(OP_MUL, T_F32, RND_RN, big, big) == 0x7F800000
    assert run(OP_MUL, T_F32, RND_RZ, big, big) == 0x7F7FFFFF
    assert run(OP_MUL, T_F32, RND_RM, big, big) == 0x7F7FFFFF
    assert (
        run(OP_MUL, T_F64, RND_RZ, float_to_bits(1e300, T_F64), float_to_bits(1e300, T_F64))
        == 0x7FEFFFFFFFFFFFFF
    )


def test_nan_results_are_canonical():
    quiet = 0x7FC00001
    negative_nan = 0xFFC12345
    assert run(OP_ADD, T_F32, RND_RN, quiet, f32_bits(1.0)) == 0x7FFFFFFF
    assert run(OP_MUL, T_F32, RND_RN, negative_nan, f32_bits(1.0)) == 0x7FFFFFFF
    assert run(OP_ADD, T_F32, RND_RN, 0x7F800000, 0xFF800000) == 0x7FFFFFFF
    assert run(OP_SQRT, T_F32, RND_RN, f32_bits(-1.0)) == 0x7FFFFFFF
    assert run(OP_DIV, T_F64, RND_RN, 0, 0) == CANONICAL_NAN[T_F64]


def test_ftz_flushes_inputs_and_outputs():
    subnormal = 0x00000010
    assert run(OP_ADD, T_F32, RND_RN, subnormal, 0) == subnormal
    assert run(OP_ADD, T_F32, RND_RN | MOD_FTZ, subnormal, 0) == 0
    assert run(OP_MUL, T_F32, RND_RN | MOD_FTZ, 0x80000010, f32_bits(1.0)) == 0x80000000
    # a normal product with a subnormal result is flushed too, keeping its sign
    half_min = f32_bits(2.0**-127)
    assert run(OP_MUL, T_F32, RND_RN, half_min, f32_bits(-1.0)) == 0x80400000
    assert run(OP_MUL, T_F32, RND_RN | MOD_FTZ, f32_bits(2.0**-100), f32_bits(-(2.0**-27))) == 0x80000000


def test_saturate():
    assert run(OP_ADD, T_F32, RND_RN | MOD_SAT, f32_bits(0.75), f32_bits(0.5)) == f32_bits(1.0)
    assert run(OP_ADD, T_F32, RND_RN | MOD_SAT, f32_bits(-0.75), f32_bits(0.5)) == 0
    assert run(OP_MUL, T_F32, RND_RN | MOD_SAT, 0x7FC00000, f32_bits(1.0)) == 0
    assert run(OP_MUL, T_F32, RND_RN | MOD_SAT, f32_bits(0.25), f32_bits(2.0)) == f32_bits(0.5)


def test_min_max_rules():
    nan, one, two = 0x7FC00000, f32_bits(1.0), f32_bits(2.0)
    assert run(OP_MIN, T_F32, 0, one, two) == one
    assert run(OP_MAX, T_F32, 0, one, two) == two
    assert run(OP_MIN, T_F32, 0, nan, two) == two
    assert run(OP_MAX, T_F32, 0, one, nan) == one
    assert run(OP_MIN, T_F32, 0, nan, nan) == 0x7FFFFFFF
    assert run(OP_MIN, T_F32, MOD_NAN, nan, one) == 0x7FFFFFFF
    assert run(OP_MIN, T_F32, 0, 0, 0x80000000) == 0x80000000
    assert run(OP_MAX, T_F32, 0, 0x80000000, 0) == 0
    assert run(OP_MAX, T_F64, 0, float_to_bits(-3.0, T_F64), float_to_bits(-5.0, T_F64)) == float_to_bits(
        -3.0, T_F64
    )


def test_abs_neg_copysign():
    assert run(OP_NEG, T_F32, 0, f32_bits(1.5)) == f32_bits(-1.5)
    assert run(OP_ABS, T_F32, 0, f32_bits(-1.5)) == f32_bits(1.5)
    assert run(OP_ABS, T_F64, 0, float_to_bits(-0.0, T_F64)) == 0
    # copysign d, a, b: magnitude of b, sign of a
    assert run(OP_COPYSIGN, T_F32, 0, f32_bits(-1.0), f32_bits(2.5)) == f32_bits(-2.5)
    assert run(OP_COPYSIGN, T_F64, 0, float_to_bits(1.0, T_F64), float_to_bits(-7.0, T_F64)) == float_to_bits(
        7.0, T_F64
    )


@pytest.mark.parametrize(
    "kind, value, want",
    [
        (TESTP_FINITE, 1.0, 1),
        (TESTP_FINITE, math.inf, 0),
        (TESTP_INFINITE, -math.inf, 1),
        (TESTP_NUMBER, math.nan, 0),
        (TESTP_NOTANUMBER, math.nan, 1),
        (TESTP_NORMAL, 1.0, 1),
        (TESTP_NORMAL, 0.0, 0),
        (TESTP_SUBNORMAL, 1e-40, 1),
        (TESTP_SUBNORMAL, 1e-30, 0),
    ],
)
def test_testp(kind, value, want):
    assert run(OP_TESTP, T_F32, kind << MOD_TESTP_SHIFT, f32_bits(value)) == want


@pytest.mark.parametrize(
    "op, function, bound",
    [
        (OP_EX2, lambda v: 2.0**v, 2.0**-22),
        (OP_LG2, math.log2, 2.0**-22),
        (OP_SIN, math.sin, 2.0**-21),
        (OP_COS, math.cos, 2.0**-21),
        (OP_TANH, math.tanh, 2.0**-11),
        (OP_RSQRT, lambda v: 1 / math.sqrt(v), 2.0**-22),
        (OP_RCP, lambda v: 1 / v, 2.0**-23),
        (OP_SQRT, math.sqrt, 2.0**-23),
    ],
)
def test_approximate_functions_within_ptx_bounds(op, function, bound):
    for value in np.linspace(0.1, 3.0, 57):
        operand = float(np.float32(value))
        got = f32_value(run(op, T_F32, MOD_APPROX, f32_bits(operand)))
        want = function(operand)
        scale = 1.0 if op in (OP_SIN, OP_COS, OP_LG2) else abs(want)
        assert abs(got - want) <= bound * scale


def test_approximate_special_values():
    inf, minus_inf = 0x7F800000, 0xFF800000
    assert run(OP_EX2, T_F32, MOD_APPROX, minus_inf) == 0
    assert run(OP_EX2, T_F32, MOD_APPROX, inf) == inf
    assert run(OP_LG2, T_F32, MOD_APPROX, 0) == minus_inf
    assert run(OP_LG2, T_F32, MOD_APPROX, f32_bits(-1.0)) == 0x7FFFFFFF
    assert run(OP_RSQRT, T_F32, MOD_APPROX, 0x80000000) == minus_inf
    assert run(OP_RSQRT, T_F32, MOD_APPROX, 0) == inf
    assert run(OP_RCP, T_F32, MOD_APPROX, 0x80000000) == minus_inf
    assert run(OP_SIN, T_F32, MOD_APPROX, inf) == 0x7FFFFFFF
    assert run(OP_SIN, T_F32, MOD_APPROX, 0x80000000) == 0x80000000
    assert run(OP_TANH, T_F32, MOD_APPROX, minus_inf) == f32_bits(-1.0)


def test_half_precision_arithmetic_and_packed():
    a, b = float_to_bits(1.5, T_F16), float_to_bits(2.25, T_F16)
    assert run(OP_ADD, T_F16, RND_RN, a, b) == float_to_bits(float(np.float16(1.5) + np.float16(2.25)), T_F16)
    assert run(OP_MUL, T_BF16, RND_RN, 0x3FC0, 0x4010) == float_to_bits(3.375, T_BF16)
    packed_a = (a << 16) | b
    packed_b = (b << 16) | a
    want_low = float_to_bits(float(np.float16(2.25) * np.float16(1.5)), T_F16)
    assert run(OP_MUL, T_F16X2, RND_RN, packed_a, packed_b) == (want_low << 16) | want_low


@pytest.mark.parametrize("mode", [RND_RN, RND_RZ, RND_RM, RND_RP])
def test_rcp_f64_directed(mode):
    three = float_to_bits(3.0, T_F64)
    assert run(OP_RCP, T_F64, mode, three) == round_fraction(Fraction(1, 3), mode, T_F64)
    assert not is_nan(run(OP_RCP, T_F64, mode, three), T_F64)
    assert exact(run(OP_RCP, T_F64, mode, three), T_F64) != 0
