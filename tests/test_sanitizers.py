"""The sanitizers (GPU(..., sanitize=...), as compute-sanitizer's tools), the hardware-tolerant defaults and
device assert(), on both paths. Kernels: tests/data/sanitize/*.cu compiled with nvcc -arch=sm_90 -ptx
-lineinfo (the committed .ptx; regenerate.sh). Expected lines are found in the PTX text, threads and values
from the kernels' source, the shared granule from the config's allocation rules."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import (
    BarrierError,
    ConfigError,
    IllegalAddressError,
    InitcheckError,
    KernelAssertionError,
    MemcheckError,
    RacecheckError,
    SanitizerError,
    SynccheckError,
    UninitializedMemoryError,
)
from tests.ptx_lines import kernel_lines

DATA = Path(__file__).parent / "data" / "sanitize"
RACES = DATA / "races.ptx"
BULK = Path(__file__).parent / "ptx" / "hopper" / "mbarrier.ptx"
TIMING = pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])


def cuda_line(text: str) -> int:
    """The line of ``text`` in races.cu."""
    return next(i + 1 for i, line in enumerate((DATA / "races.cu").read_text().splitlines()) if text in line)


@pytest.fixture(scope="module")
def racing():
    gpu = gpusim.GPU("teaching", sanitize="racecheck", sanitize_action="report")
    return gpu, gpu.load(RACES)


# ------------------------------------------------------------ the option
def test_sanitize_takes_a_name_a_comma_list_or_a_set():
    assert gpusim.GPU("teaching", sanitize="racecheck").sanitize == {"racecheck"}
    assert gpusim.GPU("teaching", sanitize="memcheck, initcheck").sanitize == {"memcheck", "initcheck"}
    assert gpusim.GPU("teaching", sanitize=["synccheck"]).sanitize == {"synccheck"}
    assert gpusim.GPU("teaching").sanitize == frozenset()
    with pytest.raises(ConfigError, match="unknown sanitizer 'racechek'.*memcheck, racecheck, synccheck, initcheck"):
        gpusim.GPU("teaching", sanitize={"racechek"})
    with pytest.raises(ConfigError, match="sanitize_action"):
        gpusim.GPU("teaching", sanitize_action="ignore")


def test_every_tool_error_is_a_sanitizer_error_and_keeps_its_older_class():
    assert issubclass(MemcheckError, SanitizerError) and issubclass(MemcheckError, IllegalAddressError)
    assert issubclass(SynccheckError, SanitizerError) and issubclass(SynccheckError, BarrierError)
    assert issubclass(InitcheckError, SanitizerError) and issubclass(InitcheckError, UninitializedMemoryError)
    assert issubclass(RacecheckError, SanitizerError)


# ------------------------------------------------------------ racecheck
@TIMING
@pytest.mark.parametrize("kernel, kind, first, second", [
    ("race_raw", "read-after-write", r"st\.shared", r"ld\.shared"),
    ("race_war", "write-after-read", r"ld\.shared", r"st\.shared"),
    ("race_waw", "write-after-write", r"st\.shared", r"st\.shared"),
])
def test_racecheck_finds_the_planted_hazard(racing, timing, kernel, kind, first, second):
    gpu, module = racing
    run = gpu.launch(module[kernel], 1, 64, [gpu.zeros(64, np.int32)], timing=timing)
    assert len(run.hazards) == 1
    hazard = run.hazards[0]
    assert hazard["type"] == kind and hazard["severity"] == "error"
    # the earlier access is the kernel's first access of its kind, the later the last one of its kind
    assert hazard["line0"] == kernel_lines(RACES, kernel, first)[0]
    assert hazard["line1"] == kernel_lines(RACES, kernel, second)[-1]
    assert hazard["thread0"][0] // 32 != hazard["thread1"][0] // 32          # threads of two warps
    assert 0 <= hazard["address"] < 32 * 4 and hazard["count"] == 32           # 32 lanes x 1 access each
    assert "RACECHECK SUMMARY: 1 hazard displayed (1 error" in run.sanitizer_report
    assert f"races.ptx:{hazard['line0']}" in run.sanitizer_report
    assert f"races.ptx:{hazard['line1']}" in run.sanitizer_report


@TIMING
@pytest.mark.parametrize("kernel, expect", [
    ("barrier_ok", lambda t: 64 - t),
    ("warp_sync_ok", lambda t: 3 * ((t & ~31) + ((t + 1) & 31))),
])
def test_racecheck_finds_nothing_where_a_barrier_or_the_warp_orders_the_accesses(racing, timing, kernel, expect):
    gpu, module = racing
    out = gpu.zeros(64, np.int32)
    run = gpu.launch(module[kernel], 1, 64, [out], timing=timing)
    assert run.hazards == []
    assert "0 hazards displayed" in run.sanitizer_report
    np.testing.assert_array_equal(out.get(), [expect(t) for t in range(64)])


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@TIMING
def test_racy_softmax_gives_a_result_a_gpu_gives_and_racecheck_names_the_race(racing, timing):
    """Every warp reads shared[0] (the max) and warp 0 then overwrites it with its partial sum, with no barrier
    between: on the functional path the warps interleave at every memory access, so the reads come first, as
    on a GPU; racecheck reports the write-after-read between the read of shared[0] and warp 0's write."""
    gpu, module = racing
    rows, cols, threads = 6, 1000, 128
    x = np.random.default_rng(5).standard_normal((rows, cols)).astype(np.float32)
    y = gpu.zeros(rows * cols, np.float32)
    run = gpu.launch(module["softmax_racy"], rows, threads, [gpu.to_device(x), y, np.int32(cols)], timing=timing)
    np.testing.assert_allclose(y.get().reshape(rows, cols), softmax(x), rtol=1e-5, atol=1e-7)
    war = [h for h in run.hazards if h["type"] == "write-after-read"]
    assert war and war[0]["address"] == 0
    reads_of_slot0 = kernel_lines(RACES, "softmax_racy", r"ld\.shared\.f32\s+%f\d+, \[_ZZ12softmax_racyE6shared\];")
    assert war[0]["line0"] in reads_of_slot0
    assert war[0]["thread1"][0] == 0 and war[0]["thread0"][0] >= 32     # warp 0's lane 0 writes after another warp


@TIMING
def test_a_write_of_the_value_already_there_is_a_warning_not_an_error(timing):
    """Both warps write 7 * (t % 32) into slot t % 32: a write-after-write that cannot change the result, a
    warning as compute-sanitizer's racecheck classifies it; no RacecheckError under the default action."""
    gpu = gpusim.GPU("teaching", sanitize="racecheck")
    out = gpu.zeros(64, np.int32)
    run = gpu.launch(gpu.load(RACES)["same_value_waw"], 1, 64, [out], timing=timing)
    assert [(h["type"], h["severity"]) for h in run.hazards] == [("write-after-write", "warning")]
    assert "(0 errors, 1 warning)" in run.sanitizer_report and "Warning: Race reported" in run.sanitizer_report
    np.testing.assert_array_equal(out.get()[:32], 7 * np.arange(32))


@TIMING
def test_racecheck_raises_by_default_at_the_end_of_the_run(timing):
    gpu = gpusim.GPU("teaching", sanitize={"racecheck"})
    out = gpu.zeros(64, np.int32)
    with pytest.raises(RacecheckError, match="read-after-write") as info:
        gpu.launch(gpu.load(RACES)["race_raw"], 1, 64, [out], timing=timing)
    assert len(info.value.hazards) == 1 and "RACECHECK SUMMARY" in info.value.report
    np.testing.assert_array_equal(out.get()[:32], np.arange(1, 33))    # the run finished: warp 1 stored


def test_without_racecheck_nothing_is_reported():
    gpu = gpusim.GPU("teaching")
    run = gpu.launch(gpu.load(RACES)["race_raw"], 1, 64, [gpu.zeros(64, np.int32)], timing=False)
    assert run.hazards == [] and run.sanitizer_report == "" and run.warnings == []


# ------------------------------------------------------------ shared memory bounds and memcheck
def granule(config, declared: int) -> int:
    unit, reserved = config.shared_allocation_unit_bytes, config.shared_reserved_bytes_per_block
    return -(-(declared + reserved) // unit) * unit - reserved


@TIMING
@pytest.mark.parametrize("config", ["h100-sxm", "teaching"])
def test_a_4_byte_dynamic_shared_overrun_runs_with_a_warning_and_memcheck_reports_it(timing, config):
    n = 100                                    # 400 bytes: not a multiple of either config's unit
    gpu = gpusim.GPU(config, sms=2)
    assert granule(gpu.config, 4 * n) >= 4 * n + 4
    module = gpu.load(RACES)
    values = np.arange(1, n + 1, dtype=np.float32)
    out = gpu.zeros(n, np.float32)
    run = gpu.launch(module["shared_overrun"], 1, n, [gpu.to_device(values), out, np.int32(n)], shared_bytes=4 * n,
                     timing=timing)
    np.testing.assert_array_equal(out.get(), np.roll(values, -1))
    assert len(run.warnings) == 1
    assert "1 shared-memory access(es) past the declared 400 bytes" in run.warnings[0]
    assert f"allocation of {granule(gpu.config, 4 * n)}" in run.warnings[0] and "sanitize='memcheck'" in run.warnings[0]
    assert "Warning: " + run.warnings[0] in run.report()

    checked = gpusim.GPU(config, sms=2, sanitize="memcheck")
    with pytest.raises(MemcheckError) as info:
        checked.launch(checked.load(RACES)["shared_overrun"], 1, n, [checked.to_device(values),
                       checked.zeros(n, np.float32), np.int32(n)], shared_bytes=4 * n, timing=timing)
    store = kernel_lines(RACES, "shared_overrun", r"st\.shared\.u32\s+\[%r\d+\], %r\d+;")
    assert info.value.thread == (0, 0, 0) and info.value.address == 4 * n
    assert info.value.line in store
    assert f"CUDA line {cuda_line('buf[n] = -1.0f')}" in str(info.value)
    assert "Invalid __shared__ access of size 4 bytes" in info.value.report
    assert info.value.report.endswith("ERROR SUMMARY: 1 error")


@TIMING
def test_an_access_past_the_granule_still_faults(timing):
    gpu = gpusim.GPU("teaching", sms=1)
    n = gpu.config.shared_allocation_unit_bytes // 4           # n floats fill the granule exactly
    assert granule(gpu.config, 4 * n) == 4 * n
    with pytest.raises(IllegalAddressError, match="shared memory") as info:
        gpu.launch(gpu.load(RACES)["shared_overrun"], 1, n, [gpu.to_device(np.ones(n, np.float32)),
                   gpu.zeros(n, np.float32), np.int32(n)], shared_bytes=4 * n, timing=timing)
    assert not isinstance(info.value, MemcheckError) and info.value.thread == (0, 0, 0)


# ------------------------------------------------------------ initcheck and synccheck
@TIMING
def test_initcheck_finds_a_read_of_gpu_empty_memory(timing):
    gpu = gpusim.GPU("teaching", sanitize="initcheck")
    copy = gpu.load(RACES)["copy"]
    source = gpu.empty(32, np.int32)
    with pytest.raises(InitcheckError) as info:
        gpu.launch(copy, 1, 32, [source, gpu.zeros(32, np.int32), np.int32(32)], timing=timing)
    assert info.value.address == source.ptr and info.value.thread == (0, 0, 0)
    assert "Uninitialized __global__ memory read of size 4 bytes" in info.value.report
    # as compute-sanitizer's initcheck, the kernel goes on: every thread's read is counted, one error each
    assert info.value.reads[0]["count"] == 32 and "ERROR SUMMARY: 32 errors" in info.value.report
    assert info.value.line == next(line for line in kernel_lines(RACES, "copy", r"ld\.global"))
    out = gpu.zeros(32, np.int32)
    gpu.launch(copy, 1, 32, [gpu.to_device(np.arange(32, dtype=np.int32)), out, np.int32(32)], timing=timing)
    np.testing.assert_array_equal(out.get(), np.arange(32))


@TIMING
def test_initcheck_reports_every_read_and_the_kernel_runs_on(timing):
    """With sanitize_action="report" the run finishes: the copy reads what gpu.empty holds (zeros), and the
    report names the reading instruction once, with its first thread, the address and the 2 x 48 reads."""
    gpu = gpusim.GPU("teaching", sanitize="initcheck", sanitize_action="report")
    copy = gpu.load(RACES)["copy"]
    n = 96
    source, out = gpu.empty(n, np.int32), gpu.to_device(np.full(n, -1, np.int32))
    run = gpu.launch(copy, 2, 48, [source, out, np.int32(n)], timing=timing)
    np.testing.assert_array_equal(out.get(), np.zeros(n, np.int32))
    [read] = run.uninitialized_reads
    assert read["count"] == n and read["bytes"] == 4 and read["address"] == source.ptr
    assert read["thread"] == (0, 0, 0) and read["block"] == (0, 0, 0)
    assert read["line"] in kernel_lines(RACES, "copy", r"ld\.global")
    assert f"ERROR SUMMARY: {n} errors" in run.sanitizer_report
    assert f"byte 0 of the {4 * n}-byte allocation" in run.sanitizer_report
    clean = gpu.launch(copy, 2, 48, [out, gpu.zeros(n, np.int32), np.int32(n)], timing=timing)
    assert clean.uninitialized_reads == [] and "ERROR SUMMARY: 0 errors" in clean.sanitizer_report


@TIMING
def test_initcheck_finds_a_bulk_copy_of_gpu_empty_memory(timing):
    """cp.async.bulk global->shared reads its source like a load: one lane (thread 0 of bulk_roundtrip in
    tests/ptx/hopper/mbarrier.ptx) copies the whole never-written allocation, one read of ``nbytes`` bytes."""
    gpu = gpusim.GPU("h100-sxm", sms=1, sanitize="initcheck", sanitize_action="report")
    kernel = gpu.load(BULK)["bulk_roundtrip"]
    nbytes = 1024
    source = gpu.empty(nbytes // 4, np.uint32)
    out, out2 = gpu.zeros(nbytes // 4, np.uint32), gpu.zeros(nbytes // 4, np.uint32)
    run = gpu.launch(kernel, 1, 128, [source, out, out2, np.uint32(nbytes), gpu.zeros(2, np.uint32)], timing=timing)
    [read] = run.uninitialized_reads
    assert read["count"] == 1 and read["bytes"] == nbytes and read["address"] == source.ptr
    assert read["thread"] == (0, 0, 0) and read["block"] == (0, 0, 0)
    assert read["line"] == kernel_lines(BULK, "bulk_roundtrip", r"cp\.async\.bulk\.shared::cluster\.global")[0]
    assert f"Uninitialized __global__ memory read of size {nbytes} bytes" in run.sanitizer_report
    assert np.array_equal(out.get(), out2.get())                 # the kernel ran on: both copies of the tile
    data = np.arange(nbytes // 4, dtype=np.uint32)
    clean = gpu.launch(kernel, 1, 128, [gpu.to_device(data), out, out2, np.uint32(nbytes), gpu.zeros(2, np.uint32)],
                       timing=timing)
    assert clean.uninitialized_reads == [] and np.array_equal(out2.get(), data)


def test_exited_threads_at_a_barrier_are_an_error_before_cc_7():
    """Before Volta exited threads do not arrive: the default there is synccheck's error."""
    gpu = gpusim.GPU("teaching", compute_capability="6.0")
    text = (DATA / ".." / "exec" / "divergence.ptx").read_text()
    module = gpu.load_ptx(text, name="divergence.ptx")
    kernel = next(k for k in module if "early_exit_barrier" in k.name)
    values = np.arange(128, dtype=np.int32)
    values[32:64] = -1
    with pytest.raises(SynccheckError):
        gpu.launch(kernel, 1, 128, [gpu.to_device(values), gpu.zeros(128, np.int32)], timing=False)


# ------------------------------------------------------------ assert
ASSERT_SOURCE = (DATA / "assert_kernel.cu").read_text().splitlines()
ASSERT_LINE = next(i + 1 for i, line in enumerate(ASSERT_SOURCE) if line.strip().startswith("assert("))


@TIMING
def test_a_failed_assert_prints_cudas_message_and_leaves_the_gpu_unusable_until_reset(timing, capsys):
    gpu = gpusim.GPU("teaching")
    module = gpu.load(DATA / "assert_kernel.ptx")
    kernel = module["_Z14check_positivePKiPii"]
    values = np.arange(64, dtype=np.int32)
    values[[37, 40]] = -1                        # block 1, threads 5 and 8 (blocks of 32)
    out = gpu.zeros(64, np.int32)
    with pytest.raises(KernelAssertionError) as info:
        gpu.launch(kernel, 2, 32, [gpu.to_device(values), out, np.int32(64)], timing=timing)
    expected = tuple(f"assert_kernel.cu:{ASSERT_LINE}: void check_positive(const int *, int *, int): block: "
                     f"[1,0,0], thread: [{t},0,0] Assertion `values[i] >= 0` failed." for t in (5, 8))
    assert info.value.messages == expected
    assert info.value.block == (1, 0, 0) and info.value.thread == (5, 0, 0)
    assert capsys.readouterr().err.splitlines() == list(expected)
    # sticky: every call fails until reset, as CUDA's context does after cudaErrorAssert
    with pytest.raises(KernelAssertionError, match="gpu.reset"):
        out.get()
    with pytest.raises(KernelAssertionError, match="gpu.reset"):
        gpu.to_device(values)
    gpu.reset()
    with pytest.raises(gpusim.LaunchError, match="load its module again"):
        gpu.launch(kernel, 2, 32, [gpu.zeros(64, np.int32), gpu.zeros(64, np.int32), np.int32(64)], timing=timing)
    kernel = gpu.load(DATA / "assert_kernel.ptx")["_Z14check_positivePKiPii"]
    out = gpu.zeros(64, np.int32)
    gpu.launch(kernel, 2, 32, [gpu.to_device(np.arange(64, dtype=np.int32)), out, np.int32(64)], timing=timing)
    np.testing.assert_array_equal(out.get(), 2 * np.arange(64))


# ------------------------------------------------------------ the CLI
def test_cli_sanitize_racecheck_reports_the_race(tmp_path):
    result = subprocess.run([sys.executable, "-m", "gpusim", "run", str(RACES), "--kernel", "race_raw", "--grid", "1",
                             "--block", "64", "--array", "out=int32:64", "--functional", "--config", "teaching",
                             "--sanitize", "racecheck"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode != 0
    assert "read-after-write" in result.stdout + result.stderr
    assert "RACECHECK SUMMARY: 1 hazard displayed" in result.stdout + result.stderr
