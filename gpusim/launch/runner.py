"""From a checked launch to a Run: builds the engine state, runs the compiled
loop (functional or timed) slice by slice (``slices.drive``: Ctrl-C and
progress between slices), and turns engine status codes into the project's
errors (IllegalAddressError, DeadlockError, SimulationLimitError) with the
kernel, block, thread and PTX line they concern.
"""

from __future__ import annotations

import warnings

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.functional import RUN_DEADLOCK, RUN_ERROR, RUN_LIMIT, RUN_OK
from gpusim.engine.sm import compile_split  # noqa: F401  (registers what a cold compile hands to a helper process)
from gpusim.errors import DeadlockError, SimulationLimitError
from gpusim.launch.checks import check_geometry, check_resources, dims3, pack_args
from gpusim.launch.clusters import cluster_size_of, resolve_cluster, set_cluster
from gpusim.launch.cooperative import check_cooperative
from gpusim.launch.faults import activity_report, raise_engine_error, where
from gpusim.launch.functional_threads import run_blocks
from gpusim.launch.printf import deliver_printf
from gpusim.launch.progress import ProgressReporter
from gpusim.launch.run import Run
from gpusim.launch.sanitize import configure as configure_sanitizers
from gpusim.launch.sanitize import finish as finish_sanitizers
from gpusim.ptx.its_code import ITS_EXTRA_STACK, engine_code

DEFAULT_MAX_WARP_INSTRUCTIONS = 1_000_000_000
"""A functional run's limit unless ``launch(..., max_warp_instructions=N)`` gives one: 50 times the largest
shipped launch (the decode lab's GEMM, 19 M), one to three minutes of a runaway kernel at the engine's speed."""


def stack_depth(program, max_call_depth: int = 0) -> int:
    """SIMT stack entries per warp: two per branch (at most 256), and with calls (gpusim.ptx.calls) one call
    entry and the branches' entries again per level of calls (``max_call_depth`` levels when a call can
    recurse, else one per function)."""
    ops = program.code[:, L.F_OP] if program.n_inst else np.zeros(0, np.int64)
    branches = int(np.count_nonzero(ops == c.OP_BRA))
    depth = max(4, min(2 * branches + 4, 256))
    functions = int(np.count_nonzero(ops == c.OP_FRET))
    if functions:
        levels = max_call_depth if program.call_recursive else functions
        depth += min(levels, max_call_depth) * (1 + min(2 * branches, 256))
    return depth


def local_bytes_per_thread(program, config) -> int:
    """Local memory per thread: the kernel's frame and the deepest call chain's; when a call can recurse,
    ``max_call_depth`` + 1 of the largest frame (the one past the limit holds the arguments the caller stores
    before its call is refused)."""
    if not program.call_recursive:
        return program.local_bytes
    return program.local_bytes + (config.max_call_depth + 1) * program.call_frame_bytes


def launch_array(config, grid3, block3, occ, total_shared, dynamic_shared, program, heap_bytes) -> np.ndarray:
    launch = np.zeros(S.LAUNCH_FIELDS, dtype=np.int64)
    launch[S.L_NTID_X:S.L_NTID_Z + 1] = block3
    launch[S.L_NCTAID_X:S.L_NCTAID_Z + 1] = grid3
    threads = block3[0] * block3[1] * block3[2]
    launch[S.L_THREADS_PER_BLOCK] = threads
    launch[S.L_WARPS_PER_BLOCK] = (threads + 31) // 32
    launch[S.L_NSM] = config.sms
    launch[S.L_DYNAMIC_SMEM] = dynamic_shared
    launch[S.L_SHARED_BYTES] = total_shared
    launch[S.L_HEAP_BYTES] = heap_bytes
    launch[S.L_LOCAL_BYTES] = local_bytes_per_thread(program, config)
    launch[S.L_PARAM_BYTES] = program.param_bytes
    launch[S.L_N_INST] = program.n_inst
    launch[S.L_STACK_DEPTH] = stack_depth(program, config.max_call_depth)
    launch[S.L_CALL_DEPTH] = config.max_call_depth
    launch[S.L_MAX_WARPS_PER_SM] = config.max_warps_per_sm
    return launch


def execute_launch(gpu, kernel, grid, block, args, shared_bytes, *, timing, regs, trace,
                   max_warp_instructions, progress=False, cooperative=False, cluster=None,
                   cluster_nonportable=False):
    config = gpu.config
    program = kernel.program
    grid3 = dims3(grid, "grid")
    block3 = dims3(block, "block")
    check_geometry(config, grid3, block3)
    params = pack_args(program, args, gpu.heap)
    threads = block3[0] * block3[1] * block3[2]
    regs_per_thread, regs_source = kernel.registers_per_thread(regs)
    occ, total_shared = check_resources(config, program, threads, regs_per_thread, shared_bytes)
    if regs_source.startswith("estimate") and "registers" in occ.limiters:
        warnings.warn(f"gpusim: kernel '{program.name}': registers per thread ({regs_per_thread}) are gpusim's "
                      f"estimate (a linear-scan allocation of the generated code), and they set the occupancy here "
                      f"({occ.blocks_per_sm} "
                      "blocks/SM, registers among its limits); give the real count with regs= or a "
                      "'// gpusim: regs=N' line in the PTX (ptxas -v prints it)", stacklevel=3)
    n_blocks = grid3[0] * grid3[1] * grid3[2]
    heap = gpu.heap
    check_cooperative(heap, config, program, n_blocks, occ, cooperative=cooperative, timing=timing)
    cluster3 = resolve_cluster(config, program, grid3, cluster, cluster_nonportable)
    launch = launch_array(config, grid3, block3, occ, total_shared, shared_bytes, program, heap.data.size)
    set_cluster(launch, cluster3)
    configure_sanitizers(gpu, launch)
    if getattr(gpu, "reconvergence", "ipdom") == "its":
        launch[S.L_RECONVERGENCE] = S.RECONV_ITS
        launch[S.L_STACK_DEPTH] += ITS_EXTRA_STACK      # groups split off at spins and warp syncs
    common = dict(kernel=kernel, program=program, config=config, grid=grid3, block=block3,
                  shared_bytes=total_shared, regs_per_thread=regs_per_thread, regs_source=regs_source,
                  occupancy=occ)
    if not timing:
        # a cooperative grid: every block resident at once; a cluster launch: a cluster's blocks
        resident = n_blocks if cooperative else max(cluster_size_of(launch), 1)

        def machine(launch_array):
            return S.make_machine(warp_slots=resident * int(launch[S.L_WARPS_PER_BLOCK]), n_regs=program.n_regs,
                                  stack_depth=int(launch[S.L_STACK_DEPTH]), block_slots=resident,
                                  shared_bytes=total_shared, local_bytes=int(launch[S.L_LOCAL_BYTES]),
                                  heap=heap.data, valid=heap.valid, params=params, launch=launch_array,
                                  n_inst=program.n_inst,
                                  printf_bytes=config.printf_fifo_bytes if program.has_printf else 0)

        limit = max_warp_instructions or DEFAULT_MAX_WARP_INSTRUCTIONS
        code = engine_code(program, launch[S.L_RECONVERGENCE] == S.RECONV_ITS)
        reporter = ProgressReporter(progress, program.name, n_blocks)
        try:
            done = run_blocks(gpu, machine, launch, program, code, 0, n_blocks, limit, resident=resident,
                              on_slice=(lambda blocks, executed: reporter.report(blocks, executed, None))
                              if reporter.active else None)
        finally:
            reporter.close()
        m = done.machine
        _check_status(done.status, m, program, done.bad_block, limit, done.executed, n_blocks,
                      max_warp_instructions is not None)
        run = Run(**common, pc_counts=done.pc_counts, timing=False)
        return finish_sanitizers(gpu, deliver_printf(gpu, run, m, program), m, program)
    from gpusim.launch.timed import run_timed_launch

    if getattr(gpu, "sampling", None) is not None:       # GPU(sampling=...): gpusim.launch.sampling
        from gpusim.launch.sampling import run_sampled_launch

        return run_sampled_launch(gpu, common, params, launch, n_blocks, trace=trace, progress=progress,
                                  cooperative=cooperative, max_warp_instructions=max_warp_instructions,
                                  check_functional=_check_status, default_limit=DEFAULT_MAX_WARP_INSTRUCTIONS,
                                  clustered=cluster3 is not None)
    return run_timed_launch(gpu, common, params, launch, n_blocks, trace=trace, progress=progress)


def _check_status(status, m, program, bad_block, limit, executed, n_blocks, given) -> None:
    if status == RUN_OK:
        return
    if status == RUN_ERROR:
        raise_engine_error(m, program)
    if status == RUN_DEADLOCK:
        lines = []
        for w in range(m.sp.shape[0]):
            if m.sp[w] >= 0:
                pc = int(m.stk_pc[w, m.sp[w]]) - (0 if m.bar_red[w, 0] else 1)   # a waiting bar.red keeps its pc
                lines.append(f"  warp {int(m.warp_index[w])}: waits at the barrier at {where(program, pc)}")
        raise DeadlockError(f"kernel '{program.name}' block {bad_block}: a barrier can never complete "
                            f"(warps that exited or wait elsewhere never arrive):\n" + "\n".join(lines))
    if status == RUN_LIMIT:
        how = "a larger max_warp_instructions=" if given else "gpu.launch(..., max_warp_instructions=N)"
        raise SimulationLimitError(
            f"kernel '{program.name}' (functional run): stopped after {executed:,} warp-instructions, the limit "
            f"({limit:,}), in block {bad_block} ({bad_block} of {n_blocks} blocks done); an endless loop, or a kernel "
            f"longer than the limit: raise it with {how}.\n" + activity_report(m, program))
