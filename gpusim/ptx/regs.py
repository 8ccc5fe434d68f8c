"""Registers per thread of a kernel when neither the user nor ptxas says.

The estimate is the peak number of simultaneously live 32-bit register units
(a 64-bit register counts 2, predicates none) from a backward liveness
analysis over the lowered code, plus 2 for what ptxas reserves, rounded up to
an even number and at least 8. It is an estimate: ptxas schedules and
rematerialises, so real counts differ by a few registers either way. Give
``regs=`` at launch or a ``// gpusim: regs=N`` line in the PTX for an exact figure.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import layout as L
from gpusim.ptx.cfg import basic_blocks

_WIDE = {"b64", "u64", "s64", "f64"}


def _uses_defs(code: np.ndarray, pc: int) -> tuple[int, int]:
    """(registers read, registers written) by the instruction at ``pc``, as bit sets (Python ints)."""
    row = code[pc]
    uses = 0
    for i in range(int(row[L.F_NSRC])):
        if row[L.F_SK0 + 2 * i] in (L.SK_REG, L.SK_REGNEG):
            uses |= 1 << int(row[L.F_SK0 + 2 * i + 1])
    if row[L.F_ABASE] >= 0:
        uses |= 1 << int(row[L.F_ABASE])
    if row[L.F_GUARD] >= 0:
        uses |= 1 << int(row[L.F_GUARD])
    defs = 0
    for i in range(int(row[L.F_NDST])):
        if row[L.F_DST0 + i] >= 0:
            defs |= 1 << int(row[L.F_DST0 + i])
    return uses, defs


def estimate_registers(code: np.ndarray, reg_names: list, reg_types: dict) -> int:
    """The estimate described above. Live sets are bit sets (Python ints), so the analysis is linear in
    the code size times the passes the dataflow needs, not in code size times registers."""
    n = code.shape[0]
    if n == 0:
        return 8
    narrow = wide = 0
    for i, name in enumerate(reg_names):
        kind = reg_types.get(name, "b32")
        if kind in _WIDE:
            wide |= 1 << i
        elif kind != "pred":
            narrow |= 1 << i
    starts, succs = basic_blocks(code)
    ends = starts[1:] + [n]
    uses_defs = [_uses_defs(code, pc) for pc in range(n)]
    live_in = [0] * (len(starts) + 1)

    def live_out(b: int) -> int:
        live = 0
        for s in succs[b]:
            live |= live_in[s]
        return live

    changed = True
    while changed:
        changed = False
        for b in reversed(range(len(starts))):
            live = live_out(b)
            for pc in range(ends[b] - 1, starts[b] - 1, -1):
                uses, defs = uses_defs[pc]
                live = (live & ~defs) | uses
            if live != live_in[b]:
                live_in[b] = live
                changed = True
    peak = 0
    for b in range(len(starts)):
        live = live_out(b)
        for pc in range(ends[b] - 1, starts[b] - 1, -1):
            uses, defs = uses_defs[pc]
            live = (live & ~defs) | uses
            peak = max(peak, (live & narrow).bit_count() + 2 * (live & wide).bit_count())
    estimate = peak + 2
    estimate += estimate % 2
    return max(8, min(estimate, 255))
