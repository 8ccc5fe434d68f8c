"""L2 cache-policy instructions (sm_80): ``createpolicy``, loads/stores/atomics with ``.L2::cache_hint``,
``discard.global.L2`` and ``applypriority``. The PTX ISA makes a policy opaque and gpusim's L2 keeps no eviction
priorities, so what is checked is that kernels using them run with the results numpy gives, that the policy
value is the encoding gpusim.ptx.lower_cache_policy documents, and that malformed forms are refused naming the
line. Triton emits createpolicy for ``tl.load(..., eviction_policy=...)``."""

from __future__ import annotations

import importlib.util
import struct

import numpy as np
import pytest

import gpusim
from gpusim.errors import PTXSyntaxError, UnsupportedPTXError

_KERNEL = """.version 8.0
.target TARGET
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out, .param .u64 policies, .param .u64 counter)
{
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<16>;
    mov.u32 %r1, %tid.x;
    ld.param.u64 %rd1, [src];
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    createpolicy.fractional.L2::evict_last.b64 %rd5, 1.0;
    createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64 %rd6, 0f3F000000;
    createpolicy.range.global.L2::evict_normal.b64 %rd7, [%rd2], 256, 4096;
    createpolicy.cvt.L2.b64 %rd8, %rd6;
    applypriority.global.L2::evict_normal [%rd2], 128;
    ld.global.L1::evict_last.L2::cache_hint.f32 %f1, [%rd4], %rd5;
    add.f32 %f2, %f1, %f1;
    ld.param.u64 %rd9, [out];
    cvta.to.global.u64 %rd10, %rd9;
    add.s64 %rd11, %rd10, %rd3;
    st.global.L2::cache_hint.f32 [%rd11], %f2, %rd6;
    ld.param.u64 %rd12, [counter];
    cvta.to.global.u64 %rd13, %rd12;
    atom.global.add.L2::cache_hint.u32 %r2, [%rd13], 1, %rd7;
    discard.global.L2 [%rd2+4096], 128;
    ld.param.u64 %rd14, [policies];
    cvta.to.global.u64 %rd15, %rd14;
    st.global.v4.u64 [%rd15], {%rd5, %rd6, %rd7, %rd8};
    ret;
}
"""


def _policy(form: int, primary: int, secondary: int = 0, fraction: float | None = None) -> int:
    """The encoding gpusim.ptx.lower_cache_policy documents: form, primary and secondary priority, fraction."""
    bits = struct.unpack("<I", struct.pack("<f", fraction))[0] if fraction is not None else 0
    return form | primary << 2 | secondary << 5 | bits << 32


@pytest.mark.parametrize("config, target", [("a100", "sm_80"), ("h100-sxm", "sm_90")])
@pytest.mark.parametrize("timing", [False, True])
def test_hinted_accesses_give_the_unhinted_results(config, target, timing):
    gpu = gpusim.GPU(config, sms=1)
    kernel = gpu.load_ptx(_KERNEL.replace("TARGET", target), "hints.ptx")["k"]
    src = np.arange(64, dtype=np.float32) * 0.25
    out, policies, counter = gpu.zeros(64, np.float32), gpu.zeros(4, np.uint64), gpu.zeros(1, np.uint32)
    gpu.launch(kernel, grid=1, block=64, args=[gpu.to_device(np.concatenate([src, np.zeros(2048, np.float32)])),
                                               out, policies, counter], timing=timing)
    np.testing.assert_array_equal(out.get(), 2 * src)
    assert int(counter.get()[0]) == 64
    first_unchanged = _policy(1, 2, 2, 0.5)
    assert [int(v) for v in policies.get()] == [_policy(1, 0, 0, 1.0), first_unchanged, _policy(2, 1),
                                                first_unchanged]


@pytest.mark.parametrize("line, error, words", [
    ("createpolicy.fractional.L2::evict_sometimes.b64 %rd5, 1.0;", UnsupportedPTXError, "evict_last"),
    ("createpolicy.fractional.L2::evict_last.b64 %rd5, 1.5;", PTXSyntaxError, "(0, 1]"),
    ("createpolicy.fractional.L2::evict_last.b32 %r3, 1.0;", PTXSyntaxError, ".b64"),
    ("discard.global.L2 [%rd2], 64;", PTXSyntaxError, "128"),
    ("discard.global.L2 [16], 128;", PTXSyntaxError, "aligned"),
    ("ld.global.L2::cache_hint.f32 %f1, [%rd4];", PTXSyntaxError, "cache policy"),
])
def test_malformed_forms_are_refused_naming_the_line(line, error, words):
    text = _KERNEL.replace("TARGET", "sm_80").replace("    ret;\n", f"    {line}\n    ret;\n")
    with pytest.raises(error, match="hints.ptx") as raised:
        gpusim.GPU("a100").load_ptx(text, "hints.ptx")
    assert words in str(raised.value)


def test_createpolicy_needs_sm_80():
    with pytest.raises(UnsupportedPTXError, match="sm_80"):
        gpusim.GPU("v100").load_ptx(_KERNEL.replace("TARGET", "sm_70"), "hints.ptx")


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="Triton is not installed")
@pytest.mark.parametrize("config", ["a100", "h100-sxm"])
def test_triton_eviction_policies_run(config):
    """``tl.load(..., eviction_policy="evict_first" | "evict_last")``: Triton's PTX has createpolicy and
    ``ld.global.L1::evict_*.L2::cache_hint``; the results are numpy's."""
    import triton
    import triton.language as tl

    @triton.jit
    def scale_kernel(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, eviction_policy="evict_first")
        w = tl.load(w_ptr + (offs % 256), mask=mask, eviction_policy="evict_last")
        tl.store(out_ptr + offs, x * w, mask=mask)

    rng = np.random.default_rng(5)
    x, w = rng.random(5000, dtype=np.float32), rng.random(256, dtype=np.float32)
    out = np.zeros_like(x)
    run = gpusim.triton.launch(scale_kernel, lambda meta: (triton.cdiv(x.size, meta["BLOCK"]),), x, w, out, x.size,
                               BLOCK=1024, gpu=gpusim.GPU(config, sms=2))
    assert any(t.lstrip().startswith("createpolicy") for t in run.program.texts)
    np.testing.assert_array_equal(out, x * w[np.arange(x.size) % 256])
