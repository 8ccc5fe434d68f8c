"""The tensor-core number formats (issue 14): TF32 and the OCP FP8 formats E4M3 and E5M2, one lane at a time.

* ``cvt.rna.tf32.f32`` (and ``.rn``/``.rz`` with ``.satfinite``): an f32 rounded to 10 mantissa bits
  (ties away from zero for ``.rna``, to even for ``.rn``), held in a 32-bit register with the low 13 bits
  zero. An f32 read as tf32 (mma, wmma) ignores its low 13 bits.
* FP8 (OCP "8-bit Floating Point Specification" 1.0): E4M3 has bias 7, 3 mantissa bits, no infinity,
  NaN = S.1111.111, largest finite 448; E5M2 has bias 15, 2 mantissa bits, infinities and NaNs as IEEE.
  ``cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b`` rounds to nearest even, saturates any overflow and
  infinity to the largest finite value (PTX requires ``.satfinite`` on these), keeps NaN as NaN, and
  puts ``a`` in the upper byte and ``b`` in the lower; ``.f16x2`` sources convert both halves (upper to
  upper). ``cvt.rn.{f16x2}.{e4m3x2,e5m2x2}`` widens exactly (every FP8 value is an f16), upper to upper.
  ``.relu`` clamps negative results to +0.

Simplified: NaN results are the canonical NaN of the format (0x7F for both FP8 formats; 0x7FFF for f16).
"""

from __future__ import annotations

import math

import numpy as np

from gpusim.arch.codes import (
    MOD_RELU,
    MOD_RND_MASK,
    RND_RN,
    RND_RNA,
    RND_RZ,
    T_BF16,
    T_E4M3,
    T_E4M3X2,
    T_E5M2,
    T_E5M2X2,
    T_F16,
    T_F16X2,
    T_F32,
    T_TF32,
)
from gpusim.engine.bits import f32_from_bits
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics.alu_float import narrow
from gpusim.engine.semantics.alu_round import format_bits_to_f64

U64_ZERO = np.uint64(0)
LOW8 = np.uint64(0xFF)
LOW16 = np.uint64(0xFFFF)
LOW32 = np.uint64(0xFFFFFFFF)


@compiled_only(error_model="numpy")
def fp8_value(bits, is_e4m3):
    """Exact value of an FP8 byte (NaN for the NaN encodings)."""
    bits = bits & LOW8
    negative = (bits >> np.uint64(7)) != U64_ZERO
    if is_e4m3:
        exponent = np.int64((bits >> np.uint64(3)) & np.uint64(0xF))
        mantissa = np.int64(bits & np.uint64(0x7))
        if exponent == 15 and mantissa == 7:
            return np.nan
        if exponent == 0:
            value = np.float64(mantissa) * 2.0 ** -9
        else:
            value = (1.0 + np.float64(mantissa) / 8.0) * 2.0 ** np.float64(exponent - 7)
    else:
        exponent = np.int64((bits >> np.uint64(2)) & np.uint64(0x1F))
        mantissa = np.int64(bits & np.uint64(0x3))
        if exponent == 31:
            return np.nan if mantissa != 0 else (-np.inf if negative else np.inf)
        if exponent == 0:
            value = np.float64(mantissa) * 2.0 ** -16
        else:
            value = (1.0 + np.float64(mantissa) / 4.0) * 2.0 ** np.float64(exponent - 15)
    return -value if negative else value


@compiled_only(error_model="numpy")
def fp8_bits(value, is_e4m3, relu):
    """FP8 byte of a float64: round to nearest even, satfinite (overflow and infinity -> largest finite)."""
    if value != value:
        return np.uint64(0x7F)
    if relu and value < 0.0:
        value = 0.0
    negative = value < 0.0 or (value == 0.0 and np.copysign(1.0, value) < 0.0)
    magnitude = abs(value)
    mbits = 3 if is_e4m3 else 2
    emin = -6 if is_e4m3 else -14
    largest = 448.0 if is_e4m3 else 57344.0
    sign = np.uint64(0x80) if negative else U64_ZERO
    if magnitude == 0.0:
        return sign
    if magnitude >= largest:
        code = np.uint64(0x7E) if is_e4m3 else np.uint64(0x7B)
        return sign | code
    _, e2 = math.frexp(magnitude)
    exponent = max(np.int64(e2) - 1, emin)
    quantum = 2.0 ** np.float64(exponent - mbits)
    rounded = np.rint(magnitude / quantum) * quantum      # rint: ties to even
    if rounded >= largest:
        rounded = largest
    if rounded < 2.0 ** emin:                              # subnormal (or rounded up to the smallest normal)
        return sign | np.uint64(np.int64(rounded / 2.0 ** np.float64(emin - mbits)))
    _, e3 = math.frexp(rounded)
    biased = np.int64(e3) - 1 + (7 if is_e4m3 else 15)
    fraction = np.int64((rounded / 2.0 ** np.float64(np.int64(e3) - 1) - 1.0) * (1 << mbits))
    return sign | np.uint64((biased << mbits) | fraction)


@compiled_only(error_model="numpy")
def tf32_bits(bits, mode):
    """An f32's bits rounded to tf32 (10 mantissa bits): .rna ties away, .rn ties to even, .rz truncates."""
    bits = bits & LOW32
    if (bits & np.uint64(0x7F800000)) == np.uint64(0x7F800000):   # inf or NaN
        if (bits & np.uint64(0x007FFFFF)) != U64_ZERO:
            return np.uint64(0x7FFFFFFF)
        return bits
    low = bits & np.uint64(0x1FFF)
    kept = bits & np.uint64(0xFFFFE000)
    if mode == RND_RZ:
        return kept
    if mode == RND_RNA:
        return ((bits + np.uint64(0x1000)) & np.uint64(0xFFFFE000)) & LOW32
    # round to nearest even
    half = np.uint64(0x1000)
    if low > half or (low == half and (kept & np.uint64(0x2000)) != U64_ZERO):
        kept = (kept + np.uint64(0x2000)) & LOW32
    return kept


@compiled_only(error_model="numpy")
def _to_half(value, half):
    return narrow(value, 0, RND_RN, half) & LOW16


@compiled_only(error_model="numpy")
def convert_tensor_type(destination, source, mods, a, b):
    """cvt between the tensor types and f32/f16x2/bf16x2 (module docstring); ``b`` is the second f32 source
    of a packing conversion."""
    relu = (mods & MOD_RELU) != 0
    mode = mods & MOD_RND_MASK
    if destination == T_TF32 or (destination == T_F32 and source == T_TF32):
        return tf32_bits(a, RND_RNA if mode == 0 else mode)
    if destination == T_E4M3X2 or destination == T_E5M2X2:
        is_e4m3 = destination == T_E4M3X2
        if source == T_F32:
            high = fp8_bits(np.float64(f32_from_bits(a & LOW32)), is_e4m3, relu)
            low = fp8_bits(np.float64(f32_from_bits(b & LOW32)), is_e4m3, relu)
        else:
            half = T_F16 if source == T_F16X2 else T_BF16
            high = fp8_bits(format_bits_to_f64((a >> np.uint64(16)) & LOW16, half), is_e4m3, relu)
            low = fp8_bits(format_bits_to_f64(a & LOW16, half), is_e4m3, relu)
        return (high << np.uint64(8)) | low
    if source == T_E4M3X2 or source == T_E5M2X2:
        is_e4m3 = source == T_E4M3X2
        half = T_F16 if destination == T_F16X2 else T_BF16
        high = _to_half(fp8_value(a >> np.uint64(8), is_e4m3), half)
        low = _to_half(fp8_value(a, is_e4m3), half)
        return (high << np.uint64(16)) | low
    return np.uint64(0)     # no other pair reaches here (the lowering accepts only the forms above)


@compiled_only
def is_tensor_type(ty):
    return ty == T_TF32 or ty == T_E4M3 or ty == T_E5M2 or ty == T_E4M3X2 or ty == T_E5M2X2
