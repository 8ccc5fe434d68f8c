"""Unrolling of counted loops: fully when the trips are a few constant ones, x4 otherwise.

What ptxas does: a loop it can count (an induction variable stepped by a constant, compared with a
loop-invariant bound) and that is not marked ``.pragma "nounroll"`` is unrolled 4 times, with the
original loop kept for the remaining trips; the copies' address increments fold into the loads'
immediate offsets and one add per unrolled trip. nvcc has already unrolled ``programs/gemv``'s loop 4
times (8 loads per trip); ptxas's SASS unrolls that again: a 16-element trip with 32 LDGs at
``[R6.64+-0x100]`` .. ``[R4.64+0x680]`` and one IADD3 per pointer.

What is modelled: a single-block loop ``B`` that ends with ``@p bra B``, where ``p`` is written in
``B`` only by ``setp.lt``/``setp.le`` (signed or unsigned, ``.lo``/``.ls``) of ``i`` against ``n``,
``i`` is written in ``B`` only by ``add i, i, s`` (``s`` a positive immediate) before that compare,
``n`` is an immediate or a register ``B`` does not write, ``p`` is read only by the branch, and every
global (or generic) store in ``B`` goes through an induction pointer (below), is rewritten as

* CHECK: ``t = i + (U-1)*s; q = t CMP n; @!q bra B`` (fewer than U trips left: the original loop);
* MAIN: ``U`` copies of the body without the compare; ``@q bra MAIN`` after ``t = i + (U-1)*s; q = t CMP n``;
* AFTER: the original compare and ``@!p bra`` out of the loop; then ``B`` runs the remaining trips.

A trip of the original loop runs ``U`` times in MAIN exactly when its next ``U-1`` compares would all
succeed, so every lane runs the same body instances in the same order. In the copies, registers the
body writes before it reads them and nothing outside the loop reads get fresh registers (so the
scheduler can overlap the copies, as ptxas's register allocation does), and an *induction* register
(written only by ``add r, r, imm`` and read in the body only as a memory base, or by the compare) is
not stepped per copy: each access adds the copy's multiple of the step to its offset, and one add of
``U`` steps ends MAIN. Loops whose trip count is not computable this way are left alone; so is a loop
whose first instruction follows ``.pragma "nounroll"``. Not modelled: ptxas's choice of factor by body
size (always :data:`FACTOR`), multi-block loop bodies, and the wrap-around of ``i + (U-1)*s`` past the
type's maximum (bounds within ``(U-1)*s`` of it).

Stores: ptxas keeps rolled a counted loop in which a global store takes an address recomputed from the
counter each trip (``mul.wide.s32`` + ``add.s64`` of ``i``, as nvcc writes ``out[i]`` in a grid-stride
loop): in tests/corpus_llm/layernorm.ptx's SASS (tests/data/regalloc_sass/layernorm.sass) the three loops
that store ``out[i]`` run one trip per iteration while the load-only loops beside them are unrolled x4
(four LDGs), and polybench's ``covar_matrix`` loop (8 stores per trip as nvcc wrote it) stays at 8 STGs.
The hand-written loops of tests/data/unroll_stores and their SASS separate the cases: an indexed global
store keeps the loop rolled whatever the loads do; a store through a pointer stepped by a constant, a
shared store, or no store lets ptxas unroll x4. Modelled as that rule (atomics and reductions already keep
a loop rolled, as fences); the kernel's notes name each loop kept rolled.

Full unrolling: ptxas unrolls a loop whose trip count it knows at compile time completely when the
unrolled code stays small (a 4-trip k loop of the SGEMM ladder's 1D-blocktiling kernel becomes straight
code, and its loads then merge into LDS.128). Modelled: a single-block counted loop (the form above, or
``setp.ne`` against the bound) entered only by falling through from the block before, which sets the
counter to a constant, with an immediate bound: its trips are computed in the counter's arithmetic; when
:func:`full_unroll_fits` (fitted to ptxas's sm_86 SASS for a committed sweep of loops,
tests/data/unroll/) says so, the loop becomes ``trips`` copies of the body without the compare and the
branch, induction pointers folded into offsets as above and advanced once at the end.
"""

from __future__ import annotations

import dataclasses

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L
from gpusim.codegen import deps
from gpusim.codegen.fold import immediate_field, immediate_slots
from gpusim.codegen.ir import Block
from gpusim.ptx.lower import MAX_ADDRESS_OFFSET

FACTOR = 4
_COUNTED = (c.CMP_LT, c.CMP_LE, c.CMP_LO, c.CMP_LS)
_MEM = (c.OP_LD, c.OP_ST, c.OP_ATOM, c.OP_RED, c.OP_PREFETCH)


def unroll_loops(kernel, factor: int = FACTOR, cc: tuple[int, int] = (8, 6)) -> int:
    """Unroll in place: small constant-trip loops fully (each named in ``kernel.notes``; ptxas's rule for
    compute capability ``cc``), other counted loops ``factor`` times; returns the number of loops unrolled
    ``factor`` times."""
    nounroll = set(kernel.program.directives.get("nounroll_at", []))
    done = 0
    b = 0
    while b < len(kernel.blocks):
        block = kernel.blocks[b]
        full = constant_loop(kernel, b, nounroll)
        if full is not None and full_unroll_fits(full["trips"], full["body"], full["nested"], cc):
            kernel.blocks[b] = _fully_unrolled(kernel, block, full)
            kernel.notes.append(f"unroll: the loop at PTX line {block.insts[0].line} ({full['trips']} constant "
                                f"trips of {full['body']} instructions) unrolled fully")
            b += 1
            continue
        plan = _counted_loop(kernel, block, nounroll)
        if plan is None:
            b += 1
            continue
        store = _recomputed_store(kernel, block, plan)
        if store is not None:
            kernel.notes.append(f"unroll: the loop at PTX line {block.insts[0].line} kept rolled: its global store "
                                f"(PTX line {store.line}) takes an address computed each trip, not an induction "
                                f"pointer")
            b += 1
            continue
        check, main, after = _unrolled(kernel, block, b, plan, factor)
        for other in kernel.blocks:
            for inst in other.insts:
                if inst.op == c.OP_BRA and inst.target is block and inst is not block.insts[-1]:
                    inst.target = check
        kernel.blocks[b:b] = [check, main, after]
        b += 4
        done += 1
    return done


def _reads_anywhere(kernel, reg: int, outside: Block | None = None) -> int:
    return sum(reg in deps.reads(i.row) for blk in kernel.blocks if blk is not outside for i in blk.insts)


def _counted_loop(kernel, block, nounroll, compares=_COUNTED):
    insts = block.insts
    if len(insts) < 3 or insts[0].origin in nounroll:
        return None
    bra = insts[-1]
    if bra.op != c.OP_BRA or bra.target is not block or bra.row[L.F_GUARD] < 0 or bra.row[L.F_GUARD_NEG]:
        return None
    p = int(bra.row[L.F_GUARD])
    writers = [k for k, inst in enumerate(insts) if p in deps.writes(inst.row)]
    if len(writers) != 1 or _reads_anywhere(kernel, p) != 1:
        return None
    k_setp = writers[0]
    setp = insts[k_setp].row
    if insts[k_setp].op != c.OP_SETP or setp[L.F_NDST] != 1 or setp[L.F_NSRC] != 2 or setp[L.F_GUARD] >= 0 or \
            c.mods_bool(int(setp[L.F_MODS])) or \
            c.mods_cmp(int(setp[L.F_MODS])) not in compares or c.TYPE_FLOAT[int(setp[L.F_TY])]:
        return None
    (ki, i), (kn, n) = deps.sources(setp)
    if ki != L.SK_REG or kn not in (L.SK_REG, L.SK_IMM):
        return None
    if kn == L.SK_REG and any(n in deps.writes(inst.row) for inst in insts):
        return None
    i_writers = [k for k, inst in enumerate(insts) if i in deps.writes(inst.row)]
    if len(i_writers) != 1 or i_writers[0] > k_setp:
        return None
    step = _self_add(insts[i_writers[0]].row, i)
    width = c.TYPE_BYTES[int(setp[L.F_TY])]
    if step is None or step <= 0 or c.TYPE_BYTES[int(insts[i_writers[0]].row[L.F_TY])] != width or \
            step * FACTOR >= 1 << (8 * width - 2):
        return None
    if any(deps.is_fence(inst.row) for inst in insts[:-1]):
        return None                      # barriers, atomics, warp-synchronous code: ptxas keeps these rolled
    return {"setp": k_setp, "i": i, "step": step, "i_add": i_writers[0], "n": (kn, n)}


def _recomputed_store(kernel, block, plan):
    """The first global (or generic) store of the loop whose address base is not one of its induction
    pointers (an address computed from the counter each trip, or a fixed one), None if there is none:
    ptxas keeps such a loop rolled (see the module docstring)."""
    inductions = _inductions(kernel, block, plan)
    for inst in block.insts:
        row = inst.row
        if int(row[L.F_OP]) == c.OP_ST and int(row[L.F_SPACE]) in (L.SP_GLOBAL, L.SP_GENERIC) and \
                int(row[L.F_ABASE]) not in inductions:
            return inst
    return None


def _self_add(row, reg: int) -> int | None:
    """``s`` when ``row`` is an unguarded ``add reg, reg, s`` with ``s`` an immediate (signed value)."""
    if int(row[L.F_OP]) != c.OP_ADD or row[L.F_GUARD] >= 0 or row[L.F_NDST] != 1 or row[L.F_DST0] != reg or \
            c.TYPE_FLOAT[int(row[L.F_TY])]:
        return None
    srcs = deps.sources(row)
    if len(srcs) != 2 or (L.SK_REG, reg) not in srcs:
        return None
    imm = [v for kind, v in srcs if kind == L.SK_IMM]
    if len(imm) != 1:
        return None
    bits = 8 * c.TYPE_BYTES[int(row[L.F_TY])]
    value = imm[0] & ((1 << bits) - 1)
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _inductions(kernel, block, plan) -> dict[int, tuple[int, int]]:
    """reg -> (position of its add, step) for registers stepped once by an immediate and read in the body
    only as memory bases (or, for ``i``, by the compare), and not at all by the add's own block elsewhere."""
    insts = block.insts
    out = {}
    for k, inst in enumerate(insts[:-1]):
        row = inst.row
        if row[L.F_NDST] != 1:
            continue
        r = int(row[L.F_DST0])
        step = _self_add(row, r)
        if step is None or sum(r in deps.writes(x.row) for x in insts) != 1:
            continue
        ok = True
        for j, other in enumerate(insts):
            if j == k or r not in deps.reads(other.row):
                continue
            o = other.row
            data_reads = {v for kind, v in deps.sources(o) if kind in (L.SK_REG, L.SK_REGNEG)}
            if j == plan["setp"] and r == plan["i"]:
                continue
            if int(o[L.F_OP]) not in _MEM or o[L.F_ABASE] != r or r in data_reads or o[L.F_GUARD] == r:
                ok = False
                break
        if ok:
            out[r] = (k, step)
    return out


def _temporaries(kernel, block, keep: set) -> set[int]:
    """Registers the body writes (unguarded) before any read, that no other block reads."""
    first_access: dict[int, str] = {}
    for inst in block.insts:
        for r in deps.reads(inst.row):
            first_access.setdefault(r, "read")
        for r in deps.writes(inst.row):
            first_access.setdefault(r, "write" if inst.row[L.F_GUARD] < 0 else "read")
    return {r for r, how in first_access.items()
            if how == "write" and r not in keep and _reads_anywhere(kernel, r, outside=block) == 0}


def _new_reg(kernel, name: str) -> int:
    index = kernel.program.n_regs + len(kernel.extra_regs)
    kernel.extra_regs.append(name)
    return index


def _rename(row, mapping: dict[int, int]) -> None:
    for i in range(int(row[L.F_NSRC])):
        if int(row[L.F_SK0 + 2 * i]) in (L.SK_REG, L.SK_REGNEG):
            value = int(row[L.F_SK0 + 2 * i + 1])
            row[L.F_SK0 + 2 * i + 1] = mapping.get(value, value)
    for i in range(int(row[L.F_NDST])):
        value = int(row[L.F_DST0 + i])
        row[L.F_DST0 + i] = mapping.get(value, value)
    if row[L.F_GUARD] >= 0:
        row[L.F_GUARD] = mapping.get(int(row[L.F_GUARD]), int(row[L.F_GUARD]))
    if int(row[L.F_OP]) in _MEM and row[L.F_ABASE] >= 0:
        row[L.F_ABASE] = mapping.get(int(row[L.F_ABASE]), int(row[L.F_ABASE]))


def _clone(inst, row):
    return dataclasses.replace(inst, row=row)


def _unrolled(kernel, block, b, plan, factor):
    insts = block.insts
    setp_inst, bra = insts[plan["setp"]], insts[-1]
    i = plan["i"]
    width = c.TYPE_BYTES[int(setp_inst.row[L.F_TY])]
    inductions = _inductions(kernel, block, plan)
    if any(abs(step) * factor >= MAX_ADDRESS_OFFSET for _, step in inductions.values()):
        inductions = {r: v for r, v in inductions.items() if r == i}
    temps = _temporaries(kernel, block, set(inductions) | {i})
    names = kernel.program.reg_names + kernel.extra_regs
    i_add = insts[plan["i_add"]]
    t = _new_reg(kernel, f"{names[i]}$unroll")
    q = _new_reg(kernel, f"{names[int(bra.row[L.F_GUARD])]}$unroll")

    def check(target_block, negate: bool):
        add = i_add.row.copy()
        add[L.F_DST0] = t
        add[L.F_SK0], add[L.F_SK0 + 1] = L.SK_REG, i
        add[L.F_SK0 + 2], add[L.F_SK0 + 3] = L.SK_IMM, immediate_field((factor - 1) * plan["step"], 8 * width)
        add[L.F_NSRC] = 2
        add[L.F_ISA] = isa.isa_row(c.OP_ADD, int(add[L.F_TY]))
        cmp = setp_inst.row.copy()
        cmp[L.F_DST0] = q
        cmp[L.F_SK0 + 1] = t
        jump = bra.row.copy()
        jump[L.F_GUARD] = q
        jump[L.F_GUARD_NEG] = 1 if negate else 0
        return [_clone(i_add, add), _clone(setp_inst, cmp), dataclasses.replace(bra, row=jump, target=target_block)]

    main = Block()
    steps = {at for at, _ in inductions.values()}
    kept = [k for k, inst in enumerate(insts[:-1]) if k != plan["setp"] and not (
        k in steps and int(inst.row[L.F_DST0]) in inductions and k == inductions[int(inst.row[L.F_DST0])][0]
        and inst.row[L.F_NDST] == 1)]
    for j in range(factor):
        _emit_copy(kernel, insts, kept, j, temps, names, inductions, main)
    for _, (at, step) in sorted(inductions.items(), key=lambda item: item[1][0]):
        row = insts[at].row.copy()
        for s in range(int(row[L.F_NSRC])):
            if int(row[L.F_SK0 + 2 * s]) == L.SK_IMM:
                row[L.F_SK0 + 2 * s + 1] = immediate_field(factor * step, 8 * c.TYPE_BYTES[int(row[L.F_TY])])
        main.insts.append(_clone(insts[at], row))
    if i not in inductions:       # i also feeds other arithmetic: its add stayed in every copy
        pass
    main.insts.extend(check(main, negate=False))
    after = Block()
    exit_block = kernel.blocks[b + 1] if b + 1 < len(kernel.blocks) else None
    jump = bra.row.copy()
    jump[L.F_GUARD_NEG] = 1
    after.insts = [_clone(setp_inst, setp_inst.row.copy()), dataclasses.replace(bra, row=jump, target=exit_block)]
    entry = Block(check(block, negate=True))
    return entry, main, after


# ------------------------------------------------------------------ full unrolling of constant-trip loops


def constant_loop(kernel, b: int, nounroll=()) -> dict | None:
    """The plan of block ``b`` when it is a counted loop (as :func:`_counted_loop`, ``setp.ne`` too) entered
    only by falling through from block ``b - 1``, whose counter that block sets to a known constant and whose
    bound is an immediate: ``trips`` (1..:data:`MAX_FULL_TRIPS`), ``body`` (instructions each copy keeps:
    not the compare, the branch, nor the adds of pointers stepped only for addresses) and ``nested`` (a
    later branch jumps back over it: the loop sits in an outer loop). None otherwise."""
    block = kernel.blocks[b]
    plan = _counted_loop(kernel, block, nounroll, compares=_COUNTED + (c.CMP_NE,))
    if b == 0 or plan is None or plan["n"][0] != L.SK_IMM:
        return None
    if any(inst.op == c.OP_BRA and inst.target is block and inst is not block.insts[-1]
           for other in kernel.blocks for inst in other.insts):
        return None
    before = kernel.blocks[b - 1].insts
    if not before or before[-1].op == c.OP_BRA and before[-1].row[L.F_GUARD] < 0:
        return None
    init = _entry_value(kernel, b - 1, plan["i"])
    if init is None:
        return None
    setp = block.insts[plan["setp"]].row
    trips = _trip_count(init, plan["step"], plan["n"][1], int(setp[L.F_TY]), c.mods_cmp(int(setp[L.F_MODS])))
    if trips is None:
        return None
    plan["trips"] = trips
    plan["init"] = init
    plan["inductions"] = _inductions(kernel, block, plan)
    if any(abs(step) * trips >= MAX_ADDRESS_OFFSET for _, step in plan["inductions"].values()):
        return None
    entry = [inst.row for inst in before if inst.row[L.F_GUARD] < 0]
    plan["fresh"] = {r for r in plan["inductions"] if _reads_anywhere(kernel, r, outside=block) == 0 and
                     any(r in deps.writes(row) for row in entry)}
    dropped = {plan["setp"], len(block.insts) - 1} | {at for at, _ in plan["inductions"].values()}
    plan["body"] = len(block.insts) - len(dropped)
    index = {id(blk): k for k, blk in enumerate(kernel.blocks)}
    plan["nested"] = any(inst.op == c.OP_BRA and index.get(id(inst.target), b) < b
                         for other in kernel.blocks[b + 1:] for inst in other.insts)
    return plan


TOP_LEVEL = (1.4, 2100.0)
"""A loop not inside another is unrolled fully when ``trips * body ** 1.4 <= 2100``."""
NESTED = (1.6, 10500.0)
"""Before sm_90, an innermost loop inside another is unrolled fully when ``trips * body ** 1.6 <= 10500``."""
NESTED_FROM = (9, 0)
"""From this compute capability on, ptxas unrolls a nested loop as it unrolls a top-level one."""


def full_unroll_fits(trips: int, body: int, nested: bool, cc: tuple[int, int] = (8, 6)) -> bool:
    """ptxas's choice to unroll a constant-trip loop of ``trips`` copies of ``body`` instructions fully on a GPU
    of compute capability ``cc``, as fitted to its SASS (CUDA 13.0) for the sweep in tests/data/unroll/
    (scripts/unroll_sweep.py: ``sweep.csv`` for sm_86, ``sweep.sm_90.csv``) and the SGEMM ladder's loops: at
    equal unrolled size ptxas prefers many trips of a small body. For sm_86 (and sm_80, whose verdicts on
    the sweep are sm_86's) it unrolls an inner loop of a nest further than a top-level one; for sm_90 it
    does not (the SGEMM ladder's 8-trip k loops of steps 7 and 8, nested, are unrolled in its sm_86 SASS
    and kept rolled in its sm_90 SASS). The top-level rule classifies all 90 top-level sweep loops as ptxas
    did on both; on sm_90 it classifies all 90 nested ones too; the sm_86 nested rule 83 of 90 (the other 7
    ptxas unrolls and gpusim keeps rolled) and 10 of the 11 constant loops of the SGEMM ladder (step 9's
    16-trip k loop of 82 instructions ptxas unrolls and gpusim keeps rolled)."""
    if trips > MAX_FULL_TRIPS:
        return False
    power, budget = NESTED if nested and tuple(cc) < NESTED_FROM else TOP_LEVEL
    return trips * body ** power <= budget


def _entry_value(kernel, b: int, reg: int) -> int | None:
    """The value ``reg`` has when block ``b`` falls through: the last write to it in ``b``, an unguarded
    ``mov reg, imm``, or ``mov reg, r`` with ``r`` written only by one unguarded ``mov r, imm`` earlier in
    block ``b`` (or anywhere, when imm is 0: the engine's registers start at 0, so ``r`` is 0 either way)."""
    insts = kernel.blocks[b].insts
    for k in range(len(insts) - 1, -1, -1):
        row = insts[k].row
        if reg not in deps.writes(row):
            continue
        if int(row[L.F_OP]) != c.OP_MOV or row[L.F_GUARD] >= 0 or row[L.F_NDST] != 1 or row[L.F_VEC] != 1:
            return None
        kind, value = deps.sources(row)[0]
        if kind == L.SK_IMM:
            return value
        if kind != L.SK_REG:
            return None
        writers = [(blk, j, inst.row) for blk in kernel.blocks for j, inst in enumerate(blk.insts)
                   if value in deps.writes(inst.row)]
        if len(writers) != 1:
            return None
        blk, j, src = writers[0]
        if int(src[L.F_OP]) != c.OP_MOV or src[L.F_GUARD] >= 0 or src[L.F_VEC] != 1 or \
                deps.sources(src)[0][0] != L.SK_IMM:
            return None
        constant = deps.sources(src)[0][1]
        return constant if constant == 0 or (blk is kernel.blocks[b] and j < k) else None
    return None


MAX_FULL_TRIPS = 64
"""Longest constant-trip loop considered for full unrolling (ptxas unrolled 64 trips of a 2-instruction
body fully in the committed sweep, tests/data/unroll/)."""


def _trip_count(init: int, step: int, bound: int, ty: int, cmp: int) -> int | None:
    """Trips of ``do { ...; i += step; } while (i CMP bound)`` from ``i = init`` in ``ty``'s arithmetic."""
    bits = 8 * c.TYPE_BYTES[ty]
    mask = (1 << bits) - 1
    signed = c.TYPE_SIGNED[ty] and cmp in (c.CMP_LT, c.CMP_LE)

    def value(v: int) -> int:
        v &= mask
        return v - (1 << bits) if signed and v >> (bits - 1) else v

    i, limit = value(init), value(bound)
    for trips in range(1, MAX_FULL_TRIPS + 1):
        nxt = value(i + step)
        if (step > 0) != (nxt > i) and cmp != c.CMP_NE:
            return None                  # wrapped around: leave the loop alone
        i = nxt
        going = {c.CMP_LT: i < limit, c.CMP_LO: i < limit, c.CMP_LE: i <= limit, c.CMP_LS: i <= limit,
                 c.CMP_NE: i != limit}[cmp]
        if not going:
            return trips
    return None


def _fully_unrolled(kernel, block, plan) -> Block:
    """``trips`` copies of the body without the compare and the branch: induction pointers step their
    accesses' offsets and are advanced once at the end, unless that value is dead (``fresh``: read nowhere
    else, and set again by the block before, the loop's only entry); other temporaries renamed per copy."""
    insts = block.insts
    inductions = plan["inductions"]
    temps = _temporaries(kernel, block, set(inductions) | {plan["i"]})
    names = kernel.program.reg_names + kernel.extra_regs
    skip = {plan["setp"], len(insts) - 1} | {at for at, _ in inductions.values()}
    counter = _constant_counter(kernel, block, plan)
    if counter is not None:
        skip.add(plan["i_add"])
    out = Block()
    kept = [k for k in range(len(insts)) if k not in skip]
    for j in range(plan["trips"]):
        _emit_copy(kernel, insts, kept, j, temps, names, inductions, out, counter)
    stepped = dict(inductions)
    if counter is not None:
        stepped[plan["i"]] = (plan["i_add"], plan["step"])
    for r, (at, step) in sorted(stepped.items(), key=lambda item: item[1][0]):
        if r in plan["fresh"] or r == plan["i"] and counter is not None and counter["fresh"]:
            continue
        row = insts[at].row.copy()
        for s in range(int(row[L.F_NSRC])):
            if int(row[L.F_SK0 + 2 * s]) == L.SK_IMM:
                row[L.F_SK0 + 2 * s + 1] = immediate_field(plan["trips"] * step, 8 * c.TYPE_BYTES[int(row[L.F_TY])])
        out.insts.append(_clone(insts[at], row))
    return out


def _constant_counter(kernel, block, plan) -> dict | None:
    """How copies read the counter ``i`` of a fully unrolled loop as an immediate, as ptxas's copies do
    (``k * 133`` of copy 3 is the constant 399, which then folds into an address offset): when every read of
    ``i`` in the body, besides its compare and its own add, is an ALU operand of ``i``'s width. Then each copy
    reads ``init + j * step`` (``+ step`` after the add), the adds go, and one add of ``trips`` steps ends
    the loop unless ``i`` is read nowhere else (``fresh``). None when some read needs the register."""
    i, at = plan["i"], plan["i_add"]
    if i in plan["inductions"]:
        return None
    width = c.TYPE_BYTES[int(block.insts[at].row[L.F_TY])]
    reads = 0
    for k, inst in enumerate(block.insts[:-1]):
        if k in (plan["setp"], at) or i not in deps.reads(inst.row):
            continue
        slots, other = immediate_slots(inst.row, i, width)
        if other or not slots:
            return None
        reads += 1
    if reads == 0:
        return None
    return {"reg": i, "at": at, "init": plan["init"], "step": plan["step"], "width": width,
            "fresh": _reads_anywhere(kernel, i, outside=block) == 0}


def _emit_copy(kernel, insts: list, kept: list[int], j: int, temps, names, inductions: dict, out,
               counter: dict | None = None) -> None:
    """Append copy ``j`` of the loop body's instructions ``kept`` to ``out``: copies after the first write
    fresh names for the body's temporaries, memory offsets off an induction pointer move by ``j`` steps
    (one more for an access after the pointer's own step), and a ``counter`` read as an immediate (see
    :func:`_constant_counter`) is that copy's value."""
    mapping = {} if j == 0 else {r: _new_reg(kernel, f"{names[r]}$u{j}") for r in sorted(temps)}
    for k in kept:
        inst = insts[k]
        row = inst.row.copy()
        base = int(row[L.F_ABASE])
        if int(row[L.F_OP]) in _MEM and base in inductions:
            at, step = inductions[base]
            row[L.F_AOFF] = int(row[L.F_AOFF]) + (j + (1 if k > at else 0)) * step
        if counter is not None and counter["reg"] in deps.reads(row):
            value = counter["init"] + (j + (1 if k > counter["at"] else 0)) * counter["step"]
            for s in immediate_slots(row, counter["reg"], counter["width"])[0]:
                row[L.F_SK0 + 2 * s] = L.SK_IMM
                row[L.F_SK0 + 2 * s + 1] = immediate_field(value, 8 * counter["width"])
        _rename(row, mapping)
        out.insts.append(_clone(inst, row))
