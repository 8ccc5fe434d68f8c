"""Lowering of the first Hopper instructions (issue 25): ``mbarrier.*`` (with sm_80's ``cp.async.mbarrier.arrive``),
``cp.async.bulk`` (1D, global->shared completing bytes on an mbarrier, also ``.multicast::cluster`` to the CTAs of
a ctaMask, shared->global in bulk groups, shared::cta->shared::cluster to another CTA of the cluster, and the
groups' commit/wait), ``cp.reduce.async.bulk`` (shared->global in bulk groups, each element combined with
memory's), ``cp.async.bulk.prefetch.L2`` (global into L2), ``elect.sync``.

Each becomes one code row (columns in ``gpusim.arch.layout``: ``MB_*``, ``MBF_*``, ``BULK_*``); what the engine
does with them is ``gpusim.engine.semantics.mbarrier``, their timing ``gpusim.engine.sm.async_timing`` and
docs/tensor-cores.md ("Hopper: mbarrier, bulk copies, elect.sync"). Memory-ordering qualifiers (``.release``,
``.acquire``, ``.relaxed``, ``.cta``, ``.cluster``) are accepted and have no further effect: every operation is
performed at issue, in issue order. ``fence.proxy.async`` and ``fence.mbarrier_init`` are fences
(``lower_ops``). Forms outside this set stop here with ``UnsupportedPTXError`` naming the line.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L
from gpusim.ptx import ast
from gpusim.ptx.lower_common import _err, _expect_operands, _Row

HOPPER_OPCODES = ("mbarrier", "elect")
_ORDERING = {".release", ".acquire", ".relaxed", ".cta", ".cluster", ".sync", ".aligned"}
_SHARED = {".shared", ".shared::cta", ".shared::cluster"}
_OPS = {".init": L.MB_INIT, ".arrive": L.MB_ARRIVE, ".arrive_drop": L.MB_ARRIVE_DROP,
        ".expect_tx": L.MB_EXPECT_TX, ".complete_tx": L.MB_COMPLETE_TX, ".test_wait": L.MB_TEST_WAIT,
        ".try_wait": L.MB_TRY_WAIT, ".inval": L.MB_INVAL, ".pending_count": L.MB_PENDING_COUNT}
BULK_ALIGN = 16
"""cp.async.bulk: addresses and size are multiples of 16 bytes (PTX ISA, cp.async.bulk)."""


def _target_sm(fl) -> int:
    target = getattr(getattr(fl, "module", None), "target", None) or "sm_90"
    digits = "".join(ch for ch in target if ch.isdigit())
    return int(digits) if digits else 90


def _require_sm(fl, ins: ast.Instruction, needed: int, what: str) -> None:
    have = _target_sm(fl)
    if have < needed:
        raise _err(ins, f"{what} needs sm_{needed} or later; this module's .target is sm_{have}", unsupported=True)


def lower_hopper(fl, ins: ast.Instruction, b: _Row) -> None:
    """Lower one ``mbarrier`` or ``elect`` instruction into ``b``."""
    if ins.opcode == "elect":
        _lower_elect(fl, ins, b)
    else:
        _lower_mbarrier(fl, ins, b)


def _lower_elect(fl, ins: ast.Instruction, b: _Row) -> None:
    row = b.row
    if tuple(ins.mods) != (".sync",):
        raise _err(ins, f"'elect{''.join(ins.mods)}': gpusim models elect.sync d|p, membermask", unsupported=True)
    _require_sm(fl, ins, 90, "elect.sync")
    _expect_operands(ins, 2)
    out = ins.operands[0]
    if isinstance(out, ast.PredPair):
        first = -2 if out.first == "_" else fl.reg_of(ins, out.first)
        second = -2 if out.second == "_" else fl.reg_of(ins, out.second)
        b.set_dsts([first, second])
    else:
        raise _err(ins, "elect.sync writes d|p (a register or _, then a predicate or _)")
    b.add_src(fl.src(ins, ins.operands[1], c.T_B32))
    row[L.F_OP] = c.OP_ELECT
    row[L.F_TY] = c.T_B32
    row[L.F_ISA] = isa.isa_row(c.OP_ELECT, c.T_NONE, "elect")


def _mbarrier_words(ins: ast.Instruction) -> tuple[int, int, int]:
    """(MB_* operation, MBF_* flags, space) of an mbarrier instruction's modifiers."""
    op = 0
    flags = 0
    space = L.SP_GENERIC
    for mod in ins.mods:
        if mod in _OPS and op == 0:
            op = _OPS[mod]
        elif mod == ".expect_tx" and op in (L.MB_ARRIVE, L.MB_ARRIVE_DROP):
            flags |= L.MBF_EXPECT_TX
        elif mod == ".parity" and op in (L.MB_TEST_WAIT, L.MB_TRY_WAIT):
            flags |= L.MBF_PARITY
        elif mod == ".noComplete" and op in (L.MB_ARRIVE, L.MB_ARRIVE_DROP):
            flags |= L.MBF_NO_COMPLETE
        elif mod in _SHARED:
            space = L.SP_SHARED
        elif mod == ".b64" or mod in _ORDERING:
            continue
        else:
            raise _err(ins, f"'mbarrier{''.join(ins.mods)}': modifier {mod} is not supported (see "
                       "docs/tensor-cores.md)", unsupported=True)
    if op == 0:
        raise _err(ins, "mbarrier needs an operation: .init .arrive .arrive_drop .expect_tx .complete_tx "
                   ".test_wait .try_wait .inval .pending_count")
    return op, flags, space


def _lower_mbarrier(fl, ins: ast.Instruction, b: _Row) -> None:
    row = b.row
    op, flags, space = _mbarrier_words(ins)
    _require_sm(fl, ins, 90 if op in (L.MB_EXPECT_TX, L.MB_COMPLETE_TX) or flags & (L.MBF_EXPECT_TX | L.MBF_PARITY)
                or op == L.MB_TRY_WAIT else 80, f"mbarrier{''.join(ins.mods)}")
    row[L.F_OP] = c.OP_MBARRIER
    row[L.F_AUX] = op
    row[L.F_TY] = c.T_B64
    if op == L.MB_PENDING_COUNT:        # pending_count.b64 count, state: a register operation
        _expect_operands(ins, 2)
        b.set_dsts(fl.dst(ins, ins.operands[0]))
        b.add_src(fl.src(ins, ins.operands[1], c.T_B64))
        row[L.F_ISA] = isa.isa_row(c.OP_MBARRIER, c.T_NONE, "mbarrier.pending_count")
        return
    operands = list(ins.operands)
    if op in (L.MB_ARRIVE, L.MB_ARRIVE_DROP, L.MB_TEST_WAIT, L.MB_TRY_WAIT):
        if not operands:
            raise _err(ins, f"mbarrier{''.join(ins.mods)} needs a destination")
        dst = operands.pop(0)
        b.set_dsts(fl.dst(ins, dst))
    if not operands or not isinstance(operands[0], ast.Address):
        raise _err(ins, f"mbarrier{''.join(ins.mods)} needs the mbarrier's address [addr]")
    base, offset, sym_space = fl.address(ins, operands.pop(0))
    if sym_space is not None and sym_space != L.SP_SHARED:
        raise _err(ins, "an mbarrier object lives in shared memory")
    counts = {L.MB_INIT: (1,), L.MB_EXPECT_TX: (1,), L.MB_COMPLETE_TX: (1,), L.MB_INVAL: (0,),
              L.MB_TEST_WAIT: (1,), L.MB_TRY_WAIT: (1, 2),
              L.MB_ARRIVE: (1, 2) if flags & L.MBF_EXPECT_TX else (0, 1),
              L.MB_ARRIVE_DROP: (1, 2) if flags & L.MBF_EXPECT_TX else (0, 1)}[op]
    if len(operands) not in counts:
        want = " or ".join(str(k) for k in counts)
        raise _err(ins, f"mbarrier{''.join(ins.mods)} takes {want} operand(s) after the address, found "
                   f"{len(operands)}")
    if op in (L.MB_ARRIVE, L.MB_ARRIVE_DROP) and len(operands) == counts[-1] and counts[-1] > (
            1 if flags & L.MBF_EXPECT_TX else 0):
        flags |= L.MBF_COUNT
    for operand in operands:
        b.add_src(fl.src(ins, operand, c.T_B64 if op in (L.MB_TEST_WAIT, L.MB_TRY_WAIT) else c.T_U32))
    row[L.F_TC_FLAGS] = flags
    _mbarrier_row(fl, row, base, offset, space if sym_space is None else L.SP_SHARED)


def _mbarrier_row(fl, row, base: int, offset: int, space: int) -> None:
    """The address columns and form of an mbarrier row (the 8-byte object at ``[base + offset]`` in ``space``)."""
    row[L.F_ABASE] = base
    row[L.F_AOFF] = offset
    row[L.F_SPACE] = space
    row[L.F_SIZE] = 8
    if base >= 0 and fl.reg_bits(base) == 32:
        row[L.F_MODS] |= L.MEM_ADDR32
    row[L.F_ISA] = isa.isa_row(c.OP_MBARRIER, c.T_NONE, "mbarrier")


def lower_cp_async_arrive(fl, ins: ast.Instruction, b: _Row, rest: list[str]) -> None:
    """``cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]`` (sm_80; ``rest``: the modifiers after
    ``.mbarrier.arrive``): an mbarrier row (``MB_CP_ARRIVE``) whose arrive-on happens once the executing thread's
    prior ``cp.async`` copies have landed; without ``.noinc`` the pending count is raised by one at issue, so
    the asynchronous arrival leaves it where it was (PTX ISA, cp.async.mbarrier.arrive)."""
    row = b.row
    flags = 0
    space = L.SP_GENERIC
    for mod in rest:
        if mod == ".noinc" and not flags:
            flags = L.MBF_NOINC
        elif mod in (".shared", ".shared::cta"):
            space = L.SP_SHARED
        elif mod != ".b64":
            raise _err(ins, f"'cp{''.join(ins.mods)}': gpusim models cp.async.mbarrier.arrive{{.noinc}}"
                       "{.shared{::cta}}.b64 [addr]", unsupported=True)
    _expect_operands(ins, 1)
    if not isinstance(ins.operands[0], ast.Address):
        raise _err(ins, "cp.async.mbarrier.arrive needs the mbarrier's address [addr]")
    base, offset, sym_space = fl.address(ins, ins.operands[0])
    if sym_space is not None and sym_space != L.SP_SHARED:
        raise _err(ins, "an mbarrier object lives in shared memory")
    row[L.F_OP] = c.OP_MBARRIER
    row[L.F_AUX] = L.MB_CP_ARRIVE
    row[L.F_TY] = c.T_B64
    row[L.F_TC_FLAGS] = flags
    _mbarrier_row(fl, row, base, offset, space if sym_space is None else L.SP_SHARED)


def _check_bulk_constants(ins: ast.Instruction, name: str, verb: str, size, addresses: tuple) -> None:
    """The PTX ISA's bulk-copy rules where the PTX fixes the values: a constant size is a positive multiple of
    16 bytes, and an address without a base register ((what, base, offset) triples) is 16-byte aligned (the
    engine checks the rest at run time)."""
    if isinstance(size, ast.Imm) and (not isinstance(size.value, int) or size.value <= 0
                                      or size.value % BULK_ALIGN):
        raise _err(ins, f"{name} {verb} a positive multiple of {BULK_ALIGN} bytes, not {size.value}")
    for what, base, offset in addresses:
        if base < 0 and offset % BULK_ALIGN:
            raise _err(ins, f"{name}: the {what} address must be {BULK_ALIGN}-byte aligned")


def lower_bulk(fl, ins: ast.Instruction, b: _Row, rest: list[str]) -> None:
    """``cp.async.bulk...``: ``rest`` is the modifiers after ``.async.bulk`` (cache hints already removed)."""
    row = b.row
    _require_sm(fl, ins, 90, "cp.async.bulk")
    if rest in ([".commit_group"], [".wait_group"], [".wait_group", ".read"]):
        row[L.F_OP] = c.OP_CP_COMMIT if rest == [".commit_group"] else c.OP_CP_WAIT
        row[L.F_TC_FLAGS] = L.TC_BULK | (L.TC_READ if ".read" in rest else 0)
        if rest == [".commit_group"]:
            _expect_operands(ins, 0)
        else:
            _expect_operands(ins, 1)
            n = ins.operands[0]
            if not isinstance(n, ast.Imm) or not isinstance(n.value, int) or not 0 <= n.value <= 63:
                raise _err(ins, "cp.async.bulk.wait_group takes an integer constant N in 0..63")
            row[L.F_AUX] = n.value
        row[L.F_ISA] = isa.isa_row(row[L.F_OP], c.T_NONE, "cp.async.commit_group" if rest == [".commit_group"]
                                   else "cp.async.wait_group")
        return
    words = set(rest)
    g2s = {".shared::cluster", ".global", ".mbarrier::complete_tx::bytes"}
    s2g = {".global", ".shared::cta", ".bulk_group"}
    s2c = {".shared::cluster", ".shared::cta", ".mbarrier::complete_tx::bytes"}
    multicast = g2s | {".multicast::cluster"}
    hint = 1 if ".L2::cache_hint" in ins.mods else 0      # a trailing cache-policy operand (no effect here)
    if words == g2s and rest.index(".shared::cluster") < rest.index(".global"):
        direction, dst_space, src_space = L.BULK_G2S, L.SP_SHARED, L.SP_GLOBAL
        _expect_operands(ins, 4 + hint)
    elif words == s2g and rest.index(".global") < rest.index(".shared::cta"):
        direction, dst_space, src_space = L.BULK_S2G, L.SP_GLOBAL, L.SP_SHARED
        _expect_operands(ins, 3 + hint)
    elif words == multicast and rest.index(".shared::cluster") < rest.index(".global"):  # clusters: a ctaMask
        direction, dst_space, src_space = L.BULK_MULTICAST, L.SP_SHARED, L.SP_GLOBAL
        _expect_operands(ins, 5 + hint)
    elif words == s2c and rest.index(".shared::cluster") < rest.index(".shared::cta"):   # DSM (clusters)
        direction, dst_space, src_space = L.BULK_S2C, L.SP_SHARED, L.SP_SHARED
        _expect_operands(ins, 4)
    else:
        raise _err(ins, f"'cp{''.join(ins.mods)}': gpusim models cp.async.bulk.shared::cluster.global"
                   ".mbarrier::complete_tx::bytes, cp.async.bulk.global.shared::cta.bulk_group and cp.async.bulk"
                   ".shared::cluster.shared::cta.mbarrier::complete_tx::bytes, each 1D, and the first with "
                   ".multicast::cluster (tensor forms: lower_tma)", unsupported=True)
    dst_base, dst_offset, dst_sym = fl.address(ins, ins.operands[0])
    src_base, src_offset, src_sym = fl.address(ins, ins.operands[1])
    if dst_sym not in (None, dst_space) or src_sym not in (None, src_space):
        raise _err(ins, "cp.async.bulk: an operand's symbol is in the wrong state space")
    size = ins.operands[2]
    _check_bulk_constants(ins, "cp.async.bulk", "copies", size,
                          (("destination", dst_base, dst_offset), ("source", src_base, src_offset)))
    row[L.F_OP] = c.OP_BULK_COPY
    row[L.F_AUX] = direction
    row[L.F_ABASE] = dst_base
    row[L.F_AOFF] = dst_offset
    row[L.F_SPACE] = dst_space
    if dst_base >= 0 and fl.reg_bits(dst_base) == 32:
        row[L.F_MODS] |= L.MEM_ADDR32
    b.add_src((L.SK_REG, src_base) if src_base >= 0 else (L.SK_IMM, 0))
    row[L.F_TC_SRC_OFFSET] = src_offset
    b.add_src(fl.src(ins, size, c.T_U32))
    if direction != L.BULK_S2G:
        mbar_base, mbar_offset, mbar_sym = fl.address(ins, ins.operands[3])
        if mbar_sym not in (None, L.SP_SHARED):
            raise _err(ins, "cp.async.bulk: the mbarrier lives in shared memory")
        b.add_src((L.SK_REG, mbar_base) if mbar_base >= 0 else (L.SK_IMM, 0))
        row[L.F_BULK_MBAR_OFFSET] = mbar_offset
    if direction == L.BULK_MULTICAST:
        b.add_src(fl.src(ins, ins.operands[4], c.T_U16))          # ctaMask: a bit per destination CTA rank
    row[L.F_ISA] = isa.isa_row(c.OP_BULK_COPY, c.T_NONE, "cp.async.bulk")


REDUCE_OPS = {".add": L.TMA_RED_ADD, ".min": L.TMA_RED_MIN, ".max": L.TMA_RED_MAX, ".inc": L.TMA_RED_INC,
              ".dec": L.TMA_RED_DEC, ".and": L.TMA_RED_AND, ".or": L.TMA_RED_OR, ".xor": L.TMA_RED_XOR}
"""The bulk reductions' operations (cp.reduce.async.bulk and its tensor form, lower_tma) as TMA_RED_* codes."""
_REDUCE_TYPES = {   # the PTX ISA's operation x type pairs of cp.reduce.async.bulk.global.shared::cta.bulk_group
    ".and": (".b32", ".b64"), ".or": (".b32", ".b64"), ".xor": (".b32", ".b64"),
    ".inc": (".u32",), ".dec": (".u32",),
    ".min": (".u32", ".s32", ".u64", ".s64", ".f16", ".bf16"),
    ".max": (".u32", ".s32", ".u64", ".s64", ".f16", ".bf16"),
    ".add": (".u32", ".s32", ".u64", ".f32", ".f64", ".f16", ".bf16"),   # f16, bf16: .add.noftz
}


def lower_bulk_reduce(fl, ins: ast.Instruction, b: _Row, rest: list[str]) -> None:
    """``cp.reduce.async.bulk.global.shared::cta.bulk_group.OP.TYPE [dst], [src], size``: ``rest`` is the
    modifiers after ``.reduce.async.bulk`` (cache hints removed). A shared->global bulk copy (a bulk group's)
    whose elements combine with the global ones (F_TC_FLAGS: TMA_RED_*, F_TY: the element type); the
    shared::cluster form (with an mbarrier) is not modelled."""
    name = f"cp{''.join(ins.mods)}"
    ops = [w for w in rest if w in REDUCE_OPS]
    types = [w for w in rest if w[1:] in c.TYPE_CODES]
    words = [w for w in rest if w not in ops and w not in types and w != ".noftz"]
    if words != [".global", ".shared::cta", ".bulk_group"]:
        raise _err(ins, f"'{name}': gpusim models cp.reduce.async.bulk.global.shared::cta.bulk_group.OP.TYPE (the "
                   "shared::cluster form with an mbarrier is not modelled; tensor forms: cp.reduce.async.bulk"
                   ".tensor)", unsupported=True)
    if len(ops) != 1 or len(types) != 1:
        raise _err(ins, f"'{name}' needs one operation ({' '.join(REDUCE_OPS)}) and one type")
    op, ty = ops[0], types[0]
    if ty not in _REDUCE_TYPES[op]:
        raise _err(ins, f"'{name}': {op} takes {' '.join(_REDUCE_TYPES[op])}, not {ty}")
    half = ty in (".f16", ".bf16")
    if (".noftz" in rest) != (half and op == ".add"):
        raise _err(ins, f"'{name}': .noftz goes with .add of .f16 or .bf16 (and only there)")
    lower_bulk(fl, ins, b, words)
    b.row[L.F_TC_FLAGS] = REDUCE_OPS[op]
    b.row[L.F_TY] = c.TYPE_CODES[ty[1:]]


def lower_bulk_prefetch(fl, ins: ast.Instruction, b: _Row, rest: list[str]) -> None:
    """``cp.async.bulk.prefetch.L2.global [src], size{, policy}`` (sm_90): ``rest`` is the modifiers after
    ``.async.bulk`` (cache hints removed). An OP_BULK_COPY row with F_AUX = BULK_PREFETCH: the address in source
    0 + F_TC_SRC_OFFSET, the size in source 1, no destination; the timed loop reads its sectors into L2."""
    name = f"cp{''.join(ins.mods)}"
    _require_sm(fl, ins, 90, "cp.async.bulk.prefetch")
    if rest != [".prefetch", ".L2", ".global"]:
        raise _err(ins, f"'{name}': gpusim models cp.async.bulk.prefetch.L2.global [src], size (and the tensor form)",
                   unsupported=True)
    hint = 1 if ".L2::cache_hint" in ins.mods else 0
    _expect_operands(ins, 2 + hint)
    base, offset, sym = fl.address(ins, ins.operands[0])
    if sym not in (None, L.SP_GLOBAL):
        raise _err(ins, f"{name}: the source is in global memory")
    size = ins.operands[1]
    _check_bulk_constants(ins, name, "prefetches", size, (("source", base, offset),))
    row = b.row
    row[L.F_OP] = c.OP_BULK_COPY
    row[L.F_AUX] = L.BULK_PREFETCH
    row[L.F_ABASE] = -1
    row[L.F_SPACE] = L.SP_GLOBAL
    b.add_src((L.SK_REG, base) if base >= 0 else (L.SK_IMM, 0))
    row[L.F_TC_SRC_OFFSET] = offset
    b.add_src(fl.src(ins, size, c.T_U32))
    row[L.F_ISA] = isa.isa_row(c.OP_BULK_COPY, c.T_NONE, "cp.async.bulk")
