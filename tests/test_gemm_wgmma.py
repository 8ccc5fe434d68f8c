"""programs/gemm_wgmma.cu: the Hopper BF16 GEMM (cp.async 4-stage pipeline into 128-byte-swizzled shared tiles,
two warpgroups of wgmma.mma_async m64n256k16 per 128 x 256 block tile) against numpy, and its throughput against
the two roofs that bound it on one SM: the config's dense tensor peak and the L2 share of the SM.

Every expected number is derived here: the values from numpy (bf16 bit patterns decoded exactly), the tolerance
from fp32 rounding, the peak from ``tensor_flops_per_cycle_per_sm``, the L2 roof from ``l2_bytes_per_cycle``
and the tile's FLOPs per byte. Throughput is the steady state of the mainloop, the difference of two runs whose
K differ (the prologue, the last wgmma's latency and the epilogue's stores cancel), with the operands already in
L2 (each launch runs twice; the second is timed), so what is measured is the K loop as a large GEMM runs it.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.labs.support import PROGRAMS_DIR
from gpusim.programs.catalog import run_program

PROGRAM = PROGRAMS_DIR / "gemm_wgmma.ptx"
BM, BN, BK = 128, 256, 64
THREADS = 256
SHARED = 4 * (BM + BN) * 128 + 1024        # 4 stages of 128-byte rows, + the 1024-byte swizzle alignment


def _bf16_bits(rng, rows: int, k: int) -> np.ndarray:
    return (rng.uniform(-1, 1, (rows, k)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _values(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _bound(k: int) -> float:
    """|C - A B^T| for inputs in [-1, 1]: the products are exact in fp32 (8 + 8 significand bits), each wgmma
    rounds its fp32 accumulator once, ceil(k / 16) roundings of a partial sum of magnitude <= k, each within
    2^-24 of it (fp32's unit roundoff)."""
    return -(-k // 16) * k * 2.0 ** -24


def _launch(gpu, a_bits, b_bits, timing=True, times=1):
    """Run the kernel ``times`` times on the same device arrays; the last run and C."""
    m, k = a_bits.shape
    n = b_bits.shape[0]
    kernel = gpu.load(str(PROGRAM))["gemm_wgmma"]
    a, b = gpu.to_device(a_bits), gpu.to_device(b_bits)
    c = gpu.zeros(m * n, np.float32)
    for _ in range(times):
        run = gpu.launch(kernel, grid=(-(-n // BN), -(-m // BM)), block=THREADS, shared_bytes=SHARED,
                         timing=timing, args=[a, b, c, np.int32(m), np.int32(n), np.int32(k)])
    return run, c.get().reshape(m, n)


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
@pytest.mark.parametrize("m, n, k", [(150, 264, 200), (64, 40, 24)])
def test_matches_numpy(timing, m, n, k):
    """Edge tiles (M, N not multiples of 128 x 256; K not a multiple of the 64-element slice, and shorter than
    the pipeline's 2 slices ahead) on both paths: within the fp32 rounding bound of the exact product."""
    rng = np.random.default_rng(7)
    a, b = _bf16_bits(rng, m, k), _bf16_bits(rng, n, k)
    gpu = gpusim.GPU("h100-sxm", sms=2)
    _, c = _launch(gpu, a, b, timing=timing)
    expect = _values(a) @ _values(b).T
    assert np.abs(c - expect).max() <= _bound(k)
    assert np.any(c != 0)


def test_program_runs_on_both_paths():
    """The shipped TOML (programs/gemm_wgmma.toml) checks itself against numpy, functional and timed."""
    for timing in (False, True):
        result = run_program("gemm_wgmma", timing=timing)
        assert result.ok, result.summary()


def _steady(gpu, ks=(256, 512)):
    """FLOP/cycle/SM of the K loop on one 128 x 256 tile (the difference of two K), the longer run, and the
    runs' cycles. The operands of both K fit in the slice's L2, so the timed (second) launch reads them from L2."""
    rng = np.random.default_rng(1)
    runs = []
    for k in ks:
        a, b = _bf16_bits(rng, BM, k), _bf16_bits(rng, BN, k)
        assert (BM + BN) * k * 2 <= gpu.config.l2_bytes
        run, c = _launch(gpu, a, b, times=2)
        assert np.abs(c - _values(a) @ _values(b).T).max() <= _bound(k)
        runs.append(run)
    rate = 2 * BM * BN * (ks[1] - ks[0]) / (runs[1].cycles - runs[0].cycles) / gpu.config.sms
    return rate, runs[1]


def _l2_roof(config) -> float:
    """FLOP/cycle/SM that the SM's share of L2 bandwidth feeds: every K step reads BM + BN rows of 2 bytes for
    2 BM BN FLOPs."""
    flop_per_byte = 2 * BM * BN / ((BM + BN) * 2)
    return config.l2_bytes_per_cycle / config.sms * flop_per_byte


@pytest.mark.parametrize("config", ["h100-sxm", "h200"])
def test_fed_at_the_sm_port_rate_the_mainloop_reaches_the_dense_peak(config):
    """With L2 delivering the SM's port rate (interconnect_bytes_per_cycle_per_sm, above the 48 B/clk the tile
    needs at peak), the mainloop keeps the tensor pipe >= 85 % busy: FLOP/clk/SM >= 0.85 x the dense BF16 peak
    (and not above it); the whole run's tensor-pipe busy metric is its FLOPs over the peak."""
    base = gpusim.GPU(config, sms=1).config
    port = base.interconnect_bytes_per_cycle_per_sm
    gpu = gpusim.GPU(config, sms=1, l2_bytes_per_cycle=port, l2_write_bytes_per_cycle=port)
    peak = gpu.config.tensor_flops_per_cycle_per_sm
    assert _l2_roof(gpu.config) >= peak                       # the memory system is not what binds here
    rate, run = _steady(gpu)
    assert 0.85 * peak <= rate <= 1.01 * peak, (rate, peak)
    flops = run.metrics["gpusim__tensor_flops.sum"]
    assert flops == 2 * BM * BN * 512
    assert run.metrics["sm__inst_executed_pipe_tensor_op_gmma.sum"] == 8 * 512 // 16   # 8 warps, one per k16
    busy = run.metrics["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"] / 100
    assert busy == pytest.approx(flops / run.cycles / peak, rel=0.02)


@pytest.mark.parametrize("config", ["h100-sxm", "h200"])
def test_as_configured_the_mainloop_is_l2_bound(config):
    """On h100-sxm and h200 as configured the SM's share of L2 (l2_bytes_per_cycle / sms) feeds less than the tile needs
    at the tensor peak: the mainloop runs at >= 85 % of that L2 roof (and not above it), L2 nearly saturated."""
    gpu = gpusim.GPU(config, sms=1)
    roof = _l2_roof(gpu.config)
    assert roof < gpu.config.tensor_flops_per_cycle_per_sm
    rate, run = _steady(gpu)
    assert 0.85 * roof <= rate <= 1.01 * roof, (rate, roof)
    assert run.metrics["lts__throughput.avg.pct_of_peak_sustained_elapsed"] >= 85
