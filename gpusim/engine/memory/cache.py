"""A sectored, set-associative, LRU cache whose sectors carry the cycle their fill completes.

What it models
    NVIDIA L1 and L2 caches: lines of ``line_bytes`` (128) split into sectors of ``sector_bytes`` (32); a
    line is allocated as a whole (one tag) but only the sectors actually requested are fetched. Each sector
    records the cycle its fill completes, so a lookup that finds a sector whose fill is still in flight is a
    hit that must wait for that cycle (the "hit on a pending miss" that MSHR merging gives real hardware).
    Replacement is least-recently-used within a set. Dirty bits per sector support a write-back cache (L2).

    One state serves many identical caches ("partitions"): the L1 of every SM, or every L2 slice. Partition
    ``p`` owns the sets ``p * sets_per_partition .. (p + 1) * sets_per_partition - 1``; ``cache_set_index``
    maps (partition, line address) to a set. Callers choose the partition: the SM for L1; for a cache made
    ``interleaved`` (L2 slices share out the address space) the one ``cache_partition_of`` names.

Set index (a modelling choice: NVIDIA does not publish its index functions)
    With S sets per partition, line index ``n`` (byte address / line_bytes) goes to the sum of the base-S
    digits of ``n``, modulo S (``digit_sum_mod``); that is ``(n % S + offset) % S`` with the offset the
    digit sum of ``n // S``. Why not ``n % S``: lines a power-of-two stride apart (rows of a matrix) then
    share S / gcd(stride, S) sets; with 320 sets, rows 2 KiB (16 lines) apart use 20 sets, and a kernel
    whose threads each stream a row 16 bytes at a time lost every line between the two halves of its
    sectors and read DRAM twice (tests/test_timing_known_answers.py). Real GPUs hash the index
    (reverse-engineering studies find XOR-based hashes of address bits for L2 slices and sets). Why the
    digit sum rather than an XOR fold: it keeps the capacity of a plain modulo for any set count,
    including those that are not powers of two (L1 left by a shared-memory carveout, 320 sets per H100
    L2 slice). Properties:

    * Every aligned run of S consecutive lines is a rotation of the S sets, so a contiguous footprint of
      at most ``(ways - 1) * S`` lines never overflows a set (a partial run at each end adds at most one
      line per set); a sequential array that fits in the cache still hits after a first pass. Unlike a
      plain modulo, the spread is even only to within a line or two per set, so a footprint just over
      the capacity keeps a few % of its lines cached instead of none (LRU on a cyclic sweep).
    * The digit sum is congruent to ``n`` modulo S - 1, so the index behaves like ``n % (S - 1)`` spread
      over all S sets: for an even S, power-of-two strides are coprime to S - 1 and rows at such pitches
      spread over (nearly) all sets. The price: lines a multiple of S - 1 apart share a handful of sets
      (a pitch of 127 lines for 128 sets), a layout nothing common uses.

    An ``interleaved`` cache (L2) puts line ``n`` in partition ``xor_fold_hash(n) % partitions`` and, with
    more than one partition, indexes the sets with the digit sum of ``xor_fold_hash(n) // partitions``,
    the line's rank among the lines of its partition (``xor_fold_hash`` is a bijection), not of ``n``
    (with one partition ``n`` is that rank and is used as it is): with the raw ``n`` the set
    would be tied to the bits that chose the slice, and on 80 slices of 320 sets a sequential array of
    7/8 of the L2 overflows 5.5 % of its lines. With several slices the ranks of a strided pattern are
    irregular (the XOR fold), so the spread is less even than with one slice: the first lines of 2 x sets
    rows at pitches of 2-64 KiB reach 24-79 % of the sets of a 5-slice L2 (h100-sxm sliced to 8 SMs) and
    97 % or more of the full chip's, against 1.6-6 % with a plain modulo.

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

from gpusim.engine.bits import quotient, trailing_zeros64
from gpusim.engine.jit import compiled_only, engine_jit
from gpusim.engine.records import Column, Columns
from gpusim.errors import ConfigError

META = Columns("cache-meta", "cache meta", "META_", "N_META", "a cache's geometry and flags (make_cache; "
               "the constants are generated from this declaration, gpusim/engine/records.py)", (
    Column("LINE_BYTES", "bytes", "line size"),
    Column("SECTOR_BYTES", "bytes", "sector size"),
    Column("SETS_PER_PARTITION", "sets", "sets of one partition"),
    Column("PARTITIONS", "partitions", "partitions (per SM for L1, per slice for L2)"),
    Column("USE_CLOCK", "count", "LRU clock: counts uses, stamps each used way"),
    Column("INTERLEAVE", "partitions", "partitions that share out the address space (interleaved cache), else 1"),
    Column("EVER_DIRTY", "flag", "1 once a write has marked a sector dirty (never, in a write-through cache)"),
))

# <state-layout:cache-meta begin>
META_LINE_BYTES = 0
META_SECTOR_BYTES = 1
META_SETS_PER_PARTITION = 2
META_PARTITIONS = 3
META_USE_CLOCK = 4
META_INTERLEAVE = 5
META_EVER_DIRTY = 6
N_META = 7
# <state-layout:cache-meta end>

NOT_PRESENT = -1
NO_LINE = -1


def make_cache(capacity_bytes: int, line_bytes: int, sector_bytes: int, assoc: int, partitions: int = 1,
               interleaved: bool = False):
    """Build the state of ``partitions`` empty caches of ``capacity_bytes`` each.

    capacity_bytes  bytes of data per partition (per SM for L1, per slice for L2)
    line_bytes      line size (a multiple of sector_bytes)
    sector_bytes    sector size
    assoc           ways per set
    partitions      number of identical caches sharing the state
    interleaved     True when the partitions share out the address space (L2 slices: a line lives in
                    partition ``cache_partition_of``); False when each sees every address (one L1 per SM)

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
    meta[META_INTERLEAVE] = partitions if interleaved else 1
    return tags, sector_ready_cycle, lru_stamp, dirty, meta


@engine_jit(inline="always")
def xor_fold_hash(block_index):
    """Mix the bits of a non-negative block index so power-of-two strides spread over slices/channels.

    Each bit is XORed with the bits 7, 14, 21, ... places above it: a bijection of the non-negative
    integers that maps every aligned block of 2^k indices onto an aligned block of 2^k indices."""
    folded = block_index
    shifted = block_index >> 7
    while shifted > 0:
        folded ^= shifted
        shifted >>= 7
    return folded


@engine_jit(inline="always")
def digit_sum_mod(index, base):
    """(sum of the base-``base`` digits of the non-negative ``index``) % base; 0 when ``base`` is 1."""
    if base <= 1:
        return np.int64(0)
    if base & (base - 1) == 0:        # a power of two: digits are bit fields (no divisions)
        shift = np.int64(trailing_zeros64(base))
        mask = base - 1
        total = np.int64(0)
        while index > 0:
            total += index & mask
            index >>= shift
        return total & mask
    total = index % base
    index //= base
    while index > 0:
        total += index % base
        index //= base
    return total % base


@engine_jit(inline="always")
def cache_partition_of(cache, line_addr):
    """Partition of an interleaved cache that holds ``line_addr``: xor_fold_hash(line index) % partitions."""
    meta = cache[4]
    return xor_fold_hash(quotient(line_addr, meta[META_LINE_BYTES])) % meta[META_PARTITIONS]


@engine_jit(inline="always")
def cache_set_index(cache, partition, line_addr):
    """Set that holds ``line_addr`` in ``partition``: the digit sum of its index (module docstring).

    The index is the line index ``line_addr / line_bytes``, or for an interleaved cache of several
    partitions the line's rank within its partition, ``xor_fold_hash(line index) // partitions``."""
    meta = cache[4]
    sets_per_partition = meta[META_SETS_PER_PARTITION]
    line_index = quotient(line_addr, meta[META_LINE_BYTES])
    interleave = meta[META_INTERLEAVE]
    if interleave > 1:
        line_index = quotient(xor_fold_hash(line_index), interleave)
    return partition * sets_per_partition + digit_sum_mod(line_index, sets_per_partition)


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
    if meta[META_EVER_DIRTY]:   # a write-through cache (L1) skips its all-clean dirty flags
        for sector in range(sector_ready_cycle.shape[2]):
            evicted_dirty += dirty[set_index, victim, sector]
            dirty[set_index, victim, sector] = 0
    for sector in range(sector_ready_cycle.shape[2]):
        sector_ready_cycle[set_index, victim, sector] = NOT_PRESENT
    tags[set_index, victim] = line_addr
    return victim, evicted_line, evicted_dirty


@engine_jit(inline="always")
def line_and_sector(sector_addr, line_bytes, sector_bytes):
    """(line byte address, sector number within the line) of a byte address."""
    line_addr = quotient(sector_addr, line_bytes) * line_bytes
    return line_addr, quotient(sector_addr - line_addr, sector_bytes)


@compiled_only(inline="always")
def _line_and_sector(meta, sector_addr):
    """``line_and_sector`` with this cache's geometry."""
    return line_and_sector(sector_addr, meta[META_LINE_BYTES], meta[META_SECTOR_BYTES])


@engine_jit(inline="always")
def cache_find(cache, set_index, line_addr):
    """Way of ``set_index`` that holds ``line_addr``, or -1. A caller walking several sectors of one line
    looks the line up once and passes the way to the ``*_way`` operations below (the way stays valid
    until another line is allocated in the set)."""
    return _find_way(cache[0], set_index, line_addr)


@engine_jit(inline="always")
def cache_lookup_way(cache, set_index, way, sector, now):
    """``cache_lookup`` of sector number ``sector`` of the line held by ``way`` (-1: line absent)."""
    sector_ready_cycle = cache[1]
    if way < 0 or sector_ready_cycle[set_index, way, sector] == NOT_PRESENT:
        return False, np.int64(-1)
    _touch(cache[2], cache[4], set_index, way)
    return True, max(np.int64(now), sector_ready_cycle[set_index, way, sector])


@engine_jit(inline="always")
def cache_fill_way(cache, set_index, way, line_addr, sector, fill_complete_cycle):
    """``cache_fill`` of sector number ``sector`` of ``line_addr``, held by ``way`` (-1: allocate it).

    Returns ``(way, evicted_line_addr, evicted_dirty_sectors)``."""
    sector_ready_cycle = cache[1]
    evicted_line = np.int64(NO_LINE)
    evicted_dirty = np.int64(0)
    if way < 0:
        way, evicted_line, evicted_dirty = _allocate(cache, set_index, line_addr)
    present = sector_ready_cycle[set_index, way, sector]
    if present == NOT_PRESENT or fill_complete_cycle < present:
        sector_ready_cycle[set_index, way, sector] = fill_complete_cycle
    _touch(cache[2], cache[4], set_index, way)
    return way, evicted_line, evicted_dirty


@engine_jit(inline="always")
def cache_write_way(cache, set_index, way, line_addr, sector, now, write_allocate, mark_dirty):
    """``cache_write`` of sector number ``sector`` of ``line_addr``, held by ``way`` (-1: absent).

    Returns ``(hit, way, evicted_line_addr, evicted_dirty_sectors)``; ``way`` is the line's way after the
    write (-1 if it stays absent)."""
    sector_ready_cycle = cache[1]
    evicted_line = np.int64(NO_LINE)
    evicted_dirty = np.int64(0)
    hit = way >= 0 and sector_ready_cycle[set_index, way, sector] != NOT_PRESENT
    if way < 0:
        if not write_allocate:
            return False, way, evicted_line, evicted_dirty
        way, evicted_line, evicted_dirty = _allocate(cache, set_index, line_addr)
    if not hit:
        if not write_allocate:
            return False, way, evicted_line, evicted_dirty
        sector_ready_cycle[set_index, way, sector] = now
    if mark_dirty:
        cache[3][set_index, way, sector] = 1
        cache[4][META_EVER_DIRTY] = 1
    _touch(cache[2], cache[4], set_index, way)
    return hit, way, evicted_line, evicted_dirty


@engine_jit(inline="always")
def cache_lookup(cache, set_index, sector_addr, now):
    """Look a sector up at cycle ``now``.

    Returns ``(hit, ready_cycle)``. On a hit the line becomes most recently used and ``ready_cycle`` is
    ``max(now, fill-complete cycle)``: later than ``now`` when the fill is still in flight. On a miss
    (line absent, or line present without this sector) ``ready_cycle`` is -1 and nothing changes.
    """
    line_addr, sector = _line_and_sector(cache[4], sector_addr)
    return cache_lookup_way(cache, set_index, cache_find(cache, set_index, line_addr), sector, now)


@engine_jit
def cache_fill(cache, set_index, sector_addr, fill_complete_cycle):
    """Record that the sector's fill completes at ``fill_complete_cycle``, allocating its line if absent.

    A sector already present keeps the earlier of its two fill cycles. Returns
    ``(evicted_line_addr, evicted_dirty_sectors)``: -1 and 0 when nothing was evicted; a clean victim gives
    its address and 0.
    """
    line_addr, sector = _line_and_sector(cache[4], sector_addr)
    _, evicted_line, evicted_dirty = cache_fill_way(cache, set_index, cache_find(cache, set_index, line_addr),
                                                    line_addr, sector, fill_complete_cycle)
    return evicted_line, evicted_dirty


@engine_jit
def cache_write(cache, set_index, sector_addr, now, write_allocate, mark_dirty):
    """Write a whole sector at cycle ``now``.

    write_allocate  allocate the line (LRU victim) and the sector when absent (write-back L2); when False
                    only a sector already present is updated (write-through, no-allocate L1)
    mark_dirty      set the sector's dirty bit (write-back); False for a write-through cache

    A sector that was absent becomes present at ``now``; one already present (even in flight) keeps its
    fill cycle. Returns ``(hit, evicted_line_addr, evicted_dirty_sectors)`` where ``hit`` says the sector
    was present before the write.
    """
    line_addr, sector = _line_and_sector(cache[4], sector_addr)
    hit, _, evicted_line, evicted_dirty = cache_write_way(cache, set_index, cache_find(cache, set_index, line_addr),
                                                          line_addr, sector, now, write_allocate, mark_dirty)
    return hit, evicted_line, evicted_dirty


@engine_jit
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


@engine_jit
def cache_invalidate_all(cache):
    """Drop every line of every partition, discarding dirty data (L1 at a kernel boundary)."""
    for partition in range(cache[4][META_PARTITIONS]):
        cache_invalidate_partition(cache, partition)


@engine_jit
def cache_dirty_sectors(cache):
    """Number of dirty sectors held (what a full write-back flush would write)."""
    dirty = cache[3]
    total = 0
    for set_index in range(dirty.shape[0]):
        for way in range(dirty.shape[1]):
            for sector in range(dirty.shape[2]):
                total += dirty[set_index, way, sector]
    return total
