"""The Hopper instructions' entry point (``step_warp`` calls ``hopper_op`` for OP_FIRST_HOPPER..OP_LAST_HOPPER)
and the cluster bulk copies: the distributed-shared-memory copy and the ``.multicast::cluster`` load
(``exec_bulk_multicast``: a lane's global bytes land at one CTA-relative offset in every CTA of its ctaMask,
each completing them on its mbarrier at the same offset; a rank outside the cluster or an exited CTA is
ERR_CLUSTER), and ``cp.async.bulk.prefetch.L2.global`` (``exec_bulk_prefetch``: no data moves).

``cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]`` copies
``size`` bytes of the executing CTA's shared memory to ``dst`` in a CTA of the cluster (a ``shared::cluster``
address, ``semantics/cluster``) and performs complete-tx of ``size`` bytes on the mbarrier ``mbar`` (in the
destination CTA, as the PTX ISA requires). The bytes move at issue. In the functional loop the complete-tx is
applied at once; in the timed loop the copy is a row of the mbarrier's CTA's ``bulk_tx`` table with no global
address (``BT_GADDR`` -1), which ``sm/async_timing.py`` gives the cycle ``dsm_round_trip_cycles`` + bytes at
``dsm_bytes_per_cycle_per_sm`` after issue. Simplified: the lanes of one instruction copying to different CTAs
are timed only for the first lane's CTA (the others complete at issue).
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.cluster import (
    OFFSET_MASK,
    cluster_address,
    dsm_resolve,
    rank_slots,
)
from gpusim.engine.semantics.cluster_ops import exec_barrier_cluster, exec_mapa
from gpusim.engine.semantics.mbarrier import (
    VALID,
    _address,
    _async_fail,
    _bulk_check,
    _bulk_request,
    book_bulk,
    complete_tx,
    exec_bulk_copy,
    exec_elect,
    exec_mbarrier,
    multicast_targets,
)
from gpusim.engine.semantics.memops import error_kind, resolve, resolve_noting
from gpusim.engine.semantics.operands import read_src
from gpusim.engine.semantics.simt import STATUS_ERROR, STATUS_OK, fail
from gpusim.engine.semantics.tma import exec_bulk_tensor


@compiled_only
def _cta_shared(m, w, address, nbytes, align):
    """(block slot, offset) of a shared::cluster ``address`` (own or another CTA's), or (-1, resolve code)."""
    shared = cluster_address(m.launch, L.SP_SHARED, address)
    if shared < 0:
        space, offset = resolve(m, L.SP_SHARED, address, nbytes, align, False)
        return (m.warp_bslot[w], offset) if space >= 0 else (-1, offset)
    space, offset = dsm_resolve(m, shared, nbytes, align, w)
    if space < 0:
        return -1, offset
    if space == L.SP_DSM:
        return offset >> 24, offset & 0xFFFFFF
    return m.warp_bslot[w], offset


@compiled_only
def exec_bulk_dsm(m, row, pc, w, mask):
    """The DSM bulk copy for each lane of ``mask`` (see the module docstring)."""
    bslot = m.warp_bslot[w]
    timed = m.launch[S.L_TIMED] != 0
    first_target = -1
    for lane in range(32):
        if not (mask >> lane) & 1:
            continue
        dst = _address(m, row, w, lane, -1, 0)
        src = _address(m, row, w, lane, 0, L.F_TC_SRC_OFFSET)
        size = np.int64(read_src(m, row, 1, w, lane) & np.uint64(0xFFFFFFFF))
        if _bulk_check(m, row, pc, w, lane, dst, src, size) != STATUS_OK:
            return STATUS_ERROR
        target, doff = _cta_shared(m, w, dst, size, 1)
        if target < 0:
            return fail(m, error_kind(doff), pc, w, lane, dst)
        sspace, soff = resolve(m, L.SP_SHARED, src, size, 1, False)
        if sspace < 0:
            return fail(m, error_kind(soff), pc, w, lane, src)
        mbar_address = _address(m, row, w, lane, 2, L.F_BULK_MBAR_OFFSET)
        mslot, mbar = _cta_shared(m, w, mbar_address, 8, 8)
        if mslot < 0:
            return fail(m, error_kind(mbar), pc, w, lane, mbar_address)
        if (m.shared64[mslot, mbar >> 3] & VALID) == 0:
            return _async_fail(m, S.ASYNC_UNINIT, 0, pc, w, lane, mbar_address)
        for i in range(size):
            m.shared8[target, doff + i] = m.shared8[bslot, soff + i]
        if not timed or (first_target >= 0 and mslot != first_target):
            if complete_tx(m, mslot, mbar, size) < 0:
                return _async_fail(m, S.ASYNC_TX_RANGE, size, pc, w, lane, mbar_address)
            continue
        first_target = mslot
        if book_bulk(m, mslot, mbar, size, -1, 0) < 0:     # no global address: the SM-to-SM network times it
            return _async_fail(m, S.ASYNC_UNINIT, 0, pc, w, lane, mbar_address)
    req = m.mem_req
    req[S.MR_SPACE] = L.SP_SHARED
    req[S.MR_KIND] = S.MK_BULK if first_target >= 0 else 0
    req[S.MR_MASK] = mask
    req[S.MR_BAR_ID] = first_target
    req[S.MR_BAR_COUNT] = 0
    return STATUS_OK


@compiled_only
def exec_bulk_prefetch(m, row, pc, w, mask):
    """cp.async.bulk.prefetch.L2.global for each lane of ``mask``: the ISA's alignment rules and a range inside
    global memory; no data moves (a hint); in the timed loop a ``bulk_tx`` row of kind BULK_L2_PREFETCH reads the
    sectors into L2."""
    bslot = m.warp_bslot[w]
    timed = m.launch[S.L_TIMED] != 0
    for lane in range(32):
        if not (mask >> lane) & 1:
            continue
        src = _address(m, row, w, lane, 0, L.F_TC_SRC_OFFSET)
        size = np.int64(read_src(m, row, 1, w, lane) & np.uint64(0xFFFFFFFF))
        if _bulk_check(m, row, pc, w, lane, 0, src, size) != STATUS_OK:
            return STATUS_ERROR
        space, offset = resolve(m, L.SP_GLOBAL, src, size, 1, False)
        if space < 0:
            return fail(m, error_kind(offset), pc, w, lane, src)
        if timed and book_bulk(m, bslot, -1, size, offset, L.BULK_L2_PREFETCH) < 0:
            return _async_fail(m, S.ASYNC_UNINIT, 0, pc, w, lane, src)
    _bulk_request(m, mask, bslot)
    return STATUS_OK


@compiled_only
def exec_bulk_multicast(m, row, pc, w, mask):
    """``cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster``: each lane's
    global bytes land at the same CTA-relative offset in every CTA its ctaMask names, each completing them on
    its own mbarrier at the same offset (at once, or when timed: ``sm/async_timing._multicast_timing``)."""
    timed = m.launch[S.L_TIMED] != 0
    last_mask = 0
    for lane in range(32):
        if not (mask >> lane) & 1:
            continue
        dst = _address(m, row, w, lane, -1, 0)
        src = _address(m, row, w, lane, 0, L.F_TC_SRC_OFFSET)
        size = np.int64(read_src(m, row, 1, w, lane) & np.uint64(0xFFFFFFFF))
        cta_mask = np.int64(read_src(m, row, 3, w, lane) & np.uint64(0xFFFF))
        if _bulk_check(m, row, pc, w, lane, dst, src, size) != STATUS_OK:
            return STATUS_ERROR
        dspace, doff = resolve(m, L.SP_SHARED, dst & OFFSET_MASK, size, 1, False)
        if dspace < 0:
            return fail(m, error_kind(doff), pc, w, lane, dst)
        sspace, soff = resolve_noting(m, L.SP_GLOBAL, src, size, 1, True, pc, w, lane)
        if sspace < 0:
            return fail(m, error_kind(soff), pc, w, lane, src)
        mbar_address = _address(m, row, w, lane, 2, L.F_BULK_MBAR_OFFSET)
        mspace, moff = resolve(m, L.SP_SHARED, mbar_address & OFFSET_MASK, 8, 8, False)
        if mspace < 0:
            return fail(m, error_kind(moff), pc, w, lane, mbar_address)
        if multicast_targets(m, w, pc, lane, cta_mask, moff) != STATUS_OK:
            return STATUS_ERROR
        for rank in range(16):
            if not (cta_mask >> rank) & 1:
                continue
            target = rank_slots(m, w, rank)[0]
            for i in range(size):
                m.shared8[target, doff + i] = m.mem8[soff + i]
            if not timed:
                if complete_tx(m, target, moff, size) < 0:
                    return _async_fail(m, S.ASYNC_TX_RANGE, size, pc, w, lane, mbar_address)
                continue
            if book_bulk(m, target, moff, size, soff, 0) < 0:
                return _async_fail(m, S.ASYNC_UNINIT, 0, pc, w, lane, mbar_address)
        last_mask |= cta_mask
    req = m.mem_req
    req[S.MR_SPACE] = L.SP_SHARED
    req[S.MR_KIND] = S.MK_BULK if timed and last_mask != 0 else 0
    req[S.MR_MASK] = mask
    req[S.MR_BAR_ID] = rank_slots(m, w, 0)[0]
    stride = rank_slots(m, w, 1)[0] - req[S.MR_BAR_ID]
    req[S.MR_BAR_COUNT] = (last_mask << 32) | stride
    return STATUS_OK


@compiled_only
def hopper_op(m, row, pc, w, mask, op):
    """Execute Hopper instruction ``row`` (mbarrier, elect, cp.async.bulk(.tensor), mapa, barrier.cluster);
    returns a STATUS_* code (or ``cluster_ops.RETRY``)."""
    if op == c.OP_BULK_TENSOR:
        return exec_bulk_tensor(m, row, pc, w, mask)
    if op == c.OP_ELECT:
        return exec_elect(m, row, pc, w, mask)
    if op == c.OP_BULK_COPY:
        if row[L.F_AUX] == L.BULK_S2C:
            return exec_bulk_dsm(m, row, pc, w, mask)
        if row[L.F_AUX] == L.BULK_MULTICAST:
            return exec_bulk_multicast(m, row, pc, w, mask)
        if row[L.F_AUX] == L.BULK_PREFETCH:
            return exec_bulk_prefetch(m, row, pc, w, mask)
        return exec_bulk_copy(m, row, pc, w, mask)
    if op == c.OP_MAPA:
        return exec_mapa(m, row, pc, w, mask)
    if op == c.OP_BARRIER_CLUSTER:
        return exec_barrier_cluster(m, row, pc, w, mask)
    return exec_mbarrier(m, row, pc, w, mask)
