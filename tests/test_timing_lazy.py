"""The timed loop charges a warp whose operands are ready lazily (it is parked until its scheduler picks it;
the not_selected and pipe-throttle cycles in between are charged in total from the pipe's busy history).
With tracing on, every warp is evaluated every cycle and each interval recorded. The two must agree to the
warp-cycle: same cycles, same stall totals, same per-instruction stalls, same metrics."""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.programs.catalog import load_program, run_program

# kernels that exercise the pipes (FMA/ALU/SFU/FP64), shared memory (MIO), global memory (LSU, MSHRs),
# barriers, shuffles, atomics and divergence
PROGRAMS = ("saxpy", "daxpy", "reduce_shared", "reduce_shfl", "histogram", "transpose_naive", "divergence",
            "matmul_tiled", "hash64", "stencil2d")


def _runs(name: str, scheduler: str, trace: bool):
    spec = load_program(name)
    gpu = gpusim.GPU(spec.config, sms=2, scheduler=scheduler)
    result = run_program(spec, gpu=gpu, trace=trace)
    assert result.ok, result.summary()
    return result.runs


@pytest.mark.parametrize("scheduler", ["gto", "lrr", "two_level", "oldest_first"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_lazy_accounting_equals_the_per_cycle_trace(name: str, scheduler: str):
    lazy_runs = _runs(name, scheduler, trace=False)
    traced_runs = _runs(name, scheduler, trace=True)
    for lazy, traced in zip(lazy_runs, traced_runs, strict=True):
        assert lazy.cycles == traced.cycles
        assert lazy.stalls == traced.stalls
        np.testing.assert_array_equal(lazy.pc_stalls, traced.pc_stalls)
        assert lazy.metrics == traced.metrics


@pytest.mark.parametrize("name", ["saxpy", "histogram", "matmul_tiled"])
def test_lazy_accounting_equals_the_trace_on_a_multi_sm_slice(name: str):
    """Four SMs of h100-sxm, whose requests meet in the shared L2 and DRAM: lazy and traced runs agree to
    the warp-cycle. Each run has a GPU of its own, so its buffers sit at the same heap addresses (the memory
    timing depends on addresses: buffers allocated afresh for a second launch on one GPU may time otherwise
    in either mode)."""
    spec = load_program(name)
    runs = [run_program(spec, gpu=gpusim.GPU("h100-sxm", sms=4), trace=trace) for trace in (False, True)]
    assert all(result.ok for result in runs)
    for lazy, traced in zip(runs[0].runs, runs[1].runs, strict=True):
        assert lazy.cycles == traced.cycles
        assert lazy.stalls == traced.stalls
        np.testing.assert_array_equal(lazy.pc_stalls, traced.pc_stalls)
        assert lazy.metrics == traced.metrics


def test_parked_warps_are_charged_throttle_while_their_pipe_is_busy():
    """Many warps of independent FFMAs on one sub-partition: the FMA pipe takes one warp-instruction every
    pipe_interval cycles, so ready warps spend the other cycles throttled, and the lazy totals show it."""
    from tests.timing_kernels import dependent_ffma

    gpu = gpusim.GPU("h100-sxm", sms=1)
    kernel = gpu.load_ptx(dependent_ffma(64))["chain"]
    out = gpu.zeros(1, np.float32)
    lazy = gpu.launch(kernel, grid=1, block=32 * 32, args=[out])
    traced = gpu.launch(kernel, grid=1, block=32 * 32, args=[out], trace=True)
    assert lazy.stalls == traced.stalls
    assert lazy.stalls["math_pipe_throttle"] > 0
    assert lazy.stalls["not_selected"] > 0
