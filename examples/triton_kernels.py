"""Triton kernels (the algorithms of Triton's tutorials, written here) run on gpusim with
``gpusim.triton.launch``: vector add, fused softmax, layer norm, a blocked matmul, the same matmul over
tensor descriptors, and a fused (flash) attention.

The matmul uses ``tl.dot``. With ``input_precision="ieee"`` on fp32 inputs Triton builds it from FMAs; with
fp16 inputs (or tf32) on an sm_80-sm_89 config (``gpu="a100"``) Triton emits tensor-core ``mma.sync``,
``ldmatrix`` and the ``cp.async`` pipeline, and on an sm_90 config (``gpu="h100-sxm"``) Hopper's ``wgmma``;
gpusim runs both on the tensor pipe. ``matmul_tma`` takes Triton's host-side ``TensorDescriptor``s over
DeviceArrays: on sm_90 Triton copies their blocks with TMA (``cp.async.bulk.tensor``, mbarriers) and gpusim
passes each as a CUtensorMap, as Triton's launcher does; on sm_80 Triton lowers them to pointer arithmetic.
``attention`` is a FlashAttention-style forward pass: one program per 64-query block, an online softmax over
64-key blocks, both products on the tensor cores. Launch options (``regs=``, ``timing=``,
``cache_control=``, ...) are ``GPU.launch``'s (docs/python-kernels.md).
``python examples/triton_kernels.py`` runs each and prints its cycles; tests/test_triton_kernels.py
checks them against numpy.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

import gpusim


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    columns = tl.arange(0, BLOCK)
    mask = columns < n_cols
    x = tl.load(in_ptr + row * in_row_stride + columns, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    numerator = tl.exp(x)
    denominator = tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * out_row_stride + columns, numerator / denominator, mask=mask)


@triton.jit
def layer_norm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, row_stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    columns = tl.arange(0, BLOCK)
    mask = columns < n_cols
    x = tl.load(x_ptr + row * row_stride + columns, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    centred = tl.where(mask, x - mean, 0.0)
    variance = tl.sum(centred * centred, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(variance + eps)
    w = tl.load(w_ptr + columns, mask=mask)
    b = tl.load(b_ptr + columns, mask=mask)
    tl.store(y_ptr + row * row_stride + columns, centred * rstd * w + b, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k + ks)[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & ((k + ks)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + ks)[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=((k + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc,
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def matmul_tma_kernel(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):        # blocks past the tensor's edge read as zeros (the descriptor's padding)
        acc = tl.dot(a_desc.load([pid_m * BLOCK_M, k]), b_desc.load([k, pid_n * BLOCK_N]), acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, qk_scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    # q, k, v, o: [heads, seq_len, HEAD_DIM] fp16; qk_scale = log2(e) / sqrt(HEAD_DIM) (the softmax in base 2)
    start = tl.program_id(0) * BLOCK_M
    base = tl.program_id(1) * seq_len * HEAD_DIM
    rows = start + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < seq_len, other=0.0)
    row_max = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    row_sum = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    end = tl.minimum(seq_len, start + BLOCK_M) if CAUSAL else seq_len
    for first in range(0, end, BLOCK_N):
        keys = first + tl.arange(0, BLOCK_N)
        k_t = tl.load(k_ptr + base + keys[None, :] * HEAD_DIM + dims[:, None], mask=keys[None, :] < seq_len,
                      other=0.0)
        s = tl.dot(q, k_t) * qk_scale
        valid = keys[None, :] < seq_len
        if CAUSAL:
            valid = valid & (keys[None, :] <= rows[:, None])
        s = tl.where(valid, s, float("-inf"))
        new_max = tl.maximum(row_max, tl.max(s, 1))
        p = tl.math.exp2(s - new_max[:, None])
        rescale = tl.math.exp2(row_max - new_max)          # the earlier blocks' terms, to the new maximum
        row_sum = row_sum * rescale + tl.sum(p, 1)
        v = tl.load(v_ptr + base + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < seq_len,
                    other=0.0)
        acc = acc * rescale[:, None] + tl.dot(p.to(tl.float16), v)
        row_max = new_max
    tl.store(o_ptr + base + rows[:, None] * HEAD_DIM + dims[None, :], (acc / row_sum[:, None]).to(tl.float16),
             mask=rows[:, None] < seq_len)


def vector_add(x, y, gpu=None, block=1024):
    out = np.zeros_like(x)
    run = gpusim.triton.launch(add_kernel, lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),), x, y, out,
                               x.size, gpu=gpu, BLOCK=block)
    return run, out


def softmax(x, gpu=None):
    out = np.zeros_like(x)
    block = triton.next_power_of_2(x.shape[1])
    run = gpusim.triton.launch(softmax_kernel, (x.shape[0],), out, x, x.shape[1], out.shape[1], x.shape[1],
                               gpu=gpu, BLOCK=block)
    return run, out


def layer_norm(x, w, b, eps=1e-5, gpu=None):
    y = np.zeros_like(x)
    block = triton.next_power_of_2(x.shape[1])
    run = gpusim.triton.launch(layer_norm_kernel, (x.shape[0],), x, y, w, b, x.shape[1], x.shape[1], eps,
                               gpu=gpu, BLOCK=block)
    return run, y


def matmul(a, b, gpu=None, precision="ieee", block=(32, 32, 32), num_warps=4, num_stages=1):
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n), np.float32)
    grid = (triton.cdiv(m, block[0]), triton.cdiv(n, block[1]))
    run = gpusim.triton.launch(matmul_kernel, grid, a, b, c, m, n, k, a.strides[0] // a.itemsize, 1,
                               b.strides[0] // b.itemsize, 1, n, 1, gpu=gpu, num_warps=num_warps, num_stages=num_stages,
                               BLOCK_M=block[0], BLOCK_N=block[1], BLOCK_K=block[2], PRECISION=precision)
    return run, c


def matmul_tma(a, b, gpu, block=(64, 64, 32), num_warps=4, num_stages=3):
    """C = A @ B (fp16 in and out, fp32 accumulation) through TensorDescriptors over DeviceArrays."""
    m, k = a.shape
    n = b.shape[1]
    da, db, dc = gpu.to_device(a), gpu.to_device(b), gpu.zeros((m, n), a.dtype)
    descriptors = (TensorDescriptor.from_tensor(da, [block[0], block[2]]),
                   TensorDescriptor.from_tensor(db, [block[2], block[1]]),
                   TensorDescriptor.from_tensor(dc, [block[0], block[1]]))
    grid = (triton.cdiv(m, block[0]), triton.cdiv(n, block[1]))
    run = gpusim.triton.launch(matmul_tma_kernel, grid, *descriptors, k, gpu=gpu, num_warps=num_warps,
                               num_stages=num_stages, BLOCK_M=block[0], BLOCK_N=block[1], BLOCK_K=block[2])
    return run, dc.get()


def attention(q, k, v, causal=False, gpu=None, block=(64, 64), num_warps=4, num_stages=2):
    """softmax(Q K^T / sqrt(d)) V per head; q, k, v: [heads, seq_len, d] fp16."""
    heads, n, d = q.shape
    o = np.zeros_like(q)
    grid = (triton.cdiv(n, block[0]), heads)
    run = gpusim.triton.launch(attention_kernel, grid, q, k, v, o, n, float(np.log2(np.e) / np.sqrt(d)), gpu=gpu,
                               num_warps=num_warps, num_stages=num_stages, HEAD_DIM=d, BLOCK_M=block[0],
                               BLOCK_N=block[1], CAUSAL=causal)
    return run, o


def attention_reference(q, k, v, causal=False):
    """The float64 reference of ``attention``."""
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tri(q.shape[1], dtype=bool), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return p / p.sum(-1, keepdims=True) @ v.astype(np.float64)


def _layer_norm_reference(x, w, b, eps=1e-5):
    mean = x.mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=1, keepdims=True) + eps) * w + b


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x = rng.random(5000, dtype=np.float32)
    run, out = vector_add(x, x)
    print(f"vector add  {np.allclose(out, 2 * x)!s:5} {run.cycles} cycles")
    rows = rng.standard_normal((16, 100), dtype=np.float32)
    run, out = softmax(rows)
    e = np.exp(rows - rows.max(1, keepdims=True))
    print(f"softmax     {np.allclose(out, e / e.sum(1, keepdims=True), atol=1e-6)!s:5} {run.cycles} cycles")
    w, bias = rng.random(100, dtype=np.float32), rng.random(100, dtype=np.float32)
    run, out = layer_norm(rows, w, bias)
    print(f"layer norm  {np.allclose(out, _layer_norm_reference(rows, w, bias), atol=1e-5)!s:5} {run.cycles} cycles")
    a, b = rng.random((64, 48), dtype=np.float32), rng.random((48, 40), dtype=np.float32)
    run, c = matmul(a, b)
    print(f"matmul fp32 {np.allclose(c, a @ b, rtol=1e-5)!s:5} {run.cycles} cycles")
    run, c = matmul(a, b, precision="tf32")
    print(f"matmul tf32 {np.allclose(c, a @ b, rtol=5e-3)!s:5} {run.cycles} cycles (mma.sync)")
    h100 = gpusim.GPU("h100-sxm", sms=4)
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    run, c = matmul_tma(a16, b16, h100)
    print(f"matmul tma  {np.allclose(c, a16.astype(np.float32) @ b16, rtol=2e-3)!s:5} {run.cycles} cycles (wgmma)")
    q, k, v = (rng.standard_normal((2, 200, 64)).astype(np.float16) for _ in range(3))
    run, o = attention(q, k, v, causal=True, gpu=h100)
    print(f"attention   {np.allclose(o, attention_reference(q, k, v, True), atol=5e-3)!s:5} {run.cycles} cycles")
