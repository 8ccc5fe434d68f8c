"""The compiled core (numba): plain functions over numpy arrays, returning plain arrays and status codes.

* ``semantics/`` — what a warp-instruction does: per-lane ALU semantics, memory accesses, warp-level
  operations, the SIMT stack, barriers, the machine state, and the functional-only loop;
* ``memory/`` — the memory hierarchy's timing: coalescer, shared-memory banks, sectored caches,
  bandwidth servers and the L1 → L2 → DRAM path;
* ``sm/`` — an SM's timing: scoreboard and pipes, warp schedulers, stall accounting and the timed loop;
* ``jit.py`` (the compile decorators) and ``bits.py`` (bit helpers) serve all three.

The engine knows nothing of ``Run``, ``Trace`` or the launch API: ``gpusim.launch`` builds its state and
wraps what it returns.
"""
