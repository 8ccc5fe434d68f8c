"""The last fuzz findings (issue 27): a literal of the wrong kind is a PTXSyntaxError at its line, as ptxas
refuses it ("Arguments mismatch"); undecodable bytes are reported at the line and column that hold them;
a GPUConfig built by hand gets the loader's type checks."""

from __future__ import annotations

import dataclasses

import pytest

import gpusim
from gpusim.arch.config import FIELDS, GPUConfig
from gpusim.errors import ConfigError, PTXSyntaxError

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
.reg .b32 %r<4>;
.reg .f32 %f<4>;
.reg .b64 %rd<4>;
"""
LINE = HEAD.count("\n") + 1          # the line the instruction under test is on


def _load(instruction: str):
    return gpusim.GPU("teaching").load_ptx(HEAD + instruction + "\nret;\n}\n")


@pytest.mark.parametrize("instruction", [
    "add.s32 %r1, %r1, 1.5;", "add.s32 %r1, %r1, 2.0;", "mov.u64 %rd2, 1.5e30;", "mov.u32 %r1, 0f3F800000;",
    "mov.b32 %r1, 1.5;", "shl.b32 %r1, %r1, 2.5;", "ld.global.u32 %r1, [%rd1+1.5];",
])
def test_a_float_literal_where_an_integer_is_expected(instruction):
    with pytest.raises(PTXSyntaxError) as info:
        _load(instruction)
    assert info.value.line == LINE and ("literal" in info.value.detail or "integer" in info.value.detail)


@pytest.mark.parametrize("instruction", ["mov.b32 %r1, 0f3F800000;", "mov.b64 %rd1, 0d3FF0000000000000;",
                                         "and.b32 %r1, %r1, 0f3F800000;", "add.f32 %f1, %f1, 1.5;",
                                         "add.f32 %f1, %f1, 1;", "mov.u32 %r1, 7;"])
def test_literals_ptxas_accepts_still_load(instruction):
    _load(instruction)


@pytest.mark.parametrize("raw, line, column", [
    (b".version 8.0\n.target sm_90\n// caf\xc3\xa9 \xff here\n", 3, 9),    # after a 2-byte character: 8 chars
    (b"\xfe.version 8.0\n", 1, 1),
    (b".version 8.0\n.target sm_90\n.address_size 64\n\t.global .u32 x\x80;\n", 4, 16),
])
def test_undecodable_bytes_are_reported_where_they_are(raw, line, column, tmp_path):
    gpu = gpusim.GPU("teaching")
    with pytest.raises(PTXSyntaxError) as info:
        gpu.load_ptx(raw, "bad.ptx")
    assert (info.value.line, info.value.column) == (line, column)
    path = tmp_path / "bad.ptx"
    path.write_bytes(raw)
    with pytest.raises(PTXSyntaxError) as from_file:
        gpu.load(path)
    assert (from_file.value.line, from_file.value.column) == (line, column)
    assert str(from_file.value).startswith(f"{path}:{line}:{column}: not UTF-8 text")


@pytest.mark.parametrize("field", [name for name, spec in FIELDS.items() if spec.type != "str"])
def test_a_hand_built_config_rejects_a_wrong_type(field):
    config = gpusim.GPU("teaching").config
    for wrong in ([1, 2], "fast", None):
        values = dataclasses.asdict(config)
        values[field] = wrong
        with pytest.raises(ConfigError) as info:
            gpusim.GPU(GPUConfig(**values))
        assert info.value.field == field


def test_a_hand_built_config_that_is_right_is_used_as_is():
    config = gpusim.GPU("teaching").config
    assert gpusim.GPU(config).config is config


@pytest.mark.parametrize("types", [".f64.f32", ".f32.f64", ".f32.f16.f16.s32", ".s32.f16.f16.f32"])
def test_a_wmma_accumulator_of_the_wrong_type_is_an_error_at_its_line(types):
    """Fuzz campaign seed 27, case 8649: a wmma.mma whose accumulator type is neither .f32 nor .f16 (float
    inputs) raised a raw KeyError; the PTX ISA allows .f16/.f32 accumulators for f16 inputs, .s32 for integer."""
    regs = ", ".join(f"%f{i}" for i in range(8))
    instruction = (f"wmma.mma.sync.aligned.row.col.m16n16k16{types} {{{regs}}}, {{{regs}}}, {{{regs}}}, "
                   f"{{{regs}}};")
    head = HEAD.replace(".reg .f32 %f<4>;", ".reg .f32 %f<9>;")
    with pytest.raises(PTXSyntaxError) as info:
        gpusim.GPU("h100-sxm").load_ptx(head + instruction + "\nret;\n}\n")
    assert info.value.line == LINE and "accumulate" in info.value.detail
