"""Engine status to the project's errors: which block and thread a warp slot's lane is, where a pc is in
the PTX, and the error an engine error code stands for (``IllegalAddressError``, ``UninitializedMemoryError``,
``BarrierError``, ``SimulationLimitError``), with the kernel, block, thread and PTX line it concerns (addresses
as unsigned 64-bit hex, as CUDA prints them); ``activity_report`` says what a kernel stopped at
its simulation limit was doing (its most executed instructions, where its warps stand). ``translating`` is
the engine's safety net: any exception that is not one of the project's own becomes an ``InternalError``
carrying the kernel and, from the engine state, the block, thread and PTX line the engine was at."""

from __future__ import annotations

import contextlib

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.cluster import CLERR_EXITED, CLERR_RANK
from gpusim.errors import (
    BarrierError,
    CallStackOverflowError,
    ClusterAccessError,
    GpusimError,
    IllegalAddressError,
    InitcheckError,
    InternalError,
    MbarrierError,
    MemcheckError,
    SimulationLimitError,
    SynccheckError,
    WarpSyncError,
)
from gpusim.launch.clusters import cluster_size_of
from gpusim.launch.device_memory import hex_address

_U64 = (1 << 64) - 1


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
                            int(m.err[S.E_ADDRESS]) & _U64)
    block, thread = thread_of(m, m.launch, w, lane)
    if kind == S.ERR_BARRIER:
        error = _barrier_error(m, program, pc, w, address, block)
        sanitizer_report(error, "Barrier error", "a block-wide barrier some threads skip", program, pc)
        raise error
    if kind == S.ERR_ASSERT:
        from gpusim.launch.assertions import assertion_error

        raise assertion_error(m, program, thread_of, where)
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
        elif kind == S.ERR_OUT_OF_BOUNDS and (space == L.SP_PARAM or (
                space == L.SP_GENERIC and L.PARAM_WINDOW <= address < L.PARAM_WINDOW + L.WINDOW_BYTES)):
            what = f"outside the kernel's {int(m.launch[S.L_PARAM_BYTES])} bytes of parameters"
        illegal = IllegalAddressError(f"an illegal memory access was encountered: {head}: address "
                                    f"{hex_address(address)} is {what}", kernel=program.name, block=block,
                                      thread=thread, line=line, address=address)
        illegal.in_heap = what == "outside every allocation"
        illegal.access_bytes = int(program.code[pc, L.F_SIZE] * max(program.code[pc, L.F_VEC], 1)) \
            if 0 <= pc < program.n_inst else 1
        raise illegal
    if kind == S.ERR_UNINITIALIZED:
        uninit = InitcheckError(f"uninitialized global memory read (initcheck): {head}: address "
                                f"{hex_address(address)} was never written by the host or a kernel",
                                kernel=program.name, block=block, thread=thread, line=line, address=address)
        sanitizer_report(uninit, "Uninitialized __global__ memory read",
                         f"of address {hex_address(address)}", program, pc)
        raise uninit
    if kind == S.ERR_MEMCHECK:
        declared = int(m.launch[S.L_SHARED_BYTES])
        overrun = MemcheckError(f"memcheck: invalid __shared__ access: {head}{_cuda_line(program, pc)}: address "
                                f"{address} is past the block's {declared} bytes of shared memory (inside the "
                                f"{int(m.launch[S.L_SHARED_LIMIT])}-byte allocation the hardware would run it in)",
                                kernel=program.name, block=block, thread=thread, line=line, address=address)
        size = int(program.code[pc, L.F_SIZE] * max(program.code[pc, L.F_VEC], 1))
        sanitizer_report(overrun, f"Invalid __shared__ access of size {size} bytes",
                         f"address {address} is out of bounds ({declared} bytes declared)", program, pc)
        raise overrun
    if kind == S.ERR_STACK_OVERFLOW:
        raise SimulationLimitError(f"{head}: divergence nested deeper than the SIMT stack "
                                   f"({m.stk_pc.shape[1]} entries)")
    if kind == S.ERR_TRAP:
        raise IllegalAddressError(f"an illegal instruction was encountered (trap): {head}",
                                  kernel=program.name, block=block, thread=thread, line=line, address=0)
    if kind == S.ERR_CALL_DEPTH:
        limit = int(m.launch[S.L_CALL_DEPTH])
        raise CallStackOverflowError(
            f"call stack overflow: {head}: this call would be the thread's call number {address} in nested "
            f"calls, past the limit of {limit} (max_call_depth; CUDA limits the stack in bytes, "
            "cudaLimitStackSize): an endless recursion, or raise it with GPU(..., max_call_depth=N)",
            kernel=program.name, block=block, thread=thread, line=line, depth=address)
    if kind == S.ERR_SYNC:
        raise _sync_error(m, program, head, block, thread, line, lane, address)
    if kind == S.ERR_ASYNC:
        raise _async_error(m, head, program.name, block, thread, line, address)
    if kind == S.ERR_CLUSTER:
        raise _cluster_error(m, head, program.name, block, thread, line, address)
    if kind == S.ERR_TEXTURE:
        from gpusim.launch.textures import texture_error

        raise texture_error(program, head, int(m.err[S.E_SUB]), address, kernel=program.name, block=block,
                            thread=thread, line=line)
    raise InternalError(f"internal error: unknown engine error code {kind}: {head}", kernel=program.name,
                        block=block, thread=thread, line=line)


_ASYNC_RULES = {
    S.ASYNC_UNINIT: ("uninitialised", "the 8 bytes at shared address {a} are not an initialised mbarrier "
                     "(mbarrier.init first; after mbarrier.inval the object is gone)"),
    S.ASYNC_UNDERFLOW: ("arrivals", "an arrival of count {x} is more than the phase's pending arrivals (or "
                        "not in 1..2^20-1) on the mbarrier at shared address {a}: more threads arrive than "
                        "mbarrier.init counted?"),
    S.ASYNC_TX_RANGE: ("tx-count", "the tx-count of the mbarrier at shared address {a} leaves the range "
                       "-(2^20-1)..2^20-1 (value {x})"),
    S.ASYNC_INIT_COUNT: ("init count", "mbarrier.init's count {x} is not in 1..2^20-1"),
    S.ASYNC_BULK_ALIGN: ("alignment", "cp.async.bulk address {a} is not 16-byte aligned"),
    S.ASYNC_BULK_SIZE: ("size", "cp.async.bulk size {x} is not a positive multiple of 16 bytes"),
    S.ASYNC_NO_COMPLETE: ("noComplete", "mbarrier.arrive.noComplete completed the phase of the mbarrier at "
                          "shared address {a}"),
    S.ASYNC_BULK_SPACE: ("space", "address {a} is not in shared memory, where an mbarrier lives"),
    S.ASYNC_TMAP: ("tensor map", "cp.async.bulk.tensor: address {a} does not hold a tensor map (pass "
                   "gpu.tensor_map(...) to a .param .b8 [128] parameter and use its address)"),
    S.ASYNC_TMAP_RANK: ("rank", "cp.async.bulk.tensor: the instruction's dimensionality differs from the tensor "
                        "map's rank {x} (map at {a})"),
    S.ASYNC_TMA_ALIGN: ("alignment", "cp.async.bulk.tensor: shared address {a} is not 128-byte aligned"),
    S.ASYNC_LATE_ARRIVAL: ("arrivals", "the arrival of a cp.async.mbarrier.arrive, made when its copies landed "
                           "(found here, at the next mbarrier operation of the block), is more than the phase's "
                           "pending arrivals on the mbarrier at shared address {a}: more arrivals than "
                           "mbarrier.init counted (.noinc counts against them)?"),
    S.ASYNC_TMA_SLOTS: ("in flight", "cp.async.bulk.tensor: more than {x} tensor/bulk copies in flight in one "
                        "block"),
}


def _cluster_error(m, head, kernel, block, thread, line, address):
    sub, rank = int(m.err[S.E_SUB]), int(m.err[S.E_EXTRA])
    size = max(cluster_size_of(m.launch), 1)
    if sub == CLERR_RANK:
        why = f"address {hex_address(address)} names CTA rank {rank} of a cluster of {size} (ranks 0..{size - 1})"
    elif sub == CLERR_EXITED:
        why = (f"address {hex_address(address)} is in the shared memory of CTA rank {rank} of the cluster, which "
               "has already exited (keep every CTA alive while others access its shared memory: a cluster "
               "barrier before exit)")
    else:
        why = f"mapa: address {hex_address(address)} is not a shared-memory address"
    return ClusterAccessError(f"undefined distributed-shared-memory access (PTX ISA): {head}: {why}",
                              kernel=kernel, block=block, thread=thread, line=line, address=address)


def _async_error(m, head, kernel, block, thread, line, address):
    rule, text = _ASYNC_RULES.get(int(m.err[S.E_SUB]), ("", "an mbarrier or bulk-copy rule was broken"))
    error = MbarrierError(f"undefined mbarrier/bulk-copy operation (PTX ISA): {head}: "
                          + text.format(a=hex_address(address), x=int(m.err[S.E_EXTRA])),
                          kernel=kernel, block=block, thread=thread, line=line, address=address)
    error.rule = rule
    return error


def _sync_error(m, program, head, block, thread, line, lane, other) -> WarpSyncError:
    """The synccheck-style error of a warp-wide op's member mask (``m.err[E_SUB]`` says which rule)."""
    sub = int(m.err[S.E_SUB])
    named = int(m.err[S.E_EXTRA]) & 0xFFFFFFFF
    if sub == S.SYNC_NOT_MEMBER:
        why = f"lane {lane} executes it with member mask 0x{named:08x}, which does not include lane {lane}"
    elif sub == S.SYNC_INACTIVE_MEMBER:
        why = (f"lane {lane}'s member mask 0x{named:08x} names lane {other}, which has not exited but does not "
               "execute this instruction (it diverged or is predicated off)")
        if int(m.launch[S.L_RECONVERGENCE]) == S.RECONV_IPDOM:
            why += ("; under reconvergence='ipdom' the lanes of a warp meet only where the SIMT stack "
                    "reconverges (GPU(..., reconvergence='its') waits for the named lanes, as Volta and later do)")
    elif sub == S.SYNC_NEVER_ARRIVES:
        at = group_pc(m, int(m.err[S.E_WARP]), other)
        why = (f"lane {lane} (waiting for lanes 0x{named:08x}) waits here for lane {other}, which is blocked "
               f"at {where(program, at)}; every group of the warp waits at a synchronizing instruction, so lane "
               f"{other} can never arrive")
        pc = int(m.err[S.E_PC])
        if 0 <= pc < program.n_inst and c.OP_SHFL <= int(program.code[pc, L.F_OP]) <= c.OP_REDUX:
            why += (" (reconvergence='its' joins a data-exchanging warp op only at one instruction: shuffle "
                    "after the branch's join instead of on both sides)")
    else:
        mine = int(m.members[other]) & 0xFFFFFFFF & ~int(m.exited[int(m.err[S.E_WARP])])
        named &= ~int(m.exited[int(m.err[S.E_WARP])])
        why = (f"lane {lane} (member mask 0x{named:08x}) and lane {other} (member mask 0x{mine:08x}) are "
               "members of each other's group with different masks")
    return WarpSyncError(f"warp synchronization error (as compute-sanitizer's synccheck): {head}: {why}; the "
                         "PTX ISA leaves this undefined", kernel=program.name, block=block, thread=thread,
                         line=line, address=other)


def group_pc(m, w: int, lane: int) -> int:
    """The pc lane ``lane`` of warp slot ``w`` is at: that of the highest SIMT entry holding it, -1 if none."""
    for e in range(int(m.sp[w]), -1, -1):
        if (int(m.stk_mask[w, e]) >> lane) & 1:
            return int(m.stk_pc[w, e])
    return -1


def _lanes(mask: int) -> str:
    return _ranges([lane for lane in range(32) if (mask >> lane) & 1])


def divergence_report(m, program) -> str:
    """Lanes of an unfinished warp that wait to reconverge while the others run (the first such warp): a
    spin on a lane of the same warp under IPDOM looks like this at the cycle limit. Empty when none."""
    for w in range(m.sp.shape[0]):
        sp = int(m.sp[w])
        if sp <= 0:
            continue
        above = int(m.stk_mask[w, sp])
        for e in range(sp - 1, -1, -1):
            own = int(m.stk_mask[w, e]) & ~above
            above |= int(m.stk_mask[w, e])
            if own:
                text = (f"warp {int(m.warp_index[w])} of block {thread_of(m, m.launch, w, 0)[0]} is diverged: lanes "
                        f"{_lanes(int(m.stk_mask[w, sp]))} run at {where(program, int(m.stk_pc[w, sp]))} while lanes "
                        f"{_lanes(own)} wait to reconverge at {where(program, int(m.stk_pc[w, e]))}")
                if int(m.launch[S.L_RECONVERGENCE]) == S.RECONV_IPDOM:
                    text += (". Under reconvergence='ipdom' (the SIMT stack) the waiting lanes run only when the "
                             "others get there: if those spin for a waiting lane (a spin lock whose holder waits "
                             "here), they never do; GPU(..., reconvergence='its') schedules threads "
                             "independently, as Volta and later GPUs do")
                return text
    return ""


def activity_report(m, program, shown: int = 8) -> str:
    """What a kernel stopped at its limit was doing: its most executed instructions (an endless loop shows
    as a few lines with nearly all of them), and where the unfinished warps of its slots stand."""
    counts = m.pc_counts[:, 0]
    total = int(counts.sum())
    lines = ["most executed instructions:"]
    for pc in np.argsort(-counts, kind="stable")[:3]:
        if counts[pc]:
            lines.append(f"  {where(program, int(pc))}: {int(counts[pc]):,} warp-instructions "
                         f"({100 * counts[pc] / max(total, 1):.0f}%)")
    live = [w for w in range(m.sp.shape[0]) if m.sp[w] >= 0]
    if live:
        lines.append("unfinished warps, next instruction:")
    for w in live[:shown]:
        lines.append(f"  warp {int(m.warp_index[w])}: {where(program, int(m.stk_pc[w, m.sp[w]]))}")
    if len(live) > shown:
        lines.append(f"  ... and {len(live) - shown} more")
    diverged = divergence_report(m, program)
    if diverged:
        lines.append(diverged)
    return "\n".join(lines)


def _cuda_line(program, pc: int) -> str:
    """`` (CUDA line N)`` when the PTX has ``.loc`` lines for ``pc``, else empty."""
    if 0 <= pc < program.n_inst and int(program.code[pc, L.F_SRCLINE]):
        return f" (CUDA line {int(program.code[pc, L.F_SRCLINE])})"
    return ""


def _barrier_error(m, program, pc, w, lanes, block) -> BarrierError:
    """synccheck's report: the barrier's line and the threads (of warp slot ``w``, lanes ``lanes``) that
    skipped it."""
    tx, ty = int(m.launch[S.L_NTID_X]), int(m.launch[S.L_NTID_Y])
    first = int(m.warp_index[w]) * 32
    ids = [first + lane for lane in range(32) if (lanes >> lane) & 1]
    skipped = tuple((t % tx, (t // tx) % ty, t // (tx * ty)) for t in ids)
    line = program.lines[pc] if 0 <= pc < program.n_inst else 0
    exited = int(m.exited[w]) & lanes == lanes
    how = "exited without reaching it" if exited else "did not reach it with the others (divergent)"
    shown = _ranges(ids)
    return SynccheckError(f"barrier error (synccheck): kernel '{program.name}' block {block}: the bar.sync at "
                        f"{where(program, pc)} is a block-wide barrier, but threads {shown} (warp "
                        f"{int(m.warp_index[w])}) {how}; every thread of the block must reach it "
                        "(__syncthreads() in code only some threads run)" + _exited_hint(m, exited),
                        kernel=program.name, block=block,
                        line=line, skipped=skipped)


def _exited_hint(m, exited: bool) -> str:
    if exited and int(m.launch[S.L_SYNCCHECK]) == S.SYNC_STRICT:
        return ("; GPUs of compute capability 7.0+ count exited threads as arrived (gpusim's default on such "
                "configs, with a warning; this launch runs synccheck or an older config)")
    return ""


def sanitizer_report(error, tool: str, what: str, program, pc: int) -> None:
    """Give a sanitizer's error the tool's report (``error.report``): what, where, who, and the summary."""
    block, thread = getattr(error, "block", ()), getattr(error, "thread", ())
    who = f"by thread {thread} in block {block}" if thread else f"in block {block}"
    error.report = "\n".join([f"========= {tool}: {what}", f"=========     at {where(program, pc)}"
                              f"{_cuda_line(program, pc)}", f"=========     {who}", "=========",
                              "========= ERROR SUMMARY: 1 error"])


def _ranges(ids: list[int]) -> str:
    parts, start = [], None
    for i, t in enumerate(ids):
        if start is None:
            start = t
        if i + 1 == len(ids) or ids[i + 1] != t + 1:
            parts.append(f"{start}" if start == t else f"{start}-{t}")
            start = None
    return ", ".join(parts)


def with_allocation(error: IllegalAddressError, heap) -> IllegalAddressError:
    """``error`` with the allocation its address missed named (global accesses only)."""
    if not getattr(error, "in_heap", False):
        return error
    text = str(error).replace("is outside every allocation",
                              "is " + heap.describe(error.address, getattr(error, "access_bytes", 1)))
    named = IllegalAddressError(text, kernel=error.kernel, block=error.block, thread=error.thread,
                                line=error.line, address=error.address)
    return named


def internal_error(program, exc: BaseException, m=None) -> InternalError:
    """An ``InternalError`` for an unexpected ``exc`` in the engine, located from the engine state ``m``."""
    block = thread = ()
    line = 0
    at = ""
    if m is not None:
        try:
            pc = int(m.mem_req[S.MR_PC])
            w = int(m.err[S.E_WARP])
            block, thread = thread_of(m, m.launch, w, 0)
            line = program.lines[pc] if 0 <= pc < program.n_inst else 0
            at = f" block {block} thread {thread} at {where(program, pc)}"
        except Exception:   # noqa: BLE001 - the state may be what broke; the error is still reported
            at = ""
    cause = f"{type(exc).__name__}: {exc}"
    return InternalError(f"internal error in gpusim (not in your kernel): kernel '{program.name}'{at}: {cause}; "
                         "the GPU object is still usable; please report this", kernel=program.name, block=block,
                         thread=thread, line=line, cause=cause)


@contextlib.contextmanager
def translating(program, m):
    """Run engine code; anything raised that is not a ``GpusimError`` becomes an ``InternalError``."""
    try:
        yield
    except GpusimError:
        raise
    except Exception as exc:
        raise internal_error(program, exc, m) from exc
