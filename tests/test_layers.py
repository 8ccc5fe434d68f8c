"""The package's layers import only downward, and no two modules import each other.

Layers, bottom to top (docs/design.md, "Layout"): errors → arch (configs, ISA tables, program encoding)
→ ptx (front end) → codegen (the ptxas-like stage) → engine (build machinery and bit primitives →
semantics → memory → sm) → host model → analytic models → observability → launch and results → public
API objects → Python-kernel front ends (numba.cuda, Triton) → ready programs and labs → sweeps → CLI and
the package's re-exports. Every import in every module counts, at any depth (inside functions and
``TYPE_CHECKING`` blocks too), because a deferred import is still a dependency.

Every module has a named layer: a row of ``LAYERS`` names its packages (a package covers its submodules)
and its single modules (exact names); nothing is matched by a catch-all. Inside a row the entries are
ordered too, bottom first, and an import may not point *sideways* to a later entry of its own row: the
design's row "programs and labs" lets a lab run the ready programs, never a program import a lab; the
engine's build machinery is a chain (``parallel_compile`` → ``compile_cache`` → ``link_only`` → ``jit``
→ ``bits``); the CLI may use the package's re-exports, the re-exports never import the CLI.
"""

from __future__ import annotations

import ast
from pathlib import Path

import gpusim

ROOT = Path(gpusim.__file__).resolve().parent

LAYERS: list[tuple[str, list[str]]] = [
    ("errors", ["gpusim.errors"]),
    ("machine description", ["gpusim.arch.*"]),
    ("front end", ["gpusim.ptx.*"]),
    ("code generation", ["gpusim.codegen.*"]),
    ("compiled core: build machinery and bit primitives",
     ["gpusim.engine.parallel_compile", "gpusim.engine.compile_notice", "gpusim.engine.source_stamp",
      "gpusim.engine.compile_seed", "gpusim.engine.compile_cache",
      "gpusim.engine.link_only", "gpusim.engine.jit", "gpusim.engine.bits", "gpusim.engine.records",
      "gpusim.engine"]),
    ("compiled core: semantics", ["gpusim.engine.semantics.*"]),
    ("compiled core: memory hierarchy", ["gpusim.engine.memory.*"]),
    ("compiled core: SM and scheduling", ["gpusim.engine.sm.*"]),
    ("host model", ["gpusim.host.*"]),
    ("analytic models", ["gpusim.analytic.*"]),
    ("observability", ["gpusim.observe.*"]),
    ("launch and results", ["gpusim.launch.*"]),
    ("public API objects", ["gpusim.api.*"]),
    ("Python-kernel front ends", ["gpusim.frontends.*"]),
    ("programs and labs", ["gpusim.programs.*", "gpusim.labs.*"]),
    ("sweeps", ["gpusim.sweep.*"]),
    ("entry points", ["gpusim", "gpusim.cli_exports", "gpusim.cli", "gpusim.__main__"]),
]
"""(layer name as in docs/design.md's Layout table, its entries bottom first). An entry ``pkg.*`` is a package
and every module under it; any other entry is that one module (a package's ``__init__`` by its name)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _matches(module: str, entry: str) -> bool:
    if entry.endswith(".*"):
        return module == entry[:-2] or module.startswith(entry[:-1])
    return module == entry


def _missing_row_message(module: str) -> str:
    parent = module.rpartition(".")[0]
    for name, entries in LAYERS if parent != "gpusim" else ():
        if parent in entries or f"{parent}.*" in entries:
            return (f"{module} is in no layer: add the entry \"{module}\" to the row (\"{name}\", [...]) of LAYERS "
                    f"in tests/test_layers.py (its package {parent} is in that row; order the entries bottom "
                    f"first), and name it in that row of docs/design.md's Layout table")
    return (f"{module} is in no layer: add a row (\"<layer name>\", [\"{module}\"]) to LAYERS in "
            f"tests/test_layers.py at its place bottom to top, and the same row to docs/design.md's Layout table")


def rank_of(module: str) -> tuple[int, int]:
    """(row, position in the row) of the most specific entry that covers ``module``."""
    best, best_len = None, -1
    for row, (_, entries) in enumerate(LAYERS):
        for position, entry in enumerate(entries):
            if _matches(module, entry) and len(entry) > best_len:
                best, best_len = (row, position), len(entry)
    assert best is not None, _missing_row_message(module)
    return best


def layer_of(module: str) -> int:
    return rank_of(module)[0]


def layer_name(module: str) -> str:
    row, position = rank_of(module)
    return f"{LAYERS[row][0]} / {LAYERS[row][1][position]}"


def imports_of(path: Path, name: str) -> set[str]:
    """gpusim modules ``path`` imports (``from pkg import mod`` counts as ``pkg.mod`` when mod is a module)."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "gpusim")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] != "gpusim":
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in MODULES else base)
    found.discard(name)
    return found


MODULES = {module_name(path): path for path in ROOT.rglob("*.py")}
GRAPH = {name: imports_of(path, name) for name, path in MODULES.items()}


def test_every_module_has_a_layer():
    for name in MODULES:
        rank_of(name)
    stale = [entry for _, entries in LAYERS for entry in entries
             if not any(_matches(name, entry) for name in MODULES)]
    assert not stale, f"LAYERS names modules that do not exist (remove them): {stale}"


def violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import of ``graph`` that points up a layer, or sideways to a later entry of its own row."""
    found = []
    for name, targets in sorted(graph.items()):
        for target in sorted(targets):
            if target not in MODULES and not any(_matches(target, e) for _, es in LAYERS for e in es):
                continue
            (row, position), (target_row, target_position) = rank_of(name), rank_of(target)
            if target_row > row:
                found.append(f"upward: {name} ({layer_name(name)}) imports {target} ({layer_name(target)})")
            elif target_row == row and target_position > position:
                found.append(f"sideways: {name} ({layer_name(name)}) imports {target} ({layer_name(target)}), "
                             f"a later entry of its row")
    return found


def test_imports_point_only_down_never_sideways():
    found = violations(GRAPH)
    assert not found, "\n".join(found)


def test_no_import_cycles():
    """Tarjan's strongly connected components over the module graph: every component is one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in GRAPH.get(node, ()):
            if target not in MODULES:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in sorted(MODULES):
        if name not in index:
            visit(name)
    assert not cycles, f"modules that import each other: {cycles}"


def test_the_checker_sees_an_upward_import():
    """The rule can fail: an engine module importing the launch layer is reported."""
    graph = {"gpusim.engine.sm.timing": GRAPH["gpusim.engine.sm.timing"] | {"gpusim.launch.run"}}
    assert violations(graph) == ["upward: gpusim.engine.sm.timing (compiled core: SM and scheduling / "
                                 "gpusim.engine.sm.*) imports gpusim.launch.run (launch and results / gpusim.launch.*)"]


def test_the_checker_sees_a_sideways_import():
    """A ready program importing a lab (same row, later entry) and the cache importing the decorators."""
    graph = {"gpusim.programs.catalog": {"gpusim.labs.support"},
             "gpusim.engine.compile_cache": {"gpusim.engine.jit"},
             "gpusim.labs.support": {"gpusim.programs.catalog"}}
    found = violations(graph)
    assert len(found) == 2 and all(line.startswith("sideways: ") for line in found)
    assert "gpusim.programs.catalog" in found[1] and "gpusim.engine.compile_cache" in found[0]


def test_a_module_without_a_layer_is_named_with_the_row_to_add():
    try:
        rank_of("gpusim.engine.new_unit")
    except AssertionError as error:
        message = str(error)
    else:
        raise AssertionError("a module outside every entry got a layer")
    assert 'add the entry "gpusim.engine.new_unit" to the row ("compiled core: build machinery' in message
    try:
        rank_of("gpusim.newpackage")
    except AssertionError as error:
        assert 'add a row ("<layer name>", ["gpusim.newpackage"])' in str(error)
    else:
        raise AssertionError("a new top-level module got a layer")
    assert rank_of("gpusim.labs.decode") == rank_of("gpusim.labs")
    assert rank_of("gpusim.engine.sm.timing")[0] > rank_of("gpusim.engine.jit")[0]
