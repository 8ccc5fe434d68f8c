"""Lowering of Hopper's warpgroup MMA (``wgmma``, sm_90a): ``wgmma.fence``, ``wgmma.mma_async``,
``wgmma.commit_group`` and ``wgmma.wait_group`` (PTX ISA, "Asynchronous Warpgroup Level Matrix
Instructions").

``wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype d, a, b-desc, scale-d[, imm-scale-a, imm-scale-b
[, imm-trans-a], imm-trans-b]`` becomes one ``OP_WGMMA`` row: sources are A (a 64-bit descriptor register,
or the four registers of A's fragment), B's descriptor and scale-d (a predicate, possibly negated, or a
constant); the immediates go in ``F_TC_FLAGS`` (``TC_WG_*``); the N/2 (f32, s32) or N/4 (f16) accumulator
registers are listed in the row from ``F_TC_DLIST``, 16 bits each. They are not destinations the scoreboard
tracks: the accumulators of an in-flight wgmma may not be touched until ``wgmma.wait_group`` says it is
done (PTX ISA), and that wait is what the timing model makes the warp wait for.
``wgmma.commit_group`` / ``wait_group N`` become cp.async's group rows with ``TC_WGMMA`` set (their own
groups, kept apart from cp.async's); ``wgmma.fence`` is a no-op row (gpusim writes the accumulators when the
wgmma issues, so there is no register hazard for it to order).
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L
from gpusim.ptx import ast
from gpusim.ptx.lower_common import _err, _expect_operands, _reg_vector, _Row

COMMITS_REG = "%__gpusim_wgmma_commits"

_TYPES = {".f16": c.T_F16, ".bf16": c.T_BF16, ".tf32": c.T_TF32, ".e4m3": c.T_E4M3, ".e5m2": c.T_E5M2,
          ".s8": c.T_S8, ".u8": c.T_U8, ".f32": c.T_F32, ".s32": c.T_S32}
# input class -> (K, accumulator types allowed, form class name per accumulator)
_CLASSES = {
    "f16": (16, {c.T_F32: "f16", c.T_F16: "f16.f16acc"}),
    "bf16": (16, {c.T_F32: "f16"}),
    "tf32": (8, {c.T_F32: "tf32"}),
    "fp8": (32, {c.T_F32: "fp8", c.T_F16: "fp8.f16acc"}),
    "int8": (32, {c.T_S32: "int8"}),
}
_CLASS_OF = {c.T_F16: "f16", c.T_BF16: "bf16", c.T_TF32: "tf32", c.T_E4M3: "fp8", c.T_E5M2: "fp8",
             c.T_S8: "int8", c.T_U8: "int8"}
_INT8_N = {8, 16, 24} | set(range(32, 257, 16))     # PTX ISA: .s32 accumulators take N = 8, 16, 24, 32, 48 ...
MAX_REG_INDEX = (1 << 15) - 1      # four per int64 column, the sign bit clear
WGMMA_OPCODES = ("wgmma",)


def _target_ok(fl) -> bool:
    target = getattr(getattr(fl, "module", None), "target", None) or "sm_90a"
    return target.endswith("a") and "".join(ch for ch in target if ch.isdigit()) == "90"


def lower_wgmma(fl, ins: ast.Instruction, b: _Row) -> None:
    mods = [m for m in ins.mods if m not in (".sync", ".aligned")]
    if not _target_ok(fl):
        raise _err(ins, "wgmma needs .target sm_90a (PTX ISA: the architecture-specific Hopper features)",
                   unsupported=True)
    row = b.row
    if mods in ([".fence"], [".commit_group"], [".wait_group"]):
        if mods[0] == ".fence":
            _expect_operands(ins, 0)
            row[L.F_OP] = c.OP_NOP
            row[L.F_ISA] = isa.isa_row(c.OP_NOP, c.T_NONE, "wgmma.fence")
            return
        commit = mods[0] == ".commit_group"
        row[L.F_OP] = c.OP_CP_COMMIT if commit else c.OP_CP_WAIT
        row[L.F_TC_FLAGS] = L.TC_WGMMA
        row[L.F_SIZE] = fl._reg(COMMITS_REG)    # the groups each thread committed (semantics/wgmma_groups.py)
        if commit:
            _expect_operands(ins, 0)
        else:
            _expect_operands(ins, 1)
            n = ins.operands[0]
            if not isinstance(n, ast.Imm) or not isinstance(n.value, int) or not 0 <= n.value <= 1 << 20:
                raise _err(ins, "wgmma.wait_group takes an integer constant N >= 0")
            row[L.F_AUX] = n.value
        row[L.F_ISA] = isa.isa_row(row[L.F_OP], c.T_NONE, "wgmma" + mods[0])
        return
    if not mods or mods[0] != ".mma_async":
        raise _err(ins, f"'wgmma{''.join(ins.mods)}' is not supported: gpusim models wgmma.fence, "
                   "wgmma.mma_async (dense), wgmma.commit_group and wgmma.wait_group (docs/tensor-cores.md)",
                   unsupported=True)
    _lower_mma_async(fl, ins, b, mods[1:])


def _shape(ins, word: str) -> tuple[int, int]:
    try:
        m_part, rest = word[2:].split("n", 1)
        n_part, k_part = rest.split("k", 1)
        m, n, k = int(m_part), int(n_part), int(k_part)
    except ValueError:
        raise _err(ins, f"wgmma.mma_async needs a shape .m64nNkK, found '{word}'") from None
    if m != 64 or n % 8 or not 8 <= n <= 256:
        raise _err(ins, f"wgmma shape {word[1:]}: M is 64 and N a multiple of 8 from 8 to 256", unsupported=True)
    return n, k


def _lower_mma_async(fl, ins: ast.Instruction, b: _Row, words: list[str]) -> None:
    row = b.row
    saturate = ".satfinite" in words
    words = [w for w in words if w != ".satfinite"]
    if len(words) != 4 or not words[0].startswith(".m") or any(w not in _TYPES for w in words[1:]):
        raise _err(ins, f"'wgmma{''.join(ins.mods)}' is not supported: gpusim models the dense "
                   "wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype forms (no .sp; docs/tensor-cores.md)",
                   unsupported=True)
    n, k = _shape(ins, words[0])
    dty, aty, bty = (_TYPES[w] for w in words[1:])
    klass = _CLASS_OF.get(aty)
    if klass is None or _CLASS_OF.get(bty) != klass or (klass in ("f16", "bf16", "tf32") and aty != bty):
        raise _err(ins, f"wgmma with A {words[2][1:]} and B {words[3][1:]} is not a PTX form")
    want_k, accumulators = _CLASSES[klass]
    if k != want_k or dty not in accumulators:
        raise _err(ins, f"wgmma .{words[2][1:]} takes k{want_k} and accumulators "
                   f"{' '.join(c.TYPE_NAMES[t] for t in accumulators)}", unsupported=k == want_k)
    if klass == "int8" and n not in _INT8_N:
        raise _err(ins, f"wgmma with .s32 accumulators takes N = 8, 16, 24 or a multiple of 16; found {n}")
    if saturate and klass != "int8":
        raise _err(ins, ".satfinite applies to integer wgmma only")
    half = klass in ("f16", "bf16")
    ops = ins.operands
    a_regs = len(ops) > 1 and isinstance(ops[1], ast.Vector)
    # d, a, b-desc, scale-d, then imm-scale-a, imm-scale-b (not on integer forms) and, on .f16/.bf16,
    # imm-trans-a (A from shared memory only) and imm-trans-b
    _expect_operands(ins, 4 if klass == "int8" else 6 + (0 if not half else 1 if a_regs else 2))
    nd = n // 2 if dty != c.T_F16 else n // 4
    d_regs = _reg_list(fl, ins, ops[0], nd, "the accumulators d")
    flags = 0
    if a_regs:
        for reg in _reg_list(fl, ins, ops[1], 4, "the A fragment"):
            b.add_src((L.SK_REG, reg))
        flags |= L.TC_WG_A_REGS
    else:
        b.add_src(_desc(fl, ins, ops[1], "a-desc"))
    b.add_src(_desc(fl, ins, ops[2], "b-desc"))
    b.add_src(_scale_d(fl, ins, ops[3]))
    flags |= _immediates(ins, ops[4:], half, a_regs)
    row[L.F_OP] = c.OP_WGMMA
    row[L.F_TY] = dty
    row[L.F_TY2] = aty
    row[L.F_TC_BTYPE] = bty
    row[L.F_TC_CTYPE] = dty
    row[L.F_TC_SHAPE] = (n << 8) | k
    row[L.F_TC_COUNT] = nd
    row[L.F_TC_FLAGS] = flags
    row[L.F_MODS] = c.MOD_SAT if saturate else 0
    for i, reg in enumerate(d_regs):
        row[L.F_TC_DLIST + i // 4] |= reg << (16 * (i % 4))
    form_class = accumulators[dty]
    row[L.F_ISA] = isa.isa_row(c.OP_WGMMA, c.T_NONE, isa.wgmma_form_name(form_class, n))


def _reg_list(fl, ins: ast.Instruction, operand, count: int, what: str) -> list[int]:
    """``_reg_vector``, each index within the 15 bits a row's register list holds."""
    regs = _reg_vector(fl, ins, operand, count, what, who="wgmma")
    for elem, reg in zip(operand.elems, regs, strict=True):
        if reg > MAX_REG_INDEX:
            raise _err(ins, f"gpusim lists wgmma accumulators in 15 bits: register {elem.name} is number {reg}",
                       unsupported=True)
    return regs


def _desc(fl, ins: ast.Instruction, operand, what: str) -> tuple[int, int]:
    if isinstance(operand, ast.Reg) and not operand.negated:
        return fl.src(ins, operand, c.T_U64)
    if isinstance(operand, ast.Imm) and isinstance(operand.value, int):
        return fl.src(ins, operand, c.T_U64)
    raise _err(ins, f"wgmma {what} is a 64-bit matrix descriptor (a .b64 register or constant)")


def _scale_d(fl, ins: ast.Instruction, operand) -> tuple[int, int]:
    if isinstance(operand, ast.Imm) and operand.value in (0, 1):
        return L.SK_IMM, int(operand.value)
    if isinstance(operand, ast.Reg):
        return fl.src(ins, operand, c.T_PRED)
    raise _err(ins, "wgmma scale-d is a predicate (D = A*B + D when true, A*B when false) or 0/1")


def _immediates(ins: ast.Instruction, ops, half: bool, a_regs: bool) -> int:
    values = []
    for op in ops:
        if not isinstance(op, ast.Imm) or not isinstance(op.value, int):
            raise _err(ins, "wgmma's imm-scale and imm-trans operands are integer constants")
        values.append(int(op.value))
    flags = 0
    if values:
        scale_a, scale_b = values[0], values[1]
        if scale_a not in (1, -1) or scale_b not in (1, -1):
            raise _err(ins, "wgmma imm-scale-a and imm-scale-b are 1 or -1")
        flags |= (L.TC_WG_NEG_A if scale_a == -1 else 0) | (L.TC_WG_NEG_B if scale_b == -1 else 0)
    if half:
        trans = values[2:]
        if any(t not in (0, 1) for t in trans):
            raise _err(ins, "wgmma imm-trans-a and imm-trans-b are 0 or 1")
        trans_a, trans_b = (0, trans[0]) if a_regs else (trans[0], trans[1])
        flags |= (L.TC_WG_TRANS_A if trans_a else 0) | (L.TC_WG_TRANS_B if trans_b else 0)
    return flags
