"""Ctrl-C during a launch: the engine returns to Python between slices, so a SIGINT raises
KeyboardInterrupt there (not inside compiled code), and the GPU can launch again. Also the progress
report of long launches and the simulation-limit errors."""

from __future__ import annotations

import io
import os
import re
import signal
import threading

import numpy as np
import pytest

import gpusim
from gpusim.errors import LaunchError, SimulationLimitError
from gpusim.launch import progress as P
from gpusim.launch import slices

# The instruction counts here are the PTX's as written (codegen="none"): these tests are about the launch
# loop's slices, not about what the code-generation stage makes of the kernels.
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
SPIN = HEADER + """.visible .entry spin(.param .u64 p_out)
{
  .reg .b32 %r<4>;
  mov.u32 %r1, 0;
$L_spin:
  add.u32 %r1, %r1, 1;
  bra.uni $L_spin;
}
"""
ADD_ONE = HEADER + """.visible .entry add_one(.param .u64 p_in, .param .u64 p_out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p_in];
  ld.param.u64 %rd2, [p_out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd3, %r4, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r5, [%rd4];
  add.u32 %r6, %r5, 1;
  add.s64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r6;
  ret;
}
"""
# each thread loops p_n times, then all wait at a barrier and store %clock: in a functional run %clock
# counts the block's warp-instructions so far, so the stored values depend on every warp's progress
CLOCK = HEADER + """.visible .entry clk(.param .u64 p_out, .param .u32 p_n)
{
  .reg .pred %p<2>; .reg .b32 %r<10>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_out];
  ld.param.u32 %r2, [p_n];
  mov.u32 %r1, %tid.x;
  shr.u32 %r8, %r1, 5;
  add.u32 %r2, %r2, %r8;
  mov.u32 %r3, 0;
$L_loop:
  add.u32 %r3, %r3, 1;
  setp.lt.u32 %p1, %r3, %r2;
  @%p1 bra $L_loop;
  bar.sync 0;
  mov.u32 %r4, %clock;
  mov.u32 %r5, %ctaid.x;
  mov.u32 %r7, %ntid.x;
  mad.lo.u32 %r6, %r5, %r7, %r1;
  mul.wide.u32 %rd2, %r6, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  ret;
}
"""
TIMING = pytest.mark.parametrize("timing", [True, False], ids=["timed", "functional"])
# limits a spin reaches only after about a minute here (1 M cycles/s timed, 18 M warp-instructions/s
# functional): a launch that Ctrl-C failed to stop ends in SimulationLimitError instead of hanging the tests
ENDLESS = dict(max_cycles=60_000_000)
ENDLESS_FUNCTIONAL = 1_000_000_000


@pytest.fixture
def sigint_raises():
    """Python's own SIGINT handler (KeyboardInterrupt), whatever the test runner installed."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _spin(gpu, timing, **kw):
    kernel = gpu.load_ptx(SPIN)["spin"]
    return gpu.launch(kernel, grid=8, block=128, args=[gpu.zeros(1, np.uint32)], timing=timing,
                      max_warp_instructions=None if timing else ENDLESS_FUNCTIONAL, **kw)


def _add_one_works(gpu, timing) -> None:
    host = np.arange(1024, dtype=np.uint32) * 7
    src, dst = gpu.to_device(host), gpu.zeros(1024, np.uint32)
    run = gpu.launch(gpu.load_ptx(ADD_ONE)["add_one"], grid=8, block=128, args=[src, dst], timing=timing)
    np.testing.assert_array_equal(dst.get(), host + 1)
    assert run.warp_instructions == 8 * 4 * 13     # 13 instructions per warp, 4 warps per block


def _raised_in_python(info) -> None:
    """The KeyboardInterrupt comes from the launch layer's Python loop, not from compiled code."""
    last = str(info.traceback[-1].path)
    assert os.sep + os.path.join("gpusim", "launch") + os.sep in last, last


@TIMING
def test_sigint_from_another_thread_stops_an_endless_kernel(timing, sigint_raises):
    gpu = gpusim.GPU("teaching", codegen="none", **ENDLESS)
    _add_one_works(gpu, timing)       # the engine is loaded: the signal comes while the kernel runs
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            _spin(gpu, timing)
    finally:
        timer.cancel()
    _raised_in_python(info)
    _add_one_works(gpu, timing)


@TIMING
def test_sigint_between_slices_interrupts_and_the_gpu_launches_again(timing, sigint_raises, monkeypatch):
    """Deterministic: the progress hook raises SIGINT at the third slice."""
    monkeypatch.setattr(slices, "FIXED_BUDGET", 500)
    gpu = gpusim.GPU("teaching", codegen="none", **ENDLESS)
    seen = []

    def hook(p):
        seen.append(p)
        if len(seen) == 3:
            signal.raise_signal(signal.SIGINT)

    with pytest.raises(KeyboardInterrupt) as info:
        _spin(gpu, timing, progress=hook)
    assert len(seen) == 3
    _raised_in_python(info)
    # the progress reports grew, slice by slice
    instructions = [p.warp_instructions for p in seen]
    assert instructions == sorted(instructions) and instructions[0] > 0
    if timing:
        assert [p.cycles for p in seen] == sorted(p.cycles for p in seen)
    _add_one_works(gpu, timing)
    # and a launch after the interrupt gives what a fresh GPU gives
    clock = gpu.load_ptx(CLOCK)["clk"]
    fresh = gpusim.GPU("teaching", codegen="none")
    outs = []
    for g, k in ((gpu, clock), (fresh, fresh.load_ptx(CLOCK)["clk"])):
        out = g.zeros(4 * 96, np.uint32)
        run = g.launch(k, grid=4, block=96, args=[out, np.uint32(30)], timing=False)
        outs.append((out.get(), run.pc_counts))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])


def test_functional_clock_is_the_same_however_the_run_is_cut(monkeypatch):
    results = []
    for budget in (1 << 40, 7, 1):
        monkeypatch.setattr(slices, "FIXED_BUDGET", budget)
        gpu = gpusim.GPU("teaching", codegen="none")
        out = gpu.zeros(3 * 96, np.uint32)
        gpu.launch(gpu.load_ptx(CLOCK)["clk"], grid=3, block=96, args=[out, np.uint32(20)], timing=False)
        results.append(out.get())
    # warp v of a block loops 20 + v times (3 instructions each) after 7 set-up instructions; warps run
    # to the barrier one after another, so at the barrier the block has executed sum over warps
    executed_at_barrier = sum(6 + 3 * (20 + v) + 1 for v in range(3))
    assert results[0].min() == executed_at_barrier
    for other in results[1:]:
        np.testing.assert_array_equal(results[0], other)


# ------------------------------------------------------------------------------------------------ progress
def test_progress_reports_blocks_and_cycles(monkeypatch):
    monkeypatch.setattr(slices, "FIXED_BUDGET", 200)
    gpu = gpusim.GPU("teaching", codegen="none")
    host = np.arange(1024, dtype=np.uint32)
    src, dst = gpu.to_device(host), gpu.zeros(1024, np.uint32)
    seen = []
    run = gpu.load_ptx(ADD_ONE)["add_one"][8, 128](src, dst, progress=seen.append)   # k[grid, block] too
    assert seen and all(p.blocks == 8 and p.kernel == "add_one" for p in seen)
    assert all(0 <= p.blocks_done <= 8 and 0 < p.cycles <= run.cycles for p in seen)
    assert all(0 < p.warp_instructions <= run.warp_instructions for p in seen)
    assert [p.blocks_done for p in seen] == sorted(p.blocks_done for p in seen)


def test_a_short_run_prints_no_progress(capsys):
    gpu = gpusim.GPU("teaching", codegen="none")
    src, dst = gpu.to_device(np.arange(1024, dtype=np.uint32)), gpu.zeros(1024, np.uint32)
    gpu.launch(gpu.load_ptx(ADD_ONE)["add_one"], grid=8, block=128, args=[src, dst], progress=True)
    assert capsys.readouterr().err == ""


@TIMING
def test_progress_true_prints_lines_when_stderr_is_not_a_terminal(timing, monkeypatch, capsys):
    monkeypatch.setattr(slices, "FIXED_BUDGET", 100)
    monkeypatch.setattr(P, "SHOW_AFTER_SECONDS", 0.0)
    gpu = gpusim.GPU("teaching", codegen="none")
    src, dst = gpu.to_device(np.arange(1024, dtype=np.uint32)), gpu.zeros(1024, np.uint32)
    gpu.launch(gpu.load_ptx(ADD_ONE)["add_one"], grid=8, block=128, args=[src, dst], progress=True,
               timing=timing)
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1           # one line per REPEAT_SECONDS when not a terminal
    assert re.search(r"kernel 'add_one': \d/8 blocks", lines[0])
    assert ("cycles" in lines[0]) == timing


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("use_rich", [True, False])
def test_the_terminal_display_is_removed_when_the_run_ends(use_rich, monkeypatch):
    monkeypatch.setattr(P, "SHOW_AFTER_SECONDS", 0.0)
    monkeypatch.setattr(P._Display, "_tqdm", lambda self, p: False)   # tqdm's bar: tests/test_notebook.py
    if not use_rich:
        monkeypatch.setattr(P._Display, "_rich", lambda self, p: False)
    stream = _Terminal()
    reporter = P.ProgressReporter(True, "k", 10, stream=stream)
    reporter.report(3, 12345, 67890)
    reporter.report(4, 22345, 77890)
    shown = stream.getvalue()
    assert "4/10 blocks" in shown and "77.89 k" in shown
    reporter.close()
    if not use_rich:
        assert shown.count("\r") == 2 and stream.getvalue().endswith("\r")


def test_progress_takes_only_bools_and_functions():
    gpu = gpusim.GPU("teaching", codegen="none")
    with pytest.raises(LaunchError, match="progress="):
        gpu.launch(gpu.load_ptx(ADD_ONE)["add_one"], grid=1, block=32,
                   args=[gpu.zeros(32, np.uint32), gpu.zeros(32, np.uint32)], progress="yes")


def test_progress_line_format():
    p = P.Progress(kernel="k", blocks_done=25, blocks=100, warp_instructions=3_400_000, cycles=1_250_000_000,
                   elapsed_s=4.2)
    assert p.fraction == 0.25
    assert p.line() == ("gpusim: kernel 'k': 25/100 blocks (25.0%), 1.25 G cycles, 3.40 M warp-instructions, "
                        "4 s (Ctrl-C stops)")


# ------------------------------------------------------------------------------------------------ limits
def test_shipped_configs_limit_a_launch_to_50_ms_of_gpu_time():
    for name in gpusim.list_configs():
        config = gpusim.load_config(name)
        assert config.max_cycles == round(0.050 * config.core_clock_mhz * 1e6), name


def test_the_timed_limit_says_how_to_raise_it_and_where_the_kernel_loops():
    gpu = gpusim.GPU("teaching", codegen="none", max_cycles=5000)
    with pytest.raises(SimulationLimitError) as info:
        _spin(gpu, True)
    text = str(info.value)
    assert "max_cycles (5,000 cycles" in text and "GPU('teaching', max_cycles=N)" in text
    assert "0 of 8 blocks done" in text
    # nearly all instructions are the loop's two
    assert re.search(r"`add.u32 %r1, %r1, 1;?`: [\d,]+ warp-instructions \((49|50)%\)", text), text
    assert "bra.uni" in text
    _add_one_works(gpu, True)


def test_the_functional_limit_says_how_to_raise_it():
    gpu = gpusim.GPU("teaching", codegen="none")
    with pytest.raises(SimulationLimitError) as info:
        gpu.launch(gpu.load_ptx(SPIN)["spin"], grid=8, block=128, args=[gpu.zeros(1, np.uint32)], timing=False,
                   max_warp_instructions=10_000)
    text = str(info.value)
    assert "stopped after 10,000 warp-instructions" in text and "max_warp_instructions=" in text
    assert "in block 0 (0 of 8 blocks done)" in text and "bra.uni" in text
    _add_one_works(gpu, False)
