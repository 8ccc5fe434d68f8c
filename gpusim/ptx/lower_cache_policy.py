"""Lowering of the L2 cache-policy instructions (sm_80): ``createpolicy``, ``discard.global.L2`` and
``applypriority.global.L2::evict_normal``.

``createpolicy`` makes the 64-bit cache-eviction policy that loads, stores and bulk copies take with
``.L2::cache_hint`` (Triton's ``tl.load(..., eviction_policy="evict_last")`` and CUTLASS emit it). The PTX ISA
makes the policy opaque: a kernel only passes it on. gpusim's L2 keeps no eviction priorities, so every hint is
accepted and has no effect (as the bulk copies' ``.L2::cache_hint``), and the policy is gpusim's own constant
encoding of the instruction's qualifiers -- ``fractional`` and ``range`` forms: bits 0-1 the form (1, 2), bits
2-4 the primary priority, bits 5-7 the secondary, bits 32-63 the fraction's f32 bits (fractional); the range's
address and sizes are checked operands and not kept. ``createpolicy.cvt.L2.b64 p, a`` copies ``a`` (a policy
converted from a CUDA access property is as opaque). Each becomes a ``mov.b64``.

``discard.global.L2 [a], 128`` makes the 128 bytes at ``a`` hold indeterminate values without writing them
back; keeping the values they hold is one such value, and gpusim's L2 has no line to drop, so the row is a
no-op; ``applypriority.global.L2::evict_normal [a], 128`` changes a line's eviction priority, a no-op here
too. Both check their operands (``a`` 128-byte aligned when it is a constant, the size 128).
"""

from __future__ import annotations

import struct

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L
from gpusim.ptx import ast
from gpusim.ptx.lower_common import _err, _expect_operands, _Row
from gpusim.ptx.lower_hopper import _require_sm

CACHE_POLICY_OPCODES = ("createpolicy", "discard", "applypriority")
PRIMARY = (".L2::evict_last", ".L2::evict_normal", ".L2::evict_first", ".L2::evict_unchanged")
SECONDARY = (".L2::evict_first", ".L2::evict_unchanged")
FRACTIONAL, RANGE = 1, 2
LINE = 128
"""discard and applypriority act on one 128-byte L2 line (PTX ISA: the size operand is 128)."""


def lower_cache_policy(fl, ins: ast.Instruction, b: _Row) -> None:
    """Lower one ``createpolicy``, ``discard`` or ``applypriority`` instruction into ``b``."""
    name = f"{ins.opcode}{''.join(ins.mods)}"
    _require_sm(fl, ins, 80, name)
    if ins.opcode == "createpolicy":
        _lower_createpolicy(fl, ins, b, name)
        return
    want = (".global", ".L2") if ins.opcode == "discard" else (".global", ".L2::evict_normal")
    if tuple(ins.mods) != want:
        raise _err(ins, f"'{name}': the form is {ins.opcode}{''.join(want)} [a], 128", unsupported=True)
    _expect_operands(ins, 2)
    address, size = ins.operands
    if not isinstance(address, ast.Address):
        raise _err(ins, f"{ins.opcode} needs an address [a]")
    if not isinstance(size, ast.Imm) or size.value != LINE:
        raise _err(ins, f"{ins.opcode}'s size must be the constant {LINE}")
    base, offset, space = fl.address(ins, address)
    if space not in (None, L.SP_GLOBAL):
        raise _err(ins, f"{ins.opcode} acts on global memory")
    if base < 0 and offset % LINE:
        raise _err(ins, f"{ins.opcode}: address {offset:#x} is not {LINE}-byte aligned")
    b.row[L.F_OP] = c.OP_NOP
    b.row[L.F_ISA] = isa.isa_row(c.OP_NOP, c.T_NONE, f"{ins.opcode}.L2")


def _lower_createpolicy(fl, ins: ast.Instruction, b: _Row, name: str) -> None:
    mods = list(ins.mods)
    if mods[-1:] != [".b64"]:
        raise _err(ins, f"'{name}': createpolicy writes a .b64 policy")
    form = mods[0] if mods else ""
    if form == ".cvt":
        if mods != [".cvt", ".L2", ".b64"]:
            raise _err(ins, f"'{name}': the form is createpolicy.cvt.L2.b64 policy, access_property")
        _expect_operands(ins, 2)
        b.set_dsts(fl.dst(ins, ins.operands[0]))
        b.add_src(fl.src(ins, ins.operands[1], c.T_B64))
        _as_mov(b)
        return
    priorities = [m for m in mods[1:-1] if m != ".global"]
    if form not in (".fractional", ".range") or not 1 <= len(priorities) <= 2 or priorities[0] not in PRIMARY \
            or (len(priorities) == 2 and priorities[1] not in SECONDARY) or (".global" in mods and form != ".range"):
        raise _err(ins, f"'{name}': the forms are createpolicy.fractional.L2::primary{{.L2::secondary}}.b64 "
                   "policy{, fraction} and createpolicy.range{.global}.L2::primary{.L2::secondary}.b64 policy, [a], "
                   "primary_size, total_size (primary: evict_last, evict_normal, evict_first, evict_unchanged; "
                   "secondary: evict_first, evict_unchanged)", unsupported=True)
    primary = PRIMARY.index(priorities[0])
    secondary = SECONDARY.index(priorities[1]) + 1 if len(priorities) == 2 else 0
    fraction_bits = 0
    if form == ".fractional":
        _expect_operands(ins, (1, 2))
        if len(ins.operands) == 2:
            fraction = _constant_fraction(ins, ins.operands[1])
            if not 0.0 < fraction <= 1.0:
                raise _err(ins, f"createpolicy's fraction must be in (0, 1], not {fraction}")
            fraction_bits = struct.unpack("<I", struct.pack("<f", fraction))[0]
        else:
            fraction_bits = struct.unpack("<I", struct.pack("<f", 1.0))[0]
    else:
        _expect_operands(ins, 4)
        if not isinstance(ins.operands[1], ast.Address):
            raise _err(ins, "createpolicy.range needs the range's address [a]")
        fl.address(ins, ins.operands[1])
        for size in ins.operands[2:]:
            fl.src(ins, size, c.T_U32)
    b.set_dsts(fl.dst(ins, ins.operands[0]))
    code = (FRACTIONAL if form == ".fractional" else RANGE) | primary << 2 | secondary << 5 | fraction_bits << 32
    b.add_src((L.SK_IMM, code - (1 << 64) if code >= 1 << 63 else code))
    _as_mov(b)


def _constant_fraction(ins: ast.Instruction, operand) -> float:
    if not isinstance(operand, ast.Imm):
        raise _err(ins, "createpolicy's fraction must be a constant")
    if operand.kind == "f32bits":
        return float(struct.unpack("<f", struct.pack("<I", int(operand.value)))[0])
    if operand.kind == "f64bits":
        return float(struct.unpack("<d", struct.pack("<Q", int(operand.value)))[0])
    return float(operand.value)


def _as_mov(b: _Row) -> None:
    b.row[L.F_OP] = c.OP_MOV
    b.row[L.F_TY] = c.T_B64
    b.row[L.F_ISA] = isa.isa_row(c.OP_MOV, c.T_B64)
