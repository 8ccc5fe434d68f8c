"""gpusim.jit: numba.cuda kernels compiled by numba-cuda and run on gpusim (skipped without numba-cuda).

Every result is checked against numpy; source lines against the kernel's own Python text.
"""

from __future__ import annotations

import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gpusim

if importlib.util.find_spec("numba_cuda") is None:
    pytest.skip("numba-cuda is not installed: pip install 'gpusim[numba-cuda]'", allow_module_level=True)

from numba import cuda  # noqa: E402

from gpusim.frontends import numba_cuda as nc  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module            # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


PUZZLES = _load_example("gpu_puzzles")


@pytest.mark.parametrize("puzzle", PUZZLES.PUZZLES, ids=lambda p: p.name)
def test_puzzle_matches_numpy(puzzle):
    run, got, expected = PUZZLES.solve(puzzle)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert run.cycles > 0 and run.timing


def line_of(func, text: str) -> int:
    """The file line of the first line of ``func``'s source that contains ``text``."""
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, line in enumerate(lines) if text in line)


@gpusim.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def test_source_view_names_the_python_lines():
    n = 1000
    x, y, out = np.arange(n, dtype=np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)
    run = saxpy[(n + 255) // 256, 256](np.float32(3.0), x, y, out)
    np.testing.assert_allclose(out, 3 * x + y)
    store_line = line_of(saxpy.py_func, "out[i] =")
    rows = run.source_view().rows
    stores = [r for r in rows if r.opcode == "st" and r.source == f"{Path(__file__).name}:{store_line}"]
    assert len(stores) == 1 and stores[0].thread_inst == n      # one store per thread inside the guard
    _, first = inspect.getsourcelines(saxpy.py_func)
    last = first + len(inspect.getsourcelines(saxpy.py_func)[0])
    lines = {int(r.source.rsplit(":", 1)[1]) for r in rows if r.source}
    assert lines and all(first <= line < last for line in lines)   # no line 0, nothing outside the kernel


@gpusim.jit
def scale_rows(a, out):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] * 2 + i


@gpusim.jit
def volume(a, out):
    i, j, k = cuda.grid(3)
    if i < a.shape[0] and j < a.shape[1] and k < a.shape[2]:
        out[i, j, k] = a[i, j, k] + i * 100 + j * 10 + k


@pytest.mark.parametrize("make", [
    lambda: np.arange(30, dtype=np.float32).reshape(5, 6),
    lambda: np.asfortranarray(np.arange(30, dtype=np.float64).reshape(5, 6)),
    lambda: np.arange(80, dtype=np.int32).reshape(8, 10)[1::2, ::-3],
    lambda: np.arange(30, dtype=np.int16).reshape(6, 5).T,
    lambda: np.arange(30, dtype=np.uint8).reshape(5, 6),
], ids=["f32-C", "f64-F", "i32-strided-negative", "i16-transposed", "u8"])
def test_array_abi_dtypes_orders_strides(make):
    a = make()
    out = np.zeros(a.shape, a.dtype)
    scale_rows[(1, 1), (8, 8)](a, out)
    rows = np.arange(a.shape[0])[:, None]
    np.testing.assert_array_equal(out, (a * 2 + rows).astype(a.dtype))


def test_three_dimensions_and_a_strided_output():
    a = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    backing = np.zeros((2, 3, 8), np.float32)
    out = backing[:, :, ::2]                    # the kernel writes through the view's strides
    volume[(1, 1, 1), (2, 4, 4)](a, out)
    i, j, k = np.indices(a.shape)
    np.testing.assert_array_equal(out, a + i * 100 + j * 10 + k)
    assert not backing[:, :, 1::2].any()        # the elements between the view's are untouched


@gpusim.jit
def scalars(out, i64, f64, flag, z):
    out[0] = i64
    out[1] = f64
    out[2] = 1.0 if flag else -1.0
    out[3] = z.real
    out[4] = z.imag


def test_scalar_arguments_take_numbas_types():
    out = np.zeros(5)
    scalars[1, 1](out, -7, 2.5, True, complex(1.5, -4.0))
    np.testing.assert_array_equal(out, [-7, 2.5, 1.0, 1.5, -4.0])


def test_device_arrays_stay_on_the_device():
    gpu = saxpy.gpu
    x = gpu.to_device(np.arange(64, dtype=np.float32))
    y = gpu.to_device(np.ones(64, np.float32))
    out = gpu.empty(64, np.float32)
    saxpy[1, 64](np.float32(2.0), x, y, out)
    np.testing.assert_allclose(out.get(), 2 * np.arange(64) + 1)


@gpusim.jit
def ballot_and_local(out):
    scratch = cuda.local.array(4, np.int32)
    lane = cuda.threadIdx.x
    for k in range(4):
        scratch[k] = lane * k
    mask = cuda.ballot_sync(0xFFFFFFFF, lane % 3 == 0)
    out[lane] = scratch[3] + (mask == 0x49249249)


def test_warp_ballot_and_local_arrays():
    out = np.zeros(32, np.int32)
    ballot_and_local[1, 32](out)
    expected_mask = sum(1 << lane for lane in range(32) if lane % 3 == 0)
    assert expected_mask == 0x49249249
    np.testing.assert_array_equal(out, np.arange(32) * 3 + 1)


@gpusim.jit
def checked(x, out):
    i = cuda.grid(1)
    if x[i] < 0:
        raise ValueError("negative input")
    out[i] = x[i] * 2


def test_a_raise_is_the_projects_error_with_the_python_line():
    x = np.ones(64, np.float32)
    x[37] = -1
    with pytest.raises(gpusim.KernelExceptionError) as caught:
        checked[1, 64](x, np.zeros(64, np.float32))
    error = caught.value
    assert error.exception is ValueError and error.exception_args == ("negative input",)
    assert Path(error.file).name == Path(__file__).name and error.line == line_of(checked.py_func, "raise")
    assert error.thread == (37, 0, 0) and error.block == (0, 0, 0)
    out = np.zeros(64, np.float32)
    checked[1, 64](np.ones(64, np.float32), out)   # the next launch starts with a clear error code
    np.testing.assert_array_equal(out, 2)


def test_compile_is_cached_per_signature():
    a = np.ones(8, np.float32)
    scale_rows_count = len(nc._COMPILED)
    ptx_f32 = checked.ptx(a, a)
    assert checked.ptx(a, a) is ptx_f32 and ".loc" in ptx_f32
    after_one = len(nc._COMPILED)
    checked.ptx(a.astype(np.float64), a.astype(np.float64))
    assert len(nc._COMPILED) == after_one + 1 >= scale_rows_count + 1


def test_wrapping_a_numba_cuda_kernel_takes_its_python_function():
    def add_one(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    wrapped = gpusim.jit(cuda.jit(add_one))
    a = np.arange(10, dtype=np.float32)
    wrapped[1, 32](a)
    np.testing.assert_array_equal(a, np.arange(10) + 1)


def test_user_mistakes_are_the_projects_errors():
    with pytest.raises(gpusim.LaunchError, match="launch configuration"):
        checked(np.ones(4), np.ones(4))
    with pytest.raises(gpusim.LaunchError, match="stream"):
        checked[1, 4, 1](np.ones(4), np.ones(4))
    with pytest.raises(gpusim.LaunchError, match="cannot pass a list"):
        checked[1, 4]([1, 2], np.ones(4))

    @gpusim.jit
    def untypable(a):
        a[0] = "text"

    with pytest.raises(gpusim.KernelCompileError, match="could not compile kernel 'untypable'"):
        untypable[1, 1](np.ones(1))
    with pytest.raises(gpusim.KernelCompileError, match="eager signature"):
        gpusim.jit("void(float32[:])")
    with pytest.raises(gpusim.IllegalAddressError):
        saxpy[1, 64](np.float32(1), np.ones(64, np.float32), np.ones(8, np.float32), np.ones(64, np.float32))


def test_gpu_choice_sets_the_compute_capability():
    kernel = gpusim.jit(gpu="a100")(checked.py_func)
    assert kernel.gpu.config.name.startswith("a100") and ".target sm_80" in kernel.ptx(np.ones(4), np.ones(4))
    assert ".target sm_90" in checked.ptx(np.ones(4), np.ones(4))


def test_import_gpusim_loads_no_compiler_and_numba_cuda_leaves_the_engine_alone():
    script = (
        "import sys, numpy as np, gpusim\n"
        "assert 'numba_cuda' not in sys.modules and 'triton' not in sys.modules\n"
        "def timed():\n"
        "    gpu = gpusim.GPU('h100-sxm', sms=2)\n"
        f"    k = gpu.load(r'{ROOT / 'programs' / 'daxpy.ptx'}')['daxpy']\n"
        "    n = 4096\n"
        "    x, y = gpu.to_device(np.ones(n)), gpu.to_device(np.arange(n, dtype=np.float64))\n"
        "    run = gpu.launch(k, grid=n // 256, block=256, args=[np.int32(n), np.float64(2.0), x, y])\n"
        "    return run.cycles, run.stalls, {k: v for k, v in run.metrics.items()}, y.get()\n"
        "before = timed()\n"
        "from numba import cuda\n"
        "@gpusim.jit\n"
        "def k(a):\n"
        "    a[cuda.grid(1)] += 1\n"
        "k[1, 32](np.zeros(32))\n"
        "after = timed()\n"
        "assert before[0] == after[0] and before[1] == after[1], (before[:2], after[:2])\n"
        "assert before[2] == after[2]\n"
        "assert (before[3] == after[3]).all()\n"
        "print('same')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert result.returncode == 0 and "same" in result.stdout, result.stderr[-3000:]
