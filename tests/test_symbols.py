"""Module.symbol: DeviceArrays over a module's __constant__ / __device__ variables (cudaMemcpyToSymbol,
cudaMemcpyFromSymbol, cudaGetSymbolAddress). Kernels: tests/ptx/calls/symbols.cu."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import LaunchError, SymbolNotFoundError

HERE = Path(__file__).parent / "ptx" / "calls"
MODES = [pytest.param(False, id="functional"), pytest.param(True, id="timed")]


@pytest.fixture()
def gpu():
    return gpusim.GPU("h100-sxm", sms=2)


def test_initial_contents_are_the_ptx_initializers(gpu):
    mod = gpu.load(HERE / "symbols.ptx")
    assert sorted(mod.symbols) == ["coeffs", "counter", "table"]
    np.testing.assert_array_equal(mod.symbol("coeffs", np.float32).to_host(), [1, 2, 3, 4])
    np.testing.assert_array_equal(mod.symbol("table", np.int32).get(), np.arange(10, 18))
    assert mod.symbol("counter").get().tolist() == [0]
    raw = mod.symbol("coeffs")            # nvcc declares the array as .b8 coeffs[16]
    assert raw.dtype == np.uint8 and raw.shape == (16,)
    np.testing.assert_array_equal(raw.get().view(np.float32), [1, 2, 3, 4])


@pytest.mark.parametrize("timing", MODES)
def test_writes_are_seen_by_the_next_launch(gpu, timing):
    mod = gpu.load(HERE / "symbols.ptx")
    n = 64
    x = np.linspace(-1, 1, n, dtype=np.float32)
    out = gpu.zeros(n, np.float32)

    def poly(c):        # nvcc contracts s += c * p into fma.rn.f32: equal to numpy's to within an ulp or two
        return sum(np.float64(c[k]) * x.astype(np.float64) ** k for k in range(4))

    mod.k_poly[2, 32](gpu.to_device(x), out, np.int32(n), timing=timing)
    np.testing.assert_allclose(out.get(), poly([1, 2, 3, 4]), rtol=1e-6, atol=1e-6)
    assert mod.symbol("counter").get().tolist() == [n]
    new = np.array([0.5, -1, 0, 2], np.float32)
    mod.symbol("coeffs", np.float32).set(new)            # cudaMemcpyToSymbol
    mod.symbol("counter").set(np.array([1000], np.uint32))
    mod.k_poly[2, 32](gpu.to_device(x), out, np.int32(n), timing=timing)
    np.testing.assert_allclose(out.get(), poly(new), rtol=1e-6, atol=1e-6)
    assert mod.symbol("counter").get().tolist() == [1000 + n]


@pytest.mark.parametrize("timing", MODES)
def test_the_address_as_a_kernel_argument(gpu, timing):
    mod = gpu.load(HERE / "symbols.ptx")
    table = mod.symbol("table", np.int32)
    table.set(np.arange(8, dtype=np.int32) * 100)
    idx = np.array([7, 0, 3, 3, 1, 6, 2, 5, 4, 0], np.int32)
    out = gpu.zeros(len(idx), np.int32)
    mod.k_gather[1, 32](table, gpu.to_device(idx), out, np.int32(len(idx)), timing=timing)   # a pointer argument
    np.testing.assert_array_equal(out.get(), 2 * 100 * idx)
    assert table.address == table.ptr == mod.symbol("table").ptr


def test_unknown_names_and_misuse(gpu):
    mod = gpu.load(HERE / "symbols.ptx")
    with pytest.raises(SymbolNotFoundError, match="did you mean 'table'") as info:
        mod.symbol("tabel")
    assert isinstance(info.value, KeyError) and "symbols.ptx" in str(info.value)
    assert "coeffs, counter, table" in str(info.value)
    with pytest.raises(LaunchError, match="cannot be freed"):
        mod.symbol("table").free()
    with pytest.raises(LaunchError, match="not a whole number"):
        mod.symbol("counter", np.float64)                # a 4-byte variable
    with pytest.raises(LaunchError, match="cannot copy"):
        mod.symbol("coeffs", np.float32).set(np.zeros(5, np.float32))
