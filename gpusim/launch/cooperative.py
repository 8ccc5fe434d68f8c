"""Cooperative launches (``gpu.launch(..., cooperative=True)``), as ``cudaLaunchCooperativeKernel`` does them.

* The whole grid must be resident at once: at most ``blocks per SM (occupancy) x SMs`` blocks, else CUDA's
  ``cudaErrorCooperativeLaunchTooLarge`` (a LaunchError here).
* A kernel that reads the grid barrier (``%envreg1``/``%envreg2``: cooperative groups' ``this_grid().sync()``,
  see ``gpusim.ptx.lower_cg``) needs a cooperative launch; without one CUDA's grid group is invalid and the
  kernel traps, here it is refused before it runs, naming the line.
* Before each cooperative launch the kernel's grid barrier is zeroed (the driver's barrier starts clean).

Both paths keep every block of a cooperative grid resident at once (the functional path runs them as
coroutines, ``gpusim.engine.semantics.functional``), so a grid-wide sync completes on either.
"""

from __future__ import annotations

import numpy as np

from gpusim.errors import LaunchError


def check_cooperative(heap, config, program, n_blocks: int, occ, *, cooperative, timing: bool) -> None:
    """CUDA's cooperative-launch rules for ``program`` over ``n_blocks`` blocks of occupancy ``occ``."""
    if not isinstance(cooperative, bool | np.bool_):
        raise LaunchError(f"cooperative must be True or False, got {cooperative!r}")
    line = program.grid_sync_line
    if line is not None and not cooperative:
        raise LaunchError(f"kernel '{program.name}' synchronizes the whole grid (cooperative groups' "
                          f"this_grid().sync(): the grid barrier %envreg read at {program.file}:{line}), which "
                          "needs a cooperative launch (cudaLaunchCooperativeKernel): use "
                          "gpu.launch(..., cooperative=True)")
    if not cooperative:
        return
    resident = occ.blocks_per_sm * config.sms
    if n_blocks > resident:
        raise LaunchError(f"too many blocks in cooperative launch (cudaErrorCooperativeLaunchTooLarge): kernel "
                          f"'{program.name}' launches {n_blocks} blocks, but at most {occ.blocks_per_sm} per SM "
                          f"(limited by {occ.limiter}) x {config.sms} SMs = {resident} can be resident at once")
    if program.grid_barrier is not None:
        heap.view(program.grid_barrier, 8)[:] = 0
