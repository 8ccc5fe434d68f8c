"""cp.reduce.async.bulk.global.shared::cta.bulk_group (PTX ISA 8.0, sm_90), the non-tensor bulk reduction:
nvcc 13's PTX of tests/ptx/bulk_reduce/accumulate.cu (libcu++'s cuda::ptx::cp_reduce_async_bulk: add.f32 as
FlashAttention-3's backward pass accumulates dQ, min/max/or/inc.u32, add.u64, add.noftz.bf16, max.f16) on both
engine paths against numpy, and the ISA's operation x type rules. The operands are chosen so that every result
is independent of the order the blocks' reductions land in (exact float sums; inc below its bound)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import PTXSyntaxError, UnsupportedPTXError

_PTX = Path(__file__).parent / "ptx" / "bulk_reduce" / "accumulate.ptx"
N, BLOCKS = 256, 4


def _bf16(values: np.ndarray) -> np.ndarray:
    return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("timing", [False, True])
def test_bulk_reductions_match_numpy(timing):
    gpu = gpusim.GPU("h100-sxm", sms=2)
    kernel = gpu.load(str(_PTX))["accumulate"]
    rng = np.random.default_rng(3)
    src = (rng.integers(-4000, 4000, BLOCKS * N) / 4).astype(np.float32)
    acc0 = (rng.integers(-4000, 4000, N) / 8).astype(np.float32)
    words = rng.integers(100, 1 << 32, BLOCKS * N, dtype=np.uint64).astype(np.uint32)
    mins0 = rng.integers(0, 1 << 32, N, dtype=np.uint64).astype(np.uint32)
    maxs0 = rng.integers(0, 1 << 32, N, dtype=np.uint64).astype(np.uint32)
    ors0 = rng.integers(0, 1 << 32, N, dtype=np.uint64).astype(np.uint32)
    incs0 = rng.integers(0, 50, N).astype(np.uint32)          # below every bound: each inc adds one
    longs = rng.integers(0, 1 << 63, BLOCKS * N, dtype=np.uint64)
    sums0 = rng.integers(0, 1 << 63, N, dtype=np.uint64)
    small = rng.integers(-8, 9, BLOCKS * N).astype(np.float32)   # bf16 sums of these stay exact
    bf16_0 = rng.integers(-8, 9, N).astype(np.float32)
    halves = rng.uniform(-100, 100, BLOCKS * N).astype(np.float16)
    max16_0 = rng.uniform(-100, 100, N).astype(np.float16)
    out = {name: gpu.to_device(value) for name, value in (
        ("acc", acc0), ("mins", mins0), ("maxs", maxs0), ("ors", ors0), ("incs", incs0), ("sums", sums0),
        ("bf16", _bf16(bf16_0)), ("max16", max16_0.view(np.uint16)))}
    gpu.launch(kernel, grid=BLOCKS, block=N, timing=timing, args=[
        gpu.to_device(src), out["acc"], gpu.to_device(words), out["mins"], out["maxs"], out["ors"], out["incs"],
        gpu.to_device(longs), out["sums"], gpu.to_device(_bf16(small)), out["bf16"],
        gpu.to_device(halves.view(np.uint16)), out["max16"]])
    per_block = lambda a: np.asarray(a).reshape(BLOCKS, N)  # noqa: E731
    np.testing.assert_array_equal(out["acc"].get(), acc0 + 2 * per_block(src).sum(axis=0))
    np.testing.assert_array_equal(out["mins"].get(), np.minimum(mins0, per_block(words).min(axis=0)))
    np.testing.assert_array_equal(out["maxs"].get(), np.maximum(maxs0, per_block(words).max(axis=0)))
    np.testing.assert_array_equal(out["ors"].get(), ors0 | np.bitwise_or.reduce(per_block(words), axis=0))
    np.testing.assert_array_equal(out["incs"].get(), incs0 + BLOCKS)
    np.testing.assert_array_equal(out["sums"].get(), sums0 + per_block(longs).sum(axis=0, dtype=np.uint64))
    np.testing.assert_array_equal(out["bf16"].get(), _bf16(bf16_0 + per_block(small).sum(axis=0)))
    expected16 = np.maximum(max16_0, per_block(halves).max(axis=0))
    np.testing.assert_array_equal(out["max16"].get(), expected16.view(np.uint16))


def _kernel(line: str) -> str:
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .shared .align 16 .b8 buf[256];
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, buf;
    {line}
    ret;
}}
"""


@pytest.mark.parametrize("line, error, words", [
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.inc.s32 [%rd1], [%r1], 256;", PTXSyntaxError, ".u32"),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f16 [%rd1], [%r1], 256;", PTXSyntaxError, ".noftz"),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.f32 [%rd1], [%r1], 256;", PTXSyntaxError, "operation"),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd1], [%r1], 200;", PTXSyntaxError, "16"),
    ("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32 [%r1], [%r1], 256, "
     "[%rd1];", UnsupportedPTXError, "shared::cluster form"),
])
def test_malformed_forms_are_refused_naming_the_line(line, error, words):
    with pytest.raises(error) as caught:
        gpusim.GPU("h100-sxm", sms=1).load_ptx(_kernel(line), "bad.ptx")["k"]
    assert words in str(caught.value) and "bad.ptx:11" in str(caught.value)
