"""Block barriers (bar.sync / barrier.sync / bar.arrive), counted per warp.

A warp arrives at barrier ``id`` with an optional thread count. Barrier ``id``
completes when the warps that arrived at it cover the count (in whole warps), or,
with no count, when every warp of the block that has not exited waits on it:
exited warps no longer count, as on Volta and later.

``bar.arrive`` (PTX ISA: the arriving threads do not wait) is an arrival that does
not wait: the warp goes on, and its arrival counts until the barrier completes. A
warp's barrier state is two halves of ``bar_id`` and ``bar_count``: the low
``ARRIVE_SHIFT`` bits the barrier it waits at (``waiting``) and that barrier's
count, the bits above the barrier it arrived at without waiting (its id + 1; 0:
none) and that count. ``mem_req[MR_BAR_COUNT]`` carries ``ARRIVE_ONLY`` for a
``bar.arrive``.
"""

from __future__ import annotations

from gpusim.engine.jit import compiled_only

ARRIVE_SHIFT = 16
LOW = (1 << ARRIVE_SHIFT) - 1
ARRIVE_ONLY = 1 << 32
"""In ``mem_req[MR_BAR_COUNT]``: the barrier instruction is a ``bar.arrive`` (the count below)."""


@compiled_only
def arrive(waiting, bar_id, bar_count, w, bid, count):
    """Warp ``w`` arrives at barrier ``bid`` (``count``: ``mem_req[MR_BAR_COUNT]``); returns whether it waits
    (bar.sync) or goes on (bar.arrive, ``count & ARRIVE_ONLY``)."""
    if count & ARRIVE_ONLY:
        bar_id[w] = (bar_id[w] & LOW) | ((bid + 1) << ARRIVE_SHIFT)
        bar_count[w] = (bar_count[w] & LOW) | ((count & LOW) << ARRIVE_SHIFT)
        return False
    waiting[w] = 1
    bar_id[w] = (bar_id[w] & ~LOW) | bid
    bar_count[w] = (bar_count[w] & ~LOW) | count
    return True


@compiled_only(inline="always")
def _arrived_at(waiting, bar_id, v, bid):
    """0: warp ``v`` has not arrived at barrier ``bid``; 1: it waits there; 2: it arrived without waiting."""
    if waiting[v] and (bar_id[v] & LOW) == bid:
        return 1
    if (bar_id[v] >> ARRIVE_SHIFT) == bid + 1:
        return 2
    return 0


@compiled_only
def release_barriers(waiting, bar_id, bar_count, done, first, n):
    """Complete every satisfied barrier among warps ``first .. first+n-1`` (release its waiting warps, clear
    the arrivals that did not wait); returns warps released."""
    live = 0
    for w in range(first, first + n):
        live += 1 - done[w]
    released = 0
    for w in range(first, first + n):
        if waiting[w]:
            bid = bar_id[w] & LOW
        elif bar_id[w] >> ARRIVE_SHIFT:
            bid = (bar_id[w] >> ARRIVE_SHIFT) - 1
        else:
            continue
        arrived = 0
        count = 0
        for v in range(first, first + n):
            how = _arrived_at(waiting, bar_id, v, bid)
            if how:
                arrived += 1
                c = bar_count[v] & LOW if how == 1 else bar_count[v] >> ARRIVE_SHIFT
                if c > count:
                    count = c
        needed = live if count == 0 else (count + 31) // 32
        if arrived >= needed:
            for v in range(first, first + n):
                how = _arrived_at(waiting, bar_id, v, bid)
                if how == 1:
                    waiting[v] = 0
                    released += 1
                elif how == 2:
                    bar_id[v] &= LOW
                    bar_count[v] &= LOW
    return released
