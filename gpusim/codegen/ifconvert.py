"""If-conversion of short forward branches.

What ptxas does: a conditional branch around a few instructions (``if (tid < s) { a = ...; st }``)
becomes those instructions guarded by the branch's predicate, with no branch: in its SASS for
``programs/reduce_shared`` the tree step's two LDS, FADD and STS are ``@!P1`` instructions inside the
loop. The warp then issues them whether or not any lane needs them, and there is no taken branch and no
divergence to reconverge.

What is modelled: ``@p bra L`` (or ``@!p``) whose fall-through block has no other predecessor, holds at
most :data:`MAX_INSTRUCTIONS` instructions, ends by falling through into ``L``, has no instruction
already guarded, none that is a control transfer, barrier, fence or warp-synchronous operation, and none
that writes ``p``: the branch is removed and each of those instructions is guarded by the opposite of
the branch's condition. Threshold: ptxas's SASS of the shipped programs converts bodies of up to 6 PTX
instructions (reduce_shared's) and keeps a branch around longer ones; 8 is used here. A bounds-checked
load (``if (i < n) x = in[i]``: ``cvta.to.global``, ``mul.wide``, ``add``, ``ld.global``) is converted too:
``@!P0 LDC.64``, ``@!P0 IMAD.WIDE.U32``, ``@!P0 LDG.E`` in the same listing and in
tests/corpus/reduction.ptx's ``reduce1`` and ``reduce5``. A body whose join is the kernel's return keeps
its branch: ptxas exits the threads that skip it (reduce_shared's ``if (tid == 0) out[...] = ...``:
``@P0 EXIT`` and an unguarded STG).
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.codegen import deps
from gpusim.codegen.ir import branch_targets, ends_in_transfer

MAX_INSTRUCTIONS = 8
_PREDICABLE_SPECIAL = (c.OP_LD, c.OP_ST, c.OP_ATOM, c.OP_RED, c.OP_CVTA)
"""Besides ALU operations: memory operations and ``cvta`` (``cvta.to.global`` is no SASS instruction at all:
the address is already global; ``gpusim.codegen.fold`` removes it)."""


def _predicable(inst, pred: int) -> bool:
    row = inst.row
    op = inst.op
    if row[L.F_GUARD] >= 0 or pred in deps.writes(row):
        return False
    return c.OP_MOV <= op <= c.OP_LAST_ALU or op in _PREDICABLE_SPECIAL


def if_convert(kernel) -> int:
    """Convert in place; returns the number of branches removed."""
    converted = 0
    targets = branch_targets(kernel)
    blocks = kernel.blocks
    for b in range(len(blocks) - 2):
        head, body, join = blocks[b], blocks[b + 1], blocks[b + 2]
        if not head.insts or head.insts[-1].op != c.OP_BRA:
            continue
        branch = head.insts[-1].row
        if branch[L.F_GUARD] < 0 or head.insts[-1].target is not join:
            continue
        if targets.get(id(body), 0) or ends_in_transfer(body) or not 0 < len(body.insts) <= MAX_INSTRUCTIONS:
            continue
        if join.insts and all(inst.op in (c.OP_RET, c.OP_EXIT) for inst in join.insts):
            continue       # ptxas exits the threads that skip the body instead (@P0 EXIT)
        pred = int(branch[L.F_GUARD])
        if not all(_predicable(inst, pred) for inst in body.insts):
            continue
        for inst in body.insts:
            inst.row[L.F_GUARD] = pred
            inst.row[L.F_GUARD_NEG] = 0 if branch[L.F_GUARD_NEG] else 1
        head.insts.pop()
        targets[id(join)] -= 1
        converted += 1
    return converted
