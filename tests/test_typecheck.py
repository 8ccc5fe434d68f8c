"""mypy over the whole ``gpusim`` package reports no error (configured in pyproject.toml's ``[tool.mypy]``).

The check runs mypy on all of ``gpusim/`` and holds the whole package to zero errors: ``NOT_YET_TYPED``
(paths whose errors would be tolerated, each with why) is empty since the engine's state records became
``typing.NamedTuple`` classes generated from their declarations (gpusim/engine/records.py). pyproject.toml
also asks that ``Run``, the public API and the state declarations annotate every function. A new path
goes in ``NOT_YET_TYPED`` only with its reason and the issue that removes it. mypy's incremental cache
(``.mypy_cache``) keeps a re-run quick.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

NOT_YET_TYPED: tuple[str, ...] = ()
"""Paths (prefixes) whose mypy errors are tolerated; empty: the whole package is held to zero errors."""

ERROR = re.compile(r"^(?P<path>[^:\s]+\.py):\d+: error: ")


def errors_outside(output: str, tolerated: tuple[str, ...]) -> list[str]:
    """mypy's error lines whose file is not under one of ``tolerated``."""
    return [line for line in output.splitlines()
            if (match := ERROR.match(line)) and not match["path"].startswith(tolerated)]


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install mypy)")
def test_mypy_reports_no_error_in_gpusim():
    done = subprocess.run([sys.executable, "-m", "mypy", "gpusim"], cwd=ROOT, capture_output=True, text=True,
                          timeout=1200)
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]   # 2: mypy itself failed
    errors = errors_outside(done.stdout, NOT_YET_TYPED)
    assert not errors, f"{len(errors)} mypy errors:\n" + "\n".join(errors[:60])


def test_the_filter_keeps_errors_outside_the_tolerated_paths():
    output = ("gpusim/engine/sm/timing.py:3: error: x  [attr-defined]\n"
              "gpusim/launch/run.py:52: error: \"object\" has no attribute \"clock_hz\"  [attr-defined]\n"
              "gpusim/launch/timed.py:9: error: y  [attr-defined]\n"
              "gpusim/observe/plot.py:4: note: By default the bodies of untyped functions are not checked\n"
              "Found 3 errors in 3 files (checked 154 source files)\n")
    tolerated = ("gpusim/engine/", "gpusim/launch/timed.py")
    assert errors_outside(output, tolerated) == [output.splitlines()[1]]
    assert len(errors_outside(output, NOT_YET_TYPED)) == 3
