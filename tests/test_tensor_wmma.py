"""WMMA (nvcuda::wmma, as nvcc -arch=sm_90 emits it) against numpy: every shape x type x layout of
tests/ptx/tensor/wmma.cu (issue 14). The fragment layout is gpusim's own (docs/tensor-cores.md); these
tests check that load, mma and store agree on it and that D = A B + C."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from tests.test_tensor_mma import bf16_bits, bf16_value, within_one_ulp

HERE = Path(__file__).parent / "ptx" / "tensor"
SHAPES = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16), "m16n16k8": (16, 16, 8)}
KERNELS = [f"wmma_{t}_{s}_{lay}" for t in ("f16_f32", "f16_f16", "bf16_f32", "s8_s32", "u8_s32")
           for s in ("m16n16k16", "m32n8k16", "m8n32k16") for lay in ("row_col_row", "col_row_col")]
KERNELS += ["wmma_tf32_f32_m16n16k8_row_col_row", "wmma_tf32_f32_m16n16k8_col_row_col"]


@pytest.fixture(scope="module")
def setup():
    gpu = gpusim.GPU("h100-sxm", sms=1)
    return gpu, gpu.load(HERE / "wmma.ptx")


def _store(matrix: np.ndarray, layout: str) -> np.ndarray:
    return np.ascontiguousarray(matrix if layout == "row" else matrix.T)


@pytest.mark.parametrize("name", KERNELS)
def test_wmma_matches_numpy(setup, name):
    gpu, mod = setup
    parts = name.split("_")
    kind, acc, shape, la, lb, lc = parts[1], parts[2], parts[3], parts[4], parts[5], parts[6]
    m, n, k = SHAPES[shape]
    rng = np.random.default_rng(abs(hash(name)) % 1000)
    if kind in ("s8", "u8"):
        lo, hi, dt = (-128, 128, np.int8) if kind == "s8" else (0, 256, np.uint8)
        a = rng.integers(lo, hi, (m, k)).astype(dt)
        b = rng.integers(lo, hi, (k, n)).astype(dt)
        c = rng.integers(-(1 << 20), 1 << 20, (m, n)).astype(np.int32)
        a_store, b_store, av, bv = a, b, a.astype(np.int64), b.astype(np.int64)
    elif kind == "bf16":
        a_bits = bf16_bits(rng.standard_normal((m, k)))
        b_bits = bf16_bits(rng.standard_normal((k, n)))
        a_store, b_store, av, bv = a_bits, b_bits, bf16_value(a_bits), bf16_value(b_bits)
        c = rng.standard_normal((m, n)).astype(np.float32)
    elif kind == "tf32":
        a_store = rng.standard_normal((m, k)).astype(np.float32)
        b_store = rng.standard_normal((k, n)).astype(np.float32)

        def rna(x):   # cvt.rna.tf32.f32, which the kernel applies to the fragments
            return ((x.view(np.uint32).astype(np.uint64) + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)
        av, bv = rna(a_store).astype(np.float64), rna(b_store).astype(np.float64)
        c = rng.standard_normal((m, n)).astype(np.float32)
    else:
        a_store = (rng.standard_normal((m, k)) / 4).astype(np.float16)
        b_store = (rng.standard_normal((k, n)) / 4).astype(np.float16)
        av, bv = a_store.astype(np.float64), b_store.astype(np.float64)
        c = rng.standard_normal((m, n)).astype(np.float16 if acc == "f16" else np.float32)
    d = gpu.zeros(m * n, c.dtype)
    gpu.launch(mod[name], grid=1, block=32, timing=False,
               args=[gpu.to_device(_store(a_store, la)), gpu.to_device(_store(b_store, lb)),
                     gpu.to_device(_store(c, lc)), d])
    got = d.get().reshape((m, n) if lc == "row" else (n, m))
    got = got if lc == "row" else got.T
    ref = av @ bv + c.astype(np.float64 if kind not in ("s8", "u8") else np.int64)
    if kind in ("s8", "u8"):
        assert np.array_equal(got, ref.astype(np.int32))
    elif acc == "f16":
        assert np.all(np.abs(got.astype(np.float64) - ref) <= np.spacing(np.abs(ref).astype(np.float16)))
    else:
        within_one_ulp(got, ref)


def test_wmma_timed_matches_functional(setup):
    gpu, mod = setup
    rng = np.random.default_rng(4)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 16)).astype(np.float16)
    c = rng.standard_normal((16, 16)).astype(np.float32)
    d = gpu.zeros(256, np.float32)
    run = gpu.launch(mod["wmma_f16_f32_m16n16k16_row_col_row"], grid=1, block=32,
                     args=[gpu.to_device(a), gpu.to_device(np.ascontiguousarray(b.T)), gpu.to_device(c), d])
    within_one_ulp(d.get().reshape(16, 16), a.astype(np.float64) @ b.astype(np.float64) + c)
    # one 16 x 16 f16 tile is 512 bytes = 16 sectors; f32 C is 1024 bytes = 32 sectors
    assert run.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 16 + 16 + 32
