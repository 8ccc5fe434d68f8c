"""Size targets of the engine (issue 23): no function in gpusim/engine over 80 lines, no module over 500.

A function's length is its ``def`` statement's span (decorators excluded, docstring and body included), as
``ast`` gives it; nested functions count within their parent and on their own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import gpusim

ENGINE = Path(gpusim.__file__).resolve().parent / "engine"
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 500


def _modules() -> list[Path]:
    return sorted(ENGINE.rglob("*.py"))


def _long_functions(source: str, limit: int) -> list[tuple[str, int]]:
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            span = node.end_lineno - node.lineno + 1
            if span > limit:
                out.append((f"{node.name} (line {node.lineno})", span))
    return out


def test_the_engine_has_modules_to_check():
    names = {path.name for path in _modules()}
    assert {"timing.py", "schedulers.py", "dispatch.py", "retire.py"} <= names


def test_no_engine_function_is_over_80_lines():
    long = {str(path.relative_to(ENGINE)): found for path in _modules()
            if (found := _long_functions(path.read_text(), MAX_FUNCTION_LINES))}
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_no_engine_module_is_over_500_lines():
    long = {str(path.relative_to(ENGINE)): n for path in _modules()
            if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_the_measure_catches_a_long_function_and_counts_its_docstring():
    body = "\n".join(f"    x{i} = {i}" for i in range(78))
    source = f'def f():\n    """doc."""\n{body}\n'
    assert _long_functions(source, MAX_FUNCTION_LINES) == []       # 80 lines: def, docstring, 78 statements
    assert _long_functions(source + "    return x0\n", MAX_FUNCTION_LINES) == [("f (line 1)", 81)]
