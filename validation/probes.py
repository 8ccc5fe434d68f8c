"""gpusim runs of the calibration probes (validation/kernels/probe.cu), the kernels validation/hardware.py timed on
a real GPU: dependent-instruction latencies, L1 requests by the number of lines they touch, bandwidth at a working
set, loaded latency (one request in flight per warp), empty-block throughput, and the wgmma GEMM program.

Where the hardware figure is a steady state reached after a warm-up launch (an L2-resident working set, a warmed
L1), the simulated figure is the difference of two launches that differ only in their iteration count, so the
first pass's misses and the launch latency cancel, as they are amortised in the measured run."""

from __future__ import annotations

import numpy as np

from gpusim.analytic import tensor_peaks
from validation.ncu_ratios import RATIOS
from validation.runner import (
    KERNEL_DIR,
    SGEMM_SHAPES,
    TRANSPOSE_BLOCK,
    _chip,
    _gpu,
    _grid_2d,
    _resident_blocks,
    _scale,
    config_field,
)

ROOT = KERNEL_DIR.parent.parent


def _probe(case, point, params):
    gpu = _gpu(case, params, point)
    return gpu, gpu.load(str(KERNEL_DIR / case.meta["ptx"]))[point["kernel"]]


def run_probe_lat(case, point, params):
    """One block of `threads` (point) threads times `iters` links of a dependent chain with clock64; cycles/link."""
    gpu, kernel = _probe(case, point, params)
    iters = int(params["iters"])
    cycles, out = gpu.zeros(1, np.int64), gpu.zeros(1024, np.float32)
    args = [np.int32(iters), cycles, out]
    if point["kernel"] == "lat_atom_global":
        args = [gpu.zeros(64, np.uint32)] + args
    run = gpu.launch(kernel, grid=(1,), block=(int(point["threads"]),), args=args)
    detail = {"block": [int(point["threads"])], "iters": iters}
    return run, float(cycles.get()[0]) / iters, config_field(gpu, point), detail


def _difference(launch, iters):
    """(Delta cycles, Delta seconds, second run) between launches of iters and 2 x iters iterations."""
    first, second = launch(iters), launch(2 * iters)
    return second.cycles - first.cycles, second.seconds - first.seconds, second


def _warp_requests_per_sm(gpu, blocks, threads, iters):
    """Warp-level requests each SM issues when every thread of the grid makes `iters` of them."""
    return blocks * threads // 32 * iters / gpu.config.sms


def run_probe_l1(case, point, params):
    """l1_lines: 2 blocks of 512 threads per SM, lane l reading line l % lines of a 32 KB L1-resident set;
    cycles per warp-level request per SM (difference of two launches)."""
    gpu, kernel = _probe(case, point, params)
    blocks, threads, iters = 2 * gpu.config.sms, 512, int(params["iters"])
    buf, out = gpu.to_device(np.ones(8 * 1024, np.float32)), gpu.zeros(blocks * threads, np.float32)

    def launch(n):
        return gpu.launch(kernel, grid=(blocks,), block=(threads,), args=[buf, np.int32(point["lines"]),
                                                                         np.int32(n), out])
    cycles, _, run = _difference(launch, iters)
    return run, cycles / _warp_requests_per_sm(gpu, blocks, threads, iters), None, {"grid": [blocks],
                                                                                   "block": [threads], "iters": iters}


def run_probe_bw(case, point, params):
    """read_ws / write_ws: 4 blocks of 512 threads per SM streaming 16-byte words over the point's working set
    (an L2-resident set is scaled to the slice's share of L2); GB/s of the whole chip."""
    gpu, kernel = _probe(case, point, params)
    blocks, threads = 4 * gpu.config.sms, 512
    ws = int(point["working_set"])
    if point.get("scale_to_slice", False):
        ws = max(16 * blocks * threads, int(ws / _scale(gpu)) // 4096 * 4096)
    ws = 1 << (ws.bit_length() - 1)   # the kernels index with a mask: a power of two
    buf = gpu.zeros(ws // 4, np.float32)
    iters = max(1, int(params["iters"]))
    tail = [gpu.zeros(blocks * threads, np.float32)] if point["kernel"] == "read_ws" else []   # read_ws's sums

    def launch(n):
        return gpu.launch(kernel, grid=(blocks,), block=(threads,), args=[buf, np.uint64(ws // 16 - 1),
                                                                         np.int32(n)] + tail)
    if point.get("steady", False):
        _, seconds, run = _difference(launch, iters)
    else:
        run = launch(iters)
        seconds = run.seconds
    moved = 16.0 * blocks * threads * iters
    return run, moved / seconds * _scale(gpu) / 1e9, None, {"grid": [blocks], "block": [threads],
                                                               "working_set": ws, "iters": iters}


def run_probe_chain(case, point, params):
    """chain_read: `warps_per_sm` warps per SM, each with one 128-byte request in flight (the next address depends
    on the loaded 0), streaming over the point's working set; cycles per load (clock64 in the kernel)."""
    gpu, kernel = _probe(case, point, params)
    warps = int(point["warps_per_sm"])
    threads = 32 * warps if warps <= 32 else 32 * warps // 2
    blocks = gpu.config.sms if warps <= 32 else 2 * gpu.config.sms
    ws = int(point["working_set"])
    buf = gpu.zeros(ws // 4, np.uint32)
    iters = int(params["iters"])
    cycles, sink = gpu.zeros(blocks * threads // 32, np.int64), gpu.zeros(blocks * threads, np.uint32)
    copy = point["kernel"] == "chain_copy"      # each loaded word is also stored to a second buffer
    dst = gpu.zeros(ws // 4, np.uint32) if copy else None

    def launch(n, head=None):
        head = head or ([buf, dst] if copy else [buf])
        tail = [cycles] if copy else [cycles, sink]
        return gpu.launch(kernel, grid=(blocks,), block=(threads,), args=head + [np.uint64(ws // 4 - 1),
                                                                                np.int32(n)] + tail)
    if copy and point.get("steady", False):
        # as on the hardware, where the timed launch follows copies of 134 MB or more: it finds the L2 full of
        # dirty lines, so each line it allocates evicts one to DRAM. A copy of other buffers writing twice the
        # L2 leaves it so (repeating the timed launch would leave its own set in a slice's small L2: hits)
        written = blocks * threads * 4
        launch(-(-2 * gpu.config.l2_bytes // written), [gpu.zeros(ws // 4, np.uint32), gpu.zeros(ws // 4, np.uint32)])
    elif point.get("steady", False):   # as on the hardware: the timed launch finds the set left in L2 by one before
        launch(iters)
    run = launch(iters)
    latency = cycles.get().astype(np.float64).mean() / iters
    detail = {"grid": [blocks], "block": [threads], "working_set": ws, "iters": iters}
    return run, latency, config_field(gpu, point), detail


def run_probe_blocks(case, point, params):
    """empty_block: `blocks_per_sm` blocks of `threads` per SM that exit at once; cycles per block per SM."""
    gpu, kernel = _probe(case, point, params)
    per_sm, threads = int(point["blocks_per_sm"]), int(point["threads"])
    out = gpu.zeros(1, np.float32)

    def launch(n):
        return gpu.launch(kernel, grid=(gpu.config.sms * n,), block=(threads,), args=[out])
    if per_sm > 1:
        cycles, _, run = _difference(launch, per_sm // 2)
        value = cycles / (per_sm // 2)
    else:
        run = launch(1)
        value = float(run.cycles)
    return run, value, None, {"block": [threads], "blocks_per_sm": per_sm}


def run_wgmma(case, point, params):
    """programs/gemm_wgmma (128 x 256 tiles, bf16 -> fp32) on the whole chip: one wave of 33 x 4 = 132 blocks
    (M = 512, N = 8448) with K = `k`, so every tile of A is read by 33 SMs and of B by 4 through the shared L2 as
    in the measured 8192^3 run (a slice would read them from its small DRAM share); TFLOP/s."""
    gpu = _gpu(case, params)
    k, (gx, gy) = int(params["k"]), (33, 4)
    m, n = gy * 128, gx * 256
    kernel = gpu.load(str(ROOT / "programs" / "gemm_wgmma.ptx"))["gemm_wgmma"]
    rng = np.random.default_rng(24)
    a = (rng.uniform(-1, 1, (m, k)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    b = (rng.uniform(-1, 1, (n, k)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    dc = gpu.zeros(m * n, np.float32)
    run = gpu.launch(kernel, grid=(gx, gy), block=(256,), shared_bytes=197632,
                     args=[gpu.to_device(a), gpu.to_device(b), dc, np.int32(m), np.int32(n), np.int32(k)])
    a64 = (a[:128].astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    b64 = (b[:256].astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if not np.allclose(dc.get().reshape(m, n)[:128, :256], a64 @ b64.T, atol=k * k * 2.0 ** -24):
        raise AssertionError("gemm_wgmma: wrong result in the first tile")
    sim = 2.0 * m * n * k / run.seconds * _scale(gpu) / 1e12
    return run, sim, tensor_peaks(_chip(case))["tensor_bf16"] / 1e12, {"grid": [gx, gy], "block": [256], "k": k}


_COUNTER_RUNS: dict = {}


def _counter_launch(gpu, name):
    """The launch validation/hardware.py's ncu_target made of kernel `name`, cut to a few blocks; returns
    (run, blocks launched)."""
    if name.startswith("sgemm"):
        n, (block, rows, cols, x_rows) = 1024, SGEMM_SHAPES[name]
        kernel = gpu.load(str(KERNEL_DIR / "sgemm_ladder.ptx"))[name]
        waves = 2 * _resident_blocks(gpu, kernel, int(np.prod(block))) * gpu.config.sms
        grid = _grid_2d(waves, n // (rows if x_rows else cols))
        rng = np.random.default_rng(24)
        args = [np.int32(n), np.float32(1.0), gpu.to_device(rng.standard_normal((n, n), dtype=np.float32)),
                gpu.to_device(rng.standard_normal((n, n), dtype=np.float32)), np.float32(0.0),
                gpu.zeros(n * n, np.float32)]
    elif name.startswith("tr_"):
        n, block = 4096, TRANSPOSE_BLOCK[name]
        kernel = gpu.load(str(KERNEL_DIR / "transpose_ladder.ptx"))[name]
        grid = _grid_2d(64, n // 32)
        args = [gpu.zeros(n * n, np.float32), gpu.zeros(n * n, np.float32), np.int32(n)]
    else:
        block, grid = (1024,), (32,)
        nbytes = 32 * 1024 * int(name.removeprefix("copy_w"))   # one word per thread, as ncu_target launches it
        kernel = gpu.load(str(KERNEL_DIR / "memory.ptx"))[name]
        args = [gpu.zeros(nbytes, np.uint8), gpu.to_device(np.ones(nbytes, np.uint8)), np.uint64(nbytes)]
    run = gpu.launch(kernel, grid=grid, block=block, args=args)
    return run, int(np.prod(grid))


def run_counters(case, point, params):
    """One of validation/ncu_ratios.RATIOS for the point's kernel, from gpusim's metrics of the same names."""
    key = (case.meta["config"], point["kernel"])
    if key not in _COUNTER_RUNS:
        _COUNTER_RUNS[key] = _counter_launch(_gpu(case, params), point["kernel"])
    run, blocks = _COUNTER_RUNS[key]
    num, den = RATIOS[point["ratio"]]
    denominator = blocks if den == "blocks" else run.metrics[den]
    return run, run.metrics[num] / denominator, None, {"blocks": blocks}


def run_probe_shared(case, point, params):
    """lds_stride / sts_stride: 2 blocks of 512 threads per SM, lane l at word l * stride (a stride-way bank
    conflict for powers of two); cycles per warp-level request per SM (difference of two launches)."""
    gpu, kernel = _probe(case, point, params)
    blocks, threads, iters = 2 * gpu.config.sms, 512, int(params["iters"])
    out = gpu.zeros(blocks * threads, np.float32)

    def launch(n):
        return gpu.launch(kernel, grid=(blocks,), block=(threads,), args=[np.int32(point["stride"]), np.int32(n), out])
    cycles, _, run = _difference(launch, iters)
    return run, cycles / _warp_requests_per_sm(gpu, blocks, threads, iters), None, {"grid": [blocks], "iters": iters}


def run_probe_store(case, point, params):
    """st_spread: 4 blocks of 512 threads per SM storing into an L2-resident buffer, lane l at word l * spread
    (spread 1: 4 full sectors per request, 8: 32 sectors of 4 bytes); requests per cycle per SM."""
    gpu, kernel = _probe(case, point, params)
    blocks, threads, iters = 4 * gpu.config.sms, 512, int(params["iters"])
    words = int(params["buffer_bytes"]) // 4
    buf = gpu.zeros(words, np.float32)

    def launch(n):
        return gpu.launch(kernel, grid=(blocks,), block=(threads,), args=[buf, np.int32(point["spread"]),
                                                                         np.uint64(words - 1), np.int32(n)])
    cycles, _, run = _difference(launch, iters)
    return run, _warp_requests_per_sm(gpu, blocks, threads, iters) / cycles, None, {"grid": [blocks], "iters": iters}


PROBE_FAMILIES = {"probe_lat": run_probe_lat, "probe_l1": run_probe_l1, "probe_bw": run_probe_bw,
                  "probe_chain": run_probe_chain, "probe_blocks": run_probe_blocks, "wgmma": run_wgmma,
                  "counters": run_counters, "probe_shared": run_probe_shared, "probe_store": run_probe_store}
