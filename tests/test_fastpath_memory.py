"""The fast path's shared-memory, parameter-load and nop forms give exactly what the general path
(``step_warp``) gives.

A launch with racecheck on takes every shared access and parameter load through ``exec_memory`` (the fast
path declines it), so the same kernel run with and without racecheck compares the two paths on the same
inputs; the expected values come from numpy. Addresses the fast path declines (misaligned, past the
declared size) still end in the general path's error or note.
"""

import numpy as np
import pytest

import gpusim
from gpusim.errors import IllegalAddressError, MemcheckError

# Each thread stores its input to shared memory as a scalar, a .v2 and a .v4 row (an immediate in one lane
# of the .v4), then loads a neighbour's values back through the three widths, rotated by `shift` threads;
# warps 0 and 1 also issue a shared store and load with every lane predicated off.
SHARED_WIDTHS = r"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry widths(.param .u64 src, .param .u64 dst, .param .u32 shift)
{
 .reg .pred %p<2>; .reg .b32 %r<24>; .reg .f32 %f<16>; .reg .b64 %rd<8>;
 .shared .align 16 .b32 s1[128];
 .shared .align 16 .b32 s2[256];
 .shared .align 16 .b32 s4[512];
 ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [dst]; ld.param.u32 %r20, [shift];
 cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd3, %r1, 4; add.s64 %rd4, %rd1, %rd3;
 ld.global.u32 %r2, [%rd4];
 add.u32 %r3, %r2, 1; add.u32 %r4, %r2, 2; add.u32 %r5, %r2, 3;
 shl.b32 %r6, %r1, 2; mov.u32 %r7, s1; add.u32 %r8, %r7, %r6;
 st.shared.u32 [%r8], %r2;
 setp.ge.u32 %p1, %r1, 64;
 @%p1 st.shared.u32 [%r8], %r2;
 shl.b32 %r6, %r1, 3; mov.u32 %r7, s2; add.u32 %r9, %r7, %r6;
 st.shared.v2.u32 [%r9], {%r2, %r3};
 shl.b32 %r6, %r1, 4; mov.u32 %r7, s4; add.u32 %r10, %r7, %r6;
 st.shared.v4.u32 [%r10], {%r2, %r3, 77, %r5};
 bar.sync 0;
 add.u32 %r11, %r1, %r20; and.b32 %r11, %r11, 127;
 shl.b32 %r6, %r11, 2; mov.u32 %r7, s1; add.u32 %r12, %r7, %r6;
 ld.shared.u32 %r13, [%r12];
 shl.b32 %r6, %r11, 3; mov.u32 %r7, s2; add.u32 %r12, %r7, %r6;
 ld.shared.v2.u32 {%r14, %r15}, [%r12];
 shl.b32 %r6, %r11, 4; mov.u32 %r7, s4; add.u32 %r12, %r7, %r6;
 ld.shared.v4.u32 {%r16, %r17, %r18, %r19}, [%r12];
 @%p1 ld.shared.u32 %r21, [%r12];
 mul.wide.u32 %rd3, %r1, 32; add.s64 %rd5, %rd2, %rd3;
 st.global.u32 [%rd5], %r13; st.global.u32 [%rd5+4], %r14; st.global.u32 [%rd5+8], %r15;
 st.global.u32 [%rd5+12], %r16; st.global.u32 [%rd5+16], %r17; st.global.u32 [%rd5+20], %r18;
 st.global.u32 [%rd5+24], %r19;
 ret;
}
"""


def _expected(src: np.ndarray, shift: int) -> np.ndarray:
    j = (np.arange(128) + shift) % 128
    v = src[j].astype(np.uint64)
    out = np.zeros((128, 8), np.uint32)
    out[:, 0] = v
    out[:, 1], out[:, 2] = v, v + 1
    out[:, 3], out[:, 4], out[:, 5], out[:, 6] = v, v + 1, 77, v + 3
    return out


def _same_on_both_paths(ptx, name, block, dst_shape, args, timing, expected):
    """Run kernel ``name`` with racecheck off (the fast path) and on (the general path): both store
    ``expected`` (from numpy), and timed runs give the same cycles and counters. ``args(gpu, dst)`` makes
    the launch's arguments."""
    outputs, timings = [], []
    for sanitize in (None, "racecheck"):
        gpu = gpusim.GPU("teaching", sanitize=sanitize)
        kernel = gpu.load_ptx(ptx)[name]
        dst = gpu.to_device(np.zeros(dst_shape, np.uint32))
        run = gpu.launch(kernel, grid=1, block=block, args=args(gpu, dst), timing=timing)
        outputs.append(dst.get())
        if timing:
            timings.append((run.cycles, run.counters))
    np.testing.assert_array_equal(outputs[0], expected)
    np.testing.assert_array_equal(outputs[1], outputs[0])
    if timing:
        assert timings[0] == timings[1]


@pytest.mark.parametrize("timing", [False, True])
@pytest.mark.parametrize("shift", [0, 5, 127])
def test_shared_widths_same_on_both_paths(timing, shift):
    src = np.random.default_rng(shift).integers(0, 1 << 31, 128).astype(np.uint32)
    _same_on_both_paths(SHARED_WIDTHS, "widths", 128, (128, 8),
                        lambda gpu, dst: [gpu.to_device(src), dst, shift], timing, _expected(src, shift))


MISALIGNED = r"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry bad(.param .u32 offset)
{
 .reg .b32 %r<4>;
 .shared .align 16 .b32 s[50];
 ld.param.u32 %r1, [offset];
 mov.u32 %r2, s; add.u32 %r2, %r2, %r1;
 ld.shared.v2.u32 {%r3, %r1}, [%r2];
 ret;
}
"""


@pytest.mark.parametrize("timing", [False, True])
@pytest.mark.parametrize("offset,sanitize,error,message", [
    (4, None, IllegalAddressError, "misaligned for its size"),
    (1 << 24, None, IllegalAddressError, "outside the block's shared memory"),
    (200, "memcheck", MemcheckError, "past the block's 200 bytes of shared memory"),
])
def test_declined_shared_address_reports_as_before(timing, offset, sanitize, error, message):
    gpu = gpusim.GPU("teaching", sanitize=sanitize)
    kernel = gpu.load_ptx(MISALIGNED)["bad"]
    with pytest.raises(error, match=message):
        gpu.launch(kernel, grid=1, block=32, args=[offset], timing=timing)


def test_access_past_the_declared_size_inside_the_granule_runs_as_before():
    """Without memcheck an access inside the allocation granule runs (the general path notes it)."""
    gpu = gpusim.GPU("teaching")
    kernel = gpu.load_ptx(MISALIGNED)["bad"]
    run = gpu.launch(kernel, grid=1, block=32, args=[200])
    assert any("32 shared-memory access(es) past the declared 200 bytes" in line for line in run.warnings), \
        run.warnings


# Parameter loads at an immediate address (the fast path's ld.param: scalar u32/u64 and .v2/.v4 of a byte
# array parameter), stored for every thread.
PARAMS = r"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry params(.param .u64 dst, .param .u32 a, .param .align 16 .b8 blob[32])
{
 .reg .b32 %r<12>; .reg .b64 %rd<8>;
 ld.param.u64 %rd1, [dst]; cvta.to.global.u64 %rd1, %rd1;
 ld.param.u32 %r1, [a];
 ld.param.v4.u32 {%r2, %r3, %r4, %r5}, [blob];
 ld.param.v2.u32 {%r6, %r7}, [blob+16];
 ld.param.u64 %rd2, [blob+24];
 mov.u32 %r8, %tid.x; mul.wide.u32 %rd3, %r8, 40; add.s64 %rd4, %rd1, %rd3;
 st.global.u32 [%rd4], %r1; st.global.u32 [%rd4+4], %r2; st.global.u32 [%rd4+8], %r3;
 st.global.u32 [%rd4+12], %r4; st.global.u32 [%rd4+16], %r5; st.global.u32 [%rd4+20], %r6;
 st.global.u32 [%rd4+24], %r7; st.global.u64 [%rd4+32], %rd2;
 ret;
}
"""


@pytest.mark.parametrize("timing", [False, True])
def test_parameter_loads_same_on_both_paths(timing):
    blob = np.random.default_rng(3).integers(0, 1 << 32, 8, dtype=np.uint64).astype(np.uint32)
    expected = np.zeros((64, 10), np.uint32)
    expected[:, 0] = 12345
    expected[:, 1:7] = blob[:6]
    expected[:, 8:10] = blob[6:8]          # the u64 at blob+24, little-endian
    _same_on_both_paths(PARAMS, "params", 64, (64, 10), lambda gpu, dst: [dst, 12345, blob.tobytes()], timing,
                        expected)


BAD_PARAM = r"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u32 a)
{ .reg .b32 %r<3>; ld.param.u32 %r1, [a+OFF]; ret; }
"""


@pytest.mark.parametrize("sanitize", [None, "racecheck"])
@pytest.mark.parametrize("offset,message", [(2, "misaligned"), (4, "outside the kernel's 4 bytes of parameters"),
                                            (64, "outside the kernel's 4 bytes of parameters")])
def test_declined_parameter_address_reports_as_before(sanitize, offset, message):
    gpu = gpusim.GPU("teaching", sanitize=sanitize)
    kernel = gpu.load_ptx(BAD_PARAM.replace("OFF", str(offset)))["k"]
    with pytest.raises(IllegalAddressError, match=message):
        gpu.launch(kernel, grid=1, block=32, args=[7])
