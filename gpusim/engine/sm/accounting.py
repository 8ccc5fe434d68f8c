"""Stall accounting: each warp's time charged to one state (stalls.*) per interval, and the trace rows.

A warp stays in one state until something it waits for changes; the interval is charged when the
state (or the pc it is charged to) changes, so cycles the loop skips cost nothing to account. A parked
warp (lazy accounting, see eligibility) is charged its whole wait at once when its scheduler picks it:
the cycles its pipe was busy as that pipe's throttle, the rest as not_selected.

Simplified: a state is charged whole to the pc the warp waits to issue; tracing records the same
intervals and issued instructions into fixed-capacity tables (a full table is marked cut, not grown).
"""

from __future__ import annotations

from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.sm import stalls as ST


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
def close_interval(w_state, w_since, w_pc, stalls, pc_stalls, trace, trace_n, warp_block, w, cycle):
    """Charge warp ``w``'s current interval up to ``cycle`` (it leaves its slot)."""
    elapsed = cycle - w_since[w]
    if elapsed > 0:
        stalls[w_state[w]] += elapsed
        pc_stalls[w_pc[w], w_state[w]] += elapsed
        record_interval(trace, trace_n, warp_block, w, w_state[w], w_since[w], cycle, w_pc[w])
    w_since[w] = cycle


@compiled_only
def state_to(w_state, w_since, w_pc, stalls, pc_stalls, trace, trace_n, warp_block, w, state, cycle, pc):
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


@compiled_only(inline="always")
def warp_to(ts, m, w, state, cycle, pc):
    """``state_to`` over the timing state's arrays."""
    state_to(ts.w_state, ts.w_since, ts.w_pc, ts.stalls, ts.pc_stalls, ts.trace, ts.trace_n, m.warp_block,
             w, state, cycle, pc)


@compiled_only
def charge_parked(stalls, pc_stalls, pc, throttle, busy, elapsed):
    """Charge a parked warp's wait: ``busy`` cycles its pipe was busy, the rest not selected."""
    stalls[throttle] += busy
    pc_stalls[pc, throttle] += busy
    stalls[ST.NOT_SELECTED] += elapsed - busy
    pc_stalls[pc, ST.NOT_SELECTED] += elapsed - busy
