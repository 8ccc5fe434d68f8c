"""GPU(threads=N): the functional engine runs independent blocks on several threads with one thread's results
(gpusim.launch.functional_threads). Reference: the same launch with threads=1."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import gpusim
from gpusim.engine.semantics import functional as F
from gpusim.errors import ConfigError, IllegalAddressError, SimulationLimitError
from gpusim.launch import functional_threads as FT
from gpusim.launch import slices
from gpusim.launch.functional_threads import communicating_line, one_thread_reason, resolve_threads
from gpusim.programs.catalog import load_program, run_program

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


@pytest.fixture(autouse=True)
def small_slices(monkeypatch):
    """Slices of 64 warp-instructions: the first slice runs on the launching thread alone, so these small
    launches reach the workers only when it does not hold the whole launch."""
    monkeypatch.setattr(slices, "FIXED_BUDGET", 64)


def entry(body: str, params: str = ".param .u64 p_a, .param .u32 p_n") -> str:
    return HEADER + f""".visible .entry k({params})
{{
  .reg .pred %p<4>; .reg .b32 %r<16>; .reg .b64 %rd<16>;
{body}
  ret;
}}
"""


# out[i] = i * i + n over blocks of 64 threads; block `p_n` (if any) reads far past the end first
SQUARES = entry("""
  ld.param.u64 %rd1, [p_a]; ld.param.u32 %r1, [p_n]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r2, %tid.x; mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mad.lo.u32 %r5, %r3, %r4, %r2;
  setp.ne.u32 %p1, %r3, %r1;
  @%p1 bra $L_ok;
  ld.global.u32 %r9, [%rd1+1048576];
$L_ok:
  mul.lo.u32 %r6, %r5, %r5; add.u32 %r6, %r6, %r3;
  mul.wide.u32 %rd2, %r5, 4; add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r6;""")
ATOMIC = entry("""
  ld.param.u64 %rd1, [p_a]; cvta.to.global.u64 %rd1, %rd1;
  atom.global.add.u32 %r1, [%rd1], 1;""")
VOLATILE = entry("""
  ld.param.u64 %rd1, [p_a]; cvta.to.global.u64 %rd1, %rd1;
  ld.volatile.global.u32 %r1, [%rd1];""")
FENCE = entry("""
  membar.gl;""")
CTA_FENCE = entry("""
  membar.cta;""")


def _squares(threads: int, bad_block: int = -1, blocks: int = 40):
    gpu = gpusim.GPU("teaching", threads=threads)
    out = gpu.zeros(blocks * 64, np.uint32)
    kernel = gpu.load_ptx(SQUARES, name="squares.ptx")["k"]
    run = gpu.launch(kernel, blocks, 64, [out, np.uint32(bad_block & 0xFFFFFFFF)], timing=False)
    return run, out.get()


def test_threads_resolve_from_the_argument_the_environment_or_the_cores(monkeypatch):
    assert resolve_threads(3) == 3
    monkeypatch.setenv("GPUSIM_THREADS", "5")
    assert resolve_threads(None) == 5 and gpusim.GPU("teaching").threads == 5
    monkeypatch.delenv("GPUSIM_THREADS")
    assert resolve_threads(None) >= 1
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(ConfigError, match="threads"):
            gpusim.GPU("teaching", threads=bad)
    monkeypatch.setenv("GPUSIM_THREADS", "many")
    with pytest.raises(ConfigError, match="GPUSIM_THREADS"):
        gpusim.GPU("teaching")


def test_blocks_run_on_several_threads_with_one_thread_s_results(monkeypatch):
    """After the first slice (on the launching thread), three workers are in the engine at once (each waits at
    a barrier on its first call until the other two are there), and the outputs and per-pc counts are one
    thread's."""
    seen: set[int] = set()
    engine = F.run_functional
    meeting = threading.Barrier(3, timeout=30)
    main = threading.get_ident()

    def recording(*args):
        if threading.get_ident() not in seen and threading.get_ident() != main:
            seen.add(threading.get_ident())
            meeting.wait()
        return engine(*args)

    one, out1 = _squares(1)
    monkeypatch.setattr(F, "run_functional", recording)
    three, out3 = _squares(3)
    assert len(seen) == 3
    i = np.arange(40 * 64, dtype=np.uint64)
    np.testing.assert_array_equal(out3, ((i * i + i // 64) & 0xFFFFFFFF).astype(np.uint32))
    np.testing.assert_array_equal(out1, out3)
    np.testing.assert_array_equal(one.pc_counts, three.pc_counts)
    assert one.warp_instructions == three.warp_instructions


SIZES = {"vecadd": {"n": 256 * 64}, "matmul_tiled": {"m": 16 * 32, "n": 128, "k": 32},
         "transpose_padded": {"rows": 32 * 16, "cols": 256}, "divergence": {"n": 256 * 64},
         "reduce_shared": {"n": 256 * 64}, "stencil2d": {"height": 16 * 16, "width": 128}}


@pytest.mark.parametrize("name", sorted(SIZES))
def test_shipped_programs_give_the_same_outputs_and_counts_on_three_threads(name):
    results = []
    for threads in (1, 3):
        spec = load_program(name, sizes=SIZES[name])
        gpu = gpusim.GPU("teaching", threads=threads)
        assert threads == 1 or all(not one_thread_reason(gpu, kernel.program, 64, 1)
                                   for kernel in gpu.load(str(spec.ptx)).kernels.values())
        results.append(run_program(spec, gpu=gpu, timing=False))
    one, three = results
    assert one.ok and three.ok
    for a, b in zip(one.runs, three.runs, strict=True):
        np.testing.assert_array_equal(a.pc_counts, b.pc_counts)
    assert one.arrays.keys() == three.arrays.keys()
    for a, b in zip(one.arrays.values(), three.arrays.values(), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_launch_that_fits_in_the_first_slice_stays_on_the_launching_thread(monkeypatch):
    monkeypatch.setattr(slices, "FIXED_BUDGET", 1 << 30)
    seen: set[int] = set()
    engine = F.run_functional

    def recording(*args):
        seen.add(threading.get_ident())
        return engine(*args)

    monkeypatch.setattr(F, "run_functional", recording)
    _squares(3)
    assert seen == {threading.get_ident()}


def test_a_launch_whose_first_slice_reaches_its_last_block_goes_on_alone(monkeypatch):
    """The first slice stops inside the last block: nothing is left to share, the launching thread finishes."""
    one, _ = _squares(1, blocks=4)
    monkeypatch.setattr(slices, "FIXED_BUDGET", int(3.5 * one.warp_instructions / 4))   # halfway into block 3
    run, out = _squares(2, blocks=4)
    i = np.arange(4 * 64, dtype=np.uint64)
    np.testing.assert_array_equal(out, ((i * i + i // 64) & 0xFFFFFFFF).astype(np.uint32))
    np.testing.assert_array_equal(run.pc_counts, one.pc_counts)


@pytest.mark.parametrize("bad", [0, 17, 39])
def test_a_fault_is_the_lowest_failing_block_s_as_on_one_thread(bad):
    errors = []
    for threads in (1, 3):
        with pytest.raises(IllegalAddressError) as info:
            _squares(threads, bad)
        errors.append(info.value)
    assert errors[0].block == errors[1].block == (bad, 0, 0)
    assert str(errors[0]) == str(errors[1])


def test_the_warp_instruction_limit_holds_on_threads():
    gpu = gpusim.GPU("teaching", threads=3)
    out = gpu.zeros(40 * 64, np.uint32)
    kernel = gpu.load_ptx(SQUARES)["k"]
    with pytest.raises(SimulationLimitError):
        gpu.launch(kernel, 40, 64, [out, np.uint32(0xFFFFFFFF)], timing=False, max_warp_instructions=200)


@pytest.mark.parametrize("ptx, communicates", [(ATOMIC, True), (VOLATILE, True), (FENCE, True),
                                               (CTA_FENCE, False), (SQUARES, False)])
def test_kernels_whose_blocks_may_communicate_run_on_one_thread(ptx, communicates):
    gpu = gpusim.GPU("teaching", threads=2)
    program = gpu.load_ptx(ptx, name="c.ptx")["k"].program
    assert (communicating_line(program) is not None) == communicates
    reason = one_thread_reason(gpu, program, 100, 1)
    assert ("c.ptx:" in reason) == communicates
    assert one_thread_reason(gpu, program, 100, 2).startswith("several blocks resident")
    assert "fewer than two per thread" in one_thread_reason(gpu, program, 3, 1) or communicates
    assert one_thread_reason(gpusim.GPU("teaching", threads=1), program, 100, 1) == "threads=1"


def test_atomics_give_exact_counts_with_threads_on():
    gpu = gpusim.GPU("teaching", threads=2)
    counter = gpu.zeros(1, np.uint32)
    gpu.launch(gpu.load_ptx(ATOMIC)["k"], 64, 32, [counter, np.uint32(0)], timing=False)
    assert int(counter.get()[0]) == 64 * 32


def test_chunks_cover_the_blocks_in_order():
    chunks = FT._chunks(5, 105, 3)
    assert chunks[0][0] == 5 and chunks[-1][1] == 105 and len(chunks) == 3 * FT.CHUNKS_PER_THREAD
    assert FT._chunks(0, 2, 3) == [(0, 1), (1, 2)] and FT._chunks(7, 7, 2) == []
    assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(chunks, chunks[1:], strict=False))


def test_sampled_runs_time_the_same_on_any_thread_count():
    runs = []
    for threads in (1, 2):
        gpu = gpusim.GPU("h100-sxm", sms=2, sampling="auto", threads=threads)
        spec = load_program("vecadd", sizes={"n": 256 * 8 * 2 * 200})
        result = run_program(spec, gpu=gpu)
        assert result.ok
        runs.append(result.runs[0])
    one, two = runs
    assert one.sampled and two.sampled
    assert one.cycles == two.cycles and one.cycles_interval == two.cycles_interval
    np.testing.assert_array_equal(one.pc_counts, two.pc_counts)


def test_cli_threads_reaches_the_gpu(monkeypatch, capsys):
    from gpusim import cli

    made = []
    real = gpusim.GPU

    def recording(*args, **kwargs):
        gpu = real(*args, **kwargs)
        made.append(gpu)
        return gpu

    monkeypatch.setattr("gpusim.api.gpu.GPU", recording)
    assert cli.main(["run", "vecadd", "--config", "teaching", "--functional", "--threads", "3"]) == 0
    assert made and made[-1].threads == 3
    assert cli.main(["run", "vecadd", "--config", "teaching", "--functional", "--threads", "0"]) != 0
    assert "threads must be a positive int" in capsys.readouterr().err
