"""Constant, immediate and address-space folding.

What ptxas does: SASS instructions take an immediate or a constant-bank operand (``c[0x0][0x210]``:
the kernel parameters live in constant bank 0) in one source slot, so nvcc's ``mov.f32 %f1,
0f3F800000`` feeding an ``fma`` is no instruction of its own; ``cvta.to.global`` is the identity
on a unified address space and disappears; ``ld.param`` becomes an LDC/ULDC (still one instruction
on sm_90, or none when the value is used once as a constant-bank operand).

What is modelled:

* ``mov`` of an immediate whose destination is written only there: the immediate replaces every
  read of the register by an ALU instruction whose operand has the same width (and by a shuffle's or
  vote's 32-bit operands: SHFL.DOWN takes its offset, clamp and mask as immediates), and the ``mov`` is
  removed when no other read is left;
* a register copy ``mov d, s`` (also a bit reinterpretation such as ``mov.b32 %r, %f``: one register
  in SASS) whose destination is written once and read only later in its block, ``s`` unchanged until
  the last read: the readers read ``s``;
* ``cvta.to.global`` (unguarded, destination and source each written once): its readers read the
  source register instead and the instruction is removed;
* ``ld.param`` is kept (one LDC/ULDC in ptxas's SASS for sm_90, as the committed listings show).

Functional results do not change: the immediate has the bits the register would have held, and a
global address is its own generic address in gpusim (``gpusim.arch.layout``).
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.codegen import deps
from gpusim.ptx.lower import _source_type


def definitions(kernel) -> dict[int, int]:
    """Register -> number of instructions that write it (in the whole kernel)."""
    count: dict[int, int] = {}
    for block in kernel.blocks:
        for inst in block.insts:
            for r in deps.writes(inst.row):
                count[r] = count.get(r, 0) + 1
    return count


def _all_insts(kernel):
    for block in kernel.blocks:
        yield from block.insts


def fold_kernel(kernel) -> int:
    """Fold immediates and cvta.to.global in place; returns the number of instructions removed."""
    defs = definitions(kernel)
    dead: set[int] = set()
    for inst in list(_all_insts(kernel)):
        row = inst.row
        cvta = int(row[L.F_OP]) == c.OP_CVTA
        if (row[L.F_GUARD] >= 0 and not cvta) or row[L.F_NDST] != 1 or row[L.F_NSRC] != 1 or row[L.F_VEC] != 1:
            continue
        d = int(row[L.F_DST0])
        if d < 0 or defs.get(d) != 1:
            continue
        kind, value = int(row[L.F_SK0]), int(row[L.F_SK0 + 1])
        if int(row[L.F_OP]) == c.OP_MOV and kind == L.SK_IMM:
            if _substitute_immediate(kernel, d, value, c.TYPE_BYTES[int(row[L.F_TY])]):
                dead.add(id(inst))
        elif int(row[L.F_OP]) == c.OP_MOV and kind == L.SK_REG and int(row[L.F_TY]) != c.T_PRED and \
                _copy_is_free(kernel, inst, d, value):
            _rename_reads(kernel, d, value)
            dead.add(id(inst))
        elif (int(row[L.F_OP]) == c.OP_CVTA and row[L.F_AUX] == 1 and row[L.F_SPACE] == L.SP_GLOBAL
              and kind == L.SK_REG and defs.get(value) == 1 and c.TYPE_BYTES[int(row[L.F_TY])] == 8):
            _rename_reads(kernel, d, value)
            dead.add(id(inst))
    for block in kernel.blocks:
        block.insts = [i for i in block.insts if id(i) not in dead]
    return len(dead)


def _copy_is_free(kernel, inst, d: int, s: int) -> bool:
    """``mov d, s`` (a copy or a bit reinterpretation, e.g. ``mov.b32 %r, %f``) is SASS's same register when
    every read of ``d`` is later in the same block and ``s`` is not written from the copy to the last one."""
    for block in kernel.blocks:
        if any(i is inst for i in block.insts):
            break
    else:
        return False
    at = next(k for k, i in enumerate(block.insts) if i is inst)
    reads_after = [k for k, i in enumerate(block.insts) if k > at and d in deps.reads(i.row)]
    total = sum(d in deps.reads(i.row) for b in kernel.blocks for i in b.insts)
    if not reads_after or len(reads_after) != total:
        return False
    return not any(s in deps.writes(block.insts[k].row) for k in range(at + 1, max(reads_after)))


_WARP_32 = (c.OP_SHFL, c.OP_VOTE)   # every source 32 bits wide (value, lane/offset, clamp, member mask)


def _substitute_immediate(kernel, reg: int, value: int, width: int) -> bool:
    """Replace reads of ``reg`` by the immediate where an ALU operand of that width reads it; True when no
    read of ``reg`` is left."""
    left = False
    for inst in _all_insts(kernel):
        row = inst.row
        if reg not in deps.reads(row):
            continue
        op = int(row[L.F_OP])
        alu = c.OP_MOV <= op <= c.OP_LAST_ALU
        if not (alu or op in _WARP_32) or row[L.F_GUARD] == reg or row[L.F_VEC] != 1 or \
                (deps.is_load(row) or deps.is_store(row)):
            left = True
            continue
        for i in range(int(row[L.F_NSRC])):
            kind = int(row[L.F_SK0 + 2 * i])
            if int(row[L.F_SK0 + 2 * i + 1]) != reg:
                continue
            src_type = _source_type(op, i, int(row[L.F_TY]), int(row[L.F_TY2])) if alu else c.T_B32
            if kind == L.SK_REG and c.TYPE_BYTES[src_type] == width and src_type != c.T_PRED:
                row[L.F_SK0 + 2 * i] = L.SK_IMM
                row[L.F_SK0 + 2 * i + 1] = value
            elif kind in (L.SK_REG, L.SK_REGNEG):
                left = True
    return not left


def _rename_reads(kernel, old: int, new: int) -> None:
    for inst in _all_insts(kernel):
        row = inst.row
        for i in range(int(row[L.F_NSRC])):
            if int(row[L.F_SK0 + 2 * i]) in (L.SK_REG, L.SK_REGNEG) and int(row[L.F_SK0 + 2 * i + 1]) == old:
                row[L.F_SK0 + 2 * i + 1] = new
        if row[L.F_ABASE] == old and int(row[L.F_OP]) in (c.OP_LD, c.OP_ST, c.OP_ATOM, c.OP_RED,
                                                           c.OP_PREFETCH):
            row[L.F_ABASE] = new
        if row[L.F_GUARD] == old:
            row[L.F_GUARD] = new
