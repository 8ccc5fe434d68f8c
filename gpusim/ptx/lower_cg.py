"""The special registers nvcc's cooperative groups read: reserved shared memory and the grid barrier.

* ``%reserved_smem_offset_0/_1/_begin/_end/_cap``: a thread-block tile larger than a warp
  (``tiled_partition<64>``...) keeps its barrier word in shared memory the driver reserves for each block
  (``shared_reserved_bytes_per_block`` of the config, 1 KiB on cc 8.0+, already counted by the occupancy
  rules). gpusim places ``RESERVED_SMEM_BYTES`` of it in the block's shared memory when a kernel reads one
  of these registers; ``_0`` and ``_1`` are its two 8-byte slots, ``_begin``/``_end``/``_cap`` its bounds and
  size. The kernel's own shared variables keep their offsets relative to one another; the region is not
  counted again by the occupancy (``Program.reserved_shared_bytes``).
* ``%envreg1`` (high half) and ``%envreg2`` (low half): the address of the grid barrier of
  ``this_grid().sync()`` that the driver passes to a cooperative launch (the code does ``atom.add.release.gpu``
  on ``[address + 4]`` and spins with ``ld.acquire.gpu``). gpusim allocates one 8-byte barrier per kernel at
  load time; ``gpusim.launch.cooperative`` zeroes it before each cooperative launch and refuses a launch
  of such a kernel without ``cooperative=True``. Other ``%envreg`` registers are driver-defined and refused.

Simplification: the reserved region's layout inside the driver's 1 KiB is not NVIDIA's (which is not
documented); only what the code reads through these registers is modelled.
"""

from __future__ import annotations

import re

from gpusim.arch import layout as L
from gpusim.ptx import ast
from gpusim.ptx.lower_common import _err, leaf_operands

RESERVED_SMEM_BYTES = 16
"""Bytes of the reserved region gpusim models: two 8-byte slots (``%reserved_smem_offset_0`` and ``_1``)."""
RESERVED_SMEM_SYMBOL = "%reserved_smem"
GRID_BARRIER_SYMBOL = "%envreg_grid_barrier"
GRID_BARRIER_BYTES = 8
_RESERVED_OFFSETS = {"%reserved_smem_offset_0": 0, "%reserved_smem_offset_1": 8,
                     "%reserved_smem_offset_begin": 0, "%reserved_smem_offset_end": RESERVED_SMEM_BYTES}
_ENVREG = re.compile(r"^%envreg(\d+)$")


def uses_reserved_smem(func: ast.Function) -> bool:
    return any(isinstance(operand, ast.SpecialReg) and operand.name.startswith("%reserved_smem_offset")
               for _, operand in leaf_operands(func))


def grid_sync_line(func: ast.Function) -> int | None:
    """The PTX line of the first ``%envreg1``/``%envreg2`` read (the grid barrier), or None."""
    for ins, operand in leaf_operands(func):
        if isinstance(operand, ast.SpecialReg) and operand.name in ("%envreg1", "%envreg2"):
            return ins.loc.line
    return None


def reserved_smem_var(func: ast.Function) -> ast.VarDecl:
    return ast.VarDecl(space="shared", name=RESERVED_SMEM_SYMBOL, type="b8", count=RESERVED_SMEM_BYTES,
                       align=8, loc=func.loc)


def special_source(symbols: dict, ins: ast.Instruction, operand: ast.SpecialReg) -> tuple[int, int] | None:
    """The (kind, value) source of a cooperative-groups special register, or None when it is not one."""
    name = operand.name
    if name.startswith("%reserved_smem_offset"):
        if name == "%reserved_smem_offset_cap":
            return L.SK_IMM, RESERVED_SMEM_BYTES
        if name not in _RESERVED_OFFSETS or RESERVED_SMEM_SYMBOL not in symbols:
            raise _err(ins, f"special register '{name}' is not supported; the reserved shared memory "
                       "registers are %reserved_smem_offset_0/_1/_begin/_end/_cap", unsupported=True)
        return L.SK_IMM, symbols[RESERVED_SMEM_SYMBOL][1] + _RESERVED_OFFSETS[name]
    match = _ENVREG.match(name)
    if match is None:
        return None
    if name not in ("%envreg1", "%envreg2") or GRID_BARRIER_SYMBOL not in symbols:
        raise _err(ins, f"special register '{name}' (driver-defined) is not supported; gpusim models "
                   "%envreg1/%envreg2, the grid barrier of cooperative groups' this_grid().sync()",
                   unsupported=True)
    address = symbols[GRID_BARRIER_SYMBOL][1]
    return L.SK_IMM, (address >> 32) if name == "%envreg1" else (address & 0xFFFFFFFF)
