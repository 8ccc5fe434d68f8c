"""Latencies as ptxas's own schedule shows them.

What ptxas does: it has no scoreboard for fixed-latency results, so it writes into each instruction's
control bits how many cycles the warp must wait before its next instruction (Jia et al. 2018). Read from
the committed listings (``gpusim.codegen.sass``), a dependent FP32, INT32 or IMAD reader is never closer
than 4 cycles to its producer (the configs' ``*_latency_cycles``, checked by tests/test_codegen.py), but a
predicate written by ISETP is read by a guard or a branch 13 cycles later at the earliest, on sm_80, sm_89
and sm_90 alike: more than the integer result latency plus a branch.

What is modelled: an integer, FP32 or FP16 ``setp`` whose predicate some instruction reads as its guard (or
a branch as its condition) takes the ``setp.pred`` form of the opcode table, whose result latency is the
config's ``predicate_latency_cycles``. FP64 comparisons keep their FP64-pipe form.

Branches: every guarded BRA in the listings has a stall count of 5 on sm_80, sm_89 and sm_90 (every loop
back-edge on sm_80/sm_89, 12 of 13 on sm_90; most forward ones), more than the configs' estimated
``branch_latency_cycles`` (4). A back-edge is the branch that is taken on every trip but the last, so every
``bra`` takes the ``bra.ptxas`` form, whose latency, ``taken_branch_cycles``, the engine charges when the
branch is taken (the warp's next instruction is not the one after it); one not taken still waits
``branch_latency_cycles`` (a listing cannot say which way a forward branch went).
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L

SETP_PRED = isa.isa_row(c.OP_SETP, c.T_NONE, "setp.pred")
BRA = isa.isa_row(c.OP_BRA, c.T_NONE, "bra")
BRA_PTXAS = isa.isa_row(c.OP_BRA, c.T_NONE, "bra.ptxas")


def predicate_latencies(kernel) -> int:
    """Retime in place; returns the number of setp instructions given the predicate latency."""
    guards = {int(inst.row[L.F_GUARD]) for block in kernel.blocks for inst in block.insts
              if inst.row[L.F_GUARD] >= 0}
    changed = 0
    for block in kernel.blocks:
        for inst in block.insts:
            row = inst.row
            if inst.op != c.OP_SETP or isa.FORMS[int(row[L.F_ISA])].pipe != isa.PIPE_ALU:
                continue
            if any(int(row[L.F_DST0 + i]) in guards for i in range(int(row[L.F_NDST]))):
                row[L.F_ISA] = SETP_PRED
                changed += 1
    return changed


def branch_latencies(kernel) -> int:
    """Give every ``bra`` the ``bra.ptxas`` form (a taken one waits taken_branch_cycles); returns how many."""
    changed = 0
    for block in kernel.blocks:
        for inst in block.insts:
            if inst.op == c.OP_BRA and int(inst.row[L.F_ISA]) == BRA:
                inst.row[L.F_ISA] = BRA_PTXAS
                changed += 1
    return changed
