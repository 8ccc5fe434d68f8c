"""Calls, returns and device printf in the engine (rows lowered by ``gpusim.ptx.calls``).

``OP_CALL`` (per active lane): checks the call depth against ``max_call_depth`` (the launch's
``L_CALL_DEPTH``) and that the callee's frame fits the thread's local memory (``ERR_CALL_DEPTH``
otherwise, with the depth), saves the caller's registers in its frame when the call can recurse, moves the
frame pointer past the caller's frame and counts the depth. On the SIMT stack the caller's entry resumes
at the instruction after the call, and a *call entry* (reconvergence pc ``RPC_CALL``, which no pc
equals) is pushed with the calling lanes at the callee's first pc. So a function's own divergence
(entries above the call entry) reconverges inside the function as usual, each activation of a recursive
function has its own entries (a branch never mistakes a nested activation's region for its own), and
the caller's divergence (entries below) is untouched: a call made by some lanes of a divergent branch
returns to those lanes only.

``OP_FRET`` (the one return row at a function's end; a ``ret`` elsewhere branches to it): when the top
entry is the call entry, every live lane of the call is here: they restore the frame pointer, depth and
saved registers (the call row, found as the instruction before the caller entry's pc, says how) and the
call entry is popped, so the caller continues after the call. When lanes reach the return while others
of the same call are still on a path that meets them only at exit (a branch whose other side exits),
they wait at the call entry (its pc is set to the return) and leave the entries above it.

With independent thread scheduling (``reconvergence="its"``) the same rows apply per thread: the frame
pointer and depth are registers (per lane), and the return pc is the caller entry's; a scheduler that
keeps per-thread pcs must give a returning thread the pc after its own call row.

``OP_VPRINTF`` (per active lane, in lane order): appends a record to the launch's printf buffer: the
block, the thread's index in its block, the format pointer, and up to ``PRINTF_ARG_BYTES`` of the
argument buffer (the bytes from the argument pointer to the end of its local memory or heap, at most 32
eight-byte arguments, CUDA's limit), and writes vprintf's return value (the conversions in the format, -1
for a null format). The host formats the records after the launch (``gpusim.launch.printf``). A record
that does not fit in the buffer is counted as dropped. The same row with ``ASSERT_FLAG`` in ``F_MODS`` is a
call of ``__assertfail`` (a failed ``assert()``): the launch stops with ``ERR_ASSERT`` and the calling lanes.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.simt import STATUS_OK, fail, normalize
from gpusim.ptx.calls import ASSERT_FLAG

RPC_CALL = -2
"""Reconvergence pc of a call entry on the SIMT stack (no pc equals it: only the return pops it)."""
PRINTF_ARG_BYTES = 256
"""Argument bytes copied per printf record: 32 arguments of 8 bytes, the most CUDA's printf takes."""
PRINTF_HEADER_WORDS = 4
"""A record's header: block, thread in block, format pointer, argument bytes (64-bit words)."""
PRINTF_FORMAT_SCAN = 4096
"""Characters of a format string the engine scans to count its conversions (vprintf's return value)."""


@compiled_only
def exec_call(m, row, pc, w, mask):
    """A call by the lanes of ``mask``; returns a status (the SIMT stack is moved here)."""
    sp = m.sp[w]
    if sp + 1 >= m.stk_pc.shape[1]:
        return fail(m, S.ERR_STACK_OVERFLOW, pc, w, 0, 0)
    fp_reg = row[L.F_ABASE]
    frame = row[L.F_AUX]
    lo = row[L.F_SK0 + 1]
    hi = row[L.F_SK0 + 3]
    depth_reg = row[L.F_SK0 + 5]
    save = row[L.F_AOFF]
    limit = m.launch[S.L_CALL_DEPTH]
    room = m.launch[S.L_LOCAL_BYTES]
    regs = m.regs
    for lane in range(32):
        if (mask >> lane) & 1:
            depth = np.int64(regs[w, depth_reg, lane]) + 1
            if depth > limit or np.int64(regs[w, fp_reg, lane]) + frame + row[L.F_SIZE] > room:
                return fail(m, S.ERR_CALL_DEPTH, pc, w, lane, depth)
    for lane in range(32):
        if (mask >> lane) & 1:
            fp = np.int64(regs[w, fp_reg, lane])
            if hi > lo:
                t = w * 32 + lane
                base = (fp + save) >> 3
                for r in range(lo, hi):
                    m.local64[t, base + r - lo] = regs[w, r, lane]
            regs[w, fp_reg, lane] = np.uint64(fp + frame)
            regs[w, depth_reg, lane] += np.uint64(1)
    m.stk_pc[w, sp] = pc + 1
    sp += 1
    m.stk_pc[w, sp] = row[L.F_TARGET]
    m.stk_rpc[w, sp] = RPC_CALL
    m.stk_mask[w, sp] = mask
    m.sp[w] = sp
    return STATUS_OK


@compiled_only
def exec_return(m, code, row, pc, w, mask):
    """The return row of a function, reached by the lanes of ``mask``; returns a status."""
    sp = m.sp[w]
    e = sp
    while e > 0 and m.stk_rpc[w, e] != RPC_CALL:
        e -= 1
    if m.stk_rpc[w, e] != RPC_CALL:     # not inside a call (cannot happen in a linked program)
        return fail(m, S.ERR_CALL_DEPTH, pc, w, 0, 0)
    if e != sp:
        # lanes of this call are still on paths that meet these only at exit: these wait at the return
        m.stk_pc[w, e] = pc
        for k in range(e + 1, sp + 1):
            m.stk_mask[w, k] &= ~mask
        normalize(m.sp, m.stk_pc, m.stk_rpc, m.stk_mask, w)
        return STATUS_OK
    call = code[m.stk_pc[w, e - 1] - 1]
    frame = call[L.F_AUX]
    lo = call[L.F_SK0 + 1]
    hi = call[L.F_SK0 + 3]
    save = call[L.F_AOFF]
    fp_reg = row[L.F_ABASE]
    depth_reg = row[L.F_SK0 + 1]
    regs = m.regs
    for lane in range(32):
        if (mask >> lane) & 1:
            fp = np.int64(regs[w, fp_reg, lane]) - frame
            regs[w, fp_reg, lane] = np.uint64(fp)
            regs[w, depth_reg, lane] -= np.uint64(1)
            if hi > lo:
                t = w * 32 + lane
                base = (fp + save) >> 3
                for r in range(lo, hi):
                    regs[w, r, lane] = m.local64[t, base + r - lo]
    m.sp[w] = e - 1
    normalize(m.sp, m.stk_pc, m.stk_rpc, m.stk_mask, w)
    return STATUS_OK


@compiled_only
def _count_conversions(mem8, heap_bytes, offset):
    """vprintf's return value: the conversions of the format at heap ``offset`` (``%%`` is none)."""
    n = 0
    i = 0
    while i < PRINTF_FORMAT_SCAN and offset + i < heap_bytes:
        ch = mem8[offset + i]
        if ch == 0:
            break
        if ch == 37:
            if offset + i + 1 < heap_bytes and mem8[offset + i + 1] == 37:
                i += 2
                continue
            n += 1
        i += 1
    return n


@compiled_only
def exec_vprintf(m, row, pc, w, mask):
    """A printf by the lanes of ``mask`` (see the module docstring), or a failed assert (``__assertfail``:
    ``ERR_ASSERT`` with the calling lanes; the host reads the message from their frames); a status."""
    if row[L.F_MODS] & ASSERT_FLAG:
        if mask == 0:
            return STATUS_OK
        first = 0
        while not (mask >> first) & 1:
            first += 1
        return fail(m, S.ERR_ASSERT, pc, w, first, mask)
    fp_reg = row[L.F_ABASE]
    frame = row[L.F_AUX]
    buf8 = m.printf8
    buf64 = m.printf64
    ctl = m.printf_ctl
    capacity = buf8.shape[0]
    local_bytes = m.launch[S.L_LOCAL_BYTES]
    heap_bytes = m.launch[S.L_HEAP_BYTES]
    for lane in range(32):
        if not (mask >> lane) & 1:
            continue
        t = w * 32 + lane
        base = np.int64(m.regs[w, fp_reg, lane]) + frame
        fmt = np.int64(m.local64[t, base >> 3])
        args = np.int64(m.local64[t, (base >> 3) + 1])
        fmt_off = fmt - L.GLOBAL_BASE
        result = -1
        if 0 <= fmt_off < heap_bytes:
            result = _count_conversions(m.mem8, heap_bytes, fmt_off)
        m.local32[t, (base + 16) >> 2] = np.uint32(result & 0xFFFFFFFF)
        nbytes = 0
        from_local = True
        src = args - L.LOCAL_WINDOW
        if 0 <= src < local_bytes:
            nbytes = min(PRINTF_ARG_BYTES, local_bytes - src)
        else:
            src = args - L.GLOBAL_BASE
            from_local = False
            if 0 <= src < heap_bytes:
                nbytes = min(PRINTF_ARG_BYTES, heap_bytes - src)
        pos = ctl[0]
        size = PRINTF_HEADER_WORDS * 8 + (nbytes + 7) // 8 * 8
        if pos + size > capacity:
            ctl[1] += 1
            continue
        word = pos >> 3
        buf64[word] = np.uint64(m.warp_block[w])
        buf64[word + 1] = np.uint64(m.warp_index[w] * 32 + lane)
        buf64[word + 2] = np.uint64(fmt)
        buf64[word + 3] = np.uint64(nbytes)
        start = pos + PRINTF_HEADER_WORDS * 8
        for i in range(nbytes):
            buf8[start + i] = m.local8[t, src + i] if from_local else m.mem8[src + i]
        ctl[0] = pos + size
        ctl[2] += 1
    return STATUS_OK
