"""The engine's mutable state, laid out in one place.

Everything that changes while a kernel runs is a numpy array inside the
``Machine`` namedtuple. Warp state is indexed by *warp slot* ``w``; a slot holds one warp
of a resident block. Lane ``l`` of slot ``w`` is row ``w * 32 + l`` of the
per-thread arrays.

=============  ===========================  ==============================================
field          shape / dtype                meaning
=============  ===========================  ==============================================
regs           [W, R, 32] uint64            register file: raw bits, 32-bit values zero-extended
stk_pc         [W, D] int64                 SIMT stack: next pc of each entry
stk_rpc        [W, D] int64                 SIMT stack: reconvergence pc (-1 for the base entry)
stk_mask       [W, D] int64                 SIMT stack: lane mask of each entry
sp             [W] int64                    index of the top entry (-1: warp finished)
exited         [W] int64                    lanes that have exited (or never existed)
warp_block     [W] int64                    linear block id (in the grid) of the slot's warp
warp_index     [W] int64                    warp index within its block
warp_bslot     [W] int64                    block slot (row of the shared-memory arrays)
warp_sm        [W] int64                    SM the warp runs on
warp_slot_sm   [W] int64                    warp slot number within its SM (%warpid)
mem8..mem64    [heap] uint8..uint64 views   device memory from GLOBAL_BASE
valid          [heap] uint8                 0 no allocation, 1 allocated never written, 2 written
shared8..64    [B, S] views                 shared memory of each block slot
local8..64     [W * 32, LB] views           local memory of each thread
param8..64     [P] views                    the launch's parameter buffer
launch         [LAUNCH_FIELDS] int64        grid/block geometry and sizes (L_* indices)
pc_counts      [n_inst, 3] int64            warp instructions, active threads, predicated-on threads
err            [8] int64                    the first error: kind, pc, warp slot, lane, address, extra
bar_arrivals   [W] int64                    block-wide bar.sync a warp has arrived at (synccheck)
lane_addr      [32 + 256] int64             scratch: per-lane resolved address of the last memory op; after
                                            the 32 lanes, the sorted sectors a texture fetch read
mem_req        [12] int64                   scratch: the last memory op (space, size, vec, kind, mask,
                                            bytes), barrier id/count, the pc executed, its active and
                                            predicated-on lane counts
snap           [32] uint64                  scratch: a register of all lanes (shuffles)
clock          [1] int64                    the current cycle (for %clock)
shfl_values    [32] uint64                  scratch: shuffle results before they are written
shfl_preds     [32] uint64                  scratch: shuffle predicates
members        [32] int64                   scratch: each lane's member-mask group (warp-wide ops)
printf8, 64    [F] uint8, uint64 views      the launch's printf records (engine/semantics/calls.py)
printf_ctl     [4] int64                    printf buffer: bytes used, records dropped, records kept
its_wait       [W] int64                    ITS: lanes blocked at a warp-synchronous instruction (its.py)
its_sig        [W, ITS_SIG_SLOTS] uint64    ITS: state signature at a diverged group's last back edges
bar_red        [W, 8] int64                 bar.red per warp: phase, generation, two records (barrier_reduce.py)
tensor_scratch [1536] float64               scratch: A, B, C of a tensor instruction (semantics/tensor.py)
hw_notes       [8] int64                    what a sanitizer would report but the hardware runs (HN_*)
race_shadow    [B, S, 3] int64              racecheck: last write and two reads of each shared byte
race_warp      [W, 2] int64                 racecheck: block stamp and barrier epoch of each warp slot
race_bstamp    [B] int64                    racecheck: block (+1) each block slot's shadow belongs to
race_found     [RF_MAX, RF_N] int64         racecheck: distinct hazards found (semantics/racecheck.py)
=============  ===========================  ==============================================
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from gpusim.errors import LaunchError

WARP_SIZE = 32
FULL_MASK = 0xFFFFFFFF

MACHINE_FIELDS = [
    "regs", "stk_pc", "stk_rpc", "stk_mask", "sp", "exited",
    "warp_block", "warp_index", "warp_bslot", "warp_sm", "warp_slot_sm",
    "mem8", "mem16", "mem32", "mem64", "valid",
    "shared8", "shared16", "shared32", "shared64",
    "local8", "local16", "local32", "local64",
    "param8", "param16", "param32", "param64",
    "launch", "pc_counts", "err", "bar_arrivals", "lane_addr", "mem_req", "snap", "clock", "shfl_values", "shfl_preds",
    "members",
    "printf8", "printf64", "printf_ctl",      # device printf (issue 12: calls)
    "its_wait", "its_sig",      # independent thread scheduling (engine/semantics/its.py)
    "bar_red",   # conformance corpus: bar.red records (engine/semantics/barrier_reduce.py)
    "tensor_scratch",   # tensor cores (issue 14)
    "hw_notes", "race_shadow", "race_warp", "race_bstamp", "race_found",   # sanitizers (issue 27)
]
Machine = namedtuple("Machine", MACHINE_FIELDS)

# launch[] indices
L_NTID_X, L_NTID_Y, L_NTID_Z = 0, 1, 2
L_NCTAID_X, L_NCTAID_Y, L_NCTAID_Z = 3, 4, 5
L_THREADS_PER_BLOCK = 6
L_WARPS_PER_BLOCK = 7
L_NSM = 8
L_DYNAMIC_SMEM = 9
L_SHARED_BYTES = 10       # bytes of shared memory per block (static + dynamic)
L_GRIDID = 11
L_HEAP_BYTES = 12
L_LOCAL_BYTES = 13
L_PARAM_BYTES = 14
L_N_INST = 15
L_STACK_DEPTH = 16
L_MAX_WARPS_PER_SM = 17
L_SYNCCHECK = 18          # SYNC_*: what a block-wide bar.sync some threads skip does (launch/sanitize.py)
L_CALL_DEPTH = 19         # max_call_depth: nested calls a thread may be inside (issue 12: calls)
L_RECONVERGENCE = 20      # RECONV_IPDOM or RECONV_ITS (GPU(reconvergence=...))
L_SHARED_LIMIT = 21       # shared bytes a block may touch: its allocation granule (>= L_SHARED_BYTES)
L_MEMCHECK = 22           # 1: memcheck (an access past the declared shared size is an error)
L_RACECHECK = 23          # 1: racecheck (shared-memory hazards recorded in race_found)
LAUNCH_FIELDS = 24
SYNC_OFF, SYNC_STRICT, SYNC_HARDWARE = 0, 1, 2   # L_SYNCCHECK: no check, synccheck error, count exited threads
# hw_notes[]: an exited thread at a block-wide barrier (count, first pc, its block), an access past the declared
# shared size inside the allocation granule (count, first pc, its block, the shared address)
HN_EXIT_BAR, HN_EXIT_BAR_PC, HN_EXIT_BAR_BLOCK = 0, 1, 2
HN_SHARED_OVER, HN_SHARED_OVER_PC, HN_SHARED_OVER_BLOCK, HN_SHARED_OVER_ADDRESS = 3, 4, 5, 6
N_HW_NOTES = 8
RECONV_IPDOM, RECONV_ITS = 0, 1
ITS_SIG_SLOTS = 8         # back-edge signatures kept per warp, indexed by the branch's pc

# err[] layout and error kinds
E_KIND, E_PC, E_WARP, E_LANE, E_ADDRESS, E_EXTRA, E_SUB = 0, 1, 2, 3, 4, 5, 6
ERR_NONE = 0
ERR_OUT_OF_BOUNDS = 1
ERR_MISALIGNED = 2
ERR_STACK_OVERFLOW = 3
ERR_TRAP = 4
ERR_BAD_SPACE = 5
ERR_UNINITIALIZED = 6    # initcheck: a read of device memory nothing wrote
ERR_BARRIER = 7          # synccheck: a bar.sync some threads of the block skipped (address: their lanes)
ERR_SYNC = 8              # a warp-wide op's member mask the ISA leaves undefined (E_SUB: which rule)
SYNC_NOT_MEMBER, SYNC_INACTIVE_MEMBER, SYNC_MASK_MISMATCH = 1, 2, 3
ERR_CALL_DEPTH = 9        # a call past max_call_depth (address: the depth it would reach)
# textures (gpusim.engine.semantics.texture): a bad handle or a mismatched fetch (E_SUB: TEXERR_* of
# gpusim.arch.texture_layout)
ERR_TEXTURE = 10
SYNC_NEVER_ARRIVES = 4    # ITS: every group of the warp is blocked at a warp-synchronous instruction
ERR_ASSERT = 11           # a failed assert(): __assertfail (address: the lanes that called it)
ERR_MEMCHECK = 12         # memcheck: a shared access past the declared size, inside the granule
# racecheck findings (race_found rows): kind, earlier pc, later pc, earlier thread, later thread, block, shared
# address, count
RF_KIND, RF_PC0, RF_PC1, RF_TID0, RF_TID1, RF_BLOCK, RF_ADDRESS, RF_COUNT = 0, 1, 2, 3, 4, 5, 6, 7
RF_N = 8
RF_MAX = 64               # distinct (kind, pc, pc) hazards kept; race_found[RF_MAX - 1, RF_COUNT] counts the rest
RACE_RAW, RACE_WAR, RACE_WAW, RACE_WAW_SAME = 1, 2, 3, 4   # the last: a warning (the value already there)

# mem_req[] layout
MR_SPACE, MR_SIZE, MR_VEC, MR_KIND, MR_MASK, MR_BYTES, MR_BAR_ID, MR_BAR_COUNT, MR_PC = 0, 1, 2, 3, 4, 5, 6, 7, 8
MR_ACTIVE, MR_PRED_ON = 9, 10
MR_LOAD, MR_STORE, MR_ATOMIC = 1, 2, 3
# textures: a fetch's sectors are in lane_addr[LANE_ADDR_TEXTURE:][:mem_req[MR_TEX_SECTORS]] (heap offsets)
MR_TEXTURE = 4
MR_TEX_SECTORS = 11
LANE_ADDR_TEXTURE = 32
TEXTURE_MAX_SECTORS = 256      # 32 lanes x 8 texels of a 3D linear fetch
# tensor cores (issue 14): cp.async requests. MR_ASYNC: ASYNC_COPY (| ASYNC_NO_L1 for .cg) on a copy's global
# load, cleared by the timing model; commit_group / wait_group are requests of their own kinds (wait_group:
# N in MR_SIZE, 1 in MR_VEC for wait_all) that only the timing model's cp.async groups act on
MR_ASYNC = 12
ASYNC_COPY, ASYNC_NO_L1 = 1, 2
MR_ASYNC_COMMIT, MR_ASYNC_WAIT = 5, 6    # after MR_TEXTURE (4)


def _views(buffer: np.ndarray) -> tuple:
    return (buffer, buffer.view(np.uint16), buffer.view(np.uint32), buffer.view(np.uint64))


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
    return Machine(
        regs=np.zeros((warp_slots, n_regs, WARP_SIZE), dtype=np.uint64),
        stk_pc=np.zeros((warp_slots, stack_depth), dtype=np.int64),
        stk_rpc=np.full((warp_slots, stack_depth), -1, dtype=np.int64),
        stk_mask=np.zeros((warp_slots, stack_depth), dtype=np.int64),
        sp=np.full(warp_slots, -1, dtype=np.int64),
        exited=np.zeros(warp_slots, dtype=np.int64),
        warp_block=np.zeros(warp_slots, dtype=np.int64),
        warp_index=np.zeros(warp_slots, dtype=np.int64),
        warp_bslot=np.zeros(warp_slots, dtype=np.int64),
        warp_sm=np.zeros(warp_slots, dtype=np.int64),
        warp_slot_sm=np.zeros(warp_slots, dtype=np.int64),
        **dict(zip(("mem8", "mem16", "mem32", "mem64"), _views(heap), strict=True)),
        valid=valid,
        **dict(zip(("shared8", "shared16", "shared32", "shared64"), _views(shared), strict=True)),
        **dict(zip(("local8", "local16", "local32", "local64"), _views(local), strict=True)),
        **dict(zip(("param8", "param16", "param32", "param64"), _views(params), strict=True)),
        launch=launch,
        pc_counts=np.zeros((max(n_inst, 1), 3), dtype=np.int64),
        err=np.zeros(8, dtype=np.int64),
        bar_arrivals=np.zeros(warp_slots, dtype=np.int64),
        lane_addr=np.zeros(LANE_ADDR_TEXTURE + TEXTURE_MAX_SECTORS, dtype=np.int64),
        mem_req=np.zeros(13, dtype=np.int64),
        snap=np.zeros(WARP_SIZE, dtype=np.uint64),
        clock=np.zeros(1, dtype=np.int64),
        shfl_values=np.zeros(WARP_SIZE, dtype=np.uint64),
        shfl_preds=np.zeros(WARP_SIZE, dtype=np.uint64),
        members=np.zeros(WARP_SIZE, dtype=np.int64),
        printf8=printf, printf64=printf.view(np.uint64), printf_ctl=np.zeros(4, dtype=np.int64),
        its_wait=np.zeros(warp_slots, dtype=np.int64),
        its_sig=np.zeros((warp_slots, ITS_SIG_SLOTS), dtype=np.uint64),
        bar_red=np.zeros((warp_slots, 8), dtype=np.int64),
        tensor_scratch=np.zeros(1536, dtype=np.float64),
        hw_notes=np.zeros(N_HW_NOTES, dtype=np.int64),
        race_shadow=np.zeros((block_slots, padded(shared_bytes), 3) if racing else (1, 1, 3), dtype=np.int64),
        race_warp=np.zeros((warp_slots if racing else 1, 2), dtype=np.int64),
        race_bstamp=np.zeros(block_slots if racing else 1, dtype=np.int64),
        race_found=np.zeros((RF_MAX, RF_N), dtype=np.int64),
    )
