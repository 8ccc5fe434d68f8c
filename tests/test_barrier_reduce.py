"""bar.red (``__syncthreads_count`` / ``_and`` / ``_or``) against numpy, functional and timed.

Found by the conformance corpus (tests/corpus/vote.cu's block_votes, refused before). The kernels below
reduce several predicates in a row, so consecutive bar.red instructions reuse the per-warp records (the
generation parity of engine/semantics/barrier_reduce.py), with a partial last warp, guarded-off lanes of
the predicate, whole warps that exit before the barrier, and several blocks per SM in the timed run.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.errors import BarrierError, DeadlockError, PTXSyntaxError

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"

# out[block * 3 * ROUNDS + 3 * r + {0, 1, 2}] = count, and, or of (in[i] > r) over the block, r = 0..ROUNDS-1
ROUNDS = 4
KERNEL = HEADER + f"""
.visible .entry votes(.param .u64 p_in, .param .u64 p_out, .param .u32 p_n)
{{
  .reg .pred %p<8>; .reg .b32 %r<24>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p_in];
  ld.param.u64 %rd2, [p_out];
  ld.param.u32 %r1, [p_n];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mad.lo.s32 %r5, %r3, %r4, %r2;
  setp.lt.u32 %p1, %r5, %r1;
  mov.u32 %r6, -1;
  @!%p1 bra $SKIP;
  mul.wide.u32 %rd3, %r5, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.s32 %r6, [%rd4];
$SKIP:
  mov.u32 %r7, 0;
  mul.lo.s32 %r8, %r3, {3 * ROUNDS};
$LOOP:
  setp.gt.s32 %p2, %r6, %r7;
  bar.red.popc.u32 %r9, 0, %p2;
  bar.red.and.pred %p3, 0, %p2;
  bar.red.or.pred %p4, 0, !%p2;
  setp.ne.u32 %p5, %r2, 0;
  @%p5 bra $NEXT;
  mul.lo.s32 %r10, %r7, 3;
  add.s32 %r11, %r8, %r10;
  mul.wide.u32 %rd5, %r11, 4;
  add.s64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6], %r9;
  selp.u32 %r12, 1, 0, %p3;
  st.global.u32 [%rd6+4], %r12;
  selp.u32 %r13, 1, 0, %p4;
  st.global.u32 [%rd6+8], %r13;
$NEXT:
  add.s32 %r7, %r7, 1;
  setp.lt.s32 %p6, %r7, {ROUNDS};
  @%p6 bra $LOOP;
  ret;
}}
"""


def expected_votes(values: np.ndarray, n_blocks: int, block: int) -> np.ndarray:
    padded = np.full(n_blocks * block, -1, np.int64)
    padded[:values.size] = values
    per_block = padded.reshape(n_blocks, block)
    out = np.zeros((n_blocks, ROUNDS, 3), np.int64)
    for r in range(ROUNDS):
        p = per_block > r
        out[:, r] = np.stack([p.sum(axis=1), p.all(axis=1), (~p).any(axis=1)], axis=1)
    return out.ravel()


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
@pytest.mark.parametrize(("n", "block"), [(200, 96), (1000, 128), (64, 64)])
def test_bar_red_counts_and_or_over_the_block(n, block, timing):
    rng = np.random.default_rng(n)
    values = rng.integers(0, 5, n).astype(np.int32)
    values[:block] = 4                            # block 0: every predicate but the last round's is all-true
    gpu = gpusim.GPU("teaching")
    kernel = gpu.load_ptx(KERNEL)["votes"]
    n_blocks = (n + block - 1) // block
    out = gpu.zeros(n_blocks * 3 * ROUNDS, np.uint32)
    gpu.launch(kernel, n_blocks, block, [gpu.to_device(values), out, np.uint32(n)], timing=timing)
    expected = expected_votes(values, n_blocks, block)
    assert (out.get() == expected).all(), f"got {out.get().tolist()}, expected {expected.tolist()}"


PARTIAL_BLOCK = HEADER + """
.visible .entry k(.param .u64 p_out)
{
  .reg .pred %p<4>; .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_out];
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, 64;
  @%p1 bra $DONE;
  and.b32 %r2, %r1, 1;
  setp.eq.u32 %p2, %r2, 1;
  bar.red.popc.u32 %r3, 0, %p2;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
$DONE:
  ret;
}
"""


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
def test_warps_that_exit_do_not_take_part(timing):
    """Warps 2-3 of 4 exit first: the barrier completes with warps 0-1, whose 32 odd threads are counted
    (Volta and later: gpusim's default on the teaching config's cc 7.0, with a warning)."""
    gpu = gpusim.GPU("teaching")
    out = gpu.zeros(64, np.uint32)
    run = gpu.launch(gpu.load_ptx(PARTIAL_BLOCK)["k"], 1, 128, [out], timing=timing)
    assert (out.get() == 32).all()
    assert len(run.warnings) == 1 and "bar.red" in run.warnings[0]


def test_synccheck_names_the_bar_red_that_exited_threads_skip():
    gpu = gpusim.GPU("teaching", sanitize="synccheck")
    with pytest.raises(BarrierError, match=r"<ptx>:14 `bar.red.popc.u32 %r3, 0, %p2;`.*threads 64-95"):
        gpu.launch(gpu.load_ptx(PARTIAL_BLOCK)["k"], 1, 128, [gpu.zeros(64, np.uint32)], timing=False)


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
def test_bar_red_with_a_missing_warp_deadlocks_clearly(timing):
    """Warps that wait on another barrier id never reach the bar.red: the report names the bar.red's line."""
    text = PARTIAL_BLOCK.replace("@%p1 bra $DONE;", "@%p1 bar.sync 1;")
    gpu = gpusim.GPU("teaching")
    with pytest.raises(DeadlockError, match=r"<ptx>:14"):
        gpu.launch(gpu.load_ptx(text)["k"], 1, 128, [gpu.zeros(128, np.uint32)], timing=timing)


@pytest.mark.parametrize(("line", "message"), [
    ("bar.red.popc.pred %p3, 0, %p2;", "needs the type .u32"),
    ("bar.red.and.u32 %r3, 0, %p2;", "needs the type .pred"),
    ("bar.red.popc.u32 %r3, 0;", "takes 3 or 4 operands"),
    ("bar.red.popc.u32 %r3, 16, %p2;", "barrier id 16 is out of range"),
])
def test_malformed_bar_red_is_a_clear_error(line, message):
    text = PARTIAL_BLOCK.replace("bar.red.popc.u32 %r3, 0, %p2;", line)
    with pytest.raises(PTXSyntaxError, match=message):
        gpusim.GPU("teaching").load_ptx(text)
