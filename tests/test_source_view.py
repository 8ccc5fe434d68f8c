"""Per-PTX-line attribution: the columns add up to the run's totals; lines and .loc lines are right."""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from benchmarks.kernels import FFMA_LOOP
from gpusim.programs.catalog import run_program


@pytest.fixture(scope="module")
def strided():
    return run_program("strided_copy").runs[0]


def test_totals_add_up_to_the_run(strided):
    view = strided.source_view()
    totals = view.totals()
    m = strided.metrics
    c = strided.counters
    assert totals["warp_inst"] == m["smsp__inst_executed.sum"]
    assert totals["thread_inst"] == m["smsp__thread_inst_executed.sum"]
    assert totals["pred_on_thread_inst"] == m["smsp__thread_inst_executed_pred_on.sum"]
    assert totals["stall_cycles"] == sum(v for k, v in strided.stalls.items() if k != "selected")
    assert totals["requests"] == c["global_load_requests"] + c["global_store_requests"]
    assert totals["sectors"] == c["global_load_sectors"] + c["global_store_sectors"]
    merged = view.by_ptx_line()
    assert sum(r.warp_inst for r in merged) == totals["warp_inst"]
    assert sum(r.stall_cycles for r in merged) == totals["stall_cycles"]


def test_rows_follow_the_ptx_text(strided):
    view = strided.source_view()
    lines = open(strided.program.file, encoding="utf-8").read().splitlines()
    made = [row for row in view.rows if row.text.startswith("(SASS prologue")]
    # the code-generation stage's prologue (LDC of the stack pointer, ULDC of the global descriptor) is
    # attributed to the kernel's first instruction's line; every other row is a PTX instruction
    assert len(made) == (2 if strided.program.codegen == "ptxas" else 0)
    for row in view.rows:
        if row in made:
            continue
        # the instruction text appears on its PTX line (whitespace normalised)
        assert " ".join(row.text.split()).rstrip(";") in " ".join(lines[row.ptx_line - 1].split())
    load = next(r for r in view.rows if r.opcode == "ld" and r.space == "global")
    assert load.sectors_per_request == pytest.approx(load.sectors / load.requests)
    assert load.source.startswith("strided_copy.cu:")


def test_source_lines_from_loc_group_the_rows():
    run = run_program("divergence").runs[0]
    view = run.source_view()
    by_cu = view.by_source_line()
    assert all(r.source.startswith("divergence.cu:") for r in by_cu)
    expected = {}
    for pc, src in enumerate(run.program.src_lines):
        if src:
            key = f"divergence.cu:{src[1]}"
            expected[key] = expected.get(key, 0) + int(run.pc_counts[pc, 0])
    assert {r.source: r.warp_inst for r in by_cu} == expected


def test_divergent_branch_lanes_lost():
    run = run_program("divergence").runs[0]
    view = run.source_view()
    top = view.divergent_branches()[0]
    pc = top.pc
    code = run.program.code
    from gpusim.arch import layout as L

    target, reconv = int(code[pc, L.F_TARGET]), int(code[pc, L.F_RECONV])
    lanes = run.pc_counts[:, 1] / np.maximum(run.pc_counts[:, 0], 1)
    successors = [s for s in (pc + 1, target) if s != reconv]
    assert top.lanes_lost_at_branch == pytest.approx(lanes[pc] - min(lanes[s] for s in successors))
    assert top.lanes_lost_at_branch > 8


def test_several_instructions_on_one_line_merge():
    gpu = gpusim.GPU("teaching")
    kernel = gpu.load_ptx(FFMA_LOOP)["ffma_loop"]
    run = gpu.launch(kernel, grid=1, block=32, args=[gpu.empty(32, np.float32), 3], timing=False)
    view = run.source_view()
    line = next(r.ptx_line for r in view.rows if r.text.startswith("mov.f32"))
    movs = [r for r in view.rows if r.ptx_line == line]
    assert len(movs) == 3
    merged = next(r for r in view.by_ptx_line() if r.ptx_line == line)
    assert merged.warp_inst == sum(r.warp_inst for r in movs) == 3
    assert merged.stall_cycles == 0  # functional run: no timing columns


def test_table_and_pandas(strided):
    view = strided.source_view()
    text = view.table(view.hottest(5))
    assert len(text.splitlines()) == 6
    pandas = pytest.importorskip("pandas")
    frame = view.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert frame["warp_inst"].sum() == strided.warp_instructions
    assert frame["stall_long_scoreboard"].sum() == strided.stalls["long_scoreboard"]
