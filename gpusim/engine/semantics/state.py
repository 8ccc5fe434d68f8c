"""The engine's mutable state (the functional ``Machine``), declared in one place.

What it models
    Everything that changes while a kernel runs is a numpy array inside the ``Machine`` named tuple. Warp
    state is indexed by *warp slot* ``w``; a slot holds one warp of a resident block. Lane ``l`` of slot ``w``
    is row ``w * 32 + l`` of the per-thread arrays. The small int64 arrays ``launch``, ``err``, ``mem_req``,
    ``hw_notes`` and the rows of ``race_found`` have named columns; enumerated values have prefixes of their
    own (``MK_``, ``ERR_``, ``ASYNC_``), never a column prefix (``MR_``, ``E_``).

How it is declared
    ``MACHINE`` and the ``Columns``/``Kinds`` below are the single source (gpusim.engine.records): the
    ``state-layout`` blocks are generated from them (``python scripts/doc_tables.py --render``), ``make_machine``
    allocates from them, docs/engine-state.md shows them; to add a field, add its row, run the script.

Simplifications
    Device memory is one heap (``mem8``..``mem64`` views); shared, local and parameter memory are byte buffers
    with 16/32/64-bit views: every width is a plain array access.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from gpusim.engine.records import Column, Columns, Field, Kind, Kinds, Record, allocate
from gpusim.errors import LaunchError

WARP_SIZE = 32
FULL_MASK = 0xFFFFFFFF
ITS_SIG_SLOTS = 8         # back-edge signatures kept per warp, indexed by the branch's pc
RF_MAX = 64               # distinct (kind, pc, pc) hazards kept; race_found[RF_MAX - 1, RF_COUNT] counts the rest
INIT_MAX = 64             # reading instructions kept; init_found[INIT_MAX - 1, IF_COUNT] counts the rest
LANE_ADDR_TEXTURE = 32    # textures: a fetch's sectors are in lane_addr[LANE_ADDR_TEXTURE:][:mem_req[MR_TEX_SECTORS]]
TEXTURE_MAX_SECTORS = 256      # 32 lanes x 8 texels of a 3D linear fetch
TENSOR_SCRATCH = 1536     # float64 words: A, B and C of the widest tensor instruction

LAUNCH = Columns("launch", "launch", "L_", "LAUNCH_FIELDS", "grid/block geometry, sizes and launch options", (
    Column("NTID_X", "threads", "block size, x"),
    Column("NTID_Y", "threads", "block size, y"),
    Column("NTID_Z", "threads", "block size, z"),
    Column("NCTAID_X", "blocks", "grid size, x"),
    Column("NCTAID_Y", "blocks", "grid size, y"),
    Column("NCTAID_Z", "blocks", "grid size, z"),
    Column("THREADS_PER_BLOCK", "threads", "threads of one block"),
    Column("WARPS_PER_BLOCK", "warps", "warps of one block"),
    Column("NSM", "SMs", "SMs of the GPU (%nsmid)"),
    Column("DYNAMIC_SMEM", "bytes", "dynamic shared memory per block"),
    Column("SHARED_BYTES", "bytes", "shared memory per block (static + dynamic)"),
    Column("GRIDID", "id", "the launch's %gridid"),
    Column("HEAP_BYTES", "bytes", "size of the device heap"),
    Column("LOCAL_BYTES", "bytes", "local memory per thread"),
    Column("PARAM_BYTES", "bytes", "size of the parameter buffer"),
    Column("N_INST", "instructions", "instructions of the program"),
    Column("STACK_DEPTH", "entries", "SIMT stack entries per warp"),
    Column("MAX_WARPS_PER_SM", "warps", "resident warps an SM holds"),
    Column("SYNCCHECK", "SYNC_* mode", "what a block-wide bar.sync some threads skip does (launch/sanitize.py)"),
    Column("CALL_DEPTH", "calls", "max_call_depth: nested calls a thread may be inside"),
    Column("RECONVERGENCE", "RECONV_*", "reconvergence model (GPU(reconvergence=...))"),
    Column("SHARED_LIMIT", "bytes", "shared bytes a block may touch: its allocation granule (>= SHARED_BYTES)"),
    Column("MEMCHECK", "flag", "1: an access past the declared shared size is an error"),
    Column("RACECHECK", "flag", "1: shared-memory hazards are recorded in race_found"),
    Column("TIMED", "flag", "1 while the timed loop runs (set at entry; bulk copies then land when timed)"),
    Column("CLUSTER", "x | y << 8 | z << 16", "the cluster's shape (0: no cluster launch; semantics/cluster.py)"),
))
SYNC_OFF, SYNC_STRICT, SYNC_HARDWARE = 0, 1, 2   # L_SYNCCHECK: no check, synccheck error, count exited threads
RECONV_IPDOM, RECONV_ITS = 0, 1                  # L_RECONVERGENCE

ERR = Columns("err", "err", "E_", "N_ERR", "the first error of the launch", (
    Column("KIND", "ERR_*", "what went wrong (ERR_NONE: nothing)"),
    Column("PC", "pc", "the instruction"),
    Column("WARP", "warp slot", "the warp"),
    Column("LANE", "lane", "the lane"),
    Column("ADDRESS", "address / lanes", "the address (or a lane mask, per kind)"),
    Column("EXTRA", "kind-specific", "a further detail (size, expected value, ...)"),
    Column("SUB", "kind-specific code", "which rule (SYNC_* for ERR_SYNC, TEXERR_* for ERR_TEXTURE)"),
), width=8)
ERROR_KINDS = Kinds("error-kinds", "err[E_KIND]", "ERR_", "error kinds (gpusim.launch turns them into errors)", (
    Kind("NONE", 0, "no error"),
    Kind("OUT_OF_BOUNDS", 1, "an access outside every allocation"),
    Kind("MISALIGNED", 2, "an access not aligned to its size"),
    Kind("STACK_OVERFLOW", 3, "the SIMT stack is full"),
    Kind("TRAP", 4, "trap executed"),
    Kind("BAD_SPACE", 5, "a generic address in no state space"),
    Kind("UNINITIALIZED", 6, "initcheck: a read of device memory nothing wrote"),
    Kind("BARRIER", 7, "synccheck: a bar.sync some threads of the block skipped (address: their lanes)"),
    Kind("SYNC", 8, "a warp-wide op's member mask the ISA leaves undefined (E_SUB: which rule)"),
    Kind("CALL_DEPTH", 9, "a call past max_call_depth (address: the depth it would reach)"),
    Kind("TEXTURE", 10, "a bad texture handle or a mismatched fetch (E_SUB: TEXERR_* of arch.texture_layout)"),
    Kind("ASSERT", 11, "a failed assert(): __assertfail (address: the lanes that called it)"),
    Kind("MEMCHECK", 12, "memcheck: a shared access past the declared size, inside the granule"),
    Kind("ASYNC", 13, "an mbarrier or bulk-copy rule broken (E_SUB: ASYNC_*, E_EXTRA: the value)"),
    Kind("CLUSTER", 14, "a DSM access the ISA leaves undefined (E_SUB: cluster.CLERR_*, E_EXTRA: the rank)"),
))
ASYNC_UNINIT, ASYNC_UNDERFLOW, ASYNC_TX_RANGE, ASYNC_INIT_COUNT = 1, 2, 3, 4   # E_SUB of ERR_ASYNC: the rule broken
ASYNC_BULK_ALIGN, ASYNC_BULK_SIZE, ASYNC_NO_COMPLETE, ASYNC_BULK_SPACE = 5, 6, 7, 8
ASYNC_TMAP, ASYNC_TMAP_RANK, ASYNC_TMA_ALIGN, ASYNC_TMA_SLOTS = 9, 10, 11, 12   # TMA (semantics/tma.py)
ASYNC_LATE_ARRIVAL = 13   # an arrival of cp.async.mbarrier.arrive (when its copies land) found none pending
# E_SUB of ERR_SYNC: which member-mask rule was broken
SYNC_NOT_MEMBER, SYNC_INACTIVE_MEMBER, SYNC_MASK_MISMATCH = 1, 2, 3
SYNC_NEVER_ARRIVES = 4    # ITS: every group of the warp is blocked at a warp-synchronous instruction

HW_NOTES = Columns("hw-notes", "hw_notes", "HN_", "N_HW_NOTES",
                   "what a sanitizer would report but the hardware runs", (
    Column("EXIT_BAR", "count", "an exited thread at a block-wide barrier"),
    Column("EXIT_BAR_PC", "pc", "the first such barrier"),
    Column("EXIT_BAR_BLOCK", "block", "its block"),
    Column("SHARED_OVER", "count", "an access past the declared shared size inside the allocation granule"),
    Column("SHARED_OVER_PC", "pc", "the first such access"),
    Column("SHARED_OVER_BLOCK", "block", "its block"),
    Column("SHARED_OVER_ADDRESS", "shared address", "its address"),
), width=8)

RACE_FOUND = Columns("race-found", "race_found[row]", "RF_", "RF_N",
                     "one distinct racecheck hazard per row (semantics/racecheck.py)", (
    Column("KIND", "RACE_*", "the hazard"),
    Column("PC0", "pc", "the earlier access"),
    Column("PC1", "pc", "the later access"),
    Column("TID0", "thread", "the earlier access's thread"),
    Column("TID1", "thread", "the later access's thread"),
    Column("BLOCK", "block", "the block"),
    Column("ADDRESS", "shared address", "the byte"),
    Column("COUNT", "count", "times this hazard was seen"),
))
INIT_FOUND = Columns("init-found", "init_found[row]", "IF_", "IF_N",
                     "one instruction's reads of never-written global memory per row (initcheck; memops.py)", (
    Column("PC", "pc", "the reading instruction"),
    Column("TID", "thread", "the first thread found reading (its index in the block)"),
    Column("BLOCK", "block", "its block"),
    Column("ADDRESS", "address", "the first address it read"),
    Column("BYTES", "bytes", "the size of that access"),
    Column("COUNT", "count", "thread accesses of this instruction that read never-written bytes"),
))
RACE_RAW, RACE_WAR, RACE_WAW, RACE_WAW_SAME = 1, 2, 3, 4   # RF_KIND; the last: a warning (the value already there)

MEM_REQ = Columns("mem-req", "mem_req", "MR_", "MEM_REQ_FIELDS",
                  "scratch: the last memory operation, as the functional step leaves it for the timing model", (
    Column("SPACE", "SP_* space", "state space of the access"),
    Column("SIZE", "bytes", "bytes per lane per element (wait_group: N)"),
    Column("VEC", "elements", "vector width (wait_group: 1 for wait_all)"),
    Column("KIND", "MK_* kind", "what the operation is (0: no memory operation)"),
    Column("MASK", "lanes", "lanes that take part"),
    Column("BYTES", "bytes", "bytes moved"),
    Column("BAR_ID", "barrier", "barrier id of a bar instruction"),
    Column("BAR_COUNT", "threads", "its thread count"),
    Column("PC", "pc", "the pc executed"),
    Column("ACTIVE", "lanes", "active lanes"),
    Column("PRED_ON", "lanes", "predicated-on lanes"),
    Column("TEX_SECTORS", "sectors", "sectors a texture fetch read (in lane_addr after LANE_ADDR_TEXTURE)"),
    Column("ASYNC", "ASYNC_* flags", "cp.async: set on a copy's load (wgmma: its group requests), cleared by "
           "the timing model"),
))
MEM_KINDS = Kinds("mem-kinds", "mem_req[MR_KIND]", "MK_", "kinds of memory operation", (
    Kind("LOAD", 1, "a load"),
    Kind("STORE", 2, "a store"),
    Kind("ATOMIC", 3, "an atomic or reduction"),
    Kind("TEXTURE", 4, "a texture fetch"),
    Kind("ASYNC_COMMIT", 5, "cp.async.commit_group (only the timing model's cp.async groups act on it)"),
    Kind("ASYNC_WAIT", 6, "cp.async.wait_group / wait_all"),
    Kind("WGMMA", 7, "wgmma.mma_async: the tensor pipe, its shared-memory operand bytes, the warp's open group"),
    Kind("BULK", 8, "cp.async.bulk: the copies of the instruction are in bulk_tx (BT_STATE = BTS_UNTIMED)"),
    Kind("BULK_COMMIT", 9, "cp.async.bulk.commit_group"),
    Kind("BULK_WAIT", 10, "cp.async.bulk.wait_group{.read} N"),
))
BULK_SLOTS = 64           # bulk copies in flight per block slot (bulk_tx rows)
BULK_ROW_WORDS = 16       # a bulk_tx row: the BT_* columns, then a tensor copy's (arch.tensor_map_layout TB_*)
BULK_STATES = Kinds("bulk-states", "bulk_tx[bslot, i, BT_STATE]", "BTS_", "a bulk copy's state", (
    Kind("FREE", 0, "the row is free"),
    Kind("UNTIMED", 1, "issued, not yet timed (the timing model gives it its arrival next)"),
    Kind("TIMED", 2, "timed: BT_READY holds the cycle its bytes land"),
))
BULK_TX = Columns("bulk-tx", "bulk_tx[bslot, i]", "BT_", "BT_FIELDS",
                  "one cp.async.bulk copy in flight (semantics/mbarrier.py, sm/async_timing.py)", (
    Column("STATE", "BTS_*", "free; issued, not yet timed; timed (READY holds its arrival)"),
    Column("MBAR", "shared address", "its mbarrier (global->shared), or -1 (shared->global: a bulk group)"),
    Column("BYTES", "bytes", "bytes copied: the mbarrier's tx-count completes by them"),
    Column("READY", "cycle", "when the data has landed (the complete-tx happens then)"),
    Column("GADDR", "heap offset", "the global end of the copy (source or destination)"),
))
ASYNC_FLAGS = Kinds("async-flags", "mem_req[MR_ASYNC]", "ASYNC_", "cp.async flags (bits)", (
    Kind("COPY", 1, "the load is a cp.async copy's"),
    Kind("NO_L1", 2, "cp.async.cg, ld.global.cg / .cv: the load bypasses L1"),
    Kind("WGMMA", 4, "a commit_group / wait_group request is wgmma's (its own groups)"),
    Kind("READ", 8, "a cp.async.bulk.wait_group.read: it waits for the groups' source reads, not their writes"),
))

MACHINE = Record("Machine", "the functional state of one launch", (
    Field("regs", "uint64", ("W", "R", 32), "raw bits", "register file: 32-bit values zero-extended"),
    Field("stk_pc", "int64", ("W", "D"), "pc", "SIMT stack: next pc of each entry"),
    Field("stk_rpc", "int64", ("W", "D"), "pc", "SIMT stack: reconvergence pc (-1 for the base entry)", fill=-1),
    Field("stk_mask", "int64", ("W", "D"), "lanes", "SIMT stack: lane mask of each entry"),
    Field("sp", "int64", ("W",), "entry", "index of the top entry (-1: warp finished)", fill=-1),
    Field("exited", "int64", ("W",), "lanes", "lanes that have exited (or never existed)"),
    Field("warp_block", "int64", ("W",), "block", "linear block id (in the grid) of the slot's warp"),
    Field("warp_index", "int64", ("W",), "warp", "warp index within its block"),
    Field("warp_bslot", "int64", ("W",), "block slot", "block slot (row of the shared-memory arrays)"),
    Field("warp_sm", "int64", ("W",), "SM", "SM the warp runs on"),
    Field("warp_slot_sm", "int64", ("W",), "warp slot", "warp slot number within its SM (%warpid)"),
    Field("mem8", "uint8", ("H",), "bytes", "device memory from GLOBAL_BASE", given=True),
    Field("mem16", "uint16", ("H/2",), "raw bits", "16-bit view of the heap", given=True),
    Field("mem32", "uint32", ("H/4",), "raw bits", "32-bit view of the heap", given=True),
    Field("mem64", "uint64", ("H/8",), "raw bits", "64-bit view of the heap", given=True),
    Field("valid", "uint8", ("H",), "state", "0 no allocation, 1 allocated never written, 2 written", given=True),
    Field("shared8", "uint8", ("B", "S"), "bytes", "shared memory of each block slot", given=True),
    Field("shared16", "uint16", ("B", "S/2"), "raw bits", "16-bit view", given=True),
    Field("shared32", "uint32", ("B", "S/4"), "raw bits", "32-bit view", given=True),
    Field("shared64", "uint64", ("B", "S/8"), "raw bits", "64-bit view", given=True),
    Field("local8", "uint8", ("W*32", "LB"), "bytes", "local memory of each thread", given=True),
    Field("local16", "uint16", ("W*32", "LB/2"), "raw bits", "16-bit view", given=True),
    Field("local32", "uint32", ("W*32", "LB/4"), "raw bits", "32-bit view", given=True),
    Field("local64", "uint64", ("W*32", "LB/8"), "raw bits", "64-bit view", given=True),
    Field("param8", "uint8", ("P",), "bytes", "the launch's parameter buffer", given=True),
    Field("param16", "uint16", ("P/2",), "raw bits", "16-bit view", given=True),
    Field("param32", "uint32", ("P/4",), "raw bits", "32-bit view", given=True),
    Field("param64", "uint64", ("P/8",), "raw bits", "64-bit view", given=True),
    Field("launch", "int64", (LAUNCH,), "L_*", "grid/block geometry and sizes", given=True),
    Field("pc_counts", "int64", ("NI", 3), "count", "warp instructions, active threads, predicated-on threads"),
    Field("err", "int64", (ERR,), "E_*", "the first error"),
    Field("bar_arrivals", "int64", ("W",), "count", "block-wide bar.sync a warp has arrived at (synccheck)"),
    Field("lane_addr", "int64", (LANE_ADDR_TEXTURE + TEXTURE_MAX_SECTORS,), "address",
          "scratch: per-lane resolved address of the last memory op; after the 32 lanes, the sorted sectors a "
          "texture fetch read"),
    Field("mem_req", "int64", (MEM_REQ,), "MR_*", "scratch: the last memory op"),
    Field("snap", "uint64", (WARP_SIZE,), "raw bits", "scratch: a register of all lanes (shuffles)"),
    Field("clock", "int64", (1,), "cycle", "the current cycle (for %clock)"),
    Field("shfl_values", "uint64", (WARP_SIZE,), "raw bits", "scratch: shuffle results before they are written"),
    Field("shfl_preds", "uint64", (WARP_SIZE,), "flag", "scratch: shuffle predicates"),
    Field("members", "int64", (WARP_SIZE,), "lanes", "scratch: each lane's member-mask group (warp-wide ops)"),
    Field("printf8", "uint8", ("F",), "bytes", "the launch's printf records (engine/semantics/calls.py)",
          given=True),
    Field("printf64", "uint64", ("F/8",), "raw bits", "64-bit view of the printf records", given=True),
    Field("printf_ctl", "int64", (4,), "bytes, records", "printf buffer: bytes used, records dropped, records kept"),
    Field("its_wait", "int64", ("W",), "lanes", "ITS: lanes blocked at a warp-synchronous instruction (its.py)"),
    Field("its_sig", "uint64", ("W", ITS_SIG_SLOTS), "hash",
          "ITS: state signature at a diverged group's last back edges"),
    Field("bar_red", "int64", ("W", 8), "record", "bar.red per warp: phase, generation, two records "
          "(barrier_reduce.py)"),
    Field("tensor_scratch", "float64", (TENSOR_SCRATCH,), "value", "scratch: A, B, C of a tensor instruction "
          "(semantics/tensor.py)"),
    Field("hw_notes", "int64", (HW_NOTES,), "HN_*", "what a sanitizer would report but the hardware runs"),
    Field("race_shadow", "int64", ("RB", "RS", 3), "stamp", "racecheck: last write and two reads of each "
          "shared byte"),
    Field("race_warp", "int64", ("RW", 2), "stamp", "racecheck: block stamp and barrier epoch of each warp slot"),
    Field("race_bstamp", "int64", ("RB",), "block + 1", "racecheck: block each block slot's shadow belongs to"),
    Field("race_found", "int64", (RF_MAX, RACE_FOUND), "RF_*", "racecheck: distinct hazards found"),
    Field("init_found", "int64", (INIT_MAX, INIT_FOUND), "IF_*", "initcheck: reads of never-written global memory"),
    Field("bulk_tx", "int64", ("B", BULK_SLOTS, BULK_ROW_WORDS), "BT_*", "cp.async.bulk copies in flight per block "
          "slot whose complete-tx the timed loop applies when they land (semantics/mbarrier.py)"),
), dims={"W": "warp slots", "R": "registers per thread", "D": "SIMT stack depth", "H": "heap bytes",
         "B": "block slots", "S": "shared bytes per block slot (padded to 8)",
         "LB": "local bytes per thread (padded to 8)", "P": "parameter bytes (padded)",
         "F": "printf buffer bytes (padded)", "NI": "instructions (at least 1)",
         "RB, RS, RW": "B, S and W under racecheck, else 1"})

# <state-layout:Machine begin>
class Machine(NamedTuple):
    """the functional state of one launch (fields: docs/engine-state.md)."""

    regs: np.ndarray
    stk_pc: np.ndarray
    stk_rpc: np.ndarray
    stk_mask: np.ndarray
    sp: np.ndarray
    exited: np.ndarray
    warp_block: np.ndarray
    warp_index: np.ndarray
    warp_bslot: np.ndarray
    warp_sm: np.ndarray
    warp_slot_sm: np.ndarray
    mem8: np.ndarray
    mem16: np.ndarray
    mem32: np.ndarray
    mem64: np.ndarray
    valid: np.ndarray
    shared8: np.ndarray
    shared16: np.ndarray
    shared32: np.ndarray
    shared64: np.ndarray
    local8: np.ndarray
    local16: np.ndarray
    local32: np.ndarray
    local64: np.ndarray
    param8: np.ndarray
    param16: np.ndarray
    param32: np.ndarray
    param64: np.ndarray
    launch: np.ndarray
    pc_counts: np.ndarray
    err: np.ndarray
    bar_arrivals: np.ndarray
    lane_addr: np.ndarray
    mem_req: np.ndarray
    snap: np.ndarray
    clock: np.ndarray
    shfl_values: np.ndarray
    shfl_preds: np.ndarray
    members: np.ndarray
    printf8: np.ndarray
    printf64: np.ndarray
    printf_ctl: np.ndarray
    its_wait: np.ndarray
    its_sig: np.ndarray
    bar_red: np.ndarray
    tensor_scratch: np.ndarray
    hw_notes: np.ndarray
    race_shadow: np.ndarray
    race_warp: np.ndarray
    race_bstamp: np.ndarray
    race_found: np.ndarray
    init_found: np.ndarray
    bulk_tx: np.ndarray
# <state-layout:Machine end>

# <state-layout:launch begin>
L_NTID_X = 0
L_NTID_Y = 1
L_NTID_Z = 2
L_NCTAID_X = 3
L_NCTAID_Y = 4
L_NCTAID_Z = 5
L_THREADS_PER_BLOCK = 6
L_WARPS_PER_BLOCK = 7
L_NSM = 8
L_DYNAMIC_SMEM = 9
L_SHARED_BYTES = 10
L_GRIDID = 11
L_HEAP_BYTES = 12
L_LOCAL_BYTES = 13
L_PARAM_BYTES = 14
L_N_INST = 15
L_STACK_DEPTH = 16
L_MAX_WARPS_PER_SM = 17
L_SYNCCHECK = 18
L_CALL_DEPTH = 19
L_RECONVERGENCE = 20
L_SHARED_LIMIT = 21
L_MEMCHECK = 22
L_RACECHECK = 23
L_TIMED = 24
L_CLUSTER = 25
LAUNCH_FIELDS = 26
# <state-layout:launch end>

# <state-layout:err begin>
E_KIND = 0
E_PC = 1
E_WARP = 2
E_LANE = 3
E_ADDRESS = 4
E_EXTRA = 5
E_SUB = 6
N_ERR = 8
# <state-layout:err end>

# <state-layout:error-kinds begin>
ERR_NONE = 0
ERR_OUT_OF_BOUNDS = 1
ERR_MISALIGNED = 2
ERR_STACK_OVERFLOW = 3
ERR_TRAP = 4
ERR_BAD_SPACE = 5
ERR_UNINITIALIZED = 6
ERR_BARRIER = 7
ERR_SYNC = 8
ERR_CALL_DEPTH = 9
ERR_TEXTURE = 10
ERR_ASSERT = 11
ERR_MEMCHECK = 12
ERR_ASYNC = 13
ERR_CLUSTER = 14
# <state-layout:error-kinds end>

# <state-layout:hw-notes begin>
HN_EXIT_BAR = 0
HN_EXIT_BAR_PC = 1
HN_EXIT_BAR_BLOCK = 2
HN_SHARED_OVER = 3
HN_SHARED_OVER_PC = 4
HN_SHARED_OVER_BLOCK = 5
HN_SHARED_OVER_ADDRESS = 6
N_HW_NOTES = 8
# <state-layout:hw-notes end>

# <state-layout:race-found begin>
RF_KIND = 0
RF_PC0 = 1
RF_PC1 = 2
RF_TID0 = 3
RF_TID1 = 4
RF_BLOCK = 5
RF_ADDRESS = 6
RF_COUNT = 7
RF_N = 8
# <state-layout:race-found end>

# <state-layout:init-found begin>
IF_PC = 0
IF_TID = 1
IF_BLOCK = 2
IF_ADDRESS = 3
IF_BYTES = 4
IF_COUNT = 5
IF_N = 6
# <state-layout:init-found end>

# <state-layout:mem-req begin>
MR_SPACE = 0
MR_SIZE = 1
MR_VEC = 2
MR_KIND = 3
MR_MASK = 4
MR_BYTES = 5
MR_BAR_ID = 6
MR_BAR_COUNT = 7
MR_PC = 8
MR_ACTIVE = 9
MR_PRED_ON = 10
MR_TEX_SECTORS = 11
MR_ASYNC = 12
MEM_REQ_FIELDS = 13
# <state-layout:mem-req end>

# <state-layout:mem-kinds begin>
MK_LOAD = 1
MK_STORE = 2
MK_ATOMIC = 3
MK_TEXTURE = 4
MK_ASYNC_COMMIT = 5
MK_ASYNC_WAIT = 6
MK_WGMMA = 7
MK_BULK = 8
MK_BULK_COMMIT = 9
MK_BULK_WAIT = 10
# <state-layout:mem-kinds end>

# <state-layout:async-flags begin>
ASYNC_COPY = 1
ASYNC_NO_L1 = 2
ASYNC_WGMMA = 4
ASYNC_READ = 8
# <state-layout:async-flags end>

# <state-layout:bulk-states begin>
BTS_FREE = 0
BTS_UNTIMED = 1
BTS_TIMED = 2
# <state-layout:bulk-states end>

# <state-layout:bulk-tx begin>
BT_STATE = 0
BT_MBAR = 1
BT_BYTES = 2
BT_READY = 3
BT_GADDR = 4
BT_FIELDS = 5
# <state-layout:bulk-tx end>


MACHINE_BUDGET_BYTES = 4 << 30
"""Host memory the engine state of one launch may take (registers, local and shared memory)."""


def padded(nbytes: int) -> int:
    """Sizes are padded to 8 bytes so that 64-bit views exist."""
    return max(8, (int(nbytes) + 7) // 8 * 8)


def make_machine(*, warp_slots: int, n_regs: int, stack_depth: int, block_slots: int, shared_bytes: int,
                 local_bytes: int, heap: np.ndarray, valid: np.ndarray, params: np.ndarray,
                 launch: np.ndarray, n_inst: int, printf_bytes: int = 0) -> Machine:
    """Allocate the state for ``warp_slots`` resident warps of a kernel; a LaunchError when its register
    file, local and shared memory would need more than ``MACHINE_BUDGET_BYTES`` of host memory."""
    needed = (warp_slots * WARP_SIZE * (8 * max(n_regs, 1) + padded(local_bytes))
              + block_slots * padded(shared_bytes))
    if needed > MACHINE_BUDGET_BYTES:
        raise LaunchError(f"the launch needs {needed / 2**30:.1f} GiB of simulator memory for its resident "
                          f"warps ({warp_slots} warps x 32 threads x ({n_regs} registers x 8 bytes + "
                          f"{local_bytes} bytes of local memory), {block_slots} blocks x {shared_bytes} bytes "
                          f"of shared memory); gpusim's limit is {MACHINE_BUDGET_BYTES / 2**30:.0f} GiB: "
                          "use fewer SMs (sms=) or less local memory per thread")
    shared_bytes = max(int(shared_bytes), int(launch[L_SHARED_LIMIT]))   # the allocation granule is addressable
    racing = launch[L_RACECHECK] != 0
    if racing:
        needed += block_slots * padded(shared_bytes) * 24
        if needed > MACHINE_BUDGET_BYTES:
            raise LaunchError(f"racecheck's shadow memory for {block_slots} resident blocks x {shared_bytes} bytes "
                              f"of shared memory needs {needed / 2**30:.1f} GiB, over gpusim's limit of "
                              f"{MACHINE_BUDGET_BYTES / 2**30:.0f} GiB: use fewer SMs (sms=)")
    shared = np.zeros((block_slots, padded(shared_bytes)), dtype=np.uint8)
    local = np.zeros((warp_slots * WARP_SIZE, padded(local_bytes)), dtype=np.uint8)
    printf = np.zeros(padded(printf_bytes), dtype=np.uint8)
    given = {"valid": valid, "launch": launch, "printf8": printf, "printf64": printf.view(np.uint64)}
    for prefix, buffer in (("mem", heap), ("shared", shared), ("local", local), ("param", params)):
        views = (buffer, *(buffer.view(t) for t in (np.uint16, np.uint32, np.uint64)))
        given.update(zip((f"{prefix}{bits}" for bits in (8, 16, 32, 64)), views, strict=True))
    dims = {"W": warp_slots, "R": n_regs, "D": stack_depth, "B": block_slots, "S": padded(shared_bytes),
            "LB": padded(local_bytes), "F": padded(printf_bytes), "NI": max(n_inst, 1),
            "RB": block_slots if racing else 1, "RS": padded(shared_bytes) if racing else 1,
            "RW": warp_slots if racing else 1}
    return Machine(**allocate(MACHINE, dims, given))
