"""racecheck on the shared-memory accesses that are not plain ld/st: ldmatrix, stmatrix, cp.async, wmma
fragment loads/stores and atomics (tests/data/sanitize/races_async.cu, nvcc -arch=sm_90, committed PTX).
Each planted race is found with the PTX lines of both accesses; each race-free version (a __syncthreads()
between the two warps' accesses, or atomics only) reports nothing and computes what the source says.
Expected counts are the number of accesses of the later instruction that meet the earlier one's bytes:
one per lane for ld.shared, one per row address for ldmatrix.x1 (8), one per element for a 16x16 wmma
fragment (256), one per 2-byte element for stmatrix (64). Which of two racing warps gets there first is the
engine's order to decide (both paths interleave the warps at memory accesses: warp 1's read can come before
warp 0's write): a write seen first makes a read-after-write, a read seen first a write-after-read, with the
lines swapped."""

from pathlib import Path

import numpy as np
import pytest

import gpusim
from tests.ptx_lines import kernel_lines

DATA = Path(__file__).parent / "data" / "sanitize"
PTX = DATA / "races_async.ptx"
TIMING = pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])


@pytest.fixture(scope="module")
def racing():
    gpu = gpusim.GPU("h100-sxm", sms=1, sanitize="racecheck", sanitize_action="report")
    return gpu, gpu.load(PTX)


def words():
    t = np.arange(32, dtype=np.uint32)
    return t | (t + 100) << 16


CASES = {
    # name: (warp 0's write, warp 1's read, accesses of the read that find it, of the write)
    "ldmatrix": (r"st\.shared", r"ldmatrix", 8, 32),
    "stmatrix": (r"stmatrix", r"ld\.shared", 32, 64),
    "cp_async": (r"cp\.async\.ca", r"ld\.shared", 32, 128),
    "wmma": (r"wmma\.store", r"wmma\.load", 256, 256),
}


def arguments(gpu, name):
    if name in ("ldmatrix", "stmatrix"):
        return [gpu.zeros(32, np.uint32)], words
    if name == "cp_async":
        source = np.arange(32, dtype=np.int32) * 7 - 50
        return [gpu.to_device(source), gpu.zeros(32, np.int32)], lambda: source
    source = np.random.default_rng(3).standard_normal(256).astype(np.float32)
    return [gpu.to_device(source), gpu.zeros(256, np.float32)], lambda: source


@TIMING
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_planted_race_is_found_with_both_lines(racing, timing, name):
    gpu, module = racing
    write, read, reads, writes = CASES[name]
    args, _ = arguments(gpu, name)
    run = gpu.launch(module[f"{name}_race"], 1, 64, args, timing=timing)
    assert len(run.hazards) == 1, run.sanitizer_report
    hazard = run.hazards[0]
    assert hazard["severity"] == "error"
    lines = {"write": kernel_lines(PTX, f"{name}_race", write), "read": kernel_lines(PTX, f"{name}_race", read)}
    warps = {"write": 0, "read": 1}
    raw = hazard["type"] == "read-after-write"
    first, second, count = ("write", "read", reads) if raw else ("read", "write", writes)
    assert hazard["type"] in ("read-after-write", "write-after-read")
    assert hazard["line0"] in lines[first] and hazard["line1"] in lines[second]
    assert hazard["thread0"][0] // 32 == warps[first] and hazard["thread1"][0] // 32 == warps[second]
    assert hazard["count"] == count


@TIMING
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_barrier_between_the_warps_leaves_nothing_to_report(racing, timing, name):
    gpu, module = racing
    args, expect = arguments(gpu, name)
    run = gpu.launch(module[f"{name}_ok"], 1, 64, args, timing=timing)
    assert run.hazards == [], run.sanitizer_report
    np.testing.assert_array_equal(args[-1].get(), expect())


@TIMING
def test_atomics_of_two_warps_do_not_race(racing, timing):
    gpu, module = racing
    out = gpu.zeros(1, np.int32)
    run = gpu.launch(module["atomic_ok"], 1, 64, [out], timing=timing)
    assert run.hazards == [], run.sanitizer_report
    assert out.get()[0] == sum(range(1, 65))


@TIMING
@pytest.mark.parametrize("kernel, kind, later, count", [
    ("atomic_race_read", "read-after-write", r"ld\.shared", 32),
    ("atomic_race_write", "write-after-write", r"st\.shared", 1),
])
def test_an_atomic_and_a_plain_access_of_another_warp_race(racing, timing, kernel, kind, later, count):
    gpu, module = racing
    run = gpu.launch(module[kernel], 1, 64, [gpu.zeros(32, np.int32)], timing=timing)
    assert len(run.hazards) == 1, run.sanitizer_report
    hazard = run.hazards[0]
    assert hazard["type"] == kind
    assert hazard["line0"] in kernel_lines(PTX, kernel, r"\b(atom|red)\.shared")
    assert hazard["line1"] in kernel_lines(PTX, kernel, later)
    assert hazard["count"] == count
