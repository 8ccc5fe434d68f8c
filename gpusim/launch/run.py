"""Run: the result of one kernel launch, with its metrics and report.

A Run holds the raw counters the engine produced (per-pc instruction counts,
and for timed runs the cycle count, stall warp-cycles and memory counters) and
derives every metric from them and the config in ``gpusim.observe.metrics``.

A functional run (``timing=False``) has no time: ``run.cycles`` and ``run.seconds``
raise ``NoTimingError`` rather than answer 0, and its report says so. A run launched
without ``trace=True`` has no trace: ``run.trace`` raises ``NoTraceError`` naming the
fix (``run.has_trace`` asks without raising).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpusim.errors import NoTimingError, NoTraceError


@dataclass
class Run:
    """One kernel launch's result. ``cycles``/``seconds`` exist only for a timed run (``timing=True``)."""

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
    stdout: str = ""
    """The kernel's device printf output (gpusim.launch.printf: block, warp, then each warp's calls in order)."""
    printf_dropped: int = 0
    """printf records that did not fit the printf buffer (printf_fifo_bytes)."""
    warnings: list = field(default_factory=list)
    """One line per thing a sanitizer would report that ran as on the hardware (gpusim.launch.sanitize)."""
    sanitizer_report: str = ""
    """The sanitizers' report (racecheck's, like compute-sanitizer's), empty when none ran."""
    hazards: list = field(default_factory=list)
    """racecheck's hazards (dicts: type, line0/line1, thread0/thread1, block, address, count)."""

    @property
    def seconds(self) -> float:
        """Simulated kernel time at the config's clock (timed runs only)."""
        return self.cycles / self.config.clock_hz

    @property
    def has_trace(self) -> bool:
        """Whether the launch recorded a trace (``trace=True``)."""
        return self.__dict__.get("_trace") is not None

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


# ``cycles`` and ``trace`` stay dataclass fields (the constructor takes them) but are read through properties:
# a functional run has no cycle count and an untraced run no trace, and asking for either is a user mistake
# that gets one clear error instead of a silent 0 or an AttributeError on None.
def _get_cycles(run: Run) -> int:
    if not run.timing:
        raise NoTimingError(f"kernel '{run.program.name}' ran functionally (timing=False): it has no cycles or "
                            "seconds; launch with timing=True (the default) to time it")
    return run.__dict__["_cycles"]


def _set_cycles(run: Run, value: int) -> None:
    run.__dict__["_cycles"] = value


def _get_trace(run: Run):
    trace = run.__dict__.get("_trace")
    if trace is None:
        why = "a functional run (timing=False) records none" if not run.timing else "it was not recorded"
        raise NoTraceError(f"kernel '{run.program.name}' has no trace ({why}): launch with trace=True "
                           "(or trace=N rows per table) to record one")
    return trace


def _set_trace(run: Run, value) -> None:
    run.__dict__["_trace"] = value


Run.cycles = property(_get_cycles, _set_cycles, doc="Simulated cycles (timed runs only; NoTimingError otherwise).")
Run.trace = property(_get_trace, _set_trace, doc="The recorded Trace (trace=True launches; NoTraceError otherwise).")
