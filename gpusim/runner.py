"""From a checked launch to a Run: builds the engine state, runs the compiled
loop (functional or timed), and turns engine status codes into the project's
errors (IllegalAddressError, DeadlockError, SimulationLimitError) with the
kernel, block, thread and PTX line they concern.
"""

from __future__ import annotations

import numpy as np

from gpusim.engine import codes as c
from gpusim.engine import layout as L
from gpusim.engine import state as S
from gpusim.engine.functional import RUN_DEADLOCK, RUN_ERROR, RUN_LIMIT, RUN_OK, run_functional
from gpusim.errors import DeadlockError, IllegalAddressError, SimulationLimitError
from gpusim.launch import check_geometry, check_resources, dims3, pack_args
from gpusim.run import Run


def stack_depth(program) -> int:
    branches = int(np.count_nonzero(program.code[:, L.F_OP] == c.OP_BRA)) if program.n_inst else 0
    return max(4, min(2 * branches + 4, 256))


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
    launch[S.L_LOCAL_BYTES] = program.local_bytes
    launch[S.L_PARAM_BYTES] = program.param_bytes
    launch[S.L_N_INST] = program.n_inst
    launch[S.L_STACK_DEPTH] = stack_depth(program)
    launch[S.L_MAX_WARPS_PER_SM] = config.max_warps_per_sm
    return launch


def thread_of(m, launch, w, lane) -> tuple[tuple, tuple]:
    """(block index, thread index) of lane ``lane`` of warp slot ``w``, as (x, y, z) tuples."""
    b = int(m.warp_block[w])
    gx, gy = int(launch[S.L_NCTAID_X]), int(launch[S.L_NCTAID_Y])
    t = int(m.warp_index[w]) * 32 + lane
    tx, ty = int(launch[S.L_NTID_X]), int(launch[S.L_NTID_Y])
    return (b % gx, (b // gx) % gy, b // (gx * gy)), (t % tx, (t // tx) % ty, t // (tx * ty))


def where(program, pc: int) -> str:
    if 0 <= pc < program.n_inst:
        return f"{program.file}:{program.lines[pc]} `{program.texts[pc]}`"
    return f"{program.file} (pc {pc})"


def raise_engine_error(m, program) -> None:
    kind = int(m.err[S.E_KIND])
    pc, w, lane, address = (int(m.err[S.E_PC]), int(m.err[S.E_WARP]), int(m.err[S.E_LANE]),
                            int(m.err[S.E_ADDRESS]))
    block, thread = thread_of(m, m.launch, w, lane)
    line = program.lines[pc] if 0 <= pc < program.n_inst else 0
    head = f"kernel '{program.name}' block {block} thread {thread} at {where(program, pc)}"
    if kind in (S.ERR_OUT_OF_BOUNDS, S.ERR_MISALIGNED):
        what = "outside every allocation" if kind == S.ERR_OUT_OF_BOUNDS else "misaligned for its size"
        space = int(program.code[pc, L.F_SPACE]) if 0 <= pc < program.n_inst else L.SP_GENERIC
        if kind == S.ERR_OUT_OF_BOUNDS and (space == L.SP_SHARED or (
                space == L.SP_GENERIC and L.SHARED_WINDOW <= address < L.SHARED_WINDOW + L.WINDOW_BYTES)):
            what = "outside the block's shared memory"
        elif kind == S.ERR_OUT_OF_BOUNDS and (space == L.SP_LOCAL or (
                space == L.SP_GENERIC and L.LOCAL_WINDOW <= address < L.LOCAL_WINDOW + L.WINDOW_BYTES)):
            what = "outside the thread's local memory"
        raise IllegalAddressError(f"an illegal memory access was encountered: {head}: address 0x{address:x} "
                                  f"is {what}", kernel=program.name, block=block, thread=thread,
                                  line=line, address=address)
    if kind == S.ERR_STACK_OVERFLOW:
        raise SimulationLimitError(f"{head}: divergence nested deeper than the SIMT stack "
                                   f"({m.stk_pc.shape[1]} entries)")
    if kind == S.ERR_TRAP:
        raise IllegalAddressError(f"an illegal instruction was encountered (trap): {head}",
                                  kernel=program.name, block=block, thread=thread, line=line, address=0)
    raise IllegalAddressError(f"engine error {kind}: {head}", kernel=program.name, block=block, thread=thread,
                              line=line, address=address)


def execute_launch(gpu, kernel, grid, block, args, shared_bytes, *, timing, regs, trace,
                   max_warp_instructions):
    config = gpu.config
    program = kernel.program
    grid3 = dims3(grid, "grid")
    block3 = dims3(block, "block")
    check_geometry(config, grid3, block3)
    params = pack_args(program, args)
    threads = block3[0] * block3[1] * block3[2]
    regs_per_thread, regs_source = kernel.registers_per_thread(regs)
    occ, total_shared = check_resources(config, program, threads, regs_per_thread, shared_bytes)
    n_blocks = grid3[0] * grid3[1] * grid3[2]
    heap = gpu.heap
    launch = launch_array(config, grid3, block3, occ, total_shared, shared_bytes, program, heap.data.size)
    common = dict(kernel=kernel, program=program, config=config, grid=grid3, block=block3,
                  shared_bytes=total_shared, regs_per_thread=regs_per_thread, regs_source=regs_source,
                  occupancy=occ)
    if not timing:
        m = S.make_machine(warp_slots=int(launch[S.L_WARPS_PER_BLOCK]), n_regs=program.n_regs,
                           stack_depth=int(launch[S.L_STACK_DEPTH]), block_slots=1, shared_bytes=total_shared,
                           local_bytes=program.local_bytes, heap=heap.data, valid=heap.valid, params=params,
                           launch=launch, n_inst=program.n_inst)
        limit = max_warp_instructions or config.max_cycles
        status, executed, bad_block = run_functional(m, program.code, n_blocks, limit)
        _check_status(status, m, program, bad_block, limit, executed)
        return Run(**common, pc_counts=m.pc_counts.copy(), timing=False)
    from gpusim.engine.timed import run_timed_launch

    return run_timed_launch(gpu, common, params, launch, n_blocks, trace=trace)


def _check_status(status, m, program, bad_block, limit, executed) -> None:
    if status == RUN_OK:
        return
    if status == RUN_ERROR:
        raise_engine_error(m, program)
    if status == RUN_DEADLOCK:
        lines = []
        for w in range(m.sp.shape[0]):
            if m.sp[w] >= 0:
                pc = int(m.stk_pc[w, m.sp[w]]) - 1
                lines.append(f"  warp {int(m.warp_index[w])}: waits at the barrier at {where(program, pc)}")
        raise DeadlockError(f"kernel '{program.name}' block {bad_block}: a barrier can never complete "
                            f"(warps that exited or wait elsewhere never arrive):\n" + "\n".join(lines))
    if status == RUN_LIMIT:
        raise SimulationLimitError(f"kernel '{program.name}': stopped after {executed} warp-instructions "
                                   f"(limit {limit}); an endless loop, or raise max_warp_instructions")
