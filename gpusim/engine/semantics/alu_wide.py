"""Exact floating-point arithmetic on integer significands (128-bit as two uint64 halves).

Used where the host's round-to-nearest hardware cannot give the PTX result
directly: f64 add/sub/mul/fma/div with the directed roundings ``.rz .rm .rp``,
and the 64x64->128-bit integer products of ``mul.hi``/``mul.wide`` on 64-bit
types. A fused multiply-add is computed as the exact 106-bit product plus the
aligned addend in a 128-bit window, with every bit shifted out kept as a sticky
flag, then rounded once by ``round_pack``. Division is restoring long division
giving 63 quotient bits and a sticky remainder flag.

Inputs to ``exact_fma`` and ``exact_divide`` are finite and nonzero where noted;
the callers handle NaN, infinity and zero operands. Simplifications: none.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch.codes import RND_RM
from gpusim.engine.bits import leading_zeros64
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics.alu_round import round_pack, unpack_finite

U64_ONE = np.uint64(1)
U64_ZERO = np.uint64(0)
LOW32 = np.uint64(0xFFFFFFFF)
U64_32 = np.uint64(32)


@compiled_only
def multiply_64x64(a, b):
    """Full 128-bit product of two uint64 as (high, low)."""
    a_low = a & LOW32
    a_high = a >> U64_32
    b_low = b & LOW32
    b_high = b >> U64_32
    low_low = a_low * b_low
    low_high = a_low * b_high
    high_low = a_high * b_low
    high_high = a_high * b_high
    middle = (low_low >> U64_32) + (low_high & LOW32) + (high_low & LOW32)
    low = (low_low & LOW32) | (middle << U64_32)
    high = high_high + (low_high >> U64_32) + (high_low >> U64_32) + (middle >> U64_32)
    return high, low


@compiled_only
def leading_zeros128(high, low):
    if high != U64_ZERO:
        return np.int64(leading_zeros64(high))
    return np.int64(64 + leading_zeros64(low))


@compiled_only
def shift_left128(high, low, count):
    """(high, low) << count for 0 <= count < 128."""
    if count == 0:
        return high, low
    if count >= 64:
        return low << np.uint64(count - 64), U64_ZERO
    return (high << np.uint64(count)) | (low >> np.uint64(64 - count)), low << np.uint64(count)


@compiled_only
def shift_right128_sticky(high, low, count):
    """(high, low) >> count and whether any one bit was shifted out (any count >= 0)."""
    if count == 0:
        return high, low, False
    if count >= 128:
        return U64_ZERO, U64_ZERO, (high | low) != U64_ZERO
    if count >= 64:
        lost_mask = (U64_ONE << np.uint64(count - 64)) - U64_ONE if count > 64 else U64_ZERO
        sticky = low != U64_ZERO or (high & lost_mask) != U64_ZERO
        return U64_ZERO, high >> np.uint64(count - 64) if count > 64 else high, sticky
    sticky = (low & ((U64_ONE << np.uint64(count)) - U64_ONE)) != U64_ZERO
    new_low = (low >> np.uint64(count)) | (high << np.uint64(64 - count))
    return high >> np.uint64(count), new_low, sticky


@compiled_only
def add128(a_high, a_low, b_high, b_low):
    low = a_low + b_low
    carry = U64_ONE if low < a_low else U64_ZERO
    return a_high + b_high + carry, low


@compiled_only
def subtract128(a_high, a_low, b_high, b_low):
    low = a_low - b_low
    borrow = U64_ONE if a_low < b_low else U64_ZERO
    return a_high - b_high - borrow, low


@compiled_only
def less128(a_high, a_low, b_high, b_low):
    return a_high < b_high or (a_high == b_high and a_low < b_low)


@compiled_only
def round_pack128(negative, exponent, high, low, sticky, mode, fmt):
    """round_pack for a 128-bit significand: keep the top 64 bits, fold the rest into sticky."""
    leading = leading_zeros128(high, low)
    if leading >= 64:
        return round_pack(negative, exponent, low, sticky, mode, fmt)
    high, low = shift_left128(high, low, leading)
    return round_pack(negative, exponent - leading + 64, high, sticky or low != U64_ZERO, mode, fmt)


@compiled_only
def exact_fma(a_bits, b_bits, c_bits, negate_c, mode, fmt):
    """Correctly rounded a*b + c (c negated if ``negate_c``) for finite operands.

    a and b are nonzero; c may be zero (then the product alone is rounded).
    An exact zero sum gives +0, or -0 under round-down (IEEE 754 section 6.3).
    """
    product_negative, a_exponent, a_significand = unpack_finite(a_bits, fmt)
    b_negative, b_exponent, b_significand = unpack_finite(b_bits, fmt)
    product_negative = product_negative != b_negative
    product_high, product_low = multiply_64x64(a_significand, b_significand)
    product_exponent = a_exponent + b_exponent
    c_negative, c_exponent, c_significand = unpack_finite(c_bits, fmt)
    c_negative = c_negative != negate_c
    if c_significand == U64_ZERO:
        return round_pack128(product_negative, product_exponent, product_high, product_low, False, mode, fmt)
    # normalise both to leading bit 125, leaving two bits of headroom for the sum
    shift = leading_zeros128(product_high, product_low) - 2
    product_high, product_low = shift_left128(product_high, product_low, shift)
    product_exponent -= shift
    c_high = U64_ZERO
    c_low = c_significand
    shift = leading_zeros128(c_high, c_low) - 2
    c_high, c_low = shift_left128(c_high, c_low, shift)
    c_exponent -= shift
    product_larger = product_exponent > c_exponent or (
        product_exponent == c_exponent and not less128(product_high, product_low, c_high, c_low)
    )
    if product_larger:
        big_negative, big_exponent, big_high, big_low = (
            product_negative,
            product_exponent,
            product_high,
            product_low,
        )
        small_exponent, small_high, small_low = c_exponent, c_high, c_low
    else:
        big_negative, big_exponent, big_high, big_low = c_negative, c_exponent, c_high, c_low
        small_exponent, small_high, small_low = product_exponent, product_high, product_low
    small_high, small_low, sticky = shift_right128_sticky(
        small_high, small_low, big_exponent - small_exponent
    )
    if product_negative == c_negative:
        high, low = add128(big_high, big_low, small_high, small_low)
    else:
        high, low = subtract128(big_high, big_low, small_high, small_low)
        if sticky:
            # the true small operand was a little larger, so the difference is one unit less plus a fraction
            high, low = subtract128(high, low, U64_ZERO, U64_ONE)
        if high == U64_ZERO and low == U64_ZERO and not sticky:
            return round_pack(mode == RND_RM, np.int64(0), U64_ZERO, False, mode, fmt)
    return round_pack128(big_negative, big_exponent, high, low, sticky, mode, fmt)


@compiled_only
def exact_divide(a_bits, b_bits, mode, fmt):
    """Correctly rounded a / b for finite nonzero operands."""
    a_negative, a_exponent, a_significand = unpack_finite(a_bits, fmt)
    b_negative, b_exponent, b_significand = unpack_finite(b_bits, fmt)
    a_shift = np.int64(leading_zeros64(a_significand)) - 11
    b_shift = np.int64(leading_zeros64(b_significand)) - 11
    dividend = a_significand << np.uint64(a_shift)  # both now in [2**52, 2**53)
    divisor = b_significand << np.uint64(b_shift)
    quotient = U64_ZERO
    for _ in range(63):
        quotient = quotient << U64_ONE
        if dividend >= divisor:
            dividend -= divisor
            quotient |= U64_ONE
        dividend = dividend << U64_ONE
    exponent = (a_exponent - a_shift) - (b_exponent - b_shift) - 62
    return round_pack(a_negative != b_negative, exponent, quotient, dividend != U64_ZERO, mode, fmt)
