"""Parsing PTX directives that carry data but no code: ``.version``, ``.target``, ``.address_size``,
``.file``, ``.loc``, ``.section``, ``.pragma``, function-header performance directives (``.maxntid``
...) and ``// gpusim: regs=N`` comments.

What it simplifies: ``.loc`` yields ``(file index, line)`` (column, ``function_name`` and ``inlined_at``
are checked and dropped); ``.section`` bodies (DWARF data) are skipped; performance directives are
stored under their name without the dot: dimension lists as int tuples (``maxntid: (128, 1, 1)``),
counts as ints (``maxnreg: 32``), flags as True (``noreturn``) and pragmas as a list of strings.
"""

from __future__ import annotations

import re

from gpusim.ptx.declarations import DeclarationParser
from gpusim.ptx.lexer import DIRECTIVE, EOF, INT, STRING, WORD, Token

_INT_LIST_DIRECTIVES = (".maxntid", ".reqntid", ".reqnctapercluster")
_INT_DIRECTIVES = (
    ".minnctapersm",
    ".maxnctapersm",
    ".maxnreg",
    ".maxclusterrank",
    ".abi_preserve",
    ".abi_preserve_control",
)
_FLAG_DIRECTIVES = (".noreturn", ".explicitcluster", ".blocksareclusters")
HEADER_DIRECTIVES = _INT_LIST_DIRECTIVES + _INT_DIRECTIVES + _FLAG_DIRECTIVES + (".pragma",)
_TARGET_OPTIONS = ("texmode_unified", "texmode_independent", "debug", "map_f64_to_f32")
_LOC_ATTRIBUTES = ("function_name", "inlined_at")
_DECIMAL = re.compile(r"[0-9]+")
_ARCH_KEY = re.compile(r"sm_[0-9]+")


class DirectiveParser(DeclarationParser):
    """Directive grammar over a token cursor; each method consumes one directive and returns its data."""

    def parse_version(self) -> str:
        """``.version X.Y`` -> "X.Y"."""
        self.next()
        token = self.next()
        text = token.text
        major, dot, minor = text.partition(".")
        if not (dot and major.isdigit() and minor.isdigit()):
            raise self.error_at(
                token, f"expected a version number 'X.Y' after '.version', found {self.describe(token)}"
            )
        return text

    def parse_target(self) -> str:
        """``.target sm_80[, option ...]`` -> "sm_80" (the options are checked, then dropped)."""
        directive = self.next()
        target = None
        while True:
            token = self.expect_kind(WORD, "a target name such as 'sm_80' after '.target'")
            name = token.text
            if name.startswith(("sm_", "compute_")) and "." not in name:
                if target is not None:
                    raise self.error_at(token, f"'.target' names two architectures ('{target}' and '{name}')")
                target = name
            elif name not in _TARGET_OPTIONS:
                raise self.error_at(
                    token, f"unknown target '{name}'; expected sm_XX or one of {', '.join(_TARGET_OPTIONS)}"
                )
            if not self.accept(","):
                break
        if target is None:
            raise self.error_at(directive, "'.target' names no architecture (expected e.g. 'sm_80')")
        return target

    def parse_address_size(self) -> int:
        self.next()
        token = self.expect_kind(INT, "32 or 64 after '.address_size'")
        if token.value not in (32, 64):
            raise self.error_at(token, f"'.address_size' must be 32 or 64, found {token.text}")
        return token.value

    def parse_file_directive(self) -> tuple[int, str]:
        """``.file N "path"[, timestamp, size]`` -> (N, path)."""
        self.next()
        index = self.expect_kind(INT, "a file index after '.file'").value
        path = self.expect_kind(STRING, "a quoted file name after the '.file' index").value
        if self.accept(","):
            self.expect_kind(INT, "a timestamp after ',' in '.file'")
            self.expect(",", "expected ',' and a file size after the '.file' timestamp")
            self.expect_kind(INT, "a file size after the '.file' timestamp")
        return index, path

    def parse_loc(self) -> tuple[int, int]:
        """``.loc F L C[, function_name label[+N]][, inlined_at F L C]`` -> (F, L)."""
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
                raise self.error_at(
                    attribute,
                    f"unknown .loc attribute '{attribute.text}'; expected {' or '.join(_LOC_ATTRIBUTES)}",
                )
        return file_index, line

    def skip_section(self) -> None:
        """``.section .debug_str { ... }``: DWARF debug data, which the simulator has no use for."""
        self.next()
        while self.peek().kind not in ("{", EOF):
            self.next()
        opening = self.expect("{", "expected '{' to open the '.section' body")
        depth = 1
        while depth:
            token = self.next()
            if token.kind == "{":
                depth += 1
            elif token.kind == "}":
                depth -= 1
            elif token.kind == EOF:
                raise self.error_at(opening, "the '.section' body opened here is not closed: expected '}'")

    def parse_pragma_strings(self) -> list[str]:
        """``"a", "b";`` after ``.pragma`` -> ["a", "b"]."""
        strings = [self.expect_kind(STRING, "a quoted string after '.pragma'").value]
        while self.accept(","):
            strings.append(self.expect_kind(STRING, "a quoted string after ','").value)
        self.expect(";", "expected ';' after '.pragma' strings")
        return strings

    def parse_header_directives(self, directives: dict, before_name: bool) -> None:
        """Performance directives and pragmas of a function header, into ``directives``. Before the
        function's name only ``.noreturn`` may appear; after its parameters, any directive but these is
        an error."""
        while self.peek().kind == DIRECTIVE and self.peek().text in HEADER_DIRECTIVES:
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
        if not before_name and self.peek().kind == DIRECTIVE:
            token = self.peek()
            raise self.error_at(
                token,
                f"unknown function directive '{token.text}'; supported: {', '.join(HEADER_DIRECTIVES)}",
            )

    def parse_gpusim_comments(self, comments: list[Token], functions: dict) -> tuple[dict, dict]:
        """``// gpusim: regs=N [sm_XY=M ...] [kernel=NAME]`` comments -> ``({NAME or '*': N},
        {NAME or '*': {"sm_XY": M, ...}})``; NAME must be in ``functions``.

        ``regs=N`` is the count for any architecture; ``sm_XY=M`` is ptxas's count for that architecture
        (registers differ per architecture: ``scripts/ptxas_regs.sh`` writes one per ptxas target), which a
        launch on a config of compute capability X.Y takes instead of N."""
        plain: dict = {}
        per_arch: dict = {}
        expected = ("'// gpusim: regs=N', '// gpusim: regs=N kernel=NAME' or "
                    "'// gpusim: regs=N sm_80=A sm_90=B kernel=NAME'")
        for comment in comments:
            fields = {}
            for item in str(comment.value).split():
                key, equals, value = item.partition("=")
                if (not equals or not value
                        or (key not in ("regs", "kernel") and not _ARCH_KEY.fullmatch(key))):
                    raise self.error_at(comment, f"malformed gpusim comment item '{item}'; expected {expected}")
                if key in fields:
                    raise self.error_at(comment, f"gpusim comment gives '{key}=' twice")
                fields[key] = value
            if "regs" not in fields:
                raise self.error_at(comment, "gpusim comment needs 'regs=N' with N a positive integer")
            counts = {}
            for key, value in fields.items():
                if key == "kernel":
                    continue
                if not _DECIMAL.fullmatch(value) or int(value) <= 0:
                    what = "'regs=N'" if key == "regs" else f"'{key}=N'"
                    raise self.error_at(comment, f"gpusim comment needs {what} with N a positive integer")
                counts[key] = int(value)
            kernel = fields.get("kernel", "*")
            if kernel != "*" and kernel not in functions:
                raise self.error_at(
                    comment, f"gpusim comment names kernel '{kernel}', which this file does not define"
                )
            plain[kernel] = counts.pop("regs")
            per_arch[kernel] = counts
        return plain, per_arch
