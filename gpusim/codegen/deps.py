"""What an instruction reads, writes and touches, as the passes need it.

Registers read: register sources, the guard predicate and a memory operand's base register;
registers written: the destinations. Memory: loads, stores and their space. *Fences* are the
instructions nothing may move across: barriers, memory fences, atomics and reductions, warp-
synchronous operations (shuffles, votes, match, redux, activemask), clock and timer reads,
nanosleep, trap, and every control transfer.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L

_FENCE_OPS = frozenset((c.OP_ATOM, c.OP_RED, c.OP_BAR, c.OP_MEMBAR, c.OP_NANOSLEEP, c.OP_TRAP, c.OP_SHFL,
                        c.OP_VOTE, c.OP_ACTIVEMASK, c.OP_MATCH, c.OP_REDUX, c.OP_BRA, c.OP_RET, c.OP_EXIT,
                        c.OP_PREFETCH))
_TIMERS = frozenset((L.SR_CLOCK, L.SR_CLOCK64, L.SR_CLOCK_HI, L.SR_GLOBALTIMER, L.SR_GLOBALTIMER_LO,
                     L.SR_GLOBALTIMER_HI, L.SR_SMID, L.SR_WARPID))
MEMORY_OPS = frozenset((c.OP_LD, c.OP_ST, c.OP_ATOM, c.OP_RED, c.OP_PREFETCH))


_PASS_OPS = frozenset((c.OP_LD, c.OP_ST, c.OP_CVTA, c.OP_NOP)) | _FENCE_OPS
"""Besides the ALU ops (OP_MOV..OP_LAST_ALU), the operations the passes know how to read, write and order."""


def unmodelled_ops(code) -> list[int]:
    """Rows of a code matrix the passes do not model (calls, textures, tensor-core and cp.async rows, whose
    operands are not all in the source slots, and ``bar.warp.sync``'s marked no-op): ``gpusim.codegen``
    leaves such a kernel as written rather than move or fold what it cannot see."""
    out = []
    for pc in range(code.shape[0]):
        op = int(code[pc, L.F_OP])
        if c.OP_MOV <= op <= c.OP_LAST_ALU:
            continue
        if op not in _PASS_OPS or (op == c.OP_NOP and code[pc, L.F_AUX] != 0):
            out.append(pc)
    return out


def sources(row) -> list[tuple[int, int]]:
    """(kind, value) of each source operand."""
    return [(int(row[L.F_SK0 + 2 * i]), int(row[L.F_SK0 + 2 * i + 1])) for i in range(int(row[L.F_NSRC]))]


def reads(row) -> set[int]:
    out = {value for kind, value in sources(row) if kind in (L.SK_REG, L.SK_REGNEG)}
    if row[L.F_GUARD] >= 0:
        out.add(int(row[L.F_GUARD]))
    if int(row[L.F_OP]) in MEMORY_OPS and row[L.F_ABASE] >= 0:
        out.add(int(row[L.F_ABASE]))
    return out


def writes(row) -> set[int]:
    return {int(row[L.F_DST0 + i]) for i in range(int(row[L.F_NDST])) if row[L.F_DST0 + i] >= 0}


def is_fence(row) -> bool:
    if int(row[L.F_OP]) in _FENCE_OPS:
        return True
    return any(kind == L.SK_SPECIAL and value in _TIMERS for kind, value in sources(row))


def is_load(row) -> bool:
    return int(row[L.F_OP]) == c.OP_LD


def is_store(row) -> bool:
    return int(row[L.F_OP]) == c.OP_ST


def space(row) -> int:
    return int(row[L.F_SPACE])


def may_alias(a, b) -> bool:
    """Whether two memory accesses may touch the same bytes: different named spaces never do (generic may
    be any space); in one space, the same base register (not written between them, which the caller
    guarantees by keeping register order) with disjoint offset ranges does not."""
    sa, sb = space(a), space(b)
    if sa != sb and L.SP_GENERIC not in (sa, sb):
        return False
    if sa == sb and a[L.F_ABASE] == b[L.F_ABASE]:
        size_a = int(a[L.F_SIZE]) * max(int(a[L.F_VEC]), 1)
        size_b = int(b[L.F_SIZE]) * max(int(b[L.F_VEC]), 1)
        lo_a, lo_b = int(a[L.F_AOFF]), int(b[L.F_AOFF])
        if size_a > 0 and size_b > 0 and (lo_a + size_a <= lo_b or lo_b + size_b <= lo_a):
            return False
    return True


def latency(row, config) -> int:
    """The result latency the scheduler plans with: the form's fixed latency from the config; a global or
    local load: an L2 hit; a shared load: the shared-memory latency."""
    form = isa.FORMS[int(row[L.F_ISA])]
    if form.latency is not None:
        return int(getattr(config, form.latency))
    if int(row[L.F_OP]) == c.OP_LD:
        if space(row) == L.SP_SHARED:
            return int(config.shared_latency_cycles)
        if space(row) == L.SP_PARAM:
            return int(config.l1_latency_cycles)
        return int(config.l2_latency_cycles)
    return 1
