"""racecheck's false positives: no error on any shipped program (programs/*.toml) or conformance-corpus
kernel (tests/corpus), each run with ``sanitize="racecheck"`` (an error raises RacecheckError) and still
checked against numpy. Warnings (a write of the value already there: hotspot's halo cells, written by two
threads when the grid's last row ends inside a tile) are allowed.
Slow (every program and corpus case once more): ``pytest -m slow tests/test_racecheck_corpus.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpusim
from gpusim.programs.catalog import list_programs, load_program, run_program
from tests import test_corpus

PROGRAMS = list_programs()


@pytest.mark.slow
@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
@pytest.mark.parametrize("path", PROGRAMS, ids=[path.stem for path in PROGRAMS])
def test_racecheck_finds_no_hazard_in_a_shipped_program(path: Path, timing: bool):
    spec = load_program(path)
    gpu = gpusim.GPU(spec.config, sanitize="racecheck")
    result = run_program(spec, gpu=gpu, timing=timing)
    assert result.ok, result.summary()
    assert all(h["severity"] == "warning" for run in result.runs for h in run.hazards)


class RacecheckCtx(test_corpus.Ctx):
    def __init__(self, timing: bool):
        super().__init__(timing)
        self.gpu = gpusim.GPU("h100-sxm", sms=2, sanitize="racecheck")


@pytest.mark.slow
@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
@pytest.mark.parametrize("name", list(test_corpus.CASES))
def test_racecheck_finds_no_hazard_in_a_corpus_kernel(name: str, timing: bool, monkeypatch):
    monkeypatch.setenv("GPUSIM_NO_PTXAS", "1")
    ctx = RacecheckCtx(timing=timing)
    test_corpus.CASES[name].run(ctx)
    assert ctx.launches > 0
