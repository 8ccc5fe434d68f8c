"""The TOML side of a program (see ``gpusim.programs.catalog``): the restricted expressions, the specs of arrays,
launches and checks, and the parsing and validation of each table; every problem is one ``ConfigError``
naming the file and the key."""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

import numpy as np

from gpusim.errors import ConfigError


def fma32(a: Any, b: Any, c: Any) -> np.ndarray | np.float32:
    """The fp32 fused multiply-add ``a * b + c`` rounded once, as ``fma.rn.f32`` computes it.

    The product of two float32 values is exact in float64; the float64 sum is then made
    round-to-odd (using its exact error term), which makes the final rounding to float32
    correct: 53 bits >= 24 + 2 (Boldo and Melquiond's round-to-odd theorem).
    """
    a64 = np.asarray(a, dtype=np.float32).astype(np.float64)
    b64 = np.asarray(b, dtype=np.float32).astype(np.float64)
    c64 = np.asarray(c, dtype=np.float32).astype(np.float64)
    product = a64 * b64
    with np.errstate(invalid="ignore", over="ignore"):
        total = product + c64
        # Knuth's TwoSum: error is exactly (product + c) - total.
        product_part = total - c64
        addend_part = total - product_part
        error = (product - product_part) + (c64 - addend_part)
        even = (np.asarray(total).view(np.uint64) & np.uint64(1)) == 0
        inexact = (error != 0) & np.isfinite(total)
        toward = np.where(error > 0, np.inf, -np.inf)
        odd_total = np.where(inexact & even, np.nextafter(total, toward), total)
        result = odd_total.astype(np.float32)
    if result.ndim == 0:
        return np.float32(result)
    return result


SUPPORTED_DTYPES = (
    "float16", "float32", "float64",
    "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
)


_TOP_KEYS = {"description", "ptx", "source", "config", "seed", "sizes", "arrays", "tensor_maps", "reference",
             "launch", "check"}


_ARRAY_KEYS = {"name", "dtype", "shape", "init"}


_LAUNCH_KEYS = {"kernel", "grid", "block", "shared_bytes", "args", "cluster"}


_TENSOR_MAP_KEYS = {"name", "array", "box", "swizzle"}


_TENSOR_MAP_PARAM_TYPES = {"b8"}   # a CUtensorMap parameter: .param .align 64/128 .b8 name[128]


_CHECK_KEYS = {"array", "expect", "rtol", "atol"}


_INIT_HELPERS = ("random", "uniform", "randint", "arange", "zeros", "ones", "full")


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


_POINTER_PARAM_TYPES = {"u64", "s64", "b64"}


_FLOAT_PARAM_TYPES = {"f32", "f64", "f16"}


@dataclass(frozen=True)
class Expression:
    """One compiled expression from a program file, with where it came from."""

    text: str
    code: CodeType = field(repr=False, compare=False)
    field_name: str
    file: str

    def evaluate(self, namespace: dict[str, Any]) -> Any:
        # No builtins an expression can name (unknown names are refused when compiling);
        # only __import__, which numpy's C code looks up in the calling frame for lazy imports.
        scope: dict[str, Any] = {"__builtins__": {"__import__": __import__}}
        scope.update(namespace)
        try:
            with np.errstate(over="ignore"):
                return eval(self.code, scope)  # noqa: S307 - restricted namespace, no builtins
        except ConfigError:
            raise
        except Exception as error:  # every evaluation failure becomes one ConfigError
            raise ConfigError(f"evaluating '{self.text}' failed: {type(error).__name__}: {error}",
                              file=self.file, field=self.field_name) from None


@dataclass(frozen=True)
class ArraySpec:
    """A device array: created in file order, filled by its init expression."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    init: Expression


@dataclass(frozen=True)
class LaunchSpec:
    """One kernel launch; ``args`` holds ("array", name), ("tensor_map", name) or ("value", number) pairs;
    ``cluster`` the thread-block cluster's dimensions (None: no cluster launch)."""

    kernel: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    shared_bytes: int
    args: tuple[tuple[str, Any], ...]
    cluster: tuple[int, ...] | None = None


@dataclass(frozen=True)
class TensorMapSpec:
    """A TMA tensor map over an array (``GPU.tensor_map(array, box=..., swizzle=...)``), passed to a kernel's
    CUtensorMap parameter by name."""

    name: str
    array: str
    box: tuple[int, ...]
    swizzle: int | None


@dataclass(frozen=True)
class CheckSpec:
    """The final contents of ``array`` must match ``expect`` within rtol/atol (exact if both 0)."""

    array: str
    expect: Expression
    rtol: float
    atol: float


def _reject_unknown(table: dict[str, Any], allowed: set[str], file: str, prefix: str) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigError(f"unknown key; expected one of {', '.join(sorted(allowed))}",
                              file=file, field=f"{prefix}{key}")


def _type_name(kind: type) -> str:
    return {str: "a string", int: "an integer", dict: "a table", list: "an array",
            float: "a number"}.get(kind, kind.__name__)


def _require(table: dict[str, Any], key: str, kind: type, file: str, prefix: str) -> Any:
    if key not in table:
        raise ConfigError("missing required key", file=file, field=f"{prefix}{key}")
    return _typed(table[key], kind, file, f"{prefix}{key}")


def _optional(table: dict[str, Any], key: str, kind: type, default: Any, file: str, prefix: str) -> Any:
    if key not in table:
        return default
    return _typed(table[key], kind, file, f"{prefix}{key}")


def _typed(value: Any, kind: type, file: str, field_name: str) -> Any:
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ConfigError(f"must be {_type_name(kind)}, got {value!r}", file=file, field=field_name)
    return value


def _base_namespace(sizes: dict[str, Any]) -> dict[str, Any]:
    namespace: dict[str, Any] = {"np": np, "fma32": fma32}
    namespace.update(sizes)
    return namespace


_RESERVED_NAMES = {"np", "fma32", "rng", *_INIT_HELPERS}


def _compile(text: str, file: str, field_name: str, known: set[str]) -> Expression:
    """Compile an expression, refusing syntax errors, private attributes and unknown names."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as error:
        raise ConfigError(f"'{text}' is not a valid expression: {error.msg}", file=file,
                          field=field_name) from None
    loaded: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise ConfigError(f"'{text}': private attribute '{node.attr}' is not allowed",
                              file=file, field=field_name)
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    unknown = sorted(loaded - bound - known)
    if unknown:
        raise ConfigError(f"'{text}' uses unknown name(s) {', '.join(unknown)}; known: "
                          f"{', '.join(sorted(known))}", file=file, field=field_name)
    return Expression(text=text, code=compile(tree, f"<{file}: {field_name}>", "eval"),
                      field_name=field_name, file=file)


def _as_number(value: Any, file: str, field_name: str, text: str) -> int | float:
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, bool | np.bool_):
        raise ConfigError(f"'{text}' gives a boolean, expected a number", file=file, field=field_name)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value)
    raise ConfigError(f"'{text}' gives {type(value).__name__}, expected a number", file=file,
                      field=field_name)


def _evaluate_sizes(table: dict[str, Any], overrides: dict[str, Any], file: str) -> dict[str, int | float]:
    for name, value in overrides.items():
        if name not in table:
            raise ConfigError(f"cannot override unknown size (the program's sizes are "
                              f"{', '.join(table) or 'none'})", file=file, field=f"sizes.{name}")
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise ConfigError(f"override must be a number, got {value!r}", file=file, field=f"sizes.{name}")
    sizes: dict[str, int | float] = {}
    for name, value in table.items():
        field_name = f"sizes.{name}"
        _check_identifier(name, file, field_name)
        if name in _RESERVED_NAMES:
            raise ConfigError(f"'{name}' is a reserved name", file=file, field=field_name)
        if name in overrides:
            value = overrides[name]
        if isinstance(value, str):
            expression = _compile(value, file, field_name, {"np", *sizes})
            sizes[name] = _as_number(expression.evaluate(_base_namespace(sizes)), file, field_name, value)
        elif isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise ConfigError(f"must be a number or an expression string, got {value!r}", file=file,
                              field=field_name)
        else:
            sizes[name] = _as_number(value, file, field_name, repr(value))
    return sizes


def _check_identifier(name: str, file: str, field_name: str) -> None:
    if not _IDENTIFIER.match(name):
        raise ConfigError(f"'{name}' is not a valid name (letters, digits, underscore)", file=file,
                          field=field_name)


def _integer(value: Any, sizes: dict[str, Any], file: str, field_name: str, minimum: int) -> int:
    """An integer given as a literal or an expression over the sizes, at least ``minimum``."""
    if isinstance(value, str):
        expression = _compile(value, file, field_name, {"np", *sizes})
        number = _as_number(expression.evaluate(_base_namespace(sizes)), file, field_name, value)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise ConfigError(f"must be an integer or an expression string, got {value!r}", file=file,
                          field=field_name)
    if isinstance(number, float):
        if not number.is_integer():
            raise ConfigError(f"must be an integer, got {number!r}", file=file, field=field_name)
        number = int(number)
    if number < minimum:
        raise ConfigError(f"must be at least {minimum}, got {number}", file=file, field=field_name)
    return number


def _dimensions(value: Any, sizes: dict[str, Any], file: str, field_name: str, minimum: int,
                max_dims: int) -> tuple[int, ...]:
    items = value if isinstance(value, list) else [value]
    if not 1 <= len(items) <= max_dims:
        raise ConfigError(f"must have 1 to {max_dims} dimensions, got {len(items)}", file=file,
                          field=field_name)
    return tuple(_integer(item, sizes, file, f"{field_name}[{index}]", minimum)
                 for index, item in enumerate(items))


def _parse_arrays(tables: list[Any], sizes: dict[str, Any], file: str) -> tuple[ArraySpec, ...]:
    arrays: list[ArraySpec] = []
    names: list[str] = []
    for index, table in enumerate(tables):
        prefix = f"arrays[{index}]."
        if not isinstance(table, dict):
            raise ConfigError("must be a table ([[arrays]])", file=file, field=f"arrays[{index}]")
        _reject_unknown(table, _ARRAY_KEYS, file, prefix)
        name = _require(table, "name", str, file, prefix)
        _check_identifier(name, file, f"{prefix}name")
        if name in names or name in sizes or name in _RESERVED_NAMES:
            raise ConfigError(f"name '{name}' is already used by an array, a size or a helper",
                              file=file, field=f"{prefix}name")
        dtype_name = _require(table, "dtype", str, file, prefix)
        if dtype_name not in SUPPORTED_DTYPES:
            supported = ", ".join(SUPPORTED_DTYPES)
            raise ConfigError(f"unsupported dtype '{dtype_name}'; expected one of {supported}",
                              file=file, field=f"{prefix}dtype")
        if "shape" not in table:
            raise ConfigError("missing required key", file=file, field=f"{prefix}shape")
        shape = _dimensions(table["shape"], sizes, file, f"{prefix}shape", 1, 8)
        init_text = _optional(table, "init", str, "zeros", file, prefix)
        known = {"np", "fma32", "rng", *_INIT_HELPERS, *sizes, *names}
        init = _compile(init_text, file, f"{prefix}init", known)
        arrays.append(ArraySpec(name=name, dtype=np.dtype(dtype_name), shape=shape, init=init))
        names.append(name)
    return tuple(arrays)


def _parse_reference(table: dict[str, Any], sizes: dict[str, Any], array_names: list[str],
                     file: str) -> tuple[tuple[str, Expression], ...]:
    reference: list[tuple[str, Expression]] = []
    known = {"np", "fma32", *sizes, *array_names}
    for name, text in table.items():
        field_name = f"reference.{name}"
        _check_identifier(name, file, field_name)
        if name in known or name in _RESERVED_NAMES:
            raise ConfigError(f"name '{name}' is already used by an array, a size or a helper",
                              file=file, field=field_name)
        text = _typed(text, str, file, field_name)
        reference.append((name, _compile(text, file, field_name, known)))
        known.add(name)
    return tuple(reference)


def _entry_parameters(ptx_text: str, kernel: str) -> list[str] | None:
    """The PTX types of a kernel's parameters (``u64``, ``f32``, ...), or None if no such entry."""
    match = re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\(([^)]*)\)", ptx_text)
    if match is None:
        return None
    return re.findall(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)", match.group(1))


def _parse_tensor_maps(tables: list[Any], sizes: dict[str, Any], array_names: list[str],
                       file: str) -> tuple[TensorMapSpec, ...]:
    maps: list[TensorMapSpec] = []
    for index, table in enumerate(tables):
        prefix = f"tensor_maps[{index}]."
        if not isinstance(table, dict):
            raise ConfigError("must be a table ([[tensor_maps]])", file=file, field=f"tensor_maps[{index}]")
        _reject_unknown(table, _TENSOR_MAP_KEYS, file, prefix)
        name = _require(table, "name", str, file, prefix)
        _check_identifier(name, file, f"{prefix}name")
        if name in array_names or name in sizes or name in _RESERVED_NAMES or any(m.name == name for m in maps):
            raise ConfigError(f"name '{name}' is already used by an array, a size, a tensor map or a helper",
                              file=file, field=f"{prefix}name")
        array = _require(table, "array", str, file, prefix)
        if array not in array_names:
            raise ConfigError(f"no array '{array}' (arrays: {', '.join(array_names)})", file=file,
                              field=f"{prefix}array")
        if "box" not in table:
            raise ConfigError("missing required key", file=file, field=f"{prefix}box")
        box = _dimensions(table["box"], sizes, file, f"{prefix}box", 1, 5)
        swizzle = _optional(table, "swizzle", int, 0, file, prefix)
        maps.append(TensorMapSpec(name=name, array=array, box=box, swizzle=swizzle or None))
    return tuple(maps)


def _parse_launch(table: Any, index: int, sizes: dict[str, Any], array_names: list[str], ptx_text: str,
                  ptx_name: str, file: str, map_names: tuple[str, ...] = ()) -> LaunchSpec:
    prefix = f"launch[{index}]."
    if not isinstance(table, dict):
        raise ConfigError("must be a table ([[launch]])", file=file, field=f"launch[{index}]")
    _reject_unknown(table, _LAUNCH_KEYS, file, prefix)
    kernel = _require(table, "kernel", str, file, prefix)
    parameters = _entry_parameters(ptx_text, kernel)
    if parameters is None:
        entries = re.findall(r"\.entry\s+([\w$]+)", ptx_text)
        raise ConfigError(f"no kernel '{kernel}' in {ptx_name} (it has: {', '.join(entries) or 'none'})",
                          file=file, field=f"{prefix}kernel")
    for key in ("grid", "block"):
        if key not in table:
            raise ConfigError("missing required key", file=file, field=f"{prefix}{key}")
    grid = _dimensions(table["grid"], sizes, file, f"{prefix}grid", 1, 3)
    block = _dimensions(table["block"], sizes, file, f"{prefix}block", 1, 3)
    shared_bytes = _integer(table.get("shared_bytes", 0), sizes, file, f"{prefix}shared_bytes", 0)
    raw_args = _require(table, "args", list, file, prefix)
    if len(raw_args) != len(parameters):
        raise ConfigError(f"kernel '{kernel}' takes {len(parameters)} parameters, {len(raw_args)} given",
                          file=file, field=f"{prefix}args")
    args: list[tuple[str, Any]] = []
    for position, (value, parameter_type) in enumerate(zip(raw_args, parameters, strict=True)):
        field_name = f"{prefix}args[{position}]"
        if isinstance(value, str) and value in map_names:
            if parameter_type not in _TENSOR_MAP_PARAM_TYPES:
                raise ConfigError(f"tensor map '{value}' passed to a .{parameter_type} parameter (a CUtensorMap "
                                  "parameter is .b8 name[128])", file=file, field=field_name)
            args.append(("tensor_map", value))
            continue
        if isinstance(value, str) and value in array_names:
            if parameter_type not in _POINTER_PARAM_TYPES:
                raise ConfigError(f"array '{value}' passed to a .{parameter_type} parameter "
                                  "(pointers are .u64)",
                                  file=file, field=field_name)
            args.append(("array", value))
            continue
        if isinstance(value, str):
            expression = _compile(value, file, field_name, {"np", *sizes})
            number = _as_number(expression.evaluate(_base_namespace(sizes)), file, field_name, value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            number = value
        else:
            raise ConfigError(f"must be an array name, a size expression or a number, got {value!r}",
                              file=file, field=field_name)
        if isinstance(number, float) and parameter_type not in _FLOAT_PARAM_TYPES:
            raise ConfigError(f"float {number!r} passed to integer parameter of type .{parameter_type}",
                              file=file, field=field_name)
        args.append(("value", number))
    cluster = _dimensions(table["cluster"], sizes, file, f"{prefix}cluster", 1, 3) if "cluster" in table else None
    return LaunchSpec(kernel=kernel, grid=grid, block=block, shared_bytes=shared_bytes, args=tuple(args),
                      cluster=cluster)


def _parse_check(table: Any, index: int, sizes: dict[str, Any], array_names: list[str], known: set[str],
                 file: str) -> CheckSpec:
    prefix = f"check[{index}]."
    if not isinstance(table, dict):
        raise ConfigError("must be a table ([[check]])", file=file, field=f"check[{index}]")
    _reject_unknown(table, _CHECK_KEYS, file, prefix)
    array = _require(table, "array", str, file, prefix)
    if array not in array_names:
        raise ConfigError(f"no array '{array}' (arrays: {', '.join(array_names)})", file=file,
                          field=f"{prefix}array")
    expect = _compile(_require(table, "expect", str, file, prefix), file, f"{prefix}expect",
                      {"np", "fma32", *sizes, *known})
    rtol = _optional(table, "rtol", float, 0.0, file, prefix)
    atol = _optional(table, "atol", float, 0.0, file, prefix)
    for key, value in (("rtol", rtol), ("atol", atol)):
        if not (value >= 0 and math.isfinite(value)):
            raise ConfigError(f"must be a finite number >= 0, got {value!r}", file=file,
                              field=f"{prefix}{key}")
    return CheckSpec(array=array, expect=expect, rtol=rtol, atol=atol)
