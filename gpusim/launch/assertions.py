"""A failed device ``assert()`` as CUDA reports it.

nvcc compiles ``assert(cond)`` to a call of ``__assertfail(message, file, line, function, charSize)`` when
``cond`` is false; the engine stops the launch at that call (``ERR_ASSERT`` with the calling lanes, see
``gpusim.engine.semantics.calls``) and this module reads each calling thread's arguments from its frame in
local memory and the strings from device memory, and builds CUDA's line for each::

    k.cu:6: void k(const int *): block: [0,0,0], thread: [5,0,0] Assertion `values[i] >= 0` failed.

They are printed on stderr and carried by a ``KernelAssertionError`` (CUDA's ``cudaErrorAssert``), which
the GPU keeps as a sticky error until ``gpu.reset()`` (``gpusim.api.gpu``).

Simplification: only the threads of the warp instruction that called it report (on a GPU, other warps that
reach the call before the kernel stops report too); device printf output of the failing launch is not
delivered.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import layout as L
from gpusim.engine.semantics import state as S
from gpusim.errors import KernelAssertionError
from gpusim.ptx.calls import ASSERT_FRAME

_STRING_LIMIT = 4096


def _string(m, pointer: int) -> str:
    offset = pointer - L.GLOBAL_BASE
    heap = m.mem8
    if not 0 <= offset < heap.shape[0]:
        return "?"
    raw = bytes(heap[offset:offset + _STRING_LIMIT])
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def assertion_error(m, program, thread_of, where) -> KernelAssertionError:
    """The KernelAssertionError of an engine stopped at ``__assertfail`` (``m.err``: pc, warp, lanes)."""
    pc, w, lanes = int(m.err[S.E_PC]), int(m.err[S.E_WARP]), int(m.err[S.E_ADDRESS])
    row = program.code[pc]
    fp_reg, frame = int(row[L.F_ABASE]), int(row[L.F_AUX])
    messages = []
    first_block = first_thread = ()
    for lane in range(32):
        if not (lanes >> lane) & 1:
            continue
        base = int(m.regs[w, fp_reg, lane]) + frame
        local = m.local8[w * 32 + lane]

        def word(offset, size=8, base=base, local=local):
            return int(np.frombuffer(bytes(local[base + offset:base + offset + size]), dtype=f"<u{size}")[0])

        message = _string(m, word(ASSERT_FRAME[0]))
        file = _string(m, word(ASSERT_FRAME[1]))
        line = word(ASSERT_FRAME[2], 4)
        function = _string(m, word(ASSERT_FRAME[3]))
        block, thread = thread_of(m, m.launch, w, lane)
        if not first_block:
            first_block, first_thread = block, thread
        messages.append(f"{file}:{line}: {function}: block: [{block[0]},{block[1]},{block[2]}], thread: "
                        f"[{thread[0]},{thread[1]},{thread[2]}] Assertion `{message}` failed.")
    text = "\n".join(messages)
    return KernelAssertionError(f"device-side assert triggered (cudaErrorAssert): kernel '{program.name}' at "
                                f"{where(program, pc)}:\n{text}\nthe GPU is unusable until gpu.reset(), as CUDA's "
                                "context is after a failed assert", kernel=program.name, messages=tuple(messages),
                                block=first_block, thread=first_thread,
                                line=program.lines[pc] if 0 <= pc < program.n_inst else 0)
