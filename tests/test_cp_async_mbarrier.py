"""cp.async.mbarrier.arrive{.noinc} (sm_80): an arrive-on the mbarrier once the executing thread's prior cp.async
copies have landed -- what nvcc emits for cuda::memcpy_async tracked by a cuda::barrier (issue 25). The
expected values come from the PTX ISA (without .noinc the pending count is raised by one at issue, so the
asynchronous arrival leaves it unchanged; with .noinc the arrival counts against the expected arrivals), numpy
and the config's latencies."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import MbarrierError

HERE = Path(__file__).parent / "ptx" / "cp_async_barrier"

_TRACKED = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out, .param .u64 waited, .param .u64 word)
{
    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<4>;
    .shared .align 16 .b8 buf[1024];
    .shared .align 8 .b64 bar;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, bar;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared.b64 [%r2], INIT;
    bar.sync 0;
    ld.param.u64 %rd1, [src];
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd2, %rd3;
    mov.u32 %r3, buf;
    shl.b32 %r4, %r1, 4;
    add.s32 %r5, %r3, %r4;
    mov.u64 %rd10, %clock64;
    cp.async.cg.shared.global [%r5], [%rd4], 16;
    cp.async.mbarrier.arrive.FORM.shared.b64 [%r2];
    ARRIVE
$L_wait:
    mbarrier.test_wait.parity.shared.b64 %p2, [%r2], 0;
    @!%p2 bra $L_wait;
    mov.u64 %rd11, %clock64;
    ld.shared.f32 %f1, [%r5];
    ld.param.u64 %rd5, [out];
    cvta.to.global.u64 %rd6, %rd5;
    mul.wide.u32 %rd7, %r1, 4;
    add.s64 %rd8, %rd6, %rd7;
    st.global.f32 [%rd8], %f1;
    sub.s64 %rd12, %rd11, %rd10;
    ld.param.u64 %rd5, [waited];
    cvta.to.global.u64 %rd6, %rd5;
    mul.wide.u32 %rd7, %r1, 8;
    add.s64 %rd8, %rd6, %rd7;
    st.global.u64 [%rd8], %rd12;
    bar.sync 0;
    @!%p1 bra $L_done;
    ld.shared.u64 %rd13, [bar];
    ld.param.u64 %rd5, [word];
    cvta.to.global.u64 %rd6, %rd5;
    st.global.u64 [%rd6], %rd13;
$L_done:
    ret;
}
"""


def _tracked(form: str, init: int, arrive: bool) -> str:
    """Each of the block's threads copies 16 bytes with cp.async, has the mbarrier track it (``form``: noinc or
    the plain form), optionally arrives itself, waits for phase 0 to complete and stores the first word it
    copied, the cycles it waited and (thread 0) the mbarrier word."""
    text = _TRACKED.replace("INIT", str(init)).replace("ARRIVE", "mbarrier.arrive.shared.b64 %rd9, [%r2];"
                                                                     if arrive else "")
    return text.replace(".FORM", ".noinc" if form == "noinc" else "")


def _run(text: str, threads: int, timing: bool, config: str = "h100-sxm"):
    gpu = gpusim.GPU(config, sms=1)
    kernel = gpu.load_ptx(text, "tracked.ptx")["k"]
    src = np.arange(threads * 4, dtype=np.float32) + 0.5
    out, waited, word = gpu.zeros(threads, np.float32), gpu.zeros(threads, np.uint64), gpu.zeros(1, np.uint64)
    gpu.launch(kernel, grid=1, block=threads, args=[gpu.to_device(src), out, waited, word], timing=timing)
    return gpu, out.get(), src[::4], waited.get(), int(word.get()[0])


def _decode(word: int) -> tuple[int, int, int]:
    """(phase, pending, expected) of an mbarrier word (docs/tensor-cores.md's layout)."""
    return word >> 63, word & 0xFFFFF, (word >> 20) & 0xFFFFF


@pytest.mark.parametrize("timing", [False, True])
@pytest.mark.parametrize("form, arrive", [("noinc", False), ("plain", True)])
def test_the_phase_completes_once_every_tracked_copy_and_arrival_is_in(form, arrive, timing):
    """.noinc: the 64 asynchronous arrivals are the 64 the barrier expects; the plain form: the 64 threads'
    own arrivals are, and the asynchronous ones leave the count as it was. Either way phase 0 completes
    exactly once (pending back at the expected 64, phase bit 1) and every thread reads the bytes it copied."""
    _, out, want, _, word = _run(_tracked(form, 64, arrive), 64, timing)
    np.testing.assert_array_equal(out, want)
    assert _decode(word) == (1, 64, 64)


@pytest.mark.parametrize("timing", [False, True])
def test_an_arrival_with_no_pending_count_left_is_an_error(timing):
    """A barrier that expects one arrival and 16 transaction bytes that never come: the first .noinc arrival
    takes the pending count to 0 without completing the phase (the tx-count is not 0), the second finds none
    left -- the ISA's undefined case, an MbarrierError naming the rule (timed: when the arrivals land, at the
    next mbarrier operation)."""
    text = _tracked("noinc", 1, False).replace("bar.sync 0;\n    ld.param.u64 %rd1, [src];",
                                               "@%p1 mbarrier.expect_tx.shared.b64 [%r2], 16;\n    bar.sync 0;\n"
                                               "    ld.param.u64 %rd1, [src];", 1)
    with pytest.raises(MbarrierError, match="arrival") as raised:
        _run(text, 32, timing)
    assert "shared address 0x400" in str(raised.value)       # bar follows the 1024 bytes of buf
    assert ("cp.async.mbarrier.arrive" in str(raised.value)) and (("test_wait" in str(raised.value)) == timing)


def test_the_wait_lasts_until_the_copies_land():
    """Timed: a thread that waits on the barrier tracking its cold 16-byte copy waits at least the L2's
    latency (the copy reads through L2, from DRAM), where waiting on its own arrival alone (an mbarrier that
    tracks no copy: the copy is not on it) ends within a few tens of cycles."""
    gpu, _, _, waited, _ = _run(_tracked("noinc", 32, False), 32, True)
    latency = gpu.config.l2_latency_cycles
    assert waited.min() >= latency
    untracked = _tracked("noinc", 32, False).replace("cp.async.mbarrier.arrive.noinc.shared.b64 [%r2];",
                                                     "mbarrier.arrive.shared.b64 %rd9, [%r2];")
    _, _, _, quick, _ = _run(untracked, 32, True)
    assert quick.max() < latency / 2


@pytest.mark.parametrize("timing", [False, True])
def test_cuda_memcpy_async_with_a_cuda_barrier_runs_as_nvcc_compiles_it(timing):
    """tests/ptx/cp_async_barrier/staged_sum.cu (nvcc -arch=sm_80): two blocks of 256 threads stream six tiles
    into double-buffered shared memory with cuda::memcpy_async on cuda::barrier (cp.async +
    cp.async.mbarrier.arrive) and sum them per thread; the sums are numpy's."""
    gpu = gpusim.GPU("a100", sms=1)
    kernel = gpu.load(HERE / "staged_sum.ptx")["_Z10staged_sumPKfPfi"]
    tiles = 6
    src = np.random.default_rng(3).standard_normal(256 * tiles).astype(np.float32)
    out = gpu.zeros(512, np.float32)
    gpu.launch(kernel, grid=2, block=256, args=[gpu.to_device(src), out, np.int32(tiles)], timing=timing)
    want = np.zeros(256, np.float32)
    for t in range(tiles):
        want += src[256 * t:256 * (t + 1)]
    np.testing.assert_array_equal(out.get().reshape(2, 256), np.stack([want, want]))
