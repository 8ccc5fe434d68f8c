"""Block-wide barriers that not every thread of the block reaches, in the launch's ``L_SYNCCHECK`` mode.

* ``SYNC_HARDWARE`` (the default on compute capability 7.0 and later): threads that exited count as
  arrived, as on Volta and later GPUs (the PTX ISA: a barrier waits for the non-exited threads). Each warp
  arrival at a block-wide barrier that finds threads of its block exited without reaching it is counted in
  ``hw_notes`` (``HN_EXIT_BAR*``: count, first pc and block) for the run's one-line warning.
* ``SYNC_STRICT`` (``sanitize="synccheck"``, and the default before cc 7.0, where exited threads do not
  arrive): the same cases are an ``ERR_BARRIER`` error, as compute-sanitizer's synccheck reports them.
* ``SYNC_OFF`` (``GPU(synccheck=False)``): nothing is checked or counted.

Lanes waiting on the SIMT stack at an unguarded ``exit``/``ret`` (a branch to the kernel's end whose
other side runs first) count as exited. In every mode but ``SYNC_OFF``, a block-wide ``bar.sync`` that some
live lanes of the warp do not execute (they diverged away to other work) is an ``ERR_BARRIER`` error: the
PTX ISA makes ``bar.sync`` (``barrier.sync.aligned``) undefined there, and a GPU may hang.

Arrivals are counted per warp (``bar_arrivals``): a warp that exited with fewer arrivals than a warp now
at a barrier never reached it.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.barrier_reduce import RED_PHASE
from gpusim.engine.semantics.simt import STATUS_OK, fail


@compiled_only
def real_lanes(m, w):
    """The lanes of warp slot ``w`` that are threads of its block (a last warp may be partial)."""
    lanes = min(32, m.launch[S.L_THREADS_PER_BLOCK] - m.warp_index[w] * 32)
    return (1 << lanes) - 1


@compiled_only
def _note_exited(m, pc, w):
    """Count a barrier arrival that found exited threads (``SYNC_HARDWARE``)."""
    notes = m.hw_notes
    if notes[S.HN_EXIT_BAR] == 0:
        notes[S.HN_EXIT_BAR_PC] = pc
        notes[S.HN_EXIT_BAR_BLOCK] = m.warp_block[w]
    notes[S.HN_EXIT_BAR] += 1


@compiled_only
def _exiting(m, code, w):
    """Lanes of warp slot ``w`` waiting on the SIMT stack at an ``exit``/``ret``: they will exit (a branch to
    the kernel's end whose other side runs first), so they count as exited."""
    lanes = 0
    seen = m.stk_mask[w, m.sp[w]]
    for e in range(m.sp[w] - 1, -1, -1):      # a lane is where the highest entry holding it is
        own = m.stk_mask[w, e] & ~seen
        seen |= m.stk_mask[w, e]
        at = m.stk_pc[w, e]
        if own != 0 and 0 <= at < code.shape[0] and code[at, L.F_OP] == c.OP_EXIT and code[at, L.F_GUARD] < 0:
            lanes |= own
    return lanes


@compiled_only
def barrier_check(m, code, pc, w, mask):
    """At a block-wide barrier (no thread count) that warp ``w`` reaches with ``mask``; STATUS_OK or
    STATUS_ERROR (``ERR_BARRIER``: pc, the skipping warp, its skipping lanes)."""
    mode = m.launch[S.L_SYNCCHECK]
    if mode == S.SYNC_OFF:
        return STATUS_OK
    missing = real_lanes(m, w) & ~mask
    diverged = missing & ~m.exited[w]
    if diverged != 0:
        diverged &= ~_exiting(m, code, w)
    if diverged != 0:
        return fail(m, S.ERR_BARRIER, pc, w, 0, diverged)
    if missing != 0:
        if mode == S.SYNC_STRICT:
            return fail(m, S.ERR_BARRIER, pc, w, 0, missing)
        _note_exited(m, pc, w)
    m.bar_arrivals[w] += 1
    k = m.bar_arrivals[w]
    first = w - m.warp_index[w]
    for v in range(first, first + m.launch[S.L_WARPS_PER_BLOCK]):
        if v != w and m.sp[v] < 0 and m.bar_arrivals[v] < k:
            if mode == S.SYNC_STRICT:
                return fail(m, S.ERR_BARRIER, pc, v, 0, real_lanes(m, v))
            _note_exited(m, pc, w)
            break
    return STATUS_OK


@compiled_only
def _skipped_by_exit(m, w):
    """The pc of a block-wide barrier another warp of the block waits at and ``w`` never reached, or -1."""
    k = m.bar_arrivals[w]
    first = w - m.warp_index[w]
    for v in range(first, first + m.launch[S.L_WARPS_PER_BLOCK]):
        if v != w and m.bar_arrivals[v] > k and m.sp[v] >= 0:
            if m.bar_red[v, RED_PHASE] != 0:
                return m.stk_pc[v, m.sp[v]]          # a bar.red keeps its pc while it waits
            return max(m.stk_pc[v, m.sp[v]] - 1, 0)
    return -1


@compiled_only
def exit_check(m, w):
    """Warp slot ``w`` has exited: STATUS_ERROR (``SYNC_STRICT``) when another warp of its block waits at a
    barrier ``w`` never reached (counted in ``SYNC_HARDWARE``), else STATUS_OK."""
    mode = m.launch[S.L_SYNCCHECK]
    if mode == S.SYNC_OFF:
        return STATUS_OK
    skipped_at = _skipped_by_exit(m, w)
    if skipped_at < 0:
        return STATUS_OK
    if mode == S.SYNC_STRICT:
        return fail(m, S.ERR_BARRIER, skipped_at, w, 0, real_lanes(m, w))
    _note_exited(m, skipped_at, w)
    return STATUS_OK


@compiled_only
def note_shared_overrun(m, address):
    """Count a shared access past the declared size but inside the allocation granule (the hardware runs
    it); the pc is the instruction being executed (``mem_req[MR_PC]``)."""
    notes = m.hw_notes
    if notes[S.HN_SHARED_OVER] == 0:
        notes[S.HN_SHARED_OVER_PC] = m.mem_req[S.MR_PC]
        notes[S.HN_SHARED_OVER_ADDRESS] = address
        notes[S.HN_SHARED_OVER_BLOCK] = -1
    notes[S.HN_SHARED_OVER] += 1
