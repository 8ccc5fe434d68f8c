"""Runs every program in programs/ through the public API and checks it against numpy.

Each program's TOML carries its own reference and tolerance (exact for elementwise fp32
and integer kernels); a failure prints the program's summary: cycles per launch and the
largest errors. A few programs are also run at other sizes to cover the parameters they
exist to sweep.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpusim.programs.catalog import list_programs, load_program, run_program

PROGRAMS = list_programs()


@pytest.mark.parametrize("path", PROGRAMS, ids=[path.stem for path in PROGRAMS])
def test_program_runs_and_matches_numpy(path: Path):
    spec = load_program(path)
    result = run_program(spec)
    assert result.ok, result.summary()
    assert len(result.runs) == len(spec.launches)
    for run in result.runs:
        assert run.cycles > 0
        assert run.seconds > 0


@pytest.mark.parametrize("stride", [1, 32])
def test_strided_copy_at_other_strides(stride: int):
    result = run_program("strided_copy", sizes={"stride": stride, "n": 512})
    assert result.ok, result.summary()


@pytest.mark.parametrize("flops_per_byte", [0, 1, 64])
def test_flops_per_byte_at_other_intensities(flops_per_byte: int):
    result = run_program("flops_per_byte", sizes={"flops_per_byte": flops_per_byte, "n": 1024})
    assert result.ok, result.summary()


def test_pointer_chase_reports_positive_elapsed_cycles():
    result = run_program("pointer_chase", sizes={"hops": 16})
    assert result.ok, result.summary()
    elapsed = int(result.arrays["elapsed_cycles"][0])
    assert elapsed > 0
    assert elapsed <= result.runs[0].cycles


def test_tiled_matmul_agrees_with_naive_at_tile_multiples():
    sizes = {"m": 32, "n": 32, "k": 32}
    naive = run_program("matmul_naive", sizes=sizes)
    tiled = run_program("matmul_tiled", sizes=sizes)
    assert naive.ok and tiled.ok
    # both accumulate the products in the same order, one FMA at a time
    assert (naive.arrays["C"] == tiled.arrays["C"]).all()
