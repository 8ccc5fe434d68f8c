"""Every error path a user can hit, with its message: malformed and unsupported PTX (file:line:column),
illegal addresses (kernel, block, thread, PTX line, address; memory as it was before the faulting
instruction), barriers that can never complete, and kernels that run past the simulation limit — under
the functional and the timed loop where a kernel runs."""

import re
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import (
    BarrierError,
    CallStackOverflowError,
    DeadlockError,
    GpusimError,
    IllegalAddressError,
    PTXSyntaxError,
    SimulationLimitError,
    UnsupportedPTXError,
)

TIMING = pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


@pytest.fixture(scope="module")
def gpu():
    return gpusim.GPU("teaching")


def entry(body: str, params: str = ".param .u64 p_a, .param .u32 p_n") -> str:
    return HEADER + f""".visible .entry k({params})
{{
  .reg .pred %p<4>; .reg .b32 %r<16>; .reg .b64 %rd<16>; .reg .f32 %f<4>;
{body}
  ret;
}}
"""


# ---------------------------------------------------------------- front end
@pytest.mark.parametrize("line_text,message,unsupported", [
    ("  frobnicate.u32 %r1, %r2;", "instruction 'frobnicate' is not supported", True),
    ("  add.u32 %r1, %r99, 1;", "register '%r99' is not declared", False),
    ("  add.u32 %r1, %r2;", "'add' takes 3 operands", False),
    ("  bra $L_nowhere;", "$L_nowhere", False),
    ("  add.cc.u32 %r1, %r2, %r3;", "carry-chain", True),
    ("  mov.u32 %r1, %foo;", "", False),
    ("  ld.global.v8.u32 {%r1, %r2}, [%rd1];", "", False),
    ("  add.u32 %r1, %r2, 1", "", False),
    ("  bar.red.xor.pred %p2, 0, %p1;", "reduction", False),
])
def test_bad_ptx_names_file_line_and_column(gpu, line_text, message, unsupported):
    text = entry(line_text)
    with pytest.raises(PTXSyntaxError) as info:
        gpu.load_ptx(text, name="bad.ptx")
    error = info.value
    expected_line = text.splitlines().index(line_text) + 1
    assert str(error).startswith(f"bad.ptx:{error.line}:{error.column}:")
    assert error.file == "bad.ptx" and error.line in (expected_line, expected_line + 1)   # a missing ';'
    assert error.column >= 1                                                             # shows next line
    assert message in str(error)
    if unsupported:
        assert isinstance(error, UnsupportedPTXError)


def test_endless_recursion_is_a_call_stack_overflow(gpu):
    text = HEADER + """
.func (.param .b32 retval) twice(.param .b32 x)
{
  .reg .b32 %r<4>;
  ld.param.b32 %r1, [x];
  { .param .b32 inner; .param .b32 inner_ret;
    st.param.b32 [inner], %r1;
    call.uni (inner_ret), twice, (inner);
    ld.param.b32 %r2, [inner_ret]; }
  st.param.b32 [retval], %r2;
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>;
  { .param .b32 a; .param .b32 r;
    st.param.b32 [a], 1;
    call.uni (r), twice, (a);
    ld.param.b32 %r1, [r]; }
  ret;
}
"""
    k = gpu.load_ptx(text, name="calls.ptx")["k"]
    with pytest.raises(CallStackOverflowError, match="max_call_depth") as info:
        k[1, 1](0)
    assert info.value.line == text.splitlines().index("    call.uni (inner_ret), twice, (inner);") + 1
    assert info.value.depth == gpu.config.max_call_depth + 1 and info.value.kernel == "k"


def test_calls_of_noinline_functions_run(gpu):
    """saxpy_one (fma), make_pair (a struct returned in .b8[8]) and store_one (no return value): the kernel
    stores y[i] = 2 * (a * x[i] + y[i]) and idx[i] = i + 1 (values exact in f32)."""
    path = Path(__file__).parent / "data" / "ptx" / "noinline_call.ptx"
    k = gpu.load(path)["_Z11call_kernelfPKfPfPii"]
    n = 40
    x = np.arange(n, dtype=np.float32)
    y = np.arange(n, dtype=np.float32) * 2 - 7
    dy, di = gpu.to_device(y), gpu.zeros(n, np.int32)
    k[2, 32](np.float32(3), gpu.to_device(x), dy, di, np.int32(n))
    np.testing.assert_array_equal(dy.get(), 2 * (3 * x + y))
    np.testing.assert_array_equal(di.get(), np.arange(n) + 1)


# ---------------------------------------------------------------- illegal addresses
READ_AT_PTX = entry("""
  ld.param.u64 %rd1, [p_a]; ld.param.u32 %r1, [p_n]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r2, %tid.x; mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mad.lo.u32 %r5, %r3, %r4, %r2;
  mul.wide.u32 %rd2, %r5, 4; add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], 5;
  bar.sync 0;
  add.u32 %r6, %r5, %r1; mul.wide.u32 %rd4, %r6, 4; add.s64 %rd5, %rd1, %rd4;
  ld.global.u32 %r7, [%rd5];
  st.global.u32 [%rd3], %r7;""")


@TIMING
def test_reading_one_past_the_end_is_an_illegal_address(gpu, timing):
    array = gpu.to_device(np.arange(128, dtype=np.uint32))
    kernel = gpu.load_ptx(READ_AT_PTX, name="oob.ptx")["k"]
    # thread x reads a[x + 1]: the very last thread (block 1, thread 63) reads a[128], one past the end
    with pytest.raises(IllegalAddressError) as info:
        gpu.launch(kernel, 2, 64, [array, np.uint32(1)], timing=timing)
    error = info.value
    text = str(error)
    assert error.kernel == "k" and "kernel 'k'" in text
    assert error.block == (1, 0, 0) and error.thread == (63, 0, 0)
    assert error.address == array.ptr + 128 * 4 and f"0x{error.address:x}" in text
    line = READ_AT_PTX.splitlines().index("  ld.global.u32 %r7, [%rd5];") + 1
    assert error.line == line and f"oob.ptx:{line}" in text


@TIMING
def test_a_faulting_store_writes_no_lane(gpu, timing):
    """Lane 31 stores one past the end: no lane of that store writes; the store before it did."""
    array = gpu.zeros(32, np.uint32)
    kernel = gpu.load_ptx(entry("""
      ld.param.u64 %rd1, [p_a]; cvta.to.global.u64 %rd1, %rd1;
      mov.u32 %r1, %tid.x; mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2;
      st.global.u32 [%rd3], 7;
      add.u32 %r2, %r1, 1;
      st.global.u32 [%rd3+4], %r2;"""))["k"]
    with pytest.raises(IllegalAddressError) as info:
        gpu.launch(kernel, 1, 32, [array, np.uint32(0)], timing=timing)
    assert info.value.thread == (31, 0, 0) and info.value.address == array.ptr + 128
    np.testing.assert_array_equal(array.get(), np.full(32, 7))


@TIMING
def test_misaligned_access_is_an_illegal_address(gpu, timing):
    array = gpu.zeros(64, np.uint32)
    kernel = gpu.load_ptx(entry("""
      ld.param.u64 %rd1, [p_a]; cvta.to.global.u64 %rd1, %rd1;
      add.s64 %rd2, %rd1, 2;
      ld.global.u32 %r1, [%rd2];"""), name="misaligned.ptx")["k"]
    with pytest.raises(IllegalAddressError, match="misaligned") as info:
        gpu.launch(kernel, 1, 32, [array, np.uint32(0)], timing=timing)
    assert info.value.address == array.ptr + 2
    assert info.value.thread == (0, 0, 0)


@TIMING
def test_shared_out_of_bounds_is_an_illegal_address(gpu, timing):
    kernel = gpu.load_ptx(entry("""
      .shared .align 4 .b8 tile[128];
      mov.u32 %r1, %tid.x; shl.b32 %r2, %r1, 2; mov.u32 %r3, tile; add.u32 %r4, %r3, %r2;
      st.shared.u32 [%r4], %r1;"""), name="shared.ptx")["k"]
    gpu.launch(kernel, 1, 32, [gpu.zeros(1, np.uint32), np.uint32(0)], timing=timing)   # 32 words fit
    # the hardware allocates shared memory in units: past the declared 128 bytes, inside the unit, runs
    unit = gpu.config.shared_allocation_unit_bytes
    reserved = gpu.config.shared_reserved_bytes_per_block
    granule = -(-(128 + reserved) // unit) * unit - reserved
    with pytest.raises(IllegalAddressError, match="shared memory") as info:
        gpu.launch(kernel, 1, granule // 4 + 32, [gpu.zeros(1, np.uint32), np.uint32(0)], timing=timing)
    assert info.value.thread == (granule // 4, 0, 0)


@TIMING
def test_null_pointer_is_an_illegal_address(gpu, timing):
    kernel = gpu.load_ptx(entry("""
      ld.param.u64 %rd1, [p_a];
      ld.global.u32 %r1, [%rd1];""", params=".param .u64 p_a"))["k"]
    with pytest.raises(IllegalAddressError, match="0x0 "):
        gpu.launch(kernel, 1, 32, [0], timing=timing)


# ---------------------------------------------------------------- barriers
BARRIER_PTX = entry("""
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  @!%p1 bra $L_other;
  bar.sync 0;
  bra.uni $L_end;
$L_other:
  bar.sync 1;
$L_end:""", params=".param .u64 p_a")


@TIMING
def test_warps_waiting_at_different_barriers_deadlock(gpu, timing):
    kernel = gpu.load_ptx(BARRIER_PTX, name="barriers.ptx")["k"]
    with pytest.raises(DeadlockError) as info:
        gpu.launch(kernel, 1, 64, [0], timing=timing)
    assert "barrier" in str(info.value) and "k" in str(info.value)


SKIPPED_BARRIER_PTX = entry("""
  ld.param.u64 %rd1, [p_a]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x; setp.ge.u32 %p1, %r1, 32;
  @%p1 bra $L_end;
  bar.sync 0;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], 1;
$L_end:""")


@TIMING
def test_barrier_the_other_warp_skipped_is_a_synccheck_error(timing):
    """``if (threadIdx.x < 32) __syncthreads();`` in a 64-thread block: the second warp exits without
    arriving. Hardware since Volta completes the barrier anyway (gpusim's default, with a warning); CUDA calls
    it undefined and synccheck reports it as compute-sanitizer's does, with the barrier's line and the threads
    that skipped it."""
    gpu = gpusim.GPU("teaching", sms=2, sanitize={"synccheck"})
    kernel = gpu.load_ptx(SKIPPED_BARRIER_PTX, name="skipped.ptx")["k"]
    out = gpu.zeros(64, np.uint32)
    with pytest.raises(BarrierError) as info:
        gpu.launch(kernel, 1, 64, [out, np.uint32(0)], timing=timing)
    line = SKIPPED_BARRIER_PTX.splitlines().index("  bar.sync 0;") + 1
    assert info.value.line == line and f"skipped.ptx:{line}" in str(info.value)
    assert info.value.skipped == tuple((t, 0, 0) for t in range(32, 64))
    assert "threads 32-63" in str(info.value)


@TIMING
def test_barrier_the_other_warp_skipped_runs_by_default_with_a_warning(gpu, timing):
    """The same launch by default: as on cc 7.0+ hardware, every thread that reaches the barrier stores."""
    kernel = gpu.load_ptx(SKIPPED_BARRIER_PTX, name="skipped.ptx")["k"]
    out = gpu.zeros(64, np.uint32)
    run = gpu.launch(kernel, 1, 64, [out, np.uint32(0)], timing=timing)
    np.testing.assert_array_equal(out.get(), (np.arange(64) < 32).astype(np.uint32))
    assert len(run.warnings) == 1 and "sanitize='synccheck'" in run.warnings[0]


@TIMING
def test_barrier_inside_a_divergent_warp_is_a_synccheck_error(timing):
    """``if (threadIdx.x < 16) __syncthreads();`` in one warp: lanes 16-31 returned before it."""
    gpu = gpusim.GPU("teaching", sms=2, sanitize="synccheck")
    text = SKIPPED_BARRIER_PTX.replace("setp.ge.u32 %p1, %r1, 32", "setp.ge.u32 %p1, %r1, 16")
    kernel = gpu.load_ptx(text)["k"]
    with pytest.raises(BarrierError) as info:
        gpu.launch(kernel, 1, 32, [gpu.zeros(32, np.uint32), np.uint32(0)], timing=timing)
    assert info.value.skipped == tuple((t, 0, 0) for t in range(16, 32))


@TIMING
def test_barrier_some_live_lanes_skip_is_an_error_by_default(gpu, timing):
    """``if (threadIdx.x < 16) __syncthreads();`` where lanes 16-31 go on to other work (not an exit): the PTX
    ISA leaves a bar.sync some live lanes of a warp do not execute undefined; an error in every mode."""
    kernel = gpu.load_ptx(entry("""
      ld.param.u64 %rd1, [p_a]; cvta.to.global.u64 %rd1, %rd1;
      mov.u32 %r1, %tid.x; setp.lt.u32 %p1, %r1, 16;
      @%p1 bra $L_sync;
      st.global.u32 [%rd1], 7;
      bra.uni $L_end;
    $L_sync:
      bar.sync 0;
    $L_end:"""))["k"]
    with pytest.raises(BarrierError, match="divergent") as info:
        gpu.launch(kernel, 1, 32, [gpu.zeros(32, np.uint32), np.uint32(0)], timing=timing)
    assert info.value.skipped == tuple((t, 0, 0) for t in range(16, 32))


@TIMING
def test_barrier_every_thread_reaches_passes_synccheck(gpu, timing):
    """The same kernel with every thread below the bound: no report, every thread stores."""
    kernel = gpu.load_ptx(SKIPPED_BARRIER_PTX.replace("setp.ge.u32 %p1, %r1, 32",
                                                      "setp.ge.u32 %p1, %r1, 64"))["k"]
    out = gpu.zeros(64, np.uint32)
    gpu.launch(kernel, 1, 64, [out, np.uint32(0)], timing=timing)
    np.testing.assert_array_equal(out.get(), np.ones(64, np.uint32))


@TIMING
def test_counted_barrier_nobody_completes_deadlocks(gpu, timing):
    """Warps 0 and 1 wait at barrier 1 for 128 threads, but only 64 threads exist in the block besides
    the one that waits elsewhere."""
    kernel = gpu.load_ptx(entry("""
      mov.u32 %r1, %tid.x; setp.lt.u32 %p1, %r1, 64;
      @!%p1 bra $L_other;
      bar.sync 1, 128;
      bra.uni $L_end;
    $L_other:
      bar.sync 0;
    $L_end:""", params=".param .u64 p_a"), name="counted.ptx")["k"]
    with pytest.raises(DeadlockError, match="counted.ptx"):
        gpu.launch(kernel, 1, 96, [0], timing=timing)


@TIMING
def test_counted_barrier_completes_with_enough_warps(gpu, timing):
    kernel = gpu.load_ptx(entry("""
      ld.param.u64 %rd1, [p_a]; cvta.to.global.u64 %rd1, %rd1;
      mov.u32 %r1, %tid.x; setp.lt.u32 %p1, %r1, 64;
      @!%p1 bra $L_end;
      bar.sync 1, 64;
      mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], 3;
    $L_end:"""))["k"]
    out = gpu.zeros(96, np.uint32)
    gpu.launch(kernel, 1, 96, [out, np.uint32(0)], timing=timing)
    np.testing.assert_array_equal(out.get(), np.where(np.arange(96) < 64, 3, 0))


# ---------------------------------------------------------------- simulation limit
ENDLESS_PTX = entry("""
  mov.u32 %r1, 0;
$L_loop:
  add.u32 %r1, %r1, 1;
  bra.uni $L_loop;""", params=".param .u64 p_a")


@TIMING
def test_endless_loop_stops_at_the_limit(timing, monkeypatch):
    """Timed: max_cycles; functional: the default warp-instruction limit (lowered here so that the loop reaches
    it in a second; tests/test_errors.py's slow test runs into the real default)."""
    from gpusim.launch import runner

    monkeypatch.setattr(runner, "DEFAULT_MAX_WARP_INSTRUCTIONS", 200_000)
    gpu = gpusim.GPU("teaching", max_cycles=10000)
    kernel = gpu.load_ptx(ENDLESS_PTX)["k"]
    with pytest.raises(SimulationLimitError) as info:
        gpu.launch(kernel, 1, 32, [0], timing=timing)
    assert re.search(r"10000|10,000" if timing else r"200,?000", str(info.value))
    assert timing or "max_warp_instructions" in str(info.value)


@pytest.mark.slow
def test_endless_loop_stops_at_the_default_functional_limit():
    from gpusim.launch.runner import DEFAULT_MAX_WARP_INSTRUCTIONS

    gpu = gpusim.GPU("teaching")
    kernel = gpu.load_ptx(ENDLESS_PTX)["k"]
    with pytest.raises(SimulationLimitError) as info:
        gpu.launch(kernel, 1, 32, [0], timing=False)
    assert f"({DEFAULT_MAX_WARP_INSTRUCTIONS:,})" in str(info.value)


# ---------------------------------------------------------------- no raw Python exceptions
@pytest.mark.parametrize("text", [
    "", "garbage", ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(\n",
    HEADER + ".visible .entry k() { ret; ", HEADER + ".visible .entry k() { mov.u32 %r1, 1; ret; }",
    HEADER + ".visible .entry k() { .reg .b32 %r<2>; mov.u32 %r1, 0fZZZ; ret; }",
    HEADER + ".visible .entry k() { .reg .b32 %r<2>; ld.global.u32 %r1, [%r1+]; ret; }",
    HEADER + ".visible .entry k() { .reg .b32 %r<2>; @%r1 bra $L; $L: ret; }",
    HEADER + ".visible .entry k() { .reg .b32 %r<2>; mov.u32 %r1, 99999999999999999999999; ret; }",
    HEADER + ".visible .entry k() { .reg .b32 %r<2>; add.f32.f32 %r1, %r1, %r1; ret; }",
    HEADER + ".visible .entry k() { .reg .b32 %r<2>; st.param.u32 [%r1], %r1; ret; }",
])
def test_malformed_input_raises_only_gpusim_errors(gpu, text):
    try:
        module = gpu.load_ptx(text, name="fuzz.ptx")
    except GpusimError:
        return
    for kernel in module:     # what loads must also launch or fail with a gpusim error
        try:
            gpu.launch(kernel, 1, 32, [], timing=False)
        except GpusimError:
            pass
