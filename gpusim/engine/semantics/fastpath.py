"""Warp-wide fast paths for the most frequent ALU forms.

The general path evaluates every lane through ``alu_eval`` (a dispatch per
lane). The forms compilers emit most often — 32/64-bit integer add, sub,
multiply(-add) low/wide, logic, shifts, moves, selp, setp, int<->int cvt, and
round-to-nearest f32 add/sub/mul/fma — are done here with the dispatch hoisted
out of the lane loop. Results are bit-identical to ``alu_eval`` (a test runs
both on random operands); anything with a modifier these loops do not handle
(.sat, .ftz, directed rounding, special-register sources) returns False and
takes the general path.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.bits import bits_from_f32, f32_from_bits, fused_multiply_add_f32
from gpusim.engine.jit import compiled_only, engine_jit

U32 = np.uint64(0xFFFFFFFF)
U0 = np.uint64(0)
U1 = np.uint64(1)
F32_NAN = np.uint64(0x7FFFFFFF)


@compiled_only
def _src(regs, kind, value, w, lane):
    if kind == L.SK_REG:
        return regs[w, value, lane]
    return np.uint64(value)


@compiled_only
def _f32_result(value):
    if value != value:
        return F32_NAN
    return np.uint64(bits_from_f32(value))


@compiled_only
def _cmp_int(cmp, a, b, signed):
    if signed:
        x = np.int64(a)
        y = np.int64(b)
        if cmp == c.CMP_EQ:
            return x == y
        if cmp == c.CMP_NE:
            return x != y
        if cmp == c.CMP_LT:
            return x < y
        if cmp == c.CMP_LE:
            return x <= y
        if cmp == c.CMP_GT:
            return x > y
        return x >= y
    if cmp == c.CMP_EQ:
        return a == b
    if cmp == c.CMP_NE:
        return a != b
    if cmp == c.CMP_LT or cmp == c.CMP_LO:
        return a < b
    if cmp == c.CMP_LE or cmp == c.CMP_LS:
        return a <= b
    if cmp == c.CMP_GT or cmp == c.CMP_HI:
        return a > b
    return a >= b


@compiled_only
def _cmp_f32(cmp, x, y):
    unordered = x != x or y != y
    if cmp == c.CMP_EQ:
        return x == y
    if cmp == c.CMP_NE:
        return x != y and not unordered
    if cmp == c.CMP_LT:
        return x < y
    if cmp == c.CMP_LE:
        return x <= y
    if cmp == c.CMP_GT:
        return x > y
    if cmp == c.CMP_GE:
        return x >= y
    if cmp == c.CMP_EQU:
        return unordered or x == y
    if cmp == c.CMP_NEU:
        return unordered or x != y
    if cmp == c.CMP_LTU:
        return unordered or x < y
    if cmp == c.CMP_LEU:
        return unordered or x <= y
    if cmp == c.CMP_GTU:
        return unordered or x > y
    if cmp == c.CMP_GEU:
        return unordered or x >= y
    if cmp == c.CMP_NUM:
        return not unordered
    return unordered


@compiled_only
def _sign_extend32(value):
    if value & np.uint64(0x80000000):
        return value | np.uint64(0xFFFFFFFF00000000)
    return value & U32


@engine_jit
def fast_alu(regs, row, w, mask):
    """Execute a common ALU form over the warp; False when the form needs the general path."""
    op = row[L.F_OP]
    ty = row[L.F_TY]
    mods = row[L.F_MODS]
    nsrc = row[L.F_NSRC]
    for i in range(nsrc):
        kind = row[L.F_SK0 + 2 * i]
        if kind != L.SK_REG and kind != L.SK_IMM:
            return False
    if row[L.F_VEC] != 1:
        return False
    k0 = row[L.F_SK0]
    v0 = row[L.F_SK0 + 1]
    k1 = row[L.F_SK0 + 2]
    v1 = row[L.F_SK0 + 3]
    k2 = row[L.F_SK0 + 4]
    v2 = row[L.F_SK0 + 5]
    d0 = row[L.F_DST0]
    if d0 < 0:
        return False
    size = c.TYPE_BYTES[ty]
    is_float = c.TYPE_FLOAT[ty] == 1
    if op == c.OP_MOV:
        for lane in range(32):
            if (mask >> lane) & 1:
                regs[w, d0, lane] = _src(regs, k0, v0, w, lane)
        return True
    if op == c.OP_SELP:
        for lane in range(32):
            if (mask >> lane) & 1:
                if _src(regs, k2, v2, w, lane) & U1:
                    regs[w, d0, lane] = _src(regs, k0, v0, w, lane)
                else:
                    regs[w, d0, lane] = _src(regs, k1, v1, w, lane)
        return True
    if ty == c.T_F32:
        return _fast_f32(regs, row, w, mask, op, mods, k0, v0, k1, v1, k2, v2, d0)
    if is_float or ty == c.T_PRED and op != c.OP_AND and op != c.OP_OR and op != c.OP_XOR:
        return False
    if size != 4 and size != 8 and ty != c.T_PRED:
        return False
    width_mask = U32 if size == 4 else np.uint64(0xFFFFFFFFFFFFFFFF)
    signed = c.TYPE_SIGNED[ty] == 1
    if op == c.OP_SETP:
        return _fast_int_setp(regs, row, w, mask, mods, size, signed, width_mask, k0, v0, k1, v1, d0)
    if op == c.OP_CVT:
        return _fast_cvt(regs, row, w, mask, mods, width_mask, k0, v0, d0)
    return _fast_int_arith(regs, w, mask, op, mods, size, signed, width_mask, k0, v0, k1, v1, k2, v2, d0)


@compiled_only(inline="always")
def _fast_f32(regs, row, w, mask, op, mods, k0, v0, k1, v1, k2, v2, d0):
    """fast_alu's f32 forms: setp, add/sub, mul, fma/mad (round to nearest, no ftz)."""
    rounding = (mods >> c.MOD_RND_SHIFT) & c.MOD_RND_MASK
    if op == c.OP_SETP:
        if (mods & c.MOD_FTZ) or ((mods >> c.MOD_BOOL_SHIFT) & c.MOD_BOOL_MASK) != 0:
            return False
        cmp = (mods >> c.MOD_CMP_SHIFT) & c.MOD_CMP_MASK
        d1 = row[L.F_DST0 + 1] if row[L.F_NDST] > 1 else -1
        for lane in range(32):
            if (mask >> lane) & 1:
                t = _cmp_f32(cmp, f32_from_bits(np.uint32(_src(regs, k0, v0, w, lane) & U32)),
                             f32_from_bits(np.uint32(_src(regs, k1, v1, w, lane) & U32)))
                regs[w, d0, lane] = U1 if t else U0
                if d1 >= 0:
                    regs[w, d1, lane] = U0 if t else U1
        return True
    if mods & ~(c.MOD_RND_MASK << c.MOD_RND_SHIFT) or (rounding != c.RND_DEFAULT and rounding != c.RND_RN):
        return False
    if op != c.OP_ADD and op != c.OP_SUB and op != c.OP_MUL and op != c.OP_FMA and op != c.OP_MAD:
        return False
    # one loop per operation: the dispatch stays out of the lane loop
    if op == c.OP_ADD or op == c.OP_SUB:
        sign = np.float32(-1.0) if op == c.OP_SUB else np.float32(1.0)
        for lane in range(32):
            if (mask >> lane) & 1:
                x = f32_from_bits(np.uint32(_src(regs, k0, v0, w, lane) & U32))
                y = f32_from_bits(np.uint32(_src(regs, k1, v1, w, lane) & U32))
                regs[w, d0, lane] = _f32_result(x + sign * y)
    elif op == c.OP_MUL:
        for lane in range(32):
            if (mask >> lane) & 1:
                x = f32_from_bits(np.uint32(_src(regs, k0, v0, w, lane) & U32))
                y = f32_from_bits(np.uint32(_src(regs, k1, v1, w, lane) & U32))
                regs[w, d0, lane] = _f32_result(x * y)
    else:
        for lane in range(32):
            if (mask >> lane) & 1:
                x = f32_from_bits(np.uint32(_src(regs, k0, v0, w, lane) & U32))
                y = f32_from_bits(np.uint32(_src(regs, k1, v1, w, lane) & U32))
                z = f32_from_bits(np.uint32(_src(regs, k2, v2, w, lane) & U32))
                regs[w, d0, lane] = _f32_result(fused_multiply_add_f32(x, y, z))
    return True


@compiled_only(inline="always")
def _fast_int_setp(regs, row, w, mask, mods, size, signed, width_mask, k0, v0, k1, v1, d0):
    """fast_alu's integer setp (no boolean combination)."""
    if ((mods >> c.MOD_BOOL_SHIFT) & c.MOD_BOOL_MASK) != 0:
        return False
    cmp = (mods >> c.MOD_CMP_SHIFT) & c.MOD_CMP_MASK
    d1 = row[L.F_DST0 + 1] if row[L.F_NDST] > 1 else -1
    for lane in range(32):
        if (mask >> lane) & 1:
            a = _src(regs, k0, v0, w, lane) & width_mask
            b = _src(regs, k1, v1, w, lane) & width_mask
            if signed and size == 4:
                a = _sign_extend32(a)
                b = _sign_extend32(b)
            t = _cmp_int(cmp, a, b, signed)
            regs[w, d0, lane] = U1 if t else U0
            if d1 >= 0:
                regs[w, d1, lane] = U0 if t else U1
    return True


@compiled_only(inline="always")
def _fast_cvt(regs, row, w, mask, mods, width_mask, k0, v0, d0):
    """fast_alu's integer-to-integer cvt (no rounding or saturation)."""
    ty2 = row[L.F_TY2]
    if mods != 0 or c.TYPE_FLOAT[ty2] == 1 or ty2 == c.T_PRED:
        return False
    src_size = c.TYPE_BYTES[ty2]
    if src_size != 4 and src_size != 8:
        return False
    for lane in range(32):
        if (mask >> lane) & 1:
            a = _src(regs, k0, v0, w, lane)
            if src_size == 4:
                a = _sign_extend32(a) if c.TYPE_SIGNED[ty2] == 1 else a & U32
            regs[w, d0, lane] = a & width_mask
    return True


@compiled_only(inline="always")
def _fast_int_arith(regs, w, mask, op, mods, size, signed, width_mask, k0, v0, k1, v1, k2, v2, d0):
    """fast_alu's integer arithmetic and logic: add, sub, mul and mad (lo, wide 32-bit), and, or, xor, shl, shr."""
    width = (mods >> c.MOD_MUL_SHIFT) & c.MOD_MUL_MASK
    if mods & ~(c.MOD_MUL_MASK << c.MOD_MUL_SHIFT):
        return False
    if (op == c.OP_MUL or op == c.OP_MAD) and width == c.MUL_WIDE:
        if size != 4:
            return False
        add = op == c.OP_MAD    # mad.wide (IMAD.WIDE: how addresses are computed) adds a 64-bit addend
        for lane in range(32):
            if (mask >> lane) & 1:
                a = _src(regs, k0, v0, w, lane)
                b = _src(regs, k1, v1, w, lane)
                if signed:
                    r = np.uint64(np.int64(_sign_extend32(a)) * np.int64(_sign_extend32(b)))
                else:
                    r = (a & U32) * (b & U32)
                if add:
                    r += _src(regs, k2, v2, w, lane)
                regs[w, d0, lane] = r
        return True
    if width == c.MUL_HI or width == c.MUL_WIDE:
        return False
    if not (op == c.OP_ADD or op == c.OP_SUB or op == c.OP_MUL or op == c.OP_MAD or op == c.OP_AND
            or op == c.OP_OR or op == c.OP_XOR or op == c.OP_SHL or op == c.OP_SHR):
        return False
    for lane in range(32):
        if (mask >> lane) & 1:
            a = _src(regs, k0, v0, w, lane)
            b = _src(regs, k1, v1, w, lane)
            if op == c.OP_ADD:
                r = a + b
            elif op == c.OP_SUB:
                r = a - b
            elif op == c.OP_MUL:
                r = a * b
            elif op == c.OP_MAD:
                r = a * b + _src(regs, k2, v2, w, lane)
            elif op == c.OP_AND:
                r = a & b
            elif op == c.OP_OR:
                r = a | b
            elif op == c.OP_XOR:
                r = a ^ b
            elif op == c.OP_SHL:
                shift = b & U32
                r = U0 if shift >= np.uint64(size * 8) else a << shift
            elif op == c.OP_SHR:
                shift = b & U32
                bits = np.uint64(size * 8)
                if signed:
                    value = _sign_extend32(a & width_mask) if size == 4 else a
                    if shift >= bits:
                        shift = bits - U1
                    r = np.uint64(np.int64(value) >> np.int64(shift))
                else:
                    r = U0 if shift >= bits else (a & width_mask) >> shift
            else:
                return False
            regs[w, d0, lane] = r & width_mask
    return True
