"""Finding instructions in committed PTX fixtures, for tests that check the PTX line an error or a report
names (tests/test_sanitizers.py, tests/test_racecheck_async.py)."""

from __future__ import annotations

import re
from pathlib import Path


def kernel_lines(ptx: Path, kernel: str, pattern: str) -> list[int]:
    """PTX lines (1-based) of ``ptx`` of the instructions matching ``pattern`` inside ``kernel``'s body."""
    lines = ptx.read_text().splitlines()
    start = next(i for i, text in enumerate(lines) if re.search(rf"\.entry {kernel}\(", text))
    end = next(i for i in range(start, len(lines)) if lines[i].strip() == "}")
    return [i + 1 for i in range(start, end) if re.search(pattern, lines[i])]
