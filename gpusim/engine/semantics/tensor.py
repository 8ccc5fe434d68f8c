"""Functional semantics of the tensor-core instructions (issue 14), warp-wide: ``mma.sync``,
``ldmatrix``/``stmatrix``, ``cp.async`` (the copy happens at issue; the timing model makes the warp wait
only at ``cp.async.wait_group``), ``wmma.load``/``wmma.mma``/``wmma.store``. Called from ``step_warp``.

Fragment layouts
    mma.sync: the PTX ISA's per-lane tables ("Matrix Fragments for mma.m16n8k*"), with
    ``g = lane >> 2`` (groupID) and ``t = lane & 3`` (threadID_in_group), ``e`` elements per 32-bit register
    (2 for f16/bf16, 1 for tf32, 4 for 8-bit types, element 0 in the low bits), element ``i`` in register
    ``j = i // e``: A[g + 8 (j % 2)][t e + i % e + (K / 2)(j // 2)], B[t e + i % e + (K / 2) j][g],
    C/D element ``i`` of 4 at [g + 8 (i // 2)][2 t + i % 2] (f16 C/D: two per register).
    wmma (NVIDIA leaves it unspecified; gpusim's, used by load, mma and store alike): a fragment of an
    R x C matrix with S element slots per lane holds in slot ``s`` of lane ``l`` the element
    ``p = (l S + s) mod (R C)`` of the matrix in row-major order (r = p // C, c = p % C), whatever the
    memory layout; fragments larger than the matrix (f16 A/B) repeat it.

Numerics (both families)
    Each product is exact (every input format fits float64's significand twice over); C first, then the
    K products in increasing k, are summed in float64 and the sum is rounded once to the accumulator
    format with round-to-nearest-even (f32: IEEE single; f16: IEEE half). Integer paths are exact in
    int64-valued float64 (|sum| < 2**53), then wrap modulo 2**32, or clamp to s32 with ``.satfinite``.
    tf32 inputs ignore an f32's low 13 bits. Hardware truncates in places instead; the difference is at
    most one unit in the last place of the f32 result (docs/tensor-cores.md).
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.bits import bits_from_f32, f32_from_bits
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.alu_float import narrow
from gpusim.engine.semantics.alu_round import format_bits_to_f64
from gpusim.engine.semantics.alu_tensor_types import fp8_value
from gpusim.engine.semantics.memops import error_kind, read_element, resolve, resolve_noting, write_element
from gpusim.engine.semantics.operands import read_src
from gpusim.engine.semantics.racecheck import ACCESS_READ, ACCESS_WRITE, race_access
from gpusim.engine.semantics.simt import STATUS_OK, fail
from gpusim.engine.semantics.wgmma_groups import wgmma_commit, wgmma_wait

U64_ZERO = np.uint64(0)
LOW32 = np.uint64(0xFFFFFFFF)
A_BASE = 0          # scratch: A at 0, B at 512, C at 1024 (float64, row-major)
B_BASE = 512
C_BASE = 1024
SCRATCH = 1536


@compiled_only
def element_bits(ty):
    if ty == c.T_F16 or ty == c.T_BF16:
        return 16
    if ty == c.T_S8 or ty == c.T_U8 or ty == c.T_E4M3 or ty == c.T_E5M2:
        return 8
    return 32


@compiled_only(error_model="numpy")
def element_value(bits, ty):
    """The exact value of one fragment element's bits."""
    if ty == c.T_F16 or ty == c.T_BF16:
        return format_bits_to_f64(bits & np.uint64(0xFFFF), ty)
    if ty == c.T_TF32:
        return np.float64(f32_from_bits(bits & np.uint64(0xFFFFE000)))
    if ty == c.T_F32:
        return np.float64(f32_from_bits(bits & LOW32))
    if ty == c.T_E4M3 or ty == c.T_E5M2:
        return fp8_value(bits, ty == c.T_E4M3)
    if ty == c.T_S8:
        v = np.int64(bits & np.uint64(0xFF))
        return np.float64(v - 256 if v >= 128 else v)
    if ty == c.T_U8:
        return np.float64(bits & np.uint64(0xFF))
    v = np.int64(bits & LOW32)
    return np.float64(v - (1 << 32) if v >= (1 << 31) else v)


@compiled_only(error_model="numpy")
def result_bits(value, ty, saturate):
    """An accumulated float64 value as the bits of the accumulator type (one rounding, to nearest even)."""
    if ty == c.T_F32:
        return bits_from_f32(np.float32(value))
    if ty == c.T_F16:
        return narrow(value, 0, c.RND_RN, c.T_F16) & np.uint64(0xFFFF)
    v = np.int64(value)
    if saturate:
        v = min(max(v, -(1 << 31)), (1 << 31) - 1)
    return np.uint64(v & 0xFFFFFFFF)


@compiled_only(error_model="numpy")
def multiply_accumulate(scratch, m_rows, n_cols, k_depth, r, col):
    """C[r][col] + sum_k A[r][k] B[k][col] in float64, C first, k increasing."""
    acc = scratch[C_BASE + r * n_cols + col]
    for k in range(k_depth):
        acc += scratch[A_BASE + r * k_depth + k] * scratch[B_BASE + k * n_cols + col]
    return acc


@compiled_only
def _fragment_bits(m, row, first_src, w, lane, i, epr, ebits):
    """Bits of element ``i`` of a fragment whose registers start at source ``first_src``."""
    word = read_src(m, row, first_src + i // epr, w, lane)
    shift = np.uint64((i % epr) * ebits)
    mask = (np.uint64(1) << np.uint64(ebits)) - np.uint64(1)
    return (word >> shift) & mask


@compiled_only(error_model="numpy")
def exec_mma(m, row, w):
    """mma.sync.aligned.m16n8kK.row.col (module docstring)."""
    shape = row[L.F_TC_SHAPE]
    n_cols = (shape >> 8) & 0xFF
    k_depth = shape & 0xFF
    m_rows = shape >> 16
    dty = row[L.F_TY]
    aty = row[L.F_TY2]
    bty = row[L.F_TC_BTYPE]
    cty = row[L.F_TC_CTYPE]
    saturate = (row[L.F_MODS] & c.MOD_SAT) != 0
    eba = element_bits(aty)
    ebb = element_bits(bty)
    epa = 32 // eba
    epb = 32 // ebb
    na = m_rows * k_depth * eba // 1024
    nb = k_depth * n_cols * ebb // 1024
    wide_c = cty == c.T_F32 or cty == c.T_S32
    half_k = k_depth // 2
    scratch = m.tensor_scratch
    for lane in range(32):
        g = lane >> 2
        t = lane & 3
        for i in range(na * epa):
            j = i // epa
            r = g + 8 * (j % 2)
            col = t * epa + i % epa + half_k * (j // 2)
            scratch[A_BASE + r * k_depth + col] = element_value(_fragment_bits(m, row, 0, w, lane, i, epa, eba), aty)
        for i in range(nb * epb):
            j = i // epb
            kk = t * epb + i % epb + half_k * j
            scratch[B_BASE + kk * n_cols + g] = element_value(_fragment_bits(m, row, na, w, lane, i, epb, ebb), bty)
        for i in range(4):
            r = g + 8 * (i // 2)
            col = 2 * t + i % 2
            if wide_c:
                bits = read_src(m, row, na + nb + i, w, lane)
            else:
                bits = _fragment_bits(m, row, na + nb, w, lane, i, 2, 16)
            scratch[C_BASE + r * n_cols + col] = element_value(bits, cty)
    wide_d = dty == c.T_F32 or dty == c.T_S32
    for lane in range(32):
        g = lane >> 2
        t = lane & 3
        packed0 = U64_ZERO
        packed1 = U64_ZERO
        for i in range(4):
            r = g + 8 * (i // 2)
            col = 2 * t + i % 2
            bits = result_bits(multiply_accumulate(scratch, m_rows, n_cols, k_depth, r, col), dty, saturate)
            if wide_d:
                d = row[L.F_DST0 + i]
                if d >= 0:
                    m.regs[w, d, lane] = bits
            elif i < 2:
                packed0 |= bits << np.uint64(16 * i)
            else:
                packed1 |= bits << np.uint64(16 * (i - 2))
        if not wide_d:
            if row[L.F_DST0] >= 0:
                m.regs[w, row[L.F_DST0], lane] = packed0
            if row[L.F_DST0 + 1] >= 0:
                m.regs[w, row[L.F_DST0 + 1], lane] = packed1


@compiled_only
def _lane_address(m, row, w, lane):
    address = row[L.F_AOFF]
    base = row[L.F_ABASE]
    if base >= 0:
        address = np.int64(m.regs[w, base, lane]) + address
        if row[L.F_MODS] & L.MEM_ADDR32:
            address &= 0xFFFFFFFF
    return address


@compiled_only
def _memory_summary(m, space, kind, mask, nbytes):
    req = m.mem_req
    req[S.MR_SPACE] = space
    req[S.MR_SIZE] = nbytes
    req[S.MR_VEC] = 1
    req[S.MR_KIND] = kind
    req[S.MR_MASK] = mask
    req[S.MR_BYTES] = nbytes


@compiled_only
def exec_ldmatrix(m, row, pc, w, store):
    """ldmatrix/stmatrix .m8n8.x{1,2,4}{.trans}.shared.b16: lanes 8j..8j+7 give the row addresses of
    matrix j; lane l's register j holds row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of matrix j (with
    .trans, column l / 4, rows 2 (l % 4) and +1). The timing request is the 8 x count row addresses,
    16 bytes each."""
    count = row[L.F_TC_COUNT]
    trans = (row[L.F_TC_FLAGS] & L.TC_TRANS) != 0
    bslot = m.warp_bslot[w]
    n_rows = 8 * count
    for lane in range(n_rows):
        address = _lane_address(m, row, w, lane)
        space, offset = resolve(m, L.SP_SHARED, address, 16, 16, False)
        if space < 0:
            return fail(m, error_kind(offset), pc, w, lane, address)
        m.lane_addr[lane] = offset
    racing = m.launch[S.L_RACECHECK] != 0
    if racing and not store:
        for lane in range(n_rows):
            race_access(m, w, lane, pc, bslot, m.lane_addr[lane], 16, ACCESS_READ, U64_ZERO)
    for lane in range(32):
        for j in range(count):
            value = U64_ZERO
            for half in range(2):
                if trans:
                    r = 2 * (lane & 3) + half
                    col = lane >> 2
                else:
                    r = lane >> 2
                    col = 2 * (lane & 3) + half
                address = m.lane_addr[8 * j + r] + 2 * col
                if store:
                    word = read_src(m, row, j, w, lane)
                    half_bits = (word >> np.uint64(16 * half)) & np.uint64(0xFFFF)
                    if racing:
                        race_access(m, w, lane, pc, bslot, address, 2, ACCESS_WRITE, half_bits)
                    write_element(m, L.SP_SHARED, address, 2, bslot, 0, half_bits)
                else:
                    value |= read_element(m, L.SP_SHARED, address, 2, bslot, 0) << np.uint64(16 * half)
            if not store:     # written after every lane has read (a destination may be an address register)
                m.tensor_scratch[j * 32 + lane] = np.float64(value)
    if not store:
        for j in range(count):
            d = row[L.F_DST0 + j]
            if d >= 0:
                for lane in range(32):
                    m.regs[w, d, lane] = np.uint64(m.tensor_scratch[j * 32 + lane])
    _memory_summary(m, L.SP_SHARED, S.MK_STORE if store else S.MK_LOAD, (1 << n_rows) - 1, 16)
    return STATUS_OK


@compiled_only
def exec_cp_async(m, row, pc, w, mask):
    """cp.async: copy src-size bytes global -> shared per lane now, zero-fill to the copy size."""
    size = row[L.F_SIZE]
    bslot = m.warp_bslot[w]
    any_read = 0
    for lane in range(32):
        if (mask >> lane) & 1:
            dst = _lane_address(m, row, w, lane)
            src = np.int64(read_src(m, row, 0, w, lane)) + row[L.F_TC_SRC_OFFSET]
            src_size = np.int64(read_src(m, row, 1, w, lane) & LOW32)
            if src_size > size:
                src_size = size
            dspace, doff = resolve(m, L.SP_SHARED, dst, size, size, False)
            if dspace < 0:
                return fail(m, error_kind(doff), pc, w, lane, dst)
            m.snap[lane] = np.uint64(doff)
            m.lane_addr[lane] = -1
            if src_size > 0:
                sspace, soff = resolve_noting(m, L.SP_GLOBAL, src, src_size, size if src_size == size else 1, True,
                                              pc, w, lane)
                if sspace < 0:
                    return fail(m, error_kind(soff), pc, w, lane, src)
                m.lane_addr[lane] = soff
                any_read |= 1 << lane
    racing = m.launch[S.L_RACECHECK] != 0
    for lane in range(32):
        if (mask >> lane) & 1:
            doff = np.int64(m.snap[lane])
            soff = m.lane_addr[lane]
            for byte in range(size):
                value = U64_ZERO
                if soff >= 0 and byte < np.int64(read_src(m, row, 1, w, lane) & LOW32):
                    value = read_element(m, L.SP_GLOBAL, soff + byte, 1, bslot, 0)
                if racing:
                    race_access(m, w, lane, pc, bslot, doff + byte, 1, ACCESS_WRITE, value)
                write_element(m, L.SP_SHARED, doff + byte, 1, bslot, 0, value)
    _memory_summary(m, L.SP_GLOBAL, S.MK_LOAD if any_read != 0 else 0, any_read, size)
    if any_read != 0:
        m.mem_req[S.MR_ASYNC] = S.ASYNC_COPY | (S.ASYNC_NO_L1 if (row[L.F_TC_FLAGS] & L.TC_BYPASS_L1) != 0 else 0)
    return STATUS_OK


@compiled_only
def _wmma_address(row, base, ldm, r, col, esize):
    if row[L.F_TC_FLAGS] & L.TC_COL_MAJOR:
        return base + (col * ldm + r) * esize
    return base + (r * ldm + col) * esize


@compiled_only
def _wmma_timing_request(m, row, ldm, space_offset_base, rows, cols, esize):
    """The footprint of a WMMA load/store as up to 32 'virtual lanes' of <= 32 contiguous bytes each (one
    per piece of each row, or column when .col), for the coalescer / bank model."""
    col_major = (row[L.F_TC_FLAGS] & L.TC_COL_MAJOR) != 0
    lines = cols if col_major else rows
    line_bytes = (rows if col_major else cols) * esize
    chunk = min(32, line_bytes)
    per_line = line_bytes // chunk
    n = 0
    for i in range(lines):
        for j in range(per_line):
            if n < 32:
                m.lane_addr[n] = space_offset_base + i * ldm * esize + j * chunk
                n += 1
    return n, chunk


@compiled_only
def exec_wmma_memory(m, row, pc, w, store):
    """wmma.load.{a,b,c} / wmma.store.d with gpusim's fragment layout (module docstring)."""
    shape = row[L.F_TC_SHAPE]
    rows = shape >> 16
    cols = (shape >> 8) & 0xFF
    nregs = row[L.F_TC_COUNT]
    esize = row[L.F_SIZE]
    ebits = esize * 8
    epr = 32 // ebits
    slots = nregs * epr
    total = rows * cols
    space = row[L.F_SPACE]
    bslot = m.warp_bslot[w]
    stride_src = nregs if store else 0
    first_space = -1
    first_offset = 0
    first_ldm = 0
    racing = m.launch[S.L_RACECHECK] != 0
    for lane in range(32):
        base = _lane_address(m, row, w, lane)
        ldm = np.int64(read_src(m, row, stride_src, w, lane) & LOW32)
        for s in range(slots):
            p = (lane * slots + s) % total
            address = _wmma_address(row, base, ldm, p // cols, p % cols, esize)
            got_space, offset = resolve_noting(m, space, address, esize, esize, not store, pc, w, lane)
            if got_space < 0:
                return fail(m, error_kind(offset), pc, w, lane, address)
            if lane == 0 and s == 0:
                first_space = got_space
                first_ldm = ldm
                first_offset = offset - (address - base)
            if store:
                word = read_src(m, row, s // epr, w, lane)
                value = (word >> np.uint64((s % epr) * ebits)) & ((np.uint64(1) << np.uint64(ebits)) - np.uint64(1))
                if racing and got_space == L.SP_SHARED:
                    race_access(m, w, lane, pc, bslot, offset, esize, ACCESS_WRITE, value)
                write_element(m, got_space, offset, esize, bslot, w * 32 + lane, value)
            else:
                if racing and got_space == L.SP_SHARED:
                    race_access(m, w, lane, pc, bslot, offset, esize, ACCESS_READ, U64_ZERO)
                value = read_element(m, got_space, offset, esize, bslot, w * 32 + lane)
                m.tensor_scratch[lane * slots + s] = np.float64(value)
    if not store:
        for lane in range(32):
            for j in range(nregs):
                word = U64_ZERO
                for e in range(epr):
                    bits = np.uint64(m.tensor_scratch[lane * slots + j * epr + e])
                    word |= bits << np.uint64(e * ebits)
                d = row[L.F_DST0 + j]
                if d >= 0:
                    m.regs[w, d, lane] = word
    n, chunk = _wmma_timing_request(m, row, first_ldm, first_offset, rows, cols, esize)
    _memory_summary(m, first_space, S.MK_STORE if store else S.MK_LOAD, (1 << n) - 1, chunk)
    return STATUS_OK


@compiled_only(error_model="numpy")
def _wmma_gather(m, row, w, first_src, nregs, ty, rows, cols, base):
    """Matrix elements of a fragment (element p from lane p // S, slot p % S) into the scratch at base."""
    ebits = element_bits(ty)
    epr = 32 // ebits
    slots = nregs * epr
    for p in range(rows * cols):
        lane = p // slots
        s = p % slots
        m.tensor_scratch[base + p] = element_value(_fragment_bits(m, row, first_src, w, lane, s, epr, ebits), ty)


@compiled_only(error_model="numpy")
def exec_wmma_mma(m, row, w):
    shape = row[L.F_TC_SHAPE]
    m_rows = shape >> 16
    n_cols = (shape >> 8) & 0xFF
    k_depth = shape & 0xFF
    counts = row[L.F_TC_COUNT]
    na = counts & 0xFF
    nb = (counts >> 8) & 0xFF
    nc = (counts >> 16) & 0xFF
    nd = (counts >> 24) & 0xFF
    dty = row[L.F_TY]
    saturate = (row[L.F_MODS] & c.MOD_SAT) != 0
    _wmma_gather(m, row, w, 0, na, row[L.F_TY2], m_rows, k_depth, A_BASE)
    _wmma_gather(m, row, w, na, nb, row[L.F_TC_BTYPE], k_depth, n_cols, B_BASE)
    _wmma_gather(m, row, w, na + nb, nc, row[L.F_TC_CTYPE], m_rows, n_cols, C_BASE)
    ebits = element_bits(dty)
    epr = 32 // ebits
    slots = nd * epr
    total = m_rows * n_cols
    for lane in range(32):
        for j in range(nd):
            word = U64_ZERO
            for e in range(epr):
                p = (lane * slots + j * epr + e) % total
                value = multiply_accumulate(m.tensor_scratch, m_rows, n_cols, k_depth, p // n_cols, p % n_cols)
                word |= result_bits(value, dty, saturate) << np.uint64(e * ebits)
            d = row[L.F_DST0 + j]
            if d >= 0:
                m.regs[w, d, lane] = word


@compiled_only
def tensor_op(m, row, pc, w, mask):
    """Execute tensor instruction ``row`` for warp ``w``; returns a STATUS_* code. cp.async.commit_group
    and wait_group have no functional effect: they become requests of their own kinds for the timing
    model, which keeps the groups (``async_timing.async_copy_groups``)."""
    op = row[L.F_OP]
    if mask == 0:
        return STATUS_OK
    if op == c.OP_MMA:
        exec_mma(m, row, w)
        return STATUS_OK
    if op == c.OP_LDMATRIX or op == c.OP_STMATRIX:
        return exec_ldmatrix(m, row, pc, w, op == c.OP_STMATRIX)
    if op == c.OP_CP_ASYNC:
        return exec_cp_async(m, row, pc, w, mask)
    if op == c.OP_WMMA_LOAD or op == c.OP_WMMA_STORE:
        return exec_wmma_memory(m, row, pc, w, op == c.OP_WMMA_STORE)
    if op == c.OP_WMMA_MMA:
        exec_wmma_mma(m, row, w)
    elif op == c.OP_CP_COMMIT:
        m.mem_req[S.MR_KIND] = S.MK_BULK_COMMIT if (row[L.F_TC_FLAGS] & L.TC_BULK) != 0 else S.MK_ASYNC_COMMIT
        if row[L.F_TC_FLAGS] & L.TC_WGMMA:      # wgmma.commit_group: the wgmma groups (semantics/wgmma.py)
            m.mem_req[S.MR_ASYNC] = S.ASYNC_WGMMA
            wgmma_commit(m, w, row[L.F_SIZE], mask)
    elif op == c.OP_CP_WAIT:
        m.mem_req[S.MR_KIND] = S.MK_BULK_WAIT if (row[L.F_TC_FLAGS] & L.TC_BULK) != 0 else S.MK_ASYNC_WAIT
        m.mem_req[S.MR_SIZE] = row[L.F_AUX]
        m.mem_req[S.MR_VEC] = 1 if (row[L.F_TC_FLAGS] & L.TC_WAIT_ALL) != 0 else 0
        if row[L.F_TC_FLAGS] & L.TC_WGMMA:      # the warpgroup's groups (semantics/wgmma_groups.py)
            m.mem_req[S.MR_ASYNC] = S.ASYNC_WGMMA
            return wgmma_wait(m, w, row[L.F_SIZE], row[L.F_AUX])
        if row[L.F_TC_FLAGS] & L.TC_READ:       # cp.async.bulk.wait_group.read: the sources read
            m.mem_req[S.MR_ASYNC] = S.ASYNC_READ
    return STATUS_OK
