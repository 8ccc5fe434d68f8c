"""Divergence and reconvergence end to end: nvcc -O3 kernels (tests/data/exec/divergence.cu and its
committed .ptx) and hand-written PTX, each checked against the same computation in Python/numpy, under the
functional and the timed loop."""

from pathlib import Path

import numpy as np
import pytest

import gpusim

DATA = Path(__file__).parent / "data" / "exec"
TIMING = pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
RNG = np.random.default_rng(11)


@pytest.fixture(scope="module")
def gpu():
    return gpusim.GPU("teaching")


@pytest.fixture(scope="module")
def module(gpu):
    return gpu.load(DATA / "divergence.ptx")


def kernel_named(module, short: str):
    return next(k for k in module if short in k.name)


@TIMING
def test_nested_branches(gpu, module, timing):
    values = RNG.integers(-200, 200, 256).astype(np.int32)
    out = gpu.zeros(256, np.int32)
    gpu.launch(kernel_named(module, "nested_branches"), 2, 128, [gpu.to_device(values), out], timing=timing)

    def reference(v: int) -> int:
        if v & 1:
            r = v * 3 if v & 2 else v - 100
        elif int(np.fmod(v, 5)) == 0:
            r = int(v / 5) + (1000 if v > 50 else 0)
        else:
            r = -v
        return r + 1
    assert out.get().tolist() == [reference(int(v)) for v in values]


@TIMING
def test_data_dependent_loop_with_divergent_trip_counts(gpu, module, timing):
    start = RNG.integers(1, 3000, 96).astype(np.uint32)
    start[:3] = [1, 2, 27]
    steps, peak = gpu.zeros(96, np.uint32), gpu.zeros(96, np.uint32)
    gpu.launch(kernel_named(module, "divergent_loop"), 3, 32, [gpu.to_device(start), steps, peak],
               timing=timing)
    expect_steps, expect_peak = [], []
    for x in start.tolist():
        count, top = 0, x
        while x > 1:
            x = 3 * x + 1 if x & 1 else x // 2
            top = max(top, x)
            count += 1
        expect_steps.append(count)
        expect_peak.append(top)
    assert steps.get().tolist() == expect_steps
    assert peak.get().tolist() == expect_peak


@TIMING
def test_early_exit_then_barrier(gpu, module, timing):
    """The default, as the hardware (compute capability 7.0+, the teaching config's): threads that returned
    early count as arrived; the run finishes with a one-line warning naming the count and the sanitizer."""
    assert gpu.config.cc_major >= 7
    run = _early_exit_then_barrier(gpu, module, timing)
    assert len(run.warnings) == 1
    assert "exited without reaching it" in run.warnings[0] and "sanitize='synccheck'" in run.warnings[0]


@TIMING
def test_early_exit_then_barrier_without_synccheck_is_silent(module, timing):
    """``synccheck=False``: nothing checked, nothing counted."""
    gpu = kernel_named(module, "early_exit_barrier").gpu
    gpu.synccheck = False
    try:
        assert _early_exit_then_barrier(gpu, module, timing).warnings == []
    finally:
        gpu.synccheck = None


@TIMING
def test_early_exit_then_barrier_is_reported_by_synccheck(timing):
    """The same launch under synccheck: the threads that returned skipped the barrier."""
    gpu = gpusim.GPU("teaching", sanitize="synccheck")
    module = gpu.load(DATA / "divergence.ptx")
    values = np.arange(256, dtype=np.int32)
    values[32:64] = -1
    with pytest.raises(gpusim.errors.SynccheckError) as info:
        gpu.launch(kernel_named(module, "early_exit_barrier"), 2, 128,
                   [gpu.to_device(values), gpu.zeros(256, np.int32)], timing=timing)
    assert info.value.skipped == tuple((t, 0, 0) for t in range(32, 64))
    assert isinstance(info.value, gpusim.errors.BarrierError)


def _early_exit_then_barrier(gpu, module, timing):
    threads, blocks = 128, 2
    values = RNG.integers(-50, 100, threads * blocks).astype(np.int32)
    values[32:64] = -1          # the whole second warp of block 0 leaves before the barrier
    values[128 + 5] = -3        # and single lanes elsewhere
    out = gpu.to_device(np.full(threads * blocks, 777, np.int32))
    run = gpu.launch(kernel_named(module, "early_exit_barrier"), blocks, threads, [gpu.to_device(values), out],
                     timing=timing)
    expect = []
    for block in range(blocks):
        row = values[block * threads:(block + 1) * threads]
        for t in range(threads):
            if row[t] < 0:
                expect.append(777)
            else:
                neighbour = row[(t + 1) % threads]
                expect.append(-1 if neighbour < 0 else 2 * int(neighbour))
    assert out.get().tolist() == expect
    return run


@TIMING
def test_loop_with_break_and_continue(gpu, module, timing):
    n, limit = 64, 150
    values = RNG.integers(1, 40, n).astype(np.int32)
    out = gpu.zeros(n, np.int32)
    gpu.launch(kernel_named(module, "break_continue"), 2, 32,
               [gpu.to_device(values), out, np.int32(n), np.int32(limit)], timing=timing)
    expect = []
    for t in range(n):
        acc = 0
        for i in range(n):
            v = int(values[(t + i) % n])
            if v % 3 == 0:
                continue
            if acc + v > limit:
                break
            acc += v
        expect.append(acc)
    assert out.get().tolist() == expect


HAND_PTX = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p_out, .param .u32 p_flag)
{
  .reg .b32 %r<12>; .reg .b64 %rd<4>; .reg .pred %p<4>;
  ld.param.u64 %rd1, [p_out]; ld.param.u32 %r1, [p_flag]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r2, %tid.x; mul.wide.u32 %rd2, %r2, 4; add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r3, 0;
  // a warp-uniform guarded bra.uni
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra.uni $L_flag_set;
  add.u32 %r3, %r3, 1000;
$L_flag_set:
  activemask.b32 %r9; popc.b32 %r10, %r9; add.u32 %r3, %r3, %r10;   // reconverged: all 32 lanes
  // lanes with tid % 4 == 3 return inside a nested divergent region
  and.b32 %r4, %r2, 1;
  setp.eq.u32 %p2, %r4, 0;
  @%p2 bra $L_even;
  and.b32 %r5, %r2, 3;
  setp.eq.u32 %p3, %r5, 3;
  @%p3 bra $L_leave;
  add.u32 %r3, %r3, 10;
  bra.uni $L_join;
$L_leave:
  st.global.u32 [%rd3], 99;
  ret;
$L_even:
  add.u32 %r3, %r3, 20;
$L_join:
  // the immediate post-dominator of the branches above is the kernel end (one path returns), so each
  // path arrives here on its own, as on a PDOM-reconvergence GPU: the ballot counts its path's lanes
  activemask.b32 %r8; setp.eq.u32 %p1, %r2, %r2;
  vote.sync.ballot.b32 %r6, %p1, %r8;
  popc.b32 %r7, %r6;
  add.u32 %r3, %r3, %r7;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


@TIMING
@pytest.mark.parametrize("flag", [0, 1])
def test_bra_uni_and_ret_inside_nested_divergence(gpu, timing, flag):
    kernel = gpu.load_ptx(HAND_PTX)["k"]
    out = gpu.zeros(64, np.uint32)
    gpu.launch(kernel, 1, 64, [out, np.uint32(flag)], timing=timing)
    expect = []
    for t in range(64):
        if t % 4 == 3:
            expect.append(99)
            continue
        odd_lanes_left, even_lanes = 8, 16     # per warp, after the lanes with tid % 4 == 3 returned
        path_lanes = odd_lanes_left if t % 2 else even_lanes
        expect.append((0 if flag else 1000) + 32 + (10 if t % 2 else 20) + path_lanes)
    assert out.get().tolist() == expect
