"""Memcheck-grade detection and the checks before compiled code runs: guard regions between allocations,
the allocation an illegal address missed (past the end, before the start, freed), unsigned addresses,
initcheck, device memory at a fault, implicit exit, parameter offsets, load atomicity, hostile launch
options and config values, and the engine's safety net (InternalError)."""

import numpy as np
import pytest

import gpusim
from gpusim.errors import (
    ConfigError,
    IllegalAddressError,
    InternalError,
    LaunchError,
    PTXSyntaxError,
    UninitializedMemoryError,
)
from gpusim.launch.device_memory import GUARD_BYTES

TIMING = pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


def entry(body: str, params: str = ".param .u64 p_a, .param .u32 p_n", end: str = "  ret;\n") -> str:
    return HEADER + f""".visible .entry k({params})
{{
  .reg .pred %p<4>; .reg .b32 %r<16>; .reg .b64 %rd<16>; .reg .f32 %f<4>;
{body}
{end}}}
"""


@pytest.fixture()
def gpu():
    return gpusim.GPU("teaching", sms=1)


# thread t stores t at a[t + p_n] (bytes: 4 * (t + p_n))
STORE_AT = entry("""
  ld.param.u64 %rd1, [p_a]; ld.param.u32 %r1, [p_n]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r2, %tid.x; add.u32 %r3, %r2, %r1;
  mul.wide.u32 %rd2, %r3, 4; add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;""")

# one thread stores a byte at a + p_n
STORE_BYTE = entry("""
  ld.param.u64 %rd1, [p_a]; ld.param.u32 %r1, [p_n]; cvta.to.global.u64 %rd1, %rd1;
  cvt.u64.u32 %rd2, %r1; add.s64 %rd3, %rd1, %rd2;
  st.global.u8 [%rd3], 9;""")


@TIMING
def test_one_byte_past_an_allocation_faults_even_with_a_neighbour(gpu, timing):
    """Two 256-byte arrays back to back: a store one byte past the first would land in the second on an
    allocator without guards; here it is an illegal address naming the first array and the offset."""
    first = gpu.zeros(64, np.uint32)
    second = gpu.zeros(64, np.uint32)
    assert second.ptr - first.ptr >= first.nbytes + GUARD_BYTES
    kernel = gpu.load_ptx(STORE_BYTE, "byte.ptx")["k"]
    with pytest.raises(IllegalAddressError) as info:
        gpu.launch(kernel, 1, 1, [first, np.uint32(first.nbytes + 4)], timing=timing)
    text = str(info.value)
    assert f"5 bytes past the end of the {first.nbytes}-byte allocation" in text
    assert f"0x{first.ptr:x}" in text
    np.testing.assert_array_equal(second.get(), np.zeros(64, np.uint32))


@TIMING
def test_device_memory_at_a_fault_is_what_the_kernel_wrote_before_it(gpu, timing):
    """Block 0 (threads 0-31) stores a[t]; then warp 1 of the same block stores past the end. Memory holds
    exactly block 0's earlier stores (the faulting warp-instruction writes no lane), nothing else."""
    a = gpu.zeros(48, np.uint32)
    kernel = gpu.load_ptx(STORE_AT)["k"]
    with pytest.raises(IllegalAddressError) as info:
        gpu.launch(kernel, 1, 64, [a, np.uint32(0)], timing=timing)
    assert info.value.thread == (48, 0, 0)
    assert "past the end of the 192-byte allocation" in str(info.value)
    expected = np.zeros(48, np.uint32)
    expected[:32] = np.arange(32)          # warp 0's store; warp 1's store (lanes 32..63) faulted whole
    np.testing.assert_array_equal(a.get(), expected)


@TIMING
def test_use_after_free_is_named(gpu, timing):
    a = gpu.zeros(32, np.uint32)
    kernel = gpu.load_ptx(STORE_AT)["k"]
    a.free()
    with pytest.raises(IllegalAddressError, match="has been freed"):
        gpu.launch(kernel, 1, 32, [a, np.uint32(0)], timing=timing)


@TIMING
def test_addresses_are_printed_unsigned(gpu, timing):
    """A pointer 16 bytes below zero: CUDA prints 0xfffffffffffffff0, never 0x-10."""
    kernel = gpu.load_ptx(entry("""
      ld.param.u64 %rd1, [p_a]; add.s64 %rd2, %rd1, -16;
      ld.global.u32 %r1, [%rd2];""", params=".param .u64 p_a"))["k"]
    with pytest.raises(IllegalAddressError) as info:
        gpu.launch(kernel, 1, 1, [0], timing=timing)
    assert "0xfffffffffffffff0" in str(info.value) and "0x-" not in str(info.value)
    assert info.value.address == (1 << 64) - 16


@TIMING
def test_initcheck_reports_a_read_of_memory_never_written(timing):
    gpu = gpusim.GPU("teaching", sms=1, initcheck=True)
    src = gpu.empty(32, np.uint32)           # allocated, never written
    kernel = gpu.load_ptx(entry("""
      ld.param.u64 %rd1, [p_a]; cvta.to.global.u64 %rd1, %rd1;
      mov.u32 %r2, %tid.x; mul.wide.u32 %rd2, %r2, 4; add.s64 %rd3, %rd1, %rd2;
      ld.global.u32 %r3, [%rd3];"""), "init.ptx")["k"]
    with pytest.raises(UninitializedMemoryError) as info:
        gpu.launch(kernel, 1, 32, [src, np.uint32(0)], timing=timing)
    assert info.value.address == src.ptr and info.value.thread == (0, 0, 0)
    gpu.launch(kernel, 1, 32, [gpu.to_device(np.arange(32, dtype=np.uint32)), np.uint32(0)], timing=timing)
    gpu.launch(kernel, 1, 32, [gpu.zeros(32, np.uint32), np.uint32(0)], timing=timing)


@TIMING
def test_initcheck_counts_a_kernels_stores_as_writes(timing):
    gpu = gpusim.GPU("teaching", sms=1, initcheck=True)
    a = gpu.empty(32, np.uint32)
    store = gpu.load_ptx(STORE_AT)["k"]
    gpu.launch(store, 1, 32, [a, np.uint32(0)], timing=timing)
    np.testing.assert_array_equal(a.get(), np.arange(32))
    load = gpu.load_ptx(entry("""
      ld.param.u64 %rd1, [p_a]; cvta.to.global.u64 %rd1, %rd1;
      mov.u32 %r2, %tid.x; mul.wide.u32 %rd2, %r2, 4; add.s64 %rd3, %rd1, %rd2;
      ld.global.u32 %r3, [%rd3]; st.global.u32 [%rd3], %r3;"""))["k"]
    gpu.launch(load, 1, 32, [a, np.uint32(0)], timing=timing)     # reads what the first kernel wrote


@TIMING
def test_a_kernel_without_ret_gets_the_implicit_exit(gpu, timing):
    """The last instruction is a store (no ret) and a branch targets the end: PTX's implicit exit."""
    kernel = gpu.load_ptx(entry("""
      ld.param.u64 %rd1, [p_a]; ld.param.u32 %r1, [p_n]; cvta.to.global.u64 %rd1, %rd1;
      mov.u32 %r2, %tid.x; setp.ge.u32 %p1, %r2, %r1;
      @%p1 bra $L_end;
      mul.wide.u32 %rd2, %r2, 4; add.s64 %rd3, %rd1, %rd2;
      st.global.u32 [%rd3], %r2;
    $L_end:""", end=""))["k"]
    a = gpu.zeros(64, np.uint32)
    gpu.launch(kernel, 1, 64, [a, np.uint32(40)], timing=timing)
    np.testing.assert_array_equal(a.get(), np.where(np.arange(64) < 40, np.arange(64), 0))


def test_a_huge_parameter_offset_is_refused_at_load(gpu):
    with pytest.raises(PTXSyntaxError, match="signed 32-bit") as info:
        gpu.load_ptx(entry("  ld.param.u64 %rd1, [p_a+9223372036854775800];"), "param.ptx")
    assert info.value.line == 7 and info.value.file == "param.ptx"


@TIMING
def test_a_parameter_read_past_the_buffer_is_an_illegal_address(gpu, timing):
    kernel = gpu.load_ptx(entry("  ld.param.u64 %rd1, [p_a+2147483000];"))["k"]
    with pytest.raises(IllegalAddressError):
        gpu.launch(kernel, 1, 1, [gpu.zeros(1), np.uint32(0)], timing=timing)


@pytest.mark.parametrize("literal", ["0f7F8000001", "1" * 4301, "1e999999", "0x" + "F" * 17])
def test_extreme_literals_are_ptx_errors(gpu, literal):
    with pytest.raises(PTXSyntaxError):
        gpu.load_ptx(entry(f"  mov.u32 %r1, {literal};\n  add.f32 %f1, %f1, {literal};"))


def test_an_out_of_range_float_literal_rounds_to_infinity_as_ptxas_does(gpu):
    """``add.f32 ... 1e300``: the double rounds to +inf in f32 (numpy's float32 of it), not an OverflowError."""
    kernel = gpu.load_ptx(entry("""
      ld.param.u64 %rd1, [p_a]; cvta.to.global.u64 %rd1, %rd1;
      mov.f32 %f1, 0f00000000; add.f32 %f2, %f1, 1e300; st.global.f32 [%rd1], %f2;"""))["k"]
    a = gpu.zeros(1, np.float32)
    gpu.launch(kernel, 1, 1, [a, np.uint32(0)], timing=False)
    with np.errstate(over="ignore"):
        assert a.get()[0] == np.float32(1e300)


@pytest.mark.parametrize("decl", [".global .u32 big[68719476736];", ".shared .u32 big[4294967296];",
                                  ".const .f32 big[1048576];", ".global .align 1073741824 .u32 big[4];"])
def test_huge_declarations_are_refused_before_anything_is_allocated(gpu, decl):
    before = (gpu.heap.top, dict(gpu.heap.sizes))
    with pytest.raises(PTXSyntaxError):
        gpu.load_ptx(HEADER + ".global .u32 small[16];\n" + decl + "\n" + entry("  mov.u32 %r1, big;")
                     .replace(HEADER, ""))
    assert (gpu.heap.top, dict(gpu.heap.sizes)) == before


def test_a_failed_load_allocates_nothing(gpu):
    text = HEADER + ".global .u32 table[1024];\n.const .u32 c[4] = {1, 2, 3, 4};\n" + \
        entry("  frobnicate.u32 %r1, %r2;").replace(HEADER, "")
    before = (gpu.heap.top, dict(gpu.heap.sizes))
    with pytest.raises(PTXSyntaxError):
        gpu.load_ptx(text)
    assert (gpu.heap.top, dict(gpu.heap.sizes)) == before


@pytest.mark.parametrize("text", [
    entry("  frobnicate.u32 %r1, %r2;"),
    entry("  mov.u32 %r1, 1;").replace("\n", "\r\n"),
    entry("  mov.u32 %r1, 1;\r  bad\r;"),
    "\ufeff" + entry("  mov.u32 %r1, 1;"),
])
def test_load_of_a_file_and_load_ptx_of_its_text_agree(gpu, tmp_path, text):
    path = tmp_path / "same.ptx"
    path.write_bytes(text.encode("utf-8"))

    def outcome(load):
        try:
            module = load()
            return "ok", [k.program.code.tolist() for k in module]
        except gpusim.errors.GpusimError as exc:
            return type(exc).__name__, str(exc)

    assert outcome(lambda: gpu.load(path)) == outcome(lambda: gpu.load_ptx(text, str(path)))


@pytest.mark.parametrize("options", [
    dict(shared_bytes=None), dict(shared_bytes=float("nan")), dict(shared_bytes=float("inf")),
    dict(shared_bytes=-1), dict(shared_bytes=1 << 40), dict(regs=float("nan")), dict(regs=0),
    dict(regs=10**6), dict(trace="x"), dict(trace=-5), dict(trace=0), dict(max_warp_instructions=1.5),
    dict(max_warp_instructions=0), dict(timing="yes"), dict(args=5), dict(grid=True), dict(block=1.0),
    dict(grid=(1, 2, 3, 4)), dict(block=(0,)), dict(grid=2**70),
])
def test_hostile_launch_options_are_launch_errors(gpu, options):
    kernel = gpu.load_ptx(STORE_AT)["k"]
    call = dict(grid=1, block=32, args=[gpu.zeros(32, np.uint32), np.uint32(0)], shared_bytes=0)
    call.update(options)
    with pytest.raises(LaunchError):
        gpu.launch(kernel, **call)
    # the GPU stays usable
    a = gpu.zeros(32, np.uint32)
    gpu.launch(kernel, 1, 32, [a, np.uint32(0)], timing=False)
    np.testing.assert_array_equal(a.get(), np.arange(32))


@pytest.mark.parametrize("overrides", [
    dict(link_bandwidth_gbs=float("nan")), dict(core_clock_mhz=float("inf")), dict(sms=None),
    dict(max_cycles=2**80), dict(dram_efficiency=float("-inf")), dict(scheduler=3), dict(initcheck="yes"),
])
def test_hostile_config_values_are_config_errors(overrides):
    with pytest.raises(ConfigError):
        gpusim.GPU("teaching", **overrides)


@pytest.mark.parametrize("call", [
    lambda g: g.empty(-1), lambda g: g.empty((2, None)), lambda g: g.empty(4, dtype=object),
    lambda g: g.empty(4, dtype="not-a-dtype"), lambda g: g.empty(1 << 60), lambda g: g.to_device("abc"),
    lambda g: g.to_device(np.array(["a"])),
])
def test_hostile_device_memory_calls_are_launch_errors(gpu, call):
    with pytest.raises(LaunchError):
        call(gpu)


def test_an_unexpected_engine_exception_is_an_internal_error_and_the_gpu_survives(gpu, monkeypatch):
    """The safety net: an exception from inside the engine (simulated here) reaches the user as an
    InternalError naming the kernel, and the next launch works."""
    from gpusim.engine.semantics import functional

    kernel = gpu.load_ptx(STORE_AT)["k"]

    def broken(*args):
        raise ZeroDivisionError("simulated engine bug")

    monkeypatch.setattr(functional, "run_functional", broken)
    with pytest.raises(InternalError) as info:
        gpu.launch(kernel, 1, 32, [gpu.zeros(32, np.uint32), np.uint32(0)], timing=False)
    assert info.value.kernel == "k" and "ZeroDivisionError" in info.value.cause
    monkeypatch.undo()
    a = gpu.zeros(32, np.uint32)
    gpu.launch(kernel, 1, 32, [a, np.uint32(0)], timing=False)
    np.testing.assert_array_equal(a.get(), np.arange(32))
