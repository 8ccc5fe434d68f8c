"""Labs: experiments that reproduce the classic GPU performance facts, each a table, a lesson and figures.

Every lab module has ``NAME``, ``TITLE`` and ``run(config=None, plot_dir=None, progress=True) -> LabResult``
(labs may add keyword-only parameters with defaults). ``LABS`` maps each lab's NAME to its module;
``run_lab(name, ...)`` runs one by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType


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


def format_table(header: list[str], rows: list[list[object]]) -> str:
    """A plain-text table with right-aligned columns (floats with 2 decimals)."""
    cells = [header] + [[f"{cell:.2f}" if isinstance(cell, float) else str(cell) for cell in row]
                        for row in rows]
    widths = [max(len(row[column]) for row in cells) for column in range(len(header))]
    lines = ["  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)) for row in cells]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


# The lab modules import LabResult and format_table from this module, so they are imported after them.
from gpusim.labs import llm_step, overhead  # noqa: E402  (see the comment above)

LABS: dict[str, ModuleType] = {overhead.NAME: overhead, llm_step.NAME: llm_step}

from gpusim.labs import (  # noqa: E402  (see the comment above)
    bank_conflicts,
    coalescing,
    divergence,
    fusion,
    roofline,
    tiling,
    warp_granularity,
)

LABS.update({module.NAME: module for module in (roofline, divergence, coalescing, bank_conflicts, fusion, tiling,
                                                warp_granularity)})

from gpusim.labs import (  # noqa: E402  (see the comment above)
    decode,
    latency_hiding,
    occupancy,
    regimes,
    utilization,
)

LABS.update({module.NAME: module for module in (latency_hiding, occupancy, decode, utilization, regimes)})


def run_lab(name: str, **options: object) -> LabResult:
    """Run the lab called ``name`` (a key of LABS) with the given options."""
    if name not in LABS:
        raise KeyError(f"no lab named {name!r}; labs: {', '.join(sorted(LABS))}")
    return LABS[name].run(**options)
