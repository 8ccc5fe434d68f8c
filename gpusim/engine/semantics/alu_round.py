"""IEEE-754 rounding core: pack an exact (or sticky) value into f16, bf16, f32 or f64 bits.

Every correctly rounded float result the ALU produces outside the hardware
round-to-nearest fast paths goes through ``round_pack``: the operation delivers
its exact result as ``significand * 2**exponent`` plus a *sticky* flag that says
the true magnitude is a little larger (strictly between ``significand`` and
``significand + 1`` units). ``round_pack`` then rounds to the format's precision
with one of the IEEE rounding directions, producing subnormals, overflow to
infinity or to the largest finite value exactly as IEEE 754 prescribes for that
direction (PTX ISA, "Floating Point Instructions": rounding modifiers
``.rn .rz .rm .rp`` are IEEE 754 round to nearest even, toward zero, toward -inf,
toward +inf).

Formats are named by their type code (``T_F16``, ``T_BF16``, ``T_F32``,
``T_F64``). Simplifications: none for finite values. NaN results are the
canonical NaN of each format (``canonical_nan``); see docs/semantics.md.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch.codes import RND_RM, RND_RNA, RND_RP, RND_RZ, T_BF16, T_F16, T_F32, T_F64
from gpusim.engine.bits import bits_from_f64, f64_from_bits, leading_zeros64
from gpusim.engine.jit import compiled_only

U64_ONE = np.uint64(1)
U64_ZERO = np.uint64(0)


@compiled_only
def format_precision(fmt):
    """Significand bits including the hidden bit."""
    if fmt == T_F32:
        return 24
    if fmt == T_F16:
        return 11
    if fmt == T_BF16:
        return 8
    return 53


@compiled_only
def format_max_exponent(fmt):
    """Largest unbiased exponent of a finite value (also the exponent bias)."""
    if fmt == T_F16:
        return 15
    if fmt == T_F32 or fmt == T_BF16:
        return 127
    return 1023


@compiled_only
def format_width(fmt):
    if fmt == T_F32:
        return 32
    if fmt == T_F16 or fmt == T_BF16:
        return 16
    return 64


@compiled_only
def sign_bit(fmt):
    return U64_ONE << np.uint64(format_width(fmt) - 1)


@compiled_only
def infinity_bits(fmt):
    """Bits of +inf: all exponent bits set, zero fraction."""
    exponent_bits = format_width(fmt) - format_precision(fmt)
    return ((U64_ONE << np.uint64(exponent_bits)) - U64_ONE) << np.uint64(format_precision(fmt) - 1)


@compiled_only
def canonical_nan(fmt):
    """The NaN an NVIDIA GPU writes for a NaN result: all bits but the sign set."""
    return sign_bit(fmt) - U64_ONE


@compiled_only
def is_nan_bits(bits, fmt):
    magnitude = bits & (sign_bit(fmt) - U64_ONE)
    return magnitude > infinity_bits(fmt)


@compiled_only
def is_inf_bits(bits, fmt):
    return (bits & (sign_bit(fmt) - U64_ONE)) == infinity_bits(fmt)


@compiled_only
def is_subnormal_bits(bits, fmt):
    magnitude = bits & (sign_bit(fmt) - U64_ONE)
    return magnitude != U64_ZERO and magnitude < (U64_ONE << np.uint64(format_precision(fmt) - 1))


@compiled_only
def flush_subnormal(bits, fmt):
    """Sign-preserving flush to zero of a subnormal value (the .ftz rule)."""
    if is_subnormal_bits(bits, fmt):
        return bits & sign_bit(fmt)
    return bits


@compiled_only
def unpack_finite(bits, fmt):
    """Finite ``bits`` as (negative, exponent, significand) with value = significand * 2**exponent."""
    precision = format_precision(fmt)
    bias = format_max_exponent(fmt)
    fraction_mask = (U64_ONE << np.uint64(precision - 1)) - U64_ONE
    negative = (bits & sign_bit(fmt)) != U64_ZERO
    exponent_field = np.int64((bits & (sign_bit(fmt) - U64_ONE)) >> np.uint64(precision - 1))
    fraction = bits & fraction_mask
    if exponent_field == 0:
        return negative, np.int64(1 - bias - (precision - 1)), fraction
    return negative, np.int64(exponent_field - bias - (precision - 1)), fraction | (fraction_mask + U64_ONE)


@compiled_only
def overflow_bits(negative, mode, fmt):
    """Result of a finite value too large for the format, per rounding direction."""
    infinity = infinity_bits(fmt)
    largest = infinity - U64_ONE
    sign = sign_bit(fmt) if negative else U64_ZERO
    if mode == RND_RZ:
        return sign | largest
    if mode == RND_RP:
        return sign | (largest if negative else infinity)
    if mode == RND_RM:
        return sign | (infinity if negative else largest)
    return sign | infinity


@compiled_only
def round_pack(negative, exponent, significand, sticky, mode, fmt):
    """Round ``(significand + sticky*fraction) * 2**exponent`` into ``fmt`` bits with ``mode``.

    ``sticky`` (bool) says the exact magnitude lies strictly above ``significand``
    (by less than one unit); callers that set it give at least precision+2
    significant bits. ``mode`` is RND_RN (or RND_DEFAULT), RND_RZ, RND_RM, RND_RP or RND_RNA.
    """
    sign = sign_bit(fmt) if negative else U64_ZERO
    if significand == U64_ZERO:
        return sign
    precision = format_precision(fmt)
    max_exponent = format_max_exponent(fmt)
    min_exponent = 1 - max_exponent
    leading = np.int64(leading_zeros64(significand))
    significand = significand << np.uint64(leading)
    exponent = np.int64(exponent) - leading
    top_exponent = exponent + 63  # unbiased exponent of the leading bit
    shift = 64 - precision
    if top_exponent < min_exponent:
        shift += min_exponent - top_exponent
    if shift > 64:
        kept = U64_ZERO
        guard = False
        rest = True
    else:
        kept = significand >> np.uint64(shift) if shift < 64 else U64_ZERO
        guard = ((significand >> np.uint64(shift - 1)) & U64_ONE) != U64_ZERO
        rest_mask = (U64_ONE << np.uint64(shift - 1)) - U64_ONE
        rest = (significand & rest_mask) != U64_ZERO or sticky
    inexact = guard or rest
    if mode == RND_RZ:
        increment = False
    elif mode == RND_RP:
        increment = inexact and not negative
    elif mode == RND_RM:
        increment = inexact and negative
    elif mode == RND_RNA:
        increment = guard
    else:
        increment = guard and (rest or (kept & U64_ONE) != U64_ZERO)
    if increment:
        kept += U64_ONE
    if top_exponent < min_exponent:
        # subnormal; a carry into bit precision-1 encodes the smallest normal by itself
        return sign | kept
    if kept == (U64_ONE << np.uint64(precision)):
        kept = kept >> U64_ONE
        top_exponent += 1
    if top_exponent > max_exponent:
        return overflow_bits(negative, mode, fmt)
    fraction = kept & ((U64_ONE << np.uint64(precision - 1)) - U64_ONE)
    biased = np.uint64(top_exponent + max_exponent)
    return sign | (biased << np.uint64(precision - 1)) | fraction


@compiled_only
def round_f64_with_direction(value, direction, mode, fmt):
    """Round the exact value ``value + tiny`` into ``fmt`` bits.

    ``value`` is a float64 within half an f64 ulp of the exact result and
    ``direction`` (-1, 0, +1) is the sign of ``exact - value``. Valid when the
    target precision is at most 51 bits (f32, f16, bf16), which keeps the
    tiny remainder below the rounding position (round-to-odd argument).
    """
    bits = bits_from_f64(value)
    if is_nan_bits(bits, T_F64):
        return canonical_nan(fmt)
    negative = value < 0.0 or (value == 0.0 and (bits >> np.uint64(63)) != U64_ZERO)
    if is_inf_bits(bits, T_F64):
        return (sign_bit(fmt) if negative else U64_ZERO) | infinity_bits(fmt)
    if value == 0.0:
        return sign_bit(fmt) if negative else U64_ZERO
    negative, exponent, significand = unpack_finite(bits, T_F64)
    if direction == 0:
        return round_pack(negative, exponent, significand, False, mode, fmt)
    same_way = (direction > 0) != negative  # the exact magnitude is larger than |value|
    if same_way:
        return round_pack(negative, exponent - 2, significand << np.uint64(2), True, mode, fmt)
    return round_pack(negative, exponent - 2, (significand << np.uint64(2)) - U64_ONE, True, mode, fmt)


@compiled_only
def next_toward(bits, upward, fmt):
    """The neighbouring representable value of finite or infinite ``bits`` (up: toward +inf)."""
    sign = sign_bit(fmt)
    magnitude = bits & (sign - U64_ONE)
    negative = (bits & sign) != U64_ZERO
    if magnitude == U64_ZERO:
        return U64_ONE if upward else (sign | U64_ONE)
    if upward != negative:
        return bits + U64_ONE if magnitude != infinity_bits(fmt) else bits
    return bits - U64_ONE


@compiled_only
def adjust_directed(result_bits, direction, mode, fmt):
    """Turn a round-to-nearest result into the directed one, given sign(exact - result)."""
    if direction == 0 or is_nan_bits(result_bits, fmt):
        return result_bits
    value_negative = (result_bits & sign_bit(fmt)) != U64_ZERO
    magnitude_zero = (result_bits & (sign_bit(fmt) - U64_ONE)) == U64_ZERO
    if mode == RND_RP:
        return next_toward(result_bits, True, fmt) if direction > 0 else result_bits
    if mode == RND_RM:
        return next_toward(result_bits, False, fmt) if direction < 0 else result_bits
    if mode == RND_RZ:
        if magnitude_zero:
            return result_bits
        if direction < 0 and not value_negative:
            return next_toward(result_bits, False, fmt)
        if direction > 0 and value_negative:
            return next_toward(result_bits, True, fmt)
    return result_bits


@compiled_only
def f64_bits_round_to(bits, mode, fmt):
    """Convert float64 ``bits`` to ``fmt`` (narrowing or same) with rounding ``mode``."""
    if is_nan_bits(bits, T_F64):
        return canonical_nan(fmt)
    negative = (bits >> np.uint64(63)) != U64_ZERO
    if is_inf_bits(bits, T_F64):
        return (sign_bit(fmt) if negative else U64_ZERO) | infinity_bits(fmt)
    negative, exponent, significand = unpack_finite(bits, T_F64)
    return round_pack(negative, exponent, significand, False, mode, fmt)


@compiled_only
def format_bits_to_f64(bits, fmt):
    """Exact widening of f16/bf16/f32 ``bits`` to a float64 (NaN becomes a quiet NaN)."""
    if is_nan_bits(bits, fmt):
        return np.nan
    negative = (bits & sign_bit(fmt)) != U64_ZERO
    if is_inf_bits(bits, fmt):
        return -np.inf if negative else np.inf
    negative, exponent, significand = unpack_finite(bits, fmt)
    magnitude = np.float64(significand) * (2.0 ** np.float64(exponent))
    return -magnitude if negative else magnitude


@compiled_only
def f64_value(bits):
    return f64_from_bits(bits)
