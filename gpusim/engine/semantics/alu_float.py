"""Per-lane floating-point arithmetic of PTX: add, sub, mul, fma/mad, div, rcp, sqrt and the approximations.

Formats: f32, f64, and the 16-bit f16/bf16 (scalar). Results are IEEE bit patterns.

How results are made exact:

* f32/f16/bf16 operands are exact in float64. The host computes the float64
  result rounded to nearest (exact for mul; for add and fma an error-free
  TwoSum, for div and sqrt a residual by fused multiply-add, gives the sign of
  the remainder). ``round_f64_with_direction`` then rounds that float64 plus the
  remainder's sign into the target format with the requested direction; because
  53 >= 24 + 2 this is a single correct rounding (the round-to-odd argument).
  For round-to-nearest add/mul/div/sqrt the plain float64 result is rounded
  directly: double rounding is innocuous when 53 >= 2*24 + 2 (Figueroa 1995).
* f64 round-to-nearest uses the host's IEEE hardware (and ``llvm.fma``);
  the directed modes use exact integer arithmetic (``alu_wide``) or, for sqrt,
  the exact fma residual on a scaled operand.

Modifiers: ``.ftz`` flushes subnormal inputs and results of non-f64 formats to
sign-preserving zero; ``.sat`` clamps to [+0.0, 1.0] with NaN -> +0.0.
NaN results are the format's canonical NaN (``alu_round.canonical_nan``).

Simplified: the ``.approx`` instructions (rcp, sqrt, rsqrt, ex2, lg2, sin,
cos, tanh, div.approx, div.full) return the float64 library value rounded to
nearest, which is inside every error bound the PTX ISA documents for them but
is not the bit pattern of the GPU's special-function unit. ``.ftz`` flushes a
result only when it is subnormal after rounding.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch.codes import (
    MOD_APPROX,
    MOD_FTZ,
    MOD_NAN,
    MOD_RELU,
    MOD_RND_MASK,
    MOD_SAT,
    MOD_TESTP_MASK,
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
    OP_TESTP,
    RND_DEFAULT,
    RND_RM,
    RND_RN,
    T_F32,
    T_F64,
    TESTP_FINITE,
    TESTP_INFINITE,
    TESTP_NORMAL,
    TESTP_NOTANUMBER,
    TESTP_NUMBER,
    TESTP_SUBNORMAL,
)
from gpusim.engine.bits import bits_from_f32, bits_from_f64, f32_from_bits, f64_from_bits, fused_multiply_add
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics.alu_round import (
    adjust_directed,
    canonical_nan,
    flush_subnormal,
    format_bits_to_f64,
    format_max_exponent,
    format_precision,
    is_inf_bits,
    is_nan_bits,
    is_subnormal_bits,
    round_f64_with_direction,
    sign_bit,
)
from gpusim.engine.semantics.alu_wide import exact_divide, exact_fma

U64_ZERO = np.uint64(0)
U64_ONE = np.uint64(1)
LOW32 = np.uint64(0xFFFFFFFF)


@compiled_only(error_model="numpy")
def format_mask(fmt):
    if fmt == T_F64:
        return np.uint64(0xFFFFFFFFFFFFFFFF)
    if fmt == T_F32:
        return LOW32
    return np.uint64(0xFFFF)


@compiled_only(error_model="numpy")
def load_float(bits, fmt, ftz):
    """The exact float64 value of an operand of format ``fmt`` (flushed first if ``ftz``)."""
    if fmt == T_F64:
        return f64_from_bits(bits)
    bits = bits & format_mask(fmt)
    if ftz:
        bits = flush_subnormal(bits, fmt)
    if fmt == T_F32:
        return np.float64(f32_from_bits(bits))
    return format_bits_to_f64(bits, fmt)


@compiled_only(error_model="numpy")
def saturate_bits(bits, fmt):
    """.sat: clamp to [+0.0, 1.0]; NaN and every negative (including -0.0) give +0.0."""
    if is_nan_bits(bits, fmt) or (bits & sign_bit(fmt)) != U64_ZERO:
        return U64_ZERO
    one = np.uint64(format_max_exponent(fmt)) << np.uint64(format_precision(fmt) - 1)
    return one if bits > one else bits


@compiled_only(error_model="numpy")
def finish(bits, fmt, mods):
    """Apply canonical NaN, .ftz (non-f64), .relu and .sat to a result."""
    if is_nan_bits(bits, fmt):
        bits = canonical_nan(fmt)
    if (mods & MOD_FTZ) != 0 and fmt != T_F64:
        bits = flush_subnormal(bits, fmt)
    if (mods & MOD_RELU) != 0 and not is_nan_bits(bits, fmt) and (bits & sign_bit(fmt)) != U64_ZERO:
        bits = U64_ZERO
    if (mods & MOD_SAT) != 0:
        bits = saturate_bits(bits, fmt)
    return bits


@compiled_only(error_model="numpy")
def sign_of(value):
    if value > 0.0:
        return 1
    if value < 0.0:
        return -1
    return 0


@compiled_only(error_model="numpy")
def narrow(value, direction, mode, fmt):
    """Bits of ``value`` (+ remainder of sign ``direction``) rounded into f32/f16/bf16."""
    if fmt == T_F32 and direction == 0 and (mode == RND_RN or mode == RND_DEFAULT):
        return bits_from_f32(np.float32(value))
    return round_f64_with_direction(value, direction, mode, fmt)


@compiled_only(error_model="numpy")
def two_sum_direction(a, b, total):
    """Sign of (a + b) - total, exact (Knuth's TwoSum); 0 when total is not finite."""
    if not np.isfinite(total):
        return 0
    b_virtual = total - a
    a_virtual = total - b_virtual
    error = (a - a_virtual) + (b - b_virtual)
    return sign_of(error)


@compiled_only(error_model="numpy")
def exact_zero_sign(total, x, y, mode):
    """IEEE 754 section 6.3: an exact zero sum is +0, or -0 under round-down unless both are +0."""
    if (
        total == 0.0
        and mode == RND_RM
        and not (x == 0.0 and y == 0.0 and not np.signbit(x) and not np.signbit(y))
    ):
        return -0.0
    return total


@compiled_only(error_model="numpy")
def narrow_add(a, b, mode, fmt):
    total = a + b
    if mode == RND_RN or mode == RND_DEFAULT:
        return narrow(total, 0, mode, fmt)
    total = exact_zero_sign(total, a, b, mode)
    return narrow(total, two_sum_direction(a, b, total), mode, fmt)


@compiled_only(error_model="numpy")
def narrow_fma(a, b, c, mode, fmt):
    product = a * b  # exact for operands of 24 bits or fewer
    total = product + c
    total = exact_zero_sign(total, product, c, mode)
    return narrow(total, two_sum_direction(product, c, total), mode, fmt)


@compiled_only(error_model="numpy")
def narrow_divide(a, b, mode, fmt):
    quotient = (
        a / b
        if b != 0.0
        else (np.nan if a == 0.0 or a != a else np.copysign(np.inf, a) * np.copysign(1.0, b))
    )
    if mode == RND_RN or mode == RND_DEFAULT or not np.isfinite(quotient) or quotient == 0.0:
        return narrow(quotient, 0, mode, fmt)
    residual = fused_multiply_add(-quotient, b, a)
    return narrow(quotient, sign_of(residual) * sign_of(b), mode, fmt)


@compiled_only(error_model="numpy")
def narrow_sqrt(a, mode, fmt):
    if a < 0.0:
        return canonical_nan(fmt)
    root = np.sqrt(a)
    if mode == RND_RN or mode == RND_DEFAULT or not np.isfinite(root) or root == 0.0:
        return narrow(root, 0, mode, fmt)
    return narrow(root, sign_of(fused_multiply_add(-root, root, a)), mode, fmt)


@compiled_only(error_model="numpy")
def is_special_f64(value):
    return value == 0.0 or not np.isfinite(value)


@compiled_only(error_model="numpy")
def f64_add(a, b, mode):
    total = a + b
    if mode == RND_RN or mode == RND_DEFAULT:
        return bits_from_f64(total)
    if is_special_f64(a) or is_special_f64(b):
        return bits_from_f64(exact_zero_sign(total, a, b, mode))
    return exact_fma(bits_from_f64(a), bits_from_f64(1.0), bits_from_f64(b), False, mode, T_F64)


@compiled_only(error_model="numpy")
def f64_multiply(a, b, mode):
    if mode == RND_RN or mode == RND_DEFAULT or is_special_f64(a) or is_special_f64(b):
        return bits_from_f64(a * b)
    return exact_fma(bits_from_f64(a), bits_from_f64(b), U64_ZERO, False, mode, T_F64)


@compiled_only(error_model="numpy")
def f64_fma(a, b, c, mode):
    if mode == RND_RN or mode == RND_DEFAULT or not np.isfinite(c) or is_special_f64(a) or is_special_f64(b):
        total = fused_multiply_add(a, b, c)
        if mode == RND_RN or mode == RND_DEFAULT:
            return bits_from_f64(total)
        return bits_from_f64(exact_zero_sign(total, a * b, c, mode))
    return exact_fma(bits_from_f64(a), bits_from_f64(b), bits_from_f64(c), False, mode, T_F64)


@compiled_only(error_model="numpy")
def f64_divide(a, b, mode):
    if b == 0.0:
        if a == 0.0 or a != a:
            return canonical_nan(T_F64)
        return bits_from_f64(np.copysign(np.inf, a) * np.copysign(1.0, b))
    if mode == RND_RN or mode == RND_DEFAULT or is_special_f64(a) or not np.isfinite(b):
        return bits_from_f64(a / b)
    return exact_divide(bits_from_f64(a), bits_from_f64(b), mode, T_F64)


@compiled_only(error_model="numpy")
def f64_sqrt(a, mode):
    if a < 0.0:
        return canonical_nan(T_F64)
    if mode == RND_RN or mode == RND_DEFAULT or is_special_f64(a):
        return bits_from_f64(np.sqrt(a))
    # scale tiny operands so the residual a - r*r cannot underflow; sqrt results are normal
    scale = 1.0
    if a < 2.0**-900:
        a = a * 2.0**200
        scale = 2.0**-100
    root = np.sqrt(a)
    direction = sign_of(fused_multiply_add(-root, root, a))
    adjusted = f64_from_bits(adjust_directed(bits_from_f64(root), direction, mode, T_F64))
    return bits_from_f64(adjusted * scale)


@compiled_only(error_model="numpy")
def approximate(op, value):
    """The float64 library value of a .approx transcendental, with PTX's special cases."""
    if op == OP_RCP:
        return 1.0 / value if value != 0.0 else np.copysign(np.inf, value)
    if op == OP_SQRT:
        return np.sqrt(value) if value >= 0.0 or value != value else np.nan
    if op == OP_RSQRT:
        if value == 0.0:
            return np.copysign(np.inf, value)
        return 1.0 / np.sqrt(value) if value > 0.0 else np.nan
    if op == OP_EX2:
        return np.exp2(value)
    if op == OP_LG2:
        if value == 0.0:
            return -np.inf
        return np.log2(value) if value > 0.0 else np.nan
    if op == OP_SIN:
        return np.sin(value) if np.isfinite(value) else np.nan
    if op == OP_COS:
        return np.cos(value) if np.isfinite(value) else np.nan
    return np.tanh(value)


@compiled_only(error_model="numpy")
def float_min_max(is_max, a_bits, b_bits, fmt, mods):
    """min/max: a NaN operand yields the other (.NaN: yields NaN); -0.0 orders below +0.0."""
    ftz = (mods & MOD_FTZ) != 0 and fmt != T_F64
    a_bits = a_bits & format_mask(fmt)
    b_bits = b_bits & format_mask(fmt)
    if ftz:
        a_bits = flush_subnormal(a_bits, fmt)
        b_bits = flush_subnormal(b_bits, fmt)
    a_nan = is_nan_bits(a_bits, fmt)
    b_nan = is_nan_bits(b_bits, fmt)
    if (a_nan and b_nan) or ((mods & MOD_NAN) != 0 and (a_nan or b_nan)):
        return canonical_nan(fmt)
    if a_nan:
        return finish(b_bits, fmt, mods)
    if b_nan:
        return finish(a_bits, fmt, mods)
    a = load_float(a_bits, fmt, False)
    b = load_float(b_bits, fmt, False)
    if a == b:
        # equal values differ only in the sign of zero: min takes the negative one
        a_negative = (a_bits & sign_bit(fmt)) != U64_ZERO
        pick_a = a_negative != is_max
    else:
        pick_a = (a > b) == is_max
    return finish(a_bits if pick_a else b_bits, fmt, mods)


@compiled_only(error_model="numpy")
def float_test(a_bits, fmt, mods):
    """testp: classify an operand (result 0/1)."""
    bits = a_bits & format_mask(fmt)
    kind = (mods >> MOD_TESTP_SHIFT) & MOD_TESTP_MASK
    nan = is_nan_bits(bits, fmt)
    infinite = is_inf_bits(bits, fmt)
    subnormal = is_subnormal_bits(bits, fmt)
    zero = (bits & (sign_bit(fmt) - U64_ONE)) == U64_ZERO
    if kind == TESTP_FINITE:
        result = not nan and not infinite
    elif kind == TESTP_INFINITE:
        result = infinite
    elif kind == TESTP_NUMBER:
        result = not nan
    elif kind == TESTP_NOTANUMBER:
        result = nan
    elif kind == TESTP_NORMAL:
        result = not (nan or infinite or subnormal or zero)
    elif kind == TESTP_SUBNORMAL:
        result = subnormal
    else:
        result = False
    return U64_ONE if result else U64_ZERO


@compiled_only(error_model="numpy")
def float_op(op, fmt, mods, a_bits, b_bits, c_bits):
    """One lane of a floating-point ALU instruction on raw bits (``fmt``: T_F16/T_BF16/T_F32/T_F64)."""
    if op == OP_MIN or op == OP_MAX:
        return float_min_max(op == OP_MAX, a_bits, b_bits, fmt, mods)
    if op == OP_TESTP:
        return float_test(a_bits, fmt, mods)
    if op == OP_COPYSIGN:
        sign = sign_bit(fmt)
        return (b_bits & format_mask(fmt) & ~sign) | (a_bits & sign)
    ftz = (mods & MOD_FTZ) != 0 and fmt != T_F64
    mode = mods & MOD_RND_MASK
    a = load_float(a_bits, fmt, ftz)
    b = load_float(b_bits, fmt, ftz)
    if op == OP_ABS or op == OP_NEG:
        bits = a_bits & format_mask(fmt)
        if ftz:
            bits = flush_subnormal(bits, fmt)
        bits = bits & ~sign_bit(fmt) if op == OP_ABS else bits ^ sign_bit(fmt)
        return finish(bits, fmt, mods)
    if fmt == T_F64:
        if op == OP_ADD or op == OP_SUB:
            bits = f64_add(a, b if op == OP_ADD else -b, mode)
        elif op == OP_MUL:
            bits = f64_multiply(a, b, mode)
        elif op == OP_FMA or op == OP_MAD:
            bits = f64_fma(a, b, f64_from_bits(c_bits), mode)
        elif op == OP_DIV:
            bits = f64_divide(a, b, mode)
        elif op == OP_RCP and (mods & MOD_APPROX) == 0:
            bits = f64_divide(1.0, a, mode)
        elif op == OP_SQRT and (mods & MOD_APPROX) == 0:
            bits = f64_sqrt(a, mode)
        else:
            bits = bits_from_f64(approximate(op, a))
        return finish(bits, fmt, mods)
    if op == OP_ADD or op == OP_SUB:
        bits = narrow_add(a, b if op == OP_ADD else -b, mode, fmt)
    elif op == OP_MUL:
        bits = narrow(a * b, 0, mode, fmt)
    elif op == OP_FMA or op == OP_MAD:
        bits = narrow_fma(a, b, load_float(c_bits, fmt, ftz), mode, fmt)
    elif op == OP_DIV:
        bits = narrow_divide(a, b, mode, fmt)
    elif op == OP_RCP and (mods & MOD_APPROX) == 0:
        bits = narrow_divide(1.0, a, mode, fmt)
    elif op == OP_SQRT and (mods & MOD_APPROX) == 0:
        bits = narrow_sqrt(a, mode, fmt)
    else:
        bits = narrow(approximate(op, a), 0, RND_RN, fmt)
    return finish(bits, fmt, mods)
