"""Warp-wide operations: shfl.sync, vote.sync, activemask, match.sync, redux.sync.

Semantics follow the PTX ISA pseudo-code. Lanes of a warp execute in lockstep
here, so every source lane's value is read before any lane writes (the
snapshot in ``m.snap``). A lane that reads from an inactive source lane gets
its own value (PTX leaves it undefined; this choice is deterministic).
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics.alu import alu_eval
from gpusim.engine.semantics.operands import read_src

U64_0 = np.uint64(0)


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
        if not ok or j < 0 or j > 31 or not (mask >> j) & 1:
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
    if mode == L.VOTE_BALLOT:
        value = np.uint64(ballot)
    elif mode == L.VOTE_ALL:
        value = np.uint64(1) if ballot == mask else U64_0
    elif mode == L.VOTE_ANY:
        value = np.uint64(1) if ballot != 0 else U64_0
    else:
        value = np.uint64(1) if (ballot == mask or ballot == 0) else U64_0
    if d0 >= 0:
        for lane in range(32):
            if (mask >> lane) & 1:
                m.regs[w, d0, lane] = value


@compiled_only
def _match(m, row, w, mask):
    mode = row[L.F_AUX]
    d0 = row[L.F_DST0]
    d1 = row[L.F_DST0 + 1] if row[L.F_NDST] > 1 else -1
    width_mask = np.uint64(0xFFFFFFFFFFFFFFFF) if c.TYPE_BYTES[row[L.F_TY]] == 8 else np.uint64(0xFFFFFFFF)
    for lane in range(32):
        m.snap[lane] = read_src(m, row, 0, w, lane) & width_mask
    all_equal = True
    first = -1
    for lane in range(32):
        if (mask >> lane) & 1:
            if first < 0:
                first = lane
            elif m.snap[lane] != m.snap[first]:
                all_equal = False
    for lane in range(32):
        if not (mask >> lane) & 1:
            continue
        if mode == 1:
            same = 0
            for other in range(32):
                if (mask >> other) & 1 and m.snap[other] == m.snap[lane]:
                    same |= 1 << other
            value = np.uint64(same)
        else:
            value = np.uint64(mask) if all_equal else U64_0
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
    acc = U64_0
    first = True
    for lane in range(32):
        if (mask >> lane) & 1:
            value = read_src(m, row, 0, w, lane)
            acc = value if first else alu_eval(op, ty, 0, 0, acc, value, U64_0, U64_0)
            first = False
    d0 = row[L.F_DST0]
    for lane in range(32):
        if (mask >> lane) & 1 and d0 >= 0:
            m.regs[w, d0, lane] = acc


@compiled_only
def warp_op(m, row, w, mask):
    op = row[L.F_OP]
    if op == c.OP_SHFL:
        _shfl(m, row, w, mask)
    elif op == c.OP_VOTE:
        _vote(m, row, w, mask)
    elif op == c.OP_ACTIVEMASK:
        d0 = row[L.F_DST0]
        for lane in range(32):
            if (mask >> lane) & 1:
                m.regs[w, d0, lane] = np.uint64(mask)
    elif op == c.OP_MATCH:
        _match(m, row, w, mask)
    elif op == c.OP_REDUX:
        _redux(m, row, w, mask)
