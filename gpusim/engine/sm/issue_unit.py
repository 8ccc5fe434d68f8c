"""The issue stage: the selected warp's instruction executes and its timing is booked.

``begin_issue`` marks the warp selected; the instruction then runs through the functional semantics at
the issue cycle (``step_fast``, else ``step_warp``, called by the loop itself with its hoisted arrays: a
call passes its arguments array by array); ``finish_issue`` books it: a memory instruction walks the
memory path (``issue.memory_timing``); the pipe, the destination registers and any wait are booked
(``issue.book_issue``). The warp is looked at again the next cycle. An exit starts the warp's drain
(``retire``); a barrier instruction makes it wait at the barrier (``barrier_unit``). Under ``two_level``
a warp outside the active set that issues may join it.

What-if "no divergence cost" (``TP_WHATIF`` bit ``WHATIF_NO_DIVERGENCE_COST``, docs/what-if.md): the two
paths of a divergent branch run side by side instead of one after the other, as a converged warp's one
stream would. After a warp issues for one path, the other path goes on top of its stack
(``simt.swap_sibling_paths``, so the paths take turns and each one's latencies overlap the other's); when
that path's next instruction has its operands and its pipe (or the same pipe as the first: two disjoint
sets of lanes fill at most one warp-wide issue) at this cycle, it issues in the same issue slot
(``issue_other_path``): one issue covers both paths. The warp's wait after the slot is the longer of the
two instructions' (a branch's resolution). Results are the same; only their timing changes.

Simplified: execution is instantaneous at issue (results are exact; only their availability is
timed), and the issue stage itself never stalls: every hazard is resolved before selection. Under the
what-if, a branch's two innermost paths pair up; the paths of an enclosing branch wait until they
reconverge, and a warp whose group is blocked at a warp-synchronous instruction (ITS) keeps its order.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import isa as I
from gpusim.arch import layout as L
from gpusim.engine.bits import quotient
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.execute import step_fast, step_shared, step_warp
from gpusim.engine.semantics.simt import STATUS_BARRIER, STATUS_ERROR, STATUS_EXITED, STATUS_OK, swap_sibling_paths
from gpusim.engine.sm import stalls as ST
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.accounting import record_issue, warp_to
from gpusim.engine.sm.barrier_unit import arrive_at_barrier
from gpusim.engine.sm.issue import book_issue, dependencies, memory_timing, path_lanes
from gpusim.engine.sm.schedulers import POLICY_TWO_LEVEL, two_level_admit
from gpusim.engine.sm.warpgroup import warpgroup_timing


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
               cycle, memory_ready, m.stk_pc[best, m.sp[best]], path_lanes(prm, m.sp, m.stk_mask, best))
    ts.sched_last[sub] = best
    ts.w_eval[sub * per_sub + quotient(best - base_sm, nsp)] = cycle + 1
    if cycle + 1 < ts.sub_next[sub]:
        ts.sub_next[sub] = cycle + 1
    if (code[pc, L.F_OP] == c.OP_CP_WAIT or code[pc, L.F_OP] == c.OP_CP_COMMIT) and \
            (code[pc, L.F_TC_FLAGS] & L.TC_WGMMA) != 0:
        warpgroup_timing(ts, m, code, best, pc, sm, cycle)
    if status == STATUS_EXITED:
        ts.w_exiting[best] = 1
    elif status == STATUS_BARRIER:
        arrive_at_barrier(ts, m, best, sm, cycle)


@compiled_only
def other_path_ready(ts, m, code, w, sub, pc, cycle):
    """No divergence cost: warp ``w`` just issued the instruction at ``pc`` for one path of a divergent
    branch. Put the other path on top; True when its next instruction can issue in the same slot (its
    operands ready at ``cycle``; its pipe free, or the pipe ``pc`` took)."""
    if m.its_wait[w] != 0 or not swap_sibling_paths(m.sp, m.stk_pc, m.stk_rpc, m.stk_mask, w):
        return False
    wake = ts.w_wake[w]
    ts.w_wake[w] = cycle            # the first instruction's own wait (a branch's) is not the other path's
    dependencies(m.sp, m.stk_pc, code, w, ts.w_wake, ts.w_reason, ts.reg_ready, ts.reg_dep, ts.isa,
                 ts.w_dep_ready, ts.w_dep_state, ts.w_pipe, ts.w_next_pc, ts.w_cached,
                 path_lanes(ts.prm, m.sp, m.stk_mask, w))
    ts.w_wake[w] = wake
    ts.w_cached[w] = 0
    pipe = ts.w_pipe[w]
    same_pipe = pipe == ts.isa[code[pc, L.F_ISA], I.I_PIPE]
    return ts.w_dep_ready[w] <= cycle and (same_pipe or ts.pipe_free[sub, pipe] <= cycle)


@compiled_only
def issue_other_path(ts, m, ms, mp, code, w, sm, sub, base_sm, nsp, per_sub, cycle):
    """No divergence cost (``TP_WHATIF``): after warp ``w``'s issue at ``cycle`` for one path of a
    divergent branch, issue the other path's next instruction in the same slot when it can go now. Returns
    (STATUS_* of that instruction, 1) when it issued, (STATUS_OK, 0) when not."""
    if not other_path_ready(ts, m, code, w, sub, m.mem_req[S.MR_PC], cycle):
        return STATUS_OK, 0
    wake = ts.w_wake[w]
    reason = ts.w_reason[w]
    status = step_fast(m.regs, m.sp, m.stk_pc, m.stk_rpc, m.stk_mask, m.pc_counts, m.mem_req, m.valid, m.mem32,
                       m.lane_addr, m.launch[S.L_HEAP_BYTES], code, w)
    if status < 0:
        status = step_shared(m.regs, m.sp, m.stk_pc, m.stk_rpc, m.stk_mask, m.pc_counts, m.mem_req, m.lane_addr,
                             m.launch, m.shared32, m.warp_bslot, m.param32, m.param64,
                             code, w)
    if status < 0:
        status = step_warp(m, code, w)
    if status == STATUS_ERROR:
        return status, 1
    finish_issue(ts, m, ms, mp, code, w, ST.SELECTED, sm, sub, base_sm, nsp, per_sub, cycle, status)
    if wake > ts.w_wake[w]:
        ts.w_wake[w] = wake
        ts.w_reason[w] = reason
    return status, 1
