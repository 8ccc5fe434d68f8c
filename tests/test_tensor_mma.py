"""mma.sync, ldmatrix, cp.async and the tensor number formats against numpy (issue 14).

The kernels (tests/ptx/tensor/*.cu, PTX from nvcc -arch=sm_90) build each fragment with the PTX ISA's
per-lane formulas in CUDA, so D = A B + C is checked against numpy for every shape and type; the
ldmatrix + cp.async kernel builds the fragments with ldmatrix instead (the CUTLASS idiom), which checks
ldmatrix's lane-to-row table against mma's fragment table. References: float64 products and sums
rounded once (f32 results within one unit in the last place), integers exact; bf16 and FP8 values are
decoded here from their bit layouts, independently of the engine.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import UnsupportedPTXError

HERE = Path(__file__).parent / "ptx" / "tensor"


@pytest.fixture(scope="module")
def gpu():
    return gpusim.GPU("h100-sxm", sms=1)


@pytest.fixture(scope="module")
def mod(gpu):
    return gpu.load(HERE / "mma_sync.ptx")


def bf16_bits(values: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bits, round to nearest even."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def fp8_table(e4m3: bool) -> np.ndarray:
    """Value of each of the 256 codes per the OCP FP8 spec (NaN for NaN codes)."""
    mbits, bias = (3, 7) if e4m3 else (2, 15)
    out = np.zeros(256)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        exponent = (code >> mbits) & ((1 << (7 - mbits)) - 1)
        mantissa = code & ((1 << mbits) - 1)
        top = (1 << (7 - mbits)) - 1
        if e4m3 and exponent == top and mantissa == (1 << mbits) - 1:
            out[code] = np.nan
        elif not e4m3 and exponent == top:
            out[code] = sign * np.inf if mantissa == 0 else np.nan
        elif exponent == 0:
            out[code] = sign * mantissa * 2.0 ** (1 - bias - mbits)
        else:
            out[code] = sign * (1 + mantissa / (1 << mbits)) * 2.0 ** (exponent - bias)
    return out


def fp8_encode(values: np.ndarray, e4m3: bool) -> np.ndarray:
    """Round to the nearest finite FP8 value (ties to the even code), saturating: a brute-force search."""
    table = fp8_table(e4m3)
    finite = [code for code in range(128) if np.isfinite(table[code])]
    positive = np.array([table[code] for code in finite])
    out = np.zeros(len(values), np.uint8)
    for i, v in enumerate(np.asarray(values, np.float64)):
        if np.isnan(v):
            out[i] = 0x7F
            continue
        distance = np.abs(positive - min(abs(v), positive.max()))     # satfinite: +-inf -> largest finite
        best = np.flatnonzero(distance == distance.min())
        code = finite[best[0]] if len(best) == 1 else [finite[b] for b in best if finite[b] % 2 == 0][0]
        out[i] = code | (0x80 if np.signbit(v) else 0)
    return out


def within_one_ulp(got: np.ndarray, ref: np.ndarray) -> None:
    ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    assert np.all(np.abs(got.astype(np.float64) - ref) <= ulp), np.max(np.abs(got - ref) / ulp)


def _launch(gpu, mod, name, a_bytes, b_bytes, c, d, timing=False):
    return gpu.launch(mod[name], grid=1, block=32, args=[gpu.to_device(a_bytes), gpu.to_device(b_bytes),
                                                         gpu.to_device(c), d], timing=timing)


FLOAT_CASES = [  # kernel, K, input kind
    ("mma_m16n8k16_f16_f32", 16, "f16"), ("mma_m16n8k8_f16_f32", 8, "f16"),
    ("mma_m16n8k16_bf16_f32", 16, "bf16"), ("mma_m16n8k8_bf16_f32", 8, "bf16"),
    ("mma_m16n8k8_tf32_f32", 8, "tf32"), ("mma_m16n8k32_e4m3_f32", 32, "e4m3"),
    ("mma_m16n8k32_e5m2_f32", 32, "e5m2"), ("mma_m16n8k32_e4m3_e5m2_f32", 32, "e4m3/e5m2"),
]


def _operand(rng, shape, kind):
    """(raw bytes, float64 values) of a random operand of the given input kind."""
    x = rng.standard_normal(shape).astype(np.float32)
    if kind == "f16":
        h = x.astype(np.float16)
        return h.view(np.uint8), h.astype(np.float64)
    if kind == "bf16":
        b = bf16_bits(x)
        return b.view(np.uint8), bf16_value(b)
    if kind == "tf32":   # f32 bits with nonzero low bits: the tensor core reads only the top 19
        return x.view(np.uint8), (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    e4m3 = kind == "e4m3"
    codes = rng.integers(0, 256, shape).astype(np.uint8)
    table = fp8_table(e4m3)
    codes[~np.isfinite(table[codes])] = 0x38     # no NaN/inf inputs
    return codes, table[codes]


@pytest.mark.parametrize("name,k,kind", FLOAT_CASES)
def test_mma_float_shapes_match_numpy(gpu, mod, name, k, kind):
    rng = np.random.default_rng(k * 7 + len(kind))
    a_kind, _, b_kind = kind.partition("/")
    a_bytes, a = _operand(rng, (16, k), a_kind)
    b_bytes, b = _operand(rng, (k, 8), b_kind or a_kind)
    c = rng.standard_normal((16, 8)).astype(np.float32)
    d = gpu.zeros((16, 8), np.float32)
    _launch(gpu, mod, name, a_bytes, b_bytes, c, d)
    within_one_ulp(d.get(), a @ b + c.astype(np.float64))


def test_mma_f16_accumulator(gpu, mod):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((16, 16)) / 4).astype(np.float16)
    b = (rng.standard_normal((16, 8)) / 4).astype(np.float16)
    c = rng.standard_normal((16, 8)).astype(np.float16)
    d = gpu.zeros((16, 8), np.uint16)
    _launch(gpu, mod, "mma_m16n8k16_f16_f16", a.view(np.uint8), b.view(np.uint8), c.view(np.uint16), d)
    ref = a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)
    got = d.get().view(np.float16).astype(np.float64)
    assert np.all(np.abs(got - ref) <= np.spacing(np.abs(ref).astype(np.float16)).astype(np.float64))


@pytest.mark.parametrize("name,a_signed,b_signed", [
    ("mma_m16n8k32_s8_s32", True, True), ("mma_m16n8k32_u8_s32", False, False),
    ("mma_m16n8k32_u8s8_s32", False, True)])
def test_mma_int8_exact(gpu, mod, name, a_signed, b_signed):
    rng = np.random.default_rng(5)
    a = rng.integers(-128 if a_signed else 0, 128 if a_signed else 256, (16, 32))
    b = rng.integers(-128 if b_signed else 0, 128 if b_signed else 256, (32, 8))
    c = rng.integers(-(1 << 20), 1 << 20, (16, 8)).astype(np.int32)
    d = gpu.zeros((16, 8), np.int32)
    _launch(gpu, mod, name, a.astype(np.int8 if a_signed else np.uint8).view(np.uint8),
            b.astype(np.int8 if b_signed else np.uint8).view(np.uint8), c, d)
    assert np.array_equal(d.get(), (a @ b + c).astype(np.int32))


def test_mma_int8_wraps_and_satfinite_clamps(gpu, mod):
    a = np.full((16, 32), 127, np.int8)
    b = np.full((32, 8), 127, np.int8)
    c = np.full((16, 8), 2**31 - 100000, np.int32)
    c[8:] = -(2**31) + 5                       # rows 8-15 stay in range
    exact = a.astype(np.int64) @ b.astype(np.int64) + c        # rows 0-7 pass 2**31 - 1
    d = gpu.zeros((16, 8), np.int32)
    _launch(gpu, mod, "mma_m16n8k32_s8_s32", a.view(np.uint8), b.view(np.uint8), c, d)
    assert np.array_equal(d.get(), ((exact + 2**31) % 2**32 - 2**31).astype(np.int32))
    d2 = gpu.zeros((16, 8), np.int32)
    _launch(gpu, mod, "mma_m16n8k32_s8_s32_satfinite", a.view(np.uint8), b.view(np.uint8), c, d2)
    assert np.array_equal(d2.get(), np.clip(exact, -(2**31), 2**31 - 1).astype(np.int32))


@pytest.mark.parametrize("trans", [0, 1])
def test_ldmatrix_and_cp_async_feed_mma(gpu, mod, trans):
    rng = np.random.default_rng(11 + trans)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 8)).astype(np.float16)        # K x N
    b_stored = b if trans else np.ascontiguousarray(b.T)       # .trans: K x N rows; else N x K rows
    d = gpu.zeros((16, 8), np.float32)
    gpu.launch(mod["ldmatrix_cp_async_mma"], grid=1, block=32,
               args=[gpu.to_device(a), gpu.to_device(b_stored), d, np.int32(trans)], timing=False)
    within_one_ulp(d.get(), a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("src_bytes", [16, 8, 0])
def test_cp_async_zero_fill(gpu, mod, src_bytes):
    src = np.arange(1, 161, dtype=np.uint32)
    dst = gpu.zeros(160, np.uint32)
    gpu.launch(mod["cp_async_zero_fill"], grid=1, block=32, args=[gpu.to_device(src), dst, np.int32(src_bytes)],
               timing=False)
    got = dst.get()
    want = src.copy()
    words = src_bytes // 4
    for lane in range(32):
        want[lane * 4 + words:lane * 4 + 4] = 0
    assert np.array_equal(got, want)


def test_tensor_number_formats_convert(gpu):
    conv = gpu.load(HERE / "convert.ptx")["convert"]
    rng = np.random.default_rng(2)
    n = 256
    x = np.concatenate([rng.standard_normal(n - 8) * 50, [448.0, 470.0, 1e6, -1e9, 0.0, -0.0, 1e-4, np.nan]])
    y = np.concatenate([rng.standard_normal(n - 8) / 300, [464.0, 57344.0, 60000.0, np.inf, 2**-9, 3 * 2**-10,
                                                           -(2**-17), 1.0]])
    x, y = x.astype(np.float32), y.astype(np.float32)
    outs = [gpu.zeros(n, np.uint32) for _ in range(7)]
    gpu.launch(conv, grid=1, block=n, args=[gpu.to_device(x), gpu.to_device(y), *outs, np.int32(n)], timing=False)
    e4m3, e5m2, e4m3_h, tf32, back, h2, bf2 = (o.get() for o in outs)
    for got, e4 in ((e4m3, True), (e5m2, False)):
        assert np.array_equal(got >> 8, fp8_encode(x, e4)), e4
        assert np.array_equal(got & 0xFF, fp8_encode(y, e4)), e4
    finite = np.isfinite(x) & np.isfinite(y)
    with np.errstate(over="ignore"):
        assert np.array_equal((h2 >> 16)[finite], x.astype(np.float16).view(np.uint16)[finite])
        assert np.array_equal((h2 & 0xFFFF)[finite], y.astype(np.float16).view(np.uint16)[finite])
    assert (h2[~np.isfinite(x)] >> 16).tolist() == [0x7FFF]      # NaN: the canonical f16 NaN
    assert np.array_equal((bf2 >> 16)[finite], bf16_bits(x)[finite])
    halves = (h2 >> 16).astype(np.uint16).view(np.float16).astype(np.float64)
    assert np.array_equal(e4m3_h >> 8, fp8_encode(halves, True))
    bits = x.view(np.uint32).astype(np.uint64)
    rna = ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32)
    assert np.array_equal(tf32[np.isfinite(x)], rna[np.isfinite(x)])
    table = fp8_table(True)
    widened = (back >> 16).astype(np.uint16).view(np.float16).astype(np.float64)
    codes = e4m3 >> 8
    ok = np.isfinite(table[codes])
    assert np.array_equal(widened[ok], table[codes][ok])


def test_timed_run_matches_functional(mod):
    gpu = gpusim.GPU("h100-sxm", sms=1)
    rng = np.random.default_rng(9)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 8)).astype(np.float16)
    d = gpu.zeros((16, 8), np.float32)
    gpu.launch(gpu.load(HERE / "mma_sync.ptx")["ldmatrix_cp_async_mma"], grid=1, block=32,
               args=[gpu.to_device(a), gpu.to_device(np.ascontiguousarray(b.T)), d, np.int32(0)])
    within_one_ulp(d.get(), a.astype(np.float64) @ b.astype(np.float64))


def test_mma_refused_on_gpus_without_it():
    v100 = gpusim.GPU("v100", sms=1)
    kernel = v100.load(HERE / "mma_sync.ptx")["mma_m16n8k16_f16_f32"]
    buf = v100.zeros(256, np.float32)
    with pytest.raises(UnsupportedPTXError, match="not available on v100"):
        v100.launch(kernel, grid=1, block=32, args=[buf, buf, buf, buf])


def test_unsupported_mma_form_names_the_line(gpu):
    text = (HERE / "mma_sync.ptx").read_text().replace("m16n8k16.row.col.f32.f16.f16.f32",
                                                       "m16n8k16.col.col.f32.f16.f16.f32", 1)
    kernel_or_error = gpu.load_ptx(text, "bad.ptx")
    with pytest.raises(UnsupportedPTXError, match="row.col"):
        buf = gpu.zeros(256, np.float32)
        gpu.launch(kernel_or_error["mma_m16n8k16_f16_f32"], grid=1, block=32, args=[buf, buf, buf, buf])
