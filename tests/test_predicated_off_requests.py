"""A memory instruction with every lane predicated off issues but makes no request.

Nothing reaches L1 or shared memory, so it adds no request, sector or wavefront to any counter (Nsight
Compute's request counters count what the LSU sends, not instructions issued). Before this was modelled,
such a request kept no space and was timed and counted as a global load of zero sectors. The expected
counts follow from the kernel: the upper two warps of four load and store 32 consecutive words (one
request, four sectors each), the lower two are predicated off.
"""

import numpy as np
import pytest

import gpusim

HALF_OFF = r"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry half(.param .u64 src, .param .u64 dst)
{
 .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<6>;
 .shared .align 16 .b32 s[128];
 ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [dst];
 cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, 0; mov.u32 %r3, 0;
 setp.ge.u32 %p1, %r1, 64;
 mul.wide.u32 %rd3, %r1, 4; add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;
 shl.b32 %r4, %r1, 2; mov.u32 %r5, s; add.u32 %r5, %r5, %r4;
 @%p1 ld.global.u32 %r2, [%rd4];
 @%p1 st.shared.u32 [%r5], %r2;
 @%p1 ld.shared.u32 %r3, [%r5];
 @%p1 st.global.u32 [%rd5], %r3;
 ret;
}
"""


@pytest.mark.parametrize("sanitize", [None, "racecheck"])   # racecheck takes shared accesses off the fast path
def test_predicated_off_memory_instructions_make_no_request(sanitize):
    gpu = gpusim.GPU("teaching", sanitize=sanitize)
    kernel = gpu.load_ptx(HALF_OFF)["half"]
    src = np.arange(1, 129, dtype=np.uint32)
    dst = gpu.to_device(np.zeros(128, np.uint32))
    run = gpu.launch(kernel, grid=1, block=128, args=[gpu.to_device(src), dst], timing=True)
    expected = np.where(np.arange(128) >= 64, src, 0)
    np.testing.assert_array_equal(dst.get(), expected)
    c = run.counters
    on_warps = 2                                     # warps 2 and 3 (threads 64..127)
    assert c["global_load_requests"] == on_warps and c["global_load_sectors"] == 4 * on_warps
    assert c["global_store_requests"] == on_warps and c["global_store_sectors"] == 4 * on_warps
    assert c["shared_load_requests"] == on_warps and c["shared_store_requests"] == on_warps
    assert c["shared_load_wavefronts"] == on_warps and c["shared_store_wavefronts"] == on_warps
    # every warp still issues all four (inst_executed counts predicated-off instructions)
    assert run.warp_instructions == 4 * _instructions_per_warp(gpu, kernel)


def _instructions_per_warp(gpu, kernel) -> int:
    """Warp-instructions one warp executes (straight-line code: every warp runs each one once), from a
    functional run of one warp."""
    run = gpu.launch(kernel, grid=1, block=32, args=[gpu.to_device(np.zeros(32, np.uint32)),
                                                     gpu.to_device(np.zeros(32, np.uint32))])
    return run.warp_instructions


def test_functional_and_timed_runs_agree_on_predicated_off_accesses():
    gpu = gpusim.GPU("teaching")
    kernel = gpu.load_ptx(HALF_OFF)["half"]
    src = np.arange(1, 129, dtype=np.uint32)
    outs = []
    for timing in (False, True):
        dst = gpu.to_device(np.zeros(128, np.uint32))
        gpu.launch(kernel, grid=1, block=128, args=[gpu.to_device(src), dst], timing=timing)
        outs.append(dst.get())
    np.testing.assert_array_equal(outs[0], outs[1])
