"""Warp schedulers: each sub-partition's scheduler picks at most one eligible warp per cycle.

A policy is one function, ``priority(w, last, slots, w_age, w_group)``: of the warps eligible this
cycle, the one with the smallest value issues (``last`` is the warp the scheduler issued last, -1 before
its first issue). The table ``POLICIES`` lists them in the order of their codes; the config names them
(``arch.config.SCHEDULER_POLICIES``, same order) and ``priority`` below dispatches on the code.

* ``gto`` (greedy then oldest): the last issued warp while it stays eligible, else the oldest;
* ``lrr`` (loose round-robin): the first eligible warp after the last issued, in slot order;
* ``two_level``: warps in the active set first, round-robin within it; a warp that stalls on global
  memory (long_scoreboard) leaves the set, and a warp outside it that issues joins it while the set
  holds fewer than ``two_level_active_warps`` warps (``two_level_leave``, ``two_level_admit``);
* ``oldest_first``: always the oldest eligible warp (dispatch order), with no preference for the last.

To add a policy: write its priority function, add its row to ``POLICIES`` and its name to
``SCHEDULER_POLICIES``, and its line to ``priority``.

Simplified: one issue per scheduler per cycle, no dual issue; "age" is the order warps were
dispatched in, over the whole grid; the two-level active set is kept per warp, not as a queue.
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.bits import quotient, trailing_zeros64
from gpusim.engine.jit import compiled_only
from gpusim.engine.sm import stalls as ST
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.accounting import charge_parked
from gpusim.engine.sm.issue import throttle_state
from gpusim.engine.sm.pipes import busy_before


@compiled_only(inline="always")
def gto(w, last, slots, w_age, w_group):
    """Greedy then oldest: the last issued warp first (-1), then by age."""
    if w == last:
        return np.int64(-1)
    return w_age[w]


@compiled_only(inline="always")
def lrr(w, last, slots, w_age, w_group):
    """Loose round-robin: distance after the last issued warp in slot order."""
    return (w - last - 1) % slots


@compiled_only(inline="always")
def two_level(w, last, slots, w_age, w_group):
    """Two-level: the active set (w_group 1) before the rest, round-robin within each."""
    return (1 - w_group[w]) * slots + (w - last - 1) % slots


@compiled_only(inline="always")
def oldest_first(w, last, slots, w_age, w_group):
    """Oldest first: strict age priority, the last issued warp no different from the others."""
    return w_age[w]


POLICIES = (("gto", gto), ("lrr", lrr), ("two_level", two_level), ("oldest_first", oldest_first))
"""The policy table: (config name, priority function); a policy's code is its row's index."""
POLICY_CODES = {name: code for code, (name, _) in enumerate(POLICIES)}
POLICY_GTO, POLICY_LRR, POLICY_TWO_LEVEL, POLICY_OLDEST_FIRST = (POLICY_CODES[name] for name, _ in POLICIES)


@compiled_only(inline="always")
def priority(policy, w, last, slots, w_age, w_group):
    """Policy ``policy``'s priority of eligible warp ``w`` (smaller issues first)."""
    if policy == POLICY_GTO:
        return gto(w, last, slots, w_age, w_group)
    if policy == POLICY_LRR:
        return lrr(w, last, slots, w_age, w_group)
    if policy == POLICY_TWO_LEVEL:
        return two_level(w, last, slots, w_age, w_group)
    return oldest_first(w, last, slots, w_age, w_group)


@compiled_only
def pick_parked(policy, candidates, base, nsp, last, slots, w_age, w_group):
    """The warp the scheduler issues among ``candidates`` (bit j: warp ``base + j * nsp``)."""
    if last >= 0 and (candidates >> np.int64(quotient(last - base, nsp))) & 1 and \
            priority(policy, last, last, slots, w_age, w_group) < 0:
        return last            # a negative priority comes before every other (gto's last issued warp)
    best = -1
    best_key = np.int64(0)
    rest = candidates
    while rest != 0:
        w = base + np.int64(trailing_zeros64(rest)) * nsp
        rest &= rest - 1
        key = priority(policy, w, last, slots, w_age, w_group)
        if best < 0 or key < best_key:
            best = w
            best_key = key
    return best


@compiled_only
def select_parked(ts, policy, sub, base_sm, sp, nsp, slots, cycle):
    """Lazy accounting: pick among the sub-partition's parked warps whose pipe is free at ``cycle``, take
    the pick out of the parked set and charge its wait. Returns the warp, or -1 when none can issue."""
    candidates = np.int64(0)
    pipes = ts.park_pipes[sub]
    while pipes != 0:
        p = np.int64(trailing_zeros64(pipes))
        pipes &= pipes - 1
        if ts.pipe_free[sub, p] <= cycle:
            candidates |= ts.park_mask[sub, p]
    if candidates == 0:
        return -1
    best = pick_parked(policy, candidates, base_sm + sp, nsp, ts.sched_last[sub], slots, ts.w_age, ts.w_group)
    best_pc = ts.w_next_pc[best]
    pipe = ts.w_pipe[best]
    ts.park_mask[sub, pipe] &= ~(np.int64(1) << np.int64(quotient(best - base_sm, nsp)))
    if ts.park_mask[sub, pipe] == 0:
        ts.park_pipes[sub] &= ~(np.int64(1) << pipe)
    ts.w_parked[best] = 0
    busy = busy_before(ts.pipe_free, ts.pipe_busy_acc, ts.pipe_busy_t0, sub, pipe, cycle) - ts.w_park_busy[best]
    charge_parked(ts.stalls, ts.pc_stalls, best_pc, throttle_state(pipe), busy, cycle - ts.w_since[best])
    ts.w_since[best] = cycle
    return best


@compiled_only(inline="always")
def two_level_leave(w_group, w, state):
    """Two-level: a warp of the active set that now waits on global memory leaves it."""
    if w_group[w] == 1 and state == ST.LONG_SCOREBOARD:
        w_group[w] = 0


@compiled_only
def two_level_admit(ts, w, sm, sp):
    """Two-level: warp ``w``, outside the active set, issued; it joins while the set is not full."""
    if ts.w_group[w] == 0:
        prm = ts.prm
        base_sm = sm * prm[T.TP_SLOTS]
        active = 0
        for k2 in range(sp, prm[T.TP_SLOTS], prm[T.TP_NSP]):
            active += ts.w_group[base_sm + k2] * ts.w_resident[base_sm + k2]
        if active < prm[T.TP_TWO_LEVEL_N]:
            ts.w_group[w] = 1


@compiled_only
def select_warp(ts, policy, lazy, best, best_pc, sub, base_sm, sp, nsp, slots, cycle):
    """The warp sub-partition ``sp`` (``sub``) issues at ``cycle``: with lazy accounting the pick among
    its parked warps, else ``best`` (the scan's pick, -1 for none). Returns (warp or -1, its pc, the
    state it was in before: not_selected, or its stall when it issues at once)."""
    if lazy:
        best = select_parked(ts, policy, sub, base_sm, sp, nsp, slots, cycle)
        if best < 0:
            return best, best_pc, ST.NOT_SELECTED
        return best, ts.w_next_pc[best], ST.NOT_SELECTED
    if best < 0:
        return best, best_pc, ST.NOT_SELECTED
    return best, best_pc, ts.w_state[best] if ts.w_pc[best] == best_pc else ST.SELECTED
