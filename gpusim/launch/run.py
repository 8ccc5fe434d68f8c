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

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from gpusim.errors import NoTimingError, NoTraceError

if TYPE_CHECKING:
    import pandas as pd

    from gpusim.analytic.models import RooflinePoint
    from gpusim.arch.config import GPUConfig
    from gpusim.arch.occupancy import Occupancy
    from gpusim.launch.sampling_policy import SamplingInfo
    from gpusim.observe.source_view import SourceView
    from gpusim.observe.trace import Trace
    from gpusim.observe.what_if import WhatIf
    from gpusim.ptx.lower import Program


class LaunchedKernel(Protocol):
    """What a Run keeps of the kernel it launched (``gpusim.api.gpu.Kernel`` is one; the API layer sits
    above this one, so the Run names the shape, not the class)."""

    name: str
    program: Program
    ptxas_regs: int | None


class Run:
    """One kernel launch's result. ``cycles``/``seconds`` exist only for a timed run (``timing=True``).

    ``cycles`` and ``trace`` are read through properties: a functional run has no cycle count and an
    untraced run no trace, and asking for either is a user mistake that gets one clear error
    (``NoTimingError``, ``NoTraceError``) instead of a silent 0 or an AttributeError on None."""

    def __init__(self, kernel: LaunchedKernel, program: Program, config: GPUConfig, grid: tuple[int, int, int],
                 block: tuple[int, int, int], shared_bytes: int, regs_per_thread: int, regs_source: str,
                 occupancy: Occupancy, pc_counts: np.ndarray, timing: bool, cycles: int = 0,
                 counters: dict[str, Any] | None = None, stalls: dict[str, int] | None = None,
                 pc_stalls: np.ndarray | None = None, pc_memory: np.ndarray | None = None,
                 trace: Trace | None = None, stdout: str = "", printf_dropped: int = 0,
                 warnings: list[str] | None = None, sanitizer_report: str = "",
                 hazards: list[dict[str, Any]] | None = None) -> None:
        self.kernel = kernel
        self.program = program
        self.config = config
        self.grid = grid
        self.block = block
        self.shared_bytes = shared_bytes
        self.regs_per_thread = regs_per_thread
        self.regs_source = regs_source
        self.occupancy = occupancy
        self.pc_counts = pc_counts
        self.timing = timing
        self._cycles = cycles
        self.counters: dict[str, Any] = {} if counters is None else counters
        """The engine's raw counters (gpusim.launch.timed: memory, pipes, SM activity; timed runs only)."""
        self.stalls: dict[str, int] = {} if stalls is None else stalls
        """Warp-cycles in each state of gpusim.engine.sm.stalls (their sum is the resident warp-cycles)."""
        self.pc_stalls = pc_stalls
        self.pc_memory = pc_memory
        self._trace = trace
        self._metrics: dict[str, float] | None = None
        self.stdout = stdout
        """The kernel's device printf output (gpusim.launch.printf: block, warp, then each warp's calls in order)."""
        self.printf_dropped = printf_dropped
        """printf records that did not fit the printf buffer (printf_fifo_bytes)."""
        self.warnings: list[str] = [] if warnings is None else warnings
        """One line per thing a sanitizer would report that ran as on the hardware (gpusim.launch.sanitize)."""
        self.sanitizer_report = sanitizer_report
        """The sanitizers' report (racecheck's, like compute-sanitizer's), empty when none ran."""
        self.hazards: list[dict[str, Any]] = [] if hazards is None else hazards
        """racecheck's hazards (dicts: type, line0/line1, thread0/thread1, block, address, count)."""
        self.uninitialized_reads: list[dict[str, Any]] = []
        """initcheck's findings: one dict per instruction that read never-written global memory (pc, line,
        thread and block of the first such read, its address and size, and how many thread accesses did)."""

    @property
    def cycles(self) -> int:
        """Simulated cycles (timed runs only; NoTimingError otherwise)."""
        if not self.timing:
            raise NoTimingError(f"kernel '{self.program.name}' ran functionally (timing=False): it has no cycles "
                                "or seconds; launch with timing=True (the default) to time it")
        return self._cycles

    @cycles.setter
    def cycles(self, value: int) -> None:
        self._cycles = value

    sampling: SamplingInfo | None = None
    """What sampled simulation did (gpusim.launch.sampling; GPU(sampling="auto")), None when it was off."""

    @property
    def cycles_interval(self) -> tuple[int, int]:
        """The interval of the kernel's cycles, (low, high): a sampled run's confidence interval
        (``run.sampling``), (cycles, cycles) for a run simulated in full (timed runs only)."""
        cycles = self.cycles
        return self.sampling.interval if self.sampling is not None else (cycles, cycles)

    @property
    def sampled(self) -> bool:
        """Whether part of this run's grid was extrapolated (GPU(sampling=...)) rather than simulated."""
        return self.sampling is not None and self.sampling.sampled

    @property
    def trace(self) -> Trace:
        """The recorded Trace (trace=True launches; NoTraceError otherwise)."""
        if self._trace is None:
            why = "a functional run (timing=False) records none" if not self.timing else "it was not recorded"
            raise NoTraceError(f"kernel '{self.program.name}' has no trace ({why}): launch with trace=True "
                               "(or trace=N rows per table) to record one")
        return self._trace

    @trace.setter
    def trace(self, value: Trace | None) -> None:
        self._trace = value

    @property
    def seconds(self) -> float:
        """Simulated kernel time at the config's clock (timed runs only)."""
        return self.cycles / self.config.clock_hz

    @property
    def has_trace(self) -> bool:
        """Whether the launch recorded a trace (``trace=True``)."""
        return self._trace is not None

    @property
    def codegen(self) -> str:
        """The code generation that timed this run: "ptxas" (gpusim.codegen's passes ran) or "none" (the PTX
        as written, also when GPU(codegen="ptxas") was asked for a kernel the passes do not model)."""
        from gpusim.codegen import timed_mode

        return timed_mode(self.program)[0]

    @property
    def codegen_reason(self) -> str:
        """Why the PTX ran as written ("" when ``codegen`` is "ptxas"): gpusim.codegen.timed_mode."""
        from gpusim.codegen import timed_mode

        return timed_mode(self.program)[1]

    @property
    def kernel_name(self) -> str:
        return self.program.name

    @property
    def metrics(self) -> dict[str, float]:
        if self._metrics is None:
            from gpusim.observe.metrics import derive_metrics

            self._metrics = derive_metrics(self)
        return self._metrics

    @property
    def warp_instructions(self) -> int:
        return int(self.pc_counts[:, 0].sum())

    def roofline(self, level: str = "dram_sustained") -> RooflinePoint:
        """Where this run sits on the config's roofline (gpusim.analytic.RooflinePoint)."""
        from gpusim.analytic.models import roofline_point

        return roofline_point(self, level)

    def report(self) -> str:
        from gpusim.observe.report import report_text

        return report_text(self)

    def what_if(self, limits: Sequence[str] | None = None, factor: float | None = None, *,
                workers: int | None = None) -> WhatIf:
        """Measured speed-up of removing each limit of the model, one at a time (gpusim.launch.what_if):
        the launch re-simulated per limit from the memory it started from. ``factor``: bandwidths and math
        pipes x factor instead of x infinity; ``limits``: ids to try (default all); ``workers``: processes."""
        from gpusim.launch.what_if import what_if

        return what_if(self, limits=limits, factor=factor, workers=workers)

    def metrics_table(self) -> list[tuple[str, str, Any]]:
        """(metric name, unit, value) rows in Nsight Compute's names and units (gpusim.observe.export)."""
        from gpusim.observe.export import metrics_table

        return metrics_table(self)

    def to_csv(self, path: str | Path | None = None) -> str | None:
        """The metrics in the layout of ``ncu --csv --page raw``, written to ``path`` (or returned as text)."""
        from gpusim.observe.export import write_csv

        return write_csv(self, path)

    def to_pandas(self, what: str = "metrics", view: str = "not_issued") -> pd.DataFrame:
        """A DataFrame: ``"metrics"`` (metric, unit, value), ``"stalls"`` (warp states: ``view`` "not_issued"
        or "all") or ``"source"`` (the source view)."""
        from gpusim.observe.export import to_pandas

        return to_pandas(self, what, view)

    def source_view(self) -> SourceView:
        """Per-PTX-line attribution (gpusim.observe.source_view.SourceView): counts, stalls, sectors per line."""
        from gpusim.observe.source_view import SourceView

        return SourceView(self)

    def to_dict(self) -> dict[str, Any]:
        """Every metric, the stalls, the config, the verdict and the source view as plain data."""
        from gpusim.observe.report import run_dict

        return run_dict(self)

    def to_json(self, path: str | Path) -> None:
        """Write ``to_dict()`` as JSON to ``path``."""
        import json

        Path(path).write_text(json.dumps(self.to_dict(), indent=1), encoding="utf-8")

    def to_html(self, path: str | Path, what_if: WhatIf | None = None) -> None:
        """Write the interactive report: one self-contained HTML file (``what_if``: a ``run.what_if()``;
        by default the latest one measured on this run, if any)."""
        from gpusim.observe.html import write_html

        if what_if is None:
            what_if = self.__dict__.get("_what_if")
        write_html(self, path, what_if=what_if)

    def _repr_html_(self) -> str:
        from gpusim.observe.html import run_summary_html

        return run_summary_html(self)

    def __repr__(self) -> str:
        kind = f"{self.cycles} cycles, {self.seconds * 1e6:.3f} us" if self.timing else "functional"
        return (f"Run({self.program.name!r}, grid={self.grid}, block={self.block}, {kind}, "
                f"{self.warp_instructions} warp-instructions)")

