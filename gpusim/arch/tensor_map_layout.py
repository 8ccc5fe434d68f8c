"""The TMA tensor map as the engine sees it: the 128 bytes ``GPU.tensor_map`` encodes (the CUtensorMap that
``cuTensorMapEncodeTiled`` fills; its layout is NVIDIA's secret, this one is gpusim's) and a kernel receives in
a ``.param .align 64 .b8 NAME[128]`` parameter. Sixteen little-endian uint64 words; the engine
(``gpusim.engine.semantics.tma``) reads them from the parameter buffer (or from global memory) at the address
a ``cp.async.bulk.tensor`` names, and refuses a word 0 that does not carry ``TMAP_MAGIC``.

All dims, box sizes, strides and coordinates are innermost first (numpy's shape reversed), as the driver's.
"""

from __future__ import annotations

TMAP_BYTES = 128
TMAP_MAGIC = 0x50414D54          # b"TMAP" read as a little-endian uint32: bits 0-31 of word TM_HEADER
# ---------------------------------------------------------------- words (uint64 each)
TM_HEADER = 0        # magic | rank << 32 | element bytes << 36 | swizzle code << 40 | NaN fill << 44 | type << 48
TM_ADDRESS = 1       # device address of element (0, ..., 0)
TM_DIM0 = 2          # 5 words: global dims (1 for dims past the rank)
TM_STRIDE1 = 7       # 4 words: byte strides of dims 1..4 (dim 0's stride is the element size)
TM_BOX = 11          # box dim i - 1 in bits 8i..8i+7 (box dims 1..256)
TM_ESTRIDE = 12      # element stride i - 1 in bits 4i..4i+3 (element strides 1..8)
TM_WORDS = 16
# ---------------------------------------------------------------- header fields
TMH_RANK_SHIFT = 32
TMH_ELEM_SHIFT = 36
TMH_SWIZZLE_SHIFT = 40
TMH_NAN_SHIFT = 44
TMH_TYPE_SHIFT = 48  # bits 48-55: the element type (gpusim.arch.codes T_*: a reduce's arithmetic)
TMH_RED_SHIFT = 56   # bits 56-59: the engine's scratch for a reduce's TMA_RED_* (zero in a map)
SWIZZLE_NONE, SWIZZLE_32B, SWIZZLE_64B, SWIZZLE_128B = 0, 1, 2, 3
SWIZZLE_BYTES = {SWIZZLE_NONE: 0, SWIZZLE_32B: 32, SWIZZLE_64B: 64, SWIZZLE_128B: 128}
MAX_RANK = 5
MAX_BOX = 256
MAX_ELEMENT_STRIDE = 8
GLOBAL_ALIGN = 16        # globalAddress: 16-byte aligned (32 with interleave, not modelled)
STRIDE_ALIGN = 16        # globalStrides: multiples of 16 bytes, below 2**40
MAX_STRIDE = 1 << 40
MAX_DIM = 1 << 32
SHARED_ALIGN = 128       # cp.async.bulk.tensor's shared-memory address: 128-byte aligned (PTX ISA)


def swizzle_offset(address: int, code: int) -> int:
    """The shared byte ``address`` a box byte at linear ``address`` lands at under swizzle ``code``: the
    16-byte chunk index (bits 4-6) XORed with address bits 7-9 (128B: 3 bits, 64B: 2, 32B: 1), so the
    pattern repeats every 1024 / 512 / 256 bytes."""
    mask = (1 << code) - 1
    return address ^ (((address >> 7) & mask) << 4)


# ---------------------------------------------------------------- a tensor copy's row of bulk_tx
# (gpusim.engine.semantics.state: BT_STATE..BT_GADDR first, then these; BT_GADDR holds the heap offset of the
# copy's first in-bounds element, BT_BYTES the bytes the box moves to/from shared memory)
TB_KIND = 5          # 0: a 1D bulk copy; else the TMA_* kind (gpusim.arch.layout)
TB_ROW = 6           # in-bounds bytes of one box row, first to last element
TB_N1 = 7            # 4 columns: in-bounds positions along dims 1..4 (1 past the rank)
TB_S1 = 11           # 4 columns: bytes between consecutive in-bounds positions along dims 1..4
TB_MAP = 15          # the tensor map's address (the TMA unit's descriptor cache key)
TB_WORDS = 16

# ---------------------------------------------------------------- each SM's TMA unit (timing; sm/tma_timing.py)
TMA_DESCRIPTORS = 8  # descriptor-cache entries per SM (estimate: no published figure; a kernel uses a few maps)
TMA_UNIT_WORDS = 1 + 2 * TMA_DESCRIPTORS   # next free cycle, then the cached map addresses, then LRU stamps
