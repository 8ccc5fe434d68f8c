"""Parsing PTX declarations: variables, parameters and registers.

What it models: ``.global/.shared/.const/.local`` variables (alignment, vector types, arrays of several
dimensions, ``extern`` unsized arrays, initializers), ``.param`` declarations with ``.ptr`` attributes,
and ``.reg`` lists with the ``%r<N>`` shorthand.

What it simplifies: vector variables are flattened into elements; initializer values follow the rule
stated in :mod:`gpusim.ptx.parser`; vector registers (``.reg .v4``) and ``.reg`` parameters are refused
as unsupported.
"""

from __future__ import annotations

import struct

from gpusim.errors import UnsupportedPTXError
from gpusim.ptx.ast import Param, SourceLoc, VarDecl
from gpusim.ptx.lexer import DIRECTIVE, F32BITS, F64BITS, FLOAT, INT, WORD, Token, TokenCursor

# Bytes per element of each PTX fundamental type (the packed pairs such as f16x2 count as one element).
TYPE_SIZE_BYTES = {
    "pred": 1,
    "b8": 1,
    "u8": 1,
    "s8": 1,
    "b16": 2,
    "u16": 2,
    "s16": 2,
    "f16": 2,
    "bf16": 2,
    "b32": 4,
    "u32": 4,
    "s32": 4,
    "f32": 4,
    "f16x2": 4,
    "bf16x2": 4,
    "tf32": 4,
    "b64": 8,
    "u64": 8,
    "s64": 8,
    "f64": 8,
    "b128": 16,
    "e4m3x2": 2,
    "e5m2x2": 2,
    "e2m3x2": 2,
    "e3m2x2": 2,
    "ue8m0x2": 2,
    "e2m1x2": 1,
}
FLOAT_TYPES = frozenset({"f16", "bf16", "f32", "f64"})
STATE_SPACES = (".global", ".shared", ".const", ".local")
UNSUPPORTED_DIRECTIVES = {
    ".tex": "texture references",
    ".texref": "texture references",
    ".surfref": "surface references",
    ".samplerref": "sampler references",
    ".alias": "function aliases",
    ".callprototype": "indirect calls",
    ".branchtargets": "branch tables",
    ".calltargets": "indirect calls",
}
MAX_BLOCK_DEPTH = 64
_MAX_DIMENSIONS = 8
_MAX_REGISTERS_PER_DECLARATION = 1 << 20  # '%r<N>' beyond this is a typo, not a kernel

MAX_DECLARATION_BYTES = {
    "shared": (1 << 32, "the shared window; a launch is further limited by the config's shared memory per block"),
    "local": (512 * 1024, "CUDA's local memory per thread"),
    "const": (64 * 1024, "one constant bank"),
    "global": (1 << 40, "gpusim's limit on one variable; the device's memory limits it further at load"),
    "param": (1 << 16, "parameter space"),
}
"""Largest declaration of each state space, checked when the PTX is parsed (before anything is allocated)."""
MAX_ALIGN_BYTES = 1 << 16


class DeclarationParser(TokenCursor):
    """The declaration grammar, over a token cursor (the module parser builds on it)."""

    def loc(self, token: Token) -> SourceLoc:
        line, column = self.source.line_col(token.pos)
        return SourceLoc(self.source.filename, line, column)

    def parse_decl_attributes(self, context: str, allow_ptr: bool = False) -> tuple:
        """The directives between a state space and a name: ``.align N``, ``.v2/.v4/.v8``, the type and
        (for parameters) ``.ptr[.space][.align N]``. Returns (type, vector_length, align, ptr_space)."""
        type_name = None
        vector_length = 1
        align = None
        ptr_space = None
        while self.peek().kind == DIRECTIVE:
            token = self.next()
            text = token.text
            if text == ".align":
                align = self.parse_alignment()
            elif text in (".v2", ".v4", ".v8"):
                vector_length = int(text[2:])
            elif text[1:] in TYPE_SIZE_BYTES:
                if type_name is not None:
                    raise self.error_at(token, f"{context} has two types ('.{type_name}' and '{text}')")
                type_name = text[1:]
            elif text == ".ptr" and allow_ptr:
                ptr_space = "generic"
                if self.peek().text in STATE_SPACES:
                    ptr_space = self.next().text[1:]
                if self.peek().text == ".align":
                    self.next()
                    self.parse_alignment()
            elif text in UNSUPPORTED_DIRECTIVES:
                raise self.error_at(
                    token,
                    f"{UNSUPPORTED_DIRECTIVES[text]} ('{text}') are not supported",
                    UnsupportedPTXError,
                )
            elif text == ".attribute":
                raise self.error_at(
                    token,
                    "'.attribute(...)' on variables (managed memory) is not supported",
                    UnsupportedPTXError,
                )
            else:
                raise self.error_at(
                    token,
                    f"unexpected '{text}' in {context}; expected a type such as '.u32', "
                    "'.align N' or '.v2/.v4'",
                )
        if type_name is None:
            raise self.error_at(
                self.peek(),
                f"expected a type such as '.u32' or '.f32' in {context}, found {self.describe(self.peek())}",
            )
        if align is None:
            align = TYPE_SIZE_BYTES[type_name] * vector_length
        return type_name, vector_length, align, ptr_space

    def parse_alignment(self) -> int:
        token = self.expect_kind(INT, "an alignment in bytes after '.align'")
        if token.value <= 0 or token.value & (token.value - 1):
            raise self.error_at(token, f"alignment must be a power of two, found {token.text}")
        if token.value > MAX_ALIGN_BYTES:
            raise self.error_at(token, f"alignment {token.text} is larger than gpusim supports "
                                f"({MAX_ALIGN_BYTES} bytes)")
        return token.value

    def parse_declared_name(self, what: str) -> Token:
        token = self.expect_kind(WORD, f"a {what} name")
        if "." in token.text:
            raise self.error_at(
                token, f"'{token.text}' is not a valid {what} name (names cannot contain '.')"
            )
        return token

    def parse_dimensions(self) -> tuple[list[int | None], Token | None]:
        """``[4][8]`` -> [4, 8]; ``[]`` -> [None] (only as the first dimension)."""
        dimensions: list[int | None] = []
        first = None
        while self.peek().kind == "[":
            bracket = self.next()
            first = first or bracket
            if len(dimensions) >= _MAX_DIMENSIONS:
                raise self.error_at(bracket, f"more than {_MAX_DIMENSIONS} array dimensions")
            if self.peek().kind == "]":
                if dimensions:
                    raise self.error_at(bracket, "only the first array dimension may be left empty")
                dimensions.append(None)
            else:
                size = self.expect_kind(INT, "an array size or ']'")
                if size.value == 0:
                    raise self.error_at(size, "array size must be positive")
                dimensions.append(size.value)
            self.expect("]", "expected ']' after the array size")
        return dimensions, first

    def parse_variable_decl(self, extern: bool = False) -> list[VarDecl]:
        """``.space attributes name[dims] [= init] {, name ...};`` at module or function scope."""
        space_token = self.next()
        space = space_token.text[1:]
        context = f"'.{space}' declaration"
        type_name, vector_length, align, _ = self.parse_decl_attributes(context)
        decls = []
        while True:
            name_token = self.parse_declared_name("variable")
            dimensions, bracket = self.parse_dimensions()
            count: int | None = vector_length
            for size in dimensions:
                count = None if size is None or count is None else count * size
            init = None
            if self.peek().kind == "=":
                equals = self.next()
                if space not in ("global", "const"):
                    raise self.error_at(
                        equals, "initializers are allowed only on '.global' and '.const' variables"
                    )
                init = self.parse_initializer(type_name)
                if count is None:
                    count = len(init)
                elif len(init) > count:
                    raise self.error_at(
                        equals,
                        f"initializer has {len(init)} values but '{name_token.text}' has {count} elements",
                    )
            if count is None and not extern:
                raise self.error_at(
                    bracket or name_token,
                    f"array '{name_token.text}' needs a size, an initializer or '.extern'",
                )
            if count is not None and type_name in TYPE_SIZE_BYTES:
                nbytes = count * TYPE_SIZE_BYTES[type_name]
                limit, why = MAX_DECLARATION_BYTES.get(space, MAX_DECLARATION_BYTES["global"])
                if nbytes > limit:
                    raise self.error_at(
                        bracket or name_token,
                        f"'{name_token.text}' is {nbytes} bytes; a .{space} variable can be at most {limit} "
                        f"bytes ({why})",
                    )
            decls.append(
                VarDecl(
                    space=space,
                    name=name_token.text,
                    type=type_name,
                    count=count,
                    align=align,
                    loc=self.loc(name_token),
                    extern=extern,
                    init=init,
                )
            )
            if not self.accept(","):
                break
        self.expect_statement_end("declaration")
        return decls

    def parse_initializer(self, type_name: str) -> list:
        """``= 5``, ``= {1, 2, 3}`` or nested ``{{...}, {...}}``, flattened."""
        values: list = []
        depth = 0
        while True:
            if self.peek().kind == "{":
                self.next()
                depth += 1
                if depth > MAX_BLOCK_DEPTH:
                    raise self.error_at(self.peek(), "initializer braces nested too deeply")
                continue
            values.append(self.parse_initializer_value(type_name))
            while depth and self.peek().kind == "}":
                self.next()
                depth -= 1
            if depth == 0:
                return values
            self.expect(",", "expected ',' or '}' in the initializer")

    def parse_initializer_value(self, type_name: str) -> int | float:
        negative = self.accept("-") is not None
        token = self.next()
        if token.kind == WORD:
            raise self.error_at(
                token,
                "address initializers ('generic(x)' or a symbol) are not supported",
                UnsupportedPTXError,
            )
        value = self.literal_value(token, negative, "an initializer value")
        if type_name in FLOAT_TYPES:
            return self.float_initializer(token, value, type_name)
        if isinstance(value, float):
            raise self.error_at(
                token, f"floating-point initializer '{token.text}' for a '.{type_name}' variable"
            )
        return value

    def literal_value(self, token: Token, negative: bool, what: str) -> int | float:
        """The value of a numeric literal, negated when a '-' preceded it (0f/0d: the sign bit flips)."""
        if token.kind == INT or token.kind == FLOAT:
            return -token.value if negative else token.value
        if token.kind == F32BITS:
            return token.value ^ (1 << 31) if negative else token.value
        if token.kind == F64BITS:
            return token.value ^ (1 << 63) if negative else token.value
        raise self.error_at(token, f"expected {what}, found {self.describe(token)}")

    @staticmethod
    def float_initializer(token: Token, value: int | float, type_name: str) -> int | float:
        """In a float variable an int means raw bits: 0f/0d bits of matching width stay, others convert."""
        if token.kind == INT:
            return float(value)
        if token.kind in (F32BITS, F64BITS):
            width = 32 if token.kind == F32BITS else 64
            if TYPE_SIZE_BYTES[type_name] * 8 == width:
                return value
            return _bits_to_float(int(value), width)
        return value

    def parse_param(self, context: str) -> Param:
        token = self.peek()
        if token.text == ".reg":
            raise self.error_at(
                token, "'.reg' parameters are not supported; declare them '.param'", UnsupportedPTXError
            )
        self.expect(".param", f"expected '.param' in {context}")
        type_name, vector_length, align, ptr_space = self.parse_decl_attributes(
            "parameter declaration", allow_ptr=True
        )
        name_token = self.parse_declared_name("parameter")
        dimensions, bracket = self.parse_dimensions()
        count = vector_length
        for size in dimensions:
            if size is None:
                raise self.error_at(
                    bracket or name_token, "unsized parameter arrays are not supported", UnsupportedPTXError
                )
            count *= size
        return Param(
            name=name_token.text,
            type=type_name,
            count=count,
            align=align,
            loc=self.loc(name_token),
            ptr_space=ptr_space,
            array=bool(dimensions) or vector_length > 1,
        )

    def parse_param_list(self, context: str) -> list[Param]:
        self.expect("(", f"expected '(' to open the {context}")
        params = []
        if self.peek().kind != ")":
            params.append(self.parse_param(context))
            while self.accept(","):
                params.append(self.parse_param(context))
        self.expect(")", f"expected ',' or ')' in the {context}")
        return params

    def parse_reg_decl(self, regs: dict) -> None:
        """``.reg .TYPE %r<N>, %x, name;`` -> name: type entries in ``regs`` (``%r<4>`` -> %r0..%r3); a name
        declared again (in a nested block) keeps its first type."""
        self.next()
        while self.peek().kind == DIRECTIVE and self.peek().text in (".v2", ".v4", ".v8"):
            raise self.error_at(
                self.peek(),
                "vector registers ('.reg .v4 ...') are not supported; declare scalar registers",
                UnsupportedPTXError,
            )
        type_token = self.expect_kind(DIRECTIVE, "a register type such as '.b32' after '.reg'")
        type_name = type_token.text[1:]
        if type_name not in TYPE_SIZE_BYTES:
            raise self.error_at(type_token, f"unknown register type '{type_token.text}'")
        while True:
            name_token = self.parse_declared_name("register")
            name = name_token.text
            if self.accept("<"):
                count_token = self.expect_kind(INT, "a register count after '<'")
                count = count_token.value
                if count > _MAX_REGISTERS_PER_DECLARATION:
                    raise self.error_at(
                        count_token,
                        f"register count {count} is too large (at most {_MAX_REGISTERS_PER_DECLARATION})",
                    )
                self.expect(">", "expected '>' after the register count")
                for number in range(count):
                    regs.setdefault(f"{name}{number}", type_name)
            else:
                regs.setdefault(name, type_name)
            if not self.accept(","):
                break
        self.expect_statement_end("'.reg' declaration")


def _bits_to_float(bits: int, width: int) -> float:
    """The value of IEEE-754 ``bits`` of ``width`` 32 or 64."""
    return struct.unpack("<f" if width == 32 else "<d", bits.to_bytes(width // 8, "little"))[0]


def size_bytes(decl: VarDecl) -> int:
    """Bytes a declaration occupies (0 for an unsized extern array)."""
    return TYPE_SIZE_BYTES[decl.type] * (decl.count or 0)
