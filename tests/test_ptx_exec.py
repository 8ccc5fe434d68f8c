"""End-to-end instruction semantics through the public API: small hand-written PTX kernels,
launched with ``gpu.load_ptx`` + ``gpu.launch`` under both the functional and the timed loop, checked
against numpy / Python arithmetic written in the test.

Each kernel gets per-thread 32-byte rows of three inputs (``%rd21`` → a, ``%rd22`` → b, ``%rd23`` → c)
and one output (``%rd20``): four 8-byte slots per thread, a value in the low bytes of its slot.
"""

import math
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import gpusim

TIMING = pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
PROLOGUE = """
  .reg .pred %p<8>; .reg .b16 %h<8>; .reg .b32 %r<32>; .reg .b64 %rd<32>; .reg .f32 %f<32>;
  .reg .f64 %fd<16>;
  ld.param.u64 %rd20, [p_out]; ld.param.u64 %rd21, [p_a]; ld.param.u64 %rd22, [p_b];
  ld.param.u64 %rd23, [p_c];
  cvta.to.global.u64 %rd20, %rd20; cvta.to.global.u64 %rd21, %rd21;
  cvta.to.global.u64 %rd22, %rd22; cvta.to.global.u64 %rd23, %rd23;
  mov.u32 %r31, %tid.x; mul.wide.u32 %rd30, %r31, 32;
  add.s64 %rd20, %rd20, %rd30; add.s64 %rd21, %rd21, %rd30; add.s64 %rd22, %rd22, %rd30;
  add.s64 %rd23, %rd23, %rd30;
"""


@pytest.fixture(scope="module")
def gpu():
    return gpusim.GPU("teaching")


def _slots(values, n: int) -> np.ndarray:
    """Per-thread rows of four 8-byte slots; ``values`` is (n,) or (n, k) of a 4- or 8-byte dtype."""
    rows = np.zeros((n, 4), dtype=np.uint64)
    if values is None:
        return rows
    values = np.ascontiguousarray(values).reshape(n, -1)
    bits = values.view(np.uint64) if values.dtype.itemsize == 8 else values.view(np.uint32)
    rows[:, :values.shape[1]] = bits.astype(np.uint64)
    return rows


def run(gpu, body: str, timing: bool, a=None, b=None, c=None, n: int = 32) -> np.ndarray:
    """Run ``body`` on ``n`` threads of one block; returns the output slots, (n, 4) uint64."""
    text = HEADER + (".visible .entry k(.param .u64 p_out, .param .u64 p_a, .param .u64 p_b, "
                     ".param .u64 p_c)\n{" + PROLOGUE + body + "\n  ret;\n}\n")
    kernel = gpu.load_ptx(text)["k"]
    out = gpu.zeros((n, 4), np.uint64)
    arrays = [gpu.to_device(_slots(v, n)) for v in (a, b, c)]
    gpu.launch(kernel, grid=1, block=n, args=[out, *arrays], timing=timing)
    return out.get()


def low32(slots: np.ndarray, dtype=np.uint32) -> np.ndarray:
    return (slots & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(dtype)


def nearest_f32(exact: Fraction) -> np.float32:
    """``exact`` rounded once to float32, to nearest, ties to even (no double rounding through f64)."""
    guess = np.float32(float(exact))
    candidates = [np.nextafter(guess, np.float32(-np.inf)), guess, np.nextafter(guess, np.float32(np.inf))]
    candidates = [v for v in candidates if np.isfinite(v)]
    return min(candidates, key=lambda v: (abs(Fraction(float(v)) - exact), int(v.view(np.uint32)) & 1))


U32_EDGES = np.array([0, 1, 2, 3, 7, 31, 32, 33, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0xFFFFFFFE,
                      12345, 0xDEADBEEF, 0x55555555, 0xAAAAAAAA, 1 << 16, 65535, 100, 1000, 999999,
                      0x12345678,
                      0x87654321, 5, 6, 64, 63, 0x40000000, 0xC0000000, 17, 0x0F0F0F0F], dtype=np.uint32)
U32_OTHER = np.roll(U32_EDGES, 5)


# ---------------------------------------------------------------- integer arithmetic
@TIMING
def test_add_sub_mul_wrap_around_u32(gpu, timing):
    out = run(gpu, """
      ld.global.u32 %r1, [%rd21]; ld.global.u32 %r2, [%rd22];
      add.u32 %r3, %r1, %r2; sub.u32 %r4, %r1, %r2; mul.lo.u32 %r5, %r1, %r2; neg.s32 %r6, %r1;
      st.global.u32 [%rd20], %r3; st.global.u32 [%rd20+8], %r4; st.global.u32 [%rd20+16], %r5;
      st.global.u32 [%rd20+24], %r6;""", timing, U32_EDGES, U32_OTHER)
    a = [int(x) for x in U32_EDGES]
    b = [int(x) for x in U32_OTHER]
    mask = 0xFFFFFFFF
    assert [int(x) for x in out[:, 0]] == [(x + y) & mask for x, y in zip(a, b, strict=False)]
    assert [int(x) for x in out[:, 1]] == [(x - y) & mask for x, y in zip(a, b, strict=False)]
    assert [int(x) for x in out[:, 2]] == [(x * y) & mask for x, y in zip(a, b, strict=False)]
    assert [int(x) for x in out[:, 3]] == [(-x) & mask for x in a]


def _s32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >> 31 else x


@TIMING
def test_mul_hi_wide_and_mad(gpu, timing):
    out = run(gpu, """
      ld.global.u32 %r1, [%rd21]; ld.global.u32 %r2, [%rd22];
      mul.hi.u32 %r3, %r1, %r2; mul.hi.s32 %r4, %r1, %r2;
      mul.wide.s32 %rd1, %r1, %r2; mul.wide.u32 %rd2, %r1, %r2;
      mad.lo.s32 %r5, %r1, %r2, %r1; mad.hi.u32 %r6, %r1, %r2, 7;
      st.global.u32 [%rd20], %r3; st.global.u32 [%rd20+4], %r4; st.global.u64 [%rd20+8], %rd1;
      st.global.u64 [%rd20+16], %rd2; st.global.u32 [%rd20+24], %r5; st.global.u32 [%rd20+28], %r6;""",
              timing, U32_EDGES, U32_OTHER)
    for lane, (x, y) in enumerate(zip(U32_EDGES.tolist(), U32_OTHER.tolist(), strict=False)):
        row = [int(v) for v in out[lane]]
        assert row[0] & 0xFFFFFFFF == (x * y) >> 32
        assert row[0] >> 32 == ((_s32(x) * _s32(y)) >> 32) & 0xFFFFFFFF
        assert row[1] == (_s32(x) * _s32(y)) & ((1 << 64) - 1)
        assert row[2] == x * y
        assert row[3] & 0xFFFFFFFF == (x * y + x) & 0xFFFFFFFF
        assert row[3] >> 32 == (((x * y) >> 32) + 7) & 0xFFFFFFFF


@TIMING
def test_64_bit_mul_hi_and_wrap(gpu, timing):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1 << 64, 32, dtype=np.uint64)
    b = rng.integers(0, 1 << 64, 32, dtype=np.uint64)
    a[:4] = [0, (1 << 64) - 1, 1 << 63, (1 << 63) - 1]
    out = run(gpu, """
      ld.global.u64 %rd1, [%rd21]; ld.global.u64 %rd2, [%rd22];
      mul.hi.u64 %rd3, %rd1, %rd2; mul.hi.s64 %rd4, %rd1, %rd2; mul.lo.u64 %rd5, %rd1, %rd2;
      add.s64 %rd6, %rd1, %rd2;
      st.global.u64 [%rd20], %rd3; st.global.u64 [%rd20+8], %rd4; st.global.u64 [%rd20+16], %rd5;
      st.global.u64 [%rd20+24], %rd6;""", timing, a, b)
    mask = (1 << 64) - 1

    def s64(x):
        return x - (1 << 64) if x >> 63 else x
    for lane in range(32):
        x, y = int(a[lane]), int(b[lane])
        assert int(out[lane, 0]) == (x * y) >> 64
        assert int(out[lane, 1]) == ((s64(x) * s64(y)) >> 64) & mask
        assert int(out[lane, 2]) == (x * y) & mask
        assert int(out[lane, 3]) == (x + y) & mask


@TIMING
def test_shifts_at_and_beyond_the_width(gpu, timing):
    amounts = np.array([0, 1, 5, 31, 32, 33, 63, 64, 65, 100, 255, 1 << 31, 0xFFFFFFFF] * 3)[:32]
    values = np.resize(np.array([0x80000001, 0xFFFFFFFF, 0x12345678, 0x7FFFFFFF], dtype=np.uint32), 32)
    out = run(gpu, """
      ld.global.u32 %r1, [%rd21]; ld.global.u32 %r2, [%rd22]; cvt.u64.u32 %rd1, %r1;
      shl.b32 %r3, %r1, %r2; shr.u32 %r4, %r1, %r2; shr.s32 %r5, %r1, %r2; shl.b64 %rd2, %rd1, %r2;
      st.global.u32 [%rd20], %r3; st.global.u32 [%rd20+8], %r4; st.global.u32 [%rd20+16], %r5;
      st.global.u64 [%rd20+24], %rd2;""", timing, values, amounts.astype(np.uint32))
    for lane in range(32):
        x, k = int(values[lane]), int(amounts[lane])
        clamped = min(k, 32)
        assert int(out[lane, 0]) == (x << clamped) & 0xFFFFFFFF
        assert int(out[lane, 1]) == x >> clamped
        assert int(out[lane, 2]) == (_s32(x) >> clamped) & 0xFFFFFFFF
        assert int(out[lane, 3]) == (x << min(k, 64)) & ((1 << 64) - 1)


@TIMING
def test_signed_division_and_remainder_truncate_toward_zero(gpu, timing):
    a = np.resize(np.array([7, -7, 7, -7, -2147483648, -2147483648, 0, 100, -1, 5], dtype=np.int32), 32)
    b = np.resize(np.array([2, 2, -2, -2, -1, 3, 5, -7, 1, 0], dtype=np.int32), 32)
    out = run(gpu, """
      ld.global.s32 %r1, [%rd21]; ld.global.s32 %r2, [%rd22];
      div.s32 %r3, %r1, %r2; rem.s32 %r4, %r1, %r2; div.u32 %r5, %r1, %r2; rem.u32 %r6, %r1, %r2;
      st.global.u32 [%rd20], %r3; st.global.u32 [%rd20+8], %r4; st.global.u32 [%rd20+16], %r5;
      st.global.u32 [%rd20+24], %r6;""", timing, a, b)
    for lane in range(32):
        x, y = int(a[lane]), int(b[lane])
        ux, uy = x & 0xFFFFFFFF, y & 0xFFFFFFFF
        if y == 0:   # documented choice (docs/semantics.md): NVIDIA's division sequence
            quotient, remainder = (-1 if x >= 0 else 1), x
            uq, ur = 0xFFFFFFFF, ux
        elif x == -2**31 and y == -1:
            quotient, remainder = -2**31, 0
            uq, ur = ux // uy, ux % uy
        else:
            quotient = abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)
            remainder = x - quotient * y
            uq, ur = ux // uy, ux % uy
        assert _s32(int(out[lane, 0])) == quotient, (x, y)
        assert _s32(int(out[lane, 1])) == remainder, (x, y)
        assert int(out[lane, 2]) == uq and int(out[lane, 3]) == ur, (x, y)


@TIMING
def test_min_max_signed_unsigned(gpu, timing):
    out = run(gpu, """
      ld.global.u32 %r1, [%rd21]; ld.global.u32 %r2, [%rd22];
      min.s32 %r3, %r1, %r2; max.s32 %r4, %r1, %r2; min.u32 %r5, %r1, %r2; max.u32 %r6, %r1, %r2;
      st.global.u32 [%rd20], %r3; st.global.u32 [%rd20+8], %r4; st.global.u32 [%rd20+16], %r5;
      st.global.u32 [%rd20+24], %r6;""", timing, U32_EDGES, U32_OTHER)
    sa, sb = U32_EDGES.view(np.int32), U32_OTHER.view(np.int32)
    assert np.array_equal(low32(out[:, 0], np.int32), np.minimum(sa, sb))
    assert np.array_equal(low32(out[:, 1], np.int32), np.maximum(sa, sb))
    assert np.array_equal(low32(out[:, 2]), np.minimum(U32_EDGES, U32_OTHER))
    assert np.array_equal(low32(out[:, 3]), np.maximum(U32_EDGES, U32_OTHER))


def _bfe(x: int, pos: int, length: int, signed: bool) -> int:
    pos, length = pos & 0xFF, length & 0xFF
    if length == 0:
        return 0
    field = [((x >> min(pos + i, 31)) & 1) if pos + i < 32 else None for i in range(length)]
    sign_bit = (x >> 31) & 1 if pos + length - 1 >= 32 else (x >> (pos + length - 1)) & 1
    result = 0
    for i in range(32):
        if i < length and pos + i < 32:
            bit = field[i]
        else:
            bit = sign_bit if signed else 0
        result |= bit << i
    return result


@TIMING
def test_bit_field_and_bit_count_instructions(gpu, timing):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    x[:3] = [0, 0xFFFFFFFF, 0x80000000]
    positions = rng.integers(0, 40, 32).astype(np.uint32)
    lengths = rng.integers(0, 40, 32).astype(np.uint32)
    out = run(gpu, """
      ld.global.u32 %r1, [%rd21]; ld.global.u32 %r2, [%rd22]; ld.global.u32 %r3, [%rd23];
      bfe.u32 %r4, %r1, %r2, %r3; bfe.s32 %r5, %r1, %r2, %r3;
      popc.b32 %r6, %r1; clz.b32 %r7, %r1; brev.b32 %r8, %r1;
      bfi.b32 %r9, %r1, 0xF0F0F0F0, %r2, %r3;
      prmt.b32 %r10, %r1, 0x11223344, 0x7150;
      st.global.u32 [%rd20], %r4; st.global.u32 [%rd20+4], %r5; st.global.u32 [%rd20+8], %r6;
      st.global.u32 [%rd20+12], %r7; st.global.u32 [%rd20+16], %r8; st.global.u32 [%rd20+20], %r9;
      st.global.u32 [%rd20+24], %r10;""", timing, x, positions, lengths)
    for lane in range(32):
        value, pos, length = int(x[lane]), int(positions[lane]), int(lengths[lane])
        words = [int(out[lane, k]) for k in range(4)]
        assert words[0] & 0xFFFFFFFF == _bfe(value, pos, length, False), (value, pos, length)
        assert words[0] >> 32 == _bfe(value, pos, length, True), (value, pos, length)
        assert words[1] & 0xFFFFFFFF == bin(value).count("1")
        assert words[1] >> 32 == 32 - value.bit_length()
        assert words[2] & 0xFFFFFFFF == int(f"{value:032b}"[::-1], 2)
        # bfi: insert the low bits of a into b at pos, len (both clamped like the PTX pseudo-code)
        base = 0xF0F0F0F0
        expect = base
        for i in range(length):
            if pos + i < 32:
                expect = (expect & ~(1 << (pos + i))) | (((value >> i) & 1) << (pos + i))
        assert words[2] >> 32 == expect, (value, pos, length)
        source = value.to_bytes(4, "little") + (0x11223344).to_bytes(4, "little")
        selectors = [(0x7150 >> (4 * i)) & 0x7 for i in range(4)]   # msb of each nibble 0: no replicate
        assert words[3] & 0xFFFFFFFF == int.from_bytes(bytes(source[s] for s in selectors), "little")


@TIMING
def test_selp_and_slct(gpu, timing):
    a = np.arange(32, dtype=np.int32) - 16
    out = run(gpu, """
      ld.global.s32 %r1, [%rd21];
      setp.lt.s32 %p1, %r1, 0; selp.b32 %r2, 111, 222, %p1;
      slct.u32.s32 %r3, 333, 444, %r1;
      cvt.rn.f32.s32 %f1, %r1; slct.f32.f32 %f2, 1.5, 2.5, %f1;
      st.global.u32 [%rd20], %r2; st.global.u32 [%rd20+8], %r3; st.global.f32 [%rd20+16], %f2;""",
              timing, a)
    assert np.array_equal(low32(out[:, 0]), np.where(a < 0, 111, 222))
    assert np.array_equal(low32(out[:, 1]), np.where(a >= 0, 333, 444))
    assert np.array_equal(low32(out[:, 2], np.float32), np.where(a >= 0, 1.5, 2.5).astype(np.float32))


# ---------------------------------------------------------------- comparisons
FLOAT_CMP = {
    "eq": lambda x, y: x == y, "ne": lambda x, y: x != y and not (math.isnan(x) or math.isnan(y)),
    "lt": lambda x, y: x < y, "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y,
    "num": lambda x, y: not (math.isnan(x) or math.isnan(y)),
    "nan": lambda x, y: math.isnan(x) or math.isnan(y),
}
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):   # the unordered forms: true when either is NaN
    FLOAT_CMP[_name + "u"] = lambda x, y, ordered=FLOAT_CMP[_name]: FLOAT_CMP["nan"](x, y) or ordered(x, y)


@TIMING
@pytest.mark.parametrize("cmp", sorted(FLOAT_CMP))
def test_setp_float_comparisons_including_unordered(gpu, timing, cmp):
    values = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 2.5]
    pairs = [(x, y) for x in values for y in values][:64]
    a = np.array([p[0] for p in pairs], dtype=np.float32)
    b = np.array([p[1] for p in pairs], dtype=np.float32)
    out = run(gpu, f"""
      ld.global.f32 %f1, [%rd21]; ld.global.f32 %f2, [%rd22];
      setp.{cmp}.f32 %p1, %f1, %f2; selp.u32 %r1, 1, 0, %p1; st.global.u32 [%rd20], %r1;""",
              timing, a, b, n=64)
    expect = [int(FLOAT_CMP[cmp](float(x), float(y))) for x, y in zip(a, b, strict=False)]
    assert low32(out[:, 0]).tolist() == expect


@TIMING
def test_setp_integer_comparisons_and_boolean_combining(gpu, timing):
    a = np.resize(np.array([-3, 0, 5, 5, 0x7FFFFFFF, -2147483648], dtype=np.int32), 32)
    b = np.resize(np.array([5, 0, -3, 5, -1, 1, 7], dtype=np.int32), 32)
    flags = (np.arange(32) % 3 == 0).astype(np.int32)
    body = """
      ld.global.s32 %r1, [%rd21]; ld.global.s32 %r2, [%rd22]; ld.global.s32 %r3, [%rd23];
      setp.ne.s32 %p2, %r3, 0;
    """
    tests = [("lt.s32", lambda x, y: x < y), ("le.s32", lambda x, y: x <= y), ("gt.s32", lambda x, y: x > y),
             ("ge.s32", lambda x, y: x >= y), ("eq.s32", lambda x, y: x == y),
             ("ne.s32", lambda x, y: x != y),
             ("lo.u32", lambda x, y: (x & 0xFFFFFFFF) < (y & 0xFFFFFFFF)),
             ("hs.u32", lambda x, y: (x & 0xFFFFFFFF) >= (y & 0xFFFFFFFF))]
    for i, (cmp, _) in enumerate(tests):
        body += f"setp.{cmp} %p1, %r1, %r2; selp.u32 %r4, {1 << i}, 0, %p1; or.b32 %r5, %r5, %r4;\n"
    body += """
      setp.lt.and.s32 %p3, %r1, %r2, !%p2; selp.u32 %r6, 1, 0, %p3;
      setp.lt.or.s32 %p3, %r1, %r2, %p2; selp.u32 %r7, 1, 0, %p3;
      setp.lt.xor.s32 %p3|%p4, %r1, %r2, !%p2; selp.u32 %r8, 1, 0, %p3; selp.u32 %r9, 1, 0, %p4;
      st.global.u32 [%rd20], %r5; st.global.u32 [%rd20+8], %r6; st.global.u32 [%rd20+12], %r7;
      st.global.u32 [%rd20+16], %r8; st.global.u32 [%rd20+20], %r9;"""
    out = run(gpu, "mov.u32 %r5, 0;" + body, timing, a, b, flags)
    for lane in range(32):
        x, y, flag = int(a[lane]), int(b[lane]), bool(flags[lane])
        bits = sum(1 << i for i, (_, fn) in enumerate(tests) if fn(x, y))
        assert int(out[lane, 0]) == bits, (x, y)
        words = [int(v) for v in out[lane]]
        assert words[1] & 0xFFFFFFFF == int(x < y and not flag)
        assert words[1] >> 32 == int(x < y or flag)
        assert words[2] & 0xFFFFFFFF == int((x < y) != (not flag))
        assert words[2] >> 32 == int((not (x < y)) != (not flag))


# ---------------------------------------------------------------- conversions
@TIMING
def test_cvt_float_to_int_rounding_modes_and_saturation(gpu, timing):
    values = np.resize(np.array([2.5, 3.5, -2.5, -0.5, 1.7, -1.7, 0.49999997, 3e9, -3e9, np.nan, np.inf,
                                 -np.inf, 300.0, -5.0], dtype=np.float32), 32)
    out = run(gpu, """
      ld.global.f32 %f1, [%rd21];
      cvt.rni.s32.f32 %r1, %f1; cvt.rzi.s32.f32 %r2, %f1; cvt.rmi.s32.f32 %r3, %f1; cvt.rpi.s32.f32 %r4, %f1;
      cvt.rni.u32.f32 %r5, %f1; cvt.rzi.sat.u8.f32 %r6, %f1; cvt.rni.f32.f32 %f2, %f1;
      cvt.sat.f32.f32 %f3, %f1;
      st.global.u32 [%rd20], %r1; st.global.u32 [%rd20+4], %r2; st.global.u32 [%rd20+8], %r3;
      st.global.u32 [%rd20+12], %r4; st.global.u32 [%rd20+16], %r5; st.global.u32 [%rd20+20], %r6;
      st.global.f32 [%rd20+24], %f2; st.global.f32 [%rd20+28], %f3;""", timing, values)

    def to_int(x, rounding, low, high):
        if math.isnan(x):
            return 0
        if math.isinf(x):
            return high if x > 0 else low
        rounded = {"rni": round, "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}[rounding](x)
        return min(max(rounded, low), high)
    for lane in range(32):
        x = float(values[lane])
        words = [int(v) for v in out[lane]]
        got = [words[k // 2] >> (32 * (k % 2)) & 0xFFFFFFFF for k in range(8)]
        for k, rounding in enumerate(("rni", "rzi", "rmi", "rpi")):
            assert _s32(got[k]) == to_int(x, rounding, -2**31, 2**31 - 1), (x, rounding)
        assert got[4] == to_int(x, "rni", 0, 2**32 - 1), x
        assert got[5] == to_int(x, "rzi", 0, 255), x
        rounded = struct.unpack("<f", struct.pack("<I", got[6]))[0]
        assert (math.isnan(rounded) and math.isnan(x)) or rounded == float(np.rint(np.float32(x)))
        saturated = struct.unpack("<f", struct.pack("<I", got[7]))[0]
        assert saturated == (0.0 if math.isnan(x) else min(max(x, 0.0), 1.0)), x


@TIMING
def test_cvt_int_widening_narrowing_and_float_rounding(gpu, timing):
    a = np.resize(np.array([-1, 255, 256, -129, 0x7FFFFFFF, 16777217, -16777219, 33554435],
                           dtype=np.int32), 32)
    out = run(gpu, """
      ld.global.s32 %r1, [%rd21];
      cvt.s64.s32 %rd1, %r1; cvt.s8.s32 %r2, %r1; cvt.sat.s8.s32 %r3, %r1;
      cvt.rn.f32.s32 %f1, %r1; cvt.rz.f32.s32 %f2, %r1; cvt.rm.f32.s32 %f3, %r1; cvt.rp.f32.s32 %f4, %r1;
      st.global.u64 [%rd20], %rd1; st.global.u32 [%rd20+16], %r2;
      st.global.u32 [%rd20+20], %r3; st.global.f32 [%rd20+24], %f1; st.global.f32 [%rd20+28], %f2;
      st.global.f32 [%rd20+12], %f4; st.global.f32 [%rd20+8], %f3;""", timing, a)
    for lane in range(32):
        x = int(a[lane])
        assert int(out[lane, 0]) == x & ((1 << 64) - 1)
        # PTX: a signed cvt result is sign-extended to its (here 32-bit) destination register's width
        narrowed = (x & 0xFF) - 256 if x & 0x80 else x & 0xFF
        assert int(out[lane, 2]) & 0xFFFFFFFF == narrowed % (1 << 32)
        assert int(out[lane, 2]) >> 32 == min(max(x, -128), 127) % (1 << 32)
        nearest = float(np.float32(x))          # numpy's int->f32 rounds to nearest even
        below = nearest if nearest <= x else float(np.nextafter(np.float32(nearest), np.float32(-np.inf)))
        above = nearest if nearest >= x else float(np.nextafter(np.float32(nearest), np.float32(np.inf)))
        toward_zero = below if x >= 0 else above
        floats = out[lane, 3:4].view(np.float32)
        assert floats[0] == nearest and floats[1] == toward_zero, x
        directed = out[lane, 1:2].view(np.float32)
        assert directed[0] == below and directed[1] == above, x


@TIMING
def test_cvt_float_narrowing_rounding_modes(gpu, timing):
    rng = np.random.default_rng(5)
    values = rng.standard_normal(32) * 10.0 ** rng.integers(-5, 5, 32)
    values[:4] = [1e300, -1e300, 1.0 + 2.0 ** -30, -(1.0 + 2.0 ** -30)]
    out = run(gpu, """
      ld.global.f64 %fd1, [%rd21];
      cvt.rn.f32.f64 %f1, %fd1; cvt.rz.f32.f64 %f2, %fd1; cvt.rm.f32.f64 %f3, %fd1; cvt.rp.f32.f64 %f4, %fd1;
      cvt.f64.f32 %fd2, %f1;
      st.global.v4.f32 [%rd20], {%f1, %f2, %f3, %f4}; st.global.f64 [%rd20+16], %fd2;""", timing, values)
    for lane in range(32):
        x = float(values[lane])
        nearest = np.float32(x) if abs(x) < 3.5e38 else np.float32(math.copysign(math.inf, x))
        down = nearest if float(nearest) <= x else np.nextafter(nearest, np.float32(-np.inf))
        up = nearest if float(nearest) >= x else np.nextafter(nearest, np.float32(np.inf))
        got = out[lane].view(np.float32)
        assert got[0] == nearest
        assert got[1] == (down if x >= 0 else up)
        assert got[2] == down and got[3] == up
        assert out[lane, 2:3].view(np.float64)[0] == float(nearest)


# ---------------------------------------------------------------- floating point
@TIMING
def test_f32_and_f64_arithmetic_with_nan_and_inf(gpu, timing):
    special = [0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 3.0e38, 1e-45, 7.25]
    pairs = [(x, y) for x in special for y in special][:64]
    a = np.array([p[0] for p in pairs], dtype=np.float32)
    b = np.array([p[1] for p in pairs], dtype=np.float32)
    out = run(gpu, """
      ld.global.f32 %f1, [%rd21]; ld.global.f32 %f2, [%rd22];
      add.rn.f32 %f3, %f1, %f2; mul.rn.f32 %f4, %f1, %f2; div.rn.f32 %f5, %f1, %f2;
      fma.rn.f32 %f6, %f1, %f2, %f1; min.f32 %f7, %f1, %f2; max.f32 %f8, %f1, %f2;
      cvt.f64.f32 %fd1, %f1; cvt.f64.f32 %fd2, %f2; div.rn.f64 %fd4, %fd1, %fd2;
      st.global.f32 [%rd20], %f3; st.global.f32 [%rd20+4], %f4; st.global.f32 [%rd20+8], %f5;
      st.global.f32 [%rd20+12], %f6; st.global.f32 [%rd20+16], %f7; st.global.f32 [%rd20+20], %f8;
      st.global.f64 [%rd20+24], %fd4;""", timing, a, b, n=64)
    got = out.view(np.float32).reshape(64, 8)
    with np.errstate(all="ignore"):
        fused = (a.astype(np.float64) * b + a).astype(np.float32)     # right for the non-finite cases
    for i in range(64):
        if np.isfinite(a[i]) and np.isfinite(b[i]) and np.isfinite(fused[i]):
            x, y = Fraction(float(a[i])), Fraction(float(b[i]))
            fused[i] = nearest_f32(x * y + x)                           # one rounding of the exact value
    with np.errstate(all="ignore"):
        expect = [a + b, a * b, a / b, fused, np.fmin(a, b), np.fmax(a, b)]
    for k, column in enumerate(expect):
        np.testing.assert_array_equal(got[:, k], column, err_msg=f"column {k}")
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out[:, 3].view(np.float64), a.astype(np.float64) / b.astype(np.float64))
    # NaN results are canonical (docs/semantics.md)
    nan_rows = np.isnan(got[:, 0])
    assert np.all(got[nan_rows, 0].view(np.uint32) == 0x7FFFFFFF)


@TIMING
def test_approximate_functions_within_tolerance(gpu, timing):
    x = np.linspace(-3.0, 3.0, 32).astype(np.float32)
    positive = np.linspace(0.01, 100.0, 32).astype(np.float32)
    out = run(gpu, """
      ld.global.f32 %f1, [%rd21]; ld.global.f32 %f2, [%rd22];
      ex2.approx.f32 %f3, %f1; lg2.approx.f32 %f4, %f2; sin.approx.f32 %f5, %f1; cos.approx.f32 %f6, %f1;
      rsqrt.approx.f32 %f7, %f2; sqrt.rn.f32 %f8, %f2; rcp.rn.f32 %f9, %f2; tanh.approx.f32 %f10, %f1;
      st.global.f32 [%rd20], %f3; st.global.f32 [%rd20+4], %f4; st.global.f32 [%rd20+8], %f5;
      st.global.f32 [%rd20+12], %f6; st.global.f32 [%rd20+16], %f7; st.global.f32 [%rd20+20], %f8;
      st.global.f32 [%rd20+24], %f9; st.global.f32 [%rd20+28], %f10;""", timing, x, positive)
    got = out.view(np.float32).reshape(32, 8)
    xd, pd = x.astype(np.float64), positive.astype(np.float64)
    np.testing.assert_allclose(got[:, 0], np.exp2(xd), rtol=2.0 ** -21)
    np.testing.assert_allclose(got[:, 1], np.log2(pd), atol=2.0 ** -21, rtol=2.0 ** -21)
    np.testing.assert_allclose(got[:, 2], np.sin(xd), atol=2.0 ** -20.5)
    np.testing.assert_allclose(got[:, 3], np.cos(xd), atol=2.0 ** -20.5)
    np.testing.assert_allclose(got[:, 4], 1.0 / np.sqrt(pd), rtol=2.0 ** -22)
    np.testing.assert_array_equal(got[:, 5], np.sqrt(positive))            # .rn: correctly rounded
    np.testing.assert_array_equal(got[:, 6], [nearest_f32(1 / Fraction(float(v))) for v in positive])
    np.testing.assert_allclose(got[:, 7], np.tanh(xd), rtol=2.0 ** -10.9)


@TIMING
def test_testp_and_copysign(gpu, timing):
    values = np.resize(np.array([0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 1e-40, -1e-42, 3e38, -2.0],
                                dtype=np.float32), 32)
    signs = np.resize(np.array([-1.0, 1.0, -0.0], dtype=np.float32), 32)
    body = "ld.global.f32 %f1, [%rd21]; ld.global.f32 %f2, [%rd22]; mov.u32 %r5, 0;\n"
    tests = ["finite", "infinite", "number", "notanumber", "normal", "subnormal"]
    for i, name in enumerate(tests):
        body += f"testp.{name}.f32 %p1, %f1; selp.u32 %r4, {1 << i}, 0, %p1; or.b32 %r5, %r5, %r4;\n"
    body += "copysign.f32 %f3, %f2, %f1; st.global.u32 [%rd20], %r5; st.global.f32 [%rd20+8], %f3;"
    out = run(gpu, body, timing, values, signs)
    for lane in range(32):
        x = float(values[lane])
        tiny = np.finfo(np.float32).tiny
        facts = [math.isfinite(x), math.isinf(x), not math.isnan(x), math.isnan(x),
                 math.isfinite(x) and abs(x) >= tiny, x != 0 and abs(x) < tiny]
        assert int(out[lane, 0]) == sum(1 << i for i, fact in enumerate(facts) if fact), x
        copied = float(out[lane, 1:2].view(np.float32)[0])
        assert math.copysign(1.0, copied) == math.copysign(1.0, float(signs[lane])), x
        assert (math.isnan(copied) and math.isnan(x)) or abs(copied) == abs(x)


# ---------------------------------------------------------------- moves, vectors, memory spaces
@TIMING
def test_mov_pack_and_unpack(gpu, timing):
    a = np.arange(32, dtype=np.uint32) * 0x01010101
    out = run(gpu, """
      ld.global.u32 %r1, [%rd21]; add.u32 %r2, %r1, 0x80000000;
      mov.b64 %rd1, {%r1, %r2}; mov.b64 {%r3, %r4}, %rd1;
      cvt.u16.u32 %h1, %r1; mov.b16 %h2, 0xABCD; mov.b32 %r6, {%h1, %h2};
      st.global.u64 [%rd20], %rd1; st.global.u32 [%rd20+8], %r4; st.global.u32 [%rd20+12], %r3;
      st.global.u32 [%rd20+16], %r6;""", timing, a)
    for lane in range(32):
        low, high = int(a[lane]), (int(a[lane]) + 0x80000000) & 0xFFFFFFFF
        assert int(out[lane, 0]) == low | (high << 32)
        assert int(out[lane, 1]) == high | (low << 32)
        assert int(out[lane, 2]) & 0xFFFFFFFF == (low & 0xFFFF) | (0xABCD << 16)


@TIMING
def test_vector_loads_and_stores_and_nc(gpu, timing):
    a = np.arange(32 * 4, dtype=np.float32).reshape(32, 4) * 1.5
    out = run(gpu, """
      ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd21];
      ld.global.v2.u32 {%r1, %r2}, [%rd21+8];
      add.f32 %f5, %f1, %f4;
      st.global.v4.f32 [%rd20], {%f4, %f3, %f2, %f5};
      st.global.v2.u32 [%rd20+16], {%r2, %r1};""", timing, np.ascontiguousarray(a).view(np.uint64))
    got = out.view(np.float32).reshape(32, 8)
    np.testing.assert_array_equal(got[:, 0], a[:, 3])
    np.testing.assert_array_equal(got[:, 1], a[:, 2])
    np.testing.assert_array_equal(got[:, 2], a[:, 1])
    np.testing.assert_array_equal(got[:, 3], a[:, 0] + a[:, 3])
    np.testing.assert_array_equal(got[:, 4], a[:, 3])
    np.testing.assert_array_equal(got[:, 5], a[:, 2])


@TIMING
def test_shared_memory_exchange_between_threads(gpu, timing):
    a = np.arange(64, dtype=np.uint32) * 7 + 3
    out = run(gpu, """
      .shared .align 4 .b8 buffer[256];
      ld.global.u32 %r1, [%rd21];
      mov.u32 %r2, buffer; shl.b32 %r3, %r31, 2; add.u32 %r4, %r2, %r3;
      st.shared.u32 [%r4], %r1;
      bar.sync 0;
      sub.u32 %r5, 63, %r31; shl.b32 %r6, %r5, 2; add.u32 %r7, %r2, %r6;
      ld.shared.u32 %r8, [%r7];
      st.global.u32 [%rd20], %r8;""", timing, a, n=64)
    np.testing.assert_array_equal(low32(out[:, 0]), a[::-1])


@TIMING
def test_local_array_with_depot_as_nvcc_emits(gpu, timing):
    """A per-thread array in ``__local_depot0`` addressed through %SP/%SPL, as nvcc writes it."""
    a = np.arange(32, dtype=np.uint32) + 100
    out = run(gpu, """
      .local .align 4 .b8 __local_depot0[64];
      .reg .b64 %SP; .reg .b64 %SPL;
      mov.u64 %SPL, __local_depot0; cvta.local.u64 %SP, %SPL;
      ld.global.u32 %r1, [%rd21];
      mov.u32 %r2, 0;
    $L_fill:
      mul.wide.u32 %rd1, %r2, 4; add.s64 %rd2, %SPL, %rd1; add.u32 %r3, %r1, %r2;
      st.local.u32 [%rd2], %r3;
      add.u32 %r2, %r2, 1; setp.lt.u32 %p1, %r2, 16; @%p1 bra $L_fill;
      and.b32 %r4, %r1, 15; mul.wide.u32 %rd3, %r4, 4; add.s64 %rd4, %SP, %rd3;
      ld.u32 %r5, [%rd4];
      ld.local.u32 %r6, [%SPL+60];
      st.global.u32 [%rd20], %r5; st.global.u32 [%rd20+8], %r6;""", timing, a)
    expect_index = a & 15
    np.testing.assert_array_equal(low32(out[:, 0]), a + expect_index)
    np.testing.assert_array_equal(low32(out[:, 1]), a + 15)


CONST_PTX = HEADER + """
.const .align 4 .b8 table_bytes[8] = {1, 2, 3, 4, 250, 251, 252, 253};
.const .align 8 .f64 weights[3] = {0d3FF8000000000000, 0d4004000000000000, 0dC000000000000000};
.global .align 4 .u32 counter[2] = {41, 7};
.visible .entry k(.param .u64 p_out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .f64 %fd<4>;
  ld.param.u64 %rd1, [p_out]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x; mul.wide.u32 %rd2, %r1, 8; add.s64 %rd3, %rd1, %rd2;
  and.b32 %r2, %r1, 7; cvt.u64.u32 %rd4, %r2; mov.u64 %rd5, table_bytes; add.s64 %rd6, %rd5, %rd4;
  ld.const.u8 %r3, [%rd6];
  ld.const.f64 %fd1, [weights+8];
  ld.global.u32 %r4, [counter];
  add.u32 %r3, %r3, %r4;
  cvt.rn.f64.u32 %fd2, %r3; mul.rn.f64 %fd3, %fd2, %fd1;
  st.global.f64 [%rd3], %fd3;
  ret;
}
"""


@TIMING
def test_const_memory_with_initializers(gpu, timing):
    kernel = gpu.load_ptx(CONST_PTX)["k"]
    out = gpu.zeros(32, np.float64)
    gpu.launch(kernel, 1, 32, [out], timing=timing)
    table = np.array([1, 2, 3, 4, 250, 251, 252, 253])
    np.testing.assert_array_equal(out.get(), (table[np.arange(32) % 8] + 41) * 2.5)


DYNAMIC_SHARED_PTX = HEADER + """
.extern .shared .align 16 .b8 dynamic_buffer[];
.visible .entry k(.param .u64 p_out, .param .u32 p_n)
{
  .reg .b32 %r<12>; .reg .b64 %rd<8>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [p_out]; ld.param.u32 %r1, [p_n]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r2, %tid.x; mov.u32 %r3, dynamic_buffer;
  mov.u32 %r9, %dynamic_smem_size;
  mov.u32 %r4, %r2;
$L_store:
  shl.b32 %r5, %r4, 2; add.u32 %r6, %r3, %r5; mul.lo.u32 %r7, %r4, 3; st.shared.u32 [%r6], %r7;
  add.u32 %r4, %r4, 32; setp.lt.u32 %p1, %r4, %r1; @%p1 bra $L_store;
  bar.sync 0;
  sub.u32 %r4, %r1, 1; sub.u32 %r4, %r4, %r2; shl.b32 %r5, %r4, 2; add.u32 %r6, %r3, %r5;
  ld.shared.u32 %r8, [%r6];
  mul.wide.u32 %rd2, %r2, 8; add.s64 %rd3, %rd1, %rd2;
  st.global.v2.u32 [%rd3], {%r8, %r9};
  ret;
}
"""


@TIMING
def test_dynamic_extern_shared_memory(gpu, timing):
    kernel = gpu.load_ptx(DYNAMIC_SHARED_PTX)["k"]
    n = 200
    out = gpu.zeros((32, 2), np.uint32)
    gpu.launch(kernel, 1, 32, [out, np.uint32(n)], shared_bytes=4 * n, timing=timing)
    got = out.get()
    np.testing.assert_array_equal(got[:, 0], (n - 1 - np.arange(32)) * 3)
    assert np.all(got[:, 1] == 4 * n)


SPECIAL_PTX = HEADER + """
.visible .entry k(.param .u64 p_out)
{
  .reg .b32 %r<20>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p_out]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x; mov.u32 %r2, %tid.y; mov.u32 %r3, %tid.z;
  mov.u32 %r4, %ntid.x; mov.u32 %r5, %ntid.y; mov.u32 %r6, %ntid.z;
  mov.u32 %r7, %ctaid.x; mov.u32 %r8, %ctaid.y; mov.u32 %r9, %ctaid.z;
  mov.u32 %r10, %nctaid.x; mov.u32 %r11, %nctaid.y; mov.u32 %r12, %nctaid.z;
  mov.u32 %r13, %laneid; mov.u32 %r14, %lanemask_lt; mov.u32 %r15, %lanemask_le;
  mov.u32 %r16, %lanemask_eq;
  // linear block and thread index, then a 16-word row per thread
  mad.lo.u32 %r18, %r9, %r11, %r8; mad.lo.u32 %r18, %r18, %r10, %r7;
  mad.lo.u32 %r19, %r3, %r5, %r2; mad.lo.u32 %r19, %r19, %r4, %r1;
  mul.lo.u32 %r0, %r4, %r5; mul.lo.u32 %r0, %r0, %r6; mad.lo.u32 %r18, %r18, %r0, %r19;
  mul.wide.u32 %rd2, %r18, 64; add.s64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r1, %r2, %r3, %r4};
  st.global.v4.u32 [%rd3+16], {%r5, %r6, %r7, %r8};
  st.global.v4.u32 [%rd3+32], {%r9, %r10, %r11, %r12};
  st.global.v4.u32 [%rd3+48], {%r13, %r14, %r15, %r16};
  ret;
}
"""


@TIMING
def test_special_registers_in_3d_grids_and_blocks(gpu, timing):
    kernel = gpu.load_ptx(SPECIAL_PTX)["k"]
    grid, block = (3, 2, 2), (5, 3, 4)     # 60 threads per block: two warps, the second partial
    threads = 5 * 3 * 4
    total = threads * 12
    out = gpu.zeros((total, 16), np.uint32)
    gpu.launch(kernel, grid, block, [out], timing=timing)
    got = out.get()
    for bz in range(2):
        for by in range(2):
            for bx in range(3):
                block_linear = (bz * 2 + by) * 3 + bx
                for tz in range(4):
                    for ty in range(3):
                        for tx in range(5):
                            t = (tz * 3 + ty) * 5 + tx
                            lane = t % 32
                            row = got[block_linear * threads + t]
                            assert row[:12].tolist() == [tx, ty, tz, 5, 3, 4, bx, by, bz, 3, 2, 2]
                            assert row[12] == lane
                            assert row[13] == (1 << lane) - 1
                            assert row[14] == (2 << lane) - 1
                            assert row[15] == 1 << lane


# ---------------------------------------------------------------- the "Done when" kernels (nvcc -O3)
DONE_WHEN = Path(__file__).parent / "data" / "exec" / "done_when.ptx"


@pytest.fixture(scope="module")
def done_when(gpu):
    module = gpu.load(DONE_WHEN)
    return {name: next(k for k in module if name in k.name) for name in
            ("block_reduce", "shuffle_reduce", "histogram", "matmul_2d", "double_math", "int64_math")}


@TIMING
def test_nvcc_shared_memory_reduction(gpu, done_when, timing):
    n, threads = 3000, 128
    values = np.random.default_rng(41).integers(-1000, 1000, n).astype(np.float32) * 0.5
    blocks = (n + 2 * threads - 1) // (2 * threads)
    partial = gpu.zeros(blocks, np.float32)
    gpu.launch(done_when["block_reduce"], blocks, threads, [gpu.to_device(values), partial, np.int32(n)],
               shared_bytes=4 * threads, timing=timing)
    padded = np.zeros(blocks * 2 * threads, np.float32)
    padded[:n] = values
    # half-integers: every partial sum is exact, so the tree order does not matter
    np.testing.assert_array_equal(partial.get(), padded.reshape(blocks, -1).sum(axis=1))


@TIMING
def test_nvcc_shuffle_reduction_with_atomics(gpu, done_when, timing):
    n = 1000
    values = np.random.default_rng(42).integers(-5000, 5000, n).astype(np.int32)
    total = gpu.zeros(1, np.int32)
    gpu.launch(done_when["shuffle_reduce"], (n + 255) // 256, 256,
               [gpu.to_device(values), total, np.int32(n)],
               timing=timing)
    assert total.get()[0] == int(values.astype(np.int64).sum())


@TIMING
def test_nvcc_histogram(gpu, done_when, timing):
    n, bins = 5000, 37
    data = np.random.default_rng(43).integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    counts = gpu.zeros(bins, np.uint32)
    gpu.launch(done_when["histogram"], 4, 128, [gpu.to_device(data), np.int32(n), counts, np.int32(bins)],
               shared_bytes=4 * bins, timing=timing)
    np.testing.assert_array_equal(counts.get(), np.bincount(data % bins, minlength=bins))


@TIMING
def test_nvcc_matmul_on_a_2d_grid(gpu, done_when, timing):
    m, k, n = 19, 7, 23
    rng = np.random.default_rng(44)
    a = rng.integers(-8, 8, (m, k)).astype(np.float32)
    b = rng.integers(-8, 8, (k, n)).astype(np.float32)
    c = gpu.zeros((m, n), np.float32)
    gpu.launch(done_when["matmul_2d"], ((n + 7) // 8, (m + 3) // 4), (8, 4),
               [gpu.to_device(a), gpu.to_device(b), c, np.int32(m), np.int32(k), np.int32(n)], timing=timing)
    np.testing.assert_array_equal(c.get(), a @ b)    # small integers: exact in f32 in any order


@TIMING
def test_nvcc_double_precision(gpu, done_when, timing):
    n = 100
    x = np.random.default_rng(45).standard_normal(n) * 10
    y = gpu.zeros(n, np.float64)
    gpu.launch(done_when["double_math"], 2, 64, [gpu.to_device(x), y, np.int32(n)], timing=timing)
    r = np.sqrt(x * x + 1.0) / (x + 3.0)
    # fma rounds once where numpy's r * x - 0.125 rounds twice: allow one ulp of the result
    expect = np.array([math.fma(ri, xi, -0.125) if hasattr(math, "fma") else ri * xi - 0.125
                       for ri, xi in zip(r, x, strict=False)]) + (np.arange(n) % 7) * 0.5
    np.testing.assert_allclose(y.get(), expect, rtol=4e-16, atol=1e-15)


@TIMING
def test_nvcc_int64_math(gpu, done_when, timing):
    n = 96
    x = np.random.default_rng(46).integers(-(1 << 62), 1 << 62, n, dtype=np.int64)
    x[:3] = [0, -1, -(1 << 62)]
    y, z = gpu.zeros(n, np.int64), gpu.zeros(n, np.uint64)
    gpu.launch(done_when["int64_math"], 3, 32, [gpu.to_device(x), y, z, np.int32(n)], timing=timing)
    mask = (1 << 64) - 1
    expect_y, expect_z = [], []
    for v in x.tolist():
        h = (v * 0x9E3779B97F4A7C15) & mask
        h ^= h >> 29
        quotient = abs(v) // 1000003 * (1 if v >= 0 else -1)       # C division truncates
        remainder = v - (abs(v) // 97 * (1 if v >= 0 else -1)) * 97
        expect_y.append(quotient - remainder + (v >> 3))
        expect_z.append((h + abs(v) % 1000000007) & mask)
    assert y.get().tolist() == expect_y
    assert z.get().tolist() == expect_z
