"""The attention kernels of programs/labs/attention.cu on a GPU: the naive three-kernel path, the fused
FlashAttention-2-style kernel, and the FlashAttention-3-style Hopper kernel of programs/labs/attention_hopper.cu;
their analytic DRAM bytes and FLOPs, a numpy reference and its error bound.

One attention per head: O = softmax(scale Q K^T) V with Q, K, V, O of ``n`` x ``HEAD_DIM`` fp16 values per head
(``causal``: each query weighs only the keys up to its own position). The naive path writes the fp32 scores S
(n x n per head) to memory (``attn_scores``), reads them back to write fp16 probabilities P (``attn_softmax``)
and reads P to compute O (``attn_pv``); the fused kernel (``attn_flash``) keeps each 128 x 64 tile of S and P
in registers and reads K and V once per 128-row Q tile, from L2 after the first. The Hopper kernel
(``attn_flash3``, on GPUs with wgmma) does the same work with FlashAttention-3's machinery: persistent blocks (one
per SM) loop over the (head, Q tile) pairs; a producer warpgroup loads each Q tile once and 128-key tiles of K and V
by TMA through a two-stage mbarrier pipeline, two consumer warpgroups
compute S = Q K^T and O += P V with wgmma (P from registers, V from shared memory as an MN-major operand) and
the online softmax in between, and O leaves by a TMA store.

Every launch starts with cold caches and ends with the L2's dirty lines written back (``flush_caches``, as
Nsight Compute's cache control does before a profiled kernel): a kernel's DRAM bytes are its reads and writes
plus the write-backs of what it left dirty, so each kernel is charged for its own output even when it fits in
the L2.

Causal: the naive path computes and moves every score (the masked ones as -inf) and only its FLOPs count
halves; the fused kernels skip the key tiles past each Q tile's last row, so they execute the pairs below the
diagonal plus the diagonal tiles' other halves (attn_flash's tiles are 64 keys, attn_flash3's 128).

Simplifications: one head dimension (64); the sequence length a multiple of the fused kernel's 128-row Q tile
and at most ``MAX_LENGTH`` (the softmax kernel holds a row in registers); no dropout, no batch beyond the heads
(a batch is more heads).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpusim.errors import LaunchError
from gpusim.labs.support import LAB_PROGRAMS_DIR

PROGRAM = LAB_PROGRAMS_DIR / "attention.ptx"
HEAD_DIM = 64
TILE = 64                   # rows of a Q, K, V or P tile (TILE in attention.cu)
THREADS = 128               # attn_scores, attn_pv
SOFTMAX_THREADS = 256       # attn_softmax's largest block
WARP = 32
FLASH_THREADS = 256
FLASH_ROWS = 128            # the fused kernel's Q tile: 8 warps of 16 rows (FLASH_MT = 1)
MAX_LENGTH = SOFTMAX_THREADS * 4 * 8   # SOFTMAX_THREADS x float4 x SOFTMAX_CHUNKS
NAIVE_KERNELS = ("attn_scores", "attn_softmax", "attn_pv")
FUSED_KERNEL = "attn_flash"
HOPPER_PROGRAM = LAB_PROGRAMS_DIR / "attention_hopper.ptx"
HOPPER_KERNEL = "attn_flash3"
HOPPER_THREADS = 384        # a producer warpgroup and two consumer warpgroups
HOPPER_ROWS = 128           # its Q tile (and its K / V tiles: 128 keys); one work item of its persistent blocks
HOPPER_STAGES = 2
F16_BYTES, F32_BYTES = 2, 4
FLOPS_PER_MAC = 2
F16_UNIT_ROUNDOFF = 2.0 ** -11
F32_UNIT_ROUNDOFF = 2.0 ** -24
EX2_RELATIVE_ERROR = 2.0 ** -22  # ex2.approx.f32, PTX ISA: maximum relative error 2^-22 over its range
HOPPER_TILE_BYTES = HOPPER_ROWS * HEAD_DIM * F16_BYTES      # a Q, K or V tile of 128 rows
HOPPER_SHARED = (HOPPER_TILE_BYTES * (3 + 2 * HOPPER_STAGES)   # 2 Q buffers, O's staging, then K and V per stage
                 + 1024                                        # the 128-byte swizzle's 1024-byte alignment
                 + 8 * (6 + 4 * HOPPER_STAGES))   # mbarriers: Q full, empty x 2, 2 turns; K, V full, empty per stage


def pairs(n: int, causal: bool = False) -> int:
    """The (query, key) pairs attention weighs per head: n^2, or n (n + 1) / 2 when each query sees only the
    keys up to its own position."""
    return n * (n + 1) // 2 if causal else n * n


def flops(n: int, heads: int = 1, head_dim: int = HEAD_DIM, causal: bool = False) -> int:
    """The two matrix products' useful FLOPs: Q K^T and P V, head_dim multiply-adds per (query, key) pair each,
    per head (causal: the pairs below the diagonal, FlashAttention's convention)."""
    return 2 * FLOPS_PER_MAC * pairs(n, causal) * head_dim * heads


def analytic_bytes(n: int, heads: int = 1, head_dim: int = HEAD_DIM) -> dict[str, int]:
    """DRAM bytes per kernel when every operand crosses DRAM once (K and V reread from L2, not DRAM):
    scores reads Q and K and writes fp32 S; softmax reads S and writes fp16 P; pv reads P and V and writes O;
    each fused kernel reads Q, K, V and writes O. ``naive`` is the sum of the three."""
    matrix = n * head_dim * F16_BYTES  # one of Q, K, V, O
    kernels = {"attn_scores": 2 * matrix + n * n * F32_BYTES,
               "attn_softmax": n * n * (F32_BYTES + F16_BYTES),
               "attn_pv": n * n * F16_BYTES + 2 * matrix,
               FUSED_KERNEL: 4 * matrix, HOPPER_KERNEL: 4 * matrix}
    per_head = {**kernels, "naive": sum(kernels[name] for name in NAIVE_KERNELS)}
    return {name: value * heads for name, value in per_head.items()}


def softmax_threads(n: int) -> int:
    """attn_softmax's block for rows of ``n``: 4 float4 per thread, whole warps, 32 to SOFTMAX_THREADS threads."""
    return min(SOFTMAX_THREADS, max(WARP, -(-n // (16 * WARP)) * WARP))


def kernel_flops(n: int, heads: int = 1, head_dim: int = HEAD_DIM, causal: bool = False) -> dict[str, int]:
    """Useful FLOPs per kernel: one product each for scores and pv, none for softmax, both for each fused
    kernel."""
    one = flops(n, heads, head_dim, causal) // 2
    return {"attn_scores": one, "attn_softmax": 0, "attn_pv": one, FUSED_KERNEL: 2 * one, HOPPER_KERNEL: 2 * one,
            "naive": 2 * one}


def has_wgmma(config: Any) -> bool:
    """Whether ``config``'s GPU runs wgmma (Hopper), and so attn_flash3: its wgmma interval is set."""
    return config.wgmma_n8_interval_cycles > 0


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, causal: bool = False) -> np.ndarray:
    """softmax(scale q k^T) v per head in float64 (causal: each row's later keys weigh 0); q, k, v are
    (heads, n, d)."""
    q64, k64, v64 = (np.asarray(a, np.float64) for a in (q, k, v))
    scores = np.einsum("hqd,hkd->hqk", q64, k64) * scale
    if causal:
        n = q.shape[1]
        scores = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ v64


def error_bound(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, expected: np.ndarray) -> float:
    """A bound on |O - reference| for every path, from the roundings they make (u16 = 2^-11, u32 = 2^-24):

    * a score is a d-term fp32 sum of exact fp16 products, then multiplied by the scale and log2(e) and shifted
      by the row max: an error in the exponent of at most (d + 4) u32 scale max sum|q k|, a relative error of
      a probability's numerator and of its normalizer, so twice that, plus the ex2.approx error twice;
    * P is rounded to fp16 once (relative u16): at most u16 max|v|, since the probabilities sum to 1;
    * the n-term fp32 sums of P V and of the normalizer, with one rescale per 64-key tile in the fused kernel
      and a reciprocal and a multiply in the softmax: each within (n + n / 64 + 2) u32 relative, twice (the
      wgmma kernel rescales once per 128-key tile, and its fused multiply-add gives the exponent one rounding
      fewer: within the same terms);
    * the output is rounded to fp16 once: u16 |O|.
    """
    q64, k64 = np.abs(np.asarray(q, np.float64)), np.abs(np.asarray(k, np.float64))
    n, d = q.shape[1], q.shape[2]
    score_error = (d + 4) * F32_UNIT_ROUNDOFF * scale * float(np.einsum("hqd,hkd->hqk", q64, k64).max())
    sums = 2 * (n + n // TILE + 2) * F32_UNIT_ROUNDOFF
    probability = 2 * (score_error + EX2_RELATIVE_ERROR) + F16_UNIT_ROUNDOFF + sums
    v_max = float(np.abs(np.asarray(v, np.float64)).max())
    return probability * v_max + F16_UNIT_ROUNDOFF * float(np.abs(expected).max())


def check_length(n: int) -> None:
    if n < FLASH_ROWS or n % FLASH_ROWS or n > MAX_LENGTH:
        raise LaunchError(f"attention: sequence length {n} must be a multiple of {FLASH_ROWS} (the fused "
                          f"kernel's Q tile) between {FLASH_ROWS} and "
                          f"{MAX_LENGTH} (the softmax kernel holds a row in registers)")


@dataclass
class KernelRun:
    """One launch: the Run and its DRAM bytes including the write-backs of the lines it left dirty."""

    name: str
    run: Any
    dram_bytes: float


class Attention:
    """Random fp16 Q, K, V for ``heads`` heads of length ``n`` on a GPU, and the ways of attending."""

    def __init__(self, gpu: Any, n: int, heads: int, seed: int = 0, causal: bool = False) -> None:
        check_length(n)
        self.gpu, self.n, self.heads, self.causal = gpu, n, heads, causal
        self.scale = 1.0 / np.sqrt(HEAD_DIM)
        self.module = gpu.load(str(PROGRAM))
        self.hopper_module = None       # programs/labs/attention_hopper.ptx, loaded on first use
        rng = np.random.default_rng(seed)
        self.q, self.k, self.v = (rng.standard_normal((heads, n, HEAD_DIM)).astype(np.float16) for _ in range(3))
        self.inputs = [gpu.to_device(array) for array in (self.q, self.k, self.v)]

    def expected(self) -> tuple[np.ndarray, float]:
        """The float64 reference output and the error bound every path must meet."""
        expected = reference(self.q, self.k, self.v, self.scale, self.causal)
        return expected, error_bound(self.q, self.k, self.v, self.scale, expected)

    def _launch(self, name: str, grid: tuple, block: int, args: list, module: Any = None, shared_bytes: int = 0,
                timing: bool = True) -> KernelRun:
        run = self.gpu.launch((module or self.module)[name], grid=grid, block=block, args=args, cache_control="all",
                              shared_bytes=shared_bytes, timing=timing)
        written_back = self.gpu.flush_caches()
        if not timing:      # a functional run counts no DRAM traffic
            return KernelRun(name, run, float("nan"))
        metrics = run.metrics
        return KernelRun(name, run, metrics["dram__bytes_read.sum"] + metrics["dram__bytes_write.sum"]
                         + written_back)

    def _output(self, out: Any) -> np.ndarray:
        return out.get().reshape(self.heads, self.n, HEAD_DIM).astype(np.float64)

    def naive(self) -> tuple[list[KernelRun], np.ndarray]:
        """S = scale Q K^T, P = softmax(S), O = P V as three kernels; (their runs, O)."""
        n, heads, tiles = self.n, self.heads, self.n // TILE
        q, k, v = self.inputs
        scores = self.gpu.zeros(heads * n * n, np.float32)
        probabilities = self.gpu.zeros(heads * n * n, np.float16)
        out = self.gpu.zeros(heads * n * HEAD_DIM, np.float16)
        length = np.int32(n)
        runs = [self._launch("attn_scores", (tiles, tiles, heads), THREADS,
                             [q, k, scores, length, np.float32(self.scale), np.int32(self.causal)]),
                self._launch("attn_softmax", (heads * n,), softmax_threads(n), [scores, probabilities, length]),
                self._launch("attn_pv", (tiles, heads), THREADS, [probabilities, v, out, length])]
        return runs, self._output(out)

    def fused(self) -> tuple[KernelRun, np.ndarray]:
        """The FlashAttention-2-style kernel; (its run, O)."""
        out = self.gpu.zeros(self.heads * self.n * HEAD_DIM, np.float16)
        run = self._launch(FUSED_KERNEL, (self.n // FLASH_ROWS, self.heads), FLASH_THREADS,
                           [*self.inputs, out, np.int32(self.n), np.float32(self.scale), np.int32(self.causal)])
        return run, self._output(out)

    def fused_hopper(self, timing: bool = True) -> tuple[KernelRun, np.ndarray]:
        """The FlashAttention-3-style kernel (attn_flash3; GPUs with wgmma only); (its run, O). Its tensor maps:
        Q, K and V as [heads][n][64] with boxes of 128 rows, O with boxes of 64 rows (one consumer warpgroup's),
        all 128-byte swizzled. ``timing=False``: the functional engine (the run's ``dram_bytes`` is NaN)."""
        if not has_wgmma(self.gpu.config):
            raise LaunchError(f"attention: {HOPPER_KERNEL} needs wgmma (Hopper, sm_90a); the config "
                              f"{self.gpu.config.name} has none (wgmma_n8_interval_cycles = 0)")
        if self.hopper_module is None:
            self.hopper_module = self.gpu.load(str(HOPPER_PROGRAM))
        out = self.gpu.zeros((self.heads, self.n, HEAD_DIM), np.float16)
        box = [HEAD_DIM, HOPPER_ROWS, 1]
        maps = [self.gpu.tensor_map(array, box=box, swizzle=128) for array in self.inputs]
        maps.append(self.gpu.tensor_map(out, box=[HEAD_DIM, HOPPER_ROWS // 2, 1], swizzle=128))
        items = self.n // HOPPER_ROWS * self.heads     # (head, Q tile) pairs; persistent: one block per SM
        run = self._launch(HOPPER_KERNEL, (min(items, self.gpu.config.sms),), HOPPER_THREADS,
                           [*maps, np.int32(self.n), np.int32(self.heads), np.float32(self.scale),
                            np.int32(self.causal)],
                           module=self.hopper_module, shared_bytes=HOPPER_SHARED, timing=timing)
        return run, self._output(out)
