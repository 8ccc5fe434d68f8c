"""gpusim.triton.launch: Triton kernels compiled by Triton and run on gpusim (skipped without Triton)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import gpusim

if importlib.util.find_spec("triton") is None:
    pytest.skip("Triton is not installed: pip install 'gpusim[triton]'", allow_module_level=True)

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from gpusim.frontends import triton as gt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("triton_kernels", ROOT / "examples" / "triton_kernels.py")
TK = importlib.util.module_from_spec(spec)
sys.modules["triton_kernels"] = TK
spec.loader.exec_module(TK)
RNG = np.random.default_rng(0)


def test_vector_add_host_and_device_arrays():
    x, y = RNG.random(5000, dtype=np.float32), RNG.random(5000, dtype=np.float32)
    run, out = TK.vector_add(x, y)
    np.testing.assert_allclose(out, x + y)
    assert run.block == (128, 1, 1)                       # num_warps=4 -> 4 x 32 threads per program
    assert run.grid == (triton.cdiv(5000, 1024), 1, 1)
    gpu = gpusim.GPU("h100-sxm")
    dx, dy, dout = gpu.to_device(x), gpu.to_device(y), gpu.empty(5000, np.float32)
    gpusim.triton.launch(TK.add_kernel, (5,), dx, dy, dout, 5000, gpu=gpu, BLOCK=1024)
    np.testing.assert_allclose(dout.get(), x + y)


def test_divisibility_specialisation_lets_triton_vectorise():
    """Triton's launcher marks a size divisible by 16 (and the 256-aligned pointers): whole 16-byte loads;
    a size that is not leaves every element its own masked 4-byte load."""
    vector = {}
    for n in (4096, 4097):
        run, out = TK.vector_add(np.ones(n, np.float32), np.ones(n, np.float32))
        np.testing.assert_array_equal(out, 2)
        vector[n] = [t for t in run.program.texts if t.lstrip("@%p0123456789 ").startswith("ld.global")]
    assert vector[4096] and all(".v4." in t for t in vector[4096])
    assert vector[4097] and not any(".v4." in t for t in vector[4097])


def test_fused_softmax():
    x = RNG.standard_normal((16, 100), dtype=np.float32)
    run, out = TK.softmax(x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert run.grid == (16, 1, 1)


def test_layer_norm():
    x = RNG.standard_normal((8, 100), dtype=np.float32)
    w, b = RNG.random(100, dtype=np.float32), RNG.random(100, dtype=np.float32)
    _, y = TK.layer_norm(x, w, b)
    np.testing.assert_allclose(y, TK._layer_norm_reference(x, w, b), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("config", ["h100-sxm", "a100"])
def test_matmul_fp32_ieee(config):
    a, b = RNG.random((64, 48), dtype=np.float32), RNG.random((48, 40), dtype=np.float32)
    run, c = TK.matmul(a, b, gpu=gpusim.GPU(config))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    assert run.metrics and run.cycles > 0


def test_hopper_matmul_runs_wgmma():
    """On sm_90 Triton lowers an fp16 dot to wgmma.mma_async (with its fence, commit and wait): it runs, on the
    warpgroup tensor path, within the fp32 accumulation bound (fp16 x fp16 products are exact in fp32; k
    roundings of partial sums at most k for inputs in [-1, 1]: k x k x 2^-24)."""
    k = 128
    a = RNG.uniform(-1, 1, (128, k)).astype(np.float16)
    b = RNG.uniform(-1, 1, (k, 128)).astype(np.float16)
    run, c = TK.matmul(a, b, gpu=gpusim.GPU("h100-sxm", sms=4), block=(64, 64, 32), num_warps=4, num_stages=3)
    assert np.abs(c - a.astype(np.float64) @ b.astype(np.float64)).max() <= k * k * 2.0 ** -24
    assert run.metrics["sm__inst_executed_pipe_tensor_op_gmma.sum"] > 0


def test_tensor_core_matmul_runs_on_the_tensor_pipe():
    """Triton's tf32 dot compiles to mma.sync m16n8k8 tf32 (and ldmatrix): it runs, within tf32's bound."""
    a, b = RNG.random((32, 32), dtype=np.float32), RNG.random((32, 32), dtype=np.float32)
    run, c = TK.matmul(a, b, precision="tf32")
    k = a.shape[1]
    # each input rounded to tf32 (10 explicit mantissa bits: relative error <= 2^-11, twice per product),
    # then k fp32 additions (Higham's gamma_k); inputs in [0, 1), so |a| @ |b| bounds every term
    bound = (2 * 2.0 ** -11 + k * 2.0 ** -24) * (np.abs(a) @ np.abs(b))
    assert np.all(np.abs(c - a.astype(np.float64) @ b.astype(np.float64)) <= bound)
    assert run.metrics["sm__inst_executed_pipe_tensor_op_hmma.sum"] > 0


def _executed(run) -> set[str]:
    return {r.opcode for r in run.source_view().rows if r.warp_inst}


@pytest.mark.parametrize("config", ["h100-sxm", "a100"])
def test_tensor_descriptor_matmul(config):
    """Triton's host-side TensorDescriptors (over DeviceArrays, edges not multiples of the block): on sm_90
    the blocks move by TMA (each descriptor a CUtensorMap), on sm_80 Triton lowers them to pointer
    arithmetic (base, shape, strides and flags as arguments); both match numpy within fp16 output rounding
    (half an ulp: 2^-11 relative) plus k fp32 roundings of partial sums (inputs in [-1, 1])."""
    m, n, k = 200, 136, 96
    a, b = RNG.uniform(-1, 1, (m, k)).astype(np.float16), RNG.uniform(-1, 1, (k, n)).astype(np.float16)
    run, c = TK.matmul_tma(a, b, gpusim.GPU(config, sms=4))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert np.all(np.abs(c - exact) <= 2.0 ** -11 * np.abs(exact) + k * k * 2.0 ** -24)
    opcodes = _executed(run)
    assert ("cp.async.bulk.tensor" in opcodes) == (config == "h100-sxm")
    assert "ld" not in opcodes if config == "h100-sxm" else "ld" in opcodes     # no plain global loads with TMA


def test_tensor_descriptor_mistakes():
    from triton.tools.tensor_descriptor import TensorDescriptor

    gpu = gpusim.GPU("h100-sxm", sms=1)
    wide = TensorDescriptor(gpu.zeros((64, 40), np.float16), [64, 48], [40, 1], [64, 32])    # past the array's end
    b = TensorDescriptor.from_tensor(gpu.zeros((48, 32), np.float16), [32, 32])
    c = TensorDescriptor.from_tensor(gpu.zeros((64, 32), np.float16), [64, 32])
    with pytest.raises(gpusim.LaunchError, match="'a_desc'.*reaches byte"):
        gpusim.triton.launch(TK.matmul_tma_kernel, (1, 1), wide, b, c, 48, gpu=gpu, BLOCK_M=64, BLOCK_N=32,
                             BLOCK_K=32)


def test_bool_argument_is_passed_as_a_byte():
    @triton.jit
    def scale_if(x_ptr, flag, n, BLOCK: tl.constexpr):
        i = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + i, mask=i < n)
        if flag:
            x = x * 2
        tl.store(x_ptr + i, x, mask=i < n)

    for flag in (True, False):
        x = np.arange(10, dtype=np.float32)
        gpusim.triton.launch(scale_if, (1,), x, flag, 10, BLOCK=16)
        assert np.array_equal(x, np.arange(10) * (2 if flag else 1))


@pytest.mark.parametrize("config", ["h100-sxm", "a100"])
@pytest.mark.parametrize("n, causal", [(192, False), (200, True)])
def test_fused_attention(config, n, causal):
    """The flash-attention forward pass (online softmax over 64-key blocks, 200 = a partial last block) against
    float64: P and O are rounded to fp16 (2^-11 of max |v| each: P's rows sum to one), plus n fp32 roundings.
    Its tensor instructions do exactly the FLOPs of the key blocks each query block visits: 2 x 64 x 64 x d for
    S and again for P V per block (a 64x64 wgmma per warpgroup, counted once per warp, on sm_90; m16n8k16
    mma.sync on sm_80)."""
    heads, d, block = 2, 64, 64
    q, k, v = (RNG.standard_normal((heads, n, d)).astype(np.float16) for _ in range(3))
    run, o = TK.attention(q, k, v, causal, gpu=gpusim.GPU(config, sms=4))
    bound = (2 * 2.0 ** -11 + n * 2.0 ** -23) * np.abs(v).max()
    assert np.abs(o - TK.attention_reference(q, k, v, causal)).max() <= bound
    q_blocks = -(-n // block)
    visits = sum(-(-min(n, (i + 1) * block) // block) if causal else q_blocks for i in range(q_blocks)) * heads
    if config == "h100-sxm":
        flops = run.metrics["sm__inst_executed_pipe_tensor_op_gmma.sum"] * 2 * 64 * 64 * 16 / 4
    else:
        flops = run.metrics["sm__inst_executed_pipe_tensor_op_hmma.sum"] * 2 * 16 * 8 * 16
    assert flops == visits * 2 * (2 * block * block * d)


def test_missing_features_counts_instructions():
    ptx = "  wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {...};\n" \
          " @%p1 cp.async.bulk.tensor.2d.shared::cluster.global [a], [b];\n" \
          "  ld.global.b32 %r1, [%rd1];\n  mbarrier.try_wait.parity.shared.b64 %p2, [%r2], %r3;\n" \
          "  cp.async.bulk.prefetch.tensor.2d.L2.global.tile [a, {%r1, %r2}];\n" \
          "  cp.async.bulk.prefetch.L2.global [a], 256;\n  cp.async.bulk.prefetch.L2.global [b], 512;\n" \
          "  cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [a], [b], 256;\n" \
          "  cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32 [a], [b], 16, [c];\n"
    # mbarrier, wgmma, TMA's tensor copies and the bulk prefetch and global reduction run (issue 25); the bulk
    # reduction into a cluster's shared memory does not
    assert gt.missing_features(ptx) == {"cp.reduce.async.bulk.shared": 1}


def test_triton_source_lines_in_the_source_view():
    x = np.ones(3000, np.float32)
    run, _ = TK.vector_add(x, x)
    store_source = f"triton_kernels.py:{TK.add_kernel.fn.__code__.co_firstlineno + 7}"   # the tl.store line
    lines = {r.source for r in run.source_view().rows if r.opcode == "st"}
    assert lines == {store_source}


def test_user_mistakes_are_the_projects_errors():
    x = np.ones(16, np.float32)
    with pytest.raises(gpusim.LaunchError, match="missing argument 'BLOCK'"):
        gpusim.triton.launch(TK.add_kernel, (1,), x, x, x, 16)
    with pytest.raises(gpusim.LaunchError, match="no parameter 'BLOK'"):
        gpusim.triton.launch(TK.add_kernel, (1,), x, x, x, 16, BLOCK=16, BLOK=3)
    with pytest.raises(gpusim.LaunchError, match="C-contiguous"):
        gpusim.triton.launch(TK.add_kernel, (1,), x[::2], x[::2], x[::2], 8, BLOCK=16)
    with pytest.raises(gpusim.KernelCompileError, match="@triton.jit"):
        gpusim.triton.launch(lambda: None, (1,))

    @triton.jit
    def broken(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), undefined_name)  # noqa: F821

    with pytest.raises(gpusim.KernelCompileError, match="could not compile 'broken'"):
        gpusim.triton.launch(broken, (1,), x, BLOCK=16)
