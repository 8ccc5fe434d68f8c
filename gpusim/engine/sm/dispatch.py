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

Clusters (``TP_CLUSTER`` > 1). A cluster's blocks are dispatched together, all at once, onto one GPC: the SMs
are GPCs of ``TP_GPC_SMS`` (SMs past the last whole GPC take no cluster), each cut into ``GPC_SMS // cluster``
positions of ``cluster`` consecutive SMs, and rank r of a cluster goes to SM ``first + r`` of its position,
every rank at the same block slot (so another rank's slot is a fixed stride away:
``semantics/cluster.rank_slots``). A position takes the next cluster once every block of the one it held has
finished (the hardware places a cluster only when all its CTAs fit at once). Simplified: a cluster's CTAs are
on distinct SMs (the hardware may put several on one SM), and GPCs are all ``TP_GPC_SMS`` SMs large.
"""

from __future__ import annotations

from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics.cluster import cluster_block
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
    block = cluster_block(m.launch, block)     # the engine's order -> %ctaid (a cluster's blocks in rank order)
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
        ts.w_bar_id[w] = 0          # no bar.arrive pending from the block before
        ts.w_bar_count[w] = 0
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
    if prm[T.TP_CLUSTER] > 1:
        for k in range(prm[T.TP_BSLOTS]):
            for first in range(0, prm[T.TP_NSM] - prm[T.TP_CLUSTER] + 1):
                if _position_first(prm, first) == first:
                    next_block, age = _dispatch_cluster(ts, m, first, k, next_block, age, 0)
        return next_block, age
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
    prm = ts.prm
    if prm[T.TP_CLUSTER] > 1:
        first = _position_first(prm, sm)
        for r in range(prm[T.TP_CLUSTER]):
            if ts.b_block[(first + r) * prm[T.TP_BSLOTS] + bslot_local] >= 0:
                return next_block, age          # a block of the position's cluster still runs
        return _dispatch_cluster(ts, m, first, bslot_local, next_block, age, cycle)
    if next_block < ts.prm[T.TP_NBLOCKS]:
        dispatch_block(ts, m, sm, bslot_local, next_block, cycle, age)
        next_block += 1
        age += ts.prm[T.TP_WPB]
    return next_block, age


@compiled_only
def _position_first(prm, sm):
    """The first SM of the cluster position ``sm`` is in (-1: an SM past the last position of its GPC)."""
    gpc_sms = prm[T.TP_GPC_SMS]
    size = prm[T.TP_CLUSTER]
    gpc = sm // gpc_sms
    inside = sm - gpc * gpc_sms
    if gpc >= prm[T.TP_NSM] // gpc_sms or inside >= (gpc_sms // size) * size:
        return -1
    return gpc * gpc_sms + (inside // size) * size


@compiled_only
def _dispatch_cluster(ts, m, first, bslot_local, next_block, age, cycle):
    """Dispatch the next cluster (blocks ``next_block`` .. + size - 1, by rank) to SMs ``first`` .. at block
    slot ``bslot_local``. Returns (next block, next age)."""
    prm = ts.prm
    if first < 0 or next_block >= prm[T.TP_NBLOCKS]:
        return next_block, age
    for r in range(prm[T.TP_CLUSTER]):
        dispatch_block(ts, m, first + r, bslot_local, next_block, cycle, age)
        next_block += 1
        age += prm[T.TP_WPB]
    return next_block, age
