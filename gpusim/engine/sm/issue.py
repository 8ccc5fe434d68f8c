"""Per-warp timing: when can a warp issue (scoreboard, pipes, waits), and what
issuing an instruction costs (pipe occupancy, result latency, the memory path).

``evaluate`` returns the earliest cycle the warp's next instruction could issue
and the state it is in until then. ``issue`` executes the instruction through
the functional semantics (``step_warp``) at the issue cycle and books its
timing: the pipe is busy for ``pipe_interval`` cycles, the destination
registers become ready after the form's latency or, for memory, when the
memory system says; global/local accesses are coalesced into sectors and
walked through L1/L2/DRAM (``memsys``), shared accesses cost one cycle per
bank-conflict wavefront.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import isa as I
from gpusim.arch import layout as L
from gpusim.engine.jit import compiled_only
from gpusim.engine.memory import memsys as MS
from gpusim.engine.memory.coalesce import coalesce, lanes_per_sector, partial_sectors, perfect_coalescing
from gpusim.engine.memory.memsys import global_atomic, global_load, global_store
from gpusim.engine.memory.servers import server_reserve
from gpusim.engine.memory.shared_banks import shared_wavefronts, uniform_pairs
from gpusim.engine.semantics import state as S
from gpusim.engine.sm import stalls as ST
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.async_timing import async_request
from gpusim.engine.sm.pipes import hold_pipe
from gpusim.engine.sm.texture_timing import texture_load
from gpusim.engine.sm.wgmma_timing import wgmma_timing

LOCAL_TIMING_BASE = np.int64(1) << np.int64(50)   # where local memory sits in the memory system's view


@compiled_only
def dep_state(dep):
    if dep == I.DEP_LONG:
        return ST.LONG_SCOREBOARD
    if dep == I.DEP_SHORT:
        return ST.SHORT_SCOREBOARD
    return ST.WAIT


@compiled_only
def throttle_state(pipe):
    if pipe == I.PIPE_LSU:
        return ST.LG_THROTTLE
    if pipe == I.PIPE_MIO:
        return ST.MIO_THROTTLE
    if pipe == I.PIPE_BRANCH or pipe == I.PIPE_BARRIER:
        return ST.BRANCH_RESOLVING
    return ST.MATH_PIPE_THROTTLE


@compiled_only
def _reg_wait(reg_ready, reg_dep, w, r, wake, state, lanes):
    if r >= 0:
        t = reg_ready[w, r]
        if t > wake:
            dep = reg_dep[w, r]
            if lanes == -1 or ((dep >> PATH_SHIFT) & lanes) != 0:
                return t, dep_state(dep & DEP_BITS)
    return wake, state


PATH_SHIFT = 8
DEP_BITS = (1 << PATH_SHIFT) - 1
"""What-if "no divergence cost" only (``path_lanes``): ``reg_dep`` holds the writing path's lanes above bit
PATH_SHIFT, and a path waits only for writes by its own lanes (the paths' lanes are disjoint: a write by the
other path is no dependency). A normal run's ``reg_dep`` holds the plain dependency class."""


@compiled_only(inline="always")
def path_lanes(prm, sp_of, stk_mask, w):
    """-1 in a normal run; under the what-if ``WHATIF_NO_DIVERGENCE_COST`` the lanes of warp ``w``'s top
    path, whose register writes and waits its scoreboard then tracks apart from the other path's."""
    if (prm[T.TP_WHATIF] & T.WHATIF_NO_DIVERGENCE_COST) == 0 or sp_of[w] < 0:
        return np.int64(-1)
    return np.int64(stk_mask[w, sp_of[w]])


@compiled_only(inline="always")
def dependencies(sp_of, stk_pc, code, w, w_wake, w_reason, reg_ready, reg_dep, isa, w_dep_ready, w_dep_state,
                 w_pipe, w_next_pc, w_cached, lanes):
    """Cache when warp ``w``'s next instruction has its operands (its registers change only when it issues).

    Takes arrays, not the state structs: every struct attribute read costs an atomic reference count,
    and this runs once per issued instruction."""
    pc = stk_pc[w, sp_of[w]]
    wake = w_wake[w]
    state = w_reason[w]
    for i in range(code[pc, L.F_NSRC]):
        kind = code[pc, L.F_SK0 + 2 * i]
        if kind == L.SK_REG or kind == L.SK_REGNEG:
            wake, state = _reg_wait(reg_ready, reg_dep, w, code[pc, L.F_SK0 + 2 * i + 1], wake, state,
                                       lanes)
    wake, state = _reg_wait(reg_ready, reg_dep, w, code[pc, L.F_GUARD], wake, state, lanes)
    wake, state = _reg_wait(reg_ready, reg_dep, w, code[pc, L.F_ABASE], wake, state, lanes)
    for i in range(code[pc, L.F_NDST]):
        wake, state = _reg_wait(reg_ready, reg_dep, w, code[pc, L.F_DST0 + i], wake, state, lanes)
    w_dep_ready[w] = wake
    w_dep_state[w] = state
    w_pipe[w] = isa[code[pc, L.F_ISA], I.I_PIPE]
    w_next_pc[w] = pc
    w_cached[w] = 1


@compiled_only
def _ceil_div(a, b):
    return (a + b - 1) // b


@compiled_only
def memory_timing(mp, ms, w, sm, sub, pc, cycle):
    """Time the memory part of the instruction just executed; returns its result-ready cycle.
    When tracing, the request is recorded with the deepest level it reached.

    ``mp`` is the ``MemoryPath``: only the arrays this path touches (a call's arguments are copied
    array by array, so passing the whole timing state and Machine would cost more than the work)."""
    if mp.mem_req[S.MR_KIND] >= S.MK_ASYNC_COMMIT:      # cp.async groups (issue 14), wgmma and cp.async.bulk (25)
        if mp.mem_req[S.MR_KIND] == S.MK_WGMMA:         # wgmma.mma_async (Hopper)
            return wgmma_timing(mp, w, sm, sub, cycle)
        return async_request(mp, ms, w, sm, pc, cycle)
    counters = ms.counters
    l1_misses = counters[MS.C_L1_MISS_SECTORS]
    l2_misses = counters[MS.C_L2_MISS_SECTORS]
    l2_sectors = counters[MS.C_L2_SECTORS]
    done = _memory_timing(mp, ms, w, sm, sub, pc, cycle)
    trace = mp.mem_trace
    n = mp.mem_trace_n[0]
    if mp.mem_req[S.MR_SPACE] == L.SP_PARAM:
        return done
    if n < trace.shape[0]:
        space = mp.mem_req[S.MR_SPACE]
        level = T.LEVEL_SHARED
        if space == L.SP_GLOBAL or space == L.SP_LOCAL:
            level = T.LEVEL_L1
            if counters[MS.C_L2_MISS_SECTORS] > l2_misses:
                level = T.LEVEL_DRAM
            elif counters[MS.C_L1_MISS_SECTORS] > l1_misses or counters[MS.C_L2_SECTORS] > l2_sectors:
                level = T.LEVEL_L2
        trace[n, T.MT_ISSUE] = cycle
        trace[n, T.MT_DONE] = done
        trace[n, T.MT_WARP] = w
        trace[n, T.MT_PC] = pc
        trace[n, T.MT_LEVEL] = level
        trace[n, T.MT_SECTORS] = mp.last_sectors[0]
        trace[n, T.MT_KIND] = mp.mem_req[S.MR_KIND]
        trace[n, T.MT_SPACE] = mp.mem_req[S.MR_SPACE]
        trace[n, T.MT_BLOCK] = mp.warp_block[w]
        mp.mem_trace_n[0] = n + 1
    elif trace.shape[0] > 0:
        mp.mem_trace_n[1] = 1
    return done


@compiled_only(inline="always")
def _shared_timing(mp, sm, sub, pc, cycle, kind, mask, nbytes, active):
    """A shared-memory access: bank-conflict wavefronts through the MIO queue and the SM's data path."""
    prm = mp.prm
    # a wide load on uniform lane pairs packs two lanes per return (shared_banks: "Uniform pairs")
    packed = kind == S.MK_LOAD and nbytes > prm[T.TP_BANK_BYTES] and uniform_pairs(mp.lane_addr, mask)
    wavefronts = shared_wavefronts(mp.lane_addr, mask, nbytes, prm[T.TP_BANKS], prm[T.TP_BANK_BYTES],
                                   mp.bank_scratch, (prm[T.TP_WHATIF] & T.WHATIF_NO_BANK_CONFLICTS) != 0, packed)
    wavefront_bytes = prm[T.TP_BANKS] * prm[T.TP_BANK_BYTES]
    ideal = _ceil_div(active * nbytes, wavefront_bytes * (2 if packed else 1))
    # the sub-partition's MIO queue takes one wavefront per cycle; the SM's shared-memory data path
    # (shared by all four sub-partitions) moves shared_bytes_per_cycle_per_sm
    hold_pipe(mp.pipe_free, mp.pipe_busy_acc, mp.pipe_busy_t0, sub, I.PIPE_MIO, cycle, cycle + wavefronts)
    start, _ = server_reserve(mp.shared_path, sm, cycle, wavefronts * wavefront_bytes,
                              prm[T.TP_SHARED_BYTES_PER_CYCLE])
    mp.pc_mem[pc, T.PM_REQUESTS] += 1
    mp.last_sectors[0] = wavefronts
    mp.pc_mem[pc, T.PM_WAVEFRONTS] += wavefronts
    mp.pc_mem[pc, T.PM_IDEAL_WAVEFRONTS] += ideal
    if kind == S.MK_LOAD:
        mp.ctr[T.TC_SHLD_REQ] += 1
        mp.ctr[T.TC_SHLD_WAVEFRONTS] += wavefronts
        mp.ctr[T.TC_SHLD_IDEAL] += ideal
        return start + prm[T.TP_SHARED_LAT] + wavefronts - 1
    if kind == S.MK_STORE:
        mp.ctr[T.TC_SHST_REQ] += 1
        mp.ctr[T.TC_SHST_WAVEFRONTS] += wavefronts
        mp.ctr[T.TC_SHST_IDEAL] += ideal
        return start + wavefronts
    mp.ctr[T.TC_SHATOM_REQ] += 1
    mp.ctr[T.TC_SHATOM_WAVEFRONTS] += wavefronts
    return start + prm[T.TP_SHARED_ATOMIC_LAT] + wavefronts * active - 1


@compiled_only(inline="always")
def _texture_timing(mp, ms, sm, sub, pc, cycle):
    """A tex/tld4: its texel sectors through L1/L2/DRAM, then the TEX stage's latency."""
    req = mp.mem_req
    prm = mp.prm
    n = req[S.MR_TEX_SECTORS]
    mp.pc_mem[pc, T.PM_REQUESTS] += 1
    mp.last_sectors[0] = n
    mp.pc_mem[pc, T.PM_SECTORS] += n
    mp.pc_mem[pc, T.PM_IDEAL_SECTORS] += n
    mp.ctr[T.TC_TEX_REQ] += 1
    mp.ctr[T.TC_TEX_SECTORS] += n
    done, wait = texture_load(mp.lane_addr, n, mp.sectors, sm, cycle, ms.l1, ms.l2, ms.servers, ms.mshr,
                              ms.params, ms.rates, ms.counters, prm[T.TP_TEX_LAT])
    if wait > 0:
        mp.ctr[T.TC_LG_THROTTLE_CYCLES] += wait
        hold_pipe(mp.pipe_free, mp.pipe_busy_acc, mp.pipe_busy_t0, sub, I.PIPE_LSU, cycle, cycle + wait)
    return done


@compiled_only(inline="always")
def _l1_data_bytes(mp, addrs, mask, nbytes, active):
    """Bytes-equivalent of a global/local load's L1 data-stage wavefronts: the shared-memory bank rule over
    its lane addresses (``shared_banks``), times the banks' width; under the what-if "perfect coalescing"
    the fewest wavefronts its bytes fit in."""
    prm = mp.prm
    wavefront_bytes = prm[T.TP_BANKS] * prm[T.TP_BANK_BYTES]
    if (prm[T.TP_WHATIF] & T.WHATIF_PERFECT_COALESCING) != 0:
        return _ceil_div(active * nbytes, wavefront_bytes) * wavefront_bytes
    return shared_wavefronts(addrs, mask, nbytes, prm[T.TP_BANKS], prm[T.TP_BANK_BYTES],
                             mp.bank_scratch) * wavefront_bytes


@compiled_only
def _dsm_timing(mp, w, sm, cycle, kind, total):
    """Another CTA's shared memory over the SM-to-SM network: the bytes through the requesting SM's DSM port
    (a server at dsm_bytes_per_cycle_per_sm, ``shared_path[NSM + sm]``), then the round trip (zero bytes:
    barrier.cluster, its release latency). A store is fire-and-forget (the warp's exit waits for it).
    Simplified: the remote SM's port and shared data path are not charged."""
    prm = mp.prm
    mp.last_sectors[0] = 0
    if total == 0:
        return cycle + prm[T.TP_CLUSTER_BAR_LAT]
    _, sent = server_reserve(mp.shared_path, prm[T.TP_NSM] + sm, cycle, total, prm[T.TP_DSM_MILLIBYTES] / 1000.0)
    done = sent + prm[T.TP_DSM_RTT]
    if kind == S.MK_STORE:
        mp.w_mem_pending[w] = max(mp.w_mem_pending[w], done)
        return cycle
    return done


@compiled_only(inline="always")
def _memory_timing(mp, ms, w, sm, sub, pc, cycle):
    req = mp.mem_req
    space = req[S.MR_SPACE]
    kind = req[S.MR_KIND]
    mask = req[S.MR_MASK]
    nbytes = req[S.MR_BYTES]
    prm = mp.prm
    active = 0
    for lane in range(32):
        active += (mask >> lane) & 1
    if space == L.SP_SHARED:
        return _shared_timing(mp, sm, sub, pc, cycle, kind, mask, nbytes, active)
    if space == L.SP_DSM:
        return _dsm_timing(mp, w, sm, cycle, kind, nbytes * active)
    if space == L.SP_PARAM:
        mp.last_sectors[0] = 0
        return cycle + mp.pipe_interval[I.PIPE_ALU]
    if kind == S.MK_TEXTURE:
        return _texture_timing(mp, ms, sm, sub, pc, cycle)
    # global and local: per-lane addresses as the memory system sees them
    addrs = mp.addrs
    if space == L.SP_GLOBAL:
        for lane in range(32):
            addrs[lane] = mp.lane_addr[lane] + L.GLOBAL_BASE
    else:
        # local memory is interleaved across a warp's lanes in 4-byte words, as on hardware
        warp_base = LOCAL_TIMING_BASE + w * 32 * (prm[T.TP_LOCAL_BYTES] + 8)
        for lane in range(32):
            off = mp.lane_addr[lane]
            addrs[lane] = warp_base + (off // 4) * 128 + lane * 4 + off % 4
    n = coalesce(addrs, mask, nbytes, prm[T.TP_SECTOR], prm[T.TP_LINE], mp.sectors)
    ideal = _ceil_div(active * nbytes, prm[T.TP_SECTOR])
    if (prm[T.TP_WHATIF] & T.WHATIF_PERFECT_COALESCING) != 0 and (kind == S.MK_LOAD or kind == S.MK_STORE):
        n = perfect_coalescing(n, ideal)
    mp.pc_mem[pc, T.PM_REQUESTS] += 1
    mp.last_sectors[0] = n
    mp.pc_mem[pc, T.PM_SECTORS] += n
    mp.pc_mem[pc, T.PM_IDEAL_SECTORS] += ideal
    is_local = space == L.SP_LOCAL
    if kind == S.MK_LOAD:
        if is_local:
            mp.ctr[T.TC_LLD_REQ] += 1
            mp.ctr[T.TC_LLD_SECTORS] += n
        else:
            mp.ctr[T.TC_GLD_REQ] += 1
            mp.ctr[T.TC_GLD_SECTORS] += n
            mp.ctr[T.TC_GLD_IDEAL] += ideal
        copy = req[S.MR_ASYNC]             # cp.async (issue 14): S.ASYNC_COPY, | S.ASYNC_NO_L1 for .cg and ld.cg
        use_l1 = prm[T.TP_USE_L1] != 0 and (copy & S.ASYNC_NO_L1) == 0
        done, wait = global_load(mp.sectors, n, sm, cycle, use_l1, ms.l1, ms.l2, ms.servers,
                                 ms.mshr, ms.params, ms.rates, ms.counters,
                                 _l1_data_bytes(mp, addrs, mask, nbytes, active))
        if copy != 0:
            req[S.MR_ASYNC] = 0
            if (copy & S.ASYNC_COPY) != 0 and done > mp.cp_state[w, T.CP_OPEN]:
                mp.cp_state[w, T.CP_OPEN] = done
        if wait > 0:
            mp.ctr[T.TC_LG_THROTTLE_CYCLES] += wait
            hold_pipe(mp.pipe_free, mp.pipe_busy_acc, mp.pipe_busy_t0, sub, I.PIPE_LSU, cycle, cycle + wait)
        return done
    if kind == S.MK_STORE:
        if is_local:
            mp.ctr[T.TC_LST_REQ] += 1
            mp.ctr[T.TC_LST_SECTORS] += n
        else:
            mp.ctr[T.TC_GST_REQ] += 1
            mp.ctr[T.TC_GST_SECTORS] += n
            mp.ctr[T.TC_GST_IDEAL] += ideal
        partial_sectors(addrs, mask, nbytes, mp.sectors, n, prm[T.TP_SECTOR], mp.lane_ops)
        accepted = global_store(mp.sectors, n, sm, cycle, ms.l1, ms.l2, ms.servers, ms.params, ms.rates,
                                ms.counters, mp.lane_ops)
        mp.w_mem_pending[w] = max(mp.w_mem_pending[w], accepted)
        return cycle
    mp.ctr[T.TC_GATOM_REQ] += 1
    mp.ctr[T.TC_GATOM_SECTORS] += n
    lanes_per_sector(addrs, mask, nbytes, mp.sectors, n, prm[T.TP_SECTOR], mp.lane_ops)
    done = global_atomic(mp.sectors, mp.lane_ops, n, sm, cycle, ms.l2, ms.servers, ms.params, ms.rates,
                         ms.counters)
    mp.w_mem_pending[w] = max(mp.w_mem_pending[w], done)
    return done


@compiled_only
def book_issue(code, isa, pipe_issues, pipe_free, pipe_busy_acc, pipe_busy_t0, reg_ready, reg_dep,
               w_wake, w_reason, w_mem_pending, regs, clock_mhz, pc, w, sub, cycle, memory_ready, next_pc, lanes):
    """Book the timing of the instruction at ``pc`` that warp ``w`` issued at ``cycle``: pipe occupancy,
    when its destinations are ready (``memory_ready`` for memory instructions, else the form's latency),
    and any wait it imposes on the warp (branch resolution, memory barrier, nanosleep). ``next_pc``: the
    warp's next instruction after this one executed: a branch taken (to anything but ``pc + 1``) waits its
    form's latency (``bra``: branch_latency_cycles; ``bra.ptxas``, codegen="ptxas": taken_branch_cycles),
    one not taken the plain ``bra`` form's (branch_latency_cycles). ``lanes``: ``path_lanes`` (a write over
    the other path's pending one waits for both, tagged with both paths' lanes)."""
    form = code[pc, L.F_ISA]
    pipe = isa[form, I.I_PIPE]
    latency = isa[form, I.I_LATENCY]
    dep = isa[form, I.I_DEP]
    pipe_issues[pipe] += 1
    hold_pipe(pipe_free, pipe_busy_acc, pipe_busy_t0, sub, pipe, cycle, cycle + isa[form, I.I_INTERVAL])
    ready = cycle + max(latency, 1) if memory_ready < 0 else memory_ready
    for i in range(code[pc, L.F_NDST]):
        d = code[pc, L.F_DST0 + i]
        if d >= 0:
            if lanes == -1:
                reg_ready[w, d] = ready
                reg_dep[w, d] = dep
            else:
                _path_write(reg_ready, reg_dep, w, d, ready, dep, lanes, cycle)
    op = code[pc, L.F_OP]
    w_wake[w] = cycle + 1
    w_reason[w] = ST.NOT_SELECTED
    if op == c.OP_BRA or op == c.OP_EXIT or (op >= c.OP_CALL and op <= c.OP_VPRINTF):
        if op == c.OP_BRA and next_pc == pc + 1:
            latency = isa[I.BRA_FORM, I.I_LATENCY]
        w_wake[w] = cycle + max(latency, 1)     # a call, return or printf: a fetch redirect, like a branch
        w_reason[w] = ST.BRANCH_RESOLVING
    elif op == c.OP_MEMBAR:
        w_wake[w] = max(cycle + 1, w_mem_pending[w])
        w_reason[w] = ST.MEMBAR
    elif op == c.OP_BARRIER_CLUSTER and code[pc, L.F_AUX] == L.CLUSTER_BAR_WAIT:
        w_wake[w] = max(cycle + 1, memory_ready)     # barrier.cluster.wait: the release (or the next poll)
        w_reason[w] = ST.BARRIER
    elif op == c.OP_NANOSLEEP:
        if code[pc, L.F_SK0] == L.SK_REG:
            nanoseconds = np.int64(regs[w, code[pc, L.F_SK0 + 1], 0])
        else:
            nanoseconds = code[pc, L.F_SK0 + 1]
        w_wake[w] = cycle + max(1, nanoseconds * clock_mhz // 1000)
        w_reason[w] = ST.SLEEPING
    elif op == c.OP_CP_WAIT:
        # cp.async.wait_group: memory_timing gave the arrival of the groups it waits for (issue 14)
        if memory_ready > cycle + 1:
            w_wake[w] = memory_ready
            w_reason[w] = ST.LONG_SCOREBOARD


@compiled_only
def _path_write(reg_ready, reg_dep, w, d, ready, dep, lanes, cycle):
    """What-if "no divergence cost": path ``lanes`` writes register ``d``, ready at ``ready``. A pending write
    by other lanes stays waited for: the register is then ready when both are, for both paths' lanes."""
    if reg_ready[w, d] > cycle:
        lanes |= reg_dep[w, d] >> PATH_SHIFT
        ready = max(ready, reg_ready[w, d])
    reg_ready[w, d] = ready
    reg_dep[w, d] = dep | (lanes << PATH_SHIFT)
