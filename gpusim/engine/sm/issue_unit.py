"""The issue stage: the selected warp's instruction executes and its timing is booked.

``begin_issue`` marks the warp selected; the instruction then runs through the functional semantics at
the issue cycle (``step_fast``, else ``step_warp``, called by the loop itself with its hoisted arrays: a
call passes its arguments array by array); ``finish_issue`` books it: a memory instruction walks the
memory path (``issue.memory_timing``); the pipe, the destination registers and any wait are booked
(``issue.book_issue``). The warp is looked at again the next cycle. An exit starts the warp's drain
(``retire``); a barrier instruction makes it wait at the barrier (``barrier_unit``). Under ``two_level``
a warp outside the active set that issues may join it.

Simplified: execution is instantaneous at issue (results are exact; only their availability is
timed), and the issue stage itself never stalls: every hazard is resolved before selection.
"""

from __future__ import annotations

from gpusim.engine.bits import quotient
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.simt import STATUS_BARRIER, STATUS_EXITED
from gpusim.engine.sm import stalls as ST
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.accounting import record_issue, warp_to
from gpusim.engine.sm.barrier_unit import arrive_at_barrier
from gpusim.engine.sm.issue import book_issue, memory_timing
from gpusim.engine.sm.schedulers import POLICY_TWO_LEVEL, two_level_admit


@compiled_only
def begin_issue(ts, m, policy, best, best_pc, sm, sp, cycle):
    """Warp ``best`` is selected at ``cycle`` to issue its instruction at ``best_pc``; the caller then
    executes it (``step_fast``, else ``step_warp``: the loop calls them itself, with its hoisted arrays)."""
    warp_to(ts, m, best, ST.SELECTED, cycle, best_pc)
    if policy == POLICY_TWO_LEVEL:
        two_level_admit(ts, best, sm, sp)
    m.clock[0] = cycle
    ts.w_cached[best] = 0


@compiled_only
def finish_issue(ts, m, ms, mp, code, best, stall_before, sm, sub, base_sm, nsp, per_sub, cycle, status):
    """Book the timing of warp ``best``'s instruction, executed at ``cycle`` with ``status`` on
    sub-partition ``sub`` of ``sm``: the memory path, the pipe and registers, the trace; the warp is
    looked at again the next cycle; an exit starts its drain, a barrier instruction makes it wait."""
    prm = ts.prm
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
    ts.w_eval[sub * per_sub + quotient(best - base_sm, nsp)] = cycle + 1
    if cycle + 1 < ts.sub_next[sub]:
        ts.sub_next[sub] = cycle + 1
    if status == STATUS_EXITED:
        ts.w_exiting[best] = 1
    elif status == STATUS_BARRIER:
        arrive_at_barrier(ts, m, best, sm, cycle)
