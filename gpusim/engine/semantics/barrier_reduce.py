"""bar.red: a block barrier that also reduces a predicate over the block's threads.

PTX ISA, "bar.red": ``bar.red.popc.u32 d, a{, b}, {!}c`` counts the threads whose ``c`` is true;
``bar.red.and.pred`` / ``bar.red.or.pred`` ask whether all / any of them are. Every participating thread
gets the result when the barrier completes. (``__syncthreads_count / _and / _or`` compile to these.)

Executed in two issues of the same instruction, as the SASS has them (``BAR.RED`` then ``B2R.RESULT``):

1. Arrival: the warp records its active lanes' count of true predicates and of participating threads
   in ``m.bar_red[w]`` under its bar.red generation, then waits at the barrier (``STATUS_BARRIER``)
   without moving its pc.
2. After the release it issues the instruction again: it adds up the records of its block's warps that
   carry the same generation, writes the result to its active lanes and moves on.

Two record slots per warp (generation parity) are enough: a warp can only write generation g + 2 (over
g's slot) after passing barrier g + 1, which needs every warp's arrival at g + 1, after its read of g.
Warps that exited do not take part, as for bar.sync. Not modelled: bar.red with a thread count that
leaves out whole warps still sums every warp of the block at that generation (all warps that arrive).
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.operands import read_src
from gpusim.engine.semantics.simt import STATUS_BARRIER, STATUS_EXITED, STATUS_OK, normalize

RED_PHASE = 0        # 1 between the arrival and the read
RED_GENERATION = 1   # bar.red instructions this warp has completed
RED_SLOTS = 2        # then per slot (generation parity): tag (generation + 1), true threads, threads
# (2 + 2 * 3 = 8 fields per warp: state.py's bar_red)


@compiled_only
def _slot(generation):
    return RED_SLOTS + 3 * (generation % 2)


@compiled_only
def barrier_reduce(m, row, pc, w, mask, sp):
    """One issue of a bar.red at ``pc`` by warp ``w`` (active lanes ``mask``); returns a STATUS_* code."""
    red = m.bar_red
    generation = red[w, RED_GENERATION]
    slot = _slot(generation)
    predicate_source = row[L.F_NSRC] - 1
    if red[w, RED_PHASE] == 0 and mask == 0:
        m.stk_pc[w, sp] = pc + 1       # no thread takes part (all predicated off): nothing to wait for
        normalize(m.sp, m.stk_pc, m.stk_rpc, m.stk_mask, w)
        return STATUS_EXITED if m.sp[w] < 0 else STATUS_OK
    if red[w, RED_PHASE] == 0:
        true_threads = 0
        threads = 0
        first = -1
        for lane in range(32):
            if (mask >> lane) & 1:
                threads += 1
                if first < 0:
                    first = lane
                if read_src(m, row, predicate_source, w, lane) & np.uint64(1):
                    true_threads += 1
        red[w, slot] = generation + 1
        red[w, slot + 1] = true_threads
        red[w, slot + 2] = threads
        red[w, RED_PHASE] = 1
        lane = max(first, 0)
        m.mem_req[S.MR_BAR_ID] = np.int64(read_src(m, row, 0, w, lane))
        m.mem_req[S.MR_BAR_COUNT] = np.int64(read_src(m, row, 1, w, lane)) if predicate_source > 1 else 0
        return STATUS_BARRIER          # the pc stays: the warp reads the result when released
    true_threads = 0
    threads = 0
    first_warp = w - m.warp_index[w]
    for v in range(first_warp, first_warp + m.launch[S.L_WARPS_PER_BLOCK]):
        if red[v, slot] == generation + 1:
            true_threads += red[v, slot + 1]
            threads += red[v, slot + 2]
    kind = row[L.F_AUX]
    if kind == L.BAR_RED_POPC:
        result = true_threads
    elif kind == L.BAR_RED_AND:
        result = 1 if true_threads == threads else 0
    else:
        result = 1 if true_threads > 0 else 0
    d = row[L.F_DST0]
    if d >= 0:
        for lane in range(32):
            if (mask >> lane) & 1:
                m.regs[w, d, lane] = np.uint64(result)
    red[w, RED_PHASE] = 0
    red[w, RED_GENERATION] = generation + 1
    m.stk_pc[w, sp] = pc + 1
    normalize(m.sp, m.stk_pc, m.stk_rpc, m.stk_mask, w)
    return STATUS_EXITED if m.sp[w] < 0 else STATUS_OK
