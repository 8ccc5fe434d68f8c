"""Running a compiled engine loop slice by slice, so that a run can be interrupted and watched.

The compiled loops (``run_functional``, ``run_timed``) never return to Python on their own until the
grid is done, and Python only handles a signal between bytecodes: a Ctrl-C during one long call would
wait for the whole kernel. So each call gets a *budget* of work (warp-instructions, or cycles evaluated
plus warp-instructions issued) and returns when it is spent, having stored every piece of loop state in
its arrays; ``drive`` calls it again and again until it reports something other than "slice done".
Between two calls a pending SIGINT raises ``KeyboardInterrupt`` here, in plain Python, and the
progress display is updated.

The budget adapts to the measured speed so that one slice takes about ``SLICE_SECONDS`` of wall time
(a Ctrl-C is answered within about that long); slicing changes nothing in the results, which are
bit-identical however the run is cut. ``FIXED_BUDGET`` (None: adapt) pins the budget, for tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable

SLICE_SECONDS = 0.2
"""Target wall time of one slice."""
FIRST_BUDGET = 20_000
"""Budget of the first slice (a few ms on this engine); later slices scale it to SLICE_SECONDS."""
MAX_BUDGET = 1 << 40
FIXED_BUDGET: int | None = None
"""When set, every slice gets exactly this budget (tests compare runs cut at different points)."""


def next_budget(budget: int, elapsed: float) -> int:
    """The budget that makes the next slice last about SLICE_SECONDS, given that ``budget`` took
    ``elapsed`` seconds; it grows at most 8-fold per slice (a first slice can be dominated by
    one-off costs) and never falls below 1000."""
    if elapsed <= 0:
        return min(budget * 8, MAX_BUDGET)
    scaled = int(budget * SLICE_SECONDS / elapsed)
    return max(1000, min(scaled, budget * 8, MAX_BUDGET))


def drive(call: Callable[[int], tuple], slice_status: int, on_slice: Callable[[], None] | None = None) -> tuple:
    """Call ``call(budget)`` until its first result is not ``slice_status``; returns that last result.

    ``on_slice`` runs after every slice that did not finish the run (progress). A KeyboardInterrupt
    (Ctrl-C) raised between slices propagates: the engine state stays consistent, and the GPU object
    can launch again (device memory keeps what the kernel wrote before the interrupt)."""
    budget = FIXED_BUDGET or FIRST_BUDGET
    try:
        while True:
            start = time.perf_counter()
            result = call(budget)
            if result[0] != slice_status:
                return result
            if FIXED_BUDGET is None:
                budget = next_budget(budget, time.perf_counter() - start)
            if on_slice is not None:
                on_slice()
    except KeyboardInterrupt:
        # raised wherever Python was when the signal came (numba's dispatcher, a progress hook): report it
        # from here, without those frames
        raise KeyboardInterrupt() from None
