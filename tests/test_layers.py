"""The package's layers import only downward, and no two modules import each other.

Layers, bottom to top (docs/design.md, "Layout"): errors → arch (configs, ISA tables, program encoding)
→ ptx (front end) → codegen (the ptxas-like stage) → engine (jit/bits → semantics → memory → sm) →
host model → analytic models → observability → launch and results → public API objects → Python-kernel
front ends (numba.cuda, Triton) → ready programs and labs → sweeps → CLI and the package's re-exports.
Every import in every module counts,
at any depth (inside functions and ``TYPE_CHECKING`` blocks too), because a deferred import is still a
dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import gpusim

ROOT = Path(gpusim.__file__).resolve().parent

LAYERS = [
    ["gpusim.errors"],
    ["gpusim.arch", "gpusim.configs"],
    ["gpusim.ptx"],
    ["gpusim.codegen"],
    ["gpusim.engine.jit", "gpusim.engine.bits", "gpusim.engine.compile_cache", "gpusim.engine.compile_notice",
     "gpusim.engine.link_only",
     "gpusim.engine.parallel_compile"],
    ["gpusim.engine.semantics"],
    ["gpusim.engine.memory"],
    ["gpusim.engine.sm"],
    ["gpusim.host"],
    ["gpusim.analytic"],
    ["gpusim.observe"],
    ["gpusim.launch"],
    ["gpusim.api"],
    ["gpusim.frontends"],
    ["gpusim.programs", "gpusim.labs"],
    ["gpusim.sweep"],
    ["gpusim.cli", "gpusim.__main__", "gpusim"],
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> int:
    best, best_len = None, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    assert best is not None, f"{module} is in no layer: add it to LAYERS and to docs/design.md"
    return best


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
        layer_of(name)


def test_imports_point_only_down():
    upward = [f"{name} (layer {layer_of(name)}) imports {target} (layer {layer_of(target)})"
              for name, targets in sorted(GRAPH.items()) for target in sorted(targets)
              if layer_of(target) > layer_of(name)]
    assert not upward, "\n".join(upward)


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


def test_the_checker_sees_an_upward_import(tmp_path):
    """The rule can fail: an engine module importing the launch layer is reported."""
    fake = ROOT / "engine" / "sm" / "timing.py"
    tree = imports_of(fake, "gpusim.engine.sm.timing") | {"gpusim.launch.run"}
    assert any(layer_of(target) > layer_of("gpusim.engine.sm.timing") for target in tree)
