"""The issue stage: the selected warp's instruction executes and its timing is booked.

The instruction runs through the functional semantics at the issue cycle (``step_fast``, else
``step_warp``); a memory instruction walks the memory path (``issue.memory_timing``); the pipe, the
destination registers and any wait are booked (``issue.book_issue``). The warp is looked at again the
next cycle. An exit starts the warp's drain (``retire``); a barrier instruction makes it wait at the
barrier (``barrier_unit``). Under ``two_level`` a warp outside the active set that issues may join it.

Simplified: execution is instantaneous at issue (results are exact; only their availability is
timed), and the issue stage itself never stalls: every hazard is resolved before selection.
"""

from __future__ import annotations

from gpusim.engine.bits import quotient
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.execute import step_fast, step_warp
from gpusim.engine.semantics.simt import STATUS_BARRIER, STATUS_ERROR, STATUS_EXITED
from gpusim.engine.sm import stalls as ST
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.accounting import record_issue, warp_to
from gpusim.engine.sm.barrier_unit import arrive_at_barrier
from gpusim.engine.sm.issue import book_issue, memory_timing
from gpusim.engine.sm.schedulers import POLICY_TWO_LEVEL, two_level_admit


@compiled_only
def issue_warp(ts, m, ms, mp, code, policy, best, best_pc, stall_before, sm, sp, cycle):
    """Issue warp ``best``'s instruction at ``best_pc`` on sub-partition ``sp`` of ``sm`` at ``cycle``.
    Returns the functional step's status (``STATUS_ERROR`` stops the run)."""
    prm = ts.prm
    nsp = prm[T.TP_NSP]
    slots = prm[T.TP_SLOTS]
    sub = sm * nsp + sp
    base_sm = sm * slots
    warp_to(ts, m, best, ST.SELECTED, cycle, best_pc)
    if policy == POLICY_TWO_LEVEL:
        two_level_admit(ts, best, sm, sp)
    m.clock[0] = cycle
    ts.w_cached[best] = 0
    status = step_fast(m.regs, m.sp, m.stk_pc, m.stk_rpc, m.stk_mask, m.pc_counts, m.mem_req, m.valid, m.mem32,
                       m.lane_addr, m.launch[S.L_HEAP_BYTES], code, best)
    if status < 0:
        status = step_warp(m, code, best)
    if status == STATUS_ERROR:
        return status
    mem_req = m.mem_req
    pc = mem_req[S.MR_PC]
    memory_ready = -1
    if mem_req[S.MR_KIND] != 0:
        memory_ready = memory_timing(mp, ms, best, sm, sub, pc, cycle)
    record_issue(ts.issue_trace, ts.issue_trace_n, cycle, best, pc, mem_req, stall_before, m.warp_block[best])
    book_issue(code, ts.isa, ts.pipe_issues, ts.pipe_free, ts.pipe_busy_acc, ts.pipe_busy_t0, ts.reg_ready,
               ts.reg_dep, ts.w_wake, ts.w_reason, ts.w_mem_pending, m.regs, prm[T.TP_CLOCK_MHZ], pc, best, sub,
               cycle, memory_ready, m.stk_pc[best, m.sp[best]])
    ts.sched_last[sub] = best
    ts.w_eval[sub * ((slots + nsp - 1) // nsp) + quotient(best - base_sm, nsp)] = cycle + 1
    if cycle + 1 < ts.sub_next[sub]:
        ts.sub_next[sub] = cycle + 1
    if status == STATUS_EXITED:
        ts.w_exiting[best] = 1
    elif status == STATUS_BARRIER:
        arrive_at_barrier(ts, m, best, sm, cycle)
    return status
