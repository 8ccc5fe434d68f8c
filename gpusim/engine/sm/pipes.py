"""A sub-partition's pipes as next-free instants with a running busy count (``pipe_free``, ``pipe_busy_acc``,
``pipe_busy_t0`` of the timing state): ``issue.book_issue`` holds the pipe an instruction issues to, and
``wgmma_timing`` the tensor pipe and the wgmma queue a wgmma reaches."""

from __future__ import annotations

from gpusim.engine.jit import compiled_only


@compiled_only
def hold_pipe(pipe_free, busy_acc, busy_t0, sub, pipe, cycle, until):
    """Keep sub-partition ``sub``'s ``pipe`` busy until ``until`` (an instruction issued at ``cycle``).

    The pipe's busy history is kept as a running count so that warps waiting on it can be charged
    lazily: ``busy_acc`` holds the busy cycles before ``busy_t0``; from ``busy_t0`` on the pipe is busy
    while the cycle is below ``pipe_free``. A change made at ``cycle`` takes effect from ``cycle + 1``
    (this cycle's warps were already judged against the old value)."""
    old = pipe_free[sub, pipe]
    if until <= old:
        return
    t0 = busy_t0[sub, pipe]
    if cycle + 1 > t0:
        busy_acc[sub, pipe] += max(0, min(cycle + 1, old) - t0)
        busy_t0[sub, pipe] = cycle + 1
    pipe_free[sub, pipe] = until


@compiled_only
def busy_before(pipe_free, busy_acc, busy_t0, sub, pipe, t):
    """Cycles before ``t`` in which ``pipe`` of ``sub`` was busy (``t`` at or after the last change)."""
    return busy_acc[sub, pipe] + max(0, min(t, pipe_free[sub, pipe]) - busy_t0[sub, pipe])
