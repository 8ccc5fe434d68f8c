"""The interactive HTML report of a whole-chip run: its size and the time it takes to open (issue 28's
targets in brackets).

    python benchmarks/bench_report.py

* size      the report of vecadd on h100-sxm's 132 SMs, 8 blocks per SM, every warp traced   [<= 5 MB]
* load      milliseconds from navigation to the end of the report's own loading in headless Chromium
            (``performance.now()`` written by its #selftest), best and median of three      [<= 2000 ms]

Needs headless Chromium (``apt-get install chromium``). tests/test_html_browser.py uses the same browser
helpers and checks the size and what the self-test sees; the load time is a speed figure, so it is measured
here and never asserted in a test.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
                None)
"""The headless browser used, or None when none is installed."""
WINDOW = (1280, 2400)
SIZE_TARGET_BYTES = 5_000_000
LOAD_TARGET_MS = 2000


def chromium(*args: str) -> subprocess.CompletedProcess:
    """Run headless Chromium with a throw-away profile and the report window's size."""
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", f"--window-size={WINDOW[0]},{WINDOW[1]}", *args],
            capture_output=True, text=True, timeout=120, check=False,
        )


def selftest(path: Path) -> dict:
    """Open the report with #selftest in headless Chromium; what its script saw (see observe/html_report)."""
    dom = chromium("--dump-dom", path.as_uri() + "#selftest").stdout
    found = re.search(r'<pre id="selftest-result"[^>]*>(.*?)</pre>', dom, re.S)
    if not found:
        raise RuntimeError(f"the report's self-test wrote no result; the page ends: {dom[-2000:]}")
    return json.loads(html.unescape(found.group(1)))


def whole_chip_report(directory: Path) -> Path:
    """The report of vecadd on all 132 SMs of h100-sxm, 8 blocks per SM, traced."""
    from gpusim.programs.catalog import run_program

    run = run_program("vecadd", config="h100-sxm", sizes={"n": 132 * 8 * 256}, trace=True).runs[0]
    path = directory / "whole_chip.html"
    run.to_html(path)
    return path


def main() -> int:
    if CHROMIUM is None:
        print("headless Chromium is not installed (apt-get install chromium): nothing measured")
        return 1
    with tempfile.TemporaryDirectory() as directory:
        path = whole_chip_report(Path(directory))
        size = path.stat().st_size
        loads = [float(selftest(path)["load_ms"]) for _ in range(3)]
    print(f"size   {size / 1e6:.2f} MB   [<= {SIZE_TARGET_BYTES / 1e6:.0f} MB]")
    print(f"load   best {min(loads):.0f} ms, median {statistics.median(loads):.0f} ms   [<= {LOAD_TARGET_MS} ms]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
