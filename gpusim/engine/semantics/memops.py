"""Functional memory access for one lane: address resolution, bounds and
alignment checks, loads, stores and atomics on global, shared, local and param
memory.

Generic addresses are resolved by window (see ``gpusim.arch.layout``).
A global access must lie inside a live allocation (byte-granular ``valid``
map, and a guard region after every allocation), so reading one element past
the end of an array faults even when another allocation follows it; CUDA itself
only faults on unmapped pages, so gpusim is stricter, on purpose (as
compute-sanitizer's memcheck is). With initcheck the ``valid`` map also tells
bytes never written (1) from written ones (2): every global store marks its bytes 2, and a read of a 1 is
noted in ``init_found`` (``resolve_noting``: one row per instruction, with the first thread and address and a
count) and runs on, reading the bytes as they are, as compute-sanitizer's initcheck lets the kernel go on.
Shared memory is addressable up to the block's allocation granule (``L_SHARED_LIMIT``: what the hardware
allocates); an access past the declared size inside it runs and is
counted (``hw_notes``), or is an error under memcheck. Bounds are compared as ``offset > limit -
size`` so that no sum can overflow, whatever a register holds. Accesses must be aligned to their full size (the vector
size for ``.v2/.v4``), as PTX requires.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics.alu import alu_eval
from gpusim.engine.semantics.cluster import BAD_CLUSTER, cluster_address, dsm_resolve
from gpusim.engine.semantics.state import (
    ERR_CLUSTER,
    ERR_MEMCHECK,
    ERR_MISALIGNED,
    ERR_OUT_OF_BOUNDS,
    ERR_UNINITIALIZED,
    IF_ADDRESS,
    IF_BLOCK,
    IF_BYTES,
    IF_COUNT,
    IF_PC,
    IF_TID,
    L_HEAP_BYTES,
    L_LOCAL_BYTES,
    L_MEMCHECK,
    L_PARAM_BYTES,
    L_SHARED_BYTES,
    L_SHARED_LIMIT,
)
from gpusim.engine.semantics.synccheck import note_shared_overrun

BAD = -1


@compiled_only
def resolve(m, space, address, nbytes, align, reading):
    """(space, offset) of an access, or (BAD, error kind) — 1 out of bounds, 2 misaligned, 6 a ``reading``
    access of global memory that was never written (only possible with initcheck), 7 a shared access past the
    declared size inside the allocation granule (memcheck only; otherwise it runs and is counted)."""
    if address % align != 0:
        return BAD, 2
    launch = m.launch
    if space == L.SP_GENERIC:
        if L.SHARED_WINDOW <= address < L.SHARED_WINDOW + L.WINDOW_BYTES:
            space = L.SP_SHARED
            address -= L.SHARED_WINDOW
        elif L.LOCAL_WINDOW <= address < L.LOCAL_WINDOW + L.WINDOW_BYTES:
            space = L.SP_LOCAL
            address -= L.LOCAL_WINDOW
        elif L.PARAM_WINDOW <= address < L.PARAM_WINDOW + L.WINDOW_BYTES:
            space = L.SP_PARAM
            address -= L.PARAM_WINDOW
        else:
            space = L.SP_GLOBAL
    if space == L.SP_GLOBAL:
        offset = address - L.GLOBAL_BASE
        if offset < 0 or offset > launch[L_HEAP_BYTES] - nbytes:
            return BAD, 1
        first = m.valid[offset]
        last = m.valid[offset + nbytes - 1]
        if first == 0 or last == 0:
            return BAD, 1
        if reading and (first == 1 or last == 1):
            return BAD, 6
        return L.SP_GLOBAL, offset
    if space == L.SP_SHARED:
        if address < 0 or address > max(launch[L_SHARED_LIMIT], launch[L_SHARED_BYTES]) - nbytes:
            return BAD, 1
        if address > launch[L_SHARED_BYTES] - nbytes:
            if launch[L_MEMCHECK] != 0:
                return BAD, 7
            note_shared_overrun(m, address)
        return L.SP_SHARED, address
    if space == L.SP_LOCAL:
        if address < 0 or address > launch[L_LOCAL_BYTES] - nbytes:
            return BAD, 1
        return L.SP_LOCAL, address
    if space == L.SP_PARAM:
        if address < 0 or address > launch[L_PARAM_BYTES] - nbytes:
            return BAD, 1
        return L.SP_PARAM, address
    return BAD, 1


@compiled_only
def note_uninitialized(m, pc, w, lane, address, nbytes):
    """initcheck: lane ``lane`` of warp slot ``w`` read ``nbytes`` never-written bytes at ``address`` with the
    instruction at ``pc``: counted in that instruction's row of ``init_found`` (the first thread and address
    kept), in the last row past ``INIT_MAX - 1`` instructions."""
    found = m.init_found
    last = found.shape[0] - 1
    for i in range(last):
        if found[i, IF_COUNT] == 0:
            found[i, IF_PC] = pc
            found[i, IF_TID] = m.warp_index[w] * 32 + lane
            found[i, IF_BLOCK] = m.warp_block[w]
            found[i, IF_ADDRESS] = address
            found[i, IF_BYTES] = nbytes
            found[i, IF_COUNT] = 1
            return
        if found[i, IF_PC] == pc:
            found[i, IF_COUNT] += 1
            return
    found[last, IF_COUNT] += 1


@compiled_only
def resolve_noting(m, space, address, nbytes, align, reading, pc, w, lane):
    """``resolve``, with a read of never-written global memory (initcheck) noted and allowed, and another
    CTA's shared memory in a cluster launch (``semantics/cluster``: SP_DSM)."""
    shared = cluster_address(m.launch, space, address)
    if shared >= 0:
        return dsm_resolve(m, shared, nbytes, align, w)
    got_space, got_offset = resolve(m, space, address, nbytes, align, reading)
    if got_space == BAD and got_offset == 6:
        note_uninitialized(m, pc, w, lane, address, nbytes)
        return resolve(m, space, address, nbytes, align, False)
    return got_space, got_offset


@compiled_only
def error_kind(code):
    """The engine error (``ERR_*`` of ``state``) of a ``resolve`` failure code."""
    if code == 1:
        return ERR_OUT_OF_BOUNDS
    if code == 2:
        return ERR_MISALIGNED
    if code == 7:
        return ERR_MEMCHECK
    if code == BAD_CLUSTER:
        return ERR_CLUSTER
    return ERR_UNINITIALIZED


@compiled_only
def _read(a8, a16, a32, a64, offset, size):
    if size == 4:
        return np.uint64(a32[offset >> 2])
    if size == 8:
        return a64[offset >> 3]
    if size == 2:
        return np.uint64(a16[offset >> 1])
    return np.uint64(a8[offset])


@compiled_only
def _write(a8, a16, a32, a64, offset, size, value):
    if size == 4:
        a32[offset >> 2] = np.uint32(value & np.uint64(0xFFFFFFFF))
    elif size == 8:
        a64[offset >> 3] = value
    elif size == 2:
        a16[offset >> 1] = np.uint16(value & np.uint64(0xFFFF))
    else:
        a8[offset] = np.uint8(value & np.uint64(0xFF))


@compiled_only
def read_element(m, space, offset, size, bslot, thread_row):
    if space == L.SP_DSM:            # another CTA's shared memory (semantics/cluster)
        return _read(m.shared8[offset >> 24], m.shared16[offset >> 24], m.shared32[offset >> 24],
                     m.shared64[offset >> 24], offset & 0xFFFFFF, size)
    if space == L.SP_GLOBAL:
        return _read(m.mem8, m.mem16, m.mem32, m.mem64, offset, size)
    if space == L.SP_SHARED:
        return _read(m.shared8[bslot], m.shared16[bslot], m.shared32[bslot], m.shared64[bslot], offset, size)
    if space == L.SP_LOCAL:
        return _read(m.local8[thread_row], m.local16[thread_row], m.local32[thread_row],
                     m.local64[thread_row], offset, size)
    return _read(m.param8, m.param16, m.param32, m.param64, offset, size)


@compiled_only
def write_element(m, space, offset, size, bslot, thread_row, value):
    if space == L.SP_GLOBAL:
        _write(m.mem8, m.mem16, m.mem32, m.mem64, offset, size, value)
        if m.valid[offset] != 2 or m.valid[offset + size - 1] != 2:
            m.valid[offset:offset + size] = 2
    elif space == L.SP_SHARED:
        _write(m.shared8[bslot], m.shared16[bslot], m.shared32[bslot], m.shared64[bslot], offset, size, value)
    elif space == L.SP_DSM:
        _write(m.shared8[offset >> 24], m.shared16[offset >> 24], m.shared32[offset >> 24],
               m.shared64[offset >> 24], offset & 0xFFFFFF, size, value)
    elif space == L.SP_LOCAL:
        _write(m.local8[thread_row], m.local16[thread_row], m.local32[thread_row],
               m.local64[thread_row], offset, size, value)


@compiled_only
def extend_loaded(value, ty, size):
    """A loaded narrow value as the register receives it: sign-extended for signed types, 32 bits wide."""
    if size >= 4:
        return value
    if c.TYPE_SIGNED[ty] == 1:
        bits = size * 8
        sign = np.uint64(1) << np.uint64(bits - 1)
        if value & sign:
            value = value | (np.uint64(0xFFFFFFFF) ^ ((np.uint64(1) << np.uint64(bits)) - np.uint64(1)))
    return value & np.uint64(0xFFFFFFFF)


@compiled_only
def atomic_update(op, ty, old, b, cv):
    """The new memory value of an atomic; ``cv`` is the swap value of cas."""
    size = c.TYPE_BYTES[ty]
    mask = np.uint64(0xFFFFFFFFFFFFFFFF) if size == 8 else np.uint64(0xFFFFFFFF)
    if op == L.ATOM_ADD:
        return alu_eval(c.OP_ADD, ty, 0, c.RND_RN, old, b, np.uint64(0), np.uint64(0))
    if op == L.ATOM_MIN:
        return alu_eval(c.OP_MIN, ty, 0, 0, old, b, np.uint64(0), np.uint64(0))
    if op == L.ATOM_MAX:
        return alu_eval(c.OP_MAX, ty, 0, 0, old, b, np.uint64(0), np.uint64(0))
    if op == L.ATOM_INC:
        return np.uint64(0) if (old & mask) >= (b & mask) else ((old + np.uint64(1)) & mask)
    if op == L.ATOM_DEC:
        if (old & mask) == 0 or (old & mask) > (b & mask):
            return b & mask
        return (old - np.uint64(1)) & mask
    if op == L.ATOM_EXCH:
        return b & mask
    if op == L.ATOM_CAS:
        return (cv & mask) if (old & mask) == (b & mask) else old
    if op == L.ATOM_AND:
        return old & b & mask
    if op == L.ATOM_OR:
        return (old | b) & mask
    return (old ^ b) & mask
