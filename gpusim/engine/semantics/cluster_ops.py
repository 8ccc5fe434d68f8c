"""Cluster instructions: ``mapa`` and ``barrier.cluster.arrive`` / ``.wait`` (lowering in
``gpusim.ptx.lower_cluster``; addresses and placement in ``gpusim.engine.semantics.cluster``).

mapa
    ``mapa.shared::cluster d, a, rank`` gives ``(rank + 1) << 24 | (a & 0xFFFFFF)``: the same shared offset in
    CTA ``rank``; the generic form takes and gives generic addresses of the shared window. A rank outside the
    cluster (or, generic, an address outside the shared window) is the ISA's undefined behaviour: ERR_CLUSTER.

getctarank
    ``getctarank.shared::cluster d, a`` (a row of OP_MAPA with F_AUX = MAPA_GETCTARANK) inverts it: the rank of
    the CTA whose shared memory ``a`` names -- ``(a >> 24) - 1`` for a mapped address, the thread's own rank for
    an address of its own window; the generic form takes a generic address of the shared window. An address
    outside the window, or naming a rank past the cluster, is ERR_CLUSTER.

barrier.cluster
    Each thread counts its arrivals in a hidden register (row column F_SIZE names it, zeroed when its block
    starts). ``arrive`` adds one; ``wait`` completes for a thread once every thread of the cluster that has not
    exited has arrived at least as often as it has (so the phases of a thread's arrive/wait pairs are the
    barrier's phases). A wait that cannot complete yet leaves the warp at the instruction (``RETRY``): the loops
    run other warps and the warp tries again, the timed loop after ``cluster_barrier_latency_cycles`` (the wait
    leaves a zero-byte distributed-shared-memory request). Simplified: a warp counts as exited only when all its
    threads have; a thread that exits on its own while its warp lives is waited for (hang: the loop's limit).
    The memory-ordering qualifiers (.release, .acquire, .relaxed) have no further effect: every access is
    performed at issue.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.cluster import (
    CLERR_NOT_SHARED,
    CLERR_RANK,
    CTA_WINDOW,
    OFFSET_MASK,
    RANK_SHIFT,
    cluster_size,
    rank_slots,
    warp_rank,
)
from gpusim.engine.semantics.operands import read_src
from gpusim.engine.semantics.simt import STATUS_OK, fail

RETRY = -7            # the wait cannot complete yet: the warp stays at the instruction
U32_MASK = np.uint64(0xFFFFFFFF)


@compiled_only
def _cluster_fail(m, sub, extra, pc, w, lane, address):
    m.err[S.E_SUB] = sub
    m.err[S.E_EXTRA] = extra
    return fail(m, S.ERR_CLUSTER, pc, w, lane, address)


@compiled_only
def exec_mapa(m, row, pc, w, mask):
    generic = row[L.F_SPACE] == L.SP_GENERIC
    size = max(cluster_size(m.launch), 1)
    narrow = row[L.F_SIZE] == 4
    d = row[L.F_DST0]
    for lane in range(32):
        if (mask >> lane) & 1:
            a = np.int64(read_src(m, row, 0, w, lane))
            rank = np.int64(read_src(m, row, 1, w, lane) & U32_MASK) if row[L.F_NSRC] > 1 else np.int64(0)
            shared = a
            if generic:
                if not L.SHARED_WINDOW <= a < L.SHARED_WINDOW + L.WINDOW_BYTES:
                    return _cluster_fail(m, CLERR_NOT_SHARED, rank, pc, w, lane, a)
                shared = a - L.SHARED_WINDOW
            if row[L.F_AUX] == L.MAPA_GETCTARANK:
                rank = (shared >> RANK_SHIFT) - 1 if shared >= CTA_WINDOW else np.int64(warp_rank(m, w))
                if rank >= size:
                    return _cluster_fail(m, CLERR_RANK, rank, pc, w, lane, a)
                if d >= 0:
                    m.regs[w, d, lane] = np.uint64(rank)
                continue
            if rank >= size:
                return _cluster_fail(m, CLERR_RANK, rank, pc, w, lane, a)
            out = ((rank + 1) * CTA_WINDOW) | (shared & OFFSET_MASK)
            if generic:
                out += L.SHARED_WINDOW
            value = np.uint64(out)
            if narrow:
                value &= U32_MASK
            if d >= 0:
                m.regs[w, d, lane] = value
    return STATUS_OK


@compiled_only
def _all_arrived(m, w, reg, need):
    """Whether every thread of warp ``w``'s cluster that has not exited has arrived ``need`` times."""
    launch = m.launch
    size = max(cluster_size(launch), 1)
    wpb = launch[S.L_WARPS_PER_BLOCK]
    tpb = launch[S.L_THREADS_PER_BLOCK]
    for rank in range(size):
        first = rank_slots(m, w, rank)[1]
        for k in range(wpb):
            if m.sp[first + k] < 0:
                continue
            for lane in range(min(32, tpb - k * 32)):
                if np.int64(m.regs[first + k, reg, lane]) < need:
                    return False
    return True


@compiled_only
def exec_barrier_cluster(m, row, pc, w, mask):
    """barrier.cluster.arrive / .wait for the lanes of ``mask``: STATUS_OK, or RETRY (wait not complete)."""
    reg = row[L.F_SIZE]
    req = m.mem_req
    if mask != 0:
        req[S.MR_SPACE] = L.SP_DSM         # timed: the SM-to-SM network (zero bytes: the barrier's latency)
        req[S.MR_KIND] = S.MK_ATOMIC
        req[S.MR_MASK] = mask
        req[S.MR_SIZE] = 0
        req[S.MR_VEC] = 1
        req[S.MR_BYTES] = 0
    if row[L.F_AUX] == L.CLUSTER_BAR_ARRIVE:
        for lane in range(32):
            if (mask >> lane) & 1:
                m.regs[w, reg, lane] += np.uint64(1)
        return STATUS_OK
    for lane in range(32):
        if (mask >> lane) & 1 and not _all_arrived(m, w, reg, np.int64(m.regs[w, reg, lane])):
            return RETRY
    return STATUS_OK
