"""szext and bmsk (PTX ISA 7.6, sm_70+): nvcc 13's PTX of tests/ptx/bit_mask/bits.cu (szext as inline PTX, bmsk
through libcu++'s ``cuda::ptx::bmsk_wrap`` / ``bmsk_clamp``; ptxas makes each one SASS instruction, SGXT and
BMSK) on both engine paths, lane by lane against the ISA's semantics pseudo-code written out here, over widths
and positions at and around every boundary (0, 1, 31, 32, 33, 255, 256, 2^32 - 1) and random ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import PTXSyntaxError

_PTX = Path(__file__).parent / "ptx" / "bit_mask" / "bits.ptx"
_M32 = 0xFFFFFFFF


def _szext(a: int, b: int, clamp: bool, signed: bool) -> int:
    """The ISA's pseudo-code for szext.mode.type d, a, b."""
    b1 = b & 0x1F
    too_large = b >= 32 and clamp
    mask = 0 if too_large else (_M32 << b1) & _M32
    sign_bit = 0 if (b1 == 0 or too_large or not signed) else (a >> ((b1 - 1) & 0x1F)) & 1
    return (a & ~mask & _M32) | (mask if sign_bit else 0)


def _bmsk(a: int, b: int, clamp: bool) -> int:
    """The ISA's pseudo-code for bmsk.mode.b32 d, a, b."""
    a1, b1 = a & 0x1F, b & 0x1F
    mask0 = (_M32 << a1) & _M32
    total = a1 + b1
    mask1 = (_M32 << total) & _M32 if total < 32 else 0
    position_overflow = width_overflow = False
    if clamp:
        if a >= 32:
            position_overflow, mask0 = True, 0
        width_overflow = b >= 32
    if total >= 32 or position_overflow or width_overflow:
        mask1 = 0
    elif b1 == 0:
        mask1 = _M32
    return mask0 & ~mask1 & _M32


def _operands() -> tuple[np.ndarray, np.ndarray]:
    edges = [0, 1, 2, 7, 8, 15, 16, 30, 31, 32, 33, 63, 64, 255, 256, 257, 1 << 31, _M32]
    values = [0, 1, 0x80, 0xFFFF8000, 0x7FFFFFFF, 0x80000000, _M32, 0x12345678, 0xDEADBEEF]
    a = [v for v in values for _ in edges] + [e for e in edges for _ in values]   # szext's value, bmsk's position
    b = [e for _ in values for e in edges] + [v & 0xFF if v else v for _ in edges for v in values]
    rng = np.random.default_rng(7)
    a += list(rng.integers(0, 1 << 32, 96, dtype=np.uint64))
    b += list(rng.integers(0, 70, 96, dtype=np.uint64))
    count = -(-len(a) // 64) * 64
    pad = count - len(a)
    return np.array(a + [0] * pad, np.uint32), np.array(b + [0] * pad, np.uint32)


@pytest.mark.parametrize("timing", [False, True])
@pytest.mark.parametrize("codegen", ["ptxas", "none"])
def test_szext_and_bmsk_match_the_isa(timing, codegen):
    gpu = gpusim.GPU("a100", sms=1, codegen=codegen)
    kernel = gpu.load(str(_PTX))["bits"]
    a, b = _operands()
    out = gpu.zeros(6 * len(a), np.uint32)
    gpu.launch(kernel, grid=len(a) // 64, block=64, args=[gpu.to_device(a), gpu.to_device(b), out], timing=timing)
    got = out.get().reshape(-1, 6)
    for i, (x, n) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        expected = [_szext(x, n, False, True), _szext(x, n, True, True), _szext(x, n, False, False),
                    _szext(x, n, True, False), _bmsk(x, n, False), _bmsk(x, n, True)]
        assert got[i].tolist() == expected, (hex(x), n)


def test_the_isa_examples():
    """The ISA's own examples: bmsk.wrap.b32 rd, 1, 2 is 0x00000006; szext.wrap.u32 rd, 0xffffffff, 0 is 0."""
    gpu = gpusim.GPU("a100", sms=1)
    ptx = """.version 7.6
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    bmsk.wrap.b32 %r1, 1, 2;
    szext.wrap.u32 %r2, 0xffffffff, 0;
    szext.clamp.s32 %r3, 0x80, 8;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    st.global.v2.u32 [%rd2], {%r1, %r2};
    st.global.u32 [%rd2+8], %r3;
    ret;
}
"""
    out = gpu.zeros(3, np.uint32)
    gpu.launch(gpu.load_ptx(ptx, "examples.ptx")["k"], grid=1, block=1, args=[out])
    assert out.get().tolist() == [6, 0, 0xFFFFFF80]


@pytest.mark.parametrize("line, words", [
    ("szext.s32 %r1, %r2, %r3;", "mode"),
    ("szext.wrap.b32 %r1, %r2, %r3;", ".u32 or .s32"),
    ("bmsk.clamp.u32 %r1, %r2, %r3;", ".b32"),
    ("bmsk.wrap.b32 %r1, %r2;", "operand"),
])
def test_malformed_forms_are_refused_naming_the_line(line, words):
    ptx = f""".version 7.6
.target sm_80
.address_size 64
.visible .entry k()
{{
    .reg .b32 %r<4>;
    {line}
    ret;
}}
"""
    with pytest.raises(PTXSyntaxError) as caught:
        gpusim.GPU("a100", sms=1).load_ptx(ptx, "bad.ptx")["k"]
    assert words in str(caught.value) and "bad.ptx:7" in str(caught.value)
