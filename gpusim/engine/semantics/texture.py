"""Texture fetches: ``tex.{1d,2d,3d}.v4.{f32,s32,u32}.{f32,s32}`` and ``tld4.{r,g,b,a}.2d.v4``.

What it models (CUDA Programming Guide, appendix "Texture Fetching"; PTX ISA, "Texture Instructions"):

* each lane's handle is the device address of a descriptor (``gpusim.arch.texture_layout``);
* normalized coordinates are scaled by the texture's size; float coordinates are texel-space positions;
  integer coordinates (``tex1Dfetch``) are texel indices and are never filtered;
* point sampling reads texel ``floor(x)``; linear filtering reads the 2, 4 or 8 texels around
  ``x - 0.5`` with weights ``frac(x - 0.5)`` rounded to 9-bit fixed point with 8 fractional bits
  (a multiple of 1/256, 1.0 exactly representable), taps summed in float64 and rounded once to f32;
* the address mode is applied to every texel index of the footprint: clamp to ``[0, N-1]``, wrap
  (``i mod N``), mirror (reflection with period ``2N``), border (the border colour for a texel outside);
  for point sampling this is exactly the guide's rule on the coordinate;
* 8/16-bit integers read as normalized floats (``u/255``, ``max(s/127, -1)``, ...) when the texture says
  so; missing channels read as 0, and 1 for the fourth (w) component;
* ``tld4`` gathers one component of the 2x2 bilinear footprint in the order
  ``(i0, j1), (i1, j1), (i1, j0), (i0, j0)``.

For the timing model the distinct 32-byte sectors of every texel read are left, sorted, in
``m.lane_addr[LANE_ADDR_TEXTURE:]`` with their count in ``mem_req[MR_TEX_SECTORS]``: a texture fetch is a
global-memory read of those sectors through L1 (``gpusim.engine.sm.texture_timing``).

Simplifications: no mipmaps, layered or cube textures, no anisotropic filtering, no sRGB; the filter
arithmetic is exact apart from the 9-bit weights (hardware interpolates at lower internal precision).
"""

from __future__ import annotations

import math

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.arch import texture_layout as X
from gpusim.engine.bits import bits_from_f32, f32_from_bits, f64_from_bits
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.alu_round import format_bits_to_f64
from gpusim.engine.semantics.operands import read_src

U32_MASK = np.uint64(0xFFFFFFFF)
COORD_LIMIT = 1.0e9       # coordinates are clamped to +-this before floor (keeps indices in int64)
WEIGHT_SCALE = float(1 << X.LINEAR_WEIGHT_FRACTION_BITS)


@compiled_only
def _fail(m, sub, pc, w, lane, address):
    m.err[S.E_KIND] = S.ERR_TEXTURE
    m.err[S.E_SUB] = sub
    m.err[S.E_PC] = pc
    m.err[S.E_WARP] = w
    m.err[S.E_LANE] = lane
    m.err[S.E_ADDRESS] = address
    return -1


@compiled_only
def address_index(i, n, mode):
    """Texel index ``i`` of an axis of ``n`` texels under an address mode; -1 for the border colour."""
    if mode == X.ADDRESS_BORDER:
        return i if 0 <= i < n else -1
    if mode == X.ADDRESS_WRAP:
        return i % n
    if mode == X.ADDRESS_MIRROR:
        r = i % (2 * n)
        return r if r < n else 2 * n - 1 - r
    return min(max(i, 0), n - 1)


@compiled_only
def _coordinate(m, row, k, w, lane, is_float):
    """Coordinate ``k`` of ``lane`` as a float64 (integer coordinates exactly)."""
    raw = read_src(m, row, 1 + k, w, lane)
    if is_float:
        x = np.float64(f32_from_bits(raw))
        if x != x:
            return 0.0
        return min(max(x, -COORD_LIMIT), COORD_LIMIT)
    value = np.int64(raw & U32_MASK)
    if value >= 2 ** 31:
        value -= 2 ** 32
    return np.float64(value)


@compiled_only
def _taps(x, size, linear, normalized, is_float):
    """(first index, weight of the second texel, taps) of one axis."""
    if not is_float:
        return np.int64(x), 0.0, 1
    if normalized:
        x = x * size
    if not linear:
        return np.int64(math.floor(x)), 0.0, 1
    xb = x - 0.5
    i0 = math.floor(xb)
    alpha = math.floor((xb - i0) * WEIGHT_SCALE + 0.5) / WEIGHT_SCALE
    return np.int64(i0), alpha, 2


@compiled_only
def _channel(m, offset, ch, elem, channels, read_normalized):
    """Component ``ch`` of the texel at heap ``offset``: (float value, raw 32-bit integer)."""
    if ch >= channels:
        return (1.0, np.int64(1)) if ch == 3 else (0.0, np.int64(0))
    if elem == c.T_F32:
        bits = np.uint64(m.mem32[(offset >> 2) + ch])
        return np.float64(f32_from_bits(bits)), np.int64(bits)
    if elem == c.T_F16:
        bits = np.uint64(m.mem16[(offset >> 1) + ch])
        return format_bits_to_f64(bits, c.T_F16), np.int64(bits)
    if elem == c.T_U8 or elem == c.T_S8:
        raw = np.int64(m.mem8[offset + ch])
        if elem == c.T_S8 and raw >= 128:
            raw -= 256
        if read_normalized:
            return (max(raw / 127.0, -1.0) if elem == c.T_S8 else raw / 255.0), raw
        return np.float64(raw), raw
    if elem == c.T_U16 or elem == c.T_S16:
        raw = np.int64(m.mem16[(offset >> 1) + ch])
        if elem == c.T_S16 and raw >= 32768:
            raw -= 65536
        if read_normalized:
            return (max(raw / 32767.0, -1.0) if elem == c.T_S16 else raw / 65535.0), raw
        return np.float64(raw), raw
    raw = np.int64(m.mem32[(offset >> 2) + ch])
    if elem == c.T_S32 and raw >= 2 ** 31:
        raw -= 2 ** 32
    return np.float64(raw), raw


@compiled_only
def _record_sectors(lane_addr, count, offset, nbytes, sector):
    """Add the sectors of heap bytes [offset, offset + nbytes) to the sorted list after the lanes."""
    first = offset // sector
    last = (offset + nbytes - 1) // sector
    for s in range(first, last + 1):
        value = s * sector
        position = count
        while position > 0 and lane_addr[S.LANE_ADDR_TEXTURE + position - 1] > value:
            position -= 1
        if position > 0 and lane_addr[S.LANE_ADDR_TEXTURE + position - 1] == value:
            continue
        if count >= S.TEXTURE_MAX_SECTORS:
            continue      # cannot happen: 32 lanes x 8 texels x at most 1 new sector each
        for move in range(count, position, -1):
            lane_addr[S.LANE_ADDR_TEXTURE + move] = lane_addr[S.LANE_ADDR_TEXTURE + move - 1]
        lane_addr[S.LANE_ADDR_TEXTURE + position] = value
        count += 1
    return count


@compiled_only
def _word(m, d, k):
    """Descriptor word ``k`` (descriptor at word ``d`` of the heap) as an int64."""
    return np.int64(m.mem64[d + k])


@compiled_only
def _texel_offset(m, d, ii, jj, kk):
    base = _word(m, d, X.TD_DATA)
    return base + kk * _word(m, d, X.TD_SLICE_PITCH) + jj * _word(m, d, X.TD_ROW_PITCH) \
        + ii * _word(m, d, X.TD_TEXEL_BYTES)


@compiled_only
def _descriptor(m, handle):
    """The descriptor's first word index of ``handle``, or -1 when it is not a texture descriptor."""
    offset = np.int64(handle) - L.GLOBAL_BASE
    heap_bytes = m.launch[S.L_HEAP_BYTES]
    if offset < 0 or offset & 7 or offset + 8 * X.TD_WORDS > heap_bytes or m.valid[offset] == 0:
        return -1
    d = offset >> 3
    if np.int64(_word(m, d, X.TD_MAGIC)) != X.TEXTURE_MAGIC:
        return -1
    elem = _word(m, d, X.TD_ELEM)
    channels = _word(m, d, X.TD_CHANNELS)
    if elem < 0 or elem > c.T_F64 or not (channels == 1 or channels == 2 or channels == 4):
        return -1
    if _word(m, d, X.TD_TEXEL_BYTES) != c.TYPE_BYTES[elem] * channels or c.TYPE_BYTES[elem] == 0:
        return -1
    if _word(m, d, X.TD_WIDTH) < 1 or _word(m, d, X.TD_HEIGHT) < 1 or _word(m, d, X.TD_DEPTH) < 1:
        return -1
    return d


@compiled_only
def _write(m, w, lane, row, k, value, raw, float_result):
    dst = row[L.F_DST0 + k]
    if dst < 0:
        return
    if float_result:
        m.regs[w, dst, lane] = bits_from_f32(np.float32(value))
    else:
        m.regs[w, dst, lane] = np.uint64(raw) & U32_MASK


@compiled_only(inline="always")
def _sample_lane(m, row, pc, w, lane, d, handle, elem, channels, read_normalized, mode, texel_bytes, heap_bytes,
                 gather, component, float_result, count, nx, ny, nz, ix, ax, tx, iy, ay, ty, iz, az, tz):
    """One lane's fetch: its taps (up to 2 x 2 x 2, border colour outside) filtered, or gathered for
    tld4, written to the destination registers. Returns the sectors recorded so far, or -1 after
    recording an ERR_TEXTURE."""
    sector = 32
    acc0 = 0.0
    acc1 = 0.0
    acc2 = 0.0
    acc3 = 0.0
    raw0 = np.int64(0)
    raw1 = np.int64(0)
    raw2 = np.int64(0)
    raw3 = np.int64(0)
    for t in range(8):
        dx = t & 1
        dy = (t >> 1) & 1
        dz = t >> 2
        if dx >= tx or dy >= ty or dz >= tz:
            continue
        weight = (ax if dx else 1.0 - ax) if tx == 2 else 1.0
        if ty == 2:
            weight *= ay if dy else 1.0 - ay
        if tz == 2:
            weight *= az if dz else 1.0 - az
        ii = address_index(ix + dx, nx, mode)
        jj = address_index(iy + dy, ny, mode)
        kk = address_index(iz + dz, nz, mode)
        if ii < 0 or jj < 0 or kk < 0:
            v0 = f64_from_bits(_word(m, d, X.TD_BORDER))
            v1 = f64_from_bits(_word(m, d, X.TD_BORDER + 1))
            v2 = f64_from_bits(_word(m, d, X.TD_BORDER + 2))
            v3 = f64_from_bits(_word(m, d, X.TD_BORDER + 3))
            r0 = np.int64(v0)
            r1 = np.int64(v1)
            r2 = np.int64(v2)
            r3 = np.int64(v3)
        else:
            offset = _texel_offset(m, d, ii, jj, kk)
            if offset < 0 or offset + texel_bytes > heap_bytes:
                return _fail(m, X.TEXERR_HANDLE, pc, w, lane, np.int64(handle))
            count = _record_sectors(m.lane_addr, count, offset, texel_bytes, sector)
            v0, r0 = _channel(m, offset, 0, elem, channels, read_normalized)
            v1, r1 = _channel(m, offset, 1, elem, channels, read_normalized)
            v2, r2 = _channel(m, offset, 2, elem, channels, read_normalized)
            v3, r3 = _channel(m, offset, 3, elem, channels, read_normalized)
        if gather:
            # tld4's order: (i0, j1) (i1, j1) (i1, j0) (i0, j0)
            slot = 3 if t == 0 else (2 if t == 1 else (0 if t == 2 else 1))
            value = v0 if component == 0 else (v1 if component == 1 else (v2 if component == 2 else v3))
            raw = r0 if component == 0 else (r1 if component == 1 else (r2 if component == 2 else r3))
            _write(m, w, lane, row, slot, value, raw, float_result)
            continue
        acc0 += weight * v0
        acc1 += weight * v1
        acc2 += weight * v2
        acc3 += weight * v3
        raw0 = r0
        raw1 = r1
        raw2 = r2
        raw3 = r3
    if not gather:
        _write(m, w, lane, row, 0, acc0, raw0, float_result)
        _write(m, w, lane, row, 1, acc1, raw1, float_result)
        _write(m, w, lane, row, 2, acc2, raw2, float_result)
        _write(m, w, lane, row, 3, acc3, raw3, float_result)
    return count


@compiled_only
def exec_texture(m, row, pc, w, mask):
    """A ``tex`` or ``tld4`` on every lane of ``mask``; 0, or -1 after recording an ERR_TEXTURE."""
    aux = row[L.F_AUX]
    dims = aux & X.TEX_AUX_DIMS_MASK
    gather = (aux & X.TEX_AUX_GATHER) != 0
    component = (aux >> X.TEX_AUX_COMPONENT_SHIFT) & 3
    float_result = row[L.F_TY] == c.T_F32
    is_float = row[L.F_TY2] == c.T_F32
    heap_bytes = m.launch[S.L_HEAP_BYTES]
    count = 0
    texel_bytes = 0
    for lane in range(32):
        if not (mask >> lane) & 1:
            continue
        handle = read_src(m, row, 0, w, lane)
        d = _descriptor(m, handle)
        if d < 0:
            return _fail(m, X.TEXERR_HANDLE, pc, w, lane, np.int64(handle))
        if _word(m, d, X.TD_DIMS) != dims:
            return _fail(m, X.TEXERR_GEOMETRY, pc, w, lane, np.int64(_word(m, d, X.TD_DIMS)))
        elem = _word(m, d, X.TD_ELEM)
        read_normalized = _word(m, d, X.TD_READ_NORMALIZED) != 0
        float_texels = elem == c.T_F32 or elem == c.T_F16 or read_normalized
        if float_texels != float_result:
            return _fail(m, X.TEXERR_RETURN_TYPE, pc, w, lane, np.int64(elem))
        channels = _word(m, d, X.TD_CHANNELS)
        mode = _word(m, d, X.TD_ADDRESS)
        linear = _word(m, d, X.TD_FILTER) == X.FILTER_LINEAR and float_result
        normalized = _word(m, d, X.TD_NORMALIZED) != 0
        texel_bytes = _word(m, d, X.TD_TEXEL_BYTES)
        nx = _word(m, d, X.TD_WIDTH)
        ny = _word(m, d, X.TD_HEIGHT)
        nz = _word(m, d, X.TD_DEPTH)
        x = _coordinate(m, row, 0, w, lane, is_float)
        y = _coordinate(m, row, 1, w, lane, is_float) if dims > 1 else 0.0
        z = _coordinate(m, row, 2, w, lane, is_float) if dims > 2 else 0.0
        ix, ax, tx = _taps(x, nx, linear or gather, normalized, is_float)
        iy, ay, ty = _taps(y, ny, linear or gather, normalized, is_float) if dims > 1 else (0, 0.0, 1)
        iz, az, tz = _taps(z, nz, linear or gather, normalized, is_float) if dims > 2 else (0, 0.0, 1)
        count = _sample_lane(m, row, pc, w, lane, d, handle, elem, channels, read_normalized, mode, texel_bytes,
                             heap_bytes, gather, component, float_result, count, nx, ny, nz, ix, ax, tx, iy, ay, ty,
                             iz, az, tz)
        if count < 0:
            return count
    req = m.mem_req
    req[S.MR_SPACE] = L.SP_GLOBAL
    req[S.MR_KIND] = S.MK_TEXTURE      # timed even with no texel read (all border): the TEX stage's latency
    req[S.MR_SIZE] = texel_bytes
    req[S.MR_VEC] = 1
    req[S.MR_MASK] = mask
    req[S.MR_BYTES] = texel_bytes
    req[S.MR_TEX_SECTORS] = count
    return 0
