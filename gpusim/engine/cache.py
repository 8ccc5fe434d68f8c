"""A sectored, set-associative, LRU cache whose sectors carry the cycle their fill completes.

What it models
    NVIDIA L1 and L2 caches: lines of ``line_bytes`` (128) split into sectors of ``sector_bytes`` (32); a
    line is allocated as a whole (one tag) but only the sectors actually requested are fetched. Each sector
    records the cycle its fill completes, so a lookup that finds a sector whose fill is still in flight is a
    hit that must wait for that cycle (the "hit on a pending miss" that MSHR merging gives real hardware).
    Replacement is least-recently-used within a set. Dirty bits per sector support a write-back cache (L2).

    One state serves many identical caches ("partitions"): the L1 of every SM, or every L2 slice. Partition
    ``p`` owns the sets ``p * sets_per_partition .. (p + 1) * sets_per_partition - 1``; ``cache_set_index``
    maps (partition, line address) to a set. Callers that hash addresses (L2 slices) choose the partition.

State layout (the tuple ``make_cache`` returns; every function takes it as ``cache``)
    tags               int64[sets, ways]            line byte address held by the way, or -1 (invalid)
    sector_ready_cycle int64[sets, ways, sectors]   cycle the sector's fill completes; -1 = not present
    lru_stamp          int64[sets, ways]            value of the use clock at the way's last use
    dirty              int8[sets, ways, sectors]    1 = sector written and not yet written back
    meta               int64[N_META]                geometry and the use clock (indices META_*)

Choices and simplifications
    * Recency is a use clock incremented on every lookup hit, fill and write, not the simulated cycle, so
      accesses made in the same cycle are still ordered and replacement is deterministic. The victim is the
      lowest-numbered invalid way, else the way with the smallest stamp.
    * A line whose sectors are still in flight may be evicted; requests already waiting keep their
      completion cycles (the data is assumed delivered to them).
    * Writes are whole-sector: a written sector becomes present without fetching the rest of it, as with the
      per-byte valid masks of NVIDIA's L2. A later read of a partly written sector is a hit.
    * Capacity is rounded down to whole sets (at least one).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gpusim.engine.jit import compiled_only
from gpusim.errors import ConfigError

META_LINE_BYTES = 0
META_SECTOR_BYTES = 1
META_SETS_PER_PARTITION = 2
META_PARTITIONS = 3
META_USE_CLOCK = 4
N_META = 5

NOT_PRESENT = -1
NO_LINE = -1


def make_cache(capacity_bytes: int, line_bytes: int, sector_bytes: int, assoc: int, partitions: int = 1):
    """Build the state of ``partitions`` empty caches of ``capacity_bytes`` each.

    capacity_bytes  bytes of data per partition (per SM for L1, per slice for L2)
    line_bytes      line size (a multiple of sector_bytes)
    sector_bytes    sector size
    assoc           ways per set
    partitions      number of identical caches sharing the state

    Returns ``(tags, sector_ready_cycle, lru_stamp, dirty, meta)`` (layout in the module docstring).
    """
    for name, value in (("capacity_bytes", capacity_bytes), ("line_bytes", line_bytes),
                        ("sector_bytes", sector_bytes), ("assoc", assoc), ("partitions", partitions)):
        if value < 1:
            raise ConfigError(f"must be a positive integer, got {value}", field=name)
    if line_bytes % sector_bytes != 0:
        raise ConfigError(f"line_bytes {line_bytes} is not a multiple of sector_bytes {sector_bytes}",
                          field="line_bytes")
    sets_per_partition = max(1, capacity_bytes // (line_bytes * assoc))
    sets = sets_per_partition * partitions
    sectors_per_line = line_bytes // sector_bytes
    tags = np.full((sets, assoc), NO_LINE, dtype=np.int64)
    sector_ready_cycle = np.full((sets, assoc, sectors_per_line), NOT_PRESENT, dtype=np.int64)
    lru_stamp = np.zeros((sets, assoc), dtype=np.int64)
    dirty = np.zeros((sets, assoc, sectors_per_line), dtype=np.int8)
    meta = np.zeros(N_META, dtype=np.int64)
    meta[META_LINE_BYTES] = line_bytes
    meta[META_SECTOR_BYTES] = sector_bytes
    meta[META_SETS_PER_PARTITION] = sets_per_partition
    meta[META_PARTITIONS] = partitions
    return tags, sector_ready_cycle, lru_stamp, dirty, meta


@njit(cache=True, _nrt=False, inline="always")
def cache_set_index(cache, partition, line_addr):
    """Set that holds ``line_addr`` in ``partition``: (line_addr / line_bytes) % sets_per_partition."""
    meta = cache[4]
    sets_per_partition = meta[META_SETS_PER_PARTITION]
    return partition * sets_per_partition + (line_addr // meta[META_LINE_BYTES]) % sets_per_partition


@compiled_only(inline="always")
def _find_way(tags, set_index, line_addr):
    """Way of ``set_index`` holding ``line_addr``, or -1."""
    for way in range(tags.shape[1]):
        if tags[set_index, way] == line_addr:
            return way
    return -1


@compiled_only(inline="always")
def _touch(lru_stamp, meta, set_index, way):
    """Mark the way most recently used."""
    meta[META_USE_CLOCK] += 1
    lru_stamp[set_index, way] = meta[META_USE_CLOCK]


@compiled_only
def _allocate(cache, set_index, line_addr):
    """Give ``line_addr`` a way in ``set_index`` (LRU victim); all its sectors start absent and clean.

    Returns ``(way, evicted_line_addr or -1, dirty sectors the victim held)``.
    """
    tags, sector_ready_cycle, lru_stamp, dirty, meta = cache
    victim = -1
    for way in range(tags.shape[1]):
        if tags[set_index, way] == NO_LINE:
            victim = way
            break
    if victim < 0:
        victim = 0
        for way in range(1, tags.shape[1]):
            if lru_stamp[set_index, way] < lru_stamp[set_index, victim]:
                victim = way
    evicted_line = tags[set_index, victim]
    evicted_dirty = 0
    for sector in range(sector_ready_cycle.shape[2]):
        evicted_dirty += dirty[set_index, victim, sector]
        dirty[set_index, victim, sector] = 0
        sector_ready_cycle[set_index, victim, sector] = NOT_PRESENT
    tags[set_index, victim] = line_addr
    return victim, evicted_line, evicted_dirty


@compiled_only(inline="always")
def _line_and_sector(meta, sector_addr):
    """(line byte address, sector index within the line) of a byte address."""
    line_bytes = meta[META_LINE_BYTES]
    line_addr = (sector_addr // line_bytes) * line_bytes
    return line_addr, (sector_addr - line_addr) // meta[META_SECTOR_BYTES]


@njit(cache=True, _nrt=False, inline="always")
def cache_lookup(cache, set_index, sector_addr, now):
    """Look a sector up at cycle ``now``.

    Returns ``(hit, ready_cycle)``. On a hit the line becomes most recently used and ``ready_cycle`` is
    ``max(now, fill-complete cycle)``: later than ``now`` when the fill is still in flight. On a miss
    (line absent, or line present without this sector) ``ready_cycle`` is -1 and nothing changes.
    """
    tags, sector_ready_cycle, lru_stamp, _, meta = cache
    line_addr, sector = _line_and_sector(meta, sector_addr)
    way = _find_way(tags, set_index, line_addr)
    if way < 0 or sector_ready_cycle[set_index, way, sector] == NOT_PRESENT:
        return False, np.int64(-1)
    _touch(lru_stamp, meta, set_index, way)
    return True, max(np.int64(now), sector_ready_cycle[set_index, way, sector])


@njit(cache=True, _nrt=False)
def cache_fill(cache, set_index, sector_addr, fill_complete_cycle):
    """Record that the sector's fill completes at ``fill_complete_cycle``, allocating its line if absent.

    A sector already present keeps the earlier of its two fill cycles. Returns
    ``(evicted_line_addr, evicted_dirty_sectors)``: -1 and 0 when nothing was evicted; a clean victim gives
    its address and 0.
    """
    tags, sector_ready_cycle, lru_stamp, _, meta = cache
    line_addr, sector = _line_and_sector(meta, sector_addr)
    way = _find_way(tags, set_index, line_addr)
    evicted_line = np.int64(NO_LINE)
    evicted_dirty = np.int64(0)
    if way < 0:
        way, evicted_line, evicted_dirty = _allocate(cache, set_index, line_addr)
    present = sector_ready_cycle[set_index, way, sector]
    if present == NOT_PRESENT or fill_complete_cycle < present:
        sector_ready_cycle[set_index, way, sector] = fill_complete_cycle
    _touch(lru_stamp, meta, set_index, way)
    return evicted_line, evicted_dirty


@njit(cache=True, _nrt=False)
def cache_write(cache, set_index, sector_addr, now, write_allocate, mark_dirty):
    """Write a whole sector at cycle ``now``.

    write_allocate  allocate the line (LRU victim) and the sector when absent (write-back L2); when False
                    only a sector already present is updated (write-through, no-allocate L1)
    mark_dirty      set the sector's dirty bit (write-back); False for a write-through cache

    A sector that was absent becomes present at ``now``; one already present (even in flight) keeps its
    fill cycle. Returns ``(hit, evicted_line_addr, evicted_dirty_sectors)`` where ``hit`` says the sector
    was present before the write.
    """
    tags, sector_ready_cycle, lru_stamp, dirty, meta = cache
    line_addr, sector = _line_and_sector(meta, sector_addr)
    way = _find_way(tags, set_index, line_addr)
    evicted_line = np.int64(NO_LINE)
    evicted_dirty = np.int64(0)
    hit = way >= 0 and sector_ready_cycle[set_index, way, sector] != NOT_PRESENT
    if way < 0:
        if not write_allocate:
            return False, evicted_line, evicted_dirty
        way, evicted_line, evicted_dirty = _allocate(cache, set_index, line_addr)
    if not hit:
        if not write_allocate:
            return False, evicted_line, evicted_dirty
        sector_ready_cycle[set_index, way, sector] = now
    if mark_dirty:
        dirty[set_index, way, sector] = 1
    _touch(lru_stamp, meta, set_index, way)
    return hit, evicted_line, evicted_dirty


@njit(cache=True, _nrt=False)
def cache_invalidate_partition(cache, partition):
    """Drop every line of one partition (e.g. one SM's L1), discarding dirty data."""
    tags, sector_ready_cycle, _, dirty, meta = cache
    sets_per_partition = meta[META_SETS_PER_PARTITION]
    for set_index in range(partition * sets_per_partition, (partition + 1) * sets_per_partition):
        for way in range(tags.shape[1]):
            tags[set_index, way] = NO_LINE
            for sector in range(sector_ready_cycle.shape[2]):
                sector_ready_cycle[set_index, way, sector] = NOT_PRESENT
                dirty[set_index, way, sector] = 0


@njit(cache=True, _nrt=False)
def cache_invalidate_all(cache):
    """Drop every line of every partition, discarding dirty data (L1 at a kernel boundary)."""
    for partition in range(cache[4][META_PARTITIONS]):
        cache_invalidate_partition(cache, partition)


@njit(cache=True, _nrt=False)
def cache_dirty_sectors(cache):
    """Number of dirty sectors held (what a full write-back flush would write)."""
    dirty = cache[3]
    total = 0
    for set_index in range(dirty.shape[0]):
        for way in range(dirty.shape[1]):
            for sector in range(dirty.shape[2]):
                total += dirty[set_index, way, sector]
    return total
