"""The published reduction's rolled loop (validation/kernels/reduce_restrict.cu, case reduce_h100).

With a ``__restrict__`` input and the grid-stride step written in the loop, nvcc keeps the loop rolled: one load
per thread in flight. Memory-level parallelism then bounds the scalar form's bandwidth by Little's law, a bound
read from the config alone; the int2 form moves twice the bytes per load and escapes it. memory.cu's reduce_*
kernels (no ``__restrict__``) are unrolled four times, which is why the H200 case reaches DRAM speed with int
loads and the H100 case's published scalar figure does not."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import gpusim

KERNELS = Path(__file__).resolve().parent.parent / "validation" / "kernels"


def _entry(ptx: str, name: str) -> str:
    start = ptx.index(f".entry {name}(")
    return ptx[start:ptx.index("\n}", start)]


def _loop_loads(body: str) -> list[int]:
    """Global loads between each backward branch's target label and the branch (the loop bodies)."""
    counts = []
    lines = body.splitlines()
    for i, line in enumerate(lines):
        match = re.search(r"bra(?:\.uni)?\s+(\$L__BB\w+);", line)
        if not match:
            continue
        label = next((j for j in range(i) if lines[j].startswith(match.group(1) + ":")), None)
        if label is not None:    # a label before the branch: a loop
            counts.append(sum("ld.global" in text for text in lines[label:i]))
    return counts


@pytest.mark.parametrize("name", ["reduce_nc_block_w1", "reduce_nc_block_w2", "reduce_nc_block_w4",
                                  "reduce_nc_warp_w1", "reduce_nc_warp_w2", "reduce_nc_warp_w4"])
def test_published_form_keeps_one_nc_load_per_iteration(name):
    body = _entry((KERNELS / "reduce_restrict.ptx").read_text(), name)
    assert _loop_loads(body) == [1], "the grid-stride loop holds exactly one load"
    assert "ld.global.nc" in body, "a __restrict__ const input is read through the non-coherent path"


def test_memory_cu_form_is_unrolled_four_times():
    body = _entry((KERNELS / "memory.ptx").read_text(), "reduce_block_w1")
    assert max(_loop_loads(body)) == 4


def _bandwidth(gpu, kernel, n, blocks, threads):
    x = np.random.default_rng(7).integers(-100, 100, n, dtype=np.int32)
    dx, dout = gpu.to_device(x), gpu.zeros(1, np.int32)
    run = gpu.launch(kernel, grid=(blocks,), block=(threads,), args=[dx, dout, np.int32(n)])
    assert int(dout.get()[0]) == int(x.sum())
    return 4.0 * n / run.cycles, run


def test_one_load_in_flight_per_thread_bounds_the_scalar_form():
    gpu = gpusim.GPU("h100-sxm", sms=1)
    module = gpu.load(str(KERNELS / "reduce_restrict.ptx"))
    threads, blocks, n = 512, 4, 1 << 19
    scalar, run = _bandwidth(gpu, module["reduce_nc_block_w1"], n, blocks, threads)
    wide, _ = _bandwidth(gpu, module["reduce_nc_block_w2"], n, blocks, threads)
    cfg = gpu.config
    warps = min(blocks * threads // 32, cfg.max_warps_per_sm)
    little = warps * 32 * 4 / cfg.dram_latency_cycles     # bytes per cycle with one 4-byte load per thread in flight
    assert scalar <= little * 1.02, (scalar, little)
    assert wide >= 1.2 * scalar, (wide, scalar)
