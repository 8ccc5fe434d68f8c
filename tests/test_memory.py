"""Device memory: the cudaMalloc-like allocator (256-byte alignment, zero-filled, first-fit reuse after free,
the device's capacity) and DeviceArray (.get/.ptr/.nbytes/.shape/.dtype, copies in both directions)."""

import numpy as np
import pytest

import gpusim
from gpusim.errors import LaunchError
from gpusim.launch.device_memory import ALLOCATION_ALIGN_BYTES


@pytest.fixture
def gpu():
    return gpusim.GPU("teaching")


def test_allocations_are_256_byte_aligned_and_do_not_overlap(gpu):
    arrays = [gpu.empty(n, np.uint8) for n in (1, 255, 256, 257, 1000, 3)]
    spans = sorted((a.ptr, a.ptr + a.nbytes) for a in arrays)
    assert all(a.ptr % ALLOCATION_ALIGN_BYTES == 0 for a in arrays)
    assert all(end <= next_start for (_, end), (next_start, _) in zip(spans, spans[1:], strict=False))
    assert all(a.ptr != 0 for a in arrays)


def test_device_array_attributes_and_round_trip(gpu):
    host = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    array = gpu.to_device(host)
    assert array.shape == (2, 3, 4) and array.dtype == np.float64 and array.nbytes == host.nbytes
    assert len(array) == 2
    copy = array.get()
    np.testing.assert_array_equal(copy, host)
    copy[0, 0, 0] = 99.0           # .get() is a copy
    assert array.get()[0, 0, 0] == 0.0
    array.set(host * 2)
    np.testing.assert_array_equal(array.get(), host * 2)
    with pytest.raises(LaunchError, match="cannot copy"):
        array.set(np.zeros(3))


def test_zeros_and_reused_memory_are_zero_filled(gpu):
    first = gpu.to_device(np.full(1000, 0xAB, np.uint8))
    address = first.ptr
    first.free()
    again = gpu.zeros(1000, np.uint8)
    assert again.ptr == address                   # first fit reuses the freed range
    assert not again.get().any()
    with pytest.raises(LaunchError, match="not a live allocation"):
        first.free()


def test_out_of_device_memory(gpu):
    with pytest.raises(LaunchError, match="out of memory"):
        gpu.empty(gpu.config.dram_bytes + 1, np.uint8)


def test_freed_memory_faults_when_read(gpu):
    text = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<2>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p]; ld.global.u32 %r1, [%rd1];
  ret;
}
"""
    kernel = gpu.load_ptx(text)["k"]
    array = gpu.zeros(64, np.uint32)
    gpu.launch(kernel, 1, 1, [array], timing=False)
    array.free()
    with pytest.raises(gpusim.errors.IllegalAddressError):
        gpu.launch(kernel, 1, 1, [array], timing=False)
