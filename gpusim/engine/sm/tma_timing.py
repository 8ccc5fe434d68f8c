"""Timing of TMA tensor copies (``cp.async.bulk.tensor``, ``cp.reduce.async.bulk.tensor``, the L2 prefetch):
reached from ``async_timing.bulk_copy_timing`` for the ``bulk_tx`` rows a tensor copy left (``TB_KIND`` set;
``semantics/tma.py`` fills them, layout in ``gpusim.arch.tensor_map_layout``).

The SM's TMA unit (``tma_unit[sm]``)
    takes the copies of its SM one after another. A copy first looks its tensor map up in the unit's
    descriptor cache (``TMA_DESCRIPTORS`` entries, LRU): a miss costs ``tma_descriptor_miss_cycles`` (the
    128-byte map read through L2). The unit then issues one request per in-bounds box row (its contiguous
    bytes, first to last in-bounds element), ``tma_requests_per_cycle`` of them per cycle; rows wholly out of
    bounds cost nothing (the unit fills them). The rows' bytes move through the memory system as whole
    sectors exactly as a 1D bulk copy's (``memsys.global_load``, L1
    bypassed, for loads and prefetches; ``memsys.global_store`` for stores and reductions: a reduction's
    read-modify-write at L2 is timed as the store of its bytes). A load also writes its whole box (fill
    included) through the SM's shared-memory data path (``shared_path``). The sectors are requested at the
    instruction's cycle (the servers of the memory system are next-free instants: a request placed in the
    future would hold back earlier requests of other SMs) and their arrival is then delayed by the unit's wait
    (busy unit, descriptor miss); the copy is done no earlier than the unit has issued its last row. A load
    lands when its last row has arrived and its bytes are written (the mbarrier's complete-tx then); a
    store's or reduction's bulk group arrives when L2 has accepted its last row; a prefetch completes nothing.
"""

from __future__ import annotations

from gpusim.arch import layout as L
from gpusim.arch import tensor_map_layout as TM
from gpusim.engine.jit import compiled_only
from gpusim.engine.memory.memsys import global_load, global_store
from gpusim.engine.memory.servers import server_reserve
from gpusim.engine.semantics import state as S
from gpusim.engine.sm import timing_state as T


@compiled_only
def _descriptor(unit, sm, address, cycle, miss_cycles):
    """The cycle the SM's TMA unit has the map at ``address`` (a hit: ``cycle``), updating its LRU cache."""
    oldest = 0
    for i in range(TM.TMA_DESCRIPTORS):
        stamp = unit[sm, 1 + TM.TMA_DESCRIPTORS + i]
        if unit[sm, 1 + i] == address and stamp > 0:
            unit[sm, 1 + TM.TMA_DESCRIPTORS + i] = cycle + 1
            return cycle
        if stamp < unit[sm, 1 + TM.TMA_DESCRIPTORS + oldest]:
            oldest = i
    unit[sm, 1 + oldest] = address
    unit[sm, 1 + TM.TMA_DESCRIPTORS + oldest] = cycle + miss_cycles + 1
    return cycle + miss_cycles


@compiled_only
def _row_sectors(mp, n, t, r, sector):
    """Append row ``r``'s sectors to ``mp.sectors`` from index ``n``; returns the new count."""
    address = t[S.BT_GADDR] + L.GLOBAL_BASE
    rest = r
    for d in range(4):
        count = t[TM.TB_N1 + d]
        address += (rest % count) * t[TM.TB_S1 + d]
        rest //= count
    first = address // sector * sector
    last = (address + t[TM.TB_ROW] - 1) // sector * sector
    while first <= last:
        mp.sectors[n] = first
        n += 1
        first += sector
    return n


@compiled_only
def _flush(mp, ms, sm, at, n, load):
    if n == 0:
        return at
    if load:
        arrived, _ = global_load(mp.sectors, n, sm, at, False, ms.l1, ms.l2, ms.servers, ms.mshr, ms.params,
                                 ms.rates, ms.counters, -1, False)
        return arrived
    for j in range(n):                     # a box row's sectors count as whole
        mp.lane_ops[j] = 0
    return global_store(mp.sectors, n, sm, at, ms.l1, ms.l2, ms.servers, ms.params, ms.rates, ms.counters,
                        mp.lane_ops)


@compiled_only
def tensor_copy_timing(mp, ms, sm, cycle, t):
    """Time one tensor copy (its ``bulk_tx`` row ``t``); returns the cycle it lands (loads), is accepted by L2
    (stores, reductions) or has been issued (prefetches)."""
    prm = mp.prm
    unit = mp.tma_unit
    sector = prm[T.TP_SECTOR]
    interval = prm[T.TP_TMA_INTERVAL]          # cycles x 256 per request
    start = max(cycle, unit[sm, 0])
    start = _descriptor(unit, sm, t[TM.TB_MAP], start, prm[T.TP_TMA_DESC_MISS])
    kind = t[TM.TB_KIND]
    load = kind == L.TMA_LOAD or kind == L.TMA_PREFETCH
    rows = t[TM.TB_N1] * t[TM.TB_N1 + 1] * t[TM.TB_N1 + 2] * t[TM.TB_N1 + 3] if t[TM.TB_ROW] > 0 else 0
    per_row = (t[TM.TB_ROW] + 2 * sector - 2) // sector     # sectors a row can touch
    cap = mp.sectors.shape[0]
    arrived = cycle
    n = 0
    for r in range(rows):
        if n + per_row > cap:
            arrived = max(arrived, _flush(mp, ms, sm, cycle, n, load))
            n = 0
        n = _row_sectors(mp, n, t, r, sector)
    arrived = max(arrived, _flush(mp, ms, sm, cycle, n, load))
    issued = start + (rows * interval + 255) // 256
    done = max(arrived + start - cycle, issued)
    unit[sm, 0] = issued
    if kind == L.TMA_LOAD:
        width = max(prm[T.TP_SHARED_BYTES_PER_CYCLE], 1)
        at, _ = server_reserve(mp.shared_path, sm, start, t[S.BT_BYTES], width)
        done = max(done, at + t[S.BT_BYTES] // width)
    return done
