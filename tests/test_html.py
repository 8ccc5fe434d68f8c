"""The interactive HTML report is one self-contained file with scoped styles: the CUDA source beside the PTX
and the hottest lines marked, every term linked to its glossary entry, the timeline's segments exactly the
trace's intervals (or aggregated, saying so), the memory chart and roofline from the counters and the config,
the what-if bars and comparison tables; the notebook card is compact. The browser tests are in
test_html_browser.py."""

from __future__ import annotations

import re
from collections import namedtuple
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from gpusim.engine.sm.stalls import STATE_NAMES
from gpusim.observe.glossary import GLOSSARY, anchor
from gpusim.observe.html import render_comparison_html, render_what_if_html, report_html
from gpusim.observe.html_report import KEY_METRICS
from gpusim.observe.html_report.charts import memory_chart_svg, roofline_svg
from gpusim.observe.html_report.timeline import timeline_data
from gpusim.observe.plot import chip_ceilings
from gpusim.observe.regime import FAMILY_OF_KIND
from gpusim.observe.report import speed_of_light, verdict
from gpusim.observe.source_html import SCOPE
from gpusim.observe.source_view import SourceFiles
from gpusim.programs.catalog import run_program


class _Page(HTMLParser):
    """The <style> texts and the source-view rows ({pc: (attributes, [cell texts])}) of a page."""

    def __init__(self):
        super().__init__()
        self.styles, self.rows = [], {}
        self._in_style = False
        self._row = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "style":
            self._in_style = True
            self.styles.append("")
        elif tag == "tr" and "data-pc" in attrs:
            self._row = (attrs, [])
            self.rows[int(attrs["data-pc"])] = self._row
        elif tag == "td" and self._row is not None:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False
        elif tag == "td" and self._row is not None and self._cell is not None:
            self._row[1].append(self._cell)
            self._cell = None
        elif tag == "tr":
            self._row = None

    def handle_data(self, data):
        if self._in_style:
            self.styles[-1] += data
        elif self._cell is not None:
            self._cell += data


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    return page


def _selectors(style: str) -> list[str]:
    rules = [rule for rule in style.split("}") if rule.strip()]
    return [part.strip() for rule in rules for part in rule.split("{")[0].split(",")]


def test_html_report_is_self_contained(traced, tmp_path):
    path = tmp_path / "r.html"
    traced.to_html(path)
    text = path.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    # nothing is fetched: no external scripts, stylesheets, images or fonts; the script is inline
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert not re.search(r"<script[^>]*\bsrc=", text) and "<link" not in text
    assert text.count("<svg") >= 2  # the memory chart and the roofline, drawn without matplotlib
    v = verdict(traced)
    assert v.kind in text
    assert "uncoalesced access on line" in text


def test_every_style_rule_is_scoped_to_the_report(traced):
    for text in (report_html(traced), traced._repr_html_(), traced.source_view()._repr_html_()):
        page = _parse(text)
        assert page.styles
        selectors = [s for style in page.styles for s in _selectors(style)]
        assert selectors and all(s == f".{SCOPE}" or s.startswith(f".{SCOPE} ") for s in selectors), selectors
        assert text.lstrip().startswith("<!DOCTYPE") or text.lstrip().startswith(f'<div class="{SCOPE}">')


def test_cuda_source_text_beside_each_ptx_line(divergence, divergence_html):
    result, run = divergence
    cu_lines = Path(result.spec.ptx).with_suffix(".cu").read_text().splitlines()
    page = _parse(divergence_html)
    program = run.program
    checked = 0
    for pc, (attrs, cells) in page.rows.items():
        src = program.src_lines[pc]
        assert int(attrs["data-ptx-line"]) == program.lines[pc]
        if src and src[1] >= 1:
            assert cells[1] == f"divergence.cu:{src[1]}"
            assert cells[2] == cu_lines[src[1] - 1].strip()
            checked += 1
    assert checked > 10
    assert "if ((threadIdx.x &amp; 1) == 0) {" in divergence_html  # divergence.cu:12, the splitting branch


def test_hottest_row_is_the_pc_with_the_most_stall_cycles(divergence, divergence_html):
    _, run = divergence
    waiting = [i for i, name in enumerate(STATE_NAMES) if name != "selected"]
    stalls = run.pc_stalls[:, waiting].sum(axis=1)
    stalls = np.where(run.pc_counts[: len(stalls), 0] > 0, stalls, -1)  # the table shows executed pcs
    hottest = int(np.argmax(stalls))
    page = _parse(divergence_html)
    ranked = {int(a["data-pc"]): int(a["data-hot-rank"]) for a, _ in page.rows.values() if "data-hot-rank" in a}
    assert ranked[hottest] == 1
    assert sorted(ranked.values()) == list(range(1, len(ranked) + 1))
    attrs = page.rows[hottest][0]
    assert "hot" in attrs["class"].split() and "background-color" in attrs["style"]
    assert int(attrs["data-stall-cycles"]) == stalls[hottest]
    # the colour scale: the hottest row is the darkest
    alphas = {pc: float(re.search(r"rgba\([^)]*,\s*([\d.]+)\)", a["style"]).group(1))
              for pc, (a, _) in page.rows.items() if "style" in a}
    assert max(alphas, key=alphas.get) == hottest


def test_source_files_are_found_by_path_basename_or_stem(tmp_path):
    (tmp_path / "k.cu").write_text("line one\n  int x = 2;  \n")
    (tmp_path / "stem.cu").write_text("a\nb\nc\n")
    ptx = tmp_path / "k.ptx"
    program = SimpleNamespace(file=str(ptx), src_lines=[("/elsewhere/build/k.cu", 2), ("missing.h", 1), None])
    files = SourceFiles(program)
    assert files.line("/elsewhere/build/k.cu", 2) == "int x = 2;"  # basename next to the .ptx
    assert files.line("missing.h", 1) == ""
    assert files.line("/elsewhere/build/k.cu", 9) == ""
    # the program's only .cu is not found anywhere: the .cu with the .ptx's stem stands in
    renamed = SimpleNamespace(file=str(tmp_path / "stem.ptx"), src_lines=[("tmpxft_1234.cu", 3)])
    assert SourceFiles(renamed).line("tmpxft_1234.cu", 3) == "c"
    # ...but not for a header
    header = SimpleNamespace(file=str(tmp_path / "stem.ptx"), src_lines=[("a.cu", 1), ("b.hpp", 1)])
    assert SourceFiles(header).line("b.hpp", 1) == ""


def test_notebook_view_is_a_compact_card(traced):
    text = traced._repr_html_()
    assert verdict(traced).kind in text and "speed of light" in text
    assert "<svg" not in text and "<script" not in text  # compact: no figures, no script
    assert 'href="#' not in text and '<span class="term" title="' in text  # no glossary here: terms as tooltips
    shown = dict(re.findall(r'data-sol="([^"]+)">([\d.]+)%', text))
    assert {k: float(v) for k, v in shown.items()} == {k: round(v, 1) for k, v in speed_of_light(traced).items()}
    view_html = traced.source_view()._repr_html_()
    assert f'<div class="{SCOPE}">' in view_html and 'class="gpusim source-view"' in view_html


def test_functional_run_html(tmp_path):
    run = run_program("vecadd", timing=False).runs[0]
    path = tmp_path / "f.html"
    run.to_html(path)
    text = path.read_text()
    assert "functional run" in text and "<canvas" not in text
    assert "functional run" in run._repr_html_()


def test_untraced_run_says_how_to_get_a_timeline(tmp_path):
    run = run_program("vecadd").runs[0]
    text = report_html(run)
    assert "<canvas" not in text and "launch with <code>trace=True</code>" in text
    assert "what_if=run.what_if()" in text  # and how to get the what-if bars


# ------------------------------------------------------------------------------------------------ glossary
def _ids(text: str) -> set[str]:
    return set(re.findall(r'''\bid=["']([^"']+)["']''', text))


def test_every_term_link_resolves_to_a_glossary_entry(traced):
    text = report_html(traced)
    targets = re.findall(r'href="#([^"]+)"', text)
    assert len(targets) > 50
    assert set(targets) <= _ids(text)
    # every stall reason, every metric the table shows and every unit used has an entry
    assert set(STATE_NAMES) <= set(GLOSSARY)
    assert set(KEY_METRICS) <= set(GLOSSARY)
    assert {f"unit:{GLOSSARY[k].unit}" for k in GLOSSARY if GLOSSARY[k].unit} <= set(GLOSSARY)
    # the source view's stall columns each link to their reason's entry
    head = text.split('class="gpusim source-view sortable-table"', 1)[1].split("</thead>", 1)[0]
    for state in {s for s in traced.stalls if traced.stalls[s] and s != "selected"}:
        assert f">{state} <sup><a class=\"term\" href=\"#{anchor(state)}\"" in head, state
    v = verdict(traced)
    assert v.kind in GLOSSARY and all(f"finding:{f.kind}" in GLOSSARY for f in v.findings)
    assert set(FAMILY_OF_KIND) - {"functional"} <= set(GLOSSARY)
    for key, entry in GLOSSARY.items():
        assert entry.meaning and entry.title, key
        assert f'id="{anchor(key)}"' in text


# ------------------------------------------------------------------------------------------------ timeline
def _decode(segments: dict):
    """The page's delta encoding back to (row, start, end, state, pc) rows (as report.js does)."""
    out, row, previous_end = [], 0, 0
    for step, gap, duration, state, pc in zip(segments["r"], segments["g"], segments["d"], segments["k"],
                                              segments["p"], strict=True):
        if step:
            row, previous_end = row + step, 0
        start = previous_end + gap
        previous_end = start + duration
        out.append((row, start, previous_end, state, pc))
    return out


def test_timeline_segments_are_the_trace_intervals_merged(traced):
    data = timeline_data(traced)
    assert not data["aggregated"] and data["note"] == ""
    decoded = _decode(data["segments"])
    raw = traced.trace.raw_intervals
    slots = {label: slot for slot, label in
             ((s, f"SM{s // traced.trace.slots_per_sm} sp{int(traced.trace.sub_partition_of(s))} "
                  f"slot {s % traced.trace.slots_per_sm}") for s in np.unique(raw[:, 0]).tolist())}
    assert sorted(data["rows"]) == sorted(slots)
    # every cycle of every warp-state interval is covered once, by a segment of the same state and pc
    for row, label in enumerate(data["rows"]):
        mine = raw[raw[:, 0] == slots[label]]
        expected = sorted((int(a), int(b), int(k), int(p)) for _, k, a, b, p, _ in mine.tolist())
        covered = [(s, e, k, p) for r, s, e, k, p in decoded if r == row]
        cycles = {}
        for a, b, k, p in expected:
            for c in range(a, b):
                cycles[c] = (k, p)
        drawn = {}
        for a, b, k, p in covered:
            for c in range(a, b):
                assert c not in drawn
                drawn[c] = (k, p)
        assert drawn == cycles, label


def test_large_timelines_are_aggregated_and_say_so(traced, monkeypatch):
    import gpusim.observe.html_report.timeline as timeline

    monkeypatch.setattr(timeline, "MAX_ROWS", traced.trace.slots_per_sm)   # room for one SM's slots
    monkeypatch.setattr(timeline, "MAX_SEGMENTS", 300)
    data = timeline.timeline_data(traced)
    assert data["aggregated"]
    assert all(label.startswith("SM0 ") for label in data["rows"])
    assert "SM 0-0 (1 of 2 SMs" in data["note"]
    width = data["sample_cycles"]
    assert 1 <= width <= -(-data["cycles"] // (300 // len(data["rows"]))) and data["n_segments"] <= 300
    assert f"sampled every {width} cycles" in data["note"]
    # a sampled segment is the state at its column's middle cycle
    raw = traced.trace.raw_intervals
    for row, start, end, state, pc in _decode(data["segments"])[:50]:
        slot = int(data["rows"][row].split("slot ")[1])  # SM 0: the slot index is the local one
        middle = (start + min(start + width, end)) // 2
        hit = raw[(raw[:, 0] == slot) & (raw[:, 2] <= middle) & (raw[:, 3] > middle)]
        assert len(hit) == 1 and int(hit[0, 1]) == state and int(hit[0, 4]) == pc
    assert "Aggregated for drawing: showing the" in report_html(traced)


# ------------------------------------------------------------------------------------------------ charts
def _attrs(text: str, tag_class: str) -> list[dict]:
    return [dict(re.findall(r'([\w-]+)="([^"]*)"', m)) for m in re.findall(rf'<g class="{tag_class}"([^>]*)>', text)]


def test_memory_chart_bytes_and_percent_of_peak(traced):
    text = memory_chart_svg(traced)
    links = {a["data-link"]: a for a in _attrs(text, "link")}
    c, config, cycles = traced.counters, traced.config, traced.cycles
    assert float(links["DRAM reads"]["data-bytes"]) == c["dram_read_bytes"]
    assert float(links["DRAM writes"]["data-bytes"]) == c["dram_write_bytes"]
    dram_pct = 100 * (c["dram_read_bytes"] + c["dram_write_bytes"]) / (cycles * config.dram_bandwidth_gbs * 1e9
                                                                       / config.clock_hz)
    assert float(links["DRAM reads"]["data-pct"]) + float(links["DRAM writes"]["data-pct"]) == \
        pytest.approx(dram_pct, abs=2e-3)
    l2_bytes = c["l2_sectors"] * config.sector_bytes
    assert float(links["L2 reads"]["data-bytes"]) + float(links["L2 writes"]["data-bytes"]) == l2_bytes
    l2_pct = 100 * l2_bytes / (cycles * config.l2_bytes_per_cycle)
    assert float(links["L2 reads"]["data-pct"]) + float(links["L2 writes"]["data-pct"]) == \
        pytest.approx(l2_pct, abs=2e-3)
    assert float(links["global loads"]["data-bytes"]) == c["global_load_sectors"] * config.sector_bytes
    for unit in ("sm", "l1", "shared", "l2", "dram"):
        assert f'data-unit="{unit}"><a href="#{anchor(unit)}"' in text


def test_roofline_point_is_the_runs_flops_per_dram_byte():
    run = run_program("daxpy").runs[0]
    text = roofline_svg(run)
    (point,) = _attrs(text, "point")
    m = run.metrics
    flops = m["gpusim__fp64_flops.sum"] + m["gpusim__fp32_flops.sum"] + m["gpusim__fp16_flops.sum"]
    dram = run.counters["dram_read_bytes"] + run.counters["dram_write_bytes"]
    assert flops > 0 and dram > 0
    assert float(point["data-intensity"]) == pytest.approx(flops / dram, rel=1e-12)
    assert float(point["data-flops"]) == pytest.approx(flops / (run.cycles / run.config.clock_hz), rel=1e-12)
    compute, memory = chip_ceilings(run.config)
    names = {a["data-name"] for a in _attrs(text, "ceiling compute")} | {a["data-name"] for a in
                                                                         _attrs(text, "ceiling memory")}
    assert names == set(compute) | set(memory)
    assert "no point" in roofline_svg(run_program("strided_copy").runs[0]).split('class="caption"')[1]


# ------------------------------------------------------------------------------------------------ what-if, compare
def _fake_what_if():
    rows = [SimpleNamespace(limit="dram_bandwidth", description="DRAM bandwidth x2", cycles=1000, speedup=2.5,
                            moved={"dram__throughput.avg.pct_of_peak_sustained_elapsed": 40.0},
                            baseline={"dram__throughput.avg.pct_of_peak_sustained_elapsed": 77.0}),
            SimpleNamespace(limit="divergence", description="no divergence cost", cycles=2450, speedup=1.02,
                            moved={}),
            SimpleNamespace(limit="shared_bank_conflicts", description="no bank conflicts", cycles=2500,
                            speedup=1.0, moved={}, measured=False, note="no shared memory")]
    return SimpleNamespace(rows=rows, baseline_cycles=2500)


def test_what_if_bars(traced):
    text = report_html(traced, what_if=_fake_what_if())
    rows = _attrs(text.replace('<div class="bar-row whatif"', '<g class="whatif"'), "whatif")
    assert [r["data-limit"] for r in rows] == ["dram_bandwidth", "divergence", "shared_bank_conflicts"]
    widths = [float(w) for w in re.findall(r'class="bar" style="width: ([\d.]+)%"></span></span><span '
                                           r'class="bar-value">[\d.]+x', text)]
    assert widths == [100.0, pytest.approx(100 * 0.02 / 1.5, abs=0.01), 0.0]     # the gain, speed-up - 1
    assert "dram__throughput.avg.pct_of_peak_sustained_elapsed 77 \u2192 40" in text
    assert "no bank conflicts; not simulated: no shared memory" in text
    assert "2.50x (1,000 cycles)" in text and "Baseline: 2,500 cycles" in text
    notebook = render_what_if_html(_fake_what_if())
    assert notebook.startswith(f'<div class="{SCOPE}">') and "<script" not in notebook and "2.50x" in notebook
    assert 'href="#' not in notebook


def test_comparison_tables():
    row = namedtuple("Row", "metric unit a b diff ratio")
    stall = namedtuple("Stall", "reason a b")
    cmp = SimpleNamespace(rows=[row("sm__cycles_elapsed.max", "cycle", 2000, 1000, -1000, 0.5)],
                          stalls=[stall("long_scoreboard", 5000, 1200)], lines=[])
    text = render_comparison_html(cmp)
    assert "<th class=\"sortable\">ratio</th>" in text and "sm__cycles_elapsed.max" in text
    assert '<td data-v="0.5">0.5</td>' in text and "long_scoreboard" in text and "<i>none</i>" in text


def test_what_if_of_a_real_run_renders():
    run = run_program("vecadd").runs[0]
    what_if = run.what_if()
    limits = [row.limit for row in what_if.rows]
    assert limits and re.findall(r'data-limit="([^"]+)"', render_what_if_html(what_if)) == limits
    report = report_html(run, what_if=what_if)
    assert re.findall(r'data-limit="([^"]+)"', report) == limits


def test_comparison_of_two_real_runs_renders():
    import gpusim

    a = run_program("strided_copy").runs[0]
    b = run_program("strided_copy", sizes={"stride": 1}).runs[0]
    comparison = gpusim.compare(a, b)
    text = render_comparison_html(comparison)
    assert text.startswith(f'<div class="{SCOPE}">') and text.count("<table") >= 2
    assert "<script" not in text
