"""Run: the result of one kernel launch, with its metrics and report.

A Run holds the raw counters the engine produced (per-pc instruction counts,
and for timed runs the cycle count, stall warp-cycles and memory counters) and
derives every metric from them and the config in ``gpusim.observe.metrics``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Run:
    """One kernel launch's result. ``cycles``/``seconds`` are 0 for a functional-only run."""

    kernel: object
    program: object
    config: object
    grid: tuple
    block: tuple
    shared_bytes: int
    regs_per_thread: int
    regs_source: str
    occupancy: object
    pc_counts: np.ndarray
    timing: bool
    cycles: int = 0
    counters: dict = field(default_factory=dict)
    stalls: dict = field(default_factory=dict)
    pc_stalls: np.ndarray | None = None
    pc_memory: np.ndarray | None = None
    trace: object = None
    _metrics: dict | None = field(default=None, repr=False)

    @property
    def seconds(self) -> float:
        return self.cycles / self.config.clock_hz

    @property
    def kernel_name(self) -> str:
        return self.program.name

    @property
    def metrics(self) -> dict:
        if self._metrics is None:
            from gpusim.observe.metrics import derive_metrics

            self._metrics = derive_metrics(self)
        return self._metrics

    @property
    def warp_instructions(self) -> int:
        return int(self.pc_counts[:, 0].sum())

    def roofline(self, level: str = "dram_sustained"):
        """Where this run sits on the config's roofline (gpusim.analytic.RooflinePoint)."""
        from gpusim.analytic.models import roofline_point

        return roofline_point(self, level)

    def report(self) -> str:
        from gpusim.observe.report import report_text

        return report_text(self)

    def source_view(self):
        """Per-PTX-line attribution (gpusim.observe.source_view.SourceView): counts, stalls, sectors per line."""
        from gpusim.observe.source_view import SourceView

        return SourceView(self)

    def to_dict(self) -> dict:
        """Every metric, the stalls, the config, the verdict and the source view as plain data."""
        from gpusim.observe.report import run_dict

        return run_dict(self)

    def to_json(self, path) -> None:
        """Write ``to_dict()`` as JSON to ``path``."""
        import json
        from pathlib import Path

        Path(path).write_text(json.dumps(self.to_dict(), indent=1), encoding="utf-8")

    def to_html(self, path) -> None:
        """Write one self-contained HTML report (figures embedded when matplotlib is installed)."""
        from gpusim.observe.html import write_html

        write_html(self, path)

    def _repr_html_(self) -> str:
        from gpusim.observe.html import run_summary_html

        return run_summary_html(self)

    def __repr__(self) -> str:
        kind = f"{self.cycles} cycles, {self.seconds * 1e6:.3f} us" if self.timing else "functional"
        return (f"Run({self.program.name!r}, grid={self.grid}, block={self.block}, {kind}, "
                f"{self.warp_instructions} warp-instructions)")
