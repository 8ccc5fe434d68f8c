"""docs/what-if.md quotes what-if's own figures: its generated blocks are what scripts/what_if_figures.py
produces now (the example in the default run; the shipped programs' simulated columns under ``-m slow``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import what_if_figures as FIGURES

ROOT = Path(__file__).resolve().parent.parent


DOC = (ROOT / "docs" / "what-if.md").read_text(encoding="utf-8")


def test_the_example_block_is_current():
    assert FIGURES.block_in(DOC, "example") == FIGURES.example(), (
        "docs/what-if.md's example is stale: run python scripts/what_if_figures.py example")


def test_the_programs_table_lists_every_launch_and_meets_its_shape():
    table = FIGURES.block_in(DOC, "programs")
    assert table is not None and table.startswith("| program | launch | cycles |")
    names = {row[0] for row in FIGURES.simulated_part(table)[2:]}
    assert names == {path.stem for path in (ROOT / "programs").glob("*.toml")}


@pytest.mark.slow
def test_the_programs_table_is_current():
    table = FIGURES.block_in(DOC, "programs")
    assert FIGURES.simulated_part(table) == FIGURES.simulated_part(FIGURES.programs()), (
        "docs/what-if.md's programs table is stale: run python scripts/what_if_figures.py")
