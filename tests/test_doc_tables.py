"""The measured tables of docs/codegen.md, docs/tensor-cores.md and docs/design.md cannot drift.

Each is a generated block (scripts/doc_tables.py). Fast: every block is the rendering of the stored figures
(docs/generated/doc_tables.json; the speed table: benchmarks/results/speed.json), and the stored figures
carry the stamp of the current simulator sources, configs, programs and measurements, so any change that
could move a figure fails here until ``python scripts/doc_tables.py`` is rerun. Slow: every simulated
table is measured again and must equal what is stored, figure for figure (the simulator is deterministic).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from scripts import doc_tables as DOC_TABLES

ROOT = Path(__file__).resolve().parent.parent




def test_every_generated_block_is_the_rendering_of_current_figures():
    found = DOC_TABLES.problems(DOC_TABLES.load_store())
    assert not found, "\n".join(found)


def test_every_table_has_its_block_and_no_block_is_unknown():
    for doc in {table.doc for table in DOC_TABLES.TABLES.values()}:
        names = set(DOC_TABLES.blocks(doc))
        assert names == {n for n, t in DOC_TABLES.TABLES.items() if t.doc == doc}, doc


def test_the_check_fails_on_a_changed_figure_and_on_a_stale_stamp():
    store = DOC_TABLES.load_store()
    changed = copy.deepcopy(store)
    changed["codegen-gemv"]["data"]["cycles"]["codegen=ptxas"][0] += 1
    assert any("codegen-gemv is not the rendering" in line for line in DOC_TABLES.problems(changed))
    stale = copy.deepcopy(store)
    stale["tensor-l2-caps"]["stamp"] = "0" * 24
    assert any(line.startswith("tensor-l2-caps: measured with other sources") for line in DOC_TABLES.problems(stale))


def test_the_speed_table_covers_every_benchmark_case():
    from benchmarks.bench_speed import CASES

    data = DOC_TABLES.data_of("design-speed", {})
    assert data is not None and set(data["cases"]) == set(CASES)
    assert {name for name, _, _ in DOC_TABLES.SPEED_ROWS} == set(CASES)


def test_the_wheel_table_covers_every_figure_of_the_wheel_benchmark():
    data = DOC_TABLES.data_of("design-wheel", {})
    assert data is not None and {name for name, _, _ in DOC_TABLES.WHEEL_ROWS} == set(data["figures"])
    assert data["figures"]["seeded"]["compiled"] is False and data["figures"]["cold"]["compiled"] is True


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, t in DOC_TABLES.TABLES.items() if t.measure is not None])
def test_stored_figures_are_what_the_simulator_measures_now(name):
    stored = DOC_TABLES.load_store()[name]["data"]
    measured = json.loads(json.dumps(DOC_TABLES.TABLES[name].measure()))   # as the store keeps it: tuples are lists
    assert measured == stored, f"rerun python scripts/doc_tables.py {name}"
