"""numba-cuda's kernel launch ABI on gpusim: arguments flattened into ``.param`` values, arrays placed.

What it models (numba-cuda's ``_Kernel._prepare_args``): an array of ``ndim`` dimensions is
``5 + 2*ndim`` parameters (meminfo, parent, nitems, itemsize, data pointer, shape[ndim],
strides[ndim], strides in bytes); a scalar is one parameter of its numba type; a complex number is
two (real, imaginary); a tuple is its items in order. Host (numpy) arrays are copied to the device
before the launch and back after it, as numba.cuda does with host arrays; a gpusim ``DeviceArray`` is
passed in place (C order). A strided host view (a slice with steps, a transpose, negative strides)
keeps its strides: the bytes it spans are placed on the device and the kernel indexes them through
the strides numba passes.

Simplified: meminfo and parent are 0 (no reference counting on the device, as in numba-cuda); record
(structured dtype) arguments, datetime arguments and numba's own device arrays are not accepted.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from gpusim.errors import LaunchError
from gpusim.launch.device_memory import DeviceArray


@dataclass
class Placed:
    """A host array placed on the device: where its span lies and how to copy it back."""

    host: np.ndarray
    address: int         # device address of the span's first byte
    span_bytes: int
    first_offset: int    # byte offset of element 0 within the span
    copy_back: bool


def numba_type_of(value, types, typeof):
    """The numba type numba.cuda would give a kernel argument (a DeviceArray is a C-order array)."""
    if isinstance(value, DeviceArray):
        return types.Array(typeof(np.empty(0, value.dtype)).dtype, len(value.shape), "C")
    if isinstance(value, list | dict | set | str | bytes):
        raise LaunchError(f"gpusim.jit cannot pass a {type(value).__name__} to a kernel: pass a numpy array "
                          "(np.asarray(...)) or a gpusim DeviceArray")
    if isinstance(value, np.ndarray):
        if value.dtype.fields is not None:
            raise LaunchError("gpusim.jit does not accept arrays of records (structured dtypes)")
        if value.ndim == 0:
            raise LaunchError("gpusim.jit: pass a 0-d array as a scalar (array.item()) or as a 1-element array")
    return typeof(value)


def span_of(array: np.ndarray) -> tuple[int, int]:
    """(lowest byte offset, bytes spanned) of a strided array relative to its element 0."""
    if array.size == 0:
        return 0, array.itemsize
    low = sum(min(0, (n - 1) * s) for n, s in zip(array.shape, array.strides, strict=True))
    high = sum(max(0, (n - 1) * s) for n, s in zip(array.shape, array.strides, strict=True))
    return low, high - low + array.itemsize


def device_view(gpu, placed: Placed) -> np.ndarray:
    """A numpy view of the device bytes of ``placed`` with the host array's shape and strides."""
    raw = gpu.heap.view(placed.address, placed.span_bytes)
    return np.ndarray(placed.host.shape, placed.host.dtype, buffer=raw, offset=placed.first_offset,
                      strides=placed.host.strides)


def place_host_array(gpu, host: np.ndarray) -> Placed:
    """Allocate the span of ``host`` on the device (alignment of its dtype kept) and copy it in."""
    low, span = span_of(host)
    address = gpu.heap.allocate(max(span, 1))
    placed = Placed(host, address, span, -low, copy_back=host.flags.writeable)
    if host.size:
        device_view(gpu, placed)[...] = host
    return placed


def copy_back(gpu, placed: list[Placed]) -> None:
    """Host arrays get the device's values back (numba.cuda's write-back after a launch); spans freed."""
    for item in placed:
        if item.copy_back and item.host.size:
            item.host[...] = device_view(gpu, item)
        gpu.heap.free(item.address)


def flatten(ty, value, types, gpu, placed: list[Placed], where: str) -> list:
    """``value`` of numba type ``ty`` as numba's flattened kernel parameters: [(kind, value), ...]."""
    if isinstance(ty, types.Array):
        if isinstance(value, DeviceArray):
            address, shape, itemsize = value.ptr, value.shape, value.dtype.itemsize
            strides, count = _c_strides(shape, itemsize), value.size
        else:
            item = place_host_array(gpu, value)
            placed.append(item)
            address, shape, itemsize = item.address + item.first_offset, value.shape, value.itemsize
            strides, count = value.strides, value.size
        return ([("int", 0), ("int", 0), ("int", count), ("int", itemsize), ("int", address)]
                + [("int", int(n)) for n in shape] + [("int", int(s)) for s in strides])
    if isinstance(ty, types.BaseTuple):
        return [p for t, v in zip(ty, value, strict=True) for p in flatten(t, v, types, gpu, placed, where)]
    if isinstance(ty, types.EnumMember):
        return flatten(ty.dtype, value.value, types, gpu, placed, where)
    if isinstance(ty, types.Boolean):
        return [("int", int(bool(value)))]
    if isinstance(ty, types.Integer):
        return [("int", int(value))]
    if ty == types.float16:
        return [("float16", float(value))]
    if ty in (types.float32, types.float64):
        return [(str(ty), float(value))]
    if ty in (types.complex64, types.complex128):
        kind = "float32" if ty == types.complex64 else "float64"
        return [(kind, float(complex(value).real)), (kind, float(complex(value).imag))]
    raise LaunchError(f"{where}: gpusim.jit cannot pass a value of numba type {ty} "
                      f"({type(value).__name__}); pass numpy arrays, gpusim DeviceArrays, numbers or tuples")


def _c_strides(shape: tuple, itemsize: int) -> list[int]:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(int(n), 1)
    return strides[::-1]


def param_values(program, flat: list) -> list:
    """The flattened values as what ``pack_args`` takes for each ``.param`` slot's PTX type."""
    if len(flat) != len(program.params):
        raise LaunchError(f"kernel '{program.name}': numba's ABI gave {len(flat)} parameter values but the "
                          f"PTX declares {len(program.params)}")
    out = []
    for slot, (kind, value) in zip(program.params, flat, strict=True):
        is_float_slot = slot.type.startswith("f")
        if kind == "int" and is_float_slot:
            out.append(float(value))
        elif kind == "int":
            bits = 8 * slot.size
            value &= (1 << bits) - 1
            if slot.type.startswith("s") and value >> (bits - 1):
                value -= 1 << bits
            out.append(value)
        elif is_float_slot:
            out.append(value)
        else:   # a float passed in a .b16/.b32/.b64 slot: its bit pattern
            fmt = {2: "<e", 4: "<f", 8: "<d"}[slot.size]
            out.append(int.from_bytes(struct.pack(fmt, value), "little"))
    return out
