"""Thread-block clusters in the engine: the cluster special registers, the order blocks start in, and the
resolution of a distributed-shared-memory (``shared::cluster``) address to another CTA's shared memory.

Addresses
    A ``shared::cluster`` address is ``(rank + 1) << 24 | offset``: CTA ``rank`` of the cluster, byte
    ``offset`` of its shared memory (what ``mapa`` returns, ``gpusim.engine.semantics.cluster_ops``). An address
    below ``1 << 24`` is the executing CTA's own shared memory, so a ``shared::cta`` address stays valid in the
    ``shared::cluster`` window, as the PTX ISA says. The generic shared window holds both forms.

Placement
    Both loops start all blocks of a cluster together (blocks are numbered in cluster order: ``cluster_block``)
    at block slots and warp slots a fixed stride apart (``L_CLUSTER_BSTRIDE``/``L_CLUSTER_WSTRIDE``, set by each
    loop), so rank ``r``'s block slot is the own slot plus ``(r - own rank)`` strides: no table to keep.

Undefined behaviour detected (``ERR_CLUSTER``): a rank past the cluster, and an access to the shared memory of a
CTA whose threads have all exited.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S

RANK_SHIFT = 24
CTA_WINDOW = 1 << RANK_SHIFT
OFFSET_MASK = CTA_WINDOW - 1
BAD = -1
BAD_CLUSTER = 8       # resolve code: m.err[E_SUB]/[E_EXTRA] hold the rule and the rank


@compiled_only
def cluster_block(launch, seq):
    """Linear block index (%ctaid, x fastest) of the ``seq``-th block in cluster order."""
    size = launch[S.L_CLUSTER_SIZE]
    if size <= 1:
        return seq
    gx = launch[S.L_NCTAID_X]
    gy = launch[S.L_NCTAID_Y]
    cx = launch[S.L_CLUSTER_X]
    cy = launch[S.L_CLUSTER_Y]
    cz = launch[S.L_CLUSTER_Z]
    q = seq // size
    r = seq % size
    ncx = gx // cx
    ncy = gy // cy
    bx = (q % ncx) * cx + r % cx
    by = ((q // ncx) % ncy) * cy + (r // cx) % cy
    bz = (q // (ncx * ncy)) * cz + r // (cx * cy)
    return bx + gx * (by + gy * bz)


@compiled_only
def warp_rank(m, w):
    """%cluster_ctarank of warp slot ``w``'s block."""
    launch = m.launch
    b = m.warp_block[w]
    gx = launch[S.L_NCTAID_X]
    gy = launch[S.L_NCTAID_Y]
    cx = launch[S.L_CLUSTER_X]
    cy = launch[S.L_CLUSTER_Y]
    return (b % gx) % cx + cx * (((b // gx) % gy) % cy + cy * ((b // (gx * gy)) % launch[S.L_CLUSTER_Z]))


@compiled_only
def cluster_special(m, code, w):
    """The value of cluster special register ``code`` (SR_CLUSTERID_X .. SR_IS_EXPLICIT_CLUSTER)."""
    launch = m.launch
    if code == L.SR_CLUSTER_CTARANK:
        return np.uint64(warp_rank(m, w))
    if code == L.SR_CLUSTER_NCTARANK:
        return np.uint64(launch[S.L_CLUSTER_X] * launch[S.L_CLUSTER_Y] * launch[S.L_CLUSTER_Z])
    if code == L.SR_IS_EXPLICIT_CLUSTER:
        return np.uint64(1 if launch[S.L_CLUSTER_SIZE] > 0 else 0)
    axis = (code - L.SR_CLUSTERID_X) % 3
    b = m.warp_block[w]
    gx = launch[S.L_NCTAID_X]
    gy = launch[S.L_NCTAID_Y]
    coord = b % gx if axis == 0 else ((b // gx) % gy if axis == 1 else b // (gx * gy))
    cdim = launch[S.L_CLUSTER_X + axis]
    if code < L.SR_NCLUSTERID_X:
        return np.uint64(coord // cdim)
    if code < L.SR_CLUSTER_CTAID_X:
        return np.uint64(launch[S.L_NCTAID_X + axis] // cdim)
    if code < L.SR_CLUSTER_NCTAID_X:
        return np.uint64(coord % cdim)
    return np.uint64(cdim)


@compiled_only
def rank_slots(m, w, rank):
    """(block slot, first warp slot) of CTA ``rank`` of warp slot ``w``'s cluster."""
    launch = m.launch
    delta = rank - warp_rank(m, w)
    return (m.warp_bslot[w] + delta * launch[S.L_CLUSTER_BSTRIDE],
            w - m.warp_index[w] + delta * launch[S.L_CLUSTER_WSTRIDE])


@compiled_only
def rank_alive(m, w, rank):
    """Whether a thread of CTA ``rank`` of warp ``w``'s cluster has not exited."""
    first = rank_slots(m, w, rank)[1]
    for k in range(m.launch[S.L_WARPS_PER_BLOCK]):
        if m.sp[first + k] >= 0:
            return True
    return False


@compiled_only
def cluster_fail_code(m, sub, rank):
    m.err[S.E_SUB] = sub
    m.err[S.E_EXTRA] = rank
    return BAD, BAD_CLUSTER


@compiled_only
def dsm_resolve(m, shared, nbytes, align, w):
    """(space, offset) of a ``shared::cluster`` address ``shared`` >= CTA_WINDOW: SP_SHARED for the own CTA,
    SP_DSM (block slot << 24 | offset) for another; (BAD, code) as ``memops.resolve`` gives them."""
    if shared % align != 0:
        return BAD, 2
    rank = (shared >> RANK_SHIFT) - 1
    offset = shared & OFFSET_MASK
    launch = m.launch
    size = max(launch[S.L_CLUSTER_SIZE], 1)
    if rank >= size:
        return cluster_fail_code(m, S.CLERR_RANK, rank)
    if offset > max(launch[S.L_SHARED_LIMIT], launch[S.L_SHARED_BYTES]) - nbytes:
        return BAD, 1
    if rank == warp_rank(m, w):
        return L.SP_SHARED, offset
    if not rank_alive(m, w, rank):
        return cluster_fail_code(m, S.CLERR_EXITED, rank)
    return L.SP_DSM, (rank_slots(m, w, rank)[0] << RANK_SHIFT) | offset


@compiled_only
def cluster_address(launch, space, address):
    """The shared::cluster address of an access to ``space`` at ``address`` when it names another CTA's
    window (>= CTA_WINDOW) in a cluster launch, else -1."""
    if launch[S.L_CLUSTER_SIZE] == 0:
        return -1
    shared = -1
    if space == L.SP_SHARED:
        shared = address
    elif space == L.SP_GENERIC and L.SHARED_WINDOW <= address < L.SHARED_WINDOW + L.WINDOW_BYTES:
        shared = address - L.SHARED_WINDOW
    return shared if shared >= CTA_WINDOW else -1
