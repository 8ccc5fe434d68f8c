"""Functional execution of ld / st / atom / red over a warp: every lane's address resolved and checked
before any lane reads or writes, then the accesses in lane order (``step_warp`` calls ``exec_memory``;
``step_fast`` takes 4-byte global words through ``_word_addresses`` / ``_word_access``; ``step_shared``
takes shared accesses of 4-byte elements through ``_shared_word_addresses`` / ``_shared_word_access`` and
parameter loads through ``_param_address_ok`` / ``_param_load``).

For the timing model it leaves the per-lane resolved offsets in ``m.lane_addr`` and a summary (space,
kind, size, mask, bytes) in ``m.mem_req``. Simplified: a warp's lanes that resolve generic addresses to
different spaces are timed as the first lane's space; the accesses themselves are exact per lane.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.memops import (
    atomic_update,
    error_kind,
    extend_loaded,
    read_element,
    resolve_noting,
    write_element,
)
from gpusim.engine.semantics.operands import read_src
from gpusim.engine.semantics.racecheck import ACCESS_ATOMIC, race_access, race_instruction
from gpusim.engine.semantics.simt import STATUS_OK, fail

U64_0 = np.uint64(0)
U32_MASK = np.uint64(0xFFFFFFFF)


@compiled_only
def _word_addresses(regs, valid, heap_bytes, lane_addr, w, mask, base, offset, is_load):
    """Resolve a 4-byte global access of every lane of ``mask`` into ``lane_addr`` (heap offsets).
    Returns ``(-1, 0, 0)``, or ``(lane, error kind, address)`` of the first lane that may not access it
    (a load of bytes never written is one with initcheck: ``valid`` 1)."""
    for lane in range(32):
        if (mask >> lane) & 1:
            address = offset
            if base >= 0:
                address = np.int64(regs[w, base, lane]) + offset
            if address & 3:
                return lane, S.ERR_MISALIGNED, address
            word = address - L.GLOBAL_BASE
            if word < 0 or word > heap_bytes - 4 or valid[word] == 0 or valid[word + 3] == 0:
                return lane, S.ERR_OUT_OF_BOUNDS, address
            if is_load and (valid[word] == 1 or valid[word + 3] == 1):
                return lane, S.ERR_UNINITIALIZED, address
            lane_addr[lane] = word
    return -1, 0, 0


@compiled_only
def _word_access(regs, mem32, valid, lane_addr, mem_req, row, w, mask, is_load):
    """Perform a checked 4-byte global load or store (register or immediate source) and summarise it."""
    mem_req[S.MR_SPACE] = L.SP_GLOBAL
    mem_req[S.MR_SIZE] = 4
    mem_req[S.MR_VEC] = 1
    mem_req[S.MR_MASK] = mask
    mem_req[S.MR_BYTES] = 4
    if is_load:
        mem_req[S.MR_KIND] = S.MK_LOAD
        if row[L.F_MODS] & L.MEM_NO_L1:    # ld.global.cg / .cv: timed without L1
            mem_req[S.MR_ASYNC] = S.ASYNC_NO_L1
        d = row[L.F_DST0]
        if d >= 0:
            for lane in range(32):
                if (mask >> lane) & 1:
                    regs[w, d, lane] = np.uint64(mem32[lane_addr[lane] >> 2])
        return
    mem_req[S.MR_KIND] = S.MK_STORE
    kind = row[L.F_SK0]
    value = row[L.F_SK0 + 1]
    for lane in range(32):
        if (mask >> lane) & 1:
            bits = regs[w, value, lane] if kind == L.SK_REG else np.uint64(value)
            word = lane_addr[lane]
            mem32[word >> 2] = np.uint32(bits & U32_MASK)
            if valid[word] != 2 or valid[word + 3] != 2:
                valid[word:word + 4] = 2


@compiled_only
def _is_word_access(row, op):
    """A scalar 4-byte ld/st.global whose stored value (if any) is a register or an immediate (not a
    ``.v2.u16``/``.v4.u8`` vector of the same total size: those move one element per register)."""
    if op != c.OP_LD and op != c.OP_ST:
        return False
    if row[L.F_SPACE] != L.SP_GLOBAL or row[L.F_SIZE] != 4 or row[L.F_VEC] != 1:
        return False
    if row[L.F_MODS] & L.MEM_DST64:     # ld.s32 into a 64-bit register: sign-extended by exec_memory
        return False
    return op == c.OP_LD or row[L.F_SK0] == L.SK_REG or row[L.F_SK0] == L.SK_IMM


@compiled_only
def _is_shared_word_access(row, op):
    """An ld/st.shared of 4-byte elements (scalar, ``.v2`` or ``.v4``: LDS, LDS.64, LDS.128) whose stored
    values (if any) are registers or immediates, not widened into a 64-bit register."""
    if op != c.OP_LD and op != c.OP_ST:
        return False
    if row[L.F_SPACE] != L.SP_SHARED or row[L.F_SIZE] != 4 or row[L.F_MODS] & L.MEM_DST64:
        return False
    vec = row[L.F_VEC]
    if vec != 1 and vec != 2 and vec != 4:
        return False
    if op == c.OP_ST:
        for k in range(vec):
            kind = row[L.F_SK0 + 2 * k]
            if kind != L.SK_REG and kind != L.SK_IMM:
                return False
    return True


@compiled_only
def _is_param_load(row, op):
    """An ld.param of 4- or 8-byte elements (scalar, ``.v2``, ``.v4``) at an immediate address, not widened
    into a 64-bit register: how a kernel reads its parameters (LDC from the constant bank)."""
    if op != c.OP_LD or row[L.F_SPACE] != L.SP_PARAM or row[L.F_ABASE] >= 0 or row[L.F_MODS] & L.MEM_DST64:
        return False
    size = row[L.F_SIZE]
    vec = row[L.F_VEC]
    return (size == 4 or size == 8) and (vec == 1 or vec == 2 or vec == 4)


@compiled_only
def _param_address_ok(row, param_bytes):
    """Whether an ld.param ``_is_param_load`` accepts is aligned and inside the parameters (if not,
    ``exec_memory`` reports it)."""
    total = row[L.F_SIZE] * row[L.F_VEC]
    offset = row[L.F_AOFF]
    return offset % total == 0 and 0 <= offset <= param_bytes - total


@compiled_only
def _param_load(regs, param32, param64, lane_addr, mem_req, row, w, mask):
    """Perform an ld.param ``_is_param_load`` and ``_param_address_ok`` accept on every lane of ``mask`` and
    summarise it in ``mem_req`` as ``exec_memory`` does."""
    size = row[L.F_SIZE]
    vec = row[L.F_VEC]
    total = size * vec
    offset = row[L.F_AOFF]
    mem_req[S.MR_SPACE] = L.SP_PARAM
    mem_req[S.MR_SIZE] = size
    mem_req[S.MR_VEC] = vec
    mem_req[S.MR_MASK] = mask
    mem_req[S.MR_BYTES] = total
    mem_req[S.MR_KIND] = S.MK_LOAD
    for lane in range(32):
        if (mask >> lane) & 1:
            lane_addr[lane] = offset
            for k in range(vec):
                d = row[L.F_DST0 + k]
                if d >= 0:
                    if size == 4:
                        regs[w, d, lane] = np.uint64(param32[(offset >> 2) + k])
                    else:
                        regs[w, d, lane] = param64[(offset >> 3) + k]


@compiled_only
def _shared_word_addresses(regs, lane_addr, row, w, mask, shared_bytes):
    """Resolve an access ``_is_shared_word_access`` accepts for every lane of ``mask`` into ``lane_addr``
    (byte offsets in the block's shared memory). False when a lane's address is misaligned or not inside
    the declared shared memory: ``exec_memory`` then reports it, or notes an access inside the allocation
    granule."""
    total = 4 * row[L.F_VEC]
    base = row[L.F_ABASE]
    offset = row[L.F_AOFF]
    addr32 = (row[L.F_MODS] & L.MEM_ADDR32) != 0
    for lane in range(32):
        if (mask >> lane) & 1:
            address = offset
            if base >= 0:
                address = np.int64(regs[w, base, lane]) + offset
                if addr32:
                    address &= 0xFFFFFFFF
            if address % total != 0 or address < 0 or address > shared_bytes - total:
                return False
            lane_addr[lane] = address
    return True


@compiled_only
def _shared_word_access(regs, shared32, lane_addr, mem_req, row, w, mask, bslot, is_load):
    """Perform a resolved (``_shared_word_addresses``) shared access of 4-byte elements in lane order, in a
    launch without clusters or racecheck, and summarise it in ``mem_req``."""
    vec = row[L.F_VEC]
    mem_req[S.MR_SPACE] = L.SP_SHARED
    mem_req[S.MR_SIZE] = 4
    mem_req[S.MR_VEC] = vec
    mem_req[S.MR_MASK] = mask
    mem_req[S.MR_BYTES] = 4 * vec
    words = shared32[bslot]
    if is_load:
        mem_req[S.MR_KIND] = S.MK_LOAD
        for lane in range(32):
            if (mask >> lane) & 1:
                first = lane_addr[lane] >> 2
                for k in range(vec):
                    d = row[L.F_DST0 + k]
                    if d >= 0:
                        regs[w, d, lane] = np.uint64(words[first + k])
        return
    mem_req[S.MR_KIND] = S.MK_STORE
    for lane in range(32):
        if (mask >> lane) & 1:
            first = lane_addr[lane] >> 2
            for k in range(vec):
                kind = row[L.F_SK0 + 2 * k]
                value = row[L.F_SK0 + 2 * k + 1]
                bits = regs[w, value, lane] if kind == L.SK_REG else np.uint64(value)
                words[first + k] = np.uint32(bits & U32_MASK)


@compiled_only
def exec_memory(m, row, pc, w, mask):
    """ld / st / atom / red on every lane of ``mask``; returns a status. With no lane on, nothing is
    accessed and no request is made (``count_issue`` left ``MR_KIND`` 0): the instruction issues, and
    nothing reaches L1 or shared memory."""
    if mask == 0:
        return STATUS_OK
    op = row[L.F_OP]
    ty = row[L.F_TY]
    size = row[L.F_SIZE]
    vec = row[L.F_VEC]
    base = row[L.F_ABASE]
    offset = row[L.F_AOFF]
    space = row[L.F_SPACE]
    bslot = m.warp_bslot[w]
    total = size * vec
    if _is_word_access(row, op):
        lane, kind, address = _word_addresses(m.regs, m.valid, m.launch[S.L_HEAP_BYTES], m.lane_addr, w, mask,
                                              base, offset, op == c.OP_LD)
        if lane < 0:
            _word_access(m.regs, m.mem32, m.valid, m.lane_addr, m.mem_req, row, w, mask, op == c.OP_LD)
            return STATUS_OK
        if kind != S.ERR_UNINITIALIZED:
            return fail(m, kind, pc, w, lane, address)
        # initcheck found a never-written word: the general path below notes every lane's
    first_space = -1
    addr32 = (row[L.F_MODS] & L.MEM_ADDR32) != 0
    # pass 1: resolve and check every lane
    for lane in range(32):
        if (mask >> lane) & 1:
            address = offset
            if base >= 0:
                address = np.int64(m.regs[w, base, lane]) + offset
                if addr32:
                    address &= 0xFFFFFFFF
            got_space, got_offset = resolve_noting(m, space, address, total, total, op != c.OP_ST, pc, w, lane)
            if got_space < 0:
                return fail(m, error_kind(got_offset), pc, w, lane, address)
            if first_space < 0:
                first_space = got_space   # mixed generic spaces: timed as the first lane's; each lane
            m.lane_addr[lane] = got_offset
            m.snap[lane] = np.uint64(got_space)
    req = m.mem_req
    req[S.MR_SPACE] = first_space
    req[S.MR_SIZE] = size
    req[S.MR_VEC] = vec
    req[S.MR_MASK] = mask
    req[S.MR_BYTES] = total
    # pass 2: perform the accesses in lane order
    if m.launch[S.L_RACECHECK] != 0 and op != c.OP_ATOM and op != c.OP_RED:
        race_instruction(m, row, w, pc, bslot, mask, size, vec, op == c.OP_ST)
    if op == c.OP_LD:
        req[S.MR_KIND] = S.MK_LOAD
        if row[L.F_MODS] & L.MEM_NO_L1:    # ld.global.cg / .cv (lowered on .global only): timed without L1
            req[S.MR_ASYNC] = S.ASYNC_NO_L1
        sign64 = (row[L.F_MODS] & L.MEM_DST64) != 0 and c.TYPE_SIGNED[ty] == 1
        for lane in range(32):
            if (mask >> lane) & 1:
                lane_space = np.int64(m.snap[lane])
                row_index = w * 32 + lane
                for k in range(vec):
                    d = row[L.F_DST0 + k]
                    value = read_element(m, lane_space, m.lane_addr[lane] + k * size, size, bslot, row_index)
                    if d >= 0:
                        value = extend_loaded(value, ty, size)
                        if sign64 and value >> np.uint64(31):
                            value |= np.uint64(0xFFFFFFFF00000000)
                        m.regs[w, d, lane] = value
    elif op == c.OP_ST:
        req[S.MR_KIND] = S.MK_STORE
        for lane in range(32):
            if (mask >> lane) & 1:
                lane_space = np.int64(m.snap[lane])
                row_index = w * 32 + lane
                for k in range(vec):
                    value = read_src(m, row, k, w, lane)
                    write_element(m, lane_space, m.lane_addr[lane] + k * size, size, bslot, row_index, value)
    else:
        req[S.MR_KIND] = S.MK_ATOMIC
        _atomic_lanes(m, row, pc, op, ty, size, bslot, w, mask)
    return STATUS_OK


@compiled_only
def _atomic_lanes(m, row, pc, op, ty, size, bslot, w, mask):
    """exec_memory's pass 2 for atom / red: each lane's read-modify-write, in lane order (racecheck sees a
    shared-memory one as an atomic access)."""
    aux = row[L.F_AUX]
    d0 = row[L.F_DST0] if op == c.OP_ATOM else -1
    racing = m.launch[S.L_RACECHECK] != 0
    for lane in range(32):
        if (mask >> lane) & 1:
            lane_space = np.int64(m.snap[lane])
            if racing and lane_space == L.SP_SHARED:
                race_access(m, w, lane, pc, bslot, m.lane_addr[lane], size, ACCESS_ATOMIC, U64_0)
            row_index = w * 32 + lane
            old = read_element(m, lane_space, m.lane_addr[lane], size, bslot, row_index)
            b = read_src(m, row, 0, w, lane)
            cv = read_src(m, row, 1, w, lane) if aux == L.ATOM_CAS else U64_0
            new = atomic_update(aux, ty, old, b, cv)
            write_element(m, lane_space, m.lane_addr[lane], size, bslot, row_index, new)
            if d0 >= 0:
                m.regs[w, d0, lane] = old
