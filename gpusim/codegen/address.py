"""Address folding: the address arithmetic of an array access in SASS's forms.

What ptxas does: ``a + i * 4`` is one IMAD.WIDE (``mul.wide.s32`` + ``add.s64`` in PTX) or one LEA
(``shl.b64`` + ``add.s64``), and a constant offset folds into the load or store (``LDG.E R0,
[R2.64+0x80]``), so an access costs one address instruction, or none after the first in a row of
accesses off one base.

What is modelled (each rewrite only where the intermediate register is written once and read only
by the instructions it folds into, and those read the operands' values: either the operands are
written once in the kernel and the definition is unguarded -- a loop's ``p += stride * 4`` then
becomes one IMAD.WIDE, as in ptxas's SASS of programs/matmul_naive -- or the readers are later in
the same block, under the same guard, with the operands not written in between):

* ``mul.wide.{s,u}32 t, a, b`` + ``add.s64 d, base, t`` -> ``mad.wide.{s,u}32 d, a, b, base``
  (one per add when several adds read ``t``: ptxas recomputes an IMAD.WIDE per array rather than
  keep the 64-bit offset in two registers);
* ``shl.b64 t, a, k`` + ``add.s64 d, base, t`` -> ``mad.lo.s64 d, a, 2**k, base`` (a 64-bit LEA,
  two SASS instructions), ``shl.b32`` + ``add.s32`` -> ``mad.lo.s32`` (one LEA);
* ``add.s64 d, r, imm`` read only as the base of loads and stores -> those accesses use
  ``[r + imm + offset]`` and the add goes (``r`` written once, so it holds the same value there).

The results are bit-identical: two's-complement products and sums modulo 2**64.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L
from gpusim.codegen import deps
from gpusim.codegen.fold import definitions, immediate_field
from gpusim.ptx.lower import MAX_ADDRESS_OFFSET

_MEM = (c.OP_LD, c.OP_ST, c.OP_ATOM, c.OP_RED, c.OP_PREFETCH)


def _mul_kind(row) -> int:
    return (int(row[L.F_MODS]) >> c.MOD_MUL_SHIFT) & c.MOD_MUL_MASK


def _readers(kernel) -> dict[int, list]:
    out: dict[int, list] = {}
    for block in kernel.blocks:
        for inst in block.insts:
            for r in deps.reads(inst.row):
                out.setdefault(r, []).append(inst)
    return out


def fold_addresses(kernel) -> int:
    """Rewrite in place; returns the number of instructions removed."""
    defs = definitions(kernel)
    readers = _readers(kernel)
    removed = 0
    where = {id(inst): (b, k) for b, block in enumerate(kernel.blocks) for k, inst in enumerate(block.insts)}
    dead: set[int] = set()
    for b, block in enumerate(kernel.blocks):
        for k, inst in enumerate(block.insts):
            row = inst.row
            if row[L.F_NDST] != 1 or row[L.F_NSRC] < 2:
                continue
            t = int(row[L.F_DST0])
            users = readers.get(t, [])
            if t < 0 or defs.get(t) != 1 or not users or t in deps.reads(row) or \
                    any(id(u) in dead for u in users):
                continue
            operands = deps.sources(row)
            regs = {v for kind, v in operands if kind in (L.SK_REG, L.SK_REGNEG)}
            # stable: the operands hold one value in the whole kernel, and the definition always runs
            stable = row[L.F_GUARD] < 0 and all(defs.get(r, 0) == 1 for r in regs)
            if not stable:
                if any(where[id(u)][0] != b or where[id(u)][1] <= k or not _same_guard(u.row, row) for u in users):
                    continue
                last = max(where[id(u)][1] for u in users)
                if not _unchanged(block.insts, k, last, regs):
                    continue
            if _fold(row, t, users, operands):
                dead.add(id(inst))
    for block in kernel.blocks:
        removed += sum(id(i) in dead for i in block.insts)
        block.insts = [i for i in block.insts if id(i) not in dead]
    return removed


def _same_guard(a, b) -> bool:
    """Both unguarded, or guarded by the same predicate the same way (an unguarded user of a guarded
    definition would read a value the definition did not always write)."""
    if a[L.F_GUARD] < 0 and b[L.F_GUARD] < 0:
        return True
    return a[L.F_GUARD] == b[L.F_GUARD] and a[L.F_GUARD_NEG] == b[L.F_GUARD_NEG] and \
        int(a[L.F_GUARD]) not in deps.writes(b)


def _unchanged(insts: list, start: int, stop: int, regs: set) -> bool:
    """No instruction strictly between positions ``start`` and ``stop`` writes one of ``regs``."""
    return not any(deps.writes(insts[j].row) & regs for j in range(start + 1, stop))


def _fold(row, t: int, users: list, operands: list) -> bool:
    op = int(row[L.F_OP])
    ty = int(row[L.F_TY])
    if op == c.OP_ADD and c.TYPE_BYTES[ty] == 8 and not c.TYPE_FLOAT[ty]:
        return row[L.F_GUARD] < 0 and _fold_offset(row, t, users, operands)
    a, b = operands[0], operands[1]
    if op == c.OP_MUL and _mul_kind(row) == c.MUL_WIDE and c.TYPE_BYTES[ty] == 4:
        form, width, result_bytes = (ty, c.MUL_WIDE, 8)
    elif op == c.OP_SHL and c.TYPE_BYTES[ty] in (4, 8) and b[0] == L.SK_IMM and 0 <= b[1] < 8 * c.TYPE_BYTES[ty] - 1:
        form, width, result_bytes = (c.T_S64 if c.TYPE_BYTES[ty] == 8 else c.T_S32, c.MUL_LO, c.TYPE_BYTES[ty])
        b = (L.SK_IMM, 1 << b[1])
    else:
        return False
    bases = []
    for user in users:
        u = user.row
        if int(u[L.F_OP]) != c.OP_ADD or c.TYPE_BYTES[int(u[L.F_TY])] != result_bytes \
                or c.TYPE_FLOAT[int(u[L.F_TY])] or u[L.F_NSRC] != 2:
            return False
        others = [s for s in deps.sources(u) if s != (L.SK_REG, t)]
        if len(others) != 1 or others[0][0] not in (L.SK_REG, L.SK_IMM):
            return False
        bases.append(others[0])
    for user, base in zip(users, bases, strict=True):     # one IMAD.WIDE / LEA per use, as ptxas does
        _make_mad(user.row, form, width, a, b, base)
    return True


def _make_mad(user, ty: int, width: int, a, b, base) -> None:
    mods = (int(user[L.F_MODS]) & ~(c.MOD_MUL_MASK << c.MOD_MUL_SHIFT)) | (width << c.MOD_MUL_SHIFT)
    user[L.F_OP] = c.OP_MAD
    user[L.F_TY] = ty
    user[L.F_MODS] = mods
    user[L.F_NSRC] = 3
    for i, (kind, value) in enumerate((a, b, base)):
        user[L.F_SK0 + 2 * i] = kind
        user[L.F_SK0 + 2 * i + 1] = value
    user[L.F_ISA] = isa.isa_row(c.OP_MAD, ty)


def _fold_offset(row, d: int, users: list, operands: list) -> bool:
    """``add.s64 d, r, imm`` read only as memory bases: fold imm into their offsets."""
    regs = [s for s in operands if s[0] == L.SK_REG]
    imms = [s for s in operands if s[0] == L.SK_IMM]
    if len(operands) != 2 or len(regs) != 1 or len(imms) != 1:
        return False
    for user in users:
        u = user.row
        if int(u[L.F_OP]) not in _MEM or u[L.F_ABASE] != d or u[L.F_GUARD] == d or \
                d in {v for k, v in deps.sources(u) if k in (L.SK_REG, L.SK_REGNEG)}:
            return False
        if not -MAX_ADDRESS_OFFSET <= int(u[L.F_AOFF]) + imms[0][1] < MAX_ADDRESS_OFFSET:
            return False
    for user in users:
        user.row[L.F_ABASE] = regs[0][1]
        user.row[L.F_AOFF] = int(user.row[L.F_AOFF]) + imms[0][1]
    return True


def reassociate_bases(kernel) -> int:
    """``t = x + K; d = t * s + c`` (or ``d = t << k``; or ``t = x * m + K``, then ``d = x * (m s) + c``) with
    ``d`` read only as memory bases: ``d = x * s + c`` and each access's offset grows by ``K * s``, as ptxas
    addresses the SGEMM ladder's unrolled rows off one register (``[R85.X4+0x1210]``) instead of one per row;
    :mod:`gpusim.codegen.cse` then merges the copies' now equal bases. ``x``, ``t`` and ``d`` are written once
    (so each holds one value), the definitions are unguarded, and the base's width is the address's (two's
    complement: ``(x + K) s + c = x s + c + K s`` modulo the width the engine adds the offset in). Returns the
    number of definitions of ``t`` left without readers and removed."""
    defs = definitions(kernel)
    readers = _readers(kernel)
    writer = {int(inst.row[L.F_DST0]): inst for block in kernel.blocks for inst in block.insts
              if inst.row[L.F_NDST] == 1 and inst.row[L.F_DST0] >= 0}
    dropped: set[int] = set()
    for d, inst in list(writer.items()):
        row = inst.row
        scale = _scaled(row)
        users = readers.get(d, [])
        if scale is None or defs.get(d) != 1 or not users or not all(_base_only(u.row, d, row) for u in users):
            continue
        t = scale[0]
        add = writer.get(t)
        if add is None or defs.get(t) != 1 or id(add) in dropped:
            continue
        linear = _plus_constant(add.row, defs)
        if linear is None or linear[1] != 1 and int(row[L.F_OP]) != c.OP_MAD:
            continue
        x, multiple, k = linear
        shift = k * scale[1]
        if any(not -MAX_ADDRESS_OFFSET <= int(u.row[L.F_AOFF]) + shift < MAX_ADDRESS_OFFSET for u in users):
            continue
        row[L.F_SK0 + 1] = x
        if multiple != 1:
            row[L.F_SK0 + 3] = immediate_field(scale[1] * multiple, 8 * c.TYPE_BYTES[int(row[L.F_TY])])
        for u in users:
            u.row[L.F_AOFF] = int(u.row[L.F_AOFF]) + shift
        readers.setdefault(x, []).append(inst)
        readers[t] = [r for r in readers.get(t, []) if r is not inst]
        if not readers[t]:
            dropped.add(id(add))
    for block in kernel.blocks:
        block.insts = [i for i in block.insts if id(i) not in dropped]
    return len(dropped)


def _scaled(row) -> tuple[int, int] | None:
    """(t, s) when ``row`` is an unguarded ``mad.lo d, t, s, c`` (``s`` an immediate, ``c`` an immediate or
    a register) or ``shl d, t, k`` (``s = 2**k``) of an integer type, ``t`` a register."""
    op, ty = int(row[L.F_OP]), int(row[L.F_TY])
    if row[L.F_GUARD] >= 0 or c.TYPE_FLOAT[ty] or c.TYPE_BYTES[ty] not in (4, 8) or int(row[L.F_MODS]) & c.MOD_SAT:
        return None
    srcs = deps.sources(row)
    if op == c.OP_MAD and _mul_kind(row) == c.MUL_LO and len(srcs) == 3 and srcs[0][0] == L.SK_REG and \
            srcs[1][0] == L.SK_IMM and srcs[2][0] in (L.SK_REG, L.SK_IMM) and srcs[2] != srcs[0]:
        return srcs[0][1], srcs[1][1]
    if op == c.OP_SHL and len(srcs) == 2 and srcs[0][0] == L.SK_REG and srcs[1][0] == L.SK_IMM and \
            0 <= srcs[1][1] < 8 * c.TYPE_BYTES[ty] - 1:
        return srcs[0][1], 1 << srcs[1][1]
    return None


def _base_only(user, d: int, definition) -> bool:
    """``user`` reads ``d`` only as the base of a memory access whose address has ``d``'s width."""
    if int(user[L.F_OP]) not in _MEM or user[L.F_ABASE] != d or user[L.F_GUARD] == d or \
            d in {v for k, v in deps.sources(user) if k in (L.SK_REG, L.SK_REGNEG)}:
        return False
    addr32 = (int(user[L.F_MODS]) & L.MEM_ADDR32) != 0
    return c.TYPE_BYTES[int(definition[L.F_TY])] == (4 if addr32 else 8)


def _plus_constant(row, defs: dict) -> tuple[int, int, int] | None:
    """(x, m, K) when ``row`` is an unguarded integer ``add t, x, K`` (either order; m = 1) or ``mad.lo t, x,
    m, K`` (m and K immediates), with ``x`` a register written once."""
    ty = int(row[L.F_TY])
    op = int(row[L.F_OP])
    if op not in (c.OP_ADD, c.OP_MAD) or row[L.F_GUARD] >= 0 or c.TYPE_FLOAT[ty] or \
            int(row[L.F_MODS]) & c.MOD_SAT:
        return None
    srcs = deps.sources(row)
    bits = 8 * c.TYPE_BYTES[ty]
    if op == c.OP_MAD:
        if _mul_kind(row) != c.MUL_LO or len(srcs) != 3 or srcs[0][0] != L.SK_REG or \
                srcs[1][0] != L.SK_IMM or srcs[2][0] != L.SK_IMM or defs.get(srcs[0][1]) != 1:
            return None
        return srcs[0][1], _signed(srcs[1][1], bits), _signed(srcs[2][1], bits)
    regs = [v for kind, v in srcs if kind == L.SK_REG]
    imms = [v for kind, v in srcs if kind == L.SK_IMM]
    if len(srcs) != 2 or len(regs) != 1 or len(imms) != 1 or defs.get(regs[0]) != 1:
        return None
    return regs[0], 1, _signed(imms[0], bits)


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value
