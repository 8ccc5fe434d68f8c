"""Kernel traces: per-warp state intervals, issued instructions and memory requests of a timed run.

``gpu.launch(..., trace=True)`` records them (``trace=N`` sets the rows per table; a run that
needs more is cut there, and ``Trace.truncated`` says so). This module holds the raw tables;
``instructions()``, ``memory()``, ``intervals()`` and ``to_chrome()`` present them.
"""

from __future__ import annotations

import numpy as np

from gpusim.engine import timing_state as T


class Trace:
    """The recorded events of one timed launch (raw numpy tables, columns in gpusim.engine.timing_state)."""

    def __init__(self, run, intervals: np.ndarray, issues: np.ndarray, memory: np.ndarray, truncated: bool,
                 slots_per_sm: int):
        self.run = run
        self.raw_intervals = intervals
        self.raw_issues = issues
        self.raw_memory = memory
        self.truncated = truncated
        self.slots_per_sm = slots_per_sm

    @classmethod
    def from_engine(cls, run, ts, *, slots: int, bslots: int, warp_block, warp_index) -> Trace:
        truncated = bool(ts.trace_n[1] or ts.issue_trace_n[1] or ts.mem_trace_n[1])
        return cls(run, ts.trace[: ts.trace_n[0]].copy(), ts.issue_trace[: ts.issue_trace_n[0]].copy(),
                   ts.mem_trace[: ts.mem_trace_n[0]].copy(), truncated, slots)

    def warp_issue_counts(self) -> dict[int, int]:
        """Issued warp-instructions per warp slot."""
        slots, counts = np.unique(self.raw_issues[:, T.IT_WARP], return_counts=True)
        return {int(s): int(n) for s, n in zip(slots, counts, strict=True)}
