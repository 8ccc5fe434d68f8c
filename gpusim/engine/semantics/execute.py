"""Functional execution of one warp-instruction: the semantics both the
functional loop and the timing loop call at issue time.

``step_warp`` reads the warp's top SIMT entry, evaluates the guard predicate,
runs the instruction on every active lane (ALU ops through
``gpusim.engine.semantics.alu.alu_eval``; memory, control and warp-wide ops here), moves
the SIMT stack and returns a status. For memory instructions it leaves the
per-lane resolved addresses in ``m.lane_addr`` and a summary in ``m.mem_req``
for the timing model. All lanes' addresses are checked before any lane
writes, so a faulting instruction leaves memory as it was before it.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.bits import popcount64
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.alu import alu_eval
from gpusim.engine.semantics.barrier_reduce import RED_PHASE, barrier_reduce
from gpusim.engine.semantics.barriers import ARRIVE_ONLY
from gpusim.engine.semantics.calls import exec_call, exec_return, exec_vprintf
from gpusim.engine.semantics.cluster_ops import RETRY
from gpusim.engine.semantics.fastpath import fast_alu
from gpusim.engine.semantics.hopper import hopper_op
from gpusim.engine.semantics.its import (
    ITS_BLOCKED,
    ITS_GO_ON,
    ITS_OVERFLOW,
    back_edge,
    its_bar,
    its_warp_op,
    its_warpsync,
    warpsync_missing,
)
from gpusim.engine.semantics.memory_exec import (
    _is_param_load,
    _is_shared_word_access,
    _is_word_access,
    _param_address_ok,
    _param_load,
    _shared_word_access,
    _shared_word_addresses,
    _word_access,
    _word_addresses,
    exec_memory,
)
from gpusim.engine.semantics.operands import read_src
from gpusim.engine.semantics.racecheck import race_barrier
from gpusim.engine.semantics.simt import (
    STATUS_BARRIER,
    STATUS_ERROR,
    STATUS_EXITED,
    STATUS_MEMBAR,
    STATUS_OK,
    STATUS_SLEEP,
    branch,
    exit_lanes,
    fail,
    normalize,
)
from gpusim.engine.semantics.synccheck import barrier_check, exit_check, real_lanes
from gpusim.engine.semantics.tensor import tensor_op
from gpusim.engine.semantics.texture import exec_texture
from gpusim.engine.semantics.warpops import warp_op
from gpusim.engine.semantics.wgmma import exec_wgmma

U64_0 = np.uint64(0)
U32_MASK = np.uint64(0xFFFFFFFF)


@compiled_only
def guard_mask(regs, row, w, active):
    g = row[L.F_GUARD]
    if g < 0:
        return active
    want = np.uint64(0) if row[L.F_GUARD_NEG] else np.uint64(1)
    mask = 0
    for lane in range(32):
        if (active >> lane) & 1 and (regs[w, g, lane] & np.uint64(1)) == want:
            mask |= 1 << lane
    return mask


@compiled_only
def exec_alu(m, row, w, mask):
    op = row[L.F_OP]
    ty = row[L.F_TY]
    ty2 = row[L.F_TY2]
    mods = row[L.F_MODS]
    nsrc = row[L.F_NSRC]
    ndst = row[L.F_NDST]
    d0 = row[L.F_DST0]
    vec = row[L.F_VEC]
    if op == c.OP_MOV and vec > 1:
        elem_bits = np.uint64(c.TYPE_BYTES[ty2] * 8)
        elem_mask = (np.uint64(1) << elem_bits) - np.uint64(1)
        for lane in range(32):
            if (mask >> lane) & 1:
                if nsrc > 1:      # pack {a, b, ...} into d
                    value = U64_0
                    for i in range(nsrc):
                        value |= (read_src(m, row, i, w, lane) & elem_mask) << (elem_bits * np.uint64(i))
                    m.regs[w, d0, lane] = value
                else:             # unpack a into {d0, d1, ...}
                    value = read_src(m, row, 0, w, lane)
                    for i in range(ndst):
                        d = row[L.F_DST0 + i]
                        if d >= 0:
                            m.regs[w, d, lane] = (value >> (elem_bits * np.uint64(i))) & elem_mask
        return
    d1 = row[L.F_DST0 + 1] if ndst > 1 else -1
    for lane in range(32):
        if (mask >> lane) & 1:
            a = read_src(m, row, 0, w, lane) if nsrc > 0 else U64_0
            b = read_src(m, row, 1, w, lane) if nsrc > 1 else U64_0
            cc = read_src(m, row, 2, w, lane) if nsrc > 2 else U64_0
            d = read_src(m, row, 3, w, lane) if nsrc > 3 else U64_0
            result = alu_eval(op, ty, ty2, mods, a, b, cc, d)
            if op == c.OP_SETP:
                if d0 >= 0:
                    m.regs[w, d0, lane] = result & np.uint64(1)
                if d1 >= 0:
                    m.regs[w, d1, lane] = (result >> np.uint64(1)) & np.uint64(1)
            elif d0 >= 0:
                m.regs[w, d0, lane] = result


@compiled_only
def exec_cvta(m, row, w, mask):
    to_space = row[L.F_AUX] == 1
    space = row[L.F_SPACE]
    window = np.uint64(0)
    if space == L.SP_SHARED:
        window = np.uint64(L.SHARED_WINDOW)
    elif space == L.SP_LOCAL:
        window = np.uint64(L.LOCAL_WINDOW)
    elif space == L.SP_PARAM:
        window = np.uint64(L.PARAM_WINDOW)
    narrow = c.TYPE_BYTES[row[L.F_TY]] == 4
    d = row[L.F_DST0]
    for lane in range(32):
        if (mask >> lane) & 1:
            a = read_src(m, row, 0, w, lane)
            value = a - window if to_space else a + window
            if narrow:
                value &= U32_MASK
            m.regs[w, d, lane] = value


@compiled_only
def count_issue(pc_counts, mem_req, pc, active, mask):
    """Count the warp-instruction at ``pc`` (threads active, predicated on) and start its request summary."""
    n_active = popcount64(np.uint64(active))
    n_on = popcount64(np.uint64(mask))
    pc_counts[pc, 0] += 1
    pc_counts[pc, 1] += n_active
    pc_counts[pc, 2] += n_on
    mem_req[S.MR_ACTIVE] = n_active
    mem_req[S.MR_PRED_ON] = n_on
    mem_req[S.MR_KIND] = 0
    mem_req[S.MR_PC] = pc


@compiled_only
def step_fast(regs, sps, stk_pc, stk_rpc, stk_mask, pc_counts, mem_req, valid, mem32, lane_addr, heap_bytes, code,
              w):
    """``step_warp`` for the most frequent instructions (the fast-path ALU forms, branches, nops and 4-byte
    global loads and stores), taking only
    the arrays they touch: a call that passes the whole Machine copies ~300 words of arguments, more than
    such an instruction costs to execute. Returns a STATUS_* code, or -1 with nothing done when the
    instruction needs ``step_warp``."""
    sp = sps[w]
    pc = stk_pc[w, sp]
    active = stk_mask[w, sp]
    row = code[pc]
    op = row[L.F_OP]
    if op == c.OP_BRA:
        if row[L.F_MODS] != 0 and sp > 0:
            return -1          # ITS: a diverged group's back edge (its.back_edge), in step_warp
        mask = guard_mask(regs, row, w, active)
        if mask != active and mask != 0 and sp + 2 >= stk_pc.shape[1]:
            return -1          # a divergence that overflows the stack: step_warp reports it
        count_issue(pc_counts, mem_req, pc, active, mask)
        branch(sps, stk_pc, stk_rpc, stk_mask, w, pc, row[L.F_TARGET], row[L.F_RECONV], mask, active)
        return STATUS_OK if sps[w] >= 0 else STATUS_EXITED
    if _is_word_access(row, op):
        mask = guard_mask(regs, row, w, active)
        lane, _, _ = _word_addresses(regs, valid, heap_bytes, lane_addr, w, mask, row[L.F_ABASE], row[L.F_AOFF],
                                     op == c.OP_LD)
        if lane >= 0:
            return -1          # a bad address: step_warp reports it
        count_issue(pc_counts, mem_req, pc, active, mask)
        if mask != 0:          # with no lane on there is no request (nothing reaches L1)
            _word_access(regs, mem32, valid, lane_addr, mem_req, row, w, mask, op == c.OP_LD)
    elif op == c.OP_NOP:
        if row[L.F_AUX] == L.NOP_WARPSYNC:
            return -1
        count_issue(pc_counts, mem_req, pc, active, guard_mask(regs, row, w, active))
    else:
        if op > c.OP_LAST_ALU:
            return -1
        mask = guard_mask(regs, row, w, active)
        if not fast_alu(regs, row, w, mask):
            return -1
        count_issue(pc_counts, mem_req, pc, active, mask)
    stk_pc[w, sp] = pc + 1
    if normalize(sps, stk_pc, stk_rpc, stk_mask, w) < 0:
        return STATUS_EXITED
    return STATUS_OK


@compiled_only
def step_shared(regs, sps, stk_pc, stk_rpc, stk_mask, pc_counts, mem_req, lane_addr, launch, shared32, warp_bslot,
                param32, param64, code, w):
    """``step_warp`` for shared loads and stores of 4-byte elements (LDS, LDS.64, LDS.128 and their stores)
    and for parameter loads at an immediate address, tried when ``step_fast`` declined; like it, it takes
    only the arrays it touches (``exec_memory``'s per-lane helpers take the whole Machine). Returns a
    STATUS_* code, or -1 with nothing done when the instruction needs ``step_warp`` (a cluster launch,
    racecheck, or an address to report or note)."""
    if launch[S.L_CLUSTER] != 0 or launch[S.L_RACECHECK] != 0:
        return -1
    sp = sps[w]
    pc = stk_pc[w, sp]
    row = code[pc]
    op = row[L.F_OP]
    is_param = _is_param_load(row, op)
    if not is_param and not _is_shared_word_access(row, op):
        return -1
    active = stk_mask[w, sp]
    mask = guard_mask(regs, row, w, active)
    if mask != 0:              # with no lane on there is no request (no wavefront)
        if is_param:
            if not _param_address_ok(row, launch[S.L_PARAM_BYTES]):
                return -1
        elif not _shared_word_addresses(regs, lane_addr, row, w, mask, launch[S.L_SHARED_BYTES]):
            return -1
    count_issue(pc_counts, mem_req, pc, active, mask)
    if mask != 0:
        if is_param:
            _param_load(regs, param32, param64, lane_addr, mem_req, row, w, mask)
        else:
            _shared_word_access(regs, shared32, lane_addr, mem_req, row, w, mask, warp_bslot[w], op == c.OP_LD)
    stk_pc[w, sp] = pc + 1
    if normalize(sps, stk_pc, stk_rpc, stk_mask, w) < 0:
        return STATUS_EXITED
    return STATUS_OK


@compiled_only
def _its_stop(m, result, pc, w):
    """The status of an ITS warp-synchronous instruction that did not complete: the group waits (another
    is on top now), or an error."""
    if result == ITS_BLOCKED:
        return STATUS_OK
    if result == ITS_OVERFLOW:
        return fail(m, S.ERR_STACK_OVERFLOW, pc, w, 0, 0)
    return fail(m, S.ERR_SYNC, pc, w, m.err[S.E_LANE], m.err[S.E_ADDRESS])


_GO_ON = -1
"""(from a step's helper) not a status: the instruction completed, step_warp moves the warp on"""


@compiled_only
def _exec_exit(m, pc, w, sp, mask):
    """exit/ret of the kernel for the lanes of ``mask``; returns the step's status."""
    if mask == 0:
        m.stk_pc[w, sp] = pc + 1
        normalize(m.sp, m.stk_pc, m.stk_rpc, m.stk_mask, w)
        return STATUS_OK
    top = exit_lanes(m, w, pc, mask)
    if top < 0:
        return STATUS_EXITED if exit_check(m, w) == STATUS_OK else STATUS_ERROR
    return STATUS_OK


@compiled_only
def _exec_warp_sync_op(m, code, row, op, pc, w, mask):
    """A warp-synchronous operation (shfl ... redux) or bar.warp.sync: ``_GO_ON``, or the status the step
    stops with (an error, or where independent thread scheduling parks the warp's groups)."""
    if op >= c.OP_SHFL and op <= c.OP_REDUX:
        bad = warp_op(m, row, w, mask)
        if bad >= 0:
            if m.launch[S.L_RECONVERGENCE] != S.RECONV_ITS or m.err[S.E_SUB] != S.SYNC_INACTIVE_MEMBER:
                return fail(m, S.ERR_SYNC, pc, w, bad, m.err[S.E_ADDRESS])
            result = its_warp_op(m, code, row, pc, w, mask)
            if result != ITS_GO_ON:
                return _its_stop(m, result, pc, w)
        return _GO_ON
    if m.launch[S.L_RECONVERGENCE] == S.RECONV_ITS:
        result = its_warpsync(m, code, row, pc, w, mask)
        if result != ITS_GO_ON:
            return _its_stop(m, result, pc, w)
    elif mask != 0 and warpsync_missing(m, row, w, mask) != 0:
        # IPDOM: lanes meet only where the stack reconverges; named lanes elsewhere never arrive here
        return fail(m, S.ERR_SYNC, pc, w, m.err[S.E_LANE], m.err[S.E_ADDRESS])
    return _GO_ON


@compiled_only
def _arrival(m, code, pc, w, mask, counted):
    """synccheck and racecheck as warp ``w`` arrives at a barrier with ``mask`` (``counted``: the barrier
    names a thread count, which synccheck leaves alone); -1 when synccheck stops the kernel, else 0."""
    if not counted and barrier_check(m, code, pc, w, mask) != STATUS_OK:
        return -1
    if m.launch[S.L_RACECHECK] != 0:
        race_barrier(m, w)
    return 0


@compiled_only
def _bar_request(m, code, row, pc, w, mask):
    """bar.sync/bar.arrive for the lanes of ``mask``: the barrier id and count go to the timed model's
    request; STATUS_BARRIER (the warp arrives), STATUS_OK (no lane does) or STATUS_ERROR."""
    first = 0
    while first < 31 and not (mask >> first) & 1:
        first += 1
    m.mem_req[S.MR_BAR_ID] = np.int64(read_src(m, row, 0, w, first))
    m.mem_req[S.MR_BAR_COUNT] = np.int64(read_src(m, row, 1, w, first)) if row[L.F_NSRC] > 1 else 0
    if row[L.F_AUX] == L.BAR_ARRIVE:      # an arrival that does not wait (semantics/barriers.py)
        m.mem_req[S.MR_BAR_COUNT] |= ARRIVE_ONLY
    if mask != 0 and row[L.F_AUX] != L.BAR_ARRIVE and _arrival(m, code, pc, w, mask, row[L.F_NSRC] > 1) < 0:
        return STATUS_ERROR
    return STATUS_BARRIER if mask != 0 else STATUS_OK


@compiled_only
def step_warp(m, code, w):
    """Execute the next instruction of warp slot ``w``. Returns a STATUS_* code."""
    sp = m.sp[w]
    pc = m.stk_pc[w, sp]
    active = m.stk_mask[w, sp]
    row = code[pc]
    op = row[L.F_OP]
    mask = guard_mask(m.regs, row, w, active)
    count_issue(m.pc_counts, m.mem_req, pc, active, mask)
    status = STATUS_OK
    if op <= c.OP_LAST_ALU:
        if not fast_alu(m.regs, row, w, mask):
            exec_alu(m, row, w, mask)
    elif op == c.OP_BRA:
        if not branch(m.sp, m.stk_pc, m.stk_rpc, m.stk_mask, w, pc, row[L.F_TARGET], row[L.F_RECONV], mask, active):
            return fail(m, S.ERR_STACK_OVERFLOW, pc, w, 0, 0)
        if row[L.F_MODS] & L.BRA_ITS_BACKWARD and mask != 0 and back_edge(m, w, pc, row[L.F_SIZE]) < 0:
            return fail(m, S.ERR_STACK_OVERFLOW, pc, w, 0, 0)
        return STATUS_OK if m.sp[w] >= 0 else STATUS_EXITED
    elif op == c.OP_LD or op == c.OP_ST or op == c.OP_ATOM or op == c.OP_RED:
        status = exec_memory(m, row, pc, w, mask)
        if status != STATUS_OK:
            return status
    elif op == c.OP_TEX or op == c.OP_TLD4:
        if exec_texture(m, row, pc, w, mask) < 0:
            return STATUS_ERROR
    elif op == c.OP_EXIT:
        return _exec_exit(m, pc, w, sp, mask)
    elif op == c.OP_CVTA:
        exec_cvta(m, row, w, mask)
    elif op == c.OP_BAR and row[L.F_AUX] >= L.BAR_RED_POPC:      # bar.red (conformance corpus)
        if mask != 0 and m.bar_red[w, RED_PHASE] == 0 and _arrival(m, code, pc, w, mask, row[L.F_NSRC] > 2) < 0:
            return STATUS_ERROR
        return barrier_reduce(m, row, pc, w, mask, sp)
    elif op == c.OP_BAR:
        if mask != 0 and m.launch[S.L_RECONVERGENCE] == S.RECONV_ITS and row[L.F_AUX] != L.BAR_ARRIVE:
            result, mask = its_bar(m, code, pc, w, mask, real_lanes(m, w))   # the warp's groups meet first
            if result != ITS_GO_ON:
                return _its_stop(m, result, pc, w)
        status = _bar_request(m, code, row, pc, w, mask)
        if status == STATUS_ERROR:
            return status
    elif op == c.OP_MEMBAR:
        status = STATUS_MEMBAR
    elif op == c.OP_NANOSLEEP:
        status = STATUS_SLEEP
    elif op == c.OP_TRAP:
        if mask != 0:
            return fail(m, S.ERR_TRAP, pc, w, 0, 0)
    elif op == c.OP_CALL:       # calls and printf (engine/semantics/calls.py) move the SIMT stack themselves
        return exec_call(m, row, pc, w, mask)
    elif op == c.OP_FRET:
        status = exec_return(m, code, row, pc, w, mask)
        return status if status != STATUS_OK or m.sp[w] >= 0 else STATUS_EXITED
    elif op == c.OP_VPRINTF:
        if exec_vprintf(m, row, pc, w, mask) != STATUS_OK:
            return STATUS_ERROR
    elif op >= c.OP_FIRST_TENSOR and op <= c.OP_LAST_TENSOR:
        status = tensor_op(m, row, pc, w, mask) if op != c.OP_WGMMA or mask == 0 else exec_wgmma(m, row, pc, w)
        if status != STATUS_OK:       # RETRY: a wgmma.wait_group the warpgroup has not caught up with
            return STATUS_OK if status == RETRY else status
    elif op >= c.OP_SHFL and op <= c.OP_REDUX or op == c.OP_NOP and row[L.F_AUX] == L.NOP_WARPSYNC:
        stop = _exec_warp_sync_op(m, code, row, op, pc, w, mask)
        if stop != _GO_ON:
            return stop
    elif op >= c.OP_FIRST_HOPPER and op <= c.OP_LAST_HOPPER:  # mbarrier, bulk/tensor copies, elect, clusters
        status = hopper_op(m, row, pc, w, mask, op)
        if status != STATUS_OK:       # RETRY: barrier.cluster.wait not complete, the warp stays at it
            return STATUS_OK if status == RETRY else status
    m.stk_pc[w, sp] = pc + 1
    normalize(m.sp, m.stk_pc, m.stk_rpc, m.stk_mask, w)
    if m.sp[w] < 0:
        return STATUS_EXITED
    return status
