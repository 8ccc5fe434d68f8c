"""Lowering of the tensor-core instructions (issue 14): ``mma.sync``, ``ldmatrix``/``stmatrix``,
``cp.async`` and its groups, and the WMMA family (``wmma.load``/``wmma.mma``/``wmma.store``).

Each becomes one code row (columns in ``gpusim.arch.layout``): destinations and sources are the fragment
registers in PTX order (so the scoreboard sees every one), the shape and the operand types go in the
tensor columns ``F_TC_*``. What the engine does with them is ``gpusim.engine.semantics.tensor``; the
fragment layouts and the numerics are in docs/tensor-cores.md. Anything outside the supported set stops
here with ``UnsupportedPTXError`` naming the line, as does a form the module's ``.target`` cannot run.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L
from gpusim.errors import UnsupportedPTXError
from gpusim.ptx import ast
from gpusim.ptx.lower_common import OperandLowering, _err, _expect_operands, _reg_vector, _Row
from gpusim.ptx.lower_hopper import lower_bulk, lower_bulk_prefetch, lower_bulk_reduce, lower_cp_async_arrive
from gpusim.ptx.lower_tma import lower_tensor_copy
from gpusim.ptx.lower_wgmma import lower_wgmma

TENSOR_OPCODES = ("mma", "ldmatrix", "stmatrix", "cp", "wmma", "wgmma")

_ELEMENT_BITS = {c.T_F16: 16, c.T_BF16: 16, c.T_TF32: 32, c.T_F32: 32, c.T_S32: 32, c.T_S8: 8, c.T_U8: 8,
                 c.T_E4M3: 8, c.T_E5M2: 8}
_IGNORED = {".sync", ".aligned"}
_SHAPES = {".m16n8k8": (16, 8, 8), ".m16n8k16": (16, 8, 16), ".m16n8k32": (16, 8, 32),
           ".m16n16k16": (16, 16, 16), ".m32n8k16": (32, 8, 16), ".m8n32k16": (8, 32, 16),
           ".m16n16k8": (16, 16, 8)}
# mma.sync: (shape, input class) -> smallest sm; input class f16 covers bf16
_MMA_INPUTS = {
    ((16, 8, 8), "f16"): 80, ((16, 8, 16), "f16"): 80, ((16, 8, 8), "tf32"): 80,
    ((16, 8, 32), "int8"): 80, ((16, 8, 32), "fp8"): 89,
}
_INPUT_CLASS = {c.T_F16: "f16", c.T_BF16: "f16", c.T_TF32: "tf32", c.T_S8: "int8", c.T_U8: "int8",
                c.T_E4M3: "fp8", c.T_E5M2: "fp8"}
_WMMA_INPUTS = {
    ((16, 16, 16), "f16"): 70, ((32, 8, 16), "f16"): 70, ((8, 32, 16), "f16"): 70,
    ((16, 16, 8), "tf32"): 80,
    ((16, 16, 16), "int8"): 72, ((32, 8, 16), "int8"): 72, ((8, 32, 16), "int8"): 72,
}
_MMA_FORM = {
    ((16, 8, 16), "f16", False): "mma.m16n8k16.f16", ((16, 8, 16), "f16", True): "mma.m16n8k16.f16.f16acc",
    ((16, 8, 8), "f16", False): "mma.m16n8k8.f16", ((16, 8, 8), "f16", True): "mma.m16n8k8.f16.f16acc",
    ((16, 8, 8), "tf32", False): "mma.m16n8k8.tf32", ((16, 8, 32), "int8", False): "mma.m16n8k32.int8",
    ((16, 8, 32), "fp8", False): "mma.m16n8k32.fp8", ((16, 8, 32), "fp8", True): "mma.m16n8k32.fp8.f16acc",
}
_WMMA_FORM = {("f16", False): "wmma.mma.f16", ("f16", True): "wmma.mma.f16.f16acc",
              ("tf32", False): "wmma.mma.tf32", ("int8", False): "wmma.mma.int8"}


def shape_code(m: int, n: int, k: int) -> int:
    """The F_TC_SHAPE value of an m x n x k shape (m << 16 | n << 8 | k)."""
    return (m << 16) | (n << 8) | k


def _target_sm(fl) -> int:
    target = getattr(getattr(fl, "module", None), "target", None) or "sm_90"
    digits = "".join(ch for ch in target if ch.isdigit())
    return int(digits) if digits else 90


def _split(ins: ast.Instruction) -> tuple[list[str], list[int], tuple[int, int, int] | None, set[str]]:
    """(other modifiers, type codes in order, shape, layout words) of a tensor instruction."""
    words: list[str] = []
    types: list[int] = []
    shape: tuple[int, int, int] | None = None
    layouts: set[str] = set()
    for mod in ins.mods:
        if mod in _IGNORED:
            continue
        if mod in _SHAPES:
            shape = _SHAPES[mod]
        elif mod[1:] in c.TYPE_CODES:
            types.append(c.TYPE_CODES[mod[1:]])
        else:
            words.append(mod)
    return words, types, shape, layouts


def _require_sm(fl, ins: ast.Instruction, needed: int, what: str) -> None:
    have = _target_sm(fl)
    if have < needed:
        raise _err(ins, f"{what} needs sm_{needed} or later; this module's .target is sm_{have}", unsupported=True)


def lower_tensor(fl: OperandLowering, ins: ast.Instruction, b: _Row, label_pc: dict) -> None:
    """Lower one tensor-core instruction into ``b``."""
    op = ins.opcode
    if op == "mma":
        _lower_mma(fl, ins, b)
    elif op in ("ldmatrix", "stmatrix"):
        _lower_ldmatrix(fl, ins, b, op == "stmatrix")
    elif op == "cp":
        _lower_cp_async(fl, ins, b)
    elif op == "wgmma":
        lower_wgmma(fl, ins, b)
    else:
        _lower_wmma(fl, ins, b)


def _layouts(ins: ast.Instruction, words: list[str]) -> list[str]:
    found = [w for w in words if w in (".row", ".col")]
    for w in found:
        words.remove(w)
    return found


def _reject(ins: ast.Instruction, words: list[str]) -> None:
    if words:
        raise _err(ins, f"modifier(s) {' '.join(words)} not supported on '{ins.opcode}' (see docs/tensor-cores.md)",
                   unsupported=True)


def _lower_mma(fl, ins: ast.Instruction, b: _Row) -> None:
    row = b.row
    words, types, shape, _ = _split(ins)
    layouts = _layouts(ins, words)
    saturate = ".satfinite" in words
    if saturate:
        words.remove(".satfinite")
    _reject(ins, words)
    if shape is None or len(types) != 4:
        raise _err(ins, "mma needs a shape (.m16n8k16 ...) and four types .dtype.atype.btype.ctype",
                   unsupported=shape is not None)
    dty, aty, bty, cty = types
    klass = _INPUT_CLASS.get(aty, "")         # "": no tensor input class (rejected below)
    key = (shape, klass)
    if key not in _MMA_INPUTS or _INPUT_CLASS.get(bty) != klass or (klass != "fp8" and klass != "int8"
                                                                     and aty != bty):
        raise _err(ins, f"mma.sync {ins.text.split()[0]} is not supported: gpusim models m16n8k8/m16n8k16 "
                   "f16/bf16, m16n8k8 tf32, m16n8k32 s8/u8 and e4m3/e5m2 (docs/tensor-cores.md)", unsupported=True)
    if layouts != [".row", ".col"]:
        raise _err(ins, f"mma.sync {'.'.join(x[1:] for x in layouts) or '(no layout)'}: these shapes take "
                   ".row.col only", unsupported=True)
    int_path = klass == "int8"
    if int_path and (dty != c.T_S32 or cty != c.T_S32):
        raise _err(ins, "integer mma accumulates in .s32 (d and c types must be s32)")
    if not int_path and (dty not in (c.T_F32, c.T_F16) or cty not in (c.T_F32, c.T_F16)):
        raise _err(ins, "floating-point mma accumulates in .f32 or .f16")
    if klass == "tf32" and (dty != c.T_F32 or cty != c.T_F32):
        raise _err(ins, "tf32 mma accumulates in .f32 only")
    if saturate and not int_path:
        raise _err(ins, ".satfinite is only supported on integer mma here", unsupported=True)
    _require_sm(fl, ins, _MMA_INPUTS[key], f"mma.sync {klass} {'m{}n{}k{}'.format(*shape)}")
    m, n, k = shape
    na = m * k * _ELEMENT_BITS[aty] // 1024
    nb = k * n * _ELEMENT_BITS[bty] // 1024
    nc = 4 if cty in (c.T_F32, c.T_S32) else 2
    nd = 4 if dty in (c.T_F32, c.T_S32) else 2
    _expect_operands(ins, 4)
    b.set_dsts(_reg_vector(fl, ins, ins.operands[0], nd, "d"))
    for operand, count, what in ((ins.operands[1], na, "a"), (ins.operands[2], nb, "b"), (ins.operands[3], nc, "c")):
        for reg in _reg_vector(fl, ins, operand, count, what):
            b.add_src((L.SK_REG, reg))
    row[L.F_OP] = c.OP_MMA
    row[L.F_TY] = dty
    row[L.F_TY2] = aty
    row[L.F_TC_BTYPE] = bty
    row[L.F_TC_CTYPE] = cty
    row[L.F_TC_SHAPE] = shape_code(m, n, k)
    row[L.F_MODS] = c.MOD_SAT if saturate else 0
    row[L.F_ISA] = isa.isa_row(c.OP_MMA, c.T_NONE, _MMA_FORM[(shape, klass, dty == c.T_F16)])


def _lower_ldmatrix(fl, ins: ast.Instruction, b: _Row, store: bool) -> None:
    row = b.row
    words, types, _, _ = _split(ins)
    words = [w for w in words if w not in (".shared", ".shared::cta")]
    count = {".x1": 1, ".x2": 2, ".x4": 4}
    found = [w for w in words if w in count]
    trans = ".trans" in words
    words = [w for w in words if w not in count and w != ".trans" and w != ".m8n8"]
    if len(found) != 1 or ".m8n8" not in ins.mods or types != [c.T_B16]:
        raise _err(ins, f"{ins.opcode} needs .m8n8, one of .x1 .x2 .x4 and .b16 (the shapes gpusim models)",
                   unsupported=True)
    _reject(ins, words)
    _require_sm(fl, ins, 90 if store else 75, ins.opcode)
    num = count[found[0]]
    _expect_operands(ins, 2)
    regs_operand, address = (ins.operands[1], ins.operands[0]) if store else (ins.operands[0], ins.operands[1])
    regs = _reg_vector(fl, ins, regs_operand, num, "the matrix registers")
    base, offset, space = fl.address(ins, address)
    if space not in (None, L.SP_SHARED):
        raise _err(ins, f"{ins.opcode} addresses shared memory")
    if store:
        for reg in regs:
            b.add_src((L.SK_REG, reg))
    else:
        b.set_dsts(regs)
    row[L.F_OP] = c.OP_STMATRIX if store else c.OP_LDMATRIX
    row[L.F_ABASE] = base
    row[L.F_AOFF] = offset
    row[L.F_SPACE] = L.SP_SHARED
    row[L.F_TC_COUNT] = num
    row[L.F_TC_FLAGS] = L.TC_TRANS if trans else 0
    if base >= 0 and fl.reg_bits(base) == 32:
        row[L.F_MODS] |= L.MEM_ADDR32
    row[L.F_ISA] = isa.isa_row(row[L.F_OP], c.T_NONE, ins.opcode)


def _lower_cp_async(fl, ins: ast.Instruction, b: _Row) -> None:
    row = b.row
    mods = [m for m in ins.mods if not m.startswith(".L2::") and m != ".L1::no_allocate"]
    if mods[:3] == [".reduce", ".async", ".bulk"]:
        if ".tensor" in mods:
            lower_tensor_copy(fl, ins, b, mods[3:], reduce=True)
        else:
            lower_bulk_reduce(fl, ins, b, mods[3:])
        return
    if not mods or mods[0] != ".async":
        raise _err(ins, f"'cp{''.join(ins.mods)}' is not supported (only cp.async, cp.async.bulk and "
                   "cp.reduce.async.bulk)", unsupported=True)
    rest = mods[1:]
    if rest[:1] == [".bulk"] and (".tensor" in rest or ".prefetch" in rest):
        if ".tensor" in rest:
            lower_tensor_copy(fl, ins, b, rest[1:])
        else:
            lower_bulk_prefetch(fl, ins, b, rest[1:])
        return
    if rest and rest[0] == ".bulk":
        lower_bulk(fl, ins, b, rest[1:])
        return
    _require_sm(fl, ins, 80, "cp.async")
    if rest[:2] == [".mbarrier", ".arrive"]:
        lower_cp_async_arrive(fl, ins, b, rest[2:])
        return
    if rest == [".commit_group"]:
        _expect_operands(ins, 0)
        row[L.F_OP] = c.OP_CP_COMMIT
        row[L.F_ISA] = isa.isa_row(c.OP_CP_COMMIT, c.T_NONE, "cp.async.commit_group")
        return
    if rest in ([".wait_group"], [".wait_all"]):
        row[L.F_OP] = c.OP_CP_WAIT
        if rest == [".wait_all"]:
            _expect_operands(ins, 0)
            row[L.F_TC_FLAGS] = L.TC_WAIT_ALL
        else:
            _expect_operands(ins, 1)
            n = ins.operands[0]
            if not isinstance(n, ast.Imm) or not isinstance(n.value, int) or not 0 <= n.value <= 1 << 20:
                raise _err(ins, "cp.async.wait_group takes an integer constant N >= 0")
            row[L.F_AUX] = n.value
        row[L.F_ISA] = isa.isa_row(c.OP_CP_WAIT, c.T_NONE, "cp.async.wait_group")
        return
    kind = [w for w in rest if w in (".ca", ".cg")]
    others = [w for w in rest if w not in (".ca", ".cg", ".shared", ".shared::cta", ".global")]
    if len(kind) != 1 or others or ".global" not in rest:
        raise _err(ins, f"'cp{''.join(ins.mods)}': gpusim models cp.async.ca/.cg.shared.global (with "
                   "commit_group / wait_group / wait_all)", unsupported=True)
    _expect_operands(ins, (3, 4))
    size_operand = ins.operands[2]
    if not isinstance(size_operand, ast.Imm) or size_operand.value not in (4, 8, 16):
        raise _err(ins, "cp.async copies 4, 8 or 16 bytes (an integer constant)")
    size = int(size_operand.value)
    if kind[0] == ".cg" and size != 16:
        raise _err(ins, "cp.async.cg copies 16 bytes")
    dst_base, dst_offset, dst_space = fl.address(ins, ins.operands[0])
    src_base, src_offset, src_space = fl.address(ins, ins.operands[1])
    if dst_space not in (None, L.SP_SHARED) or src_space not in (None, L.SP_GLOBAL):
        raise _err(ins, "cp.async copies from .global to .shared")
    row[L.F_OP] = c.OP_CP_ASYNC
    row[L.F_ABASE] = dst_base
    row[L.F_AOFF] = dst_offset
    row[L.F_SPACE] = L.SP_SHARED
    row[L.F_SIZE] = size
    if dst_base >= 0 and fl.reg_bits(dst_base) == 32:
        row[L.F_MODS] |= L.MEM_ADDR32
    b.add_src((L.SK_REG, src_base) if src_base >= 0 else (L.SK_IMM, 0))
    row[L.F_TC_SRC_OFFSET] = src_offset
    if len(ins.operands) == 4:
        b.add_src(fl.src(ins, ins.operands[3], c.T_U32))
    else:
        b.add_src((L.SK_IMM, size))
    row[L.F_TC_FLAGS] = L.TC_BYPASS_L1 if kind[0] == ".cg" else 0
    row[L.F_ISA] = isa.isa_row(c.OP_CP_ASYNC, c.T_NONE, "cp.async")


def _wmma_matrix_dims(which: str, shape: tuple) -> tuple[int, int]:
    m, n, k = shape
    return {"a": (m, k), "b": (k, n), "c": (m, n), "d": (m, n)}[which]


def wmma_fragment_registers(which: str, shape: tuple, ty: int) -> int:
    """Registers per lane of a WMMA fragment (PTX ISA, "Matrix Fragments for WMMA"): f16 A and B are 8
    .f16x2 for every shape, f16 accumulators 4 .f16x2, the rest hold rows x cols / 32 elements."""
    if ty == c.T_F16 and which in ("a", "b"):
        return 8
    if ty == c.T_F16:
        return 4
    rows, cols = _wmma_matrix_dims(which, shape)
    return rows * cols * _ELEMENT_BITS[ty] // (32 * 32)


def _lower_wmma(fl, ins: ast.Instruction, b: _Row) -> None:
    row = b.row
    words, types, shape, _ = _split(ins)
    if not words or words[0] not in (".load", ".store", ".mma"):
        raise _err(ins, f"'wmma{''.join(ins.mods)}' is not supported", unsupported=True)
    kind = words.pop(0)
    if shape is None:
        raise _err(ins, "wmma needs a shape (.m16n16k16, .m32n8k16, .m8n32k16, .m16n16k8)")
    if kind == ".mma":
        _lower_wmma_mma(fl, ins, b, words, types, shape)
        return
    which = words.pop(0) if words and words[0] in (".a", ".b", ".c", ".d") else None
    if which is None or (kind == ".load") == (which == ".d"):
        raise _err(ins, f"wmma{kind} needs {'.a, .b or .c' if kind == '.load' else '.d'}")
    layouts = _layouts(ins, words)
    space = L.SP_GENERIC
    for w in list(words):
        if w in (".global", ".shared", ".shared::cta"):
            space = L.SP_SHARED if w.startswith(".shared") else L.SP_GLOBAL
            words.remove(w)
    _reject(ins, words)
    if len(layouts) != 1 or len(types) != 1:
        raise _err(ins, f"wmma{kind}{which} needs one layout (.row or .col) and one type")
    ty = types[0]
    ok = {c.T_F16, c.T_BF16, c.T_TF32, c.T_S8, c.T_U8} if which in (".a", ".b") else {c.T_F16, c.T_F32, c.T_S32}
    if ty not in ok:
        raise _err(ins, f"wmma{kind}{which}.{c.TYPE_NAMES.get(ty, '?')} is not supported", unsupported=True)
    klass = _INPUT_CLASS.get(ty, "f16" if ty in (c.T_F32,) else "int8" if ty == c.T_S32 else "f16")
    if which in (".a", ".b") and (shape, klass) not in _WMMA_INPUTS:
        raise _err(ins, f"wmma shape {'m{}n{}k{}'.format(*shape)} with .{c.TYPE_NAMES[ty]} is not supported",
                   unsupported=True)
    if shape not in ((16, 16, 16), (32, 8, 16), (8, 32, 16), (16, 16, 8)):
        raise _err(ins, "unsupported wmma shape", unsupported=True)
    nregs = wmma_fragment_registers(which[1:], shape, ty)
    store = kind == ".store"
    _expect_operands(ins, (2, 3))
    regs_operand, address = (ins.operands[1], ins.operands[0]) if store else (ins.operands[0], ins.operands[1])
    regs = _reg_vector(fl, ins, regs_operand, nregs, f"the {which[1:]} fragment")
    base, offset, sym_space = fl.address(ins, address)
    if space == L.SP_GENERIC and sym_space is not None:
        space = sym_space
    if store:
        for reg in regs:
            b.add_src((L.SK_REG, reg))
    else:
        b.set_dsts(regs)
    rows, cols = _wmma_matrix_dims(which[1:], shape)
    if len(ins.operands) == 3:
        b.add_src(fl.src(ins, ins.operands[2], c.T_U32))
    else:      # no stride: the matrix is packed
        b.add_src((L.SK_IMM, cols if layouts[0] == ".row" else rows))
    row[L.F_OP] = c.OP_WMMA_STORE if store else c.OP_WMMA_LOAD
    row[L.F_TY] = ty
    row[L.F_ABASE] = base
    row[L.F_AOFF] = offset
    row[L.F_SPACE] = space
    row[L.F_SIZE] = _ELEMENT_BITS[ty] // 8
    row[L.F_TC_SHAPE] = shape_code(rows, cols, 0)
    row[L.F_TC_COUNT] = nregs
    row[L.F_TC_FLAGS] = L.TC_COL_MAJOR if layouts[0] == ".col" else 0
    if base >= 0 and space in (L.SP_SHARED,) and fl.reg_bits(base) == 32:
        row[L.F_MODS] |= L.MEM_ADDR32
    variant = ("wmma.store" if store else "wmma.load") + (".shared" if space == L.SP_SHARED else "")
    row[L.F_ISA] = isa.isa_row(row[L.F_OP], c.T_NONE, variant)


def _lower_wmma_mma(fl, ins: ast.Instruction, b: _Row, words: list, types: list,
                    shape: tuple[int, int, int]) -> None:
    row = b.row
    layouts = _layouts(ins, words)
    saturate = ".satfinite" in words
    if saturate:
        words.remove(".satfinite")
    _reject(ins, words)
    if len(layouts) != 2:
        raise _err(ins, "wmma.mma needs two layouts (.row/.col for a and b)")
    if len(types) == 2:            # .dtype.ctype: f16 inputs
        dty, cty = types
        aty = bty = c.T_F16
    elif len(types) == 4:
        dty, aty, bty, cty = types
    else:
        raise _err(ins, "wmma.mma needs .dtype.ctype (f16 inputs) or .dtype.atype.btype.ctype")
    klass = _INPUT_CLASS.get(aty, "")         # "": no tensor input class (rejected below)
    if (shape, klass) not in _WMMA_INPUTS or _INPUT_CLASS.get(bty) != klass:
        raise _err(ins, f"wmma.mma {'m{}n{}k{}'.format(*shape)} with these types is not supported", unsupported=True)
    int_path = klass == "int8"
    accumulators = (c.T_S32,) if int_path else (c.T_F32, c.T_F16)
    if dty not in accumulators or cty not in accumulators:
        raise _err(ins, "wmma.mma: integer inputs accumulate in .s32, float inputs in .f32/.f16")
    _require_sm(fl, ins, _WMMA_INPUTS[(shape, klass)], "wmma.mma")
    na = wmma_fragment_registers("a", shape, aty)
    nb = wmma_fragment_registers("b", shape, bty)
    nc = wmma_fragment_registers("c", shape, cty)
    nd = wmma_fragment_registers("d", shape, dty)
    _expect_operands(ins, 4)
    b.set_dsts(_reg_vector(fl, ins, ins.operands[0], nd, "d"))
    for operand, count, what in ((ins.operands[1], na, "a"), (ins.operands[2], nb, "b"), (ins.operands[3], nc, "c")):
        for reg in _reg_vector(fl, ins, operand, count, what):
            b.add_src((L.SK_REG, reg))
    m, n, k = shape
    row[L.F_OP] = c.OP_WMMA_MMA
    row[L.F_TY] = dty
    row[L.F_TY2] = aty
    row[L.F_TC_BTYPE] = bty
    row[L.F_TC_CTYPE] = cty
    row[L.F_TC_SHAPE] = shape_code(m, n, k)
    row[L.F_TC_COUNT] = na | (nb << 8) | (nc << 16) | (nd << 24)
    row[L.F_MODS] = c.MOD_SAT if saturate else 0
    row[L.F_ISA] = isa.isa_row(c.OP_WMMA_MMA, c.T_NONE, _WMMA_FORM[(klass, dty == c.T_F16)])


def check_tensor_support(program, config) -> None:
    """Refuse (UnsupportedPTXError naming the line) a kernel whose tensor instructions ``config``'s GPU
    does not have: an mma/wmma class whose interval is 0 in the config (e.g. every class on sm_70), a bulk
    copy or elect.sync below compute capability 9.0."""
    code = program.code
    if not program.n_inst or code[:, L.F_ISA].max() < isa.FIRST_TENSOR_FORM:
        return
    sm = int(config.compute_capability.replace(".", ""))
    for pc in range(program.n_inst):
        form = isa.FORMS[int(code[pc, L.F_ISA])]
        hopper = form.name in ("cp.async.bulk", "elect") or int(code[pc, L.F_TC_FLAGS]) & L.TC_BULK and \
            form.op in (c.OP_CP_COMMIT, c.OP_CP_WAIT)
        if hopper and sm < 90:
            raise UnsupportedPTXError(
                f"{program.texts[pc].split()[0]} is not available on {config.name} (compute capability "
                f"{config.compute_capability}; it needs 9.0); see docs/tensor-cores.md", program.file,
                int(program.lines[pc]), 0, program.texts[pc])
        if form.interval is not None and int(getattr(config, form.interval)) == 0:
            raise UnsupportedPTXError(
                f"{form.name} is not available on {config.name} (compute capability {config.compute_capability}: "
                f"the config's {form.interval} is 0); see docs/tensor-cores.md", program.file,
                int(program.lines[pc]), 0, program.texts[pc])
