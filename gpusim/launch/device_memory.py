"""Device memory: one byte-addressed heap with a cudaMalloc-like allocator, and DeviceArray.

Allocations are 256-byte aligned (as cudaMalloc's are) and start at
``GLOBAL_BASE``; a per-byte ``valid`` map marks live allocations so that the
engine can report an access outside every allocation. Freed ranges are reused
first-fit. The heap grows by reallocation (addresses stay the same, since they
are offsets from ``GLOBAL_BASE``); it is limited by the config's ``dram_bytes``.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch.layout import GLOBAL_BASE
from gpusim.errors import LaunchError

ALLOCATION_ALIGN_BYTES = 256


class DeviceHeap:
    """The device's global memory and its allocator."""

    def __init__(self, capacity_limit_bytes: int, initial_bytes: int = 1 << 20):
        self.capacity_limit_bytes = int(capacity_limit_bytes)
        self.data = np.zeros(initial_bytes, dtype=np.uint8)
        self.valid = np.zeros(initial_bytes, dtype=np.uint8)
        self.top = 0                       # bytes in use from the heap start (bump pointer)
        self.free_ranges: list[tuple[int, int]] = []   # (offset, size) of freed blocks
        self.sizes: dict[int, int] = {}    # offset -> allocated size

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

    def allocate(self, nbytes: int, align: int = ALLOCATION_ALIGN_BYTES) -> int:
        """Allocate ``nbytes`` and return the device address."""
        nbytes = int(nbytes)
        if nbytes < 0:
            raise LaunchError(f"cannot allocate a negative size ({nbytes} bytes)")
        align = max(int(align), ALLOCATION_ALIGN_BYTES)
        rounded = max(align, (nbytes + align - 1) // align * align)
        for i, (offset, size) in enumerate(self.free_ranges):
            if size >= rounded and offset % align == 0:
                rest = size - rounded
                self.free_ranges[i:i + 1] = [(offset + rounded, rest)] if rest else []
                return self._mark(offset, nbytes, rounded)
        offset = (self.top + align - 1) // align * align
        if offset + rounded > self.capacity_limit_bytes:
            raise LaunchError(f"out of memory: allocating {nbytes} bytes would exceed the device's "
                              f"{self.capacity_limit_bytes} bytes")
        self._grow(offset + rounded)
        self.top = offset + rounded
        return self._mark(offset, nbytes, rounded)

    def _mark(self, offset: int, nbytes: int, rounded: int) -> int:
        self.data[offset:offset + rounded] = 0
        self.valid[offset:offset + nbytes] = 1
        self.sizes[offset] = rounded
        return GLOBAL_BASE + offset

    def free(self, address: int) -> None:
        offset = address - GLOBAL_BASE
        size = self.sizes.pop(offset, None)
        if size is None:
            raise LaunchError(f"free of 0x{address:x}, which is not a live allocation")
        self.valid[offset:offset + size] = 0
        self.free_ranges.append((offset, size))
        self.free_ranges.sort()

    def view(self, address: int, nbytes: int) -> np.ndarray:
        offset = address - GLOBAL_BASE
        return self.data[offset:offset + nbytes]


class DeviceArray:
    """An array in device memory: ``.get()`` copies it to the host, ``.ptr`` is its device address."""

    def __init__(self, heap: DeviceHeap, shape: tuple, dtype):
        self._heap = heap
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.size = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        self.nbytes = self.size * self.dtype.itemsize
        self.ptr = heap.allocate(self.nbytes)

    def get(self) -> np.ndarray:
        """A host (numpy) copy of the array."""
        raw = self._heap.view(self.ptr, self.nbytes).copy()
        return raw.view(self.dtype).reshape(self.shape)

    copy_to_host = get

    def set(self, host: np.ndarray) -> None:
        """Write a host array of the same shape and dtype into the device array."""
        host = np.ascontiguousarray(host)
        if host.dtype != self.dtype or host.shape != self.shape:
            raise LaunchError(f"cannot copy a {host.dtype}{list(host.shape)} array into a device array of "
                              f"{self.dtype}{list(self.shape)}")
        self._heap.view(self.ptr, self.nbytes)[:] = host.reshape(-1).view(np.uint8)

    def free(self) -> None:
        """Release the memory; a second free is an error (it could release a newer allocation)."""
        if getattr(self, "_freed", False):
            raise LaunchError(f"double free of the device array at 0x{self.ptr:x}, which is not a live "
                              "allocation")
        self._heap.free(self.ptr)
        self._freed = True

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 1

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr=0x{self.ptr:x})"
