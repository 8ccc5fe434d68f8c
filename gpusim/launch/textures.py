"""Texture objects: ``gpu.texture(array, ...)`` as ``cudaCreateTextureObject`` makes one.

A texture object owns a copy of the texels in device memory and a descriptor (``gpusim.arch.texture_layout``)
beside it; the object *is* its handle, an int (like ``cudaTextureObject_t``, an unsigned 64-bit integer)
passed as a ``.u64`` kernel argument. What the fetches do is ``gpusim.engine.semantics.texture``.

The rules checked here are CUDA's (Programming Guide, "Texture Memory" and "Texture Fetching"; the runtime's
cudaCreateTextureObject): wrap and mirror addressing need normalized coordinates; linear filtering needs a
float result (float or half texels, or 8/16-bit integers read as normalized floats); only 8- and 16-bit
integers can be read as normalized floats; texels have 1, 2 or 4 channels.
"""

from __future__ import annotations

import math

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import texture_layout as X
from gpusim.arch.layout import GLOBAL_BASE
from gpusim.errors import LaunchError, TextureError
from gpusim.launch.device_memory import DeviceArray, hex_address

ELEMENT_TYPES = {
    np.dtype(np.float32): c.T_F32, np.dtype(np.float16): c.T_F16, np.dtype(np.uint8): c.T_U8,
    np.dtype(np.int8): c.T_S8, np.dtype(np.uint16): c.T_U16, np.dtype(np.int16): c.T_S16,
    np.dtype(np.uint32): c.T_U32, np.dtype(np.int32): c.T_S32,
}
READ_MODES = ("element", "normalized_float")
MAX_TEXTURE_EXTENT = (131072, 65536, 16384)
"""Largest width of a 1D, height of a 2D and depth of a 3D texture per axis on cc 9.0 (CUDA Programming
Guide, "Features and Technical Specifications": 1D 131072, 2D 131072 x 65536, 3D 16384 per axis); the
check below applies the 1D width to x, the 2D height to y and the 3D limit to a 3D texture's axes."""


class TextureObject(int):
    """A texture object: the int value is the handle a kernel receives (``cudaTextureObject_t``)."""

    data: DeviceArray
    descriptor: DeviceArray
    shape: tuple
    dtype: np.dtype
    channels: int
    filter: str
    address: str
    normalized: bool
    read_mode: str
    border: tuple

    def destroy(self) -> None:
        """Release the texels and the descriptor (cudaDestroyTextureObject)."""
        self.descriptor.free()
        self.data.free()

    def __repr__(self) -> str:
        return (f"TextureObject(handle={hex_address(int(self))}, shape={self.shape}, dtype={self.dtype}, "
                f"channels={self.channels}, filter={self.filter!r}, address={self.address!r}, "
                f"normalized={self.normalized}, read_mode={self.read_mode!r})")


def _border(border) -> tuple:
    values = [border] if isinstance(border, int | float | np.integer | np.floating) else border
    try:
        values = [float(v) for v in values]
    except (TypeError, ValueError):
        raise LaunchError(f"texture border must be a number or 1 to 4 numbers, got {border!r}") from None
    if not 1 <= len(values) <= 4 or not all(math.isfinite(v) for v in values):
        raise LaunchError(f"texture border must be 1 to 4 finite numbers, got {border!r}")
    if len(values) == 1:
        return (values[0],) * 4      # one value: every component
    return tuple(values + [0.0] * (4 - len(values)))


def make_texture(heap, array, filter="point", address="clamp", normalized=False, border=0.0, *, channels=1,
                 read_mode="element") -> TextureObject:
    """Copy ``array`` to device memory and describe it as a texture (see ``GPU.texture``)."""
    if not isinstance(array, np.ndarray):
        raise LaunchError(f"gpu.texture takes a numpy array, got {type(array).__name__}")
    dtype = array.dtype
    if dtype not in ELEMENT_TYPES:
        raise LaunchError(f"texture texels must be float32, float16, uint8, int8, uint16, int16, uint32 or "
                          f"int32, got {dtype}")
    if channels not in (1, 2, 4) or isinstance(channels, bool):
        raise LaunchError(f"texture channels must be 1, 2 or 4 (CUDA has no 3-channel textures), got {channels!r}")
    shape = tuple(array.shape)
    if channels > 1:
        if not shape or shape[-1] != channels:
            raise LaunchError(f"a {channels}-channel texture needs the channels as the last axis, got shape "
                              f"{shape}")
        shape = shape[:-1]
    if not 1 <= len(shape) <= 3 or min(shape) < 1:
        raise LaunchError(f"a texture is 1D, 2D or 3D with at least one texel per axis, got shape {array.shape}"
                          f"{f' with {channels} channels' if channels > 1 else ''}")
    dims = len(shape)
    limits = {1: (MAX_TEXTURE_EXTENT[0],), 2: (MAX_TEXTURE_EXTENT[1], MAX_TEXTURE_EXTENT[0]),
              3: (MAX_TEXTURE_EXTENT[2],) * 3}[dims]
    if any(n > limit for n, limit in zip(shape, limits, strict=True)):
        raise LaunchError(f"texture shape {shape} exceeds CUDA's limits {limits} for a {dims}D texture")
    if filter not in X.FILTER_CODES:
        raise LaunchError(f"texture filter must be 'point' or 'linear', got {filter!r}")
    if address not in X.ADDRESS_CODES:
        raise LaunchError(f"texture address mode must be one of {', '.join(map(repr, X.ADDRESS_CODES))}, "
                          f"got {address!r}")
    if not isinstance(normalized, bool | np.bool_):
        raise LaunchError(f"texture normalized must be True or False, got {normalized!r}")
    if read_mode not in READ_MODES:
        raise LaunchError(f"texture read_mode must be 'element' or 'normalized_float', got {read_mode!r}")
    elem = ELEMENT_TYPES[dtype]
    if address in ("wrap", "mirror") and not normalized:
        raise LaunchError(f"texture address mode {address!r} needs normalized=True: CUDA supports wrap and "
                          "mirror addressing only with normalized coordinates")
    if read_mode == "normalized_float" and elem not in (c.T_U8, c.T_S8, c.T_U16, c.T_S16):
        raise LaunchError(f"read_mode='normalized_float' reads 8- and 16-bit integers as floats; {dtype} "
                          "texels are read as they are (read_mode='element')")
    float_texels = elem in (c.T_F32, c.T_F16) or read_mode == "normalized_float"
    if filter == "linear" and not float_texels:
        raise LaunchError(f"linear filtering needs a float result: {dtype} texels read as elements are "
                          "integers (use float texels, or read_mode='normalized_float' for 8/16-bit ones)")
    border4 = _border(border)
    texels = np.ascontiguousarray(array)
    data = DeviceArray(heap, texels.shape, dtype)
    data.set(texels)
    width = shape[-1]
    height = shape[-2] if dims > 1 else 1
    depth = shape[-3] if dims > 2 else 1
    texel_bytes = dtype.itemsize * channels
    words = np.zeros(X.TD_WORDS, dtype=np.int64)
    words[X.TD_MAGIC] = X.TEXTURE_MAGIC
    words[X.TD_DATA] = data.ptr - GLOBAL_BASE
    words[X.TD_WIDTH], words[X.TD_HEIGHT], words[X.TD_DEPTH] = width, height, depth
    words[X.TD_DIMS] = dims
    words[X.TD_ELEM] = elem
    words[X.TD_CHANNELS] = channels
    words[X.TD_FILTER] = X.FILTER_CODES[filter]
    words[X.TD_ADDRESS] = X.ADDRESS_CODES[address]
    words[X.TD_NORMALIZED] = int(bool(normalized))
    words[X.TD_READ_NORMALIZED] = int(read_mode == "normalized_float")
    words[X.TD_BORDER:X.TD_BORDER + 4] = np.array(border4, dtype=np.float64).view(np.int64)
    words[X.TD_ROW_PITCH] = width * texel_bytes
    words[X.TD_SLICE_PITCH] = width * height * texel_bytes
    words[X.TD_TEXEL_BYTES] = texel_bytes
    try:
        descriptor = DeviceArray(heap, (X.TD_WORDS,), np.int64)
    except BaseException:
        data.free()
        raise
    descriptor.set(words)
    tex = TextureObject(descriptor.ptr)
    tex.data, tex.descriptor = data, descriptor
    tex.shape, tex.dtype, tex.channels = shape, dtype, channels
    tex.filter, tex.address, tex.normalized, tex.read_mode = filter, address, bool(normalized), read_mode
    tex.border = border4
    return tex


def texture_error(program, head: str, sub: int, value: int, **where) -> TextureError:
    """The error of an engine ERR_TEXTURE (``sub``: TEXERR_*; ``value``: the handle, geometry or type)."""
    if sub == X.TEXERR_HANDLE:
        why = (f"the handle {hex_address(value)} is not a texture object made by gpu.texture (or its "
               "descriptor was overwritten or freed)")
    elif sub == X.TEXERR_GEOMETRY:
        why = f"the instruction's geometry does not match the texture, which is {value}D"
    else:
        kind = "an integer texture read as elements" if value not in (c.T_F32, c.T_F16) else "a float texture"
        why = (f"the instruction's result type does not match {kind} ({c.TYPE_NAMES.get(value, value)} texels): "
               "tex<float> needs float texels or read_mode='normalized_float', tex<int> integer texels read "
               "as elements")
    return TextureError(f"texture fetch error: {head}: {why}", address=value, **where)
