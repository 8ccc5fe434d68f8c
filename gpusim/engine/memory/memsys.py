"""The global-memory path of one warp request: L1 -> interconnect -> L2 slice -> DRAM channel.

What it models
    Given the coalesced sector list of a warp's global (or local) load, store or atomic, this module walks
    every sector through the hierarchy and returns when the request completes:

    * L1TEX pipeline (per SM, a server, ``l1tex_reserve``): a warp request occupies it for the slower of its
      two stages: the tag stage resolves ``l1_tags_per_cycle`` distinct 128-B lines per cycle (NVIDIA: 4
      tags x 4 sectors per cycle since GV100), so a request touching N lines takes ceil(N / tags) cycles; the
      data stage moves ``l1_bytes_per_cycle_per_sm`` through the 32 x 4-B banks that L1 shares with shared
      memory, so the caller passes the request's bank-conflict wavefronts (lanes reading different lines at
      the same offset within the line hit one bank and serialise, as in shared memory). The request's
      sectors leave the pipeline spread evenly over its occupancy.
    * L1 (per SM, sectored, LRU): a hit completes ``l1_latency_cycles`` after its sector's L1TEX slot, or when
      the pending fill it found completes.
    * A miss takes an MSHR of its SM, crosses the SM's interconnect port (a server) to the L2 slice chosen
      by an XOR-folded hash of the line address, queues at the slice (a server) and looks the sector up.
      An L2 hit completes ``l2_latency_cycles`` after that.
    * An L2 miss is a column access at the DRAM channel chosen by a hash of the address (interleaved every
      ``dram_interleave_bytes``), timed by the bank / row-buffer / refresh / bus model of ``dram``; its data
      is usable the fixed DRAM latency after its burst. The sector is then filled into L2 and L1 with that
      completion cycle, so later requests to it wait for the same data instead of refetching it.

    Set indices are hashed (``cache``: digit sum of the line index; an L2 slice indexes its sets by the
    line's rank among the lines of that slice), so power-of-two strides use all sets.

Latency convention
    The three latencies are LOAD-TO-USE totals as a pointer-chase microbenchmark measures them, not per-hop
    delays. Each server contributes only its queueing delay (slot start minus arrival); the latency of the
    level that answers is added once. An isolated access therefore costs exactly ``l1_latency_cycles``,
    ``l2_latency_cycles`` or ``dram_latency_cycles``, and contention adds on top.

Stores and atomics
    * ``global_store``: the request passes the L1TEX pipeline like a load (tag stage; its sectors' bytes for
      the data stage, no bank rule). L1 is write-through and no-allocate (present sectors are updated, nothing is
      allocated); L2 is write-back with write-allocate: a written sector becomes present and dirty without a
      DRAM read (whole-sector writes; see ``cache``). Evicting a dirty L2 line writes its dirty sectors to
      its DRAM channel's write buffer; the store is accepted when its last sector reached its slice and the
      controller took any such victim's writes (``dram``: once two batches are pending, when one has drained).
    * ``global_atomic``: the L2 slice's atomic unit runs ``atomic_l2_ops_per_cycle_per_slice`` lane operations
      per cycle on the sector read through L2 (DRAM on a miss), left dirty; L1 is bypassed. An isolated one
      costs ``l2_latency_cycles``; each one queued ahead adds 1 / rate. Store sectors are served at the
      slice's store rate (``l2_write_bytes_per_cycle``; a sector the request writes only part of, a byte-masked
      merge, at ``l2_partial_write_bytes_per_cycle``: an H200 takes ~60 such sectors per cycle against ~70
      whole ones, l2_stores_h200), loads and atomics at its read rate.

MSHRs
    Each SM has ``mshrs_per_sm`` slots (``mshr_free_cycle`` int64[sms, mshrs_per_sm]: when each slot's sector
    completes; a min-heap per SM, ``l1tex.replace_earliest_mshr``). An L1 miss takes the earliest-free slot,
    waiting for it if busy (delaying the sectors after it and, in order, the SM's L1TEX pipeline); a hit on a
    pending fill merges. Loads return the wait (``lg_throttle``). cp.async (LDGSTS) occupies slots like a
    load's misses: only the MSHRs and its group waits bound what a warp keeps in flight.

State
    l1        cache state with one partition per SM (``memsys_setup.make_memsys_state``)
    l2        cache state with one partition per L2 slice
    servers   tuple of float64 arrays, indices SRV_*: next-free of the L1TEX pipeline [sms], interconnect port
              [sms], L2 slice [slices], L2 atomic unit [slices]; the DRAM state of ``dram_setup.make_dram_state``
              (channels, banks, bank groups, scheduler window)
    params    int64[N_INT_PARAMS] (P_*), rates float64[N_RATE_PARAMS] (R_*): see ``memsys_setup.make_memsys_params``
    counters  int64[N_COUNTERS] (C_*)
    The columns are declared once below (``PARAMS``, ``RATES``, ``SERVERS``, ``MEMORY_COUNTERS``; see
    gpusim/engine/records.py): their constants are generated blocks, their tables are in docs/engine-state.md.

Simplifications
    * One interconnect reservation per sector (request and data), made when it leaves the SM; the return
      trip is inside the fixed latency. A request's sectors reach the first server at issue, serialised.
    * A line evicted while its fill is in flight is not refetched for the requests already waiting on it.
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.bits import quotient
from gpusim.engine.jit import compiled_only, engine_jit
from gpusim.engine.memory.cache import (
    cache_fill_way,
    cache_find,
    cache_lookup_way,
    cache_set_index,
    cache_write_way,
    line_and_sector,
    xor_fold_hash,
)
from gpusim.engine.memory.dram import (
    N_GEOMETRY,
    N_TIMING,
    dram_access,
    dram_channel_of,  # noqa: F401 -- re-exported: callers and tests find it beside l2_slice_of
    dram_completion_cycle,
)
from gpusim.engine.memory.l1tex import l1tex_slot, replace_earliest_mshr
from gpusim.engine.memory.servers import server_queue_delay, server_reserve
from gpusim.engine.records import Column, Columns

DRAM_INTERLEAVE_BYTES = 256
"""Bytes of consecutive addresses one DRAM channel serves before the hash moves to another."""

PARAMS = Columns("memsys-params", "ms.params", "P_", "N_INT_PARAMS", "integer parameters of the memory system "
                 "(memsys_setup.make_memsys_params)", (
    Column("SECTOR_BYTES", "bytes", "sector size"),
    Column("LINE_BYTES", "bytes", "cache line size"),
    Column("L1_LATENCY_CYCLES", "cycles", "load-to-use latency of an L1 hit"),
    Column("L2_LATENCY_CYCLES", "cycles", "load-to-use latency of an L2 hit"),
    Column("DRAM_LATENCY_CYCLES", "cycles", "load-to-use latency of a DRAM access"),
    Column("L2_SLICES", "slices", "L2 slices"),
    Column("DRAM_CHANNELS", "channels", "DRAM channels"),
    Column("DRAM_INTERLEAVE_BYTES", "bytes", "address interleave between DRAM channels"),
    Column("MSHRS_PER_SM", "MSHRs", "miss status holding registers per SM"),
    Column("L1_TAGS_PER_CYCLE", "lines/cycle", "L1TEX tag-stage lookups (128 B lines) per cycle per SM"),
    Column("DRAM_GEOMETRY", "-", "first of dram.N_GEOMETRY entries: the DRAM geometry (dram_setup.make_dram_params)"),
), width=10 + N_GEOMETRY)
RATES = Columns("memsys-rates", "ms.rates", "R_", "N_RATE_PARAMS", "rates of the memory system's servers (float64)", (
    Column("L1_BYTES_PER_CYCLE_PER_SM", "bytes/cycle", "L1 data path of one SM"),
    Column("ICNT_BYTES_PER_CYCLE_PER_SM", "bytes/cycle", "interconnect port of one SM"),
    Column("L2_BYTES_PER_CYCLE_PER_SLICE", "bytes/cycle", "one L2 slice"),
    Column("DRAM_BYTES_PER_CYCLE_PER_CHANNEL", "bytes/cycle", "one DRAM channel's peak: one burst per burst "
           "time on its data bus"),
    Column("ATOMIC_OPS_PER_CYCLE_PER_SLICE", "operations/cycle", "the atomic unit of one L2 slice"),
    Column("L2_WRITE_BYTES_PER_CYCLE_PER_SLICE", "bytes/cycle", "one L2 slice, for store sectors"),
    Column("L2_PARTIAL_WRITE_BYTES_PER_CYCLE_PER_SLICE", "bytes/cycle", "one L2 slice, for store sectors "
           "written in part"),
    Column("DRAM_TIMING", "-", "first of dram.N_TIMING entries: the DRAM timing (dram_setup.make_dram_params)"),
), width=7 + N_TIMING)
SERVERS = Columns("memsys-servers", "ms.servers", "SRV_", "N_SERVERS", "the servers tuple: float64 next-free "
                  "instants of each server", (
    Column("L1_PATH", "cycle [sms]", "L1TEX pipeline (tag and data stages) of each SM"),
    Column("ICNT", "cycle [sms]", "interconnect port of each SM"),
    Column("L2_SLICE", "cycle [slices]", "each L2 slice"),
    Column("DRAM_CHANNEL", "float64 [channels x dram.CH_FIELDS]", "DRAM channel state (dram_setup.make_dram_state)"),
    Column("L2_ATOMIC", "cycle [slices]", "the atomic unit of each L2 slice"),
    Column("DRAM_BANKS", "float64 [channels x banks x dram.BK_FIELDS]", "DRAM bank state: open row, timing"),
    Column("DRAM_GROUPS", "cycle [channels x bank groups]", "next column slot of each bank group"),
    Column("DRAM_QUEUE", "float64 [channels x depth x dram.Q_FIELDS]", "each channel's scheduler window"),
))
MEMORY_COUNTERS = Columns("memsys-counters", "ms.counters", "C_", "N_COUNTERS", "counters of the memory system "
                          "(Run.counters, by the lower-case column name)", (
    Column("L1_HIT_SECTORS", "sectors", "load sectors found in L1 (including pending fills)"),
    Column("L1_MISS_SECTORS", "sectors", "load sectors sent on to L2 (misses and L1 bypass)"),
    Column("L1_STORE_SECTORS", "sectors", "store sectors passing through L1 (write-through)"),
    Column("L2_SECTORS", "sectors", "sector requests arriving at L2 slices: loads, stores, atomics"),
    Column("L2_HIT_SECTORS", "sectors", "load and atomic sectors found in L2"),
    Column("L2_MISS_SECTORS", "sectors", "load and atomic sectors read from DRAM"),
    Column("L2_STORE_SECTORS", "sectors", "store sectors written into L2"),
    Column("L2_PARTIAL_STORE_SECTORS", "sectors", "of those, sectors a request wrote only part of"),
    Column("L2_ATOMIC_OPS", "operations", "lane operations executed by L2 atomic units"),
    Column("DRAM_READ_BYTES", "bytes", "bytes read from DRAM (L2 sector fills)"),
    Column("DRAM_WRITE_BYTES", "bytes", "bytes written to DRAM (dirty L2 evictions)"),
    Column("MSHR_WAIT_CYCLES", "cycles", "sum over requests of issue delay for a free MSHR"),
))

# <state-layout:memsys-params begin>
P_SECTOR_BYTES = 0
P_LINE_BYTES = 1
P_L1_LATENCY_CYCLES = 2
P_L2_LATENCY_CYCLES = 3
P_DRAM_LATENCY_CYCLES = 4
P_L2_SLICES = 5
P_DRAM_CHANNELS = 6
P_DRAM_INTERLEAVE_BYTES = 7
P_MSHRS_PER_SM = 8
P_L1_TAGS_PER_CYCLE = 9
P_DRAM_GEOMETRY = 10
N_INT_PARAMS = 23
# <state-layout:memsys-params end>

# <state-layout:memsys-rates begin>
R_L1_BYTES_PER_CYCLE_PER_SM = 0
R_ICNT_BYTES_PER_CYCLE_PER_SM = 1
R_L2_BYTES_PER_CYCLE_PER_SLICE = 2
R_DRAM_BYTES_PER_CYCLE_PER_CHANNEL = 3
R_ATOMIC_OPS_PER_CYCLE_PER_SLICE = 4
R_L2_WRITE_BYTES_PER_CYCLE_PER_SLICE = 5
R_L2_PARTIAL_WRITE_BYTES_PER_CYCLE_PER_SLICE = 6
R_DRAM_TIMING = 7
N_RATE_PARAMS = 18
# <state-layout:memsys-rates end>

# <state-layout:memsys-servers begin>
SRV_L1_PATH = 0
SRV_ICNT = 1
SRV_L2_SLICE = 2
SRV_DRAM_CHANNEL = 3
SRV_L2_ATOMIC = 4
SRV_DRAM_BANKS = 5
SRV_DRAM_GROUPS = 6
SRV_DRAM_QUEUE = 7
N_SERVERS = 8
# <state-layout:memsys-servers end>

# <state-layout:memsys-counters begin>
C_L1_HIT_SECTORS = 0
C_L1_MISS_SECTORS = 1
C_L1_STORE_SECTORS = 2
C_L2_SECTORS = 3
C_L2_HIT_SECTORS = 4
C_L2_MISS_SECTORS = 5
C_L2_STORE_SECTORS = 6
C_L2_PARTIAL_STORE_SECTORS = 7
C_L2_ATOMIC_OPS = 8
C_DRAM_READ_BYTES = 9
C_DRAM_WRITE_BYTES = 10
C_MSHR_WAIT_CYCLES = 11
N_COUNTERS = 12
# <state-layout:memsys-counters end>

COUNTERS = {c.name.lower(): (i, c.unit, c.meaning) for i, c in enumerate(MEMORY_COUNTERS.columns)}
"""Run.counters name -> (index in ms.counters, unit, meaning), from MEMORY_COUNTERS."""


@engine_jit(inline="always")
def l2_slice_of(line_addr, line_bytes, slices):
    """L2 slice serving a line: XOR-folded line index modulo the slice count (the L2 cache state is
    interleaved by the same rule, ``cache.cache_partition_of``, and indexes its sets accordingly)."""
    return xor_fold_hash(quotient(line_addr, line_bytes)) % slices


@compiled_only(inline="always")
def _dram(sector_addr, arrival_cycle, is_write, servers, params, rates):
    """One column access at the DRAM (``dram.dram_access``); returns when its burst has crossed the bus."""
    return dram_access(servers[SRV_DRAM_CHANNEL], servers[SRV_DRAM_BANKS], servers[SRV_DRAM_GROUPS],
                       servers[SRV_DRAM_QUEUE], params[P_DRAM_GEOMETRY:], rates[R_DRAM_TIMING:], sector_addr,
                       arrival_cycle, is_write)


@compiled_only
def _write_back(evicted_line, evicted_dirty_sectors, arrival_cycle, servers, params, rates, counters):
    """Write a dirty L2 victim's dirty sectors to DRAM (as its first ones: one row); returns when the last is taken."""
    done = np.int64(arrival_cycle)
    if evicted_line < 0 or evicted_dirty_sectors == 0:    # without it the ALU-bound loop ran 13-17 % slower
        return done
    for sector in range(evicted_dirty_sectors):
        address = evicted_line + sector * params[P_SECTOR_BYTES]
        done = max(done, _dram(address, arrival_cycle, True, servers, params, rates))
    counters[C_DRAM_WRITE_BYTES] += evicted_dirty_sectors * params[P_SECTOR_BYTES]
    return done


@compiled_only(inline="always")
def _l2_place(line_addr, l2, params):
    """Where a line lives in L2: ``(slice, set index, way or -1)``."""
    l2_slice = l2_slice_of(line_addr, params[P_LINE_BYTES], params[P_L2_SLICES])
    l2_set = cache_set_index(l2, l2_slice, line_addr)
    return l2_slice, l2_set, cache_find(l2, l2_set, line_addr)


@compiled_only(inline="always")
def _l2_arrive(l2_slice, arrival_cycle, servers, params, rates, counters, write=False, partial=False):
    """Queue a sector at its L2 slice (a store at the slice's store rate, a sector it writes only part of at
    the partial-store rate). Returns the cycle it is served."""
    counters[C_L2_SECTORS] += 1
    rate = rates[R_L2_BYTES_PER_CYCLE_PER_SLICE]
    if write:
        rate = rates[R_L2_PARTIAL_WRITE_BYTES_PER_CYCLE_PER_SLICE if partial else R_L2_WRITE_BYTES_PER_CYCLE_PER_SLICE]
    return arrival_cycle + server_queue_delay(servers[SRV_L2_SLICE], l2_slice, arrival_cycle, params[P_SECTOR_BYTES],
                                              rate)


@compiled_only
def _l2_read(sector_addr, line_addr, sector, served_cycle, l2_set, l2_way, l2, servers, params, rates, counters):
    """Read sector number ``sector`` of ``line_addr`` (held by ``l2_way``, -1: absent) at its L2 slice,
    from DRAM on a miss. Returns ``(load-to-use completion cycle, the line's way after the read)``."""
    hit, ready_cycle = cache_lookup_way(l2, l2_set, l2_way, sector, served_cycle)
    if hit:
        counters[C_L2_HIT_SECTORS] += 1
        return max(served_cycle + params[P_L2_LATENCY_CYCLES], ready_cycle), l2_way
    counters[C_L2_MISS_SECTORS] += 1
    bus_done = _dram(sector_addr, served_cycle, False, servers, params, rates)
    counters[C_DRAM_READ_BYTES] += params[P_SECTOR_BYTES]
    completion = dram_completion_cycle(served_cycle, bus_done, rates[R_DRAM_TIMING:])
    l2_way, evicted_line, evicted_dirty = cache_fill_way(l2, l2_set, l2_way, line_addr, sector, completion)
    _write_back(evicted_line, evicted_dirty, served_cycle, servers, params, rates, counters)
    return completion, l2_way


@compiled_only
def l1tex_reserve(sector_addrs, n, sm, arrival_cycle, data_bytes, servers, params, rates):
    """Pass one warp request through SM ``sm``'s L1TEX pipeline, arriving at ``arrival_cycle``.

    The tag stage looks up ``l1_tags_per_cycle`` distinct lines per cycle, so the request's
    ``lines`` (its sectors come grouped by line) take ``ceil(lines / tags)`` tag wavefronts, at least one;
    the data stage moves ``data_bytes`` (the caller's bank-conflict wavefronts x 128 B; -1: the request's
    sectors) at ``l1_bytes_per_cycle_per_sm``. The stages are pipelined, so the request holds the SM's
    L1TEX server for the slower of the two. Returns ``(start cycle, occupancy in cycles)``."""
    line_bytes = params[P_LINE_BYTES]
    lines = np.int64(0)
    previous_line = np.int64(-1)
    for index in range(n):
        line = quotient(sector_addrs[index], line_bytes)
        if lines == 0 or line != previous_line:
            lines += 1
            previous_line = line
    tags = params[P_L1_TAGS_PER_CYCLE]
    tag_cycles = max(np.int64(1), quotient(lines + tags - 1, tags))
    if data_bytes < 0:
        data_bytes = n * params[P_SECTOR_BYTES]
    occupancy = max(np.float64(tag_cycles), data_bytes / rates[R_L1_BYTES_PER_CYCLE_PER_SM])
    start, _ = server_reserve(servers[SRV_L1_PATH], sm, arrival_cycle, occupancy, 1.0)
    return start, occupancy


# inline (and global_store's): left to LLVM, a 3rd call site (bulk copies) made the hot path's call out-of-line: 0.8x
@engine_jit(inline="always")
def global_load(sector_addrs, n, sm, now, use_l1, l1, l2, servers, mshr_free_cycle, params, rates, counters,
                data_bytes=-1, use_mshr=True):
    """Time a warp's load of the sectors ``sector_addrs[:n]`` issued by SM ``sm`` at cycle ``now``.

    use_l1      False for loads that bypass L1 (``ld.global.cg``/``.cv``): no L1 lookup or fill
    data_bytes  bytes-equivalent of the request's L1 data-stage wavefronts (``l1tex_reserve``); -1: its sectors
    use_mshr    False: the misses take no MSHR (bulk and tensor copies: the TMA unit is not the LSU)

    Returns ``(completion_cycle, mshr_wait_cycles)``: the cycle the last sector's data is usable and how
    many cycles the request's misses were held back waiting for a free MSHR (0 = not throttled).

    The sectors come grouped by line (``coalesce``): each line's L1 set and way, and its L2 slice, set and
    way (when a sector first goes to L2), are found once for all its sectors.
    """
    sector_bytes = params[P_SECTOR_BYTES]
    line_bytes = params[P_LINE_BYTES]
    completion = np.int64(now)
    mshr_wait = np.int64(0)  # MSHR waits hold back this and every later sector of the request
    start, occupancy = l1tex_reserve(sector_addrs, n, sm, now, data_bytes, servers, params, rates)
    line_addr = np.int64(-1)
    l2_line = np.int64(-1)
    l1_set = l1_way = l2_slice = l2_set = l2_way = np.int64(-1)
    for index in range(n):
        sector_addr = sector_addrs[index]
        sector_line, sector = line_and_sector(sector_addr, line_bytes, sector_bytes)
        if sector_line != line_addr:
            line_addr = sector_line
            l1_set = cache_set_index(l1, sm, line_addr)
            l1_way = cache_find(l1, l1_set, line_addr) if use_l1 else np.int64(-1)
        path_cycle = l1tex_slot(start, occupancy, index, n) + mshr_wait
        if use_l1:
            hit, ready_cycle = cache_lookup_way(l1, l1_set, l1_way, sector, path_cycle)
            if hit:
                counters[C_L1_HIT_SECTORS] += 1
                completion = max(completion, max(path_cycle + params[P_L1_LATENCY_CYCLES], ready_cycle))
                continue
        counters[C_L1_MISS_SECTORS] += 1
        miss_cycle = max(path_cycle, mshr_free_cycle[sm, 0]) if use_mshr else path_cycle  # earliest-free slot
        mshr_wait += miss_cycle - path_cycle
        leave_cycle = miss_cycle + server_queue_delay(servers[SRV_ICNT], sm, miss_cycle, sector_bytes,
                                                      rates[R_ICNT_BYTES_PER_CYCLE_PER_SM])
        if l2_line != line_addr:
            l2_line = line_addr
            l2_slice, l2_set, l2_way = _l2_place(line_addr, l2, params)
        served_cycle = _l2_arrive(l2_slice, leave_cycle, servers, params, rates, counters)
        sector_done, l2_way = _l2_read(sector_addr, line_addr, sector, served_cycle, l2_set, l2_way, l2, servers,
                                       params, rates, counters)
        replace_earliest_mshr(mshr_free_cycle, sm, sector_done if use_mshr else mshr_free_cycle[sm, 0])
        if use_l1:
            l1_way, _, _ = cache_fill_way(l1, l1_set, l1_way, line_addr, sector, sector_done)
        completion = max(completion, sector_done)
    servers[SRV_L1_PATH][sm] += mshr_wait   # a miss with no free MSHR holds the in-order L1TEX pipeline back
    counters[C_MSHR_WAIT_CYCLES] += mshr_wait
    return completion, mshr_wait


@engine_jit(inline="always")
def global_store(sector_addrs, n, sm, now, l1, l2, servers, params, rates, counters, partial):
    """Time a warp's store of the sectors ``sector_addrs[:n]`` issued by SM ``sm`` at cycle ``now``.

    partial  int64[>= n]: 1 where the store writes only part of the sector (``coalesce.partial_sectors``), else 0

    Returns the cycle the last sector has been accepted by its L2 slice (``now`` when uncontended).
    Each line is placed in L1 and L2 once for all its sectors, as in ``global_load``.
    """
    sector_bytes = params[P_SECTOR_BYTES]
    line_bytes = params[P_LINE_BYTES]
    accepted = np.int64(now)
    start, occupancy = l1tex_reserve(sector_addrs, n, sm, now, np.int64(-1), servers, params, rates)
    line_addr = np.int64(-1)
    l1_set = l1_way = l2_slice = l2_set = l2_way = np.int64(-1)
    for index in range(n):
        sector_addr = sector_addrs[index]
        sector_line, sector = line_and_sector(sector_addr, line_bytes, sector_bytes)
        if sector_line != line_addr:
            line_addr = sector_line
            l1_set = cache_set_index(l1, sm, line_addr)
            l1_way = cache_find(l1, l1_set, line_addr)
            l2_slice, l2_set, l2_way = _l2_place(line_addr, l2, params)
        path_cycle = l1tex_slot(start, occupancy, index, n)
        cache_write_way(l1, l1_set, l1_way, line_addr, sector, path_cycle, False, False)
        counters[C_L1_STORE_SECTORS] += 1
        leave_cycle = path_cycle + server_queue_delay(servers[SRV_ICNT], sm, path_cycle, sector_bytes,
                                                      rates[R_ICNT_BYTES_PER_CYCLE_PER_SM])
        served_cycle = _l2_arrive(l2_slice, leave_cycle, servers, params, rates, counters, True, partial[index] != 0)
        _, l2_way, evicted_line, evicted_dirty = cache_write_way(l2, l2_set, l2_way, line_addr, sector, served_cycle,
                                                                 True, True)
        counters[C_L2_STORE_SECTORS] += 1
        counters[C_L2_PARTIAL_STORE_SECTORS] += partial[index]
        accepted = max(accepted, served_cycle, _write_back(evicted_line, evicted_dirty, served_cycle, servers,
                                                           params, rates, counters))
    return accepted


@engine_jit
def global_atomic(sector_addrs, lane_ops, n, sm, now, l2, servers, params, rates, counters):
    """Time a warp's atomic on the sectors ``sector_addrs[:n]`` issued by SM ``sm`` at cycle ``now``.

    lane_ops  int64[>= n]: operations (participating lanes) per sector, from ``coalesce.lanes_per_sector``

    Returns the cycle the last sector's result is usable by the warp.
    """
    sector_bytes = params[P_SECTOR_BYTES]
    line_bytes = params[P_LINE_BYTES]
    completion = np.int64(now)
    line_addr = np.int64(-1)
    l2_slice = l2_set = l2_way = np.int64(-1)
    for index in range(n):
        sector_addr = sector_addrs[index]
        sector_line, sector = line_and_sector(sector_addr, line_bytes, sector_bytes)
        if sector_line != line_addr:
            line_addr = sector_line
            l2_slice, l2_set, l2_way = _l2_place(line_addr, l2, params)
        leave_cycle = now + server_queue_delay(servers[SRV_ICNT], sm, now, sector_bytes,
                                               rates[R_ICNT_BYTES_PER_CYCLE_PER_SM])
        served_cycle = _l2_arrive(l2_slice, leave_cycle, servers, params, rates, counters)
        data_ready, l2_way = _l2_read(sector_addr, line_addr, sector, served_cycle, l2_set, l2_way, l2, servers,
                                      params, rates, counters)
        _, unit_done = server_reserve(servers[SRV_L2_ATOMIC], l2_slice, served_cycle, lane_ops[index],
                                      rates[R_ATOMIC_OPS_PER_CYCLE_PER_SLICE])
        # the first operation's cycle is inside the L2 latency; later ones (and queueing) add on top
        atomic_delay = max(np.int64(0), unit_done - served_cycle - 1)
        _, l2_way, _, _ = cache_write_way(l2, l2_set, l2_way, line_addr, sector, served_cycle, True, True)
        counters[C_L2_ATOMIC_OPS] += lane_ops[index]
        completion = max(completion, data_ready + atomic_delay)
    return completion
