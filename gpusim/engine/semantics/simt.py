"""The per-warp SIMT stack: divergence and reconvergence at the immediate post-dominator.

Each warp slot has a stack of (pc, reconvergence pc, lane mask) entries; the
top entry is what the warp executes. A divergent branch turns the top entry
into the join entry (it resumes at the reconvergence pc with the full mask)
and pushes the not-taken then the taken path, both ending at that pc. An
entry is popped when its pc reaches its reconvergence pc, or when all its
lanes have exited. Lanes leaving early with ``exit``/``ret`` are removed from
every entry.
"""

from __future__ import annotations

from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S

STATUS_OK = 0
STATUS_EXITED = 1
STATUS_BARRIER = 2
STATUS_ERROR = 3
STATUS_SLEEP = 4
STATUS_MEMBAR = 5


@compiled_only
def init_warp(m, w, lane_mask):
    """Start warp slot ``w`` at pc 0 with ``lane_mask`` lanes present."""
    m.sp[w] = 0
    m.stk_pc[w, 0] = 0
    m.stk_rpc[w, 0] = -1
    m.stk_mask[w, 0] = lane_mask
    m.exited[w] = 0xFFFFFFFF ^ lane_mask
    m.bar_arrivals[w] = 0
    m.its_wait[w] = 0
    m.its_sig[w, :] = 0
    m.bar_red[w, :] = 0


@compiled_only
def normalize(sps, stk_pc, stk_rpc, stk_mask, w):
    """Pop finished entries; returns the new top index (-1 when the warp is done)."""
    sp = sps[w]
    while sp >= 0:
        if stk_mask[w, sp] == 0 or stk_pc[w, sp] == stk_rpc[w, sp]:
            sp -= 1
        else:
            break
    sps[w] = sp
    return sp


@compiled_only
def branch(sps, stk_pc, stk_rpc, stk_mask, w, pc, target, reconv, taken, active):
    """Apply a branch with ``taken`` lanes of ``active``; returns False on stack overflow."""
    sp = sps[w]
    if taken == active:
        stk_pc[w, sp] = target
    elif taken == 0:
        stk_pc[w, sp] = pc + 1
    else:
        if sp + 2 >= stk_pc.shape[1]:
            return False
        not_taken = active & ~taken
        if stk_rpc[w, sp] == reconv:
            # already a path of this reconvergence region (a divergent loop iterating): no new join
            # entry; the not-taken lanes join an entry below that waits at the same pc, if there is one
            if sp > 0 and stk_pc[w, sp - 1] == pc + 1 and stk_rpc[w, sp - 1] == reconv:
                stk_mask[w, sp - 1] |= not_taken
                sp -= 1
            elif pc + 1 == reconv:
                sp -= 1           # those lanes are at the join point; the join entry holds them
            else:
                stk_pc[w, sp] = pc + 1
                stk_mask[w, sp] = not_taken
        else:
            # the top entry becomes the join entry; a path already at the join point needs no entry
            stk_pc[w, sp] = reconv
            if pc + 1 != reconv:
                sp += 1
                stk_pc[w, sp] = pc + 1
                stk_rpc[w, sp] = reconv
                stk_mask[w, sp] = not_taken
        if target != reconv:
            sp += 1
            stk_pc[w, sp] = target
            stk_rpc[w, sp] = reconv
            stk_mask[w, sp] = taken
        sps[w] = sp
    normalize(sps, stk_pc, stk_rpc, stk_mask, w)
    return True


@compiled_only
def exit_lanes(m, w, pc, lanes):
    """Lanes ``lanes`` leave the kernel; the rest of the top entry continues at pc + 1."""
    m.exited[w] |= lanes
    sp = m.sp[w]
    m.stk_pc[w, sp] = pc + 1
    for e in range(sp + 1):
        m.stk_mask[w, e] &= ~lanes
    return normalize(m.sp, m.stk_pc, m.stk_rpc, m.stk_mask, w)


@compiled_only
def fail(m, kind, pc, w, lane, address):
    """Record the first error (``m.err``: kind, pc, warp slot, lane, address) and return STATUS_ERROR."""
    m.err[S.E_KIND] = kind
    m.err[S.E_PC] = pc
    m.err[S.E_WARP] = w
    m.err[S.E_LANE] = lane
    m.err[S.E_ADDRESS] = address
    return STATUS_ERROR


@compiled_only
def swap_sibling_paths(sps, stk_pc, stk_rpc, stk_mask, w):
    """What-if "no divergence cost" (``issue_unit.issue_other_path``): when warp ``w``'s top two stack
    entries are the two unfinished paths of one divergent branch (the same reconvergence pc, which a join
    entry never shares with the paths above it), swap them so the other path runs next. The lanes, pcs and
    join are unchanged: only the order the two paths take turns in. Returns True when it swapped."""
    sp = sps[w]
    if sp < 1 or stk_rpc[w, sp] != stk_rpc[w, sp - 1] or stk_pc[w, sp - 1] == stk_rpc[w, sp - 1]:
        return False
    pc, mask = stk_pc[w, sp], stk_mask[w, sp]
    stk_pc[w, sp] = stk_pc[w, sp - 1]
    stk_mask[w, sp] = stk_mask[w, sp - 1]
    stk_pc[w, sp - 1] = pc
    stk_mask[w, sp - 1] = mask
    return True
