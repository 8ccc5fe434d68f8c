"""Calls to ``.func`` functions: linking a kernel and the functions it calls into one body.

What it models: the call sequence nvcc emits for a device function it does not inline::

    { // callseq 0, 0
    .param .b32 param0;
    st.param.b32 [param0+0], %r4;
    .param .b32 retval0;
    call.uni (retval0), _Z3fibi, (param0);
    ld.param.b32 %r5, [retval0+0];
    }

and ``vprintf`` (device ``printf``) and ``__assertfail`` (a failed ``assert()``). The kernel and every
``.func`` it reaches become one instruction list (the kernel first, then each function, its registers and
labels renamed ``name@function``), and the lowering turns ``call`` into ``OP_CALL`` and each function's
return into one ``OP_FRET`` row at its end (a ``ret`` elsewhere branches there, so a function's divergent
paths reconverge before it returns).

Frames. Every thread has a call stack in its local memory. A function's *frame* is, in this order: its
parameters and return parameters (each at its alignment), its ``.local`` variables (nvcc's
``__local_depot``), and, when the function makes a call that can come back to it (recursion), a save area
for its registers; rounded up to 16 bytes. The hidden register ``%__gpusim_fp`` holds the byte offset of
the running function's frame in the thread's local memory (0 in the kernel, whose frame is its own
``.local`` variables). A call's argument and return ``.param`` variables are the callee's frame: the
caller writes them at ``fp + frame(caller) + offset of that parameter in the callee``, and the callee
reads its parameters at ``fp + offset``. So every ``.param`` access of a call sequence and of a
function becomes a ``.local`` access, and each activation of a recursive function has its own frame
(its ``.local`` arrays are real per-thread local memory, their addresses usable as pointers).
Registers are per function; a call that can reach its caller again saves the caller's registers in the
caller's frame, and the return restores them (what ptxas's callee-saved registers and spills do).

Simplifications, stated: the call sequence is straight-line code, as nvcc emits it (an argument store
binds to the next ``call``, a return-value load to the previous one); indirect calls through a function
pointer (``call (r), %rd, (args), prototype;``) and calls of ``.extern`` functions other than
``vprintf`` and ``__assertfail`` are refused with ``UnsupportedPTXError`` naming the line (the kernel only: the module's
other kernels load). Frame sizes are gpusim's layout, not ptxas's stack frames.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from gpusim.arch import codes as c
from gpusim.errors import UnsupportedPTXError
from gpusim.ptx import ast

FP_REG = "%__gpusim_fp"
"""Hidden register: the running function's frame offset in the thread's local memory (bytes)."""
DEPTH_REG = "%__gpusim_depth"
"""Hidden register: the number of calls the thread is inside."""
PRINTF = "vprintf"
PRINTF_FRAME = (0, 8, 16, 24)
"""``vprintf(.param .b64 format, .param .b64 args) -> .param .b32``: offsets of the format pointer, the
argument-buffer pointer, the return value, and the size of its parameter area."""
ASSERT = "__assertfail"
ASSERT_FRAME = (0, 8, 16, 24, 32, 40)
"""``__assertfail(.param .b64 message, .param .b64 file, .param .b32 line, .param .b64 function, .param .b64
charSize)`` (what ``assert()`` calls when its condition fails): offsets of the five parameters, and the size of
its parameter area."""
ASSERT_FLAG = 1
"""``F_MODS`` of an ``OP_VPRINTF`` row that calls ``__assertfail`` (engine/semantics/calls.py)."""
EXTERN_FRAMES = {PRINTF: PRINTF_FRAME[3], ASSERT: ASSERT_FRAME[5]}
"""The ``.extern`` functions gpusim runs, with the size of their parameter areas."""
FRAME_ALIGN = 16
_SPACES = (".param", ".local", ".global", ".shared", ".const")


@dataclass
class CallSite:
    """What the lowering needs to emit one ``call``."""

    kind: str                  # "func", "printf" or "assert"
    callee: str
    caller: str
    frame_bytes: int           # the caller's frame: the callee's frame starts at fp + frame_bytes
    callee_frame_bytes: int
    target_label: str = ""     # label of the callee's first instruction
    save_regs: tuple = ()      # the caller's registers (renamed) to save around a recursive call
    save_offset: int = 0       # where in the caller's frame they go


@dataclass
class Linked:
    """A kernel linked with the functions it calls (see the module docstring)."""

    body: list
    labels: dict
    regs: dict
    local_vars: list
    calls: dict = field(default_factory=dict)          # id(call instruction) -> CallSite
    returns: set = field(default_factory=set)          # id(the final return row of each function)
    entry_frame_bytes: int = 0
    max_frame_bytes: int = 0                           # the largest frame of a called function
    static_stack_bytes: int = 0                        # frames of the deepest call chain (non-recursive)
    recursive: bool = False                            # some call can come back to its caller


def _err(ins: ast.Instruction, message: str) -> UnsupportedPTXError:
    return UnsupportedPTXError(message, ins.loc.file, ins.loc.line, ins.loc.column, ins.text)


def _align(value: int, align: int) -> int:
    align = max(align, 1)
    return (value + align - 1) // align * align


def _param_bytes(p: ast.Param) -> int:
    return c.TYPE_BYTES[c.TYPE_CODES[p.type]] * p.count if p.type in c.TYPE_CODES else 8


def _var_bytes(var: ast.VarDecl) -> int:
    return c.TYPE_BYTES[c.TYPE_CODES.get(var.type, c.T_B8)] * (var.count or 0)


def call_parts(ins: ast.Instruction) -> tuple[list, object, list]:
    """(return names, callee operand, argument names) of a ``call``."""
    ops = list(ins.operands)
    rets: list = []
    if ops and isinstance(ops[0], ast.ParenList):
        rets = [e.name for e in ops[0].elems if isinstance(e, ast.Symbol | ast.Reg)]
        ops = ops[1:]
    if not ops:
        raise _err(ins, "'call' needs a function name")
    callee = ops[0]
    args: list = []
    if len(ops) > 1 and isinstance(ops[1], ast.ParenList):
        args = [e.name if isinstance(e, ast.Symbol | ast.Reg) else None for e in ops[1].elems]
    return rets, callee, args


def _callee_of(module: ast.Module, func: ast.Function, ins: ast.Instruction) -> str:
    _, callee, _ = call_parts(ins)
    if isinstance(callee, ast.Reg) or (isinstance(callee, ast.Symbol) and callee.name in func.regs):
        raise _err(ins, "indirect calls through a function pointer (call with a register and a "
                   ".callprototype) are not supported; call the function by name")
    name = callee.name if isinstance(callee, ast.Symbol) else "?"
    if name in EXTERN_FRAMES or name in module.functions:
        return name
    raise _err(ins, f"call of '{name}', a function declared without a body (.extern), is not supported; "
               f"gpusim runs .func definitions of the same module, {PRINTF} (printf) and {ASSERT} (assert)")


class _Frame:
    """The frame layout of one function (see the module docstring)."""

    def __init__(self, func: ast.Function, save: bool):
        self.offsets: dict[str, int] = {}
        offset = 0
        if not func.is_entry:
            for p in list(func.params) + list(func.return_params):
                offset = _align(offset, p.align)
                self.offsets[p.name] = offset
                offset += _param_bytes(p)
        for var in func.local_vars:
            if var.space == "local":
                offset = _align(offset, var.align)
                self.offsets[var.name] = offset
                offset += _var_bytes(var)
        self.param_offsets = {p.name: self.offsets[p.name] for p in list(func.params) +
                              list(func.return_params)} if not func.is_entry else {}
        self.save_offset = _align(offset, 8)
        if save:
            offset = self.save_offset + 8 * len(func.regs)
        self.bytes = _align(offset, FRAME_ALIGN)


def _reachable(module: ast.Module, entry: ast.Function) -> tuple[list, dict]:
    """Functions reached from ``entry`` (in first-call order) and each one's direct callees."""
    order: list[str] = []
    callees: dict[str, list] = {}
    pending = [entry]
    while pending:
        func = pending.pop(0)
        found = []
        for ins in func.body:
            if ins.opcode == "call":
                name = _callee_of(module, func, ins)
                found.append(name)
                if name not in EXTERN_FRAMES and name not in order and name != entry.name:
                    order.append(name)
                    pending.append(module.functions[name])
        callees[func.name] = found
    return order, callees


def _reaches(callees: dict, start: str, goal: str) -> bool:
    seen, pending = set(), [start]
    while pending:
        name = pending.pop()
        if name == goal:
            return True
        if name in seen:
            continue
        seen.add(name)
        pending.extend(callees.get(name, ()))
    return False


def link_calls(module: ast.Module, entry: ast.Function, entry_body: list) -> Linked | None:
    """The kernel ``entry`` (its body with the implicit exit) linked with the functions it calls, or None
    when it makes no call."""
    if not any(ins.opcode == "call" for ins in entry_body):
        return None
    order, callees = _reachable(module, entry)
    funcs = {name: module.functions[name] for name in order}
    recursive_sites = {name: any(_reaches(callees, callee, name) for callee in callees[name]
                                 if callee not in EXTERN_FRAMES)
                       for name in [entry.name] + order}
    frames = {entry.name: _Frame(entry, False)}
    for name, func in funcs.items():
        frames[name] = _Frame(func, recursive_sites[name])
    linker = _Linker(module, funcs, frames, callees)
    linked = Linked(body=[], labels={}, regs={FP_REG: "b64", DEPTH_REG: "b32", **entry.regs},
                    local_vars=[v for v in entry.local_vars if v.space != "param"])
    linker.append(linked, entry, entry_body, rename=False)
    for func in funcs.values():
        linker.append(linked, func, list(func.body), rename=True)
    linked.entry_frame_bytes = frames[entry.name].bytes
    sizes = [frames[name].bytes for name in order] + [size for name, size in EXTERN_FRAMES.items() if any(
        name in found for found in callees.values())]
    linked.max_frame_bytes = max(sizes, default=0)
    linked.recursive = any(recursive_sites[name] for name in order)
    linked.static_stack_bytes = 0 if linked.recursive else _deepest(entry.name, callees, frames)
    return linked


def _deepest(name: str, callees: dict, frames: dict) -> int:
    """Bytes of the deepest chain of frames below ``name`` (no recursion)."""
    best = 0
    for callee in callees.get(name, ()):
        size = EXTERN_FRAMES[callee] if callee in EXTERN_FRAMES else \
            frames[callee].bytes + _deepest(callee, callees, frames)
        best = max(best, size)
    return best


class _Linker:
    def __init__(self, module, funcs, frames, callees):
        self.module = module
        self.funcs = funcs
        self.frames = frames
        self.callees = callees
        self.skip_count = 0

    # ------------------------------------------------------------ one function
    def append(self, linked: Linked, func: ast.Function, body: list, rename: bool) -> None:
        name = func.name
        frame = self.frames[name]
        suffix = f"@{name}"
        regs = func.regs

        def reg(n: str) -> str:
            return n + suffix if rename and n in regs else n

        def label(n: str) -> str:
            return n + suffix if rename else n

        if rename:
            for r, kind in regs.items():
                linked.regs[reg(r)] = kind
            for var in func.local_vars:
                if var.space not in ("local", "param"):
                    linked.local_vars.append(var)
        callseq = {v.name for v in func.local_vars if v.space == "param"}
        call_at = [i for i, ins in enumerate(body) if ins.opcode == "call"]
        out: list = []
        labels_at: dict[int, list] = {}
        for lab, index in func.labels.items():
            labels_at.setdefault(index, []).append(label(lab))
        ret_label = f"$__gpusim_return{suffix}"
        last_is_ret = bool(body) and body[-1].opcode == "ret" and body[-1].guard is None and \
            len(body) not in labels_at
        for i, ins in enumerate(body):
            for lab in labels_at.get(i, ()):
                linked.labels[lab] = len(linked.body) + len(out)
            if rename and ins.opcode == "ret":
                if i == len(body) - 1 and last_is_ret:
                    continue      # the final return row below takes its place
                ins = dataclasses.replace(ins, opcode="bra", mods=(), operands=[ast.Symbol(ret_label)])
            new = self._rewrite(func, ins, i, call_at, callseq, frame, reg, label, rename)
            if ins.opcode == "call":
                site = self._site(func, ins, frame)
                if new.guard is not None:       # @p call f: the lanes the guard turns off skip the call
                    skip = f"$__gpusim_skip{self.skip_count}{suffix}"
                    self.skip_count += 1
                    out.append(dataclasses.replace(new, opcode="bra", mods=(), operands=[ast.Symbol(skip)],
                                                   guard=(new.guard[0], not new.guard[1])))
                    new = dataclasses.replace(new, guard=None)
                    out.append(new)
                    linked.calls[id(new)] = site
                    linked.labels[skip] = len(linked.body) + len(out)
                    continue
                linked.calls[id(new)] = site
            out.append(new)
        if rename:
            where = body[-1] if body else None
            linked.labels[ret_label] = len(linked.body) + len(out)
            for lab in labels_at.get(len(body), ()):
                linked.labels[lab] = len(linked.body) + len(out)
            final = ast.Instruction(opcode="ret", mods=(), operands=[],
                                    loc=where.loc if where is not None else func.loc,
                                    text=where.text if where is not None and where.opcode == "ret" else
                                    f"ret;  // the end of {name}",
                                    src_line=where.src_line if where is not None else None)
            out.append(final)
            linked.returns.add(id(final))
            linked.labels[f"{name}@entry"] = len(linked.body)
        else:
            for lab in labels_at.get(len(body), ()):
                linked.labels[lab] = len(linked.body) + len(out)
        linked.body.extend(out)

    def _site(self, func: ast.Function, ins: ast.Instruction, frame: _Frame) -> CallSite:
        callee = _callee_of(self.module, func, ins)
        if callee in EXTERN_FRAMES:
            return CallSite(kind="printf" if callee == PRINTF else "assert", callee=callee, caller=func.name,
                            frame_bytes=frame.bytes, callee_frame_bytes=EXTERN_FRAMES[callee])
        save: tuple = ()
        if _reaches(self.callees, callee, func.name):
            suffix = f"@{func.name}"
            save = tuple(r + suffix for r in func.regs)
        return CallSite(kind="func", callee=callee, caller=func.name, frame_bytes=frame.bytes,
                        callee_frame_bytes=self.frames[callee].bytes, target_label=f"{callee}@entry",
                        save_regs=save, save_offset=frame.save_offset)

    # ------------------------------------------------------------ one instruction
    def _rewrite(self, func, ins, index, call_at, callseq, frame, reg, label, rename) -> ast.Instruction:
        own = frame.offsets if rename else {}

        def operand(op):
            if isinstance(op, ast.Reg):
                return dataclasses.replace(op, name=reg(op.name))
            if isinstance(op, ast.Symbol):
                if op.name in func.labels:
                    return ast.Symbol(label(op.name))
                if op.name in func.regs:
                    return ast.Symbol(reg(op.name))
                if op.name in own or op.name in callseq:
                    raise _err(ins, f"'{op.name}' is a .param or .local variable of a .func (or of a call): "
                               "its address is only supported as the source of 'mov'")
                return op
            if isinstance(op, ast.Address):
                if op.base_is_reg and op.base in func.regs:
                    return dataclasses.replace(op, base=reg(op.base))
                if op.base in callseq:
                    return ast.Address(FP_REG, self._callseq_offset(func, ins, index, call_at, op.base, frame)
                                       + op.offset, True)
                if op.base in own:
                    return ast.Address(FP_REG, own[op.base] + op.offset, True)
                return op
            if isinstance(op, ast.Vector):
                return ast.Vector(tuple(operand(e) for e in op.elems))
            if isinstance(op, ast.PredPair):
                return ast.PredPair(reg(op.first), op.second if op.second == "_" else reg(op.second))
            if isinstance(op, ast.ParenList):
                return op
            return op

        guard = (reg(ins.guard[0]), ins.guard[1]) if ins.guard is not None else None
        ops = list(ins.operands)
        if ins.opcode == "call":
            return dataclasses.replace(ins, guard=guard)
        if ins.opcode == "mov" and rename and len(ops) == 2 and isinstance(ops[1], ast.Symbol | ast.Reg) \
                and ops[1].name in own and ops[1].name not in func.regs:
            # the address of a frame variable: fp + its offset
            dst = operand(ops[0])
            if not isinstance(dst, ast.Reg) or func.regs.get(ops[0].name, "b64")[1:] != "64":
                raise _err(ins, "the address of a .local variable of a .func needs a 64-bit register")
            return dataclasses.replace(ins, opcode="add", mods=(".u64",),
                                       operands=[dst, ast.Reg(FP_REG), ast.Imm(own[ops[1].name])], guard=guard)
        new_ops = [operand(op) for op in ops]
        mods = ins.mods
        if any(isinstance(op, ast.Address) and op.base == FP_REG for op in new_ops) or (rename and ".param" in mods):
            # a frame access (a .param of the call sequence or of the function, or its .local variable); in a
            # .func the .param space is frames only, so a .param address held in a register is fp + offset too
            mods = (".local",) + tuple(m for m in mods if m not in _SPACES)
        return dataclasses.replace(ins, operands=new_ops, mods=mods, guard=guard)

    def _callseq_offset(self, func, ins, index, call_at, name, frame) -> int:
        """Offset from fp of call-sequence parameter ``name`` used at ``index``: the caller's frame, then the
        parameter's place in the callee's frame."""
        if ins.opcode == "ld":
            calls = [i for i in call_at if i < index]
            site = calls[-1] if calls else None
        else:
            calls = [i for i in call_at if i > index]
            site = calls[0] if calls else None
        if site is None:
            raise _err(ins, f"'{name}' is a call parameter, but no call "
                       f"{'precedes' if ins.opcode == 'ld' else 'follows'} this access in '{func.name}'")
        call = func.body[site]
        rets, _, args = call_parts(call)
        callee = _callee_of(self.module, func, call)
        if callee == PRINTF:
            slots = {n: off for n, off in zip(args + rets, (PRINTF_FRAME[0], PRINTF_FRAME[1])[:len(args)] +
                                              (PRINTF_FRAME[2],) * len(rets), strict=False)}
            if len(args) != 2 or len(rets) > 1:
                raise _err(call, f"{PRINTF} takes (format, arguments) and returns one value")
        elif callee == ASSERT:
            if len(args) != 5 or rets:
                raise _err(call, f"{ASSERT} takes (message, file, line, function, charSize) and returns nothing")
            slots = dict(zip(args, ASSERT_FRAME[:5], strict=True))
        else:
            target = self.funcs[callee]
            params = self.frames[callee].param_offsets
            formal = [p.name for p in target.params]
            returns = [p.name for p in target.return_params]
            if len(args) != len(formal) or len(rets) > len(returns):
                raise _err(call, f"'{callee}' takes {len(formal)} parameters and returns {len(returns)} values; "
                           f"this call passes {len(args)} and expects {len(rets)}")
            slots = {n: params[p] for n, p in zip(args, formal, strict=True)}
            slots.update({n: params[p] for n, p in zip(rets, returns, strict=False)})
        if name not in slots:
            raise _err(ins, f"'{name}' is not a parameter of the call at line {call.loc.line}")
        return frame.bytes + slots[name]


# ---------------------------------------------------------------- rows (the engine's side: engine/semantics/calls.py)
# OP_CALL:    F_TARGET the callee's first pc; F_AUX the caller's frame bytes; F_SIZE the callee's frame bytes;
#             F_ABASE the fp register; F_AOFF the save area's offset in the caller's frame; sources (immediates):
#             the first and one past the last register to save (equal: none), the depth register.
# OP_FRET:    F_ABASE the fp register; source 0 the depth register (the rest is read from the call row, the
#             instruction before the pc the caller resumes at).
# OP_VPRINTF: F_AUX the caller's frame bytes (vprintf's parameters follow it); F_ABASE the fp register;
#             F_MODS ASSERT_FLAG for a call of __assertfail (its parameters follow the caller's frame too).
def lower_call_row(fl, ins: ast.Instruction, row_builder, label_pc: dict, linked: Linked) -> None:
    """Fill the code row of a linked ``call`` or function return (see the layout above)."""
    from gpusim.arch import isa
    from gpusim.arch import layout as L

    row = row_builder.row
    fp = fl.reg_index[FP_REG]
    depth = fl.reg_index[DEPTH_REG]
    row[L.F_ABASE] = fp
    if id(ins) in linked.returns:
        row[L.F_OP] = c.OP_FRET
        row_builder.add_src((L.SK_IMM, depth))
        row[L.F_ISA] = isa.isa_row(c.OP_FRET, c.T_NONE)
        return
    site = linked.calls[id(ins)]
    row[L.F_AUX] = site.frame_bytes
    row[L.F_SIZE] = site.callee_frame_bytes
    if site.kind in ("printf", "assert"):
        row[L.F_OP] = c.OP_VPRINTF
        row[L.F_MODS] = ASSERT_FLAG if site.kind == "assert" else 0
        row[L.F_ISA] = isa.isa_row(c.OP_VPRINTF, c.T_NONE)
        return
    row[L.F_OP] = c.OP_CALL
    row[L.F_TARGET] = label_pc[site.target_label]
    row[L.F_AOFF] = site.save_offset
    lo = hi = 0
    if site.save_regs:
        lo = fl.reg_index[site.save_regs[0]]
        hi = fl.reg_index[site.save_regs[-1]] + 1
        if hi - lo != len(site.save_regs):
            raise _err(ins, "internal: the registers of a function are not contiguous")
    row_builder.add_src((L.SK_IMM, lo))
    row_builder.add_src((L.SK_IMM, hi))
    row_builder.add_src((L.SK_IMM, depth))
    row[L.F_ISA] = isa.isa_row(c.OP_CALL, c.T_NONE)
