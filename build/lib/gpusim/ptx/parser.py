"""PTX text -> the syntax tree of :mod:`gpusim.ptx.ast` (``Module`` of ``Function`` s).

What it models: the PTX that ``nvcc -ptx`` emits for sm_70..sm_90 (PTX ISA 7.x-9.x) and hand-written
PTX — module directives (``.version``, ``.target``, ``.address_size``, ``.file``, ``.loc``,
``.section``, ``.pragma``), module-scope variables with initializers, ``.entry``/``.func``
definitions and prototypes, register and variable declarations, labels, guarded instructions and
every operand form (see :mod:`gpusim.ptx.operands`).

What it checks: every token is where the grammar allows it, every register an instruction names is
declared, every label/variable/function it names exists, labels are not defined twice. Errors are
:class:`~gpusim.errors.PTXSyntaxError` (malformed) or :class:`~gpusim.errors.UnsupportedPTXError`
(valid PTX the syntax tree cannot represent), with file, line, column and the line's text.

What it simplifies (each a choice the lowering relies on):

- Nested ``{ }`` blocks are flattened: their registers join ``Function.regs`` (a name declared again
  keeps its first type) and their variables join ``Function.local_vars``. Call-sequence parameters
  (``.param .b32 param0;`` inside a block) are ``VarDecl(space="param")`` in ``local_vars``, one per
  name; a name declared again with a larger size keeps the larger size and alignment.
- Opcodes are not checked against a table here: ``gpusim.isa`` is the one opcode table, and the
  lowering reports opcodes it does not know, at the instruction's location.
- Function prototypes (``.extern .func ...;``, ``.func f(...);``) make a name callable but are not
  put in ``Module.functions``; only definitions with a body are.
- ``Module.target`` is the architecture (``sm_80``); other ``.target`` options are validated and
  dropped. ``.address_size`` defaults to 32, as the PTX ISA says.
- ``.loc`` keeps ``(file index, line)``; the column, ``function_name`` and ``inlined_at`` parts are
  parsed and dropped. ``.section`` blocks (DWARF data) are skipped. Module-scope ``.pragma`` is
  accepted and dropped; function-scope ones go to ``Function.directives["pragma"]``.
- Variable initializers: integer literals stay ints; ``0f``/``0d`` literals are raw bit patterns
  (ints) when their width matches the variable's float type and converted to Python floats when it
  does not; a decimal literal is a Python float, and an integer literal in a float variable becomes
  a float, so in an ``f32``/``f64`` variable an int always means raw bits.
- Vector variables (``.global .v4 .f32 x``) are flattened: type ``f32``, four times the elements.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

from gpusim.errors import PTXSyntaxError, UnsupportedPTXError
from gpusim.ptx.ast import Function, Instruction, Module, Param, SourceLoc, VarDecl
from gpusim.ptx.lexer import (
    DIRECTIVE,
    EOF,
    F32BITS,
    F64BITS,
    FLOAT,
    INT,
    STRING,
    WORD,
    SourceText,
    Token,
    TokenCursor,
    tokenize,
)
from gpusim.ptx.operands import InstructionParser, NameRef, reclassify_operand

# Bytes per element of each PTX fundamental type (the packed pairs such as f16x2 count as one element).
TYPE_SIZE_BYTES = {
    "pred": 1,
    "b8": 1, "u8": 1, "s8": 1,
    "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
    "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
    "b64": 8, "u64": 8, "s64": 8, "f64": 8,
    "b128": 16,
    "e4m3x2": 2, "e5m2x2": 2, "e2m3x2": 2, "e3m2x2": 2, "ue8m0x2": 2, "e2m1x2": 1,
}
FLOAT_TYPES = frozenset({"f16", "bf16", "f32", "f64"})

_STATE_SPACES = (".global", ".shared", ".const", ".local")
_LINKAGES = (".visible", ".extern", ".weak", ".common")
_MODULE_DIRECTIVES = (
    ".version", ".target", ".address_size", ".file", ".loc", ".section", ".pragma",
    ".visible", ".extern", ".weak", ".common", ".entry", ".func",
    ".global", ".shared", ".const", ".local",
)
_BODY_DIRECTIVES = (".reg", ".local", ".shared", ".const", ".global", ".param", ".extern", ".loc", ".pragma")
_UNSUPPORTED_MODULE_DIRECTIVES = {
    ".tex": "texture references", ".texref": "texture references", ".surfref": "surface references",
    ".samplerref": "sampler references", ".alias": "function aliases", ".callprototype": "indirect calls",
    ".branchtargets": "branch tables", ".calltargets": "indirect calls",
}
# Function-header performance directives: name -> how many integers follow (0 = a flag).
_INT_LIST_DIRECTIVES = (".maxntid", ".reqntid", ".reqnctapercluster")
_INT_DIRECTIVES = (".minnctapersm", ".maxnctapersm", ".maxnreg", ".maxclusterrank", ".abi_preserve",
                   ".abi_preserve_control")
_FLAG_DIRECTIVES = (".noreturn", ".explicitcluster", ".blocksareclusters")
_HEADER_DIRECTIVES = _INT_LIST_DIRECTIVES + _INT_DIRECTIVES + _FLAG_DIRECTIVES + (".pragma",)
_TARGET_OPTIONS = ("texmode_unified", "texmode_independent", "debug", "map_f64_to_f32")
_LOC_ATTRIBUTES = ("function_name", "inlined_at")
_PREDEFINED_SYMBOLS = frozenset({"WARP_SZ"})
_MAX_BLOCK_DEPTH = 64
_MAX_DIMENSIONS = 8
_MAX_REGISTERS_PER_DECLARATION = 1 << 20  # '%r<N>' beyond this is a typo, not a kernel
_DECIMAL = re.compile(r"[0-9]+")


def parse_ptx(text: str, filename: str = "<ptx>") -> Module:
    """Parse PTX source ``text`` (``filename`` is used in error messages and ``Module.file``)."""
    source = SourceText(text, filename)
    tokens, gpusim_comments = tokenize(source)
    return _ModuleParser(source, tokens, gpusim_comments).parse()


def parse_file(path: str | Path) -> Module:
    """Read and parse the PTX file at ``path``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise PTXSyntaxError(f"not a UTF-8 text file ({error.reason} at byte {error.start})", str(path)) from None
    return parse_ptx(text, str(path))


class _FunctionScope:
    """What is declared inside the function being parsed (its body is flattened into these)."""

    def __init__(self, name: str):
        self.name = name
        self.regs: dict[str, str] = {}
        self.labels: dict[str, int] = {}
        self.label_positions: dict[str, int] = {}
        self.local_vars: list[VarDecl] = []
        self.local_var_index: dict[tuple[str, str], int] = {}
        self.body: list[Instruction] = []
        self.refs: list[NameRef] = []
        self.directives: dict = {}
        self.src_line: tuple | None = None


class _ModuleParser(TokenCursor):
    """Recursive-descent parser over the token list; one instance parses one module."""

    def __init__(self, source: SourceText, tokens: list[Token], gpusim_comments: list[Token]):
        super().__init__(source, tokens)
        self.gpusim_comments = gpusim_comments
        self.version: str | None = None
        self.target: str | None = None
        self.address_size = 32
        self.files: dict[int, str] = {}
        self.functions: dict[str, Function] = {}
        self.function_positions: dict[str, int] = {}
        self.declared_functions: set[str] = set()
        self.globals: list[VarDecl] = []
        self.global_positions: dict[str, int] = {}
        self.pending_refs: list[tuple[NameRef, str]] = []

    # ----------------------------------------------------------------- module level

    def parse(self) -> Module:
        while self.peek().kind != EOF:
            token = self.peek()
            if token.kind != DIRECTIVE:
                raise self.error_at(token, f"expected a directive at module scope, found {self.describe(token)}; "
                                           f"supported directives: {', '.join(_MODULE_DIRECTIVES)}")
            if self.version is None and token.text != ".version":
                raise self.error_at(token, f"expected '.version X.Y' as the first directive, found '{token.text}'")
            self.parse_module_directive(token)
        if self.version is None:
            raise self.error_at(self.peek(), "expected '.version X.Y' as the first directive; the file is empty")
        if self.target is None:
            raise self.error_at(self.peek(), "expected a '.target sm_XX' directive after '.version'")
        self.check_pending_refs()
        gpusim_regs = self.parse_gpusim_comments()
        return Module(file=self.source.filename, version=self.version, target=self.target,
                      address_size=self.address_size, functions=self.functions, globals=self.globals,
                      files=self.files, gpusim_regs=gpusim_regs)

    def parse_module_directive(self, token: Token) -> None:
        text = token.text
        if text == ".version":
            self.parse_version()
        elif text == ".target":
            self.parse_target()
        elif text == ".address_size":
            self.parse_address_size()
        elif text == ".file":
            self.parse_file_directive()
        elif text == ".loc":
            self.parse_loc()
        elif text == ".section":
            self.skip_section()
        elif text == ".pragma":
            self.next()
            self.parse_pragma_strings()
        elif text in _LINKAGES or text in (".entry", ".func") or text in _STATE_SPACES:
            self.require_target(token)
            self.parse_linked_item()
        elif text in _UNSUPPORTED_MODULE_DIRECTIVES:
            raise self.error_at(token, f"{_UNSUPPORTED_MODULE_DIRECTIVES[text]} ('{text}') are not supported",
                                UnsupportedPTXError)
        else:
            raise self.error_at(token, f"unknown directive '{text}' at module scope; supported directives: "
                                       f"{', '.join(_MODULE_DIRECTIVES)}")

    def require_target(self, token: Token) -> None:
        if self.target is None:
            raise self.error_at(token, f"expected a '.target sm_XX' directive before '{token.text}'")

    def parse_version(self) -> None:
        directive = self.next()
        if self.version is not None:
            raise self.error_at(directive, "duplicate '.version' directive")
        token = self.next()
        text = token.text
        major, dot, minor = text.partition(".")
        if not (dot and major.isdigit() and minor.isdigit()):
            raise self.error_at(token, f"expected a version number 'X.Y' after '.version', found {self.describe(token)}")
        self.version = text

    def parse_target(self) -> None:
        directive = self.next()
        if self.target is not None:
            raise self.error_at(directive, "duplicate '.target' directive")
        target = None
        while True:
            token = self.expect_kind(WORD, "a target name such as 'sm_80' after '.target'")
            name = token.text
            if name.startswith(("sm_", "compute_")) and "." not in name:
                if target is not None:
                    raise self.error_at(token, f"'.target' names two architectures ('{target}' and '{name}')")
                target = name
            elif name not in _TARGET_OPTIONS:
                raise self.error_at(token, f"unknown target '{name}'; expected sm_XX or one of "
                                           f"{', '.join(_TARGET_OPTIONS)}")
            if not self.accept(","):
                break
        if target is None:
            raise self.error_at(directive, "'.target' names no architecture (expected e.g. 'sm_80')")
        self.target = target

    def parse_address_size(self) -> None:
        self.next()
        token = self.expect_kind(INT, "32 or 64 after '.address_size'")
        if token.value not in (32, 64):
            raise self.error_at(token, f"'.address_size' must be 32 or 64, found {token.text}")
        self.address_size = token.value

    def parse_file_directive(self) -> None:
        self.next()
        index = self.expect_kind(INT, "a file index after '.file'").value
        path = self.expect_kind(STRING, "a quoted file name after the '.file' index").value
        if self.accept(","):
            self.expect_kind(INT, "a timestamp after ',' in '.file'")
            self.expect(",", "expected ',' and a file size after the '.file' timestamp")
            self.expect_kind(INT, "a file size after the '.file' timestamp")
        self.files[index] = path

    def parse_loc(self, scope: _FunctionScope | None = None) -> None:
        directive = self.next()
        file_index = self.expect_kind(INT, "a file index after '.loc'").value
        line = self.expect_kind(INT, "a line number after the '.loc' file index").value
        self.expect_kind(INT, "a column after the '.loc' line number")
        # Attributes (", function_name $L__info_string0, inlined_at 1 17 9") sit on the .loc's own line.
        directive_line = self.source.line(directive.pos)
        while self.peek().kind == "," and self.source.line(self.peek().pos) == directive_line:
            self.next()
            attribute = self.expect_kind(WORD, f"a .loc attribute ({', '.join(_LOC_ATTRIBUTES)})")
            if attribute.text == "function_name":
                self.expect_kind(WORD, "a label after 'function_name'")
                if self.accept("+"):
                    self.expect_kind(INT, "an offset after '+'")
            elif attribute.text == "inlined_at":
                for what in ("file index", "line", "column"):
                    self.expect_kind(INT, f"a {what} after 'inlined_at'")
            else:
                raise self.error_at(attribute, f"unknown .loc attribute '{attribute.text}'; expected "
                                               f"{' or '.join(_LOC_ATTRIBUTES)}")
        if scope is not None:
            scope.src_line = (file_index, line)

    def skip_section(self) -> None:
        """``.section .debug_str { ... }``: DWARF debug data, which the simulator has no use for."""
        directive = self.next()
        while self.peek().kind not in ("{", EOF):
            self.next()
        self.expect("{", "expected '{' to open the '.section' body")
        depth = 1
        while depth:
            token = self.next()
            if token.kind == "{":
                depth += 1
            elif token.kind == "}":
                depth -= 1
            elif token.kind == EOF:
                raise self.error_at(directive, "'.section' body is not closed: expected '}'")

    def parse_pragma_strings(self) -> list[str]:
        strings = [self.expect_kind(STRING, "a quoted string after '.pragma'").value]
        while self.accept(","):
            strings.append(self.expect_kind(STRING, "a quoted string after ','").value)
        self.expect(";", "expected ';' after '.pragma' strings")
        return strings

    def parse_linked_item(self) -> None:
        """[.visible|.extern|.weak|.common] followed by .entry, .func or a variable declaration."""
        linkage = None
        if self.peek().text in _LINKAGES:
            linkage = self.next().text
        token = self.peek()
        if token.text in (".entry", ".func"):
            self.parse_function(linkage)
        elif token.text in _STATE_SPACES:
            for decl in self.parse_variable_decl(extern=linkage == ".extern"):
                if decl.name in self.global_positions:
                    line = self.source.line(self.global_positions[decl.name])
                    raise self.error(f"variable '{decl.name}' is already declared at line {line}",
                                     decl.loc.line, decl.loc.column)
                self.global_positions[decl.name] = self.position_of(decl.loc)
                self.globals.append(decl)
        elif token.kind == DIRECTIVE and token.text in _UNSUPPORTED_MODULE_DIRECTIVES:
            raise self.error_at(token, f"{_UNSUPPORTED_MODULE_DIRECTIVES[token.text]} ('{token.text}') are not "
                                       "supported", UnsupportedPTXError)
        else:
            raise self.error_at(token, f"expected '.entry', '.func' or a state space "
                                       f"({', '.join(_STATE_SPACES)}) after '{linkage}', found {self.describe(token)}")

    # ----------------------------------------------------------------- declarations

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
                if self.peek().text in _STATE_SPACES:
                    ptr_space = self.next().text[1:]
                if self.peek().text == ".align":
                    self.next()
                    self.parse_alignment()
            elif text in _UNSUPPORTED_MODULE_DIRECTIVES:
                raise self.error_at(token, f"{_UNSUPPORTED_MODULE_DIRECTIVES[text]} ('{text}') are not supported",
                                    UnsupportedPTXError)
            elif text == ".attribute":
                raise self.error_at(token, "'.attribute(...)' on variables (managed memory) is not supported",
                                    UnsupportedPTXError)
            else:
                raise self.error_at(token, f"unexpected '{text}' in {context}; expected a type such as '.u32', "
                                           "'.align N' or '.v2/.v4'")
        if type_name is None:
            raise self.error_at(self.peek(), f"expected a type such as '.u32' or '.f32' in {context}, "
                                             f"found {self.describe(self.peek())}")
        if align is None:
            align = TYPE_SIZE_BYTES[type_name] * vector_length
        return type_name, vector_length, align, ptr_space

    def parse_alignment(self) -> int:
        token = self.expect_kind(INT, "an alignment in bytes after '.align'")
        if token.value <= 0 or token.value & (token.value - 1):
            raise self.error_at(token, f"alignment must be a power of two, found {token.text}")
        return token.value

    def parse_declared_name(self, what: str) -> Token:
        token = self.expect_kind(WORD, f"a {what} name")
        if "." in token.text:
            raise self.error_at(token, f"'{token.text}' is not a valid {what} name (names cannot contain '.')")
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
                    raise self.error_at(equals, "initializers are allowed only on '.global' and '.const' variables")
                init = self.parse_initializer(type_name)
                if count is None:
                    count = len(init)
                elif len(init) > count:
                    raise self.error_at(equals, f"initializer has {len(init)} values but '{name_token.text}' has "
                                                f"{count} elements")
            if count is None and not extern:
                raise self.error_at(bracket, f"array '{name_token.text}' needs a size, an initializer or '.extern'")
            decls.append(VarDecl(space=space, name=name_token.text, type=type_name, count=count, align=align,
                                 loc=self.loc(name_token), extern=extern, init=init))
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
                if depth > _MAX_BLOCK_DEPTH:
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
            raise self.error_at(token, "address initializers ('generic(x)' or a symbol) are not supported",
                                UnsupportedPTXError)
        value = self.literal_value(token, negative, "an initializer value")
        if type_name in FLOAT_TYPES:
            return self.float_initializer(token, value, type_name)
        if isinstance(value, float):
            raise self.error_at(token, f"floating-point initializer '{token.text}' for a '.{type_name}' variable")
        return value

    def literal_value(self, token: Token, negative: bool, what: str) -> int | float:
        """The value of a numeric literal token, negated when a '-' preceded it (0f/0d: the sign bit flips)."""
        if token.kind == INT or token.kind == FLOAT:
            return -token.value if negative else token.value
        if token.kind == F32BITS:
            return token.value ^ (1 << 31) if negative else token.value
        if token.kind == F64BITS:
            return token.value ^ (1 << 63) if negative else token.value
        raise self.error_at(token, f"expected {what}, found {self.describe(token)}")

    @staticmethod
    def float_initializer(token: Token, value: int | float, type_name: str) -> int | float:
        """In a float variable an int means raw bits: keep 0f/0d bits of the matching width, convert the rest."""
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
            raise self.error_at(token, "'.reg' parameters are not supported; declare them '.param'",
                                UnsupportedPTXError)
        self.expect(".param", f"expected '.param' in {context}")
        type_name, vector_length, align, ptr_space = self.parse_decl_attributes("parameter declaration",
                                                                               allow_ptr=True)
        name_token = self.parse_declared_name("parameter")
        dimensions, bracket = self.parse_dimensions()
        count = vector_length
        for size in dimensions:
            if size is None:
                raise self.error_at(bracket, "unsized parameter arrays are not supported", UnsupportedPTXError)
            count *= size
        return Param(name=name_token.text, type=type_name, count=count, align=align, loc=self.loc(name_token),
                     ptr_space=ptr_space)

    def parse_param_list(self, context: str) -> list[Param]:
        self.expect("(", f"expected '(' to open the {context}")
        params = []
        if self.peek().kind != ")":
            params.append(self.parse_param(context))
            while self.accept(","):
                params.append(self.parse_param(context))
        self.expect(")", f"expected ',' or ')' in the {context}")
        return params

    # ----------------------------------------------------------------- functions

    def parse_function(self, linkage: str | None) -> None:
        kind_token = self.next()
        is_entry = kind_token.text == ".entry"
        return_params: list[Param] = []
        directives: dict = {}
        if self.peek().kind == "(":
            if is_entry:
                raise self.error_at(self.peek(), "a '.entry' kernel cannot have return parameters")
            return_params = self.parse_param_list("return parameter list")
        self.parse_header_directives(directives, before_name=True)
        name_token = self.parse_declared_name("function")
        name = name_token.text
        params = self.parse_param_list("parameter list") if self.peek().kind == "(" else []
        self.parse_header_directives(directives, before_name=False)
        if self.accept(";"):
            self.declared_functions.add(name)
            return
        if linkage == ".extern":
            raise self.error_at(self.peek(), f"'.extern' function '{name}' cannot have a body; expected ';'")
        self.expect("{", f"expected '{{' to open the body of '{name}' or ';' for a declaration")
        if name in self.functions:
            line = self.source.line(self.function_positions[name])
            raise self.error_at(name_token, f"function '{name}' is already defined at line {line}")
        self.function_positions[name] = name_token.pos
        self.declared_functions.add(name)
        scope = _FunctionScope(name)
        scope.directives = directives
        for param in params + return_params:
            scope.local_var_index[("param", param.name)] = -1
        self.parse_body(scope, kind_token)
        self.functions[name] = self.finish_function(scope, name_token, is_entry, params, return_params,
                                                    visible=linkage in (".visible", ".weak", ".common"))

    def parse_header_directives(self, directives: dict, before_name: bool) -> None:
        while self.peek().kind == DIRECTIVE and self.peek().text in _HEADER_DIRECTIVES:
            if before_name and self.peek().text != ".noreturn":
                return
            token = self.next()
            key = token.text[1:]
            if token.text in _FLAG_DIRECTIVES:
                directives[key] = True
            elif token.text in _INT_DIRECTIVES:
                directives[key] = self.expect_kind(INT, f"an integer after '{token.text}'").value
            elif token.text in _INT_LIST_DIRECTIVES:
                values = [self.expect_kind(INT, f"an integer after '{token.text}'").value]
                while self.accept(","):
                    values.append(self.expect_kind(INT, "an integer after ','").value)
                if len(values) > 3:
                    raise self.error_at(token, f"'{token.text}' takes 1 to 3 dimensions, found {len(values)}")
                directives[key] = tuple(values)
            else:
                directives.setdefault("pragma", []).extend(self.parse_pragma_strings())
        if not before_name and self.peek().kind == DIRECTIVE and self.peek().text not in (".param",):
            token = self.peek()
            raise self.error_at(token, f"unknown function directive '{token.text}'; supported: "
                                       f"{', '.join(_HEADER_DIRECTIVES)}")

    def parse_body(self, scope: _FunctionScope, kind_token: Token) -> None:
        """Statements up to the '}' that closes the function; nested blocks are flattened."""
        instructions = InstructionParser(self, scope)
        open_blocks = [self.tokens[self.index - 1]]
        while open_blocks:
            token = self.peek()
            kind = token.kind
            if kind == WORD:
                if self.peek(1).kind == ":":
                    self.parse_label(scope)
                else:
                    instructions.parse()
            elif kind == "@":
                instructions.parse()
            elif kind == DIRECTIVE:
                self.parse_body_directive(scope)
            elif kind == "}":
                self.next()
                open_blocks.pop()
            elif kind == "{":
                if len(open_blocks) >= _MAX_BLOCK_DEPTH:
                    raise self.error_at(token, f"blocks nested more than {_MAX_BLOCK_DEPTH} deep")
                open_blocks.append(self.next())
            elif kind == EOF:
                opened = self.source.line(open_blocks[-1].pos)
                raise self.error_at(token, f"expected '}}' to close the block opened at line {opened} in "
                                           f"'{scope.name}'; the file ended")
            else:
                raise self.error_at(token, f"expected an instruction, a label, a directive or '}}', found "
                                           f"{self.describe(token)}")

    def parse_label(self, scope: _FunctionScope) -> None:
        token = self.parse_declared_name("label")
        if token.text.startswith("%"):
            raise self.error_at(token, f"'{token.text}' is not a valid label name (labels cannot start with '%')")
        self.next()  # ':'
        if token.text in scope.labels:
            line = self.source.line(scope.label_positions[token.text])
            raise self.error_at(token, f"label '{token.text}' is already defined at line {line}")
        following = self.peek()
        if following.kind == DIRECTIVE and following.text in _UNSUPPORTED_MODULE_DIRECTIVES:
            raise self.error_at(following, f"{_UNSUPPORTED_MODULE_DIRECTIVES[following.text]} "
                                           f"('{following.text}') are not supported", UnsupportedPTXError)
        scope.labels[token.text] = len(scope.body)
        scope.label_positions[token.text] = token.pos

    def parse_body_directive(self, scope: _FunctionScope) -> None:
        token = self.peek()
        text = token.text
        if text == ".reg":
            self.parse_reg_decl(scope)
        elif text == ".loc":
            self.parse_loc(scope)
        elif text == ".pragma":
            self.next()
            scope.directives.setdefault("pragma", []).extend(self.parse_pragma_strings())
        elif text in _STATE_SPACES or text == ".param" or text == ".extern":
            extern = self.accept(".extern") is not None
            if self.peek().text not in _STATE_SPACES + (".param",):
                raise self.error_at(self.peek(), f"expected a state space after '.extern', found "
                                                 f"{self.describe(self.peek())}")
            for decl in self.parse_variable_decl(extern=extern):
                self.add_local_var(scope, decl)
        elif text in _UNSUPPORTED_MODULE_DIRECTIVES:
            raise self.error_at(token, f"{_UNSUPPORTED_MODULE_DIRECTIVES[text]} ('{text}') are not supported",
                                UnsupportedPTXError)
        else:
            raise self.error_at(token, f"unknown directive '{text}' in a function body; supported here: "
                                       f"{', '.join(_BODY_DIRECTIVES)}")

    def add_local_var(self, scope: _FunctionScope, decl: VarDecl) -> None:
        key = (decl.space, decl.name)
        index = scope.local_var_index.get(key)
        if index is None:
            scope.local_var_index[key] = len(scope.local_vars)
            scope.local_vars.append(decl)
            return
        if index < 0:
            raise self.error(f"'{decl.name}' is already a parameter of '{scope.name}'", decl.loc.line, decl.loc.column)
        kept = scope.local_vars[index]
        if _size_bytes(decl) > _size_bytes(kept):
            decl.align = max(decl.align, kept.align)
            scope.local_vars[index] = decl
        else:
            kept.align = max(decl.align, kept.align)

    def parse_reg_decl(self, scope: _FunctionScope) -> None:
        """``.reg .TYPE %r<N>, %x, name;`` -> registers into ``scope.regs`` (``%r<4>`` -> %r0..%r3)."""
        self.next()
        while self.peek().kind == DIRECTIVE and self.peek().text in (".v2", ".v4", ".v8"):
            raise self.error_at(self.peek(), "vector registers ('.reg .v4 ...') are not supported; declare "
                                             "scalar registers", UnsupportedPTXError)
        type_token = self.expect_kind(DIRECTIVE, "a register type such as '.b32' after '.reg'")
        type_name = type_token.text[1:]
        if type_name not in TYPE_SIZE_BYTES:
            raise self.error_at(type_token, f"unknown register type '{type_token.text}'")
        regs = scope.regs
        while True:
            name_token = self.parse_declared_name("register")
            name = name_token.text
            if self.accept("<"):
                count_token = self.expect_kind(INT, "a register count after '<'")
                count = count_token.value
                if count > _MAX_REGISTERS_PER_DECLARATION:
                    raise self.error_at(count_token, f"register count {count} is too large (at most "
                                                     f"{_MAX_REGISTERS_PER_DECLARATION})")
                self.expect(">", "expected '>' after the register count")
                for number in range(count):
                    regs.setdefault(f"{name}{number}", type_name)
            else:
                regs.setdefault(name, type_name)
            if not self.accept(","):
                break
        self.expect_statement_end("'.reg' declaration")

    # ----------------------------------------------------------------- name resolution

    def finish_function(self, scope: _FunctionScope, name_token: Token, is_entry: bool, params: list,
                        return_params: list, visible: bool) -> Function:
        """Check the names the body uses and turn plain names declared as registers into Reg operands."""
        local_names = set(scope.labels)
        local_names.update(param.name for param in params)
        local_names.update(param.name for param in return_params)
        local_names.update(decl.name for decl in scope.local_vars)
        regs = scope.regs
        needs_reclassify = set()
        for ref in scope.refs:
            is_reg = ref.name in regs
            if is_reg != ref.parsed_as_reg:
                needs_reclassify.add(ref.instruction_index)
            if is_reg:
                continue
            if ref.must_be_reg:
                raise self.error_at_pos(ref.pos, f"'{ref.name}' is not a declared register in '{scope.name}' "
                                                 f"(expected a '.reg' declaration before use as {ref.role})")
            if ref.name not in local_names:
                self.pending_refs.append((ref, scope.name))
        for index in sorted(needs_reclassify):
            instruction = scope.body[index]
            instruction.operands = [reclassify_operand(operand, regs) for operand in instruction.operands]
        return Function(name=scope.name, is_entry=is_entry, params=params, body=scope.body, labels=scope.labels,
                        regs=regs, local_vars=scope.local_vars, loc=self.loc(name_token),
                        return_params=return_params, directives=scope.directives, visible=visible)

    def check_pending_refs(self) -> None:
        known = self.declared_functions | set(self.global_positions) | _PREDEFINED_SYMBOLS
        for ref, function_name in self.pending_refs:
            if ref.name not in known:
                if ref.name.startswith("%"):
                    message = f"register '{ref.name}' is not declared in '{function_name}' (expected a '.reg' " \
                              "declaration)"
                else:
                    message = f"undefined label, variable or function '{ref.name}' in '{function_name}'"
                raise self.error_at_pos(ref.pos, message)

    def parse_gpusim_comments(self) -> dict:
        """``// gpusim: regs=N [kernel=NAME]`` -> {NAME or '*': N}."""
        result: dict = {}
        for comment in self.gpusim_comments:
            fields = {}
            for item in str(comment.value).split():
                key, equals, value = item.partition("=")
                if not equals or key not in ("regs", "kernel") or not value:
                    raise self.error_at(comment, f"malformed gpusim comment item '{item}'; expected "
                                                 "'// gpusim: regs=N' or '// gpusim: regs=N kernel=NAME'")
                fields[key] = value
            if "regs" not in fields or not _DECIMAL.fullmatch(fields["regs"]) or int(fields["regs"]) <= 0:
                raise self.error_at(comment, "gpusim comment needs 'regs=N' with N a positive integer")
            kernel = fields.get("kernel", "*")
            if kernel != "*" and kernel not in self.functions:
                raise self.error_at(comment, f"gpusim comment names kernel '{kernel}', which this file does not "
                                             "define")
            result[kernel] = int(fields["regs"])
        return result

    def loc(self, token: Token) -> SourceLoc:
        line, column = self.source.line_col(token.pos)
        return SourceLoc(self.source.filename, line, column)

    def position_of(self, loc: SourceLoc) -> int:
        return self.source.offset(loc.line, loc.column)

    def error(self, message: str, line: int, column: int) -> PTXSyntaxError:
        return PTXSyntaxError(message, self.source.filename, line, column, self.source.line_text(line))


def _bits_to_float(bits: int, width: int) -> float:
    """The value of IEEE-754 ``bits`` of ``width`` 32 or 64."""
    return struct.unpack("<f" if width == 32 else "<d", bits.to_bytes(width // 8, "little"))[0]


def _size_bytes(decl: VarDecl) -> int:
    return TYPE_SIZE_BYTES[decl.type] * (decl.count or 0)
