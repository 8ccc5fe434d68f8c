"""Fixtures several test files share: the runs of the HTML report tests (tests/test_html.py,
tests/test_html_browser.py; a file that defines a fixture of the same name uses its own)."""

from __future__ import annotations

import pytest

from gpusim.observe.html import report_html
from gpusim.programs.catalog import run_program


def pytest_configure(config):
    """Under pytest-xdist (``-n auto``), compile the engine once in the controlling process before the workers
    start: on a cold cache each worker would compile it at the same time, each with its helper process (four
    compiling processes on a 2-core machine), where now the workers load what this one saved."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        from gpusim import warm_up

        warm_up()


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
