"""Triton kernels (the algorithms of Triton's tutorials, written here) run on gpusim with
``gpusim.triton.launch``: vector add, fused softmax, layer norm, and a blocked matmul.

The matmul uses ``tl.dot``. With ``input_precision="ieee"`` on fp32 inputs Triton builds it from FMAs; with
fp16 inputs (or tf32) on an sm_80-sm_89 config (``gpu="a100"``) Triton emits tensor-core ``mma.sync``,
``ldmatrix`` and the ``cp.async`` pipeline, which gpusim runs on the tensor pipe. On an sm_90 config Triton
emits Hopper's ``wgmma`` for fp16/tf32 dots, which gpusim does not model: that launch ends in an
``UnsupportedPTXError`` naming it. Launch options (``regs=``, ``timing=``, ``cache_control=``, ...) are
``GPU.launch``'s (docs/python-kernels.md).
``python examples/triton_kernels.py`` runs each and prints its cycles; tests/test_python_kernels.py
checks them against numpy.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

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
    try:
        matmul(a, b, precision="tf32")
    except gpusim.UnsupportedPTXError as error:
        print(f"matmul tf32 not run: {error.detail}")
