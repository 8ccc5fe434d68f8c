"""GPU.launch(cache_control=...) and GPU.flush_caches(): ncu's --cache-control, expected bytes from array sizes."""

import numpy as np
import pytest

import gpusim
from gpusim.errors import LaunchError

N = 8192  # three float32 arrays of 32 KiB: together far below the teaching config's 256 KiB L2


@pytest.fixture()
def vecadd():
    gpu = gpusim.GPU("teaching")
    kernel = gpu.load("programs/vecadd.ptx")["vecadd"]
    a = gpu.to_device(np.ones(N, np.float32))
    b = gpu.to_device(np.ones(N, np.float32))
    c = gpu.empty(N, np.float32)

    def launch(cache_control):
        return gpu.launch(kernel, grid=N // 256, block=256, args=[a, b, c, np.int32(N)],
                          cache_control=cache_control)

    return gpu, launch


def test_second_launch_hits_l2_without_a_flush_and_reads_dram_with_one(vecadd):
    gpu, launch = vecadd
    input_bytes = 2 * N * 4
    first = launch("none")
    assert first.metrics["dram__bytes_read.sum"] == input_bytes
    warm = launch("none")
    assert warm.metrics["dram__bytes_read.sum"] == 0
    assert warm.metrics["lts__t_sector_hit_rate.pct"] == 100.0
    cold = launch("all")
    assert cold.metrics["dram__bytes_read.sum"] == input_bytes
    assert cold.metrics["dram__bytes_write.sum"] == 0   # the flush's write-backs are not the kernel's
    assert cold.cycles == first.cycles                  # a flushed GPU is exactly a fresh one
    assert warm.cycles < cold.cycles


def test_flush_writes_back_the_dirty_output_once(vecadd):
    gpu, launch = vecadd
    launch("none")
    assert gpu.flush_caches() == N * 4   # c was written into L2 (write-back): its bytes go to DRAM
    assert gpu.flush_caches() == 0       # nothing left dirty, nothing cached
    launch("all")                        # flushes before the launch (nothing dirty), the kernel writes c
    assert gpu.flushed_bytes == N * 4
    gpu.flush_caches()
    assert gpu.flushed_bytes == 2 * N * 4


def test_default_is_none_and_bad_values_are_launch_errors():
    gpu = gpusim.GPU("teaching")
    kernel = gpu.load("programs/vecadd.ptx")["vecadd"]
    args = [gpu.to_device(np.ones(N, np.float32)), gpu.to_device(np.ones(N, np.float32)), gpu.empty(N), np.int32(N)]
    gpu.launch(kernel, grid=N // 256, block=256, args=args)
    again = gpu.launch(kernel, grid=N // 256, block=256, args=args)   # no keyword: L2 kept
    assert again.metrics["dram__bytes_read.sum"] == 0
    with pytest.raises(LaunchError, match="cache_control"):
        gpu.launch(kernel, grid=N // 256, block=256, args=args, cache_control="some")
