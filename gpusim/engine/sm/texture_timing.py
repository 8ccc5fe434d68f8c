"""Timing of a texture fetch (``tex`` / ``tld4``): a read of the texels' sectors through L1.

What it models: the TEX path of the L1TEX unit reads texels through the same L1 data cache, MSHRs, L2 and
DRAM as a global load (``memsys.global_load``, always cached in L1, as texture reads are), then spends
``texture_latency_cycles`` (a config field) in addressing and filtering before the result is usable. The
semantics (``gpusim.engine.semantics.texture``) left the distinct sectors every lane's footprint touched,
sorted, after the lanes in ``lane_addr``; they are walked in runs of at most ``MAX_SECTORS_PER_REQUEST``.

Simplifications: no separate texture cache (L1 and the texture cache are one unit since Volta); each run of
sectors passes the L1TEX tag stage (``memsys.l1tex_reserve``: ceil(lines / l1_tags_per_cycle) cycles) with
its sectors' bytes as the data stage; no quad or footprint-based throughput limit beyond that.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.memory.coalesce import MAX_SECTORS_PER_REQUEST
from gpusim.engine.memory.memsys import global_load
from gpusim.engine.semantics import state as S


@compiled_only
def texture_load(lane_addr, n, sectors, sm, now, l1, l2, servers, mshr, params, rates, counters, latency):
    """(result-ready cycle, MSHR wait cycles) of a fetch of the ``n`` sectors after the lanes."""
    done = np.int64(now)
    wait = np.int64(0)
    start = 0
    while start < n:
        k = min(MAX_SECTORS_PER_REQUEST, n - start)
        for i in range(k):
            sectors[i] = lane_addr[S.LANE_ADDR_TEXTURE + start + i] + L.GLOBAL_BASE
        ready, held = global_load(sectors, k, sm, now + wait, True, l1, l2, servers, mshr, params, rates, counters)
        done = max(done, ready)
        wait += held
        start += k
    return done + latency, wait
