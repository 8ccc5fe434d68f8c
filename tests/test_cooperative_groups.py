"""Cooperative groups as nvcc compiles them (tests/ptx/cg/cg.cu, PTX committed): thread-block tiles of 1 to
32 threads (reduce, shfl, sync), tiles of 64 and 128 threads (their barrier lives in reserved shared memory,
%reserved_smem_offset_1), this_thread_block().sync(), coalesced_threads(), labeled_partition, and
this_grid().sync() in a cooperative launch (the grid barrier %envreg1/%envreg2). Every expected value is
computed with numpy from what the C++ code says; each kernel runs functional and timed where the
functional path can run it (a grid-wide sync needs every block at once: timed only, refused clearly
otherwise)."""

from pathlib import Path

import numpy as np
import pytest

import gpusim

PTX = Path(__file__).parent / "ptx" / "cg" / "cg.ptx"
TIMING = pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
RNG = np.random.default_rng(8)


@pytest.fixture(scope="module")
def gpu():
    return gpusim.GPU("teaching")


@pytest.fixture(scope="module")
def module(gpu):
    return gpu.load(PTX)


def _launch(gpu, kernel, grid, block, host_inputs, outputs, timing, **kw):
    args = [gpu.to_device(a) for a in host_inputs] + [gpu.zeros(n, np.int32) for n in outputs]
    run = gpu.launch(kernel, grid, block, args + list(kw.pop("scalars", [])), timing=timing, **kw)
    return run, [a.get() for a in args[len(host_inputs):]]


@TIMING
@pytest.mark.parametrize("size", [1, 2, 4, 8, 16, 32])
def test_tiled_partition_reduce_shfl_sync(gpu, module, size, timing):
    n = 128
    values = RNG.integers(-50, 50, n).astype(np.int32)
    _, (out, rank) = _launch(gpu, module[f"tile{size}"], 2, 64, [values], [n, n], timing)
    tiles = values.reshape(-1, size)
    expected = np.repeat(tiles.sum(axis=1) * 1000 + tiles[:, 0], size)
    tid = np.arange(n) % 64
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(rank, tid % size + 100 * (tid // size))


@TIMING
@pytest.mark.parametrize("size", [64, 128])
def test_tiles_larger_than_a_warp_sync_through_reserved_shared_memory(gpu, module, size, timing):
    block = 256
    n = 2 * block
    values = RNG.integers(0, 1 << 20, n).astype(np.int32)
    _, (out, rank) = _launch(gpu, module[f"tile{size}"], 2, block, [values], [n, n], timing)
    tid = np.arange(n) % block
    base = np.arange(n) - tid % size
    np.testing.assert_array_equal(out, values[base + (tid % size + 1) % size])
    np.testing.assert_array_equal(rank, tid % size + 1000 * (tid // size) + 100000 * (block // size))


def test_reserved_shared_memory_is_not_counted_twice_by_the_occupancy(gpu, module):
    program = module["tile64"].program
    assert program.reserved_shared_bytes > 0
    run = gpu.launch(module["tile64"], 1, 64, [gpu.zeros(64, np.int32)] * 3, timing=False)
    regs, _ = module["tile64"].registers_per_thread()
    expected = gpusim.occupancy(gpu.config, threads_per_block=64, regs_per_thread=regs,
                                shared_bytes=program.shared_static_bytes - program.reserved_shared_bytes)
    assert run.occupancy.blocks_per_sm == expected.blocks_per_sm


@TIMING
def test_this_thread_block_sync(gpu, module, timing):
    values = RNG.integers(0, 1000, 384).astype(np.int32)
    _, (out,) = _launch(gpu, module["block_reverse"], 3, 128, [values], [384], timing)
    np.testing.assert_array_equal(out, values.reshape(3, 128)[:, ::-1].reshape(-1))


@TIMING
def test_coalesced_threads(gpu, module, timing):
    values = RNG.integers(0, 100, 64).astype(np.int32)
    _, (out, rank) = _launch(gpu, module["coalesced"], 1, 64, [values], [64, 64], timing)
    for warp in range(2):
        v = values[warp * 32:(warp + 1) * 32]
        lanes = np.flatnonzero(v % 3 == 0)
        want_out = np.zeros(32, np.int32)
        want_rank = np.zeros(32, np.int32)
        want_out[lanes] = v[lanes].sum() * 1000 + (v[lanes[0]] if lanes.size else 0)
        want_rank[lanes] = np.arange(lanes.size) + 100 * lanes.size
        np.testing.assert_array_equal(out[warp * 32:(warp + 1) * 32], want_out)
        np.testing.assert_array_equal(rank[warp * 32:(warp + 1) * 32], want_rank)


@TIMING
def test_labeled_partition_reduces_each_label_separately(gpu, module, timing):
    values = RNG.integers(0, 1000, 64).astype(np.int32)
    _, (out,) = _launch(gpu, module["labeled"], 1, 64, [values], [64], timing)
    expected = np.zeros(64, np.int32)
    for warp in range(2):
        v = values[warp * 32:(warp + 1) * 32]
        for label in range(4):
            members = np.flatnonzero(v % 4 == label) + warp * 32
            expected[members] = values[members].sum() * 100 + members.size
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("timing", [True, False])
def test_grid_sync_in_a_cooperative_launch(gpu, module, timing):
    """Both paths: the functional one keeps every block of the cooperative grid resident as coroutines."""
    blocks, threads = 8, 64          # teaching: 2 SMs x 8 blocks can be resident
    n = blocks * threads
    data = RNG.integers(0, 1000, n).astype(np.int32)
    d_data, d_out = gpu.to_device(data), gpu.zeros(n, np.int32)
    gpu.launch(module["grid_shift"], blocks, threads, [d_data, d_out, np.int32(n)], cooperative=True,
               timing=timing)
    np.testing.assert_array_equal(d_data.get(), data + 1)
    np.testing.assert_array_equal(d_out.get(), (data + 1)[(np.arange(n) + threads) % n])


@pytest.mark.parametrize("timing", [True, False])
def test_two_grid_syncs_and_a_second_launch_reuse_the_barrier(gpu, module, timing):
    blocks, threads = 6, 96
    n = blocks * threads - 10
    for seed in (1, 2):
        values = np.random.default_rng(seed).integers(-100, 100, n).astype(np.int32)
        partial, out = gpu.zeros(blocks + 1, np.int32), gpu.zeros(n, np.int32)
        run = gpu.launch(module["grid_sum"], blocks, threads, [gpu.to_device(values), partial, out, np.int32(n)],
                         cooperative=True, timing=timing)
        padded = np.concatenate([values, np.zeros(blocks * threads - n, np.int32)])
        np.testing.assert_array_equal(partial.get()[:blocks], padded.reshape(blocks, threads).sum(axis=1))
        np.testing.assert_array_equal(out.get(), np.full(n, values.sum()))
        assert not timing or run.cycles > 0


def test_grid_sync_without_a_cooperative_launch_is_refused(gpu, module):
    with pytest.raises(gpusim.LaunchError, match=r"this_grid\(\)\.sync\(\).*cg\.ptx:\d+.*cooperative=True"):
        gpu.launch(module["grid_shift"], 2, 64, [gpu.zeros(128, np.int32)] * 2 + [np.int32(128)])


def test_a_cooperative_grid_that_cannot_be_resident_is_refused(gpu, module):
    blocks = gpu.config.sms * gpu.config.max_blocks_per_sm + 1
    with pytest.raises(gpusim.LaunchError, match="cudaErrorCooperativeLaunchTooLarge"):
        gpu.launch(module["grid_shift"], blocks, 32, [gpu.zeros(blocks * 32, np.int32)] * 2
                   + [np.int32(blocks * 32)], cooperative=True)
    # the same check applies to a kernel without grid sync
    with pytest.raises(gpusim.LaunchError, match="cudaErrorCooperativeLaunchTooLarge"):
        gpu.launch(module["block_reverse"], blocks, 32, [gpu.zeros(blocks * 32, np.int32)] * 2, cooperative=True)


def test_cooperative_must_be_a_bool(gpu, module):
    with pytest.raises(gpusim.LaunchError, match="cooperative must be True or False"):
        gpu.launch(module["block_reverse"], 1, 32, [gpu.zeros(32, np.int32)] * 2, cooperative="yes")


def test_other_envregs_are_refused_by_name(gpu):
    text = (".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n"
            "{ .reg .b32 %r<4>;\n  mov.u32 %r1, %envreg7;\n  ret; }\n")
    with pytest.raises(gpusim.UnsupportedPTXError, match="%envreg7"):
        gpu.load_ptx(text, name="env.ptx")


@pytest.mark.parametrize("budget", [1, 97])
def test_warps_spinning_on_each_other_give_the_same_run_however_it_is_sliced(gpu, module, budget, monkeypatch):
    """The functional path's warp time slices resume exactly where a slice stopped: the spin loops of a
    64-thread tile execute the same number of times whether the run is one engine call or many."""
    from gpusim.launch import slices

    values = np.arange(256, dtype=np.int32)
    runs = []
    for fixed in (1 << 40, budget):
        monkeypatch.setattr(slices, "FIXED_BUDGET", fixed)
        run, outs = _launch(gpu, module["tile64"], 2, 128, [values], [256, 256], False)
        runs.append((run.pc_counts.copy(), outs))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    for a, b in zip(runs[0][1], runs[1][1], strict=True):
        np.testing.assert_array_equal(a, b)
