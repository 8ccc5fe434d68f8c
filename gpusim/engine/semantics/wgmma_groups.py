"""``wgmma.commit_group`` / ``wgmma.wait_group`` as the warpgroup-collective operations the PTX ISA makes them.

A wgmma is one operation of the whole warpgroup (four consecutive warps of the block, ``.sync.aligned``): its
shared-memory operands are read, and it completes, only once all four warps have issued it. gpusim computes
each warp's rows when that warp issues (semantics/wgmma.py), so a warp's ``wait_group N`` must not complete
before every other warp of its warpgroup has issued the groups it waits for: otherwise a kernel that releases
a stage after the wait (an arrive on an "empty" mbarrier, then a TMA refill) would let the refill overwrite
data a lagging warp has not read yet -- which the hardware's collective operation rules out.

Each thread counts the wgmma groups it has committed in a hidden register (row column F_SIZE names it, zero
when its block starts). ``wait_group N`` completes for warp ``w`` once every warp of its warpgroup that has not
exited has committed at least (``w``'s commits - N) groups; until then the warp stays at the instruction
(``cluster_ops.RETRY``: the loops run other warps and it tries again). When the warps of a warpgroup run in
step (the usual case) the wait never retries and nothing changes.
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.cluster_ops import RETRY
from gpusim.engine.semantics.simt import STATUS_OK

WARPGROUP_WARPS = 4


@compiled_only
def _most(m, w, reg):
    """The largest count of warp ``w``'s lanes."""
    most = np.int64(0)
    for lane in range(32):
        most = max(most, np.int64(m.regs[w, reg, lane]))
    return most


@compiled_only
def wgmma_commit(m, w, reg, mask):
    for lane in range(32):
        if (mask >> lane) & 1:
            m.regs[w, reg, lane] += np.uint64(1)


@compiled_only
def wgmma_wait(m, w, reg, n):
    """STATUS_OK once every live warp of ``w``'s warpgroup has committed (``w``'s commits - ``n``) groups,
    else RETRY."""
    need = _most(m, w, reg) - n
    if need <= 0:
        return STATUS_OK
    index = m.warp_index[w]
    first = w - index % WARPGROUP_WARPS
    for j in range(WARPGROUP_WARPS):
        k = first + j
        if k == w or index - index % WARPGROUP_WARPS + j >= m.launch[S.L_WARPS_PER_BLOCK] or m.sp[k] < 0:
            continue
        if _most(m, k, reg) < need:
            return RETRY
    return STATUS_OK
