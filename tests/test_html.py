"""The HTML report is one self-contained file with scoped styles, CUDA source beside the PTX and the hottest
lines marked; the notebook view renders without restyling the page around it (checked in headless
Chromium where it is installed)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from gpusim.engine.sm.stalls import STATE_NAMES
from gpusim.observe.html import report_html
from gpusim.observe.report import verdict
from gpusim.observe.source_html import SCOPE
from gpusim.observe.source_view import SourceFiles
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
    pytest.importorskip("matplotlib")
    path = tmp_path / "r.html"
    traced.to_html(path)
    text = path.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert text.count("<svg") >= 3  # roofline, stalls, timeline inline
    # nothing is fetched: no external scripts, stylesheets, images or fonts
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "<script" not in text
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


def test_notebook_view(traced):
    text = traced._repr_html_()
    assert verdict(traced).kind in text and "speed of light" in text
    view_html = traced.source_view()._repr_html_()
    assert f'<div class="{SCOPE}">' in view_html and 'class="gpusim source-view"' in view_html


def test_functional_run_html(tmp_path):
    run = run_program("vecadd", timing=False).runs[0]
    path = tmp_path / "f.html"
    run.to_html(path)
    assert "functional run" in path.read_text()


# ------------------------------------------------------------------------------------------------ Chromium
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
                None)
WINDOW = (1280, 2400)
PROBE = """
<script>
const figures = [...document.querySelectorAll('.gpusim-report .figure svg')].map(
  e => Math.round(e.getBoundingClientRect().width));
const outside = getComputedStyle(document.getElementById('outside'));
document.body.setAttribute('data-figure-widths', figures.join(','));
document.body.setAttribute('data-outside-pre-background', outside.backgroundColor);
document.body.setAttribute('data-body-margin', getComputedStyle(document.body).marginTop);
document.body.setAttribute('data-hot-rows', document.querySelectorAll('tr.hot').length);
</script>
"""


def _chromium(*args: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", f"--window-size={WINDOW[0]},{WINDOW[1]}", *args],
            capture_output=True, text=True, timeout=120, check=False,
        )


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)")
def test_report_renders_in_headless_chromium(divergence, divergence_html, tmp_path):
    pytest.importorskip("matplotlib")
    _, run = divergence
    report = tmp_path / "report.html"
    report.write_text(divergence_html, encoding="utf-8")
    shot = tmp_path / "report.png"
    _chromium(f"--screenshot={shot}", report.as_uri())
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == WINDOW
    try:
        from PIL import Image
    except ImportError:  # pillow comes with matplotlib; without it only the PNG header is checked
        Image = None
    if Image is not None:  # text, figures and colours, not a blank page
        assert len(Image.open(shot).convert("RGB").getcolors(maxcolors=1 << 20)) > 100
    # a notebook-like page: its own body and <pre>, then the run's notebook view, then the probe
    page = tmp_path / "notebook.html"
    page.write_text("<!DOCTYPE html><html><body><pre id='outside'>cell output</pre>"
                    + run._repr_html_() + divergence_html.split("<body>", 1)[1].split("</body>")[0]
                    + PROBE + "</body></html>")
    dom = _chromium("--dump-dom", page.as_uri()).stdout
    body = re.search(r"<body([^>]*)>", dom).group(1)
    attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', body))
    widths = [int(w) for w in attrs["data-figure-widths"].split(",")]
    assert len(widths) == 4  # roofline and stalls of the notebook view, then of the report
    assert all(w >= 600 for w in widths), widths  # readable: at least 600 px at this window size
    assert attrs["data-outside-pre-background"] == "rgba(0, 0, 0, 0)"  # the page's <pre> is untouched
    assert attrs["data-body-margin"] == "8px"  # the browser default: no body rule leaks
    assert int(attrs["data-hot-rows"]) == 5
