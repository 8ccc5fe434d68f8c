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


def _launch(gpu, name, a_bits, b_bits, a_rows, b_rows, grid, cluster, timing):
    """One launch of kernel ``name`` of programs/gemm_hopper.ptx: A's tensor map box {64, a_rows}, B's
    {64, b_rows}, grid (x, y) and cluster dims as given; the Run and C."""
    m, k = a_bits.shape
    n = b_bits.shape[0]
    kernel = gpu.load(str(PROGRAM))[name]
    a, b = gpu.to_device(a_bits), gpu.to_device(b_bits)
    tma = gpu.tensor_map(a, box=[BK, a_rows], swizzle=128)
    tmb = gpu.tensor_map(b, box=[BK, b_rows], swizzle=128)
    c = gpu.zeros(m * n, np.float32)
    run = gpu.launch(kernel, grid=grid, block=THREADS, shared_bytes=SHARED, timing=timing, cluster=cluster,
                     args=[tma, tmb, c, np.int32(m), np.int32(n), np.int32(k)])
    return run, c.get().reshape(m, n)


def run_gemm(gpu, a_bits, b_bits, timing=True):
    """gemm_hopper: one CTA per 128 x 256 tile."""
    m, n = a_bits.shape[0], b_bits.shape[0]
    return _launch(gpu, "gemm_hopper", a_bits, b_bits, BM, BN, (-(-n // BN), -(-m // BM)), None, timing)


def run_cluster_gemm(gpu, a_bits, b_bits, timing=True):
    """gemm_hopper_cluster: 2 x 1 clusters, each CTA loading half of the pair's B tile with .multicast::cluster
    to both."""
    m, n = a_bits.shape[0], b_bits.shape[0]
    return _launch(gpu, "gemm_hopper_cluster", a_bits, b_bits, BM, BN // 2, (2 * -(-n // BN), -(-m // (2 * BM))),
                   (2, 1, 1), timing)


def run_cluster2x2_gemm(gpu, a_bits, b_bits, timing=True):
    """gemm_hopper_cluster2x2: 2 x 2 clusters, each CTA multicasting half of its A tile to its cluster row and
    half of its B tile to its cluster column."""
    m, n = a_bits.shape[0], b_bits.shape[0]
    return _launch(gpu, "gemm_hopper_cluster2x2", a_bits, b_bits, BM // 2, BN // 2,
                   (2 * -(-n // (2 * BN)), 2 * -(-m // (2 * BM))), (2, 2, 1), timing)


def run_persistent_gemm(gpu, a_bits, b_bits, timing=True, clusters=None):
    """gemm_hopper_persistent: ``clusters`` 2 x 2 clusters (default: as many as are resident at once, at most one
    per 256 x 512 super-tile), each walking its super-tiles with one pipeline."""
    m, n = a_bits.shape[0], b_bits.shape[0]
    tiles = -(-n // (2 * BN)) * -(-m // (2 * BM))
    clusters = clusters or min(tiles, gpu.max_active_clusters((2, 2, 1)))
    return _launch(gpu, "gemm_hopper_persistent", a_bits, b_bits, BM // 2, BN // 2, (2 * clusters, 2), (2, 2, 1),
                   timing)


def _matches_numpy(runner, m, n, k, seed, sms, timing):
    """C of ``runner`` on random bf16 inputs against numpy, within the fp32 rounding bound; C."""
    rng = np.random.default_rng(seed)
    a, b = _bf16_bits(rng, m, k), _bf16_bits(rng, n, k)
    _, c = runner(gpusim.GPU("h100-sxm", sms=sms), a, b, timing=timing)
    assert np.abs(c - _values(a) @ _values(b).T).max() <= _bound(k)
    return c


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
@pytest.mark.parametrize("m, n, k", [(150, 264, 200), (40, 24, 520)])
def test_matches_numpy(timing, m, n, k):
    """Edge tiles (M, N, K not multiples of the tiles: TMA's zero fill) and a K longer than the 4 stages (the
    pipeline's buffers are reused, their mbarrier phases flip)."""
    c = _matches_numpy(run_gemm, m, n, k, 9, 2, timing)
    assert np.any(c != 0)


def test_program_runs_on_both_paths():
    """The shipped TOML (programs/gemm_hopper.toml, its [[tensor_maps]]) checks itself against numpy."""
    for timing in (False, True):
        result = run_program("gemm_hopper", timing=timing)
        assert result.ok, result.summary()


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
def test_cluster_multicast_matches_numpy(timing):
    """Each CTA of a pair multicasts its half of B into both CTAs' stages: a half delivered to one CTA only, to
    the wrong offset or with its bytes counted on the wrong mbarrier gives a wrong C or a hang. M spans an odd
    number of 128-row blocks (the second CTA of the last pair computes rows past M, all zero-filled)."""
    _matches_numpy(run_cluster_gemm, 300, 264, 200, 4, 4, timing)


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
def test_2x2_cluster_multicast_matches_numpy(timing):
    """Each CTA multicasts its half of A to its cluster row (ctaMask 0b11 << 2y) and its half of B to its cluster
    column (0b101 << x); a stage is refilled once the three CTAs writing it have released it. M and N span an odd
    number of tiles (a cluster's CTAs past M or N compute zero-filled tiles), K more than 4 stages."""
    _matches_numpy(run_cluster2x2_gemm, 300, 600, 520, 6, 4, timing)


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
@pytest.mark.parametrize("clusters", [1, 2])
def test_persistent_matches_numpy(timing, clusters):
    """One or two clusters walk 2 x 2 = 4 super-tiles (the last row and column past M and N: zero-filled, not
    stored) with one pipeline each: K of 9 slices is not a multiple of the 4 stages, so each tile starts at
    another stage and phase, and a stage is refilled with the next tile's slice while C is stored."""
    rng = np.random.default_rng(8)
    m, n, k = 300, 600, 520
    a, b = _bf16_bits(rng, m, k), _bf16_bits(rng, n, k)
    run, c = run_persistent_gemm(gpusim.GPU("h100-sxm", sms=4 * clusters), a, b, timing=timing, clusters=clusters)
    assert np.abs(c - _values(a) @ _values(b).T).max() <= _bound(k)
    assert run.grid == (2 * clusters, 2, 1)


def test_max_active_clusters_follows_the_gpcs():
    """gpc_sms-SM GPCs each hold gpc_sms // 4 four-CTA clusters; the SMs past the last whole GPC hold none; a
    slice smaller than a GPC is one GPC."""
    gpu = gpusim.GPU("h100-sxm")
    gpc = gpu.config.gpc_sms
    assert gpu.max_active_clusters((2, 2, 1)) == (gpu.config.sms // gpc) * (gpc // 4)
    assert gpu.max_active_clusters((2, 1, 1), blocks_per_sm=2) == (gpu.config.sms // gpc) * (gpc // 2) * 2
    assert gpusim.GPU("h100-sxm", sms=8).max_active_clusters(4) == 2
    assert gpusim.GPU("a100").max_active_clusters(2) == 0


def test_multicast_reads_each_tile_once_per_cluster():
    """L2 load sectors: a plain CTA reads its 128 rows of A and 256 of B per K slice; a CTA of a 2 x 1 pair
    reads its 128 rows of A and 128 of B, the other 128 arriving from its partner: (128 + 128) / (128 + 256) =
    2/3 of the plain kernel's load traffic; a CTA of a 2 x 2 cluster reads 64 rows of A and 128 of B: 1/2. The
    same C each time."""
    rng = np.random.default_rng(5)
    m, n, k = 256, 512, 256
    a, b = _bf16_bits(rng, m, k), _bf16_bits(rng, n, k)
    loads = []
    for runner in (run_gemm, run_cluster_gemm, run_cluster2x2_gemm):
        gpu = gpusim.GPU("h100-sxm", sms=4)
        run, c = runner(gpu, a, b)
        assert np.abs(c - _values(a) @ _values(b).T).max() <= _bound(k)
        loads.append(run.counters["l2_sectors"] - run.counters["l2_store_sectors"])
    blocks = (m // BM) * (n // BN)
    sector = 32
    assert loads[0] == blocks * (BM + BN) * k * 2 // sector
    assert loads[1] == blocks * (BM + BN // 2) * k * 2 // sector
    assert loads[2] == blocks * (BM // 2 + BN // 2) * k * 2 // sector


def test_layer_gemm_runs_the_persistent_bf16_kernel():
    """gpusim.labs.tensor_gemm's Hopper layer: C = W X^T in bf16 by gemm_hopper_persistent_bf16 (the prefill lab's
    wgmma phase), checked against numpy inside run() (each wgmma's fp32 rounding, then bf16's) on both paths; rows
    and tokens not multiples of the super-tile or of the 64 x 64 TMA store box (TMA clips the store); refused
    where there is no wgmma."""
    from gpusim.errors import LaunchError
    from gpusim.labs.tensor_gemm import HopperLayerGemm, layer_gemm

    layer = layer_gemm(gpusim.GPU("h100-sxm", sms=4), "bf16-wgmma", 300, 200)
    assert isinstance(layer, HopperLayerGemm) and layer.kernel_name == "gemm_hopper_persistent_bf16"
    for tokens, timing in ((40, False), (40, True), (600, True)):
        run, correct = layer.run(tokens, timing=timing)
        assert correct and run.grid == (2, 2, 1)          # one cluster: all 4 SMs
    # timed: the staging writes of a store instruction's 8 rows fall in 8 different 16-byte chunks of the swizzle
    assert run.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"] == 0
    with pytest.raises(LaunchError, match="wgmma"):
        layer_gemm(gpusim.GPU("a100", sms=4), "bf16-wgmma", 256, 128)
