"""Per-lane semantics of PTX ``cvt`` (PTX ISA 8.x, section "cvt"): every integer and float pair.

* int -> int: the source is sign- or zero-extended by its own type, then
  truncated to the destination width; ``.sat`` clamps to the destination range.
* int -> float: ``.rn`` (default) ``.rz .rm .rp``, one correct rounding.
* float -> int: ``.rni`` ``.rzi`` (the default when none is given) ``.rmi``
  ``.rpi``; NaN gives 0 and out-of-range values saturate to the destination
  range (PTX: float-to-integer conversions always saturate).
* float -> float: widening is exact; narrowing rounds with ``.rn .rz .rm .rp``
  (``.rna`` too); same-size with ``.rni .rzi .rmi .rpi`` rounds to an integral
  value in the same format (keeping the sign of zero).
* ``.ftz`` flushes subnormal f32 sources and f32 (and 16-bit) results; ``.sat``
  clamps float results to [0, 1]; ``.relu`` clamps negative float results to +0.

Results narrower than 64 bits are zero-extended; sign-extension into a wider
register is the caller's business. Simplified: none besides canonical NaNs
(any NaN result is the destination format's canonical NaN).
"""

from __future__ import annotations

import numpy as np

from gpusim.arch.codes import (
    MOD_FTZ,
    MOD_RND_MASK,
    MOD_SAT,
    RND_DEFAULT,
    RND_RMI,
    RND_RN,
    RND_RNI,
    RND_RPI,
    RND_RZI,
    T_BF16,
    T_F16,
    T_F32,
    T_F64,
)
from gpusim.engine.bits import bits_from_f32, bits_from_f64
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics.alu_float import finish, load_float
from gpusim.engine.semantics.alu_int import (
    from_signed,
    signed_limits,
    to_signed,
    type_is_signed,
    type_width,
    width_mask,
)
from gpusim.engine.semantics.alu_round import f64_bits_round_to, round_pack

U64_ZERO = np.uint64(0)
U64_ONE = np.uint64(1)


@compiled_only
def is_float_type(ty):
    return ty == T_F32 or ty == T_F64 or ty == T_F16 or ty == T_BF16


@compiled_only(error_model="numpy")
def round_to_integral(value, mode):
    """Round a float64 to an integral float64 (.rni ties to even, .rzi, .rmi, .rpi); keeps -0."""
    if not np.isfinite(value) or value == 0.0:
        return value
    if mode == RND_RMI:
        result = np.floor(value)
    elif mode == RND_RPI:
        result = np.ceil(value)
    elif mode == RND_RNI:
        below = np.floor(value)
        fraction = value - below
        if fraction > 0.5 or (fraction == 0.5 and np.fmod(below, 2.0) != 0.0):
            result = below + 1.0
        else:
            result = below
    else:
        result = np.trunc(value)
    return np.copysign(result, value)


@compiled_only
def integer_to_integer(a, destination, source, saturate):
    destination_width = type_width(destination)
    source_width = type_width(source)
    if not saturate:
        if type_is_signed(source):
            return from_signed(to_signed(a, source_width), destination_width)
        return a & width_mask(source_width) & width_mask(destination_width)
    if type_is_signed(source):
        value = to_signed(a, source_width)
        if type_is_signed(destination):
            low, high = signed_limits(destination_width)
            return from_signed(min(max(value, low), high), destination_width)
        if value < 0:
            return U64_ZERO
        return min(np.uint64(value), width_mask(destination_width))
    value = a & width_mask(source_width)
    if type_is_signed(destination):
        low, high = signed_limits(destination_width)
        return min(value, np.uint64(high))
    return min(value, width_mask(destination_width))


@compiled_only(error_model="numpy")
def float_to_integer(value, destination, mode):
    """Round a float64 to an integer and saturate to the destination type (NaN -> 0)."""
    if value != value:
        return U64_ZERO
    if mode == RND_DEFAULT:
        mode = RND_RZI
    integral = round_to_integral(value, mode)
    width = type_width(destination)
    limit = 2.0 ** np.float64(width - 1)
    if type_is_signed(destination):
        low, high = signed_limits(width)
        if integral >= limit:
            return from_signed(high, width)
        if integral < -limit:
            return from_signed(low, width)
        return from_signed(np.int64(integral), width)
    if integral <= 0.0:
        return U64_ZERO
    if integral >= 2.0 * limit:
        return width_mask(width)
    return np.uint64(integral)


@compiled_only
def integer_to_float(a, destination, source, mode):
    width = type_width(source)
    if type_is_signed(source):
        value = to_signed(a, width)
        negative = value < 0
        magnitude = U64_ZERO - np.uint64(value) if negative else np.uint64(value)
    else:
        negative = False
        magnitude = a & width_mask(width)
    if mode == RND_DEFAULT:
        mode = RND_RN
    if mode == RND_RN and destination == T_F32 and width <= 32:
        return bits_from_f32(np.float32(-np.float64(magnitude) if negative else np.float64(magnitude)))
    if mode == RND_RN and destination == T_F64 and width <= 32:
        return bits_from_f64(-np.float64(magnitude) if negative else np.float64(magnitude))
    return round_pack(negative, np.int64(0), magnitude, False, mode, destination)


@compiled_only
def float_to_float(a, destination, source, mods):
    mode = mods & MOD_RND_MASK
    value = load_float(a, source, (mods & MOD_FTZ) != 0 and source == T_F32)
    if mode >= RND_RNI and mode <= RND_RPI:
        value = round_to_integral(value, mode)
        mode = RND_RN
    if mode == RND_DEFAULT:
        mode = RND_RN
    if destination == T_F64:
        return bits_from_f64(value)
    if destination == T_F32 and mode == RND_RN:
        return bits_from_f32(np.float32(value))
    return f64_bits_round_to(bits_from_f64(value), mode, destination)


@compiled_only
def convert(destination, source, mods, a):
    """One lane of cvt.<mods>.<destination>.<source> on raw bits ``a``."""
    mode = mods & MOD_RND_MASK
    result_mods = mods if destination == T_F32 else mods & ~MOD_FTZ  # .ftz concerns f32 only
    if is_float_type(source):
        if is_float_type(destination):
            return finish(float_to_float(a, destination, source, mods), destination, result_mods)
        value = load_float(a, source, (mods & MOD_FTZ) != 0 and source == T_F32)
        return widen_signed(float_to_integer(value, destination, mode), destination)
    if is_float_type(destination):
        return finish(integer_to_float(a, destination, source, mode), destination, result_mods)
    return widen_signed(integer_to_integer(a, destination, source, (mods & MOD_SAT) != 0), destination)


@compiled_only
def widen_signed(result, destination):
    """A signed 8- or 16-bit result as its register holds it: PTX sign-extends a cvt result to the
    destination register's width for signed integer types; registers narrower than 64 bits hold 32-bit
    values here, so the result is sign-extended to 32 bits (as a narrow signed load is)."""
    width = type_width(destination)
    if not type_is_signed(destination) or width >= 32:
        return result
    if result & (U64_ONE << np.uint64(width - 1)):
        result |= np.uint64(0xFFFFFFFF) ^ width_mask(width)
    return result & np.uint64(0xFFFFFFFF)
