"""Functional semantics of the first Hopper instructions (issue 25): ``mbarrier.*``, ``cp.async.bulk`` (1D) and
``elect.sync``. Called from ``step_warp``; lowering in ``gpusim.ptx.lower_hopper``.

The mbarrier object
    The PTX ISA makes the 8-byte, 8-aligned shared-memory object opaque and describes its state: the current
    phase, the pending arrival count, the expected arrival count and the tx-count. gpusim keeps exactly that
    state in the object's 64 bits, so a kernel reading the word sees consistent bytes (layout: bits 0-19
    pending arrivals, 20-39 expected arrivals, 40-60 tx-count as a 21-bit two's complement, 62 initialised,
    63 the current phase's parity). A word whose bit 62 is clear is not an mbarrier: any operation on it
    but ``init`` is the ISA's undefined behaviour and ends the launch with ``MbarrierError``.

    The phase completes when the pending count and the tx-count are both zero after an arrive-on, an
    expect-tx or a complete-tx operation: the phase bit flips, the pending count is reloaded from the
    expected count and the tx-count is zero. ``arrive_drop`` lowers the expected count first. The state
    ``arrive`` returns is the word after its arrival with the phase bit of the phase it arrived on, so
    ``test_wait``/``try_wait`` complete once the phase bit differs, and ``pending_count`` reads bits 0-19.
    ``try_wait`` returns at once, like ``test_wait`` (a thread spinning on it issues as a loop does; the
    hardware's bounded suspension is not modelled). Lanes act one after another in lane order.

cp.async.mbarrier.arrive
    An arrive-on once the thread's earlier ``cp.async`` copies are complete; without ``.noinc`` the pending
    count is raised by one at issue. The functional loop's copies have landed at issue, so the arrival is made
    at once; the timed loop books a ``bulk_tx`` row of kind ``BULK_CP_ARRIVE`` (its arrivals in BT_BYTES, one
    row per instruction and word) that ``sm/async_timing.py`` gives the cycle the warp's last copy lands, and
    ``apply_landed`` makes the arrivals then.

Bulk copies
    The bytes move at issue (as ``cp.async``'s do). In the functional loop a global->shared copy's
    complete-tx is applied at once; in the timed loop (``launch[L_TIMED]``) the copy is recorded in
    ``bulk_tx`` and ``sm/async_timing.py`` gives it the cycle its bytes land, and the complete-tx is applied
    by the first mbarrier operation of the block at or after that cycle (a plain load of the mbarrier word in
    between sees its state before the landing).
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import layout as L
from gpusim.arch.tensor_map_layout import TB_KIND
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.cluster import (
    CLERR_EXITED,
    CLERR_RANK,
    cluster_address,
    cluster_size,
    dsm_resolve,
    rank_alive,
    rank_slots,
)
from gpusim.engine.semantics.memops import error_kind, resolve, resolve_noting
from gpusim.engine.semantics.operands import read_src
from gpusim.engine.semantics.reduce_ops import reduce_into_heap
from gpusim.engine.semantics.simt import STATUS_ERROR, STATUS_OK, fail
from gpusim.engine.semantics.warpops import _members

COUNT_MASK = (1 << 20) - 1        # pending and expected counts, and |tx-count|, stay below 2**20
EXPECTED_SHIFT = 20
TX_SHIFT = 40
TX_BITS = 21
VALID = np.uint64(1) << np.uint64(62)
PHASE = np.uint64(1) << np.uint64(63)
BULK_ALIGN = 16


@compiled_only
def unpack(word):
    """(phase, pending, expected, tx) of an mbarrier word."""
    pending = np.int64(word & np.uint64(COUNT_MASK))
    expected = np.int64((word >> np.uint64(EXPECTED_SHIFT)) & np.uint64(COUNT_MASK))
    tx = np.int64((word >> np.uint64(TX_SHIFT)) & np.uint64((1 << TX_BITS) - 1))
    if tx >= 1 << (TX_BITS - 1):
        tx -= 1 << TX_BITS
    return np.int64(word >> np.uint64(63)), pending, expected, tx


@compiled_only
def pack(phase, pending, expected, tx):
    word = VALID | (np.uint64(phase & 1) << np.uint64(63))
    word |= np.uint64(pending & COUNT_MASK) | (np.uint64(expected & COUNT_MASK) << np.uint64(EXPECTED_SHIFT))
    return word | (np.uint64(tx & ((1 << TX_BITS) - 1)) << np.uint64(TX_SHIFT))


@compiled_only
def _async_fail(m, sub, extra, pc, w, lane, address):
    m.err[S.E_SUB] = sub
    m.err[S.E_EXTRA] = extra
    return fail(m, S.ERR_ASYNC, pc, w, lane, address)


@compiled_only
def settle(phase, pending, expected, tx):
    """The state after an operation: the phase completes when no arrival and no byte is pending."""
    if pending == 0 and tx == 0:
        return phase ^ 1, expected, expected, np.int64(0)
    return phase, pending, expected, tx


@compiled_only
def complete_tx(m, bslot, offset, nbytes):
    """complete-tx of ``nbytes`` on the mbarrier at shared ``offset`` (a landed bulk copy); returns -1 when the
    word is not an mbarrier or the tx-count leaves its range, else 0."""
    word = m.shared64[bslot, offset >> 3]
    if (word & VALID) == 0:
        return -1
    phase, pending, expected, tx = unpack(word)
    tx -= nbytes
    if tx < -COUNT_MASK:
        return -1
    phase, pending, expected, tx = settle(phase, pending, expected, tx)
    m.shared64[bslot, offset >> 3] = pack(phase, pending, expected, tx)
    return 0


@compiled_only
def async_arrive(m, bslot, offset, count):
    """``count`` arrive-on operations, one after another, on the mbarrier at shared ``offset`` (cp.async.mbarrier
    .arrive's, once the copies have landed); returns -1 when the word is not an mbarrier, -2 when an arrival
    finds no pending count left, else 0."""
    for _ in range(count):
        word = m.shared64[bslot, offset >> 3]
        if (word & VALID) == 0:
            return -1
        phase, pending, expected, tx = unpack(word)
        if pending < 1:
            return -2
        phase, pending, expected, tx = settle(phase, pending - 1, expected, tx)
        m.shared64[bslot, offset >> 3] = pack(phase, pending, expected, tx)
    return 0


@compiled_only
def _book_arrival(m, bslot, offset):
    """Timed loop: one more arrival for the warp's instruction on the mbarrier at ``offset``: a row of
    ``bulk_tx`` (kind BULK_CP_ARRIVE, BT_BYTES its arrivals) that the timing model gives the cycle the warp's
    cp.async copies land; the lanes of one instruction naming one word share a row. 0, or -1 when no row frees."""
    table = m.bulk_tx[bslot]
    for i in range(table.shape[0]):
        if table[i, S.BT_STATE] == S.BTS_UNTIMED and table[i, TB_KIND] == L.BULK_CP_ARRIVE and \
                table[i, S.BT_MBAR] == offset:
            table[i, S.BT_BYTES] += 1
            return 0
    return 0 if book_bulk(m, bslot, offset, 1, 0, L.BULK_CP_ARRIVE) >= 0 else -1


@compiled_only
def apply_landed(m, bslot, now):
    """Timed loop: apply, in the order they land, the complete-tx of every bulk copy of block slot ``bslot``
    that has landed by cycle ``now`` (and the arrivals of cp.async.mbarrier.arrive); returns 0, or, when one
    fails, ``-(4 * (offset + 1) + code)``: code 1 when the word at shared ``offset`` is no longer an mbarrier,
    2 when an arrival finds no pending count left (``landed_failure`` decodes it)."""
    table = m.bulk_tx[bslot]
    while True:
        best = -1
        for i in range(table.shape[0]):
            if table[i, S.BT_STATE] == S.BTS_TIMED and table[i, S.BT_READY] <= now and (
                    best < 0 or table[i, S.BT_READY] < table[best, S.BT_READY]):
                best = i
        if best < 0:
            return 0
        table[best, S.BT_STATE] = S.BTS_FREE
        offset = table[best, S.BT_MBAR]
        if table[best, TB_KIND] == L.BULK_CP_ARRIVE:
            status = async_arrive(m, bslot, offset, table[best, S.BT_BYTES])
            if status < 0:
                return -(4 * (offset + 1) - status)
        elif offset >= 0 and complete_tx(m, bslot, offset, table[best, S.BT_BYTES]) < 0:
            return -(4 * (offset + 1) + 1)


@compiled_only
def landed_failure(m, status, pc, w):
    """The error of a failed ``apply_landed`` (its ``status`` < 0), reported at the instruction that applied it."""
    code = (-status) % 4
    offset = (-status) // 4 - 1
    return _async_fail(m, S.ASYNC_LATE_ARRIVAL if code == 2 else S.ASYNC_UNINIT, 1, pc, w, 0, offset)


@compiled_only
def _address(m, row, w, lane, src, offset_field):
    """Shared offset of source ``src`` + ``row[offset_field]`` (or of the row's address when ``src`` < 0)."""
    if src < 0:
        address = row[L.F_AOFF]
        if row[L.F_ABASE] >= 0:
            address += np.int64(m.regs[w, row[L.F_ABASE], lane])
            if row[L.F_MODS] & L.MEM_ADDR32:
                address &= 0xFFFFFFFF
        return address
    return np.int64(read_src(m, row, src, w, lane)) + row[offset_field]


@compiled_only
def _arrive(m, row, word, lane, w):
    """An arrive-on (arrive / arrive_drop, with expect-tx first): (new word, state token, error sub-code)."""
    flags = row[L.F_TC_FLAGS]
    phase, pending, expected, tx = unpack(word)
    src = 0
    if flags & L.MBF_EXPECT_TX:
        tx += np.int64(read_src(m, row, 0, w, lane) & np.uint64(0xFFFFFFFF))
        src = 1
    count = np.int64(1)
    if flags & L.MBF_COUNT:
        count = np.int64(read_src(m, row, src, w, lane) & np.uint64(0xFFFFFFFF))
    if row[L.F_AUX] == L.MB_ARRIVE_DROP:
        expected -= count
    pending -= count
    if pending < 0 or expected < 0 or count < 1 or count > COUNT_MASK:
        return word, np.uint64(count), S.ASYNC_UNDERFLOW        # the error's value: the arrival count
    if tx > COUNT_MASK:
        return word, np.uint64(tx), S.ASYNC_TX_RANGE
    token = pack(phase, pending, expected, tx)
    new = settle(phase, pending, expected, tx)
    if new[0] != phase and flags & L.MBF_NO_COMPLETE:
        return word, np.uint64(count), S.ASYNC_NO_COMPLETE
    return pack(new[0], new[1], new[2], new[3]), token, 0


@compiled_only
def _mbarrier_lane(m, row, pc, w, lane, bslot, offset):
    """One lane's mbarrier operation on the word at shared ``offset``; STATUS_OK or STATUS_ERROR."""
    op = row[L.F_AUX]
    word = m.shared64[bslot, offset >> 3]
    d0 = row[L.F_DST0]
    if op == L.MB_INIT:
        count = np.int64(read_src(m, row, 0, w, lane) & np.uint64(0xFFFFFFFF))
        if count < 1 or count > COUNT_MASK:
            return _async_fail(m, S.ASYNC_INIT_COUNT, count, pc, w, lane, offset)
        m.shared64[bslot, offset >> 3] = pack(0, count, count, 0)
        return STATUS_OK
    if (word & VALID) == 0:
        return _async_fail(m, S.ASYNC_UNINIT, np.int64(word), pc, w, lane, offset)
    if op == L.MB_INVAL:
        m.shared64[bslot, offset >> 3] = np.uint64(0)
        return STATUS_OK
    if op == L.MB_TEST_WAIT or op == L.MB_TRY_WAIT:
        waited = read_src(m, row, 0, w, lane)
        parity = waited & np.uint64(1) if row[L.F_TC_FLAGS] & L.MBF_PARITY else waited >> np.uint64(63)
        if d0 >= 0:
            m.regs[w, d0, lane] = np.uint64(1) if parity != (word >> np.uint64(63)) else np.uint64(0)
        return STATUS_OK
    if op == L.MB_CP_ARRIVE:
        phase, pending, expected, tx = unpack(word)
        if not row[L.F_TC_FLAGS] & L.MBF_NOINC:       # raised now, lowered by the arrival: a net zero
            if pending + 1 > COUNT_MASK:
                return _async_fail(m, S.ASYNC_TX_RANGE, pending + 1, pc, w, lane, offset)
            m.shared64[bslot, offset >> 3] = pack(phase, pending + 1, expected, tx)
        if m.launch[S.L_TIMED] != 0:                  # the copies land later: the timing model says when
            if _book_arrival(m, bslot, offset) < 0:
                return _async_fail(m, S.ASYNC_UNINIT, 0, pc, w, lane, offset)
        elif async_arrive(m, bslot, offset, 1) < 0:   # the functional loop's copies have landed at issue
            return _async_fail(m, S.ASYNC_UNDERFLOW, 1, pc, w, lane, offset)
        return STATUS_OK
    if op == L.MB_ARRIVE or op == L.MB_ARRIVE_DROP:
        new, token, sub = _arrive(m, row, word, lane, w)
        if sub != 0:
            return _async_fail(m, sub, np.int64(token), pc, w, lane, offset)
        m.shared64[bslot, offset >> 3] = new
        if d0 >= 0:
            m.regs[w, d0, lane] = token
        return STATUS_OK
    phase, pending, expected, tx = unpack(word)
    amount = np.int64(read_src(m, row, 0, w, lane) & np.uint64(0xFFFFFFFF))
    tx = tx + amount if op == L.MB_EXPECT_TX else tx - amount
    if tx > COUNT_MASK or tx < -COUNT_MASK:
        return _async_fail(m, S.ASYNC_TX_RANGE, tx, pc, w, lane, offset)
    phase, pending, expected, tx = settle(phase, pending, expected, tx)
    m.shared64[bslot, offset >> 3] = pack(phase, pending, expected, tx)
    return STATUS_OK


@compiled_only
def _distinct_words(lane_addr, mask):
    """The first lane of ``mask`` naming each distinct mbarrier: the lanes of a warp that name one object are
    one operation for the timing model (its shared-atomic request), as a warp-wide arrive is one."""
    out = 0
    for lane in range(32):
        if (mask >> lane) & 1:
            seen = False
            for other in range(lane):
                if (out >> other) & 1 and lane_addr[other] == lane_addr[lane]:
                    seen = True
                    break
            if not seen:
                out |= 1 << lane
    return out


@compiled_only
def exec_mbarrier(m, row, pc, w, mask):
    """An mbarrier instruction for the lanes of ``mask``, in lane order. Leaves a shared-memory atomic request
    on the words for the timing model (an mbarrier operation is timed as one, one lane per distinct word)."""
    op = row[L.F_AUX]
    if op == L.MB_PENDING_COUNT:
        d0 = row[L.F_DST0]
        for lane in range(32):
            if (mask >> lane) & 1 and d0 >= 0:
                m.regs[w, d0, lane] = read_src(m, row, 0, w, lane) & np.uint64(COUNT_MASK)
        return STATUS_OK
    bslot = m.warp_bslot[w]
    landed = apply_landed(m, bslot, m.clock[0]) if m.launch[S.L_TIMED] != 0 else 0
    if landed < 0:
        return landed_failure(m, landed, pc, w)
    space = row[L.F_SPACE]
    for lane in range(32):
        if (mask >> lane) & 1:
            address = _address(m, row, w, lane, -1, 0)
            target = bslot
            shared = cluster_address(m.launch, space, address)
            if shared >= 0:          # another CTA's mbarrier (shared::cluster: a remote arrive)
                rspace, offset = dsm_resolve(m, shared, 8, 8, w)
                if rspace == L.SP_DSM:
                    target = offset >> 24
                    offset &= 0xFFFFFF
                    rspace = L.SP_SHARED
            else:
                rspace, offset = resolve(m, space, address, 8, 8, False)
            if rspace < 0:
                return fail(m, error_kind(offset), pc, w, lane, address)
            if rspace != L.SP_SHARED or (op == L.MB_CP_ARRIVE and target != bslot):   # cp.async's: its own CTA's
                return _async_fail(m, S.ASYNC_BULK_SPACE, address, pc, w, lane, address)
            m.lane_addr[lane] = offset
            if _mbarrier_lane(m, row, pc, w, lane, target, offset) != STATUS_OK:
                return STATUS_ERROR
    req = m.mem_req
    if op == L.MB_CP_ARRIVE:          # its arrivals are timed with the warp's cp.async copies (async_timing)
        _bulk_request(m, mask, bslot)
        return STATUS_OK
    req[S.MR_SPACE] = L.SP_SHARED
    req[S.MR_SIZE] = 8
    req[S.MR_VEC] = 1
    req[S.MR_KIND] = S.MK_ATOMIC if mask != 0 else 0
    req[S.MR_MASK] = _distinct_words(m.lane_addr, mask)
    req[S.MR_BYTES] = 8
    return STATUS_OK


@compiled_only
def _bulk_slot(m, bslot, now):
    """A free row of ``bulk_tx[bslot]``; when all are in flight, the earliest-landing one is applied now."""
    table = m.bulk_tx[bslot]
    while True:
        best = -1
        for i in range(table.shape[0]):
            if table[i, S.BT_STATE] == S.BTS_FREE:
                return i
            if table[i, S.BT_STATE] == S.BTS_TIMED and (best < 0 or table[i, S.BT_READY] < table[best, S.BT_READY]):
                best = i
        if best < 0:
            return -1
        if apply_landed(m, bslot, table[best, S.BT_READY]) < 0:
            return -1


@compiled_only
def book_bulk(m, bslot, mbar, nbytes, gaddr, kind):
    """A bulk copy in flight to CTA ``bslot`` for the timed loop: a ``bulk_tx`` row completing ``nbytes`` on
    the mbarrier at offset ``mbar``, timed from global address ``gaddr`` (-1: over the SM-to-SM network),
    ``kind`` 0 or a TMA tensor copy's (sm/tma_timing.py fills its further columns). The row, or -1 when
    none can be freed."""
    i = _bulk_slot(m, bslot, m.clock[0])
    if i >= 0:
        t = m.bulk_tx[bslot, i]
        t[S.BT_STATE] = S.BTS_UNTIMED
        t[S.BT_MBAR] = mbar
        t[S.BT_BYTES] = nbytes
        t[S.BT_READY] = 0
        t[S.BT_GADDR] = gaddr
        t[TB_KIND] = kind
    return i


@compiled_only
def _bulk_check(m, row, pc, w, lane, dst, src, size):
    """The ISA's rules for one lane's copy: 16-byte aligned addresses, a positive multiple of 16 bytes."""
    if size <= 0 or size % BULK_ALIGN != 0:
        return _async_fail(m, S.ASYNC_BULK_SIZE, size, pc, w, lane, dst)
    if dst % BULK_ALIGN != 0:
        return _async_fail(m, S.ASYNC_BULK_ALIGN, dst, pc, w, lane, dst)
    if src % BULK_ALIGN != 0:
        return _async_fail(m, S.ASYNC_BULK_ALIGN, src, pc, w, lane, src)
    return STATUS_OK


@compiled_only
def exec_bulk_copy(m, row, pc, w, mask):
    """cp.async.bulk for each lane of ``mask``: copy now; global->shared completes its bytes on the mbarrier
    (at once, or when the timed loop says: ``bulk_tx``)."""
    bslot = m.warp_bslot[w]
    g2s = row[L.F_AUX] == L.BULK_G2S
    timed = m.launch[S.L_TIMED] != 0
    for lane in range(32):
        if not (mask >> lane) & 1:
            continue
        dst = _address(m, row, w, lane, -1, 0)
        src = _address(m, row, w, lane, 0, L.F_TC_SRC_OFFSET)
        size = np.int64(read_src(m, row, 1, w, lane) & np.uint64(0xFFFFFFFF))
        if _bulk_check(m, row, pc, w, lane, dst, src, size) != STATUS_OK:
            return STATUS_ERROR
        dspace, doff = resolve(m, L.SP_SHARED if g2s else L.SP_GLOBAL, dst, size, 1, False)
        if dspace < 0:
            return fail(m, error_kind(doff), pc, w, lane, dst)
        sspace, soff = resolve_noting(m, L.SP_GLOBAL if g2s else L.SP_SHARED, src, size, 1, g2s, pc, w, lane)
        if sspace < 0:
            return fail(m, error_kind(soff), pc, w, lane, src)
        mbar = np.int64(-1)
        if g2s:
            mbar = _address(m, row, w, lane, 2, L.F_BULK_MBAR_OFFSET)
            mspace, mbar = resolve(m, L.SP_SHARED, mbar, 8, 8, False)
            if mspace < 0:
                return fail(m, error_kind(mbar), pc, w, lane, _address(m, row, w, lane, 2, L.F_BULK_MBAR_OFFSET))
            if (m.shared64[bslot, mbar >> 3] & VALID) == 0:
                return _async_fail(m, S.ASYNC_UNINIT, 0, pc, w, lane, mbar)
            for i in range(size):
                m.shared8[bslot, doff + i] = m.mem8[soff + i]
        elif row[L.F_TC_FLAGS] != 0:       # cp.reduce.async.bulk: TMA_RED_* of F_TY elements
            reduce_into_heap(m, bslot, doff, soff, size, row[L.F_TC_FLAGS], row[L.F_TY])
        else:
            for i in range(size):
                m.mem8[doff + i] = m.shared8[bslot, soff + i]
                m.valid[doff + i] = 2
        if g2s and not timed:
            if complete_tx(m, bslot, mbar, size) < 0:
                return _async_fail(m, S.ASYNC_TX_RANGE, size, pc, w, lane, mbar)
            continue
        if timed and book_bulk(m, bslot, mbar, size, soff if g2s else doff, 0) < 0:
            return _async_fail(m, S.ASYNC_UNINIT, 0, pc, w, lane, mbar)
    _bulk_request(m, mask, bslot)
    return STATUS_OK


@compiled_only
def _bulk_request(m, mask, bslot):
    """The request of an instruction whose ``bulk_tx`` rows of block slot ``bslot`` the timed loop times next
    (a bulk copy's, cp.async.mbarrier.arrive's): MK_BULK for the timing model when timed, a shared-memory
    access for the functional loop's turns either way."""
    req = m.mem_req
    req[S.MR_SPACE] = L.SP_SHARED
    req[S.MR_KIND] = S.MK_BULK if mask != 0 and m.launch[S.L_TIMED] != 0 else 0
    req[S.MR_MASK] = mask
    req[S.MR_BAR_ID] = bslot
    req[S.MR_BAR_COUNT] = 0           # not a multicast (semantics/hopper.py)


@compiled_only
def exec_elect(m, row, pc, w, mask):
    """elect.sync d|p, membermask: every executing lane of a group gets the group's lowest lane in ``d`` and
    ``p`` true in that lane only (the ISA: a deterministic leader; gpusim's is the lowest lane)."""
    if mask == 0:
        return STATUS_OK
    bad = _members(m, row, w, mask, 0)
    if bad >= 0:
        return fail(m, S.ERR_SYNC, pc, w, bad, m.err[S.E_ADDRESS])
    d0 = row[L.F_DST0]
    d1 = row[L.F_DST0 + 1]
    for lane in range(32):
        if (mask >> lane) & 1:
            group = m.members[lane]
            leader = 0
            while not (group >> leader) & 1:
                leader += 1
            if d0 >= 0:
                m.regs[w, d0, lane] = np.uint64(leader)
            if d1 >= 0:
                m.regs[w, d1, lane] = np.uint64(1) if leader == lane else np.uint64(0)
    return STATUS_OK


@compiled_only
def multicast_targets(m, w, pc, lane, cta_mask, moff):
    """Check every CTA ``cta_mask`` names (in the cluster, alive, an mbarrier at ``moff``); STATUS_* code."""
    size = max(cluster_size(m.launch), 1)
    for rank in range(16):
        if (cta_mask >> rank) & 1:
            if rank >= size or not rank_alive(m, w, rank):
                m.err[S.E_SUB] = CLERR_RANK if rank >= size else CLERR_EXITED
                m.err[S.E_EXTRA] = rank
                return fail(m, S.ERR_CLUSTER, pc, w, lane, moff)
            if (m.shared64[rank_slots(m, w, rank)[0], moff >> 3] & VALID) == 0:
                return _async_fail(m, S.ASYNC_UNINIT, 0, pc, w, lane, moff)
    return STATUS_OK
