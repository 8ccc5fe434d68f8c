"""A launch runs as a series of engine calls (slices), each stopping after a budget of work and resuming
where the last stopped. However the run is cut, its results must be bit-identical to one uninterrupted
call: cycles, every counter, stalls, per-pc tables, traces, memory contents, metrics."""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.launch import slices
from gpusim.programs.catalog import load_program, run_program

# pipes, shared memory, global memory, barriers, shuffles, atomics, divergence, local memory, FP64
PROGRAMS = ("saxpy", "daxpy", "reduce_shared", "reduce_shfl", "histogram", "transpose_naive", "divergence",
            "matmul_tiled", "hash64", "stencil2d", "gemm_batched", "pointer_chase")
ONE_CALL = 1 << 40     # more work than any of these runs: the whole run in a single engine call


def _run(name: str, budget: int, monkeypatch, *, timing: bool, scheduler: str = "gto", trace: bool = False,
         threads: int | None = None):
    monkeypatch.setattr(slices, "FIXED_BUDGET", budget)
    spec = load_program(name)
    gpu = gpusim.GPU(spec.config, sms=2, scheduler=scheduler, threads=threads)
    calls = []
    result = run_program(spec, gpu=gpu, timing=timing, trace=trace, progress=calls.append)
    assert result.ok, result.summary()
    return result, len(calls)


def _assert_identical(a, b) -> None:
    for name in a.arrays:
        np.testing.assert_array_equal(a.arrays[name], b.arrays[name])
    for x, y in zip(a.runs, b.runs, strict=True):
        np.testing.assert_array_equal(x.pc_counts, y.pc_counts)
        assert x.timing == y.timing
        assert x.warp_instructions == y.warp_instructions
        assert x.counters == y.counters
        assert x.stalls == y.stalls
        if x.timing:
            assert x.cycles == y.cycles
            np.testing.assert_array_equal(x.pc_stalls, y.pc_stalls)
            np.testing.assert_array_equal(x.pc_memory, y.pc_memory)
            assert x.metrics == y.metrics
        assert x.has_trace == y.has_trace
        if x.has_trace:
            np.testing.assert_array_equal(x.trace.raw_intervals, y.trace.raw_intervals)
            np.testing.assert_array_equal(x.trace.raw_issues, y.trace.raw_issues)
            np.testing.assert_array_equal(x.trace.raw_memory, y.trace.raw_memory)


@pytest.mark.parametrize("trace", [False, True])
@pytest.mark.parametrize("scheduler", ["gto", "lrr", "two_level"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_a_timed_run_cut_into_slices_equals_one_call(name, scheduler, trace, monkeypatch):
    whole, whole_calls = _run(name, ONE_CALL, monkeypatch, timing=True, scheduler=scheduler, trace=trace)
    cut, cut_calls = _run(name, 97, monkeypatch, timing=True, scheduler=scheduler, trace=trace)
    assert whole_calls == 0          # the progress callback runs after each slice that did not finish
    assert cut_calls > len(cut.runs)  # so these runs really were cut, most of them several times
    _assert_identical(whole, cut)


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("name", PROGRAMS)
def test_a_functional_run_cut_into_slices_equals_one_call(name, threads, monkeypatch):
    whole, whole_calls = _run(name, ONE_CALL, monkeypatch, timing=False, threads=threads)
    cut, cut_calls = _run(name, 13, monkeypatch, timing=False, threads=threads)
    assert whole_calls == 0
    assert cut_calls > len(cut.runs)
    _assert_identical(whole, cut)


@pytest.mark.parametrize("timing", [True, False])
def test_the_smallest_budget_cuts_after_every_step(timing, monkeypatch):
    """Budget 1: a timed slice ends after every cycle it evaluates (each issues at most one warp-instruction
    per scheduler), a functional one after every warp-instruction; the result is still the same. (One thread:
    on several, functional slices run in rounds and progress comes once a round, tests/test_functional_threads.)"""
    whole, _ = _run("reduce_shared", ONE_CALL, monkeypatch, timing=timing, threads=1)
    cut, calls = _run("reduce_shared", 1, monkeypatch, timing=timing, threads=1)
    _assert_identical(whole, cut)
    instructions = sum(run.warp_instructions for run in cut.runs)
    if timing:
        config = cut.runs[0].config
        assert calls >= instructions // (config.sms * config.sub_partitions_per_sm) - len(cut.runs)
    else:
        assert calls == instructions - len(cut.runs)    # each launch's last instruction ends its run


def test_budgets_scale_to_the_target_slice_time():
    assert slices.next_budget(10_000, slices.SLICE_SECONDS) == 10_000
    assert slices.next_budget(10_000, 2 * slices.SLICE_SECONDS) == 5_000
    assert slices.next_budget(10_000, slices.SLICE_SECONDS / 4) == 40_000
    assert slices.next_budget(10_000, slices.SLICE_SECONDS / 100) == 80_000   # at most 8-fold per slice
    assert slices.next_budget(10_000, 0.0) == 80_000
    assert slices.next_budget(10_000, 1e6) == 1000                             # never below 1000
    assert slices.next_budget(slices.MAX_BUDGET, 0.0) == slices.MAX_BUDGET


def test_adaptive_budgets_give_the_same_run(monkeypatch):
    """The budget adapts to measured wall time (different from run to run); the results may not."""
    fixed, _ = _run("matmul_tiled", ONE_CALL, monkeypatch, timing=True)
    monkeypatch.setattr(slices, "FIRST_BUDGET", 50)
    adaptive, calls = _run("matmul_tiled", None, monkeypatch, timing=True)
    assert calls > 0
    _assert_identical(fixed, adaptive)
