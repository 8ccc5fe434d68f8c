"""The opcode table: one row per instruction form, the one source of truth for
pipe routing, latency class, dependency class and FLOP counting.

A form is an operation (``OP_*`` from ``gpusim.arch.codes``) on a class of
types: ``int`` (all integer and bit types), ``f16``, ``f32``, ``f64``, ``pred``
or ``any``. The lowering picks the row for each instruction with
:func:`isa_row`; the engine reads the row's integers from :data:`ISA_ARRAY`.

Latency is given as the *name* of a config field (``fp32_latency_cycles`` ...)
so that a config change really changes timing; memory instructions take their
latency from the memory model instead (``latency=None``).

Dependency classes follow Nsight Compute's stall reasons: a consumer waiting on
a FIXED-latency producer stalls in ``wait``, on a SHORT (MIO: shared memory,
SFU, shuffles) producer in ``short_scoreboard``, on a LONG (L1TEX: global and
local memory) producer in ``long_scoreboard``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpusim.arch import codes as c

# pipes (per sub-partition); throughput = lanes of that kind per SM / sub-partitions
PIPE_NONE = 0
PIPE_FMA = 1      # fp32 lanes: FFMA/FADD/FMUL, IMAD (Volta+ runs IMAD on the FMA pipe)
PIPE_ALU = 2      # int32 lanes: integer/logic/compare/select/move
PIPE_FP64 = 3
PIPE_SFU = 4      # MUFU transcendental, conversions
PIPE_LSU = 5      # global/local memory (LG path of L1TEX)
PIPE_MIO = 6      # shared memory, shuffles, shared atomics
PIPE_BRANCH = 7
PIPE_BARRIER = 8
PIPE_TENSOR = 9   # tensor cores (issue 14): HMMA/IMMA; busy per form (Form.interval), not per lane count
PIPE_WGMMA = 10   # the tensor pipe's wgmma queue (its issue port): a warp queues wgmma_issue_cycles apart, up to
#                   wgmma_queue_depth deep; the tensor pipe's own time is booked by engine/sm/wgmma_timing.py
N_PIPES = 11
PIPE_NAMES = ("none", "fma", "alu", "fp64", "sfu", "lsu", "mio", "branch", "barrier", "tensor", "wgmma")
# config field giving each pipe's lanes per SM (PIPE_NONE/BRANCH/BARRIER issue at one per cycle; the
# tensor pipe's busy cycles come from each form's interval field)
PIPE_LANE_FIELDS = (None, "fp32_lanes_per_sm", "int32_lanes_per_sm", "fp64_lanes_per_sm",
                    "sfu_lanes_per_sm", "lsu_lanes_per_sm", "lsu_lanes_per_sm", None, None, None, None)

DEP_FIXED = 0
DEP_SHORT = 1
DEP_LONG = 2

# FLOP kinds, named after Nsight's smsp__sass_thread_inst_executed_op_*_pred_on
FLOP_NONE = 0
FLOP_FADD = 1
FLOP_FMUL = 2
FLOP_FFMA = 3
FLOP_DADD = 4
FLOP_DMUL = 5
FLOP_DFMA = 6
FLOP_HADD = 7
FLOP_HMUL = 8
FLOP_HFMA = 9
FLOP_KIND_NAMES = ("", "fadd", "fmul", "ffma", "dadd", "dmul", "dfma", "hadd", "hmul", "hfma")
FLOPS_PER_KIND = (0, 1, 1, 2, 1, 1, 2, 1, 1, 2)


@dataclass(frozen=True)
class Form:
    """One row of the opcode table."""

    name: str                  # PTX mnemonic of the form, for reports
    op: int                    # OP_* code
    types: str                 # int | f16 | f32 | f64 | pred | any
    pipe: int                  # PIPE_*
    latency: str | None        # config field with the result latency; None = memory model
    dep: int                   # DEP_* class of a consumer's wait on this result
    flop_kind: int = FLOP_NONE
    # ---- tensor cores (issue 14)
    interval: str | None = None   # config field: pipe busy cycles per warp-instruction (None: the pipe's)
    hmma_count: int = 1           # the form is this many back-to-back instructions of `interval`/`latency`
    f16_accumulate: bool = False  # f16 accumulator: interval divided by mma_f16_accumulate_rate_factor
    tensor_flops: int = 0         # FLOPs per warp-instruction (2 per multiply-add)
    pipe_field: str | None = None  # config field naming the pipe ("sfu", "alu", ...) when it varies by GPU


def _alu(name: str, op: int, types: str = "int") -> Form:
    return Form(name=name, op=op, types=types, pipe=PIPE_ALU, latency="int32_latency_cycles", dep=DEP_FIXED)


def _fma(name: str, op: int, flop_kind: int = FLOP_NONE) -> Form:
    return Form(name=name, op=op, types="f32", pipe=PIPE_FMA, latency="fp32_latency_cycles",
                dep=DEP_FIXED, flop_kind=flop_kind)


def _fp64(name: str, op: int, flop_kind: int = FLOP_NONE) -> Form:
    return Form(name=name, op=op, types="f64", pipe=PIPE_FP64, latency="fp64_latency_cycles",
                dep=DEP_FIXED, flop_kind=flop_kind)


def _sfu(name: str, op: int, types: str = "f32") -> Form:
    return Form(name=name, op=op, types=types, pipe=PIPE_SFU, latency="sfu_latency_cycles", dep=DEP_SHORT)


def _imad(name: str, op: int) -> Form:
    return Form(name=name, op=op, types="int", pipe=PIPE_FMA, latency="imad_latency_cycles", dep=DEP_FIXED)


FORMS: tuple[Form, ...] = (
    Form(name="nop", op=c.OP_NOP, types="any", pipe=PIPE_NONE, latency=None, dep=DEP_FIXED),
    _alu("mov", c.OP_MOV, "any"),
    _alu("add.int", c.OP_ADD), _alu("sub.int", c.OP_SUB),
    _imad("mul.int", c.OP_MUL), _imad("mad.int", c.OP_MAD), _imad("mul24", c.OP_MUL24),
    _imad("mad24", c.OP_MAD24), _alu("sad", c.OP_SAD),
    Form(name="div.int", op=c.OP_DIV, types="int", pipe=PIPE_SFU, latency="sfu_latency_cycles", dep=DEP_SHORT),
    Form(name="rem.int", op=c.OP_REM, types="int", pipe=PIPE_SFU, latency="sfu_latency_cycles", dep=DEP_SHORT),
    _alu("abs.int", c.OP_ABS), _alu("neg.int", c.OP_NEG), _alu("min.int", c.OP_MIN), _alu("max.int", c.OP_MAX),
    _alu("and", c.OP_AND, "any"), _alu("or", c.OP_OR, "any"), _alu("xor", c.OP_XOR, "any"),
    _alu("not", c.OP_NOT, "any"), _alu("cnot", c.OP_CNOT), _alu("shl", c.OP_SHL), _alu("shr", c.OP_SHR),
    _alu("popc", c.OP_POPC), _alu("clz", c.OP_CLZ), _alu("brev", c.OP_BREV), _alu("bfe", c.OP_BFE),
    _alu("bfi", c.OP_BFI), _alu("prmt", c.OP_PRMT), _alu("lop3", c.OP_LOP3), _alu("shf", c.OP_SHF),
    _alu("bfind", c.OP_BFIND), _alu("fns", c.OP_FNS),
    _imad("dp4a", c.OP_DP4A), _imad("dp2a", c.OP_DP2A),    # conformance corpus: IDP runs on the IMAD path
    _alu("selp", c.OP_SELP, "any"), _alu("slct", c.OP_SLCT, "any"),
    _alu("setp.int", c.OP_SETP), _alu("set.int", c.OP_SET),
    _alu("setp.f32", c.OP_SETP, "f32"), _alu("set.f32", c.OP_SET, "f32"),
    Form(name="setp.f64", op=c.OP_SETP, types="f64", pipe=PIPE_FP64, latency="fp64_latency_cycles",
         dep=DEP_FIXED),
    _alu("setp.f16", c.OP_SETP, "f16"),
    _fma("add.f32", c.OP_ADD, FLOP_FADD), _fma("sub.f32", c.OP_SUB, FLOP_FADD),
    _fma("mul.f32", c.OP_MUL, FLOP_FMUL), _fma("fma.f32", c.OP_FMA, FLOP_FFMA),
    _fma("mad.f32", c.OP_MAD, FLOP_FFMA),
    _fma("abs.f32", c.OP_ABS), _fma("neg.f32", c.OP_NEG), _fma("min.f32", c.OP_MIN), _fma("max.f32", c.OP_MAX),
    _fma("copysign.f32", c.OP_COPYSIGN), _alu("testp.f32", c.OP_TESTP, "f32"),
    _sfu("div.f32", c.OP_DIV), _sfu("rcp.f32", c.OP_RCP), _sfu("sqrt.f32", c.OP_SQRT),
    _sfu("rsqrt.f32", c.OP_RSQRT), _sfu("ex2.f32", c.OP_EX2), _sfu("lg2.f32", c.OP_LG2),
    _sfu("sin.f32", c.OP_SIN), _sfu("cos.f32", c.OP_COS), _sfu("tanh.f32", c.OP_TANH),
    _fp64("add.f64", c.OP_ADD, FLOP_DADD), _fp64("sub.f64", c.OP_SUB, FLOP_DADD),
    _fp64("mul.f64", c.OP_MUL, FLOP_DMUL), _fp64("fma.f64", c.OP_FMA, FLOP_DFMA),
    _fp64("mad.f64", c.OP_MAD, FLOP_DFMA),
    _fp64("abs.f64", c.OP_ABS), _fp64("neg.f64", c.OP_NEG), _fp64("min.f64", c.OP_MIN),
    _fp64("max.f64", c.OP_MAX), _fp64("copysign.f64", c.OP_COPYSIGN), _fp64("testp.f64", c.OP_TESTP),
    _sfu("div.f64", c.OP_DIV, "f64"), _sfu("rcp.f64", c.OP_RCP, "f64"), _sfu("sqrt.f64", c.OP_SQRT, "f64"),
    _sfu("rsqrt.f64", c.OP_RSQRT, "f64"),
    Form(name="add.f16", op=c.OP_ADD, types="f16", pipe=PIPE_FMA, latency="fp32_latency_cycles",
         dep=DEP_FIXED, flop_kind=FLOP_HADD),
    Form(name="mul.f16", op=c.OP_MUL, types="f16", pipe=PIPE_FMA, latency="fp32_latency_cycles",
         dep=DEP_FIXED, flop_kind=FLOP_HMUL),
    Form(name="fma.f16", op=c.OP_FMA, types="f16", pipe=PIPE_FMA, latency="fp32_latency_cycles",
         dep=DEP_FIXED, flop_kind=FLOP_HFMA),
    Form(name="cvt.int", op=c.OP_CVT, types="int", pipe=PIPE_ALU, latency="int32_latency_cycles", dep=DEP_FIXED),
    Form(name="cvt.float", op=c.OP_CVT, types="any", pipe=PIPE_SFU, latency="conversion_latency_cycles",
         dep=DEP_SHORT),
    # cvt.rn.f32.{s32,u32}: I2F on the conversion unit through sm_80; ptxas emits I2FP.F32.S32/U32 from sm_86 on
    # (its SASS for validation/kernels/probe.ptx), whose pipe is the config's int_to_fp32_pipe
    Form(name="cvt.i2f32", op=c.OP_CVT, types="any", pipe=PIPE_SFU, latency="conversion_latency_cycles",
         dep=DEP_SHORT, pipe_field="int_to_fp32_pipe"),
    # f16/bf16 <-> f32 conversions run on the FMA pipe at full rate on sm_80+ (HADD2.F32 / F2FP)
    Form(name="cvt.half", op=c.OP_CVT, types="any", pipe=PIPE_FMA, latency="fp32_latency_cycles",
         dep=DEP_FIXED),
    _alu("cvta", c.OP_CVTA),
    Form(name="ld", op=c.OP_LD, types="any", pipe=PIPE_LSU, latency=None, dep=DEP_LONG),
    Form(name="ld.shared", op=c.OP_LD, types="any", pipe=PIPE_MIO, latency=None, dep=DEP_SHORT),
    Form(name="ld.param", op=c.OP_LD, types="any", pipe=PIPE_ALU, latency="int32_latency_cycles",
         dep=DEP_FIXED),
    Form(name="st", op=c.OP_ST, types="any", pipe=PIPE_LSU, latency=None, dep=DEP_LONG),
    Form(name="st.shared", op=c.OP_ST, types="any", pipe=PIPE_MIO, latency=None, dep=DEP_SHORT),
    Form(name="atom", op=c.OP_ATOM, types="any", pipe=PIPE_LSU, latency=None, dep=DEP_LONG),
    Form(name="atom.shared", op=c.OP_ATOM, types="any", pipe=PIPE_MIO, latency=None, dep=DEP_SHORT),
    Form(name="red", op=c.OP_RED, types="any", pipe=PIPE_LSU, latency=None, dep=DEP_LONG),
    Form(name="red.shared", op=c.OP_RED, types="any", pipe=PIPE_MIO, latency=None, dep=DEP_SHORT),
    Form(name="prefetch", op=c.OP_PREFETCH, types="any", pipe=PIPE_LSU, latency=None, dep=DEP_LONG),
    Form(name="bra", op=c.OP_BRA, types="any", pipe=PIPE_BRANCH, latency="branch_latency_cycles",
         dep=DEP_FIXED),
    Form(name="ret", op=c.OP_RET, types="any", pipe=PIPE_BRANCH, latency="branch_latency_cycles", dep=DEP_FIXED),
    Form(name="exit", op=c.OP_EXIT, types="any", pipe=PIPE_BRANCH, latency="branch_latency_cycles",
         dep=DEP_FIXED),
    Form(name="trap", op=c.OP_TRAP, types="any", pipe=PIPE_BRANCH, latency="branch_latency_cycles",
         dep=DEP_FIXED),
    Form(name="bar", op=c.OP_BAR, types="any", pipe=PIPE_BARRIER, latency="barrier_latency_cycles",
         dep=DEP_FIXED),
    Form(name="membar", op=c.OP_MEMBAR, types="any", pipe=PIPE_BARRIER, latency=None, dep=DEP_FIXED),
    Form(name="nanosleep", op=c.OP_NANOSLEEP, types="any", pipe=PIPE_BRANCH, latency=None, dep=DEP_FIXED),
    Form(name="shfl", op=c.OP_SHFL, types="any", pipe=PIPE_MIO, latency="shuffle_latency_cycles",
         dep=DEP_SHORT),
    Form(name="vote", op=c.OP_VOTE, types="any", pipe=PIPE_ALU, latency="int32_latency_cycles", dep=DEP_FIXED),
    Form(name="activemask", op=c.OP_ACTIVEMASK, types="any", pipe=PIPE_ALU, latency="int32_latency_cycles",
         dep=DEP_FIXED),
    Form(name="match", op=c.OP_MATCH, types="any", pipe=PIPE_MIO, latency="shuffle_latency_cycles",
         dep=DEP_SHORT),
    Form(name="redux", op=c.OP_REDUX, types="any", pipe=PIPE_MIO, latency="shuffle_latency_cycles",
         dep=DEP_SHORT),
    # calls, printf, __syncwarp (issue 12: calls): a call and a return redirect fetch like a taken branch
    Form(name="call", op=c.OP_CALL, types="any", pipe=PIPE_BRANCH, latency="call_latency_cycles", dep=DEP_FIXED),
    Form(name="ret.func", op=c.OP_FRET, types="any", pipe=PIPE_BRANCH, latency="ret_latency_cycles",
         dep=DEP_FIXED),
    Form(name="vprintf", op=c.OP_VPRINTF, types="any", pipe=PIPE_BRANCH, latency="call_latency_cycles",
         dep=DEP_FIXED),
    # textures: the fetch is timed by the memory model through L1 (gpusim.engine.sm.texture_timing); the
    # TEX unit's issue slot is modelled as the LSU's
    Form(name="tex", op=c.OP_TEX, types="any", pipe=PIPE_LSU, latency=None, dep=DEP_LONG),
    Form(name="tld4", op=c.OP_TLD4, types="any", pipe=PIPE_LSU, latency=None, dep=DEP_LONG),
    # codegen (issue 11): a setp as ptxas times it, its predicate ready for a guard or branch after
    # predicate_latency_cycles (ptxas control bits); gpusim.codegen picks it by name in codegen="ptxas"
    Form(name="setp.pred", op=c.OP_SETP, types="any", pipe=PIPE_ALU, latency="predicate_latency_cycles",
         dep=DEP_FIXED),
    # codegen (issue 11): a bra as ptxas times it, a taken one waiting taken_branch_cycles (a BRA's stall count
    # in ptxas's control bits; one not taken waits branch_latency_cycles, as "bra"); codegen="ptxas" picks it
    Form(name="bra.ptxas", op=c.OP_BRA, types="any", pipe=PIPE_BRANCH, latency="taken_branch_cycles",
         dep=DEP_FIXED),
)



def _mma(name: str, op: int, field_prefix: str, flops: int, hmma_count: int = 1, f16_accumulate: bool = False
         ) -> Form:
    return Form(name=name, op=op, types="any", pipe=PIPE_TENSOR, latency=field_prefix + "_latency_cycles",
                dep=DEP_FIXED, interval=field_prefix + "_interval_cycles", hmma_count=hmma_count,
                f16_accumulate=f16_accumulate, tensor_flops=flops)


# ---- tensor cores (issue 14): one form per timing class (shape x input class x accumulator); the lowering
# picks them by name (gpusim.ptx.lower_tensor). A wmma form is priced as the HMMA sequence it compiles to.
TENSOR_FORMS: tuple[Form, ...] = (
    _mma("mma.m16n8k16.f16", c.OP_MMA, "mma_f16_m16n8k16", 4096),
    _mma("mma.m16n8k16.f16.f16acc", c.OP_MMA, "mma_f16_m16n8k16", 4096, f16_accumulate=True),
    _mma("mma.m16n8k8.f16", c.OP_MMA, "mma_f16_m16n8k8", 2048),
    _mma("mma.m16n8k8.f16.f16acc", c.OP_MMA, "mma_f16_m16n8k8", 2048, f16_accumulate=True),
    _mma("mma.m16n8k8.tf32", c.OP_MMA, "mma_tf32_m16n8k8", 2048),
    _mma("mma.m16n8k32.int8", c.OP_MMA, "mma_int8_m16n8k32", 8192),
    _mma("mma.m16n8k32.fp8", c.OP_MMA, "mma_fp8_m16n8k32", 8192),
    _mma("mma.m16n8k32.fp8.f16acc", c.OP_MMA, "mma_fp8_m16n8k32", 8192, f16_accumulate=True),
    _mma("wmma.mma.f16", c.OP_WMMA_MMA, "mma_f16_m16n8k16", 8192, hmma_count=2),
    _mma("wmma.mma.f16.f16acc", c.OP_WMMA_MMA, "mma_f16_m16n8k16", 8192, hmma_count=2, f16_accumulate=True),
    _mma("wmma.mma.tf32", c.OP_WMMA_MMA, "mma_tf32_m16n8k8", 4096, hmma_count=2),
    _mma("wmma.mma.int8", c.OP_WMMA_MMA, "mma_int8_m16n8k32", 8192),
    Form(name="ldmatrix", op=c.OP_LDMATRIX, types="any", pipe=PIPE_MIO, latency=None, dep=DEP_SHORT),
    Form(name="stmatrix", op=c.OP_STMATRIX, types="any", pipe=PIPE_MIO, latency=None, dep=DEP_SHORT),
    Form(name="wmma.load", op=c.OP_WMMA_LOAD, types="any", pipe=PIPE_LSU, latency=None, dep=DEP_LONG),
    Form(name="wmma.load.shared", op=c.OP_WMMA_LOAD, types="any", pipe=PIPE_MIO, latency=None, dep=DEP_SHORT),
    Form(name="wmma.store", op=c.OP_WMMA_STORE, types="any", pipe=PIPE_LSU, latency=None, dep=DEP_LONG),
    Form(name="wmma.store.shared", op=c.OP_WMMA_STORE, types="any", pipe=PIPE_MIO, latency=None, dep=DEP_SHORT),
    Form(name="cp.async", op=c.OP_CP_ASYNC, types="any", pipe=PIPE_LSU, latency=None, dep=DEP_LONG),
    Form(name="cp.async.commit_group", op=c.OP_CP_COMMIT, types="any", pipe=PIPE_NONE, latency=None,
         dep=DEP_FIXED),
    Form(name="cp.async.wait_group", op=c.OP_CP_WAIT, types="any", pipe=PIPE_NONE, latency=None, dep=DEP_FIXED),
)

# ---- wgmma (Hopper): one form per input class x accumulator x N, so that each form's pipe time and FLOPs are
# its own: the tensor pipe of the warp's sub-partition is busy wgmma_n8_interval_cycles per 8 columns of N
# (hmma_count = N / 8: the form is priced as N / 8 back-to-back slices) and a warp's share is its 16 rows of
# the 64: 2 x 16 x N x K FLOPs. The K of each class (16 f16/bf16, 8 tf32, 32 8-bit) makes the work per 8
# columns the same fraction of each class's dense peak. docs/tensor-cores.md, "Hopper: wgmma".
WGMMA_CLASSES = (("f16", 16), ("f16.f16acc", 16), ("tf32", 8), ("fp8", 32), ("fp8.f16acc", 32), ("int8", 32))


def wgmma_form_name(klass: str, n: int) -> str:
    return f"wgmma.m64n{n}.{klass}"


TENSOR_FORMS = TENSOR_FORMS + tuple(
    Form(name=wgmma_form_name(klass, n), op=c.OP_WGMMA, types="any", pipe=PIPE_TENSOR,
         latency="wgmma_latency_cycles", dep=DEP_FIXED, interval="wgmma_n8_interval_cycles", hmma_count=n // 8,
         tensor_flops=2 * 16 * n * k)
    for klass, k in WGMMA_CLASSES for n in range(8, 257, 8)) + (
    Form(name="wgmma.fence", op=c.OP_NOP, types="any", pipe=PIPE_NONE, latency=None, dep=DEP_FIXED),
    Form(name="wgmma.commit_group", op=c.OP_CP_COMMIT, types="any", pipe=PIPE_NONE, latency=None, dep=DEP_FIXED),
    Form(name="wgmma.wait_group", op=c.OP_CP_WAIT, types="any", pipe=PIPE_NONE, latency=None, dep=DEP_FIXED),
)

# ---- Hopper (issue 25): an mbarrier operation is a read-modify-write of its 8-byte shared word, timed as a
# shared-memory atomic (MIO; its result when the memory model says); elect.sync as vote; a bulk copy is
# handed to the asynchronous copy unit (the LSU issue slot; its bytes are timed by sm/async_timing.py)
HOPPER_FORMS: tuple[Form, ...] = (
    # setmaxnreg and griddepcontrol (gpusim.ptx.lower_launch_control): checked, then issued as no-ops
    *(Form(name=name, op=c.OP_NOP, types="any", pipe=PIPE_NONE, latency=None, dep=DEP_FIXED)
      for name in ("setmaxnreg.inc", "setmaxnreg.dec", "griddepcontrol.launch_dependents", "griddepcontrol.wait",
                   "discard.L2", "applypriority.L2")),    # gpusim.ptx.lower_cache_policy: L2 hints, no-ops here
    Form(name="mbarrier", op=c.OP_MBARRIER, types="any", pipe=PIPE_MIO, latency=None, dep=DEP_SHORT),
    Form(name="mbarrier.pending_count", op=c.OP_MBARRIER, types="any", pipe=PIPE_ALU,
         latency="int32_latency_cycles", dep=DEP_FIXED),
    Form(name="elect", op=c.OP_ELECT, types="any", pipe=PIPE_ALU, latency="int32_latency_cycles", dep=DEP_FIXED),
    Form(name="cp.async.bulk", op=c.OP_BULK_COPY, types="any", pipe=PIPE_LSU, latency=None, dep=DEP_LONG),
    # TMA (gpusim.ptx.lower_tma): handed to the SM's TMA unit like a bulk copy (sm/tma_timing.py)
    Form(name="cp.async.bulk.tensor", op=c.OP_BULK_TENSOR, types="any", pipe=PIPE_LSU, latency=None,
         dep=DEP_LONG),
    # clusters: mapa is address arithmetic; barrier.cluster goes over the SM-to-SM network (MIO, its release
    # when the timing model says: cluster_barrier_latency_cycles)
    Form(name="mapa", op=c.OP_MAPA, types="any", pipe=PIPE_ALU, latency="int32_latency_cycles", dep=DEP_FIXED),
    Form(name="barrier.cluster", op=c.OP_BARRIER_CLUSTER, types="any", pipe=PIPE_MIO, latency=None,
         dep=DEP_SHORT),
)
FIRST_TENSOR_FORM = len(FORMS)
"""The index of the first tensor form: every form from here on is a tensor or Hopper one."""
FORMS = FORMS + TENSOR_FORMS + HOPPER_FORMS

_INDEX: dict[tuple[int, str], int] = {}
for _i, _form in enumerate(FORMS):
    _INDEX.setdefault((_form.op, _form.types), _i)
    _INDEX.setdefault((_form.op, _form.name), _i)


def type_class(type_code: int) -> str:
    """The type class of a T_* code: int, f16, f32, f64 or pred."""
    if type_code in (c.T_F32,):
        return "f32"
    if type_code == c.T_F64:
        return "f64"
    if type_code in (c.T_F16, c.T_BF16, c.T_F16X2, c.T_BF16X2):
        return "f16"
    if type_code == c.T_PRED:
        return "pred"
    return "int"


def isa_row(op: int, type_code: int, variant: str | None = None) -> int:
    """The FORMS index for an operation on a type (``variant`` picks a named form, e.g. 'ld.shared')."""
    if variant is not None and (op, variant) in _INDEX:
        return _INDEX[(op, variant)]
    cls = type_class(type_code)
    for key in ((op, cls), (op, "int" if cls == "pred" else cls), (op, "any")):
        if key in _INDEX:
            return _INDEX[key]
    for key in ((op, "f32"), (op, "int")):
        if key in _INDEX:
            return _INDEX[key]
    raise KeyError(f"no opcode-table row for op {op} on type {type_code}")


BRA_FORM = _INDEX[(c.OP_BRA, "bra")]
"""The plain ``bra`` form: its latency (branch_latency_cycles) is what a branch not taken waits in any mode."""


# columns of ISA_ARRAY, the table as the engine reads it
I_PIPE = 0
I_DEP = 1
I_FLOP_KIND = 2
I_LATENCY = 3     # filled per config by isa_array(config); -1 = from the memory model
I_INTERVAL = 4    # cycles the form keeps its pipe busy per warp-instruction (tensor cores, issue 14)
N_ISA_FIELDS = 5


def form_interval(form: Form, config, default: int) -> int:
    """Pipe busy cycles per warp-instruction of ``form`` (``default``: its pipe's); 0 when the config says the
    GPU has no such tensor instruction."""
    if form.interval is None:
        return default
    base = int(getattr(config, form.interval))
    if form.f16_accumulate and base:
        base = -(-base // int(config.mma_f16_accumulate_rate_factor))
    return base * form.hmma_count


def form_latency(form: Form, config) -> int:
    """Result latency of ``form`` in cycles (-1: from the memory model). A form of several HMMAs finishes
    its last one ``interval`` cycles after the one before."""
    if form.latency is None:
        return -1
    latency = int(getattr(config, form.latency))
    if form.hmma_count > 1:
        latency += form_interval(form, config, 1) // form.hmma_count * (form.hmma_count - 1)
    return latency


def form_pipe(form: Form, config=None) -> int:
    """The pipe ``form`` issues to on ``config`` (its ``pipe_field`` names it), else its own ``pipe``."""
    if form.pipe_field is None or config is None:
        return form.pipe
    return PIPE_NAMES.index(getattr(config, form.pipe_field))


def isa_array(config) -> np.ndarray:
    """FORMS as an int64 matrix with latencies and pipe intervals resolved from ``config``."""
    table = np.zeros((len(FORMS), N_ISA_FIELDS), dtype=np.int64)
    intervals = pipe_intervals(config)
    for i, form in enumerate(FORMS):
        pipe = form_pipe(form, config)
        table[i, I_PIPE] = pipe
        table[i, I_DEP] = form.dep
        table[i, I_FLOP_KIND] = form.flop_kind
        table[i, I_LATENCY] = form_latency(form, config)
        table[i, I_INTERVAL] = max(1, form_interval(form, config, int(intervals[pipe])))
        if form.op == c.OP_WGMMA:
            # the warp issues into the wgmma queue (PIPE_WGMMA); the tensor pipe's time (Form.interval, kept
            # for the metrics) is booked when the queue reaches it (engine/sm/wgmma_timing.py)
            table[i, I_PIPE] = PIPE_WGMMA
            table[i, I_INTERVAL] = max(1, int(config.wgmma_issue_cycles))
    return table


def pipe_intervals(config) -> np.ndarray:
    """Cycles each pipe is busy per warp-instruction: 32 lanes over the pipe's lanes per sub-partition."""
    out = np.ones(N_PIPES, dtype=np.int64)
    for pipe, field in enumerate(PIPE_LANE_FIELDS):
        if field is not None:
            lanes = getattr(config, field) / config.sub_partitions_per_sm
            out[pipe] = max(1, int(np.ceil(32 / lanes)))
    return out
