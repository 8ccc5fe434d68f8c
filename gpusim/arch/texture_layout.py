"""The texture object as the engine sees it: the descriptor ``gpu.texture`` writes into device memory and
the integer codes of a lowered ``tex`` / ``tld4`` row.

A texture handle (``cudaTextureObject_t``, a ``.u64`` kernel parameter) is the device address of a
descriptor of ``TD_WORDS`` int64 words (layout below) that ``gpusim.launch.textures`` allocates next to a
copy of the texels. The engine (``gpusim.engine.semantics.texture``) reads the descriptor of each lane's
handle, so a handle is data like any other value: it can be passed, stored and selected per thread.
"""

from __future__ import annotations

# ---------------------------------------------------------------- descriptor words (int64 each)
TD_MAGIC = 0             # TEXTURE_MAGIC: the handle names a descriptor written by gpu.texture
TD_DATA = 1              # heap offset of texel (0, 0, 0)
TD_WIDTH, TD_HEIGHT, TD_DEPTH = 2, 3, 4      # texels per axis (1 for unused axes)
TD_DIMS = 5              # 1, 2 or 3
TD_ELEM = 6              # element type code (gpusim.arch.codes T_F32, T_F16, T_U8, T_S8, ...)
TD_CHANNELS = 7          # 1, 2 or 4 components per texel
TD_FILTER = 8            # FILTER_*
TD_ADDRESS = 9           # ADDRESS_*
TD_NORMALIZED = 10       # 1: coordinates in [0, 1) are scaled by the size (normalizedCoords)
TD_READ_NORMALIZED = 11  # 1: 8/16-bit integers read as floats in [0, 1] / [-1, 1] (cudaReadModeNormalizedFloat)
TD_BORDER = 12           # 4 words: the border colour's components as float64 bits
TD_ROW_PITCH = 16        # bytes from row y to row y + 1
TD_SLICE_PITCH = 17      # bytes from slice z to slice z + 1
TD_TEXEL_BYTES = 18      # bytes of one texel (element bytes x channels)
TD_WORDS = 19
TEXTURE_MAGIC = 0x3165727574786574   # b"texture1" read as a little-endian int64

FILTER_POINT, FILTER_LINEAR = 0, 1
FILTER_CODES = {"point": FILTER_POINT, "linear": FILTER_LINEAR}
ADDRESS_CLAMP, ADDRESS_WRAP, ADDRESS_BORDER, ADDRESS_MIRROR = 0, 1, 2, 3
ADDRESS_CODES = {"clamp": ADDRESS_CLAMP, "wrap": ADDRESS_WRAP, "border": ADDRESS_BORDER,
                 "mirror": ADDRESS_MIRROR}

# ---------------------------------------------------------------- F_AUX of a tex / tld4 row
TEX_AUX_DIMS_MASK = 0xF          # geometry: 1d, 2d, 3d
TEX_AUX_COMPONENT_SHIFT = 4      # tld4: the component gathered (r g b a = 0 1 2 3)
TEX_AUX_GATHER = 1 << 8          # tld4 (else tex)

LINEAR_WEIGHT_FRACTION_BITS = 8
"""Linear-filter weights are 9-bit fixed point with 8 fractional bits (CUDA Programming Guide, appendix
"Texture Fetching"): 1.0 is exactly representable, a weight is a multiple of 1/256."""

# ---------------------------------------------------------------- E_SUB of the engine's ERR_TEXTURE
TEXERR_HANDLE = 1        # the handle is not the address of a texture descriptor (or it was overwritten)
TEXERR_RETURN_TYPE = 2   # .f32 result from an integer texture read as elements, or .s32/.u32 from a float one
TEXERR_GEOMETRY = 3      # tex.2d on a 1D texture, ...
