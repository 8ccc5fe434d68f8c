"""Fixtures several test files share: the runs of the HTML report tests (tests/test_html.py,
tests/test_html_browser.py; a file that defines a fixture of the same name uses its own)."""

from __future__ import annotations

import pytest

from gpusim.observe.html import report_html
from gpusim.programs.catalog import run_program


@pytest.fixture(scope="module")
def traced():
    return run_program("strided_copy", trace=True).runs[0]


@pytest.fixture(scope="module")
def divergence():
    result = run_program("divergence")
    return result, result.runs[0]


@pytest.fixture(scope="module")
def divergence_html(divergence):
    return report_html(divergence[1])
