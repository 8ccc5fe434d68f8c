"""Integer and bit-manipulation semantics of alu_eval against pure-Python references written here."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpusim.arch.codes import (
    BOOL_AND,
    BOOL_OR,
    BOOL_XOR,
    CMP_EQ,
    CMP_GE,
    CMP_GT,
    CMP_HI,
    CMP_HS,
    CMP_LE,
    CMP_LO,
    CMP_LS,
    CMP_LT,
    CMP_NE,
    MOD_BOOL_SHIFT,
    MOD_CMP_SHIFT,
    MOD_MUL_SHIFT,
    MOD_PRMT_SHIFT,
    MOD_SAT,
    MOD_SHF_CLAMP,
    MOD_SHF_RIGHT,
    MOD_SHIFTAMT,
    MUL_HI,
    MUL_LO,
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
    OP_DIV,
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
    T_B16,
    T_B32,
    T_B64,
    T_F32,
    T_PRED,
    T_S16,
    T_S32,
    T_S64,
    T_U16,
    T_U32,
    T_U64,
)
from gpusim.engine.semantics.alu import alu_eval

SETTINGS = settings(
    max_examples=int(os.environ.get("GPUSIM_ALU_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
WIDTH = {T_U16: 16, T_S16: 16, T_B16: 16, T_U32: 32, T_S32: 32, T_B32: 32, T_U64: 64, T_S64: 64, T_B64: 64}
SIGNED = {T_S16, T_S32, T_S64}
INTEGER_TYPES = [T_U16, T_S16, T_U32, T_S32, T_U64, T_S64]


def run(op, ty, mods, a, b=0, c=0, d=0, ty2=0):
    u = np.uint64
    return int(alu_eval(op, ty, ty2, mods, u(a % 2**64), u(b % 2**64), u(c % 2**64), u(d % 2**64)))


def value_of(bits, ty):
    width = WIDTH[ty]
    bits &= (1 << width) - 1
    if ty in SIGNED and bits >> (width - 1):
        return bits - (1 << width)
    return bits


def bits_of(value, width):
    return value % (1 << width)


def edge_values(width):
    return [
        0,
        1,
        2,
        3,
        (1 << width) - 1,
        (1 << (width - 1)) - 1,
        1 << (width - 1),
        (1 << (width - 1)) + 1,
        (1 << width) - 2,
    ]


def operand(width):
    return st.one_of(
        st.integers(0, (1 << width) - 1), st.sampled_from(edge_values(width)), st.integers(0, 40)
    )


def truncating_divide(x, y):
    quotient = abs(x) // abs(y)
    return quotient if (x < 0) == (y < 0) else -quotient


@pytest.mark.parametrize("ty", INTEGER_TYPES)
@SETTINGS
@given(data=st.data())
def test_arithmetic_wraps(ty, data):
    width = WIDTH[ty]
    a = data.draw(operand(width)) | (data.draw(st.integers(0, 1)) << 63 if width < 64 else 0)  # garbage above
    b = data.draw(operand(width))
    x, y = value_of(a, ty), value_of(b, ty)
    assert run(OP_ADD, ty, 0, a, b) == bits_of(x + y, width)
    assert run(OP_SUB, ty, 0, a, b) == bits_of(x - y, width)
    assert run(OP_MUL, ty, MUL_LO << MOD_MUL_SHIFT, a, b) == bits_of(x * y, width)
    assert run(OP_MUL, ty, MUL_HI << MOD_MUL_SHIFT, a, b) == bits_of((x * y) >> width, width)
    if width < 64:
        assert run(OP_MUL, ty, MUL_WIDE << MOD_MUL_SHIFT, a, b) == bits_of(x * y, 2 * width)
        c = data.draw(operand(2 * width))
        assert run(OP_MAD, ty, MUL_WIDE << MOD_MUL_SHIFT, a, b, c) == bits_of(x * y + c, 2 * width)
    c = data.draw(operand(width))
    assert run(OP_MAD, ty, MUL_LO << MOD_MUL_SHIFT, a, b, c) == bits_of(x * y + c, width)
    assert run(OP_MAD, ty, MUL_HI << MOD_MUL_SHIFT, a, b, c) == bits_of(((x * y) >> width) + c, width)
    assert run(OP_MIN, ty, 0, a, b) == bits_of(min(x, y), width)
    assert run(OP_MAX, ty, 0, a, b) == bits_of(max(x, y), width)
    assert run(OP_NEG, ty, 0, a) == bits_of(-x, width)
    assert run(OP_ABS, ty, 0, a) == bits_of(abs(x), width)
    assert run(OP_SAD, ty, 0, a, b, c) == bits_of(value_of(c, ty) + abs(x - y), width)


@pytest.mark.parametrize("ty", INTEGER_TYPES)
@SETTINGS
@given(data=st.data())
def test_division(ty, data):
    width = WIDTH[ty]
    a = data.draw(operand(width))
    b = data.draw(operand(width))
    x, y = value_of(a, ty), value_of(b, ty)
    if y == 0:
        want_quotient = (1 << width) - 1 if ty not in SIGNED else bits_of(-1 if x >= 0 else 1, width)
        want_remainder = bits_of(x, width)
    else:
        quotient = truncating_divide(x, y)
        want_quotient = bits_of(quotient, width)
        want_remainder = bits_of(x - quotient * y, width)
    assert run(OP_DIV, ty, 0, a, b) == want_quotient
    assert run(OP_REM, ty, 0, a, b) == want_remainder


def test_division_edge_cases():
    int_min = 0x80000000
    minus_one = 0xFFFFFFFF
    assert run(OP_DIV, T_S32, 0, int_min, minus_one) == int_min
    assert run(OP_REM, T_S32, 0, int_min, minus_one) == 0
    assert run(OP_DIV, T_S64, 0, 1 << 63, 2**64 - 1) == 1 << 63
    assert run(OP_DIV, T_S32, 0, bits_of(-7, 32), 2) == bits_of(-3, 32)
    assert run(OP_REM, T_S32, 0, bits_of(-7, 32), 2) == bits_of(-1, 32)
    assert run(OP_REM, T_S32, 0, 7, bits_of(-2, 32)) == 1
    assert run(OP_DIV, T_U32, 0, 5, 0) == 0xFFFFFFFF
    assert run(OP_REM, T_U32, 0, 5, 0) == 5
    assert run(OP_ABS, T_S32, 0, int_min) == int_min


@SETTINGS
@given(a=operand(32), b=operand(32))
def test_saturating_add_sub_s32(a, b):
    x, y = value_of(a, T_S32), value_of(b, T_S32)
    clamp = lambda v: min(max(v, -(2**31)), 2**31 - 1)  # noqa: E731 - a one-line reference
    assert run(OP_ADD, T_S32, MOD_SAT, a, b) == bits_of(clamp(x + y), 32)
    assert run(OP_SUB, T_S32, MOD_SAT, a, b) == bits_of(clamp(x - y), 32)


@pytest.mark.parametrize("ty", [T_U32, T_S32])
@SETTINGS
@given(a=operand(32), b=operand(32), c=operand(32))
def test_mul24(ty, a, b, c):
    def low24(v):
        v &= 0xFFFFFF
        return v - (1 << 24) if ty == T_S32 and v >> 23 else v

    product = low24(a) * low24(b)
    assert run(OP_MUL24, ty, MUL_LO << MOD_MUL_SHIFT, a, b) == bits_of(product, 32)
    assert run(OP_MUL24, ty, MUL_HI << MOD_MUL_SHIFT, a, b) == bits_of(product >> 16, 32)
    assert run(OP_MAD24, ty, MUL_LO << MOD_MUL_SHIFT, a, b, c) == bits_of(product + c, 32)


@pytest.mark.parametrize("ty", [T_B16, T_B32, T_B64])
@SETTINGS
@given(data=st.data())
def test_logic_and_shifts(ty, data):
    width = WIDTH[ty]
    mask = (1 << width) - 1
    a = data.draw(operand(width))
    b = data.draw(operand(width))
    shift = data.draw(st.one_of(st.integers(0, width + 3), st.integers(0, 2**32 - 1)))
    assert run(OP_AND, ty, 0, a, b) == a & b
    assert run(OP_OR, ty, 0, a, b) == a | b
    assert run(OP_XOR, ty, 0, a, b) == a ^ b
    assert run(OP_NOT, ty, 0, a) == ~a & mask
    assert run(OP_CNOT, ty, 0, a) == (1 if a == 0 else 0)
    assert run(OP_SHL, ty, 0, a, shift) == ((a << shift) & mask if shift < width else 0)
    assert run(OP_SHR, ty, 0, a, shift) == (a >> shift if shift < width else 0)
    assert run(OP_POPC, ty, 0, a) == bin(a).count("1")
    assert run(OP_CLZ, ty, 0, a) == width - a.bit_length()
    assert run(OP_BREV, ty, 0, a) == int(format(a, f"0{width}b")[::-1], 2)


@pytest.mark.parametrize("ty", [T_S16, T_S32, T_S64])
@SETTINGS
@given(data=st.data())
def test_arithmetic_shift_right(ty, data):
    width = WIDTH[ty]
    a = data.draw(operand(width))
    shift = data.draw(st.one_of(st.integers(0, width + 3), st.integers(0, 2**32 - 1)))
    assert run(OP_SHR, ty, 0, a, shift) == bits_of(value_of(a, ty) >> min(shift, width - 1), width)


def test_predicate_logic():
    for a in (0, 1):
        for b in (0, 1):
            assert run(OP_AND, T_PRED, 0, a, b) == a & b
            assert run(OP_OR, T_PRED, 0, a, b) == a | b
            assert run(OP_XOR, T_PRED, 0, a, b) == a ^ b
        assert run(OP_NOT, T_PRED, 0, a) == 1 - a


def reference_bfe(a, position, length, ty):
    width = WIDTH[ty]
    msb = width - 1
    position &= 0xFF
    length &= 0xFF
    sign = 0
    if ty in SIGNED and length != 0:
        sign = (a >> min(position + length - 1, msb)) & 1
    result = 0
    for i in range(width):
        bit = (a >> (position + i)) & 1 if i < length and position + i <= msb else sign
        result |= bit << i
    return result


@pytest.mark.parametrize("ty", [T_U32, T_S32, T_U64, T_S64])
@SETTINGS
@given(data=st.data())
def test_bfe_bfi(ty, data):
    width = WIDTH[ty]
    a = data.draw(operand(width))
    b = data.draw(operand(width))
    position = data.draw(st.one_of(st.integers(0, width + 2), st.integers(0, 2**32 - 1)))
    length = data.draw(st.one_of(st.integers(0, width + 2), st.integers(0, 2**32 - 1)))
    assert run(OP_BFE, ty, 0, a, position, length) == reference_bfe(a, position, length, ty)
    bfi_type = T_B32 if width == 32 else T_B64
    field_position, field_length = position & 0xFF, length & 0xFF
    want = b
    for i in range(field_length):
        if field_position + i >= width:
            break
        bit = (a >> i) & 1
        want = (want & ~(1 << (field_position + i))) | (bit << (field_position + i))
    assert run(OP_BFI, bfi_type, 0, a, b, position, length) == want


def reference_prmt(a, b, selector, mode):
    source = list((a & 0xFFFFFFFF).to_bytes(4, "little") + (b & 0xFFFFFFFF).to_bytes(4, "little"))
    low = selector & 3
    tables = {
        1: [(low + i) % 8 for i in range(4)],
        2: [(low - i) % 8 for i in range(4)],
        3: [low] * 4,
        4: [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]][low],
        5: [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]][low],
        6: [[0, 1, 0, 1], [2, 3, 2, 3]][low & 1],
    }
    result = []
    for i in range(4):
        if mode == 0:
            nibble = (selector >> (4 * i)) & 0xF
            byte = source[nibble & 7]
            if nibble & 8:
                byte = 0xFF if byte & 0x80 else 0
        else:
            byte = source[tables[mode][i]]
        result.append(byte)
    return int.from_bytes(bytes(result), "little")


@pytest.mark.parametrize("mode", range(7))
@SETTINGS
@given(a=operand(32), b=operand(32), selector=st.integers(0, 0xFFFF))
def test_prmt(mode, a, b, selector):
    assert run(OP_PRMT, T_B32, mode << MOD_PRMT_SHIFT, a, b, selector) == reference_prmt(a, b, selector, mode)


@SETTINGS
@given(a=operand(32), b=operand(32), c=operand(32), lut=st.integers(0, 255))
def test_lop3(a, b, c, lut):
    want = 0
    for i in range(32):
        index = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1)
        want |= ((lut >> index) & 1) << i
    assert run(OP_LOP3, T_B32, 0, a, b, c, lut) == want


@SETTINGS
@given(a=operand(32), b=operand(32), amount=st.one_of(st.integers(0, 40), st.integers(0, 2**32 - 1)))
def test_funnel_shift(a, b, amount):
    joined = (b << 32) | a
    wrap = amount & 31
    clamp = min(amount, 32)
    assert run(OP_SHF, T_B32, 0, a, b, amount) == ((joined << wrap) >> 32) & 0xFFFFFFFF
    assert run(OP_SHF, T_B32, MOD_SHF_CLAMP, a, b, amount) == ((joined << clamp) >> 32) & 0xFFFFFFFF
    assert run(OP_SHF, T_B32, MOD_SHF_RIGHT, a, b, amount) == (joined >> wrap) & 0xFFFFFFFF
    assert run(OP_SHF, T_B32, MOD_SHF_RIGHT | MOD_SHF_CLAMP, a, b, amount) == (joined >> clamp) & 0xFFFFFFFF


@pytest.mark.parametrize("ty", [T_U32, T_S32, T_U64, T_S64])
@SETTINGS
@given(data=st.data())
def test_bfind(ty, data):
    width = WIDTH[ty]
    a = data.draw(operand(width))
    value = value_of(a, ty)
    search = ~value if value < 0 else value
    position = search.bit_length() - 1
    want = 0xFFFFFFFF if position < 0 else position
    assert run(OP_BFIND, ty, 0, a) == want
    assert run(OP_BFIND, ty, MOD_SHIFTAMT, a) == (0xFFFFFFFF if position < 0 else width - 1 - position)


@SETTINGS
@given(mask=operand(32), base=st.integers(0, 31), offset=st.integers(-33, 33))
def test_fns(mask, base, offset):
    want = 0xFFFFFFFF
    if offset == 0:
        want = base if (mask >> base) & 1 else want
    else:
        step = 1 if offset > 0 else -1
        positions = range(base, 32) if step > 0 else range(base, -1, -1)
        found = [p for p in positions if (mask >> p) & 1]
        if len(found) >= abs(offset):
            want = found[abs(offset) - 1]
    assert run(OP_FNS, T_B32, 0, mask, base, bits_of(offset, 32)) == want


COMPARISONS = {
    CMP_EQ: lambda x, y: x == y,
    CMP_NE: lambda x, y: x != y,
    CMP_LT: lambda x, y: x < y,
    CMP_LE: lambda x, y: x <= y,
    CMP_GT: lambda x, y: x > y,
    CMP_GE: lambda x, y: x >= y,
}
UNSIGNED_COMPARISONS = {
    CMP_LO: lambda x, y: x < y,
    CMP_LS: lambda x, y: x <= y,
    CMP_HI: lambda x, y: x > y,
    CMP_HS: lambda x, y: x >= y,
}


@pytest.mark.parametrize("ty", INTEGER_TYPES)
@SETTINGS
@given(data=st.data())
def test_setp_integer(ty, data):
    width = WIDTH[ty]
    a = data.draw(operand(width))
    b = data.draw(st.one_of(operand(width), st.just(a)))
    x, y = value_of(a, ty), value_of(b, ty)
    for comparison, relation in COMPARISONS.items():
        t = relation(x, y)
        assert run(OP_SETP, ty, comparison << MOD_CMP_SHIFT, a, b) == int(t) | (int(not t) << 1)
    for comparison, relation in UNSIGNED_COMPARISONS.items():
        t = relation(a, b)
        assert run(OP_SETP, ty, comparison << MOD_CMP_SHIFT, a, b) == int(t) | (int(not t) << 1)


def test_setp_boolean_combine():
    mods_lt = CMP_LT << MOD_CMP_SHIFT
    for t in (False, True):
        a, b = (1, 2) if t else (2, 1)
        for c in (0, 1):
            for operation, function in (
                (BOOL_AND, lambda p, q: p and q),
                (BOOL_OR, lambda p, q: p or q),
                (BOOL_XOR, lambda p, q: p != q),
            ):
                got = run(OP_SETP, T_S32, mods_lt | (operation << MOD_BOOL_SHIFT), a, b, c)
                assert got == int(function(t, bool(c))) | (int(function(not t, bool(c))) << 1)


def test_select_set_mov():
    assert run(OP_SELP, T_B32, 0, 11, 22, 1) == 11
    assert run(OP_SELP, T_B32, 0, 11, 22, 0) == 22
    assert run(OP_SLCT, T_B32, 0, 11, 22, bits_of(-1, 32), ty2=T_S32) == 22
    assert run(OP_SLCT, T_B32, 0, 11, 22, 0, ty2=T_S32) == 11
    assert run(OP_SLCT, T_B32, 0, 11, 22, 0x80000000, ty2=T_F32) == 11  # -0.0 >= 0
    assert run(OP_SLCT, T_B32, 0, 11, 22, 0x7FC00000, ty2=T_F32) == 22  # NaN is not >= 0
    assert run(OP_SET, T_U32, CMP_LT << MOD_CMP_SHIFT, 1, 2, ty2=T_S32) == 0xFFFFFFFF
    assert run(OP_SET, T_F32, CMP_LT << MOD_CMP_SHIFT, 1, 2, ty2=T_S32) == 0x3F800000
    assert run(OP_SET, T_U32, CMP_GT << MOD_CMP_SHIFT, 1, 2, ty2=T_S32) == 0
    assert run(OP_MOV, T_B64, 0, 0x123456789) == 0x123456789
