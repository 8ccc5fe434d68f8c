"""The coalescer: which memory sectors one warp-wide global/local access touches.

What it models
    A warp memory instruction presents up to 32 lane addresses. The L1TEX unit turns them into the set of
    distinct 32-byte sectors (grouped into 128-byte lines) the request must read or write; the number of
    sectors, not the number of lanes, is what costs bandwidth and cache lookups. A lane accessing
    ``access_bytes`` bytes at byte address ``a`` touches every sector from ``a // sector`` to
    ``(a + access_bytes - 1) // sector``, so a 16-byte vector access on sectors smaller than 16 bytes, or
    an unaligned one, spans several sectors.

Simplifications
    * A request is described by its sectors only; replays for more than one line per wavefront (pre-Volta
      behaviour) are not modelled. The L1TEX tag stage charges ceil(lines / l1_tags_per_cycle) cycles per
      request and the data stage its bank wavefronts (``memsys.l1tex_reserve``); the servers downstream
      charge the sectors.
    * Inactive lanes (bit clear in ``active_mask``) contribute nothing, as on hardware.
    * The what-if "perfect coalescing" (``perfect_coalescing``) keeps the lowest ``ideal`` sectors of a request:
      the same request, as if its lanes' bytes were contiguous and aligned (gpusim.launch.what_if).
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.bits import quotient
from gpusim.engine.jit import compiled_only, engine_jit

WARP_LANES = 32
# Enough room for 32 lanes of the widest access (16 bytes) each spanning up to 4 sectors.
MAX_SECTORS_PER_REQUEST = 128


def make_sector_buffer() -> np.ndarray:
    """Return a scratch int64 array large enough for ``coalesce``'s output."""
    return np.empty(MAX_SECTORS_PER_REQUEST, dtype=np.int64)


@compiled_only(inline="always")
def _insert_sorted_unique(sorted_values, count, value):
    """Insert ``value`` into ``sorted_values[:count]`` keeping it ascending and duplicate-free.

    Returns the new count. Searches from the end, so ascending input (the common, coalesced case) costs
    one comparison per insertion; inlined, so that case is not a call per lane either.
    """
    position = count
    while position > 0 and sorted_values[position - 1] > value:
        position -= 1
    if position > 0 and sorted_values[position - 1] == value:
        return count
    for move in range(count, position, -1):
        sorted_values[move] = sorted_values[move - 1]
    sorted_values[position] = value
    return count + 1


@engine_jit
def coalesce(addresses, active_mask, access_bytes, sector_bytes, line_bytes, out_sector_addrs):
    """Collect the distinct sectors a warp access touches.

    addresses         int64[32] per-lane byte addresses
    active_mask       uint32 bitmask, bit i set when lane i takes part
    access_bytes      bytes each lane reads or writes (1, 2, 4, 8 or 16)
    sector_bytes      sector size in bytes (32 on NVIDIA GPUs)
    line_bytes        cache line size in bytes; sectors never straddle lines because ``line_bytes`` is a
                      multiple of ``sector_bytes``, so the list is already grouped line by line
                      (``count_lines`` counts the groups)
    out_sector_addrs  int64[>= MAX_SECTORS_PER_REQUEST] receives the sector-aligned byte addresses, ascending

    Returns the number of sectors written.
    """
    count = 0
    for lane in range(WARP_LANES):
        if (active_mask >> lane) & 1 == 0:
            continue
        first_sector = quotient(addresses[lane], sector_bytes)
        last_sector = quotient(addresses[lane] + access_bytes - 1, sector_bytes)
        for sector in range(first_sector, last_sector + 1):
            count = _insert_sorted_unique(out_sector_addrs, count, sector * sector_bytes)
    return count


@engine_jit
def count_lines(sector_addrs, n, line_bytes):
    """Number of distinct ``line_bytes`` lines among the ascending ``sector_addrs[:n]``."""
    lines = 0
    previous_line = -1
    for index in range(n):
        line = sector_addrs[index] // line_bytes
        if lines == 0 or line != previous_line:
            lines += 1
            previous_line = line
    return lines


@engine_jit
def lanes_per_sector(addresses, active_mask, access_bytes, sector_addrs, n, sector_bytes, out_lane_counts):
    """For each sector of a coalesced request, how many active lanes access it.

    Used for atomics, whose L2 execution cost is one operation per lane. Arguments as for ``coalesce``;
    ``sector_addrs[:n]`` is its output and ``out_lane_counts`` (int64[>= n]) receives the counts (a lane
    spanning two sectors counts in both).
    """
    for index in range(n):
        out_lane_counts[index] = 0
    for lane in range(WARP_LANES):
        if (active_mask >> lane) & 1 == 0:
            continue
        first = (addresses[lane] // sector_bytes) * sector_bytes
        last = ((addresses[lane] + access_bytes - 1) // sector_bytes) * sector_bytes
        for index in range(n):
            if first <= sector_addrs[index] <= last:
                out_lane_counts[index] += 1


@compiled_only(inline="always")
def _contiguous_whole(addresses, active_mask, access_bytes, sector_bytes):
    """The common store: all lanes active on consecutive, sector-aligned addresses covering whole sectors."""
    if active_mask != 0xFFFFFFFF or addresses[0] % sector_bytes != 0 or (WARP_LANES * access_bytes) % sector_bytes:
        return False
    for lane in range(1, WARP_LANES):
        if addresses[lane] != addresses[0] + lane * access_bytes:
            return False
    return True


@engine_jit
def partial_sectors(addresses, active_mask, access_bytes, sector_addrs, n, sector_bytes, out_partial):
    """For each sector of a coalesced store, whether its active lanes write only part of it.

    Arguments as for ``lanes_per_sector``; ``out_partial`` (int64[>= n]) receives 1 for a sector some byte of
    which no active lane writes, 0 for a whole one. A sector not in ``sector_addrs[:n]`` (dropped by the what-if
    "perfect coalescing") is skipped. Returns the number of partial sectors.
    """
    for index in range(n):
        out_partial[index] = 0                 # first the written bytes of each sector, as a bit mask
    if sector_bytes > 62 or n == 0:
        return 0                               # no mask that wide: every sector counts as whole
    if _contiguous_whole(addresses, active_mask, access_bytes, sector_bytes):
        return 0
    for lane in range(WARP_LANES):
        if (active_mask >> lane) & 1 == 0:
            continue
        start = addresses[lane]
        end = start + access_bytes
        base = (start // sector_bytes) * sector_bytes
        low = 0
        high = n - 1
        while low < high:                      # sector_addrs[:n] ascends
            middle = (low + high) // 2
            if sector_addrs[middle] < base:
                low = middle + 1
            else:
                high = middle
        while base < end:                      # the lane's sectors (two when it spans a boundary)
            if low < n and sector_addrs[low] == base:
                first = max(start, base) - base
                last = min(end, base + sector_bytes) - base
                out_partial[low] |= ((np.int64(1) << (last - first)) - 1) << first
                low += 1
            base += sector_bytes
    whole = (np.int64(1) << sector_bytes) - 1
    partial = 0
    for index in range(n):
        out_partial[index] = 1 if out_partial[index] != whole else 0
        partial += out_partial[index]
    return partial


@engine_jit(inline="always")
def perfect_coalescing(n, ideal_sectors):
    """Sectors a request keeps under the what-if switch "perfect coalescing": the fewest its active lanes'
    bytes fit in (``ideal_sectors`` = ceil(active lanes x access bytes / sector bytes)), never more than it
    touched. The kept sectors are the first ``ideal_sectors`` of ``coalesce``'s ascending list (real sectors
    of the request, still grouped line by line)."""
    return min(n, ideal_sectors)
