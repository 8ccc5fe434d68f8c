"""The functional-only loop: every block runs to completion, one block at a time,
its warps round-robin between barriers. No timing: ``%clock`` counts the
block's executed warp-instructions.

Simplification: blocks run one after another, so a kernel whose blocks wait on
each other (a spin-lock across blocks) cannot finish here; it ends in a
``SimulationLimitError`` rather than a hang.
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.jit import compiled_only, engine_jit
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.barriers import release_barriers
from gpusim.engine.semantics.execute import step_fast, step_warp
from gpusim.engine.semantics.simt import STATUS_BARRIER, STATUS_ERROR, STATUS_EXITED, init_warp

RUN_OK = 0
RUN_ERROR = 1
RUN_DEADLOCK = 2
RUN_LIMIT = 3


@compiled_only
def start_block(m, block, bslot, first_slot, warps_per_block, threads_per_block, sm, sm_slot0):
    for wi in range(warps_per_block):
        w = first_slot + wi
        m.warp_block[w] = block
        m.warp_index[w] = wi
        m.warp_bslot[w] = bslot
        m.warp_sm[w] = sm
        m.warp_slot_sm[w] = sm_slot0 + wi
        lanes = min(32, threads_per_block - wi * 32)
        init_warp(m, w, (1 << lanes) - 1)
        m.regs[w, :, :] = 0
    m.shared8[bslot, :] = 0
    m.local8[first_slot * 32:(first_slot + warps_per_block) * 32, :] = 0


@engine_jit(_nrt=True)
def run_functional(m, code, n_blocks, max_warp_instructions):
    """Run the whole grid. Returns (RUN_* status, warp-instructions executed, block of a deadlock)."""
    launch = m.launch
    clock = m.clock          # hoisted: a struct field read in the loop costs a reference count each time
    regs = m.regs
    sps = m.sp
    stk_pc = m.stk_pc
    stk_rpc = m.stk_rpc
    stk_mask = m.stk_mask
    pc_counts = m.pc_counts
    valid = m.valid
    mem32 = m.mem32
    lane_addr = m.lane_addr
    heap_bytes = m.launch[S.L_HEAP_BYTES]
    mem_req = m.mem_req
    wpb = launch[S.L_WARPS_PER_BLOCK]
    tpb = launch[S.L_THREADS_PER_BLOCK]
    nsm = launch[S.L_NSM]
    waiting = np.zeros(wpb, dtype=np.int64)      # 1 while at a barrier
    bar_id = np.zeros(wpb, dtype=np.int64)
    bar_count = np.zeros(wpb, dtype=np.int64)
    done = np.zeros(wpb, dtype=np.int64)
    executed = 0
    for block in range(n_blocks):
        start_block(m, block, 0, 0, wpb, tpb, block % nsm, 0)
        waiting[:] = 0
        done[:] = 0
        block_executed = 0
        while True:
            for w in range(wpb):
                if done[w] or waiting[w]:
                    continue
                while True:
                    clock[0] = block_executed
                    status = step_fast(regs, sps, stk_pc, stk_rpc, stk_mask, pc_counts, mem_req, valid, mem32,
                                       lane_addr, heap_bytes, code, w)
                    if status < 0:
                        status = step_warp(m, code, w)
                    executed += 1
                    block_executed += 1
                    if status == STATUS_ERROR:
                        return RUN_ERROR, executed, block
                    if status == STATUS_EXITED:
                        done[w] = 1
                        break
                    if status == STATUS_BARRIER:
                        waiting[w] = 1
                        bar_id[w] = m.mem_req[S.MR_BAR_ID]
                        bar_count[w] = m.mem_req[S.MR_BAR_COUNT]
                        break
                    if executed >= max_warp_instructions:
                        return RUN_LIMIT, executed, block
            live = 0
            for w in range(wpb):
                live += 1 - done[w]
            if live == 0:
                break
            if release_barriers(waiting, bar_id, bar_count, done, 0, wpb) == 0:
                return RUN_DEADLOCK, executed, block
    return RUN_OK, executed, -1
