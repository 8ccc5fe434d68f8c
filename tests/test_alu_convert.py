"""cvt semantics of alu_eval: every integer/float pair in every rounding mode, against exact references."""

from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpusim.arch.codes import (
    MOD_FTZ,
    MOD_RELU,
    MOD_SAT,
    OP_CVT,
    RND_RM,
    RND_RMI,
    RND_RN,
    RND_RNI,
    RND_RP,
    RND_RPI,
    RND_RZ,
    RND_RZI,
    T_BF16,
    T_F16,
    T_F16X2,
    T_F32,
    T_F64,
    T_S8,
    T_S16,
    T_S32,
    T_S64,
    T_U8,
    T_U16,
    T_U32,
    T_U64,
)
from gpusim.engine.semantics.alu import alu_eval
from tests.test_alu_reference import (
    ALL_DIRECTED,
    CANONICAL_NAN,
    FORMATS,
    bits_to_float,
    f32_bits,
    float_to_bits,
    round_fraction,
)

SETTINGS = settings(
    max_examples=int(os.environ.get("GPUSIM_ALU_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
INTEGERS = {
    T_U8: (8, False),
    T_S8: (8, True),
    T_U16: (16, False),
    T_S16: (16, True),
    T_U32: (32, False),
    T_S32: (32, True),
    T_U64: (64, False),
    T_S64: (64, True),
}
FLOATS = [T_F16, T_BF16, T_F32, T_F64]


def cvt(destination, source, mods, a):
    return int(
        alu_eval(OP_CVT, destination, source, mods, np.uint64(a), np.uint64(0), np.uint64(0), np.uint64(0))
    )


def integer_value(bits, ty):
    width, signed = INTEGERS[ty]
    bits &= (1 << width) - 1
    return bits - (1 << width) if signed and bits >> (width - 1) else bits


def register_bits(value: int, ty) -> int:
    """The register contents for an integer result of type ``ty`` (PTX: sign-extended to the register's
    width for signed types; registers narrower than 64 bits are 32 bits wide here)."""
    width, signed = INTEGERS[ty]
    if signed and width < 32:
        value = integer_value(value % (1 << width), ty)   # the result's signed value
        return value % (1 << 32)
    return value % (1 << width)


def integer_range(ty):
    width, signed = INTEGERS[ty]
    return (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)


@pytest.mark.parametrize("source", list(INTEGERS))
@pytest.mark.parametrize("destination", list(INTEGERS))
@SETTINGS
@given(
    a=st.one_of(st.integers(0, 2**64 - 1), st.integers(0, 300), st.sampled_from([2**7, 2**15, 2**31, 2**63]))
)
def test_integer_to_integer(destination, source, a):
    value = integer_value(a, source)
    assert cvt(destination, source, 0, a) == register_bits(value, destination)
    low, high = integer_range(destination)
    assert cvt(destination, source, MOD_SAT, a) == register_bits(min(max(value, low), high), destination)


def float_operand(fmt):
    precision, max_exponent, width = FORMATS[fmt]
    near_integers = st.builds(
        lambda v, s: (
            float_to_bits(float(np.float16(v) if fmt == T_F16 else v) * s, fmt)
            if fmt != T_BF16
            else float_to_bits(float(np.float32(v)), T_F32) >> 16
        ),
        st.sampled_from([0.5, 1.5, 2.5, 0.49, 3.75, 1e-3, 65504.0]),
        st.sampled_from([1, -1]),
    )
    return st.one_of(st.integers(0, (1 << width) - 1), near_integers)


def reference_integral(value: Fraction, mode):
    floor = value.numerator // value.denominator
    if mode == RND_RMI:
        return floor
    if mode == RND_RPI:
        return -((-value.numerator) // value.denominator)
    if mode == RND_RNI:
        remainder = value - floor
        if remainder > Fraction(1, 2) or (remainder == Fraction(1, 2) and floor % 2 == 1):
            return floor + 1
        return floor
    return int(value)


@pytest.mark.parametrize("source", FLOATS)
@pytest.mark.parametrize("destination", [T_S32, T_U32, T_S64, T_U64, T_S16, T_U8])
@SETTINGS
@given(data=st.data())
def test_float_to_integer(destination, source, data):
    a = data.draw(float_operand(source))
    mode = data.draw(st.sampled_from([RND_RNI, RND_RZI, RND_RMI, RND_RPI]))
    value = bits_to_float(a, source)
    width, _ = INTEGERS[destination]
    low, high = integer_range(destination)
    if math.isnan(value):
        want = 0
    elif math.isinf(value):
        want = high if value > 0 else low
    else:
        want = min(max(reference_integral(Fraction(value), mode), low), high)
    assert cvt(destination, source, mode, a) == register_bits(want, destination)


@pytest.mark.parametrize("source", list(INTEGERS))
@pytest.mark.parametrize("destination", FLOATS)
@SETTINGS
@given(
    a=st.one_of(st.integers(0, 2**64 - 1), st.integers(0, 2**25), st.integers(2**64 - 2**25, 2**64 - 1)),
    mode=st.sampled_from(ALL_DIRECTED),
)
def test_integer_to_float(destination, source, a, mode):
    value = integer_value(a, source)
    assert cvt(destination, source, mode, a) == round_fraction(Fraction(value), mode, destination)


@pytest.mark.parametrize(
    "source, destination", [(T_F64, T_F32), (T_F64, T_F16), (T_F32, T_F16), (T_F32, T_BF16), (T_F64, T_BF16)]
)
@SETTINGS
@given(data=st.data())
def test_float_narrowing(source, destination, data):
    a = data.draw(float_operand(source))
    mode = data.draw(st.sampled_from(ALL_DIRECTED))
    value = bits_to_float(a, source)
    if math.isnan(value):
        want = CANONICAL_NAN[destination]
    elif math.isinf(value):
        want = float_to_bits(value, destination)
    else:
        want = round_fraction(Fraction(value), mode, destination, negative_zero=math.copysign(1, value) < 0)
    assert cvt(destination, source, mode, a) == want


@pytest.mark.parametrize(
    "source, destination", [(T_F16, T_F32), (T_F16, T_F64), (T_BF16, T_F32), (T_F32, T_F64)]
)
@SETTINGS
@given(data=st.data())
def test_float_widening_is_exact(source, destination, data):
    a = data.draw(float_operand(source))
    value = bits_to_float(a, source)
    want = CANONICAL_NAN[destination] if math.isnan(value) else float_to_bits(value, destination)
    assert cvt(destination, source, 0, a) == want


def test_f32_to_f16_matches_numpy_round_to_nearest():
    rng = np.random.default_rng(7)
    values = rng.standard_normal(2000).astype(np.float32) * np.float32(3000.0)
    for value in values:
        want = int(np.float16(value).view(np.uint16))
        assert cvt(T_F16, T_F32, RND_RN, int(value.view(np.uint32))) == want


@pytest.mark.parametrize("ty", [T_F32, T_F64])
@pytest.mark.parametrize("mode", [RND_RNI, RND_RZI, RND_RMI, RND_RPI])
def test_round_to_integral_in_float(ty, mode):
    for value in [0.5, 1.5, 2.5, -0.5, -1.5, -2.7, 3.2, -0.2, 1e20, 0.0, -0.0, 123456.5]:
        bits = float_to_bits(value, ty)
        integral = reference_integral(Fraction(value), mode)
        want = float_to_bits(math.copysign(float(integral), value), ty)
        assert cvt(ty, ty, mode, bits) == want


def test_convert_special_cases():
    assert cvt(T_S32, T_F32, RND_RZI, f32_bits(3e9)) == 0x7FFFFFFF
    assert cvt(T_S32, T_F32, RND_RZI, f32_bits(-3e9)) == 0x80000000
    assert cvt(T_U32, T_F32, RND_RZI, f32_bits(-1.0)) == 0
    assert cvt(T_S32, T_F32, RND_RZI, 0x7FC00000) == 0
    assert cvt(T_U64, T_F64, RND_RNI, float_to_bits(2.0**64, T_F64)) == 2**64 - 1
    # .ftz on an f32 source: a subnormal counts as zero, so rpi gives 0 instead of 1
    assert cvt(T_S32, T_F32, RND_RPI, 1) == 1
    assert cvt(T_S32, T_F32, RND_RPI | MOD_FTZ, 1) == 0
    assert cvt(T_F32, T_F32, MOD_FTZ, 0x80000001) == 0x80000000
    assert cvt(T_F32, T_F32, MOD_SAT, f32_bits(1.5)) == f32_bits(1.0)
    assert cvt(T_F32, T_F32, MOD_SAT, f32_bits(-1.5)) == 0
    assert cvt(T_F16, T_F32, RND_RN | MOD_RELU, f32_bits(-2.0)) == 0
    assert cvt(T_F32, T_F64, RND_RN, float_to_bits(1e300, T_F64)) == 0x7F800000
    assert cvt(T_F32, T_F64, RND_RZ, float_to_bits(1e300, T_F64)) == 0x7F7FFFFF
    assert cvt(T_F32, T_F64, RND_RP, float_to_bits(-1e300, T_F64)) == 0xFF7FFFFF
    assert cvt(T_F32, T_F64, RND_RM, float_to_bits(1e-300, T_F64)) == 0
    assert cvt(T_F32, T_F64, RND_RP, float_to_bits(1e-300, T_F64)) == 1
    assert cvt(T_F32, T_S32, RND_RZ, 16777217) == f32_bits(16777216.0)
    assert cvt(T_F32, T_S32, RND_RP, 16777217) == f32_bits(16777218.0)


def test_pack_two_f32_into_f16x2():
    a, b = f32_bits(1.5), f32_bits(-2.0)
    got = int(
        alu_eval(OP_CVT, T_F16X2, T_F32, RND_RN, np.uint64(a), np.uint64(b), np.uint64(0), np.uint64(0))
    )
    assert got == (float_to_bits(1.5, T_F16) << 16) | float_to_bits(-2.0, T_F16)
