"""Per-lane integer and bit-manipulation semantics of PTX (PTX ISA 8.x, "Integer Arithmetic",
"Logic and Shift" and "Bit Manipulation" instructions).

Values are the low ``width`` bits of uint64 operands; results are zero-extended
to 64 bits (a signed result keeps only its two's complement bits of the type's
width). Arithmetic wraps modulo 2**width unless ``.sat`` is given (s32 only).

Choices where PTX leaves a result unspecified (documented in docs/semantics.md):
integer division by zero returns what NVIDIA's division sequence produces,
unsigned ``x / 0 = all ones`` and ``x % 0 = x``; signed ``x / 0 = -1`` for
``x >= 0`` and ``1`` for ``x < 0``, ``x % 0 = x``. ``INT_MIN / -1 = INT_MIN`` and
``INT_MIN % -1 = 0`` (wrap). Simplified: no carry flag (``.cc``/``addc``).
"""

from __future__ import annotations

import numpy as np

from gpusim.arch.codes import (
    MOD_MUL_MASK,
    MOD_MUL_SHIFT,
    MOD_PRMT_MASK,
    MOD_PRMT_SHIFT,
    MOD_RELU,
    MOD_SAT,
    MOD_SHF_CLAMP,
    MOD_SHF_RIGHT,
    MUL_HI,
    MUL_WIDE,
    PRMT_B4E,
    PRMT_DEFAULT,
    PRMT_ECL,
    PRMT_ECR,
    PRMT_F4E,
    PRMT_RC8,
    T_PRED,
    TYPE_BYTES,
    TYPE_SIGNED,
)
from gpusim.engine.bits import leading_zeros64, popcount64
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics.alu_wide import multiply_64x64

U64_ZERO = np.uint64(0)
U64_ONE = np.uint64(1)
ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
LOW32 = np.uint64(0xFFFFFFFF)
LOW8 = np.uint64(0xFF)
TYPE_BYTES_TABLE = np.array(TYPE_BYTES, dtype=np.int64)
TYPE_SIGNED_TABLE = np.array(TYPE_SIGNED, dtype=np.int64)


@compiled_only
def type_width(ty):
    """Bit width of an integer type code (1 for predicates)."""
    if ty == T_PRED:
        return 1
    return TYPE_BYTES_TABLE[ty] * 8


@compiled_only
def type_is_signed(ty):
    return TYPE_SIGNED_TABLE[ty] != 0


@compiled_only
def width_mask(width):
    if width >= 64:
        return ALL_ONES
    return (U64_ONE << np.uint64(width)) - U64_ONE


@compiled_only
def to_signed(value, width):
    """Sign-extend the low ``width`` bits of a uint64 into an int64."""
    shift = np.uint64(64 - width)
    return np.int64(value << shift) >> np.int64(64 - width)


@compiled_only
def from_signed(value, width):
    return np.uint64(value) & width_mask(width)


@compiled_only
def signed_limits(width):
    high = np.int64((U64_ONE << np.uint64(width - 1)) - U64_ONE)
    return -high - 1, high


@compiled_only
def high_product64(a, b, signed):
    """Upper 64 bits of the 128-bit product of two 64-bit values."""
    high, low = multiply_64x64(a, b)
    if signed:
        if np.int64(a) < 0:
            high -= b
        if np.int64(b) < 0:
            high -= a
    return high


@compiled_only
def integer_multiply(a, b, ty, mods, addend, add):
    """mul/mad .lo/.hi/.wide (lo is the default); mad adds ``addend`` to the selected part."""
    width = type_width(ty)
    signed = type_is_signed(ty)
    part = (mods >> MOD_MUL_SHIFT) & MOD_MUL_MASK
    mask = width_mask(width)
    if width == 64:
        if part == MUL_HI:
            product = high_product64(a, b, signed)
        else:
            product = a * b
        result_width = 64
    else:
        if signed:
            full = np.uint64(to_signed(a, width) * to_signed(b, width))
        else:
            full = (a & mask) * (b & mask)
        if part == MUL_WIDE:
            product = full & width_mask(2 * width)
            result_width = 2 * width
        elif part == MUL_HI:
            product = (full >> np.uint64(width)) & mask
            result_width = width
        else:
            product = full & mask
            result_width = width
    if not add:
        return product
    if (mods & MOD_SAT) != 0 and signed and result_width == 32:
        total = to_signed(product, 32) + to_signed(addend, 32)
        return from_signed(min(max(total, np.int64(-2147483648)), np.int64(2147483647)), 32)
    return (product + addend) & width_mask(result_width)


@compiled_only
def integer_multiply24(a, b, ty, mods, addend, add):
    """mul24/mad24: 24x24-bit product (48 bits); .lo keeps bits 0-31, .hi bits 16-47."""
    if type_is_signed(ty):
        product = np.uint64(to_signed(a, 24) * to_signed(b, 24))
    else:
        product = (a & np.uint64(0xFFFFFF)) * (b & np.uint64(0xFFFFFF))
    part = (mods >> MOD_MUL_SHIFT) & MOD_MUL_MASK
    if part == MUL_HI:
        product = product >> np.uint64(16)
    product = product & LOW32
    if not add:
        return product
    if (mods & MOD_SAT) != 0 and type_is_signed(ty):
        total = to_signed(product, 32) + to_signed(addend, 32)
        return from_signed(min(max(total, np.int64(-2147483648)), np.int64(2147483647)), 32)
    return (product + addend) & LOW32


@compiled_only
def integer_add(a, b, ty, mods, subtract):
    width = type_width(ty)
    if (mods & MOD_SAT) != 0 and type_is_signed(ty) and width <= 32:
        x = to_signed(a, width)
        y = to_signed(b, width)
        total = x - y if subtract else x + y
        low, high = signed_limits(width)
        return from_signed(min(max(total, low), high), width)
    if subtract:
        return (a - b) & width_mask(width)
    return (a + b) & width_mask(width)


@compiled_only
def integer_divide(a, b, ty, remainder):
    """div/rem: truncating division; remainder takes the dividend's sign."""
    width = type_width(ty)
    mask = width_mask(width)
    if not type_is_signed(ty):
        x = a & mask
        y = b & mask
        if y == U64_ZERO:
            return x if remainder else mask
        return x % y if remainder else x // y
    x = to_signed(a, width)
    y = to_signed(b, width)
    if y == 0:
        if remainder:
            return from_signed(x, width)
        return from_signed(np.int64(-1) if x >= 0 else np.int64(1), width)
    if y == -1:
        # avoids the INT64_MIN / -1 trap; wraps like the hardware
        return U64_ZERO if remainder else (U64_ZERO - np.uint64(x)) & mask
    magnitude_x = np.uint64(x) if x >= 0 else U64_ZERO - np.uint64(x)
    magnitude_y = np.uint64(y) if y >= 0 else U64_ZERO - np.uint64(y)
    if remainder:
        magnitude = magnitude_x % magnitude_y
        return (U64_ZERO - magnitude if x < 0 else magnitude) & mask
    magnitude = magnitude_x // magnitude_y
    return (U64_ZERO - magnitude if (x < 0) != (y < 0) else magnitude) & mask


@compiled_only
def integer_min_max(a, b, ty, mods, is_max):
    width = type_width(ty)
    if type_is_signed(ty):
        x = to_signed(a, width)
        y = to_signed(b, width)
        result = max(x, y) if is_max else min(x, y)
        if (mods & MOD_RELU) != 0 and result < 0:
            result = np.int64(0)
        return from_signed(result, width)
    x = a & width_mask(width)
    y = b & width_mask(width)
    return max(x, y) if is_max else min(x, y)


@compiled_only
def shift_left(a, amount, width):
    amount = amount & LOW32
    if amount >= np.uint64(width):
        return U64_ZERO
    return (a << amount) & width_mask(width)


@compiled_only
def shift_right(a, amount, ty):
    """shr: arithmetic for signed types, logical otherwise; amounts >= width clamp."""
    width = type_width(ty)
    amount = amount & LOW32
    if amount >= np.uint64(width):
        amount = np.uint64(width - 1) if type_is_signed(ty) else np.uint64(64)
    if type_is_signed(ty):
        return from_signed(to_signed(a, width) >> np.int64(amount), width)
    if amount >= np.uint64(64):
        return U64_ZERO
    return (a & width_mask(width)) >> amount


@compiled_only
def count_leading_zeros(a, width):
    value = a & width_mask(width)
    return np.uint64(leading_zeros64(value) - np.uint64(64 - width))


@compiled_only
def find_most_significant(a, ty, shift_amount):
    """bfind: position of the most significant non-sign bit; 0xFFFFFFFF when there is none."""
    width = type_width(ty)
    value = a & width_mask(width)
    if type_is_signed(ty) and to_signed(value, width) < 0:
        value = ~value & width_mask(width)
    if value == U64_ZERO:
        return LOW32
    position = np.uint64(63) - leading_zeros64(value)
    if shift_amount:
        return np.uint64(width - 1) - position
    return position


@compiled_only
def bit_reverse(a, width):
    result = U64_ZERO
    value = a
    for _ in range(width):
        result = (result << U64_ONE) | (value & U64_ONE)
        value = value >> U64_ONE
    return result


@compiled_only
def bit_field_extract(a, position_operand, length_operand, ty):
    """bfe: PTX pos/len are the low 8 bits; bits past the msb and beyond len take the sign bit."""
    width = type_width(ty)
    msb = width - 1
    position = np.int64(position_operand & LOW8)
    length = np.int64(length_operand & LOW8)
    value = a & width_mask(width)
    sign = U64_ZERO
    if type_is_signed(ty) and length != 0:
        sign_position = min(position + length - 1, msb)
        sign = (value >> np.uint64(sign_position)) & U64_ONE
    result = U64_ZERO
    for i in range(width):
        if i < length and position + i <= msb:
            bit = (value >> np.uint64(position + i)) & U64_ONE
        else:
            bit = sign
        result |= bit << np.uint64(i)
    return result


@compiled_only
def bit_field_insert(a, b, position_operand, length_operand, width):
    """bfi: insert the low len bits of a into b at pos (bits past the msb are dropped)."""
    position = np.int64(position_operand & LOW8)
    length = np.int64(length_operand & LOW8)
    result = b & width_mask(width)
    for i in range(length):
        if position + i > width - 1:
            break
        target = np.uint64(position + i)
        result = (result & ~(U64_ONE << target)) | (((a >> np.uint64(i)) & U64_ONE) << target)
    return result


@compiled_only
def permute_bytes(a, b, selector, mode):
    """prmt.b32: pick bytes of the 8-byte value {b, a} (a = bytes 0-3) per the selector and mode."""
    source = ((b & LOW32) << np.uint64(32)) | (a & LOW32)
    low_two = np.int64(selector & np.uint64(3))
    result = U64_ZERO
    for i in range(4):
        replicate_sign = False
        if mode == PRMT_DEFAULT:
            nibble = np.int64((selector >> np.uint64(4 * i)) & np.uint64(0xF))
            index = nibble & 7
            replicate_sign = (nibble & 8) != 0
        elif mode == PRMT_F4E:
            index = (low_two + i) & 7
        elif mode == PRMT_B4E:
            index = (low_two - i) & 7
        elif mode == PRMT_RC8:
            index = low_two
        elif mode == PRMT_ECL:
            index = max(np.int64(i), low_two)
        elif mode == PRMT_ECR:
            index = min(np.int64(i), low_two)
        else:
            index = (low_two & 1) * 2 + (i & 1)
        byte = (source >> np.uint64(8 * index)) & LOW8
        if replicate_sign:
            byte = LOW8 if (byte & np.uint64(0x80)) != U64_ZERO else U64_ZERO
        result |= byte << np.uint64(8 * i)
    return result


@compiled_only
def logic3(a, b, c, lookup):
    """lop3.b32: bit i of the result is bit (a_i*4 + b_i*2 + c_i) of the 8-bit lookup table."""
    result = U64_ZERO
    for minterm in range(8):
        if (lookup >> np.uint64(minterm)) & U64_ONE:
            x = a if minterm & 4 else ~a
            y = b if minterm & 2 else ~b
            z = c if minterm & 1 else ~c
            result |= x & y & z
    return result & LOW32


@compiled_only
def funnel_shift(a, b, amount, ty, mods):
    """shf.l/.r: shift the 64-bit {b, a} and keep the high (left) or low (right) 32 bits."""
    amount = amount & LOW32
    if (mods & MOD_SHF_CLAMP) != 0:
        amount = min(amount, np.uint64(32))
    else:
        amount = amount & np.uint64(31)
    joined = ((b & LOW32) << np.uint64(32)) | (a & LOW32)
    if (mods & MOD_SHF_RIGHT) != 0:
        if type_is_signed(ty):
            return np.uint64(np.int64(joined) >> np.int64(amount)) & LOW32
        return (joined >> amount) & LOW32
    return ((joined << amount) >> np.uint64(32)) & LOW32


@compiled_only
def find_nth_set(mask, base, offset):
    """fns.b32: position of the offset-th set bit of mask counted from base; 0xFFFFFFFF if none."""
    mask = mask & LOW32
    position = np.int64(base & LOW32)
    count = to_signed(offset, 32)
    if position > 31:
        return LOW32
    if count == 0:
        return np.uint64(position) if (mask >> np.uint64(position)) & U64_ONE else LOW32
    step = 1 if count > 0 else -1
    remaining = abs(count) - 1
    while 0 <= position <= 31:
        if (mask >> np.uint64(position)) & U64_ONE:
            if remaining == 0:
                return np.uint64(position)
            remaining -= 1
        position += step
    return LOW32


@compiled_only
def integer_absolute_difference(a, b, c, ty):
    """sad: c + |a - b|."""
    width = type_width(ty)
    if type_is_signed(ty):
        x = to_signed(a, width)
        y = to_signed(b, width)
        difference = np.uint64(x - y) if x >= y else np.uint64(y - x)
    else:
        x = a & width_mask(width)
        y = b & width_mask(width)
        difference = x - y if x >= y else y - x
    return (c + difference) & width_mask(width)


@compiled_only
def integer_order(a, b, ty, force_unsigned):
    """-1, 0 or +1 as a <, == or > b, signed or unsigned per type (or unsigned if forced)."""
    width = type_width(ty)
    if type_is_signed(ty) and not force_unsigned:
        x = to_signed(a, width)
        y = to_signed(b, width)
        return -1 if x < y else (1 if x > y else 0)
    x_unsigned = a & width_mask(width)
    y_unsigned = b & width_mask(width)
    return -1 if x_unsigned < y_unsigned else (1 if x_unsigned > y_unsigned else 0)


@compiled_only
def integer_count(a, width, leading):
    """popc or clz of the low ``width`` bits (result u32)."""
    if leading:
        return count_leading_zeros(a, width)
    return popcount64(a & width_mask(width))


@compiled_only
def prmt_mode(mods):
    return (mods >> MOD_PRMT_SHIFT) & MOD_PRMT_MASK
