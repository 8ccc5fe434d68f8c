"""Retirement: an exited warp drains its stores, then frees its slot; a finished block frees its block slot.

A warp that executed ``exit``/``ret`` for all its lanes waits (state ``drain``) until its last store or
atomic completes, then leaves: its interval is closed, the SM's busy time is closed when it was the
last resident warp, and when it was its block's last warp the block slot takes the next block
(``dispatch``). Otherwise its exit may complete a barrier the block's other warps wait at.

Simplified: only stores and atomics hold a warp's slot after exit (loads already returned, since a warp
waits for a load's result only when it uses it, and an exiting warp uses none).
"""

from __future__ import annotations

from gpusim.engine.jit import compiled_only
from gpusim.engine.sm import stalls as ST
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.accounting import close_interval, warp_to
from gpusim.engine.sm.barrier_unit import release_block_barriers
from gpusim.engine.sm.dispatch import dispatch_next


@compiled_only
def retire_warp(prm, w_resident, w_done, w_eval, sm_warps, sm_active_cycles, sm_active_since, ctr, b_live,
                b_block, w, e, sm, cycle):
    """Free warp slot ``w`` (its interval already closed). Returns its block slot on the SM when that
    block has finished (the caller dispatches the next block there), else -1. ``e`` is its ``w_eval``
    entry (``eval_slot``)."""
    w_resident[w] = 0
    w_done[w] = 1
    w_eval[e] = T.INF_CYCLE
    sm_warps[sm] -= 1
    if sm_warps[sm] == 0:
        sm_active_cycles[sm] += cycle - sm_active_since[sm]
    if cycle > ctr[T.TC_END_CYCLE]:
        ctr[T.TC_END_CYCLE] = cycle
    bslot_local = (w - sm * prm[T.TP_SLOTS]) // prm[T.TP_WPB]
    bslot = sm * prm[T.TP_BSLOTS] + bslot_local
    b_live[bslot] -= 1
    if b_live[bslot] != 0:
        return -1
    b_block[bslot] = -1
    ctr[T.TC_BLOCKS_DONE] += 1
    return bslot_local


@compiled_only
def drain_or_retire(ts, m, w, e, sm, cycle, next_block, age, later):
    """An exited warp ``w`` (``w_eval`` entry ``e``) at ``cycle``: retire it once its stores have
    drained, else charge it ``drain`` until they have. Returns (next block, next age, the sub-partition's
    next evaluation cycle ``later`` updated)."""
    if ts.w_mem_pending[w] <= cycle:
        close_interval(ts.w_state, ts.w_since, ts.w_pc, ts.stalls, ts.pc_stalls, ts.trace, ts.trace_n,
                       m.warp_block, w, cycle)
        freed = retire_warp(ts.prm, ts.w_resident, ts.w_done, ts.w_eval, ts.sm_warps, ts.sm_active_cycles,
                            ts.sm_active_since, ts.ctr, ts.b_live, ts.b_block, w, e, sm, cycle)
        if freed < 0:
            # its block lives on: the exit may complete a barrier the others wait at
            release_block_barriers(ts, sm, (w - sm * ts.prm[T.TP_SLOTS]) // ts.prm[T.TP_WPB], cycle)
        else:
            next_block, age = dispatch_next(ts, m, sm, freed, next_block, age, cycle)
    else:
        warp_to(ts, m, w, ST.DRAIN, cycle, ts.w_pc[w])
        ts.w_eval[e] = ts.w_mem_pending[w]
        if ts.w_eval[e] < later:
            later = ts.w_eval[e]
    return next_block, age, later
