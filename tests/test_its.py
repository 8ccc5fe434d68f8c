"""Independent thread scheduling (``GPU(reconvergence="its")``) against the SIMT stack (``"ipdom"``).

The kernels are CUDA (tests/ptx/its/*.cu) compiled by nvcc -arch=sm_90; expected values come from what the
CUDA programming guide defines for them (a spin lock serializes every thread once; __syncwarp orders the
named lanes' shared-memory accesses; a shuffle reads the named source lane), written with numpy. Every
kernel runs functional and timed. Kernels whose threads do not wait for lanes of their own warp must run
identically under both modes: same results, cycles, counters, stall and per-instruction tables.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.labs.support import LAB_PROGRAMS_DIR
from gpusim.programs.catalog import list_programs, load_program, run_program
from gpusim.ptx.its_code import its_code

PTX = Path(__file__).parent / "ptx" / "its"
TIMING = pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
MODES = pytest.mark.parametrize("mode", ["its", "ipdom"])
N_THREADS = 128            # 2 blocks of 64: two warps per block contend too


def make_gpu(mode: str, **overrides) -> gpusim.GPU:
    return gpusim.GPU("teaching", reconvergence=mode, **overrides)


def launch(gpu, file: str, kernel: str, args, timing: bool, grid=2, block=64, **kw):
    module = gpu.load(PTX / file)
    return gpu.launch(module[kernel], grid=grid, block=block, args=args, timing=timing, **kw)


# ------------------------------------------------------------------ the option


def test_default_is_ipdom_for_every_shipped_config():
    for name in ("v100", "a100", "h100-sxm", "h200", "rtx4090", "teaching"):
        assert gpusim.GPU(name).reconvergence == "ipdom"
    assert gpusim.GPU("h100-sxm", reconvergence="its").reconvergence == "its"


def test_an_unknown_mode_is_a_config_error():
    with pytest.raises(gpusim.ConfigError, match="reconvergence must be one of 'ipdom', 'its'"):
        gpusim.GPU("teaching", reconvergence="volta")


def test_its_code_marks_exactly_the_backward_branches_and_gives_syncwarp_its_mask():
    gpu = make_gpu("its")
    cases = (("spin_lock.ptx", "spin_lock"), ("collatz.ptx", "collatz"), ("syncwarp.ptx", "syncwarp_cross"))
    for file, kernel in cases:
        code = gpu.load(PTX / file)[kernel].program.code
        marked = its_code(code)
        pcs = np.arange(code.shape[0])
        backward = (code[:, L.F_OP] == c.OP_BRA) & (code[:, L.F_TARGET] <= pcs)
        flagged = (marked[:, L.F_MODS] & L.BRA_ITS_BACKWARD) != 0
        np.testing.assert_array_equal(flagged & (code[:, L.F_OP] == c.OP_BRA), backward)
        np.testing.assert_array_equal(marked[~backward, L.F_MODS], code[~backward, L.F_MODS])
        warpsync = (code[:, L.F_OP] == c.OP_NOP) & (code[:, L.F_AUX] == L.NOP_WARPSYNC)
        assert (code[warpsync, L.F_NSRC] == 0).all() and (marked[warpsync, L.F_NSRC] == 1).all()
        assert int(backward.sum()) == (0 if kernel == "syncwarp_cross" else 1)
        assert int(warpsync.sum()) == (2 if kernel == "syncwarp_cross" else 0)
        for pc in np.flatnonzero(backward):   # these loops are contiguous: the rows from the target to pc
            rows = code[code[pc, L.F_TARGET]:pc + 1]
            written = {int(d) for row in rows for d in row[L.F_DST0:L.F_DST0 + row[L.F_NDST]] if d >= 0}
            assert marked[pc, L.F_SIZE] == sum(1 << (d % 64) for d in written)
        rest = np.ones(code.shape[1], bool)
        rest[[L.F_MODS, L.F_NSRC, L.F_SIZE]] = False
        np.testing.assert_array_equal(marked[:, rest], code[:, rest])
        np.testing.assert_array_equal(marked[~backward, L.F_SIZE], code[~backward, L.F_SIZE])


# ------------------------------------------------------------------ spin lock


@TIMING
def test_spin_lock_with_the_critical_section_after_the_loop_completes_under_its(timing):
    gpu = make_gpu("its")
    lock, counter, seen = gpu.zeros(1, np.int32), gpu.zeros(1, np.int32), gpu.zeros(N_THREADS, np.int32)
    launch(gpu, "spin_lock.ptx", "spin_lock", [lock, counter, seen], timing)
    assert lock.get()[0] == 0                          # released by the last holder
    assert counter.get()[0] == N_THREADS               # every thread incremented once, under the lock
    assert sorted(seen.get().tolist()) == list(range(N_THREADS))   # each saw a distinct count


def test_spin_lock_under_ipdom_stops_at_the_cycle_limit_naming_the_spin_and_its():
    gpu = make_gpu("ipdom", max_cycles=100_000)
    lock, counter, seen = gpu.zeros(1, np.int32), gpu.zeros(1, np.int32), gpu.zeros(N_THREADS, np.int32)
    with pytest.raises(gpusim.SimulationLimitError) as info:
        launch(gpu, "spin_lock.ptx", "spin_lock", [lock, counter, seen], True)
    text = str(info.value)
    assert "lanes 1-31 run at" in text and "while lanes 0 wait to reconverge at" in text
    assert "spin_lock.ptx" in text and "ld.volatile.global.u32" in text      # the critical section's line
    assert "reconvergence='its'" in text


def test_spin_lock_under_ipdom_functional_reports_the_same():
    gpu = make_gpu("ipdom")
    lock, counter, seen = gpu.zeros(1, np.int32), gpu.zeros(1, np.int32), gpu.zeros(N_THREADS, np.int32)
    with pytest.raises(gpusim.SimulationLimitError, match="wait to reconverge at .*reconvergence='its'"):
        launch(gpu, "spin_lock.ptx", "spin_lock", [lock, counter, seen], False, max_warp_instructions=50_000)


@TIMING
def test_a_shuffle_after_the_lock_joins_the_groups_the_lock_split(timing):
    """After the lock the lanes are in separate groups; __shfl_xor_sync(full) waits for all of them."""
    gpu = make_gpu("its")
    lock, counter = gpu.zeros(1, np.int32), gpu.zeros(1, np.int32)
    seen, partner = gpu.zeros(N_THREADS, np.int32), gpu.zeros(N_THREADS, np.int32)
    launch(gpu, "spin_lock.ptx", "spin_lock_then_shuffle", [lock, counter, seen, partner], timing)
    seen, partner = seen.get(), partner.get()
    assert sorted(seen.tolist()) == list(range(N_THREADS))
    np.testing.assert_array_equal(partner, seen[np.arange(N_THREADS) ^ 1])


@TIMING
def test_a_lock_inside_a_branch_then_a_shuffle_after_the_join(timing):
    """Lanes with tid % 3 == 0 take the lock inside an if; a full-warp shfl.down after the if's join must
    wait for the groups the lock split off (which gave the join up) and for the lanes that skipped the if."""
    gpu = make_gpu("its")
    lock, counter = gpu.zeros(1, np.int32), gpu.zeros(1, np.int32)
    seen, partner = gpu.zeros(N_THREADS, np.int32), gpu.zeros(N_THREADS, np.int32)
    launch(gpu, "lock_nested.ptx", "lock_in_branch", [lock, counter, seen, partner], timing)
    seen, partner = seen.get(), partner.get()
    index = np.arange(N_THREADS)
    takers = (index % 64) % 3 == 0
    assert counter.get()[0] == takers.sum()
    assert sorted(seen[takers].tolist()) == list(range(takers.sum()))
    assert (seen[~takers] == -1).all()
    lane = index % 32
    np.testing.assert_array_equal(partner, np.where(lane < 31, seen[np.minimum(index + 1, N_THREADS - 1)], seen))


@TIMING
def test_every_thread_takes_the_lock_several_times(timing):
    gpu = make_gpu("its")
    rounds = 3
    lock, counter, total = gpu.zeros(1, np.int32), gpu.zeros(1, np.int32), gpu.zeros(N_THREADS, np.int32)
    launch(gpu, "lock_nested.ptx", "lock_repeatedly", [lock, counter, total, np.int32(rounds)], timing)
    assert counter.get()[0] == rounds * N_THREADS
    assert int(total.get().sum()) == sum(range(rounds * N_THREADS))   # every count seen exactly once


@TIMING
def test_a_barrier_after_the_lock_waits_for_every_group_of_each_warp(timing):
    gpu = make_gpu("its")
    lock, counter, after = gpu.zeros(1, np.int32), gpu.zeros(1, np.int32), gpu.zeros(N_THREADS, np.int32)
    launch(gpu, "spin_lock.ptx", "spin_lock_then_barrier", [lock, counter, after], timing, grid=1,
           block=N_THREADS)
    # one block: after __syncthreads() every thread of it has incremented the counter
    np.testing.assert_array_equal(after.get(), np.full(N_THREADS, N_THREADS))


# ------------------------------------------------------------------ producer / consumer in one warp


@TIMING
def test_ping_pong_between_two_lanes_of_one_warp_under_its(timing):
    gpu = make_gpu("its")
    warps = N_THREADS // 32
    flags, data, out = gpu.zeros(2 * warps, np.int32), gpu.zeros(2 * warps, np.int32), gpu.zeros(warps, np.int32)
    launch(gpu, "ping_pong.ptx", "ping_pong", [flags, data, out], timing)
    np.testing.assert_array_equal(out.get(), 2 * (100 + np.arange(warps)))
    np.testing.assert_array_equal(flags.get(), np.ones(2 * warps))


@TIMING
def test_ping_pong_under_ipdom_is_reported_at_the_limit(timing):
    gpu = make_gpu("ipdom", max_cycles=100_000)
    warps = N_THREADS // 32
    flags, data, out = gpu.zeros(2 * warps, np.int32), gpu.zeros(2 * warps, np.int32), gpu.zeros(warps, np.int32)
    with pytest.raises(gpusim.SimulationLimitError, match="wait to reconverge at .*reconvergence='its'"):
        launch(gpu, "ping_pong.ptx", "ping_pong", [flags, data, out], timing, max_warp_instructions=50_000)


# ------------------------------------------------------------------ __syncwarp


@MODES
@TIMING
def test_syncwarp_with_partial_masks_orders_each_half(mode, timing):
    gpu = make_gpu(mode)
    values = np.arange(N_THREADS, dtype=np.int32) * 7 + 3
    source, out = gpu.to_device(values), gpu.zeros(N_THREADS, np.int32)
    launch(gpu, "syncwarp.ptx", "syncwarp_halves", [source, out], timing)
    lane = np.arange(N_THREADS) % 32
    base = np.arange(N_THREADS) - lane
    expected = np.where(lane < 16, 2 * values[base + 15 - lane], 3 * values[np.minimum(base + 47 - lane, 127)])
    np.testing.assert_array_equal(out.get(), expected)


@TIMING
def test_syncwarp_on_both_sides_of_a_branch_is_one_barrier_under_its(timing):
    gpu = make_gpu("its")
    values = np.arange(N_THREADS, dtype=np.int32) * 5 + 1
    source, out = gpu.to_device(values), gpu.zeros(N_THREADS, np.int32)
    launch(gpu, "syncwarp.ptx", "syncwarp_cross", [source, out], timing)
    index = np.arange(N_THREADS)
    lane = index % 32
    expected = np.where(lane >= 16, values[np.maximum(index - 16, 0)] + 1, 0)
    np.testing.assert_array_equal(out.get(), expected)


@TIMING
def test_syncwarp_across_a_branch_under_ipdom_is_a_warp_sync_error(timing):
    gpu = make_gpu("ipdom")
    source, out = gpu.to_device(np.arange(N_THREADS, dtype=np.int32)), gpu.zeros(N_THREADS, np.int32)
    with pytest.raises(gpusim.WarpSyncError) as info:
        launch(gpu, "syncwarp.ptx", "syncwarp_cross", [source, out], timing)
    text = str(info.value)
    assert "bar.warp.sync" in text and "member mask 0xffffffff" in text
    assert "reconvergence='its'" in text


NOT_A_MEMBER = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k()
{
  bar.warp.sync 2;
  ret;
}
"""


@MODES
@TIMING
def test_syncwarp_by_a_lane_outside_its_own_mask_is_refused(mode, timing):
    gpu = make_gpu(mode)
    kernel = gpu.load_ptx(NOT_A_MEMBER, "member.ptx")["k"]
    with pytest.raises(gpusim.WarpSyncError, match=r"member.ptx:7 .*lane 0 executes it with member mask "
                                                   r"0x00000002, which does not include lane 0"):
        gpu.launch(kernel, grid=1, block=32, args=[], timing=timing)


# ------------------------------------------------------------------ shuffles after divergence


@MODES
@TIMING
def test_shuffles_in_both_paths_with_their_own_halves_mask(mode, timing):
    gpu = make_gpu(mode)
    values = np.arange(N_THREADS, dtype=np.int32) * 3 + 11
    source, out = gpu.to_device(values), gpu.zeros(N_THREADS, np.int32)
    launch(gpu, "shfl_halves.ptx", "shfl_halves", [source, out], timing)
    index = np.arange(N_THREADS)
    lane = index % 32
    base = index - lane
    expected = np.where(lane < 16, 2 * values[base + 15 - lane], 3 * values[np.minimum(base + 47 - lane, 127)])
    np.testing.assert_array_equal(out.get(), expected)


CROSS_SHUFFLE = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p_out)
{
  .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_out]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %laneid;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra LOW;
  shfl.sync.bfly.b32 %r2, %r1, 16, 31, -1;
  bra.uni DONE;
LOW:
  shfl.sync.bfly.b32 %r2, %r1, 16, 31, -1;
DONE:
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r2;
  ret;
}
"""


@TIMING
def test_full_mask_shuffles_at_two_instructions_never_meet_under_its(timing):
    """Each half waits at its own shfl for the other half, blocked at the other: a clear error."""
    gpu = make_gpu("its")
    kernel = gpu.load_ptx(CROSS_SHUFFLE, "cross.ptx")["k"]
    with pytest.raises(gpusim.WarpSyncError, match=r"cross.ptx:(12|15) .*can never arrive"):
        gpu.launch(kernel, grid=1, block=32, args=[gpu.zeros(32, np.uint32)], timing=timing)


# ------------------------------------------------------------------ same timing without communication


def collatz_steps(start: np.ndarray) -> np.ndarray:
    steps = np.zeros(start.size, np.int32)
    for i, x in enumerate(start.tolist()):
        while x != 1:
            x = 3 * x + 1 if x & 1 else x // 2
            steps[i] += 1
    return steps


def assert_same_run(a, b) -> None:
    assert a.cycles == b.cycles
    assert a.counters == b.counters
    assert a.stalls == b.stalls
    np.testing.assert_array_equal(a.pc_counts, b.pc_counts)
    for name in ("pc_stalls", "pc_memory"):
        left, right = getattr(a, name), getattr(b, name)
        assert (left is None) == (right is None)
        if left is not None:
            np.testing.assert_array_equal(left, right)
    assert a.metrics.keys() == b.metrics.keys()
    for key, value in a.metrics.items():
        other = b.metrics[key]
        if isinstance(value, float) and math.isnan(value):
            assert isinstance(other, float) and math.isnan(other), key
        else:
            assert value == other, key


@TIMING
def test_a_divergent_loop_runs_identically_under_both_modes(timing):
    start = np.arange(1, 513, dtype=np.uint32) * 37 % 1000 + 1
    runs = {}
    for mode in ("ipdom", "its"):
        gpu = make_gpu(mode)
        source, steps = gpu.to_device(start), gpu.zeros(start.size, np.int32)
        runs[mode] = launch(gpu, "collatz.ptx", "collatz", [source, steps, np.int32(start.size)], timing,
                            grid=4, block=128)
        np.testing.assert_array_equal(steps.get(), collatz_steps(start))
    if timing:
        assert_same_run(runs["ipdom"], runs["its"])
    else:
        np.testing.assert_array_equal(runs["ipdom"].pc_counts, runs["its"].pc_counts)


PROGRAMS = list_programs()


@pytest.mark.parametrize("path", PROGRAMS, ids=[path.stem for path in PROGRAMS])
def test_every_shipped_program_times_identically_under_both_modes(path):
    spec = load_program(path)
    results = {mode: run_program(spec, gpu=gpusim.GPU(spec.config, reconvergence=mode))
               for mode in ("ipdom", "its")}
    for result in results.values():
        assert result.ok, result.summary()
    for a, b in zip(results["ipdom"].runs, results["its"].runs, strict=True):
        assert_same_run(a, b)


@pytest.mark.parametrize("mode", [0, 1, 2], ids=["uniform", "intra-warp", "inter-warp"])
def test_the_divergence_labs_loops_in_both_paths_time_identically(mode):
    """The divergence lab's kernel: a loop on each path of a branch, diverged back edges every iteration."""
    runs = {}
    for reconvergence in ("ipdom", "its"):
        gpu = gpusim.GPU("h100-sxm", sms=1, reconvergence=reconvergence)
        kernel = gpu.load(LAB_PROGRAMS_DIR / "branches.ptx")["branches"]
        out = gpu.zeros(4 * 256, np.float32)
        runs[reconvergence] = gpu.launch(kernel, grid=4, block=256, args=[out, np.int32(mode), np.int32(16)])
        runs[reconvergence].out = out.get()
    np.testing.assert_array_equal(runs["ipdom"].out, runs["its"].out)
    assert_same_run(runs["ipdom"], runs["its"])
