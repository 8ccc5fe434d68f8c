"""Functional semantics of TMA tensor copies (``OP_BULK_TENSOR``; lowering ``gpusim.ptx.lower_tma``, timing
``gpusim.engine.sm.tma_timing``): ``cp.async.bulk.tensor`` loads and stores, ``cp.reduce.async.bulk.tensor``
and the L2 prefetch, for each lane that executes one.

The tensor map
    The operand's address is resolved as a generic address (a kernel parameter's window ``PARAM_WINDOW``, or
    global memory), 64-byte aligned; its 128 bytes must carry ``TMAP_MAGIC`` (``gpusim.arch.tensor_map_layout``,
    written by ``GPU.tensor_map``) and the instruction's dimensionality must be the map's rank, else
    ``MbarrierError`` (ERR_ASYNC) naming the rule.

The box
    Along each dim ``i`` the box holds ``ceil(box_i / elementStride_i)`` elements at global coordinates
    ``c_i + j * elementStride_i`` (coordinates are signed 32-bit). A load writes them to shared memory densely,
    dim 0 fastest (the inner box dim contiguous), elements outside ``[0, dim_i)`` filled with zeros (or the
    all-ones-but-sign NaN of the element type with ``oob_fill="nan"``); a swizzled map then moves each byte at
    shared address ``a`` to ``a ^ (((a >> 7) & mask) << 4)`` (mask 7, 3, 1 for 128B, 64B, 32B: the 16-byte chunk
    index XORed with address bits 7-9, a pattern repeating every 1024 / 512 / 256 bytes; the address is the
    absolute shared address, so a buffer not aligned to the repeat starts mid-pattern, as on the hardware).
    The mbarrier's complete-tx counts the whole box (out-of-bounds fill included), at once in the functional
    loop and when the bytes land in the timed one (``bulk_tx``, as the 1D bulk copy). A store reads the box
    from shared memory the same way and writes only the in-bounds elements; a reduce combines them with the
    global values (add/min/max/inc/dec/and/or/xor in the map's element type; floats as the PTX ``red``:
    add rounds to nearest even). The prefetch moves nothing functionally.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import layout as L
from gpusim.arch import tensor_map_layout as TM
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.cluster import OFFSET_MASK, rank_slots
from gpusim.engine.semantics.mbarrier import VALID, _address, _async_fail, book_bulk, complete_tx, multicast_targets
from gpusim.engine.semantics.memops import error_kind, resolve
from gpusim.engine.semantics.operands import read_src
from gpusim.engine.semantics.reduce_ops import reduce_element
from gpusim.engine.semantics.simt import STATUS_ERROR, STATUS_OK, fail

WORDS = 32
"""The tensor map's words are read into ``lane_addr[WORDS:WORDS + 16]`` (as int64), the box geometry into
``lane_addr[0:30]`` (``g``: 6 per dim): scratch the engine already has (no allocation in compiled code)."""


@compiled_only
def _w(m, i):
    return np.uint64(m.lane_addr[WORDS + i])


@compiled_only
def _read_map(m, row, w, lane):
    """Read the lane's tensor map into scratch (``_w``); (0, address) or (error sub-code or -kind, address)."""
    address = np.int64(read_src(m, row, 0, w, lane)) + row[L.F_TC_SRC_OFFSET]
    space, offset = resolve(m, L.SP_GENERIC, address, TM.TMAP_BYTES, 64, False)
    if space < 0:
        return -error_kind(offset), address
    if space != L.SP_PARAM and space != L.SP_GLOBAL:
        return S.ASYNC_TMAP, address
    for i in range(TM.TM_WORDS):
        word = m.param64[(offset >> 3) + i] if space == L.SP_PARAM else m.mem64[(offset >> 3) + i]
        m.lane_addr[WORDS + i] = np.int64(word)
    if (_w(m, TM.TM_HEADER) & np.uint64(0xFFFFFFFF)) != TM.TMAP_MAGIC:
        return S.ASYNC_TMAP, address
    return 0, address


@compiled_only
def _geometry(m, row, w, lane, g):
    """The box's geometry in ``g`` (6 int64 per dim: lo, hi, coordinate, element stride, byte stride;
    lo..hi-1 the in-bounds positions); returns the heap offset of element (0, ..., 0), or -1 when the tensor
    leaves the heap."""
    header = _w(m, TM.TM_HEADER)
    rank = np.int64((header >> np.uint64(TM.TMH_RANK_SHIFT)) & np.uint64(15))
    elem = np.int64((header >> np.uint64(TM.TMH_ELEM_SHIFT)) & np.uint64(15))
    base = np.int64(_w(m, TM.TM_ADDRESS)) - L.GLOBAL_BASE
    last = base + elem
    for i in range(TM.MAX_RANK):
        dim = np.int64(_w(m, TM.TM_DIM0 + i))
        stride = elem if i == 0 else np.int64(_w(m, TM.TM_STRIDE1 + i - 1))
        box = np.int64((_w(m, TM.TM_BOX) >> np.uint64(8 * i)) & np.uint64(255)) + 1
        estride = np.int64((_w(m, TM.TM_ESTRIDE) >> np.uint64(4 * i)) & np.uint64(15)) + 1
        coord = np.int64(0)
        if i < rank:
            coord = np.int64(np.int32(np.uint32(read_src(m, row, 1 + i, w, lane) & np.uint64(0xFFFFFFFF))))
        else:
            box, estride, dim = np.int64(1), np.int64(1), np.int64(1)
        n = (box + estride - 1) // estride
        lo = np.int64(0) if coord >= 0 else (-coord + estride - 1) // estride
        hi = np.int64(0) if coord > dim - 1 else min(n, (dim - 1 - coord) // estride + 1)
        g[i * 6], g[i * 6 + 1], g[i * 6 + 2] = n, lo, max(lo, hi)
        g[i * 6 + 3], g[i * 6 + 4], g[i * 6 + 5] = coord, estride, stride
        last += (dim - 1) * stride
    if base < 0 or last > m.launch[S.L_HEAP_BYTES]:
        return -1
    return base


@compiled_only
def _element_bytes(m, bslot, kind, s, goff, elem, fill, inb, red, ty):
    """Move one element between shared offset ``s`` and heap offset ``goff``."""
    if kind == L.TMA_LOAD:
        for b in range(elem):
            value = m.mem8[goff + b] if inb else (np.uint8(0xFF if b < elem - 1 else 0x7F) if fill else np.uint8(0))
            m.shared8[bslot, s + b] = value
        return
    if not inb:
        return
    if kind == L.TMA_STORE:
        for b in range(elem):
            m.mem8[goff + b] = m.shared8[bslot, s + b]
            m.valid[goff + b] = 2
        return
    reduce_element(m, bslot, goff, s, red, ty, elem)


@compiled_only
def _move_box(m, bslot, kind, sh, base, g):
    """Every element of the box between shared address ``sh`` and the tensor at heap offset ``base``."""
    header = _w(m, TM.TM_HEADER)
    elem = np.int64((header >> np.uint64(TM.TMH_ELEM_SHIFT)) & np.uint64(15))
    swz = np.int64((header >> np.uint64(TM.TMH_SWIZZLE_SHIFT)) & np.uint64(3))
    fill = ((header >> np.uint64(TM.TMH_NAN_SHIFT)) & np.uint64(1)) != 0
    ty = np.int64((header >> np.uint64(TM.TMH_TYPE_SHIFT)) & np.uint64(255))
    mask = (np.int64(1) << swz) - 1
    red = np.int64((header >> np.uint64(TM.TMH_RED_SHIFT)) & np.uint64(15))
    rows = g[6] * g[12] * g[18] * g[24]
    linear = sh
    for r in range(rows):
        rest = r
        inrow = True
        grow = base
        for i in range(1, TM.MAX_RANK):
            j = rest % g[i * 6]
            rest //= g[i * 6]
            inrow = inrow and g[i * 6 + 1] <= j < g[i * 6 + 2]
            grow += (g[i * 6 + 3] + j * g[i * 6 + 4]) * g[i * 6 + 5]
        for j in range(g[0]):
            inb = inrow and g[1] <= j < g[2]
            s = linear ^ (((linear >> 7) & mask) << 4)
            _element_bytes(m, bslot, kind, s, grow + (g[3] + j * g[4]) * elem, elem, fill, inb, red, ty)
            linear += elem
    return linear - sh


@compiled_only
def _record(m, bslot, kind, mbar, nbytes, base, g, map_address, elem):
    """The copy's row of ``bulk_tx`` for the timed loop (sm/tma_timing.py); -1 when no row is free."""
    i = book_bulk(m, bslot, mbar, nbytes, 0, kind)
    if i < 0:
        return -1
    t = m.bulk_tx[bslot, i]
    first = base + (g[3] + g[1] * g[4]) * elem
    empty = False
    for d in range(TM.MAX_RANK):
        empty = empty or g[d * 6 + 2] <= g[d * 6 + 1]
        if d > 0:
            first += (g[d * 6 + 3] + g[d * 6 + 1] * g[d * 6 + 4]) * g[d * 6 + 5]
            t[TM.TB_N1 + d - 1] = 0 if empty else g[d * 6 + 2] - g[d * 6 + 1]
            t[TM.TB_S1 + d - 1] = g[d * 6 + 4] * g[d * 6 + 5]
    t[S.BT_GADDR] = first
    t[TM.TB_ROW] = 0 if empty else ((g[2] - g[1] - 1) * g[4] + 1) * elem
    t[TM.TB_MAP] = map_address
    return 0


@compiled_only
def _multicast(m, row, pc, w, lane, g, base, nbytes, soff, mbar, rank, map_address, elem):
    """A ``.multicast::cluster`` load: the box lands at shared offset ``soff`` of every CTA of the cluster the
    lane's ctaMask names, each completing ``nbytes`` on its mbarrier at ``mbar`` (at once in the functional
    loop; when timed, one read of the box for all: sm/async_timing._multicast_timing). Adds the mask to
    ``mem_req[MR_BAR_COUNT]``'s upper half; STATUS_* code."""
    cta_mask = np.int64(read_src(m, row, 2 + rank, w, lane) & np.uint64(0xFFFF))
    if multicast_targets(m, w, pc, lane, cta_mask, mbar) != STATUS_OK:
        return STATUS_ERROR
    for r in range(16):
        if not (cta_mask >> r) & 1:
            continue
        target = rank_slots(m, w, r)[0]
        _move_box(m, target, L.TMA_LOAD, soff, base, g)
        if m.launch[S.L_TIMED] != 0:
            if _record(m, target, L.TMA_LOAD, mbar, nbytes, base, g, map_address, elem) < 0:
                return _async_fail(m, S.ASYNC_TMA_SLOTS, S.BULK_SLOTS, pc, w, lane, mbar)
        elif complete_tx(m, target, mbar, nbytes) < 0:
            return _async_fail(m, S.ASYNC_TX_RANGE, nbytes, pc, w, lane, mbar)
    m.mem_req[S.MR_BAR_COUNT] |= cta_mask << 32
    return STATUS_OK


@compiled_only
def _lane_copy(m, row, pc, w, lane, g):
    """One lane's tensor copy; STATUS_OK or STATUS_ERROR."""
    bslot = m.warp_bslot[w]
    kind = row[L.F_AUX]
    status, map_address = _read_map(m, row, w, lane)
    if status < 0:
        return fail(m, -status, pc, w, lane, map_address)
    if status > 0:
        return _async_fail(m, status, 0, pc, w, lane, map_address)
    rank = np.int64((_w(m, TM.TM_HEADER) >> np.uint64(TM.TMH_RANK_SHIFT)) & np.uint64(15))
    if rank != row[L.F_TC_COUNT]:
        return _async_fail(m, S.ASYNC_TMAP_RANK, rank, pc, w, lane, map_address)
    base = _geometry(m, row, w, lane, g)
    if base < 0:
        return fail(m, S.ERR_OUT_OF_BOUNDS, pc, w, lane, np.int64(_w(m, TM.TM_ADDRESS)))
    elem = np.int64((_w(m, TM.TM_HEADER) >> np.uint64(TM.TMH_ELEM_SHIFT)) & np.uint64(15))
    nbytes = g[0] * g[6] * g[12] * g[18] * g[24] * elem
    mbar = np.int64(-1)
    multicast = (row[L.F_TC_FLAGS] & L.TMA_MULTICAST) != 0
    if kind != L.TMA_PREFETCH:
        sh = _address(m, row, w, lane, -1, 0)
        if multicast:         # shared::cluster addresses: the same CTA-relative offset in each destination
            sh &= OFFSET_MASK
        space, soff = resolve(m, L.SP_SHARED, sh, nbytes, 1, False)
        if space < 0:
            return fail(m, error_kind(soff), pc, w, lane, sh)
        if soff % TM.SHARED_ALIGN != 0:
            return _async_fail(m, S.ASYNC_TMA_ALIGN, soff, pc, w, lane, sh)
        if kind == L.TMA_LOAD:
            mb = _address(m, row, w, lane, 1 + rank, L.F_BULK_MBAR_OFFSET)
            mspace, mbar = resolve(m, L.SP_SHARED, mb & OFFSET_MASK if multicast else mb, 8, 8, False)
            if mspace < 0:
                return fail(m, error_kind(mbar), pc, w, lane, mb)
            if multicast:
                return _multicast(m, row, pc, w, lane, g, base, nbytes, soff, mbar, rank, map_address, elem)
            if (m.shared64[bslot, mbar >> 3] & VALID) == 0:
                return _async_fail(m, S.ASYNC_UNINIT, 0, pc, w, lane, mbar)
        if kind == L.TMA_REDUCE:
            m.lane_addr[WORDS] = np.int64(_w(m, TM.TM_HEADER) | (np.uint64(row[L.F_TC_FLAGS])
                                                                  << np.uint64(TM.TMH_RED_SHIFT)))
        _move_box(m, bslot, kind, soff, base, g)
    if m.launch[S.L_TIMED] != 0:
        if _record(m, bslot, kind, mbar, nbytes, base, g, map_address, elem) < 0:
            return _async_fail(m, S.ASYNC_TMA_SLOTS, S.BULK_SLOTS, pc, w, lane, mbar)
    elif kind == L.TMA_LOAD and complete_tx(m, bslot, mbar, nbytes) < 0:
        return _async_fail(m, S.ASYNC_TX_RANGE, nbytes, pc, w, lane, mbar)
    return STATUS_OK


@compiled_only
def exec_bulk_tensor(m, row, pc, w, mask):
    """A TMA instruction for each lane of ``mask``; leaves a bulk request for the timing model."""
    g = m.lane_addr
    req = m.mem_req
    req[S.MR_BAR_COUNT] = 0       # multicast loads add their ctaMasks (upper half)
    for lane in range(32):
        if (mask >> lane) & 1 and _lane_copy(m, row, pc, w, lane, g) != STATUS_OK:
            return STATUS_ERROR
    req[S.MR_SPACE] = L.SP_SHARED
    req[S.MR_KIND] = S.MK_BULK if mask != 0 and m.launch[S.L_TIMED] != 0 else 0
    req[S.MR_MASK] = mask
    req[S.MR_BAR_ID] = m.warp_bslot[w]
    if req[S.MR_BAR_COUNT] != 0:  # as a multicast bulk copy: rank 0's block slot, the stride between ranks
        req[S.MR_BAR_ID] = rank_slots(m, w, 0)[0]
        req[S.MR_BAR_COUNT] |= rank_slots(m, w, 1)[0] - req[S.MR_BAR_ID]
    return STATUS_OK
