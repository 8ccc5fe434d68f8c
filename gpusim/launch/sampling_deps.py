"""Which kernels sampled simulation must run in full: grid-wide dependencies, found statically.

Sampling (gpusim.launch.sampling) times a prefix of the grid's waves and extrapolates the rest; that is sound
only when the blocks are independent, so that the blocks not timed cost what the timed ones did. A kernel is
run in full, with the reason, when:

* the launch is cooperative or the kernel reads the grid barrier (cooperative groups' ``this_grid().sync()``);
* the result of a global atomic (``atom`` on global or generic memory) steers control flow: a guard predicate
  (of a branch, or of an instruction if-conversion predicated) depends on it, through any chain of
  instructions. This covers work queues (``i = atomicAdd(&next, 1); if (i < n) ...``) and the "last block
  finishes the reduction" pattern (``if (atomicInc(&count, ...) == gridDim.x - 1)``);
* the grid is persistent-style: it has no more blocks than fit on the GPU at once (one wave), so there is no
  later wave to extrapolate (grid-stride loops over a resident grid are the usual case);
* device printf, a sanitizer or a what-if re-run is on (their output covers every block's execution in order).

Simplified: the taint analysis is flow-insensitive over register indices (a register the atomic wrote taints
every later use of the same register: conservative); values passed through memory (an atomic's result stored
and loaded again) and spin-waits on ordinary volatile loads are not followed.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L


def atomic_steers_control(program) -> int | None:
    """The PTX line of a global atomic whose result reaches a guard predicate, or None."""
    code = program.code
    if program.n_inst == 0:
        return None
    ops = code[:, L.F_OP]
    atomic_rows = [i for i in np.nonzero(ops == c.OP_ATOM)[0]
                   if code[i, L.F_SPACE] in (L.SP_GLOBAL, L.SP_GENERIC)]
    if not atomic_rows:
        return None
    tainted: dict[int, int] = {}         # register -> PTX line of the atomic it came from
    for i in atomic_rows:
        for d in _destinations(code[i]):
            tainted.setdefault(d, int(code[i, L.F_LINE]))
    changed = True
    while changed:
        changed = False
        for row in code[:program.n_inst]:
            origin = next((tainted[r] for r in _sources(row) if r in tainted), None)
            if origin is None:
                continue
            for d in _destinations(row):
                if d not in tainted:
                    tainted[d] = origin
                    changed = True
    for row in code[:program.n_inst]:
        guard = int(row[L.F_GUARD])
        if guard >= 0 and guard in tainted:
            return tainted[guard]
    return None


def _destinations(row) -> list[int]:
    n = int(row[L.F_NDST])
    return [int(r) for r in row[L.F_DST0:L.F_DST0 + min(n, L.MAX_DST)] if r >= 0]


def _sources(row) -> list[int]:
    regs = []
    for i in range(min(int(row[L.F_NSRC]), L.MAX_SRC)):
        kind = int(row[L.F_SK0 + 2 * i])
        if kind in (L.SK_REG, L.SK_REGNEG):
            regs.append(int(row[L.F_SK0 + 2 * i + 1]))
    if int(row[L.F_ABASE]) >= 0:
        regs.append(int(row[L.F_ABASE]))
    return regs


def full_run_reason(gpu, program, n_blocks: int, wave_blocks: int, *, cooperative: bool,
                    clustered: bool = False) -> str:
    """Why this launch must be simulated in full ("" when it may be sampled)."""
    if cooperative or program.grid_sync_line is not None:
        return "cooperative launch (grid-wide synchronisation): every block must be simulated"
    if clustered:
        return ("thread-block cluster launch: the sampler's waves place blocks one by one, a cluster's blocks "
                "start together and share distributed shared memory")
    line = atomic_steers_control(program)
    if line is not None:
        return (f"the result of a global atomic ({program.file}:{line}) steers control flow: blocks depend on "
                "each other through it")
    if n_blocks <= wave_blocks:
        return (f"persistent-style grid: {n_blocks} blocks fit on the GPU at once ({wave_blocks} per wave), so "
                "there is no later wave to extrapolate")
    if program.has_printf:
        return "device printf: its output covers every block"
    if getattr(gpu, "sanitize", None):
        return "a sanitizer is on: it checks every block"
    if getattr(gpu, "what_if_switches", None) is not None:
        return "a what-if re-run times the whole launch"
    return ""
