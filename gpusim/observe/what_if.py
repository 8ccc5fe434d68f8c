"""The result of a what-if analysis (``run.what_if()``) and its text, table, dict and HTML forms.

What it models: nothing by itself. ``gpusim.launch.what_if`` re-simulates a launch once per limit removed
and fills a :class:`WhatIf`: the baseline's cycles, and per limit the variant's cycles, the measured speed-up
(baseline cycles / variant cycles) and the metrics the switch is meant to move. This module only holds and
formats those measurements (docs/what-if.md), so the report and the HTML can show them without re-running.

Simplifications: a row whose switch provably changes nothing in this launch (no DRAM traffic for the DRAM
limits, no shared-memory access for bank conflicts, ...) is not simulated; it says so (``measured`` False)
and carries the baseline's figures, which a simulation would reproduce bit for bit (the engine is
deterministic and the switch is never read).
"""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass, field

WHAT_IF_SCHEMA_VERSION = 2
"""Version of ``WhatIf.to_dict()``'s layout (bumped when a key changes meaning or goes away; 2: a row's
``speedup`` is baseline / min(variant, baseline) cycles, and a measured row's ``note`` says when the re-run
was slower)."""


@dataclass(frozen=True)
class WhatIfRow:
    """One limit removed: what was changed, the variant's cycles and speed-up, and the metrics it moved."""

    limit: str
    """short id of the limit, e.g. ``"dram_bandwidth"`` (``gpusim.launch.what_if.LIMITS``)"""
    description: str
    """one sentence: what the variant changes, e.g. "DRAM bandwidth x infinity" """
    cycles: int
    """the variant's simulated cycles"""
    speedup: float
    """baseline cycles / min(variant cycles, baseline cycles): at least 1 by construction (a machine without
    the limit can still follow the baseline's schedule); above 1: removing the limit makes the kernel faster"""
    moved: dict[str, float] = field(default_factory=dict)
    """the metric(s) the switch is meant to move: Nsight name -> the variant's value"""
    baseline: dict[str, float] = field(default_factory=dict)
    """the same metrics in the baseline run"""
    measured: bool = True
    """False when the switch provably changes nothing here and the variant was not simulated"""
    note: str = ""
    """why it was not simulated (``measured`` False), or why a simulated variant slower than the baseline
    counts as speed-up 1; else empty"""


@dataclass
class WhatIf:
    """Measured speed-ups of removing one limit at a time, sorted by speed-up, largest first."""

    kernel: str
    config: str
    baseline_cycles: int
    rows: list[WhatIfRow]
    factor: float | None = None
    """the bandwidth/pipe factor the variants used; None for x infinity"""
    run_seconds: float = 0.0
    """host wall time of the launch itself"""
    what_if_seconds: float = 0.0
    """host wall time of the what-if analysis (all variants)"""
    workers: int = 1
    """processes the variants ran on"""

    def __post_init__(self):
        self.rows = sorted(self.rows, key=lambda row: (-row.speedup, row.limit))

    def row(self, limit: str) -> WhatIfRow:
        """The row of ``limit`` (KeyError naming the limits there are)."""
        for row in self.rows:
            if row.limit == limit:
                return row
        raise KeyError(f"no what-if row '{limit}'; rows: {', '.join(r.limit for r in self.rows)}")

    @property
    def cost_ratio(self) -> float:
        """What-if wall time over the launch's own wall time (the target is <= 10)."""
        return self.what_if_seconds / self.run_seconds if self.run_seconds else 0.0

    def headline(self) -> str:
        """One sentence on the limit whose removal buys the most (or that none buys anything)."""
        best = self.rows[0] if self.rows else None
        if best is None or best.speedup < 1.005:
            return "no single limit's removal makes this kernel measurably faster"
        return f"removing the {_limit_words(best)} would make this kernel {best.speedup:.2f}x faster"

    def to_dict(self) -> dict:
        """Plain data (JSON-ready)."""
        return {"schema_version": WHAT_IF_SCHEMA_VERSION, "kernel": self.kernel, "config": self.config,
                "baseline_cycles": int(self.baseline_cycles), "factor": self.factor,
                "run_seconds": self.run_seconds, "what_if_seconds": self.what_if_seconds, "workers": self.workers,
                "rows": [asdict(row) for row in self.rows]}

    def to_pandas(self):
        """One row per limit: limit, description, cycles, speedup, measured, and one column per moved metric."""
        import pandas as pd

        records = []
        for row in self.rows:
            record = {"limit": row.limit, "description": row.description, "cycles": row.cycles,
                      "speedup": row.speedup, "measured": row.measured}
            record.update({f"moved:{name}": value for name, value in row.moved.items()})
            records.append(record)
        return pd.DataFrame.from_records(records, columns=None if records else
                                         ["limit", "description", "cycles", "speedup", "measured"])

    def to_text(self) -> str:
        """A table: one line per limit, speed-up first, with the metric each switch moved."""
        factor = "x infinity" if self.factor is None else f"x{self.factor:g}"
        width = max([len(row.description) for row in self.rows] + [len("limit removed")])
        lines = [f"What-if ({self.kernel} on {self.config}; baseline {self.baseline_cycles:,} cycles; "
                 f"bandwidths and pipes {factor}):",
                 f"  {'speed-up':>8}  {'cycles':>12}  {'limit removed':<{width}}  metric moved (baseline -> variant)"]
        for row in self.rows:
            moved = "; ".join(f"{name} {_number(row.baseline.get(name))} -> {_number(value)}"
                              for name, value in row.moved.items())
            if not row.measured:
                moved = f"not simulated: {row.note}"
            elif row.note:
                moved += f" ({row.note})"
            lines.append(f"  {row.speedup:>7.2f}x  {row.cycles:>12,}  {row.description:<{width}}  {moved}")
        lines.append(f"  {self.headline()}.")
        if self.run_seconds:
            lines.append(f"  (what-if took {self.what_if_seconds:.2f} s on {self.workers} process(es), "
                         f"{self.cost_ratio:.1f}x the launch's {self.run_seconds:.2f} s)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def to_html(self) -> str:
        """A plain static HTML table (the interactive report restyles it)."""
        head = "".join(f"<th>{title}</th>" for title in ("speed-up", "cycles", "limit removed", "metric moved"))
        body = []
        for row in self.rows:
            moved = "; ".join(f"{html.escape(name)}: {_number(row.baseline.get(name))} &rarr; {_number(value)}"
                              for name, value in row.moved.items()) if row.measured else html.escape(row.note)
            body.append(f"<tr data-limit='{html.escape(row.limit)}'><td>{row.speedup:.2f}x</td>"
                        f"<td>{row.cycles:,}</td><td>{html.escape(row.description)}</td><td>{moved}</td></tr>")
        return (f"<table class='gpusim-what-if'><caption>What-if: {html.escape(self.kernel)}, baseline "
                f"{self.baseline_cycles:,} cycles</caption><thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table>")

    def _repr_html_(self) -> str:
        from gpusim.observe.html import render_what_if_html

        return render_what_if_html(self)


def _limit_words(row: WhatIfRow) -> str:
    return LIMIT_WORDS.get(row.limit, row.limit.replace("_", " ")) + " limit"


LIMIT_WORDS = {"dram_bandwidth": "DRAM bandwidth", "dram_latency": "DRAM latency", "l2_bandwidth": "L2 bandwidth",
               "shared_bank_conflicts": "shared-memory bank conflict", "coalescing": "uncoalesced-access",
               "occupancy": "occupancy", "math_pipes": "math pipe throughput",
               "divergence": "divergence", "launch_overhead": "block launch"}
"""How a sentence names each limit ("removing the DRAM bandwidth limit ...")."""


def _number(value) -> str:
    if value is None:
        return "-"
    value = float(value)
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:.4g}"
