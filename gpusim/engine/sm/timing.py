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

The loop runs in slices: a call stops between two cycles once it has done about
``budget`` units of work (one per cycle evaluated, one per warp-instruction
issued) and returns ``TIMED_SLICE``. All the loop's state between cycles is in
``TimingState`` (the clock, the next block and dispatch age are in ``loop``), so
the next call resumes exactly there: a run cut into any number of slices is
bit-identical to one call. Between slices Python shows progress and raises a
pending KeyboardInterrupt.
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.bits import quotient, trailing_zeros64
from gpusim.engine.jit import compiled_only, engine_jit
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.barriers import release_barriers
from gpusim.engine.semantics.execute import step_fast, step_warp
from gpusim.engine.semantics.functional import start_block
from gpusim.engine.semantics.simt import STATUS_BARRIER, STATUS_ERROR, STATUS_EXITED
from gpusim.engine.sm import stalls as ST
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.issue import book_issue, busy_before, dependencies, memory_timing, throttle_state

TIMED_OK = 0
TIMED_ERROR = 1
TIMED_DEADLOCK = 2
TIMED_LIMIT = 3
TIMED_SLICE = 4      # the slice's budget ran out: call again to go on


@compiled_only(inline="always")
def eval_slot(prm, w):
    """Index of warp ``w`` in ``w_eval``, which is laid out sub-partition by sub-partition (see
    timing_state): slot ``k`` of SM ``sm`` is entry ``(sm * NSP + k % NSP) * per_sub + k // NSP``."""
    slots = prm[T.TP_SLOTS]
    nsp = prm[T.TP_NSP]
    sm = w // slots
    k = w - sm * slots
    return (sm * nsp + k % nsp) * ((slots + nsp - 1) // nsp) + k // nsp


@compiled_only
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
        ts.w_eval[eval_slot(prm, w)] = cycle
        ts.w_wake[w] = start
        ts.w_reason[w] = ST.DISPATCH_STALL
        ts.w_age[w] = age + wi
        ts.w_bar[w] = 0
        ts.w_mem_pending[w] = 0
        ts.w_exiting[w] = 0
        ts.w_group[w] = 1
        ts.w_cached[w] = 0
        ts.w_parked[w] = 0
        ts.reg_ready[w, :] = 0
        ts.cp_state[w, :] = 0
        sub = sm * prm[T.TP_NSP] + (w - sm * slots) % prm[T.TP_NSP]
        ts.sub_next[sub] = min(ts.sub_next[sub], cycle)
    ts.b_block[bslot] = block
    ts.b_live[bslot] = wpb
    if ts.sm_warps[sm] == 0:
        ts.sm_active_since[sm] = cycle
    ts.sm_warps[sm] += wpb
    ts.sm_next[sm] = min(ts.sm_next[sm], cycle)


@compiled_only
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
                ts.w_eval[eval_slot(prm, w)] = cycle + 1
                ts.w_cached[w] = 0
                sub = sm * prm[T.TP_NSP] + (w - sm * prm[T.TP_SLOTS]) % prm[T.TP_NSP]
                ts.sub_next[sub] = min(ts.sub_next[sub], cycle + 1)
            else:
                ts.w_wake[w] = 0
    ts.sm_next[sm] = min(ts.sm_next[sm], cycle + 1)


@compiled_only
def close_interval(w_state, w_since, w_pc, stalls, pc_stalls, trace, trace_n, warp_block, w, cycle):
    """Charge warp ``w``'s current interval up to ``cycle`` (it leaves its slot)."""
    elapsed = cycle - w_since[w]
    if elapsed > 0:
        stalls[w_state[w]] += elapsed
        pc_stalls[w_pc[w], w_state[w]] += elapsed
        record_interval(trace, trace_n, warp_block, w, w_state[w], w_since[w], cycle, w_pc[w])
    w_since[w] = cycle


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
def record_interval(trace, trace_n, warp_block, w, state, start, end, pc):
    """Append a warp-state interval to the trace (a no-op when tracing is off: zero capacity)."""
    n = trace_n[0]
    if n < trace.shape[0]:
        trace[n, 0] = w
        trace[n, 1] = state
        trace[n, 2] = start
        trace[n, 3] = end
        trace[n, 4] = pc
        trace[n, 5] = warp_block[w]
        trace_n[0] = n + 1
    elif trace.shape[0] > 0:
        trace_n[1] = 1      # the trace was cut


@compiled_only
def record_issue(issue_trace, issue_trace_n, cycle, w, pc, mem_req, stall_before, block):
    """Append an issued warp-instruction to the trace (no-op when tracing is off)."""
    n = issue_trace_n[0]
    if n < issue_trace.shape[0]:
        issue_trace[n, 0] = cycle
        issue_trace[n, 1] = w
        issue_trace[n, 2] = pc
        issue_trace[n, 3] = mem_req[S.MR_ACTIVE]
        issue_trace[n, 4] = mem_req[S.MR_PRED_ON]
        issue_trace[n, 5] = stall_before
        issue_trace[n, 6] = block
        issue_trace_n[0] = n + 1
    elif issue_trace.shape[0] > 0:
        issue_trace_n[1] = 1


@compiled_only
def _state_to(w_state, w_since, w_pc, stalls, pc_stalls, trace, trace_n, warp_block,
                                  w, state, cycle, pc):
    """Move warp ``w`` to ``state`` at ``cycle`` (waiting to issue ``pc``); a change closes the current
    interval, charging it to the state's counters and, when tracing, recording it."""
    if w_state[w] != state or w_pc[w] != pc:
        elapsed = cycle - w_since[w]
        if elapsed > 0:
            stalls[w_state[w]] += elapsed
            pc_stalls[w_pc[w], w_state[w]] += elapsed
            record_interval(trace, trace_n, warp_block, w, w_state[w], w_since[w], cycle, w_pc[w])
        w_state[w] = state
        w_pc[w] = pc
        w_since[w] = cycle


@compiled_only
def better_warp(policy, w, best, sub_last, slots, w_age, w_group):
    """Whether the scheduler prefers ready warp ``w`` to ``best`` (both of one sub-partition).

    gto: the last issued warp, else the oldest; lrr: the first after the last issued in slot order;
    two_level: the active set first, round-robin within it."""
    if policy == T.POLICY_GTO:
        if w == sub_last:
            return True
        if best == sub_last:
            return False
        return w_age[w] < w_age[best]
    if policy == T.POLICY_TWO_LEVEL and w_group[w] != w_group[best]:
        return w_group[w] > w_group[best]
    return (w - sub_last - 1) % slots < (best - sub_last - 1) % slots


@compiled_only
def pick_parked(policy, candidates, base, nsp, sub_last, w_age, w_group):
    """The warp the scheduler issues among ``candidates`` (bit j: warp ``base + j * nsp``); the same
    choice as ``better_warp`` applied over them."""
    if policy == T.POLICY_GTO:
        if sub_last >= 0 and (candidates >> np.int64(quotient(sub_last - base, nsp))) & 1:
            return sub_last
        best = -1
        rest = candidates
        while rest != 0:
            w = base + np.int64(trailing_zeros64(rest)) * nsp
            rest &= rest - 1
            if best < 0 or w_age[w] < w_age[best]:
                best = w
        return best
    if policy == T.POLICY_TWO_LEVEL:
        active = np.int64(0)
        rest = candidates
        while rest != 0:
            j = np.int64(trailing_zeros64(rest))
            rest &= rest - 1
            if w_group[base + j * nsp]:
                active |= np.int64(1) << j
        if active != 0:
            candidates = active
    if sub_last >= 0:
        later = candidates & ~((np.int64(2) << np.int64(quotient(sub_last - base, nsp))) - 1)
        if later != 0:
            candidates = later
    return base + np.int64(trailing_zeros64(candidates)) * nsp


@compiled_only
def charge_parked(stalls, pc_stalls, pc, throttle, busy, elapsed):
    """Charge a parked warp's wait: ``busy`` cycles its pipe was busy, the rest not selected."""
    stalls[throttle] += busy
    pc_stalls[pc, throttle] += busy
    stalls[ST.NOT_SELECTED] += elapsed - busy
    pc_stalls[pc, ST.NOT_SELECTED] += elapsed - busy


@engine_jit(_nrt=True)
def run_timed(ts, m, ms, code, budget):
    """Run the grid on from where ``ts.loop`` says, for about ``budget`` units of work (cycles evaluated
    plus warp-instructions issued). Returns (TIMED_* status, end cycle, or the cycle it stopped at);
    TIMED_SLICE when the budget ran out first (call again with the same state to go on)."""
    prm = ts.prm
    nsm = prm[T.TP_NSM]
    nsp = prm[T.TP_NSP]
    slots = prm[T.TP_SLOTS]
    bslots = prm[T.TP_BSLOTS]
    nblocks = prm[T.TP_NBLOCKS]
    wpb = prm[T.TP_WPB]
    policy = prm[T.TP_POLICY]
    max_cycles = prm[T.TP_MAX_CYCLES]
    two_level_n = prm[T.TP_TWO_LEVEL_N]
    # hoisted arrays: the scan below touches them for every warp every cycle
    w_resident = ts.w_resident
    w_eval = ts.w_eval
    w_exiting = ts.w_exiting
    w_bar = ts.w_bar
    w_cached = ts.w_cached
    w_dep_ready = ts.w_dep_ready
    w_dep_state = ts.w_dep_state
    w_pipe = ts.w_pipe
    w_next_pc = ts.w_next_pc
    w_state = ts.w_state
    w_since = ts.w_since
    w_pc = ts.w_pc
    w_age = ts.w_age
    w_group = ts.w_group
    w_mem_pending = ts.w_mem_pending
    pipe_free = ts.pipe_free
    pipe_busy_acc = ts.pipe_busy_acc
    pipe_busy_t0 = ts.pipe_busy_t0
    w_parked = ts.w_parked
    w_park_busy = ts.w_park_busy
    park_mask = ts.park_mask
    park_pipes = ts.park_pipes
    sub_next = ts.sub_next
    stalls = ts.stalls
    pc_stalls = ts.pc_stalls
    sm_next = ts.sm_next
    sm_warps = ts.sm_warps
    sched_last = ts.sched_last
    reg_ready = ts.reg_ready
    trace = ts.trace
    trace_n = ts.trace_n
    issue_trace = ts.issue_trace
    warp_block = m.warp_block
    issue_trace_n = ts.issue_trace_n
    reg_dep = ts.reg_dep
    w_wake = ts.w_wake
    w_reason = ts.w_reason
    isa = ts.isa
    pipe_issues = ts.pipe_issues
    pipe_interval = ts.pipe_interval
    clock_mhz = prm[T.TP_CLOCK_MHZ]
    # lazy accounting of ready warps needs one bit per warp of a sub-partition, and no interval trace
    # (a parked warp's not_selected / throttle cycles are charged in total, not as intervals)
    mp = T.MemoryPath(prm, pipe_interval, pipe_free, pipe_busy_acc, pipe_busy_t0, ts.shared_path, ts.bank_scratch,
                      ts.pc_mem, ts.last_sectors, ts.ctr, ts.addrs, ts.sectors, ts.lane_ops, w_mem_pending,
                      ts.mem_trace, ts.mem_trace_n, m.mem_req, m.lane_addr, warp_block, ts.cp_state)
    lazy = trace.shape[0] == 0 and issue_trace.shape[0] == 0 and slots // nsp <= 62
    per_sub = (slots + nsp - 1) // nsp    # slots of a sub-partition: sp, sp + nsp, ... below slots
    sp_of = m.sp
    stk_pc = m.stk_pc
    stk_rpc = m.stk_rpc
    stk_mask = m.stk_mask
    pc_counts = m.pc_counts
    valid = m.valid
    mem32 = m.mem32
    lane_addr = m.lane_addr
    heap_bytes = m.launch[S.L_HEAP_BYTES]
    mem_req = m.mem_req
    clock = m.clock
    regs = m.regs
    loop = ts.loop
    if loop[T.LP_STARTED] == 0:
        next_block = 0
        age = 0
        for k in range(bslots):
            for sm in range(nsm):
                if next_block < nblocks:
                    dispatch_block(ts, m, sm, k, next_block, 0, age)
                    age += wpb
                    next_block += 1
        cycle = 0
        loop[T.LP_STARTED] = 1
    else:
        next_block = loop[T.LP_NEXT_BLOCK]
        age = loop[T.LP_AGE]
        cycle = loop[T.LP_CYCLE]
    work = 0
    while True:
        next_cycle = T.INF_CYCLE
        for sm in range(nsm):
            if sm_next[sm] > cycle:
                if sm_next[sm] < next_cycle:
                    next_cycle = sm_next[sm]
                continue
            base_sm = sm * slots
            for sp in range(nsp):
                sub = sm * nsp + sp
                best = -1
                best_pc = 0
                sub_last = sched_last[sub]
                if sub_next[sub] <= cycle:
                    # evaluate the warps whose state may change now; sub_next collects the next such cycle
                    # (empty slots and parked warps have w_eval = INF_CYCLE)
                    sub_next[sub] = T.INF_CYCLE
                    later = T.INF_CYCLE
                    for j in range(per_sub):
                        k = sp + j * nsp
                        if k >= slots:
                            break
                        w = base_sm + k
                        e = sub * per_sub + j     # w's entry in w_eval (eval_slot)
                        due = w_eval[e]
                        if due > cycle:
                            if due < later:
                                later = due
                            continue
                        if w_exiting[w]:
                            if w_mem_pending[w] <= cycle:
                                close_interval(w_state, w_since, w_pc, stalls, pc_stalls, trace, trace_n, warp_block,
                                               w, cycle)
                                freed = retire_warp(prm, w_resident, ts.w_done, w_eval, sm_warps, ts.sm_active_cycles,
                                                    ts.sm_active_since, ts.ctr, ts.b_live, ts.b_block, w, e, sm, cycle)
                                if freed < 0:
                                    # its block lives on: the exit may complete a barrier the others wait at
                                    release_block_barriers(ts, sm, (w - base_sm) // wpb, cycle)
                                elif next_block < nblocks:
                                    dispatch_block(ts, m, sm, freed, next_block, cycle, age)
                                    next_block += 1
                                    age += wpb
                            else:
                                _state_to(w_state, w_since, w_pc, stalls, pc_stalls, trace, trace_n, warp_block,
                                          w, ST.DRAIN, cycle, w_pc[w])
                                w_eval[e] = w_mem_pending[w]
                                if w_eval[e] < later:
                                    later = w_eval[e]
                            continue
                        if w_bar[w]:
                            _state_to(w_state, w_since, w_pc, stalls, pc_stalls, trace, trace_n, warp_block,
                                      w, ST.BARRIER, cycle, w_pc[w])
                            w_eval[e] = T.INF_CYCLE
                            continue
                        if w_cached[w] == 0:
                            dependencies(sp_of, stk_pc, code, w, w_wake, w_reason, reg_ready, reg_dep, isa,
                                         w_dep_ready, w_dep_state, w_pipe, w_next_pc, w_cached)
                        wake = w_dep_ready[w]
                        state = w_dep_state[w]
                        pipe = w_pipe[w]
                        pc = w_next_pc[w]
                        if lazy and wake <= cycle:
                            # operands ready: from now on only its scheduler and its pipe hold it back, and
                            # neither changes except when this sub-partition issues; park it and charge the
                            # interval when it is picked (not_selected, or throttled while the pipe was busy)
                            if w_state[w] != ST.NOT_SELECTED or w_pc[w] != pc:
                                _state_to(w_state, w_since, w_pc, stalls, pc_stalls, trace, trace_n, warp_block,
                                          w, ST.NOT_SELECTED, cycle, pc)
                            w_parked[w] = 1
                            w_park_busy[w] = busy_before(pipe_free, pipe_busy_acc, pipe_busy_t0, sub, pipe, cycle)
                            park_mask[sub, pipe] |= np.int64(1) << np.int64(j)
                            park_pipes[sub] |= np.int64(1) << pipe
                            w_eval[e] = T.INF_CYCLE
                            continue
                        if pipe_free[sub, pipe] > wake:
                            wake = pipe_free[sub, pipe]
                            state = throttle_state(pipe)
                        if wake > cycle:
                            if w_state[w] != state or w_pc[w] != pc:
                                _state_to(w_state, w_since, w_pc, stalls, pc_stalls, trace, trace_n, warp_block,
                                          w, state, cycle, pc)
                            w_eval[e] = wake
                            if policy == T.POLICY_TWO_LEVEL and w_group[w] == 1 and state == ST.LONG_SCOREBOARD:
                                w_group[w] = 0
                            if wake < later:
                                later = wake
                            continue
                        if w_state[w] != ST.NOT_SELECTED or w_pc[w] != pc:
                            _state_to(w_state, w_since, w_pc, stalls, pc_stalls, trace, trace_n, warp_block,
                                      w, ST.NOT_SELECTED, cycle, pc)
                        w_eval[e] = cycle
                        later = cycle
                        if best < 0 or better_warp(policy, w, best, sub_last, slots, w_age, w_group):
                            best = w
                            best_pc = pc
                    if later < sub_next[sub]:
                        sub_next[sub] = later
                stall_before = ST.NOT_SELECTED
                if lazy:
                    candidates = np.int64(0)
                    pipes = park_pipes[sub]
                    while pipes != 0:
                        p = np.int64(trailing_zeros64(pipes))
                        pipes &= pipes - 1
                        if pipe_free[sub, p] <= cycle:
                            candidates |= park_mask[sub, p]
                    if candidates == 0:
                        continue
                    best = pick_parked(policy, candidates, base_sm + sp, nsp, sub_last, w_age, w_group)
                    best_pc = w_next_pc[best]
                    pipe = w_pipe[best]
                    park_mask[sub, pipe] &= ~(np.int64(1) << np.int64(quotient(best - base_sm, nsp)))
                    if park_mask[sub, pipe] == 0:
                        park_pipes[sub] &= ~(np.int64(1) << pipe)
                    w_parked[best] = 0
                    busy = busy_before(pipe_free, pipe_busy_acc, pipe_busy_t0, sub, pipe, cycle) - w_park_busy[best]
                    charge_parked(stalls, pc_stalls, best_pc, throttle_state(pipe), busy, cycle - w_since[best])
                    w_since[best] = cycle
                else:
                    if best < 0:
                        continue
                    stall_before = w_state[best] if w_pc[best] == best_pc else ST.SELECTED
                _state_to(w_state, w_since, w_pc, stalls, pc_stalls, trace, trace_n, warp_block,
                          best, ST.SELECTED, cycle, best_pc)
                if policy == T.POLICY_TWO_LEVEL and w_group[best] == 0:
                    active = 0
                    for k2 in range(sp, slots, nsp):
                        active += w_group[base_sm + k2] * w_resident[base_sm + k2]
                    if active < two_level_n:
                        w_group[best] = 1
                clock[0] = cycle
                w_cached[best] = 0
                status = step_fast(regs, sp_of, stk_pc, stk_rpc, stk_mask, pc_counts, mem_req, valid, mem32, lane_addr,
                                   heap_bytes, code, best)
                if status < 0:
                    status = step_warp(m, code, best)
                work += 1
                if status == STATUS_ERROR:
                    return TIMED_ERROR, cycle
                pc = mem_req[S.MR_PC]
                memory_ready = -1
                if mem_req[S.MR_KIND] != 0:
                    memory_ready = memory_timing(mp, ms, best, sm, sub, pc, cycle)
                record_issue(issue_trace, issue_trace_n, cycle, best, pc, mem_req, stall_before, warp_block[best])
                book_issue(code, isa, pipe_issues, pipe_free, pipe_busy_acc, pipe_busy_t0, reg_ready,
                           reg_dep, w_wake, w_reason, w_mem_pending, regs, clock_mhz, pc, best, sub, cycle,
                           memory_ready, stk_pc[best, sp_of[best]])
                sched_last[sub] = best
                w_eval[sub * per_sub + quotient(best - base_sm, nsp)] = cycle + 1
                if cycle + 1 < sub_next[sub]:
                    sub_next[sub] = cycle + 1
                if status == STATUS_EXITED:
                    w_exiting[best] = 1
                elif status == STATUS_BARRIER:
                    w_bar[best] = 1
                    ts.w_bar_id[best] = m.mem_req[S.MR_BAR_ID]
                    ts.w_bar_count[best] = m.mem_req[S.MR_BAR_COUNT]
                    release_block_barriers(ts, sm, (best - base_sm) // wpb, cycle)
            # the SM's next event: a warp to evaluate, or a parked warp's pipe coming free
            sm_min = T.INF_CYCLE
            for sub in range(sm * nsp, sm * nsp + nsp):
                if sub_next[sub] < sm_min:
                    sm_min = sub_next[sub]
                pipes = park_pipes[sub]
                while pipes != 0:
                    p = np.int64(trailing_zeros64(pipes))
                    pipes &= pipes - 1
                    t = max(pipe_free[sub, p], cycle + 1)
                    if t < sm_min:
                        sm_min = t
            sm_next[sm] = sm_min
            if sm_next[sm] < next_cycle:
                next_cycle = sm_next[sm]
        if next_cycle >= T.INF_CYCLE:
            for sm in range(nsm):
                if sm_warps[sm] > 0:
                    return TIMED_DEADLOCK, cycle
            return TIMED_OK, ts.ctr[T.TC_END_CYCLE]
        if next_cycle > max_cycles:
            loop[T.LP_CYCLE] = cycle
            return TIMED_LIMIT, cycle
        cycle = next_cycle if next_cycle > cycle else cycle + 1
        work += 1
        if work >= budget:
            loop[T.LP_CYCLE] = cycle
            loop[T.LP_NEXT_BLOCK] = next_block
            loop[T.LP_AGE] = age
            return TIMED_SLICE, cycle
