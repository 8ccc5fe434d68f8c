"""``alu_eval``: one lane of one PTX ALU instruction on raw register bits.

The engine calls ``alu_eval(op, ty, ty2, mods, a, b, c, d)`` once per active
lane for every operation from ``OP_MOV`` to ``OP_LAST_ALU`` (codes in
``gpusim.arch.codes``). Operands are uint64 bit patterns (32-bit values in the
low half, higher bits ignored; predicates 0/1; f32 IEEE bits in the low half;
f16/bf16 in the low 16 bits). The result is the raw bit pattern, zero-extended
to 64 bits; ``setp`` returns ``p | (q << 1)`` for its two destinations.

This module only dispatches; the semantics live in ``alu_int`` (integer and bit
manipulation), ``alu_float`` (floating point), ``alu_convert`` (cvt) and
``alu_round``/``alu_wide`` (exact rounding). Operand roles per op:

* setp/set: ``c`` is the predicate combined by .and/.or/.xor (already negated by
  the caller for ``!p``); setp compares type ``ty``, set compares ``ty2`` and
  writes ``ty`` (1.0f for f32, all ones for integers).
* selp: ``c`` is the predicate. slct: ``c`` has type ``ty2`` (s32 or f32).
* bfe: b = pos, c = len. bfi: a = source field, b = base, c = pos, d = len. szext and bmsk are bfe and
  bfi rows flagged MOD_SZEXT / MOD_BMSK, whose position and length first wrap modulo 32 or clamp to 32.
* prmt: c = selector. lop3: d = immLut. shf: c = shift amount. fns: a = mask,
  b = base, c = offset. mad/mad24/sad: c = addend.
* cvt: ``ty`` is the destination type, ``ty2`` the source type.
* f16x2/bf16x2 (add, sub, mul, fma, min, max, abs, neg): each half on its own;
  cvt.f16x2.f32 d, a, b packs a's conversion in the high half and b's in the low half.

Simplified: ``.cc`` carry chains are not modelled here.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch.codes import (
    BOOL_AND,
    BOOL_OR,
    BOOL_XOR,
    CMP_EQ,
    CMP_EQU,
    CMP_GE,
    CMP_GEU,
    CMP_GT,
    CMP_HS,
    CMP_LE,
    CMP_LO,
    CMP_LT,
    CMP_NAN,
    CMP_NE,
    CMP_NUM,
    MOD_BITS_CLAMP,
    MOD_BMSK,
    MOD_BOOL_MASK,
    MOD_BOOL_SHIFT,
    MOD_CMP_MASK,
    MOD_CMP_SHIFT,
    MOD_DP2A_HI,
    MOD_FTZ,
    MOD_MUL_MASK,
    MOD_MUL_SHIFT,
    MOD_SHIFTAMT,
    MOD_SZEXT,
    MUL_WIDE,
    OP_ABS,
    OP_ADD,
    OP_AND,
    OP_BFE,
    OP_BFI,
    OP_BFIND,
    OP_BREV,
    OP_CLZ,
    OP_CNOT,
    OP_CVT,
    OP_DIV,
    OP_DP2A,
    OP_DP4A,
    OP_FMA,
    OP_FNS,
    OP_LOP3,
    OP_MAD,
    OP_MAD24,
    OP_MAX,
    OP_MIN,
    OP_MOV,
    OP_MUL,
    OP_MUL24,
    OP_NEG,
    OP_NOT,
    OP_OR,
    OP_POPC,
    OP_PRMT,
    OP_REM,
    OP_SAD,
    OP_SELP,
    OP_SET,
    OP_SETP,
    OP_SHF,
    OP_SHL,
    OP_SHR,
    OP_SLCT,
    OP_SUB,
    OP_XOR,
    T_BF16,
    T_BF16X2,
    T_F16,
    T_F16X2,
    T_F32,
    T_PRED,
    TYPE_SIGNED,
)
from gpusim.engine.jit import compiled_only, engine_jit
from gpusim.engine.semantics.alu_convert import convert, is_float_type
from gpusim.engine.semantics.alu_dot import dot_product_accumulate
from gpusim.engine.semantics.alu_float import float_op, load_float
from gpusim.engine.semantics.alu_int import (
    bit_field_extract,
    bit_field_insert,
    bit_reverse,
    find_most_significant,
    find_nth_set,
    funnel_shift,
    integer_absolute_difference,
    integer_add,
    integer_count,
    integer_divide,
    integer_min_max,
    integer_multiply,
    integer_multiply24,
    integer_order,
    logic3,
    permute_bytes,
    prmt_mode,
    shift_left,
    shift_right,
    to_signed,
    type_width,
    width_mask,
)
from gpusim.engine.semantics.alu_tensor_types import convert_tensor_type, is_tensor_type

U64_ZERO = np.uint64(0)
U64_ONE = np.uint64(1)
LOW16 = np.uint64(0xFFFF)
LOW32 = np.uint64(0xFFFFFFFF)
TYPE_SIGNED_TABLE = np.array(TYPE_SIGNED, dtype=np.int64)


@compiled_only
def order_satisfies(order, comparison):
    """Whether an ordered result (-1, 0, +1) satisfies a comparison (unordered variants = base)."""
    if comparison >= CMP_EQU and comparison <= CMP_GEU:
        comparison = comparison - (CMP_EQU - CMP_EQ)
    elif comparison >= CMP_LO and comparison <= CMP_HS:
        comparison = comparison - (CMP_LO - CMP_LT)
    if comparison == CMP_EQ:
        return order == 0
    if comparison == CMP_NE:
        return order != 0
    if comparison == CMP_LT:
        return order < 0
    if comparison == CMP_LE:
        return order <= 0
    if comparison == CMP_GT:
        return order > 0
    if comparison == CMP_GE:
        return order >= 0
    return comparison == CMP_NUM


@compiled_only
def compare(a, b, ty, mods):
    """The comparison of setp/set on type ``ty``: ordered comparisons are false on NaN, the U forms true."""
    comparison = (mods >> MOD_CMP_SHIFT) & MOD_CMP_MASK
    if is_float_type(ty):
        ftz = (mods & MOD_FTZ) != 0 and ty == T_F32
        x = load_float(a, ty, ftz)
        y = load_float(b, ty, ftz)
        unordered = x != x or y != y
        if comparison == CMP_NUM:
            return not unordered
        if comparison == CMP_NAN:
            return unordered
        if unordered:
            return comparison >= CMP_EQU and comparison <= CMP_GEU
        order = -1 if x < y else (1 if x > y else 0)
        return order_satisfies(order, comparison)
    if comparison == CMP_NAN:
        return False
    force_unsigned = comparison >= CMP_LO and comparison <= CMP_HS
    return order_satisfies(integer_order(a, b, ty, force_unsigned), comparison)


@compiled_only
def combine(value, predicate, mods):
    """The .and/.or/.xor of setp/set with predicate operand c (no combine: the value itself)."""
    operation = (mods >> MOD_BOOL_SHIFT) & MOD_BOOL_MASK
    other = (predicate & U64_ONE) != U64_ZERO
    if operation == BOOL_AND:
        return value and other
    if operation == BOOL_OR:
        return value or other
    if operation == BOOL_XOR:
        return value != other
    return value


@compiled_only
def select_by_sign(a, b, c, source_type, mods):
    """slct: a if c >= 0 else b; c is s32 or f32 (-0.0 counts as >= 0, NaN does not)."""
    if source_type == T_F32:
        value = load_float(c, T_F32, (mods & MOD_FTZ) != 0)
        return a if value >= 0.0 else b
    return a if to_signed(c, 32) >= 0 else b


@compiled_only
def packed_half_op(op, ty, mods, a, b, c):
    """f16x2/bf16x2: the scalar operation on the low and the high 16-bit halves."""
    fmt = T_F16 if ty == T_F16X2 else T_BF16
    sixteen = np.uint64(16)
    low = float_op(op, fmt, mods, a & LOW16, b & LOW16, c & LOW16)
    high = float_op(op, fmt, mods, (a >> sixteen) & LOW16, (b >> sixteen) & LOW16, (c >> sixteen) & LOW16)
    return ((high & LOW16) << sixteen) | (low & LOW16)


@compiled_only
def bitwise(op, ty, a, b):
    width = type_width(ty)
    mask = width_mask(width)
    if op == OP_AND:
        return a & b & mask
    if op == OP_OR:
        return (a | b) & mask
    if op == OP_XOR:
        return (a ^ b) & mask
    if op == OP_NOT:
        return ~a & mask
    return U64_ONE if (a & mask) == U64_ZERO else U64_ZERO


@compiled_only
def integer_op(op, ty, mods, a, b, c, d):
    """One lane of an integer or bit-manipulation instruction of type ``ty``."""
    width = type_width(ty)
    signed = TYPE_SIGNED_TABLE[ty] != 0
    if op == OP_ADD or op == OP_SUB:
        return integer_add(a, b, ty, mods, op == OP_SUB)
    if op == OP_MUL or op == OP_MAD:
        addend = c
        if op == OP_MAD and ((mods >> MOD_MUL_SHIFT) & MOD_MUL_MASK) != MUL_WIDE:
            addend = c & width_mask(width)
        return integer_multiply(a, b, ty, mods, addend, op == OP_MAD)
    if op == OP_MUL24 or op == OP_MAD24:
        return integer_multiply24(a, b, ty, mods, c, op == OP_MAD24)
    if op == OP_SAD:
        return integer_absolute_difference(a, b, c, ty)
    if op == OP_DIV or op == OP_REM:
        return integer_divide(a, b, ty, op == OP_REM)
    if op == OP_ABS:
        negative = signed and to_signed(a, width) < 0
        return ((U64_ZERO - a) if negative else a) & width_mask(width)
    if op == OP_NEG:
        return (U64_ZERO - a) & width_mask(width)
    if op == OP_MIN or op == OP_MAX:
        return integer_min_max(a, b, ty, mods, op == OP_MAX)
    if op >= OP_AND and op <= OP_CNOT:
        return bitwise(op, ty, a, b)
    if op == OP_SHL:
        return shift_left(a, b, width)
    if op == OP_SHR:
        return shift_right(a, b, ty)
    if op == OP_POPC or op == OP_CLZ:
        return integer_count(a, width, op == OP_CLZ)
    if op == OP_BFIND:
        return find_most_significant(a, ty, (mods & MOD_SHIFTAMT) != 0)
    if op == OP_BREV:
        return bit_reverse(a, width)
    if op == OP_BFE:
        if (mods & MOD_SZEXT) != 0:
            c = wrap_or_clamp_bits(c, mods)
        return bit_field_extract(a, b, c, ty)
    if op == OP_BFI:
        if (mods & MOD_BMSK) != 0:
            c = wrap_or_clamp_bits(c, mods)
            d = wrap_or_clamp_bits(d, mods)
        return bit_field_insert(a, b, c, d, width)
    if op == OP_PRMT:
        return permute_bytes(a, b, c, prmt_mode(mods))
    if op == OP_LOP3:
        return logic3(a, b, c, d & np.uint64(0xFF))
    if op == OP_SHF:
        return funnel_shift(a, b, c, ty, mods)
    if op == OP_FNS:
        return find_nth_set(a, b, c)
    return a


@compiled_only
def wrap_or_clamp_bits(value, mods):
    """szext's width, bmsk's position and width: modulo 32 (.wrap) or at most 32 (.clamp), PTX ISA 7.6."""
    value = value & LOW32
    if (mods & MOD_BITS_CLAMP) != 0:
        return min(value, np.uint64(32))
    return value & np.uint64(31)


@engine_jit
def alu_eval(op, ty, ty2, mods, a, b, c, d):
    """Raw result bits of one lane of ALU instruction ``op`` (see the module docstring)."""
    if op == OP_MOV:
        return a
    if op == OP_SELP:
        return a if (c & U64_ONE) != U64_ZERO else b
    if op == OP_SETP:
        result = compare(a, b, ty, mods)
        first = combine(result, c, mods)
        second = combine(not result, c, mods)
        return (U64_ONE if first else U64_ZERO) | ((U64_ONE if second else U64_ZERO) << U64_ONE)
    if op == OP_SET:
        if not combine(compare(a, b, ty2, mods), c, mods):
            return U64_ZERO
        if ty == T_F32:
            return np.uint64(0x3F800000)
        return width_mask(type_width(ty))
    if op == OP_SLCT:
        return select_by_sign(a, b, c, ty2, mods)
    if op == OP_CVT:
        if is_tensor_type(ty) or is_tensor_type(ty2):     # tf32 / FP8 (issue 14)
            return convert_tensor_type(ty, ty2, mods, a, b)
        if ty == T_F16X2 or ty == T_BF16X2:
            # cvt.f16x2.f32 d, a, b: a converted into the high half, b into the low half
            half = T_F16 if ty == T_F16X2 else T_BF16
            return (convert(half, ty2, mods, a) << np.uint64(16)) | convert(half, ty2, mods, b)
        return convert(ty, ty2, mods, a)
    if ty == T_PRED and op >= OP_AND and op <= OP_CNOT:
        return bitwise(op, ty, a, b)
    if is_float_type(ty):
        if op == OP_FMA or op == OP_MAD:
            return float_op(OP_FMA, ty, mods, a, b, c)
        return float_op(op, ty, mods, a, b, c)
    if ty == T_F16X2 or ty == T_BF16X2:
        return packed_half_op(op, ty, mods, a, b, c)
    if op == OP_DP4A or op == OP_DP2A:
        return dot_product_accumulate(op == OP_DP2A, ty, ty2, (mods & MOD_DP2A_HI) != 0, a, b, c)
    return integer_op(op, ty, mods, a, b, c, d)
