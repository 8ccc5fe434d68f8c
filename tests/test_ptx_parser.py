"""Tests of gpusim.ptx.parser: nvcc-emitted fixtures, every operand and declaration form, the errors.

The fixtures in tests/data/ptx are committed ``nvcc -ptx`` output (regenerate.sh beside them says how
they were made); nothing here calls nvcc. Expected values are derived from the PTX text itself
(declarations re-expanded with a regex, labels and ``.loc`` lines found by scanning) wherever a value
is not obvious from the snippet under test.
"""

from __future__ import annotations

import re
import struct
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpusim.errors import PTXSyntaxError, UnsupportedPTXError
from gpusim.ptx.ast import (
    Address,
    Imm,
    ParenList,
    PredPair,
    Reg,
    Sink,
    SpecialReg,
    Symbol,
    Vector,
)
from gpusim.ptx.parser import parse_file, parse_ptx

FIXTURE_DIR = Path(__file__).parent / "data" / "ptx"
FIXTURES = sorted(FIXTURE_DIR.glob("*.ptx"))
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


def kernel(body: str, params: str = ".param .u64 p") -> str:
    """A module with one kernel ``k`` whose body declares %r0-%r7, %p0-%p3, %f0-%f3, %rd0-%rd3, %fd0."""
    return (
        HEADER
        + f".visible .entry k({params})\n{{\n"
        + "  .reg .b32 %r<8>;\n  .reg .pred %p<4>;\n  .reg .f32 %f<4>;\n"
        + "  .reg .b64 %rd<4>;\n  .reg .f64 %fd0;\n"
        + body
        + "\n}\n"
    )


def body_of(body: str, **kwargs):
    return parse_ptx(kernel(body, **kwargs)).functions["k"].body


def operands_of(line: str) -> list:
    (instruction,) = body_of(line)
    return instruction.operands


# ------------------------------------------------------------------------------------------ fixtures


def function_regions(text: str, module) -> dict:
    """Function name -> (first line, its source lines from its name to the '}' that ends its body)."""
    lines = text.split("\n")
    starts = sorted((function.loc.line, name) for name, function in module.functions.items())
    regions = {}
    for index, (line, name) in enumerate(starts):
        end = starts[index + 1][0] - 1 if index + 1 < len(starts) else len(lines)
        region = lines[line - 1 : end]
        closing = region.index("}") if "}" in region else len(region)  # nvcc closes bodies in column 1
        regions[name] = (line, region[: closing + 1])
    return regions


def test_fixtures_exist():
    names = {path.stem for path in FIXTURES}
    assert {
        "reduce_shared",
        "warp_ops",
        "atomics",
        "double_int64",
        "noinline_call",
        "smem_const_local",
        "lineinfo_inline",
    } <= names
    for path in FIXTURES:
        assert path.with_suffix(".cu").exists(), f"{path.name} has no .cu source beside it"


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.stem)
def test_fixture_parses_with_consistent_locations(path):
    text = path.read_text()
    module = parse_file(path)
    assert module.file == str(path)
    assert re.search(rf"^\.version {re.escape(module.version)}$", text, re.M)
    assert re.search(rf"^\.target {module.target}$", text, re.M)
    assert module.address_size == 64
    assert any(function.is_entry for function in module.functions.values())
    lines = text.split("\n")
    for function in module.functions.values():
        assert function.body, function.name
        for instruction in function.body:
            where = lines[instruction.loc.line - 1][instruction.loc.column - 1 :]
            assert where.startswith(instruction.text.split()[0]), (instruction.text, where)
            assert instruction.text.endswith(";")


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.stem)
def test_fixture_registers_expand_like_their_declarations(path):
    text = path.read_text()
    module = parse_file(path)
    for name, (_, region) in function_regions(text, module).items():
        expected = {}
        for line in region:
            declaration = re.match(r"\s*\.reg\s+\.(\w+)\s+(.*);", line)
            if not declaration:
                continue
            for item in declaration.group(2).split(","):
                ranged = re.fullmatch(r"\s*(\S+)<(\d+)>\s*", item)
                if ranged:
                    for number in range(int(ranged.group(2))):
                        expected.setdefault(f"{ranged.group(1)}{number}", declaration.group(1))
                else:
                    expected.setdefault(item.strip(), declaration.group(1))
        assert module.functions[name].regs == expected


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.stem)
def test_fixture_labels_point_at_the_next_instruction(path):
    text = path.read_text()
    module = parse_file(path)
    for name, (first_line, region) in function_regions(text, module).items():
        function = module.functions[name]
        label_lines = {}
        for offset, line in enumerate(region):
            match = re.match(r"^(\$?\w+):\s*$", line)
            if match:
                label_lines[match.group(1)] = first_line + offset
        assert set(function.labels) == set(label_lines)
        for label, index in function.labels.items():
            label_line = label_lines[label]
            if index < len(function.body):
                assert function.body[index].loc.line > label_line
            if index > 0:
                assert function.body[index - 1].loc.line < label_line
        for instruction in function.body:
            if instruction.opcode == "bra":
                (target,) = instruction.operands
                assert isinstance(target, Symbol) and target.name in function.labels


def test_reduce_shared_fixture():
    module = parse_file(FIXTURE_DIR / "reduce_shared.ptx")
    kernel_function = module.functions["_Z10reduce_sumPKfPfi"]
    assert module.target == "sm_80" and module.version == "9.0"
    assert [param.type for param in kernel_function.params] == ["u64", "u64", "u32"]
    (partial,) = kernel_function.local_vars
    assert (partial.space, partial.type, partial.count, partial.align) == ("shared", "b8", 1024, 4)
    bars = [ins for ins in kernel_function.body if ins.opcode == "bar"]
    assert bars and all(ins.mods == (".sync",) and ins.operands == [Imm(0)] for ins in bars)
    shuffles = [ins for ins in kernel_function.body if ins.opcode == "shfl"]
    assert len(shuffles) == 5
    assert all(ins.mods == (".sync", ".down", ".b32") for ins in shuffles)
    assert all(isinstance(ins.operands[0], PredPair) for ins in shuffles)
    first_load = next(
        ins for ins in kernel_function.body if ins.opcode == "ld" and ins.mods == (".shared", ".f32")
    )
    assert first_load.operands == [Reg("%f8"), Address("%r6", 0, True)]
    assert Address("%r6", 128, True) in [
        ins.operands[1] for ins in kernel_function.body if ins.opcode == "ld"
    ]
    guarded = [ins for ins in kernel_function.body if ins.guard]
    assert guarded and all(ins.opcode == "bra" and not ins.guard[1] for ins in guarded)
    (mov_symbol,) = [ins for ins in kernel_function.body if Symbol(partial.name) in ins.operands]
    assert mov_symbol.opcode == "mov"


def test_warp_ops_fixture():
    function = parse_file(FIXTURE_DIR / "warp_ops.ptx").functions["_Z8warp_opsPKiPiPy"]
    by_opcode = {}
    for instruction in function.body:
        by_opcode.setdefault(instruction.opcode, []).append(instruction)
    assert {mods[1] for mods in (ins.mods for ins in by_opcode["shfl"])} == {".bfly", ".up", ".idx"}
    assert by_opcode["shfl"][0].operands[0] == PredPair("%r18", "%p4")
    ballot = next(ins for ins in by_opcode["vote"] if ".ballot" in ins.mods)
    assert ballot.operands == [Reg("%r3"), Reg("%p7"), Reg("%r17")]
    assert [ins.operands[1] for ins in by_opcode["mov"] if ins.mods == (".u64",)] == [
        SpecialReg("%clock64")
    ] * 2
    assert by_opcode["match"][0].mods == (".any", ".sync", ".b32")
    assert by_opcode["redux"][0].mods == (".sync", ".add", ".s32")
    assert by_opcode["activemask"][0].operands == [Reg("%r9")]
    assert Imm(-1) in [ins.operands[1] for ins in by_opcode["mov"]]


def test_atomics_fixture():
    function = parse_file(FIXTURE_DIR / "atomics.ptx").functions["_Z9histogramPKhiPjPfPdPiS1_"]
    atoms = {ins.mods: ins.operands for ins in function.body if ins.opcode == "atom"}
    assert atoms[(".shared", ".add", ".u32")] == [Reg("%r22"), Address("%r21"), Imm(1)]
    assert atoms[(".global", ".add", ".f32")] == [Reg("%f3"), Address("%rd3"), Reg("%f2")]
    assert atoms[(".global", ".cas", ".b64")] == [Reg("%rd8"), Address("%rd1"), Reg("%rd22"), Reg("%rd6")]
    assert atoms[(".global", ".inc", ".u32")] == [Reg("%r31"), Address("%rd20"), Imm(1000)]
    assert (".global", ".exch", ".b32") in atoms and (".global", ".min", ".s32") in atoms
    assert Imm(0x3FF4000000000000, "f64bits") in [op for ins in function.body for op in ins.operands]


def test_double_int64_fixture():
    function = parse_file(FIXTURE_DIR / "double_int64.ptx").functions["_Z5dmathPKdPdPxyi"]
    fma = next(ins for ins in function.body if ins.opcode == "fma")
    assert fma.mods == (".rn", ".f64")
    assert fma.operands[2:] == [Imm(0x400C000000000000, "f64bits"), Imm(0x3F50624DD2F1A9FC, "f64bits")]
    mulhi = [ins for ins in function.body if ins.mods == (".hi", ".s64")]
    assert Imm(5270498306774157605) in [ins.operands[2] for ins in mulhi]
    assert function.regs["%fd1"] == "f64" and function.regs["%rd1"] == "b64"


def test_noinline_call_fixture():
    module = parse_file(FIXTURE_DIR / "noinline_call.ptx")
    saxpy = module.functions["_Z9saxpy_onefff"]
    assert not saxpy.is_entry and not saxpy.visible
    (retval,) = saxpy.return_params
    assert (retval.name, retval.type, retval.count) == ("func_retval0", "b32", 1)
    (pair_ret,) = module.functions["_Z9make_pairfi"].return_params
    assert (pair_ret.type, pair_ret.count, pair_ret.align) == ("b8", 8, 4)
    assert module.functions["_Z9store_onePff"].return_params == []
    assert saxpy.body[-2].operands[0] == Address("func_retval0", 0, base_is_reg=False)
    caller = module.functions["_Z11call_kernelfPKfPfPii"]
    assert caller.is_entry and caller.visible
    calls = [ins for ins in caller.body if ins.opcode == "call"]
    assert calls[0].mods == (".uni",)
    assert calls[0].operands == [
        ParenList((Symbol("retval0"),)),
        Symbol("_Z9saxpy_onefff"),
        ParenList((Symbol("param0"), Symbol("param1"), Symbol("param2"))),
    ]
    assert calls[0].text == "call.uni (retval0), _Z9saxpy_onefff, (param0, param1, param2);"
    assert calls[2].operands == [Symbol("_Z9store_onePff"), ParenList((Symbol("param0"), Symbol("param1")))]
    params = {decl.name: decl for decl in caller.local_vars}
    assert {decl.space for decl in caller.local_vars} == {"param"}
    assert (params["retval0"].type, params["retval0"].count) == ("b8", 8)  # the largest declaration wins
    assert (params["param0"].type, params["param0"].align) == ("b64", 8)
    assert caller.regs["temp_param_reg"] == "b32"


def test_smem_const_local_fixture():
    module = parse_file(FIXTURE_DIR / "smem_const_local.ptx")
    globals_by_name = {decl.name: decl for decl in module.globals}
    coeffs = globals_by_name["coeffs"]
    assert (coeffs.space, coeffs.type, coeffs.count, coeffs.align) == ("const", "b8", 32, 4)
    floats = [1.0, 0.5, 0.25, 0.125, -1.0, 3.0, 2.5]  # the .cu initializer; nvcc drops the trailing 0
    assert coeffs.init == list(struct.pack("<7f", *floats))
    offsets = globals_by_name["offsets"]
    assert offsets.init == list(struct.pack("<8i", 0, 1, 2, 3, -1, -2, -3, -4))
    assert globals_by_name["global_counter"].init == [5]
    dscale = globals_by_name["dscale"]
    assert dscale.init == [struct.unpack("<Q", struct.pack("<d", 1.5))[0]]
    dynamic = globals_by_name["dyn_smem"]
    assert (dynamic.space, dynamic.extern, dynamic.count, dynamic.align) == ("shared", True, None, 16)
    stencil = module.functions["_Z7stencilPKfPfii"]
    assert stencil.directives == {"maxntid": (128, 1, 1), "minnctapersm": 4}
    assert module.functions["_Z11copy_kernelPK6float4PS_i"].directives == {"maxntid": (256, 1, 1)}
    (depot,) = stencil.local_vars
    assert (depot.space, depot.name, depot.count, depot.align) == ("local", "__local_depot0", 64, 16)
    operands = [op for ins in stencil.body for op in ins.operands]
    assert Symbol("__local_depot0") in operands and Symbol("dyn_smem") in operands
    assert Address("coeffs", 4, base_is_reg=False) in operands
    vector_stores = [ins.operands for ins in stencil.body if ins.mods == (".local", ".v4", ".f32")]
    assert [operands[0] for operands in vector_stores] == [
        Address("%rd1", offset) for offset in (0, 16, 32, 48)
    ]
    assert vector_stores[1][1] == Vector((Reg("%f27"), Reg("%f26"), Reg("%f25"), Reg("%f24")))


def test_lineinfo_fixture_maps_each_instruction_to_the_last_loc():
    path = FIXTURE_DIR / "lineinfo_inline.ptx"
    text = path.read_text()
    module = parse_file(path)
    assert module.files == {1: "lineinfo_inline.cu"}
    lines = text.split("\n")
    function = module.functions["_Z7lengthsPK6float2Pfi"]
    for instruction in function.body:
        expected = None
        for line in reversed(lines[function.loc.line : instruction.loc.line - 1]):
            loc = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)", line)
            if loc:
                expected = (int(loc.group(1)), int(loc.group(2)))
                break
        assert instruction.src_line == expected, instruction.text
    inlined = next(ins for ins in function.body if ins.opcode == "mul" and ins.mods == (".f32",))
    assert inlined.src_line == (1, 4)  # the line of `squared`, inlined twice over


# ------------------------------------------------------------------------------------------ operands


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        ("5", Imm(5)),
        ("-7", Imm(-7)),
        ("0x1F", Imm(31)),
        ("0xFFFFFFFFU", Imm(0xFFFFFFFF)),
        ("017", Imm(15)),
        ("0b101", Imm(5)),
        ("0", Imm(0)),
        ("0f3F800000", Imm(0x3F800000, "f32bits")),
        ("-0f3F800000", Imm(0xBF800000, "f32bits")),
        ("0d3FF0000000000000", Imm(0x3FF0000000000000, "f64bits")),
        ("1.5", Imm(1.5, "float")),
        ("1e-3", Imm(1e-3, "float")),
        ("-2.5e2", Imm(-250.0, "float")),
    ],
)
def test_immediates(literal, expected):
    assert operands_of(f"mov.u32 %r1, {literal};")[1] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[%rd1]", Address("%rd1", 0, True)),
        ("[%rd1+16]", Address("%rd1", 16, True)),
        ("[%rd1+-4]", Address("%rd1", -4, True)),
        ("[%rd1-4]", Address("%rd1", -4, True)),
        ("[%rd1+0x10]", Address("%rd1", 16, True)),
        ("[p]", Address("p", 0, False)),
        ("[p+8]", Address("p", 8, False)),
        ("[12]", Address("", 12, False)),
    ],
)
def test_addresses(text, expected):
    assert operands_of(f"ld.global.u32 %r1, {text};")[1] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("%tid.x", SpecialReg("%tid", "x")),
        ("%ntid.y", SpecialReg("%ntid", "y")),
        ("%ctaid.z", SpecialReg("%ctaid", "z")),
        ("%nctaid.x", SpecialReg("%nctaid", "x")),
        ("%laneid", SpecialReg("%laneid")),
        ("%warpid", SpecialReg("%warpid")),
        ("%nwarpid", SpecialReg("%nwarpid")),
        ("%smid", SpecialReg("%smid")),
        ("%nsmid", SpecialReg("%nsmid")),
        ("%gridid", SpecialReg("%gridid")),
        ("%clock", SpecialReg("%clock")),
        ("%clock64", SpecialReg("%clock64")),
        ("%globaltimer", SpecialReg("%globaltimer")),
        ("%lanemask_eq", SpecialReg("%lanemask_eq")),
        ("%lanemask_le", SpecialReg("%lanemask_le")),
        ("%lanemask_lt", SpecialReg("%lanemask_lt")),
        ("%lanemask_ge", SpecialReg("%lanemask_ge")),
        ("%lanemask_gt", SpecialReg("%lanemask_gt")),
        ("%envreg7", SpecialReg("%envreg7")),
        ("%dynamic_smem_size", SpecialReg("%dynamic_smem_size")),
        ("%total_smem_size", SpecialReg("%total_smem_size")),
    ],
)
def test_special_registers(text, expected):
    assert operands_of(f"mov.u32 %r1, {text};")[1] == expected


def test_instruction_forms():
    body = body_of(
        """
    @%p1 bra $L__BB0_2;
    @!%p2 exit;
    setp.lt.and.s32 %p1|%p2, %r1, -4, !%p3;
    shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1;
    ld.global.nc.v4.f32 {%f0, _, %f2, %f3}, [%rd1+16];
    mov.b64 %rd1, {%r1, %r2};
    vote.sync.ballot.b32 %r1, %p1, -1;
    atom.global.add.f32 %f1, [%rd1], %f2;
    atom.shared.cas.b32 %r1, [%r2], %r3, %r4;
    ld.shared::cta.u32 %r1, [%r2];
    bar.sync 1, 64;
    barrier.sync.aligned 0;
$L__BB0_2:
    ret;
"""
    )
    assert [(ins.opcode, ins.mods) for ins in body] == [
        ("bra", ()),
        ("exit", ()),
        ("setp", (".lt", ".and", ".s32")),
        ("shfl", (".sync", ".bfly", ".b32")),
        ("ld", (".global", ".nc", ".v4", ".f32")),
        ("mov", (".b64",)),
        ("vote", (".sync", ".ballot", ".b32")),
        ("atom", (".global", ".add", ".f32")),
        ("atom", (".shared", ".cas", ".b32")),
        ("ld", (".shared::cta", ".u32")),
        ("bar", (".sync",)),
        ("barrier", (".sync", ".aligned")),
        ("ret", ()),
    ]
    assert [ins.guard for ins in body[:3]] == [("%p1", False), ("%p2", True), None]
    assert body[0].operands == [Symbol("$L__BB0_2")]
    assert body[1].operands == []
    assert body[2].operands == [PredPair("%p1", "%p2"), Reg("%r1"), Imm(-4), Reg("%p3", negated=True)]
    assert body[3].operands[0] == PredPair("%r1", "%p1")
    assert body[4].operands[0] == Vector((Reg("%f0"), Sink(), Reg("%f2"), Reg("%f3")))
    assert body[5].operands[1] == Vector((Reg("%r1"), Reg("%r2")))
    assert body[8].operands == [Reg("%r1"), Address("%r2"), Reg("%r3"), Reg("%r4")]
    assert body[10].operands == [Imm(1), Imm(64)]
    assert body[0].text == "@%p1 bra $L__BB0_2;"


def test_symbols_and_symbol_offsets():
    module = parse_ptx(
        HEADER
        + ".extern .shared .align 16 .b8 smem[];\n"
        + kernel("    mov.u64 %rd1, smem;\n    mov.u64 %rd2, smem+4;\n    mov.u32 %r1, WARP_SZ;").replace(
            HEADER, ""
        )
    )
    body = module.functions["k"].body
    assert body[0].operands[1] == Symbol("smem")
    assert body[1].operands[1] == Address("smem", 4, base_is_reg=False)
    assert body[2].operands[1] == Symbol("WARP_SZ")


def test_call_forms():
    text = (
        HEADER
        + ".func (.param .b32 r) f(.param .b32 a, .param .b32 b) { ret; }\n"
        + ".func g(.param .b32 a) { ret; }\n"
        + ".func (.param .b32 r) h() { ret; }\n"
        + kernel(
            "    call.uni (%r1), f, (%r2, 3);\n    call g, (%r2);\n    call (%r1), h;\n    call.uni h, ();"
        ).replace(HEADER, "")
    )
    body = parse_ptx(text).functions["k"].body
    assert body[0].operands == [ParenList((Reg("%r1"),)), Symbol("f"), ParenList((Reg("%r2"), Imm(3)))]
    assert body[1].operands == [Symbol("g"), ParenList((Reg("%r2"),))]
    assert body[2].operands == [ParenList((Reg("%r1"),)), Symbol("h")]
    assert body[3].operands == [Symbol("h"), ParenList(())]


# ------------------------------------------------------------------------------------------ declarations


def test_register_declarations():
    function = parse_ptx(
        kernel(
            """
    .reg .b16 %rs<3>, %h, plain_name;
    .reg .b32 a, b, c;
    .reg .pred %q<0>;
    {
      .reg .b32 %r1;
      .reg .b32 inner;
      add.s32 inner, a, plain_name;
      {
        mov.u32 b, late;
      }
    }
    .reg .b32 late;
"""
        )
    ).functions["k"]
    for name in ["%rs0", "%rs1", "%rs2", "%h", "plain_name"]:
        assert function.regs[name] == "b16"
    assert "%rs3" not in function.regs and not any(name.startswith("%q") for name in function.regs)
    assert [function.regs[name] for name in ("a", "b", "c", "inner", "late")] == ["b32"] * 5
    assert (
        sum(
            name.startswith("%r") and not name.startswith("%rs") and not name.startswith("%rd")
            for name in function.regs
        )
        == 8
    )
    add, mov = function.body
    assert add.operands == [Reg("inner"), Reg("a"), Reg("plain_name")]
    assert mov.operands == [Reg("b"), Reg("late")]  # declared after its use: still a register


def test_function_scope_variables():
    function = parse_ptx(
        kernel(
            """
    .local .align 8 .b8 scratch[4][8];
    .shared .u32 tile[32];
    .extern .shared .b8 dyn[];
    mov.u64 %rd1, scratch;
"""
        )
    ).functions["k"]
    scratch, tile, dyn = function.local_vars
    assert (scratch.space, scratch.type, scratch.count, scratch.align) == ("local", "b8", 32, 8)
    assert (tile.space, tile.type, tile.count, tile.align) == ("shared", "u32", 32, 4)
    assert (dyn.extern, dyn.count) == (True, None)


def test_module_variables_and_initializers():
    module = parse_ptx(
        HEADER
        + """
.global .align 4 .u32 table[2][3] = {{1, 2, 3}, {4, -5, 0x10}};
.global .f32 fvals[4] = {0f3F800000, 1.5, 2, 0d3FF0000000000000};
.const .f64 dv = 0f3F800000;
.global .s32 a, b = 7, c[] = {1, 2};
.visible .global .v4 .f32 vec;
.const .align 8 .b8 bytes[3] = {1, 2};
.extern .shared .align 16 .b8 smem[];
.global .u64 big = 0xFFFFFFFFFFFFFFFF;
"""
    )
    decls = {decl.name: decl for decl in module.globals}
    assert (decls["table"].count, decls["table"].align, decls["table"].init) == (6, 4, [1, 2, 3, 4, -5, 16])
    assert decls["fvals"].init == [0x3F800000, 1.5, 2.0, 1.0]
    assert decls["dv"].init == [1.0]
    assert (decls["a"].init, decls["b"].init, decls["c"].init, decls["c"].count) == (None, [7], [1, 2], 2)
    assert (decls["vec"].type, decls["vec"].count, decls["vec"].align) == ("f32", 4, 16)
    assert (decls["bytes"].count, decls["bytes"].init) == (3, [1, 2])
    assert (decls["smem"].space, decls["smem"].extern, decls["smem"].count) == ("shared", True, None)
    assert decls["big"].init == [2**64 - 1]
    assert [decl.loc.line for decl in module.globals][:2] == [5, 6]


def test_function_headers_and_directives():
    module = parse_ptx(
        HEADER
        + """
.func (.param .b32 retval) add_one(.param .b32 x) .noreturn
{
    .reg .b32 t;
    ld.param.b32 t, [x];
    st.param.b32 [retval], t;
    ret;
}
.extern .func ext(.param .u64 p);
.weak .func weak_one() { ret; }
.visible .entry k1(.param .u64 .ptr.global.align 4 out, .param .align 8 .b8 blob[16],
                   .param .u32 .ptr.align 8 gen)
.maxntid 256
.reqntid 256, 1
.maxnreg 32
.minnctapersm 2
.pragma "nounroll";
{
    .pragma "nounroll";
    ret;
}
.entry k2 { ret; }
"""
    )
    assert set(module.functions) == {"add_one", "weak_one", "k1", "k2"}  # 'ext' is only declared
    add_one = module.functions["add_one"]
    assert add_one.directives == {"noreturn": True}
    assert [(param.name, param.type) for param in add_one.return_params] == [("retval", "b32")]
    assert add_one.regs == {"t": "b32"}
    assert add_one.body[0].operands == [Reg("t"), Address("x", 0, base_is_reg=False)]
    assert module.functions["weak_one"].visible
    k1 = module.functions["k1"]
    assert k1.directives == {
        "maxntid": (256,),
        "reqntid": (256, 1),
        "maxnreg": 32,
        "minnctapersm": 2,
        "pragma": ["nounroll", "nounroll"],
        "nounroll_at": [0],        # the body's pragma precedes body[0] (the header's has no place)
    }
    out, blob, gen = k1.params
    assert (out.type, out.count, out.align, out.ptr_space) == ("u64", 1, 8, "global")
    assert (blob.type, blob.count, blob.align, blob.ptr_space) == ("b8", 16, 8, None)
    assert gen.ptr_space == "generic"
    assert k1.visible and not module.functions["k2"].visible


def test_labels_and_empty_statements():
    function = parse_ptx(kernel("L0:\n    mov.u32 %r1, 1; add.u32 %r1, %r1, 1;\nmid: ret;\nend:")).functions[
        "k"
    ]
    assert function.labels == {"L0": 0, "mid": 2, "end": 3}
    assert [ins.loc.column for ins in function.body[:2]] == [5, 21]


def test_module_directives_comments_and_gpusim_hints():
    module = parse_ptx(
        """// gpusim: regs=40
/* a block comment
   over lines */
.version 7.0
.target sm_70, debug
.address_size 64
.file 1 "a.cu", 1700000000, 1234
.file 2 "b.cuh"
.pragma "nounroll";
// gpusim: regs=64 kernel=k
.visible .entry k() { .loc 2 9 1
  ret; }
.section .debug_str
{
$L__info_string0:
.b8 95,90,0
}
"""
    )
    assert (module.version, module.target, module.address_size) == ("7.0", "sm_70", 64)
    assert module.files == {1: "a.cu", 2: "b.cuh"}
    assert module.gpusim_regs == {"*": 40, "k": 64}
    assert module.functions["k"].body[0].src_line == (2, 9)
    assert parse_ptx(".version 6.0\n.target sm_70\n").address_size == 32


def test_gpusim_regs_lines_carry_a_count_per_architecture():
    module = parse_ptx(
        "// gpusim: regs=30 sm_80=30 sm_89=40 sm_90=32 kernel=k\n// gpusim: regs=12\n" + kernel("ret;")
    )
    assert module.gpusim_regs == {"k": 30, "*": 12}
    assert module.gpusim_regs_arch == {"k": {"sm_80": 30, "sm_89": 40, "sm_90": 32}, "*": {}}


def test_parse_file_reads_a_path(tmp_path):
    path = tmp_path / "tiny.ptx"
    path.write_text(kernel("ret;"))
    assert parse_file(path).functions["k"].body[0].opcode == "ret"
    assert parse_file(str(path)).file == str(path)
    path.write_bytes(b"\xff\xfe.version")
    with pytest.raises(PTXSyntaxError, match="UTF-8"):
        parse_file(path)


# ------------------------------------------------------------------------------------------ errors

MARK = "‸"  # where the error must be reported; removed before parsing


def located(text: str) -> tuple[str, int, int]:
    """The text without MARK, and the 1-based line and column MARK stood at."""
    before = text[: text.index(MARK)]
    return text.replace(MARK, ""), before.count("\n") + 1, len(before) - before.rfind("\n")


MALFORMED = [
    (kernel("    add.s32 %r1, %r2, %r3‸\n    ret;"), "expected ';' after instruction"),
    (kernel("    add.s32 %r1, %r2 ‸%r3;"), "expected ',' or ';'"),
    (kernel("    ret‸"), "expected ';' after instruction"),
    (HEADER + "‸.foo 3\n", "unknown directive '.foo'; supported directives: .version"),
    (kernel("    ‸.bar 3;"), "unknown directive '.bar' in a function body"),
    (kernel("    add.s32 ‸%r9, %r2, %r3;"), "register '%r9' is not declared"),
    (kernel("    bra ‸$L__nope;"), "undefined label, variable or function '$L__nope'"),
    (kernel("L1:\n‸L1:\n ret;"), "label 'L1' is already defined at line"),
    (kernel("    mov.u32 %r1, ‸0f3F80;"), "malformed numeric literal '0f3F80'"),
    (kernel("    mov.u32 %r1, ‸09;"), "invalid octal literal"),
    (kernel("    ‸/* unterminated"), "unterminated '/*' comment"),
    (HEADER + '.file 1 ‸"abc\n', "unterminated string"),
    ("‸.target sm_80\n", "expected '.version X.Y' as the first directive"),
    (".version 8.0\n‸.entry k { ret; }", "expected a '.target sm_XX' directive before '.entry'"),
    ("// nothing\n‸", "the file is empty"),
    (HEADER + ".entry k {\n ret;\n‸", "expected '}' to close the block opened at line 4"),
    (kernel("    ld.global.u32 %r1, [%r2+‸%r3];"), "expected an integer offset"),
    (kernel("    ld.global.u32 %r1, [%r2‸;"), "expected ']' to close the address"),
    (kernel("    @‸%tid.x bra L;"), "expected a predicate register as a guard predicate"),
    (kernel("    mov.u32 %r1, ‸%tid.w;"), "takes a component .x, .y or .z"),
    (kernel("    .reg ‸.b33 %x;"), "unknown register type '.b33'"),
    (HEADER + ".shared .u32 x ‸= 4;", "initializers are allowed only on '.global' and '.const'"),
    (HEADER + ".global .u32 x[2] ‸= {1,2,3};", "initializer has 3 values but 'x' has 2 elements"),
    (HEADER + ".global .u32 x = ‸1.5;", "floating-point initializer '1.5'"),
    (HEADER + ".global .u32 x‸[];", "needs a size, an initializer or '.extern'"),
    (HEADER + ".global .u32 x[‸0];", "array size must be positive"),
    (HEADER + ".global .align ‸3 .u32 x;", "alignment must be a power of two"),
    (HEADER + ".global .u32 x;\n.global .u32 ‸x;", "variable 'x' is already declared at line 4"),
    (HEADER + ".entry k { ret; }\n.entry ‸k { ret; }", "function 'k' is already defined at line 4"),
    (kernel("    mov.u32 %r1, ‸#3;"), "unexpected character '#'"),
    (HEADER + "‸hello", "expected a directive at module scope, found 'hello'"),
    (kernel("‸%r1: ret;"), "not a valid label name"),
    ("‸// gpusim: regs=abc\n" + kernel("ret;"), "gpusim comment needs 'regs=N'"),
    ("‸// gpusim: regs=3 kernel=nope\n" + kernel("ret;"), "names kernel 'nope'"),
    ("‸// gpusim: regs=3 color=red\n" + kernel("ret;"), "malformed gpusim comment item 'color=red'"),
    ("‸// gpusim: regs=3 sm_80=0\n" + kernel("ret;"), "needs 'sm_80=N' with N a positive integer"),
    ("‸// gpusim: regs=3 sm_80=4 sm_80=5\n" + kernel("ret;"), "gives 'sm_80=' twice"),
    ("‸// gpusim: sm_80=4\n" + kernel("ret;"), "gpusim comment needs 'regs=N'"),
    ("‸// gpusim: regs=3 smx_80=4\n" + kernel("ret;"), "malformed gpusim comment item 'smx_80=4'"),
    (kernel("    not.b32 %r1, !‸foo;"), "'foo' is not a declared register"),
    (HEADER + "‸.version 8.0\n", "duplicate '.version' directive"),
    (HEADER + ".extern .func f() ‸{ ret; }", "'.extern' function 'f' cannot have a body"),
    (HEADER + ".entry k ‸.maxntid 1,2,3,4 { ret; }", "takes 1 to 3 dimensions, found 4"),
    (HEADER + ".entry k ‸.foo { ret; }", "unknown function directive '.foo'; supported: .maxntid"),
    (kernel("    mov.u64 %rd1, ‸0x1FFFFFFFFFFFFFFFF;"), "does not fit in 64 bits"),
    (kernel("    mov.u32 {‸}, %r1;"), "a vector operand needs at least one element"),
    (kernel("    .loc 1 2 3, ‸foo 4"), "unknown .loc attribute 'foo'"),
    (kernel("    ‸%r1 add;"), "expected an instruction opcode, found '%r1'"),
    (kernel("    mov.u32 %r1, ‸;"), "expected an operand"),
    (kernel("    mov.u32 %r1, -‸%r2;"), "expected a number after '-'"),
    (kernel("    .reg .b32 %x<‸99999999999>;"), "register count 99999999999 is too large"),
    (".version ‸8\n.target sm_80\n", "expected a version number 'X.Y'"),
    (".version 8.0\n.target ‸pdp11\n", "unknown target 'pdp11'"),
    (".version 8.0\n.target sm_80\n.address_size ‸48\n", "'.address_size' must be 32 or 64"),
    (HEADER + ".entry ‸(.param .b32 r) k() { ret; }", "a '.entry' kernel cannot have return parameters"),
    (HEADER + ".global .u32 ‸a.b;", "is not a valid variable name"),
    (kernel("    mov.u32 %r1, ‸a.b;"), "is not a valid operand"),
    (HEADER + ".section .debug_str ‸{ .b8 1\n", "the '.section' body opened here is not closed"),
]

UNSUPPORTED = [
    (kernel("    mov.u32 %r1, ‸%r2.x;"), "vector register components"),
    (kernel("    .reg ‸.v4 .f32 %v;"), "vector registers"),
    (HEADER + ".global ‸.texref t;", "texture references"),
    (HEADER + ".global .u64 x = ‸generic(y);", "address initializers"),
    (HEADER + ".func f(‸.reg .b32 x) { ret; }", "'.reg' parameters"),
]


@pytest.mark.parametrize(("marked", "message"), MALFORMED, ids=[message for _, message in MALFORMED])
def test_malformed_ptx_names_line_and_column(marked, message):
    text, line, column = located(marked)
    with pytest.raises(PTXSyntaxError) as caught:
        parse_ptx(text, "bad.ptx")
    error = caught.value
    assert message in error.detail
    assert (error.file, error.line, error.column) == ("bad.ptx", line, column), str(error)
    assert error.text == text.split("\n")[line - 1]
    assert str(error).startswith(f"bad.ptx:{line}:{column}: ")


@pytest.mark.parametrize(("marked", "message"), UNSUPPORTED, ids=[message for _, message in UNSUPPORTED])
def test_unsupported_ptx_is_reported_as_such(marked, message):
    text, line, column = located(marked)
    with pytest.raises(UnsupportedPTXError) as caught:
        parse_ptx(text, "odd.ptx")
    assert message in caught.value.detail
    assert (caught.value.line, caught.value.column) == (line, column)


# ------------------------------------------------------------------------------------------ robustness

FIXTURE_TEXTS = [path.read_text() for path in FIXTURES]
GARBAGE = st.text(
    alphabet=st.sampled_from(list('.;,{}[]()<>=+-!|@:%$_/*"\\ \n\t0123456789abcfxXdU#~é\x00')),
    min_size=1,
    max_size=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fixture=st.sampled_from(FIXTURE_TEXTS), cut=st.floats(0, 1))
def test_truncated_fixtures_fail_only_with_ptx_errors(fixture, cut):
    text = fixture[: int(len(fixture) * cut)]
    try:
        parse_ptx(text)
    except PTXSyntaxError:
        pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fixture=st.sampled_from(FIXTURE_TEXTS), where=st.floats(0, 1), garbage=GARBAGE, deleted=st.integers(0, 30)
)
def test_corrupted_fixtures_fail_only_with_ptx_errors(fixture, where, garbage, deleted):
    position = int(len(fixture) * where)
    text = fixture[:position] + garbage + fixture[position + deleted :]
    try:
        parse_ptx(text)
    except PTXSyntaxError:
        pass


def _big_kernel(blocks: int) -> str:
    """One kernel of ``blocks`` repeated 9-line basic blocks (labels, .loc, vector loads, comments, branches)."""
    lines = [
        HEADER,
        ".visible .entry big(.param .u64 p)",
        "{",
        "  .reg .pred %p<4>;",
        "  .reg .b32 %r<100>;",
        "  .reg .f32 %f<100>;",
        "  .reg .b64 %rd<100>;",
        "  ld.param.u64 %rd1, [p];",
    ]
    for block in range(blocks):
        lines += [
            f"$L__BB0_{block}:",
            "  .loc 1 12 3",
            "  mov.u32 %r1, %tid.x;",
            "  mad.lo.s32 %r2, %r1, 4, %r3;",
            "  ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];",
            "  fma.rn.f32 %f5, %f1, 0f3F800000, %f2;  // a comment",
            "  setp.lt.s32 %p1, %r2, 100;",
            f"  @%p1 bra $L__BB0_{block};",
            "  st.global.f32 [%rd1], %f5;",
        ]
    return "\n".join(lines + ["  ret;", "}"])


def _traced_lines(text: str) -> int:
    """Python lines executed while parsing ``text``: a deterministic measure of the parser's work."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        parse_ptx(text)
    finally:
        sys.settrace(None)
    return count


def test_parsing_work_is_linear_in_the_kernel_size():
    """Each added block of PTX costs the same work, however long the kernel already is (no hidden quadratic
    pass); the speed itself is benchmarks/bench_speed.py's ``parse`` case, not a timed test."""
    size = 60
    work = [_traced_lines(_big_kernel(size * k)) for k in (1, 2, 3)]
    first, second = work[1] - work[0], work[2] - work[1]
    assert first > 0 and abs(second - first) <= 0.01 * first, work
    assert len(parse_ptx(_big_kernel(size)).functions["big"].body) == 7 * size + 2  # 7 a block, ld.param, ret


def test_loc_line_zero_is_no_source_line():
    """DWARF's line 0 (numba's and Triton's compiler-made epilogue, ``.loc 1 0 1``) attributes to no line."""
    text = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k()
{
    .reg .b32 %r<2>;
    .loc 1 7 1
    mov.u32 %r1, 1;
    .loc 1 0 1
    ret;
}
    .file 1 "kernel.py"
"""
    body = parse_ptx(text, "k.ptx").functions["k"].body
    assert [ins.src_line for ins in body] == [(1, 7), None]


def test_callprototype_parses_and_the_indirect_call_is_refused_by_the_lowering():
    """``name: .callprototype ...;`` declares an indirect call's prototype: the parser keeps the name, and the
    lowering refuses the indirect call itself (that kernel only; tests/test_calls.py)."""
    text = kernel("pr: .callprototype (.param .b32 _) _ (.param .b32 _);").replace("‸", "")
    module = parse_ptx(text, "proto.ptx")
    assert "pr" in module.functions["k"].labels
