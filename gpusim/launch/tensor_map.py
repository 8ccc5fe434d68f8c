"""TMA tensor maps: ``GPU.tensor_map(array, box, ...)`` is ``cuTensorMapEncodeTiled`` (CUDA driver API,
"Tensor Map Object Management") over a device array, and its rules are the driver's:

* rank 1..5; dims, strides, box and coordinates innermost first (numpy's shape reversed);
* globalAddress 16-byte aligned; globalDim 1..2**32; globalStrides (dims 1..rank-1, bytes) multiples of 16
  and below 2**40;
* boxDim 1..256 each, boxDim[0] x element size a multiple of 16 bytes;
* elementStrides 1..8;
* with a swizzle (32, 64, 128 bytes), boxDim[0] x element size at most the swizzle span;
* oobFill "nan" (CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) only for floating-point types.

Each broken rule is a ``TensorMapError`` naming it. Interleaved layouts (``interleave`` other than "none") and
im2col maps are not modelled and are refused. The map is passed as a kernel argument to a
``.param .align 64 .b8 NAME[128]`` parameter (nvcc's ``const __grid_constant__ CUtensorMap``); its 128 bytes
are ``gpusim.arch.tensor_map_layout``'s. See docs/tensor-cores.md, "TMA".
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import tensor_map_layout as TM
from gpusim.errors import TensorMapError
from gpusim.launch.device_memory import DeviceArray, hex_address

_SWIZZLES = {0: TM.SWIZZLE_NONE, None: TM.SWIZZLE_NONE, "none": TM.SWIZZLE_NONE, 32: TM.SWIZZLE_32B,
             "32B": TM.SWIZZLE_32B, 64: TM.SWIZZLE_64B, "64B": TM.SWIZZLE_64B, 128: TM.SWIZZLE_128B,
             "128B": TM.SWIZZLE_128B}
_FLOAT_NAMES = {"bfloat16", "bf16", "tf32"}
_TYPE_CODES = {"uint8": c.T_U8, "int8": c.T_S8, "bool": c.T_U8, "uint16": c.T_U16, "int16": c.T_S16,
               "float16": c.T_F16, "bfloat16": c.T_BF16, "bf16": c.T_BF16, "uint32": c.T_U32, "int32": c.T_S32,
               "float32": c.T_F32, "tf32": c.T_F32, "uint64": c.T_U64, "int64": c.T_S64, "float64": c.T_F64}
_FLOAT_SIZES = {"bfloat16": 2, "bf16": 2, "tf32": 4}


def _ints(value: Any, what: str, rank: int) -> tuple[int, ...]:
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        value = (value,)
    if not isinstance(value, tuple | list) or any(
            not isinstance(v, int | np.integer) or isinstance(v, bool) for v in value):
        raise TensorMapError(f"{what} must be a list of {rank} ints (innermost first), got {value!r}")
    if len(value) != rank:
        raise TensorMapError(f"{what} has {len(value)} entries; the tensor's rank is {rank} (one per dimension, "
                             "innermost first: the numpy shape reversed)")
    return tuple(int(v) for v in value)


def _element(array: DeviceArray, dtype: Any) -> tuple[int, bool, str]:
    """(element bytes, is floating point, name) of the map's element type."""
    if dtype is None:
        dt = array.dtype
    elif isinstance(dtype, str) and dtype.lower() in _FLOAT_NAMES:
        return _FLOAT_SIZES[dtype.lower()], True, dtype.lower()
    else:
        try:
            dt = np.dtype(dtype)
        except TypeError:
            raise TensorMapError(f"dtype {dtype!r} is not a numpy dtype or 'bfloat16'/'tf32'") from None
    if dt.itemsize not in (1, 2, 4, 8) or dt.kind not in "uifb":
        raise TensorMapError(f"tensorDataType: {dt} is not a tensor-map element type (1, 2, 4 or 8-byte "
                             "integers or floats)")
    if dtype is not None and dt.itemsize != array.dtype.itemsize:
        raise TensorMapError(f"dtype {dt} ({dt.itemsize} bytes) does not match the array's {array.dtype} "
                             f"({array.dtype.itemsize} bytes)")
    return dt.itemsize, dt.kind == "f", str(dt)


@dataclass(frozen=True)
class TensorMap:
    """A CUtensorMap (tiled) over a device array; immutable. Pass it as a kernel argument."""

    address: int
    dims: tuple[int, ...]
    strides: tuple[int, ...]
    """Byte strides of dims 1..rank-1 (innermost first)."""
    box: tuple[int, ...]
    element_strides: tuple[int, ...]
    element_bytes: int
    dtype: str
    swizzle: int
    """Swizzle span in bytes: 0 (none), 32, 64 or 128."""
    oob_fill: str
    array: DeviceArray = field(repr=False, compare=False)

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def box_bytes(self) -> int:
        """Bytes one load writes to shared memory (the mbarrier's transaction count)."""
        count = 1
        for b, e in zip(self.box, self.element_strides, strict=True):
            count *= -(-b // e)
        return count * self.element_bytes

    def encode(self) -> bytes:
        """The map's 128 bytes (``gpusim.arch.tensor_map_layout``)."""
        code = {0: TM.SWIZZLE_NONE, 32: TM.SWIZZLE_32B, 64: TM.SWIZZLE_64B, 128: TM.SWIZZLE_128B}[self.swizzle]
        words = [0] * TM.TM_WORDS
        words[TM.TM_HEADER] = (TM.TMAP_MAGIC | self.rank << TM.TMH_RANK_SHIFT
                               | self.element_bytes << TM.TMH_ELEM_SHIFT | code << TM.TMH_SWIZZLE_SHIFT
                               | (1 if self.oob_fill == "nan" else 0) << TM.TMH_NAN_SHIFT
                               | _TYPE_CODES.get(self.dtype, c.T_B8) << TM.TMH_TYPE_SHIFT)
        words[TM.TM_ADDRESS] = self.address
        for i in range(TM.MAX_RANK):
            words[TM.TM_DIM0 + i] = self.dims[i] if i < self.rank else 1
            if 1 <= i:
                words[TM.TM_STRIDE1 + i - 1] = self.strides[i - 1] if i < self.rank else 0
        for i in range(self.rank):
            words[TM.TM_BOX] |= (self.box[i] - 1) << (8 * i)
            words[TM.TM_ESTRIDE] |= (self.element_strides[i] - 1) << (4 * i)
        return struct.pack(f"<{TM.TM_WORDS}Q", *words)

    def check_usable(self, heap: Any, where: str) -> None:
        """A LaunchError (TensorMapError) when the map's array was freed or belongs to another GPU."""
        if self.array._heap is not heap:
            raise TensorMapError(f"{where}: the tensor map was made on another GPU (or before gpu.reset()); "
                                 "make it with this GPU's tensor_map()")
        if getattr(self.array, "_freed", False):
            raise TensorMapError(f"{where}: the tensor map's array at {hex_address(self.address)} has been freed")


def _view_strides(array: DeviceArray, dims: tuple[int, ...], strides: Any, element: int) -> tuple[int, ...]:
    """Byte strides of dims 1..rank-1 (innermost first): the array's C-contiguous ones, or ``strides``
    (numpy order, elements) checked to keep the view inside the array."""
    if strides is None:
        if len(dims) != len(array.shape) or math.prod(dims) != array.size:
            raise TensorMapError(f"shape {list(reversed(dims))} is not the array's {list(array.shape)}: give "
                                 "strides= too (in elements) for a view of it")
        return tuple(element * math.prod(dims[:i]) for i in range(1, len(dims)))
    strides = list(strides) if isinstance(strides, tuple | list) else [strides]
    given = _ints(strides[::-1], "strides", len(dims))
    if given[0] != 1:
        raise TensorMapError(f"strides {list(strides)}: the innermost (last) stride must be 1 element; "
                             "tensor maps address the innermost dimension contiguously")
    if any(s < 1 for s in given):
        raise TensorMapError(f"strides {list(strides)} must be positive")
    last = element * (1 + sum((d - 1) * s for d, s in zip(dims, given, strict=True)))
    if last > array.nbytes:
        raise TensorMapError(f"the view shape {list(reversed(dims))} x strides {list(strides)} reaches byte "
                             f"{last} of an array of {array.nbytes} bytes")
    return tuple(element * s for s in given[1:])


def make_tensor_map(array: Any, box: Any, swizzle: Any = 0, element_strides: Any = None, oob_fill: str = "zero",
                    dtype: Any = None, interleave: str = "none", shape: Any = None, strides: Any = None) -> TensorMap:
    """``GPU.tensor_map``: a TensorMap over ``array`` (a C-contiguous DeviceArray) checked as
    cuTensorMapEncodeTiled checks its arguments (module docstring). ``shape`` and ``strides`` (numpy order,
    strides in elements, the last 1) map a strided view that starts at the array's first element, as the
    driver's globalDim/globalStrides do; the view must lie inside the array."""
    if not isinstance(array, DeviceArray):
        raise TensorMapError(f"tensor_map needs a DeviceArray (gpu.to_device / gpu.empty), got "
                             f"{type(array).__name__}")
    if getattr(array, "_freed", False):
        raise TensorMapError(f"tensor_map: the array at {hex_address(array.ptr)} has been freed")
    if interleave != "none":
        raise TensorMapError(f"interleave={interleave!r}: interleaved tensor maps are not modelled by gpusim "
                             "(only CU_TENSOR_MAP_INTERLEAVE_NONE, interleave='none')")
    rank = len(array.shape)
    if not 1 <= rank <= TM.MAX_RANK:
        raise TensorMapError(f"tensorRank must be 1..{TM.MAX_RANK}; the array has {rank} dimensions")
    element, is_float, name = _element(array, dtype)
    if shape is not None:
        shape = list(shape) if isinstance(shape, tuple | list) else [shape]
        rank = len(shape)
        if not 1 <= rank <= TM.MAX_RANK:
            raise TensorMapError(f"tensorRank must be 1..{TM.MAX_RANK}; the shape has {rank} dimensions")
    dims = _ints(shape[::-1], "shape", rank) if shape is not None else tuple(int(d) for d in reversed(array.shape))
    for i, d in enumerate(dims):
        if not 1 <= d <= TM.MAX_DIM:
            raise TensorMapError(f"globalDim[{i}] = {d}: each global dimension must be non-zero and at most 2^32")
    if array.ptr % TM.GLOBAL_ALIGN:
        raise TensorMapError(f"globalAddress {hex_address(array.ptr)} must be {TM.GLOBAL_ALIGN}-byte aligned")
    steps = _view_strides(array, dims, strides, element)
    for i, step in enumerate(steps):
        if step % TM.STRIDE_ALIGN or step >= TM.MAX_STRIDE:
            raise TensorMapError(f"globalStrides[{i}] = {step} bytes (dim {i + 1}): each stride must be a multiple "
                                 f"of {TM.STRIDE_ALIGN} bytes and less than 2^40")
    box = _ints(box, "box", rank)
    for i, b in enumerate(box):
        if not 1 <= b <= TM.MAX_BOX:
            raise TensorMapError(f"boxDim[{i}] = {b}: each box dimension must be non-zero and at most {TM.MAX_BOX}")
    if box[0] * element % 16:
        raise TensorMapError(f"boxDim[0] x element size = {box[0]} x {element} = {box[0] * element} bytes must be a "
                             "multiple of 16 bytes (interleave none)")
    estrides = (1,) * rank if element_strides is None else _ints(element_strides, "element_strides", rank)
    for i, e in enumerate(estrides):
        if not 1 <= e <= TM.MAX_ELEMENT_STRIDE:
            raise TensorMapError(f"elementStrides[{i}] = {e}: each element stride must be 1..{TM.MAX_ELEMENT_STRIDE}")
    key = swizzle.upper() if isinstance(swizzle, str) and swizzle.lower() != "none" else swizzle
    if isinstance(key, str) and key.lower() == "none":
        key = "none"
    if key not in _SWIZZLES or isinstance(swizzle, bool):
        raise TensorMapError(f"swizzle must be 0/'none', 32/'32B', 64/'64B' or 128/'128B', got {swizzle!r}")
    span = TM.SWIZZLE_BYTES[_SWIZZLES[key]]
    if span and box[0] * element > span:
        raise TensorMapError(f"boxDim[0] x element size = {box[0] * element} bytes exceeds the {span}-byte swizzle "
                             f"span: with swizzle {span}B the inner box dimension must be at most {span} bytes")
    if oob_fill not in ("zero", "nan"):
        raise TensorMapError(f"oob_fill must be 'zero' or 'nan', got {oob_fill!r}")
    if oob_fill == "nan" and not is_float:
        raise TensorMapError(f"oob_fill='nan' (CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) needs a "
                             f"floating-point tensorDataType, not {name}")
    return TensorMap(address=int(array.ptr), dims=dims, strides=steps, box=box,
                     element_strides=estrides, element_bytes=element, dtype=name, swizzle=span,
                     oob_fill=oob_fill, array=array)
