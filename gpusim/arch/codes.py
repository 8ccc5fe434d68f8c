"""Integer codes shared by the lowering (``gpusim.ptx.lower``) and the compiled engine.

The engine is numba code over numpy arrays, so everything an instruction says
(its operation, types, rounding, comparison, modifiers) is an integer. This
module is the one place those integers are defined. The opcode table with
pipes, latencies and FLOP counts is ``gpusim.arch.isa``; it is keyed by the ``OP_*``
codes below.

Register values are raw bit patterns in uint64 slots: a 32-bit value lives in
the low 32 bits (the high bits are zero after any write by the engine), a
predicate is 0 or 1, an f32 is its IEEE bits in the low half, an f64 its 64 bits.
"""

from __future__ import annotations

# ---------------------------------------------------------------- types
T_NONE = 0
T_B8 = 1
T_U8 = 2
T_S8 = 3
T_B16 = 4
T_U16 = 5
T_S16 = 6
T_F16 = 7
T_BF16 = 8
T_B32 = 9
T_U32 = 10
T_S32 = 11
T_F32 = 12
T_B64 = 13
T_U64 = 14
T_S64 = 15
T_F64 = 16
T_PRED = 17
T_F16X2 = 18
T_BF16X2 = 19

TYPE_CODES = {
    "b8": T_B8, "u8": T_U8, "s8": T_S8,
    "b16": T_B16, "u16": T_U16, "s16": T_S16, "f16": T_F16, "bf16": T_BF16,
    "b32": T_B32, "u32": T_U32, "s32": T_S32, "f32": T_F32,
    "b64": T_B64, "u64": T_U64, "s64": T_S64, "f64": T_F64,
    "pred": T_PRED, "f16x2": T_F16X2, "bf16x2": T_BF16X2,
}
# ---- tensor cores (issue 14): tf32 (an f32 with a 10-bit mantissa) and the OCP FP8 formats, single and packed
T_TF32 = 20
T_E4M3 = 21
T_E5M2 = 22
T_E4M3X2 = 23
T_E5M2X2 = 24
TYPE_CODES.update({"tf32": T_TF32, "e4m3": T_E4M3, "e5m2": T_E5M2, "e4m3x2": T_E4M3X2, "e5m2x2": T_E5M2X2})
TYPE_NAMES = {code: name for name, code in TYPE_CODES.items()}

# size in bytes per type code (index = code); pred counts as 1 byte in memory-free contexts
TYPE_BYTES = (0, 1, 1, 1, 2, 2, 2, 2, 2, 4, 4, 4, 4, 8, 8, 8, 8, 1, 4, 4) + (4, 1, 1, 2, 2)      # + tensor types
TYPE_SIGNED = (0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0) + (0, 0, 0, 0, 0)
TYPE_FLOAT = (0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1) + (1, 1, 1, 1, 1)

# ---------------------------------------------------------------- rounding (mods bits 0-3)
RND_DEFAULT = 0   # what the instruction does with no rounding modifier
RND_RN = 1
RND_RZ = 2
RND_RM = 3
RND_RP = 4
RND_RNI = 5
RND_RZI = 6
RND_RMI = 7
RND_RPI = 8
RND_RNA = 9
ROUNDING_CODES = {".rn": RND_RN, ".rz": RND_RZ, ".rm": RND_RM, ".rp": RND_RP,
                  ".rni": RND_RNI, ".rzi": RND_RZI, ".rmi": RND_RMI, ".rpi": RND_RPI, ".rna": RND_RNA}

# ---------------------------------------------------------------- comparisons (mods bits 8-12)
CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE = 1, 2, 3, 4, 5, 6
CMP_LO, CMP_LS, CMP_HI, CMP_HS = 7, 8, 9, 10
CMP_EQU, CMP_NEU, CMP_LTU, CMP_LEU, CMP_GTU, CMP_GEU = 11, 12, 13, 14, 15, 16
CMP_NUM, CMP_NAN = 17, 18
CMP_CODES = {".eq": CMP_EQ, ".ne": CMP_NE, ".lt": CMP_LT, ".le": CMP_LE, ".gt": CMP_GT,
             ".ge": CMP_GE, ".lo": CMP_LO, ".ls": CMP_LS, ".hi": CMP_HI, ".hs": CMP_HS,
             ".equ": CMP_EQU, ".neu": CMP_NEU, ".ltu": CMP_LTU, ".leu": CMP_LEU,
             ".gtu": CMP_GTU, ".geu": CMP_GEU, ".num": CMP_NUM, ".nan": CMP_NAN}

# ---------------------------------------------------------------- boolean combine (mods bits 13-14)
BOOL_NONE, BOOL_AND, BOOL_OR, BOOL_XOR = 0, 1, 2, 3
BOOL_CODES = {".and": BOOL_AND, ".or": BOOL_OR, ".xor": BOOL_XOR}

# ---------------------------------------------------------------- mul/mad width (mods bits 16-17)
MUL_DEFAULT, MUL_LO, MUL_HI, MUL_WIDE = 0, 1, 2, 3

# ---------------------------------------------------------------- testp (mods bits 25-28)
TESTP_FINITE, TESTP_INFINITE, TESTP_NUMBER, TESTP_NOTANUMBER, TESTP_NORMAL, TESTP_SUBNORMAL = 1, 2, 3, 4, 5, 6
TESTP_CODES = {".finite": TESTP_FINITE, ".infinite": TESTP_INFINITE, ".number": TESTP_NUMBER,
               ".notanumber": TESTP_NOTANUMBER, ".normal": TESTP_NORMAL, ".subnormal": TESTP_SUBNORMAL}

# ---------------------------------------------------------------- prmt modes (mods bits 21-23)
PRMT_DEFAULT, PRMT_F4E, PRMT_B4E, PRMT_RC8, PRMT_ECL, PRMT_ECR, PRMT_RC16 = 0, 1, 2, 3, 4, 5, 6
PRMT_CODES = {".f4e": PRMT_F4E, ".b4e": PRMT_B4E, ".rc8": PRMT_RC8, ".ecl": PRMT_ECL,
              ".ecr": PRMT_ECR, ".rc16": PRMT_RC16}

# ---------------------------------------------------------------- mods bit layout
MOD_RND_SHIFT = 0
MOD_RND_MASK = 0xF
MOD_FTZ = 1 << 4
MOD_SAT = 1 << 5
MOD_APPROX = 1 << 6       # .approx (and div.full, which is approximate too)
MOD_FULL = 1 << 7         # div.full.f32
MOD_CMP_SHIFT = 8
MOD_CMP_MASK = 0x1F
MOD_BOOL_SHIFT = 13
MOD_BOOL_MASK = 0x3
MOD_MUL_SHIFT = 16
MOD_MUL_MASK = 0x3
MOD_SHF_RIGHT = 1 << 19   # shf.r (else shf.l)
MOD_SHF_CLAMP = 1 << 20   # shf.*.clamp (else .wrap)
MOD_PRMT_SHIFT = 21
MOD_PRMT_MASK = 0x7
MOD_NAN = 1 << 24         # min.NaN / max.NaN
MOD_TESTP_SHIFT = 25
MOD_TESTP_MASK = 0xF
MOD_RELU = 1 << 29        # max.relu / cvt .relu


def mods_rounding(mods: int) -> int:
    return (mods >> MOD_RND_SHIFT) & MOD_RND_MASK


def mods_cmp(mods: int) -> int:
    return (mods >> MOD_CMP_SHIFT) & MOD_CMP_MASK


def mods_bool(mods: int) -> int:
    return (mods >> MOD_BOOL_SHIFT) & MOD_BOOL_MASK


def mods_mul(mods: int) -> int:
    return (mods >> MOD_MUL_SHIFT) & MOD_MUL_MASK


def mods_prmt(mods: int) -> int:
    return (mods >> MOD_PRMT_SHIFT) & MOD_PRMT_MASK


def mods_testp(mods: int) -> int:
    return (mods >> MOD_TESTP_SHIFT) & MOD_TESTP_MASK


# ---------------------------------------------------------------- operations
# Per-lane ALU operations evaluated by gpusim.engine.semantics.alu.alu_eval (a scalar function of
# raw source bits). Everything from OP_MOV to OP_LAST_ALU is an ALU op.
OP_MOV = 1
OP_ADD = 2
OP_SUB = 3
OP_MUL = 4
OP_MAD = 5          # also fma.rn on floats goes to OP_FMA
OP_FMA = 6
OP_DIV = 7
OP_REM = 8
OP_ABS = 9
OP_NEG = 10
OP_MIN = 11
OP_MAX = 12
OP_AND = 13
OP_OR = 14
OP_XOR = 15
OP_NOT = 16
OP_CNOT = 17
OP_SHL = 18
OP_SHR = 19
OP_POPC = 20
OP_CLZ = 21
OP_BREV = 22
OP_BFE = 23
OP_BFI = 24
OP_PRMT = 25
OP_SELP = 26
OP_SLCT = 27
OP_SETP = 28
OP_CVT = 29
OP_RCP = 30
OP_SQRT = 31
OP_RSQRT = 32
OP_EX2 = 33
OP_LG2 = 34
OP_SIN = 35
OP_COS = 36
OP_TANH = 37
OP_TESTP = 38
OP_COPYSIGN = 39
OP_LOP3 = 40
OP_SHF = 41
OP_MUL24 = 42
OP_MAD24 = 43
OP_SAD = 44
OP_FNS = 45
OP_BFIND = 46
OP_SET = 47
# ---- added by the conformance corpus (tests/corpus): integer dot products of packed bytes/halves
OP_DP4A = 48
OP_DP2A = 49
OP_LAST_ALU = 49

# Memory, control and warp-level operations, handled by the engine itself.
OP_LD = 60
OP_ST = 61
OP_ATOM = 62
OP_RED = 63
OP_CVTA = 64
OP_PREFETCH = 65
OP_BRA = 70
OP_RET = 71
OP_EXIT = 72
OP_BAR = 73
OP_MEMBAR = 74
OP_NANOSLEEP = 75
OP_TRAP = 76
OP_SHFL = 80
OP_VOTE = 81
OP_ACTIVEMASK = 82
OP_MATCH = 83
OP_REDUX = 84
OP_NOP = 90

# textures (gpusim.engine.semantics.texture): tex.1d/2d/3d and tld4 on a texture object
OP_TEX = 66
OP_TLD4 = 67
# ---------------------------------------------------------------- tensor cores (issue 14)
# Warp-wide matrix instructions, cp.async; semantics in gpusim.engine.semantics.tensor, lowering in
# gpusim.ptx.lower_tensor. All of them run through step_warp (never the fast path).
OP_MMA = 100          # mma.sync.aligned
OP_LDMATRIX = 101
OP_STMATRIX = 102
OP_CP_ASYNC = 103     # cp.async.{ca,cg}.shared.global
OP_CP_COMMIT = 104    # cp.async.commit_group
OP_CP_WAIT = 105      # cp.async.wait_group N / wait_all (F_AUX = N; wait_all: 0)
OP_WMMA_LOAD = 106
OP_WMMA_STORE = 107
OP_WMMA_MMA = 108
OP_WGMMA = 109         # wgmma.mma_async (Hopper; gpusim.ptx.lower_wgmma, gpusim.engine.semantics.wgmma)
OP_FIRST_TENSOR = 100
OP_LAST_TENSOR = 109

# ---------------------------------------------------------------- added by the ALU semantics (alu.py)
MOD_SHIFTAMT = 1 << 30    # bfind.shiftamt: return the left-shift amount instead of the bit position

# ---------------------------------------------------------------- calls, printf, __syncwarp (issue 12: calls)
OP_CALL = 110       # call of a .func: push a frame and a SIMT call entry (gpusim.ptx.calls)
OP_FRET = 111       # the return row at the end of a .func
OP_VPRINTF = 112    # call.uni vprintf: record a printf in the launch's printf buffer
# ---------------------------------------------------------------- Hopper (issue 25): mbarrier, bulk copies, elect
# Semantics in gpusim.engine.semantics.mbarrier, lowering in gpusim.ptx.lower_hopper; step_warp only.
# cp.async.bulk.commit_group / wait_group are OP_CP_COMMIT / OP_CP_WAIT rows with TC_BULK set.
OP_MBARRIER = 113   # mbarrier.* (the operation in F_AUX: MB_* of gpusim.arch.layout)
OP_ELECT = 114      # elect.sync d|p, membermask
OP_BULK_COPY = 115  # cp.async.bulk (F_AUX: BULK_G2S or BULK_S2G)
OP_BULK_TENSOR = 116  # cp.async.bulk.tensor / cp.reduce.async.bulk.tensor / prefetch (TMA; F_AUX: TMA_* of
                      # gpusim.arch.layout; gpusim.ptx.lower_tma, gpusim.engine.semantics.tma)
OP_MAPA = 117       # mapa: a shared::cluster address of another CTA's variable (semantics/cluster_ops.py)
OP_BARRIER_CLUSTER = 118   # barrier.cluster.arrive / .wait (F_AUX: CLUSTER_BAR_ARRIVE or CLUSTER_BAR_WAIT)
OP_FIRST_HOPPER = 113
OP_LAST_HOPPER = 118
# ---------------------------------------------------------------- added by the conformance corpus (dp2a)
MOD_DP2A_HI = 1 << 31    # dp2a.hi: bytes 2-3 of b (else .lo: bytes 0-1)
# ---------------------------------------------------------------- szext and bmsk (PTX ISA 7.6, sm_70): bfe and bfi rows
# szext.mode.{u,s}32 d, a, b is bfe d, a, 0, N and bmsk.mode.b32 d, a, b is bfi d, 0xFFFFFFFF, 0, a, N (ones inserted
# at a), with the position and width operands taken modulo 32 (.wrap) or clamped to 32 (.clamp) first
MOD_SZEXT = 1 << 30      # on OP_BFE rows (bfind's MOD_SHIFTAMT bit: flags are per operation)
MOD_BMSK = 1 << 30       # on OP_BFI rows
MOD_BITS_CLAMP = 1 << 20  # with MOD_SZEXT / MOD_BMSK: .clamp (else .wrap); shf's MOD_SHF_CLAMP bit
