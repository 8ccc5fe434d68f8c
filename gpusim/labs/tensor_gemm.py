"""The tensor-core GEMM the decode, prefill and GEMM-throughput experiments share: programs/gemm_bf16_mma.cu.

``y = W x`` for a linear layer: weights W (``rows`` x ``k``, row-major, the layout of a linear layer's weight
matrix) times ``tokens`` activation vectors (``tokens`` x ``k``), i.e. C = A B^T with A = W and B = the
activations (mma.sync's "col" B), giving ``rows`` x ``tokens``. Weights stream from DRAM once per launch
(the grid walks the token tiles of one row tile first, so the blocks that share a weight tile run
together and reuse it through L2); a 128-token tile computes all 128 columns, so a batch under 128 pays
for 128 in FLOPs (not in bytes: cp.async zero-fills the missing rows without reading them).

The kernels are the 4-stage ones (3 K slices in flight, enough to cover a DRAM latency). Types (``TYPES``):
``bf16`` (gemm_bf16_mma_4stage: fp32 accumulate, bf16 output), ``int8`` (gemm_s8_mma_4stage, W8A8 with s32
accumulate and output) and ``fp8`` (gemm_e4m3_mma_4stage: e4m3, fp32 accumulate, bf16 output); each
has its bytes per weight and the analytic roofline ceiling its mma.sync reaches
(gpusim.analytic.models.tensor_peaks). The outputs are bf16 as a layer feeding the next writes them: on a
slice of a few SMs, whose L2 is a few MB, fp32 outputs would be as many bytes as the weights.

Every result is checked against numpy: integers exactly, floats within the rigorous bound of k-term fp32
sums of exact products, E = k u (|A| |B|^T) elementwise with u = 2^-24, plus the bf16 rounding of the
output, 2^-8 (|exact| + E).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpusim.errors import LaunchError
from gpusim.labs.support import PROGRAMS_DIR

PROGRAM = PROGRAMS_DIR / "gemm_bf16_mma.ptx"
TILE = 128            # BM = BN in gemm_bf16_mma.cu
THREADS = 128
CHUNK_BYTES = 16      # cp.async request size: a row's bytes must be a multiple
FP32_UNIT_ROUNDOFF = 2.0 ** -24
BF16_UNIT_ROUNDOFF = 2.0 ** -8  # round to nearest, 8 significand bits
FLOPS_PER_MAC = 2


@dataclass(frozen=True)
class GemmType:
    """One input type of the GEMM: its kernel, bytes per element and analytic ceiling names."""

    name: str
    kernel: str
    element_bytes: int
    mma_sync: str
    """the ceiling of gpusim.analytic.models.tensor_peaks its mma.sync attains"""
    dense: str
    """the dense tensor peak of the type"""
    output: str
    """the output's storage: int32, or bf16 bits (uint16)"""


TYPES = {
    "bf16": GemmType("bf16", "gemm_bf16_mma_4stage", 2, "mma_sync_bf16", "tensor_bf16", "bf16"),
    "int8": GemmType("int8", "gemm_s8_mma_4stage", 1, "mma_sync_int8", "tensor_int8", "int32"),
    "fp8": GemmType("fp8", "gemm_e4m3_mma_4stage", 1, "mma_sync_fp8", "tensor_fp8", "bf16"),
}


TILE_FLOP_PER_L2_BYTE = TILE * TILE / (TILE + TILE) * FLOPS_PER_MAC / 2
"""A 128 x 128 block tile loads (128 + 128) x 2 bytes of A and B per K step from L2 and does 2 x 128 x 128
FLOPs with them: 64 FLOP per L2 byte (for bf16; the 8-bit types load half the bytes for the same MACs)."""


def l2_cap_flops(config: Any) -> float:
    """The FLOP/s at which the tile's operand loads fill the L2 bandwidth (bf16): 64 FLOP per byte x the
    config's L2 bytes per second. On h100-sxm (2500 B/cycle, 18.9 per SM) that is 45 % of the mma.sync rate:
    the reason Hopper feeds its tensor cores with TMA multicast and wgmma's larger tiles."""
    return TILE_FLOP_PER_L2_BYTE * config.l2_bytes_per_cycle * config.clock_hz


def gemm_type(name: str) -> GemmType:
    if name not in TYPES:
        raise LaunchError(f"tensor GEMM: unknown type '{name}' (types: {', '.join(TYPES)})")
    return TYPES[name]


def _bf16_bits(values: np.ndarray) -> np.ndarray:
    return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _bf16_values(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _e4m3_values(bits: np.ndarray) -> np.ndarray:
    x = bits.astype(np.int64)
    magnitude = np.where(x & 0x78, 1 + (x & 7) / 8, (x & 7) / 8) * 2.0 ** (np.maximum((x >> 3) & 15, 1) - 7.0)
    return magnitude * np.where(x & 0x80, -1.0, 1.0)


def random_operand(kind: GemmType, shape: tuple[int, int], rng: Any) -> tuple[np.ndarray, np.ndarray]:
    """(stored bits or values, their float64/int64 values): bf16 and e4m3 of magnitude < 1, int8 in full range."""
    if kind.name == "bf16":
        bits = _bf16_bits(rng.uniform(-1.0, 1.0, shape))
        return bits, _bf16_values(bits)
    if kind.name == "fp8":
        bits = (rng.integers(0, 0x38, shape) | (rng.integers(0, 2, shape) << 7)).astype(np.uint8)
        return bits, _e4m3_values(bits)
    values = rng.integers(-128, 128, shape).astype(np.int8)
    return values, values.astype(np.int64)


def check_shape(kind: GemmType, rows: int, k: int, tokens: int) -> None:
    """rows, tokens >= 1 and k x element bytes a multiple of the 16-byte cp.async chunk."""
    if rows < 1 or tokens < 1 or k < 1 or (k * kind.element_bytes) % CHUNK_BYTES:
        raise LaunchError(f"tensor GEMM ({kind.name}): rows={rows}, tokens={tokens} must be >= 1 and k={k} a "
                          f"positive multiple of {CHUNK_BYTES // kind.element_bytes} (16-byte cp.async chunks)")


class LayerGemm:
    """One layer's weights on a GPU, ready to multiply any number of tokens."""

    def __init__(self, gpu: Any, kind: str, rows: int, k: int, seed: int = 0) -> None:
        self.kind = gemm_type(kind)
        check_shape(self.kind, rows, k, 1)
        self.gpu = gpu
        self.rows, self.k = rows, k
        self.rng = np.random.default_rng(seed)
        self.kernel = gpu.load(str(PROGRAM))[self.kind.kernel]
        bits, self.weight_values = random_operand(self.kind, (rows, k), self.rng)
        self.weights = gpu.to_device(bits)
        self.weight_bytes = rows * k * self.kind.element_bytes

    def flops(self, tokens: int) -> int:
        return FLOPS_PER_MAC * self.rows * self.k * tokens

    def run(self, tokens: int, check: bool = True) -> tuple[Any, bool]:
        """Multiply ``tokens`` random activation vectors; (the timed run, whether it matches numpy)."""
        check_shape(self.kind, self.rows, self.k, tokens)
        bits, values = random_operand(self.kind, (tokens, self.k), self.rng)
        out = self.gpu.zeros(self.rows * tokens, np.int32 if self.kind.output == "int32" else np.uint16)
        grid = (-(-tokens // TILE), -(-self.rows // TILE))
        run = self.gpu.launch(self.kernel, grid=grid, block=THREADS, cache_control="all",
                              args=[self.weights, self.gpu.to_device(bits), out, np.int32(self.rows),
                                    np.int32(tokens), np.int32(self.k)])
        if not check:
            return run, True
        got = out.get().reshape(self.rows, tokens)
        expected = self.weight_values @ values.T
        if self.kind.output == "int32":
            return run, bool(np.array_equal(got.astype(np.int64), expected))
        accumulated = self.k * FP32_UNIT_ROUNDOFF * (np.abs(self.weight_values) @ np.abs(values).T)
        bound = accumulated + BF16_UNIT_ROUNDOFF * (np.abs(expected) + accumulated)
        return run, bool(np.all(np.abs(_bf16_values(got) - expected) <= bound))
