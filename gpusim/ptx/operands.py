"""Parsing one PTX instruction statement: ``[@[!]%p] opcode{.mod}* operand, ...;``.

What it models: every operand form nvcc emits and people write — registers, negated predicates
(``!%p``), special registers (``%tid.x``, ``%laneid``, ``%envreg3``), immediates (integers of any
base, ``0f``/``0d`` bit patterns, decimal floats, negated), vectors with sinks (``{%f1, _}``),
addresses (``[%rd1+16]``, ``[%rd1-4]``, ``[sym+8]``, ``[12]``), register pairs (``%r1|%p1``), symbols
and ``sym+imm`` (an :class:`~gpusim.ptx.ast.Address` with ``base_is_reg=False``) and the
parenthesised lists of ``call``.

What it simplifies: a plain name is a :class:`~gpusim.ptx.ast.Reg` if a register of that name has
been declared when the instruction is read, else a :class:`~gpusim.ptx.ast.Symbol`; every name is
recorded as a :class:`NameRef` so the function parser can check it and fix that guess once the whole
body (and every declaration in it) is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpusim.errors import UnsupportedPTXError
from gpusim.ptx.ast import (
    Address,
    Imm,
    Instruction,
    Operand,
    ParenList,
    PredPair,
    Reg,
    Sink,
    SourceLoc,
    SpecialReg,
    Symbol,
    TensorCoords,
    Vector,
)
from gpusim.ptx.lexer import DIRECTIVE, EOF, F32BITS, F64BITS, FLOAT, INT, WORD, Token, TokenCursor

# Special registers read through a component: %tid.x, %ntid.y, %ctaid.z, ...
_VECTOR_SPECIAL_REGS = frozenset(
    {
        "%tid",
        "%ntid",
        "%ctaid",
        "%nctaid",
        "%clusterid",
        "%nclusterid",
        "%cluster_ctaid",
        "%cluster_nctaid",
    }
)
_SCALAR_SPECIAL_REGS = frozenset(
    {
        "%laneid",
        "%warpid",
        "%nwarpid",
        "%smid",
        "%nsmid",
        "%gridid",
        "%clock",
        "%clock_hi",
        "%clock64",
        "%globaltimer",
        "%globaltimer_lo",
        "%globaltimer_hi",
        "%lanemask_eq",
        "%lanemask_le",
        "%lanemask_lt",
        "%lanemask_ge",
        "%lanemask_gt",
        "%dynamic_smem_size",
        "%total_smem_size",
        "%aggr_smem_size",
        "%cluster_ctarank",
        "%cluster_nctarank",
        "%is_explicit_cluster",
        "%current_graph_exec",
        "%reserved_smem_offset_begin",
        "%reserved_smem_offset_end",
        "%reserved_smem_offset_cap",
        "%reserved_smem_offset_0",
        "%reserved_smem_offset_1",
    }
)
# %envreg0..%envreg31, %pm0..%pm7 and %pm0_64..%pm7_64.
_NUMBERED_SPECIAL_REG = re.compile(r"%envreg(?:[12]?[0-9]|3[01])|%pm[0-7](?:_64)?")
_COMPONENTS = ("x", "y", "z")
# Texture and surface instructions: parsed without their operands, refused by the lowering as unsupported.
TEXTURE_OPCODES = frozenset({"tex", "tld4", "txq", "suld", "sust", "sured", "suq", "istypep"})
_SIGN_BIT = {F32BITS: 1 << 31, F64BITS: 1 << 63}
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_LIST_SPACE = re.compile(r"(?<=\()\s+|\s+(?=\))")


@dataclass(slots=True)
class NameRef:
    """A name an instruction uses, for checking once the function is complete. ``parsed_as_reg`` is the
    guess made while parsing; ``must_be_reg`` for guards, ``!p`` and ``a|b`` pairs; ``role`` for messages."""

    name: str
    pos: int
    instruction_index: int
    parsed_as_reg: bool
    must_be_reg: bool
    role: str


def is_special_register(name: str) -> bool:
    """True for special registers without a component (``%laneid``, ``%tid``, ``%envreg3``)."""
    return (
        name in _SCALAR_SPECIAL_REGS
        or name in _VECTOR_SPECIAL_REGS
        or bool(_NUMBERED_SPECIAL_REG.fullmatch(name))
    )


def reclassify_operand(operand, regs: dict):
    """``operand`` with register-vs-symbol decided by ``regs`` (the function's complete declarations)."""
    if isinstance(operand, Reg):
        return operand if operand.name in regs or operand.negated else Symbol(operand.name)
    if isinstance(operand, Symbol):
        return Reg(operand.name) if operand.name in regs else operand
    if isinstance(operand, Address):
        is_reg = operand.base in regs
        if operand.base and is_reg != operand.base_is_reg:
            return Address(operand.base, operand.offset, is_reg)
        return operand
    if isinstance(operand, Vector):     # TensorCoords stays TensorCoords
        return type(operand)(tuple(reclassify_operand(element, regs) for element in operand.elems))
    if isinstance(operand, ParenList):
        return ParenList(tuple(reclassify_operand(element, regs) for element in operand.elems))
    return operand


class InstructionParser:
    """Parses instruction statements into ``scope.body``, recording names into ``scope.refs``.

    ``cursor`` is the module parser's token cursor; ``scope`` needs ``regs``, ``body``, ``refs`` and
    ``src_line`` (the function being parsed)."""

    def __init__(self, cursor: TokenCursor, scope):
        self.cursor = cursor
        self.source = cursor.source
        self.scope = scope

    def parse(self) -> None:
        cursor = self.cursor
        start = cursor.peek()
        guard = None
        if start.kind == "@":
            cursor.next()
            negated = cursor.accept("!") is not None
            predicate = cursor.expect_kind(WORD, "a predicate register after '@'")
            self.check_register_name(predicate, "a guard predicate")
            guard = (predicate.text, negated)
        opcode_token = cursor.expect_kind(WORD, "an instruction opcode")
        if opcode_token.text[0] in "%$":
            raise cursor.error_at(
                opcode_token,
                f"expected an instruction opcode, found '{opcode_token.text}' (a label needs a ':' after it)",
            )
        opcode, *mods = opcode_token.text.split(".")
        operands: list[Operand] = []
        if self.ends_statement(cursor.peek(), cursor.peek(1)):
            raise cursor.missing_semicolon("instruction")
        if opcode in TEXTURE_OPCODES:
            # texture/surface operands ([tex, {coordinates}], ...) are kept as text: the lowering refuses
            # the instruction as unsupported, for its kernel only
            while cursor.peek().kind not in (";", EOF, DIRECTIVE):
                cursor.next()
            if cursor.accept(";") is None:
                raise cursor.missing_semicolon("instruction")
        elif cursor.accept(";") is None:
            while True:
                operand = self.parse_operand("top")
                if isinstance(operand, tuple):          # [tmap, {coordinates}]: two operands
                    operands.extend(operand)
                else:
                    operands.append(operand)
                token = cursor.peek()
                if token.kind == ",":
                    cursor.next()
                elif token.kind == ";":
                    cursor.next()
                    break
                elif (
                    self.source.line(token.pos) > self.source.line(cursor.tokens[cursor.index - 1].pos)
                    or token.kind == EOF
                ):
                    raise cursor.missing_semicolon("instruction")
                else:
                    raise cursor.error_at(
                        token, f"expected ',' or ';' after an operand, found {cursor.describe(token)}"
                    )
        end = cursor.tokens[cursor.index - 1].pos + 1
        text = self.source.text[start.pos : end]
        if "\n" in text or "/" in text:  # over several lines (nvcc's call sequences) or commented
            text = _LIST_SPACE.sub("", _COMMENT.sub(" ", text))
        line, column = self.source.line_col(start.pos)
        self.scope.body.append(
            Instruction(
                opcode=opcode,
                mods=tuple("." + mod for mod in mods),
                operands=operands,
                loc=SourceLoc(self.source.filename, line, column),
                text=" ".join(text.split()),
                guard=guard,
                src_line=self.scope.src_line,
            )
        )

    @staticmethod
    def ends_statement(token: Token, following: Token) -> bool:
        """True if ``token`` cannot begin an operand but begins the next statement (a missing ';')."""
        return token.kind in ("}", EOF, DIRECTIVE, "@") or (token.kind == WORD and following.kind == ":")

    # ----------------------------------------------------------------- operands

    def parse_operand(self, context: str):
        """One operand. ``context`` is "top" (directly in the operand list), "vector" or "list"."""
        cursor = self.cursor
        token = cursor.peek()
        kind = token.kind
        if kind == WORD:
            cursor.next()
            if context == "top" and cursor.peek().kind == "|":
                return self.parse_pair(token)     # d|p, either may be _ (elect.sync _|p, setp _|p)
            if token.text == "_":
                return Sink()
            operand = self.name_operand(token)
            if context == "top" and isinstance(operand, Symbol) and cursor.peek().kind in ("+", "-"):
                return Address(operand.name, self.parse_offset(), base_is_reg=False)
            return operand
        if kind == "!":
            cursor.next()
            predicate = cursor.expect_kind(WORD, "a predicate register after '!'")
            self.check_register_name(predicate, "a negated predicate")
            return Reg(predicate.text, negated=True)
        if kind in (INT, FLOAT, F32BITS, F64BITS, "-"):
            return self.parse_immediate()
        if kind == "[" and context == "top":
            return self.parse_address()
        if kind == "{" and context == "top":
            return Vector(self.parse_list("{", "}", "vector"))
        if kind == "(" and context == "top":
            return ParenList(self.parse_list("(", ")", "list"))
        raise cursor.error_at(
            token,
            "expected an operand (a register, immediate, [address], {vector}, label or "
            f"symbol), found {cursor.describe(token)}",
        )

    def name_operand(self, token: Token):
        """A register, special register or symbol named by ``token``."""
        text = token.text
        if "." in text:
            base, _, component = text.partition(".")
            if base in _VECTOR_SPECIAL_REGS:
                if component not in _COMPONENTS:
                    raise self.cursor.error_at(
                        token,
                        f"special register '{base}' takes a component .x, .y or .z, found '.{component}'",
                    )
                return SpecialReg(base, component)
            if is_special_register(base):
                raise self.cursor.error_at(token, f"special register '{base}' has no components")
            if base.startswith("%"):
                raise self.cursor.error_at(
                    token, f"vector register components ('{text}') are not supported", UnsupportedPTXError
                )
            raise self.cursor.error_at(token, f"'{text}' is not a valid operand (names cannot contain '.')")
        if text[0] == "%":
            if is_special_register(text):
                return SpecialReg(text)
            self.record(token, parsed_as_reg=True, must_be_reg=False, role="a register")
            return Reg(text)
        is_reg = text in self.scope.regs
        self.record(token, parsed_as_reg=is_reg, must_be_reg=False, role="an operand")
        return Reg(text) if is_reg else Symbol(text)

    def check_register_name(self, token: Token, role: str) -> None:
        if "." in token.text or is_special_register(token.text) or token.text == "_":
            raise self.cursor.error_at(
                token, f"expected a predicate register as {role}, found '{token.text}'"
            )
        self.record(token, parsed_as_reg=True, must_be_reg=True, role=role)

    def record(self, token: Token, parsed_as_reg: bool, must_be_reg: bool, role: str) -> None:
        self.scope.refs.append(
            NameRef(token.text, token.pos, len(self.scope.body), parsed_as_reg, must_be_reg, role)
        )

    def parse_pair(self, first: Token) -> PredPair:
        """``%r1|%p1``: the two destinations of setp and of shfl.sync's predicate form (either may be _)."""
        self.cursor.next()  # '|'
        second = self.cursor.expect_kind(WORD, "a register or '_' after '|'")
        for token, role in (
            (first, "the first of a register pair"),
            (second, "the second of a register pair"),
        ):
            if token.text != "_":  # a sink: the value is discarded
                self.check_register_name(token, role)
        return PredPair(first.text, second.text)

    def parse_immediate(self) -> Imm:
        cursor = self.cursor
        negative = cursor.accept("-") is not None
        token = cursor.next()
        kind = token.kind
        value = token.value
        if kind == INT:
            return Imm(-value if negative else value, "int")
        if kind == FLOAT:
            return Imm(-value if negative else value, "float")
        if kind in _SIGN_BIT:
            return Imm(value ^ _SIGN_BIT[kind] if negative else value, kind)
        raise cursor.error_at(token, f"expected a number after '-', found {cursor.describe(token)}")

    def parse_offset(self) -> int:
        """``+16``, ``+-4``, ``-4`` or ``+0x10`` after an address base."""
        cursor = self.cursor
        sign = -1 if cursor.next().kind == "-" else 1
        if cursor.accept("-") is not None:
            sign = -sign
        token = cursor.expect_kind(INT, "an integer offset")
        return sign * token.value

    def parse_address(self) -> Address | tuple[Address, TensorCoords]:
        cursor = self.cursor
        cursor.next()  # '['
        token = cursor.peek()
        if token.kind == WORD:
            cursor.next()
            if "." in token.text or is_special_register(token.text) or token.text == "_":
                raise cursor.error_at(
                    token, f"expected a register or variable as an address base, found '{token.text}'"
                )
            is_reg = token.text[0] == "%" or token.text in self.scope.regs
            self.record(token, parsed_as_reg=is_reg, must_be_reg=False, role="an address base")
            offset = self.parse_offset() if cursor.peek().kind in ("+", "-") else 0
            address = Address(token.text, offset, base_is_reg=is_reg)
        elif token.kind in (INT, "-"):
            negative = cursor.accept("-") is not None
            value = cursor.expect_kind(INT, "an integer address").value
            address = Address("", -value if negative else value, base_is_reg=False)
        else:
            raise cursor.error_at(
                token,
                f"expected a register, variable or integer address after '[', found {cursor.describe(token)}",
            )
        if cursor.peek().kind == "," and cursor.peek(1).kind == "{":   # a tensor operand [tmap, {c0, ...}]
            cursor.next()
            coords = TensorCoords(self.parse_list("{", "}", "vector"))
            cursor.expect("]", "expected ']' to close the tensor operand [tmap, {coordinates}]")
            return address, coords
        cursor.expect("]", "expected ']' to close the address")
        return address

    def parse_list(self, opening: str, closing: str, context: str) -> tuple:
        cursor = self.cursor
        cursor.next()  # the opening bracket
        elements = []
        if cursor.peek().kind != closing:
            elements.append(self.parse_operand(context))
            while cursor.accept(","):
                elements.append(self.parse_operand(context))
        cursor.expect(closing, f"expected ',' or '{closing}' in the '{opening} {closing}' operand list")
        if context == "vector" and not elements:
            raise cursor.error_at(
                cursor.tokens[cursor.index - 1], "a vector operand needs at least one element"
            )
        return tuple(elements)
