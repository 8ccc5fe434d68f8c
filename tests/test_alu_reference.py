"""Pure-Python references for the ALU tests (exact arithmetic with fractions.Fraction).

Nothing here uses gpusim: every expected value in the ALU tests comes from these
functions, Python's struct/math, or numpy. The module holds no tests itself.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

from gpusim.arch.codes import RND_RM, RND_RN, RND_RNA, RND_RP, RND_RZ, T_BF16, T_F16, T_F32, T_F64

# (precision including hidden bit, max exponent, width in bits)
FORMATS = {T_F16: (11, 15, 16), T_BF16: (8, 127, 16), T_F32: (24, 127, 32), T_F64: (53, 1023, 64)}
CANONICAL_NAN = {T_F16: 0x7FFF, T_BF16: 0x7FFF, T_F32: 0x7FFFFFFF, T_F64: 0x7FFFFFFFFFFFFFFF}


def float_to_bits(value: float, fmt: int) -> int:
    """Bits of a Python float that is exactly representable in fmt."""
    if fmt == T_F64:
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    if fmt == T_F32:
        return struct.unpack("<I", struct.pack("<f", value))[0]
    if fmt == T_F16:
        return struct.unpack("<H", struct.pack("<e", value))[0]
    return struct.unpack("<I", struct.pack("<f", value))[0] >> 16


def bits_to_float(bits: int, fmt: int) -> float:
    if fmt == T_F64:
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if fmt == T_F32:
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    if fmt == T_F16:
        return struct.unpack("<e", struct.pack("<H", bits))[0]
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def f32_bits(value: float) -> int:
    return float_to_bits(value, T_F32)


def f32_value(bits: int) -> float:
    return bits_to_float(bits & 0xFFFFFFFF, T_F32)


def round_fraction(x: Fraction, mode: int, fmt: int, negative_zero: bool = False) -> int:
    """Correctly rounded bits of the exact rational x in fmt (IEEE 754 directions)."""
    precision, max_exponent, width = FORMATS[fmt]
    sign_bit = 1 << (width - 1)
    if x == 0:
        return sign_bit if negative_zero else 0
    negative = x < 0
    magnitude = -x if negative else x
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    exponent = max(exponent, 1 - max_exponent)
    quantum = Fraction(2) ** (exponent - precision + 1)
    scaled = magnitude / quantum
    whole = scaled.numerator // scaled.denominator
    remainder = scaled - whole
    if mode == RND_RZ:
        up = False
    elif mode == RND_RP:
        up = remainder != 0 and not negative
    elif mode == RND_RM:
        up = remainder != 0 and negative
    elif mode == RND_RNA:
        up = remainder >= Fraction(1, 2)
    else:
        up = remainder > Fraction(1, 2) or (remainder == Fraction(1, 2) and whole % 2 == 1)
    rounded = (whole + (1 if up else 0)) * quantum
    largest = (2 - Fraction(2) ** (1 - precision)) * Fraction(2) ** max_exponent
    infinity = ((1 << (width - precision)) - 1) << (precision - 1)
    if rounded > largest:
        to_largest = mode == RND_RZ or (mode == RND_RP and negative) or (mode == RND_RM and not negative)
        magnitude_bits = infinity - 1 if to_largest else infinity
        return (sign_bit if negative else 0) | magnitude_bits
    value = float(-rounded if negative else rounded)
    if value == 0.0:
        return sign_bit if negative else 0
    return float_to_bits(value, fmt)


def exact(bits: int, fmt: int) -> Fraction:
    return Fraction(bits_to_float(bits, fmt))


def is_nan(bits: int, fmt: int) -> bool:
    return math.isnan(bits_to_float(bits, fmt))


def is_finite(bits: int, fmt: int) -> bool:
    return math.isfinite(bits_to_float(bits, fmt))


def sqrt_fraction_sticky(x: Fraction) -> Fraction:
    """A rational that rounds like sqrt(x) in any format up to 53 bits (floor plus a half unit)."""
    scale_bits = 1400
    scaled = x * Fraction(2) ** (2 * scale_bits)
    integer = scaled.numerator // scaled.denominator
    root = math.isqrt(integer)
    if Fraction(root * root) == scaled:
        return Fraction(root, 2**scale_bits)
    return (Fraction(root) + Fraction(1, 2)) / Fraction(2) ** scale_bits


def sign_of_zero_sum(first_negative: bool, second_negative: bool, both_zero: bool, mode: int) -> bool:
    """IEEE 754 6.3: sign of an exact zero sum."""
    if both_zero and first_negative == second_negative:
        return first_negative
    return mode == RND_RM


ALL_DIRECTED = (RND_RN, RND_RZ, RND_RM, RND_RP)
