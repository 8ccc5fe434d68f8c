"""The warp-wide fast paths give exactly what the per-lane ALU gives, on random operands."""

import numpy as np
import pytest

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.semantics.alu import alu_eval
from gpusim.engine.semantics.fastpath import fast_alu

RNG = np.random.default_rng(7)

INT_TYPES = (c.T_U32, c.T_S32, c.T_B32, c.T_U64, c.T_S64, c.T_B64)
INT_OPS = (c.OP_ADD, c.OP_SUB, c.OP_AND, c.OP_OR, c.OP_XOR, c.OP_SHL, c.OP_SHR)
CASES = (
    [(op, ty, 0, 0) for op in INT_OPS for ty in INT_TYPES]
    + [(c.OP_MUL, ty, 0, c.MUL_LO << c.MOD_MUL_SHIFT) for ty in INT_TYPES]
    + [(c.OP_MAD, ty, 0, c.MUL_LO << c.MOD_MUL_SHIFT) for ty in INT_TYPES]
    + [(op, ty, 0, c.MUL_WIDE << c.MOD_MUL_SHIFT) for op in (c.OP_MUL, c.OP_MAD) for ty in (c.T_U32, c.T_S32)]
    + [(c.OP_SETP, ty, 0, cmp << c.MOD_CMP_SHIFT) for ty in INT_TYPES
       for cmp in (c.CMP_EQ, c.CMP_NE, c.CMP_LT, c.CMP_LE, c.CMP_GT, c.CMP_GE)]
    + [(c.OP_SETP, ty, 0, cmp << c.MOD_CMP_SHIFT) for ty in (c.T_U32, c.T_U64)
       for cmp in (c.CMP_LO, c.CMP_LS, c.CMP_HI, c.CMP_HS)]
    + [(c.OP_SETP, c.T_F32, 0, cmp << c.MOD_CMP_SHIFT) for cmp in range(1, 19) if cmp not in range(7, 11)]
    + [(op, c.T_F32, 0, rnd) for op in (c.OP_ADD, c.OP_SUB, c.OP_MUL, c.OP_FMA) for rnd in (0, c.RND_RN)]
    + [(c.OP_CVT, dst, src, 0) for dst in INT_TYPES for src in INT_TYPES]
    + [(c.OP_MOV, c.T_B32, 0, 0), (c.OP_SELP, c.T_U32, 0, 0), (c.OP_SELP, c.T_F32, 0, 0)]
)


def _operands(ty: int) -> np.ndarray:
    """Random raw bits with edge values mixed in."""
    size = c.TYPE_BYTES[ty]
    values = RNG.integers(0, 1 << 63, size=(3, 32), dtype=np.uint64) * np.uint64(2) + RNG.integers(
        0, 2, size=(3, 32), dtype=np.uint64)
    edges = np.array([0, 1, 31, 32, 33, 63, 64, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x7F800000, 0x7FC00001,
                      0xFF800000, 0x80000000, 1 << 63, (1 << 64) - 1], dtype=np.uint64)
    values[:, : len(edges)] = edges
    values[1, 16:] = RNG.integers(0, 80, size=16, dtype=np.uint64)   # shift amounts in range
    if size == 4:
        values &= np.uint64(0xFFFFFFFF)
    return values


@pytest.mark.parametrize("op,ty,ty2,mods", CASES)
def test_fast_path_matches_alu_eval(op, ty, ty2, mods):
    n_src = 3
    row = np.zeros(L.N_FIELDS, dtype=np.int64)
    row[L.F_OP], row[L.F_TY], row[L.F_TY2], row[L.F_MODS] = op, ty, ty2, mods
    row[L.F_NDST] = 2 if op == c.OP_SETP else 1
    row[L.F_DST0], row[L.F_DST0 + 1] = 3, 4 if op == c.OP_SETP else -1
    row[L.F_VEC] = 1
    row[L.F_NSRC] = n_src
    for i in range(n_src):
        row[L.F_SK0 + 2 * i] = L.SK_REG
        row[L.F_SK0 + 2 * i + 1] = i
    regs = np.zeros((1, 5, 32), dtype=np.uint64)
    regs[0, :3] = _operands(ty2 if op == c.OP_CVT else ty)
    if op == c.OP_SELP:
        regs[0, 2] &= np.uint64(1)
    if op == c.OP_MAD and mods == c.MUL_WIDE << c.MOD_MUL_SHIFT:
        regs[0, 2] = _operands(c.T_U64)[2]     # mad.wide's addend is 64-bit
    mask = 0xFFFF7FFF    # one inactive lane must be left alone
    assert fast_alu(regs, row, 0, mask)
    for lane in range(32):
        if not (mask >> lane) & 1:
            assert regs[0, 3, lane] == 0
            continue
        a, b, cc = (regs[0, i, lane] for i in range(3))
        expect = alu_eval(op, ty, ty2, mods, a, b, cc, np.uint64(0))
        if op == c.OP_SETP:
            assert regs[0, 3, lane] == expect & np.uint64(1), (lane, a, b)
            assert regs[0, 4, lane] == (expect >> np.uint64(1)) & np.uint64(1)
        else:
            assert regs[0, 3, lane] == expect, (lane, hex(a), hex(b), hex(cc))


def test_fast_path_declines_what_it_does_not_handle():
    row = np.zeros(L.N_FIELDS, dtype=np.int64)
    row[L.F_OP], row[L.F_TY], row[L.F_MODS] = c.OP_ADD, c.T_F32, c.MOD_FTZ
    row[L.F_NDST], row[L.F_DST0], row[L.F_VEC], row[L.F_NSRC] = 1, 2, 1, 2
    row[L.F_SK0], row[L.F_SK0 + 2] = L.SK_REG, L.SK_REG
    regs = np.zeros((1, 3, 32), dtype=np.uint64)
    assert not fast_alu(regs, row, 0, 0xFFFFFFFF)
    row[L.F_MODS] = 0
    row[L.F_SK0] = L.SK_SPECIAL
    assert not fast_alu(regs, row, 0, 0xFFFFFFFF)
