"""racecheck: shared-memory hazards between threads, as compute-sanitizer's racecheck finds them.

What it models. Every byte of a block's shared memory has a shadow of three records: its last write and
up to two reads since (from two different warps), each packed in one int64 as the thread (its index in the
block), the pc and the *barrier epoch* of the access. A warp's epoch counts the block-wide barriers it has
arrived at (``bar.sync``/``barrier.sync``/``bar.red``, not ``bar.arrive``): a warp that arrived at barrier
``e`` waits until every warp of the block has, so an access at epoch ``e`` by one warp and at epoch ``e``
by another have no barrier between them, and records of an older epoch are ordered before everything that
follows. Accesses of the same warp are ordered (its lanes run in lock step, program order: warp-synchronous
code and ``__syncwarp`` need nothing more). So, at an access by warp X at epoch e of a byte:

* a read with the last write at epoch e by another warp: read-after-write (RAW);
* a write with the last write at epoch e by another warp: write-after-write (WAW); a warning, not an error,
  when the write stores the value the byte already holds (compute-sanitizer's benign hazard: two threads
  writing the same halo cell);
* a write with a read at epoch e by another warp: write-after-read (WAR).

A hazard is kept once per (kind, earlier pc, later pc) with the first pair of threads and the address and a
count of the accesses that found it (``race_found``, ``RF_*`` of ``state``). The shadow of a block slot is
cleared when a new block uses it (``race_bstamp``), a warp slot's epoch when a new warp does (``race_warp``).

Every instruction that touches shared memory is tracked: ``ld``/``st`` (each lane's bytes), ``atom``/``red``
on shared memory, ``ldmatrix``/``stmatrix`` (the 16-byte rows a read reads, each 2-byte element a write
writes, by the lane that gives the row address or holds the register), ``cp.async`` (its destination
bytes, written when the copy is issued: a read of them by another warp before a barrier is a race whatever
``cp.async.wait_group`` the copying warp does) and wmma fragment loads and stores (each element, by the lane
whose fragment holds it). An atomic is recorded as a write marked atomic (``_ATOMIC`` in the thread field):
two atomics never race with each other, while an atomic and a plain access of the same byte by another warp
with no barrier between do (the PTX memory model's data race: an atomic after a plain write or a plain write
after an atomic is a WAW, an atomic after a read a WAR, a read after an atomic a RAW).

Simplifications: named barriers with a thread count advance the epoch of the warps that take part only, as
if they were block-wide: in a kernel whose warps pass different numbers of such barriers (producer/consumer
warp groups), a hazard can be missed or an ordered pair reported; intra-warp hazards (two lanes of one
instruction) are not reported.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.operands import read_src

U64_ZERO = np.uint64(0)

ACCESS_READ = 0
ACCESS_WRITE = 1
ACCESS_ATOMIC = 2

_TID_MASK = 0x7FF                    # thread index + 1 (<= 1024)
_ATOMIC = 0x800                      # in the thread field: the access was an atomic
_PC_SHIFT = 12
_PC_MASK = 0xFFFFFFFF
_EPOCH_SHIFT = 44
_EPOCH_MASK = (1 << 19) - 1


@compiled_only
def _pack(tid, pc, epoch):
    return ((epoch & _EPOCH_MASK) << _EPOCH_SHIFT) | ((pc & _PC_MASK) << _PC_SHIFT) | (tid + 1)


@compiled_only
def _epoch_of(record):
    return (record >> _EPOCH_SHIFT) & _EPOCH_MASK


@compiled_only
def _tid_of(record):
    return (record & _TID_MASK) - 1


@compiled_only
def _pc_of(record):
    return (record >> _PC_SHIFT) & _PC_MASK


@compiled_only
def warp_epoch(m, w):
    """The barrier epoch of warp slot ``w`` (0 for a warp new in the slot)."""
    stamp = m.warp_block[w] + 1
    if m.race_warp[w, 0] != stamp:
        m.race_warp[w, 0] = stamp
        m.race_warp[w, 1] = 0
    return m.race_warp[w, 1]


@compiled_only
def race_barrier(m, w):
    """Warp slot ``w`` arrives at a barrier: its later accesses are ordered after everything before it."""
    m.race_warp[w, 1] = warp_epoch(m, w) + 1


@compiled_only
def _record(m, kind, earlier, pc, tid, block, address):
    found = m.race_found
    pc0 = _pc_of(earlier)
    last = found.shape[0] - 1
    for i in range(last):
        if found[i, S.RF_COUNT] == 0:
            found[i, S.RF_KIND] = kind
            found[i, S.RF_PC0] = pc0
            found[i, S.RF_PC1] = pc
            found[i, S.RF_TID0] = _tid_of(earlier)
            found[i, S.RF_TID1] = tid
            found[i, S.RF_BLOCK] = block
            found[i, S.RF_ADDRESS] = address
            found[i, S.RF_COUNT] = 1
            return
        if found[i, S.RF_KIND] == kind and found[i, S.RF_PC0] == pc0 and found[i, S.RF_PC1] == pc:
            found[i, S.RF_COUNT] += 1
            return
    found[last, S.RF_COUNT] += 1       # more distinct hazards than rows: counted only


@compiled_only
def _other(record, epoch, warp):
    """Whether ``record`` is an access at ``epoch`` by a warp other than ``warp``."""
    return record != 0 and _epoch_of(record) == epoch and _tid_of(record) // 32 != warp


@compiled_only
def _racing_write(record, epoch, warp, atomic):
    """Whether the write ``record`` races with an access at ``epoch`` by ``warp`` (``atomic``: that access
    is an atomic, and two atomics do not race)."""
    return _other(record, epoch, warp) and not (atomic and (record & _ATOMIC) != 0)


@compiled_only
def _same_value(m, bslot, offset, nbytes, value):
    """Whether storing ``value`` (``nbytes`` little-endian bytes) at ``offset`` leaves the bytes as they are."""
    for i in range(nbytes):
        if m.shared8[bslot, offset + i] != np.uint8((value >> np.uint64(8 * i)) & np.uint64(0xFF)):
            return False
    return True


@compiled_only
def race_access(m, w, lane, pc, bslot, offset, nbytes, access, value):
    """Check and record an access (``ACCESS_*``) of ``nbytes`` shared bytes at ``offset`` by lane ``lane`` of
    warp slot ``w`` (see the module docstring); ``value`` is what a write stores (before it is stored)."""
    block = m.warp_block[w]
    shadow = m.race_shadow
    if m.race_bstamp[bslot] != block + 1:
        shadow[bslot, :, :] = 0
        m.race_bstamp[bslot] = block + 1
    epoch = warp_epoch(m, w)
    atomic = access == ACCESS_ATOMIC
    writing = access != ACCESS_READ
    same = access == ACCESS_WRITE and _same_value(m, bslot, offset, min(nbytes, 8), value)
    warp = m.warp_index[w]
    tid = warp * 32 + lane
    me = _pack(tid, pc, epoch) | (_ATOMIC if atomic else 0)
    raw = war = waw = False
    for b in range(offset, min(offset + nbytes, shadow.shape[1])):
        write = shadow[bslot, b, 0]
        r0 = shadow[bslot, b, 1]
        r1 = shadow[bslot, b, 2]
        if writing:
            if not waw and _racing_write(write, epoch, warp, atomic):
                waw = True
                _record(m, S.RACE_WAW_SAME if same else S.RACE_WAW, write, pc, tid, block, b)
            if not war and (_other(r0, epoch, warp) or _other(r1, epoch, warp)):
                war = True
                _record(m, S.RACE_WAR, r0 if _other(r0, epoch, warp) else r1, pc, tid, block, b)
            shadow[bslot, b, 0] = me
            shadow[bslot, b, 1] = 0
            shadow[bslot, b, 2] = 0
            continue
        if not raw and _other(write, epoch, warp):
            raw = True
            _record(m, S.RACE_RAW, write, pc, tid, block, b)
        if r0 == 0 or _epoch_of(r0) != epoch or _tid_of(r0) // 32 == warp:
            shadow[bslot, b, 1] = me
        else:
            shadow[bslot, b, 2] = me     # r0 is another warp's read: keep it, this one (or the newest) beside it


@compiled_only
def race_instruction(m, row, w, pc, bslot, mask, size, vec, writing):
    """``race_access`` for each lane of ``mask`` whose resolved space (``m.snap``, from ``exec_memory``'s
    first pass) is shared memory, at its address in ``m.lane_addr``: a load as one access, a store element
    by element (with the value it stores)."""
    for lane in range(32):
        if (mask >> lane) & 1 and np.int64(m.snap[lane]) == L.SP_SHARED:
            if not writing:
                race_access(m, w, lane, pc, bslot, m.lane_addr[lane], size * vec, ACCESS_READ, U64_ZERO)
                continue
            for k in range(vec):
                race_access(m, w, lane, pc, bslot, m.lane_addr[lane] + k * size, size, ACCESS_WRITE,
                            read_src(m, row, k, w, lane))


def race_findings(m) -> list[dict]:
    """The hazards of a finished launch (host side): one dict per distinct hazard, and the uncounted rest."""
    rows = []
    found = np.asarray(m.race_found)
    for i in range(found.shape[0] - 1):
        if found[i, S.RF_COUNT] == 0:
            break
        rows.append({"kind": int(found[i, S.RF_KIND]), "pc0": int(found[i, S.RF_PC0]),
                     "pc1": int(found[i, S.RF_PC1]), "tid0": int(found[i, S.RF_TID0]),
                     "tid1": int(found[i, S.RF_TID1]), "block": int(found[i, S.RF_BLOCK]),
                     "address": int(found[i, S.RF_ADDRESS]), "count": int(found[i, S.RF_COUNT])})
    return rows


def race_overflow(m) -> int:
    """Hazards found past the ``RF_MAX - 1`` distinct ones kept."""
    return int(m.race_found[-1, S.RF_COUNT])
