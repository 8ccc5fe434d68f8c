"""Layout of a lowered program and of the engine's address spaces.

A kernel is lowered (``gpusim.ptx.lower``) into one int64 matrix ``code`` with a
row per instruction and the columns below, so that the compiled engine reads
every field of an instruction from one contiguous row. Sources are
``(kind, value)`` pairs: a register index, raw immediate bits, a special
register id, or a negated predicate register.

Address spaces as the engine sees them:

* global (and ``.const`` variables, which live in device memory too): byte
  addresses ``>= GLOBAL_BASE`` into one device heap;
* shared: per-block byte offsets from 0; in generic addressing they appear at
  ``SHARED_WINDOW + offset``;
* local: per-thread byte offsets from 0; generic ``LOCAL_WINDOW + offset``;
* param: byte offsets into the launch's parameter buffer.
"""

from __future__ import annotations

# ---------------------------------------------------------------- code columns
F_OP = 0         # OP_* code
F_TY = 1         # T_* type code (destination type for cvt)
F_TY2 = 2        # second type (cvt source type, slct/set compare type)
F_MODS = 3       # MOD_* bitfield
F_GUARD = 4      # guard predicate register index, -1 when unguarded
F_GUARD_NEG = 5  # 1 when the guard is @!%p
F_NDST = 6       # number of destination registers
# columns 7-10 and 12-21 held the destinations and sources before the tensor instructions (issue 14) needed
# up to 8 destinations and 24 sources; they moved to the end of the row (F_DST0, F_SK0 below) and these
# columns are free
F_NSRC = 11      # number of source operands
F_SPACE = 22     # memory space (SP_*)
F_VEC = 23       # vector width of a memory access / pack (1, 2, 4)
F_ABASE = 24     # address base register, -1 for an absolute address
F_AOFF = 25      # address offset in bytes (includes a resolved symbol address)
F_TARGET = 26    # branch target pc
F_RECONV = 27    # reconvergence pc of a branch (immediate post-dominator), n_inst = at exit
F_LINE = 28      # PTX source line
F_AUX = 29       # atom/red op, shfl mode, vote mode, barrier kind ...
F_SIZE = 30      # access size in bytes per element
F_ISA = 31       # row of gpusim.arch.isa.ISA_TABLE
F_SRCLINE = 32   # CUDA source line from .loc, 0 when none
# ---- tensor cores (issue 14): destinations and sources, contiguous at the end of the row so that the
# scoreboard's loops over F_NDST / F_NSRC cover a warp-wide matrix instruction's many registers
MAX_DST = 8
F_DST0 = 33      # destination register indices F_DST0..F_DST0+MAX_DST-1 (-1 unused; -2 a sink '_')
MAX_SRC = 24
F_SK0 = 41       # source kinds at F_SK0 + 2*i, values at F_SK0 + 2*i + 1, i < MAX_SRC
MAX_PLAIN_SRC = 5  # sources of every instruction but the tensor ones
N_FIELDS = 89
# Tensor-instruction fields, in columns no other instruction uses (gpusim.ptx.lower_tensor writes them,
# gpusim.engine.semantics.tensor reads them; docs/tensor-cores.md)
F_TC_BTYPE = 7        # mma/wmma.mma: type of B (F_TY is D's, F_TY2 A's)
F_TC_CTYPE = 8        # mma/wmma.mma: type of C
F_TC_SHAPE = 9        # m << 16 | n << 8 | k (wmma.load/store: rows << 16 | cols << 8 of the fragment's matrix)
F_TC_FLAGS = 10       # TC_* bits
F_TC_COUNT = 12       # ldmatrix/stmatrix: matrices; wmma.load/store: registers; wmma.mma: na | nb<<8 | nc<<16 | nd<<24
F_TC_SRC_OFFSET = 13  # cp.async: byte offset of the global source address
TC_TRANS = 1          # ldmatrix/stmatrix .trans
TC_BULK = 1024        # cp.async.bulk.commit_group / wait_group (the bulk groups, not cp.async's)
TC_READ = 2048        # cp.async.bulk.wait_group.read
# ---- Hopper (issue 25): mbarrier rows (OP_MBARRIER): the operation in F_AUX, flags in F_TC_FLAGS; the
# address in F_ABASE/F_AOFF; sources: count / txCount / state / parity (then the suspend hint, unused)
MB_INIT, MB_ARRIVE, MB_ARRIVE_DROP, MB_EXPECT_TX, MB_COMPLETE_TX = 1, 2, 3, 4, 5
MB_TEST_WAIT, MB_TRY_WAIT, MB_INVAL, MB_PENDING_COUNT = 6, 7, 8, 9
MB_CP_ARRIVE = 10     # cp.async.mbarrier.arrive: an arrive-on once the thread's prior cp.async copies have landed
MBF_EXPECT_TX = 1     # arrive.expect_tx / arrive_drop.expect_tx: source 0 is txCount, the arrival count 1
MBF_PARITY = 2        # test_wait/try_wait.parity: source 0 is the phase parity, not a state token
MBF_NO_COMPLETE = 4   # arrive.noComplete: completing the phase is an error
MBF_COUNT = 8         # arrive with an explicit count (source 0, or source 1 after txCount)
MBF_NOINC = 16        # cp.async.mbarrier.arrive.noinc: the pending count is not raised first
# barrier.cluster (OP_BARRIER_CLUSTER): F_AUX the operation; F_SIZE the hidden per-thread register counting the
# thread's arrivals (gpusim.engine.semantics.cluster_ops)
CLUSTER_BAR_ARRIVE, CLUSTER_BAR_WAIT = 1, 2
MAPA_GETCTARANK = 1   # an OP_MAPA row's F_AUX: getctarank (the rank an address names), not mapa
# bulk copies (OP_BULK_COPY): destination address in F_ABASE/F_AOFF (space F_SPACE), source address in
# source 0 + F_TC_SRC_OFFSET, size in source 1, the mbarrier (global->shared) in source 2 + F_BULK_MBAR_OFFSET
BULK_G2S, BULK_S2G, BULK_S2C, BULK_MULTICAST = 1, 2, 3, 4   # S2C, MULTICAST: clusters (semantics/hopper.py)
# TMA tensor copies (OP_BULK_TENSOR, gpusim.ptx.lower_tma): the kind in F_AUX, the rank in F_TC_COUNT, the reduce
# operation (TMA_RED_*) in F_TC_FLAGS; the shared address in F_ABASE/F_AOFF; source 0 + F_TC_SRC_OFFSET the
# tensor map's generic address, sources 1..rank the coordinates, source rank + 1 + F_BULK_MBAR_OFFSET the
# mbarrier (loads)
TMA_LOAD, TMA_STORE, TMA_REDUCE, TMA_PREFETCH = 1, 2, 3, 4
BULK_CP_ARRIVE = 5    # a bulk_tx row's kind (TB_KIND) for cp.async.mbarrier.arrive: BT_BYTES arrivals, not bytes
BULK_PREFETCH = 5     # an OP_BULK_COPY row's F_AUX: cp.async.bulk.prefetch.L2.global [src], size (no destination)
BULK_L2_PREFETCH = 6  # a bulk_tx row's kind (TB_KIND) for it: the sectors read into L2, delivered nowhere
TMA_RED_ADD, TMA_RED_MIN, TMA_RED_MAX, TMA_RED_INC, TMA_RED_DEC, TMA_RED_AND, TMA_RED_OR, TMA_RED_XOR = (
    1, 2, 3, 4, 5, 6, 7, 8)
TMA_TYPE_SHIFT = 8    # F_TC_FLAGS bits 8..: the reduction's element type (T_* code), from the instruction's type
TMA_MULTICAST = 1 << 24   # F_TC_FLAGS of a load with .multicast::cluster (its ctaMask: source rank + 2)
F_BULK_MBAR_OFFSET = F_TC_SHAPE
TC_COL_MAJOR = 2      # wmma.load/store .col
TC_BYPASS_L1 = 4      # cp.async.cg
TC_WAIT_ALL = 8       # cp.async.wait_all (commit, then wait for every group)
# wgmma (Hopper, gpusim.ptx.lower_wgmma): F_TC_SHAPE = n << 8 | k (m is 64), F_TC_COUNT = D registers,
# listed 16 bits each, four per column, from F_TC_DLIST (after the sources: at most 6, F_SK0..F_SK0+11)
TC_WGMMA = 16         # cp.async commit_group/wait_group rows that are wgmma.commit_group/wait_group
TC_WG_A_REGS = 32     # wgmma: A is a register fragment (else a shared-memory descriptor)
TC_WG_TRANS_A = 64    # wgmma imm-trans-a = 1: A is M-major in shared memory
TC_WG_TRANS_B = 128   # wgmma imm-trans-b = 1: B is N-major
TC_WG_NEG_A = 256     # wgmma imm-scale-a = -1
TC_WG_NEG_B = 512     # wgmma imm-scale-b = -1
F_TC_DLIST = F_SK0 + 12

# ---------------------------------------------------------------- source kinds
SK_NONE = 0
SK_REG = 1
SK_IMM = 2
SK_SPECIAL = 3
SK_REGNEG = 4    # predicate register read negated (!%p)

# ---------------------------------------------------------------- memory spaces
SP_GENERIC = 0
SP_GLOBAL = 1
SP_SHARED = 2
SP_LOCAL = 3
SP_PARAM = 4
SP_CONST = 5
SP_DSM = 6     # a resolved distributed-shared-memory access: offset = target block slot << 24 | shared offset
SPACE_CODES = {".global": SP_GLOBAL, ".shared": SP_SHARED, ".local": SP_LOCAL,
               ".param": SP_PARAM, ".const": SP_CONST}
SPACE_NAMES = {SP_GENERIC: "generic", SP_GLOBAL: "global", SP_SHARED: "shared",
               SP_LOCAL: "local", SP_PARAM: "param", SP_CONST: "const", SP_DSM: "shared::cluster"}

GLOBAL_BASE = 1 << 32          # first device-heap address (a null or 32-bit-truncated pointer faults)
SHARED_WINDOW = 1 << 44        # generic address of shared offset 0
LOCAL_WINDOW = 1 << 45         # generic address of local offset 0
PARAM_WINDOW = 1 << 46         # generic address of kernel-parameter offset 0 (cvta.param; a TMA map's address)
WINDOW_BYTES = 1 << 32         # size of each generic window

# ---------------------------------------------------------------- special registers
SR_TID_X, SR_TID_Y, SR_TID_Z = 1, 2, 3
SR_NTID_X, SR_NTID_Y, SR_NTID_Z = 4, 5, 6
SR_CTAID_X, SR_CTAID_Y, SR_CTAID_Z = 7, 8, 9
SR_NCTAID_X, SR_NCTAID_Y, SR_NCTAID_Z = 10, 11, 12
SR_LANEID = 13
SR_WARPID = 14
SR_NWARPID = 15
SR_SMID = 16
SR_NSMID = 17
SR_GRIDID = 18
SR_CLOCK = 19
SR_CLOCK64 = 20
SR_GLOBALTIMER = 21
SR_LANEMASK_EQ, SR_LANEMASK_LE, SR_LANEMASK_LT, SR_LANEMASK_GE, SR_LANEMASK_GT = 22, 23, 24, 25, 26
SR_DYNAMIC_SMEM_SIZE = 27
SR_TOTAL_SMEM_SIZE = 28
SR_GLOBALTIMER_LO, SR_GLOBALTIMER_HI = 29, 30
SR_CLOCK_HI = 31
# thread-block clusters (gpusim.engine.semantics.cluster): read from the launch's cluster shape
SR_CLUSTERID_X = 32            # .x .y .z: 32-34
SR_NCLUSTERID_X = 35           # 35-37
SR_CLUSTER_CTAID_X = 38        # 38-40
SR_CLUSTER_NCTAID_X = 41       # 41-43
SR_CLUSTER_CTARANK = 44
SR_CLUSTER_NCTARANK = 45
SR_IS_EXPLICIT_CLUSTER = 46

_XYZ = {"x": 0, "y": 1, "z": 2}
SPECIAL_CODES: dict[tuple[str, str | None], int] = {
    ("%laneid", None): SR_LANEID, ("%warpid", None): SR_WARPID, ("%nwarpid", None): SR_NWARPID,
    ("%smid", None): SR_SMID, ("%nsmid", None): SR_NSMID, ("%gridid", None): SR_GRIDID,
    ("%clock", None): SR_CLOCK, ("%clock64", None): SR_CLOCK64, ("%clock_hi", None): SR_CLOCK_HI,
    ("%globaltimer", None): SR_GLOBALTIMER, ("%globaltimer_lo", None): SR_GLOBALTIMER_LO,
    ("%globaltimer_hi", None): SR_GLOBALTIMER_HI,
    ("%lanemask_eq", None): SR_LANEMASK_EQ, ("%lanemask_le", None): SR_LANEMASK_LE,
    ("%lanemask_lt", None): SR_LANEMASK_LT, ("%lanemask_ge", None): SR_LANEMASK_GE,
    ("%lanemask_gt", None): SR_LANEMASK_GT,
    ("%dynamic_smem_size", None): SR_DYNAMIC_SMEM_SIZE, ("%total_smem_size", None): SR_TOTAL_SMEM_SIZE,
}
SPECIAL_CODES[("%aggr_smem_size", None)] = SR_TOTAL_SMEM_SIZE   # no reserved shared memory here
# The cluster registers follow the launch's cluster shape; without a cluster launch every CTA is an implicit
# 1x1x1 cluster (PTX ISA), which the same formulas give.
for _name, _base in (("%tid", SR_TID_X), ("%ntid", SR_NTID_X), ("%ctaid", SR_CTAID_X),
                     ("%nctaid", SR_NCTAID_X), ("%clusterid", SR_CLUSTERID_X), ("%nclusterid", SR_NCLUSTERID_X),
                     ("%cluster_ctaid", SR_CLUSTER_CTAID_X), ("%cluster_nctaid", SR_CLUSTER_NCTAID_X)):
    for _comp, _i in _XYZ.items():
        SPECIAL_CODES[(_name, _comp)] = _base + _i
SPECIAL_CODES[("%cluster_ctarank", None)] = SR_CLUSTER_CTARANK
SPECIAL_CODES[("%cluster_nctarank", None)] = SR_CLUSTER_NCTARANK
SPECIAL_CODES[("%is_explicit_cluster", None)] = SR_IS_EXPLICIT_CLUSTER
SPECIAL_CONSTANTS: dict[tuple[str, str | None], int] = {
    ("%current_graph_exec", None): 0,         # 0: the kernel is not launched from a CUDA graph
}
# Predefined constants of the PTX ISA ("Predefined identifiers"): WARP_SZ is the warp size.
PREDEFINED_CONSTANTS = {"WARP_SZ": 32}

# F_MODS of ld/st/atom/red: the address register is 32 bits in a 32-bit space (shared, local, param), so
# register + offset wraps modulo 2**32 as the hardware's address arithmetic does
MEM_ADDR32 = 1
# F_MODS of ld.s8/s16/s32: a destination register is 64 bits, so the value is sign-extended to 64 bits
MEM_DST64 = 2
# F_MODS of ld.global.cg / ld.global.cv: the load bypasses L1 (PTX ISA, "Cache operators": .cg caches in L2
# only, .cv fetches again); timed like cp.async.cg's reads (no L1 lookup or fill)
MEM_NO_L1 = 4

# ---------------------------------------------------------------- F_AUX values
ATOM_ADD, ATOM_MIN, ATOM_MAX, ATOM_INC, ATOM_DEC, ATOM_EXCH, ATOM_CAS, ATOM_AND, ATOM_OR, ATOM_XOR = (
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
ATOM_CODES = {".add": ATOM_ADD, ".min": ATOM_MIN, ".max": ATOM_MAX, ".inc": ATOM_INC, ".dec": ATOM_DEC,
              ".exch": ATOM_EXCH, ".cas": ATOM_CAS, ".and": ATOM_AND, ".or": ATOM_OR, ".xor": ATOM_XOR}
SHFL_UP, SHFL_DOWN, SHFL_BFLY, SHFL_IDX = 1, 2, 3, 4
SHFL_CODES = {".up": SHFL_UP, ".down": SHFL_DOWN, ".bfly": SHFL_BFLY, ".idx": SHFL_IDX}
VOTE_ALL, VOTE_ANY, VOTE_UNI, VOTE_BALLOT = 1, 2, 3, 4
VOTE_CODES = {".all": VOTE_ALL, ".any": VOTE_ANY, ".uni": VOTE_UNI, ".ballot": VOTE_BALLOT}
BAR_SYNC, BAR_ARRIVE, BAR_RED_POPC, BAR_RED_AND, BAR_RED_OR = 1, 2, 3, 4, 5
REDUX_ADD, REDUX_MIN, REDUX_MAX, REDUX_AND, REDUX_OR, REDUX_XOR = 1, 2, 3, 4, 5, 6
REDUX_CODES = {".add": REDUX_ADD, ".min": REDUX_MIN, ".max": REDUX_MAX, ".and": REDUX_AND,
               ".or": REDUX_OR, ".xor": REDUX_XOR}

# ---------------------------------------------------------------- independent thread scheduling (reconvergence="its")
# F_MODS of a bra in the code an ITS launch runs (ptx/its_code.py): a backward branch, where a diverged
# group that spins yields to the warp's other groups
BRA_ITS_BACKWARD = 1
# F_AUX of a nop lowered from bar.warp.sync (its member mask in source slot 0, F_NSRC 0 so that IPDOM times
# it as the nop it was): under ITS a barrier for the named lanes
NOP_WARPSYNC = 1
