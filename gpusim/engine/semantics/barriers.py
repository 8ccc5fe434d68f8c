"""Block barriers (bar.sync / barrier.sync), counted per warp.

A warp arrives at barrier ``id`` with an optional thread count. Barrier ``id``
completes when the warps waiting on it cover the count (in whole warps), or,
with no count, when every warp of the block that has not exited waits on it:
exited warps no longer count, as on Volta and later.
"""

from __future__ import annotations

from gpusim.engine.jit import compiled_only


@compiled_only
def release_barriers(waiting, bar_id, bar_count, done, first, n):
    """Release every satisfied barrier among warps ``first .. first+n-1``; returns warps released."""
    live = 0
    for w in range(first, first + n):
        live += 1 - done[w]
    released = 0
    for w in range(first, first + n):
        if not waiting[w]:
            continue
        bid = bar_id[w]
        arrived = 0
        count = 0
        for v in range(first, first + n):
            if waiting[v] and bar_id[v] == bid:
                arrived += 1
                if bar_count[v] > count:
                    count = bar_count[v]
        needed = live if count == 0 else (count + 31) // 32
        if arrived >= needed:
            for v in range(first, first + n):
                if waiting[v] and bar_id[v] == bid:
                    waiting[v] = 0
                    released += 1
    return released
