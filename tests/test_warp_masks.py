"""Member masks of the warp-wide .sync instructions, per lane as on sm_70+: partial masks after divergence,
cooperative-groups-style labeled partitions (every lane executes one instruction with its own group's
mask), exited lanes (left out, as the ISA waits only for non-exited members), and the masks the ISA leaves
undefined (refused with WarpSyncError naming the PTX line, as compute-sanitizer's synccheck). Expected
values come from the PTX ISA's definitions written in Python; each kernel runs functional and timed."""

import numpy as np
import pytest

import gpusim

TIMING = pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
PROLOGUE = """
.visible .entry k(.param .u64 p_out, .param .u64 p_in)
{
  .reg .pred %p<8>; .reg .b32 %r<40>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p_out]; ld.param.u64 %rd2, [p_in];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r30, %tid.x; mul.wide.u32 %rd4, %r30, 4; add.s64 %rd5, %rd2, %rd4; ld.global.u32 %r1, [%rd5];
  mul.wide.u32 %rd6, %r30, 32; add.s64 %rd3, %rd1, %rd6;
  mov.u32 %r31, %laneid;
"""
RNG = np.random.default_rng(12)
SENTINEL = 0xEEEEEEEE


@pytest.fixture(scope="module")
def gpu():
    return gpusim.GPU("teaching")


def kernel_text(body: str) -> str:
    return HEADER + PROLOGUE + body + "\n  ret;\n}\n"


def run(gpu, body: str, values: np.ndarray, timing: bool) -> np.ndarray:
    """``%r1`` = values[tid]; the body stores up to 8 u32 results at [%rd3 + 4k]."""
    kernel = gpu.load_ptx(kernel_text(body))["k"]
    out = gpu.to_device(np.full((values.size, 8), SENTINEL, np.uint32))
    gpu.launch(kernel, 1, values.size, [out, gpu.to_device(values.astype(np.uint32))], timing=timing)
    return out.get()


def group_reference(values, groups):
    """Per lane: (sum, min, max, and, or, xor, ballot of odd values, match.any mask) over its group."""
    rows = []
    for lane in range(len(values)):
        g = [j for j in range(len(values)) if (groups[lane] >> j) & 1]
        vals = [int(values[j]) for j in g]
        a, o, x = 0xFFFFFFFF, 0, 0
        for v in vals:
            a, o, x = a & v, o | v, x ^ v
        ballot = sum(1 << j for j in g if values[j] & 1)
        same = sum(1 << j for j in g if values[j] == values[lane])
        rows.append([sum(vals) & 0xFFFFFFFF, min(vals), max(vals), a, o, x, ballot, same])
    return np.array(rows, dtype=np.uint64)


GROUP_OPS = """
  redux.sync.add.u32 %r10, %r1, %r2; redux.sync.min.u32 %r11, %r1, %r2; redux.sync.max.u32 %r12, %r1, %r2;
  redux.sync.and.b32 %r13, %r1, %r2; redux.sync.or.b32 %r14, %r1, %r2; redux.sync.xor.b32 %r15, %r1, %r2;
  and.b32 %r20, %r1, 1; setp.ne.u32 %p2, %r20, 0;
  vote.sync.ballot.b32 %r16, %p2, %r2;
  match.any.sync.b32 %r17, %r1, %r2;
  st.global.v4.u32 [%rd3], {%r10, %r11, %r12, %r13}; st.global.v4.u32 [%rd3+16], {%r14, %r15, %r16, %r17};
"""


@TIMING
def test_reduce_add_with_half_mask_after_divergence(gpu, timing):
    """__reduce_add_sync(0x55555555, 1) on the even lanes gives 16 (the member mask's popcount)."""
    body = """
      and.b32 %r3, %r31, 1; setp.ne.u32 %p1, %r3, 0;
      @%p1 bra $L_done;
      redux.sync.add.u32 %r4, 1, 0x55555555;
      vote.sync.ballot.b32 %r5, 1, 0x55555555;
      vote.sync.all.pred %p3, 1, 0x55555555; selp.u32 %r6, 1, 0, %p3;
      st.global.v4.u32 [%rd3], {%r4, %r5, %r6, %r31};
    $L_done:"""
    out = run(gpu, body, np.zeros(32, np.uint32), timing)
    for lane in range(32):
        expect = [16, 0x55555555, 1, lane] if lane % 2 == 0 else [SENTINEL] * 4
        assert out[lane, :4].tolist() == expect, lane


@TIMING
def test_labeled_partition_reduces_each_group(gpu, timing):
    """cooperative_groups::labeled_partition(warp, label) + reduce: all lanes execute one redux.sync/
    vote/match, each with its label group's mask (from match.any), and each group gets its own result."""
    values = RNG.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    labels = RNG.integers(0, 3, 64).astype(np.uint32)
    values[40:] = values[40]                          # warp 1: equal values within a group too
    packed = (values & 0xFFFFFFFC) | labels           # the kernel takes label = value & 3
    body = "and.b32 %r3, %r1, 3; match.any.sync.b32 %r2, %r3, 0xffffffff;" + GROUP_OPS
    out = run(gpu, body, packed, timing)
    for warp in range(2):
        lab = labels[warp * 32:(warp + 1) * 32]
        groups = [sum(1 << j for j in range(32) if lab[j] == lab[i]) for i in range(32)]
        expect = group_reference(packed[warp * 32:(warp + 1) * 32], groups)
        np.testing.assert_array_equal(out[warp * 32:(warp + 1) * 32].astype(np.uint64), expect)


@TIMING
def test_partial_mask_from_activemask_after_divergence(gpu, timing):
    """Lanes with an odd value diverge; activemask gives their mask and every op acts over them only."""
    values = RNG.integers(0, 1000, 32).astype(np.uint32)
    body = """
      and.b32 %r3, %r1, 1; setp.eq.u32 %p1, %r3, 0;
      @%p1 bra $L_done;
      activemask.b32 %r2;""" + GROUP_OPS + """
    $L_done:"""
    out = run(gpu, body, values, timing)
    odd = sum(1 << j for j in range(32) if values[j] & 1)
    expect = group_reference(values, [odd] * 32)
    for lane in range(32):
        if values[lane] & 1:
            assert out[lane].tolist() == expect[lane].tolist(), lane
        else:
            assert out[lane].tolist() == [SENTINEL] * 8, lane


@TIMING
@pytest.mark.parametrize("mode", ["up", "down", "bfly", "idx"])
def test_shfl_within_labeled_groups(gpu, timing, mode):
    """shfl.sync with each lane's group mask: a source lane outside the group returns the lane's own value."""
    values = RNG.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    labels = np.arange(32) // 8 % 2                    # lanes 0-7, 16-23 label 0; 8-15, 24-31 label 1
    c_operand = 0 if mode == "up" else 0x1F
    body = f"""
      shr.u32 %r3, %r31, 3; and.b32 %r3, %r3, 1; match.any.sync.b32 %r2, %r3, 0xffffffff;
      shfl.sync.{mode}.b32 %r10|%p1, %r1, 9, {c_operand}, %r2; selp.u32 %r11, 1, 0, %p1;
      st.global.v2.u32 [%rd3], {{%r10, %r11}};"""
    out = run(gpu, body, values, timing)
    for lane in range(32):
        j = {"up": lane - 9, "down": lane + 9, "bfly": lane ^ 9, "idx": 9}[mode]
        ok = j >= 0 if mode == "up" else j <= 31
        source = j if ok and labels[j] == labels[lane] else lane
        assert out[lane, :2].tolist() == [values[source], int(ok)], lane


@TIMING
def test_exited_and_missing_lanes_are_not_waited_for(gpu, timing):
    """A 20-thread block whose lanes 0-3 exit early: full-mask ops act over the 16 lanes still running."""
    values = RNG.integers(0, 1 << 16, 20).astype(np.uint32)
    body = "setp.lt.u32 %p1, %r31, 4; @%p1 exit; mov.u32 %r2, 0xffffffff;" + GROUP_OPS
    out = run(gpu, body, values, timing)
    alive = sum(1 << j for j in range(4, 20))
    padded = np.concatenate([values, np.zeros(12, np.uint32)])
    expect = group_reference(padded, [alive] * 32)
    for lane in range(20):
        expect_row = [SENTINEL] * 8 if lane < 4 else expect[lane].tolist()
        assert out[lane].tolist() == expect_row, lane


BAD_MASKS = {
    # shfl.sync with a full mask executed by half a warp (the other half diverged, not exited)
    "half_warp_shfl": ("setp.lt.u32 %p1, %r31, 16; @%p1 bra $L_done;",
                       "shfl.sync.down.b32 %r5, %r1, 1, 31, 0xffffffff;", "names lane 0"),
    # a member predicated off
    "predicated_off_member": ("setp.ne.u32 %p1, %r31, 5;",
                              "@%p1 redux.sync.add.u32 %r5, %r1, 0xffffffff;", "names lane 5"),
    # a lane outside its own member mask
    "not_a_member": ("", "vote.sync.ballot.b32 %r5, 1, 0x55555555;", "does not include lane 1"),
    # two members naming different masks
    "mismatched_masks": ("setp.eq.u32 %p1, %r31, 0; selp.u32 %r6, 3, 0xffffffff, %p1;",
                         "match.any.sync.b32 %r5, %r1, %r6;", "different masks"),
}


@TIMING
@pytest.mark.parametrize("case", sorted(BAD_MASKS))
def test_undefined_member_masks_are_refused_with_the_line(gpu, timing, case):
    before, instruction, why = BAD_MASKS[case]
    body = f"  {before}\n  {instruction}\n  st.global.u32 [%rd3], %r5;\n$L_done:"
    text = kernel_text(body)
    line = text.splitlines().index(f"  {instruction}") + 1
    with pytest.raises(gpusim.WarpSyncError) as info:
        run(gpu, body, np.zeros(32, np.uint32), timing)
    message = str(info.value)
    assert f":{line} `{instruction.split(';')[0]}" in message, message
    assert why in message and "synccheck" in message
    assert info.value.line == line
