"""Helpers the labs share: a progress bar, a figure context and the paths of the lab kernels.

The progress bar uses ``tqdm``, else ``rich``, when installed and a plain stderr line otherwise, only
when stderr is a terminal or in Jupyter; ``enabled=False`` makes it silent. A ``LabResult`` renders as HTML
in Jupyter (its table, lesson and figures). Figures use matplotlib when installed; a lab without it still
returns its table.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpusim.programs.catalog import programs_dir

PROGRAMS_DIR = programs_dir()
LAB_PROGRAMS_DIR = PROGRAMS_DIR / "labs"


def progress_items(items: Iterable[Any], label: str, enabled: bool = True) -> Iterator[Any]:
    """Yield ``items`` while showing how many are done (on stderr, only when it is a terminal or in Jupyter):
    a tqdm bar when tqdm is installed, else rich's, else a line."""
    from gpusim.launch.progress import interactive, tqdm_class

    items = list(items)
    if not enabled or not interactive():
        yield from items
        return
    bar = tqdm_class()
    if bar is not None:
        yield from bar(items, desc=f"[{label}]", leave=False, file=sys.stderr)
        return
    try:
        from rich.progress import track
    except ImportError:
        for index, item in enumerate(items):
            print(f"\r[{label}] {index}/{len(items)}", end="", file=sys.stderr, flush=True)
            yield item
        print(f"\r[{label}] {len(items)}/{len(items)}", file=sys.stderr, flush=True)
        return
    yield from track(items, description=f"[{label}]", transient=True)


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, or None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def save(figure: Any, plot_dir: str | Path, file_name: str) -> Path:
    """Save ``figure`` as ``plot_dir/file_name`` and close it."""
    out_dir = Path(plot_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / file_name
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    figure.clear()
    import matplotlib.pyplot as plt

    plt.close(figure)
    return path


@dataclass
class LabResult:
    """What a lab returns: a text table, the lesson in words, its numbers, and the figures it wrote."""

    name: str
    title: str
    table: str
    lesson: str
    values: dict = field(default_factory=dict)
    figures: list[Path] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.title}\n\n{self.table}\n\n{self.lesson}"

    def _repr_html_(self) -> str:
        from gpusim.observe.html import lab_result_html

        return lab_result_html(self)


def format_table(header: list[str], rows: list[list[object]]) -> str:
    """A plain-text table with right-aligned columns (floats with 2 decimals)."""
    cells = [header] + [[f"{cell:.2f}" if isinstance(cell, float) else str(cell) for cell in row]
                        for row in rows]
    widths = [max(len(row[column]) for row in cells) for column in range(len(header))]
    lines = ["  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)) for row in cells]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)
