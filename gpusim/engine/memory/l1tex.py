"""The SM's front end of the global-memory path: the L1TEX pipeline's sector slots and the MSHR heap.

What it models
    ``memsys.l1tex_reserve`` books a warp request's occupancy of the SM's L1TEX pipeline (tag and data
    stages); ``l1tex_slot`` spreads the request's sectors evenly over that occupancy.
    Each SM has ``mshrs_per_sm`` miss status holding registers; ``memsys`` keeps them in
    ``mshr_free_cycle`` int64[sms, mshrs_per_sm], the cycle each slot's sector completes (a slot is free once
    that cycle is reached). A sector that misses in L1 takes the slot that frees earliest, so the slots of an
    SM are kept as an 8-ary min-heap with that slot at index 0: taking it costs log8(slots), not a scan.

Simplifications
    A slot holds one 32-B sector (no per-line entries with sector merging); see ``memsys`` for how a wait
    for a slot is charged.
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.jit import engine_jit

MSHR_HEAP_ARITY = 8   # children per node: a node's children are one host cache line of int64 cycles


@engine_jit
def replace_earliest_mshr(mshr_free_cycle, sm, busy_until):
    """SM ``sm``'s slots form an 8-ary min-heap of free cycles (root: the slot that frees earliest; node
    i's children are 8i+1 .. 8i+8). Give the earliest slot to a sector that holds it until
    ``busy_until``: replace the root, sift down. Eight children per node make the heap of 1024 slots four
    levels deep instead of ten, which matters when the heaps of 132 SMs do not fit the host's caches."""
    heap = mshr_free_cycle[sm]
    size = heap.shape[0]
    i = 0
    while True:
        first = MSHR_HEAP_ARITY * i + 1
        if first >= size:
            break
        child = first
        for candidate in range(first + 1, min(first + MSHR_HEAP_ARITY, size)):
            if heap[candidate] < heap[child]:
                child = candidate
        if heap[child] >= busy_until:
            break
        heap[i] = heap[child]
        i = child
    heap[i] = busy_until


@engine_jit(inline="always")
def l1tex_slot(start, occupancy, index, n):
    """Cycle sector ``index`` of ``n`` leaves the L1TEX pipeline: spread evenly over the request's occupancy."""
    return start + np.int64(index * occupancy / n)
