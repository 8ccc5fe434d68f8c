"""The timed loop: block dispatch, warp schedulers, barriers, and discrete-event time.

All SMs advance on one global clock. An SM is evaluated only at cycles where
one of its warps may issue (``sm_next``); each sub-partition's scheduler picks
at most one eligible warp per cycle by its policy (``gto``: the last issued
warp while it stays eligible, else the oldest; ``lrr``: round-robin from the
last issued; ``two_level``: round-robin within an active set, a warp stalled on
memory leaves the set for the oldest eligible waiting one). When no SM can
issue, the clock jumps to the earliest next event. A warp's state is charged
per interval, so skipped cycles cost nothing to account.

Blocks are dispatched breadth-first over SMs up to the occupancy limit; a
retiring block's slot takes the next block, which starts after
``block_launch_cycles``.
"""

from __future__ import annotations

from numba import njit

from gpusim.engine import stalls as ST
from gpusim.engine import timing_state as T
from gpusim.engine.barriers import release_barriers
from gpusim.engine.functional import start_block
from gpusim.engine.issue import evaluate, issue
from gpusim.engine.simt import STATUS_BARRIER, STATUS_ERROR, STATUS_EXITED
from gpusim.engine import state as S

TIMED_OK = 0
TIMED_ERROR = 1
TIMED_DEADLOCK = 2
TIMED_LIMIT = 3


@njit(cache=True, inline='always')
def set_state(ts, w, state, cycle, pc):
    """Close the warp's current interval if its state or pc changes."""
    if ts.w_state[w] != state or ts.w_pc[w] != pc:
        elapsed = cycle - ts.w_since[w]
        if elapsed > 0:
            ts.stalls[ts.w_state[w]] += elapsed
            ts.pc_stalls[ts.w_pc[w], ts.w_state[w]] += elapsed
        ts.w_state[w] = state
        ts.w_pc[w] = pc
        ts.w_since[w] = cycle


@njit(cache=True)
def dispatch_block(ts, m, sm, bslot_local, block, cycle, age):
    prm = ts.prm
    slots = prm[T.TP_SLOTS]
    wpb = prm[T.TP_WPB]
    first = sm * slots + bslot_local * wpb
    bslot = sm * prm[T.TP_BSLOTS] + bslot_local
    start_block(m, block, bslot, first, wpb, prm[T.TP_TPB], sm, bslot_local * wpb)
    start = cycle + prm[T.TP_BLOCK_LAUNCH]
    for wi in range(wpb):
        w = first + wi
        ts.w_resident[w] = 1
        ts.w_done[w] = 0
        ts.w_state[w] = ST.DISPATCH_STALL
        ts.w_since[w] = cycle
        ts.w_pc[w] = 0
        ts.w_eval[w] = cycle
        ts.w_wake[w] = start
        ts.w_reason[w] = ST.DISPATCH_STALL
        ts.w_age[w] = age + wi
        ts.w_bar[w] = 0
        ts.w_mem_pending[w] = 0
        ts.w_exiting[w] = 0
        ts.w_group[w] = 1
        ts.reg_ready[w, :] = 0
    ts.b_block[bslot] = block
    ts.b_live[bslot] = wpb
    if ts.sm_warps[sm] == 0:
        ts.sm_active_since[sm] = cycle
    ts.sm_warps[sm] += wpb
    ts.sm_next[sm] = min(ts.sm_next[sm], cycle)


@njit(cache=True)
def release_block_barriers(ts, sm, bslot_local, cycle):
    """Release the block's barriers that are now complete; released warps resume after the barrier latency."""
    prm = ts.prm
    wpb = prm[T.TP_WPB]
    first = sm * prm[T.TP_SLOTS] + bslot_local * wpb
    waiting = 0
    for w in range(first, first + wpb):
        if ts.w_bar[w]:
            waiting += 1
            ts.w_wake[w] = -1          # marks "was waiting"
    if waiting == 0:
        return
    release_barriers(ts.w_bar, ts.w_bar_id, ts.w_bar_count, ts.w_done, first, wpb)
    for w in range(first, first + wpb):
        if ts.w_wake[w] == -1:
            if ts.w_bar[w] == 0:
                ts.w_wake[w] = cycle + prm[T.TP_BARRIER_LAT]
                ts.w_reason[w] = ST.BARRIER
                ts.w_eval[w] = cycle + 1
            else:
                ts.w_wake[w] = 0
    ts.sm_next[sm] = min(ts.sm_next[sm], cycle + 1)


@njit(cache=True, inline='always')
def close_interval(ts, w, cycle):
    elapsed = cycle - ts.w_since[w]
    if elapsed > 0:
        ts.stalls[ts.w_state[w]] += elapsed
        ts.pc_stalls[ts.w_pc[w], ts.w_state[w]] += elapsed
    ts.w_since[w] = cycle


@njit(cache=True)
def retire_warp(ts, m, w, sm, cycle, next_block, age):
    """Free warp slot ``w``; when its block is done, start the next block there. Returns next_block."""
    prm = ts.prm
    close_interval(ts, w, cycle)
    ts.w_resident[w] = 0
    ts.w_done[w] = 1
    ts.w_eval[w] = T.INF_CYCLE
    ts.sm_warps[sm] -= 1
    if ts.sm_warps[sm] == 0:
        ts.sm_active_cycles[sm] += cycle - ts.sm_active_since[sm]
    if cycle > ts.ctr[T.TC_END_CYCLE]:
        ts.ctr[T.TC_END_CYCLE] = cycle
    k = w - sm * prm[T.TP_SLOTS]
    bslot_local = k // prm[T.TP_WPB]
    bslot = sm * prm[T.TP_BSLOTS] + bslot_local
    ts.b_live[bslot] -= 1
    if ts.b_live[bslot] == 0:
        ts.b_block[bslot] = -1
        ts.ctr[T.TC_BLOCKS_DONE] += 1
        if next_block < prm[T.TP_NBLOCKS]:
            dispatch_block(ts, m, sm, bslot_local, next_block, cycle, age)
            return next_block + 1
    else:
        release_block_barriers(ts, sm, bslot_local, cycle)
    return next_block


@njit(cache=True, inline='always')
def _better(ts, policy, sub_last, w, best, slots):
    """Does warp ``w`` beat ``best`` under the scheduling policy?"""
    if best < 0:
        return True
    if policy == T.POLICY_GTO:
        if w == sub_last:
            return True
        if best == sub_last:
            return False
        return ts.w_age[w] < ts.w_age[best]
    if policy == T.POLICY_TWO_LEVEL and ts.w_group[w] != ts.w_group[best]:
        return ts.w_group[w] > ts.w_group[best]
    # round-robin distance after the last issued warp
    dw = (w - sub_last - 1) % slots
    db = (best - sub_last - 1) % slots
    return dw < db


@njit(cache=True)
def run_timed(ts, m, ms, code):
    """Run the grid. Returns (TIMED_* status, end cycle)."""
    prm = ts.prm
    nsm = prm[T.TP_NSM]
    nsp = prm[T.TP_NSP]
    slots = prm[T.TP_SLOTS]
    bslots = prm[T.TP_BSLOTS]
    nblocks = prm[T.TP_NBLOCKS]
    policy = prm[T.TP_POLICY]
    max_cycles = prm[T.TP_MAX_CYCLES]
    two_level_n = prm[T.TP_TWO_LEVEL_N]
    next_block = 0
    age = 0
    for k in range(bslots):
        for sm in range(nsm):
            if next_block < nblocks:
                dispatch_block(ts, m, sm, k, next_block, 0, age)
                age += prm[T.TP_WPB]
                next_block += 1
    cycle = 0
    while True:
        next_cycle = T.INF_CYCLE
        for sm in range(nsm):
            if ts.sm_next[sm] > cycle:
                if ts.sm_next[sm] < next_cycle:
                    next_cycle = ts.sm_next[sm]
                continue
            sm_min = T.INF_CYCLE
            for sp in range(nsp):
                sub = sm * nsp + sp
                best = -1
                best_pc = 0
                sub_last = ts.sched_last[sub]
                for k in range(sp, slots, nsp):
                    w = sm * slots + k
                    if ts.w_resident[w] == 0:
                        continue
                    if ts.w_eval[w] > cycle:
                        if ts.w_eval[w] < sm_min:
                            sm_min = ts.w_eval[w]
                        continue
                    if ts.w_exiting[w]:
                        if ts.w_mem_pending[w] <= cycle:
                            before = next_block
                            next_block = retire_warp(ts, m, w, sm, cycle, next_block, age)
                            if next_block != before:
                                age += prm[T.TP_WPB]
                            sm_min = min(sm_min, cycle)
                        else:
                            set_state(ts, w, ST.DRAIN, cycle, ts.w_pc[w])
                            ts.w_eval[w] = ts.w_mem_pending[w]
                            sm_min = min(sm_min, ts.w_eval[w])
                        continue
                    if ts.w_bar[w]:
                        set_state(ts, w, ST.BARRIER, cycle, ts.w_pc[w])
                        ts.w_eval[w] = T.INF_CYCLE
                        continue
                    wake, state, pc = evaluate(ts, m, code, w, sub)
                    if wake > cycle:
                        set_state(ts, w, state, cycle, pc)
                        ts.w_eval[w] = wake
                        if ts.w_group[w] == 1 and state == ST.LONG_SCOREBOARD and policy == T.POLICY_TWO_LEVEL:
                            ts.w_group[w] = 0
                        if wake < sm_min:
                            sm_min = wake
                        continue
                    set_state(ts, w, ST.NOT_SELECTED, cycle, pc)
                    ts.w_eval[w] = cycle
                    if _better(ts, policy, sub_last, w, best, slots):
                        best = w
                        best_pc = pc
                if best < 0:
                    continue
                set_state(ts, best, ST.SELECTED, cycle, best_pc)
                if policy == T.POLICY_TWO_LEVEL and ts.w_group[best] == 0:
                    active = 0
                    for k2 in range(sp, slots, nsp):
                        active += ts.w_group[sm * slots + k2] * ts.w_resident[sm * slots + k2]
                    if active < two_level_n:
                        ts.w_group[best] = 1
                status = issue(ts, m, ms, code, best, sm, sub, cycle)
                ts.sched_last[sub] = best
                ts.w_eval[best] = cycle + 1
                sm_min = min(sm_min, cycle + 1)
                if status == STATUS_ERROR:
                    return TIMED_ERROR, cycle
                if status == STATUS_EXITED:
                    ts.w_exiting[best] = 1
                elif status == STATUS_BARRIER:
                    ts.w_bar[best] = 1
                    ts.w_bar_id[best] = m.mem_req[S.MR_BAR_ID]
                    ts.w_bar_count[best] = m.mem_req[S.MR_BAR_COUNT]
                    release_block_barriers(ts, sm, (best - sm * slots) // prm[T.TP_WPB], cycle)
            ts.sm_next[sm] = sm_min
            if sm_min < next_cycle:
                next_cycle = sm_min
        if next_cycle >= T.INF_CYCLE:
            for sm in range(nsm):
                if ts.sm_warps[sm] > 0:
                    return TIMED_DEADLOCK, cycle
            return TIMED_OK, ts.ctr[T.TC_END_CYCLE]
        if next_cycle > max_cycles:
            return TIMED_LIMIT, cycle
        cycle = max(next_cycle, cycle + 1) if next_cycle <= cycle else next_cycle
