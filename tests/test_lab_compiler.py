"""Lab `compiler`: program order against ptxas's order for gemv."""

from __future__ import annotations

from gpusim.codegen.sass import load_listing
from gpusim.labs import run_lab
from gpusim.programs.catalog import programs_dir


def test_compiler_lab_memory_parallelism_and_knee():
    result = run_lab("compiler", progress=False, warps=(1, 4, 16))
    modes = result.values["modes"]
    written, made, sass = (modes[label] for label in ("PTX as written", "codegen=ptxas", "SASS order by hand"))
    # nvcc's x4 loop: ld, ld, fma -> 2 loads before the first use; ptxas's SASS loop: the LDGs before its
    # first FFMA, read from the committed listing
    func = load_listing(programs_dir() / "sass" / "sm_90" / "gemv.sass")["gemv"]
    head, latch = max(func.loops(), key=lambda hl: sum(i.base == "LDG" for i in func.loop_body(*hl)))
    body = func.loop_body(head, latch)
    sass_first_use = next(k for k, i in enumerate(body) if i.base == "FFMA")
    assert written["loads_in_flight"] == 2
    assert made["loads_in_flight"] == sass["loads_in_flight"] == sass_first_use == 16
    # one warp, per 16 columns: the PTX as written waits 16 DRAM round trips (one per load pair), ptxas's order 2
    assert written["cycles"][0] > 4 * made["cycles"][0]
    assert abs(made["cycles"][0] / sass["cycles"][0] - 1) < 0.25
    assert made["knee"] <= written["knee"]
    assert "loads before first use" in result.table
