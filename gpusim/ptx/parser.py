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
- Opcodes are not checked against a table here: ``gpusim.arch.isa`` is the one opcode table, and the
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

from pathlib import Path

from gpusim.errors import PTXSyntaxError, UnsupportedPTXError
from gpusim.ptx.ast import Function, Instruction, Module, Param, SourceLoc, VarDecl
from gpusim.ptx.declarations import (
    MAX_BLOCK_DEPTH,
    STATE_SPACES,
    UNSUPPORTED_DIRECTIVES,
    size_bytes,
)
from gpusim.ptx.directives import DirectiveParser
from gpusim.ptx.lexer import (
    DIRECTIVE,
    EOF,
    WORD,
    SourceText,
    Token,
    tokenize,
)
from gpusim.ptx.operands import InstructionParser, NameRef, reclassify_operand

_LINKAGES = (".visible", ".extern", ".weak", ".common")
_MODULE_DIRECTIVES = (
    ".version",
    ".target",
    ".address_size",
    ".file",
    ".loc",
    ".section",
    ".pragma",
    ".visible",
    ".extern",
    ".weak",
    ".common",
    ".entry",
    ".func",
    ".global",
    ".shared",
    ".const",
    ".local",
)
_BODY_DIRECTIVES = (".reg", ".local", ".shared", ".const", ".global", ".param", ".extern", ".loc", ".pragma")
_PREDEFINED_SYMBOLS = frozenset({"WARP_SZ"})


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
        raise PTXSyntaxError(
            f"not a UTF-8 text file ({error.reason} at byte {error.start})", str(path)
        ) from None
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


class _ModuleParser(DirectiveParser):
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
                raise self.error_at(
                    token,
                    f"expected a directive at module scope, found {self.describe(token)}; "
                    f"supported directives: {', '.join(_MODULE_DIRECTIVES)}",
                )
            if self.version is None and token.text != ".version":
                raise self.error_at(
                    token, f"expected '.version X.Y' as the first directive, found '{token.text}'"
                )
            self.parse_module_directive(token)
        if self.version is None:
            raise self.error_at(
                self.peek(), "expected '.version X.Y' as the first directive; the file is empty"
            )
        if self.target is None:
            raise self.error_at(self.peek(), "expected a '.target sm_XX' directive after '.version'")
        self.check_pending_refs()
        gpusim_regs, gpusim_regs_arch = self.parse_gpusim_comments(self.gpusim_comments, self.functions)
        return Module(
            file=self.source.filename,
            version=self.version,
            target=self.target,
            address_size=self.address_size,
            functions=self.functions,
            globals=self.globals,
            files=self.files,
            gpusim_regs=gpusim_regs,
            gpusim_regs_arch=gpusim_regs_arch,
        )

    def parse_module_directive(self, token: Token) -> None:
        text = token.text
        if text == ".version":
            if self.version is not None:
                raise self.error_at(token, "duplicate '.version' directive")
            self.version = self.parse_version()
        elif text == ".target":
            if self.target is not None:
                raise self.error_at(token, "duplicate '.target' directive")
            self.target = self.parse_target()
        elif text == ".address_size":
            self.address_size = self.parse_address_size()
        elif text == ".file":
            index, path = self.parse_file_directive()
            self.files[index] = path
        elif text == ".loc":
            self.parse_loc()
        elif text == ".section":
            self.skip_section()
        elif text == ".pragma":
            self.next()
            self.parse_pragma_strings()
        elif text in _LINKAGES or text in (".entry", ".func") or text in STATE_SPACES:
            self.require_target(token)
            self.parse_linked_item()
        elif text in UNSUPPORTED_DIRECTIVES:
            raise self.error_at(
                token,
                f"{UNSUPPORTED_DIRECTIVES[text]} ('{text}') are not supported",
                UnsupportedPTXError,
            )
        else:
            raise self.error_at(
                token,
                f"unknown directive '{text}'; supported directives: {', '.join(_MODULE_DIRECTIVES)}",
            )

    def require_target(self, token: Token) -> None:
        if self.target is None:
            raise self.error_at(token, f"expected a '.target sm_XX' directive before '{token.text}'")

    def parse_linked_item(self) -> None:
        """[.visible|.extern|.weak|.common] followed by .entry, .func or a variable declaration."""
        linkage = None
        if self.peek().text in _LINKAGES:
            linkage = self.next().text
        token = self.peek()
        if token.text in (".entry", ".func"):
            self.parse_function(linkage)
        elif token.text in STATE_SPACES:
            for decl in self.parse_variable_decl(extern=linkage == ".extern"):
                if decl.name in self.global_positions:
                    line = self.source.line(self.global_positions[decl.name])
                    raise self.error(
                        f"variable '{decl.name}' is already declared at line {line}",
                        decl.loc.line,
                        decl.loc.column,
                    )
                self.global_positions[decl.name] = self.position_of(decl.loc)
                self.globals.append(decl)
        elif token.kind == DIRECTIVE and token.text in UNSUPPORTED_DIRECTIVES:
            raise self.error_at(
                token,
                f"{UNSUPPORTED_DIRECTIVES[token.text]} ('{token.text}') are not supported",
                UnsupportedPTXError,
            )
        else:
            raise self.error_at(
                token,
                f"expected '.entry', '.func' or a state space "
                f"({', '.join(STATE_SPACES)}) after '{linkage}', found {self.describe(token)}",
            )

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
        self.parse_body(scope)
        self.functions[name] = self.finish_function(
            scope,
            name_token,
            is_entry,
            params,
            return_params,
            visible=linkage in (".visible", ".weak", ".common"),
        )

    def parse_body(self, scope: _FunctionScope) -> None:
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
                if len(open_blocks) >= MAX_BLOCK_DEPTH:
                    raise self.error_at(token, f"blocks nested more than {MAX_BLOCK_DEPTH} deep")
                open_blocks.append(self.next())
            elif kind == EOF:
                opened = self.source.line(open_blocks[-1].pos)
                raise self.error_at(
                    token,
                    f"expected '}}' to close the block opened at line {opened} in "
                    f"'{scope.name}'; the file ended",
                )
            else:
                raise self.error_at(
                    token,
                    f"expected an instruction, a label, a directive or '}}', found {self.describe(token)}",
                )

    def parse_label(self, scope: _FunctionScope) -> None:
        token = self.parse_declared_name("label")
        if token.text.startswith("%"):
            raise self.error_at(
                token, f"'{token.text}' is not a valid label name (labels cannot start with '%')"
            )
        self.next()  # ':'
        if token.text in scope.labels:
            line = self.source.line(scope.label_positions[token.text])
            raise self.error_at(token, f"label '{token.text}' is already defined at line {line}")
        following = self.peek()
        if following.kind == DIRECTIVE and following.text == ".callprototype":
            # 'name: .callprototype ...;' declares the prototype of an indirect call: kept as a name; the
            # lowering refuses the indirect call itself (its kernel only), naming the call's line
            while self.peek().kind not in (";", EOF):
                self.next()
            self.expect(";", "expected ';' to end the .callprototype declaration")
            scope.labels[token.text] = len(scope.body)
            scope.label_positions[token.text] = token.pos
            return
        if following.kind == DIRECTIVE and following.text in UNSUPPORTED_DIRECTIVES:
            raise self.error_at(
                following,
                f"{UNSUPPORTED_DIRECTIVES[following.text]} ('{following.text}') are not supported",
                UnsupportedPTXError,
            )
        scope.labels[token.text] = len(scope.body)
        scope.label_positions[token.text] = token.pos

    def parse_body_directive(self, scope: _FunctionScope) -> None:
        token = self.peek()
        text = token.text
        if text == ".reg":
            self.parse_reg_decl(scope.regs)
        elif text == ".loc":
            loc = self.parse_loc()
            # Line 0 is DWARF's "no source line" (code the compiler made up: numba's and Triton's epilogue).
            scope.src_line = loc if loc[1] > 0 else None
        elif text == ".pragma":
            self.next()
            strings = self.parse_pragma_strings()
            scope.directives.setdefault("pragma", []).extend(strings)
            if "nounroll" in strings:   # codegen: the loop whose first instruction follows it is not unrolled
                scope.directives.setdefault("nounroll_at", []).append(len(scope.body))
        elif text in STATE_SPACES or text == ".param" or text == ".extern":
            extern = self.accept(".extern") is not None
            if self.peek().text not in STATE_SPACES + (".param",):
                raise self.error_at(
                    self.peek(), f"expected a state space after '.extern', found {self.describe(self.peek())}"
                )
            for decl in self.parse_variable_decl(extern=extern):
                self.add_local_var(scope, decl)
        elif text in UNSUPPORTED_DIRECTIVES:
            raise self.error_at(
                token,
                f"{UNSUPPORTED_DIRECTIVES[text]} ('{text}') are not supported",
                UnsupportedPTXError,
            )
        else:
            raise self.error_at(
                token,
                f"unknown directive '{text}' in a function body; supported here: "
                f"{', '.join(_BODY_DIRECTIVES)}",
            )

    def add_local_var(self, scope: _FunctionScope, decl: VarDecl) -> None:
        key = (decl.space, decl.name)
        index = scope.local_var_index.get(key)
        if index is None:
            scope.local_var_index[key] = len(scope.local_vars)
            scope.local_vars.append(decl)
            return
        if index < 0:
            raise self.error(
                f"'{decl.name}' is already a parameter of '{scope.name}'", decl.loc.line, decl.loc.column
            )
        kept = scope.local_vars[index]
        if size_bytes(decl) > size_bytes(kept):
            decl.align = max(decl.align, kept.align)
            scope.local_vars[index] = decl
        else:
            kept.align = max(decl.align, kept.align)

    # ----------------------------------------------------------------- name resolution

    def finish_function(
        self,
        scope: _FunctionScope,
        name_token: Token,
        is_entry: bool,
        params: list,
        return_params: list,
        visible: bool,
    ) -> Function:
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
                raise self.error_at_pos(
                    ref.pos,
                    f"'{ref.name}' is not a declared register in '{scope.name}' "
                    f"(expected a '.reg' declaration before use as {ref.role})",
                )
            if ref.name not in local_names:
                self.pending_refs.append((ref, scope.name))
        for index in sorted(needs_reclassify):
            instruction = scope.body[index]
            instruction.operands = [reclassify_operand(operand, regs) for operand in instruction.operands]
        return Function(
            name=scope.name,
            is_entry=is_entry,
            params=params,
            body=scope.body,
            labels=scope.labels,
            regs=regs,
            local_vars=scope.local_vars,
            loc=self.loc(name_token),
            return_params=return_params,
            directives=scope.directives,
            visible=visible,
        )

    def check_pending_refs(self) -> None:
        known = self.declared_functions | set(self.global_positions) | _PREDEFINED_SYMBOLS
        for ref, function_name in self.pending_refs:
            if ref.name not in known:
                if ref.name.startswith("%"):
                    message = (
                        f"register '{ref.name}' is not declared in '{function_name}' (expected a '.reg' "
                        "declaration)"
                    )
                else:
                    message = f"undefined label, variable or function '{ref.name}' in '{function_name}'"
                raise self.error_at_pos(ref.pos, message)

    def position_of(self, loc: SourceLoc) -> int:
        return self.source.offset(loc.line, loc.column)

    def error(self, message: str, line: int, column: int) -> PTXSyntaxError:
        return PTXSyntaxError(message, self.source.filename, line, column, self.source.line_text(line))
