"""Timing of the asynchronous copies: ``cp.async``'s groups (tensor cores, issue 14) and ``cp.async.bulk``
(Hopper, issue 25), reached from ``issue.memory_timing`` for requests of kind ``MK_ASYNC_COMMIT`` and above
(so no other instruction pays for them).

Bulk copies
    A ``cp.async.bulk`` moves its bytes through the memory system as whole sectors, ``sector_bytes`` apart
    from the copy's first byte to its last: global->shared as an L1-bypassing load (``memsys.global_load``),
    shared->global as a store (``memsys.global_store``), so the L2 and DRAM traffic, the L2 slices' and the
    channels' bandwidth and the interconnect are those of the same bytes loaded by ``ld.global.cg``; the
    shared-memory side occupies the SM's shared data path (``shared_path``) for its bytes. The copy lands
    when the last sector has arrived and the bytes have been written; the mbarrier's complete-tx happens
    then (``semantics/mbarrier.apply_landed``). The instruction itself costs its LSU issue slot; the
    asynchronous unit's own descriptor and address-generation time is not modelled, nor its queue limit
    (a copy that would need more than ``BULK_SLOTS`` in flight per block lands the oldest early). MSHR
    limits do not hold back a bulk copy (the TMA unit is not the LSU).

Bulk groups
    ``cp.async.bulk.commit_group`` / ``wait_group N`` keep groups per warp exactly as ``cp.async``'s
    (``bulk_groups``, same columns as ``cp_state``); a shared->global copy's group arrives when its last
    sector is accepted by L2. ``.read`` waits for the same moment (conservative: the shared-memory source
    is read before that).
"""

from __future__ import annotations

from gpusim.arch import layout as L
from gpusim.arch.tensor_map_layout import TB_KIND
from gpusim.engine.jit import compiled_only
from gpusim.engine.memory.memsys import global_load, global_store
from gpusim.engine.memory.servers import server_reserve
from gpusim.engine.semantics import state as S
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.tma_timing import tensor_copy_timing


@compiled_only
def async_copy_groups(cp_state, req, w, cycle):
    """cp.async groups of warp ``w`` (tensor cores, issue 14), for commit_group and wait_group requests
    (``req[MR_KIND]``); returns the cycle the warp may go on (``cycle`` when it need not wait).

    A copy's data arrival extends the open group (``_memory_timing``); commit_group closes it;
    wait_group N waits until every committed group but the newest N has arrived; wait_all commits, then
    waits for all. ``cp_state[w]``: CP_* columns, then a ring of the last CP_RING committed groups'
    arrival cycles (older ones folded into CP_FLOOR). The same columns from CP_WGMMA on (``req[MR_ASYNC]``
    ASYNC_WGMMA or ASYNC_READ) hold wgmma's groups in ``cp_state`` and, in ``bulk_groups``, when each bulk
    group's shared-memory sources have been read (what ``cp.async.bulk.wait_group.read`` waits for)."""
    kind = req[S.MR_KIND]
    base = T.CP_WGMMA if req[S.MR_ASYNC] == S.ASYNC_WGMMA or req[S.MR_ASYNC] == S.ASYNC_READ else 0
    req[S.MR_ASYNC] = 0
    wait_all = kind == S.MK_ASYNC_WAIT and req[S.MR_VEC] != 0
    if kind == S.MK_ASYNC_COMMIT or wait_all:
        count = cp_state[w, base + T.CP_COUNT]
        slot = base + T.CP_RING0 + count % T.CP_RING
        if count >= T.CP_RING and cp_state[w, slot] > cp_state[w, base + T.CP_FLOOR]:
            cp_state[w, base + T.CP_FLOOR] = cp_state[w, slot]
        cp_state[w, slot] = cp_state[w, base + T.CP_OPEN]
        cp_state[w, base + T.CP_OPEN] = 0
        cp_state[w, base + T.CP_COUNT] = count + 1
        if kind == S.MK_ASYNC_COMMIT:
            return cycle
    keep = 0 if wait_all else req[S.MR_SIZE]
    count = cp_state[w, base + T.CP_COUNT]
    until = cycle
    if keep < count:
        until = max(until, cp_state[w, base + T.CP_FLOOR])
        for i in range(max(0, count - T.CP_RING), count - keep):
            t = cp_state[w, base + T.CP_RING0 + i % T.CP_RING]
            if t > until:
                until = t
    return until


@compiled_only
def _copies_landed(cp_state, w):
    """The cycle the last of warp ``w``'s cp.async copies so far lands: its open group and every committed one
    (cp.async.mbarrier.arrive tracks all prior copies of the thread, committed or not)."""
    last = max(cp_state[w, T.CP_OPEN], cp_state[w, T.CP_FLOOR])
    count = cp_state[w, T.CP_COUNT]
    for i in range(max(0, count - T.CP_RING), count):
        last = max(last, cp_state[w, T.CP_RING0 + i % T.CP_RING])
    return last


@compiled_only
def _bulk_one(mp, ms, sm, cycle, gaddr, nbytes, load, shared_side=True):
    """``(done, moved)``: the cycle one bulk copy of ``nbytes`` at heap offset ``gaddr`` has moved through the
    memory system, and the cycle its shared-memory side has been written (a load) or read (a store);
    ``shared_side`` False: an L2 prefetch, which has none."""
    prm = mp.prm
    sector = prm[T.TP_SECTOR]
    first = (gaddr + L.GLOBAL_BASE) // sector * sector
    total = (gaddr + L.GLOBAL_BASE + nbytes - first + sector - 1) // sector
    cap = mp.sectors.shape[0]
    done = cycle
    k = 0
    while k < total:
        n = min(cap, total - k)
        for j in range(n):
            mp.sectors[j] = first + (k + j) * sector
        if load:
            arrived, _ = global_load(mp.sectors, n, sm, cycle, False, ms.l1, ms.l2, ms.servers, ms.mshr,
                                     ms.params, ms.rates, ms.counters, -1, False)    # no MSHR: not the LSU
        else:
            for j in range(n):             # whole sectors but the copy's first and last (16-byte granules)
                mp.lane_ops[j] = 0
            mp.lane_ops[0] = 1 if (gaddr + L.GLOBAL_BASE) % sector != 0 and k == 0 else 0
            if k + n == total and (gaddr + L.GLOBAL_BASE + nbytes) % sector != 0:
                mp.lane_ops[n - 1] = 1
            arrived = global_store(mp.sectors, n, sm, cycle, ms.l1, ms.l2, ms.servers, ms.params, ms.rates,
                                   ms.counters, mp.lane_ops)
        done = max(done, arrived)
        k += n
    if not shared_side:
        return done, cycle
    start, _ = server_reserve(mp.shared_path, sm, cycle, nbytes, prm[T.TP_SHARED_BYTES_PER_CYCLE])
    moved = start + nbytes // max(prm[T.TP_SHARED_BYTES_PER_CYCLE], 1)    # its shared-memory side
    return max(done, moved), moved


@compiled_only
def bulk_copy_timing(mp, ms, w, sm, pc, cycle):
    """Time the copies a ``cp.async.bulk`` just issued (``bulk_tx`` rows BT_UNTIMED of its block slot): a
    global->shared one gets the cycle it lands (its complete-tx then), a shared->global one extends the
    warp's open bulk group. Returns ``cycle``: the instruction does not wait."""
    if mp.mem_req[S.MR_BAR_COUNT] != 0:
        return _multicast_timing(mp, ms, sm, pc, cycle)
    table = mp.bulk_tx[mp.mem_req[S.MR_BAR_ID]]
    for i in range(table.shape[0]):
        if table[i, S.BT_STATE] != S.BTS_UNTIMED:
            continue
        if table[i, TB_KIND] == L.BULK_CP_ARRIVE:    # cp.async.mbarrier.arrive: when the warp's copies land
            table[i, S.BT_READY] = max(cycle, _copies_landed(mp.cp_state, w))
            table[i, S.BT_STATE] = S.BTS_TIMED
            continue
        if table[i, TB_KIND] == L.BULK_L2_PREFETCH:  # cp.async.bulk.prefetch.L2: into L2, no group, no wait
            _bulk_one(mp, ms, sm, cycle, table[i, S.BT_GADDR], table[i, S.BT_BYTES], True, False)
            mp.pc_mem[pc, T.PM_REQUESTS] += 1
            table[i, S.BT_STATE] = S.BTS_FREE
            continue
        load = table[i, S.BT_MBAR] >= 0
        if table[i, TB_KIND] != 0:       # a TMA tensor copy (tma_timing.py)
            done = tensor_copy_timing(mp, ms, sm, cycle, table[i])
            read = mp.tma_unit[sm, 0]    # a store's box is read as the unit issues its rows
            if table[i, TB_KIND] == L.TMA_PREFETCH:
                table[i, S.BT_STATE] = S.BTS_FREE
                continue
        elif table[i, S.BT_GADDR] < 0:     # a DSM bulk copy (semantics/hopper.py): over the SM-to-SM network
            _, sent = server_reserve(mp.shared_path, mp.prm[T.TP_NSM] + sm, cycle, table[i, S.BT_BYTES],
                                     mp.prm[T.TP_DSM_MILLIBYTES] / 1000.0)
            done = sent + mp.prm[T.TP_DSM_RTT]
            read = sent
        else:
            done, read = _bulk_one(mp, ms, sm, cycle, table[i, S.BT_GADDR], table[i, S.BT_BYTES], load)
        mp.pc_mem[pc, T.PM_REQUESTS] += 1
        if load:
            table[i, S.BT_READY] = done
            table[i, S.BT_STATE] = S.BTS_TIMED
        else:
            table[i, S.BT_STATE] = S.BTS_FREE
            if done > mp.bulk_groups[w, T.CP_OPEN]:
                mp.bulk_groups[w, T.CP_OPEN] = done
            if read > mp.bulk_groups[w, T.CP_WGMMA + T.CP_OPEN]:      # wait_group.read's columns
                mp.bulk_groups[w, T.CP_WGMMA + T.CP_OPEN] = read
    return cycle


@compiled_only
def _multicast_timing(mp, ms, sm, pc, cycle):
    """A ``.multicast::cluster`` bulk copy (semantics/hopper.py): its bytes are read once (from the first
    destination CTA's rows) and land in every destination CTA at that cycle. ``MR_BAR_ID``: rank 0's block
    slot; ``MR_BAR_COUNT``: ctaMask << 32 | the block-slot stride between ranks."""
    packed = mp.mem_req[S.MR_BAR_COUNT]
    stride = packed & 0xFFFFFFFF
    cta_mask = packed >> 32
    landed = -1
    for rank in range(16):
        if not (cta_mask >> rank) & 1:
            continue
        table = mp.bulk_tx[mp.mem_req[S.MR_BAR_ID] + rank * stride]
        for i in range(table.shape[0]):
            if table[i, S.BT_STATE] != S.BTS_UNTIMED:
                continue
            if landed < 0 and table[i, TB_KIND] != 0:     # a TMA multicast load (semantics/tma.py)
                landed = tensor_copy_timing(mp, ms, sm, cycle, table[i])
                mp.pc_mem[pc, T.PM_REQUESTS] += 1
            elif landed < 0:
                landed, _ = _bulk_one(mp, ms, sm, cycle, table[i, S.BT_GADDR], table[i, S.BT_BYTES], True)
                mp.pc_mem[pc, T.PM_REQUESTS] += 1
            table[i, S.BT_READY] = landed
            table[i, S.BT_STATE] = S.BTS_TIMED
    return cycle


@compiled_only
def async_request(mp, ms, w, sm, pc, cycle):
    """An asynchronous-copy request (kind ``MK_ASYNC_COMMIT`` and above): returns the cycle the warp may go
    on (a wait_group's groups' arrival; ``cycle`` otherwise)."""
    req = mp.mem_req
    kind = req[S.MR_KIND]
    if kind == S.MK_ASYNC_COMMIT or kind == S.MK_ASYNC_WAIT:
        return async_copy_groups(mp.cp_state, req, w, cycle)
    if kind == S.MK_BULK:
        return bulk_copy_timing(mp, ms, w, sm, pc, cycle)
    if kind == S.MK_BULK_COMMIT:         # both column sets close a group: the writes', the source reads'
        req[S.MR_KIND] = S.MK_ASYNC_COMMIT
        async_copy_groups(mp.bulk_groups, req, w, cycle)
        req[S.MR_KIND] = S.MK_ASYNC_COMMIT
        req[S.MR_ASYNC] = S.ASYNC_READ
        async_copy_groups(mp.bulk_groups, req, w, cycle)
        req[S.MR_KIND] = kind
        return cycle
    req[S.MR_KIND] = S.MK_ASYNC_WAIT     # .read (MR_ASYNC = ASYNC_READ): the source reads' columns
    until = async_copy_groups(mp.bulk_groups, req, w, cycle)
    req[S.MR_KIND] = kind
    return until
