"""gpusim.compare(run_a, run_b): metric, warp-state and per-line deltas across configs, codegen modes and
kernels; saved JSON runs; compare(run, model) still the analytic comparison; the CLI."""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.analytic.compare import Comparison
from gpusim.cli import main
from gpusim.errors import GpusimError
from gpusim.labs.support import PROGRAMS_DIR
from gpusim.observe.compare_runs import RunComparison


def _vecadd(config="h100-sxm", codegen="ptxas", sms=2):
    gpu = gpusim.GPU(config, sms=sms, codegen=codegen)
    kernel = gpu.load(str(PROGRAMS_DIR / "vecadd.ptx"))["vecadd"]
    n = 4096
    a, b = gpu.to_device(np.ones(n, np.float32)), gpu.to_device(np.arange(n, dtype=np.float32))
    c = gpu.empty(n, np.float32)
    return gpu.launch(kernel, grid=n // 256, block=256, args=[a, b, c, n])


def _transpose(name):
    gpu = gpusim.GPU("h100-sxm", sms=2)
    kernel = gpu.load(str(PROGRAMS_DIR / f"{name}.ptx"))[name]
    size = 64
    src, out = gpu.to_device(np.arange(size * size, dtype=np.float32)), gpu.zeros(size * size, np.float32)
    return gpu.launch(kernel, grid=(size // 32, size // 32), block=(32, 8), args=[src, out, size, size])


@pytest.fixture(scope="module")
def h100_and_a100():
    return _vecadd("h100-sxm"), _vecadd("a100")


def test_metric_rows_diff_and_ratio(h100_and_a100):
    a, b = h100_and_a100
    cmp = gpusim.compare(a, b)
    assert isinstance(cmp, RunComparison)
    cycles = cmp.row("cycles")
    assert (cycles.a, cycles.b, cycles.diff) == (a.cycles, b.cycles, b.cycles - a.cycles)
    assert cycles.ratio == b.cycles / a.cycles
    names = [row.metric for row in cmp.rows]
    assert names[0] == "cycles" and set(names[1:]) == set(a.metrics)
    dram = cmp.row("dram__bytes_read.sum")
    assert (dram.a, dram.b, dram.unit) == (a.metrics["dram__bytes_read.sum"], b.metrics["dram__bytes_read.sum"],
                                           "byte")
    same = cmp.row("smsp__inst_executed.sum")
    assert same.diff == 0 and same.ratio == 1.0                   # same kernel, same instructions
    assert {s.reason: (s.a, s.b) for s in cmp.stalls} == {k: (a.stalls[k], b.stalls[k]) for k in a.stalls}
    text = cmp.to_text()
    assert "a: vecadd on h100-sxm" in text and "b: vecadd on a100" in text
    assert "<table>" in cmp.to_html()
    view = cmp._repr_html_()             # the notebook view: the same metrics, restyled
    assert "<table" in view and "smsp__inst_executed.sum" in view


def test_lines_across_codegen_modes_match_by_ptx_line():
    ptxas, plain = _vecadd(codegen="ptxas"), _vecadd(codegen="none")
    cmp = gpusim.compare(plain, ptxas)
    assert cmp.matched_by == "PTX line"
    assert sum(x.warp_inst_a or 0 for x in cmp.lines) == plain.warp_instructions
    assert sum(x.warp_inst_b or 0 for x in cmp.lines) == ptxas.warp_instructions
    ld = [x for x in cmp.lines if "ld.global" in x.key]
    assert ld and all(x.warp_inst_a is not None and x.warp_inst_b is not None for x in ld)


def test_lines_across_kernels_match_by_source_text():
    naive, padded = _transpose("transpose_naive"), _transpose("transpose_padded")
    cmp = gpusim.compare(naive, padded)
    assert cmp.matched_by.startswith("CUDA source text")
    assert sum(x.warp_inst_a or 0 for x in cmp.lines) == naive.warp_instructions
    assert sum(x.warp_inst_b or 0 for x in cmp.lines) == padded.warp_instructions
    assert any(x.warp_inst_a is not None and x.warp_inst_b is not None for x in cmp.lines)


def test_saved_runs_compare_like_live_ones(h100_and_a100, tmp_path):
    a, b = h100_and_a100
    a.to_json(tmp_path / "a.json")
    b.to_json(tmp_path / "b.json")
    live, saved = gpusim.compare(a, b), gpusim.compare(tmp_path / "a.json", str(tmp_path / "b.json"))
    assert [(r.metric, r.a, r.b) for r in live.rows] == [(r.metric, r.a, r.b) for r in saved.rows]
    pd = pytest.importorskip("pandas")
    frame = saved.to_pandas()
    assert list(frame.columns) == ["metric", "unit", "a", "b", "diff", "ratio"]
    assert isinstance(frame, pd.DataFrame) and len(frame) == len(saved.rows)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(GpusimError, match="not JSON"):
        gpusim.compare(tmp_path / "a.json", tmp_path / "bad.json")


def test_compare_with_a_model_is_still_the_analytic_comparison(h100_and_a100):
    a, _ = h100_and_a100
    cmp = gpusim.compare(a, {"cycles": 2 * a.cycles})
    assert isinstance(cmp, Comparison)
    assert cmp.rows[0].relative_error == pytest.approx(1.0)


def test_cli_compare(h100_and_a100, tmp_path, capsys):
    a, b = h100_and_a100
    a.to_json(tmp_path / "a.json")
    b.to_json(tmp_path / "b.json")
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--html",
                 str(tmp_path / "c.html")]) == 0
    out = capsys.readouterr().out
    assert "cycles" in out and f"{a.cycles:,}" in out and f"{b.cycles:,}" in out
    assert (tmp_path / "c.html").read_text().startswith("<div class='gpusim-compare'>")
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "missing.json")]) == 2


def test_to_rich_table(h100_and_a100):
    pytest.importorskip("rich")
    a, b = h100_and_a100
    cmp = gpusim.compare(a, b)
    table = cmp.to_rich()
    assert table.row_count == len([r for r in cmp.rows if r.a != r.b or r.metric == "cycles"])
    assert [c.header for c in table.columns] == ["metric", "unit", "a", "b", "b - a", "b / a"]
