"""Lowering: a parsed PTX function becomes a :class:`Program` of numpy arrays.

Each instruction becomes one row of an int64 matrix (columns in
``gpusim.engine.layout``), registers become indices into a per-warp register
file of 64-bit slots, symbols become addresses, labels become pcs, and every
conditional branch gets its reconvergence pc (the immediate post-dominator,
from ``gpusim.ptx.cfg``). Anything the engine does not model stops here with
``UnsupportedPTXError`` naming file:line:column.

Simplifications, stated: ``.func`` bodies reached by ``call`` are not inlined
(``call`` is refused with a clear error, recursion named as such); cache and eviction hints
(``.ca``, ``.L2::evict_last`` ...) and memory-ordering qualifiers are accepted
and ignored by the functional model.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field

import numpy as np

from gpusim import isa
from gpusim.engine import codes as c
from gpusim.engine import layout as L
from gpusim.errors import PTXSyntaxError, UnsupportedPTXError
from gpusim.ptx import ast
from gpusim.ptx.cfg import reconvergence_points
from gpusim.ptx.regs import estimate_registers

_IGNORED_MODS = {
    ".nc", ".volatile", ".relaxed", ".acquire", ".release", ".acq_rel", ".sc", ".weak", ".mmio",
    ".cta", ".gpu", ".sys", ".cluster", ".ca", ".cg", ".cs", ".lu", ".cv", ".wb", ".wt",
    ".aligned", ".sync", ".uni", ".L1::evict_normal", ".L1::evict_unchanged", ".L1::evict_first",
    ".L1::evict_last", ".L1::no_allocate", ".L2::evict_normal", ".L2::evict_first", ".L2::evict_last",
    ".L2::64B", ".L2::128B", ".L2::256B", ".L2::cache_hint", ".noftz",
}
_SPACE_ALIASES = {".shared::cta": ".shared", ".shared::cluster": ".shared"}

_ALU_OPS = {
    "mov": c.OP_MOV, "add": c.OP_ADD, "sub": c.OP_SUB, "mul": c.OP_MUL, "mad": c.OP_MAD, "fma": c.OP_FMA,
    "div": c.OP_DIV, "rem": c.OP_REM, "abs": c.OP_ABS, "neg": c.OP_NEG, "min": c.OP_MIN, "max": c.OP_MAX,
    "and": c.OP_AND, "or": c.OP_OR, "xor": c.OP_XOR, "not": c.OP_NOT, "cnot": c.OP_CNOT, "shl": c.OP_SHL,
    "shr": c.OP_SHR, "popc": c.OP_POPC, "clz": c.OP_CLZ, "brev": c.OP_BREV, "bfe": c.OP_BFE,
    "bfi": c.OP_BFI, "prmt": c.OP_PRMT, "selp": c.OP_SELP, "slct": c.OP_SLCT, "setp": c.OP_SETP,
    "set": c.OP_SET, "cvt": c.OP_CVT, "rcp": c.OP_RCP, "sqrt": c.OP_SQRT, "rsqrt": c.OP_RSQRT,
    "ex2": c.OP_EX2, "lg2": c.OP_LG2, "sin": c.OP_SIN, "cos": c.OP_COS, "tanh": c.OP_TANH,
    "testp": c.OP_TESTP, "copysign": c.OP_COPYSIGN, "lop3": c.OP_LOP3, "shf": c.OP_SHF,
    "mul24": c.OP_MUL24, "mad24": c.OP_MAD24, "sad": c.OP_SAD, "bfind": c.OP_BFIND, "fns": c.OP_FNS,
}
SUPPORTED_OPCODES = sorted(set(_ALU_OPS) | {
    "ld", "ldu", "st", "atom", "red", "cvta", "prefetch", "prefetchu", "bra", "ret", "exit", "bar",
    "barrier", "membar", "fence", "nanosleep", "trap", "shfl", "vote", "activemask", "match", "redux"})

# the type of each source operand, when it differs from the instruction type
_U32_SOURCES = {  # op -> indices of sources that are u32 whatever the instruction type
    c.OP_SHL: (1,), c.OP_SHR: (1,), c.OP_BFE: (1, 2), c.OP_BFI: (2, 3), c.OP_LOP3: (3,), c.OP_SHF: (2,),
    c.OP_FNS: (0, 1, 2),
}


@dataclass
class ParamSlot:
    """One kernel parameter as laid out in the parameter buffer."""

    name: str
    type: str
    offset: int
    size: int
    is_pointer_sized: bool


@dataclass
class Program:
    """A kernel lowered for the engine."""

    name: str
    file: str
    code: np.ndarray
    n_regs: int
    reg_names: list
    params: list
    param_bytes: int
    shared_static_bytes: int
    dynamic_shared_offset: int
    local_bytes: int
    lines: list                  # PTX line number per pc
    texts: list                  # instruction text per pc
    src_lines: list              # (file path, line) per pc or None
    regs_estimate: int
    directives: dict = field(default_factory=dict)
    gpusim_regs: int | None = None

    @property
    def n_inst(self) -> int:
        return int(self.code.shape[0])


def _err(ins: ast.Instruction, message: str, unsupported: bool = False) -> PTXSyntaxError:
    cls = UnsupportedPTXError if unsupported else PTXSyntaxError
    return cls(message, ins.loc.file, ins.loc.line, ins.loc.column, ins.text)


def imm_bits(imm: ast.Imm, type_code: int) -> int:
    """Raw bits of an immediate read as ``type_code`` (two's complement for negative ints)."""
    width = c.TYPE_BYTES[type_code] * 8 if type_code != c.T_PRED else 1
    mask = (1 << 64) - 1 if width >= 64 else (1 << width) - 1
    if type_code == c.T_F32:
        if imm.kind == "f32bits":
            return int(imm.value) & 0xFFFFFFFF
        if imm.kind == "f64bits":
            value = struct.unpack("<d", struct.pack("<Q", int(imm.value)))[0]
            return struct.unpack("<I", struct.pack("<f", value))[0]
        return struct.unpack("<I", struct.pack("<f", float(imm.value)))[0]
    if type_code == c.T_F64:
        if imm.kind == "f64bits":
            return int(imm.value) & mask
        if imm.kind == "f32bits":
            value = struct.unpack("<f", struct.pack("<I", int(imm.value)))[0]
            return struct.unpack("<Q", struct.pack("<d", value))[0]
        return struct.unpack("<Q", struct.pack("<d", float(imm.value)))[0]
    if imm.kind == "float":
        value = float(imm.value)
        if not math.isfinite(value) or value != int(value):
            raise ValueError("a non-integer float literal where an integer is expected")
        return int(value) & mask
    return int(imm.value) & mask


def _signed(bits: int) -> int:
    return bits - (1 << 64) if bits >= 1 << 63 else bits


class _FunctionLowering:
    """Lowers one ``.entry`` function; holds the name tables while doing so."""

    def __init__(self, module: ast.Module, func: ast.Function, symbols: dict, shared_allocator):
        self.shared_allocator = shared_allocator
        self.module = module
        self.func = func
        self.symbols = dict(symbols)     # name -> (space code, address/offset)
        self.reg_index: dict[str, int] = {}
        self.reg_names: list[str] = []
        for name in func.regs:
            self._reg(name)
        self.params: list[ParamSlot] = []
        offset = 0
        for p in func.params:
            size = c.TYPE_BYTES[c.TYPE_CODES[p.type]] * p.count if p.type in c.TYPE_CODES else 8
            align = max(p.align, 1)
            offset = (offset + align - 1) // align * align
            self.params.append(ParamSlot(p.name, p.type, offset, size, size == 8 and p.count == 1))
            self.symbols[p.name] = (L.SP_PARAM, offset)
            offset += size
        self.param_bytes = offset
        self.local_bytes = 0
        for var in func.local_vars:
            self._place_function_var(var)

    # -------------------------------------------------------------- names
    def _reg(self, name: str) -> int:
        index = self.reg_index.get(name)
        if index is None:
            index = len(self.reg_names)
            self.reg_index[name] = index
            self.reg_names.append(name)
        return index

    def _place_function_var(self, var: ast.VarDecl) -> None:
        size = c.TYPE_BYTES[c.TYPE_CODES.get(var.type, c.T_B8)] * (var.count or 0)
        align = max(var.align, 1)
        if var.space == "local":
            self.local_bytes = (self.local_bytes + align - 1) // align * align
            self.symbols[var.name] = (L.SP_LOCAL, self.local_bytes)
            self.local_bytes += size
        elif var.space == "shared":
            self.symbols[var.name] = self.shared_allocator(var)
        else:
            raise UnsupportedPTXError(f"function-scope .{var.space} variables are not supported",
                                      var.loc.file, var.loc.line, var.loc.column, var.name)

    def reg_of(self, ins: ast.Instruction, name: str) -> int:
        if name not in self.reg_index:
            raise _err(ins, f"register '{name}' is not declared (declare it with .reg)")
        return self.reg_index[name]

    # -------------------------------------------------------------- operands
    def src(self, ins: ast.Instruction, operand, type_code: int) -> tuple[int, int]:
        if isinstance(operand, ast.Reg):
            if operand.name in self.reg_index:
                kind = L.SK_REGNEG if operand.negated else L.SK_REG
                return kind, self.reg_index[operand.name]
            if operand.name in self.symbols:
                return L.SK_IMM, self.symbols[operand.name][1]
            raise _err(ins, f"register '{operand.name}' is not declared (declare it with .reg)")
        if isinstance(operand, ast.Imm):
            try:
                return L.SK_IMM, _signed(imm_bits(operand, type_code))
            except ValueError as exc:
                raise _err(ins, str(exc)) from None
        if isinstance(operand, ast.SpecialReg):
            code = L.SPECIAL_CODES.get((operand.name, operand.component))
            if code is None:
                shown = operand.name + (f".{operand.component}" if operand.component else "")
                raise _err(ins, f"special register '{shown}' is not supported; supported: "
                           "%tid %ntid %ctaid %nctaid (.x/.y/.z) %laneid %warpid %nwarpid %smid %nsmid "
                           "%gridid %clock %clock64 %globaltimer %lanemask_* %dynamic_smem_size",
                           unsupported=True)
            return L.SK_SPECIAL, code
        if isinstance(operand, ast.Symbol):
            if operand.name in self.symbols:
                return L.SK_IMM, self.symbols[operand.name][1]
            if operand.name in self.reg_index:
                return L.SK_REG, self.reg_index[operand.name]
            raise _err(ins, f"unknown symbol '{operand.name}'")
        if isinstance(operand, ast.Address) and not operand.base_is_reg:
            if operand.base not in self.symbols:
                raise _err(ins, f"unknown symbol '{operand.base}'")
            return L.SK_IMM, self.symbols[operand.base][1] + operand.offset
        raise _err(ins, f"unexpected operand {type(operand).__name__} here")

    def dst(self, ins: ast.Instruction, operand) -> list[int]:
        if isinstance(operand, ast.Reg):
            return [self.reg_of(ins, operand.name)]
        if isinstance(operand, ast.PredPair):
            second = -2 if operand.second == "_" else self.reg_of(ins, operand.second)
            return [self.reg_of(ins, operand.first), second]
        if isinstance(operand, ast.Vector):
            out = []
            for elem in operand.elems:
                out.append(-2 if isinstance(elem, ast.Sink) else self.dst(ins, elem)[0])
            return out
        if isinstance(operand, ast.Sink):
            return [-2]
        raise _err(ins, f"expected a destination register, found {type(operand).__name__}")

    def address(self, ins: ast.Instruction, operand) -> tuple[int, int, int | None]:
        """(base register or -1, offset, space of a symbol base or None)."""
        if not isinstance(operand, ast.Address):
            raise _err(ins, "expected a memory operand [reg], [reg+imm], [sym] or [sym+imm]")
        if operand.base == "":
            return -1, operand.offset, None
        if operand.base_is_reg and operand.base in self.reg_index:
            return self.reg_index[operand.base], operand.offset, None
        if operand.base in self.symbols:
            space, addr = self.symbols[operand.base]
            return -1, addr + operand.offset, space
        if operand.base in self.reg_index:
            return self.reg_index[operand.base], operand.offset, None
        raise _err(ins, f"unknown register or symbol '{operand.base}' in address")


@dataclass
class _Mods:
    types: list = field(default_factory=list)
    mods: int = 0
    space: int = L.SP_GENERIC
    vec: int = 1
    aux: int = 0
    words: list = field(default_factory=list)   # everything not classified


def _classify(ins: ast.Instruction) -> _Mods:
    out = _Mods()
    for raw in ins.mods:
        mod = _SPACE_ALIASES.get(raw, raw)
        name = mod[1:]
        if name in c.TYPE_CODES:
            out.types.append(c.TYPE_CODES[name])
        elif mod in c.ROUNDING_CODES:
            out.mods |= c.ROUNDING_CODES[mod] << c.MOD_RND_SHIFT
        elif mod == ".ftz":
            out.mods |= c.MOD_FTZ
        elif mod == ".sat" or mod == ".satfinite":
            out.mods |= c.MOD_SAT
        elif mod == ".approx":
            out.mods |= c.MOD_APPROX
        elif mod == ".full":
            out.mods |= c.MOD_FULL
        elif mod == ".relu":
            out.mods |= c.MOD_RELU
        elif mod == ".NaN":
            out.mods |= c.MOD_NAN
        elif mod == ".shiftamt" and ins.opcode == "bfind":
            out.mods |= c.MOD_SHIFTAMT
        elif mod in L.SPACE_CODES:
            out.space = L.SPACE_CODES[mod]
        elif mod in (".v2", ".v4", ".v8"):
            out.vec = int(mod[2:])
        elif mod in _IGNORED_MODS or mod.startswith(".L2::") or mod.startswith(".L1::"):
            continue
        else:
            out.words.append(mod)
    return out


def _take(words: list, table: dict, ins: ast.Instruction, what: str, required: bool = False) -> int:
    found = [w for w in words if w in table]
    if len(found) > 1:
        raise _err(ins, f"more than one {what} modifier: {' '.join(found)}")
    if not found:
        if required:
            raise _err(ins, f"missing the {what} modifier; expected one of {' '.join(sorted(table))}")
        return 0
    words.remove(found[0])
    return table[found[0]]


def _reject_leftovers(ins: ast.Instruction, words: list) -> None:
    if words:
        raise _err(ins, f"modifier(s) {' '.join(words)} not supported on '{ins.opcode}'", unsupported=True)


class _Row:
    """Builder of one code row."""

    def __init__(self, n_fields: int):
        self.row = [0] * n_fields
        for i in range(4):
            self.row[L.F_DST0 + i] = -1
        self.row[L.F_GUARD] = -1
        self.row[L.F_ABASE] = -1
        self.row[L.F_VEC] = 1
        self.n_src = 0

    def add_src(self, kind_value: tuple[int, int]) -> None:
        if self.n_src >= L.MAX_SRC:
            raise ValueError("too many source operands")
        self.row[L.F_SK0 + 2 * self.n_src] = kind_value[0]
        self.row[L.F_SK0 + 2 * self.n_src + 1] = kind_value[1]
        self.n_src += 1
        self.row[L.F_NSRC] = self.n_src

    def set_dsts(self, regs: list[int]) -> None:
        if len(regs) > 4:
            raise ValueError("too many destinations")
        for i, r in enumerate(regs):
            self.row[L.F_DST0 + i] = r
        self.row[L.F_NDST] = len(regs)


def _callee_name(ins: ast.Instruction) -> str:
    for operand in ins.operands:
        if isinstance(operand, ast.Symbol | ast.Reg):
            return operand.name
    return "?"


def _refuse_calls(module: ast.Module, func: ast.Function) -> None:
    """``call`` is not modelled: stop at the first one with a clear error (naming recursion as such)."""
    for ins in func.body:
        if ins.opcode != "call":
            continue
        callee = _callee_name(ins)
        seen, pending, recursive = set(), [callee], False
        while pending:
            name = pending.pop()
            if name in seen or name not in module.functions:
                continue
            seen.add(name)
            for inner in module.functions[name].body:
                if inner.opcode == "call":
                    recursive = recursive or _callee_name(inner) in (callee, func.name)
                    pending.append(_callee_name(inner))
        if recursive:
            raise _err(ins, f"recursive call of .func '{callee}' is not supported (no call stack)",
                       unsupported=True)
        raise _err(ins, f"'call' of the .func '{callee}' is not supported: mark the device function "
                   "__forceinline__ (or drop __noinline__) so that nvcc inlines it", unsupported=True)


def lower_function(module: ast.Module, func: ast.Function, symbols: dict) -> Program:
    """Lower one entry function. ``symbols`` maps module-scope .global/.const names to (space, address)."""
    _refuse_calls(module, func)
    shared = _SharedLayout(module, func)
    symbols = {**symbols, **shared.symbols}
    shared_allocator = shared.place
    fl = _FunctionLowering(module, func, symbols, shared_allocator)
    dynamic_offset = shared.dynamic_offset()
    fl.symbols.update(shared.symbols)
    n = len(func.body)
    label_pc = dict(func.labels)
    rows: list[list[int]] = []
    for ins in func.body:
        rows.append(_lower_instruction(fl, ins, label_pc))
    code = np.array(rows, dtype=np.int64).reshape(n, L.N_FIELDS) if n else np.zeros((0, L.N_FIELDS), np.int64)
    reconv = reconvergence_points(code)
    code[:, L.F_RECONV] = reconv
    files = module.files
    src_lines = []
    for ins in func.body:
        if ins.src_line is None:
            src_lines.append(None)
        else:
            src_lines.append((files.get(ins.src_line[0], str(ins.src_line[0])), ins.src_line[1]))
    regs_given = module.gpusim_regs.get(func.name, module.gpusim_regs.get("*"))
    return Program(
        name=func.name, file=module.file, code=code, n_regs=max(len(fl.reg_names), 1),
        reg_names=list(fl.reg_names), params=fl.params, param_bytes=fl.param_bytes,
        shared_static_bytes=shared.static_bytes, dynamic_shared_offset=dynamic_offset,
        local_bytes=fl.local_bytes, lines=[ins.loc.line for ins in func.body],
        texts=[ins.text for ins in func.body], src_lines=src_lines,
        regs_estimate=estimate_registers(code, fl.reg_names, func.regs),
        directives=dict(func.directives), gpusim_regs=regs_given,
    )


def _lower_instruction(fl: _FunctionLowering, ins: ast.Instruction, label_pc: dict) -> list[int]:
    b = _Row(L.N_FIELDS)
    row = b.row
    row[L.F_LINE] = ins.loc.line
    row[L.F_SRCLINE] = ins.src_line[1] if ins.src_line else 0
    if ins.guard is not None:
        row[L.F_GUARD] = fl.reg_of(ins, ins.guard[0])
        row[L.F_GUARD_NEG] = 1 if ins.guard[1] else 0
    m = _classify(ins)
    op = ins.opcode
    try:
        if op in _ALU_OPS:
            _lower_alu(fl, ins, b, m, _ALU_OPS[op])
        elif op in ("ld", "ldu", "st", "atom", "red", "prefetch", "prefetchu"):
            _lower_memory(fl, ins, b, m, op)
        elif op == "cvta":
            _lower_cvta(fl, ins, b, m)
        elif op in ("bra", "ret", "exit", "trap", "call"):
            _lower_control(fl, ins, b, m, op, label_pc)
        elif op in ("bar", "barrier", "membar", "fence", "nanosleep"):
            _lower_sync(fl, ins, b, m, op)
        elif op in ("shfl", "vote", "activemask", "match", "redux"):
            _lower_warp(fl, ins, b, m, op)
        else:
            raise _err(ins, f"instruction '{op}' is not supported; supported: {' '.join(SUPPORTED_OPCODES)}"
                       " (see docs/ptx.md)", unsupported=True)
    except ValueError as exc:
        raise _err(ins, str(exc)) from None
    return row


def _one_type(ins: ast.Instruction, m: _Mods) -> int:
    if len(m.types) != 1:
        raise _err(ins, f"expected exactly one type modifier on '{ins.opcode}', found {len(m.types)}")
    return m.types[0]


def _expect_operands(ins: ast.Instruction, count: int | tuple) -> None:
    counts = (count,) if isinstance(count, int) else count
    if len(ins.operands) not in counts:
        want = " or ".join(str(k) for k in counts)
        raise _err(ins, f"'{ins.opcode}' takes {want} operands, found {len(ins.operands)}")


_ALU_ARITY = {  # op -> number of source operands (None = variable, checked by the op)
    c.OP_MOV: 1, c.OP_ADD: 2, c.OP_SUB: 2, c.OP_MUL: 2, c.OP_MAD: 3, c.OP_FMA: 3, c.OP_DIV: 2, c.OP_REM: 2,
    c.OP_ABS: 1, c.OP_NEG: 1, c.OP_MIN: 2, c.OP_MAX: 2, c.OP_AND: 2, c.OP_OR: 2, c.OP_XOR: 2, c.OP_NOT: 1,
    c.OP_CNOT: 1, c.OP_SHL: 2, c.OP_SHR: 2, c.OP_POPC: 1, c.OP_CLZ: 1, c.OP_BREV: 1, c.OP_BFE: 3,
    c.OP_BFI: 4, c.OP_PRMT: 3, c.OP_SELP: 3, c.OP_SLCT: 3, c.OP_SETP: (2, 3), c.OP_SET: (2, 3),
    c.OP_CVT: 1, c.OP_RCP: 1, c.OP_SQRT: 1, c.OP_RSQRT: 1, c.OP_EX2: 1, c.OP_LG2: 1, c.OP_SIN: 1,
    c.OP_COS: 1, c.OP_TANH: 1, c.OP_TESTP: 1, c.OP_COPYSIGN: 2, c.OP_LOP3: 4, c.OP_SHF: 3, c.OP_MUL24: 2,
    c.OP_MAD24: 3, c.OP_SAD: 3, c.OP_BFIND: 1, c.OP_FNS: 3,
}


def _lower_alu(fl: _FunctionLowering, ins: ast.Instruction, b: _Row, m: _Mods, op: int) -> None:
    row = b.row
    words = m.words
    mods = m.mods
    ty2 = c.T_NONE
    if op in (c.OP_SETP, c.OP_SET):
        mods |= _take(words, c.CMP_CODES, ins, "comparison", required=True) << c.MOD_CMP_SHIFT
        mods |= _take(words, c.BOOL_CODES, ins, "boolean") << c.MOD_BOOL_SHIFT
    if op in (c.OP_MUL, c.OP_MAD, c.OP_MUL24, c.OP_MAD24):
        width = _take(words, {".lo": c.MUL_LO, ".hi": c.MUL_HI, ".wide": c.MUL_WIDE}, ins, "width")
        mods |= width << c.MOD_MUL_SHIFT
    if op == c.OP_TESTP:
        mods |= _take(words, c.TESTP_CODES, ins, "test", required=True) << c.MOD_TESTP_SHIFT
    if op == c.OP_PRMT:
        mods |= _take(words, c.PRMT_CODES, ins, "mode") << c.MOD_PRMT_SHIFT
    if op == c.OP_SHF:
        direction = _take(words, {".l": 1, ".r": 2}, ins, "direction", required=True)
        mode = _take(words, {".wrap": 1, ".clamp": 2}, ins, "mode", required=True)
        mods |= (c.MOD_SHF_RIGHT if direction == 2 else 0) | (c.MOD_SHF_CLAMP if mode == 2 else 0)
    if ".cc" in words:
        raise _err(ins, "carry-chain arithmetic (.cc / addc / subc) is not supported", unsupported=True)
    _reject_leftovers(ins, words)

    if op in (c.OP_CVT, c.OP_SET, c.OP_SLCT):
        if len(m.types) != 2:
            raise _err(ins, f"'{ins.opcode}' needs two type modifiers (destination and source)")
        ty, ty2 = m.types
    else:
        ty = _one_type(ins, m)
    row[L.F_OP] = op
    row[L.F_TY] = ty
    row[L.F_TY2] = ty2
    row[L.F_MODS] = mods
    operands = ins.operands
    if not operands:
        raise _err(ins, f"'{ins.opcode}' needs a destination operand")
    arity = _ALU_ARITY[op]
    # mov with vectors: pack {a, b} -> d, or unpack d -> {a, b}
    if op == c.OP_MOV and len(operands) == 2 and isinstance(operands[1], ast.Vector):
        elems = operands[1].elems
        b.set_dsts(fl.dst(ins, operands[0]))
        elem_type = _pack_elem_type(ins, ty, len(elems))
        for elem in elems:
            b.add_src(fl.src(ins, elem, elem_type))
        row[L.F_VEC] = len(elems)
        row[L.F_TY2] = elem_type
        row[L.F_ISA] = isa.isa_row(op, ty)
        return
    if op == c.OP_MOV and isinstance(operands[0], ast.Vector):
        dsts = fl.dst(ins, operands[0])
        b.set_dsts(dsts)
        row[L.F_VEC] = len(dsts)
        row[L.F_TY2] = _pack_elem_type(ins, ty, len(dsts))
        _expect_operands(ins, 2)
        b.add_src(fl.src(ins, operands[1], ty))
        row[L.F_ISA] = isa.isa_row(op, ty)
        return
    _expect_operands(ins, tuple(1 + a for a in ((arity,) if isinstance(arity, int) else arity)))
    b.set_dsts(fl.dst(ins, operands[0]))
    for i, operand in enumerate(operands[1:]):
        b.add_src(fl.src(ins, operand, _source_type(op, i, ty, ty2)))
    row[L.F_ISA] = isa.isa_row(op, ty2 if op == c.OP_CVT and c.TYPE_FLOAT[ty2] else ty,
                               _cvt_variant(op, ty, ty2))
    if op in (c.OP_SETP, c.OP_SET):
        row[L.F_ISA] = isa.isa_row(op, ty if op == c.OP_SETP else ty2)


def _cvt_variant(op: int, ty: int, ty2: int) -> str | None:
    if op != c.OP_CVT:
        return None
    return "cvt.float" if (c.TYPE_FLOAT[ty] or c.TYPE_FLOAT[ty2]) else "cvt.int"


def _pack_elem_type(ins: ast.Instruction, ty: int, count: int) -> int:
    total = c.TYPE_BYTES[ty]
    if count not in (2, 4) or total % count:
        raise _err(ins, f"cannot split a {total * 8}-bit value into {count} parts")
    return {1: c.T_B8, 2: c.T_B16, 4: c.T_B32}[total // count]


def _source_type(op: int, index: int, ty: int, ty2: int) -> int:
    if index in _U32_SOURCES.get(op, ()):
        return c.T_U32
    if op == c.OP_CVT:
        return ty2
    if op in (c.OP_SELP,) and index == 2:
        return c.T_PRED
    if op in (c.OP_SETP, c.OP_SET) and index == 2:
        return c.T_PRED
    if op == c.OP_SLCT and index == 2:
        return ty2
    if op == c.OP_SET:
        return ty2
    if op == c.OP_PRMT:
        return c.T_B32
    return ty


def _lower_memory(fl: _FunctionLowering, ins: ast.Instruction, b: _Row, m: _Mods, op: str) -> None:
    row = b.row
    words = m.words
    if op in ("prefetch", "prefetchu"):
        row[L.F_OP] = c.OP_PREFETCH
        row[L.F_ISA] = isa.isa_row(c.OP_PREFETCH, c.T_NONE)
        words[:] = [w for w in words if w not in (".L1", ".L2", ".tensormap")]
        _reject_leftovers(ins, words)
        base, offset, _ = fl.address(ins, ins.operands[0])
        row[L.F_ABASE] = base
        row[L.F_AOFF] = offset
        row[L.F_SPACE] = m.space
        return
    if op in ("atom", "red"):
        row[L.F_AUX] = _take(words, L.ATOM_CODES, ins, "atomic operation", required=True)
    _reject_leftovers(ins, words)
    ty = _one_type(ins, m)
    if m.vec > 4 or (m.vec > 1 and op in ("atom", "red")):
        raise _err(ins, f".v{m.vec} is not supported on '{op}'", unsupported=True)
    row[L.F_TY] = ty
    row[L.F_VEC] = m.vec
    row[L.F_SIZE] = c.TYPE_BYTES[ty]
    operands = ins.operands
    space = m.space
    if op in ("ld", "ldu"):
        _expect_operands(ins, 2)
        row[L.F_OP] = c.OP_LD
        dsts = fl.dst(ins, operands[0])
        if len(dsts) != m.vec:
            raise _err(ins, f"a .v{m.vec} load needs {m.vec} destination registers, found {len(dsts)}")
        b.set_dsts(dsts)
        addr = operands[1]
    elif op == "st":
        _expect_operands(ins, 2)
        row[L.F_OP] = c.OP_ST
        values = operands[1].elems if isinstance(operands[1], ast.Vector) else (operands[1],)
        if len(values) != m.vec:
            raise _err(ins, f"a .v{m.vec} store needs {m.vec} source values, found {len(values)}")
        for value in values:
            b.add_src(fl.src(ins, value, ty))
        addr = operands[0]
    else:
        is_atom = op == "atom"
        row[L.F_OP] = c.OP_ATOM if is_atom else c.OP_RED
        n_values = 2 if row[L.F_AUX] == L.ATOM_CAS else 1
        _expect_operands(ins, (1 if is_atom else 0) + 1 + n_values)
        if is_atom:
            b.set_dsts(fl.dst(ins, operands[0]))
        addr = operands[1 if is_atom else 0]
        for value in operands[(2 if is_atom else 1):]:
            b.add_src(fl.src(ins, value, ty))
    base, offset, sym_space = fl.address(ins, addr)
    if space == L.SP_GENERIC and sym_space is not None and sym_space != L.SP_GLOBAL:
        space = sym_space if sym_space != L.SP_CONST else L.SP_GLOBAL
    if space == L.SP_CONST:
        space = L.SP_GLOBAL   # .const variables live in device memory
    if space == L.SP_PARAM and op != "ld":
        raise _err(ins, f"'{op}' to the .param space is only supported for loads of kernel parameters",
                   unsupported=True)
    row[L.F_ABASE] = base
    row[L.F_AOFF] = offset
    row[L.F_SPACE] = space
    variant = {L.SP_SHARED: f"{op}.shared", L.SP_PARAM: "ld.param"}.get(space)
    isa_op = {"ld": c.OP_LD, "ldu": c.OP_LD, "st": c.OP_ST, "atom": c.OP_ATOM, "red": c.OP_RED}[op]
    row[L.F_ISA] = isa.isa_row(isa_op, ty, variant)


def _lower_cvta(fl: _FunctionLowering, ins: ast.Instruction, b: _Row, m: _Mods) -> None:
    row = b.row
    words = m.words
    to_space = ".to" in words
    if to_space:
        words.remove(".to")
    _reject_leftovers(ins, words)
    if m.space == L.SP_GENERIC:
        raise _err(ins, "cvta needs a state space (.global, .shared, .local, .const or .param)")
    _expect_operands(ins, 2)
    ty = _one_type(ins, m)
    row[L.F_OP] = c.OP_CVTA
    row[L.F_TY] = ty
    row[L.F_SPACE] = m.space
    row[L.F_AUX] = 1 if to_space else 0
    b.set_dsts(fl.dst(ins, ins.operands[0]))
    b.add_src(fl.src(ins, ins.operands[1], ty))
    row[L.F_ISA] = isa.isa_row(c.OP_CVTA, ty)


def _lower_control(fl, ins: ast.Instruction, b: _Row, m: _Mods, op: str, label_pc: dict) -> None:
    row = b.row
    if op == "call":
        raise _err(ins, "'call' of a .func is not supported: mark the device function __forceinline__ "
                   "(or compile with -O3 so nvcc inlines it)", unsupported=True)
    _reject_leftovers(ins, m.words)
    if op == "bra":
        _expect_operands(ins, 1)
        target = ins.operands[0]
        name = target.name if isinstance(target, ast.Symbol | ast.Reg) else None
        if name is None or name not in label_pc:
            raise _err(ins, f"branch target {name or target!r} is not a label of this function")
        row[L.F_OP] = c.OP_BRA
        row[L.F_TARGET] = label_pc[name]
        row[L.F_AUX] = 1 if ".uni" in ins.mods else 0
        row[L.F_ISA] = isa.isa_row(c.OP_BRA, c.T_NONE)
        return
    _expect_operands(ins, 0)
    row[L.F_OP] = {"ret": c.OP_EXIT, "exit": c.OP_EXIT, "trap": c.OP_TRAP}[op]
    row[L.F_ISA] = isa.isa_row(row[L.F_OP], c.T_NONE)


def _lower_sync(fl, ins: ast.Instruction, b: _Row, m: _Mods, op: str) -> None:
    row = b.row
    words = [w for w in m.words if w not in (".cta",)]
    if op in ("membar", "fence"):
        row[L.F_OP] = c.OP_MEMBAR
        row[L.F_ISA] = isa.isa_row(c.OP_MEMBAR, c.T_NONE)
        return
    if op == "nanosleep":
        _expect_operands(ins, 1)
        row[L.F_OP] = c.OP_NANOSLEEP
        b.add_src(fl.src(ins, ins.operands[0], c.T_U32))
        row[L.F_ISA] = isa.isa_row(c.OP_NANOSLEEP, c.T_NONE)
        return
    if ".warp" in words:          # bar.warp.sync membermask: lanes of a warp run in lockstep here
        row[L.F_OP] = c.OP_NOP
        row[L.F_ISA] = isa.isa_row(c.OP_NOP, c.T_NONE)
        return
    kind = _take(words, {".sync": L.BAR_SYNC, ".arrive": L.BAR_ARRIVE, ".red": 0}, ins, "barrier kind")
    if kind == 0 and ".sync" in ins.mods:
        kind = L.BAR_SYNC
    if kind == 0:
        raise _err(ins, "barrier reductions (bar.red) are not supported", unsupported=True)
    _reject_leftovers(ins, words)
    _expect_operands(ins, (1, 2))
    row[L.F_OP] = c.OP_BAR
    row[L.F_AUX] = kind
    for operand in ins.operands:
        b.add_src(fl.src(ins, operand, c.T_U32))
    row[L.F_ISA] = isa.isa_row(c.OP_BAR, c.T_NONE)


def _lower_warp(fl, ins: ast.Instruction, b: _Row, m: _Mods, op: str) -> None:
    row = b.row
    words = m.words
    operands = ins.operands
    if op == "activemask":
        _expect_operands(ins, 1)
        row[L.F_OP] = c.OP_ACTIVEMASK
        row[L.F_TY] = c.T_B32
        b.set_dsts(fl.dst(ins, operands[0]))
        row[L.F_ISA] = isa.isa_row(c.OP_ACTIVEMASK, c.T_NONE)
        return
    if op == "shfl":
        row[L.F_AUX] = _take(words, L.SHFL_CODES, ins, "shuffle mode", required=True)
        _reject_leftovers(ins, words)
        ty = _one_type(ins, m)
        _expect_operands(ins, (4, 5))
        row[L.F_OP] = c.OP_SHFL
        row[L.F_TY] = ty
        b.set_dsts(fl.dst(ins, operands[0]))
        b.add_src(fl.src(ins, operands[1], ty))
        for operand in operands[2:]:
            b.add_src(fl.src(ins, operand, c.T_U32))
        if len(operands) == 4:
            b.add_src((L.SK_IMM, 0xFFFFFFFF))
    elif op == "vote":
        if ".uni" in ins.mods:    # _classify drops .uni (the bra.uni hint); here it is the vote mode
            words.append(".uni")
        row[L.F_AUX] = _take(words, L.VOTE_CODES, ins, "vote mode", required=True)
        _reject_leftovers(ins, words)
        ty = _one_type(ins, m)
        _expect_operands(ins, (2, 3))
        row[L.F_OP] = c.OP_VOTE
        row[L.F_TY] = ty
        b.set_dsts(fl.dst(ins, operands[0]))
        b.add_src(fl.src(ins, operands[1], c.T_PRED))
        b.add_src(fl.src(ins, operands[2], c.T_U32) if len(operands) == 3 else (L.SK_IMM, 0xFFFFFFFF))
    elif op == "match":
        row[L.F_AUX] = _take(words, {".any": 1, ".all": 2}, ins, "match mode", required=True)
        _reject_leftovers(ins, words)
        ty = _one_type(ins, m)
        _expect_operands(ins, 3)
        row[L.F_OP] = c.OP_MATCH
        row[L.F_TY] = ty
        b.set_dsts(fl.dst(ins, operands[0]))
        b.add_src(fl.src(ins, operands[1], ty))
        b.add_src(fl.src(ins, operands[2], c.T_U32))
    else:
        row[L.F_AUX] = _take(words, L.REDUX_CODES, ins, "reduction", required=True)
        _reject_leftovers(ins, words)
        ty = _one_type(ins, m)
        _expect_operands(ins, 3)
        row[L.F_OP] = c.OP_REDUX
        row[L.F_TY] = ty
        b.set_dsts(fl.dst(ins, operands[0]))
        b.add_src(fl.src(ins, operands[1], ty))
        b.add_src(fl.src(ins, operands[2], c.T_U32))
    row[L.F_ISA] = isa.isa_row(row[L.F_OP], c.T_NONE)


def _var_bytes(var: ast.VarDecl) -> int:
    return c.TYPE_BYTES[c.TYPE_CODES.get(var.type, c.T_B8)] * (var.count or 0)


def _referenced_names(func: ast.Function) -> set:
    names: set[str] = set()

    def visit(operand) -> None:
        if isinstance(operand, ast.Symbol | ast.Reg):
            names.add(operand.name)
        elif isinstance(operand, ast.Address):
            names.add(operand.base)
        elif isinstance(operand, ast.Vector | ast.ParenList):
            for elem in operand.elems:
                visit(elem)

    for ins in func.body:
        for operand in ins.operands:
            visit(operand)
    return names


class _SharedLayout:
    """Static shared memory of one kernel: the module-scope .shared variables it references, then its own;
    ``extern`` (dynamic) shared arrays all start at the first suitably aligned offset after them."""

    def __init__(self, module: ast.Module, func: ast.Function):
        self.symbols: dict[str, tuple[int, int]] = {}
        self.static_bytes = 0
        self.extern_vars: list[ast.VarDecl] = []
        used = _referenced_names(func)
        for var in module.globals:
            if var.space == "shared" and var.name in used:
                self.symbols[var.name] = self.place(var)

    def place(self, var: ast.VarDecl) -> tuple[int, int]:
        if var.extern or var.count is None:
            self.extern_vars.append(var)
            return (L.SP_SHARED, -1)     # patched by dynamic_offset()
        align = max(var.align, 1)
        offset = (self.static_bytes + align - 1) // align * align
        self.static_bytes = offset + _var_bytes(var)
        return (L.SP_SHARED, offset)

    def dynamic_offset(self) -> int:
        align = max([16] + [v.align for v in self.extern_vars])
        offset = (self.static_bytes + align - 1) // align * align
        for var in self.extern_vars:
            self.symbols[var.name] = (L.SP_SHARED, offset)
        return offset


def global_var_image(var: ast.VarDecl) -> bytes:
    """The initial bytes of a module-scope .global/.const variable."""
    type_code = c.TYPE_CODES.get(var.type, c.T_B8)
    size = c.TYPE_BYTES[type_code]
    count = var.count or 0
    data = bytearray(size * count)
    for i, value in enumerate((var.init or [])[:count]):
        if isinstance(value, float):
            bits = imm_bits(ast.Imm(value, "float"), type_code)
        else:   # ints are raw bits for float types (nvcc writes 0fXXXXXXXX), values for integer types
            bits = int(value) & ((1 << (8 * size)) - 1)
        data[i * size:(i + 1) * size] = bits.to_bytes(size, "little")
    return bytes(data)


def lower_module(module: ast.Module, allocate) -> dict:
    """Lower every entry function of ``module``. ``allocate(nbytes, align, image) -> address`` places a
    module-scope .global/.const variable in device memory. Returns {kernel name: Program}."""
    symbols: dict[str, tuple[int, int]] = {}
    for var in module.globals:
        if var.space in ("global", "const"):
            image = global_var_image(var)
            symbols[var.name] = (L.SP_GLOBAL, allocate(max(len(image), 1), max(var.align, 1), image))
        elif var.space not in ("shared",):
            raise UnsupportedPTXError(f"module-scope .{var.space} variables are not supported",
                                      var.loc.file, var.loc.line, var.loc.column, var.name)
    programs = {}
    for func in module.functions.values():
        if func.is_entry:
            programs[func.name] = lower_function(module, func, symbols)
    return programs
