"""Lowering of memory, control, synchronisation and warp-wide instructions (ALU forms are in
``gpusim.ptx.lower``)."""

from __future__ import annotations

import dataclasses

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L
from gpusim.ptx import ast
from gpusim.ptx.lower_common import (
    OperandLowering,
    _err,
    _expect_operands,
    _Mods,
    _one_type,
    _reject_leftovers,
    _Row,
    _take,
)


def _lower_memory(fl: OperandLowering, ins: ast.Instruction, b: _Row, m: _Mods, op: str) -> None:
    row = b.row
    words = m.words
    if op in ("prefetch", "prefetchu"):
        row[L.F_OP] = c.OP_PREFETCH
        row[L.F_ISA] = isa.isa_row(c.OP_PREFETCH, c.T_NONE)
        words[:] = [w for w in words if w not in (".L1", ".L2", ".tensormap")]
        _reject_leftovers(ins, words)
        base, offset, _ = fl.address(ins, ins.operands[0])
        row[L.F_ABASE] = base
        row[L.F_AOFF] = offset
        row[L.F_SPACE] = m.space
        return
    if op in ("atom", "red"):
        row[L.F_AUX] = _take(words, L.ATOM_CODES, ins, "atomic operation", required=True)
    _reject_leftovers(ins, words)
    ty = _one_type(ins, m)
    if m.vec > 4 or (m.vec > 1 and op in ("atom", "red")):
        raise _err(ins, f".v{m.vec} is not supported on '{op}'", unsupported=True)
    row[L.F_TY] = ty
    row[L.F_VEC] = m.vec
    row[L.F_SIZE] = c.TYPE_BYTES[ty]
    operands = ins.operands
    space = m.space
    if ".L2::cache_hint" in ins.mods:       # a trailing 64-bit cache policy (createpolicy): checked, no effect
        if not operands or not isinstance(operands[-1], (ast.Reg, ast.Imm)):
            raise _err(ins, f"'{op}' with .L2::cache_hint takes the 64-bit cache policy (createpolicy's) as its "
                       "last operand")
        fl.src(ins, operands[-1], c.T_B64)
        ins = dataclasses.replace(ins, operands=operands[:-1])
        operands = ins.operands
    if op in ("ld", "ldu"):
        _expect_operands(ins, 2)
        row[L.F_OP] = c.OP_LD
        dsts = fl.dst(ins, operands[0])
        if len(dsts) != m.vec:
            raise _err(ins, f"a .v{m.vec} load needs {m.vec} destination registers, found {len(dsts)}")
        b.set_dsts(dsts)
        addr = operands[1]
    elif op == "st":
        _expect_operands(ins, 2)
        row[L.F_OP] = c.OP_ST
        values = operands[1].elems if isinstance(operands[1], ast.Vector) else (operands[1],)
        if len(values) != m.vec:
            raise _err(ins, f"a .v{m.vec} store needs {m.vec} source values, found {len(values)}")
        for value in values:
            b.add_src(fl.src(ins, value, ty))
        addr = operands[0]
    else:
        is_atom = op == "atom"
        row[L.F_OP] = c.OP_ATOM if is_atom else c.OP_RED
        n_values = 2 if row[L.F_AUX] == L.ATOM_CAS else 1
        _expect_operands(ins, (1 if is_atom else 0) + 1 + n_values)
        if is_atom:
            b.set_dsts(fl.dst(ins, operands[0]))
        addr = operands[1 if is_atom else 0]
        for value in operands[(2 if is_atom else 1):]:
            b.add_src(fl.src(ins, value, ty))
    base, offset, sym_space = fl.address(ins, addr)
    if space == L.SP_GENERIC and sym_space is not None and sym_space != L.SP_GLOBAL:
        space = sym_space if sym_space != L.SP_CONST else L.SP_GLOBAL
    if space == L.SP_CONST:
        space = L.SP_GLOBAL   # .const variables live in device memory
    if space == L.SP_PARAM and op != "ld":
        raise _err(ins, f"'{op}' to the .param space is only supported for loads of kernel parameters",
                   unsupported=True)
    row[L.F_ABASE] = base
    row[L.F_AOFF] = offset
    row[L.F_SPACE] = space
    if base >= 0 and space in (L.SP_SHARED, L.SP_LOCAL, L.SP_PARAM) and fl.reg_bits(base) == 32:
        row[L.F_MODS] |= L.MEM_ADDR32
    if op == "ld" and space == L.SP_GLOBAL and (".cg" in ins.mods or ".cv" in ins.mods):
        row[L.F_MODS] |= L.MEM_NO_L1
    if op in ("ld", "ldu") and c.TYPE_SIGNED[ty] and c.TYPE_BYTES[ty] < 8 and any(
            d >= 0 and fl.reg_bits(d) == 64 for d in dsts):
        row[L.F_MODS] |= L.MEM_DST64
    variant = {L.SP_SHARED: f"{op}.shared", L.SP_PARAM: "ld.param"}.get(space)
    isa_op = {"ld": c.OP_LD, "ldu": c.OP_LD, "st": c.OP_ST, "atom": c.OP_ATOM, "red": c.OP_RED}[op]
    row[L.F_ISA] = isa.isa_row(isa_op, ty, variant)


def _lower_cvta(fl: OperandLowering, ins: ast.Instruction, b: _Row, m: _Mods) -> None:
    row = b.row
    words = m.words
    to_space = ".to" in words
    if to_space:
        words.remove(".to")
    _reject_leftovers(ins, words)
    if m.space == L.SP_GENERIC:
        raise _err(ins, "cvta needs a state space (.global, .shared, .local, .const or .param)")
    _expect_operands(ins, 2)
    ty = _one_type(ins, m)
    row[L.F_OP] = c.OP_CVTA
    row[L.F_TY] = ty
    row[L.F_SPACE] = m.space
    row[L.F_AUX] = 1 if to_space else 0
    b.set_dsts(fl.dst(ins, ins.operands[0]))
    b.add_src(fl.src(ins, ins.operands[1], ty))
    row[L.F_ISA] = isa.isa_row(c.OP_CVTA, ty)


def _lower_control(fl, ins: ast.Instruction, b: _Row, m: _Mods, op: str, label_pc: dict) -> None:
    row = b.row
    if op == "call":
        raise _err(ins, "'call' of a .func is not supported: mark the device function __forceinline__ "
                   "(or compile with -O3 so nvcc inlines it)", unsupported=True)
    _reject_leftovers(ins, m.words)
    if op == "bra":
        _expect_operands(ins, 1)
        target = ins.operands[0]
        name = target.name if isinstance(target, ast.Symbol | ast.Reg) else None
        if name is None or name not in label_pc:
            raise _err(ins, f"branch target {name or target!r} is not a label of this function")
        row[L.F_OP] = c.OP_BRA
        row[L.F_TARGET] = label_pc[name]
        row[L.F_AUX] = 1 if ".uni" in ins.mods else 0
        row[L.F_ISA] = isa.isa_row(c.OP_BRA, c.T_NONE)
        return
    _expect_operands(ins, 0)
    row[L.F_OP] = {"ret": c.OP_EXIT, "exit": c.OP_EXIT, "trap": c.OP_TRAP}[op]
    row[L.F_ISA] = isa.isa_row(row[L.F_OP], c.T_NONE)


def _lower_sync(fl, ins: ast.Instruction, b: _Row, m: _Mods, op: str) -> None:
    row = b.row
    words = [w for w in m.words if w not in (".cta",)]
    if op in ("membar", "fence"):
        row[L.F_OP] = c.OP_MEMBAR
        row[L.F_ISA] = isa.isa_row(c.OP_MEMBAR, c.T_NONE)
        return
    if op == "nanosleep":
        _expect_operands(ins, 1)
        row[L.F_OP] = c.OP_NANOSLEEP
        b.add_src(fl.src(ins, ins.operands[0], c.T_U32))
        row[L.F_ISA] = isa.isa_row(c.OP_NANOSLEEP, c.T_NONE)
        return
    if ".warp" in words:          # bar.warp.sync membermask: lanes of a warp run in lockstep here
        row[L.F_OP] = c.OP_NOP
        row[L.F_ISA] = isa.isa_row(c.OP_NOP, c.T_NONE)
        if len(ins.operands) == 1:    # kept for reconvergence="its" (a barrier of the named lanes there)
            row[L.F_AUX] = L.NOP_WARPSYNC
            b.add_src(fl.src(ins, ins.operands[0], c.T_B32))
            b.n_src = 0               # not a source under IPDOM: a nop there, timed as before
            row[L.F_NSRC] = 0
        return
    kind = _take(words, {".sync": L.BAR_SYNC, ".arrive": L.BAR_ARRIVE, ".red": 0}, ins, "barrier kind")
    if kind == 0 and ".sync" in ins.mods:
        kind = L.BAR_SYNC
    if kind == 0 and ".red" in ins.mods:
        _lower_barrier_reduction(fl, ins, b, m, [w for w in words if w != ".aligned"])
        return
    if kind == 0:
        raise _err(ins, f"'{ins.opcode}' needs .sync, .arrive or .red")
    _reject_leftovers(ins, words)
    _expect_operands(ins, (1, 2))
    row[L.F_OP] = c.OP_BAR
    row[L.F_AUX] = kind
    for operand in ins.operands:
        b.add_src(fl.src(ins, operand, c.T_U32))
    ident = ins.operands[0]
    if isinstance(ident, ast.Imm) and not (isinstance(ident.value, int) and 0 <= ident.value <= 15):
        raise _err(ins, f"barrier id {ident.value} is out of range: PTX has barriers 0 to 15")
    if len(ins.operands) == 2:
        count = ins.operands[1]
        if isinstance(count, ast.Imm) and not (isinstance(count.value, int) and 0 < count.value <= 1 << 20
                                               and count.value % 32 == 0):
            raise _err(ins, f"barrier thread count {count.value} must be a positive multiple of 32 (the "
                       "warp size)")
    row[L.F_ISA] = isa.isa_row(c.OP_BAR, c.T_NONE)


def _lower_warp(fl, ins: ast.Instruction, b: _Row, m: _Mods, op: str) -> None:
    row = b.row
    words = m.words
    operands = ins.operands
    if op == "activemask":
        _expect_operands(ins, 1)
        row[L.F_OP] = c.OP_ACTIVEMASK
        row[L.F_TY] = c.T_B32
        b.set_dsts(fl.dst(ins, operands[0]))
        row[L.F_ISA] = isa.isa_row(c.OP_ACTIVEMASK, c.T_NONE)
        return
    if op == "shfl":
        row[L.F_AUX] = _take(words, L.SHFL_CODES, ins, "shuffle mode", required=True)
        _reject_leftovers(ins, words)
        ty = _one_type(ins, m)
        _expect_operands(ins, (4, 5))
        row[L.F_OP] = c.OP_SHFL
        row[L.F_TY] = ty
        b.set_dsts(fl.dst(ins, operands[0]))
        b.add_src(fl.src(ins, operands[1], ty))
        for operand in operands[2:]:
            b.add_src(fl.src(ins, operand, c.T_U32))
        if len(operands) == 4:
            b.add_src((L.SK_IMM, 0xFFFFFFFF))
    elif op == "vote":
        if ".uni" in ins.mods:    # _classify drops .uni (the bra.uni hint); here it is the vote mode
            words.append(".uni")
        row[L.F_AUX] = _take(words, L.VOTE_CODES, ins, "vote mode", required=True)
        _reject_leftovers(ins, words)
        ty = _one_type(ins, m)
        _expect_operands(ins, (2, 3))
        row[L.F_OP] = c.OP_VOTE
        row[L.F_TY] = ty
        b.set_dsts(fl.dst(ins, operands[0]))
        b.add_src(fl.src(ins, operands[1], c.T_PRED))
        b.add_src(fl.src(ins, operands[2], c.T_U32) if len(operands) == 3 else (L.SK_IMM, 0xFFFFFFFF))
    elif op == "match":
        row[L.F_AUX] = _take(words, {".any": 1, ".all": 2}, ins, "match mode", required=True)
        _reject_leftovers(ins, words)
        ty = _one_type(ins, m)
        _expect_operands(ins, 3)
        row[L.F_OP] = c.OP_MATCH
        row[L.F_TY] = ty
        b.set_dsts(fl.dst(ins, operands[0]))
        b.add_src(fl.src(ins, operands[1], ty))
        b.add_src(fl.src(ins, operands[2], c.T_U32))
    else:
        row[L.F_AUX] = _take(words, L.REDUX_CODES, ins, "reduction", required=True)
        _reject_leftovers(ins, words)
        ty = _one_type(ins, m)
        _expect_operands(ins, 3)
        row[L.F_OP] = c.OP_REDUX
        row[L.F_TY] = ty
        b.set_dsts(fl.dst(ins, operands[0]))
        b.add_src(fl.src(ins, operands[1], ty))
        b.add_src(fl.src(ins, operands[2], c.T_U32))
    row[L.F_ISA] = isa.isa_row(row[L.F_OP], c.T_NONE)


def _lower_barrier_reduction(fl, ins: ast.Instruction, b: _Row, m: _Mods, words: list) -> None:
    """bar.red.popc.u32 d, a{, b}, {!}c  /  bar.red.{and,or}.pred p, a{, b}, {!}c (conformance corpus).

    Sources: the barrier id, the thread count when given, the predicate last (barrier_reduce.py)."""
    row = b.row
    kind = _take(words, {".popc": L.BAR_RED_POPC, ".and": L.BAR_RED_AND, ".or": L.BAR_RED_OR}, ins,
                 "reduction", required=True)
    _reject_leftovers(ins, words)
    want = c.T_U32 if kind == L.BAR_RED_POPC else c.T_PRED
    if len(m.types) != 1 or m.types[0] != want:
        raise _err(ins, f"bar.red{'.popc' if kind == L.BAR_RED_POPC else ''} needs the type "
                   f"{'.u32' if want == c.T_U32 else '.pred'}")
    _expect_operands(ins, (3, 4))
    row[L.F_OP] = c.OP_BAR
    row[L.F_AUX] = kind
    row[L.F_TY] = want
    b.set_dsts(fl.dst(ins, ins.operands[0]))
    for operand in ins.operands[1:-1]:
        b.add_src(fl.src(ins, operand, c.T_U32))
    b.add_src(fl.src(ins, ins.operands[-1], c.T_PRED))
    ident = ins.operands[1]
    if isinstance(ident, ast.Imm) and not (isinstance(ident.value, int) and 0 <= ident.value <= 15):
        raise _err(ins, f"barrier id {ident.value} is out of range: PTX has barriers 0 to 15")
    row[L.F_ISA] = isa.isa_row(c.OP_BAR, c.T_NONE)
