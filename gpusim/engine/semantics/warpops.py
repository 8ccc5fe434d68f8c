"""Warp-wide operations: shfl.sync, vote.sync, activemask, match.sync, redux.sync.

Semantics follow the PTX ISA pseudo-code. Lanes of a warp execute in lockstep
here, so every source lane's value is read before any lane writes (the
snapshot in ``m.snap``).

Member masks are per lane, as on sm_70+: each executing lane names the lanes
it synchronises with, and the instruction acts on each lane's *group* — its
member mask less the lanes that have exited (the ISA waits only for non-exited
members). Cooperative groups' ``labeled_partition`` relies on this: all lanes
execute one ``redux.sync`` with different masks, and each group reduces only
its own lanes. What the ISA leaves undefined is refused with ``ERR_SYNC``, as
compute-sanitizer's synccheck would report it: a lane not in its own member
mask, a live member lane that does not execute the instruction (diverged or
predicated off — the hardware would wait for it, or read garbage), and two
members that name different masks (masks that differ only in exited lanes
are the same group). A shuffle whose source lane is outside the
reading lane's group (or out of range) returns the reading lane's own value
(PTX leaves it undefined; this choice is deterministic). ``bar.warp.sync`` (``__syncwarp``) is checked
in execute.py and its.py.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.alu import alu_eval
from gpusim.engine.semantics.operands import read_src

U64_0 = np.uint64(0)


@compiled_only
def _members(m, row, w, mask, src):
    """Read each executing lane's member mask (source ``src``) into ``m.members`` as its group (the mask
    less exited lanes) and check the groups. Returns -1, or the lane that breaks a rule, with ``m.err``
    filled (``E_EXTRA`` its mask, ``E_ADDRESS`` the other lane, ``E_SUB`` which rule)."""
    live = ~m.exited[w] & 0xFFFFFFFF
    for lane in range(32):
        if (mask >> lane) & 1:
            m.members[lane] = np.int64(read_src(m, row, src, w, lane) & np.uint64(0xFFFFFFFF))
    for lane in range(32):
        if not (mask >> lane) & 1:
            continue
        named = m.members[lane]
        sub = 0
        other = lane
        if not (named >> lane) & 1:
            sub = S.SYNC_NOT_MEMBER
        else:
            missing = named & live & ~mask
            if missing != 0:
                sub = S.SYNC_INACTIVE_MEMBER
                while not (missing >> other) & 1:
                    other = (other + 1) & 31
            else:
                for j in range(32):
                    if (named >> j) & 1 and (mask >> j) & 1 and (m.members[j] & live) != (named & live):
                        sub = S.SYNC_MASK_MISMATCH
                        other = j
                        break
        if sub != 0:
            m.err[S.E_LANE] = lane
            m.err[S.E_EXTRA] = named
            m.err[S.E_ADDRESS] = other
            m.err[S.E_SUB] = sub
            return lane
        m.members[lane] = named & live
    return -1


@compiled_only
def _shfl(m, row, w, mask):
    mode = row[L.F_AUX]
    d0 = row[L.F_DST0]
    d1 = row[L.F_DST0 + 1] if row[L.F_NDST] > 1 else -1
    for lane in range(32):
        m.snap[lane] = read_src(m, row, 0, w, lane)
    results = m.shfl_values
    preds = m.shfl_preds
    for lane in range(32):
        if not (mask >> lane) & 1:
            continue
        group = m.members[lane]
        bval = np.int64(read_src(m, row, 1, w, lane) & np.uint64(0x1F))
        cfull = np.int64(read_src(m, row, 2, w, lane))
        cval = cfull & 0x1F
        seg = (cfull >> 8) & 0x1F
        max_lane = (lane & seg) | (cval & ~seg)
        min_lane = lane & seg
        if mode == L.SHFL_UP:
            j = lane - bval
            ok = j >= max_lane
        elif mode == L.SHFL_DOWN:
            j = lane + bval
            ok = j <= max_lane
        elif mode == L.SHFL_BFLY:
            j = lane ^ bval
            ok = j <= max_lane
        else:
            j = min_lane | (bval & ~seg)
            ok = j <= max_lane
        if not ok or j < 0 or j > 31 or not (group >> j) & 1:
            j = lane
        results[lane] = m.snap[j]
        preds[lane] = np.uint64(1) if ok else U64_0
    for lane in range(32):
        if (mask >> lane) & 1:
            if d0 >= 0:
                m.regs[w, d0, lane] = results[lane]
            if d1 >= 0:
                m.regs[w, d1, lane] = preds[lane]


@compiled_only
def _vote(m, row, w, mask):
    mode = row[L.F_AUX]
    d0 = row[L.F_DST0]
    ballot = 0
    for lane in range(32):
        if (mask >> lane) & 1 and (read_src(m, row, 0, w, lane) & np.uint64(1)):
            ballot |= 1 << lane
    if d0 < 0:
        return
    for lane in range(32):
        if not (mask >> lane) & 1:
            continue
        group = m.members[lane]
        votes = ballot & group
        if mode == L.VOTE_BALLOT:
            value = np.uint64(votes)
        elif mode == L.VOTE_ALL:
            value = np.uint64(1) if votes == group else U64_0
        elif mode == L.VOTE_ANY:
            value = np.uint64(1) if votes != 0 else U64_0
        else:
            value = np.uint64(1) if (votes == group or votes == 0) else U64_0
        m.regs[w, d0, lane] = value


@compiled_only
def _match(m, row, w, mask):
    mode = row[L.F_AUX]
    d0 = row[L.F_DST0]
    d1 = row[L.F_DST0 + 1] if row[L.F_NDST] > 1 else -1
    width_mask = np.uint64(0xFFFFFFFFFFFFFFFF) if c.TYPE_BYTES[row[L.F_TY]] == 8 else np.uint64(0xFFFFFFFF)
    for lane in range(32):
        m.snap[lane] = read_src(m, row, 0, w, lane) & width_mask
    for lane in range(32):
        if not (mask >> lane) & 1:
            continue
        group = m.members[lane]
        same = 0
        for other in range(32):
            if (group >> other) & 1 and m.snap[other] == m.snap[lane]:
                same |= 1 << other
        all_equal = same == group
        if mode == 1:
            value = np.uint64(same)
        else:
            value = np.uint64(group) if all_equal else U64_0
        if d0 >= 0:
            m.regs[w, d0, lane] = value
        if d1 >= 0:
            m.regs[w, d1, lane] = np.uint64(1) if all_equal else U64_0


@compiled_only
def _redux(m, row, w, mask):
    kind = row[L.F_AUX]
    ty = row[L.F_TY]
    op = c.OP_ADD
    if kind == L.REDUX_MIN:
        op = c.OP_MIN
    elif kind == L.REDUX_MAX:
        op = c.OP_MAX
    elif kind == L.REDUX_AND:
        op = c.OP_AND
    elif kind == L.REDUX_OR:
        op = c.OP_OR
    elif kind == L.REDUX_XOR:
        op = c.OP_XOR
    d0 = row[L.F_DST0]
    for lane in range(32):
        m.snap[lane] = read_src(m, row, 0, w, lane) if (mask >> lane) & 1 else U64_0
    done = 0                  # lanes whose group has been reduced
    for lane in range(32):
        if not (mask >> lane) & 1 or (done >> lane) & 1:
            continue
        group = m.members[lane]
        acc = U64_0
        first = True
        for j in range(32):
            if (group >> j) & 1:
                acc = m.snap[j] if first else alu_eval(op, ty, 0, 0, acc, m.snap[j], U64_0, U64_0)
                first = False
        for j in range(32):   # every member has this same group (checked by _members)
            if (group >> j) & 1:
                done |= 1 << j
                if d0 >= 0:
                    m.regs[w, d0, j] = acc


@compiled_only
def warp_op(m, row, w, mask):
    """Execute a warp-wide op on the lanes of ``mask``; returns -1, or the lane whose member mask is
    refused (``m.err`` says why)."""
    op = row[L.F_OP]
    if op == c.OP_ACTIVEMASK:
        d0 = row[L.F_DST0]
        for lane in range(32):
            if (mask >> lane) & 1:
                m.regs[w, d0, lane] = np.uint64(mask)
        return -1
    if mask == 0:
        return -1
    bad = _members(m, row, w, mask, 3 if op == c.OP_SHFL else 1)
    if bad >= 0:
        return bad
    if op == c.OP_SHFL:
        _shfl(m, row, w, mask)
    elif op == c.OP_VOTE:
        _vote(m, row, w, mask)
    elif op == c.OP_MATCH:
        _match(m, row, w, mask)
    elif op == c.OP_REDUX:
        _redux(m, row, w, mask)
    return -1
