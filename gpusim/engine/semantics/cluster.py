"""Thread-block clusters in the engine: the cluster special registers, the order blocks start in, and the
resolution of a distributed-shared-memory (``shared::cluster``) address to another CTA's shared memory.

Addresses
    A ``shared::cluster`` address is ``(rank + 1) << 24 | offset``: CTA ``rank`` of the cluster, byte
    ``offset`` of its shared memory (what ``mapa`` returns, ``gpusim.engine.semantics.cluster_ops``). An address
    below ``1 << 24`` is the executing CTA's own shared memory, so a ``shared::cta`` address stays valid in the
    ``shared::cluster`` window, as the PTX ISA says. The generic shared window holds both forms.

Placement
    Both loops start all blocks of a cluster together (blocks are numbered in cluster order: ``cluster_block``)
    at block slots a fixed stride apart (``rank_slots``: 1 in the functional loop, the block slots per SM in the
    timed one, whose ranks sit on consecutive SMs), so rank ``r``'s block slot is the own slot plus
    ``(r - own rank)`` strides: no table to keep. ``L_CLUSTER`` packs the shape as ``x | y << 8 | z << 16``.

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
# E_SUB of ERR_CLUSTER: a rank past the cluster, a CTA that has exited, an address not a shared one (mapa)
CLERR_RANK, CLERR_EXITED, CLERR_NOT_SHARED = 1, 2, 3


@compiled_only
def cluster_dim(launch, axis):
    """The cluster's size along ``axis`` (0 x, 1 y, 2 z); 1 without a cluster launch."""
    packed = launch[S.L_CLUSTER]
    return 1 if packed == 0 else (packed >> (8 * axis)) & 255


@compiled_only
def cluster_size(launch):
    """Blocks of one cluster; 0 without a cluster launch (each block an implicit 1x1x1 cluster)."""
    if launch[S.L_CLUSTER] == 0:
        return 0
    return cluster_dim(launch, 0) * cluster_dim(launch, 1) * cluster_dim(launch, 2)


@compiled_only
def cluster_block(launch, seq):
    """Linear block index (%ctaid, x fastest) of the ``seq``-th block in cluster order."""
    size = cluster_size(launch)
    if size <= 1:
        return seq
    gx = launch[S.L_NCTAID_X]
    gy = launch[S.L_NCTAID_Y]
    cx = cluster_dim(launch, 0)
    cy = cluster_dim(launch, 1)
    cz = cluster_dim(launch, 2)
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
    cx = cluster_dim(launch, 0)
    cy = cluster_dim(launch, 1)
    return (b % gx) % cx + cx * (((b // gx) % gy) % cy + cy * ((b // (gx * gy)) % cluster_dim(launch, 2)))


@compiled_only
def cluster_special(m, code, w):
    """The value of cluster special register ``code`` (SR_CLUSTERID_X .. SR_IS_EXPLICIT_CLUSTER)."""
    launch = m.launch
    if code == L.SR_CLUSTER_CTARANK:
        return np.uint64(warp_rank(m, w))
    if code == L.SR_CLUSTER_NCTARANK:
        return np.uint64(cluster_dim(launch, 0) * cluster_dim(launch, 1) * cluster_dim(launch, 2))
    if code == L.SR_IS_EXPLICIT_CLUSTER:
        return np.uint64(1 if launch[S.L_CLUSTER] != 0 else 0)
    axis = (code - L.SR_CLUSTERID_X) % 3
    b = m.warp_block[w]
    gx = launch[S.L_NCTAID_X]
    gy = launch[S.L_NCTAID_Y]
    coord = b % gx if axis == 0 else ((b // gx) % gy if axis == 1 else b // (gx * gy))
    cdim = cluster_dim(launch, axis)
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
    stride = 1 if launch[S.L_TIMED] == 0 else m.shared8.shape[0] // launch[S.L_NSM]
    delta = (rank - warp_rank(m, w)) * stride
    return m.warp_bslot[w] + delta, w - m.warp_index[w] + delta * launch[S.L_WARPS_PER_BLOCK]


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
    if rank >= max(cluster_size(launch), 1):
        return cluster_fail_code(m, CLERR_RANK, rank)
    if offset > max(launch[S.L_SHARED_LIMIT], launch[S.L_SHARED_BYTES]) - nbytes:
        return BAD, 1
    if rank == warp_rank(m, w):
        return L.SP_SHARED, offset
    if not rank_alive(m, w, rank):
        return cluster_fail_code(m, CLERR_EXITED, rank)
    return L.SP_DSM, (rank_slots(m, w, rank)[0] << RANK_SHIFT) | offset


@compiled_only
def cluster_address(launch, space, address):
    """The shared::cluster address of an access to ``space`` at ``address`` when it names another CTA's
    window (>= CTA_WINDOW) in a cluster launch, else -1."""
    if launch[S.L_CLUSTER] == 0:
        return -1
    shared = -1
    if space == L.SP_SHARED:
        shared = address
    elif space == L.SP_GENERIC and L.SHARED_WINDOW <= address < L.SHARED_WINDOW + L.WINDOW_BYTES:
        shared = address - L.SHARED_WINDOW
    return shared if shared >= CTA_WINDOW else -1
