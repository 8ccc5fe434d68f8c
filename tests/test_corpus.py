"""The conformance corpus: kernels of the classic CUDA suites' algorithms, checked against numpy.

Every ``tests/corpus/NAME.cu`` reimplements algorithms of the NVIDIA CUDA samples, Rodinia or
PolyBench/GPU (written here from the algorithms, not copied); ``NAME.ptx`` is its committed nvcc
output for sm_90 (``scripts/regen_corpus.sh``, with ptxas's register counts as ``// gpusim: regs=``
lines). Each case below launches its kernels through the public API on a two-SM H100 slice, once
functional-only and once timed, and compares every output with a reference computed here in numpy
(float64 unless said otherwise, never from the simulator).

Tolerances are derived, not tuned: a sum or dot product of k float32 terms, in any order and with or
without fma contraction (nvcc contracts ``a * b + c`` into ``fma.rn`` by default), is within
``gamma(k) * sum(|terms|)`` of the exact value (Higham, Accuracy and Stability of Numerical Algorithms,
sec. 3.1, u = 2^-24); integer and data-movement kernels must match exactly. Kernels with ``expf`` /
``logf`` (which nvcc expands to a range reduction around ``ex2.approx.ftz.f32``, 2 ulp max for ``expf``
in the CUDA math library's table) state their bound where they are checked.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import gpusim

CORPUS = Path(__file__).parent / "corpus"
U = 2.0 ** -24
"""Unit roundoff of float32 (round to nearest)."""


def gamma(k: int) -> float:
    """Higham's gamma_k = k u / (1 - k u): the relative error bound of k float32 roundings."""
    return k * U / (1 - k * U)


def assert_close(what: str, actual, expected, atol) -> None:
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    atol = np.broadcast_to(np.asarray(atol, dtype=np.float64), expected.shape)
    error = np.abs(actual - expected)
    bad = ~(error <= atol)
    if bad.any():
        index = np.unravel_index(int(np.argmax(np.where(bad, error - atol, -np.inf))), expected.shape)
        raise AssertionError(f"{what}: {int(bad.sum())} of {expected.size} values off; worst at {index}: got "
                             f"{actual[index]!r}, expected {expected[index]!r} (tolerance {atol[index]:.3g})")


def assert_equal(what: str, actual, expected) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    bad = actual != expected
    if bad.any():
        index = np.unravel_index(int(np.argmax(bad)), expected.shape)
        raise AssertionError(f"{what}: {int(bad.sum())} of {expected.size} values differ; first at {index}: "
                             f"got {actual[index]!r}, expected {expected[index]!r}")


def dot_bound(abs_a, abs_b, k: int) -> np.ndarray:
    """Error bound of float32 products A @ B with k terms per output (plus two roundings of scaling)."""
    return gamma(k + 2) * (np.asarray(abs_a, np.float64) @ np.asarray(abs_b, np.float64))


class Ctx:
    """What a case gets: the GPU, module loading, and launches that run timed or functional-only."""

    def __init__(self, timing: bool):
        self.timing = timing
        self.gpu = gpusim.GPU("h100-sxm", sms=2)
        self.rng = np.random.default_rng(12)
        self.modules: dict[str, gpusim.api.gpu.Module] = {}
        self.launches = 0

    def kernel(self, file: str, name: str):
        if file not in self.modules:
            self.modules[file] = self.gpu.load(CORPUS / f"{file}.ptx")
        return self.modules[file][name]

    def launch(self, file: str, name: str, grid, block, *args, shared: int = 0):
        return self.launch_kernel(self.kernel(file, name), grid, block, *args, shared=shared)

    def launch_kernel(self, kernel, grid, block, *args, shared: int = 0):
        run = self.gpu.launch(kernel, grid=grid, block=block, args=list(args), shared_bytes=shared,
                              timing=self.timing)
        self.launches += 1
        if self.timing:
            assert run.cycles > 0 and run.seconds > 0, f"{kernel.name}: a timed run without time"
        return run

    def dev(self, array):
        return self.gpu.to_device(np.ascontiguousarray(array))

    def uniform(self, low, high, shape, dtype=np.float32):
        return self.rng.uniform(low, high, shape).astype(dtype)


@dataclass(frozen=True)
class Case:
    name: str
    suite: str
    kernels: tuple[str, ...]
    run: Callable[[Ctx], None]
    slow: bool = False


CASES: dict[str, Case] = {}


def case(name: str, suite: str, kernels: tuple[str, ...], slow: bool = False):
    def register(fn: Callable[[Ctx], None]):
        assert name not in CASES
        CASES[name] = Case(name, suite, kernels, fn, slow)
        return fn
    return register


def blocks(n: int, per: int) -> int:
    return (n + per - 1) // per


# ---------------------------------------------------------------------------------------------- reductions
REDUCE_N, REDUCE_BLOCK = 2000, 128


def block_sums(x: np.ndarray, chunk: int, n_blocks: int, stride: int | None = None):
    """Reference partial sums: block b sums the elements i with (i mod stride) in [b chunk, (b+1) chunk)."""
    stride = stride or chunk * n_blocks
    index = np.arange(x.size)
    owner = (index % stride) // chunk
    exact = np.array([x[owner == b].astype(np.float64).sum() for b in range(n_blocks)])
    magnitude = np.array([np.abs(x[owner == b]).astype(np.float64).sum() for b in range(n_blocks)])
    counts = np.array([(owner == b).sum() for b in range(n_blocks)])
    return exact, gamma(int(counts.max()) + 1) * magnitude


def _reduce_case(kernel: str, per_block: int, grid: int | None = None, stride_blocks: int | None = None,
                 shared: bool = True):
    def run(ctx: Ctx):
        x = ctx.uniform(0.5, 1.0, REDUCE_N)
        n_blocks = grid or blocks(REDUCE_N, per_block)
        out = ctx.gpu.zeros(n_blocks, np.float32)
        ctx.launch("reduction", kernel, n_blocks, REDUCE_BLOCK, ctx.dev(x), out, np.uint32(REDUCE_N),
                   shared=REDUCE_BLOCK * 4 if shared else 0)
        exact, bound = block_sums(x, per_block, n_blocks, stride_blocks)
        assert_close(kernel, out.get(), exact, bound)
    return run


for _name, _per, _grid, _shared in (("reduce0", 128, None, True), ("reduce1", 128, None, True),
                                    ("reduce2", 128, None, True), ("reduce3", 256, None, True),
                                    ("reduce4", 256, None, True), ("reduce5", 256, None, False),
                                    ("reduce6", 256, 3, False), ("reduce7", 128, 3, False),
                                    ("reduce_cg_tile32", 128, 3, False)):
    case(_name, "CUDA samples: reduction", (_name,))(_reduce_case(_name, _per, _grid, shared=_shared))


@case("reduce_cg_tile16", "CUDA samples: reduction (cooperative groups)", ("reduce_cg_tile16",))
def _reduce_cg_tile16(ctx: Ctx):
    n = 1000                                      # not a multiple of 16: the last tile is half padding
    x = ctx.rng.integers(-1000, 1000, n).astype(np.int32)
    tiles = blocks(n, 16)
    sums, maxima = ctx.gpu.zeros(tiles, np.int32), ctx.gpu.zeros(tiles, np.int32)
    ctx.launch("reduction", "reduce_cg_tile16", blocks(n, 128), 128, ctx.dev(x), sums, maxima, np.uint32(n))
    padded = np.zeros(tiles * 16, np.int64)
    padded[:n] = x
    assert_equal("tile sums", sums.get(), padded.reshape(tiles, 16).sum(axis=1))
    assert_equal("tile maxima", maxima.get(), padded.reshape(tiles, 16).max(axis=1))


@case("reduce_cg_binary_partition", "CUDA samples: binaryPartitionCG", ("reduce_cg_binary_partition",))
def _binary_partition(ctx: Ctx):
    n = 1000
    x = ctx.rng.integers(-500, 500, n).astype(np.int32)
    count, total = ctx.gpu.zeros(1, np.int32), ctx.gpu.zeros(1, np.int32)
    ctx.launch("reduction", "reduce_cg_binary_partition", blocks(n, 128), 128, ctx.dev(x), count, total,
               np.uint32(n))
    odd = x[x % 2 != 0]
    assert int(count.get()[0]) == odd.size, f"odd count {int(count.get()[0])}, numpy {odd.size}"
    assert int(total.get()[0]) == int(odd.sum()), f"odd sum {int(total.get()[0])}, numpy {int(odd.sum())}"


@case("reduce_double", "CUDA samples: reduction (double)", ("reduce_double",))
def _reduce_double(ctx: Ctx):
    n, grid, block = 3000, 3, 128
    x = ctx.rng.uniform(-1, 1, n)
    out = ctx.gpu.zeros(grid, np.float64)
    ctx.launch("reduction", "reduce_double", grid, block, ctx.dev(x), out, np.uint32(n))
    owner = (np.arange(n) % (grid * block)) // block
    exact = np.array([math.fsum(x[owner == b]) for b in range(grid)])
    magnitude = np.array([np.abs(x[owner == b]).sum() for b in range(grid)])
    assert_close("double partial sums", out.get(), exact, (n + 1) * 2.0 ** -53 * magnitude * 1.01)


# ---------------------------------------------------------------------------------------------- scans
@case("warp_scan", "CUDA samples: shfl_scan", ("warp_scan",))
def _warp_scan(ctx: Ctx):
    n = 1024
    x = ctx.uniform(-1.0, 1.0, n)
    out = ctx.gpu.zeros(n, np.float32)
    ctx.launch("scan", "warp_scan", blocks(n, 256), 256, ctx.dev(x), out, np.uint32(n))
    rows = x.reshape(-1, 32).astype(np.float64)
    assert_close("warp inclusive scan", out.get(), np.cumsum(rows, axis=1).ravel(),
                 (gamma(32) * np.cumsum(np.abs(rows), axis=1)).ravel())


@case("block_scan", "CUDA samples: shfl_scan", ("block_scan", "add_block_offsets"))
def _block_scan(ctx: Ctx):
    n, block = 3000, 256
    x = ctx.rng.integers(-100, 100, n).astype(np.int32)
    nb = blocks(n, block)
    data, sums = ctx.gpu.zeros(n, np.int32), ctx.gpu.zeros(nb, np.int32)
    ctx.launch("scan", "block_scan", nb, block, ctx.dev(x), data, sums, np.uint32(n))
    padded = np.zeros(nb * block, np.int64)
    padded[:n] = x
    assert_equal("per-block scans", data.get(), np.cumsum(padded.reshape(nb, block), axis=1).ravel()[:n])
    scanned = ctx.gpu.zeros(nb, np.int32)
    ctx.launch("scan", "block_scan", 1, 32, sums, scanned, np.uint64(0), np.uint32(nb))
    ctx.launch("scan", "add_block_offsets", nb, block, data, scanned, np.uint32(n))
    assert_equal("device-wide scan", data.get(), np.cumsum(x.astype(np.int64)))


# ---------------------------------------------------------------------------------------------- atomics
@case("histogram256", "CUDA samples: histogram", ("histogram256",))
def _histogram(ctx: Ctx):
    n_bytes = 8192
    data = np.minimum(ctx.rng.exponential(40.0, n_bytes), 255).astype(np.uint8)  # skewed: bins collide
    hist = ctx.gpu.zeros(256, np.uint32)
    ctx.launch("histogram", "histogram256", 4, 128, ctx.dev(data), np.uint32(n_bytes // 4), hist)
    assert_equal("histogram", hist.get(), np.bincount(data, minlength=256))


@case("histogram_match_any", "NVIDIA Volta blog / CUDA samples: match_any warp aggregation",
      ("histogram_match_any",))
def _histogram_match(ctx: Ctx):
    n = 3000                                      # not a multiple of the block: a partial last warp
    data = np.minimum(ctx.rng.exponential(8.0, n), 255).astype(np.uint8)   # many equal bins in a warp
    hist = ctx.gpu.zeros(256, np.uint32)
    ctx.launch("histogram", "histogram_match_any", 3, 128, ctx.dev(data), np.uint32(n), hist)
    assert_equal("histogram", hist.get(), np.bincount(data, minlength=256))


@case("rgba_images", "CUDA samples: image kernels on uchar4 pixels", ("rgba_luma", "rgba_invert"))
def _rgba(ctx: Ctx):
    n = 1000
    pixels = ctx.rng.integers(0, 256, (n, 4)).astype(np.uint8)
    luma, inverted = ctx.gpu.zeros(n, np.uint8), ctx.gpu.zeros((n, 4), np.uint8)
    src = ctx.dev(pixels)
    ctx.launch("image_rgba", "rgba_luma", blocks(n, 128), 128, src, luma, np.int32(n))
    ctx.launch("image_rgba", "rgba_invert", blocks(n, 128), 128, src, inverted, np.int32(n))
    p = pixels.astype(np.int64)
    assert_equal("luma", luma.get(), ((77 * p[:, 0] + 150 * p[:, 1] + 29 * p[:, 2] + 128) >> 8).astype(np.uint8))
    expected = pixels.copy()
    expected[:, :3] = 255 - pixels[:, :3]
    assert_equal("inverted", inverted.get(), expected)


def _vote_input(ctx: Ctx):
    n, block = 1000, 128                         # the last block is partly past n
    x = ctx.rng.integers(-3, 40, n).astype(np.int32)
    x[:64] = np.abs(x[:64]) + 1                  # warps 0-1: all true
    x[64:96] = -1                                # warp 2: all false
    x[128:256] = 5                               # block 1: all true
    nb = blocks(n, block)
    predicate = np.zeros(nb * block, bool)
    predicate[:n] = x > 0
    return n, block, nb, x, predicate


@case("warp_votes", "CUDA samples: simpleVoteIntrinsics", ("warp_votes",))
def _warp_votes(ctx: Ctx):
    n, block, nb, x, predicate = _vote_input(ctx)
    warps = nb * block // 32
    ballots, any_, all_ = (ctx.gpu.zeros(warps, t) for t in (np.uint32, np.int32, np.int32))
    src = ctx.dev(x)
    ctx.launch("vote", "warp_votes", nb, block, src, ballots, any_, all_, np.uint32(n))
    lanes = predicate.reshape(warps, 32)
    assert_equal("ballots", ballots.get(), (lanes * (1 << np.arange(32, dtype=np.uint64))).sum(axis=1))
    assert_equal("any", any_.get() != 0, lanes.any(axis=1))
    assert_equal("all", all_.get() != 0, lanes.all(axis=1))


@case("block_votes", "CUDA samples: simpleVoteIntrinsics (__syncthreads_count/and/or)", ("block_votes",))
def _block_votes(ctx: Ctx):
    n, block, nb, x, predicate = _vote_input(ctx)
    src = ctx.dev(x)
    counts, ands, ors = (ctx.gpu.zeros(nb, np.int32) for _ in range(3))
    ctx.launch("vote", "block_votes", nb, block, src, counts, ands, ors, np.uint32(n))
    per_block = predicate[:nb * block].reshape(nb, block)
    assert_equal("__syncthreads_count", counts.get(), per_block.sum(axis=1))
    assert_equal("__syncthreads_and", ands.get() != 0, per_block.all(axis=1))
    assert_equal("__syncthreads_or", ors.get() != 0, per_block.any(axis=1))


def _filter_case(kernel: str):
    def run(ctx: Ctx):
        n = 2000
        src = ctx.rng.integers(-50, 50, n).astype(np.int32)
        dst, count = ctx.gpu.zeros(n, np.int32), ctx.gpu.zeros(1, np.int32)
        ctx.launch("warp_aggregated", kernel, blocks(n, 128), 128, ctx.dev(src), dst, count, np.uint32(n))
        kept = src[src > 0]
        got = int(count.get()[0])
        assert got == kept.size, f"{kernel}: counted {got} positive elements, numpy counts {kept.size}"
        assert_equal(f"{kernel}: kept elements (as a multiset)", np.sort(dst.get()[:got]), np.sort(kept))
    return run


case("filter_positive", "CUDA samples / NVIDIA blog: warp-aggregated atomics",
     ("filter_positive",))(_filter_case("filter_positive"))
case("filter_positive_cg", "CUDA samples: warpAggregatedAtomicsCG",
     ("filter_positive_cg",))(_filter_case("filter_positive_cg"))


@case("atomic_intrinsics", "CUDA samples: simpleAtomicIntrinsics", ("atomic_intrinsics", "float_atomic_max"))
def _atomic_intrinsics(ctx: Ctx):
    grid, block = 4, 64
    threads = grid * block
    g0 = np.array([5, -1, -7, 1000, 0, 3, 0xFF, 0, 0x55], np.int32)
    u0 = np.array([0, 500], np.uint32)
    g, u = ctx.dev(g0), ctx.dev(u0)
    ctx.launch("atomic_intrinsics", "atomic_intrinsics", grid, block, g, u)
    got, got_u = g.get(), u.get()
    tids = np.arange(threads)
    inc, dec = int(u0[0]), int(u0[1])
    for _ in range(threads):                    # inc/dec: each step's result does not depend on who
        inc = 0 if inc >= 17 else inc + 1
        dec = 137 if dec == 0 or dec > 137 else dec - 1
    assert got[0] == g0[0] + 10 * threads, "atomicAdd"
    assert 0 <= got[1] < threads, "atomicExch leaves some thread's id"
    assert got[2] == max(g0[2], threads - 1) and got[3] == min(g0[3], 0), "atomicMax / atomicMin"
    assert list(got_u) == [inc, dec], f"atomicInc / atomicDec: {list(got_u)}, expected {[inc, dec]}"
    assert 0 <= got[4] < threads, "atomicCAS chain"
    assert got[5] == g0[5] - 10 * threads, "atomicSub"
    assert got[6] == g0[6] & np.bitwise_and.reduce(2 * tids + 7), "atomicAnd"
    lane_bits = np.bitwise_or.reduce(np.uint32(1) << (tids % 32).astype(np.uint32))
    assert np.uint32(got[7]) == np.uint32(g0[7]) | lane_bits, "atomicOr"
    assert got[8] == g0[8] ^ np.bitwise_xor.reduce(tids), "atomicXor"
    n = 1000
    x = ctx.uniform(-100, 100, n)
    result = ctx.dev(np.array([-1e30], np.float32))
    ctx.launch("atomic_intrinsics", "float_atomic_max", blocks(n, 128), 128, ctx.dev(x), result, np.int32(n))
    assert result.get()[0] == x.max(), "atomicCAS-loop float max"


@case("median3x3", "CUDA samples / image filters: median (per-thread local array)", ("median3x3",))
def _median(ctx: Ctx):
    width, height = 30, 20
    img = ctx.uniform(0, 1, (height, width))
    img[5, 5:9] = 7.0                            # ties
    out = ctx.gpu.zeros((height, width), np.float32)
    ctx.launch("median_filter", "median3x3", *_grid2(width, height), ctx.dev(img), out, np.int32(width),
               np.int32(height))
    padded = np.pad(img, 1, mode="edge")
    windows = np.stack([padded[dy:dy + height, dx:dx + width] for dy in range(3) for dx in range(3)])
    assert_equal("medians", out.get(), np.median(windows, axis=0).astype(np.float32))


@case("hash_mix64", "64-bit integer kernels (MurmurHash3 fmix64, modular products)", ("fmix64", "mod_mul"))
def _hash64(ctx: Ctx):
    n = 300
    keys = ctx.rng.integers(0, 2 ** 63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    out = ctx.gpu.zeros(n, np.uint64)
    ctx.launch("hash_mix64", "fmix64", blocks(n, 128), 128, ctx.dev(keys), out, np.int32(n))
    k = keys.copy()
    with np.errstate(over="ignore"):
        k ^= k >> np.uint64(33)
        k *= np.uint64(0xFF51AFD7ED558CCD)
        k ^= k >> np.uint64(33)
        k *= np.uint64(0xC4CEB9FE1A85EC53)
        k ^= k >> np.uint64(33)
    assert_equal("fmix64", out.get(), k)
    a, b = (ctx.rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32) for _ in range(2))
    m = ctx.rng.integers(1, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    prod, high = ctx.gpu.zeros(n, np.uint32), ctx.gpu.zeros(n, np.uint64)
    ctx.launch("hash_mix64", "mod_mul", blocks(n, 128), 128, ctx.dev(a), ctx.dev(b), ctx.dev(m), prod, high,
               np.int32(n))
    ai, bi, mi = (list(map(int, v)) for v in (a, b, m))
    assert_equal("a * b mod m", prod.get(), np.array([x * y % z for x, y, z in zip(ai, bi, mi, strict=True)],
                                                     np.uint32))
    wide = [(((x << 32) | y) * ((y << 32) | z)) >> 64 for x, y, z in zip(ai, bi, mi, strict=True)]
    assert_equal("__umul64hi", high.get(), np.array(wide, np.uint64))


@case("vector_add_float4", "CUDA samples: vectorAdd (float4, __ldg)", ("vector_add_float4",))
def _vector_add4(ctx: Ctx):
    n = 1003                                     # a 3-element scalar tail
    a, b = ctx.uniform(-1, 1, n), ctx.uniform(-1, 1, n)
    c = ctx.gpu.zeros(n, np.float32)
    ctx.launch("vector_add_float4", "vector_add_float4", blocks(n // 4, 64), 64, ctx.dev(a), ctx.dev(b), c,
               np.int32(n))
    assert_equal("a + b", c.get(), a + b)        # one float32 rounding, as numpy's


@case("mixed_types", "audio / physics / image kernels: 16-bit, signed division, float and double atomics",
      ("pcm_gain", "periodic_index", "weighted_histogram", "segmented_scan16"))
def _mixed_types(ctx: Ctx):
    n = 1000
    samples = ctx.rng.integers(-32768, 32768, n).astype(np.int16)
    samples[:6] = [-32768, 32767, 3, -3, 5, -5]
    gain = 1.5                                    # 1.5 * odd numbers: exact halves, rounded to even
    out = ctx.gpu.zeros(n, np.int16)
    ctx.launch("mixed_types", "pcm_gain", blocks(n, 128), 128, ctx.dev(samples), out, np.float32(gain), np.int32(n))
    assert_equal("PCM gain", out.get(), np.clip(np.rint(samples * np.float32(gain)), -32768, 32767).astype(np.int16))

    offsets = ctx.rng.integers(-1000, 1000, n).astype(np.int32)
    period = 37
    wrapped, quotients = ctx.gpu.zeros(n, np.int32), ctx.gpu.zeros(n, np.int32)
    ctx.launch("mixed_types", "periodic_index", blocks(n, 128), 128, ctx.dev(offsets), wrapped, quotients,
               np.int32(period), np.int32(n))
    assert_equal("periodic index", wrapped.get(), np.mod(offsets, period))
    assert_equal("truncating quotient", quotients.get(), np.trunc(offsets / period).astype(np.int32))

    n_bins = 50
    bins, weights = ctx.rng.integers(0, n_bins, n).astype(np.int32), ctx.uniform(0, 1, n)
    hist, total = ctx.gpu.zeros(n_bins, np.float32), ctx.gpu.zeros(1, np.float64)
    ctx.launch("mixed_types", "weighted_histogram", 3, 128, ctx.dev(bins), ctx.dev(weights), hist, total,
               np.int32(n), np.int32(n_bins), shared=n_bins * 4)
    exact = np.bincount(bins, weights=weights.astype(np.float64), minlength=n_bins)
    assert_close("weighted histogram (float atomics)", hist.get(), exact, gamma(n) * exact)
    assert_close("total (double atomics)", total.get(), [weights.astype(np.float64).sum()],
                 n * 2.0 ** -53 * weights.sum())

    values = ctx.rng.integers(-100, 100, n).astype(np.int32)
    scanned = ctx.gpu.zeros(n, np.int32)
    ctx.launch("mixed_types", "segmented_scan16", blocks(n, 128), 128, ctx.dev(values), scanned, np.int32(n))
    padded = np.zeros(blocks(n, 16) * 16, np.int64)
    padded[:n] = values
    assert_equal("16-lane segmented scan", scanned.get(), np.cumsum(padded.reshape(-1, 16), axis=1).ravel()[:n])


# ---------------------------------------------------------------------------------------------- sorting
def _network_sort_case(kernel: str):
    def run(ctx: Ctx):
        threads, n_blocks = 128, 3
        keys = ctx.rng.integers(0, 2 ** 32, n_blocks * 2 * threads, dtype=np.uint64).astype(np.uint32)
        keys[:40] = keys[40:80]                  # duplicates
        data = ctx.dev(keys)
        ctx.launch("sort", kernel, n_blocks, threads, data, shared=2 * threads * 4)
        assert_equal(kernel, data.get(), np.sort(keys.reshape(n_blocks, -1), axis=1).ravel())
    return run


case("bitonic_sort", "CUDA samples: sortingNetworks", ("bitonic_sort",))(_network_sort_case("bitonic_sort"))
case("odd_even_merge_sort", "CUDA samples: sortingNetworks",
     ("odd_even_merge_sort",))(_network_sort_case("odd_even_merge_sort"))


@case("merge_sort", "CUDA samples: mergeSort", ("merge_pass",))
def _merge_sort(ctx: Ctx):
    n = 1000
    keys = ctx.rng.integers(0, 300, n).astype(np.uint32)     # many equal keys
    a, b = ctx.dev(keys), ctx.gpu.zeros(n, np.uint32)
    width = 1
    while width < n:
        ctx.launch("sort", "merge_pass", blocks(n, 256), 256, a, b, np.uint32(n), np.uint32(width))
        a, b = b, a
        width *= 2
    assert_equal("merge sort", a.get(), np.sort(keys))


# ---------------------------------------------------------------------------------------------- dense linear algebra
@case("matmul_tiled", "CUDA samples: matrixMul", ("matmul_tiled",))
def _matmul(ctx: Ctx):
    m, n, k = 40, 24, 36                         # not multiples of the 16 x 16 tile
    a, b = ctx.uniform(-1, 1, (m, k)), ctx.uniform(-1, 1, (k, n))
    c = ctx.gpu.zeros((m, n), np.float32)
    ctx.launch("matmul_tiled", "matmul_tiled", (blocks(n, 16), blocks(m, 16)), (16, 16), ctx.dev(a), ctx.dev(b),
               c, np.int32(m), np.int32(n), np.int32(k))
    assert_close("C", c.get(), a.astype(np.float64) @ b, dot_bound(np.abs(a), np.abs(b), k))


def _transpose_case(kernel: str):
    def run(ctx: Ctx):
        width, height = 64, 48                   # 48: the second tile row is half outside
        x = ctx.uniform(-1, 1, (height, width))
        out = ctx.gpu.zeros((width, height), np.float32)
        ctx.launch("transpose", kernel, (blocks(width, 32), blocks(height, 32)), (32, 8), out, ctx.dev(x),
                   np.int32(width), np.int32(height))
        assert_equal(kernel, out.get(), x.T)
    return run


for _name in ("transpose_naive", "transpose_coalesced", "transpose_no_bank_conflicts"):
    case(_name, "CUDA samples: transpose", (_name,))(_transpose_case(_name))


@case("convolution_separable", "CUDA samples: convolutionSeparable", ("convolution_rows", "convolution_columns"))
def _convolution(ctx: Ctx):
    width, height, radius = 70, 20, 4
    taps = np.array([0.0625, 0.125, 0.25, 0.5, 1.0, 0.5, 0.25, 0.125, 0.0625])   # the kernel's __constant__
    x = ctx.uniform(-1, 1, (height, width))
    rows, cols = ctx.gpu.zeros((height, width), np.float32), ctx.gpu.zeros((height, width), np.float32)
    ctx.launch("convolution_separable", "convolution_rows", (blocks(width, 32), blocks(height, 4)), (32, 4),
               rows, ctx.dev(x), np.int32(width), np.int32(height))

    def convolve(image, axis):
        padded = np.pad(image.astype(np.float64), [(radius, radius) if a == axis else (0, 0) for a in (0, 1)])
        size = image.shape[axis]
        out = np.zeros(image.shape)
        bound = np.zeros(image.shape)
        for k in range(-radius, radius + 1):
            shifted = np.take(padded, np.arange(size) + radius + k, axis=axis)
            out += taps[radius - k] * shifted
            bound += taps[radius - k] * np.abs(shifted)
        return out, gamma(2 * radius + 2) * bound

    expected, bound = convolve(x, 1)
    assert_close("row pass", rows.get(), expected, bound)
    ctx.launch("convolution_separable", "convolution_columns", (blocks(width, 16), blocks(height, 16)), (16, 16),
               cols, rows, np.int32(width), np.int32(height))
    expected, bound = convolve(rows.get(), 0)
    assert_close("column pass", cols.get(), expected, bound)


@case("dct8x8", "CUDA samples: dct8x8", ("dct8x8",))
def _dct(ctx: Ctx):
    width, height = 32, 24
    u = np.arange(8)[:, None]
    xs = np.arange(8)[None, :]
    basis = np.where(u == 0, math.sqrt(1 / 8), math.sqrt(2 / 8)) * np.cos((2 * xs + 1) * u * math.pi / 16)
    c32 = basis.astype(np.float32)
    img = ctx.uniform(0, 255, (height, width))
    out = ctx.gpu.zeros((height, width), np.float32)
    ctx.launch("dct8x8", "dct8x8", (width // 8, height // 8), (8, 8), ctx.dev(img), out, ctx.dev(c32),
               np.int32(width))
    c = c32.astype(np.float64)
    expected, bound = np.zeros((height, width)), np.zeros((height, width))
    for by in range(0, height, 8):
        for bx in range(0, width, 8):
            tile = img[by:by + 8, bx:bx + 8].astype(np.float64)
            expected[by:by + 8, bx:bx + 8] = c @ tile @ c.T
            bound[by:by + 8, bx:bx + 8] = gamma(18) * (np.abs(c) @ np.abs(tile) @ np.abs(c).T)
    assert_close("DCT coefficients", out.get(), expected, bound)


@case("fast_walsh", "CUDA samples: fastWalshTransform", ("fast_walsh",))
def _walsh(ctx: Ctx):
    threads, vectors = 128, 3
    n = 2 * threads
    x = ctx.uniform(-1, 1, (vectors, n))
    data = ctx.dev(x)
    ctx.launch("walsh", "fast_walsh", vectors, threads, data, shared=n * 4)
    hadamard = np.array([[1.0]])
    while hadamard.shape[0] < n:
        hadamard = np.block([[hadamard, hadamard], [hadamard, -hadamard]])
    bound = gamma(int(math.log2(n)) + 1) * (np.abs(x).astype(np.float64).sum(axis=1, keepdims=True))
    assert_close("Walsh-Hadamard transform", data.get(), x.astype(np.float64) @ hadamard.T, bound)


@case("fp16_scalar_product", "CUDA samples: fp16ScalarProduct", ("fp16_scalar_product", "fp16_fma"))
def _fp16(ctx: Ctx):
    n2, grid, block = 1000, 3, 128
    a = ctx.uniform(-1, 1, 2 * n2).astype(np.float16)
    b = ctx.uniform(-1, 1, 2 * n2).astype(np.float16)
    partial = ctx.gpu.zeros(grid, np.float32)
    da, db = ctx.dev(a), ctx.dev(b)
    ctx.launch("fp16_scalar_product", "fp16_scalar_product", grid, block, da, db, partial, np.int32(n2))
    # Each product is rounded to half (mul.f16x2: relative 2^-11), then summed in float32.
    products = (a.astype(np.float64) * b).reshape(n2, 2)
    halves = products.astype(np.float16).astype(np.float64)   # numpy rounds to nearest even, as mul.rn does
    owner = (np.arange(n2) % (grid * block)) // block
    exact = np.array([halves[owner == k].sum() for k in range(grid)])
    magnitude = np.array([np.abs(halves[owner == k]).sum() for k in range(grid)])
    assert_close("partial dot products", partial.get(), exact, gamma(2 * n2) * magnitude)
    c = ctx.uniform(-1, 1, 2 * n2).astype(np.float16)
    out = ctx.gpu.zeros((n2, 2), np.float32)
    ctx.launch("fp16_scalar_product", "fp16_fma", blocks(n2, 128), 128, da, db, ctx.dev(c), out, np.int32(n2))
    # fma.rn.f16x2: a * b + c rounded once to half; float64 holds a * b + c exactly (22-bit products).
    fused = (a.astype(np.float64) * b + c).astype(np.float16).astype(np.float32)
    assert_equal("half fma", out.get().ravel(), fused)


# ---------------------------------------------------------------------------------------------- finance
def _cnd(d):
    """The kernel's cumulative normal: Abramowitz-Stegun 26.2.17, evaluated in float64."""
    a1, a2, a3, a4, a5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    c = 0.39894228040143267794 * np.exp(-0.5 * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))))
    return np.where(d > 0, 1.0 - c, c)


@case("black_scholes", "CUDA samples: BlackScholes", ("black_scholes",))
def _black_scholes(ctx: Ctx):
    n, r, v = 1000, 0.02, 0.30
    s, x, t = ctx.uniform(5, 30, n), ctx.uniform(1, 100, n), ctx.uniform(0.25, 10, n)
    call, put = ctx.gpu.zeros(n, np.float32), ctx.gpu.zeros(n, np.float32)
    ctx.launch("black_scholes", "black_scholes", blocks(n, 128), 128, call, put, ctx.dev(s), ctx.dev(x),
               ctx.dev(t), np.float32(r), np.float32(v), np.int32(n))
    s64, x64, t64 = (a.astype(np.float64) for a in (s, x, t))
    d1 = (np.log(s64 / x64) + (r + 0.5 * v * v) * t64) / (v * np.sqrt(t64))
    d2 = d1 - v * np.sqrt(t64)
    df = np.exp(-r * t64)
    # Bound: each price is a difference of two terms of magnitude <= S + X; expf (2 ulp), logf (1 ulp), the
    # IEEE divisions and sqrt, and ~30 roundings in d1, d2 and the polynomial perturb each term by at most
    # ~64 u relative (|dN/dd| <= 0.4 and |d| * u-relative errors in d1 stay below that for these ranges).
    bound = 64 * U * (s64 + x64)
    assert_close("call", call.get(), s64 * _cnd(d1) - x64 * df * _cnd(d2), bound)
    assert_close("put", put.get(), x64 * df * (1 - _cnd(d2)) - s64 * (1 - _cnd(d1)), bound)


@case("black_scholes_double", "CUDA samples: BlackScholes (double)", ("black_scholes_double",))
def _black_scholes_double(ctx: Ctx):
    n, r, v = 500, 0.02, 0.30
    s, x, t = (ctx.rng.uniform(lo, hi, n) for lo, hi in ((5, 30), (1, 100), (0.25, 10)))
    call, put = ctx.gpu.zeros(n, np.float64), ctx.gpu.zeros(n, np.float64)
    ctx.launch("black_scholes", "black_scholes_double", blocks(n, 128), 128, call, put, ctx.dev(s), ctx.dev(x),
               ctx.dev(t), np.float64(r), np.float64(v), np.int32(n))
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * np.sqrt(t))
    d2 = d1 - v * np.sqrt(t)
    df = np.exp(-r * t)
    # As the float bound with the double unit roundoff 2^-53 (CUDA's exp and log: 1 ulp, numpy's: < 1 ulp).
    bound = 64 * 2.0 ** -53 * (s + x)
    assert_close("call", call.get(), s * _cnd(d1) - x * df * _cnd(d2), bound)
    assert_close("put", put.get(), x * df * (1 - _cnd(d2)) - s * (1 - _cnd(d1)), bound)


def _binomial_reference(s, x, t, r, v, steps, dtype):
    """CRR tree priced in `dtype` (float64: the reference; float32: how far float32 rounding moves it)."""
    dt = dtype(t / steps)
    vdt = dtype(v) * np.sqrt(dt, dtype=dtype)
    up = np.exp(vdt, dtype=dtype)
    down = dtype(1) / up
    pu = (np.exp(dtype(r) * dt, dtype=dtype) - down) / (up - down)
    discount = np.exp(-dtype(r) * dt, dtype=dtype)
    pu_df, pd_df = pu * discount, (dtype(1) - pu) * discount
    nodes = np.maximum(s[:, None] * np.exp(vdt * (2 * np.arange(steps + 1, dtype=dtype) - steps)) - x[:, None], 0)
    nodes = nodes.astype(dtype)
    for level in range(steps, 0, -1):
        nodes = pu_df * nodes[:, 1:level + 1] + pd_df * nodes[:, :level]
    return nodes[:, 0]


@case("binomial_options", "CUDA samples: binomialOptions", ("binomial_options",))
def _binomial(ctx: Ctx):
    options, threads, t, r, v = 8, 128, 1.0, 0.02, 0.30
    s, x = ctx.uniform(5, 30, options), ctx.uniform(1, 40, options)
    price = ctx.gpu.zeros(options, np.float32)
    ctx.launch("binomial_options", "binomial_options", options, threads, price, ctx.dev(s), ctx.dev(x),
               np.float32(t), np.float32(r), np.float32(v), shared=threads * 4)
    steps = threads - 1
    exact = _binomial_reference(s.astype(np.float64), x.astype(np.float64), t, r, v, steps, np.float64)
    rounded = _binomial_reference(s, x, t, r, v, steps, np.float32)
    # Bound: the fold is a sum of 2^steps weighted leaves with weights summing to e^{-rT} <= 1, so its own
    # rounding is steps * 2u of the largest leaf; the float32 tree parameters (pu, up) move the price by
    # as much as numpy's own float32 tree moves it (measured here, not from the simulator), x 4 for the
    # kernel's different (fma-contracted, 2-ulp expf) rounding of the same parameters.
    leaf = np.maximum(s.astype(np.float64) * math.exp(v * math.sqrt(t / steps) * steps), x)
    bound = 2 * steps * 2 * U * leaf + 4 * np.abs(rounded.astype(np.float64) - exact)
    assert_close("option prices", price.get(), exact, bound)
    assert np.all(price.get() >= np.maximum(s - x * math.exp(-r * t), 0) - bound)   # no-arbitrage floor


PHILOX_M = (0xD2511F53, 0xCD9E8D57)
PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def philox4x32_10(counters: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """Philox4x32-10 (Salmon et al., SC 2011) over rows of 4 uint32 counters, in numpy uint64 arithmetic."""
    x = counters.astype(np.uint64)
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    mask = np.uint64(0xFFFFFFFF)
    for _ in range(10):
        p0 = np.uint64(PHILOX_M[0]) * x[:, 0]
        p1 = np.uint64(PHILOX_M[1]) * x[:, 2]
        hi0, lo0 = p0 >> np.uint64(32), p0 & mask
        hi1, lo1 = p1 >> np.uint64(32), p1 & mask
        x = np.stack([hi1 ^ x[:, 1] ^ k0, lo1, hi0 ^ x[:, 3] ^ k1, lo0], axis=1)
        k0 = (k0 + np.uint64(PHILOX_W[0])) & mask
        k1 = (k1 + np.uint64(PHILOX_W[1])) & mask
    return x.astype(np.uint32)


def test_numpy_philox_matches_the_random123_known_answers():
    """The reference generator itself, against the known-answer vectors published with Random123."""
    zero = philox4x32_10(np.zeros((1, 4), np.uint32), (0, 0))
    assert [hex(w) for w in zero[0]] == ["0x6627e8d5", "0xe169c58d", "0xbc57ac4c", "0x9b00dbd8"]
    ones = philox4x32_10(np.full((1, 4), 0xFFFFFFFF, np.uint32), (0xFFFFFFFF, 0xFFFFFFFF))
    assert [hex(w) for w in ones[0]] == ["0x408f276d", "0x41c83b0e", "0xa20bc7c6", "0x6d5451fd"]
    pi = philox4x32_10(np.array([[0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344]], np.uint32),
                       (0xa4093822, 0x299f31d0))
    assert [hex(w) for w in pi[0]] == ["0xd16cfe09", "0x94fdcceb", "0x5001e420", "0x24126ea1"]


@case("philox_montecarlo", "CUDA samples: MonteCarlo / cuRAND Philox", ("philox_fill", "montecarlo_pi"))
def _philox(ctx: Ctx):
    n, seq, key = 300, 7, (0x12345678, 0x9ABCDEF0)
    out = ctx.gpu.zeros((n, 4), np.uint32)
    ctx.launch("philox_montecarlo", "philox_fill", blocks(n, 128), 128, out, np.uint32(n), np.uint32(seq),
               np.uint32(key[0]), np.uint32(key[1]))
    counters = np.zeros((n, 4), np.uint32)
    counters[:, 0] = np.arange(n)
    counters[:, 3] = seq
    assert_equal("philox outputs", out.get(), philox4x32_10(counters, key))

    threads, draws = 128, 6
    hits = ctx.gpu.zeros(threads, np.uint32)
    ctx.launch("philox_montecarlo", "montecarlo_pi", 2, 64, hits, np.uint32(draws), np.uint32(key[0]),
               np.uint32(key[1]))
    counters = np.zeros((threads * draws, 4), np.uint32)
    counters[:, 0] = np.repeat(np.arange(threads), draws)
    counters[:, 1] = np.tile(np.arange(draws), threads)
    r = philox4x32_10(counters, key).astype(np.int64)
    inside = ((r[:, 0] & 0xFFFF) ** 2 + (r[:, 1] & 0xFFFF) ** 2 < 2 ** 32).astype(np.int64) + \
             ((r[:, 2] >> 16) ** 2 + (r[:, 3] >> 16) ** 2 < 2 ** 32)
    assert_equal("hits per thread", hits.get(), inside.reshape(threads, draws).sum(axis=1))
    estimate = 4 * hits.get().sum() / (2 * threads * draws)
    assert abs(estimate - math.pi) < 0.15


# Joe and Kuo's new-joe-kuo-6.21201 table, dimensions 2-8: (degree s, coefficients a, initial m values).
JOE_KUO = [(1, 0, [1]), (2, 1, [1, 3]), (3, 1, [1, 3, 1]), (3, 2, [1, 1, 1]), (4, 1, [1, 1, 3, 3]),
           (4, 4, [1, 3, 5, 13]), (5, 2, [1, 1, 5, 5, 17])]


def sobol_directions(dims: int) -> np.ndarray:
    """V[d][k] (k = 0..31, as 32-bit integers) from Joe-Kuo's primitive polynomials (Bratley-Fox recurrence)."""
    v = np.zeros((dims, 32), np.uint64)
    v[0] = [1 << (31 - k) for k in range(32)]
    for d in range(1, dims):
        s, a, m = JOE_KUO[d - 1]
        for k in range(32):
            if k < s:
                v[d, k] = m[k] << (31 - k)
            else:
                value = v[d, k - s] ^ (v[d, k - s] >> np.uint64(s))
                for j in range(1, s):
                    if (a >> (s - 1 - j)) & 1:
                        value ^= v[d, k - j]
                v[d, k] = value
    return v.astype(np.uint32)


@case("sobol", "CUDA samples: SobolQRNG", ("sobol",))
def _sobol(ctx: Ctx):
    points, dims = 200, 8
    directions = sobol_directions(dims)
    out, bits = ctx.gpu.zeros((dims, points), np.float32), ctx.gpu.zeros((dims, points), np.uint32)
    ctx.launch("sobol", "sobol", (blocks(points, 64), dims), 64, out, bits, ctx.dev(directions),
               np.uint32(points), np.uint32(dims))
    # Antonov-Saleev recurrence: point i = point i-1 XOR V[lowest zero bit of i-1] (Gray-code order).
    expected = np.zeros((dims, points), np.uint32)
    for i in range(1, points):
        c = ((i - 1) ^ i).bit_length() - 1     # index of the lowest zero bit of i-1
        expected[:, i] = expected[:, i - 1] ^ directions[:, c]
    assert_equal("Sobol integers", bits.get(), expected)
    assert_equal("Sobol floats", out.get(), (expected.astype(np.float32) * np.float32(2.0 ** -32)))
    assert list(out.get()[0, :4]) == [0.0, 0.5, 0.75, 0.25]


@case("nbody", "CUDA samples: nbody", ("nbody_accelerations",))
def _nbody(ctx: Ctx):
    n, block, softening2 = 200, 64, 0.01
    bodies = np.concatenate([ctx.uniform(-1, 1, (n, 3)), ctx.uniform(0.5, 1, (n, 1))], axis=1).astype(np.float32)
    acc = ctx.gpu.zeros((n, 3), np.float32)
    ctx.launch("nbody", "nbody_accelerations", blocks(n, block), block, ctx.dev(bodies), acc, np.int32(n),
               np.float32(softening2), shared=block * 16)
    b = _f64(bodies)
    r = b[None, :, :3] - b[:, None, :3]                        # r[i, j] = x_j - x_i
    terms = r * (b[None, :, 3] * ((r ** 2).sum(axis=2) + np.float32(softening2)) ** -1.5)[:, :, None]
    # Per term: rsqrt.approx.f32's relative error (2^-22.9, PTX ISA) enters cubed, plus a dozen roundings;
    # then the sum of n terms.
    bound = (3 * 2.0 ** -22.9 + gamma(12) + gamma(n)) * np.abs(terms).sum(axis=1)
    assert_close("accelerations", acc.get(), terms.sum(axis=1), bound)


@case("fast_math", "CUDA fast-math intrinsics (__expf, __logf, __sinf, __cosf, __fdividef, rsqrtf)",
      ("fast_math",))
def _fast_math(ctx: Ctx):
    n = 1000
    x, y = ctx.uniform(-3, 3, n), ctx.uniform(0.1, 10, n)
    out = ctx.gpu.zeros((6, n), np.float32)
    ctx.launch("fast_math", "fast_math", blocks(n, 128), 128, ctx.dev(x), ctx.dev(y), out, np.int32(n))
    got, a, b = out.get(), _f64(x), _f64(y)
    # The PTX ISA's bounds for the approximate instructions (docs/semantics.md lists them), plus the
    # roundings around them: __expf multiplies by log2(e) first (its rounding moves the result by |a| u
    # relative), __logf multiplies lg2's result by ln 2.
    assert_close("__expf", got[0], np.exp(a), (2.0 ** -22 + 2 * U + np.abs(a) * U) * np.exp(a))
    assert_close("__logf", got[1], np.log(b), 2.0 ** -22.6 * math.log(2) + (2.0 ** -22 + U) * np.abs(np.log(b)))
    assert_close("__sinf", got[2], np.sin(a), 2.0 ** -20.9)
    assert_close("__cosf", got[3], np.cos(a), 2.0 ** -20.9)
    assert_close("__fdividef", got[4], a / b, 2 * 2.0 ** -23 * np.abs(a / b))
    assert_close("rsqrtf", got[5], b ** -0.5, 2.0 ** -22.9 * b ** -0.5)


# ---------------------------------------------------------------------------------------------- Rodinia
@case("hotspot", "Rodinia: hotspot", ("hotspot_step",))
def _hotspot(ctx: Ctx):
    rows, cols, iterations = 40, 36, 3
    step_div_cap, rx, ry, rz, amb = 0.5, 0.1, 0.12, 0.05, 80.0
    temp, power = ctx.uniform(320, 340, (rows, cols)), ctx.uniform(0, 1, (rows, cols))
    a, b, p = ctx.dev(temp), ctx.gpu.zeros((rows, cols), np.float32), ctx.dev(power)
    expected = temp.astype(np.float64)
    for _ in range(iterations):
        ctx.launch("hotspot", "hotspot_step", (blocks(cols, 16), blocks(rows, 16)), (16, 16), p, a, b,
                   np.int32(rows), np.int32(cols), np.float32(step_div_cap), np.float32(rx), np.float32(ry),
                   np.float32(rz), np.float32(amb))
        a, b = b, a
        t = np.pad(expected, 1, mode="edge")
        c = t[1:-1, 1:-1]
        expected = c + step_div_cap * (power + (t[2:, 1:-1] + t[:-2, 1:-1] - 2 * c) * ry +
                                       (t[1:-1, 2:] + t[1:-1, :-2] - 2 * c) * rx + (amb - c) * rz)
    # Bound: per step the update's 12 roundings act on terms of magnitude <= 4 max|T| (the neighbour sums),
    # and earlier steps' errors pass through a stencil with weights summing to <= 1 + step * rz.
    assert_close("temperatures", a.get(), expected, iterations * gamma(12) * 4 * 340.0)


@case("srad", "Rodinia: srad", ("srad_coefficients", "srad_update"))
def _srad(ctx: Ctx):
    rows, cols, lam = 24, 24, 0.5
    image = np.exp(ctx.uniform(0, 1, (rows, cols))).astype(np.float32)
    roi = image[:8, :8].astype(np.float64)
    q0sqr = roi.var() / roi.mean() ** 2
    arrays = [ctx.gpu.zeros((rows, cols), np.float32) for _ in range(5)]
    j = ctx.dev(image)
    grid = (blocks(cols, 16), blocks(rows, 16))
    ctx.launch("srad", "srad_coefficients", grid, (16, 16), j, *arrays, np.int32(rows), np.int32(cols),
               np.float32(q0sqr))
    jj = image.astype(np.float64)
    p = np.pad(jj, 1, mode="edge")
    dn, ds, dw, de = p[:-2, 1:-1] - jj, p[2:, 1:-1] - jj, p[1:-1, :-2] - jj, p[1:-1, 2:] - jj
    g2 = (dn ** 2 + ds ** 2 + dw ** 2 + de ** 2) / jj ** 2
    lap = (dn + ds + dw + de) / jj
    qsqr = (0.5 * g2 - 0.0625 * lap ** 2) / (1 + 0.25 * lap) ** 2
    den = (qsqr - np.float32(q0sqr)) / (np.float32(q0sqr) * (1 + np.float32(q0sqr)))
    coef = np.clip(1 / (1 + den), 0, 1)
    for got, want in zip(arrays[:4], (dn, ds, dw, de), strict=True):
        assert_close("directional differences", got.get(), want, 2 * U * 3.0)   # J < e: one rounding
    # Bound: the coefficient is a rational function of the differences (each exact to 2u * 3 absolute);
    # its relative sensitivity |d log c / d J| stays below 10^3 on these smooth images (J in [1, e]), so
    # 10^3 * 30 roundings * u.
    assert_close("diffusion coefficients", arrays[4].get(), coef, 1e3 * 30 * U)
    ctx.launch("srad", "srad_update", grid, (16, 16), j, *arrays, np.int32(rows), np.int32(cols), np.float32(lam))
    c = arrays[4].get().astype(np.float64)
    cs = np.pad(c, 1, mode="edge")[2:, 1:-1]
    ce = np.pad(c, 1, mode="edge")[1:-1, 2:]
    d = [a.get().astype(np.float64) for a in arrays[:4]]
    updated = jj + 0.25 * lam * (c * d[0] + cs * d[1] + c * d[2] + ce * d[3])
    assert_close("updated image", j.get(), updated, gamma(10) * (jj + 4 * 3.0))


@case("pathfinder", "Rodinia: pathfinder", ("pathfinder",))
def _pathfinder(ctx: Ctx):
    rows, cols, height, bs = 20, 100, 4, 64
    wall = ctx.rng.integers(0, 10, (rows, cols)).astype(np.int32)
    w, a, b = ctx.dev(wall), ctx.dev(wall[0]), ctx.gpu.zeros(cols, np.int32)
    row = 0
    while row < rows - 1:
        h = min(height, rows - 1 - row)
        ctx.launch("pathfinder", "pathfinder", blocks(cols, bs - 2 * h), bs, w, a, b, np.int32(cols), np.int32(row),
                   np.int32(h))
        a, b = b, a
        row += h
    expected = wall[0].astype(np.int64)
    for r in range(1, rows):
        p = np.pad(expected, 1, mode="edge")
        expected = np.minimum(np.minimum(p[:-2], p[1:-1]), p[2:]) + wall[r]
    assert_equal("path costs", a.get(), expected)


def _random_graph(rng, n: int, degree: int):
    targets = [sorted(set(rng.integers(0, n, rng.integers(0, degree + 1)).tolist())) for _ in range(n)]
    row_start = np.zeros(n + 1, np.int32)
    row_start[1:] = np.cumsum([len(t) for t in targets])
    edges = np.array([u for t in targets for u in t] or [0], np.int32)
    levels = np.full(n, -1, np.int64)
    levels[0] = 0
    queue = deque([0])
    while queue:
        v = queue.popleft()
        for u in targets[v]:
            if levels[u] < 0:
                levels[u] = levels[v] + 1
                queue.append(u)
    return row_start, edges, levels


@case("bfs", "Rodinia: bfs", ("bfs_expand", "bfs_update"))
def _bfs_masks(ctx: Ctx):
    n = 300
    row_start, edges, levels = _random_graph(ctx.rng, n, 3)
    assert (levels < 0).any() and levels.max() >= 4    # unreachable vertices and several levels
    masks = np.zeros((3, n), np.uint8)
    masks[:, 0] = (1, 0, 1)                     # frontier, next, visited
    frontier, nxt, visited = (ctx.dev(m) for m in masks)
    cost = ctx.dev(np.where(np.arange(n) == 0, 0, -1).astype(np.int32))
    changed = ctx.gpu.zeros(1, np.int32)
    rs, es = ctx.dev(row_start), ctx.dev(edges)
    for _ in range(n):
        changed.set(np.zeros(1, np.int32))
        ctx.launch("bfs", "bfs_expand", blocks(n, 128), 128, rs, es, frontier, nxt, visited, cost, np.int32(n))
        ctx.launch("bfs", "bfs_update", blocks(n, 128), 128, frontier, nxt, visited, changed, np.int32(n))
        if not changed.get()[0]:
            break
    assert_equal("BFS levels", cost.get(), levels)
    assert_equal("visited", visited.get(), (levels >= 0).astype(np.uint8))


@case("bfs_frontier", "Rodinia / CUDA BFS: queue frontier", ("bfs_frontier",))
def _bfs_queue(ctx: Ctx):
    n = 300
    row_start, edges, levels = _random_graph(ctx.rng, n, 3)
    rs, es = ctx.dev(row_start), ctx.dev(edges)
    dist = ctx.dev(np.where(np.arange(n) == 0, 0, -1).astype(np.int32))
    queue_in, queue_out = ctx.dev(np.zeros(n, np.int32)), ctx.gpu.zeros(n, np.int32)
    size, level = 1, 0
    while size:
        out_size = ctx.gpu.zeros(1, np.int32)
        ctx.launch("bfs", "bfs_frontier", blocks(size, 64), 64, rs, es, queue_in, np.int32(size), queue_out,
                   out_size, dist, np.int32(level))
        size, level = int(out_size.get()[0]), level + 1
        frontier = np.sort(queue_out.get()[:size])
        assert_equal(f"frontier of level {level}", frontier, np.flatnonzero(levels == level))
        queue_in, queue_out = queue_out, queue_in
    assert_equal("BFS distances", dist.get(), levels)


def _needleman_wunsch_case(kernel: str):
    def run(ctx: Ctx):
        _needleman_wunsch(ctx, kernel)
    return run


def _needleman_wunsch(ctx: Ctx, kernel: str):
    n, penalty, ts = 48, 10, 16
    tiles = n // ts
    similarity = ctx.rng.integers(-5, 6, (n, n)).astype(np.int32)
    score = np.zeros((n + 1, n + 1), np.int32)
    score[0, :] = -penalty * np.arange(n + 1)
    score[:, 0] = -penalty * np.arange(n + 1)
    expected = score.astype(np.int64)
    for i in range(1, n + 1):
        for j in range(1, n + 1):
            expected[i, j] = max(expected[i - 1, j - 1] + similarity[i - 1, j - 1],
                                 expected[i - 1, j] - penalty, expected[i, j - 1] - penalty)
    s, sim = ctx.dev(score), ctx.dev(similarity)
    for diagonal in range(2 * tiles - 1):
        first = max(0, diagonal - (tiles - 1))
        count = min(diagonal, tiles - 1) - first + 1
        ctx.launch("needleman_wunsch", kernel, count, ts, s, sim, np.int32(n), np.int32(penalty),
                   np.int32(diagonal), np.int32(first))
    assert_equal("alignment scores", s.get(), expected)


case("needleman_wunsch", "Rodinia: nw", ("nw_tiles",))(_needleman_wunsch_case("nw_tiles"))
case("needleman_wunsch_triangles", "Rodinia: nw (two triangles per tile)",
     ("nw_tiles_triangles",))(_needleman_wunsch_case("nw_tiles_triangles"))


@case("kmeans", "Rodinia: kmeans", ("kmeans_assign", "kmeans_accumulate"))
def _kmeans(ctx: Ctx):
    points, clusters, features = 500, 5, 4
    centres = ctx.uniform(-3, 3, (clusters, features))
    owner = ctx.rng.integers(0, clusters, points)
    x = (centres[owner] + ctx.uniform(-1.5, 1.5, (points, features))).astype(np.float32)
    membership = ctx.dev(np.full(points, -1, np.int32))
    changed = ctx.gpu.zeros(1, np.int32)
    args = (ctx.dev(np.ascontiguousarray(x.T)), ctx.dev(centres), membership, changed, np.int32(points),
            np.int32(clusters), np.int32(features))
    ctx.launch("kmeans", "kmeans_assign", blocks(points, 256), 256, *args)
    dist = ((x[:, None, :].astype(np.float64) - centres[None].astype(np.float64)) ** 2).sum(axis=2)
    magnitude = ((np.abs(x[:, None, :]) + np.abs(centres[None])).astype(np.float64) ** 2).sum(axis=2)
    chosen = membership.get()
    assert ((chosen >= 0) & (chosen < clusters)).all()
    # The nearest centre, up to float32 rounding: a distance of `features` squared differences is within
    # gamma(2 features + 1) of its magnitude, so the chosen centre may only lose a tie that close.
    picked = dist[np.arange(points), chosen]
    assert_close("distance to the chosen centre", picked, dist.min(axis=1),
                 2 * gamma(2 * features + 1) * magnitude.max(axis=1))
    assert int(changed.get()[0]) == points
    ctx.launch("kmeans", "kmeans_assign", blocks(points, 256), 256, *args)
    assert int(changed.get()[0]) == points, "a second pass with the same centres moved points"

    sums, counts = ctx.gpu.zeros((clusters, features), np.float32), ctx.gpu.zeros(clusters, np.int32)
    ctx.launch("kmeans", "kmeans_accumulate", blocks(points, 128), 128, args[0], membership, sums, counts,
               np.int32(points), np.int32(features))
    assert_equal("points per cluster", counts.get(), np.bincount(chosen, minlength=clusters))
    exact = np.array([x[chosen == k].astype(np.float64).sum(axis=0) for k in range(clusters)])
    magnitude = np.array([np.abs(x[chosen == k]).astype(np.float64).sum(axis=0) for k in range(clusters)])
    assert_close("feature sums (float atomics, any order)", sums.get(), exact, gamma(points) * magnitude)


@case("lud", "Rodinia: lud (diagonal tiles)", ("lud_tile",))
def _lud(ctx: Ctx):
    n, ts = 64, 32
    a = (ctx.uniform(-1, 1, (n, n)) + n * np.eye(n)).astype(np.float32)     # diagonally dominant: no pivoting
    m = ctx.dev(a)
    ctx.launch("lud", "lud_tile", n // ts, ts, m, np.int32(n))
    result = m.get().astype(np.float64)
    for t in range(n // ts):
        sl = slice(t * ts, (t + 1) * ts)
        tile = result[sl, sl]
        lower, upper = np.tril(tile, -1) + np.eye(ts), np.triu(tile)
        # Higham, Theorem 9.3: the computed factors satisfy L U = A + dA with |dA| <= gamma(n) |L| |U|.
        assert_close(f"L U of tile {t}", lower @ upper, a[sl, sl], gamma(ts) * (np.abs(lower) @ np.abs(upper)))
    off = np.ones((n, n), bool)
    for t in range(n // ts):
        off[t * ts:(t + 1) * ts, t * ts:(t + 1) * ts] = False
    assert_equal("off-diagonal tiles untouched", result[off], a[off])


@case("backprop", "Rodinia: backprop", ("layer_forward", "adjust_weights"))
def _backprop(ctx: Ctx):
    n_in, hidden, eta, momentum = 64, 16, 0.3, 0.3
    inputs, weights = ctx.uniform(0, 1, n_in), ctx.uniform(-1, 1, (n_in, hidden))
    partial = ctx.gpu.zeros((n_in // 16, hidden), np.float32)
    ctx.launch("backprop", "layer_forward", (1, n_in // 16), (16, 16), ctx.dev(inputs), ctx.dev(weights), partial,
               np.int32(hidden))
    products = weights.astype(np.float64) * inputs[:, None]
    groups = products.reshape(n_in // 16, 16, hidden)
    assert_close("partial sums", partial.get(), groups.sum(axis=1), gamma(17) * np.abs(groups).sum(axis=1))

    rows = n_in + 1                              # with the bias unit
    delta, layer = ctx.uniform(-1, 1, hidden), ctx.uniform(0, 1, rows)
    w0, old0 = ctx.uniform(-1, 1, (rows, hidden)), ctx.uniform(-0.1, 0.1, (rows, hidden))
    w, old = ctx.dev(w0), ctx.dev(old0)
    ctx.launch("backprop", "adjust_weights", (1, blocks(rows, 16)), (16, 16), ctx.dev(delta), np.int32(hidden),
               ctx.dev(layer), np.int32(rows), w, old, np.float32(eta), np.float32(momentum))
    term1 = np.float32(eta) * delta[None, :].astype(np.float64) * layer[:, None]
    term2 = np.float32(momentum) * old0.astype(np.float64)
    change = term1 + term2
    bound = gamma(4) * (np.abs(term1) + np.abs(term2))
    assert_close("weight changes", old.get(), change, bound)
    assert_close("weights", w.get(), w0 + change, bound + gamma(1) * np.abs(w0 + change))


@case("gaussian", "Rodinia: gaussian", ("gauss_fan1", "gauss_fan2"))
def _gaussian(ctx: Ctx):
    n = 24
    a0 = (ctx.uniform(-1, 1, (n, n)) + n * np.eye(n)).astype(np.float32)
    b0 = ctx.uniform(-1, 1, n)
    a, b, mult = ctx.dev(a0), ctx.dev(b0), ctx.gpu.zeros((n, n), np.float32)
    for t in range(n - 1):
        ctx.launch("gaussian", "gauss_fan1", blocks(n - 1 - t, 64), 64, mult, a, np.int32(n), np.int32(t))
        ctx.launch("gaussian", "gauss_fan2", (blocks(n - t, 16), blocks(n - 1 - t, 16)), (16, 16), mult, a, b,
                   np.int32(n), np.int32(t))
    upper, rhs = np.triu(a.get().astype(np.float64)), b.get().astype(np.float64)
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (rhs[i] - upper[i, i + 1:] @ x[i + 1:]) / upper[i, i]
    exact = np.linalg.solve(a0.astype(np.float64), b0.astype(np.float64))
    # Forward error <= cond(A) * backward error; elimination's backward error is gamma(3n) (Higham,
    # Theorem 9.4) relative to |A||x| + |b|; this diagonally dominant A is well conditioned.
    cond = np.linalg.norm(a0, np.inf) * np.linalg.norm(np.linalg.inv(a0.astype(np.float64)), np.inf)
    assert cond < 4
    assert_close("solution", x, exact, cond * gamma(3 * n) * (np.abs(a0) @ np.abs(exact) + np.abs(b0)).max())


# ---------------------------------------------------------------------------------------------- PolyBench
def _grid2(cols: int, rows: int, bx: int = 16, by: int = 8):
    return (blocks(cols, bx), blocks(rows, by)), (bx, by)


def _f64(array) -> np.ndarray:
    return np.asarray(array, dtype=np.float64)


@case("2mm", "PolyBench/GPU: 2mm", ("mm2_tmp", "mm2_out"))
def _two_mm(ctx: Ctx):
    ni, nj, nk, nl, alpha, beta = 24, 20, 28, 16, 1.5, 1.2
    a, b, c, d0 = (ctx.uniform(-1, 1, s) for s in ((ni, nk), (nk, nj), (nj, nl), (ni, nl)))
    tmp, d = ctx.gpu.zeros((ni, nj), np.float32), ctx.dev(d0)
    ctx.launch("polybench_linalg", "mm2_tmp", *_grid2(nj, ni), ctx.dev(a), ctx.dev(b), tmp, np.int32(ni),
               np.int32(nj), np.int32(nk), np.float32(alpha))
    assert_close("tmp", tmp.get(), alpha * _f64(a) @ b, alpha * dot_bound(np.abs(a), np.abs(b), 2 * nk))
    t = tmp.get()
    ctx.launch("polybench_linalg", "mm2_out", *_grid2(nl, ni), tmp, ctx.dev(c), d, np.int32(ni), np.int32(nl),
               np.int32(nj), np.float32(beta))
    assert_close("D", d.get(), np.float32(beta) * _f64(d0) + _f64(t) @ c,
                 dot_bound(np.abs(t), np.abs(c), nj) + gamma(nj + 2) * beta * np.abs(d0))


@case("3mm", "PolyBench/GPU: 3mm", ("mm3_product",))
def _three_mm(ctx: Ctx):
    ni, nj, nk, nl, nm = 16, 24, 20, 22, 18
    a, b, c, d = (ctx.uniform(-1, 1, s) for s in ((ni, nk), (nk, nj), (nj, nm), (nm, nl)))
    e, f, g = (ctx.gpu.zeros(s, np.float32) for s in ((ni, nj), (nj, nl), (ni, nl)))
    for x, y, z, rows, inner, cols in ((a, b, e, ni, nk, nj), (c, d, f, nj, nm, nl)):
        ctx.launch("polybench_linalg", "mm3_product", *_grid2(cols, rows), ctx.dev(x), ctx.dev(y), z,
                   np.int32(rows), np.int32(inner), np.int32(cols))
        assert_close("E / F", z.get(), _f64(x) @ y, dot_bound(np.abs(x), np.abs(y), inner))
    ctx.launch("polybench_linalg", "mm3_product", *_grid2(nl, ni), e, f, g, np.int32(ni), np.int32(nj), np.int32(nl))
    ev, fv = e.get(), f.get()
    assert_close("G", g.get(), _f64(ev) @ fv, dot_bound(np.abs(ev), np.abs(fv), nj))


@case("atax", "PolyBench/GPU: atax", ("atax_ax", "atax_aty"))
def _atax(ctx: Ctx):
    nx, ny = 40, 36
    a, x = ctx.uniform(-1, 1, (nx, ny)), ctx.uniform(-1, 1, ny)
    tmp, y, da = ctx.gpu.zeros(nx, np.float32), ctx.gpu.zeros(ny, np.float32), ctx.dev(a)
    ctx.launch("polybench_linalg", "atax_ax", blocks(nx, 32), 32, da, ctx.dev(x), tmp, np.int32(nx), np.int32(ny))
    assert_close("tmp = A x", tmp.get(), _f64(a) @ x, dot_bound(np.abs(a), np.abs(x), ny))
    t = tmp.get()
    ctx.launch("polybench_linalg", "atax_aty", blocks(ny, 32), 32, da, tmp, y, np.int32(nx), np.int32(ny))
    assert_close("y = A^T tmp", y.get(), _f64(a).T @ t, dot_bound(np.abs(a).T, np.abs(t), nx))


@case("bicg", "PolyBench/GPU: bicg", ("bicg_s", "bicg_q"))
def _bicg(ctx: Ctx):
    nx, ny = 40, 36
    a, r, p = ctx.uniform(-1, 1, (nx, ny)), ctx.uniform(-1, 1, nx), ctx.uniform(-1, 1, ny)
    s, q, da = ctx.gpu.zeros(ny, np.float32), ctx.gpu.zeros(nx, np.float32), ctx.dev(a)
    ctx.launch("polybench_linalg", "bicg_s", blocks(ny, 32), 32, da, ctx.dev(r), s, np.int32(nx), np.int32(ny))
    ctx.launch("polybench_linalg", "bicg_q", blocks(nx, 32), 32, da, ctx.dev(p), q, np.int32(nx), np.int32(ny))
    assert_close("s = A^T r", s.get(), _f64(a).T @ r, dot_bound(np.abs(a).T, np.abs(r), nx))
    assert_close("q = A p", q.get(), _f64(a) @ p, dot_bound(np.abs(a), np.abs(p), ny))


@case("gemver", "PolyBench/GPU: gemver", ("gemver_rank2", "gemver_x", "gemver_w"))
def _gemver(ctx: Ctx):
    n, alpha, beta = 32, 1.5, 1.2
    a0 = ctx.uniform(-1, 1, (n, n))
    u1, v1, u2, v2, y, z, x0, w0 = (ctx.uniform(-1, 1, n) for _ in range(8))
    a, x, w = ctx.dev(a0), ctx.dev(x0), ctx.dev(w0)
    ctx.launch("polybench_linalg", "gemver_rank2", *_grid2(n, n), a, ctx.dev(u1), ctx.dev(v1), ctx.dev(u2),
               ctx.dev(v2), np.int32(n))
    r1, r2 = np.outer(_f64(u1), v1), np.outer(_f64(u2), v2)
    assert_close("A + u1 v1^T + u2 v2^T", a.get(), a0 + r1 + r2, gamma(4) * (np.abs(a0) + np.abs(r1) + np.abs(r2)))
    av = a.get()
    ctx.launch("polybench_linalg", "gemver_x", blocks(n, 32), 32, a, x, ctx.dev(y), ctx.dev(z), np.int32(n),
               np.float32(beta))
    assert_close("x", x.get(), x0 + beta * (_f64(av).T @ y) + z,
                 gamma(n + 4) * (np.abs(x0) + beta * (np.abs(av).T @ np.abs(y)) + np.abs(z)))
    xv = x.get()
    ctx.launch("polybench_linalg", "gemver_w", blocks(n, 32), 32, a, x, w, np.int32(n), np.float32(alpha))
    assert_close("w", w.get(), w0 + alpha * (_f64(av) @ xv),
                 gamma(n + 4) * (np.abs(w0) + alpha * (np.abs(av) @ np.abs(xv))))


@case("gesummv", "PolyBench/GPU: gesummv", ("gesummv",))
def _gesummv(ctx: Ctx):
    n, alpha, beta = 40, 1.5, 1.2
    a, b, x = ctx.uniform(-1, 1, (n, n)), ctx.uniform(-1, 1, (n, n)), ctx.uniform(-1, 1, n)
    y = ctx.gpu.zeros(n, np.float32)
    ctx.launch("polybench_linalg", "gesummv", blocks(n, 32), 32, ctx.dev(a), ctx.dev(b), ctx.dev(x), y, np.int32(n),
               np.float32(alpha), np.float32(beta))
    assert_close("y", y.get(), alpha * (_f64(a) @ x) + beta * (_f64(b) @ x),
                 gamma(n + 3) * (alpha * np.abs(a) @ np.abs(x) + beta * np.abs(b) @ np.abs(x)))


@case("mvt", "PolyBench/GPU: mvt", ("mvt_x1", "mvt_x2"))
def _mvt(ctx: Ctx):
    n = 40
    a = ctx.uniform(-1, 1, (n, n))
    x1, x2, y1, y2 = (ctx.uniform(-1, 1, n) for _ in range(4))
    d1, d2, da = ctx.dev(x1), ctx.dev(x2), ctx.dev(a)
    ctx.launch("polybench_linalg", "mvt_x1", blocks(n, 32), 32, da, d1, ctx.dev(y1), np.int32(n))
    ctx.launch("polybench_linalg", "mvt_x2", blocks(n, 32), 32, da, d2, ctx.dev(y2), np.int32(n))
    assert_close("x1", d1.get(), x1 + _f64(a) @ y1, gamma(n + 1) * (np.abs(x1) + np.abs(a) @ np.abs(y1)))
    assert_close("x2", d2.get(), x2 + _f64(a).T @ y2, gamma(n + 1) * (np.abs(x2) + np.abs(a).T @ np.abs(y2)))


@case("syrk", "PolyBench/GPU: syrk", ("syrk",))
def _syrk(ctx: Ctx):
    n, m, alpha, beta = 24, 20, 1.5, 1.2
    a, c0 = ctx.uniform(-1, 1, (n, m)), ctx.uniform(-1, 1, (n, n))
    c = ctx.dev(c0)
    ctx.launch("polybench_linalg", "syrk", *_grid2(n, n), ctx.dev(a), c, np.int32(n), np.int32(m), np.float32(alpha),
               np.float32(beta))
    assert_close("C", c.get(), alpha * (_f64(a) @ a.T) + beta * _f64(c0),
                 gamma(2 * m + 2) * (alpha * np.abs(a) @ np.abs(a).T + beta * np.abs(c0)))


@case("syr2k", "PolyBench/GPU: syr2k", ("syr2k",))
def _syr2k(ctx: Ctx):
    n, m, alpha, beta = 24, 20, 1.5, 1.2
    a, b, c0 = ctx.uniform(-1, 1, (n, m)), ctx.uniform(-1, 1, (n, m)), ctx.uniform(-1, 1, (n, n))
    c = ctx.dev(c0)
    ctx.launch("polybench_linalg", "syr2k", *_grid2(n, n), ctx.dev(a), ctx.dev(b), c, np.int32(n), np.int32(m),
               np.float32(alpha), np.float32(beta))
    exact = alpha * (_f64(a) @ b.T + _f64(b) @ a.T) + beta * _f64(c0)
    magnitude = alpha * (np.abs(a) @ np.abs(b).T + np.abs(b) @ np.abs(a).T) + beta * np.abs(c0)
    assert_close("C", c.get(), exact, gamma(4 * m + 2) * magnitude)


def _column_means(ctx: Ctx, data, n: int, m: int):
    mean = ctx.gpu.zeros(m, np.float32)
    ctx.launch("polybench_linalg", "covar_mean", blocks(m, 32), 32, data, mean, np.int32(n), np.int32(m))
    return mean


@case("covariance", "PolyBench/GPU: covariance", ("covar_mean", "covar_center", "covar_matrix"))
def _covariance(ctx: Ctx):
    n, m = 30, 12
    x = ctx.uniform(0, 4, (n, m))
    data = ctx.dev(x)
    mean = _column_means(ctx, data, n, m)
    assert_close("means", mean.get(), _f64(x).mean(axis=0), gamma(n + 1) * np.abs(x).mean(axis=0))
    ctx.launch("polybench_linalg", "covar_center", *_grid2(m, n), data, mean, np.int32(n), np.int32(m))
    centred_expected = _f64(x) - mean.get()
    assert_close("centred data", data.get(), centred_expected, gamma(1) * np.abs(centred_expected))
    centred = data.get()
    cov = ctx.gpu.zeros((m, m), np.float32)
    ctx.launch("polybench_linalg", "covar_matrix", 1, 32, data, cov, np.int32(n), np.int32(m))
    assert_close("covariance", cov.get(), _f64(centred).T @ centred / (n - 1),
                 gamma(n + 2) * (np.abs(centred).T @ np.abs(centred)) / (n - 1))


@case("correlation", "PolyBench/GPU: correlation", ("corr_std", "corr_standardize", "corr_matrix"))
def _correlation(ctx: Ctx):
    n, m, eps = 30, 12, 0.1
    x = ctx.uniform(0, 4, (n, m))
    x[:, 3] = 2.0                               # a constant column: std <= eps -> replaced by 1
    data = ctx.dev(x)
    mean = _column_means(ctx, data, n, m)
    mv = mean.get().astype(np.float64)
    std = ctx.gpu.zeros(m, np.float32)
    ctx.launch("polybench_linalg", "corr_std", blocks(m, 32), 32, data, mean, std, np.int32(n), np.int32(m),
               np.float32(eps))
    sd = np.sqrt(((_f64(x) - mv) ** 2).mean(axis=0))
    sd_expected = np.where(sd <= eps, 1.0, sd)
    assert_close("standard deviations", std.get(), sd_expected, gamma(2 * n + 4) * (sd_expected + 4))
    sv = std.get().astype(np.float64)
    ctx.launch("polybench_linalg", "corr_standardize", *_grid2(m, n), data, mean, std, np.int32(n), np.int32(m))
    z_expected = (_f64(x) - mv) / (math.sqrt(n) * sv)
    assert_close("standardized data", data.get(), z_expected, gamma(5) * (np.abs(z_expected) + 4 / (math.sqrt(n) * sv)))
    z = data.get()
    corr = ctx.gpu.zeros((m, m), np.float32)
    ctx.launch("polybench_linalg", "corr_matrix", 1, 32, data, corr, np.int32(n), np.int32(m))
    expected = _f64(z).T @ z
    np.fill_diagonal(expected, 1.0)
    bound = gamma(n + 1) * (np.abs(z).T @ np.abs(z))
    np.fill_diagonal(bound, 0.0)
    assert_close("correlation", corr.get(), expected, bound)


@case("jacobi1d", "PolyBench/GPU: jacobi-1d", ("jacobi1d",))
def _jacobi1d(ctx: Ctx):
    n, steps = 200, 4
    x = ctx.uniform(0, 1, n)
    a, b = ctx.dev(x), ctx.dev(x)
    expected = _f64(x)
    for _ in range(steps):
        for src, dst in ((a, b), (b, a)):
            ctx.launch("polybench_stencils", "jacobi1d", blocks(n, 64), 64, src, dst, np.int32(n))
        for _ in range(2):
            nxt = expected.copy()
            nxt[1:-1] = np.float32(0.33333) * (expected[:-2] + expected[1:-1] + expected[2:])
            expected = nxt
    # 3 roundings per half step on values <= 1, passed on through weights summing to < 1.
    assert_close("A", a.get(), expected, 2 * steps * gamma(3) * 1.0)


@case("jacobi2d", "PolyBench/GPU: jacobi-2d", ("jacobi2d",))
def _jacobi2d(ctx: Ctx):
    n, steps = 24, 3
    x = ctx.uniform(0, 1, (n, n))
    a, b = ctx.dev(x), ctx.dev(x)
    expected = _f64(x)
    for _ in range(steps):
        for src, dst in ((a, b), (b, a)):
            ctx.launch("polybench_stencils", "jacobi2d", *_grid2(n, n), src, dst, np.int32(n))
        for _ in range(2):
            nxt = expected.copy()
            nxt[1:-1, 1:-1] = np.float32(0.2) * (expected[1:-1, 1:-1] + expected[1:-1, :-2] + expected[1:-1, 2:] +
                                                 expected[2:, 1:-1] + expected[:-2, 1:-1])
            expected = nxt
    assert_close("A", a.get(), expected, 2 * steps * gamma(6) * 1.0)


@case("fdtd2d", "PolyBench/GPU: fdtd-2d", ("fdtd_ey", "fdtd_ex", "fdtd_hz"))
def _fdtd2d(ctx: Ctx):
    nx, ny, tmax = 20, 24, 3
    ex0, ey0, hz0 = (ctx.uniform(0, 1, (nx, ny)) for _ in range(3))
    fict = np.arange(tmax, dtype=np.float32)
    ex, ey, hz, f = ctx.dev(ex0), ctx.dev(ey0), ctx.dev(hz0), ctx.dev(fict)
    e_x, e_y, h_z = _f64(ex0), _f64(ey0), _f64(hz0)
    for t in range(tmax):
        ctx.launch("polybench_stencils", "fdtd_ey", *_grid2(ny, nx), ey, hz, f, np.int32(nx), np.int32(ny), np.int32(t))
        ctx.launch("polybench_stencils", "fdtd_ex", *_grid2(ny, nx), ex, hz, np.int32(nx), np.int32(ny))
        ctx.launch("polybench_stencils", "fdtd_hz", *_grid2(ny, nx), hz, ex, ey, np.int32(nx), np.int32(ny))
        e_y[0, :] = fict[t]
        e_y[1:, :] -= 0.5 * (h_z[1:, :] - h_z[:-1, :])
        e_x[:, 1:] -= 0.5 * (h_z[:, 1:] - h_z[:, :-1])
        h_z[:-1, :-1] -= 0.7 * (e_x[:-1, 1:] - e_x[:-1, :-1] + e_y[1:, :-1] - e_y[:-1, :-1])
    # Fields stay below ~10 here; each update has <= 5 roundings and the three-step recurrence amplifies
    # earlier errors by at most (1 + 4 * 0.7) per step.
    bound = gamma(5) * 10.0 * sum(3.8 ** k for k in range(tmax))
    for name, got, want in (("ex", ex, e_x), ("ey", ey, e_y), ("hz", hz, h_z)):
        assert np.abs(want).max() < 10
        assert_close(name, got.get(), want, bound)


@case("heat3d", "PolyBench/GPU: heat-3d", ("heat3d",))
def _heat3d(ctx: Ctx):
    n, steps = 10, 2
    x = ctx.uniform(0, 1, (n, n, n))
    a, b = ctx.dev(x), ctx.dev(x)
    expected = _f64(x)
    for _ in range(steps):
        for src, dst in ((a, b), (b, a)):
            ctx.launch("polybench_stencils", "heat3d", (blocks(n, 8), blocks(n, 4), blocks(n, 4)), (8, 4, 4),
                       src, dst, np.int32(n))
        for _ in range(2):
            e, nxt = expected, expected.copy()
            c = e[1:-1, 1:-1, 1:-1]
            nxt[1:-1, 1:-1, 1:-1] = (0.125 * (e[2:, 1:-1, 1:-1] - 2 * c + e[:-2, 1:-1, 1:-1]) +
                                     0.125 * (e[1:-1, 2:, 1:-1] - 2 * c + e[1:-1, :-2, 1:-1]) +
                                     0.125 * (e[1:-1, 1:-1, 2:] - 2 * c + e[1:-1, 1:-1, :-2]) + c)
            expected = nxt
    # 13 roundings per point on terms of magnitude <= 2; the stencil's weights sum to exactly 1.
    assert_close("A", a.get(), expected, 2 * steps * gamma(13) * 2.0 * 2)


# ---------------------------------------------------------------------------------------------- features
@case("texture_resample", "CUDA samples: simpleTexture / bilinear filtering", ("texture_resample",))
def _texture(ctx: Ctx):
    kernel = ctx.kernel("texture_lookup", "texture_resample")
    width, height, scale = 24, 16, 0.75
    image = ctx.uniform(0, 1, (height, width))
    tex = ctx.gpu.texture(image, filter="linear", address="clamp", normalized=False)
    out = ctx.gpu.zeros((height, width), np.float32)
    grid, block = _grid2(width, height, 8, 8)
    ctx.launch_kernel(kernel, grid, block, out, tex, np.int32(width), np.int32(height), np.float32(scale))
    # Linear filtering at unnormalized (u, v): x = u - 0.5, i = floor(x), weights frac(x) (9-bit fixed
    # point; here 0, .25, .5, .75: exact), clamped addressing.
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64) * scale
    i0, j0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    fy, fx = ys - i0, xs - j0

    def at(i, j):
        return _f64(image)[np.clip(i, 0, height - 1), np.clip(j, 0, width - 1)]

    expected = ((1 - fy) * ((1 - fx) * at(i0, j0) + fx * at(i0, j0 + 1)) +
                fy * ((1 - fx) * at(i0 + 1, j0) + fx * at(i0 + 1, j0 + 1)))
    assert_close("bilinear samples", out.get(), expected, gamma(8))


@case("printf", "CUDA samples: simplePrintf", ("print_values",))
def _printf(ctx: Ctx):
    kernel = ctx.kernel("printf_kernel", "print_values")
    n = 40
    values = ctx.uniform(-2, 2, n)
    run = ctx.launch_kernel(kernel, 2, 32, ctx.dev(values), np.int32(n))
    expected = [f"thread {i} value {2 * float(v):.3f} bits {int(values.view(np.uint32)[i]):08x}"
                for i, v in enumerate(values)]
    assert sorted(run.stdout.splitlines()) == sorted(expected)


# ---------------------------------------------------------------------------------------------- the tests
def _params():
    for name, c in CASES.items():
        for timing in (False, True):
            marks = [pytest.mark.slow] if c.slow else []
            yield pytest.param(name, timing, id=f"{name}-{'timed' if timing else 'functional'}", marks=marks)


@pytest.mark.parametrize(("name", "timing"), list(_params()))
def test_corpus_kernel_matches_numpy(name: str, timing: bool, monkeypatch):
    monkeypatch.setenv("GPUSIM_NO_PTXAS", "1")    # the committed '// gpusim: regs=' lines, not a local ptxas
    ctx = Ctx(timing)
    CASES[name].run(ctx)
    assert ctx.launches > 0


def test_corpus_covers_forty_kernels_each_with_its_source():
    kernels = {k for c in CASES.values() for k in c.kernels}
    assert len(kernels) >= 40
    for ptx in CORPUS.glob("*.ptx"):
        assert ptx.with_suffix(".cu").is_file(), f"{ptx.name} has no .cu source"
        text = ptx.read_text()
        assert "// gpusim: regs=" in text, f"{ptx.name} lacks ptxas's register counts"
    defined = set()
    for ptx in CORPUS.glob("*.ptx"):
        defined |= {line.split()[-1].rstrip("(") for line in ptx.read_text().splitlines()
                    if line.startswith(".visible .entry")}
    assert kernels <= defined, f"cases name kernels no .ptx defines: {sorted(kernels - defined)}"
    assert defined <= kernels, f"kernels no case runs: {sorted(defined - kernels)}"
