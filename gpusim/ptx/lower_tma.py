"""Lowering of TMA tensor copies (Hopper): ``cp.async.bulk.tensor.Nd`` global->shared (completing bytes on an
mbarrier) and shared->global (a bulk group), ``cp.reduce.async.bulk.tensor.Nd`` (.add .min .max .inc .dec .and
.or .xor into global memory) and ``cp.async.bulk.prefetch.tensor.Nd.L2``, each in the ``.tile`` load mode, with
an optional ``.L2::cache_hint`` operand (accepted, no effect).

One code row each (OP_BULK_TENSOR; columns in ``gpusim.arch.layout``: ``TMA_*``); the tensor operand
``[tmap, {c0, ...}]`` is the map's address (a generic address of a kernel parameter, as nvcc's ``mov.b64 %rd,
param; cvta.param.u64`` makes it, a parameter symbol, or a global address) then the coordinates. The engine's
part is ``gpusim.engine.semantics.tma``, the timing ``gpusim.engine.sm.tma_timing``, docs/tensor-cores.md
("TMA"). Not modelled, refused with ``UnsupportedPTXError`` naming the line: ``.im2col`` (and ``.im2col::w``,
``.tile::gather4``, ``.tile::scatter4``) and ``.cta_group``. A load's ``.multicast::cluster`` takes a 16-bit
ctaMask after the mbarrier: the box lands in every CTA of the cluster the mask names.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L
from gpusim.ptx import ast
from gpusim.ptx.lower_common import _err, _Row
from gpusim.ptx.lower_hopper import REDUCE_OPS, _require_sm

_DIMS = {f".{n}d": n for n in range(1, 6)}
_LOAD = {".shared::cluster", ".global", ".mbarrier::complete_tx::bytes"}
_STORE = {".global", ".shared::cta", ".bulk_group"}
_PREFETCH = {".L2", ".global"}
MAX_COORDINATE_IMM = 1 << 31


def _refuse_unmodelled(ins: ast.Instruction, words: list[str]) -> None:
    name = f"'{ins.opcode}{''.join(ins.mods)}'"
    for word in words:
        if word.startswith(".im2col") or word.startswith(".tile::"):
            raise _err(ins, f"{name}: the {word} load mode is not modelled by gpusim (only .tile)", unsupported=True)
        if word.startswith(".cta_group"):
            raise _err(ins, f"{name}: {word} is not modelled by gpusim (sm_100 CTA pairs)", unsupported=True)


def lower_tensor_copy(fl, ins: ast.Instruction, b: _Row, words: list[str], reduce: bool = False) -> None:
    """``words``: the modifiers after ``cp.async.bulk`` (or ``cp.reduce.async.bulk``), starting at ``.tensor``
    or ``.prefetch``."""
    _require_sm(fl, ins, 90, "cp.async.bulk.tensor")
    name = f"'{ins.opcode}{''.join(ins.mods)}'"
    words = [w for w in words if w not in (".tensor", ".prefetch", ".tile")]
    _refuse_unmodelled(ins, words)
    hint = ".L2::cache_hint" in ins.mods
    multicast = ".multicast::cluster" in words
    words = [w for w in words if w != ".multicast::cluster"]
    ranks = [_DIMS[w] for w in words if w in _DIMS]
    if len(ranks) != 1:
        raise _err(ins, f"{name}: a tensor copy names its dimensionality once (.1d .. .5d)")
    rank = ranks[0]
    rest = {w for w in words if w not in _DIMS}
    red_ops = [w for w in rest if w in REDUCE_OPS]
    rest -= set(red_ops)
    if ".prefetch" in ins.mods:
        kind, want = L.TMA_PREFETCH, _PREFETCH
    elif reduce:
        kind, want = L.TMA_REDUCE, _STORE
        if len(red_ops) != 1:
            raise _err(ins, f"{name}: cp.reduce.async.bulk.tensor needs one of .add .min .max .inc .dec .and .or "
                       ".xor")
    elif ".mbarrier::complete_tx::bytes" in rest:
        kind, want = L.TMA_LOAD, _LOAD | ({".shared::cta"} if ".shared::cta" in rest else set())
        if ".shared::cta" in rest:
            want = want - {".shared::cluster"}
    else:
        kind, want = L.TMA_STORE, _STORE
    if multicast and kind != L.TMA_LOAD:
        raise _err(ins, f"{name}: .multicast::cluster is a global->shared::cluster load's modifier")
    if (red_ops and not reduce) or rest != want:
        raise _err(ins, f"{name}: gpusim models cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::"
                   "complete_tx::bytes, cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group, "
                   "cp.reduce.async.bulk.tensor.Nd.global.shared::cta.OP.tile.bulk_group and "
                   "cp.async.bulk.prefetch.tensor.Nd.L2.global.tile", unsupported=True)
    ops = list(ins.operands)
    expected = {L.TMA_LOAD: 4, L.TMA_STORE: 3, L.TMA_REDUCE: 3, L.TMA_PREFETCH: 2}[kind] + hint + multicast
    if len(ops) != expected:
        raise _err(ins, f"{name} takes {expected} operands ({'[dst], ' if kind == L.TMA_LOAD else ''}"
                   f"[tmap, {{coordinates}}]{', [src]' if kind in (L.TMA_STORE, L.TMA_REDUCE) else ''}"
                   f"{', [mbar]' if kind == L.TMA_LOAD else ''}{', ctaMask' if multicast else ''}"
                   f"{', policy' if hint else ''}), found "
                   f"{len(ops) - 1 if any(isinstance(o, ast.TensorCoords) for o in ops) else len(ops)}")
    row = b.row
    shared = ops.pop(0) if kind == L.TMA_LOAD else None
    tmap, coords = ops[0], ops[1]
    if not isinstance(tmap, ast.Address) or not isinstance(coords, ast.TensorCoords):
        raise _err(ins, f"{name}: the tensor operand is [tmap, {{c0, ...}}]")
    if len(coords.elems) != rank:
        raise _err(ins, f"{name}: a .{rank}d copy takes {rank} coordinates, found {len(coords.elems)}")
    if kind in (L.TMA_STORE, L.TMA_REDUCE):
        shared = ops[2]
    row[L.F_OP] = c.OP_BULK_TENSOR
    row[L.F_AUX] = kind
    row[L.F_TC_COUNT] = rank
    row[L.F_TC_FLAGS] = REDUCE_OPS[red_ops[0]] if red_ops else 0
    row[L.F_TY] = c.T_B32
    row[L.F_SPACE] = L.SP_SHARED
    row[L.F_ABASE] = -1
    if shared is not None:
        base, offset, sym = fl.address(ins, shared)
        if sym not in (None, L.SP_SHARED):
            raise _err(ins, f"{name}: the shared-memory operand's symbol is not in shared memory")
        if base < 0 and offset % 128:
            raise _err(ins, f"{name}: the shared-memory address must be 128-byte aligned")
        row[L.F_ABASE] = base
        row[L.F_AOFF] = offset
        if base >= 0 and fl.reg_bits(base) == 32:
            row[L.F_MODS] |= L.MEM_ADDR32
    map_base, map_offset, map_sym = fl.address(ins, tmap)
    if map_sym == L.SP_PARAM:
        map_offset += L.PARAM_WINDOW
    elif map_sym not in (None, L.SP_GLOBAL, L.SP_CONST):
        raise _err(ins, f"{name}: the tensor map lives in parameter, constant or global memory")
    b.add_src((L.SK_REG, map_base) if map_base >= 0 else (L.SK_IMM, 0))
    row[L.F_TC_SRC_OFFSET] = map_offset
    for elem in coords.elems:
        if isinstance(elem, ast.Imm) and (not isinstance(elem.value, int)
                                          or not -MAX_COORDINATE_IMM <= elem.value < MAX_COORDINATE_IMM):
            raise _err(ins, f"{name}: a coordinate is a signed 32-bit integer, not {elem.value!r}")
        if not isinstance(elem, ast.Reg | ast.Imm):
            raise _err(ins, f"{name}: coordinates are .b32 registers or integer constants")
        b.add_src(fl.src(ins, elem, c.T_S32))
    if kind == L.TMA_LOAD:
        mbar_base, mbar_offset, mbar_sym = fl.address(ins, ops[2])
        if mbar_sym not in (None, L.SP_SHARED):
            raise _err(ins, f"{name}: the mbarrier lives in shared memory")
        b.add_src((L.SK_REG, mbar_base) if mbar_base >= 0 else (L.SK_IMM, 0))
        row[L.F_BULK_MBAR_OFFSET] = mbar_offset
    if multicast:
        if not isinstance(ops[3], ast.Reg | ast.Imm):
            raise _err(ins, f"{name}: the ctaMask is a .b16 register or constant")
        b.add_src(fl.src(ins, ops[3], c.T_B16))
        row[L.F_TC_FLAGS] |= L.TMA_MULTICAST
    if hint:      # the cache policy: read (a source, so its producer is waited for) and otherwise ignored
        b.add_src(fl.src(ins, ops[-1], c.T_B64))
    row[L.F_ISA] = isa.isa_row(c.OP_BULK_TENSOR, c.T_NONE, "cp.async.bulk.tensor")
