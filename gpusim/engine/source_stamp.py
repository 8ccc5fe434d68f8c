"""What the engine cache is keyed by and where it lives: the per-user cache root and the *source stamp*,
a hash of every source file numba compiles engine code from (``compile_cache``'s docstring says why).
"""

from __future__ import annotations

import ast
import hashlib
import os
import platform
import sys
from functools import lru_cache
from pathlib import Path

import llvmlite
import numba
from numba.core import config as numba_config

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
"""The ``gpusim`` package directory these sources are in (a checkout's or site-packages')."""

_DECORATOR_MODULE = "gpusim.engine.jit"


def cache_root() -> Path:
    """The per-user directory all compiled engine code goes in (compile_cache's docstring says which)."""
    explicit = os.environ.get("GPUSIM_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    if numba_cache := getattr(numba_config, "CACHE_DIR", ""):    # numba's config sets it from NUMBA_CACHE_DIR
        return Path(numba_cache).expanduser() / "gpusim"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "gpusim"


def _module_file(root: Path, parts: list[str]) -> Path | None:
    target = root.parent.joinpath(*parts)
    for file in (target.with_suffix(".py"), target / "__init__.py"):
        if file.is_file():
            return file
    return None


def _top_level_imports(source: str) -> list[ast.stmt]:
    """The module-level import statements of ``source`` (parsed alone: parsing whole files for them
    would cost more than the rest of a warm start)."""
    lines = source.splitlines()
    found: list[ast.stmt] = []
    i = 0
    while i < len(lines):
        chunk = [lines[i]]
        if chunk[0].startswith(("import ", "from ")):
            while (chunk[-1].rstrip().endswith("\\") or chunk[0].count("(") > "".join(chunk).count(")")) \
                    and i + 1 < len(lines):
                i += 1
                chunk.append(lines[i])
            try:
                found += ast.parse("\n".join(chunk)).body
            except SyntaxError:       # a docstring line that starts with "from ..."
                pass
        i += 1
    return found


def _gpusim_imports(path: Path, root: Path) -> set[Path]:
    """The source files of package ``root`` that ``path`` imports at module level (the imports whose
    names compiled code can read; a function-level import is Python-only code)."""
    package = list(path.relative_to(root.parent).with_suffix("").parts[:-1])
    found: set[Path] = set()
    for node in _top_level_imports(path.read_text(encoding="utf-8")):
        modules: list[list[str]] = []
        if isinstance(node, ast.Import):
            modules = [alias.name.split(".") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            base = base + (node.module.split(".") if node.module else [])
            for alias in node.names:     # ``from pkg import mod`` imports a submodule, else names of pkg
                modules.append(base + [alias.name] if _module_file(root, base + [alias.name]) else base)
        for parts in modules:
            file = _module_file(root, parts) if parts and parts[0] == root.name else None
            if file is not None:
                found.add(file)
    return found


def _uses_engine_decorators(path: Path) -> bool:
    source = path.read_text(encoding="utf-8")
    if _DECORATOR_MODULE not in source:
        return False
    return any(isinstance(node, ast.ImportFrom) and node.module == _DECORATOR_MODULE
               for node in _top_level_imports(source))


def engine_sources(root: Path = PACKAGE_ROOT) -> list[Path]:
    """Every file of package ``root`` numba compiles engine code from: the modules that use the
    engine decorators, the decorators' own modules, and (transitively) every gpusim module they
    import."""
    root = root.resolve()
    seeds = {root / "engine" / "jit.py"}
    seeds |= {path for path in root.rglob("*.py") if _uses_engine_decorators(path)}
    todo, seen = list(seeds), set(seeds)
    while todo:
        for dep in _gpusim_imports(todo.pop(), root):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return sorted(seen)


@lru_cache(maxsize=4)
def source_stamp(root: Path = PACKAGE_ROOT) -> str:
    """Hash of the engine's whole source (package ``root``) and the compiler versions: the cache's
    freshness key. Files are named relative to the package, so the package's location is no part of it."""
    root = root.resolve()
    digest = hashlib.sha256()
    python = f"{platform.python_implementation()}-{sys.version_info[0]}.{sys.version_info[1]}"  # numba's cache
    for part in (numba.__version__, llvmlite.__version__, python, sys.platform):  # files are per minor version
        digest.update(part.encode() + b"\0")
    for path in engine_sources(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:24]


def stamp_dir() -> Path:
    """The directory of the current source stamp's compiled code."""
    return cache_root() / source_stamp()
