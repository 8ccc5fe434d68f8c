"""Screenshots of the interactive HTML report for docs/observability.md (needs headless Chromium and Pillow).

    python scripts/report_screenshots.py [--out docs/img]

Builds the report of ``matmul_tiled`` (run with trace=True on its own config), asks the page where its
sections are (the ``#selftest`` run writes their offsets), takes one screenshot of the whole page in a
1500-pixel-wide window (the source view sorted by stall cycles) and crops it into report-timeline.png
(verdict and warp timeline), report-charts.png (memory chart and roofline), report-whatif.png (the what-if
bars and warp states, where ``run.what_if()`` exists) and report-source.png (the sortable source view); then
report-zoom.png: the timeline zoomed in, with a hover's tooltip.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from gpusim.programs.catalog import run_program

PROGRAM = "matmul_tiled"
WIDTH = 1500
CROPS = (
    ("report-timeline.png", None, "memory"),
    ("report-charts.png", "memory", "whatif"),
    ("report-whatif.png", "whatif", "source"),
    ("report-source.png", "source", "glossary"),
)
"""(file, the section it starts at (None: the top), the section it ends before); report-whatif.png only where
``run.what_if()`` exists."""
ZOOM = "zoom=6000-7000&hover=5,6400"
"""report-zoom.png: the timeline zoomed to these cycles, hovered at (row, cycle) (report.js reads the hash)."""
MAX_CROP_HEIGHT = 1500


def chromium(*args: str) -> str:
    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
                   None)
    if browser is None:
        sys.exit("headless Chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               "--hide-scrollbars", f"--user-data-dir={profile}", *args],
                              check=True, capture_output=True, text=True, timeout=180).stdout


def main() -> None:
    from PIL import Image

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/img", help="folder for the PNG files")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        report = Path(work) / "report.html"
        run = run_program(PROGRAM, trace=True).runs[0]
        what_if = run.what_if() if hasattr(run, "what_if") else None
        run.to_html(report, what_if=what_if)
        dom = chromium(f"--window-size={WIDTH},1000", "--dump-dom", report.as_uri() + "#selftest")
        seen = json.loads(html.unescape(re.search(r'<pre id="selftest-result"[^>]*>(.*?)</pre>', dom, re.S).group(1)))
        sections, height = seen["sections"], seen["height"]
        whole = Path(work) / "whole.png"
        chromium(f"--window-size={WIDTH},{height}", f"--screenshot={whole}", report.as_uri() + "#sort=stall cycles")
        image = Image.open(whole)
        for name, first, end in CROPS:
            if name == "report-whatif.png" and what_if is None:
                continue
            top = 0 if first is None else max(0, sections[first] - 10)
            bottom = min(sections[end] - 10, top + MAX_CROP_HEIGHT, image.height)
            image.crop((0, top, WIDTH, bottom)).save(out / name, optimize=True)
            print(out / name)
        chromium(f"--window-size={WIDTH},{height}", f"--screenshot={whole}", report.as_uri() + "#" + ZOOM)
        top, bottom = sections["timeline"] - 10, sections["memory"] - 10
        Image.open(whole).crop((0, top, WIDTH, bottom)).save(out / "report-zoom.png", optimize=True)
        print(out / "report-zoom.png")


if __name__ == "__main__":
    main()
