"""Tokenizer for PTX text: one compiled regular expression, one pass, a flat list of tokens.

What it models: the lexical layer of PTX as ``nvcc -ptx`` emits it and as people write it by hand —
comments (``//``, ``/* */``), directives (``.reg``), dotted words (``ld.global.f32``, ``%tid.x``,
``ld.shared::cta.u32``), identifiers (``%r1``, ``$L__BB0_2``, ``_Z3fooPf``), numeric literals
(decimal, hex, octal, binary, ``0f``/``0d`` float bit patterns, decimal floats), strings and
punctuation. Numeric literals are converted here, so the parser never calls ``int()`` on raw text.

What it simplifies: whitespace and comments are dropped, except ``// gpusim: ...`` comments, which
the parser reads for register-count hints. Columns count characters (a tab is one column).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any

from gpusim.errors import PTXSyntaxError

# Token kinds. Punctuation tokens use the character itself as their kind (";", ",", "{", ...).
DIRECTIVE = "directive"  # .reg  .visible  .b32
WORD = "word"  # ld.global.f32  %r1  %tid.x  $L__BB0_2  _Z3fooPf  _
INT = "int"  # value: Python int (sign not included)
FLOAT = "float"  # value: Python float (decimal literal)
F32BITS = "f32bits"  # value: raw IEEE-754 single bits from 0fXXXXXXXX
F64BITS = "f64bits"  # value: raw IEEE-754 double bits from 0dXXXXXXXXXXXXXXXX
STRING = "string"  # value: the text between the quotes, escapes resolved
GPUSIM_COMMENT = "gpusim"  # value: the text after "gpusim:" (kept apart from the token stream)
EOF = "eof"

_MAX_UINT64 = (1 << 64) - 1

_TOKEN_PATTERN = re.compile(
    r"""
      (?P<ws>[ \t\r\n\f\v]+)
    | (?P<gpusim>//[ \t]*gpusim:[^\n]*)
    | (?P<comment>//[^\n]*)
    | (?P<block>/\*.*?\*/)
    | (?P<badblock>/\*)
    | (?P<string>"(?:[^"\\\n]|\\.)*")
    | (?P<badstring>")
    | (?P<f32bits>0[fF][0-9a-fA-F]{8})(?![\w$.])
    | (?P<f64bits>0[dD][0-9a-fA-F]{16})(?![\w$.])
    | (?P<hex>0[xX][0-9a-fA-F]+[uU]?)(?![\w$.])
    | (?P<bin>0[bB][01]+[uU]?)(?![\w$.])
    | (?P<float>(?:\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+))(?![\w$.])
    | (?P<dec>\d+[uU]?)(?![\w$.])
    | (?P<badnum>\d[\w$.]*)
    | (?P<directive>\.[A-Za-z_][\w$]*(?:::[\w$]+)*)
    | (?P<word>(?:[A-Za-z_][\w$]*|[%$][\w$]+)(?:\.[\w$]+(?:::[\w$]+)*)*)
    | (?P<punct>[;,{}\[\]()<>=+\-!|@:])
    | (?P<bad>.)
    """,
    re.VERBOSE | re.DOTALL | re.ASCII,
)


@dataclass(frozen=True, slots=True)
class Token:
    """One token: ``kind`` (see the constants above or a punctuation character), its exact
    ``text``, its character offset ``pos`` in the source and, for literals, its ``value``."""

    kind: str
    text: str
    pos: int
    value: Any = None


class SourceText:
    """The source being tokenized, with offset -> (line, column) lookup for error messages."""

    def __init__(self, text: str, filename: str):
        self.text = text
        self.filename = filename
        self._line_starts = [0] + [match.end() for match in re.finditer("\n", text)]

    def line_col(self, pos: int) -> tuple[int, int]:
        """1-based line and column of character offset ``pos``."""
        line_index = bisect.bisect_right(self._line_starts, pos) - 1
        return line_index + 1, pos - self._line_starts[line_index] + 1

    def line(self, pos: int) -> int:
        """1-based line of character offset ``pos``."""
        return bisect.bisect_right(self._line_starts, pos)

    def offset(self, line: int, column: int) -> int:
        """Character offset of 1-based ``line`` and ``column`` (the inverse of :meth:`line_col`)."""
        return self._line_starts[line - 1] + column - 1

    def line_text(self, line: int) -> str:
        start = self._line_starts[line - 1]
        end = self.text.find("\n", start)
        return self.text[start:] if end < 0 else self.text[start:end]

    def error(
        self, message: str, pos: int, error_type: type[PTXSyntaxError] = PTXSyntaxError
    ) -> PTXSyntaxError:
        """An error of ``error_type`` located at offset ``pos`` (not raised: the caller raises it)."""
        line, column = self.line_col(pos)
        return error_type(message, self.filename, line, column, self.line_text(line).rstrip("\r"))


def _unescape(body: str) -> str:
    """Resolve the C-style escapes PTX strings may contain (only \\\\ and \\" occur in practice)."""
    return re.sub(r"\\(.)", lambda match: {"n": "\n", "t": "\t"}.get(match.group(1), match.group(1)), body)


def tokenize(source: SourceText) -> tuple[list[Token], list[Token]]:
    """Split ``source`` into tokens, ending with one ``EOF`` token; raises PTXSyntaxError on a
    character or literal that cannot start any token. Returns ``(tokens, gpusim_comments)``: the
    ``// gpusim: ...`` comments are returned apart, since they may sit anywhere."""
    tokens: list[Token] = []
    gpusim_comments: list[Token] = []
    append = tokens.append
    for match in _TOKEN_PATTERN.finditer(source.text):
        kind = match.lastgroup
        text = match.group()  # each alternative is one named group (look-aheads consume nothing)
        pos = match.start()
        if kind == "ws" or kind == "comment" or kind == "block":
            continue
        if kind == "word":
            append(Token(WORD, text, pos))
        elif kind == "punct":
            append(Token(text, text, pos))
        elif kind == "directive":
            append(Token(DIRECTIVE, text, pos))
        elif kind in ("dec", "hex", "bin") and len(text) > _MAX_INT_LITERAL_CHARS:
            raise source.error(f"integer literal of {len(text)} characters does not fit in 64 bits", pos)
        elif kind == "float" and len(text) > _MAX_FLOAT_LITERAL_CHARS:
            raise source.error(f"float literal of {len(text)} characters is longer than any double needs", pos)
        elif kind == "dec":
            digits = text.rstrip("uU")
            if len(digits) > 1 and digits[0] == "0":
                if not all(digit in "01234567" for digit in digits):
                    raise source.error(f"invalid octal literal '{text}' (a leading 0 means octal)", pos)
                value = int(digits, 8)
            else:
                value = int(digits)
            append(Token(INT, text, pos, _check_int_range(source, value, text, pos)))
        elif kind == "hex":
            value = int(text.rstrip("uU")[2:], 16)
            append(Token(INT, text, pos, _check_int_range(source, value, text, pos)))
        elif kind == "bin":
            value = int(text.rstrip("uU")[2:], 2)
            append(Token(INT, text, pos, _check_int_range(source, value, text, pos)))
        elif kind == "float":
            append(Token(FLOAT, text, pos, float(text)))
        elif kind == "f32bits":
            append(Token(F32BITS, text, pos, int(text[2:], 16)))
        elif kind == "f64bits":
            append(Token(F64BITS, text, pos, int(text[2:], 16)))
        elif kind == "string":
            append(Token(STRING, text, pos, _unescape(text[1:-1])))
        elif kind == "gpusim":
            gpusim_comments.append(Token(GPUSIM_COMMENT, text, pos, text.split("gpusim:", 1)[1].strip()))
        elif kind == "badblock":
            raise source.error("unterminated '/*' comment: expected '*/'", pos)
        elif kind == "badstring":
            raise source.error("unterminated string: expected a closing '\"' on the same line", pos)
        elif kind == "badnum":
            raise source.error(
                f"malformed numeric literal '{text}' (expected a decimal, 0x hex, 0b binary or octal "
                "integer, a decimal float, 0f + 8 hex digits or 0d + 16 hex digits)",
                pos,
            )
        else:
            raise source.error(f"unexpected character {text!r}", pos)
    append(Token(EOF, "", len(source.text)))
    return tokens, gpusim_comments


_MAX_INT_LITERAL_CHARS = 70     # 0b + 64 binary digits + 'U'; checked before int() (no 4,300-digit parse)
_MAX_FLOAT_LITERAL_CHARS = 400


def _check_int_range(source: SourceText, value: int, text: str, pos: int) -> int:
    if value > _MAX_UINT64:
        raise source.error(f"integer literal '{text}' does not fit in 64 bits", pos)
    return value


class TokenCursor:
    """Position in a token list, with the look-ahead, expectation and error helpers parsers share."""

    def __init__(self, source: SourceText, tokens: list[Token]):
        self.source = source
        self.tokens = tokens
        self.index = 0

    def peek(self, ahead: int = 0) -> Token:
        index = self.index + ahead
        return self.tokens[index] if index < len(self.tokens) else self.tokens[-1]

    def next(self) -> Token:
        token = self.tokens[self.index]
        if token.kind != EOF:
            self.index += 1
        return token

    def accept(self, what: str) -> Token | None:
        """Consume and return the next token if it is the punctuation or directive ``what``."""
        token = self.tokens[self.index]
        if token.kind == what or (token.kind == DIRECTIVE and token.text == what):
            self.index += 1
            return token
        return None

    def expect(self, what: str, message: str) -> Token:
        token = self.accept(what)
        if token is None:
            raise self.error_at(self.peek(), f"{message}, found {self.describe(self.peek())}")
        return token

    def expect_kind(self, kind: str, what: str) -> Token:
        token = self.peek()
        if token.kind != kind:
            raise self.error_at(token, f"expected {what}, found {self.describe(token)}")
        return self.next()

    def expect_statement_end(self, what: str) -> None:
        """Consume the ';' that ends a statement; a missing one is reported where it belongs: right after
        the statement's last token when the next token already sits on a later line."""
        if self.accept(";") is None:
            raise self.missing_semicolon(what)

    def missing_semicolon(self, what: str) -> PTXSyntaxError:
        token = self.peek()
        previous = self.tokens[self.index - 1] if self.index else token
        message = f"expected ';' after {what}, found {self.describe(token)}"
        if self.source.line(token.pos) > self.source.line(previous.pos):
            return self.error_at_pos(previous.pos + len(previous.text), message)
        return self.error_at(token, message)

    @staticmethod
    def describe(token: Token) -> str:
        return "the end of the file" if token.kind == EOF else f"'{token.text}'"

    def error_at(
        self, token: Token, message: str, error_type: type[PTXSyntaxError] = PTXSyntaxError
    ) -> PTXSyntaxError:
        return self.source.error(message, token.pos, error_type)

    def error_at_pos(self, pos: int, message: str) -> PTXSyntaxError:
        return self.source.error(message, pos)
