"""The code matrix a launch with independent thread scheduling (``GPU(reconvergence="its")``) runs.

It is the lowered program with two marks the engine's ITS path reads (gpusim/engine/semantics/its.py);
an IPDOM launch runs the program's own matrix, untouched:

* every backward branch (target at or before the branch) carries ``BRA_ITS_BACKWARD`` in ``F_MODS``: a
  diverged group that takes it again in the same state is waiting for another thread and yields;
* a ``bar.warp.sync`` (lowered as a nop carrying its member mask) gets its mask as a real source operand,
  so that the scoreboard waits for a mask register as for any other source.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L


def its_code(code: np.ndarray) -> np.ndarray:
    """A copy of ``code`` (a Program's matrix) marked for the ITS engine path."""
    marked = code.copy()
    if marked.shape[0] == 0:
        return marked
    pcs = np.arange(marked.shape[0])
    ops = marked[:, L.F_OP]
    backward = (ops == c.OP_BRA) & (marked[:, L.F_TARGET] <= pcs)
    marked[backward, L.F_MODS] |= L.BRA_ITS_BACKWARD
    warpsync = (ops == c.OP_NOP) & (marked[:, L.F_AUX] == L.NOP_WARPSYNC) & (marked[:, L.F_SK0] != L.SK_NONE)
    marked[warpsync, L.F_NSRC] = 1
    return marked


ITS_EXTRA_STACK = 32
"""SIMT stack entries an ITS launch gets beyond IPDOM's: at most one per lane for groups split off."""


def engine_code(program, its: bool) -> np.ndarray:
    """The code matrix the engine runs for a launch: the program's own, or its ITS-marked copy when the
    launch schedules threads independently (``its``)."""
    return its_code(program.code) if its else program.code
