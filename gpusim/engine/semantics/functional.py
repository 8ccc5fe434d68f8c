"""The functional-only loop: every block runs to completion, one block at a time,
its warps round-robin between barriers. No timing: ``%clock`` counts the
block's executed warp-instructions.

The loop runs in slices: each call executes about ``budget`` warp-instructions
and returns ``RUN_SLICE``; everything the loop needs to go on (block, warp,
counts, barrier waits) lives in the ``ctl``/``fw`` arrays of
``make_functional_state``, so the next call resumes exactly where this one
stopped and a run cut into any number of slices is bit-identical to one call.
Between slices Python can show progress and raise a pending KeyboardInterrupt.

Order. The warps of the resident blocks take turns, round-robin, in the order an in-order SM could give
them: a warp's turn ends after each shared- or global-memory access (loads, stores, atomics, textures) and at
a barrier, so between two memory accesses of one warp every other runnable warp makes its next one, and a
racy kernel gives a result a GPU can give (the straight-line arithmetic between accesses runs in one go). A
turn also ends at its first instruction off the fast path after ``WARP_QUANTUM`` instructions (a spin on
warp-wide operations lets other warps progress).

Residency. One block at a time, or the blocks of one thread-block cluster (``resident`` = the cluster size, its
blocks started together in rank order, so they can wait on each other), or, for a cooperative launch
(``resident`` = the grid), every block of the grid at once, block slot j holding block j: a grid-wide sync
(``this_grid().sync()``: an atomic and a spin on a global word) completes because the spinning warps yield
at every load. Otherwise a kernel whose blocks wait on each other (a spin-lock across blocks) cannot finish
here; it ends in a ``SimulationLimitError`` rather than a hang.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only, engine_jit
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.barriers import arrive, release_barriers
from gpusim.engine.semantics.cluster import cluster_block
from gpusim.engine.semantics.execute import step_fast, step_shared, step_warp
from gpusim.engine.semantics.simt import STATUS_BARRIER, STATUS_ERROR, STATUS_EXITED, STATUS_OK, init_warp

RUN_OK = 0
RUN_ERROR = 1
RUN_DEADLOCK = 2
RUN_LIMIT = 3
RUN_SLICE = 4       # the slice's budget ran out: call again to go on

# ctl[] indices: where the loop stands between calls
FC_BLOCK, FC_STARTED, FC_WARP, FC_EXECUTED, FC_BLOCK_EXECUTED = 0, 1, 2, 3, 4
FC_TURN_END = 5     # the executed count at which the current warp's turn ends (0: none begun)
N_FC = 6
WARP_QUANTUM = 256
"""Warp-instructions after which a warp's turn ends at its next instruction off the fast path."""
# fw[] rows, one column per warp of the block: at a barrier, its id and thread count, exited
FW_WAITING, FW_BAR_ID, FW_BAR_COUNT, FW_DONE = 0, 1, 2, 3
N_FW = 4


def make_functional_state(warps: int) -> tuple[np.ndarray, np.ndarray]:
    """The loop's own state (``ctl``, ``fw``) for a fresh run of ``warps`` resident warps."""
    return np.zeros(N_FC, dtype=np.int64), np.zeros((N_FW, max(warps, 1)), dtype=np.int64)


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
    m.bulk_tx[bslot, :, :] = 0
    m.local8[first_slot * 32:(first_slot + warps_per_block) * 32, :] = 0


@compiled_only
def _start_group(m, first_block, count, wpb, tpb, nsm, waiting, bar_id, bar_count, done):
    """Make blocks ``first_block .. first_block + count - 1`` resident, block slot j holding the j-th."""
    for j in range(count):
        block = cluster_block(m.launch, first_block + j)     # a cluster's blocks, by rank (semantics/cluster)
        start_block(m, block, j, j * wpb, wpb, tpb, block % nsm, j * wpb)
    waiting[:] = 0
    done[:] = 0
    bar_id[:] = 0          # no arrival pending from the blocks before
    bar_count[:] = 0
    for w in range(count * wpb, done.shape[0]):
        done[w] = 1


@compiled_only
def _release_group(waiting, bar_id, bar_count, done, count, wpb):
    """Release the satisfied barriers of each resident block; returns warps released."""
    released = 0
    for j in range(count):
        released += release_barriers(waiting, bar_id, bar_count, done, j * wpb, wpb)
    return released


@compiled_only
def _save(ctl, block, w, executed, block_executed, turn_end):
    """Where a slice stops: the next call goes on from here."""
    ctl[FC_BLOCK] = block
    ctl[FC_WARP] = w
    ctl[FC_EXECUTED] = executed
    ctl[FC_BLOCK_EXECUTED] = block_executed
    ctl[FC_TURN_END] = turn_end


@compiled_only
def _stop(ctl, block, w, wpb, executed, block_executed, turn_end, max_warp_instructions):
    """Save where the loop stands (it resumes with warp ``w`` of the group from ``block``); RUN_LIMIT (with
    the block of the warp that reached it) or RUN_SLICE."""
    _save(ctl, block, w, executed, block_executed, turn_end)
    if executed >= max_warp_instructions:
        return RUN_LIMIT, executed, block + w // wpb
    return RUN_SLICE, executed, block


@compiled_only
def _arrive(mem_req, waiting, bar_id, bar_count, w):
    """Warp ``w`` arrives at the barrier its last instruction named (id and count in ``mem_req``): it waits
    there, or, for a bar.arrive, goes on (semantics/barriers.arrive)."""
    arrive(waiting, bar_id, bar_count, w, mem_req[S.MR_BAR_ID], mem_req[S.MR_BAR_COUNT])


@compiled_only
def _end_of_round(waiting, bar_id, bar_count, done, count, wpb):
    """After a round over the resident warps: (live warps, whether they are stuck: none runnable and no
    barrier to release). Barriers are released only while warps live."""
    live = 0
    runnable = 0
    for w in range(count * wpb):
        live += 1 - done[w]
        runnable += (1 - done[w]) * (1 - waiting[w])
    if live == 0:
        return live, False
    return live, _release_group(waiting, bar_id, bar_count, done, count, wpb) == 0 and runnable == 0


@compiled_only
def _first_live(done, n_warps):
    w = 0
    while w < n_warps - 1 and done[w]:
        w += 1
    return w


@compiled_only
def _yields(mem_req):
    """Whether the instruction just executed ends the warp's turn: a shared or global memory access."""
    kind = mem_req[S.MR_KIND]
    if kind == 0:
        return False
    space = mem_req[S.MR_SPACE]
    return space != L.SP_LOCAL and space != L.SP_PARAM


@engine_jit(_nrt=True, nogil=True)     # nogil: threads run blocks at once (gpusim.launch.functional_threads)
def run_functional(m, code, n_blocks, max_warp_instructions, ctl, fw, budget, resident):
    """Run the grid on from where ``ctl``/``fw`` say, for about ``budget`` warp-instructions, ``resident``
    blocks at a time (1, or the whole grid of a cooperative launch).

    Returns (RUN_* status, warp-instructions executed so far, block of an error, deadlock or limit);
    RUN_SLICE when the budget ran out first (call again with the same state to go on)."""
    launch = m.launch
    launch[S.L_TIMED] = 0      # bulk copies complete their mbarrier bytes at issue (semantics/mbarrier.py)
    clock = m.clock          # hoisted: a struct field read in the loop costs a reference count each time
    regs, sps, stk_pc, stk_rpc, stk_mask = m.regs, m.sp, m.stk_pc, m.stk_rpc, m.stk_mask
    pc_counts, valid, mem32, lane_addr, mem_req = m.pc_counts, m.valid, m.mem32, m.lane_addr, m.mem_req
    heap_bytes = m.launch[S.L_HEAP_BYTES]
    wpb, tpb, nsm = launch[S.L_WARPS_PER_BLOCK], launch[S.L_THREADS_PER_BLOCK], launch[S.L_NSM]
    waiting, bar_id, bar_count, done = fw[FW_WAITING], fw[FW_BAR_ID], fw[FW_BAR_COUNT], fw[FW_DONE]
    executed, block_executed = ctl[FC_EXECUTED], ctl[FC_BLOCK_EXECUTED]
    stop = min(max_warp_instructions, executed + budget)
    block, first_warp = ctl[FC_BLOCK], ctl[FC_WARP]     # a resumed slice goes on with the warp it stopped at
    turn_end = ctl[FC_TURN_END]
    resume_turn = turn_end > 0    # the warp a resumed slice goes on with keeps the rest of its turn
    while block < n_blocks:
        count = min(resident, n_blocks - block)
        n_warps = count * wpb
        if ctl[FC_STARTED] == 0:
            _start_group(m, block, count, wpb, tpb, nsm, waiting, bar_id, bar_count, done)
            block_executed, first_warp = 0, 0
            ctl[FC_STARTED] = 1
        while True:
            events = 0            # warps that exited or reached a barrier in this round
            for w in range(first_warp, n_warps):
                if done[w] or waiting[w]:
                    continue
                if resume_turn:
                    resume_turn = False
                else:
                    turn_end = executed + WARP_QUANTUM
                while True:
                    if executed >= stop:
                        return _stop(ctl, block, w, wpb, executed, block_executed, turn_end, max_warp_instructions)
                    clock[0] = block_executed
                    status = step_fast(regs, sps, stk_pc, stk_rpc, stk_mask, pc_counts, mem_req, valid, mem32,
                                       lane_addr, heap_bytes, code, w)
                    if status < 0:
                        status = step_shared(regs, sps, stk_pc, stk_rpc, stk_mask, pc_counts, mem_req, lane_addr,
                                             launch, m.shared32, m.warp_bslot, m.param32, m.param64, code, w)
                    if status < 0:
                        status = step_warp(m, code, w)
                        if status == STATUS_OK and executed >= turn_end:
                            executed += 1     # its turn is over (checked off the fast path only, so the
                            block_executed += 1    # fast path costs what it did): the next warp runs
                            break
                    executed += 1
                    block_executed += 1
                    if status == STATUS_ERROR:
                        ctl[FC_EXECUTED] = executed
                        return RUN_ERROR, executed, block + w // wpb
                    if status == STATUS_EXITED:
                        done[w] = 1
                        events += 1
                        break
                    if status == STATUS_BARRIER:
                        _arrive(mem_req, waiting, bar_id, bar_count, w)
                        events += 1
                        break
                    if _yields(mem_req):
                        break         # a shared or global access: the next warp runs (an in-order SM's order)
            if events == 0 and first_warp == 0:
                continue          # every runnable warp ran and still can: the next round (nothing to release)
            first_warp = 0
            live, stuck = _end_of_round(waiting, bar_id, bar_count, done, count, wpb)
            if live == 0:
                break
            if stuck:
                ctl[FC_EXECUTED] = executed
                return RUN_DEADLOCK, executed, block + _first_live(done, n_warps) // wpb
        block += count
        ctl[FC_STARTED] = 0
    ctl[FC_BLOCK] = block
    ctl[FC_WARP] = 0
    ctl[FC_EXECUTED] = executed
    return RUN_OK, executed, -1
