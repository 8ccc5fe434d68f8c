"""Expansions: PTX instructions that are several SASS instructions, priced as SASS prices them.

What ptxas does: the SASS datapath is 32 bits wide, so 64-bit integer arithmetic is a pair (``add.s64``:
IADD3 + IADD3.X; ``shl.b64``/``shr.b64``: two SHF; ``xor.b64``: two LOP3; ``setp`` on 64-bit integers:
ISETP + ISETP.EX; a 64-bit LEA: LEA + LEA.HI.X), a 64-bit multiply is three IMADs (IMAD.WIDE.U32 and
two IMADs for the cross terms), and a 32-bit integer division or remainder is a ~17-instruction
sequence (a reciprocal estimate, Newton step, multiply-high and corrections). IMAD.WIDE (32 x 32 + 64)
is one instruction. Conversions ``cvt.rn.f32.s32`` are one I2FP on sm_86+ (the opcode table's ``cvt.i2f32``
form issues to the config's ``int_to_fp32_pipe``: the ALU on the GH100 configs; its latency stays the
conversion latency).

What is modelled: before such an instruction, ``n - 1`` *companion* rows are inserted (``OP_NOP`` with
the instruction's own opcode-table row, sources and guard, no destination): each takes an issue slot
and a turn of the same pipe and waits for the same operands, and changes nothing; the instruction
itself still computes the whole result with its own latency. Floating-point forms are not expanded
(a companion would count FLOPs).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L

DIV_REM_32 = 17
"""SASS instructions of a 32-bit integer div or rem (sm_90 listings)."""


def sass_cost(row) -> int:
    """SASS instructions this code row stands for."""
    op = int(row[L.F_OP])
    ty = int(row[L.F_TY])
    if c.TYPE_FLOAT[ty] or ty in (c.T_PRED, c.T_NONE):
        return 1
    wide = c.TYPE_BYTES[ty] == 8
    width = (int(row[L.F_MODS]) >> c.MOD_MUL_SHIFT) & c.MOD_MUL_MASK
    if op in (c.OP_DIV, c.OP_REM) and c.TYPE_BYTES[ty] == 4:
        return DIV_REM_32
    if not wide:
        return 1
    if op in (c.OP_ADD, c.OP_SUB, c.OP_SHL, c.OP_SHR, c.OP_AND, c.OP_OR, c.OP_XOR, c.OP_NOT, c.OP_SETP,
              c.OP_MIN, c.OP_MAX, c.OP_NEG, c.OP_ABS):
        return 2
    if op in (c.OP_MUL, c.OP_MAD) and width != c.MUL_WIDE:
        b = int(row[L.F_SK0 + 2]), int(row[L.F_SK0 + 3])
        if b[0] == L.SK_IMM and b[1] > 0 and b[1] & (b[1] - 1) == 0:
            return 2          # by a power of two: LEA + LEA.HI.X (or two SHF)
        return 3
    return 1


def expand_kernel(kernel) -> int:
    """Insert companion rows in place; returns how many."""
    added = 0
    for block in kernel.blocks:
        out = []
        for inst in block.insts:
            cost = sass_cost(inst.row)
            for _ in range(cost - 1):
                out.append(_companion(inst, inst.row.copy()))
                added += 1
            out.append(inst)
        block.insts = out
    return added


def _companion(inst, row):
    row[L.F_OP] = c.OP_NOP
    row[L.F_NDST] = 0
    for i in range(4):
        row[L.F_DST0 + i] = -1
    return dataclasses.replace(inst, row=row, target=None, companion=True)


def add_prologue(kernel) -> int:
    """The SASS every kernel starts with and PTX does not show: ``LDC R1, c[0x0][0x28]`` (the stack
    pointer) and, in a kernel that reads or writes global memory, ``ULDC.64 UR4, c[0x0][0x208]`` (the
    global memory descriptor its LDG/STG name as ``desc[UR4]``). Both are companions on the integer
    pipe at the kernel's entry, attributed to its first instruction; returns how many."""
    if not kernel.blocks or not kernel.blocks[0].insts:
        return 0
    first = kernel.blocks[0].insts[0]
    global_access = any(int(i.row[L.F_OP]) in (c.OP_LD, c.OP_ST, c.OP_ATOM, c.OP_RED) and
                        int(i.row[L.F_SPACE]) in (L.SP_GLOBAL, L.SP_GENERIC)
                        for block in kernel.blocks for i in block.insts)
    made = []
    for _ in range(2 if global_access else 1):
        row = np.zeros_like(first.row)
        row[L.F_GUARD] = -1
        row[L.F_ABASE] = -1
        row[L.F_VEC] = 1
        row[L.F_LINE] = first.row[L.F_LINE]
        row[L.F_SRCLINE] = first.row[L.F_SRCLINE]
        row[L.F_ISA] = isa.isa_row(c.OP_MOV, c.T_U32)
        made.append(dataclasses.replace(_companion(first, row), text="(SASS prologue: constant-bank load)"))
    kernel.blocks[0].insts[:0] = made
    return len(made)
