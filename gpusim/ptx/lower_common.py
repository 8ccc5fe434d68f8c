"""Shared pieces of the lowering: modifier classification, immediates, error construction and the
builder of one code row (columns in ``gpusim.arch.layout``)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.errors import PTXSyntaxError, UnsupportedPTXError
from gpusim.ptx import ast

_IGNORED_MODS = {
    ".nc", ".volatile", ".relaxed", ".acquire", ".release", ".acq_rel", ".sc", ".weak", ".mmio",
    ".cta", ".gpu", ".sys", ".cluster", ".ca", ".cg", ".cs", ".lu", ".cv", ".wb", ".wt",
    ".aligned", ".sync", ".uni", ".L1::evict_normal", ".L1::evict_unchanged", ".L1::evict_first",
    ".L1::evict_last", ".L1::no_allocate", ".L2::evict_normal", ".L2::evict_first", ".L2::evict_last",
    ".L2::64B", ".L2::128B", ".L2::256B", ".L2::cache_hint", ".noftz",
}


_SPACE_ALIASES = {".shared::cta": ".shared", ".shared::cluster": ".shared"}


def _err(ins: ast.Instruction, message: str, unsupported: bool = False) -> PTXSyntaxError:
    cls = UnsupportedPTXError if unsupported else PTXSyntaxError
    return cls(message, ins.loc.file, ins.loc.line, ins.loc.column, ins.text)


def imm_bits(imm: ast.Imm, type_code: int) -> int:
    """Raw bits of an immediate read as ``type_code`` (two's complement for negative ints)."""
    width = c.TYPE_BYTES[type_code] * 8 if type_code != c.T_PRED else 1
    mask = (1 << 64) - 1 if width >= 64 else (1 << width) - 1
    if type_code == c.T_F32:
        if imm.kind == "f32bits":
            return int(imm.value) & 0xFFFFFFFF
        if imm.kind == "f64bits":
            value = struct.unpack("<d", struct.pack("<Q", int(imm.value) & ((1 << 64) - 1)))[0]
            return _f32_bits(value)
        return _f32_bits(float(imm.value))
    if type_code == c.T_F64:
        if imm.kind == "f64bits":
            return int(imm.value) & mask
        if imm.kind == "f32bits":
            value = struct.unpack("<f", struct.pack("<I", int(imm.value) & 0xFFFFFFFF))[0]
            return struct.unpack("<Q", struct.pack("<d", value))[0]
        return struct.unpack("<Q", struct.pack("<d", float(imm.value)))[0]
    # ptxas: a decimal float literal is never an integer or bit-type operand, and 0f/0d bits only a .bN one
    name = c.TYPE_NAMES.get(type_code, "b32")
    if imm.kind == "float" or (imm.kind in ("f32bits", "f64bits") and type_code not in _BIT_TYPES):
        shown = imm.value if imm.kind == "float" else f"0{'f' if imm.kind == 'f32bits' else 'd'}{int(imm.value):X}"
        expected = "integer" if name[0] in "su" else "value"
        raise ValueError(f"a floating-point literal ({shown}) where a .{name} {expected} is expected (ptxas: "
                         "'Arguments mismatch'); write an integer"
                         + (", or 0fXXXXXXXX bits for a .b32 operand" if name[0] != "p" else ""))
    return int(imm.value) & mask


_BIT_TYPES = frozenset((c.T_B8, c.T_B16, c.T_B32, c.T_B64))


def _f32_bits(value: float) -> int:
    """IEEE single bits of a double, rounded to nearest; beyond the f32 range it is +-inf, as ptxas rounds."""
    with np.errstate(over="ignore"):
        return int(np.float32(value).view(np.uint32))


def _signed(bits: int) -> int:
    return bits - (1 << 64) if bits >= 1 << 63 else bits


@dataclass
class _Mods:
    types: list = field(default_factory=list)
    mods: int = 0
    space: int = L.SP_GENERIC
    vec: int = 1
    aux: int = 0
    words: list = field(default_factory=list)   # everything not classified


def _classify(ins: ast.Instruction) -> _Mods:
    out = _Mods()
    for raw in ins.mods:
        mod = _SPACE_ALIASES.get(raw, raw)
        name = mod[1:]
        if name in c.TYPE_CODES:
            out.types.append(c.TYPE_CODES[name])
        elif mod in c.ROUNDING_CODES:
            out.mods |= c.ROUNDING_CODES[mod] << c.MOD_RND_SHIFT
        elif mod == ".ftz":
            out.mods |= c.MOD_FTZ
        elif mod == ".sat" or mod == ".satfinite":
            out.mods |= c.MOD_SAT
        elif mod == ".approx":
            out.mods |= c.MOD_APPROX
        elif mod == ".full":
            out.mods |= c.MOD_FULL
        elif mod == ".relu":
            out.mods |= c.MOD_RELU
        elif mod == ".NaN":
            out.mods |= c.MOD_NAN
        elif mod == ".shiftamt" and ins.opcode == "bfind":
            out.mods |= c.MOD_SHIFTAMT
        elif mod in L.SPACE_CODES:
            out.space = L.SPACE_CODES[mod]
        elif mod in (".v2", ".v4", ".v8"):
            out.vec = int(mod[2:])
        elif mod in _IGNORED_MODS or mod.startswith(".L2::") or mod.startswith(".L1::"):
            continue
        else:
            out.words.append(mod)
    return out


def _take(words: list, table: dict, ins: ast.Instruction, what: str, required: bool = False) -> int:
    found = [w for w in words if w in table]
    if len(found) > 1:
        raise _err(ins, f"more than one {what} modifier: {' '.join(found)}")
    if not found:
        if required:
            raise _err(ins, f"missing the {what} modifier; expected one of {' '.join(sorted(table))}")
        return 0
    words.remove(found[0])
    return table[found[0]]


def _reject_leftovers(ins: ast.Instruction, words: list) -> None:
    if words:
        raise _err(ins, f"modifier(s) {' '.join(words)} not supported on '{ins.opcode}'", unsupported=True)


class _Row:
    """Builder of one code row."""

    def __init__(self, n_fields: int):
        self.row = [0] * n_fields
        for i in range(L.MAX_DST):
            self.row[L.F_DST0 + i] = -1
        self.row[L.F_GUARD] = -1
        self.row[L.F_ABASE] = -1
        self.row[L.F_VEC] = 1
        self.n_src = 0

    def add_src(self, kind_value: tuple[int, int]) -> None:
        if self.n_src >= L.MAX_SRC:
            raise ValueError("too many source operands")
        self.row[L.F_SK0 + 2 * self.n_src] = kind_value[0]
        self.row[L.F_SK0 + 2 * self.n_src + 1] = kind_value[1]
        self.n_src += 1
        self.row[L.F_NSRC] = self.n_src

    def set_dsts(self, regs: list[int]) -> None:
        if len(regs) > L.MAX_DST:
            raise ValueError("too many destinations")
        for i, r in enumerate(regs):
            self.row[L.F_DST0 + i] = r
        self.row[L.F_NDST] = len(regs)


def _one_type(ins: ast.Instruction, m: _Mods) -> int:
    if len(m.types) != 1:
        raise _err(ins, f"expected exactly one type modifier on '{ins.opcode}', found {len(m.types)}")
    return m.types[0]


def _expect_operands(ins: ast.Instruction, count: int | tuple) -> None:
    counts = (count,) if isinstance(count, int) else count
    if len(ins.operands) not in counts:
        want = " or ".join(str(k) for k in counts)
        raise _err(ins, f"'{ins.opcode}' takes {want} operands, found {len(ins.operands)}")


class OperandLowering(Protocol):
    """What the instruction-family lowerers (``gpusim.ptx.lower_ops``) need of a function's lowering
    (``gpusim.ptx.lower._FunctionLowering``): operands turned into register indices and addresses."""

    def src(self, ins: ast.Instruction, operand, type_code: int) -> tuple[int, int]: ...

    def dst(self, ins: ast.Instruction, operand) -> list[int]: ...

    def address(self, ins: ast.Instruction, operand) -> tuple[int, int, int | None]: ...

    def reg_bits(self, index: int) -> int: ...

    def reg_of(self, ins: ast.Instruction, name: str) -> int: ...


def _reg_vector(fl: OperandLowering, ins: ast.Instruction, operand, count: int, what: str,
                who: str | None = None) -> list[int]:
    """Register indices of a vector operand ``{r0, ...}`` of exactly ``count`` registers (``what`` names it
    in errors, ``who`` the instruction: ``'opcode'`` unless given)."""
    if not isinstance(operand, ast.Vector) or len(operand.elems) != count:
        found = len(operand.elems) if isinstance(operand, ast.Vector) else 1
        who = f"'{ins.opcode}'" if who is None else who
        raise _err(ins, f"{who} needs {count} registers for {what} ({{r0, ...}}), found {found}")
    out = []
    for elem in operand.elems:
        if not isinstance(elem, ast.Reg):
            raise _err(ins, f"{what} must be registers, found {type(elem).__name__}")
        out.append(fl.reg_of(ins, elem.name))
    return out


def leaf_operands(func: ast.Function):
    """Every operand of every instruction of ``func`` as (instruction, operand), vectors and lists opened."""

    def visit(ins, operand):
        if isinstance(operand, ast.Vector | ast.ParenList):
            for elem in operand.elems:
                yield from visit(ins, elem)
        else:
            yield ins, operand

    for ins in func.body:
        for operand in ins.operands:
            yield from visit(ins, operand)
