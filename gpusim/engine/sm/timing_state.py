"""State of the timing model (beyond the functional ``Machine``), declared in one place.

Warp slot ``w = sm * SLOTS + k``; slot ``k`` of an SM belongs to sub-partition ``k % NSP`` and to block slot
``k // WPB`` (a block's warps are contiguous). ``TimingState`` holds every array the timed loop changes; ``prm``,
``ctr``, ``loop``, ``cp_state``, ``pc_mem`` and the trace tables have named columns (``TP_ TC_ LP_ CP_ PM_ TR_
MT_ IT_``; value prefixes: ``WHATIF_`` bits, ``LEVEL_``, ``schedulers.POLICY_CODES``). ``TIMING_STATE`` and the
``Columns`` below are the single source (gpusim.engine.records): the ``state-layout`` blocks are generated from
them (``python scripts/doc_tables.py --render``), ``make_timing_state`` allocates from them, docs/engine-state.md
shows them; to add a field, add its row, run the script, use the new constant. Every entry is an int64 cycle or
count except ``shared_path`` (float64 servers' next-free instants); ``reg_ready`` and ``reg_dep`` are two views of
one interleaved array (the scoreboard check reads both).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from gpusim.arch.isa import N_ISA_FIELDS, N_PIPES
from gpusim.arch.tensor_map_layout import TMA_UNIT_WORDS
from gpusim.engine.memory.shared_banks import make_shared_scratch
from gpusim.engine.records import Column, Columns, Field, Record, allocate
from gpusim.engine.sm.stalls import N_STATES

INF_CYCLE = np.int64(1) << np.int64(62)
CP_RING = 16              # cp.async groups whose arrival each warp keeps (cp_state's ring)
SCRATCH_SECTORS = 128     # coalescer scratch entries (sectors of one request)

PRM = Columns("prm", "ts.prm", "TP_", "N_TP", "the launch's timing parameters", (
    Column("NSM", "SMs", "SMs simulated"),
    Column("NSP", "sub-partitions", "sub-partitions (schedulers) per SM"),
    Column("SLOTS", "warp slots", "warp slots per SM"),
    Column("BSLOTS", "block slots", "block slots per SM"),
    Column("WPB", "warps", "warps per block"),
    Column("TPB", "threads", "threads per block"),
    Column("NBLOCKS", "blocks", "blocks of the grid"),
    Column("BLOCK_LAUNCH", "cycles", "block launch latency"),
    Column("SHARED_LAT", "cycles", "shared-memory load latency"),
    Column("SHARED_ATOMIC_LAT", "cycles", "shared-memory atomic latency"),
    Column("MAX_CYCLES", "cycles", "the run's cycle limit"),
    Column("POLICY", "policy code", "scheduler policy (schedulers.POLICY_CODES)"),
    Column("TWO_LEVEL_N", "warps", "two-level scheduler's active-set size"),
    Column("BANKS", "banks", "shared-memory banks"),
    Column("BANK_BYTES", "bytes", "bytes per bank word"),
    Column("SECTOR", "bytes", "sector size"),
    Column("LINE", "bytes", "cache line size"),
    Column("LOCAL_BYTES", "bytes", "local memory per thread"),
    Column("CLOCK_MHZ", "MHz", "core clock"),
    Column("USE_L1", "flag", "1: global loads go through L1"),
    Column("SHARED_BYTES_PER_CYCLE", "bytes/cycle", "shared-memory data path width per SM"),
    Column("BARRIER_LAT", "cycles", "barrier release latency"),
    Column("TEX_LAT", "cycles", "textures: addressing and filtering after the texels arrive"),
    Column("WHATIF", "WHATIF_* bits", "what-if switches (0 for a normal launch): gpusim.launch.what_if"),
    Column("WGMMA_N8_INTERVAL", "cycles", "wgmma: tensor pipe per warp per 8 columns of N"),
    Column("WGMMA_LATENCY", "cycles", "wgmma: result after the first 8 columns"),
    Column("BLOCK_INTERVAL", "cycles", "an SM starts at most one block per this many cycles"),
    Column("BARRIER_PER_WARP", "cycles", "barrier release: added per warp that waited"),
    Column("TMA_INTERVAL", "cycles x 256", "TMA unit: cycles per request (a box row), 8-bit fixed point"),
    Column("TMA_DESC_MISS", "cycles", "TMA unit: a tensor-map descriptor-cache miss"),
    Column("CLUSTER", "blocks", "thread-block cluster size (0: no cluster launch; dispatch.py places clusters)"),
    Column("GPC_SMS", "SMs", "SMs of one GPC, where a cluster's blocks are placed"),
    Column("DSM_RTT", "cycles", "distributed shared memory: SM-to-SM round trip"),
    Column("DSM_MILLIBYTES", "bytes/1000 cycles", "distributed shared memory bandwidth per SM"),
    Column("CLUSTER_BAR_LAT", "cycles", "barrier.cluster: release after the last arrival"),
    Column("WGMMA_QUEUE", "instructions", "wgmma: a sub-partition's tensor-pipe queue depth"),
))
# TP_WHATIF bits: each removes one limit of the model (docs/what-if.md)
WHATIF_NO_BANK_CONFLICTS = 1     # a shared-memory phase takes ceil(distinct words / banks) wavefronts
WHATIF_PERFECT_COALESCING = 2    # a global/local load or store moves only the sectors its bytes need
WHATIF_NO_DIVERGENCE_COST = 4    # a divergent branch's two paths issue side by side (issue_unit.issue_other_path)

CTR = Columns("ctr", "ts.ctr", "TC_", "N_TC", "timing counters of the launch", (
    Column("GLD_REQ", "requests", "global load requests"),
    Column("GLD_SECTORS", "sectors", "sectors global loads moved"),
    Column("GLD_IDEAL", "sectors", "sectors global loads needed"),
    Column("GST_REQ", "requests", "global store requests"),
    Column("GST_SECTORS", "sectors", "sectors global stores moved"),
    Column("GST_IDEAL", "sectors", "sectors global stores needed"),
    Column("GATOM_REQ", "requests", "global atomic requests"),
    Column("GATOM_SECTORS", "sectors", "sectors global atomics touched"),
    Column("LLD_REQ", "requests", "local load requests"),
    Column("LLD_SECTORS", "sectors", "sectors local loads moved"),
    Column("LST_REQ", "requests", "local store requests"),
    Column("LST_SECTORS", "sectors", "sectors local stores moved"),
    Column("SHLD_REQ", "requests", "shared load requests"),
    Column("SHLD_WAVEFRONTS", "wavefronts", "shared load wavefronts"),
    Column("SHST_REQ", "requests", "shared store requests"),
    Column("SHST_WAVEFRONTS", "wavefronts", "shared store wavefronts"),
    Column("SHATOM_REQ", "requests", "shared atomic requests"),
    Column("SHATOM_WAVEFRONTS", "wavefronts", "shared atomic wavefronts"),
    Column("SHLD_IDEAL", "wavefronts", "shared load wavefronts without bank conflicts"),
    Column("SHST_IDEAL", "wavefronts", "shared store wavefronts without bank conflicts"),
    Column("LG_THROTTLE_CYCLES", "cycles", "issue held back by full MSHRs"),
    Column("END_CYCLE", "cycle", "the cycle the launch ended"),
    Column("BLOCKS_DONE", "blocks", "blocks retired"),
    Column("TEX_REQ", "requests", "tex/tld4 requests"),
    Column("TEX_SECTORS", "sectors", "sectors texture fetches read"),
))

CP = Columns("cp-state", "ts.cp_state[w]", "CP_", "CP_FIELDS",
             "cp.async groups of one warp (async_timing.async_copy_groups); the ring follows the named columns", (
    Column("OPEN", "cycle", "arrival of the open (uncommitted) group"),
    Column("COUNT", "groups", "groups committed"),
    Column("FLOOR", "cycle", "arrival of every group older than the ring"),
    Column("RING0", "cycle", "first of the CP_RING newest committed groups' arrivals"),
), width=2 * (3 + CP_RING))
CP_WGMMA = 3 + CP_RING    # wgmma's groups: the same columns again from here (async_timing.async_copy_groups)

LOOP = Columns("loop", "ts.loop", "LP_", "N_LP", "where the timed loop stands between two calls (run in slices)", (
    Column("STARTED", "flag", "1 once the loop has started"),
    Column("CYCLE", "cycle", "the cycle it resumes at"),
    Column("NEXT_BLOCK", "block", "the next block to dispatch"),
    Column("AGE", "count", "the next dispatch age"),
))

PC_MEM = Columns("pc-mem", "ts.pc_mem[pc]", "PM_", "N_PCMEM", "per-pc memory statistics", (
    Column("REQUESTS", "requests", "memory requests"),
    Column("SECTORS", "sectors", "sectors moved"),
    Column("IDEAL_SECTORS", "sectors", "sectors needed"),
    Column("WAVEFRONTS", "wavefronts", "shared-memory wavefronts"),
    Column("IDEAL_WAVEFRONTS", "wavefronts", "wavefronts without bank conflicts"),
))

TRACE = Columns("trace", "ts.trace[row]", "TR_", "N_TRACE_FIELDS",
                "one row per warp-state interval (recorded only when tracing)", (
    Column("WARP", "warp slot", "the warp"),
    Column("STATE", "stalls.* state", "its state"),
    Column("START", "cycle", "interval start"),
    Column("END", "cycle", "interval end"),
    Column("PC", "pc", "the pc charged"),
    Column("BLOCK", "block", "the warp's block"),
))
MEM_TRACE = Columns("mem-trace", "ts.mem_trace[row]", "MT_", "N_MEM_TRACE_FIELDS",
                    "one row per global/local memory request (when tracing)", (
    Column("ISSUE", "cycle", "issue cycle"),
    Column("DONE", "cycle", "completion cycle"),
    Column("WARP", "warp slot", "the warp"),
    Column("PC", "pc", "the instruction"),
    Column("LEVEL", "LEVEL_*", "the deepest level that answered"),
    Column("SECTORS", "sectors", "sectors of the request"),
    Column("KIND", "MK_* kind", "load, store, atomic, ..."),
    Column("SPACE", "SP_* space", "state space"),
    Column("BLOCK", "block", "the warp's block"),
))
ISSUE_TRACE = Columns("issue-trace", "ts.issue_trace[row]", "IT_", "N_ISSUE_TRACE_FIELDS",
                      "one row per issued warp-instruction (when tracing)", (
    Column("CYCLE", "cycle", "issue cycle"),
    Column("WARP", "warp slot", "the warp"),
    Column("PC", "pc", "the instruction"),
    Column("ACTIVE", "lanes", "active lanes"),
    Column("PRED_ON", "lanes", "predicated-on lanes"),
    Column("STALL_BEFORE", "stalls.* state", "the state the warp was in before"),
    Column("BLOCK", "block", "the warp's block"),
))
LEVEL_L1, LEVEL_L2, LEVEL_DRAM, LEVEL_SHARED = 1, 2, 3, 0
LEVEL_NAMES = {LEVEL_SHARED: "shared", LEVEL_L1: "L1", LEVEL_L2: "L2", LEVEL_DRAM: "DRAM"}


W, SUB, SM = ("W",), ("SUB",), ("NSM",)
TIMING_STATE = Record("TimingState", "the timed loop's state", (
    Field("prm", "int64", (PRM,), "TP_*", "parameters", given=True),
    Field("isa", "int64", ("forms", N_ISA_FIELDS), "I_*", "the opcode table with latencies resolved", given=True),
    Field("pipe_interval", "int64", (N_PIPES,), "cycles", "cycles a pipe is busy per warp-instruction",
          given=True),
    Field("w_resident", "int64", W, "flag", "1 while the slot holds a live warp"),
    Field("w_done", "int64", W, "flag", "1 when the warp exited (or the slot is empty)", fill=1),
    Field("w_state", "int64", W, "stalls.* state", "current warp state"),
    Field("w_since", "int64", W, "cycle", "since when the warp is in that state"),
    Field("w_pc", "int64", W, "pc", "the pc the current state is charged to"),
    Field("w_eval", "int64", ("EVAL",), "cycle", "next cycle the warp needs evaluating, sub-partition-major: "
          "slot k of SM sm at (sm*NSP + k%NSP)*PER_SUB + k//NSP (dispatch.eval_slot), so a scheduler's scan "
          "reads one contiguous run", fill=int(INF_CYCLE)),
    Field("w_wake", "int64", W, "cycle", "a wait set at issue (branch, barrier release, ...)"),
    Field("w_reason", "int64", W, "stalls.* state", "the state charged until w_wake"),
    Field("w_age", "int64", W, "count", "dispatch order (GTO's oldest)"),
    Field("w_bar", "int64", W, "flag", "waiting at a barrier"),
    Field("w_bar_id", "int64", W, "barrier", "its id"),
    Field("w_bar_count", "int64", W, "threads", "its thread count"),
    Field("w_mem_pending", "int64", W, "cycle", "cycle its last store/atomic completes"),
    Field("w_exiting", "int64", W, "flag", "exited, draining stores"),
    Field("w_group", "int64", W, "flag", "two-level scheduler: 1 in the active set", fill=1),
    Field("w_cached", "int64", W, "flag", "1 while w_dep_ready/w_dep_state/w_pipe/w_next_pc are valid"),
    Field("w_dep_ready", "int64", W, "cycle", "when the next instruction's operands (and w_wake) allow issue"),
    Field("w_dep_state", "int64", W, "stalls.* state", "the state until then"),
    Field("w_pipe", "int64", W, "pipe", "the next instruction's pipe"),
    Field("w_next_pc", "int64", W, "pc", "the next instruction's pc"),
    Field("reg_ready", "int64", ("W", "R"), "cycle", "cycle each register's pending write completes", given=True),
    Field("reg_dep", "int64", ("W", "R"), "isa.DEP_*", "dependency class of that write", given=True),
    Field("pipe_free", "int64", ("SUB", N_PIPES), "cycle", "next cycle each pipe accepts an instruction"),
    Field("pipe_busy_acc", "int64", ("SUB", N_PIPES), "cycles", "the pipe's busy cycles before pipe_busy_t0 "
          "(pipes.hold_pipe)"),
    Field("pipe_busy_t0", "int64", ("SUB", N_PIPES), "cycle", "start of the pipe's current busy history"),
    Field("w_parked", "int64", W, "flag", "1 while the warp waits only for its scheduler (lazy accounting)"),
    Field("w_park_busy", "int64", W, "cycles", "its pipe's busy count (pipes.busy_before) when it was parked"),
    Field("park_mask", "int64", ("SUB", N_PIPES), "warp bits", "parked warps of each sub-partition by next pipe "
          "(bit j: slot sp + j * NSP)"),
    Field("park_pipes", "int64", SUB, "pipe bits", "bit p set while park_mask[sub, p] is not empty"),
    Field("sub_next", "int64", SUB, "cycle", "next cycle a non-parked warp of the sub-partition needs evaluating",
          fill=int(INF_CYCLE)),
    Field("sched_last", "int64", SUB, "warp slot", "last warp slot each scheduler issued", fill=-1),
    Field("sched_active", "int64", SUB, "warps", "two-level active-set size"),
    Field("sm_next", "int64", SM, "cycle", "next cycle the SM needs evaluating", fill=int(INF_CYCLE)),
    Field("sm_warps", "int64", SM, "warps", "resident warps"),
    Field("sm_active_since", "int64", SM, "cycle", "start of the current busy interval"),
    Field("sm_active_cycles", "int64", SM, "cycles", "cycles with at least one resident warp"),
    Field("sm_dispatch_free", "int64", SM, "cycle", "earliest cycle the SM may start its next block"),
    Field("b_block", "int64", ("BS",), "block", "block in each block slot (-1 free)", fill=-1),
    Field("b_live", "int64", ("BS",), "warps", "live warps of each block slot"),
    Field("stalls", "int64", (N_STATES,), "warp-cycles", "warp-cycles per state"),
    Field("pc_stalls", "int64", ("NI", N_STATES), "warp-cycles", "warp-cycles per state charged to each pc"),
    Field("pc_mem", "int64", ("NI", PC_MEM), "PM_*", "per-pc memory statistics"),
    Field("pipe_issues", "int64", (N_PIPES,), "warp-instructions", "warp-instructions issued per pipe"),
    Field("ctr", "int64", (CTR,), "TC_*", "timing counters"),
    Field("sectors", "int64", (SCRATCH_SECTORS,), "sector", "scratch for the coalescer: sectors"),
    Field("lane_ops", "int64", (SCRATCH_SECTORS,), "lanes", "scratch for the coalescer: lanes per sector "
          "(atomics), partial-sector flags (stores)"),
    Field("bank_scratch", "int64", ("BANKS",), "-", "scratch for shared-memory bank conflicts "
          "(shared_banks.make_shared_scratch)", given=True),
    Field("addrs", "int64", (32,), "address", "scratch: per-lane addresses as the memory system sees them"),
    Field("trace", "int64", ("CAP", TRACE), "TR_*", "warp-state intervals when tracing"),
    Field("trace_n", "int64", (2,), "rows, flag", "rows of trace; [1] = 1 if it was cut"),
    Field("mem_trace", "int64", ("CAP", MEM_TRACE), "MT_*", "memory requests when tracing"),
    Field("mem_trace_n", "int64", (2,), "rows, flag", "rows of mem_trace; [1] = 1 if it was cut"),
    Field("last_sectors", "int64", (1,), "sectors", "sectors of the last global/local request"),
    Field("issue_trace", "int64", ("CAP", ISSUE_TRACE), "IT_*", "issued warp-instructions when tracing"),
    Field("issue_trace_n", "int64", (2,), "rows, flag", "rows of issue_trace; [1] = 1 if it was cut"),
    Field("shared_path", "float64", ("PATHS",), "cycle", "next-free instant of each SM's shared-memory data "
          "path, then of each SM's SM-to-SM (DSM) port: 2 x NSM servers"),
    Field("loop", "int64", (LOOP,), "LP_*", "the timed loop between two calls"),
    Field("cp_state", "int64", ("W", CP), "CP_*", "cp.async groups per warp (async_timing.async_copy_groups)"),
    Field("bulk_groups", "int64", ("W", CP), "CP_*", "cp.async.bulk groups per warp, kept like cp_state "
          "(async_timing.py)"),
    Field("tma_unit", "int64", ("NSM", TMA_UNIT_WORDS), "cycle, addresses, stamps", "each SM's TMA unit: next "
          "free cycle, descriptor-cache tags and LRU stamps (tma_timing.py)"),
), dims={"W": "warp slots (NSM x SLOTS)", "SUB": "sub-partitions (NSM x NSP)", "NSM": "SMs",
         "BS": "block slots (NSM x BSLOTS)", "EVAL": "NSM x NSP x ceil(SLOTS / NSP)",
         "R": "registers per thread (at least 1)", "NI": "instructions (at least 1)",
         "CAP": "trace capacity (0: no trace)", "BANKS": "shared_banks.shared_scratch_length(banks)",
         "forms": "rows of the opcode table"})

# <state-layout:TimingState begin>
class TimingState(NamedTuple):
    """the timed loop's state (fields: docs/engine-state.md)."""

    prm: np.ndarray
    isa: np.ndarray
    pipe_interval: np.ndarray
    w_resident: np.ndarray
    w_done: np.ndarray
    w_state: np.ndarray
    w_since: np.ndarray
    w_pc: np.ndarray
    w_eval: np.ndarray
    w_wake: np.ndarray
    w_reason: np.ndarray
    w_age: np.ndarray
    w_bar: np.ndarray
    w_bar_id: np.ndarray
    w_bar_count: np.ndarray
    w_mem_pending: np.ndarray
    w_exiting: np.ndarray
    w_group: np.ndarray
    w_cached: np.ndarray
    w_dep_ready: np.ndarray
    w_dep_state: np.ndarray
    w_pipe: np.ndarray
    w_next_pc: np.ndarray
    reg_ready: np.ndarray
    reg_dep: np.ndarray
    pipe_free: np.ndarray
    pipe_busy_acc: np.ndarray
    pipe_busy_t0: np.ndarray
    w_parked: np.ndarray
    w_park_busy: np.ndarray
    park_mask: np.ndarray
    park_pipes: np.ndarray
    sub_next: np.ndarray
    sched_last: np.ndarray
    sched_active: np.ndarray
    sm_next: np.ndarray
    sm_warps: np.ndarray
    sm_active_since: np.ndarray
    sm_active_cycles: np.ndarray
    sm_dispatch_free: np.ndarray
    b_block: np.ndarray
    b_live: np.ndarray
    stalls: np.ndarray
    pc_stalls: np.ndarray
    pc_mem: np.ndarray
    pipe_issues: np.ndarray
    ctr: np.ndarray
    sectors: np.ndarray
    lane_ops: np.ndarray
    bank_scratch: np.ndarray
    addrs: np.ndarray
    trace: np.ndarray
    trace_n: np.ndarray
    mem_trace: np.ndarray
    mem_trace_n: np.ndarray
    last_sectors: np.ndarray
    issue_trace: np.ndarray
    issue_trace_n: np.ndarray
    shared_path: np.ndarray
    loop: np.ndarray
    cp_state: np.ndarray
    bulk_groups: np.ndarray
    tma_unit: np.ndarray
# <state-layout:TimingState end>

# <state-layout:prm begin>
TP_NSM = 0
TP_NSP = 1
TP_SLOTS = 2
TP_BSLOTS = 3
TP_WPB = 4
TP_TPB = 5
TP_NBLOCKS = 6
TP_BLOCK_LAUNCH = 7
TP_SHARED_LAT = 8
TP_SHARED_ATOMIC_LAT = 9
TP_MAX_CYCLES = 10
TP_POLICY = 11
TP_TWO_LEVEL_N = 12
TP_BANKS = 13
TP_BANK_BYTES = 14
TP_SECTOR = 15
TP_LINE = 16
TP_LOCAL_BYTES = 17
TP_CLOCK_MHZ = 18
TP_USE_L1 = 19
TP_SHARED_BYTES_PER_CYCLE = 20
TP_BARRIER_LAT = 21
TP_TEX_LAT = 22
TP_WHATIF = 23
TP_WGMMA_N8_INTERVAL = 24
TP_WGMMA_LATENCY = 25
TP_BLOCK_INTERVAL = 26
TP_BARRIER_PER_WARP = 27
TP_TMA_INTERVAL = 28
TP_TMA_DESC_MISS = 29
TP_CLUSTER = 30
TP_GPC_SMS = 31
TP_DSM_RTT = 32
TP_DSM_MILLIBYTES = 33
TP_CLUSTER_BAR_LAT = 34
TP_WGMMA_QUEUE = 35
N_TP = 36
# <state-layout:prm end>

# <state-layout:ctr begin>
TC_GLD_REQ = 0
TC_GLD_SECTORS = 1
TC_GLD_IDEAL = 2
TC_GST_REQ = 3
TC_GST_SECTORS = 4
TC_GST_IDEAL = 5
TC_GATOM_REQ = 6
TC_GATOM_SECTORS = 7
TC_LLD_REQ = 8
TC_LLD_SECTORS = 9
TC_LST_REQ = 10
TC_LST_SECTORS = 11
TC_SHLD_REQ = 12
TC_SHLD_WAVEFRONTS = 13
TC_SHST_REQ = 14
TC_SHST_WAVEFRONTS = 15
TC_SHATOM_REQ = 16
TC_SHATOM_WAVEFRONTS = 17
TC_SHLD_IDEAL = 18
TC_SHST_IDEAL = 19
TC_LG_THROTTLE_CYCLES = 20
TC_END_CYCLE = 21
TC_BLOCKS_DONE = 22
TC_TEX_REQ = 23
TC_TEX_SECTORS = 24
N_TC = 25
# <state-layout:ctr end>

# <state-layout:cp-state begin>
CP_OPEN = 0
CP_COUNT = 1
CP_FLOOR = 2
CP_RING0 = 3
CP_FIELDS = 38
# <state-layout:cp-state end>

# <state-layout:loop begin>
LP_STARTED = 0
LP_CYCLE = 1
LP_NEXT_BLOCK = 2
LP_AGE = 3
N_LP = 4
# <state-layout:loop end>

# <state-layout:pc-mem begin>
PM_REQUESTS = 0
PM_SECTORS = 1
PM_IDEAL_SECTORS = 2
PM_WAVEFRONTS = 3
PM_IDEAL_WAVEFRONTS = 4
N_PCMEM = 5
# <state-layout:pc-mem end>

# <state-layout:trace begin>
TR_WARP = 0
TR_STATE = 1
TR_START = 2
TR_END = 3
TR_PC = 4
TR_BLOCK = 5
N_TRACE_FIELDS = 6
# <state-layout:trace end>

# <state-layout:mem-trace begin>
MT_ISSUE = 0
MT_DONE = 1
MT_WARP = 2
MT_PC = 3
MT_LEVEL = 4
MT_SECTORS = 5
MT_KIND = 6
MT_SPACE = 7
MT_BLOCK = 8
N_MEM_TRACE_FIELDS = 9
# <state-layout:mem-trace end>

# <state-layout:issue-trace begin>
IT_CYCLE = 0
IT_WARP = 1
IT_PC = 2
IT_ACTIVE = 3
IT_PRED_ON = 4
IT_STALL_BEFORE = 5
IT_BLOCK = 6
N_ISSUE_TRACE_FIELDS = 7
# <state-layout:issue-trace end>


class MemoryPath(NamedTuple):
    """What the memory path of an issued instruction touches (issue.memory_timing): views of TimingState and
    Machine arrays, gathered once per run so that each call passes 20 arrays instead of both whole states."""

    prm: np.ndarray
    pipe_interval: np.ndarray
    pipe_free: np.ndarray
    pipe_busy_acc: np.ndarray
    pipe_busy_t0: np.ndarray
    shared_path: np.ndarray
    bank_scratch: np.ndarray
    pc_mem: np.ndarray
    last_sectors: np.ndarray
    ctr: np.ndarray
    addrs: np.ndarray
    sectors: np.ndarray
    lane_ops: np.ndarray
    w_mem_pending: np.ndarray
    mem_trace: np.ndarray
    mem_trace_n: np.ndarray
    mem_req: np.ndarray        # Machine's
    lane_addr: np.ndarray      # Machine's
    warp_block: np.ndarray     # Machine's
    cp_state: np.ndarray       # tensor cores (issue 14)
    bulk_groups: np.ndarray    # cp.async.bulk groups (issue 25)
    bulk_tx: np.ndarray        # Machine's: bulk copies in flight
    warp_bslot: np.ndarray     # Machine's
    tma_unit: np.ndarray       # TMA (tma_timing.py)


MEMORY_PATH_FIELDS = list(MemoryPath._fields)

CacheState = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""A cache's arrays (memory.cache.make_cache): tags, sector ready cycles, LRU stamps, dirty bits, meta."""


class MemorySystem(NamedTuple):
    """The memory hierarchy's state (see gpusim.engine.memory.memsys): caches, servers, MSHRs, counters."""

    l1: CacheState
    l2: CacheState
    servers: tuple[np.ndarray, ...]    # float64 next-free instants, indices memsys.SRV_*
    mshr: np.ndarray                   # int64[sms, mshrs_per_sm]: cycle each MSHR frees (a min-heap per SM)
    params: np.ndarray                 # int64[memsys.N_INT_PARAMS]
    rates: np.ndarray                  # float64[memsys.N_RATE_PARAMS]
    counters: np.ndarray               # int64[memsys.N_COUNTERS]


def make_timing_state(*, prm: np.ndarray, isa_table: np.ndarray, pipe_interval: np.ndarray, n_regs: int,
                      n_inst: int, trace_capacity: int = 0) -> TimingState:
    """Allocate the timing state of a launch from ``TIMING_STATE`` (``prm`` gives the geometry)."""
    nsm, nsp, slots, bslots = (int(prm[TP_NSM]), int(prm[TP_NSP]), int(prm[TP_SLOTS]), int(prm[TP_BSLOTS]))
    warps = nsm * slots
    # a register's ready cycle and dependency class side by side: the scoreboard check reads both
    reg_wait = np.zeros((warps, max(n_regs, 1), 2), dtype=np.int64)
    bank_scratch = make_shared_scratch(int(prm[TP_BANKS]))
    dims = {"W": warps, "SUB": nsm * nsp, "NSM": nsm, "BS": nsm * bslots, "EVAL": nsm * nsp * -(-slots // nsp),
            "R": max(n_regs, 1), "NI": max(n_inst, 1), "CAP": trace_capacity, "BANKS": len(bank_scratch),
            "forms": len(isa_table), "PATHS": 2 * nsm}
    given = {"prm": prm, "isa": isa_table, "pipe_interval": pipe_interval, "reg_ready": reg_wait[:, :, 0],
             "reg_dep": reg_wait[:, :, 1], "bank_scratch": bank_scratch}
    return TimingState(**allocate(TIMING_STATE, dims, given))
