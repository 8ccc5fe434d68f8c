"""dp4a / dp2a (integer dot products of packed bytes and halves), as nvcc emits them for uchar4 / char4
arithmetic (the corpus's rgba_luma: ``77 * p.x + 150 * p.y + 29 * p.z`` became ``dp4a.u32.u32``; gpusim
refused the kernel before). Every type combination against a numpy reference written here (PTX ISA,
dp4a / dp2a), through a kernel and the public API, functional and timed."""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.errors import PTXSyntaxError

FORMS = [("dp4a", "", a, b) for a in ("u32", "s32") for b in ("u32", "s32")] + \
        [("dp2a", half, a, b) for half in (".lo", ".hi") for a in ("u32", "s32") for b in ("u32", "s32")]


def kernel_for(op: str, half: str, a_type: str, b_type: str) -> str:
    return f"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 A, .param .u64 B, .param .u64 C, .param .u64 D)
{{
    .reg .b32 %r<6>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [A];
    ld.param.u64 %rd2, [B];
    ld.param.u64 %rd3, [C];
    ld.param.u64 %rd4, [D];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd1, %rd5;
    add.s64 %rd7, %rd2, %rd5;
    add.s64 %rd8, %rd3, %rd5;
    add.s64 %rd9, %rd4, %rd5;
    ld.global.u32 %r2, [%rd6];
    ld.global.u32 %r3, [%rd7];
    ld.global.u32 %r4, [%rd8];
    {op}{half}.{a_type}.{b_type} %r5, %r2, %r3, %r4;
    st.global.u32 [%rd9], %r5;
    ret;
}}
"""


def reference(op: str, half: str, a_type: str, b_type: str, a, b, c) -> np.ndarray:
    def elements(words, bits, signed, count, first=0):
        out = []
        for k in range(first, first + count):
            e = (words.astype(np.int64) >> (k * bits)) & ((1 << bits) - 1)
            out.append(np.where(signed & (e >= 1 << (bits - 1)), e - (1 << bits), e))
        return out

    a_signed, b_signed = a_type == "s32", b_type == "s32"
    if op == "dp4a":
        pairs = zip(elements(a, 8, a_signed, 4), elements(b, 8, b_signed, 4), strict=True)
    else:
        pairs = zip(elements(a, 16, a_signed, 2), elements(b, 8, b_signed, 2, 2 if half == ".hi" else 0),
                    strict=True)
    total = c.astype(np.int64) + sum(x * y for x, y in pairs)
    return (total & 0xFFFFFFFF).astype(np.uint32)


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
@pytest.mark.parametrize(("op", "half", "a_type", "b_type"), FORMS,
                         ids=[f"{o}{h}.{a}.{b}" for o, h, a, b in FORMS])
def test_dot_product_matches_numpy(op, half, a_type, b_type, timing):
    rng = np.random.default_rng(3)
    a, b, c = (rng.integers(0, 2 ** 32, 64, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    a[:4] = [0xFFFFFFFF, 0x80808080, 0x7F7F7F7F, 0]      # extremes of each element width
    b[:4] = [0xFFFFFFFF, 0x80808080, 0x80808080, 0x01020304]
    c[:2] = [0xFFFFFFFF, 0x80000000]                       # wrapping accumulators
    gpu = gpusim.GPU("teaching")
    kernel = gpu.load_ptx(kernel_for(op, half, a_type, b_type))["k"]
    d = gpu.zeros(64, np.uint32)
    gpu.launch(kernel, 1, 64, [gpu.to_device(a), gpu.to_device(b), gpu.to_device(c), d], timing=timing)
    expected = reference(op, half, a_type, b_type, a, b, c)
    assert (d.get() == expected).all(), f"first difference at {int(np.argmax(d.get() != expected))}"


def test_dp4a_reference_on_a_worked_example():
    """The numpy reference itself: bytes (1, 2, 3, 4) . (5, 6, 7, 8) + 10 = 80; signed 0xFF is -1."""
    one = np.array([0x04030201], np.uint32)
    assert reference("dp4a", "", "u32", "u32", one, np.array([0x08070605], np.uint32), np.array([10]))[0] == 80
    minus = np.array([0x000000FF], np.uint32)
    assert reference("dp4a", "", "s32", "u32", minus, np.array([2], np.uint32), np.array([0]))[0] == 0xFFFFFFFE


@pytest.mark.parametrize("form", ["dp4a.f32.u32", "dp4a.u32", "dp2a.u32.u32"])
def test_dot_product_malformed_types_are_errors(form):
    gpu = gpusim.GPU("teaching")
    text = kernel_for("dp4a", "", "u32", "u32").replace("dp4a.u32.u32", form)
    with pytest.raises(PTXSyntaxError, match="dp"):
        gpu.load_ptx(text)
