"""Functional semantics of Hopper's ``wgmma.mma_async`` (PTX ISA, "Asynchronous Warpgroup Level Matrix
Instructions"), executed per warp when the warp issues it. Called from ``step_warp``.

Per warp, exactly
    A warpgroup is four contiguous warps, the first a multiple of 4 in the CTA; warp ``q = warp % 4`` holds
    rows 16q..16q+15 of the 64 x N accumulator D (the ISA's figure for m64nNk*: the m16n8 mma.sync C layout
    repeated over N / 8 column blocks) and, when A is in registers, rows 16q..16q+15 of A. Its 16 rows of D
    depend only on its own 16 rows of A and on all of B, so each warp computes its part of the product when
    it issues (no state crosses warps); .aligned requires every warp to issue the same wgmma.

Fragments (g = lane >> 2, t = lane & 3; rows relative to 16q)
    D (f32 / s32: N/2 registers; f16: N/4 .f16x2, element 2j in the low half of register j): element i is
    row g + 8 ((i % 4) // 2), column 8 (i // 4) + 2 t + i % 2.
    A in registers (4 x 32 bits, e = 32 / element bits elements each, element 0 low): element i in register
    j = i // e is row g + 8 (j % 2), column t e + i % e + (K / 2)(j // 2) -- mma.sync's A layout.

Shared-memory descriptor (64 bits): start address (bits 0-13, >> 4), leading-dimension byte offset LBO
    (16-29, >> 4), stride-dimension byte offset SBO (32-45, >> 4), base offset (49-51), swizzle (62-63:
    0 none, 1 128 B, 2 64 B, 3 32 B). Element (x, k) of an operand (x: its M or N index; element size E,
    T = 16 / E elements per 16 bytes, swizzle width S bytes) sits at start + offset with the ISA's
    canonical layouts: K-major (imm-trans 0) without swizzle (x % 8) 16 + (x / 8) SBO + (k % T) E + (k / T) LBO,
    swizzled (x % 8) S + (x / 8) SBO + k E; MN-major (imm-trans 1) without swizzle
    (x % T) E + (x / T) SBO + (k % 8) 16 + (k / 8) LBO, swizzled (x % (S/E)) E + (x / (S/E)) LBO + (k % 8) S
    + (k / 8) SBO. A swizzle XORs address bits 4.. with bits 7.. (CuTe's Swizzle<3,4,3>, <2,4,3>, <1,4,3>),
    applied to the shared-memory address itself: the base-offset field restates the pattern's phase when it
    does not start at the repeat boundary, which the absolute address already gives, so it is not read.

Numerics: as mma.sync (``tensor.py``): products exact, D (unless scale-d is false) first, then k increasing,
summed in float64 and rounded once to the accumulator type; imm-scale-a/b = -1 negate A/B exactly.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.memops import error_kind, read_element, resolve
from gpusim.engine.semantics.operands import read_src
from gpusim.engine.semantics.racecheck import ACCESS_READ, race_access
from gpusim.engine.semantics.simt import STATUS_ERROR, STATUS_OK, fail
from gpusim.engine.semantics.tensor import element_bits, element_value, result_bits

A_BASE = 0          # scratch: this warp's 16 x K rows of A, then one column of B (K values)
B_BASE = 512
LOW16 = np.uint64(0xFFFF)


@compiled_only
def descriptor_address(lo, hi, x, k, esize, mn_major):
    """Shared-memory byte address of element (x, k) of the matrix a descriptor (``lo``/``hi``: its low and
    high 32 bits as int64) describes; x is the M or N index, k the K index (module docstring)."""
    start = (lo & 0x3FFF) << 4
    lbo = ((lo >> 16) & 0x3FFF) << 4
    sbo = (hi & 0x3FFF) << 4
    mode = (hi >> 30) & 3
    width = 0 if mode == 0 else (128 if mode == 1 else (64 if mode == 2 else 32))
    per16 = 16 // esize
    if width == 0:
        if mn_major:
            off = (x % per16) * esize + (x // per16) * sbo + (k % 8) * 16 + (k // 8) * lbo
        else:
            off = (x % 8) * 16 + (x // 8) * sbo + (k % per16) * esize + (k // per16) * lbo
        return start + off
    if mn_major:
        per_row = width // esize
        off = (x % per_row) * esize + (x // per_row) * lbo + (k % 8) * width + (k // 8) * sbo
    else:
        off = (x % 8) * width + (x // 8) * sbo + k * esize
    address = start + off
    return address ^ (((address >> 7) & (width // 16 - 1)) << 4)


@compiled_only(error_model="numpy")
def _load_operand(m, pc, w, lo, hi, x, k, ty, mn_major, negate, racing):
    """The value of element (x, k) of a descriptor's matrix, or NaN after recording an error."""
    ebits = element_bits(ty)
    esize = ebits // 8
    address = descriptor_address(lo, hi, x, k, esize, mn_major)
    space, offset = resolve(m, L.SP_SHARED, address, esize, esize, False)
    if space < 0:
        fail(m, error_kind(offset), pc, w, 0, address)
        return np.nan
    bslot = m.warp_bslot[w]
    if racing:
        race_access(m, w, 0, pc, bslot, offset, esize, ACCESS_READ, np.uint64(0))
    value = element_value(read_element(m, L.SP_SHARED, offset, esize, bslot, 0), ty)
    return -value if negate else value


@compiled_only(error_model="numpy")
def _gather_a(m, row, pc, w, q, k_depth, racing):
    """This warp's rows 16q..16q+15 of A into the scratch; False after an error."""
    aty = row[L.F_TY2]
    flags = row[L.F_TC_FLAGS]
    negate = (flags & L.TC_WG_NEG_A) != 0
    scratch = m.tensor_scratch
    if flags & L.TC_WG_A_REGS:
        ebits = element_bits(aty)
        epr = 32 // ebits
        mask = (np.uint64(1) << np.uint64(ebits)) - np.uint64(1)
        for lane in range(32):
            g = lane >> 2
            t = lane & 3
            for i in range(4 * epr):
                j = i // epr
                r = g + 8 * (j % 2)
                col = t * epr + i % epr + (k_depth // 2) * (j // 2)
                word = read_src(m, row, j, w, lane)
                value = element_value((word >> np.uint64((i % epr) * ebits)) & mask, aty)
                scratch[A_BASE + r * k_depth + col] = -value if negate else value
        return True
    desc = read_src(m, row, 0, w, 0)
    lo = np.int64(desc & np.uint64(0xFFFFFFFF))
    hi = np.int64(desc >> np.uint64(32))
    mn_major = (flags & L.TC_WG_TRANS_A) != 0
    for r in range(16):
        for k in range(k_depth):
            value = _load_operand(m, pc, w, lo, hi, 16 * q + r, k, aty, mn_major, negate, racing)
            if np.isnan(value) and m.err[S.E_KIND] != S.ERR_NONE:
                return False
            scratch[A_BASE + r * k_depth + k] = value
    return True


@compiled_only
def _d_register(row, i):
    return np.int64((row[L.F_TC_DLIST + i // 4] >> (16 * (i % 4))) & 0xFFFF)


@compiled_only(error_model="numpy")
def _accumulate(m, row, w, col, k_depth, accumulate):
    """Columns ``col`` of this warp's 16 rows of D, from A and B's column ``col`` in the scratch."""
    dty = row[L.F_TY]
    wide = dty != c.T_F16
    saturate = (row[L.F_MODS] & c.MOD_SAT) != 0
    scratch = m.tensor_scratch
    t = (col % 8) // 2
    for r in range(16):
        lane = (r % 8) * 4 + t
        i = 4 * (col // 8) + 2 * (r // 8) + col % 2
        reg = _d_register(row, i if wide else i // 2)
        old = m.regs[w, reg, lane]
        shift = np.uint64(0 if wide else 16 * (i % 2))
        acc = 0.0
        if accumulate:
            acc = element_value((old >> shift) & (LOW16 if not wide else np.uint64(0xFFFFFFFF)), dty)
        for k in range(k_depth):
            acc += scratch[A_BASE + r * k_depth + k] * scratch[B_BASE + k]
        bits = result_bits(acc, dty, saturate)
        if wide:
            m.regs[w, reg, lane] = bits
        else:
            m.regs[w, reg, lane] = (old & ~(LOW16 << shift)) | ((bits & LOW16) << shift)


@compiled_only(error_model="numpy")
def exec_wgmma(m, row, pc, w):
    """wgmma.mma_async for warp ``w``'s 16 rows (module docstring); sets the request the timing model reads
    (the tensor pipe, the operand bytes read from shared memory, the warp's open wgmma group)."""
    shape = row[L.F_TC_SHAPE]
    n_cols = shape >> 8
    k_depth = shape & 0xFF
    flags = row[L.F_TC_FLAGS]
    q = m.warp_index[w] % 4
    racing = m.launch[S.L_RACECHECK] != 0
    if not _gather_a(m, row, pc, w, q, k_depth, racing):
        return STATUS_ERROR
    b_src = 1 if (flags & L.TC_WG_A_REGS) == 0 else 4
    desc = read_src(m, row, b_src, w, 0)
    lo = np.int64(desc & np.uint64(0xFFFFFFFF))
    hi = np.int64(desc >> np.uint64(32))
    bty = row[L.F_TC_BTYPE]
    mn_major = (flags & L.TC_WG_TRANS_B) != 0
    negate = (flags & L.TC_WG_NEG_B) != 0
    accumulate = (read_src(m, row, b_src + 1, w, 0) & np.uint64(1)) != 0
    for col in range(n_cols):
        for k in range(k_depth):
            value = _load_operand(m, pc, w, lo, hi, col, k, bty, mn_major, negate, racing)
            if np.isnan(value) and m.err[S.E_KIND] != S.ERR_NONE:
                return STATUS_ERROR
            m.tensor_scratch[B_BASE + k] = value
        _accumulate(m, row, w, col, k_depth, accumulate)
    esize_a = element_bits(row[L.F_TY2]) // 8
    esize_b = element_bits(bty) // 8
    a_bytes = 0 if (flags & L.TC_WG_A_REGS) != 0 else 16 * k_depth * esize_a
    req = m.mem_req
    req[S.MR_SPACE] = L.SP_SHARED
    req[S.MR_KIND] = S.MK_WGMMA
    req[S.MR_SIZE] = n_cols
    req[S.MR_MASK] = 0xFFFFFFFF
    # B is read once per warpgroup and shared by its four warps: a quarter of it is this warp's
    req[S.MR_BYTES] = a_bytes + n_cols * k_depth * esize_b // 4
    return STATUS_OK
