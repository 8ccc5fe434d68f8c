"""programs/gemm_hopper.cu: the Hopper BF16 GEMM as real kernels are written (TMA tensor copies into
128-byte-swizzled stages, a producer warp and mbarrier pipeline, two wgmma consumer warpgroups) against numpy.

The values come from numpy (bf16 bit patterns decoded exactly); the tolerance from fp32 rounding: each wgmma
rounds its fp32 accumulator once, ceil(k / 16) roundings of partial sums of magnitude <= k (inputs in [-1, 1]).
The TMA's 128-byte swizzle and wgmma's 128-byte-swizzle descriptors are modelled independently (semantics/tma.py,
semantics/wgmma.py): a wrong chunk permutation in either gives a wrong C.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.labs.support import PROGRAMS_DIR
from gpusim.programs.catalog import run_program

PROGRAM = PROGRAMS_DIR / "gemm_hopper.ptx"
BM, BN, BK = 128, 256, 64
THREADS = 384
SHARED = 4 * (BM + BN) * 128 + 1024 + 2 * 4 * 8     # stages, swizzle alignment, full/empty mbarriers


def _bf16_bits(rng, rows: int, k: int) -> np.ndarray:
    return (rng.uniform(-1, 1, (rows, k)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _values(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _bound(k: int) -> float:
    return -(-k // 16) * k * 2.0 ** -24


def run_gemm(gpu, a_bits, b_bits, timing=True):
    """One launch of gemm_hopper on ``gpu``: the Run and C."""
    m, k = a_bits.shape
    n = b_bits.shape[0]
    kernel = gpu.load(str(PROGRAM))["gemm_hopper"]
    a, b = gpu.to_device(a_bits), gpu.to_device(b_bits)
    tma = gpu.tensor_map(a, box=[BK, BM], swizzle=128)
    tmb = gpu.tensor_map(b, box=[BK, BN], swizzle=128)
    c = gpu.zeros(m * n, np.float32)
    run = gpu.launch(kernel, grid=(-(-n // BN), -(-m // BM)), block=THREADS, shared_bytes=SHARED, timing=timing,
                     args=[tma, tmb, c, np.int32(m), np.int32(n), np.int32(k)])
    return run, c.get().reshape(m, n)


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
@pytest.mark.parametrize("m, n, k", [(150, 264, 200), (40, 24, 520)])
def test_matches_numpy(timing, m, n, k):
    """Edge tiles (M, N, K not multiples of the tiles: TMA's zero fill) and a K longer than the 4 stages (the
    pipeline's buffers are reused, their mbarrier phases flip)."""
    rng = np.random.default_rng(9)
    a, b = _bf16_bits(rng, m, k), _bf16_bits(rng, n, k)
    gpu = gpusim.GPU("h100-sxm", sms=2)
    _, c = run_gemm(gpu, a, b, timing=timing)
    expect = _values(a) @ _values(b).T
    assert np.abs(c - expect).max() <= _bound(k)
    assert np.any(c != 0)


def test_program_runs_on_both_paths():
    """The shipped TOML (programs/gemm_hopper.toml, its [[tensor_maps]]) checks itself against numpy."""
    for timing in (False, True):
        result = run_program("gemm_hopper", timing=timing)
        assert result.ok, result.summary()
