"""Block dispatch: the work distributor places blocks on SMs and sets up their warp slots.

The first wave goes breadth-first over SMs (block slot 0 of every SM, then slot 1, ...) up to the
occupancy limit; afterwards a block slot freed by a retiring block takes the next block in grid order.
A dispatched block's warps wait ``block_launch_cycles`` (dispatch_stall) before their first issue, and
get consecutive dispatch ages (the schedulers' "oldest"). An SM starts at most one block per
``TP_BLOCK_INTERVAL`` cycles (max(block_dispatch_interval_cycles, warps x warp_dispatch_cycles), measured
with empty blocks on an H200: 172 cycles per block per SM, 210 for 32-warp blocks), so a block that finds
its slot free still waits for the SM's dispatch to come free.

Simplified: the rate is per SM (measured with every SM busy, where a per-SM and a chip-wide rate agree), and
a block's warps occupy contiguous warp slots of one SM.
"""

from __future__ import annotations

from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics.functional import start_block
from gpusim.engine.sm import stalls as ST
from gpusim.engine.sm import timing_state as T


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
    begin = max(cycle, ts.sm_dispatch_free[sm])
    ts.sm_dispatch_free[sm] = begin + prm[T.TP_BLOCK_INTERVAL]
    start = begin + prm[T.TP_BLOCK_LAUNCH]
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
        ts.bulk_groups[w, :] = 0
        sub = sm * prm[T.TP_NSP] + (w - sm * slots) % prm[T.TP_NSP]
        ts.sub_next[sub] = min(ts.sub_next[sub], cycle)
    ts.b_block[bslot] = block
    ts.b_live[bslot] = wpb
    if ts.sm_warps[sm] == 0:
        ts.sm_active_since[sm] = cycle
    ts.sm_warps[sm] += wpb
    ts.sm_next[sm] = min(ts.sm_next[sm], cycle)


@compiled_only
def dispatch_first_wave(ts, m):
    """Fill every SM's block slots at cycle 0, breadth-first over SMs. Returns (next block, next age)."""
    prm = ts.prm
    next_block = 0
    age = 0
    for k in range(prm[T.TP_BSLOTS]):
        for sm in range(prm[T.TP_NSM]):
            if next_block < prm[T.TP_NBLOCKS]:
                dispatch_block(ts, m, sm, k, next_block, 0, age)
                age += prm[T.TP_WPB]
                next_block += 1
    return next_block, age


@compiled_only
def dispatch_next(ts, m, sm, bslot_local, next_block, age, cycle):
    """Block slot ``bslot_local`` of ``sm`` came free at ``cycle``: give it the next block, if any.
    Returns (next block, next age)."""
    if next_block < ts.prm[T.TP_NBLOCKS]:
        dispatch_block(ts, m, sm, bslot_local, next_block, cycle, age)
        next_block += 1
        age += ts.prm[T.TP_WPB]
    return next_block, age
