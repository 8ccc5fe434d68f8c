"""The timed loop: every cycle, each due SM's sub-partitions scan, select and issue; then time advances.

All SMs advance on one global clock. An SM is evaluated only at cycles where one of its warps may
change (``sm_next``). Per sub-partition, one cycle is these steps, each a unit's module:

1. ``eligibility.scan_warps``: the due warps are evaluated (scoreboard and pipe); exited warps drain
   or retire (``retire``, which hands a freed block slot to ``dispatch``), warps at a barrier wait
   (``barrier_unit``); stalled warps are charged their state (``accounting``);
2. ``schedulers.select_warp``: the scheduler picks one eligible warp by its policy (gto, lrr,
   two_level, oldest_first);
3. ``issue_unit.begin_issue``, the functional step (``step_fast``/``step_warp``), then
   ``issue_unit.finish_issue``: the warp's instruction executes and its pipe, registers and memory path
   are booked;

then ``clock.sm_next_event`` gives the SM's next event, and ``clock.advance_clock`` jumps the clock to the
earliest one over all SMs (or stops). A warp's state is charged per interval, so skipped cycles cost
nothing to account. Blocks are dispatched breadth-first over SMs up to the occupancy limit
(``dispatch``); a retiring block's slot takes the next block, which starts after ``block_launch_cycles``.

The loop runs in slices: a call stops between two cycles once it has done about ``budget`` units of
work (one per cycle evaluated, one per warp-instruction issued) and returns ``TIMED_SLICE``. All the
loop's state between cycles is in ``TimingState`` (the clock, the next block and dispatch age are in
``loop``), so the next call resumes exactly there: a run cut into any number of slices is
bit-identical to one call. Between slices Python shows progress and raises a pending
KeyboardInterrupt.

Simplified: the units are evaluated in a fixed order within a cycle (SM by SM, sub-partition by
sub-partition; scan, select, issue), so same-cycle interactions between SMs resolve in SM order.
"""

from __future__ import annotations

from gpusim.engine.jit import engine_jit
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.execute import step_fast, step_shared, step_warp
from gpusim.engine.semantics.simt import STATUS_ERROR, STATUS_OK
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.clock import (
    TIMED_DEADLOCK,
    TIMED_ERROR,
    TIMED_LIMIT,
    TIMED_OK,
    TIMED_RUNNING,
    TIMED_SLICE,
    advance_clock,
    sm_next_event,
)
from gpusim.engine.sm.dispatch import dispatch_block, dispatch_first_wave, eval_slot
from gpusim.engine.sm.eligibility import scan_warps
from gpusim.engine.sm.issue_unit import begin_issue, finish_issue, issue_other_path
from gpusim.engine.sm.schedulers import select_warp

__all__ = ["TIMED_DEADLOCK", "TIMED_ERROR", "TIMED_LIMIT", "TIMED_OK", "TIMED_SLICE", "dispatch_block",
           "eval_slot", "run_timed"]


@engine_jit(_nrt=True)
def run_timed(ts, m, ms, code, budget):
    """Run the grid on from where ``ts.loop`` says, for about ``budget`` units of work (cycles evaluated
    plus warp-instructions issued). Returns (TIMED_* status, end cycle, or the cycle it stopped at);
    TIMED_SLICE when the budget ran out first (call again with the same state to go on)."""
    prm = ts.prm
    nsm = prm[T.TP_NSM]
    nsp = prm[T.TP_NSP]
    slots = prm[T.TP_SLOTS]
    per_sub = (slots + nsp - 1) // nsp    # slots of a sub-partition: sp, sp + nsp, ... below slots
    policy = prm[T.TP_POLICY]
    sm_next = ts.sm_next
    loop = ts.loop
    # what an issued instruction's memory path touches, gathered once (issue.memory_timing)
    mp = T.MemoryPath(prm, ts.pipe_interval, ts.pipe_free, ts.pipe_busy_acc, ts.pipe_busy_t0, ts.shared_path,
                      ts.bank_scratch, ts.pc_mem, ts.last_sectors, ts.ctr, ts.addrs, ts.sectors, ts.lane_ops,
                      ts.w_mem_pending, ts.mem_trace, ts.mem_trace_n, m.mem_req, m.lane_addr, m.warp_block,
                      ts.cp_state, ts.bulk_groups, m.bulk_tx, m.warp_bslot, ts.tma_unit)
    # lazy accounting of ready warps needs one bit per warp of a sub-partition, and no interval trace
    # (a parked warp's not_selected / throttle cycles are charged in total, not as intervals)
    # hoisted for the functional step (a struct field read costs a reference count here)
    regs, sp_of, stk_pc, stk_rpc, stk_mask = m.regs, m.sp, m.stk_pc, m.stk_rpc, m.stk_mask
    pc_counts, mem_req, valid, mem32, lane_addr = m.pc_counts, m.mem_req, m.valid, m.mem32, m.lane_addr
    heap_bytes = m.launch[S.L_HEAP_BYTES]
    m.launch[S.L_TIMED] = 1    # bulk copies complete their mbarrier bytes when they land (sm/async_timing.py)
    lazy = ts.trace.shape[0] == 0 and ts.issue_trace.shape[0] == 0 and slots // nsp <= 62
    side_by_side = (prm[T.TP_WHATIF] & T.WHATIF_NO_DIVERGENCE_COST) != 0    # what-if: issue_unit
    if loop[T.LP_STARTED] == 0:
        next_block, age = dispatch_first_wave(ts, m)
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
                best, best_pc, next_block, age = scan_warps(ts, m, code, policy, lazy, sm, sp, sub, base_sm, nsp,
                                                            slots, per_sub, cycle, next_block, age)
                best, best_pc, stall_before = select_warp(ts, policy, lazy, best, best_pc, sub, base_sm, sp, nsp,
                                                          slots, cycle)
                if best < 0:
                    continue
                begin_issue(ts, m, policy, best, best_pc, sm, sp, cycle)
                status = step_fast(regs, sp_of, stk_pc, stk_rpc, stk_mask, pc_counts, mem_req, valid, mem32,
                                   lane_addr, heap_bytes, code, best)
                if status < 0:
                    status = step_shared(regs, sp_of, stk_pc, stk_rpc, stk_mask, pc_counts, mem_req, lane_addr,
                                         m.launch, m.shared32, m.warp_bslot, m.param32, m.param64, code, best)
                if status < 0:
                    status = step_warp(m, code, best)
                work += 1
                if status == STATUS_ERROR:
                    return TIMED_ERROR, cycle
                finish_issue(ts, m, ms, mp, code, best, stall_before, sm, sub, base_sm, nsp, per_sub, cycle, status)
                top = sp_of[best]    # what-if: only a warp whose top two entries are sibling paths can co-issue
                if side_by_side and status == STATUS_OK and top > 0 and stk_rpc[best, top] == stk_rpc[best, top - 1]:
                    status, more = issue_other_path(ts, m, ms, mp, code, best, sm, sub, base_sm, nsp, per_sub, cycle)
                    work += more
                    if status == STATUS_ERROR:
                        return TIMED_ERROR, cycle
            next_cycle = min(next_cycle, sm_next_event(ts, sm, nsp, cycle))
        status, cycle, work = advance_clock(ts, cycle, next_cycle, work, budget, next_block, age)
        if status != TIMED_RUNNING:
            return status, cycle
