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
(gpusim.analytic.models.tensor_peaks). ``WIDE_TYPES`` are the wider block tiles of programs/gemm_mma_wide.cu,
which take more FLOPs per L2 byte: ``bf16-wide`` (128 weight rows x 256 tokens, fp32 accumulate, bf16 output)
and ``f16acc`` (256 x 256, f16 inputs accumulated in f16 -- the only way a 256 x 256 tile's accumulators fit
in the registers -- f16 output). The outputs are bf16 as a layer feeding the next writes them: on a
slice of a few SMs, whose L2 is a few MB, fp32 outputs would be as many bytes as the weights.

Every result is checked against numpy: integers exactly, floats within the rigorous bound of k-term fp32
sums of exact products, E = k u (|A| |B|^T) elementwise with u = 2^-24, plus the bf16 rounding of the
output, 2^-8 (|exact| + E); f16 accumulation bit for bit, replaying its k / 16 roundings (its operands are
multiples of 1/64, so every step's sum is exact before the kernel rounds it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpusim.errors import LaunchError
from gpusim.labs.support import PROGRAMS_DIR

PROGRAM = PROGRAMS_DIR / "gemm_bf16_mma.ptx"
WIDE_PROGRAM = PROGRAMS_DIR / "gemm_mma_wide.ptx"
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
    """the output's storage: int32, bf16 bits or f16 bits (uint16)"""
    tile_rows: int = TILE
    """the block tile's weight rows (the kernel's BM)"""
    tile_tokens: int = TILE
    """the block tile's tokens (BN)"""
    threads: int = THREADS
    shared_bytes: int = 0
    """dynamic shared memory per block"""
    program: Any = PROGRAM
    fallback: tuple = ()
    """(kernel, shared_bytes) of variants with fewer pipeline stages, for configs whose blocks may not have
    ``shared_bytes`` (A100: 163 KB); the first that fits runs"""

    def variant(self, config: Any) -> tuple[str, int]:
        """The (kernel, shared bytes) that fits a block of ``config``; a LaunchError when none does."""
        candidates = ((self.kernel, self.shared_bytes), *self.fallback)
        for kernel, shared in candidates:
            if shared <= config.max_shared_bytes_per_block:
                return kernel, shared
        needed = min(shared for _, shared in candidates)
        raise LaunchError(f"tensor GEMM ({self.name}): the {self.tile_rows} x {self.tile_tokens} tile needs at least "
                          f"{needed} bytes of shared memory per block; {config.name} allows "
                          f"{config.max_shared_bytes_per_block}")

    @property
    def flop_per_l2_byte(self) -> float:
        """FLOPs per byte of A and B the block tile loads from L2: 2 BM BN per (BM + BN) x element bytes."""
        return 2 * self.tile_rows * self.tile_tokens / ((self.tile_rows + self.tile_tokens) * self.element_bytes)

    def flop_per_l2_byte_with_stores(self, k: int) -> float:
        """The same over a whole K of ``k`` with the tile's output written once: 2 BM BN k per
        ((BM + BN) k element bytes + BM BN output bytes)."""
        output_bytes = 4 if self.output == "int32" else 2
        loads = (self.tile_rows + self.tile_tokens) * k * self.element_bytes
        return 2 * self.tile_rows * self.tile_tokens * k / (loads + self.tile_rows * self.tile_tokens * output_bytes)


TYPES = {
    "bf16": GemmType("bf16", "gemm_bf16_mma_4stage", 2, "mma_sync_bf16", "tensor_bf16", "bf16"),
    "int8": GemmType("int8", "gemm_s8_mma_4stage", 1, "mma_sync_int8", "tensor_int8", "int32"),
    "fp8": GemmType("fp8", "gemm_e4m3_mma_4stage", 1, "mma_sync_fp8", "tensor_fp8", "bf16"),
}


def _wide(name: str, kernel: str, mma_sync: str, dense: str, output: str, rows: int, tokens: int) -> GemmType:
    """programs/gemm_mma_wide.cu's kernel ``kernel``: 3 stages of 64-element K slices in rows padded to 144
    bytes, and its ``_2stage`` variant for blocks that may not have 3."""
    def pipeline(stages: int) -> int:
        return stages * (rows + tokens) * WIDE_ROW_BYTES

    return GemmType(name, kernel, 2, mma_sync, dense, output, tile_rows=rows, tile_tokens=tokens, threads=256,
                    shared_bytes=pipeline(3), program=WIDE_PROGRAM, fallback=((f"{kernel}_2stage", pipeline(2)),))


WIDE_ROW_BYTES = 128 + 16
"""One 64-element K slice of 16-bit elements per shared row, padded by 16 bytes (gemm_mma_wide.cu)."""
WIDE_TYPES = {
    "bf16-wide": _wide("bf16-wide", "gemm_bf16_mma_128x256", "mma_sync_bf16", "tensor_bf16", "bf16", 128, 256),
    "f16acc": _wide("f16acc", "gemm_f16_mma_256x256", "mma_sync_fp16", "tensor_fp16", "f16", 256, 256),
}


HOPPER_PROGRAM = PROGRAMS_DIR / "gemm_hopper.ptx"
HOPPER_TYPES = {
    # programs/gemm_hopper.cu's persistent 2 x 2 cluster kernel: 128 x 256 tiles of wgmma m64n256k16 fed by TMA
    # multicast (each CTA loads half of its A and half of its B slice), fp32 accumulators, bf16 output staged in
    # shared memory and stored by TMA; its ceiling is the dense peak (mma_sync names the mma.sync rate it is
    # compared with). 4 stages of (128 + 256) x 128 B, the mbarriers' 1 KB, two 16 KB staging buffers and the
    # 1024-byte swizzle alignment.
    "bf16-wgmma": GemmType("bf16-wgmma", "gemm_hopper_persistent_bf16", 2, "mma_sync_bf16", "tensor_bf16", "bf16",
                           tile_rows=128, tile_tokens=256, threads=384,
                           shared_bytes=1024 + 4 * (128 + 256) * 128 + 1024 + 2 * 64 * 128 * 2,
                           program=HOPPER_PROGRAM),
}
"""Kinds that run on Hopper's wgmma with TMA tensor maps and clusters (gpusim.labs.tensor_gemm.HopperLayerGemm)."""

NARROW_PROGRAM = PROGRAMS_DIR / "labs" / "decode_hopper.ptx"
NARROW_TOKENS = (64, 128, 256)
"""programs/labs/decode_hopper.cu's token tiles (wgmma m64nNk16, N = BN): decode_hopper_n64, _n128, _n256."""


def narrow_shared_bytes(tokens_tile: int) -> int:
    """decode_hopper.cu's Tile<BN>::SMEM_BYTES: as many stages of (128 + BN) x 128 B as 200 KB holds (at most
    8), the 1024-byte swizzle alignment and two mbarriers per stage."""
    stage = (128 + tokens_tile) * 128
    stages = min(8, 200 * 1024 // stage)
    return stages * stage + 1024 + 2 * stages * 8


NARROW_TYPE = GemmType("bf16-wgmma-narrow", "decode_hopper_n256", 2, "mma_sync_bf16", "tensor_bf16", "bf16",
                       tile_rows=128, tile_tokens=256, threads=384, shared_bytes=narrow_shared_bytes(256),
                       program=NARROW_PROGRAM)
"""The decode kernel of Hopper (gpusim.labs.tensor_gemm.NarrowHopperGemm): a token tile as narrow as the batch."""


def l2_cap_flops(config: Any, kind: str = "bf16", k: int | None = None) -> float:
    """The FLOP/s at which a type's block tile fills the L2 bandwidth with its operand loads (and, given ``k``,
    its output stores): its FLOPs per L2 byte x the config's L2 bytes per second. On h100-sxm (3815 B/cycle,
    28.9 per SM) the 128 x 128 bf16 tile's 64 FLOP/B feed 68 % of the mma.sync rate, 128 x 256's 85 90 %,
    256 x 256's 128 all of it; wgmma's 1.5x higher rate needs 1.5x more FLOP per L2 byte, the reason Hopper
    feeds its tensor cores with TMA multicast across a cluster."""
    kind_ = gemm_type(kind)
    per_byte = kind_.flop_per_l2_byte if k is None else kind_.flop_per_l2_byte_with_stores(k)
    return per_byte * config.l2_bytes_per_cycle * config.clock_hz


def gemm_type(name: str) -> GemmType:
    if name in TYPES:
        return TYPES[name]
    if name in WIDE_TYPES:
        return WIDE_TYPES[name]
    if name in HOPPER_TYPES:
        return HOPPER_TYPES[name]
    if name == NARROW_TYPE.name:
        return NARROW_TYPE
    raise LaunchError(f"tensor GEMM: unknown type '{name}' (types: "
                      f"{', '.join([*TYPES, *WIDE_TYPES, *HOPPER_TYPES, NARROW_TYPE.name])})")


def _bf16_bits(values: np.ndarray) -> np.ndarray:
    return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _bf16_values(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _e4m3_values(bits: np.ndarray) -> np.ndarray:
    x = bits.astype(np.int64)
    magnitude = np.where(x & 0x78, 1 + (x & 7) / 8, (x & 7) / 8) * 2.0 ** (np.maximum((x >> 3) & 15, 1) - 7.0)
    return magnitude * np.where(x & 0x80, -1.0, 1.0)


def random_operand(kind: GemmType, shape: tuple[int, int], rng: Any) -> tuple[np.ndarray, np.ndarray]:
    """(stored bits or values, their float64/int64 values): bf16 and e4m3 of magnitude < 1, f16 multiples of
    1/64 in [-1, 1], int8 in full range."""
    if kind.output == "f16":
        values = (rng.integers(-64, 65, shape) / 64).astype(np.float16)
        return values.view(np.uint16), values.astype(np.float64)
    if kind.element_bytes == 2:
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


def f16_stepwise(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A B^T as k / 16 mma.syncs with f16 accumulators compute it: per K step, the accumulator plus 16 exact
    products, rounded once to f16 (numpy's float16 cast rounds to nearest even), in increasing k."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)   # f16 operands: exact in float64
    acc = np.zeros((a.shape[0], b.shape[0]), np.float16)
    for k0 in range(0, a.shape[1], 16):
        acc = (acc.astype(np.float64) + a64[:, k0:k0 + 16] @ b64[:, k0:k0 + 16].T).astype(np.float16)
    return acc


class LayerGemm:
    """One layer's weights on a GPU, ready to multiply any number of tokens."""

    def __init__(self, gpu: Any, kind: str, rows: int, k: int, seed: int = 0) -> None:
        self.kind = gemm_type(kind)
        check_shape(self.kind, rows, k, 1)
        self.gpu = gpu
        self.rows, self.k = rows, k
        self.rng = np.random.default_rng(seed)
        self.kernel_name, self.shared_bytes = self.kind.variant(gpu.config)
        self.kernel = gpu.load(str(self.kind.program))[self.kernel_name]
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
        kind = self.kind
        grid = (-(-tokens // kind.tile_tokens), -(-self.rows // kind.tile_rows))
        run = self.gpu.launch(self.kernel, grid=grid, block=kind.threads, shared_bytes=self.shared_bytes,
                              cache_control="all",
                              args=[self.weights, self.gpu.to_device(bits), out, np.int32(self.rows),
                                    np.int32(tokens), np.int32(self.k)])
        if not check:
            return run, True
        got = out.get().reshape(self.rows, tokens)
        expected = self.weight_values @ values.T
        if self.kind.output == "int32":
            return run, bool(np.array_equal(got.astype(np.int64), expected))
        if self.kind.output == "f16":
            return run, bool(np.array_equal(got, f16_stepwise(self.weight_values, values).view(np.uint16)))
        accumulated = self.k * FP32_UNIT_ROUNDOFF * (np.abs(self.weight_values) @ np.abs(values).T)
        bound = accumulated + BF16_UNIT_ROUNDOFF * (np.abs(expected) + accumulated)
        return run, bool(np.all(np.abs(_bf16_values(got) - expected) <= bound))


def _wgmma_bf16_matches(layer: LayerGemm, out: np.ndarray, values: np.ndarray) -> bool:
    """Whether a wgmma kernel's bf16 output bits ``out`` (rows x tokens) are W X^T within the rigorous bound:
    each wgmma (16 elements of K) rounds its fp32 accumulator once, to within u of a sum of at most the
    products' magnitudes so far (bf16 products are exact in fp32); then one rounding to bf16."""
    got = _bf16_values(out.reshape(layer.rows, values.shape[0]))
    expected = layer.weight_values @ values.T
    accumulated = -(-layer.k // 16) * FP32_UNIT_ROUNDOFF * (np.abs(layer.weight_values) @ np.abs(values).T)
    bound = accumulated + BF16_UNIT_ROUNDOFF * (np.abs(expected) + accumulated)
    return bool(np.all(np.abs(got - expected) <= bound))


class HopperLayerGemm(LayerGemm):
    """A ``HOPPER_TYPES`` layer: C = W X^T (``rows`` x ``tokens``, bf16) by programs/gemm_hopper.cu's
    persistent 2 x 2 cluster kernel, W, X and C passed as TMA tensor maps (A: box {64, 64}, B: box {64, 128}:
    each CTA loads half of its tiles' slices and multicasts them; C: box {64, 64}, stored from shared memory;
    all 128-byte swizzled) and as many clusters as the GPU holds at once (``GPU.max_active_clusters``), at most
    one per 256 x 512 super-tile of C."""

    def __init__(self, gpu: Any, kind: str, rows: int, k: int, seed: int = 0) -> None:
        if int(gpu.config.wgmma_n8_interval_cycles) == 0 or gpu.max_active_clusters((2, 2, 1)) == 0:
            missing = "no wgmma" if not gpu.config.wgmma_n8_interval_cycles else "no room for a 4-CTA cluster"
            raise LaunchError(f"tensor GEMM ({kind}): needs wgmma and 4-CTA clusters (Hopper); config "
                              f"'{gpu.config.name}' has {missing}")
        super().__init__(gpu, kind, rows, k, seed)
        self.a_map = gpu.tensor_map(self.weights, box=[64, 64], swizzle=128)

    def run(self, tokens: int, check: bool = True, timing: bool = True) -> tuple[Any, bool]:
        """As LayerGemm.run; ``timing=False``: the functional path (the same result, no timing)."""
        check_shape(self.kind, self.rows, self.k, tokens)
        if self.k % 8 or tokens % 8:
            raise LaunchError(f"tensor GEMM ({self.kind.name}): k={self.k} and tokens={tokens} must be multiples "
                              "of 8 (the tensor maps' row strides, of X and of C, are multiples of 16 bytes)")
        bits, values = random_operand(self.kind, (tokens, self.k), self.rng)
        activations = self.gpu.to_device(bits)
        out = self.gpu.zeros((self.rows, tokens), np.uint16)
        kind = self.kind
        tiles = -(-tokens // (2 * kind.tile_tokens)) * -(-self.rows // (2 * kind.tile_rows))
        clusters = min(tiles, self.gpu.max_active_clusters((2, 2, 1)))
        run = self.gpu.launch(self.kernel, grid=(2 * clusters, 2), block=kind.threads, shared_bytes=self.shared_bytes,
                              cluster=(2, 2, 1), cache_control="all", timing=timing,
                              args=[self.a_map, self.gpu.tensor_map(activations, box=[64, 128], swizzle=128),
                                    self.gpu.tensor_map(out, box=[64, 64], swizzle=128), np.int32(self.rows),
                                    np.int32(tokens), np.int32(self.k)])
        return run, not check or _wgmma_bf16_matches(self, out.get(), values)


class NarrowHopperGemm(LayerGemm):
    """A decode step's batch through a layer on Hopper: C = W X^T (``rows`` x ``tokens``, bf16) by
    programs/labs/decode_hopper.cu, whose token tile is the narrowest of NARROW_TOKENS that holds the batch
    (all of it up to 256 tokens; 256-token tiles past that); W and X as TMA tensor maps (boxes {64, 128} and
    {64, BN}, 128-byte swizzle), no clusters."""

    def __init__(self, gpu: Any, rows: int, k: int, seed: int = 0) -> None:
        if int(gpu.config.wgmma_n8_interval_cycles) == 0:
            raise LaunchError(f"tensor GEMM ({NARROW_TYPE.name}): needs wgmma (Hopper); config '{gpu.config.name}' "
                              "has none")
        super().__init__(gpu, NARROW_TYPE.name, rows, k, seed)
        module = gpu.load(str(NARROW_PROGRAM))
        self.kernels = {tile: module[f"decode_hopper_n{tile}"] for tile in NARROW_TOKENS}
        self.w_map = gpu.tensor_map(self.weights, box=[64, 128], swizzle=128)

    @staticmethod
    def tokens_tile(tokens: int) -> int:
        """The token tile a batch of ``tokens`` runs with."""
        return next((tile for tile in NARROW_TOKENS if tokens <= tile), NARROW_TOKENS[-1])

    def run(self, tokens: int, check: bool = True, timing: bool = True) -> tuple[Any, bool]:
        """As LayerGemm.run; the kernel is decode_hopper_n{tokens_tile(tokens)}; ``timing=False``: the
        functional path."""
        check_shape(self.kind, self.rows, self.k, tokens)     # k: X's rows are a multiple of 16 bytes (TMA)
        tile = self.tokens_tile(tokens)
        self.kernel_name = f"decode_hopper_n{tile}"
        bits, values = random_operand(self.kind, (tokens, self.k), self.rng)
        activations = self.gpu.to_device(bits)
        out = self.gpu.zeros((self.rows, tokens), np.uint16)
        run = self.gpu.launch(self.kernels[tile], grid=(-(-tokens // tile), -(-self.rows // 128)), block=384,
                              shared_bytes=narrow_shared_bytes(tile), cache_control="all", timing=timing,
                              args=[self.w_map, self.gpu.tensor_map(activations, box=[64, tile], swizzle=128), out,
                                    np.int32(self.rows), np.int32(tokens), np.int32(self.k)])
        return run, not check or _wgmma_bf16_matches(self, out.get(), values)


def layer_gemm(gpu: Any, kind: str, rows: int, k: int, seed: int = 0) -> LayerGemm:
    """The layer of type ``kind``: a HopperLayerGemm for HOPPER_TYPES, a LayerGemm otherwise."""
    return (HopperLayerGemm if kind in HOPPER_TYPES else LayerGemm)(gpu, kind, rows, k, seed)
