"""The scheduler's view of its warps: which can issue this cycle, and what each other one waits for.

Each cycle a sub-partition is due (``sub_next``), its scheduler looks at the warps whose state may have
changed (``w_eval`` due): an exited warp drains or retires (``retire``), a warp at a barrier waits
(``barrier_unit``), and any other warp is checked against the scoreboard (its next instruction's source
and destination registers, and any wait set at issue) and its pipe. A warp that cannot issue is charged
the state it waits in until the cycle it could; one that can is a candidate for the scheduler.

Lazy accounting (no trace, at most 62 warps per scheduler): a warp whose operands are ready is *parked*
in a bit mask per pipe; from then on only its scheduler and its pipe hold it back, and neither changes
except when this sub-partition issues, so it is not looked at again until it is picked
(``schedulers.select_parked``), and its wait is charged then in one step.

Simplified: a warp's readiness is re-evaluated only at the cycles it names (its wake cycle), so every
event that can make a warp ready earlier must set its ``w_eval`` (issue, barrier release, dispatch).
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.jit import compiled_only
from gpusim.engine.sm import stalls as ST
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.accounting import warp_to
from gpusim.engine.sm.barrier_unit import wait_at_barrier
from gpusim.engine.sm.issue import dependencies, path_lanes, throttle_state
from gpusim.engine.sm.pipes import busy_before
from gpusim.engine.sm.retire import drain_or_retire
from gpusim.engine.sm.schedulers import POLICY_TWO_LEVEL, priority, two_level_leave


@compiled_only(inline="always")
def park_warp(ts, m, w, e, j, sub, pipe, pc, cycle):
    """Park ready warp ``w`` (slot ``j`` of sub-partition ``sub``) until its scheduler picks it."""
    if ts.w_state[w] != ST.NOT_SELECTED or ts.w_pc[w] != pc:
        warp_to(ts, m, w, ST.NOT_SELECTED, cycle, pc)
    ts.w_parked[w] = 1
    ts.w_park_busy[w] = busy_before(ts.pipe_free, ts.pipe_busy_acc, ts.pipe_busy_t0, sub, pipe, cycle)
    ts.park_mask[sub, pipe] |= np.int64(1) << np.int64(j)
    ts.park_pipes[sub] |= np.int64(1) << pipe
    ts.w_eval[e] = T.INF_CYCLE


@compiled_only(inline="always")
def evaluate_warp(ts, m, code, policy, lazy, w, e, j, sub, cycle):
    """Check live warp ``w`` (``w_eval`` entry ``e``, slot ``j`` of ``sub``) against its scoreboard and
    pipe at ``cycle``. Returns the cycle it needs evaluating again: ``cycle`` when it can issue now
    (a candidate), a later cycle while it waits, ``INF_CYCLE`` once parked."""
    if ts.w_cached[w] == 0:
        dependencies(m.sp, m.stk_pc, code, w, ts.w_wake, ts.w_reason, ts.reg_ready, ts.reg_dep, ts.isa,
                     ts.w_dep_ready, ts.w_dep_state, ts.w_pipe, ts.w_next_pc, ts.w_cached,
                     path_lanes(ts.prm, m.sp, m.stk_mask, w))
    wake = ts.w_dep_ready[w]
    state = ts.w_dep_state[w]
    pipe = ts.w_pipe[w]
    pc = ts.w_next_pc[w]
    if lazy and wake <= cycle:
        # operands ready: park it and charge the interval when it is picked (not_selected, or
        # throttled while the pipe was busy)
        park_warp(ts, m, w, e, j, sub, pipe, pc, cycle)
        return T.INF_CYCLE
    if ts.pipe_free[sub, pipe] > wake:
        wake = ts.pipe_free[sub, pipe]
        state = throttle_state(pipe)
    if wake > cycle:
        if ts.w_state[w] != state or ts.w_pc[w] != pc:
            warp_to(ts, m, w, state, cycle, pc)
        ts.w_eval[e] = wake
        if policy == POLICY_TWO_LEVEL:
            two_level_leave(ts.w_group, w, state)
        return wake
    if ts.w_state[w] != ST.NOT_SELECTED or ts.w_pc[w] != pc:
        warp_to(ts, m, w, ST.NOT_SELECTED, cycle, pc)
    ts.w_eval[e] = cycle
    return cycle


@compiled_only
def scan_warps(ts, m, code, policy, lazy, sm, sp, sub, base_sm, nsp, slots, per_sub, cycle, next_block, age):
    """Evaluate sub-partition ``sp`` (``sub`` = sm * nsp + sp) of ``sm`` (warp slots from ``base_sm``)
    at ``cycle`` and set its ``sub_next``; ``per_sub`` = ceil(slots / nsp) warp slots per sub-partition.
    Returns (the candidate its policy prefers, or -1; its pc; next block; next age), the last two
    advanced when a retiring block's slot took the next block."""
    best = -1
    best_pc = 0
    best_key = np.int64(0)
    if ts.sub_next[sub] > cycle:
        return best, best_pc, next_block, age
    sub_last = ts.sched_last[sub]
    # sub_next collects the next cycle a warp needs evaluating (empty slots and parked warps: INF_CYCLE)
    ts.sub_next[sub] = T.INF_CYCLE
    later = T.INF_CYCLE
    for j in range(per_sub):
        k = sp + j * nsp
        if k >= slots:
            break
        w = base_sm + k
        e = sub * per_sub + j     # w's entry in w_eval (dispatch.eval_slot)
        due = ts.w_eval[e]
        if due > cycle:
            if due < later:
                later = due
            continue
        if ts.w_exiting[w]:
            next_block, age, later = drain_or_retire(ts, m, w, e, sm, cycle, next_block, age, later)
            continue
        if ts.w_bar[w]:
            wait_at_barrier(ts, m, w, e, cycle)
            continue
        again = evaluate_warp(ts, m, code, policy, lazy, w, e, j, sub, cycle)
        if again < later:
            later = again
        if again == cycle:
            key = priority(policy, w, sub_last, slots, ts.w_age, ts.w_group)
            if best < 0 or key < best_key:
                best = w
                best_pc = ts.w_next_pc[w]
                best_key = key
    if later < ts.sub_next[sub]:
        ts.sub_next[sub] = later
    return best, best_pc, next_block, age
