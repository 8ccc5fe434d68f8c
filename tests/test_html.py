"""The HTML report is one self-contained file; the notebook view renders."""

from __future__ import annotations

import re

import pytest

from gpusim.observe.report import verdict
from gpusim.programs.catalog import run_program


@pytest.fixture(scope="module")
def traced():
    return run_program("strided_copy", trace=True).runs[0]


def test_html_report_is_self_contained(traced, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "r.html"
    traced.to_html(path)
    text = path.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert text.count("<svg") >= 3  # roofline, stalls, timeline inline
    # nothing is fetched: no external scripts, stylesheets, images or fonts
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "<script" not in text
    v = verdict(traced)
    assert v.kind in text
    assert "uncoalesced access on line" in text


def test_notebook_view(traced):
    text = traced._repr_html_()
    assert verdict(traced).kind in text and "speed of light" in text
    assert traced.source_view()._repr_html_().startswith('<table class="gpusim">')


def test_functional_run_html(tmp_path):
    run = run_program("vecadd", timing=False).runs[0]
    path = tmp_path / "f.html"
    run.to_html(path)
    assert "functional run" in path.read_text()
