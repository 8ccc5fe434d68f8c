"""State of the timing model (beyond the functional ``Machine``), in one place.

Warp slot ``w = sm * SLOTS + k``; slot ``k`` of an SM belongs to sub-partition
``k % NSP`` and to block slot ``k // WPB`` (a block's warps are contiguous).

=================  ====================  ===============================================
field              shape                 meaning
=================  ====================  ===============================================
prm                [N_TP] int64          parameters (TP_* indices)
isa                [forms, 4] int64      the opcode table with latencies resolved
pipe_interval      [N_PIPES] int64       cycles a pipe is busy per warp-instruction
w_resident         [W]                   1 while the slot holds a live warp
w_done             [W]                   1 when the warp exited (or the slot is empty)
w_state, w_since   [W]                   current warp state (stalls.*) and since when
w_pc               [W]                   the pc the current state is charged to
w_eval             [NSM*NSP*PER_SUB]     next cycle the warp needs evaluating, sub-partition-major: slot k of
                                         SM sm at (sm*NSP + k%NSP)*PER_SUB + k//NSP, PER_SUB = ceil(SLOTS/NSP)
                                         (dispatch.eval_slot), so a scheduler's scan reads one contiguous run
w_wake, w_reason   [W]                   a wait set at issue (branch, barrier release, ...)
w_age              [W]                   dispatch order (GTO's "oldest")
w_bar, w_bar_id,   [W]                   waiting at a barrier, its id and thread count
w_bar_count
w_mem_pending      [W]                   cycle its last store/atomic completes
w_exiting          [W]                   exited, draining stores
w_group            [W]                   two-level scheduler: 1 in the active set
w_cached           [W]                   1 while w_dep_ready/w_dep_state/w_pipe/w_next_pc are valid
w_dep_ready        [W]                   when the next instruction's operands (and w_wake) allow issue
w_dep_state        [W]                   the state until then
w_pipe, w_next_pc  [W]                   the next instruction's pipe and pc
reg_ready          [W, R]                cycle each register's pending write completes
reg_dep            [W, R]                dependency class (isa.DEP_*) of that write
pipe_free          [NSM*NSP, N_PIPES]    next cycle each pipe accepts an instruction
pipe_busy_acc,     [NSM*NSP, N_PIPES]    the pipe's busy history: busy cycles before pipe_busy_t0
pipe_busy_t0                             (see issue.hold_pipe)
w_parked           [W]                   1 while the warp waits only for its scheduler (lazy accounting)
w_park_busy        [W]                   its pipe's busy count (issue.busy_before) when it was parked
park_mask          [NSM*NSP, N_PIPES]    parked warps of each sub-partition by next pipe (bit j: slot
                                         sp + j * NSP)
park_pipes         [NSM*NSP]             bit p set while park_mask[sub, p] is not empty
sub_next           [NSM*NSP]             next cycle a non-parked warp of the sub-partition needs evaluating
sched_last         [NSM*NSP]             last warp slot each scheduler issued
sched_active       [NSM*NSP]             two-level active-set size
sm_next            [NSM]                 next cycle the SM needs evaluating
sm_warps           [NSM]                 resident warps
sm_active_since    [NSM]                 start of the current busy interval
sm_active_cycles   [NSM]                 cycles with at least one resident warp
b_block, b_live    [NSM*BSLOTS]          block in each block slot (-1 free), live warps
stalls             [N_STATES]            warp-cycles per state
pc_stalls          [n_inst, N_STATES]    warp-cycles per state charged to each pc
pc_mem             [n_inst, N_PCMEM]     per-pc memory statistics (PM_*)
pipe_issues        [N_PIPES]             warp-instructions issued per pipe
ctr                [N_TC]                timing counters (TC_*)
sectors, lane_ops  [128]                 scratch for the coalescer
bank_scratch       [..]                  scratch for shared-memory bank conflicts
addrs              [32]                  scratch: per-lane addresses as the memory system sees them
trace, trace_n     [cap, 6], [2]         warp-state intervals (TR_*) when tracing; trace_n[1] = 1 if cut
mem_trace, ..._n   [cap, 9], [2]         memory requests (MT_*) when tracing
issue_trace, .._n  [cap, 7], [2]         issued warp-instructions (IT_*) when tracing
shared_path        [NSM] float64         next-free instant of each SM's shared-memory data path (a server)
loop               [N_LP]                the timed loop between two calls (LP_*): started, the cycle it
                                         resumes at, the next block to dispatch, the next dispatch age
cp_state           [W, CP_FIELDS]        cp.async groups per warp (issue.async_copy_groups; issue 14)
=================  ====================  ===============================================
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from gpusim.arch.isa import N_PIPES
from gpusim.engine.memory.shared_banks import make_shared_scratch
from gpusim.engine.sm.stalls import N_STATES

TIMINGSTATE_FIELDS = [
    "prm", "isa", "pipe_interval",
    "w_resident", "w_done", "w_state", "w_since", "w_pc", "w_eval", "w_wake", "w_reason", "w_age",
    "w_bar", "w_bar_id", "w_bar_count", "w_mem_pending", "w_exiting", "w_group",
    "w_cached", "w_dep_ready", "w_dep_state", "w_pipe", "w_next_pc",
    "reg_ready", "reg_dep", "pipe_free", "pipe_busy_acc", "pipe_busy_t0",
    "w_parked", "w_park_busy", "park_mask", "park_pipes", "sub_next", "sched_last", "sched_active",
    "sm_next", "sm_warps", "sm_active_since", "sm_active_cycles", "b_block", "b_live",
    "stalls", "pc_stalls", "pc_mem", "pipe_issues", "ctr", "sectors", "lane_ops", "bank_scratch", "addrs",
    "trace", "trace_n", "mem_trace", "mem_trace_n", "last_sectors",
    "issue_trace", "issue_trace_n", "shared_path", "loop",
    "cp_state",   # tensor cores (issue 14)
]
TimingState = namedtuple("TimingState", TIMINGSTATE_FIELDS)

# What the memory path of an issued instruction touches (issue.memory_timing): views of TimingState and
# Machine arrays, gathered once per run so that each call passes 20 arrays instead of both whole states.
MEMORY_PATH_FIELDS = ["prm", "pipe_interval", "pipe_free", "pipe_busy_acc", "pipe_busy_t0", "shared_path",
                      "bank_scratch", "pc_mem", "last_sectors", "ctr", "addrs", "sectors", "lane_ops",
                      "w_mem_pending", "mem_trace", "mem_trace_n", "mem_req", "lane_addr", "warp_block",
                      "cp_state"]   # tensor cores (issue 14)
MemoryPath = namedtuple("MemoryPath", MEMORY_PATH_FIELDS)

# The memory hierarchy's state (see gpusim.engine.memory.memsys): caches, servers, MSHRs, counters.
MEMORY_SYSTEM_FIELDS = ["l1", "l2", "servers", "mshr", "params", "rates", "counters"]
MemorySystem = namedtuple("MemorySystem", MEMORY_SYSTEM_FIELDS)

# prm[] indices
TP_NSM, TP_NSP, TP_SLOTS, TP_BSLOTS, TP_WPB, TP_TPB, TP_NBLOCKS = 0, 1, 2, 3, 4, 5, 6
TP_BLOCK_LAUNCH, TP_SHARED_LAT, TP_SHARED_ATOMIC_LAT, TP_MAX_CYCLES, TP_POLICY, TP_TWO_LEVEL_N = \
    7, 8, 9, 10, 11, 12
TP_BANKS, TP_BANK_BYTES, TP_SECTOR, TP_LINE, TP_LOCAL_BYTES, TP_CLOCK_MHZ, TP_USE_L1 = \
    13, 14, 15, 16, 17, 18, 19
TP_SHARED_BYTES_PER_CYCLE = 20
TP_BARRIER_LAT = 21
TP_TEX_LAT = 22           # textures: addressing and filtering after the texels arrive
TP_WHATIF = 23            # what-if switches (WHATIF_* bits; 0 for a normal launch): gpusim.launch.what_if
N_TP = 24

# TP_WHATIF bits: each removes one limit of the model (docs/what-if.md)
WHATIF_NO_BANK_CONFLICTS = 1     # a shared-memory phase takes ceil(distinct words / banks) wavefronts
WHATIF_PERFECT_COALESCING = 2    # a global/local load or store moves only the sectors its bytes need
WHATIF_NO_DIVERGENCE_COST = 4    # a divergent branch's two paths issue side by side (issue_unit.issue_other_path)

# (scheduler policy codes: schedulers.POLICY_CODES)

# ctr[] indices
TC_GLD_REQ, TC_GLD_SECTORS, TC_GLD_IDEAL = 0, 1, 2
TC_GST_REQ, TC_GST_SECTORS, TC_GST_IDEAL = 3, 4, 5
TC_GATOM_REQ, TC_GATOM_SECTORS = 6, 7
TC_LLD_REQ, TC_LLD_SECTORS, TC_LST_REQ, TC_LST_SECTORS = 8, 9, 10, 11
TC_SHLD_REQ, TC_SHLD_WAVEFRONTS, TC_SHST_REQ, TC_SHST_WAVEFRONTS = 12, 13, 14, 15
TC_SHATOM_REQ, TC_SHATOM_WAVEFRONTS = 16, 17
TC_SHLD_IDEAL, TC_SHST_IDEAL = 18, 19
TC_LG_THROTTLE_CYCLES = 20
TC_END_CYCLE = 21
TC_BLOCKS_DONE = 22
TC_TEX_REQ, TC_TEX_SECTORS = 23, 24    # textures: tex/tld4 requests and the sectors they read
N_TC = 25

# cp_state[] columns (tensor cores, issue 14): the open group's arrival, groups committed, the arrival of
# every group older than the ring, then the ring of the newest CP_RING committed groups' arrivals
CP_OPEN, CP_COUNT, CP_FLOOR, CP_RING0 = 0, 1, 2, 3
CP_RING = 16
CP_FIELDS = CP_RING0 + CP_RING

# loop[] indices: where the timed loop stands between two calls (timing.run_timed runs in slices)
LP_STARTED, LP_CYCLE, LP_NEXT_BLOCK, LP_AGE = 0, 1, 2, 3
N_LP = 4

# pc_mem[] columns
PM_REQUESTS, PM_SECTORS, PM_IDEAL_SECTORS, PM_WAVEFRONTS, PM_IDEAL_WAVEFRONTS = 0, 1, 2, 3, 4
N_PCMEM = 5

# trace[] columns: one row per warp-state interval (recorded only when tracing)
TR_WARP, TR_STATE, TR_START, TR_END, TR_PC, TR_BLOCK = 0, 1, 2, 3, 4, 5
N_TRACE_FIELDS = 6
# mem_trace[] columns: one row per global/local memory request
MT_ISSUE, MT_DONE, MT_WARP, MT_PC, MT_LEVEL, MT_SECTORS, MT_KIND, MT_SPACE, MT_BLOCK = 0, 1, 2, 3, 4, 5, 6, 7, 8
N_MEM_TRACE_FIELDS = 9
# issue_trace[] columns: one row per issued warp-instruction
IT_CYCLE, IT_WARP, IT_PC, IT_ACTIVE, IT_PRED_ON, IT_STALL_BEFORE, IT_BLOCK = 0, 1, 2, 3, 4, 5, 6
N_ISSUE_TRACE_FIELDS = 7
LEVEL_L1, LEVEL_L2, LEVEL_DRAM, LEVEL_SHARED = 1, 2, 3, 0
LEVEL_NAMES = {LEVEL_SHARED: "shared", LEVEL_L1: "L1", LEVEL_L2: "L2", LEVEL_DRAM: "DRAM"}

INF_CYCLE = np.int64(1) << np.int64(62)


def make_timing_state(*, prm: np.ndarray, isa_table: np.ndarray, pipe_interval: np.ndarray, n_regs: int,
                      n_inst: int, trace_capacity: int = 0) -> TimingState:
    nsm, nsp, slots, bslots = (int(prm[TP_NSM]), int(prm[TP_NSP]), int(prm[TP_SLOTS]), int(prm[TP_BSLOTS]))
    warps = nsm * slots

    def per_warp(fill=0):
        return np.full(warps, fill, dtype=np.int64)

    # a register's ready cycle and dependency class side by side: the scoreboard check reads both
    reg_wait = np.zeros((warps, max(n_regs, 1), 2), dtype=np.int64)
    return TimingState(
        prm=prm, isa=isa_table, pipe_interval=pipe_interval,
        w_resident=per_warp(), w_done=per_warp(1), w_state=per_warp(), w_since=per_warp(), w_pc=per_warp(),
        w_eval=np.full(nsm * nsp * -(-slots // nsp), INF_CYCLE, dtype=np.int64),
        w_wake=per_warp(), w_reason=per_warp(), w_age=per_warp(),
        w_bar=per_warp(), w_bar_id=per_warp(), w_bar_count=per_warp(), w_mem_pending=per_warp(),
        w_exiting=per_warp(), w_group=per_warp(1),
        w_cached=per_warp(), w_dep_ready=per_warp(), w_dep_state=per_warp(), w_pipe=per_warp(),
        w_next_pc=per_warp(),
        reg_ready=reg_wait[:, :, 0],
        reg_dep=reg_wait[:, :, 1],
        pipe_free=np.zeros((nsm * nsp, N_PIPES), dtype=np.int64),
        pipe_busy_acc=np.zeros((nsm * nsp, N_PIPES), dtype=np.int64),
        pipe_busy_t0=np.zeros((nsm * nsp, N_PIPES), dtype=np.int64),
        w_parked=per_warp(), w_park_busy=per_warp(),
        park_mask=np.zeros((nsm * nsp, N_PIPES), dtype=np.int64),
        park_pipes=np.zeros(nsm * nsp, dtype=np.int64),
        sub_next=np.full(nsm * nsp, INF_CYCLE, dtype=np.int64),
        sched_last=np.full(nsm * nsp, -1, dtype=np.int64),
        sched_active=np.zeros(nsm * nsp, dtype=np.int64),
        sm_next=np.full(nsm, INF_CYCLE, dtype=np.int64),
        sm_warps=np.zeros(nsm, dtype=np.int64),
        sm_active_since=np.zeros(nsm, dtype=np.int64),
        sm_active_cycles=np.zeros(nsm, dtype=np.int64),
        b_block=np.full(nsm * bslots, -1, dtype=np.int64),
        b_live=np.zeros(nsm * bslots, dtype=np.int64),
        stalls=np.zeros(N_STATES, dtype=np.int64),
        pc_stalls=np.zeros((max(n_inst, 1), N_STATES), dtype=np.int64),
        pc_mem=np.zeros((max(n_inst, 1), N_PCMEM), dtype=np.int64),
        pipe_issues=np.zeros(N_PIPES, dtype=np.int64),
        ctr=np.zeros(N_TC, dtype=np.int64),
        sectors=np.zeros(128, dtype=np.int64),
        lane_ops=np.zeros(128, dtype=np.int64),
        bank_scratch=make_shared_scratch(int(prm[TP_BANKS])),
        addrs=np.zeros(32, dtype=np.int64),
        trace=np.zeros((trace_capacity, N_TRACE_FIELDS), dtype=np.int64),
        trace_n=np.zeros(2, dtype=np.int64),
        mem_trace=np.zeros((trace_capacity, N_MEM_TRACE_FIELDS), dtype=np.int64),
        mem_trace_n=np.zeros(2, dtype=np.int64),
        last_sectors=np.zeros(1, dtype=np.int64),
        issue_trace=np.zeros((trace_capacity, N_ISSUE_TRACE_FIELDS), dtype=np.int64),
        issue_trace_n=np.zeros(2, dtype=np.int64),
        shared_path=np.zeros(nsm, dtype=np.float64),
        loop=np.zeros(N_LP, dtype=np.int64),
        cp_state=np.zeros((warps, CP_FIELDS), dtype=np.int64),
    )
