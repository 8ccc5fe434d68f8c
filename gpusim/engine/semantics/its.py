"""Independent thread scheduling (``GPU(reconvergence="its")``, Volta and later): per-thread progress
on top of the SIMT stack of ``simt.py``.

Model. The warp's lanes are split into *groups*: the lanes of one stack entry that no entry above it
holds (``own_lanes``); all of a group's lanes are at the entry's pc. The scheduler issues the top
entry's group, as under IPDOM, and the stack's order is the order groups run in, so a divergent branch
runs its paths one after the other and the lanes wait at the immediate post-dominator (where nvcc's
convergence barriers, BSSY/BSYNC, are) exactly as under IPDOM. A stack here is a sequence of *chains*
that each end at the reconvergence pc of the entry below them, and ITS departs from IPDOM only by
reordering it at three kinds of points:

* **A spin** (``back_edge``): a diverged group that takes a backward branch twice in the same state --
  same pc, same lanes, every register of its lanes bit for bit -- cannot leave the loop by itself: it
  waits for another thread. It yields: the lowest group of the stack that can run goes on top
  (``switch_group``). A group that is a whole entry moves there; lanes waiting at a convergence point
  (a join entry's own lanes) are split off into an entry of their own, which gives up that convergence
  point for them (they reconverge with the others at the next one out), as a convergence barrier is
  released for threads that yield. Taking the lowest group first is round-robin over the groups: none
  starves.
* **A warp-synchronous instruction** (shfl/vote/match/redux ``.sync``, ``warp_op``) whose member mask
  names live lanes of another group: the group blocks there (``its_wait``) and yields. A group that
  reaches the same instruction with the lanes it waits for blocked there executes it together with them
  (one issue, all their lanes), and each group goes on from the next instruction. When every group of
  the warp is blocked, none can arrive: a ``WarpSyncError`` (``SYNC_NEVER_ARRIVES``).
* **``bar.warp.sync``** (``__syncwarp(mask)``): a barrier for the named lanes, at any ``bar.warp.sync``
  of the kernel (CUDA lets the two sides of a branch sync with each other): the group blocks until the
  named live lanes have all arrived at one. A block-wide ``bar.sync`` (``its_bar``) is the same for all
  the warp's live lanes: the warp arrives at the block's barrier when its last group gets to one.

Non-communicating code never meets any of the three (a loop that repeats its state exactly would never
end), so it runs in the same order, with the same issues, cycles and counters, as under IPDOM.

Simplifications: joint execution of a data-exchanging warp op needs the same instruction (two
``shfl.sync`` on the two sides of a branch that name each other's lanes end in the ``WarpSyncError``);
groups released together stay separate groups until their next convergence point; a loop that waits
while its registers change every iteration (it counts its tries, reads ``%clock``) is not recognized as
waiting.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.operands import read_src
from gpusim.engine.semantics.warpops import warp_op

FNV_OFFSET = np.uint64(14695981039346656037)
FNV_PRIME = np.uint64(1099511628211)

# its_warp_op / its_warpsync results
ITS_GO_ON = 0       # executed: the group continues at the next instruction
ITS_BLOCKED = 1     # the group waits there; another group is on top now
ITS_FAILED = -1     # a member-mask error (m.err filled: E_LANE, E_EXTRA, E_ADDRESS, E_SUB)
ITS_OVERFLOW = -2   # no room on the stack to split a group off
# where a group blocked elsewhere waits for the same thing (blocked_at)
AT_SAME, AT_WARPSYNC, AT_BAR = 0, 1, 2


@compiled_only
def switch_group(m, w):
    """Put the lowest group of warp ``w`` that is not blocked at a warp-synchronous instruction on top of
    its stack. Returns 1, 0 when there is none, -1 when the stack has no room for the split."""
    stk_pc = m.stk_pc
    stk_rpc = m.stk_rpc
    stk_mask = m.stk_mask
    sp = m.sp[w]
    blocked = m.its_wait[w]
    above = stk_mask[w, sp]
    pick = -1
    lanes = 0
    for e in range(sp - 1, -1, -1):
        free = stk_mask[w, e] & ~above & ~blocked
        above |= stk_mask[w, e]
        if free != 0:
            pick = e
            lanes = free
    if pick < 0:
        return 0
    pc = stk_pc[w, pick]
    rpc = stk_rpc[w, pick]
    if lanes == stk_mask[w, pick]:
        # a whole entry (no lanes of it are above it): the chains above it do not continue into it
        for k in range(pick, sp):
            stk_pc[w, k] = stk_pc[w, k + 1]
            stk_rpc[w, k] = stk_rpc[w, k + 1]
            stk_mask[w, k] = stk_mask[w, k + 1]
    else:
        # lanes waiting at a join (or beside blocked ones): they leave it and run on to its own join
        if sp + 1 >= stk_pc.shape[1]:
            return -1
        stk_mask[w, pick] &= ~lanes
        sp += 1
        m.sp[w] = sp
    stk_pc[w, sp] = pc
    stk_rpc[w, sp] = rpc
    stk_mask[w, sp] = lanes
    return 1


@compiled_only
def back_edge(m, w, pc, written):
    """Warp ``w``'s top group has just taken the backward branch at ``pc``. When the warp is diverged
    and the group is in the state it was in at its last pass here, it spins: switch to another group.
    ``written``: the registers its loop can write (bit ``index % 64``; the others cannot change between
    two passes). Returns ``switch_group``'s result (0 when nothing changed)."""
    sp = m.sp[w]
    if sp <= 0:
        return 0
    mask = m.stk_mask[w, sp]
    h = FNV_OFFSET
    h = (h ^ np.uint64(pc)) * FNV_PRIME
    h = (h ^ np.uint64(m.stk_pc[w, sp])) * FNV_PRIME
    h = (h ^ np.uint64(mask)) * FNV_PRIME
    regs = m.regs
    for r in range(regs.shape[1]):
        if not (written >> (r & 63)) & 1:
            continue
        for lane in range(32):
            if (mask >> lane) & 1:
                h = (h ^ regs[w, r, lane]) * FNV_PRIME
    h |= np.uint64(1)            # 0 marks an empty slot
    slot = pc % S.ITS_SIG_SLOTS
    if m.its_sig[w, slot] != h:
        m.its_sig[w, slot] = h
        return 0
    return switch_group(m, w)


@compiled_only
def _same_kind(code, pc, at, kind):
    """Whether a group blocked at ``at`` waits at the same barrier as one at ``pc``: the same instruction
    (``AT_SAME``), or any ``bar.warp.sync`` (``AT_WARPSYNC``) or block-wide ``bar.sync`` (``AT_BAR``)."""
    if at == pc:
        return True
    if kind == AT_WARPSYNC:
        return code[at, L.F_OP] == c.OP_NOP and code[at, L.F_AUX] == L.NOP_WARPSYNC
    if kind == AT_BAR:
        return code[at, L.F_OP] == c.OP_BAR and code[at, L.F_AUX] != L.BAR_ARRIVE
    return False


@compiled_only
def blocked_at(m, code, w, pc, kind):
    """Lanes of warp ``w``'s groups below the top that are blocked at ``pc`` or an instruction of the same
    ``kind`` (``_same_kind``)."""
    sp = m.sp[w]
    above = m.stk_mask[w, sp]
    lanes = 0
    for e in range(sp - 1, -1, -1):
        own = m.stk_mask[w, e] & ~above & m.its_wait[w]
        above |= m.stk_mask[w, e]
        if own != 0:
            if _same_kind(code, pc, m.stk_pc[w, e], kind):
                lanes |= own
    return lanes


@compiled_only
def release(m, w, lanes):
    """The blocked groups below the top holding any of ``lanes`` have executed their instruction: they
    go on from the next one. (A blocked group is always a whole entry: nothing is ever pushed on it.)"""
    sp = m.sp[w]
    above = m.stk_mask[w, sp]
    freed = 0
    for e in range(sp - 1, -1, -1):
        own = m.stk_mask[w, e] & ~above & m.its_wait[w]
        above |= m.stk_mask[w, e]
        if own & lanes:
            m.stk_pc[w, e] += 1
            freed |= own
    m.its_wait[w] &= ~freed


@compiled_only
def _block(m, w, mask):
    """The top group (``mask``) waits at its instruction; another group goes on top."""
    m.its_wait[w] |= mask
    switched = switch_group(m, w)
    if switched > 0:
        return ITS_BLOCKED
    if switched < 0:
        return ITS_OVERFLOW
    m.err[S.E_SUB] = S.SYNC_NEVER_ARRIVES
    return ITS_FAILED


@compiled_only
def its_warp_op(m, code, row, pc, w, mask):
    """A shfl/vote/match/redux ``.sync`` whose member masks name live lanes outside the top group
    ``mask`` (``warp_op`` found it, ``m.err`` says which lane): run it together with the groups blocked at
    this instruction when that completes every mask, else block."""
    waiting = blocked_at(m, code, w, pc, AT_SAME)
    if waiting != 0:
        if warp_op(m, row, w, mask | waiting) < 0:
            release(m, w, waiting)
            return ITS_GO_ON
        if m.err[S.E_SUB] != S.SYNC_INACTIVE_MEMBER:
            return ITS_FAILED
    return _block(m, w, mask)


@compiled_only
def warpsync_missing(m, row, w, mask):
    """The live lanes the member masks of ``bar.warp.sync`` by lanes ``mask`` name that are not in ``mask``
    (``m.err``'s E_LANE, E_EXTRA and E_ADDRESS then name the first); -1 when a lane's mask leaves it out
    (``m.err`` filled, ``SYNC_NOT_MEMBER``)."""
    need = 0
    first = -1
    for lane in range(32):
        if (mask >> lane) & 1:
            named = np.int64(read_src(m, row, 0, w, lane) & np.uint64(0xFFFFFFFF))
            if first < 0:
                first = lane
            if not (named >> lane) & 1:
                m.err[S.E_LANE] = lane
                m.err[S.E_EXTRA] = named
                m.err[S.E_ADDRESS] = lane
                m.err[S.E_SUB] = S.SYNC_NOT_MEMBER
                return -1
            need |= named
    missing = need & ~m.exited[w] & 0xFFFFFFFF & ~mask
    if missing != 0:
        other = 0
        while not (missing >> other) & 1:
            other += 1
        m.err[S.E_LANE] = first
        m.err[S.E_EXTRA] = np.int64(read_src(m, row, 0, w, first) & np.uint64(0xFFFFFFFF))
        m.err[S.E_ADDRESS] = other
        m.err[S.E_SUB] = S.SYNC_INACTIVE_MEMBER
    return missing


@compiled_only
def its_warpsync(m, code, row, pc, w, mask):
    """``bar.warp.sync`` by the top group ``mask``: go on when every live lane its member masks name has
    arrived at a ``bar.warp.sync`` (releasing the groups blocked at one), else block."""
    if mask == 0:
        return ITS_GO_ON
    missing = warpsync_missing(m, row, w, mask)
    if missing < 0:
        return ITS_FAILED
    if missing == 0:
        return ITS_GO_ON
    waiting = blocked_at(m, code, w, pc, AT_WARPSYNC)
    if missing & ~waiting == 0:
        release(m, w, waiting & missing)
        return ITS_GO_ON
    other = 0
    while not ((missing & ~waiting) >> other) & 1:
        other += 1
    m.err[S.E_ADDRESS] = other
    return _block(m, w, mask)


@compiled_only
def its_bar(m, code, pc, w, mask, real):
    """A block-wide ``bar.sync``/``barrier.sync`` by the top group ``mask`` of a warp whose threads are
    ``real``: the warp arrives once all its live lanes have reached one (releasing the groups blocked at
    one), else the group blocks. Returns (result, the lanes that arrive)."""
    live = real & ~m.exited[w]
    missing = live & ~mask
    if missing == 0:
        return ITS_GO_ON, mask
    waiting = blocked_at(m, code, w, pc, AT_BAR)
    if missing & ~waiting == 0:
        release(m, w, waiting)
        return ITS_GO_ON, mask | waiting
    first = 0
    while not (mask >> first) & 1:
        first += 1
    other = 0
    while not ((missing & ~waiting) >> other) & 1:
        other += 1
    m.err[S.E_LANE] = first
    m.err[S.E_EXTRA] = live
    m.err[S.E_ADDRESS] = other
    return _block(m, w, mask), mask
