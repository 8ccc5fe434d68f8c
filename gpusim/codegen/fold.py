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
from gpusim.arch import isa
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
    removed = _fold_once(kernel)
    while _evaluate_constants(kernel):
        removed += _fold_once(kernel)
    return removed


_EVALUATED = (c.OP_ADD, c.OP_SUB, c.OP_MUL, c.OP_MAD, c.OP_SHL, c.OP_SHR, c.OP_AND, c.OP_OR, c.OP_XOR)


def _value(op: int, srcs: list[int], bits: int, signed: bool) -> int | None:
    """``op`` on immediate operands in a ``bits``-wide integer type (multiplies: the low half), or None."""
    mask = (1 << bits) - 1
    a = [v & mask for v in srcs]
    if op == c.OP_ADD:
        return a[0] + a[1]
    if op == c.OP_SUB:
        return a[0] - a[1]
    if op == c.OP_MUL:
        return a[0] * a[1]
    if op == c.OP_MAD:
        return a[0] * a[1] + a[2]
    if op == c.OP_AND:
        return a[0] & a[1]
    if op == c.OP_OR:
        return a[0] | a[1]
    if op == c.OP_XOR:
        return a[0] ^ a[1]
    if op in (c.OP_SHL, c.OP_SHR) and 0 <= a[1] < bits:
        if op == c.OP_SHL:
            return a[0] << a[1]
        value = a[0] - (1 << bits) if signed and a[0] >> (bits - 1) else a[0]
        return value >> a[1]
    return None


def _evaluate_constants(kernel) -> int:
    """Integer arithmetic on immediates only, as ptxas evaluates it at compile time (the unrolled copies' ``k *
    133`` with ``k`` a constant): an unguarded ``add``/``sub``/``mul.lo``/``mad.lo``/shift/logic instruction
    whose operands are all immediates becomes ``mov`` of its value, and ``mad.lo d, imm, imm, r`` becomes ``add
    d, r, imm * imm``. Returns the number of instructions rewritten."""
    changed = 0
    for inst in _all_insts(kernel):
        row = inst.row
        op = int(row[L.F_OP])
        ty = int(row[L.F_TY])
        if op not in _EVALUATED or row[L.F_GUARD] >= 0 or row[L.F_NDST] != 1 or row[L.F_VEC] != 1 or \
                c.TYPE_FLOAT[ty] or ty == c.T_PRED or int(row[L.F_MODS]) & c.MOD_SAT or \
                op in (c.OP_MUL, c.OP_MAD) and c.mods_mul(int(row[L.F_MODS])) != c.MUL_LO:
            continue
        srcs = deps.sources(row)
        bits = 8 * c.TYPE_BYTES[ty]
        if all(kind == L.SK_IMM for kind, _ in srcs):
            value = _value(op, [v for _, v in srcs], bits, bool(c.TYPE_SIGNED[ty]))
            if value is None:
                continue
            row[L.F_OP] = c.OP_MOV
            row[L.F_NSRC] = 1
            row[L.F_MODS] = 0
            row[L.F_SK0], row[L.F_SK0 + 1] = L.SK_IMM, immediate_field(value, bits)
        elif op == c.OP_MAD and len(srcs) == 3 and srcs[0][0] == srcs[1][0] == L.SK_IMM and srcs[2][0] == L.SK_REG:
            row[L.F_OP] = c.OP_ADD
            row[L.F_NSRC] = 2
            row[L.F_MODS] = 0
            row[L.F_SK0], row[L.F_SK0 + 1] = L.SK_REG, srcs[2][1]
            row[L.F_SK0 + 2], row[L.F_SK0 + 3] = L.SK_IMM, immediate_field(srcs[0][1] * srcs[1][1], bits)
        else:
            continue
        row[L.F_ISA] = isa.isa_row(int(row[L.F_OP]), ty)
        changed += 1
    return changed


def immediate_field(value: int, bits: int) -> int:
    """``value`` as the immediate field of a ``bits``-wide type: its low ``bits`` bits, stored as a signed
    64-bit field (the code rows' int64 columns)."""
    value &= (1 << bits) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def _fold_once(kernel) -> int:
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


def immediate_slots(row, reg: int, width: int) -> tuple[list[int], bool]:
    """The source slots of ``row`` where an immediate of ``width`` bytes can replace a read of ``reg`` (an
    ALU, shuffle or vote operand of that width), and whether ``row`` reads ``reg`` anywhere else too."""
    op = int(row[L.F_OP])
    alu = c.OP_MOV <= op <= c.OP_LAST_ALU
    if not (alu or op in _WARP_32) or row[L.F_GUARD] == reg or row[L.F_VEC] != 1 or \
            (deps.is_load(row) or deps.is_store(row)):
        return [], reg in deps.reads(row)
    slots, other = [], False
    for i in range(int(row[L.F_NSRC])):
        kind = int(row[L.F_SK0 + 2 * i])
        if int(row[L.F_SK0 + 2 * i + 1]) != reg:
            continue
        src_type = _source_type(op, i, int(row[L.F_TY]), int(row[L.F_TY2])) if alu else c.T_B32
        if kind == L.SK_REG and c.TYPE_BYTES[src_type] == width and src_type != c.T_PRED:
            slots.append(i)
        elif kind in (L.SK_REG, L.SK_REGNEG):
            other = True
    return slots, other


def _substitute_immediate(kernel, reg: int, value: int, width: int) -> bool:
    """Replace reads of ``reg`` by the immediate where an ALU operand of that width reads it; True when no
    read of ``reg`` is left."""
    left = False
    for inst in _all_insts(kernel):
        row = inst.row
        if reg not in deps.reads(row):
            continue
        slots, other = immediate_slots(row, reg, width)
        for i in slots:
            row[L.F_SK0 + 2 * i] = L.SK_IMM
            row[L.F_SK0 + 2 * i + 1] = value
        left = left or other
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
