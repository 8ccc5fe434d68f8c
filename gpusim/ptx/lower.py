"""Lowering: a parsed PTX function becomes a :class:`Program` of numpy arrays.

Each instruction becomes one row of an int64 matrix (columns in
``gpusim.arch.layout``), registers become indices into a per-warp register
file of 64-bit slots, symbols become addresses, labels become pcs, and every
conditional branch gets its reconvergence pc (the immediate post-dominator,
from ``gpusim.ptx.cfg``). Anything the engine does not model stops here with
``UnsupportedPTXError`` naming file:line:column.

Calls: a kernel is linked with the ``.func`` functions it calls (``gpusim.ptx.calls``: one body, call
frames in local memory, ``call``/return rows). Simplifications, stated: cache and eviction hints
(``.ca``, ``.L2::evict_last`` ...) and memory-ordering qualifiers are accepted
and ignored by the functional model.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L
from gpusim.errors import GpusimError, PTXSyntaxError, UnsupportedPTXError
from gpusim.ptx import ast
from gpusim.ptx.calls import Linked, link_calls, lower_call_row
from gpusim.ptx.cfg import reconvergence_points
from gpusim.ptx.lower_cache_policy import CACHE_POLICY_OPCODES, lower_cache_policy
from gpusim.ptx.lower_cg import (
    GRID_BARRIER_BYTES,
    GRID_BARRIER_SYMBOL,
    RESERVED_SMEM_BYTES,
    RESERVED_SMEM_SYMBOL,
    grid_sync_line,
    reserved_smem_var,
    special_source,
    uses_reserved_smem,
)
from gpusim.ptx.lower_cluster import CLUSTER_OPCODES, is_cluster_barrier, lower_cluster
from gpusim.ptx.lower_common import (
    _classify,
    _err,
    _expect_operands,
    _Mods,
    _one_type,
    _reject_leftovers,
    _Row,
    _signed,
    _take,
    imm_bits,
    leaf_operands,
)
from gpusim.ptx.lower_hopper import HOPPER_OPCODES, lower_hopper
from gpusim.ptx.lower_launch_control import LAUNCH_CONTROL_OPCODES, lower_launch_control
from gpusim.ptx.lower_ops import _lower_control, _lower_cvta, _lower_memory, _lower_sync, _lower_warp
from gpusim.ptx.lower_tensor import TENSOR_OPCODES, lower_tensor
from gpusim.ptx.lower_texture import TEXTURE_LOWERED_OPCODES, lower_texture
from gpusim.ptx.operands import TEXTURE_OPCODES
from gpusim.ptx.regs import estimate_registers

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
    "dp4a": c.OP_DP4A, "dp2a": c.OP_DP2A,   # conformance corpus: integer dot products
    "szext": c.OP_BFE, "bmsk": c.OP_BFI,    # PTX ISA 7.6: bfe / bfi rows flagged MOD_SZEXT / MOD_BMSK
}
SUPPORTED_OPCODES = sorted(set(_ALU_OPS) | {
    "ld", "ldu", "st", "atom", "red", "cvta", "prefetch", "prefetchu", "bra", "ret", "exit", "bar",
    "barrier", "membar", "fence", "nanosleep", "trap", "shfl", "vote", "activemask", "match", "redux",
    "mma", "ldmatrix", "stmatrix", "cp.async", "wmma", "wgmma", "mbarrier", "cp.async.bulk", "elect",
    "cp.async.bulk.tensor", "cp.reduce.async.bulk.tensor", "cp.async.bulk.prefetch.tensor", "cp.reduce.async.bulk",
    "cp.async.bulk.prefetch",
    *LAUNCH_CONTROL_OPCODES, *CACHE_POLICY_OPCODES})

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
    align: int = 1
    aggregate: bool = False      # declared as an array (``.b8 p[16]``): a struct or array passed by value


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
    gpusim_regs_arch: dict = field(default_factory=dict)   # "sm_XY" -> the '// gpusim:' line's count for sm_XY
    # calls (gpusim.ptx.calls): the largest frame of a called function; whether a call can recurse (then the
    # launch adds max_call_depth frames to local_bytes); whether the kernel calls vprintf
    call_frame_bytes: int = 0
    call_recursive: bool = False
    has_printf: bool = False
    # cooperative groups (gpusim.ptx.lower_cg): reserved shared memory inside shared_static_bytes that the
    # occupancy does not count again; the first line reading the grid barrier and the barrier's address
    reserved_shared_bytes: int = 0
    dynamic_shared: bool = False
    """The kernel declares ``extern`` (dynamic) shared memory, whose size only the launch gives."""
    grid_sync_line: int | None = None
    grid_barrier: int | None = None
    # code generation (gpusim.codegen): the mode that made ``code``, the lowered pc each row came from
    # (None: the PTX as written), and what its passes did
    codegen: str = "none"
    origin: list | None = None
    codegen_notes: list = field(default_factory=list)
    reg_types: list = field(default_factory=list)   # PTX type of each register ("b32", "u64", "pred", ...)

    @property
    def n_inst(self) -> int:
        return int(self.code.shape[0])


MAX_ADDRESS_OFFSET = 1 << 31
"""``[base+offset]``: the offset is a signed 32-bit immediate (as in SASS); larger ones are refused at load."""
MAX_PARAM_BYTES = 32764
"""CUDA's limit on a kernel's parameters (since CUDA 12.1; 4,096 bytes before)."""


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
            self.params.append(ParamSlot(p.name, p.type, offset, size, size == 8 and p.count == 1, align,
                                         p.array or p.type not in c.TYPE_CODES))
            self.symbols[p.name] = (L.SP_PARAM, offset)
            offset += size
        self.param_bytes = offset
        if offset > MAX_PARAM_BYTES:
            raise PTXSyntaxError(f"kernel '{func.name}' has {offset} bytes of parameters; CUDA allows at most "
                                 f"{MAX_PARAM_BYTES}", func.loc.file, func.loc.line, func.loc.column, func.name)
        self.local_bytes = 0
        self.linked: Linked | None = None
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

    def reg_bits(self, index: int) -> int:
        """Width in bits of register ``index`` as declared (.b32 -> 32; predicates 1)."""
        kind = self.func.regs.get(self.reg_names[index], "b32")
        return 1 if kind == "pred" else int(kind[1:])

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
            key = (operand.name, operand.component)
            if key in L.SPECIAL_CONSTANTS:
                return L.SK_IMM, L.SPECIAL_CONSTANTS[key]
            code = L.SPECIAL_CODES.get(key)
            found = special_source(self.symbols, ins, operand) if code is None else None
            if found is not None:     # cooperative groups: reserved shared memory, the grid barrier
                return found
            if code is None:
                shown = operand.name + (f".{operand.component}" if operand.component else "")
                raise _err(ins, f"special register '{shown}' is not supported; supported: %tid %ntid %ctaid "
                           "%nctaid %clusterid %nclusterid %cluster_ctaid %cluster_nctaid (.x/.y/.z) %laneid "
                           "%warpid %nwarpid %smid %nsmid %gridid %clock %clock_hi %clock64 %globaltimer "
                           "%globaltimer_lo %globaltimer_hi %lanemask_* %dynamic_smem_size %total_smem_size "
                           "%aggr_smem_size %cluster_ctarank %cluster_nctarank %is_explicit_cluster "
                           "%current_graph_exec (see docs/ptx.md)", unsupported=True)
            return L.SK_SPECIAL, code
        if isinstance(operand, ast.Symbol):
            if operand.name in self.symbols:
                return L.SK_IMM, self.symbols[operand.name][1]
            if operand.name in self.reg_index:
                return L.SK_REG, self.reg_index[operand.name]
            if operand.name in L.PREDEFINED_CONSTANTS:
                return L.SK_IMM, L.PREDEFINED_CONSTANTS[operand.name]
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
        if not -MAX_ADDRESS_OFFSET <= operand.offset < MAX_ADDRESS_OFFSET and operand.base != "":
            raise _err(ins, f"address offset {operand.offset} does not fit in a signed 32-bit immediate")
        if operand.base == "" and not 0 <= operand.offset < 1 << 63:
            raise _err(ins, f"absolute address {operand.offset} is not a 64-bit address")
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


def lower_function(module: ast.Module, func: ast.Function, symbols: dict) -> Program:
    """Lower one entry function. ``symbols`` maps module-scope .global/.const names to (space, address)."""
    body = _with_implicit_exit(func)
    linked = link_calls(module, func, body)
    if linked is not None:     # the kernel and the functions it calls, as one function (gpusim.ptx.calls)
        func = dataclasses.replace(func, body=linked.body, labels=linked.labels, regs=linked.regs,
                                   local_vars=linked.local_vars)
        body = linked.body
    shared = _SharedLayout(module, func)
    reserved = uses_reserved_smem(func)
    if reserved:
        shared.symbols[RESERVED_SMEM_SYMBOL] = shared.place(reserved_smem_var(func))
    symbols = {**symbols, **shared.symbols}
    shared_allocator = shared.place
    fl = _FunctionLowering(module, func, symbols, shared_allocator)
    fl.linked = linked
    dynamic_offset = shared.dynamic_offset()
    fl.symbols.update(shared.symbols)
    n = len(body)
    label_pc = dict(func.labels)
    rows: list[list[int]] = []
    for ins in body:
        rows.append(_lower_instruction(fl, ins, label_pc))
    code = np.array(rows, dtype=np.int64).reshape(n, L.N_FIELDS) if n else np.zeros((0, L.N_FIELDS), np.int64)
    reconv = reconvergence_points(code)
    code[:, L.F_RECONV] = reconv
    files = module.files
    src_lines: list[tuple[str, int] | None] = []
    for ins in body:
        if ins.src_line is None:
            src_lines.append(None)
        else:
            src_lines.append((files.get(ins.src_line[0], str(ins.src_line[0])), ins.src_line[1]))
    regs_key = func.name if func.name in module.gpusim_regs else "*"    # a kernel's own line wins over '*'
    regs_given = module.gpusim_regs.get(regs_key)
    return Program(
        name=func.name, file=module.file, code=code, n_regs=max(len(fl.reg_names), 1),
        reg_names=list(fl.reg_names), reg_types=[func.regs.get(r, "b32") for r in fl.reg_names],
        params=fl.params, param_bytes=fl.param_bytes,
        shared_static_bytes=shared.static_bytes, dynamic_shared_offset=dynamic_offset,
        local_bytes=fl.local_bytes if linked is None else linked.entry_frame_bytes + linked.static_stack_bytes,
        lines=[ins.loc.line for ins in body],
        texts=[ins.text for ins in body], src_lines=src_lines,
        regs_estimate=estimate_registers(code, fl.reg_names, func.regs),
        directives=dict(func.directives), gpusim_regs=regs_given,
        gpusim_regs_arch=dict(module.gpusim_regs_arch.get(regs_key, {})),
        call_frame_bytes=linked.max_frame_bytes if linked is not None else 0,
        call_recursive=linked is not None and linked.recursive,
        has_printf=linked is not None and any(site.kind == "printf" for site in linked.calls.values()),
        reserved_shared_bytes=RESERVED_SMEM_BYTES if reserved else 0,
        dynamic_shared=bool(shared.extern_vars),
        grid_sync_line=grid_sync_line(func),
    )


IMPLICIT_EXIT_TEXT = "exit;  // implicit: the end of the kernel"


def _with_implicit_exit(func: ast.Function) -> list:
    """The body, with PTX's implicit exit appended when control can reach the end of the kernel: the last
    instruction is not an unguarded ret/exit/bra/trap, or a label sits after the last instruction (a
    branch to the end). The engine never runs past its last row."""
    body = list(func.body)
    n = len(body)
    last = body[-1] if body else None
    falls_through = last is None or last.guard is not None or last.opcode not in ("ret", "exit", "bra", "trap")
    if falls_through or any(pc >= n for pc in func.labels.values()):
        where = last.loc if last is not None else func.loc
        body.append(ast.Instruction(opcode="exit", mods=(), operands=[], loc=where, text=IMPLICIT_EXIT_TEXT,
                                    src_line=last.src_line if last is not None else None))
    return body


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
        elif fl.linked is not None and (op == "call" or id(ins) in fl.linked.returns):
            lower_call_row(fl, ins, b, label_pc, fl.linked)
        elif op in ("bra", "ret", "exit", "trap", "call"):
            _lower_control(fl, ins, b, m, op, label_pc)
        elif op in CLUSTER_OPCODES or is_cluster_barrier(ins):
            lower_cluster(fl, ins, b)
        elif op in ("bar", "barrier", "membar", "fence", "nanosleep"):
            _lower_sync(fl, ins, b, m, op)
        elif op in ("shfl", "vote", "activemask", "match", "redux"):
            _lower_warp(fl, ins, b, m, op)
        elif op in TEXTURE_LOWERED_OPCODES:
            lower_texture(fl, ins, b)
        elif op in TENSOR_OPCODES:
            lower_tensor(fl, ins, b, label_pc)
        elif op in HOPPER_OPCODES:
            lower_hopper(fl, ins, b)
        elif op in LAUNCH_CONTROL_OPCODES:
            lower_launch_control(fl, ins, b)
        elif op in CACHE_POLICY_OPCODES:
            lower_cache_policy(fl, ins, b)
        elif op in TEXTURE_OPCODES:
            raise _err(ins, f"'{op}{''.join(ins.mods)}' is not supported: gpusim models texture fetches (tex, "
                       "tld4) on texture objects, not texture queries or surfaces (see docs/kernels.md)",
                       unsupported=True)
        else:
            raise _err(ins, f"instruction '{op}' is not supported; supported: {' '.join(SUPPORTED_OPCODES)}"
                       " (see docs/ptx.md)", unsupported=True)
    except ValueError as exc:
        raise _err(ins, str(exc)) from None
    if any(not -(1 << 63) <= int(value) < 1 << 63 for value in row):
        raise _err(ins, "a value in this instruction does not fit in 64 bits")
    return row


_ALU_ARITY: dict[int, int | tuple[int, ...]] = {  # op -> number of source operands (a tuple: the counts allowed)
    c.OP_MOV: 1, c.OP_ADD: 2, c.OP_SUB: 2, c.OP_MUL: 2, c.OP_MAD: 3, c.OP_FMA: 3, c.OP_DIV: 2, c.OP_REM: 2,
    c.OP_ABS: 1, c.OP_NEG: 1, c.OP_MIN: 2, c.OP_MAX: 2, c.OP_AND: 2, c.OP_OR: 2, c.OP_XOR: 2, c.OP_NOT: 1,
    c.OP_CNOT: 1, c.OP_SHL: 2, c.OP_SHR: 2, c.OP_POPC: 1, c.OP_CLZ: 1, c.OP_BREV: 1, c.OP_BFE: 3,
    c.OP_BFI: 4, c.OP_PRMT: 3, c.OP_SELP: 3, c.OP_SLCT: 3, c.OP_SETP: (2, 3), c.OP_SET: (2, 3),
    c.OP_CVT: 1, c.OP_RCP: 1, c.OP_SQRT: 1, c.OP_RSQRT: 1, c.OP_EX2: 1, c.OP_LG2: 1, c.OP_SIN: 1,
    c.OP_COS: 1, c.OP_TANH: 1, c.OP_TESTP: 1, c.OP_COPYSIGN: 2, c.OP_LOP3: 4, c.OP_SHF: 3, c.OP_MUL24: 2,
    c.OP_MAD24: 3, c.OP_SAD: 3, c.OP_BFIND: 1, c.OP_FNS: 3,
    c.OP_DP4A: 3, c.OP_DP2A: 3,
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
    if op == c.OP_DP2A:
        half = _take(words, {".lo": 1, ".hi": 2}, ins, "half", required=True)
        mods |= c.MOD_DP2A_HI if half == 2 else 0
    if op == c.OP_SHF:
        direction = _take(words, {".l": 1, ".r": 2}, ins, "direction", required=True)
        mode = _take(words, {".wrap": 1, ".clamp": 2}, ins, "mode", required=True)
        mods |= (c.MOD_SHF_RIGHT if direction == 2 else 0) | (c.MOD_SHF_CLAMP if mode == 2 else 0)
    if ins.opcode in _BIT_MASK_OPS:
        _lower_bit_mask(fl, ins, b, m, op, mods)
        return
    if ".cc" in words:
        raise _err(ins, "carry-chain arithmetic (.cc / addc / subc) is not supported", unsupported=True)
    _reject_leftovers(ins, words)

    if op in (c.OP_CVT, c.OP_SET, c.OP_SLCT, c.OP_DP4A, c.OP_DP2A):
        if len(m.types) != 2:
            raise _err(ins, f"'{ins.opcode}' needs two type modifiers (destination and source)")
        ty, ty2 = m.types
        if op in (c.OP_DP4A, c.OP_DP2A) and not {ty, ty2} <= {c.T_U32, c.T_S32}:
            raise _err(ins, f"'{ins.opcode}' takes .u32 or .s32 operand types, found {''.join(ins.mods)}")
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
    if op == c.OP_CVT and ty in _PAIR_TYPES and ty2 == c.T_F32:
        arity = 2      # cvt.rn.f16x2.f32 d, a, b (tensor cores, issue 14: and bf16x2, e4m3x2, e5m2x2)
    _expect_operands(ins, tuple(1 + a for a in ((arity,) if isinstance(arity, int) else arity)))
    b.set_dsts(fl.dst(ins, operands[0]))
    for i, operand in enumerate(operands[1:]):
        b.add_src(fl.src(ins, operand, _source_type(op, i, ty, ty2)))
    row[L.F_ISA] = isa.isa_row(op, ty2 if op == c.OP_CVT and c.TYPE_FLOAT[ty2] else ty,
                               _cvt_variant(op, ty, ty2, c.mods_rounding(mods)))
    if op in (c.OP_SETP, c.OP_SET):
        row[L.F_ISA] = isa.isa_row(op, ty if op == c.OP_SETP else ty2)


_BIT_MASK_OPS = {"szext": (c.T_U32, c.T_S32), "bmsk": (c.T_B32,)}   # opcode -> the types it takes


def _lower_bit_mask(fl: _FunctionLowering, ins: ast.Instruction, b: _Row, m: _Mods, op: int, mods: int) -> None:
    """szext.mode.{u32,s32} d, a, b: a bfe row (d, a, 0, b) flagged MOD_SZEXT; bmsk.mode.b32 d, a, b: a bfi
    row (d, 0xFFFFFFFF, 0, a, b) flagged MOD_BMSK (PTX ISA 7.6, sm_70): the engine wraps or clamps the width
    (and bmsk's position) before the bit-field operation, which gives the ISA's results for every operand."""
    mode = _take(m.words, {".wrap": 1, ".clamp": 2}, ins, "mode", required=True)
    _reject_leftovers(ins, m.words)
    ty = _one_type(ins, m)
    allowed = _BIT_MASK_OPS[ins.opcode]
    if ty not in allowed:
        names = " or ".join("." + c.TYPE_NAMES[t] for t in allowed)
        raise _err(ins, f"'{ins.opcode}' takes {names}, found {''.join(ins.mods)}")
    _expect_operands(ins, 3)
    row = b.row
    row[L.F_OP] = op
    row[L.F_TY] = ty
    row[L.F_MODS] = mods | (c.MOD_SZEXT if op == c.OP_BFE else c.MOD_BMSK) | (c.MOD_BITS_CLAMP if mode == 2 else 0)
    b.set_dsts(fl.dst(ins, ins.operands[0]))
    width = fl.src(ins, ins.operands[2], c.T_U32)
    if op == c.OP_BFE:
        sources = [fl.src(ins, ins.operands[1], ty), (L.SK_IMM, 0), width]
    else:
        sources = [(L.SK_IMM, 0xFFFFFFFF), (L.SK_IMM, 0), fl.src(ins, ins.operands[1], c.T_U32), width]
    for source in sources:
        b.add_src(source)
    row[L.F_ISA] = isa.isa_row(op, ty)


_HALF_TYPES = (c.T_F16, c.T_BF16, c.T_F16X2, c.T_BF16X2)
_PAIR_TYPES = (c.T_F16X2, c.T_BF16X2, c.T_E4M3X2, c.T_E5M2X2)


def _cvt_variant(op: int, ty: int, ty2: int, rounding: int = c.RND_DEFAULT) -> str | None:
    if op != c.OP_CVT:
        return None
    if (ty in _HALF_TYPES and ty2 == c.T_F32) or (ty2 in _HALF_TYPES and ty == c.T_F32):
        return "cvt.half"
    if ty == c.T_F32 and ty2 in (c.T_S32, c.T_U32) and rounding in (c.RND_DEFAULT, c.RND_RN):
        return "cvt.i2f32"      # round-to-nearest int32 -> fp32 (I2FP from sm_86 on); .rz/.rm/.rp stay I2F
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
    if op in (c.OP_DP4A, c.OP_DP2A):     # a: atype, b: btype, c: s32 unless both are unsigned
        return (ty, ty2, c.T_U32 if ty == ty2 == c.T_U32 else c.T_S32)[index]
    return ty


def _var_bytes(var: ast.VarDecl) -> int:
    return c.TYPE_BYTES[c.TYPE_CODES.get(var.type, c.T_B8)] * (var.count or 0)


def _referenced_names(func: ast.Function) -> set:
    names: set[str] = set()
    for _, operand in leaf_operands(func):
        if isinstance(operand, ast.Symbol | ast.Reg):
            names.add(operand.name)
        elif isinstance(operand, ast.Address):
            names.add(operand.base)
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
    """The initial bytes of a module-scope .global/.const variable: its initializer (the rest of the
    variable, zero-filled by the allocator, is not materialized here)."""
    type_code = c.TYPE_CODES.get(var.type, c.T_B8)
    size = c.TYPE_BYTES[type_code]
    count = var.count or 0
    values = (var.init or [])[:count]
    data = bytearray(size * len(values))
    for i, value in enumerate(values):
        if isinstance(value, float):
            try:
                bits = imm_bits(ast.Imm(value, "float"), type_code)
            except ValueError as exc:     # 1.5 in a .u32 variable's initializer: ptxas refuses it too
                raise PTXSyntaxError(f"initializer of '{var.name}' (.{var.type}): {exc} ({value!r})",
                                     var.loc.file, var.loc.line, var.loc.column, var.name) from None
        else:   # ints are raw bits for float types (nvcc writes 0fXXXXXXXX), values for integer types
            bits = int(value) & ((1 << (8 * size)) - 1)
        data[i * size:(i + 1) * size] = bits.to_bytes(size, "little")
    return bytes(data)


def lower_module(module: ast.Module, allocate, symbols_out: dict | None = None) -> dict:
    """Lower every entry function of ``module``. ``allocate(nbytes, align, image, label) -> address`` places
    a module-scope .global/.const variable in device memory (``image``: its first bytes, the rest zero).
    ``symbols_out`` (when given) receives {name: (VarDecl, address)} of those variables.
    Returns {kernel name: Program}, with the UnsupportedPTXError in place of the Program of a kernel that
    uses a construct gpusim does not model. The caller frees what was allocated when this raises."""
    symbols: dict[str, tuple[int, int]] = {}
    for var in module.globals:
        if var.space in ("global", "const"):
            image = global_var_image(var)
            nbytes = max(_var_bytes(var), len(image), 1)
            try:
                address = allocate(nbytes, max(var.align, 1), image, f".{var.space} variable '{var.name}'")
            except GpusimError as exc:
                raise PTXSyntaxError(f"cannot place the .{var.space} variable '{var.name}' ({nbytes} bytes): "
                                     f"{exc}", var.loc.file, var.loc.line, var.loc.column, var.name) from None
            symbols[var.name] = (L.SP_GLOBAL, address)
            if symbols_out is not None:     # Module.symbol(): the variable and its address
                symbols_out[var.name] = (var, address)
        elif var.space not in ("shared",):
            raise UnsupportedPTXError(f"module-scope .{var.space} variables are not supported",
                                      var.loc.file, var.loc.line, var.loc.column, var.name)
    programs: dict = {}
    for func in module.functions.values():
        if func.is_entry:
            own, barrier = symbols, None
            if grid_sync_line(func) is not None:     # this_grid().sync(): the barrier %envreg1/2 point to
                barrier = allocate(GRID_BARRIER_BYTES, GRID_BARRIER_BYTES, b"", f"grid barrier of '{func.name}'")
                own = {**symbols, GRID_BARRIER_SYMBOL: (L.SP_GLOBAL, barrier)}
            try:
                programs[func.name] = lower_function(module, func, own)
                programs[func.name].grid_barrier = barrier
            except UnsupportedPTXError as error:   # this kernel only: the module's others still run
                programs[func.name] = error
    return programs
