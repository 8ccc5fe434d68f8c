"""setmaxnreg and griddepcontrol (Hopper, issue 25): the forms nvcc 13 emits load and run on both paths with
numpy's result; the PTX ISA's rules on their operands and targets are errors naming the line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import PTXSyntaxError, UnsupportedPTXError

KERNEL = Path(__file__).parent / "data" / "hopper" / "launch_control.ptx"


@pytest.fixture(scope="module")
def gpu():
    return gpusim.GPU("h100-sxm")


@pytest.mark.parametrize("timing", [False, True])
def test_warp_specialised_kernel_runs_like_numpy(gpu, timing):
    text = KERNEL.read_text()
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in text and "griddepcontrol.wait;" in text
    mod = gpu.load(str(KERNEL))
    n = 1000
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    dx, dy = gpu.to_device(x), gpu.empty(n, np.float32)
    run = gpu.launch(mod["scale"], (4,), (256,), [dx, dy, np.float32(2.0), n], timing=timing)
    expect = np.float32(2.0) * x + (np.arange(n) % 256 >= 128).astype(np.float32)   # warpgroup 1 adds 1
    np.testing.assert_array_equal(dy.to_host(), expect)
    assert run.warp_instructions > 0


def _module(body: str, target: str = "sm_90a") -> str:
    return (f".version 8.0\n.target {target}\n.address_size 64\n\n.visible .entry k()\n{{\n{body}\n"
            "\tret;\n}\n")


@pytest.mark.parametrize("count", [24, 256, 128])
def test_setmaxnreg_accepts_the_isa_range(gpu, count):
    gpu.load_ptx(_module(f"\tsetmaxnreg.inc.sync.aligned.u32 {count};"))["k"]


@pytest.mark.parametrize("count", [16, 23, 100, 264])
def test_setmaxnreg_count_outside_the_isa_range(gpu, count):
    with pytest.raises(PTXSyntaxError, match=r"24\.\.256 and a multiple of 8") as info:
        gpu.load_ptx(_module(f"\tsetmaxnreg.dec.sync.aligned.u32 {count};"))["k"]
    assert info.value.line == 7


def test_setmaxnreg_needs_an_architecture_specific_target(gpu):
    with pytest.raises(UnsupportedPTXError, match="sm_90a"):
        gpu.load_ptx(_module("\tsetmaxnreg.inc.sync.aligned.u32 64;", target="sm_90"))["k"]


def test_setmaxnreg_form(gpu):
    with pytest.raises(PTXSyntaxError, match=r"setmaxnreg\.\{inc,dec\}\.sync\.aligned\.u32"):
        gpu.load_ptx(_module("\tsetmaxnreg.inc.u32 64;"))["k"]


def test_griddepcontrol_needs_sm_90(gpu):
    with pytest.raises(UnsupportedPTXError, match="sm_90"):
        gpu.load_ptx(_module("\tgriddepcontrol.wait;", target="sm_80"))["k"]
    with pytest.raises(PTXSyntaxError, match="launch_dependents"):
        gpu.load_ptx(_module("\tgriddepcontrol.arrive;"))["k"]
