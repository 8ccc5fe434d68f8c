"""Python API mistakes end in the project's own errors: kernel-name typos, timing of a functional run, the
trace of an untraced run."""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.programs.catalog import programs_dir


@pytest.fixture(scope="module")
def gpu_and_module():
    gpu = gpusim.GPU("teaching")
    return gpu, gpu.load(programs_dir() / "vecadd.ptx")


def test_kernel_typo_by_index_is_a_gpusim_key_error(gpu_and_module):
    _, mod = gpu_and_module
    with pytest.raises(gpusim.KernelNotFoundError) as caught:
        mod["vecad"]
    error = caught.value
    assert isinstance(error, KeyError) and isinstance(error, gpusim.GpusimError)
    text = str(error)
    assert "vecadd.ptx" in text and "its kernels: vecadd" in text and "did you mean 'vecadd'?" in text
    with pytest.raises(KeyError):  # code written against KeyError keeps working
        mod["nothing_like_it"]
    with pytest.raises(gpusim.KernelNotFoundError) as far:
        mod["zzzz"]
    assert "did you mean" not in str(far.value)


def test_kernel_typo_by_attribute_is_also_an_attribute_error(gpu_and_module):
    _, mod = gpu_and_module
    with pytest.raises(AttributeError, match="did you mean 'vecadd'"):
        _ = mod.vecad
    with pytest.raises(gpusim.KernelNotFoundError):
        _ = mod.vecad
    assert not hasattr(mod, "vecad") and getattr(mod, "vecad", None) is None
    assert mod.vecadd is mod["vecadd"] and "vecadd" in dir(mod)


def _launch(gpu, mod, **kw):
    n = 64
    a = gpu.to_device(np.arange(n, dtype=np.float32))
    c = gpu.empty(n, np.float32)
    run = mod["vecadd"][1, n](a, a, c, np.int32(n), **kw)
    assert np.array_equal(c.get(), 2 * np.arange(n, dtype=np.float32))
    return run


def test_functional_run_has_no_cycles(gpu_and_module):
    run = _launch(*gpu_and_module, timing=False)
    for attribute in ("cycles", "seconds"):
        with pytest.raises(gpusim.NoTimingError, match="timing=True"):
            getattr(run, attribute)
    assert "functional run" in run.report() and "functional" in repr(run)
    assert run.to_dict()["cycles"] is None and run.to_dict()["timing"] is False


def test_timed_run_keeps_the_contract(gpu_and_module):
    gpu, mod = gpu_and_module
    run = _launch(gpu, mod)
    assert isinstance(run.cycles, int) and run.cycles > 0
    assert run.seconds == run.cycles / gpu.config.clock_hz


def test_trace_of_an_untraced_run_says_how_to_record_one(gpu_and_module, tmp_path):
    gpu, mod = gpu_and_module
    run = _launch(gpu, mod)
    assert not run.has_trace
    with pytest.raises(gpusim.NoTraceError, match="trace=True"):
        run.trace.to_chrome(tmp_path / "t.json")
    assert "Verdict" in run.report()  # the report does not need a trace
    traced = _launch(gpu, mod, trace=True)
    assert traced.has_trace and traced.trace.to_chrome(tmp_path / "t.json").exists()
