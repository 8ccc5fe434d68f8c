"""Lowering of the thread-block cluster instructions: ``mapa``, ``getctarank`` and ``barrier.cluster.arrive`` /
``.wait`` (what the engine does: ``gpusim.engine.semantics.cluster_ops``; docs/kernels.md, "Clusters").

* ``mapa{.shared::cluster}.u32|.u64 d, a, rank``: the shared::cluster form maps a shared address to CTA
  ``rank``'s copy; without a state space ``a`` and ``d`` are generic addresses.
* ``getctarank{.shared::cluster}.u32|.u64 d, a``: the rank of the CTA whose shared memory ``a`` names (an
  OP_MAPA row with F_AUX = MAPA_GETCTARANK); without a state space ``a`` is a generic address.
* ``barrier.cluster.arrive{.release|.relaxed}{.aligned}`` and ``barrier.cluster.wait{.acquire}{.aligned}``: the
  thread's arrivals are counted in a hidden register (one per kernel, ``HIDDEN_REG``), named in F_SIZE.

Both need sm_90 or later. Shared-memory accesses to another CTA (``ld/st/atom/red.shared::cluster``,
``mbarrier.arrive...shared::cluster``) lower as shared accesses; the engine tells the windows apart by address.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L
from gpusim.ptx import ast
from gpusim.ptx.lower_common import _err, _expect_operands, _Row
from gpusim.ptx.lower_hopper import _require_sm

CLUSTER_OPCODES = ("mapa", "getctarank")
HIDDEN_REG = "%__gpusim_cluster_arrivals"
_ARRIVE_MODS = {".release", ".relaxed", ".aligned"}
_WAIT_MODS = {".acquire", ".aligned"}


def is_cluster_barrier(ins: ast.Instruction) -> bool:
    return ins.opcode == "barrier" and bool(ins.mods) and ins.mods[0] == ".cluster"


def lower_cluster(fl, ins: ast.Instruction, b: _Row) -> None:
    """Lower one ``mapa`` or ``barrier.cluster`` instruction into ``b``."""
    row = b.row
    mods = list(ins.mods)
    if ins.opcode in ("mapa", "getctarank"):
        rank_of = ins.opcode == "getctarank"
        _require_sm(fl, ins, 90, ins.opcode)
        space = L.SP_GENERIC
        if mods and mods[0] == ".shared::cluster":
            space = L.SP_SHARED
            mods.pop(0)
        if mods not in ([".u32"], [".u64"]):
            raise _err(ins, f"'{ins.opcode}{''.join(ins.mods)}': the forms are {ins.opcode}{{.shared::cluster}}"
                       f".u32|.u64 d, a{'' if rank_of else ', rank'}", unsupported=True)
        _expect_operands(ins, 2 if rank_of else 3)
        ty = c.T_U32 if mods == [".u32"] else c.T_U64
        b.set_dsts(fl.dst(ins, ins.operands[0]))
        b.add_src(fl.src(ins, ins.operands[1], ty))
        if not rank_of:
            b.add_src(fl.src(ins, ins.operands[2], c.T_U32))
        row[L.F_AUX] = L.MAPA_GETCTARANK if rank_of else 0
        row[L.F_OP] = c.OP_MAPA
        row[L.F_TY] = ty
        row[L.F_SPACE] = space
        row[L.F_SIZE] = 4 if ty == c.T_U32 else 8
        row[L.F_ISA] = isa.isa_row(c.OP_MAPA, c.T_NONE, "mapa")
        return
    _require_sm(fl, ins, 90, "barrier.cluster")
    if len(mods) < 2 or mods[1] not in (".arrive", ".wait") or not set(mods[2:]) <= (
            _ARRIVE_MODS if mods[1] == ".arrive" else _WAIT_MODS):
        raise _err(ins, f"'barrier{''.join(ins.mods)}': the forms are barrier.cluster.arrive{{.release|.relaxed}}"
                   "{.aligned} and barrier.cluster.wait{.acquire}{.aligned}", unsupported=True)
    _expect_operands(ins, 0)
    row[L.F_OP] = c.OP_BARRIER_CLUSTER
    row[L.F_AUX] = L.CLUSTER_BAR_ARRIVE if mods[1] == ".arrive" else L.CLUSTER_BAR_WAIT
    row[L.F_SIZE] = fl._reg(HIDDEN_REG)
    row[L.F_ISA] = isa.isa_row(c.OP_BARRIER_CLUSTER, c.T_NONE, "barrier.cluster")
