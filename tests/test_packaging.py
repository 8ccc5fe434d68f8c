"""The wheel ships every package of the source tree and every program file the labs and programs load.

``pip install .`` builds from ``pyproject.toml``'s explicit package list; a subpackage missing from it is
absent from an installed copy while every test that imports the checkout still passes (issue 16: the
README's install broke the labs once this way)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def test_every_package_of_the_tree_is_in_the_wheel():
    listed = set(SETUPTOOLS["packages"])
    found = {".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "gpusim").rglob("__init__.py")}
    assert found - listed == set(), "add these packages to pyproject.toml's [tool.setuptools] packages"


def test_every_program_file_is_package_data():
    programs = ROOT / SETUPTOOLS["package-dir"]["gpusim.programs.files"]
    shipped = {path for pattern in SETUPTOOLS["package-data"]["gpusim.programs.files"]
               for path in programs.glob(pattern)}         # setuptools globs: '*' stays within one folder
    kinds = (".cu", ".ptx", ".toml", ".sass")
    missing = sorted(str(p.relative_to(programs)) for p in programs.rglob("*")
                     if p.suffix in kinds and p not in shipped)
    assert missing == [], "add patterns for these to pyproject.toml's package-data"
