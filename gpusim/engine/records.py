"""The engine's state records, declared once: every array of ``Machine`` and ``TimingState`` (name, dtype,
shape, meaning), and every column layout of an int64 array (``mem_req[MR_*]``, ``prm[TP_*]``, ...), with
the enumerations of kind values kept apart from the column indices (``MK_LOAD`` is a memory request's
kind, ``MR_KIND`` the column that holds it).

From these declarations ``scripts/gen_state_docs.py`` writes the typed record classes and the constants
into their modules (between ``# --- generated`` markers) and the tables of docs/engine-state.md; the
allocation (``allocate``) reads them at run time; tests/test_state_records.py checks the generated code
and document are current. To add a field or a column: add it here and run the script.

Shapes name dimensions: ``W`` warp slots, ``R`` registers per thread, ``D`` SIMT stack depth, ``NSM``
SMs, ``SUBS`` sub-partitions (NSM x NSP), ``WE`` the ``w_eval`` entries (NSM x NSP x ceil(SLOTS / NSP)),
``BSLOTS`` block slots (NSM x block slots per SM), ``N_INST`` instructions (at least 1), ``CAP`` trace rows;
a column layout's size is its ``size`` name (``N_TP``, ...). This module is plain data: numba never
compiles it, and it imports nothing of the engine.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    """One array of a record: ``shape`` is a tuple of dimension names and numbers (see the module's
    docstring); ``fill`` its initial value; ``given`` when the record's constructor supplies it."""

    name: str
    dtype: str
    shape: tuple[str | int, ...]
    meaning: str
    fill: str = "0"
    given: bool = False


@dataclass(frozen=True)
class Record:
    """A named tuple of arrays (numba passes it to compiled code as one struct)."""

    name: str
    module: str
    doc: str
    fields: tuple[Field, ...]

    def names(self) -> list[str]:
        return [f.name for f in self.fields]


@dataclass(frozen=True)
class Column:
    name: str
    meaning: str
    unit: str = ""


@dataclass(frozen=True)
class Columns:
    """The columns of an int64 array: constant ``{prefix}_{name}`` is column i; ``size`` (if named) the
    count. ``extra`` adds that many unnamed columns at the end (a ring, a record's spare room)."""

    array: str
    prefix: str
    module: str
    size: str
    doc: str
    columns: tuple[Column, ...]
    extra: int = 0

    def width(self) -> int:
        return len(self.columns) + self.extra


@dataclass(frozen=True)
class Kinds:
    """An enumeration of kind values (never column indices): constant ``{prefix}_{name}`` = value."""

    prefix: str
    module: str
    doc: str
    values: tuple[tuple[str, int, str], ...]


def _w(name: str, meaning: str, fill: str = "0") -> Field:
    return Field(name, "int64", ("W",), meaning, fill)


STATE = "gpusim.engine.semantics.state"
TIMING = "gpusim.engine.sm.timing_state"

MACHINE = Record("Machine", STATE, "The functional machine: everything that changes while a kernel runs.", (
    Field("regs", "uint64", ("W", "R", 32), "register file: raw bits, 32-bit values zero-extended"),
    Field("stk_pc", "int64", ("W", "D"), "SIMT stack: next pc of each entry"),
    Field("stk_rpc", "int64", ("W", "D"), "SIMT stack: reconvergence pc (-1 for the base entry)", "-1"),
    Field("stk_mask", "int64", ("W", "D"), "SIMT stack: lane mask of each entry"),
    Field("sp", "int64", ("W",), "index of the top entry (-1: warp finished)", "-1"),
    _w("exited", "lanes that have exited (or never existed)"),
    _w("warp_block", "linear block id (in the grid) of the slot's warp"),
    _w("warp_index", "warp index within its block"),
    _w("warp_bslot", "block slot (row of the shared-memory arrays)"),
    _w("warp_sm", "SM the warp runs on"),
    _w("warp_slot_sm", "warp slot number within its SM (%warpid)"),
    Field("mem8", "uint8", ("HEAP",), "device memory from GLOBAL_BASE (the heap)", given=True),
    Field("mem16", "uint16", ("HEAP/2",), "view of mem8", given=True),
    Field("mem32", "uint32", ("HEAP/4",), "view of mem8", given=True),
    Field("mem64", "uint64", ("HEAP/8",), "view of mem8", given=True),
    Field("valid", "uint8", ("HEAP",), "0 no allocation, 1 allocated never written, 2 written", given=True),
    Field("shared8", "uint8", ("B", "SB"), "shared memory of each block slot", given=True),
    Field("shared16", "uint16", ("B", "SB/2"), "view of shared8", given=True),
    Field("shared32", "uint32", ("B", "SB/4"), "view of shared8", given=True),
    Field("shared64", "uint64", ("B", "SB/8"), "view of shared8", given=True),
    Field("local8", "uint8", ("W*32", "LB"), "local memory of each thread", given=True),
    Field("local16", "uint16", ("W*32", "LB/2"), "view of local8", given=True),
    Field("local32", "uint32", ("W*32", "LB/4"), "view of local8", given=True),
    Field("local64", "uint64", ("W*32", "LB/8"), "view of local8", given=True),
    Field("param8", "uint8", ("P",), "the launch's parameter buffer", given=True),
    Field("param16", "uint16", ("P/2",), "view of param8", given=True),
    Field("param32", "uint32", ("P/4",), "view of param8", given=True),
    Field("param64", "uint64", ("P/8",), "view of param8", given=True),
    Field("launch", "int64", ("LAUNCH_FIELDS",), "grid/block geometry and sizes (L_*)", given=True),
    Field("pc_counts", "int64", ("N_INST", 3), "warp instructions, active threads, predicated-on threads"),
    Field("err", "int64", ("N_ERR",), "the first error (E_*): kind (ERR_*), pc, warp slot, lane, address, ..."),
    _w("bar_arrivals", "block-wide bar.sync a warp has arrived at (synccheck)"),
    Field("lane_addr", "int64", ("LANE_ADDR_TEXTURE+TEXTURE_MAX_SECTORS",),
          "scratch: per-lane resolved address of the last memory op; after the 32 lanes, the sorted sectors "
          "a texture fetch read"),
    Field("mem_req", "int64", ("N_MR",), "scratch: the last memory op (MR_*)"),
    Field("snap", "uint64", (32,), "scratch: a register of all lanes (shuffles)"),
    Field("clock", "int64", (1,), "the current cycle (for %clock)"),
    Field("shfl_values", "uint64", (32,), "scratch: shuffle results before they are written"),
    Field("shfl_preds", "uint64", (32,), "scratch: shuffle predicates"),
    Field("members", "int64", (32,), "scratch: each lane's member-mask group (warp-wide ops)"),
    Field("printf8", "uint8", ("F",), "the launch's printf records (engine/semantics/calls.py)", given=True),
    Field("printf64", "uint64", ("F/8",), "view of printf8", given=True),
    Field("printf_ctl", "int64", (4,), "printf buffer: bytes used, records dropped, records kept"),
    _w("its_wait", "ITS: lanes blocked at a warp-synchronous instruction (its.py)"),
    Field("its_sig", "uint64", ("W", "ITS_SIG_SLOTS"), "ITS: state signature at a diverged group's last back edges"),
    Field("bar_red", "int64", ("W", 8), "bar.red per warp: phase, generation, two records (barrier_reduce.py)"),
    Field("tensor_scratch", "float64", (1536,), "scratch: A, B, C of a tensor instruction (semantics/tensor.py)"),
))

TIMING_STATE = Record("TimingState", TIMING, "The timing model's state (beyond the functional Machine).", (
    Field("prm", "int64", ("N_TP",), "parameters (TP_*)", given=True),
    Field("isa", "int64", ("forms", 4), "the opcode table with latencies resolved", given=True),
    Field("pipe_interval", "int64", ("N_PIPES",), "cycles a pipe is busy per warp-instruction", given=True),
    _w("w_resident", "1 while the slot holds a live warp"),
    _w("w_done", "1 when the warp exited (or the slot is empty)", "1"),
    _w("w_state", "current warp state (stalls.*)"),
    _w("w_since", "cycle the current state began"),
    _w("w_pc", "the pc the current state is charged to"),
    Field("w_eval", "int64", ("WE",), "next cycle the warp needs evaluating, sub-partition-major: slot k of SM "
          "sm at (sm*NSP + k%NSP)*PER_SUB + k//NSP (dispatch.eval_slot)", "INF_CYCLE"),
    _w("w_wake", "a wait set at issue (branch, barrier release, ...): cycle"),
    _w("w_reason", "the state of that wait"),
    _w("w_age", "dispatch order (the schedulers' oldest)"),
    _w("w_bar", "1 while waiting at a barrier"),
    _w("w_bar_id", "the barrier it waits at"),
    _w("w_bar_count", "its thread count (0: the whole block)"),
    _w("w_mem_pending", "cycle its last store/atomic completes"),
    _w("w_exiting", "exited, draining stores"),
    _w("w_group", "two-level scheduler: 1 in the active set", "1"),
    _w("w_cached", "1 while w_dep_ready/w_dep_state/w_pipe/w_next_pc are valid"),
    _w("w_dep_ready", "when the next instruction's operands (and w_wake) allow issue"),
    _w("w_dep_state", "the state until then"),
    _w("w_pipe", "the next instruction's pipe"),
    _w("w_next_pc", "the next instruction's pc"),
    Field("reg_ready", "int64", ("W", "R"), "cycle each register's pending write completes", given=True),
    Field("reg_dep", "int64", ("W", "R"), "dependency class (isa.DEP_*) of that write", given=True),
    Field("pipe_free", "int64", ("SUBS", "N_PIPES"), "next cycle each pipe accepts an instruction"),
    Field("pipe_busy_acc", "int64", ("SUBS", "N_PIPES"), "the pipe's busy cycles before pipe_busy_t0 "
          "(issue.hold_pipe)"),
    Field("pipe_busy_t0", "int64", ("SUBS", "N_PIPES"), "the cycle pipe_busy_acc counts up to"),
    _w("w_parked", "1 while the warp waits only for its scheduler (lazy accounting)"),
    _w("w_park_busy", "its pipe's busy count (issue.busy_before) when it was parked"),
    Field("park_mask", "int64", ("SUBS", "N_PIPES"), "parked warps of each sub-partition by next pipe "
          "(bit j: slot sp + j * NSP)"),
    Field("park_pipes", "int64", ("SUBS",), "bit p set while park_mask[sub, p] is not empty"),
    Field("sub_next", "int64", ("SUBS",), "next cycle a non-parked warp of the sub-partition needs evaluating",
          "INF_CYCLE"),
    Field("sched_last", "int64", ("SUBS",), "last warp slot each scheduler issued", "-1"),
    Field("sched_active", "int64", ("SUBS",), "two-level active-set size (reserved)"),
    Field("sm_next", "int64", ("NSM",), "next cycle the SM needs evaluating", "INF_CYCLE"),
    Field("sm_warps", "int64", ("NSM",), "resident warps"),
    Field("sm_active_since", "int64", ("NSM",), "start of the current busy interval"),
    Field("sm_active_cycles", "int64", ("NSM",), "cycles with at least one resident warp"),
    Field("b_block", "int64", ("BSLOTS",), "block in each block slot (-1 free)", "-1"),
    Field("b_live", "int64", ("BSLOTS",), "live warps of the block in each block slot"),
    Field("stalls", "int64", ("N_STATES",), "warp-cycles per state"),
    Field("pc_stalls", "int64", ("N_INST", "N_STATES"), "warp-cycles per state charged to each pc"),
    Field("pc_mem", "int64", ("N_INST", "N_PCMEM"), "per-pc memory statistics (PM_*)"),
    Field("pipe_issues", "int64", ("N_PIPES",), "warp-instructions issued per pipe"),
    Field("ctr", "int64", ("N_TC",), "timing counters (TC_*)"),
    Field("sectors", "int64", (128,), "scratch for the coalescer"),
    Field("lane_ops", "int64", (128,), "scratch for the coalescer"),
    Field("bank_scratch", "int64", ("..",), "scratch for shared-memory bank conflicts", given=True),
    Field("addrs", "int64", (32,), "scratch: per-lane addresses as the memory system sees them"),
    Field("trace", "int64", ("CAP", "N_TRACE_FIELDS"), "warp-state intervals (TR_*) when tracing"),
    Field("trace_n", "int64", (2,), "rows used; [1] = 1 if the trace was cut"),
    Field("mem_trace", "int64", ("CAP", "N_MEM_TRACE_FIELDS"), "memory requests (MT_*) when tracing"),
    Field("mem_trace_n", "int64", (2,), "rows used, cut"),
    Field("last_sectors", "int64", (1,), "sectors (or wavefronts) of the last memory request"),
    Field("issue_trace", "int64", ("CAP", "N_ISSUE_TRACE_FIELDS"), "issued warp-instructions (IT_*) when tracing"),
    Field("issue_trace_n", "int64", (2,), "rows used, cut"),
    Field("shared_path", "float64", ("NSM",), "next-free instant of each SM's shared-memory data path (a server)"),
    Field("loop", "int64", ("N_LP",), "the timed loop between two calls (LP_*)"),
    Field("cp_state", "int64", ("W", "CP_FIELDS"), "cp.async groups per warp (CP_*; issue.async_copy_groups)"),
))

MEMORY_PATH = Record("MemoryPath", TIMING, "What the memory path of an issued instruction touches "
                     "(issue.memory_timing): views of TimingState and Machine arrays, gathered once per run so "
                     "that each call passes 20 arrays instead of both whole states.", tuple(
                         Field(name, "int64", (), f"TimingState.{name} or Machine.{name}", given=True)
                         for name in ("prm", "pipe_interval", "pipe_free", "pipe_busy_acc", "pipe_busy_t0",
                                      "shared_path", "bank_scratch", "pc_mem", "last_sectors", "ctr", "addrs",
                                      "sectors", "lane_ops", "w_mem_pending", "mem_trace", "mem_trace_n",
                                      "mem_req", "lane_addr", "warp_block", "cp_state")))

MEMORY_SYSTEM = Record("MemorySystem", TIMING, "The memory hierarchy's state (gpusim.engine.memory.memsys).", (
    Field("l1", "tuple", ("NSM",), "the SMs' L1 caches (cache.make_cache)", given=True),
    Field("l2", "tuple", ("slices",), "the L2 slices (cache.make_cache)", given=True),
    Field("servers", "float64", ("..",), "reservation servers: L2 slices, DRAM", given=True),
    Field("mshr", "int64", ("NSM", "mshrs_per_sm"), "each MSHR's release cycle", given=True),
    Field("params", "int64", ("..",), "memory-system parameters (memsys.P_*)", given=True),
    Field("rates", "float64", ("..",), "bandwidths (memsys.R_*)", given=True),
    Field("counters", "int64", ("N_COUNTERS",), "memory-system counters (memsys.C_*)", given=True),
))

RECORDS = (MACHINE, TIMING_STATE, MEMORY_PATH, MEMORY_SYSTEM)


def _cols(*items: tuple[str, str] | tuple[str, str, str]) -> tuple[Column, ...]:
    return tuple(Column(*item) for item in items)


LAUNCH = Columns("launch", "L", STATE, "LAUNCH_FIELDS", "The launch's geometry and sizes.", _cols(
    ("NTID_X", "threads per block, x"), ("NTID_Y", "threads per block, y"), ("NTID_Z", "threads per block, z"),
    ("NCTAID_X", "blocks, x"), ("NCTAID_Y", "blocks, y"), ("NCTAID_Z", "blocks, z"),
    ("THREADS_PER_BLOCK", "threads per block", "threads"), ("WARPS_PER_BLOCK", "warps per block", "warps"),
    ("NSM", "SMs simulated"), ("DYNAMIC_SMEM", "dynamic shared memory per block", "bytes"),
    ("SHARED_BYTES", "shared memory per block (static + dynamic)", "bytes"), ("GRIDID", "the launch's %gridid"),
    ("HEAP_BYTES", "device heap size", "bytes"), ("LOCAL_BYTES", "local memory per thread", "bytes"),
    ("PARAM_BYTES", "parameter buffer size", "bytes"), ("N_INST", "instructions of the kernel"),
    ("STACK_DEPTH", "SIMT stack entries per warp"), ("MAX_WARPS_PER_SM", "warp slots per SM", "warps"),
    ("SYNCCHECK", "1: report a block-wide bar.sync some threads skip (GPU(synccheck=...))"),
    ("CALL_DEPTH", "max_call_depth: nested calls a thread may be inside"),
    ("RECONVERGENCE", "RECONV_IPDOM or RECONV_ITS (GPU(reconvergence=...))"),
))

ERR = Columns("err", "E", STATE, "N_ERR", "The first error a launch hit.", _cols(
    ("KIND", "what went wrong (ERR_*)"), ("PC", "the instruction"), ("WARP", "the warp slot"),
    ("LANE", "the lane"), ("ADDRESS", "the address (or the kind's detail: lanes, depth, ...)"),
    ("EXTRA", "a second detail"), ("SUB", "the kind's sub-kind (SYNC_*, texture_layout.TEXERR_*)"),
), extra=1)

MEM_REQ = Columns("mem_req", "MR", STATE, "N_MR", "The last memory operation (and the last issue's summary), "
                  "left by the semantics for the timing model.", _cols(
                      ("SPACE", "address space (layout.SP_*)"), ("SIZE", "element size (cp.async wait_group: N)",
                                                                   "bytes"),
                      ("VEC", "elements per lane (wait_group: 1 for wait_all)"), ("KIND", "the request's kind (MK_*)"),
                      ("MASK", "lanes that access"), ("BYTES", "bytes per lane", "bytes"),
                      ("BAR_ID", "a barrier instruction's barrier"), ("BAR_COUNT", "its thread count (0: all)"),
                      ("PC", "the pc executed"), ("ACTIVE", "active lanes of the issue"),
                      ("PRED_ON", "lanes whose guard was true"),
                      ("TEX_SECTORS", "a texture fetch's sectors, in lane_addr[LANE_ADDR_TEXTURE:]"),
                      ("ASYNC", "cp.async: ASYNC_COPY (| ASYNC_NO_L1 for .cg) on a copy's global load, cleared by "
                       "the timing model"),
                  ))

PRM = Columns("prm", "TP", TIMING, "N_TP", "The timing model's parameters.", _cols(
    ("NSM", "SMs"), ("NSP", "sub-partitions per SM"), ("SLOTS", "warp slots per SM", "warps"),
    ("BSLOTS", "block slots per SM"), ("WPB", "warps per block", "warps"), ("TPB", "threads per block", "threads"),
    ("NBLOCKS", "blocks in the grid"), ("BLOCK_LAUNCH", "block_launch_cycles", "cycles"),
    ("SHARED_LAT", "shared_latency_cycles", "cycles"), ("SHARED_ATOMIC_LAT", "atomic_shared_latency_cycles", "cycles"),
    ("MAX_CYCLES", "max_cycles", "cycles"), ("POLICY", "scheduler policy (schedulers.POLICY_CODES)"),
    ("TWO_LEVEL_N", "two_level_active_warps", "warps"), ("BANKS", "shared-memory banks"),
    ("BANK_BYTES", "bytes per bank per cycle", "bytes"), ("SECTOR", "sector_bytes", "bytes"),
    ("LINE", "line_bytes", "bytes"), ("LOCAL_BYTES", "local memory per thread", "bytes"),
    ("CLOCK_MHZ", "core clock (%globaltimer)", "MHz"), ("USE_L1", "1: global loads cached in L1"),
    ("SHARED_BYTES_PER_CYCLE", "shared-memory data path per SM", "bytes/cycle"),
    ("BARRIER_LAT", "barrier_latency_cycles", "cycles"),
    ("TEX_LAT", "texture_latency_cycles: addressing and filtering after the texels arrive", "cycles"),
))

CTR = Columns("ctr", "TC", TIMING, "N_TC", "Timing counters.", _cols(
    ("GLD_REQ", "global load requests"), ("GLD_SECTORS", "their sectors", "sectors"),
    ("GLD_IDEAL", "their sectors if fully coalesced", "sectors"), ("GST_REQ", "global store requests"),
    ("GST_SECTORS", "their sectors", "sectors"), ("GST_IDEAL", "their sectors if fully coalesced", "sectors"),
    ("GATOM_REQ", "global atomic requests"), ("GATOM_SECTORS", "their sectors", "sectors"),
    ("LLD_REQ", "local load requests"), ("LLD_SECTORS", "their sectors", "sectors"),
    ("LST_REQ", "local store requests"), ("LST_SECTORS", "their sectors", "sectors"),
    ("SHLD_REQ", "shared load requests"), ("SHLD_WAVEFRONTS", "their wavefronts", "wavefronts"),
    ("SHST_REQ", "shared store requests"), ("SHST_WAVEFRONTS", "their wavefronts", "wavefronts"),
    ("SHATOM_REQ", "shared atomic requests"), ("SHATOM_WAVEFRONTS", "their wavefronts", "wavefronts"),
    ("SHLD_IDEAL", "shared load wavefronts without bank conflicts", "wavefronts"),
    ("SHST_IDEAL", "shared store wavefronts without bank conflicts", "wavefronts"),
    ("LG_THROTTLE_CYCLES", "cycles the LSU held requests back (MSHRs full)", "cycles"),
    ("END_CYCLE", "the last warp's retirement", "cycles"), ("BLOCKS_DONE", "blocks retired"),
    ("TEX_REQ", "texture requests (tex, tld4)"), ("TEX_SECTORS", "the sectors they read", "sectors"),
))

CP_STATE = Columns("cp_state", "CP", TIMING, "CP_FIELDS", "cp.async groups per warp (tensor cores, issue 14): "
                   "the ring holds the newest CP_RING committed groups' arrivals.", _cols(
                       ("OPEN", "the open group's arrival", "cycles"), ("COUNT", "groups committed"),
                       ("FLOOR", "arrival of every group older than the ring", "cycles"),
                       ("RING0", "the ring's first column (CP_RING columns)", "cycles"),
                   ), extra=15)

LOOP = Columns("loop", "LP", TIMING, "N_LP", "Where the timed loop stands between two calls "
               "(timing.run_timed runs in slices).", _cols(
                   ("STARTED", "1 once the first wave is dispatched"), ("CYCLE", "the cycle it resumes at", "cycles"),
                   ("NEXT_BLOCK", "the next block to dispatch"), ("AGE", "the next dispatch age"),
               ))

PC_MEM = Columns("pc_mem", "PM", TIMING, "N_PCMEM", "Per-pc memory statistics.", _cols(
    ("REQUESTS", "requests"), ("SECTORS", "sectors", "sectors"), ("IDEAL_SECTORS", "sectors if coalesced", "sectors"),
    ("WAVEFRONTS", "shared wavefronts", "wavefronts"),
    ("IDEAL_WAVEFRONTS", "shared wavefronts without conflicts", "wavefronts"),
))

TRACE = Columns("trace", "TR", TIMING, "N_TRACE_FIELDS", "One row per warp-state interval (when tracing).", _cols(
    ("WARP", "warp slot"), ("STATE", "stalls.* state"), ("START", "first cycle", "cycles"),
    ("END", "cycle after the last", "cycles"), ("PC", "the pc it was charged to"), ("BLOCK", "the warp's block"),
))

MEM_TRACE = Columns("mem_trace", "MT", TIMING, "N_MEM_TRACE_FIELDS", "One row per memory request (when tracing).",
                    _cols(("ISSUE", "issue cycle", "cycles"), ("DONE", "result-ready cycle", "cycles"),
                          ("WARP", "warp slot"), ("PC", "the instruction"), ("LEVEL", "deepest level reached (LEVEL_*)"),
                          ("SECTORS", "sectors or wavefronts", "sectors"), ("KIND", "MK_*"),
                          ("SPACE", "layout.SP_*"), ("BLOCK", "the warp's block")))

ISSUE_TRACE = Columns("issue_trace", "IT", TIMING, "N_ISSUE_TRACE_FIELDS", "One row per issued warp-instruction "
                      "(when tracing).", _cols(
                          ("CYCLE", "issue cycle", "cycles"), ("WARP", "warp slot"), ("PC", "the instruction"),
                          ("ACTIVE", "active lanes"), ("PRED_ON", "lanes whose guard was true"),
                          ("STALL_BEFORE", "the warp's state before it issued"), ("BLOCK", "the warp's block"),
                      ))

COLUMNS = (LAUNCH, ERR, MEM_REQ, PRM, CTR, CP_STATE, LOOP, PC_MEM, TRACE, MEM_TRACE, ISSUE_TRACE)

MEMORY_KINDS = Kinds("MK", STATE, "A memory request's kind (mem_req[MR_KIND]; mem_trace[MT_KIND]); 0: none.", (
    ("LOAD", 1, "ld, or cp.async's global load"), ("STORE", 2, "st"), ("ATOMIC", 3, "atom, red"),
    ("TEXTURE", 4, "tex, tld4"), ("ASYNC_COMMIT", 5, "cp.async.commit_group"),
    ("ASYNC_WAIT", 6, "cp.async.wait_group / wait_all"),
))

LEVELS = Kinds("LEVEL", TIMING, "The deepest level a memory request reached (mem_trace[MT_LEVEL]).", (
    ("SHARED", 0, "shared memory"), ("L1", 1, "L1 hit"), ("L2", 2, "L2 hit"), ("DRAM", 3, "DRAM"),
))

KINDS = (MEMORY_KINDS, LEVELS)
