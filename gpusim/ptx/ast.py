"""The PTX syntax tree: what the parser produces and the lowering consumes.

Plain dataclasses, no behaviour. Register names keep their '%' (``%r1``);
``.reg .b32 %r<4>`` is expanded into ``%r0`` .. ``%r3``. Types are PTX type
names without the dot (``"f32"``, ``"u64"``, ``"pred"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SourceLoc:
    """Where a construct is in the PTX text (1-based line and column)."""

    file: str
    line: int
    column: int


@dataclass(frozen=True)
class Reg:
    """A register operand; ``negated`` for ``!%p`` predicate sources."""

    name: str
    negated: bool = False


@dataclass(frozen=True)
class SpecialReg:
    """A special register such as ``%tid.x`` (name ``%tid``, component ``x``) or ``%laneid`` (component None)."""

    name: str
    component: str | None = None


@dataclass(frozen=True)
class Imm:
    """An immediate. ``kind`` is ``int`` (value is a Python int, possibly negative),
    ``f32bits`` / ``f64bits`` (value is the raw IEEE bit pattern from ``0fXXXXXXXX`` /
    ``0dXXXXXXXXXXXXXXXX``) or ``float`` (a decimal literal such as ``1.5``; value is a Python float)."""

    value: int | float
    kind: str = "int"


@dataclass(frozen=True)
class Symbol:
    """A name: a variable (``mov.u64 %rd1, smem;``), a label (``bra $L__BB0_2``) or a function (``call``)."""

    name: str


@dataclass(frozen=True)
class Address:
    """A memory operand ``[base+offset]``: base is a register name (``base_is_reg``) or a
    variable/parameter symbol name; offset in bytes (may be negative). ``[imm]`` has base ''."""

    base: str
    offset: int = 0
    base_is_reg: bool = True


@dataclass(frozen=True)
class Vector:
    """A vector operand ``{%f1, %f2, _, %f4}``; ``_`` is ``Sink()``."""

    elems: tuple


@dataclass(frozen=True)
class TensorCoords(Vector):
    """The coordinates of a tensor operand ``[tmap, {c0, c1}]`` (cp.async.bulk.tensor): the parser splits it
    into the map's ``Address`` followed by this operand."""


@dataclass(frozen=True)
class PredPair:
    """The ``%p|%q`` destination of setp / the pair form of other ops."""

    first: str
    second: str


@dataclass(frozen=True)
class Sink:
    """The ``_`` operand (value discarded)."""


@dataclass(frozen=True)
class ParenList:
    """A parenthesised operand list, as in ``call (retval0), f, (param0, param1);``."""

    elems: tuple


Operand = Reg | SpecialReg | Imm | Symbol | Address | Vector | TensorCoords | PredPair | Sink | ParenList


@dataclass
class Instruction:
    """One PTX instruction.

    ``opcode`` is the first dotted component (``"ld"``); ``mods`` the rest in the order written
    (``ld.global.nc.v4.f32`` -> ``(".global", ".nc", ".v4", ".f32")``). ``guard`` is
    ``(predicate register name, negated)`` or None. ``text`` is the source line stripped.
    ``src_line`` is ``(file index, line)`` of the last ``.loc`` before it, or None.
    """

    opcode: str
    mods: tuple
    operands: list
    loc: SourceLoc
    text: str
    guard: tuple | None = None
    src_line: tuple | None = None


@dataclass
class VarDecl:
    """A ``.shared/.global/.const/.local`` variable (module or function scope).

    ``count`` is the number of elements (1 for scalars, the product of dimensions for arrays,
    None for ``extern .shared .b8 s[]``). ``init`` holds initializer values (ints or floats, flattened)
    or None. ``align`` is the ``.align`` value or the element size when absent."""

    space: str
    name: str
    type: str
    count: int | None
    align: int
    loc: SourceLoc
    extern: bool = False
    init: list | None = None


@dataclass
class Param:
    """A kernel or function parameter: ``.param .u64 name`` or ``.param .align 8 .b8 name[16]``."""

    name: str
    type: str
    count: int
    align: int
    loc: SourceLoc
    ptr_space: str | None = None
    array: bool = False          # declared with [N] or .vN: an aggregate (a struct or array passed by value)


@dataclass
class Function:
    """A ``.entry`` (``is_entry``) or ``.func``. ``regs`` maps each register name to its type;
    ``labels`` maps a label to the index in ``body`` of the instruction that follows it
    (``len(body)`` for a label at the very end). ``pragmas`` and performance directives
    (``.maxntid`` etc.) are kept as text. ``return_params`` for ``.func`` only."""

    name: str
    is_entry: bool
    params: list
    body: list
    labels: dict
    regs: dict
    local_vars: list
    loc: SourceLoc
    return_params: list = field(default_factory=list)
    directives: dict = field(default_factory=dict)
    visible: bool = True


@dataclass
class Module:
    """A parsed PTX file. ``files`` maps a ``.file`` index to its path (for ``.loc``).
    ``gpusim_regs`` maps a kernel name (or '*' for all) to the register count given by
    a ``// gpusim: regs=N`` comment (``// gpusim: regs=N kernel=NAME`` for one kernel);
    ``gpusim_regs_arch`` maps the same keys to the comment's per-architecture counts
    (``// gpusim: regs=N sm_80=A sm_90=B`` -> ``{"sm_80": A, "sm_90": B}``)."""

    file: str
    version: str
    target: str
    address_size: int
    functions: dict
    globals: list
    files: dict = field(default_factory=dict)
    gpusim_regs: dict = field(default_factory=dict)
    gpusim_regs_arch: dict = field(default_factory=dict)
