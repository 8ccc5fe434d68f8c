"""The SM's barrier unit: warps arrive at a block barrier, and complete barriers release their warps.

A warp that issues bar.sync waits (state ``barrier``) until its barrier completes (the rule is in
``semantics.barriers``: every live warp of the block, or the count given); a warp's exit can complete a
barrier the others wait at. Released warps resume ``barrier_latency`` cycles after the cycle that
completed the barrier, plus ``barrier_cycles_per_warp`` per warp that waited (measured on an H200:
14.7 / 28.7 / 76.7 cycles per __syncthreads round at 1 / 8 / 32 warps, 2 cycles per warp).

Simplified: the per-warp cost is charged at release, not as arrivals queue; barriers are checked only when a warp
of the block arrives or exits (the only events that can complete one).
"""

from __future__ import annotations

from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.barriers import ARRIVE_SHIFT, arrive, release_barriers
from gpusim.engine.sm import stalls as ST
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.accounting import warp_to
from gpusim.engine.sm.dispatch import eval_slot


@compiled_only
def release_block_barriers(ts, sm, bslot_local, cycle):
    """Complete the block's barriers that now are (semantics/barriers.py); released warps resume after the
    barrier latency."""
    prm = ts.prm
    wpb = prm[T.TP_WPB]
    first = sm * prm[T.TP_SLOTS] + bslot_local * wpb
    waiting = 0
    pending = 0
    for w in range(first, first + wpb):
        if ts.w_bar[w]:
            waiting += 1
            ts.w_wake[w] = -1          # marks "was waiting"
        pending |= ts.w_bar_id[w] >> ARRIVE_SHIFT
    if waiting == 0:
        if pending != 0:               # bar.arrives alone may complete a barrier nobody waits at
            release_barriers(ts.w_bar, ts.w_bar_id, ts.w_bar_count, ts.w_done, first, wpb)
        return
    release_barriers(ts.w_bar, ts.w_bar_id, ts.w_bar_count, ts.w_done, first, wpb)
    for w in range(first, first + wpb):
        if ts.w_wake[w] == -1:
            if ts.w_bar[w] == 0:
                ts.w_wake[w] = cycle + prm[T.TP_BARRIER_LAT] + waiting * prm[T.TP_BARRIER_PER_WARP]
                ts.w_reason[w] = ST.BARRIER
                ts.w_eval[eval_slot(prm, w)] = cycle + 1
                ts.w_cached[w] = 0
                sub = sm * prm[T.TP_NSP] + (w - sm * prm[T.TP_SLOTS]) % prm[T.TP_NSP]
                ts.sub_next[sub] = min(ts.sub_next[sub], cycle + 1)
            else:
                ts.w_wake[w] = 0
    ts.sm_next[sm] = min(ts.sm_next[sm], cycle + 1)


@compiled_only
def arrive_at_barrier(ts, m, w, sm, cycle):
    """Warp ``w`` issued a barrier instruction (its id and count are in ``m.mem_req``): it waits (a bar.arrive
    goes on: semantics/barriers.arrive), and its arrival may complete the barrier."""
    arrive(ts.w_bar, ts.w_bar_id, ts.w_bar_count, w, m.mem_req[S.MR_BAR_ID], m.mem_req[S.MR_BAR_COUNT])
    release_block_barriers(ts, sm, (w - sm * ts.prm[T.TP_SLOTS]) // ts.prm[T.TP_WPB], cycle)


@compiled_only(inline="always")
def wait_at_barrier(ts, m, w, e, cycle):
    """Warp ``w`` (``w_eval`` entry ``e``) waits at a barrier: charged as ``barrier`` until released
    (``release_block_barriers`` sets its ``w_eval`` again)."""
    warp_to(ts, m, w, ST.BARRIER, cycle, ts.w_pc[w])
    ts.w_eval[e] = T.INF_CYCLE
