"""Declarations of the engine's state: one table per state record, from which everything else is generated.

What it models
    The engine's state is numpy arrays (numba compiles over them). Three kinds of record describe it:

    * ``Record``: a named tuple of arrays (``Machine``, ``TimingState``, ...). Each ``Field`` gives the
      array's name, dtype, shape (in named dimensions), unit and meaning, and how it starts (``fill``), or
      that the caller passes it (``given``: a view of a shared buffer, a table built elsewhere).
    * ``Columns``: the columns of one int64 array (``launch[L_*]``, ``ctr[TC_*]``, ...): each ``Column``
      is a name, unit and meaning; its index is its position. The constants ``PREFIX + name`` are the
      *field indices*, and ``count`` names the array's width.
    * ``Kinds``: enumerated values stored *in* a column (``mem_req[MR_KIND]`` holds ``MK_LOAD``, ...).
      Kinds have their own prefix, never a column's, so a field index and a kind value cannot be confused.

    From one declaration come (a) the constants and the ``NamedTuple`` class, written into a generated
    block of the declaring module (``# <state-layout:NAME begin>`` ... ``end``) by
    ``python scripts/doc_tables.py --render``; (b) the allocation (``allocate``: arrays of the declared dtype,
    shape and fill; given arrays checked against it); (c) the tables of docs/engine-state.md, in a
    generated block of the same script. tests/test_doc_tables.py fails when a block is not the rendering
    of its declaration, so a declaration and its constants cannot drift apart.

Why generated source, not constants made at import time
    numba freezes a module-level ``int`` global into the compiled code as a constant (no load, no speed
    cost). A constant injected at import time with ``globals()[...] = i`` would be frozen too, but mypy
    could not see it; an ``IntEnum`` member would be typed by numba as an enum member, not an integer, so
    every index would change type in the compiled code. Literal ints written by the generator keep both
    properties: numba sees exactly the int globals it saw when they were hand-written (the compiled engine
    is unchanged), and mypy sees every name. Likewise the records are ``typing.NamedTuple`` classes, which
    numba types as the same named tuples as before and mypy checks field by field.

Simplifications
    A shape is a tuple of ints, dimension names (resolved by ``allocate`` from a dict the caller builds)
    and ``Columns`` (their width). Dtypes are numpy names. Units are free text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

Dim = int | str


@dataclass(frozen=True)
class Column:
    name: str            # the constant is the record's prefix + name
    unit: str
    meaning: str


@dataclass(frozen=True)
class Columns:
    """The columns of one array: ``PREFIX + column.name`` is the index of each, ``count`` the width."""

    name: str            # the block's name (also in the docs)
    array: str           # where the columns live, as the engine writes it: "launch", "ts.ctr", ...
    prefix: str
    count: str           # the width constant's name
    meaning: str
    columns: tuple[Column, ...]
    width: int = 0       # the array's width when wider than its columns (reserved entries); 0: len(columns)

    @property
    def size(self) -> int:
        return max(self.width, len(self.columns))

    def constants(self) -> dict[str, int]:
        out = {self.prefix + c.name: i for i, c in enumerate(self.columns)}
        out[self.count] = self.size
        return out


@dataclass(frozen=True)
class Kind:
    name: str
    value: int
    meaning: str


@dataclass(frozen=True)
class Kinds:
    """Values one column holds (an enumeration or bit flags), in a namespace of their own."""

    name: str
    stored_in: str       # the column that holds them: "mem_req[MR_KIND]"
    prefix: str
    meaning: str
    kinds: tuple[Kind, ...]

    def constants(self) -> dict[str, int]:
        return {self.prefix + k.name: k.value for k in self.kinds}


@dataclass(frozen=True)
class Field:
    name: str
    dtype: str
    shape: tuple[Dim | Columns, ...]
    unit: str
    meaning: str
    fill: int | float = 0
    given: bool = False  # passed by the caller (a view, a table built elsewhere); checked, not allocated


@dataclass(frozen=True)
class Record:
    """A named tuple of arrays: the class ``name`` with one field per ``Field``, in order."""

    name: str
    meaning: str
    fields: tuple[Field, ...]
    dims: Mapping[str, str] = field(default_factory=dict)    # dimension name -> what it counts

    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)


Declaration = Record | Columns | Kinds


def shape_of(f: Field, dims: Mapping[str, int]) -> tuple[int, ...]:
    """The concrete shape of ``f`` for the dimension sizes ``dims``."""
    return tuple(d.size if isinstance(d, Columns) else (dims[d] if isinstance(d, str) else d) for d in f.shape)


def allocate(record: Record, dims: Mapping[str, int], given: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every array of ``record``: the given ones checked (dtype, rank, and shape where every dimension is
    known), the others allocated with their declared dtype, shape and fill. A ValueError names a mismatch."""
    names = set(record.field_names())
    extra = set(given) - names
    if extra:
        raise ValueError(f"{record.name}: {sorted(extra)} are not fields")
    out: dict[str, np.ndarray] = {}
    for f in record.fields:
        if f.given:
            if f.name not in given:
                raise ValueError(f"{record.name}.{f.name} is declared given but was not passed")
            array = given[f.name]
            if array.dtype != np.dtype(f.dtype) or array.ndim != len(f.shape):
                raise ValueError(f"{record.name}.{f.name}: declared {f.dtype}{list(f.shape)}, passed "
                                 f"{array.dtype}{list(array.shape)}")
            if all(not isinstance(d, str) or d in dims for d in f.shape) and array.shape != shape_of(f, dims):
                raise ValueError(f"{record.name}.{f.name}: declared shape {shape_of(f, dims)}, passed "
                                 f"{array.shape}")
            out[f.name] = array
        else:
            if f.name in given:
                raise ValueError(f"{record.name}.{f.name} is allocated from its declaration, not passed")
            shape, dtype = shape_of(f, dims), np.dtype(f.dtype)
            # zeros: calloc'd pages, touched only when written (a large, sparsely used array costs no memory)
            out[f.name] = np.zeros(shape, dtype) if f.fill == 0 else np.full(shape, f.fill, dtype=dtype)
    return out


# ------------------------------------------------------------------------------------- rendering


def render_source(decl: Declaration) -> str:
    """The body of ``decl``'s generated block in its module: the constants, or the NamedTuple class."""
    if isinstance(decl, Record):
        lines = [f"class {decl.name}(NamedTuple):", f'    """{decl.meaning} (fields: docs/engine-state.md)."""', ""]
        lines += [f"    {f.name}: np.ndarray" for f in decl.fields]
        return "\n".join(lines) + "\n"
    return "".join(f"{name} = {value}\n" for name, value in decl.constants().items())


def _shape_text(shape: tuple[Dim | Columns, ...]) -> str:
    return "[" + ", ".join(d.count if isinstance(d, Columns) else str(d) for d in shape) + "]"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(decl: Declaration) -> str:
    """The docs table of one declaration."""
    if isinstance(decl, Record):
        lines = [f"**`{decl.name}`**: {decl.meaning}", ""]
        if decl.dims:
            lines += ["Dimensions: " + "; ".join(f"`{k}` {v}" for k, v in decl.dims.items()) + ".", ""]
        lines += ["| field | dtype | shape | unit | meaning |", "| --- | --- | --- | --- | --- |"]
        for f in decl.fields:
            how = " (passed in)" if f.given else ("" if f.fill == 0 else f" (starts at {f.fill})")
            lines.append(f"| `{f.name}` | {f.dtype} | {_shape_text(f.shape)} | {_cell(f.unit)} | "
                         f"{_cell(f.meaning)}{how} |")
    elif isinstance(decl, Columns):
        lines = [f"**`{decl.array}[{decl.prefix}*]`** (`{decl.count}` = {decl.size}): {decl.meaning}", "",
                 "| index | constant | unit | meaning |", "| ---: | --- | --- | --- |"]
        lines += [f"| {i} | `{decl.prefix}{c.name}` | {_cell(c.unit)} | {_cell(c.meaning)} |"
                  for i, c in enumerate(decl.columns)]
    else:
        lines = [f"**`{decl.prefix}*`**, the values of `{decl.stored_in}`: {decl.meaning}", "",
                 "| value | constant | meaning |", "| ---: | --- | --- |"]
        lines += [f"| {k.value} | `{decl.prefix}{k.name}` | {_cell(k.meaning)} |" for k in decl.kinds]
    return "\n".join(lines) + "\n"


def declarations(namespace: Mapping[str, object]) -> list[Declaration]:
    """The declarations a module defines (its ``vars()``), in definition order."""
    return [v for v in namespace.values() if isinstance(v, (Record, Columns, Kinds))]
