"""Launch options on the Python front ends, as their users call them: ``gpusim.triton.launch`` takes
``GPU.launch``'s options (``regs=``, ``timing=``, ``shared_bytes=``, ...) and resolves a constexpr that
shares a name with a Triton option the way Triton's launcher does; ``@gpusim.jit`` launches take them
as keywords of the launch call. Skipped without Triton / numba-cuda."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import gpusim
from gpusim.errors import LaunchError

HAS_TRITON = importlib.util.find_spec("triton") is not None
HAS_NUMBA_CUDA = importlib.util.find_spec("numba_cuda") is not None
RNG = np.random.default_rng(5)

if HAS_TRITON:
    import triton
    import triton.language as tl

    @triton.jit
    def softmax_tutorial(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                         BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
        """The signature of Triton's fused-softmax tutorial: a constexpr named like the option."""
        row_start = tl.program_id(0)
        row_step = tl.num_programs(0)
        for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
            offsets = tl.arange(0, BLOCK_SIZE)
            mask = offsets < n_cols
            row = tl.load(input_ptr + row_idx * input_row_stride + offsets, mask=mask, other=-float("inf"))
            row = row - tl.max(row, axis=0)
            numerator = tl.exp(row)
            tl.store(output_ptr + row_idx * output_row_stride + offsets, numerator / tl.sum(numerator, axis=0),
                     mask=mask)

    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


triton_only = pytest.mark.skipif(not HAS_TRITON, reason="Triton is not installed: pip install 'gpusim[triton]'")
numba_only = pytest.mark.skipif(not HAS_NUMBA_CUDA, reason="numba-cuda is not installed")


@triton_only
@pytest.mark.parametrize("by_keyword", [True, False])
def test_a_constexpr_named_num_stages_is_the_kernels_argument(by_keyword):
    x = RNG.standard_normal((6, 50)).astype(np.float32)
    out = np.zeros_like(x)
    extra = {"BLOCK_SIZE": 64, "num_stages": 2} if by_keyword else {}
    positional = () if by_keyword else (64, 2)           # the tutorial's call: kernel[grid](..., BLOCK, stages)
    run = gpusim.triton.launch(softmax_tutorial, (3,), out, x, x.shape[1], out.shape[1], x.shape[0], x.shape[1],
                               *positional, gpu="a100", **extra)
    # every row's sum of expf over <= 64 terms: a few ulp of expf plus gamma_64 (float32), relative
    np.testing.assert_allclose(out, _softmax(x.astype(np.float64)), rtol=70 * 2.0 ** -24 + 4e-7, atol=1e-7)
    assert run.grid == (3, 1, 1)
    from gpusim.frontends import triton as gt

    # as Triton's launcher: a keyword is also the compile option; a positional value is only the argument
    stages = {dict(key[5])["num_stages"] for key in gt._COMPILED if key[0] is softmax_tutorial
              and dict(key[2]).get("num_stages") == 2}
    assert (2 if by_keyword else 3) in stages


@triton_only
def test_launch_options_reach_the_launch():
    x = RNG.standard_normal(300).astype(np.float32)
    out = np.zeros_like(x)
    gpu = gpusim.GPU("a100", sms=2)
    run = gpusim.triton.launch(scale_kernel, (3,), x, out, x.size, 2.5, gpu=gpu, BLOCK=128, regs=40, timing=False)
    np.testing.assert_array_equal(out, x * np.float32(2.5))
    assert (run.regs_per_thread, run.regs_source) == (40, "launch argument regs=")
    assert run.timing is False
    timed = gpusim.triton.launch(scale_kernel, (3,), x, out, x.size, 2.5, gpu=gpu, BLOCK=128, num_warps=2,
                                 cache_control="all", shared_bytes=1024, trace=True)
    assert timed.timing and timed.block == (64, 1, 1) and timed.shared_bytes >= 1024 and timed.trace is not None


@triton_only
def test_launch_option_mistakes_are_launch_errors():
    x = np.zeros(128, np.float32)
    with pytest.raises(LaunchError, match="no parameter 'regz'.*options: num_warps"):
        gpusim.triton.launch(scale_kernel, (1,), x, x, 128, 1.5, gpu="a100", BLOCK=128, regz=32)
    with pytest.raises(LaunchError, match="cache_control"):
        gpusim.triton.launch(scale_kernel, (1,), x, x, 128, 1.5, gpu="a100", BLOCK=128, cache_control="sometimes")
    with pytest.raises(LaunchError, match="num_warps must be a positive int"):
        gpusim.triton.launch(scale_kernel, (1,), x, x, 128, 1.5, gpu="a100", BLOCK=128, num_warps=0)
    with pytest.raises(LaunchError, match="regs=? must be a positive int"):
        gpusim.triton.launch(scale_kernel, (1,), x, x, 128, 1.5, gpu="a100", BLOCK=128, regs="many")


@triton_only
def test_shared_bytes_below_the_kernels_own_is_refused():
    x = RNG.standard_normal((2, 50)).astype(np.float32)
    with pytest.raises(LaunchError, match="uses \\d+ bytes of dynamic shared memory"):
        gpusim.triton.launch(softmax_tutorial, (2,), np.zeros_like(x), x, 50, 50, 2, 50, gpu="a100", BLOCK_SIZE=64,
                             num_stages=1, num_warps=8, shared_bytes=0)


@numba_only
def test_numba_launches_take_the_launch_options():
    from numba import cuda

    @gpusim.jit(gpu="a100")
    def twice(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = 2 * a[i]

    a = RNG.standard_normal(100).astype(np.float32)
    out = np.zeros_like(a)
    run = twice[2, 64](a, out, regs=48, timing=False)
    np.testing.assert_array_equal(out, 2 * a)
    assert (run.regs_per_thread, run.regs_source, run.timing) == (48, "launch argument regs=", False)
    run = twice[2, 64, 0, 256](a, out, cache_control="all", trace=True)
    assert run.timing and run.shared_bytes >= 256 and run.trace is not None
    with pytest.raises(LaunchError, match="regs=? must be a positive int"):
        twice[2, 64](a, out, regs=-1)


@triton_only
@pytest.mark.parametrize("block", [(32, 32, 32), (64, 64, 32)])
def test_fp16_tl_dot_runs_on_the_tensor_pipe(block):
    """examples/triton_kernels.py's matmul on fp16 inputs (sm_80: mma.sync f16, ldmatrix): fp16 x fp16
    products are exact in fp32 (11 + 11 significand bits), so the error is the fp32 accumulation's,
    Higham's gamma_k times |a| @ |b|."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    try:
        import triton_kernels as TK
    finally:
        sys.path.pop(0)
    a = RNG.standard_normal((64, 96)).astype(np.float16)
    b = RNG.standard_normal((96, 48)).astype(np.float16)
    run, c = TK.matmul(a, b, gpu="a100", block=block)
    k = a.shape[1]
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = k * 2.0 ** -24 / (1 - k * 2.0 ** -24) * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    assert np.all(np.abs(c - exact) <= bound)
    assert run.metrics["sm__inst_executed_pipe_tensor_op_hmma.sum"] > 0
