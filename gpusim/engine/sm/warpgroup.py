"""Timing of the warpgroup-collective ``wgmma.wait_group`` (semantics/wgmma_groups.py): a warp whose wait
cannot complete because another warp of its warpgroup has not yet committed the groups it waits for stays at
the instruction, waiting (charged as ``barrier``, a warpgroup synchronisation), and is looked at again when a
warp of its warpgroup commits a wgmma group -- the only event that can complete its wait. Without this a
spinning warp could take every issue slot of its sub-partition from the warp it waits for.

Simplified: a warp that exits without committing (an ISA violation for ``.aligned`` wgmma) wakes nobody; the
waiting warp then re-checks after ``RECHECK_CYCLES`` (a bound on the hang, not a hardware figure).
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.sm import stalls as ST
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.dispatch import eval_slot

WARPGROUP_WARPS = 4
RECHECK_CYCLES = 1000


@compiled_only
def _is_wgmma_wait(code, pc):
    return code[pc, L.F_OP] == c.OP_CP_WAIT and (code[pc, L.F_TC_FLAGS] & L.TC_WGMMA) != 0


@compiled_only
def warpgroup_timing(ts, m, code, w, pc, sm, cycle):
    """Warp ``w`` issued the wgmma commit or wait at ``pc``: park it if its wait must retry; wake the warps of
    its warpgroup waiting at a wait after it commits."""
    prm = ts.prm
    if code[pc, L.F_OP] == c.OP_CP_WAIT:
        if m.sp[w] >= 0 and m.stk_pc[w, m.sp[w]] == pc:        # RETRY: the warpgroup has not caught up
            ts.w_wake[w] = cycle + RECHECK_CYCLES
            ts.w_reason[w] = ST.BARRIER
        return
    wpb = prm[T.TP_WPB]
    block_first = sm * prm[T.TP_SLOTS] + ((w - sm * prm[T.TP_SLOTS]) // wpb) * wpb
    index = w - block_first
    first = block_first + index - index % WARPGROUP_WARPS
    for k in range(first, min(first + WARPGROUP_WARPS, block_first + wpb)):
        if k == w or m.sp[k] < 0 or ts.w_wake[k] <= cycle + 1 or not _is_wgmma_wait(code, m.stk_pc[k, m.sp[k]]):
            continue
        ts.w_wake[k] = cycle + 1
        ts.w_cached[k] = 0
        e = eval_slot(prm, k)
        ts.w_eval[e] = min(ts.w_eval[e], cycle + 1)
        sub = sm * prm[T.TP_NSP] + (k - sm * prm[T.TP_SLOTS]) % prm[T.TP_NSP]
        ts.sub_next[sub] = min(ts.sub_next[sub], cycle + 1)
    ts.sm_next[sm] = min(ts.sm_next[sm], cycle + 1)
