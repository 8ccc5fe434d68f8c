"""Engine status to the project's errors: which block and thread a warp slot's lane is, where a pc is in
the PTX, and the ``IllegalAddressError`` / ``SimulationLimitError`` an engine error code stands for, with
the kernel, block, thread and PTX line it concerns; ``activity_report`` says what a kernel stopped at
its simulation limit was doing (its most executed instructions, where its warps stand)."""

from __future__ import annotations

import numpy as np

from gpusim.arch import layout as L
from gpusim.engine.semantics import state as S
from gpusim.errors import IllegalAddressError, SimulationLimitError, WarpSyncError


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
    if kind == S.ERR_SYNC:
        raise _sync_error(m, program, head, block, thread, line, lane, address)
    raise IllegalAddressError(f"engine error {kind}: {head}", kernel=program.name, block=block, thread=thread,
                              line=line, address=address)


def _sync_error(m, program, head, block, thread, line, lane, other) -> WarpSyncError:
    """The synccheck-style error of a warp-wide op's member mask (``m.err[E_SUB]`` says which rule)."""
    sub = int(m.err[S.E_SUB])
    named = int(m.err[S.E_EXTRA]) & 0xFFFFFFFF
    if sub == S.SYNC_NOT_MEMBER:
        why = f"lane {lane} executes it with member mask 0x{named:08x}, which does not include lane {lane}"
    elif sub == S.SYNC_INACTIVE_MEMBER:
        why = (f"lane {lane}'s member mask 0x{named:08x} names lane {other}, which has not exited but does not "
               "execute this instruction (it diverged or is predicated off)")
    else:
        mine = int(m.members[other]) & 0xFFFFFFFF & ~int(m.exited[int(m.err[S.E_WARP])])
        named &= ~int(m.exited[int(m.err[S.E_WARP])])
        why = (f"lane {lane} (member mask 0x{named:08x}) and lane {other} (member mask 0x{mine:08x}) are "
               "members of each other's group with different masks")
    return WarpSyncError(f"warp synchronization error (as compute-sanitizer's synccheck): {head}: {why}; the "
                         "PTX ISA leaves this undefined", kernel=program.name, block=block, thread=thread,
                         line=line, address=other)


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
    return "\n".join(lines)
