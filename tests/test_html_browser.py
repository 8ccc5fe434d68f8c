"""The interactive report in headless Chromium: its own script sorts, zooms and hovers (opened with
#selftest), a 132-SM run's report aggregates its timeline and stays within the size target (its load
time is measured by benchmarks/bench_report.py), and the notebook card restyles nothing around it. Every
test skips, saying why, where Chromium is not installed."""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest

from benchmarks.bench_report import CHROMIUM, SIZE_TARGET_BYTES, WINDOW, chromium, selftest
from gpusim.engine.sm.stalls import STATE_NAMES
from gpusim.observe.report import speed_of_light
from gpusim.programs.catalog import run_program

# ------------------------------------------------------------------------------------------------ Chromium
needs_chromium = pytest.mark.skipif(CHROMIUM is None,
                                    reason="headless Chromium is not installed (apt-get install chromium)")
PROBE = """
<script>
const outside = getComputedStyle(document.getElementById('outside'));
const bars = [...document.querySelectorAll('.gpusim-report .card .bar')].map(
  e => Math.round(e.getBoundingClientRect().width));
document.body.setAttribute('data-bar-widths', bars.join(','));
document.body.setAttribute('data-outside-pre-background', outside.backgroundColor);
document.body.setAttribute('data-body-margin', getComputedStyle(document.body).marginTop);
document.body.setAttribute('data-hot-rows', document.querySelectorAll('tr.hot').length);
</script>
"""


@needs_chromium
def test_report_sorts_zooms_and_hovers_in_headlesschromium(traced, tmp_path):
    path = tmp_path / "report.html"
    traced.to_html(path)
    seen = selftest(path)
    view = traced.source_view()
    executed = [r for r in view.rows if r.warp_inst]
    # sorting by stall cycles: descending first, the hottest row on top; again: ascending
    assert seen["sort_desc"] and seen["sort_asc"] and seen["sort_header_state"] == "asc"
    assert seen["sort_first_pc"] == max(executed, key=lambda r: (r.stall_cycles, -r.pc)).pc
    # brushing from 25 % to 50 % of the width zooms to that quarter of the run
    cycles = traced.cycles
    assert seen["zoom"] == [pytest.approx(cycles / 4, abs=cycles / 200), pytest.approx(cycles / 2, abs=cycles / 200)]
    assert seen["reset"] == [0, cycles]
    # the hover names the state and the instruction the trace has for that warp slot at that cycle
    row, cycle = seen["hover"]["row"], seen["hover"]["cycle"]
    label = seen["hover_row"]
    sm, sp, slot = (int(x) for x in re.match(r"SM(\d+) sp(\d+) slot (\d+)", label).groups())
    raw = traced.trace.raw_intervals
    hit = raw[(raw[:, 0] == sm * traced.trace.slots_per_sm + slot) & (raw[:, 2] <= cycle) & (raw[:, 3] > cycle)]
    assert len(hit) == 1 and row >= 0
    state, pc = STATE_NAMES[int(hit[0, 1])], int(hit[0, 4])
    assert state in seen["tooltip"] and traced.program.texts[pc] in seen["tooltip"]
    assert f"PTX line {traced.program.lines[pc]}" in seen["tooltip"]
    assert seen["broken"] == [] and seen["links"] > 50


@needs_chromium
def test_report_screenshot_is_not_blank(traced, tmp_path):
    report = tmp_path / "report.html"
    traced.to_html(report)
    shot = tmp_path / "report.png"
    chromium(f"--screenshot={shot}", report.as_uri())
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == WINDOW
    try:
        from PIL import Image
    except ImportError:  # pillow comes with matplotlib; without it only the PNG header is checked
        Image = None
    if Image is not None:  # text, the timeline's colours and the charts, not a blank page
        assert len(Image.open(shot).convert("RGB").getcolors(maxcolors=1 << 20)) > 100


@needs_chromium
def test_notebook_card_restyles_nothing_around_it(divergence, divergence_html, tmp_path):
    _, run = divergence
    page = tmp_path / "notebook.html"
    page.write_text("<!DOCTYPE html><html><body><pre id='outside'>cell output</pre>"
                    + run._repr_html_() + divergence_html.split("<body>", 1)[1].split("</body>")[0]
                    + PROBE + "</body></html>")
    dom = chromium("--dump-dom", page.as_uri()).stdout
    body = re.search(r"<body([^>]*)>", dom).group(1)
    attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', body))
    widths = [int(w) for w in attrs["data-bar-widths"].split(",")]
    assert len(widths) == len(speed_of_light(run)) and max(widths) > 0   # the speed-of-light bars drawn
    assert attrs["data-outside-pre-background"] == "rgba(0, 0, 0, 0)"  # the page's <pre> is untouched
    assert attrs["data-body-margin"] == "8px"  # the browser default: no body rule leaks
    assert int(attrs["data-hot-rows"]) == 5


@pytest.mark.slow
@needs_chromium
def test_report_of_a_132_sm_run_aggregates_and_stays_small(tmp_path):
    """h100-sxm's 132 SMs, 8 blocks of vecadd each, every warp traced: the report aggregates its timeline,
    stays within SIZE_TARGET_BYTES and still sorts and zooms."""
    run = run_program("vecadd", config="h100-sxm", sizes={"n": 132 * 8 * 256}, trace=True).runs[0]
    assert run.config.sms == 132 and len(np.unique(run.trace.raw_intervals[:, 0])) > 132 * 32
    path = tmp_path / "big.html"
    run.to_html(path)
    assert path.stat().st_size <= SIZE_TARGET_BYTES
    seen = selftest(path)
    assert seen["sort_desc"] and seen["broken"] == [] and seen["zoom"][1] < run.cycles
    assert "Aggregated for drawing: showing the" in path.read_text()
