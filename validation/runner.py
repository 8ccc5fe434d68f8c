"""Runs one case's points on gpusim and turns each run into the published figure's unit.

Every family launches a kernel of validation/kernels/ on ``GPU(config, sms=k)``: a proportional slice of the chip
(``sms`` of its SMs with their share of L2 and DRAM bandwidth). The grid is sized so that each SM runs the number
of resident-block waves the case asks for (``waves``), which is how the slice keeps the published run's per-SM
behaviour; the figure is scaled back to the whole chip by chip_sms / sms. What a case does differently from the
published run (smaller matrix, fewer waves) is written in its case file's ``simulated_size`` and in the report.

Simplifications: the kernel launch latency is inside the simulated time (as it is inside a cudaEvent-timed
published run); a slice's L2 holds only its share of the chip's L2, so a case's working set is chosen larger than
that share when the published run streamed from DRAM."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import gpusim
from gpusim.analytic import roofline, tensor_peaks

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"
SEED = 24


CONFIG_SCALE: dict[str, float] = {}
"""Config fields scaled for a sensitivity run (validation.sensitivity): field -> factor applied to the value the
slice has (a rate the slice shares out, such as ``l2_bytes_per_cycle``, is scaled after slicing). Empty: the
configs as they are."""


def _gpu(case, params, point=None):
    name, sms = _config_name(case, point), int((point or {}).get("sms", params["sms"]))
    if not CONFIG_SCALE:
        return gpusim.GPU(name, sms=sms)
    config = gpusim.load_config(name, sms=sms)
    return gpusim.GPU(config, **{field: scaled_value(getattr(config, field), factor)
                                 for field, factor in CONFIG_SCALE.items()})


def scaled_value(value, factor: float):
    """``value`` x ``factor``; an integer field stays an integer of at least 1 (a count: MSHRs, queue entries)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"only a numeric config field can be scaled, not {value!r}")
    if isinstance(value, int):
        return max(1, round(value * factor))
    return value * factor


def _config_name(case, point=None):
    """A point may run on another config than its case's (a table of several GPUs)."""
    return (point or {}).get("config", case.meta["config"])


def _resident_blocks(gpu, kernel, threads):
    occ = gpusim.occupancy(gpu.config, threads_per_block=threads, regs_per_thread=kernel.registers_per_thread()[0],
                           shared_bytes=int(kernel.program.shared_static_bytes))
    return max(1, occ.blocks_per_sm)


def _grid_2d(blocks, full_x):
    """A grid of `blocks` blocks taken in launch order from a full grid `full_x` wide."""
    if blocks <= full_x:
        return (blocks, 1)
    return (full_x, math.ceil(blocks / full_x))


def _scale(gpu):
    return gpu.config.chip_sms / gpu.config.sms


def _chip(case, point=None):
    return gpusim.GPU(_config_name(case, point)).config


def _roof_bandwidth(case):
    return roofline(_chip(case)).bandwidth_bytes_per_s["dram_sustained"]


SGEMM_SHAPES = {  # kernel: (threads, block tile rows, block tile cols, grid x walks rows?)
    "sgemm_naive": ((32, 32), 32, 32, True),
    "sgemm_coalesced": ((1024,), 32, 32, True),
    "sgemm_smem": ((1024,), 32, 32, True),
    "sgemm_blocktile_1d": ((512,), 64, 64, False),
    "sgemm_blocktile_2d": ((256,), 128, 128, False),
    "sgemm_vectorized": ((256,), 128, 128, False),
    "sgemm_bank_linear": ((256,), 128, 128, False),
    "sgemm_bank_offset": ((256,), 128, 128, False),
    "sgemm_autotuned": ((256,), 128, 128, False),
    "sgemm_warptiling": ((128,), 128, 128, False),
    "sgemm_double_buffering": ((256,), 128, 256, False),
}


def run_sgemm(case, point, params):
    """C = alpha A B + beta C at n x n, the first `waves` waves of blocks of the full grid; GFLOP/s."""
    gpu = _gpu(case, params)
    n = int(params["n"])
    kernel = gpu.load(str(KERNEL_DIR / case.meta["ptx"]))[point["kernel"]]
    block, rows, cols, x_rows = SGEMM_SHAPES[point["kernel"]]
    threads = int(np.prod(block))
    resident = _resident_blocks(gpu, kernel, threads)
    blocks = resident * gpu.config.sms * int(params["waves"])
    full_x = n // (rows if x_rows else cols)
    grid = _grid_2d(blocks, full_x)
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    da, db, dc = gpu.to_device(a), gpu.to_device(b), gpu.zeros(n * n, np.float32)
    run = gpu.launch(kernel, grid=grid, block=block, args=[np.int32(n), np.float32(1.0), da, db,
                                                           np.float32(0.0), dc])
    c = dc.get().reshape(n, n)
    ref = a[:rows] @ b[:, :cols]
    if not np.allclose(c[:rows, :cols], ref, rtol=1e-3, atol=1e-2):
        raise AssertionError(f"{point['kernel']}: wrong result in the first tile")
    launched = grid[0] * grid[1]
    flops = 2.0 * n * rows * cols * launched
    sim = flops / run.seconds * _scale(gpu) / 1e9
    dram = run.metrics["dram__bytes_read.sum"] + run.metrics["dram__bytes_write.sum"]
    roofs = roofline(_chip(case))
    analytic = roofs.attainable(flops / dram if dram else math.inf, "fp32", "dram_sustained") / 1e9
    return run, sim, analytic, {"grid": list(grid), "block": list(block), "resident_blocks_per_sm": resident,
                                "waves": int(params["waves"])}


def run_hgemm(case, point, params):
    """C (fp32) = A @ B (fp16, mma.sync m16n8k16) at n x n, 128 x 128 tiles, the first `waves` waves; TFLOP/s."""
    gpu = _gpu(case, params)
    n = int(params["n"])
    kernel = gpu.load(str(KERNEL_DIR / case.meta["ptx"]))[point["kernel"]]
    resident = _resident_blocks(gpu, kernel, 256)
    grid = _grid_2d(resident * gpu.config.sms * int(params["waves"]), n // 128)
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    dc = gpu.zeros(n * n, np.float32)
    run = gpu.launch(kernel, grid=grid, block=(256,), args=[gpu.to_device(a), gpu.to_device(b), dc, np.int32(n)])
    ref = a[:128].astype(np.float32) @ b[:, :128].astype(np.float32)
    if not np.allclose(dc.get().reshape(n, n)[:128, :128], ref, rtol=1e-3, atol=1e-2):
        raise AssertionError(f"{point['kernel']}: wrong result in the first tile")
    flops = 2.0 * n * 128 * 128 * grid[0] * grid[1]
    sim = flops / run.seconds * _scale(gpu) / 1e12
    analytic = tensor_peaks(_chip(case)).get("mma_sync_fp16") / 1e12
    return run, sim, analytic, {"grid": list(grid), "block": [256], "resident_blocks_per_sm": resident,
                                "waves": int(params["waves"])}


TRANSPOSE_BLOCK = {"tr_naive": (32, 32), "tr_tiled": (32, 32), "tr_padded": (32, 32), "tr_coarsen2": (32, 16),
                   "tr_coarsen4": (32, 8), "tr_coarsen8": (32, 4)}


def run_transpose(case, point, params):
    """out = in^T at n x n fp32, the first blocks of the grid (32x32 tiles); GB/s of read + write."""
    gpu = _gpu(case, params)
    n = int(params["n"])
    kernel = gpu.load(str(KERNEL_DIR / case.meta["ptx"]))[point["kernel"]]
    block = TRANSPOSE_BLOCK[point["kernel"]]
    resident = _resident_blocks(gpu, kernel, block[0] * block[1])
    blocks = int(params["tiles_per_sm"]) * gpu.config.sms
    grid = _grid_2d(blocks, n // 32)
    a = np.random.default_rng(SEED).standard_normal((n, n), dtype=np.float32)
    din, dout = gpu.to_device(a), gpu.zeros(n * n, np.float32)
    run = gpu.launch(kernel, grid=grid, block=block, args=[din, dout, np.int32(n)])
    out = dout.get().reshape(n, n)
    if not np.array_equal(out[:32, :32], a[:32, :32].T):
        raise AssertionError(f"{point['kernel']}: wrong transpose of the first tile")
    moved = 2.0 * 4 * 32 * 32 * grid[0] * grid[1]
    sim = moved / run.seconds * _scale(gpu) / 1e9
    return run, sim, _roof_bandwidth(case) / 1e9, {"grid": list(grid), "block": list(block),
                                                   "resident_blocks_per_sm": resident,
                                                   "waves": blocks / (resident * gpu.config.sms)}


def _grid_stride_blocks(gpu, kernel, threads, params):
    if "grid_per_chip" in params:
        return max(1, round(int(params["grid_per_chip"]) * gpu.config.sms / gpu.config.chip_sms))
    return _resident_blocks(gpu, kernel, threads) * gpu.config.sms


def run_copy_width(case, point, params):
    """Copy of `bytes_per_sm` x sms bytes with the point's word width, one word per thread (the grid-stride loop
    runs once, as in the published benchmark's launch); GB/s of read + write."""
    gpu = _gpu(case, params)
    kernel = gpu.load(str(KERNEL_DIR / case.meta["ptx"]))[point["kernel"]]
    threads = int(point.get("threads", params["threads"]))
    nbytes = int(params["bytes_per_sm"]) * gpu.config.sms
    src = np.random.default_rng(SEED).integers(0, 255, nbytes, dtype=np.uint8)
    dsrc, ddst = gpu.to_device(src), gpu.zeros(nbytes, np.uint8)
    blocks = math.ceil(nbytes // int(point["width"]) / threads)   # one word per thread, as the published run
    if "blocks_per_sm" in point:   # a grid-stride run: this many resident blocks per SM loop over the buffer
        blocks = int(point["blocks_per_sm"]) * gpu.config.sms
    run = gpu.launch(kernel, grid=(blocks,), block=(threads,), args=[ddst, dsrc, np.uint64(nbytes)])
    if not np.array_equal(ddst.get(), src):
        raise AssertionError(f"{point['kernel']}: copy differs")
    sim = 2.0 * nbytes / run.seconds * _scale(gpu) / 1e9
    return run, sim, _roof_bandwidth(case) / 1e9, {"grid": [blocks], "block": [threads], "bytes": nbytes}


def run_reduce(case, point, params):
    """Sum of `ints_per_sm` x sms int32 (grid-stride, one atomic per block or warp); GB/s read."""
    gpu = _gpu(case, params)
    kernel = gpu.load(str(KERNEL_DIR / case.meta["ptx"]))[point["kernel"]]
    threads = int(params["threads"])
    n = int(params["ints_per_sm"]) * gpu.config.sms
    x = np.random.default_rng(SEED).integers(-100, 100, n, dtype=np.int32)
    dx, dout = gpu.to_device(x), gpu.zeros(1, np.int32)
    blocks = _grid_stride_blocks(gpu, kernel, threads, params)
    run = gpu.launch(kernel, grid=(blocks,), block=(threads,), args=[dx, dout, np.int32(n)])
    if int(dout.get()[0]) != int(x.sum()):
        raise AssertionError(f"{point['kernel']}: sum {int(dout.get()[0])} != {int(x.sum())}")
    sim = 4.0 * n / run.seconds * _scale(gpu) / 1e9
    return run, sim, _roof_bandwidth(case) / 1e9, {"grid": [blocks], "block": [threads], "elements": n}


def run_stream(case, point, params):
    """STREAM copy / mul / add / triad / dot on fp64 arrays of `doubles_per_sm` x sms elements; TB/s of the bytes
    STREAM counts."""
    gpu = _gpu(case, params)
    kernel = gpu.load(str(KERNEL_DIR / case.meta["ptx"]))[point["kernel"]]
    threads = int(params["threads"])
    n = int(params["doubles_per_sm"]) * gpu.config.sms
    rng = np.random.default_rng(SEED)
    b, c = rng.standard_normal(n), rng.standard_normal(n)
    db, dc, da = gpu.to_device(b), gpu.to_device(c), gpu.zeros(n, np.float64)
    name = point["kernel"]
    if name == "stream_copy":
        blocks = math.ceil(n / threads)
        run = gpu.launch(kernel, grid=(blocks,), block=(threads,), args=[db, da, np.int32(n)])
        ok, counted = np.array_equal(da.get(), b), 16.0 * n
    elif name == "stream_mul":
        blocks = math.ceil(n / threads)
        run = gpu.launch(kernel, grid=(blocks,), block=(threads,), args=[da, dc, np.float64(0.4), np.int32(n)])
        ok, counted = np.allclose(da.get(), 0.4 * c), 16.0 * n
    elif name == "stream_add":
        blocks = math.ceil(n / threads)
        run = gpu.launch(kernel, grid=(blocks,), block=(threads,), args=[db, dc, da, np.int32(n)])
        ok, counted = np.allclose(da.get(), b + c), 24.0 * n
    elif name == "stream_triad":
        blocks = math.ceil(n / threads)
        run = gpu.launch(kernel, grid=(blocks,), block=(threads,), args=[da, db, dc, np.float64(0.4), np.int32(n)])
        ok, counted = np.allclose(da.get(), b + 0.4 * c), 24.0 * n
    else:
        blocks = _grid_stride_blocks(gpu, kernel, threads, params)
        partial = gpu.zeros(blocks, np.float64)
        run = gpu.launch(kernel, grid=(blocks,), block=(threads,), args=[db, dc, partial, np.int32(n)])
        ok, counted = bool(np.isclose(partial.get().sum(), b @ c)), 16.0 * n
    if not ok:
        raise AssertionError(f"{name}: wrong result")
    sim = counted / run.seconds * _scale(gpu) / 1e12
    return run, sim, _roof_bandwidth(case) / 1e12, {"grid": [blocks], "block": [threads], "elements": n}


def chase_table(nbytes, seed=SEED):
    """The `chase` kernel's next[] array: a random cyclic permutation of the 128-byte-spaced words of `nbytes`."""
    slots, words = nbytes // 128, 128 // 4
    order = np.random.default_rng(seed).permutation(slots)
    nxt = np.zeros(nbytes // 4, np.uint32)
    nxt[order * words] = np.roll(order, -1) * words
    return nxt


def config_field(gpu, point):
    """The analytic column of a latency point: the config field it names (`config_field`), or None."""
    field = point.get("config_field")
    return float(getattr(gpu.config, field)) if field else None


def run_chase(case, point, params):
    """One thread follows a random cyclic permutation of 128-byte-spaced words over `bytes` (ld.global.cg, which
    bypasses L1, when the point says bypass_l1); cycles per dependent load, from clock64 in the kernel. A `warm`
    point chases the whole array once before timing a whole pass (cache-hit latency); otherwise `steps` loads are
    timed after `steps` warm-up loads (a cold DRAM chase)."""
    gpu = _gpu(case, params, point)
    kernel = gpu.load(str(KERNEL_DIR / case.meta["ptx"]))[point["kernel"]]
    nbytes = int(point["bytes"])
    nxt = chase_table(nbytes)
    slots = nbytes // 128
    steps = slots if point.get("warm", False) else int(params["steps"])  # warm: the warm-up pass covers it all
    dnext, sink, cyc = gpu.to_device(nxt), gpu.zeros(1, np.uint32), gpu.zeros(1, np.int64)
    run = gpu.launch(kernel, grid=(1,), block=(1,), args=[dnext, np.int32(steps), np.int32(point["bypass_l1"]),
                                                          sink, cyc])
    return run, float(cyc.get()[0]) / steps, config_field(gpu, point), {"bytes": nbytes, "steps": steps}


MMA_FLOPS = {"mma_f16_16816": 4096, "mma_f16_1688": 2048, "mma_tf32_1688": 2048, "mma_s8_16832": 8192}
MMA_PEAK = {"mma_f16_16816": "mma_sync_fp16", "mma_f16_1688": None, "mma_tf32_1688": "mma_sync_tf32",
            "mma_s8_16832": "mma_sync_int8"}


def run_mma(case, point, params):
    """`warps` warps per SM, each `iters` rounds of 4 independent mma.sync; TFLOP/s (TOPS) of the chip."""
    gpu = _gpu(case, params)
    name = point["kernel"]
    kernel = gpu.load(str(KERNEL_DIR / case.meta["ptx"]))[name]
    threads, iters = 32 * int(params["warps"]), int(params["iters"])
    blocks = gpu.config.sms
    out = gpu.zeros(blocks * threads, np.int32 if name == "mma_s8_16832" else np.float32)
    run = gpu.launch(kernel, grid=(blocks,), block=(threads,), args=[out, np.int32(iters)])
    work = float(MMA_FLOPS[name]) * 4 * iters * blocks * threads / 32
    sim = work / run.seconds * _scale(gpu) / 1e12
    peak = MMA_PEAK[name]
    analytic = tensor_peaks(_chip(case)).get(peak) / 1e12 if peak else None
    return run, sim, analytic, {"grid": [blocks], "block": [threads], "iters": iters}


FAMILIES = {"sgemm": run_sgemm, "hgemm": run_hgemm, "transpose": run_transpose, "copy_width": run_copy_width,
            "reduce": run_reduce, "stream": run_stream, "chase": run_chase, "mma": run_mma}


def _add_probe_families():
    from validation.probes import PROBE_FAMILIES
    FAMILIES.update(PROBE_FAMILIES)


_add_probe_families()
