"""The code generator's working form of a kernel: basic blocks of instructions that keep their PTX line.

A lowered :class:`~gpusim.ptx.lower.Program` is split into basic blocks (``gpusim.ptx.cfg``); each
instruction is its code row (a copy) with its PTX line, text, CUDA line and the pc it had in the
Program, and each branch names its target by the *block* it jumps to. Passes reorder, delete and
rewrite instructions inside blocks; :func:`encode` lays the blocks out again in their order, gives
every branch the new pc of its target block and recomputes the reconvergence pcs, so a pass never
handles pcs itself.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.ptx.cfg import basic_blocks, reconvergence_points

if TYPE_CHECKING:
    from gpusim.ptx.lower import Program


@dataclass
class Inst:
    row: np.ndarray              # the code row (int64, L.N_FIELDS); F_TARGET is rewritten by encode
    line: int
    text: str
    src_line: tuple | None
    origin: int                  # its pc in the Program as lowered (the PTX as written)
    target: object = None        # a branch: the Block it jumps to (None: the end of the kernel)
    companion: bool = False      # an issue slot of a multi-instruction SASS form (gpusim.codegen.expand)

    @property
    def op(self) -> int:
        return int(self.row[L.F_OP])


@dataclass
class Block:
    insts: list = field(default_factory=list)
    alias: object = None         # set when merged into the block before it


@dataclass
class Kernel:
    program: Program
    blocks: list
    notes: list = field(default_factory=list)     # what each pass did, for the report
    extra_regs: list = field(default_factory=list)  # names of registers the passes added (after the PTX's)


def decode(program) -> Kernel:
    code = program.code
    n = code.shape[0]
    starts, _ = basic_blocks(code)
    block_of_pc = {}
    for b, start in enumerate(starts):
        end = starts[b + 1] if b + 1 < len(starts) else n
        for pc in range(start, end):
            block_of_pc[pc] = b
    blocks = [Block() for _ in starts]
    for b, start in enumerate(starts):
        end = starts[b + 1] if b + 1 < len(starts) else n
        for pc in range(start, end):
            inst = Inst(code[pc].copy(), program.lines[pc], program.texts[pc], program.src_lines[pc], pc)
            if inst.op == c.OP_BRA:
                target = block_of_pc.get(int(code[pc, L.F_TARGET]))
                inst.target = blocks[target] if target is not None else None
            blocks[b].insts.append(inst)
    return Kernel(program, blocks)


def branch_targets(kernel) -> dict[int, int]:
    """id(Block) -> number of branches that jump to it."""
    out: dict[int, int] = {}
    for block in kernel.blocks:
        for inst in block.insts:
            if inst.op == c.OP_BRA and inst.target is not None:
                out[id(inst.target)] = out.get(id(inst.target), 0) + 1
    return out


def ends_in_transfer(block) -> bool:
    return bool(block.insts) and block.insts[-1].op in (c.OP_BRA, c.OP_EXIT, c.OP_RET, c.OP_TRAP)


def merge_straight_line(kernel) -> None:
    """Join each block with the next one when control only falls through from it to the next (no
    branch ends it and none jumps to the next): one longer block for the scheduler."""
    targets = branch_targets(kernel)
    merged = [kernel.blocks[0]] if kernel.blocks else []
    for block in kernel.blocks[1:]:
        last = merged[-1]
        if not ends_in_transfer(last) and id(block) not in targets:
            last.insts.extend(block.insts)
            block.insts = []
            block.alias = last
        else:
            merged.append(block)
    for blk in merged:
        for inst in blk.insts:
            while inst.op == c.OP_BRA and inst.target is not None and getattr(inst.target, "alias", None):
                inst.target = inst.target.alias
    kernel.blocks = merged


def encode(kernel: Kernel, mode: str):
    """The Program of ``kernel``'s blocks in order (a new Program; the input is not changed)."""
    block_pc = {}
    pc = 0
    for block in kernel.blocks:
        block_pc[id(block)] = pc
        pc += len(block.insts)
    n = pc
    insts = [inst for block in kernel.blocks for inst in block.insts]
    code = np.array([inst.row for inst in insts], dtype=np.int64).reshape(n, L.N_FIELDS)
    for i, inst in enumerate(insts):
        if inst.op == c.OP_BRA:
            code[i, L.F_TARGET] = n if inst.target is None else block_pc[id(inst.target)]
    code[:, L.F_RECONV] = reconvergence_points(code)
    return dataclasses.replace(
        kernel.program, code=code, lines=[i.line for i in insts], texts=[i.text for i in insts],
        src_lines=[i.src_line for i in insts], codegen=mode, origin=[i.origin for i in insts],
        n_regs=kernel.program.n_regs + len(kernel.extra_regs), reg_names=kernel.program.reg_names + kernel.extra_regs,
        codegen_notes=list(kernel.notes))
