"""Source operands as the engine reads them: a register (optionally a negated predicate), raw immediate
bits, or a special register (%tid, %ctaid, %laneid, %clock, %lanemask_*, ...) computed from the warp's
place in the launch."""

from __future__ import annotations

import numpy as np

from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.cluster import cluster_special

U64_0 = np.uint64(0)
U32_MASK = np.uint64(0xFFFFFFFF)


@compiled_only
def special_value(m, code, w, lane):
    launch = m.launch
    ntx = launch[S.L_NTID_X]
    nty = launch[S.L_NTID_Y]
    t = m.warp_index[w] * 32 + lane
    if code <= L.SR_TID_Z:
        if code == L.SR_TID_X:
            return np.uint64(t % ntx)
        if code == L.SR_TID_Y:
            return np.uint64((t // ntx) % nty)
        return np.uint64(t // (ntx * nty))
    if code <= L.SR_NTID_Z:
        return np.uint64(launch[S.L_NTID_X + code - L.SR_NTID_X])
    if code <= L.SR_CTAID_Z:
        b = m.warp_block[w]
        gx = launch[S.L_NCTAID_X]
        gy = launch[S.L_NCTAID_Y]
        if code == L.SR_CTAID_X:
            return np.uint64(b % gx)
        if code == L.SR_CTAID_Y:
            return np.uint64((b // gx) % gy)
        return np.uint64(b // (gx * gy))
    if code <= L.SR_NCTAID_Z:
        return np.uint64(launch[S.L_NCTAID_X + code - L.SR_NCTAID_X])
    if code == L.SR_LANEID:
        return np.uint64(lane)
    if code == L.SR_WARPID:
        return np.uint64(m.warp_slot_sm[w])
    if code == L.SR_NWARPID:
        return np.uint64(launch[S.L_MAX_WARPS_PER_SM])
    if code == L.SR_SMID:
        return np.uint64(m.warp_sm[w])
    if code == L.SR_NSMID:
        return np.uint64(launch[S.L_NSM])
    if code == L.SR_GRIDID:
        return np.uint64(launch[S.L_GRIDID])
    if code == L.SR_CLOCK or code == L.SR_GLOBALTIMER_LO:
        return np.uint64(m.clock[0]) & U32_MASK
    if code == L.SR_CLOCK64 or code == L.SR_GLOBALTIMER:
        return np.uint64(m.clock[0])
    if code == L.SR_CLOCK_HI or code == L.SR_GLOBALTIMER_HI:
        return np.uint64(m.clock[0]) >> np.uint64(32)
    if code == L.SR_LANEMASK_EQ:
        return np.uint64(1) << np.uint64(lane)
    if code == L.SR_LANEMASK_LT:
        return (np.uint64(1) << np.uint64(lane)) - np.uint64(1)
    if code == L.SR_LANEMASK_LE:
        return (np.uint64(2) << np.uint64(lane)) - np.uint64(1)
    if code == L.SR_LANEMASK_GE:
        return U32_MASK ^ ((np.uint64(1) << np.uint64(lane)) - np.uint64(1))
    if code == L.SR_LANEMASK_GT:
        return U32_MASK ^ ((np.uint64(2) << np.uint64(lane)) - np.uint64(1))
    if code >= L.SR_CLUSTERID_X:
        return cluster_special(m, code, w)
    if code == L.SR_DYNAMIC_SMEM_SIZE:
        return np.uint64(launch[S.L_DYNAMIC_SMEM])
    return np.uint64(launch[S.L_SHARED_BYTES])


@compiled_only
def read_src(m, row, i, w, lane):
    kind = row[L.F_SK0 + 2 * i]
    value = row[L.F_SK0 + 2 * i + 1]
    if kind == L.SK_REG:
        return m.regs[w, value, lane]
    if kind == L.SK_IMM:
        return np.uint64(value)
    if kind == L.SK_REGNEG:
        return m.regs[w, value, lane] ^ np.uint64(1)
    if kind == L.SK_SPECIAL:
        return special_value(m, value, w, lane)
    return U64_0
