"""Warp-wide instructions end to end: shfl.sync in every mode with clamp/segment operands and the predicate
output, vote.sync (all/any/uni/ballot), activemask, match.sync and redux.sync — hand-written PTX and the
nvcc-compiled tests/data/ptx/warp_ops.ptx, checked against CUDA's documented lane arithmetic written in
Python, under the functional and the timed loop."""

from pathlib import Path

import numpy as np
import pytest

import gpusim

TIMING = pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
RNG = np.random.default_rng(23)


@pytest.fixture(scope="module")
def gpu():
    return gpusim.GPU("teaching")


def run_lanes(gpu, body: str, values: np.ndarray, timing: bool, outputs: int = 4) -> np.ndarray:
    """Run ``body`` with ``%r1`` = values[tid] (u32); the body stores u32 results at [%rd3 + 4*k]."""
    n = values.size
    text = HEADER + """
.visible .entry k(.param .u64 p_out, .param .u64 p_in)
{
  .reg .pred %p<8>; .reg .b32 %r<40>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p_out]; ld.param.u64 %rd2, [p_in];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r30, %tid.x; mul.wide.u32 %rd4, %r30, 4; add.s64 %rd5, %rd2, %rd4; ld.global.u32 %r1, [%rd5];
  mul.wide.u32 %rd6, %r30, """ + str(4 * outputs) + """; add.s64 %rd3, %rd1, %rd6;
  mov.u32 %r31, %laneid;
""" + body + "\n  ret;\n}\n"
    kernel = gpu.load_ptx(text)["k"]
    out = gpu.to_device(np.full((n, outputs), 0xEEEEEEEE, np.uint32))
    gpu.launch(kernel, 1, n, [out, gpu.to_device(values.astype(np.uint32))], timing=timing)
    return out.get()


def shfl_source(mode: str, lane: int, b: int, width: int) -> tuple[int, bool]:
    """(source lane, in range) of CUDA's __shfl_*_sync(mask, v, b, width)."""
    base = lane // width * width
    if mode == "up":
        ok = lane - base >= b
        return (lane - b if ok else lane), ok
    if mode == "down":
        ok = lane - base + b < width
        return (lane + b if ok else lane), ok
    if mode == "bfly":
        j = lane ^ b
        ok = j < base + width
        return (j if ok else lane), ok
    return base + b % width, True


@TIMING
@pytest.mark.parametrize("mode", ["up", "down", "bfly", "idx"])
@pytest.mark.parametrize("width", [32, 8, 4])
def test_shfl_modes_with_segments_and_predicate(gpu, timing, mode, width):
    values = RNG.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    c_operand = ((32 - width) << 8) | (0 if mode == "up" else 0x1F)
    deltas = [1, 3, 5] if mode != "idx" else [2, 7, 13]
    body = ""
    for k, delta in enumerate(deltas):
        body += (f"shfl.sync.{mode}.b32 %r{10 + k}|%p{k + 1}, %r1, {delta}, {c_operand}, 0xffffffff;\n"
                 f"selp.u32 %r{20 + k}, 1, 0, %p{k + 1}; shl.b32 %r{20 + k}, %r{20 + k}, {k};\n")
    body += ("or.b32 %r25, %r20, %r21; or.b32 %r25, %r25, %r22;\n"
             "st.global.v4.u32 [%rd3], {%r10, %r11, %r12, %r25};")
    out = run_lanes(gpu, body, values, timing)
    for lane in range(32):
        flags = 0
        for k, delta in enumerate(deltas):
            source, ok = shfl_source(mode, lane, delta, width)
            assert out[lane, k] == values[source], (mode, width, lane, delta)
            flags |= int(ok) << k
        assert out[lane, 3] == flags, (mode, width, lane)


@TIMING
def test_shfl_with_register_lane_operand(gpu, timing):
    values = np.arange(32, dtype=np.uint32) * 11
    out = run_lanes(gpu, """
      mul.lo.u32 %r2, %r31, 7; and.b32 %r2, %r2, 31;
      shfl.sync.idx.b32 %r3, %r1, %r2, 31, 0xffffffff;
      st.global.u32 [%rd3], %r3;""", values, timing, outputs=1)
    np.testing.assert_array_equal(out[:, 0], values[(np.arange(32) * 7) % 32])


@TIMING
def test_vote_all_any_uni_ballot_and_activemask_under_divergence(gpu, timing):
    values = RNG.integers(0, 100, 64).astype(np.uint32)
    values[32:] = 10                      # warp 1: uniform values
    out = run_lanes(gpu, """
      setp.gt.u32 %p1, %r1, 40;
      vote.sync.all.pred %p2, %p1, 0xffffffff; selp.u32 %r2, 1, 0, %p2;
      vote.sync.any.pred %p3, %p1, 0xffffffff; selp.u32 %r3, 2, 0, %p3;
      vote.sync.uni.pred %p4, %p1, 0xffffffff; selp.u32 %r4, 4, 0, %p4;
      or.b32 %r2, %r2, %r3; or.b32 %r2, %r2, %r4;
      vote.sync.ballot.b32 %r5, %p1, 0xffffffff;
      // only the lanes with an odd value take this path: activemask and a ballot over them
      and.b32 %r6, %r1, 1; setp.eq.u32 %p5, %r6, 0;
      mov.u32 %r7, 0; mov.u32 %r8, 0;
      @%p5 bra $L_skip;
      activemask.b32 %r7;
      vote.sync.ballot.b32 %r8, %p1, %r7;
    $L_skip:
      st.global.v4.u32 [%rd3], {%r2, %r5, %r7, %r8};""", values, timing)
    for warp in range(2):
        lanes = values[warp * 32:(warp + 1) * 32]
        predicate = lanes > 40
        ballot = sum(1 << i for i in range(32) if predicate[i])
        odd = sum(1 << i for i in range(32) if lanes[i] & 1)
        uniform = predicate.all() or not predicate.any()
        flags = int(predicate.all()) | int(predicate.any()) << 1 | int(uniform) << 2
        for i in range(32):
            row = out[warp * 32 + i]
            assert row[0] == flags and row[1] == ballot
            if lanes[i] & 1:
                assert row[2] == odd and row[3] == ballot & odd
            else:
                assert row[2] == 0 and row[3] == 0


@TIMING
def test_match_any_and_all(gpu, timing):
    values = RNG.integers(0, 4, 64).astype(np.uint32)
    values[32:] = 9                       # warp 1: all equal
    out = run_lanes(gpu, """
      match.any.sync.b32 %r2, %r1, 0xffffffff;
      match.all.sync.b32 %r3|%p1, %r1, 0xffffffff; selp.u32 %r4, 1, 0, %p1;
      st.global.v4.u32 [%rd3], {%r2, %r3, %r4, %r1};""", values, timing)
    for warp in range(2):
        lanes = values[warp * 32:(warp + 1) * 32]
        all_equal = bool(np.all(lanes == lanes[0]))
        for i in range(32):
            same = sum(1 << j for j in range(32) if lanes[j] == lanes[i])
            row = out[warp * 32 + i]
            assert row[0] == same
            assert row[1] == (0xFFFFFFFF if all_equal else 0) and row[2] == int(all_equal)


@TIMING
def test_redux_sync(gpu, timing):
    values = RNG.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    out = run_lanes(gpu, """
      redux.sync.add.u32 %r2, %r1, 0xffffffff; redux.sync.min.u32 %r3, %r1, 0xffffffff;
      redux.sync.max.s32 %r4, %r1, 0xffffffff; redux.sync.and.b32 %r5, %r1, 0xffffffff;
      redux.sync.or.b32 %r6, %r1, 0xffffffff; redux.sync.xor.b32 %r7, %r1, 0xffffffff;
      redux.sync.min.s32 %r8, %r1, 0xffffffff;
      st.global.v4.u32 [%rd3], {%r2, %r3, %r4, %r5}; st.global.v2.u32 [%rd3+16], {%r6, %r7};
      st.global.u32 [%rd3+24], %r8;""", values, timing, outputs=8)
    for warp in range(2):
        lanes = [int(v) for v in values[warp * 32:(warp + 1) * 32]]
        signed = [v - (1 << 32) if v >> 31 else v for v in lanes]
        and_all, or_all, xor_all = 0xFFFFFFFF, 0, 0
        for v in lanes:
            and_all &= v
            or_all |= v
            xor_all ^= v
        expect = [sum(lanes) & 0xFFFFFFFF, min(lanes), max(signed) & 0xFFFFFFFF, and_all, or_all, xor_all,
                  min(signed) & 0xFFFFFFFF]
        for i in range(32):
            assert out[warp * 32 + i, :7].tolist() == expect


@TIMING
def test_nvcc_warp_ops_fixture(gpu, timing):
    """tests/data/ptx/warp_ops.cu: shuffles, votes, ballot, match, reduce, brev and byte_perm together."""
    kernel = gpu.load(Path(__file__).parent / "data" / "ptx" / "warp_ops.ptx")["_Z8warp_opsPKiPiPy"]
    blocks, threads = 4, 32          # one warp per block: lane 0's per-block row is written once
    values = RNG.integers(-1000, 1000, blocks * threads).astype(np.int32)
    values[:32] = np.abs(values[:32]) + 1          # a warp where all values are positive
    out = gpu.zeros(2048, np.int32)
    times = gpu.zeros(blocks * threads, np.uint64)
    gpu.launch(kernel, blocks, threads, [gpu.to_device(values), out, times], timing=timing)
    got = out.get()

    def u32(x):
        return int(x) & 0xFFFFFFFF

    def clz(x):
        return 32 - u32(x).bit_length()

    def ffs(x):
        x = u32(x)
        return (x & -x).bit_length()
    for block in range(blocks):
        first = block * threads
        lanes = [int(v) for v in values[first:first + 32]]
        for lane in range(32):
            uv = u32(lanes[lane])
            assert u32(got[first + lane + 1024]) == int(f"{uv:032b}"[::-1], 2) ^ uv, (block, lane)
        x0 = lanes[1] + lanes[0] + lanes[0]         # xor 1, up 2 (lane 0 keeps its own), idx 0
        ballot = sum(1 << i for i in range(32) if lanes[i] > 0)
        match = sum(1 << j for j in range(32) if lanes[j] == lanes[0])
        expect = x0 + bin(ballot).count("1") + clz(lanes[0]) + ffs(lanes[0]) + match + sum(lanes)
        assert u32(got[block * 4]) == u32(expect), block
        assert got[block * 4 + 1] == int(all(v > 0 for v in lanes)) + int(any(v < 0 for v in lanes))
        assert got[block * 4 + 2] == -1             # __activemask() with all 32 lanes
