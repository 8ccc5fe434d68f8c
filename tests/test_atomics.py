"""Atomics under contention, end to end: atom and red on .global and .shared for add/min/max/inc/dec/exch/
cas/and/or/xor on u32/s32/u64/f32/f64 with every thread of the grid hitting one address, a CAS loop, and the
nvcc-compiled histograms — checked against numpy / Python folds (order-independent results, or invariants
that hold for any interleaving), under the functional and the timed loop."""

from functools import reduce
from pathlib import Path

import numpy as np
import pytest

import gpusim

TIMING = pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
DATA = Path(__file__).parent / "data"
RNG = np.random.default_rng(29)
DTYPES = {"u32": np.uint32, "s32": np.int32, "u64": np.uint64, "s64": np.int64, "f32": np.float32,
          "f64": np.float64, "b32": np.uint32, "b64": np.uint64}
REG = {4: "%r", 8: "%rd"}


@pytest.fixture(scope="module")
def gpu():
    return gpusim.GPU("teaching")


def atomic_kernel(op: str, ty: str, space: str, returns: bool) -> str:
    """Every thread applies ``op`` with its value to one word (global: target[0]; shared: a shared word
    initialised from target[0] and copied back by thread 0 after a barrier); olds go to old[tid]."""
    size = np.dtype(DTYPES[ty]).itemsize
    r = REG[size]
    extra = f", {r}8" if op == "cas" else ""
    if returns:
        apply = f"atom.{space}.{op}.{ty} {r}5, [%rd9], {r}4{extra};"
    else:
        apply = f"red.{space}.{op}.{ty} [%rd9], {r}4{extra};"
    if space == "shared":
        setup = f"""
  mov.u64 %rd9, word;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $L_wait;
  ld.global.{ty} {r}6, [%rd2]; st.shared.{ty} [%rd9], {r}6;
$L_wait:
  bar.sync 0;"""
        finish = f"""
  bar.sync 0;
  @%p1 bra $L_done;
  ld.shared.{ty} {r}6, [%rd9]; st.global.{ty} [%rd2], {r}6;
$L_done:"""
    else:
        setup, finish = "\n  mov.u64 %rd9, %rd2;", ""
    return HEADER + f"""
.visible .entry k(.param .u64 p_target, .param .u64 p_values, .param .u64 p_old, .param .u64 p_swap)
{{
  .shared .align 8 .b8 word[8];
  .reg .pred %p<4>; .reg .b32 %r<12>; .reg .b64 %rd<16>;
  ld.param.u64 %rd2, [p_target]; ld.param.u64 %rd3, [p_values]; ld.param.u64 %rd10, [p_old];
  ld.param.u64 %rd11, [p_swap];
  cvta.to.global.u64 %rd2, %rd2; cvta.to.global.u64 %rd3, %rd3; cvta.to.global.u64 %rd10, %rd10;
  cvta.to.global.u64 %rd11, %rd11;
  mov.u32 %r1, %tid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %ctaid.x; mad.lo.u32 %r9, %r3, %r2, %r1;
  mul.wide.u32 %rd12, %r9, {size};
  add.s64 %rd13, %rd3, %rd12; ld.global.{ty} {r}4, [%rd13];
  add.s64 %rd14, %rd11, %rd12; ld.global.{ty} {r}8, [%rd14];{setup}
  {apply}
  add.s64 %rd15, %rd10, %rd12; {"st.global." + ty + " [%rd15], " + r + "5;" if returns else ""}{finish}
  ret;
}}
"""


def run_atomic(gpu, op, ty, space, returns, initial, values, swaps=None, timing=False, blocks=1):
    dtype = DTYPES[ty]
    target = gpu.to_device(np.array([initial], dtype=dtype))
    old = gpu.zeros(values.size, dtype)
    swaps = np.zeros_like(values) if swaps is None else swaps
    kernel = gpu.load_ptx(atomic_kernel(op, ty, space, returns))["k"]
    gpu.launch(kernel, blocks, values.size // blocks,
               [target, gpu.to_device(values.astype(dtype)), old, gpu.to_device(swaps.astype(dtype))],
               timing=timing)
    return target.get()[0], old.get()


def wrap(value: int, ty: str) -> int:
    bits = 8 * np.dtype(DTYPES[ty]).itemsize
    value &= (1 << bits) - 1
    return value - (1 << bits) if ty.startswith("s") and value >> (bits - 1) else value


INT_FOLDS = {
    "add": lambda x, y: x + y, "min": min, "max": max,
    "and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y,
}
INT_CASES = [(op, ty, space, returns) for op in INT_FOLDS for ty in ("u32", "s32", "u64")
             for space in ("global", "shared") for returns in (True, False)
             if not (op in ("and", "or", "xor") and ty == "s32")]


@TIMING
@pytest.mark.parametrize("op,ty,space,returns", INT_CASES)
def test_integer_atomics_under_contention(gpu, timing, op, ty, space, returns):
    bits = 8 * np.dtype(DTYPES[ty]).itemsize
    if ty.startswith("s"):
        values = RNG.integers(-(1 << 30), 1 << 30, 64)
    else:
        values = RNG.integers(0, 1 << (bits - 1), 64, dtype=np.uint64) * 2 + RNG.integers(0, 2, 64,
                                                                                          dtype=np.uint64)
    initial = wrap(0x7000_0123 if op != "and" else -1, ty)
    values = values.astype(DTYPES[ty])
    final, olds = run_atomic(gpu, op, ty, space, returns, initial, values, timing=timing, blocks=1 if
                             space == "shared" else 2)
    python_values = [int(v) for v in values]
    expect = reduce(INT_FOLDS[op], python_values, int(initial))
    assert int(final) == wrap(expect, ty), (op, ty, space)
    if returns and op == "add":
        # each old is the running sum before that thread's add: all distinct, each one an initial plus a
        # sum of a subset of the other values, and the final minus each thread's value is one of them
        assert len(set(int(x) for x in olds)) == values.size
        olds_set = {int(x) for x in olds}
        assert wrap(int(initial), ty) in olds_set


@TIMING
@pytest.mark.parametrize("space", ["global", "shared"])
def test_every_thread_adds_one_returns_a_permutation(gpu, timing, space):
    n = 128
    final, olds = run_atomic(gpu, "add", "u32", space, True, 0, np.ones(n, np.uint32), timing=timing,
                             blocks=1)
    assert final == n
    assert sorted(olds.tolist()) == list(range(n))


@TIMING
@pytest.mark.parametrize("ty", ["f32", "f64"])
@pytest.mark.parametrize("space", ["global", "shared"])
def test_float_atomic_add_exact_sums(gpu, timing, ty, space):
    values = (RNG.integers(-100, 100, 64) * 0.25).astype(DTYPES[ty])   # every partial sum is exact
    final, olds = run_atomic(gpu, "add", ty, space, True, 1.5, values, timing=timing)
    assert final == 1.5 + float(np.sum(values.astype(np.float64)))
    assert 1.5 in olds.tolist()


@TIMING
@pytest.mark.parametrize("op", ["min", "max"])
def test_float_atomic_min_max(gpu, timing, op):
    values = RNG.standard_normal(64).astype(np.float32)
    final, _ = run_atomic(gpu, op, "f32", "global", True, 0.0, values, timing=timing)
    assert final == (min if op == "min" else max)([0.0, *values.tolist()])


@TIMING
@pytest.mark.parametrize("op", ["inc", "dec"])
@pytest.mark.parametrize("space", ["global", "shared"])
def test_inc_dec_wrap_at_the_bound(gpu, timing, op, space):
    bound, n, initial = 9, 64, 4
    final, olds = run_atomic(gpu, op, "u32", space, True, initial, np.full(n, bound, np.uint32),
                             timing=timing)
    value = initial
    for _ in range(n):       # every thread uses the same bound, so the order does not matter
        if op == "inc":
            value = 0 if value >= bound else value + 1
        else:
            value = bound if value == 0 or value > bound else value - 1
    assert final == value
    counts = np.bincount(olds, minlength=bound + 1)
    assert counts.sum() == n and set(np.nonzero(counts)[0]) <= set(range(bound + 1))


@TIMING
@pytest.mark.parametrize("ty", ["u32", "u64", "f32"])
def test_exch_chains_the_values(gpu, timing, ty):
    values = (np.arange(64) + 100).astype(DTYPES[ty])
    final, olds = run_atomic(gpu, "exch", ty, "global", True, 7, values, timing=timing)
    # whatever the order: the olds plus the final value are exactly the initial value plus every value
    assert sorted([*olds.tolist(), final.item()]) == sorted([7, *values.tolist()])


@TIMING
@pytest.mark.parametrize("ty", ["u32", "u64"])
@pytest.mark.parametrize("space", ["global", "shared"])
def test_cas_succeeds_exactly_once_per_expected_value(gpu, timing, ty, space):
    n = 64
    compare = np.zeros(n, DTYPES[ty])               # every thread expects 0 ...
    swaps = (np.arange(n) + 1).astype(DTYPES[ty])   # ... and would write its own id + 1
    final, olds = run_atomic(gpu, "cas", ty, space, True, 0, compare, swaps, timing=timing)
    winners = [i for i in range(n) if olds[i] == 0]
    assert len(winners) == 1
    assert final == swaps[winners[0]]
    assert all(olds[i] == final for i in range(n) if i not in winners)


CAS_LOOP_PTX = HEADER + """
.visible .entry k(.param .u64 p_counter)
{
  .reg .pred %p<3>; .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_counter]; cvta.to.global.u64 %rd1, %rd1;
  ld.global.u32 %r1, [%rd1];
$L_retry:
  add.u32 %r2, %r1, 3;
  atom.global.cas.b32 %r3, [%rd1], %r1, %r2;
  setp.ne.u32 %p1, %r3, %r1;
  mov.u32 %r1, %r3;
  @%p1 bra $L_retry;
  ret;
}
"""


@TIMING
def test_cas_loop_increment_is_correct_under_contention(gpu, timing):
    counter = gpu.zeros(1, np.uint32)
    gpu.launch(gpu.load_ptx(CAS_LOOP_PTX)["k"], 4, 96, [counter], timing=timing)
    assert counter.get()[0] == 3 * 4 * 96


@TIMING
def test_nvcc_histogram_fixture(gpu, timing):
    """tests/data/ptx/atomics.cu: shared histogram, float add, int min, CAS-loop double max, inc, exch."""
    module = gpu.load(DATA / "ptx" / "atomics.ptx")
    kernel = next(iter(module))
    n, blocks = 1000, 3
    data = RNG.integers(0, 256, n).astype(np.uint8)
    bins, fsum = gpu.zeros(256, np.uint32), gpu.zeros(1, np.float32)
    dmax, imin = gpu.zeros(1, np.float64), gpu.zeros(1, np.int32)
    counter = gpu.zeros(2, np.uint32)
    gpu.launch(kernel, blocks, 64, [gpu.to_device(data), np.int32(n), bins, fsum, dmax, imin, counter],
               timing=timing)
    np.testing.assert_array_equal(bins.get(), np.bincount(data, minlength=256))
    assert fsum.get()[0] == np.float32(float(data.astype(np.int64).sum()) * 0.5)   # exact in f32
    assert dmax.get()[0] == float(data.max()) * 1.25
    assert imin.get()[0] == -int(data.max())
    assert counter.get()[0] == blocks
    assert counter.get()[1] in range(blocks)
