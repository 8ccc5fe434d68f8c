"""cp.async.bulk.prefetch.L2.global [src], size (PTX ISA 8.0, sm_90), the non-tensor bulk prefetch: a hint that
moves no data (the kernel's results are numpy's with or without it), whose sectors the timed loop reads into L2.
A block's thread 0 prefetches a buffer, every thread sleeps past a DRAM round trip and then loads it: with the
prefetch every sector the loads look up in L2 hits (the prefetch brought them), without it none does (cold
caches); the DRAM bytes are the buffer's either way. The ISA's rules (sm_90, 16-byte size and alignment, the
global window) are checked, malformed forms refused naming the line."""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.errors import GpusimError, PTXSyntaxError, UnsupportedPTXError

BYTES = 8192          # 256 threads x 2 x 16 bytes
_KERNEL = """.version 8.0
.target TARGET
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out, .param .u32 prefetch)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    .reg .f32 %f<12>;
    .reg .pred %p<3>;
    ld.param.u64 %rd1, [src];
    cvta.to.global.u64 %rd2, %rd1;
    ld.param.u32 %r2, [prefetch];
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    setp.eq.u32 %p2, %r2, 0;
    @%p1 bra $WAIT;
    @%p2 bra $WAIT;
    PREFETCH
$WAIT:
    nanosleep.u32 4000;
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];
    ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd4+4096];
    add.f32 %f9, %f1, %f2;
    add.f32 %f9, %f9, %f3;
    add.f32 %f9, %f9, %f4;
    add.f32 %f10, %f5, %f6;
    add.f32 %f10, %f10, %f7;
    add.f32 %f10, %f10, %f8;
    add.f32 %f11, %f9, %f10;
    ld.param.u64 %rd5, [out];
    cvta.to.global.u64 %rd6, %rd5;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd7, %rd6, %rd3;
    st.global.f32 [%rd7], %f11;
    ret;
}
"""
_PREFETCH = "cp.async.bulk.prefetch.L2.global [%rd2], 8192;"


def _run(prefetch: bool, timing: bool = True, line: str = _PREFETCH, target: str = "sm_90"):
    gpu = gpusim.GPU("h100-sxm", sms=1)
    kernel = gpu.load_ptx(_KERNEL.replace("TARGET", target).replace("PREFETCH", line), "prefetch.ptx")["k"]
    src = np.arange(BYTES // 4, dtype=np.float32) / 8
    out = gpu.zeros(256, np.float32)
    run = gpu.launch(kernel, grid=1, block=256, args=[gpu.to_device(src), out, np.uint32(prefetch)],
                     timing=timing, cache_control="all")
    values = src.reshape(2, 256, 4)
    return run, out.get(), values.sum(axis=(0, 2), dtype=np.float32)


@pytest.mark.parametrize("timing", [False, True])
def test_a_prefetch_moves_no_data(timing):
    for prefetch in (False, True):
        _, got, expected = _run(prefetch, timing)
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_the_loads_after_a_prefetch_hit_in_l2():
    with_prefetch, _, _ = _run(True)
    without, _, _ = _run(False)
    sectors = BYTES // 32
    for run in (with_prefetch, without):
        assert run.metrics["dram__bytes_read.sum"] == BYTES
    hit = "lts__t_sector_hit_rate.pct"
    assert without.metrics[hit] == 0.0
    # the loads' sectors all hit; the prefetch's own lookups (as many) all missed
    assert with_prefetch.metrics[hit] == pytest.approx(100.0 * sectors / (2 * sectors))


@pytest.mark.parametrize("line, error, words", [
    ("cp.async.bulk.prefetch.L2.global [%rd2], 100;", PTXSyntaxError, "multiple of 16"),
    ("cp.async.bulk.prefetch.L1.global [%rd2], 64;", UnsupportedPTXError, "prefetch.L2.global"),
])
def test_malformed_forms_are_refused_naming_the_line(line, error, words):
    with pytest.raises(error) as caught:
        _run(True, line=line)
    assert words in str(caught.value) and "prefetch.ptx:18" in str(caught.value)


def test_needs_sm_90():
    with pytest.raises(UnsupportedPTXError, match="sm_90"):
        _run(True, target="sm_80")


@pytest.mark.parametrize("line, words", [
    ("cp.async.bulk.prefetch.L2.global [%rd2], 1048576;", "prefetch.ptx:18"),     # past the allocation
    ("cp.async.bulk.prefetch.L2.global [%rd2+8], 64;", "16-byte aligned"),        # known only at run time
])
@pytest.mark.parametrize("timing", [False, True])
def test_a_bad_range_is_an_error_naming_the_line(line, words, timing):
    with pytest.raises(GpusimError) as caught:
        _run(True, timing, line=line)
    assert words in str(caught.value) and "prefetch.ptx:18" in str(caught.value)
