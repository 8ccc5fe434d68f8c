"""Device memory: one byte-addressed heap with a cudaMalloc-like allocator, and DeviceArray.

Allocations are 256-byte aligned (as cudaMalloc's are) and start at ``GLOBAL_BASE``. Between two
allocations there is always a guard region of at least ``GUARD_BYTES`` that belongs to no allocation,
so one element (up to a 32-byte ``.v4`` of 64-bit values) past the end of an array, or before its
start, is an illegal address even when another allocation follows (memcheck's rule; on CUDA such an
access lands silently in the neighbour when both share a page).

A per-byte ``valid`` map tells the engine what may be accessed: ``VALID_UNWRITTEN`` (1) a byte of a live
allocation that nothing has written yet, ``VALID_WRITTEN`` (2) one that has been written (by the host or a
kernel), 0 anything else. Without ``initcheck`` every allocated byte counts as written; with it a
kernel's read of a byte still at 1 is an ``UninitializedMemoryError``.

Every allocation keeps a record (address, size, what it is) for error messages, and freed ones are
remembered until their range is reused, so an access names the allocation it missed ("5 bytes past the
end of the 256-byte allocation at 0x...") or says it was freed. Freed ranges are reused first-fit (a stale
pointer into a range that has been reused reaches the new allocation, as on CUDA). The heap grows by
reallocation (addresses stay the same, since they are offsets from ``GLOBAL_BASE``); it is limited by
the config's ``dram_bytes``.
"""

from __future__ import annotations

import bisect
import math
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from gpusim.arch.layout import GLOBAL_BASE
from gpusim.errors import LaunchError

if TYPE_CHECKING:
    from gpusim.ptx.ast import VarDecl

ALLOCATION_ALIGN_BYTES = 256
GUARD_BYTES = 256
"""Bytes after every allocation that no allocation may use (a whole alignment unit)."""
VALID_UNWRITTEN = 1
VALID_WRITTEN = 2
_U64 = (1 << 64) - 1


def hex_address(address: int) -> str:
    """An address as CUDA prints it: unsigned 64-bit hex (a negative int64 wraps around)."""
    return f"0x{int(address) & _U64:x}"


class DeviceHeap:
    """The device's global memory and its allocator."""

    def __init__(self, capacity_limit_bytes: int, initial_bytes: int = 1 << 20, initcheck: bool = False):
        self.capacity_limit_bytes = int(capacity_limit_bytes)
        self.initcheck = bool(initcheck)
        self.data = np.zeros(initial_bytes, dtype=np.uint8)
        self.valid = np.zeros(initial_bytes, dtype=np.uint8)
        self.top = 0                       # bytes in use from the heap start (bump pointer)
        self.free_ranges: list[tuple[int, int]] = []   # (offset, size) of freed blocks, guards included
        self.sizes: dict[int, int] = {}    # offset -> reserved size (rounded, guard included)
        self.records: dict[int, tuple[int, str]] = {}   # offset -> (requested bytes, label) of live ones
        self.freed: dict[int, tuple[int, str]] = {}     # offset -> (bytes, label) of freed, not yet reused
        self.sticky_error: Exception | None = None
        """A failed device assert (CUDA's sticky error): every later use of the device raises it until reset."""

    def _grow(self, needed: int) -> None:
        size = self.data.size
        if needed <= size:
            return
        new_size = max(needed, size * 2)
        new_size = (new_size + 7) // 8 * 8
        data = np.zeros(new_size, dtype=np.uint8)
        valid = np.zeros(new_size, dtype=np.uint8)
        data[:size] = self.data
        valid[:size] = self.valid
        self.data, self.valid = data, valid

    def allocate(self, nbytes: int, align: int = ALLOCATION_ALIGN_BYTES, label: str = "") -> int:
        """Allocate ``nbytes`` (zero-filled) and return the device address."""
        nbytes = operator.index(nbytes)
        if nbytes < 0:
            raise LaunchError(f"cannot allocate a negative size ({nbytes} bytes)")
        if nbytes > self.capacity_limit_bytes:
            raise LaunchError(f"out of memory: allocating {nbytes} bytes would exceed the device's "
                              f"{self.capacity_limit_bytes} bytes")
        align = max(operator.index(align), ALLOCATION_ALIGN_BYTES)
        if align & (align - 1):
            raise LaunchError(f"alignment {align} is not a power of two")
        rounded = max(align, (nbytes + align - 1) // align * align) + GUARD_BYTES
        for i, (offset, size) in enumerate(self.free_ranges):
            if size >= rounded and offset % align == 0:
                rest = size - rounded
                self.free_ranges[i:i + 1] = [(offset + rounded, rest)] if rest else []
                return self._mark(offset, nbytes, rounded, label)
        offset = (self.top + align - 1) // align * align
        if offset + rounded > self.capacity_limit_bytes:
            raise LaunchError(f"out of memory: allocating {nbytes} bytes would exceed the device's "
                              f"{self.capacity_limit_bytes} bytes")
        self._grow(offset + rounded)
        self.top = offset + rounded
        return self._mark(offset, nbytes, rounded, label)

    def _mark(self, offset: int, nbytes: int, rounded: int, label: str) -> int:
        for old in [o for o in self.freed if offset <= o < offset + rounded]:
            del self.freed[old]
        self.data[offset:offset + rounded] = 0
        self.valid[offset:offset + rounded] = 0
        self.valid[offset:offset + nbytes] = VALID_UNWRITTEN if self.initcheck else VALID_WRITTEN
        self.sizes[offset] = rounded
        self.records[offset] = (nbytes, label)
        return GLOBAL_BASE + offset

    def mark_written(self, address: int, nbytes: int) -> None:
        """The host wrote ``nbytes`` at ``address`` (initcheck counts them as initialized)."""
        offset = address - GLOBAL_BASE
        self.valid[offset:offset + nbytes] = VALID_WRITTEN

    def free(self, address: int) -> None:
        offset = address - GLOBAL_BASE
        size = self.sizes.pop(offset, None)
        if size is None:
            raise LaunchError(f"free of {hex_address(address)}, which is not a live allocation")
        self.freed[offset] = self.records.pop(offset)
        self.valid[offset:offset + size] = 0
        self.free_ranges.append((offset, size))
        self.free_ranges.sort()

    def release_all(self, addresses: list[int], top_before: int) -> None:
        """Free ``addresses``, all made since the heap's top was ``top_before``, and give their space back
        entirely (a failed module load leaves the heap exactly as it found it)."""
        for address in addresses:
            offset = address - GLOBAL_BASE
            size = self.sizes.pop(offset)
            self.records.pop(offset)
            self.valid[offset:offset + size] = 0
            self.data[offset:offset + size] = 0
            if offset < top_before:          # it came from a freed range: give that back
                self.free_ranges.append((offset, size))
        self.top = top_before                # everything above it was this load's
        merged: list[tuple[int, int]] = []
        for offset, size in sorted(self.free_ranges):
            if merged and merged[-1][0] + merged[-1][1] == offset:
                merged[-1] = (merged[-1][0], merged[-1][1] + size)
            else:
                merged.append((offset, size))
        self.free_ranges = merged

    def view(self, address: int, nbytes: int) -> np.ndarray:
        offset = address - GLOBAL_BASE
        return self.data[offset:offset + nbytes]

    # ------------------------------------------------------------ error messages
    def allocation_of(self, address: int) -> str:
        """``byte B of the N-byte allocation (label) at 0x...`` for an address inside a live allocation, else
        ``describe``'s account of where it lies."""
        offset = (int(address) & _U64) - GLOBAL_BASE
        starts = sorted(self.records)
        i = bisect.bisect_right(starts, offset)
        if i:
            start = starts[i - 1]
            size, label = self.records[start]
            if offset < start + size:
                return (f"byte {offset - start} of the {size}-byte allocation{_named(label)} at "
                        f"{hex_address(GLOBAL_BASE + start)}")
        return self.describe(address)

    def describe(self, address: int, nbytes: int = 1) -> str:
        """Where ``address`` lies relative to the allocations, for an illegal-address message."""
        address = int(address) & _U64
        offset = address - GLOBAL_BASE
        if address < GLOBAL_BASE:
            return "below the device heap (a null or truncated pointer?)"
        for table, state in ((self.records, "live"), (self.freed, "freed")):
            for start, (size, label) in table.items():
                if start <= offset < start + max(size, 1) and state == "freed":
                    return (f"inside the {size}-byte allocation{_named(label)} at {hex_address(GLOBAL_BASE + start)}, "
                            "which has been freed (use after free)")
                if start <= offset < start + size and offset + nbytes > start + size:
                    return (f"{offset + nbytes - (start + size)} bytes past the end of the {size}-byte "
                            f"allocation{_named(label)} at {hex_address(GLOBAL_BASE + start)}")
        starts = sorted(self.records)
        i = bisect.bisect_right(starts, offset)
        below = starts[i - 1] if i else None
        above = starts[i] if i < len(starts) else None
        if below is not None:
            size, label = self.records[below]
            past = offset - (below + size)
            if past >= 0 and (above is None or past <= above - offset):
                return (f"{past + nbytes} bytes past the end of the {size}-byte allocation{_named(label)} at "
                        f"{hex_address(GLOBAL_BASE + below)}")
        if above is not None:
            size, label = self.records[above]
            return (f"{above - offset} bytes before the start of the {size}-byte allocation{_named(label)} at "
                    f"{hex_address(GLOBAL_BASE + above)}")
        return "outside every allocation"


def _named(label: str) -> str:
    return f" ({label})" if label else ""


def _shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, tuple | list):
        raise LaunchError(f"an array shape is an int or a tuple of ints, got {shape!r}")
    dims = []
    for dim in shape:
        if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or int(dim) < 0:
            raise LaunchError(f"an array shape is an int or a tuple of non-negative ints, got {shape!r}")
        dims.append(int(dim))
    return tuple(dims)


def _dtype(dtype: npt.DTypeLike) -> np.dtype:
    try:
        dtype = np.dtype(dtype)
    except (TypeError, ValueError):
        raise LaunchError(f"not a numpy dtype: {dtype!r}") from None
    if dtype.kind not in "biufc" or dtype.hasobject or dtype.itemsize == 0:
        raise LaunchError(f"device arrays hold numbers (bool, int, uint, float, complex), not {dtype}")
    return dtype


def check_usable(heap) -> None:
    """Raise the heap's sticky error (a failed device assert: CUDA's context is unusable until reset)."""
    error = getattr(heap, "sticky_error", None)
    if error is not None:
        raise type(error)(f"the GPU is unusable after a failed device assert in kernel '{error.kernel}' "
                          "(cudaErrorAssert is sticky): call gpu.reset() (which frees device memory and modules) "
                          "before using it again", kernel=error.kernel, messages=error.messages, block=error.block,
                          thread=error.thread, line=error.line)


class DeviceArray:
    """An array in device memory: ``.get()`` copies it to the host, ``.ptr`` is its device address."""

    def __init__(self, heap: DeviceHeap, shape: int | Sequence[int], dtype: npt.DTypeLike) -> None:
        self._heap = heap
        self.shape = _shape(shape)
        self.dtype = _dtype(dtype)
        size = 1
        for dim in self.shape:
            size *= dim
        self.size = size
        self.nbytes = self.size * self.dtype.itemsize
        label = f"{self.dtype}[{', '.join(map(str, self.shape))}] array"
        self.ptr = heap.allocate(self.nbytes, label=label)
        self._symbol = ""      # a module variable's name when Module.symbol made this array (not an allocation)

    def get(self) -> np.ndarray:
        """A host (numpy) copy of the array."""
        check_usable(self._heap)
        if getattr(self, "_freed", False):
            raise LaunchError(f"the device array at {hex_address(self.ptr)} has been freed")
        raw = self._heap.view(self.ptr, self.nbytes).copy()
        return raw.view(self.dtype).reshape(self.shape)

    copy_to_host = get
    to_host = get

    @property
    def address(self) -> int:
        """The device address (``ptr``), what cudaGetSymbolAddress gives for a module symbol."""
        return self.ptr

    def data_ptr(self) -> int:
        """The device address, as torch's and CuPy's arrays name it (what Triton's TensorDescriptor reads)."""
        return self.ptr

    def stride(self) -> tuple[int, ...]:
        """Strides in elements (C order), as torch's ``Tensor.stride()``: ``TensorDescriptor.from_tensor``."""
        return tuple(math.prod(self.shape[i + 1:]) for i in range(len(self.shape)))

    def set(self, host: np.ndarray) -> None:
        """Write a host array of the same shape and dtype into the device array."""
        check_usable(self._heap)
        if getattr(self, "_freed", False):
            raise LaunchError(f"the device array at {hex_address(self.ptr)} has been freed")
        if not isinstance(host, np.ndarray):
            raise LaunchError(f"set() takes a numpy array, got {type(host).__name__}")
        host = np.ascontiguousarray(host)
        if host.dtype != self.dtype or host.shape != self.shape:
            raise LaunchError(f"cannot copy a {host.dtype}{list(host.shape)} array into a device array of "
                              f"{self.dtype}{list(self.shape)}")
        self._heap.view(self.ptr, self.nbytes)[:] = host.reshape(-1).view(np.uint8)
        self._heap.mark_written(self.ptr, self.nbytes)

    def fill_zero(self) -> None:
        """Zero the array (cudaMemset 0): initcheck counts it as written."""
        check_usable(self._heap)
        self._heap.view(self.ptr, self.nbytes)[:] = 0
        self._heap.mark_written(self.ptr, self.nbytes)

    def free(self) -> None:
        """Release the memory; a second free is an error (it could release a newer allocation)."""
        if self._symbol:
            raise LaunchError(f"'{self._symbol}' is a module variable (Module.symbol): its memory belongs to the "
                              "module and cannot be freed")
        if getattr(self, "_freed", False):
            raise LaunchError(f"double free of the device array at {hex_address(self.ptr)}, which is not a "
                              "live allocation")
        self._heap.free(self.ptr)
        self._freed = True

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 1

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr={hex_address(self.ptr)})"


_SYMBOL_DTYPES = {"b8": np.uint8, "u8": np.uint8, "s8": np.int8, "b16": np.uint16, "u16": np.uint16,
                  "s16": np.int16, "f16": np.float16, "b32": np.uint32, "u32": np.uint32, "s32": np.int32,
                  "f32": np.float32, "b64": np.uint64, "u64": np.uint64, "s64": np.int64, "f64": np.float64,
                  "pred": np.uint8}


def symbol_array(heap: DeviceHeap, address: int, var: VarDecl, dtype: npt.DTypeLike | None = None) -> DeviceArray:
    """A DeviceArray over a module's ``.global``/``.const`` variable ``var`` placed at ``address`` (not a new
    allocation): its PTX type as the dtype (``.b8`` arrays, e.g. structs, as bytes), its element count as the
    shape; ``dtype`` views it as another type. ``free()`` on it is refused."""
    array = DeviceArray.__new__(DeviceArray)
    array._heap = heap
    declared = np.dtype(_SYMBOL_DTYPES.get(var.type, np.uint8))
    nbytes = max(int(var.count or 0), 1) * declared.itemsize
    array.dtype = declared if dtype is None else _dtype(dtype)
    if nbytes % array.dtype.itemsize:
        raise LaunchError(f"the variable '{var.name}' has {nbytes} bytes, not a whole number of {array.dtype} "
                          f"({array.dtype.itemsize} bytes each)")
    count = nbytes // array.dtype.itemsize
    array.shape = (count,)
    array.size = count
    array.nbytes = nbytes
    array.ptr = int(address)
    array._symbol = var.name
    return array
