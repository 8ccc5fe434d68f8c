"""The code matrix a launch with independent thread scheduling (``GPU(reconvergence="its")``) runs.

It is the lowered program with two marks the engine's ITS path reads (gpusim/engine/semantics/its.py);
an IPDOM launch runs the program's own matrix, untouched:

* every backward branch (target at or before the branch) carries ``BRA_ITS_BACKWARD`` in ``F_MODS``: a
  diverged group that takes it again in the same state is waiting for another thread and yields. Its
  ``F_SIZE`` (unused by a branch) holds the registers its loop can write, as a bitmap of register index
  mod 64: only those can differ between two passes, so the state signature reads only them;
* a ``bar.warp.sync`` (lowered as a nop carrying its member mask) gets its mask as a real source operand,
  so that the scoreboard waits for a mask register as for any other source.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.ptx.cfg import basic_blocks


def its_code(code: np.ndarray) -> np.ndarray:
    """A copy of ``code`` (a Program's matrix) marked for the ITS engine path."""
    marked = code.copy()
    if marked.shape[0] == 0:
        return marked
    pcs = np.arange(marked.shape[0])
    ops = marked[:, L.F_OP]
    backward = (ops == c.OP_BRA) & (marked[:, L.F_TARGET] <= pcs)
    marked[backward, L.F_MODS] |= L.BRA_ITS_BACKWARD
    for pc in np.flatnonzero(backward):
        marked[pc, L.F_SIZE] = loop_register_bits(code, int(pc))
    warpsync = (ops == c.OP_NOP) & (marked[:, L.F_AUX] == L.NOP_WARPSYNC) & (marked[:, L.F_SK0] != L.SK_NONE)
    marked[warpsync, L.F_NSRC] = 1
    return marked


def loop_register_bits(code: np.ndarray, branch_pc: int) -> int:
    """The registers the natural loop of the back edge at ``branch_pc`` writes (the header's block and every
    block that reaches the branch's without passing the header), as bits ``index % 64`` of an int64."""
    starts, succs = basic_blocks(code)
    ends = starts[1:] + [code.shape[0]]
    block_of = np.searchsorted(np.asarray(starts), np.arange(code.shape[0]), side="right") - 1
    header = int(block_of[code[branch_pc, L.F_TARGET]])
    preds: list[list[int]] = [[] for _ in starts]
    for b, outs in enumerate(succs):
        for s in outs:
            if s < len(starts):
                preds[s].append(b)
    loop = {header}
    work = [int(block_of[branch_pc])]
    while work:
        b = work.pop()
        if b not in loop:
            loop.add(b)
            work.extend(preds[b])
    bits = 0
    for b in loop:
        for pc in range(starts[b], ends[b]):
            for i in range(int(code[pc, L.F_NDST])):
                d = int(code[pc, L.F_DST0 + i])
                if d >= 0:
                    bits |= 1 << (d % 64)
    return bits - (1 << 64) if bits >= 1 << 63 else bits


ITS_EXTRA_STACK = 32
"""SIMT stack entries an ITS launch gets beyond IPDOM's: at most one per lane for groups split off."""


def engine_code(program, its: bool) -> np.ndarray:
    """The code matrix the engine runs for a launch: the program's own, or its ITS-marked copy when the
    launch schedules threads independently (``its``)."""
    if not its:
        return program.code
    cached = getattr(program, "_its_code", None)
    if cached is None or cached[0] is not program.code:
        cached = (program.code, its_code(program.code))
        program._its_code = cached
    return cached[1]
