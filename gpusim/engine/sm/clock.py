"""Time: the global clock, each SM's next event, and where a call of the timed loop stops.

All SMs share one clock. An SM is looked at only at cycles where something of it may change: a warp
to evaluate (``sub_next``) or a parked warp's pipe coming free. When no SM has anything to do at the
current cycle the clock jumps to the earliest next event. A call stops when every warp has retired
(done), when warps remain but no event is pending (deadlock), past ``max_cycles`` (limit), or once it
has done ``budget`` units of work (a slice: the state in ``loop`` lets the next call resume exactly).

Simplified: the clock is one integer core clock for every SM (no clock domains, no per-SM skew).
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.bits import trailing_zeros64
from gpusim.engine.jit import compiled_only
from gpusim.engine.sm import timing_state as T

TIMED_OK = 0
TIMED_ERROR = 1
TIMED_DEADLOCK = 2
TIMED_LIMIT = 3
TIMED_SLICE = 4      # the slice's budget ran out: call again to go on
TIMED_RUNNING = -1   # (between the loop's steps) go on


@compiled_only
def sm_next_event(ts, sm, nsp, cycle):
    """Set and return the SM's next event after ``cycle``: a warp to evaluate, or a parked warp's pipe
    coming free (``nsp`` sub-partitions per SM)."""
    sm_min = T.INF_CYCLE
    for sub in range(sm * nsp, sm * nsp + nsp):
        if ts.sub_next[sub] < sm_min:
            sm_min = ts.sub_next[sub]
        pipes = ts.park_pipes[sub]
        while pipes != 0:
            p = np.int64(trailing_zeros64(pipes))
            pipes &= pipes - 1
            t = max(ts.pipe_free[sub, p], cycle + 1)
            if t < sm_min:
                sm_min = t
    ts.sm_next[sm] = sm_min
    return sm_min


@compiled_only
def advance_clock(ts, cycle, next_cycle, work, budget, next_block, age):
    """Move the clock from ``cycle`` to the earliest next event ``next_cycle``, or stop. Returns
    (``TIMED_RUNNING`` and the new cycle, or a TIMED_* status and the cycle to report; work done)."""
    loop = ts.loop
    if next_cycle >= T.INF_CYCLE:
        for sm in range(ts.prm[T.TP_NSM]):
            if ts.sm_warps[sm] > 0:
                return TIMED_DEADLOCK, cycle, work
        return TIMED_OK, ts.ctr[T.TC_END_CYCLE], work
    if next_cycle > ts.prm[T.TP_MAX_CYCLES]:
        loop[T.LP_CYCLE] = cycle
        return TIMED_LIMIT, cycle, work
    cycle = next_cycle if next_cycle > cycle else cycle + 1
    work += 1
    if work >= budget:
        loop[T.LP_CYCLE] = cycle
        loop[T.LP_NEXT_BLOCK] = next_block
        loop[T.LP_AGE] = age
        return TIMED_SLICE, cycle, work
    return TIMED_RUNNING, cycle, work
