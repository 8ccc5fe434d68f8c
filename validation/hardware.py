"""Measures the validation suite's kernels and the calibration probes on a real GPU.

Run on a machine with an NVIDIA GPU, CuPy and the CUDA driver (not by the suite, not by the tests)::

    python validation/hardware.py --out validation/measured/h200.json [--host-costs path/to/host_costs]

Every kernel is the suite's own committed PTX (validation/kernels/*.ptx, programs/gemm_wgmma.ptx), loaded with
the driver's JIT (``cupy.RawModule(path=...)``), so the hardware runs exactly the PTX gpusim simulates. Each
figure is the median of `REPS` launches timed with CUDA events after one warm-up launch. Sizes are the published
ones where a case has a published size (whole chip, no slice). The JSON records the device's properties, its SM
clock measured with clock64 against events, and per measurement the kernel, launch, size and figure; the
validation cases that use it (validation/cases/*_h200m.toml, probe_h200.toml) cite this file.

Only numpy, CuPy and the standard library are imported: gpusim is not needed on the GPU machine."""

# ruff: noqa: B023 - every lambda below is called inside the iteration that defines it
from __future__ import annotations

import argparse
import json
import math
import platform
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

try:
    import cupy as cp
except ImportError:  # pragma: no cover - only on a machine without CuPy
    cp = None

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "validation" / "kernels"
REPS = 5
RESULT: dict = {"meta": {}, "measurements": []}


def module(name):
    path = ROOT / name if "/" in name else KERNELS / name
    return cp.RawModule(path=str(path))


def timed(launch, reps=REPS):
    """Median milliseconds of `reps` event-timed calls of launch(), after one warm-up call."""
    launch()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return float(np.median(times)), [round(t, 5) for t in times]


def record(family, kernel, value, unit, ms=None, **launch):
    entry = {"family": family, "kernel": kernel, "value": value, "unit": unit, "ms": ms, **launch}
    RESULT["measurements"].append(entry)
    print(f"  {family:12s} {kernel:24s} {value:12.4g} {unit}  {launch}", flush=True)


def section(name, fn, out):
    print(f"[{time.strftime('%H:%M:%S')}] {name}", flush=True)
    t0 = time.time()
    try:
        fn()
    except Exception:  # noqa: BLE001 - one failing section must not lose the others
        RESULT["meta"].setdefault("errors", {})[name] = traceback.format_exc()
        print(traceback.format_exc(), flush=True)
    RESULT["meta"].setdefault("section_seconds", {})[name] = round(time.time() - t0, 2)
    out.write_text(json.dumps(RESULT, indent=1))


# ---------------------------------------------------------------------------------------------------- device


def device_meta():
    props = cp.cuda.runtime.getDeviceProperties(0)
    keep = ("name", "multiProcessorCount", "clockRate", "memoryClockRate", "memoryBusWidth", "l2CacheSize",
            "persistingL2CacheMaxSize", "sharedMemPerMultiprocessor", "sharedMemPerBlockOptin", "regsPerMultiprocessor",
            "maxThreadsPerMultiProcessor", "totalGlobalMem", "major", "minor")
    meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in props.items() if k in keep}
    meta["driver_version"] = cp.cuda.runtime.driverGetVersion()
    meta["runtime_version"] = cp.cuda.runtime.runtimeGetVersion()
    meta["cupy"] = cp.__version__
    meta["numpy"] = np.__version__
    meta["python"] = platform.python_version()
    meta["date_utc"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    try:
        meta["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,"
             "temperature.gpu", "--format=csv"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        meta["nvidia_smi"] = f"unavailable: {exc}"
    RESULT["meta"].update(meta)


def sm_clock(key="sm_clock_mhz_spin"):
    """clock64 ticks per microsecond of event time while one thread spins: the SM clock under this load."""
    mod = module("probe.ptx")
    spin = mod.get_function("spin")
    out = cp.zeros(1, cp.int64)
    cycles = 200_000_000
    ms, _ = timed(lambda: spin((1,), (1,), (np.int64(cycles), out)), reps=3)
    RESULT["meta"][key] = round(int(out.get()[0]) / (ms * 1000.0), 1)
    print(f"  SM clock while spinning: {RESULT['meta'][key]} MHz", flush=True)


# ------------------------------------------------------------------------------------------ validation kernels

SGEMM = {  # kernel: (block, tile rows, tile cols, grid x walks rows?)  (validation/runner.py SGEMM_SHAPES)
    "sgemm_naive": ((32, 32), 32, 32, True), "sgemm_coalesced": ((1024,), 32, 32, True),
    "sgemm_smem": ((1024,), 32, 32, True), "sgemm_blocktile_1d": ((512,), 64, 64, False),
    "sgemm_blocktile_2d": ((256,), 128, 128, False), "sgemm_vectorized": ((256,), 128, 128, False),
    "sgemm_bank_linear": ((256,), 128, 128, False), "sgemm_bank_offset": ((256,), 128, 128, False),
    "sgemm_autotuned": ((256,), 128, 128, False), "sgemm_warptiling": ((128,), 128, 128, False),
    "sgemm_double_buffering": ((256,), 128, 256, False),
}


def sgemm(n=4096):
    mod = module("sgemm_ladder.ptx")
    rng = np.random.default_rng(24)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    da, db, dc = cp.asarray(a), cp.asarray(b), cp.zeros(n * n, cp.float32)
    ref = a[:128] @ b[:, :256]
    for name, (block, rows, cols, x_rows) in SGEMM.items():
        fn = mod.get_function(name)
        grid = (n // rows, n // cols) if x_rows else (n // cols, n // rows)
        args = (np.int32(n), np.float32(1.0), da, db, np.float32(0.0), dc)
        ms, times = timed(lambda: fn(grid, block, args))
        c = dc.get().reshape(n, n)
        ok = bool(np.allclose(c[:128, :256], ref, rtol=1e-3, atol=1e-2))
        record("sgemm", name, 2.0 * n ** 3 / (ms * 1e-3) / 1e9, "GFLOP/s", ms, times=times, n=n, grid=grid,
               block=block, correct=ok)


def hgemm(n=8192):
    mod = module("hgemm_mma.ptx")
    rng = np.random.default_rng(24)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    da, db, dc = cp.asarray(a), cp.asarray(b), cp.zeros(n * n, cp.float32)
    ref = a[:128].astype(np.float32) @ b[:, :128].astype(np.float32)
    for name in ("hgemm_direct", "hgemm_ldmatrix", "hgemm_swizzle", "hgemm_multistage"):
        fn = mod.get_function(name)
        grid = (n // 128, n // 128)
        ms, times = timed(lambda: fn(grid, (256,), (da, db, dc, np.int32(n))))
        ok = bool(np.allclose(dc.get().reshape(n, n)[:128, :128], ref, rtol=1e-3, atol=1e-2))
        record("hgemm", name, 2.0 * n ** 3 / (ms * 1e-3) / 1e12, "TFLOP/s", ms, times=times, n=n, grid=grid,
               block=[256], correct=ok)


TRANSPOSE = {"tr_naive": (32, 32), "tr_tiled": (32, 32), "tr_padded": (32, 32), "tr_coarsen2": (32, 16),
             "tr_coarsen4": (32, 8), "tr_coarsen8": (32, 4)}


def transpose():
    mod = module("transpose_ladder.ptx")
    for n in (32768, 4096):
        src = cp.arange(n * n, dtype=cp.float32)
        dst = cp.zeros(n * n, cp.float32)
        for name, block in TRANSPOSE.items():
            fn = mod.get_function(name)
            grid = (n // 32, n // 32)
            ms, times = timed(lambda: fn(grid, block, (src, dst, np.int32(n))))
            ok = bool(cp.array_equal(dst.reshape(n, n)[:64, :64], src.reshape(n, n)[:64, :64].T))
            record("transpose", name, 2.0 * 4 * n * n / (ms * 1e-3) / 1e9, "GB/s", ms, times=times, n=n,
                   grid=grid, block=block, correct=ok)


def copy_width(nbytes=1 << 30):
    mod = module("memory.ptx")
    src = cp.arange(nbytes // 4, dtype=cp.uint32).view(cp.uint8)
    dst = cp.zeros(nbytes, cp.uint8)
    sms = RESULT["meta"]["multiProcessorCount"]
    for width in (1, 2, 4, 8, 16):
        fn = mod.get_function(f"copy_w{width}")
        for threads, grid, mode in ((1024, math.ceil(nbytes // width / 1024), "one word per thread"),
                                    (1024, 2 * sms, "grid-stride, 2 resident blocks per SM"),
                                    (256, math.ceil(nbytes // width / 256), "one word per thread")):
            ms, times = timed(lambda: fn((grid,), (threads,), (dst, src, np.uint64(nbytes))))
            ok = bool(cp.array_equal(dst[:4096], src[:4096])) and bool(cp.array_equal(dst[-4096:], src[-4096:]))
            record("copy_width", f"copy_w{width}", 2.0 * nbytes / (ms * 1e-3) / 1e9, "GB/s", ms, times=times,
                   bytes=nbytes, grid=[grid], block=[threads], mode=mode, correct=ok)


def reduce(n=1 << 28):
    mod = module("memory.ptx")
    x = cp.ones(n, cp.int32)
    out = cp.zeros(1, cp.int32)
    for name in ("reduce_block_w1", "reduce_block_w2", "reduce_block_w4", "reduce_warp_w1", "reduce_warp_w2",
                 "reduce_warp_w4"):
        fn = mod.get_function(name)

        def launch():
            out.fill(0)
            fn((1024,), (512,), (x, out, np.int32(n)))
        ms, times = timed(launch)
        record("reduce", name, 4.0 * n / (ms * 1e-3) / 1e9, "GB/s", ms, times=times, elements=n, grid=[1024],
               block=[512], correct=int(out.get()[0]) == n)


def stream(n=1 << 27):
    mod = module("memory.ptx")
    a, b, c = cp.zeros(n), cp.ones(n), cp.full(n, 2.0)
    threads, blocks = 1024, n // 1024
    partial = cp.zeros(528, cp.float64)
    plan = {
        "stream_copy": (lambda f: f((blocks,), (threads,), (b, a, np.int32(n))), 16.0),
        "stream_mul": (lambda f: f((blocks,), (threads,), (a, c, np.float64(0.4), np.int32(n))), 16.0),
        "stream_add": (lambda f: f((blocks,), (threads,), (b, c, a, np.int32(n))), 24.0),
        "stream_triad": (lambda f: f((blocks,), (threads,), (a, b, c, np.float64(0.4), np.int32(n))), 24.0),
        "stream_dot": (lambda f: f((528,), (threads,), (b, c, partial, np.int32(n))), 16.0),
    }
    for name, (launch, per_element) in plan.items():
        fn = mod.get_function(name)
        ms, times = timed(lambda: launch(fn))
        record("stream", name, per_element * n / (ms * 1e-3) / 1e12, "TB/s", ms, times=times, elements=n,
               block=[threads], grid=[528 if name == "stream_dot" else blocks])


def chase():
    mod = module("memory.ptx")
    fn = mod.get_function("chase")
    sink, cyc = cp.zeros(1, cp.uint32), cp.zeros(1, cp.int64)
    for nbytes, warm, bypass in ((32 << 10, True, 0), (512 << 10, True, 1), (8 << 20, True, 1),
                                 (64 << 20, False, 1), (256 << 20, False, 1), (1 << 30, False, 1),
                                 (2 << 30, False, 1)):
        slots = nbytes // 128
        order = np.random.default_rng(24).permutation(slots)
        nxt = np.zeros(nbytes // 4, np.uint32)
        nxt[order * 32] = np.roll(order, -1) * 32
        dnext = cp.asarray(nxt)
        steps = slots if warm else 4096
        fn((1,), (1,), (dnext, np.int32(steps), np.int32(bypass), sink, cyc))
        cp.cuda.Device().synchronize()
        record("chase", "chase", float(cyc.get()[0]) / steps, "cycles", None, bytes=nbytes, warm=warm,
               bypass_l1=bypass, steps=steps)
        del dnext


def mma():
    mod = module("mma_rate.ptx")
    sms = RESULT["meta"]["multiProcessorCount"]
    flops = {"mma_f16_16816": 4096, "mma_f16_1688": 2048, "mma_tf32_1688": 2048, "mma_s8_16832": 8192}
    iters, threads = 4096, 512
    for name, per in flops.items():
        fn = mod.get_function(name)
        out = cp.zeros(sms * threads, cp.int32 if "s8" in name else cp.float32)
        ms, times = timed(lambda: fn((sms,), (threads,), (out, np.int32(iters))))
        work = per * 4.0 * iters * sms * threads / 32
        record("mma", name, work / (ms * 1e-3) / 1e12, "TFLOP/s", ms, times=times, grid=[sms], block=[threads],
               iters=iters)


def wgmma_gemm(n=8192):
    mod = module("programs/gemm_wgmma.ptx")
    fn = mod.get_function("gemm_wgmma")
    shared = 197632
    fn.max_dynamic_shared_size_bytes = shared
    rng = np.random.default_rng(24)
    a32 = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b32 = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    a = cp.asarray((a32.view(np.uint32) >> 16).astype(np.uint16))
    b = cp.asarray((b32.view(np.uint32) >> 16).astype(np.uint16))
    c = cp.zeros((n, n), cp.float32)
    grid = ((n + 255) // 256, (n + 127) // 128)
    ms, times = timed(lambda: fn(grid, (256,), (a, b, c, np.int32(n), np.int32(n), np.int32(n)), shared_mem=shared))
    a64 = ((a[:128].get().astype(np.uint32) << 16).view(np.float32)).astype(np.float64)
    b64 = ((b[:256].get().astype(np.uint32) << 16).view(np.float32)).astype(np.float64)
    ok = bool(np.allclose(c[:128, :256].get(), a64 @ b64.T, atol=n * n * 2.0 ** -24))
    record("wgmma", "gemm_wgmma", 2.0 * n ** 3 / (ms * 1e-3) / 1e12, "TFLOP/s", ms, times=times, n=n,
           grid=grid, block=[256], shared=shared, correct=ok)
    try:
        import torch
        x = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        y = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        for _ in range(3):
            x @ y
        torch.cuda.synchronize()
        ts = []
        for _ in range(REPS):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            x @ y
            e.record()
            e.synchronize()
            ts.append(s.elapsed_time(e))
        ms = float(np.median(ts))
        record("wgmma", "torch_bf16_matmul", 2.0 * n ** 3 / (ms * 1e-3) / 1e12, "TFLOP/s", ms, n=n,
               note="cuBLAS through PyTorch, random bf16 operands: the library's rate on this chip")
    except Exception as exc:  # noqa: BLE001 - the reference rate is optional
        RESULT["meta"]["torch_error"] = repr(exc)


# ------------------------------------------------------------------------------------------------- probes


def probe_bandwidth():
    mod = module("probe.ptx")
    read, write = mod.get_function("read_ws"), mod.get_function("write_ws")
    sms = RESULT["meta"]["multiProcessorCount"]
    blocks, threads = 4 * sms, 512
    total_threads = blocks * threads
    buf = cp.zeros((4 << 30) // 16 * 4, cp.float32)   # 4 GiB of float4
    out = cp.zeros(total_threads, cp.float32)
    for ws in (1 << 20, 4 << 20, 16 << 20, 32 << 20, 48 << 20, 64 << 20, 256 << 20, 4 << 30):
        mask = ws // 16 - 1
        iters = max(64, min(4096, (8 << 30) // (total_threads * 16)))
        if ws >= 256 << 20:
            iters = max(iters, ws // (total_threads * 16))
        ms, times = timed(lambda: read((blocks,), (threads,), (buf, np.uint64(mask), np.int32(iters), out)))
        moved = 16.0 * total_threads * iters
        record("probe_bw", "read_ws", moved / (ms * 1e-3) / 1e9, "GB/s", ms, times=times, working_set=ws,
               iters=iters, grid=[blocks], block=[threads])
    ws = 4 << 30
    iters = ws // (total_threads * 16)
    ms, times = timed(lambda: write((blocks,), (threads,), (buf, np.uint64(ws // 16 - 1), np.int32(iters))))
    record("probe_bw", "write_ws", 16.0 * total_threads * iters / (ms * 1e-3) / 1e9, "GB/s", ms, times=times,
           working_set=ws, iters=iters, grid=[blocks], block=[threads])


def probe_loaded_latency():
    mod = module("probe.ptx")
    fn = mod.get_function("chain_read")
    sms = RESULT["meta"]["multiProcessorCount"]
    buf = cp.zeros((1 << 30) // 4, cp.uint32)
    for ws, iters in ((1 << 30, 1000), (8 << 20, 4000)):
        for warps in (1, 2, 4, 8, 16, 32, 48, 64):
            threads = 32 * warps if warps <= 32 else 32 * warps // 2
            blocks = sms if warps <= 32 else 2 * sms
            cycles = cp.zeros(blocks * threads // 32, cp.int64)
            sink = cp.zeros(blocks * threads, cp.uint32)
            ms, times = timed(lambda: fn((blocks,), (threads,), (buf, np.uint64(ws // 4 - 1), np.int32(iters),
                                                                 cycles, sink)))
            lat = float(cycles.get().mean()) / iters
            bw = 128.0 * blocks * threads / 32 * iters / (ms * 1e-3) / 1e9
            record("probe_chain", "chain_read", lat, "cycles", ms, times=times, working_set=ws,
                   warps_per_sm=warps, bandwidth_gbs=bw, iters=iters, grid=[blocks], block=[threads])


def probe_copy_latency():
    """chain_copy: the loaded-latency curve of a copy (a read and a write stream), 1 GiB, 4-64 warps per SM."""
    mod = module("probe.ptx")
    fn = mod.get_function("chain_copy")
    sms = RESULT["meta"]["multiProcessorCount"]
    src, dst = cp.zeros((1 << 30) // 4, cp.uint32), cp.zeros((1 << 30) // 4, cp.uint32)
    iters = 1000
    for warps in (4, 8, 16, 32, 48, 64):
        threads = 32 * warps if warps <= 32 else 32 * warps // 2
        blocks = sms if warps <= 32 else 2 * sms
        cycles = cp.zeros(blocks * threads // 32, cp.int64)
        ms, times = timed(lambda: fn((blocks,), (threads,), (src, dst, np.uint64((1 << 28) - 1), np.int32(iters),
                                                             cycles)))
        lat = float(cycles.get().mean()) / iters
        bw = 2 * 128.0 * blocks * threads / 32 * iters / (ms * 1e-3) / 1e9
        record("probe_copy", "chain_copy", lat, "cycles", ms, times=times, working_set=1 << 30, warps_per_sm=warps,
               bandwidth_gbs=bw, iters=iters, grid=[blocks], block=[threads])


def probe_shared_and_partial():
    """Shared loads/stores by conflict degree (cycles per request per SM) and global stores by sector coverage."""
    mod = module("probe.ptx")
    sms = RESULT["meta"]["multiProcessorCount"]
    clock = RESULT["meta"].get("sm_clock_mhz_spin") or RESULT["meta"]["clockRate"] / 1000.0
    blocks, threads, iters = 2 * sms, 512, 4096
    out = cp.zeros(blocks * threads, cp.float32)
    for name in ("lds_stride", "sts_stride"):
        fn = mod.get_function(name)
        for stride in (1, 2, 4, 8, 16, 32, 33):
            ms, times = timed(lambda: fn((blocks,), (threads,), (np.int32(stride), np.int32(iters), out)))
            per_sm = blocks * threads / 32 * iters / sms
            record("probe_shared", name, ms * 1e-3 * clock * 1e6 / per_sm, "cycles/request", ms, times=times,
                   stride=stride, grid=[blocks], block=[threads], iters=iters)
    fn = mod.get_function("st_spread")
    buf = cp.zeros((8 << 20) // 4, cp.float32)
    for spread in (1, 2, 4, 8):
        ms, times = timed(lambda: fn((4 * sms,), (512,), (buf, np.int32(spread), np.uint64((8 << 20) // 4 - 1),
                                                         np.int32(1024))))
        requests = 4 * sms * 512 / 32 * 1024
        record("probe_store", "st_spread", requests / (ms * 1e-3 * clock * 1e6) / sms, "requests/cycle/SM", ms,
               times=times, spread=spread, grid=[4 * sms], block=[512], iters=1024)


def mma_clock():
    """The SM clock while mma.sync runs on every SM: one thread spins on a second stream meanwhile."""
    mma_mod, probe_mod = module("mma_rate.ptx"), module("probe.ptx")
    spin = probe_mod.get_function("spin")
    sms = RESULT["meta"]["multiProcessorCount"]
    for name in ("mma_f16_16816", "mma_s8_16832"):
        fn = mma_mod.get_function(name)
        out = cp.zeros(sms * 512, cp.int32 if "s8" in name else cp.float32)
        ticks = cp.zeros(1, cp.int64)
        side = cp.cuda.Stream(non_blocking=True)
        main = cp.cuda.Stream(non_blocking=True)
        with main:
            for _ in range(5):
                fn((sms,), (512,), (out, np.int32(4096)))
        start, end = cp.cuda.Event(), cp.cuda.Event()
        with side:
            start.record()
            spin((1,), (1,), (np.int64(10_000_000), ticks))
            end.record()
        with main:
            for _ in range(60):
                fn((sms,), (512,), (out, np.int32(4096)))
        end.synchronize()
        main.synchronize()
        ms = cp.cuda.get_elapsed_time(start, end)
        record("mma_clock", name, int(ticks.get()[0]) / (ms * 1000.0), "MHz", ms,
               note="clock64 ticks of a spinning thread / its event time, while the kernel runs on every SM")


def probe_l1_lines():
    mod = module("probe.ptx")
    fn = mod.get_function("l1_lines")
    sms = RESULT["meta"]["multiProcessorCount"]
    buf = cp.ones(8 * 1024, cp.float32)
    blocks, threads, iters = 2 * sms, 512, 8192
    out = cp.zeros(blocks * threads, cp.float32)
    clock = RESULT["meta"].get("sm_clock_mhz_spin") or RESULT["meta"]["clockRate"] / 1000.0
    for lines in (1, 2, 4, 8, 16, 32):
        ms, times = timed(lambda: fn((blocks,), (threads,), (buf, np.int32(lines), np.int32(iters), out)))
        requests_per_sm = blocks * threads / 32 * iters / sms
        record("probe_l1", "l1_lines", ms * 1e-3 * clock * 1e6 / requests_per_sm, "cycles/request", ms,
               times=times, lines=lines, grid=[blocks], block=[threads], iters=iters)


def probe_latencies():
    mod = module("probe.ptx")
    cycles, out = cp.zeros(1, cp.int64), cp.zeros(1024, cp.float32)
    gmem = cp.zeros(64, cp.uint32)
    iters = 4096
    plan = [("lat_ffma", 32), ("lat_dfma", 32), ("lat_imad", 32), ("lat_ex2", 32), ("lat_rsqrt", 32),
            ("lat_cvt", 32), ("lat_shfl", 32), ("lat_lds", 32), ("lat_atom_shared", 1), ("lat_atom_global", 1),
            ("lat_bar", 32), ("lat_bar", 256), ("lat_bar", 1024)]
    for name, threads in plan:
        fn = mod.get_function(name)
        args = (gmem, np.int32(iters), cycles, out) if name == "lat_atom_global" else (np.int32(iters), cycles, out)
        fn((1,), (threads,), args)
        fn((1,), (threads,), args)
        cp.cuda.Device().synchronize()
        record("probe_lat", name, float(cycles.get()[0]) / iters, "cycles", None, block=[threads], iters=iters)


def probe_blocks():
    mod = module("probe.ptx")
    fn = mod.get_function("empty_block")
    sms = RESULT["meta"]["multiProcessorCount"]
    out = cp.zeros(1, cp.float32)
    clock = RESULT["meta"].get("sm_clock_mhz_spin") or RESULT["meta"]["clockRate"] / 1000.0
    for threads in (32, 256, 1024):
        for per_sm in (1, 1000):
            blocks = sms * per_sm
            ms, times = timed(lambda: fn((blocks,), (threads,), (out,)))
            record("probe_blocks", "empty_block", ms * 1e-3 * clock * 1e6 / per_sm, "cycles/block/SM", ms,
                   times=times, grid=[blocks], block=[threads], blocks_per_sm=per_sm)


def host_costs(binary):
    path = Path(binary) if binary else None
    if path is None or not path.exists():
        src = KERNELS / "host_costs.cu"
        path = Path("/tmp/host_costs_built")
        subprocess.run(["nvcc", "-O2", "-arch=sm_90", str(src), "-o", str(path)], check=True, timeout=120)
    proc = subprocess.run([str(path)], capture_output=True, text=True, timeout=120)
    RESULT["host_costs"] = json.loads(proc.stdout.strip().splitlines()[-1])
    print("  host costs:", RESULT["host_costs"], flush=True)


NCU_METRICS = ("smsp__inst_executed.sum", "smsp__thread_inst_executed.sum",
               "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
               "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
               "l1tex__t_sector_hit_rate.pct", "smsp__inst_executed_op_shared_ld.sum",
               "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
               "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
               "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "lts__t_sectors.sum",
               "lts__t_sector_hit_rate.pct", "dram__bytes_read.sum", "dram__bytes_write.sum",
               "gpu__time_duration.sum")


def ncu_target():
    """The kernels Nsight Compute reads counters of (`counters` section): each launched once, small sizes."""
    n = 1024
    mod = module("sgemm_ladder.ptx")
    rng = np.random.default_rng(24)
    da = cp.asarray(rng.standard_normal((n, n), dtype=np.float32))
    db = cp.asarray(rng.standard_normal((n, n), dtype=np.float32))
    dc = cp.zeros(n * n, cp.float32)
    for name, (block, rows, cols, x_rows) in SGEMM.items():
        grid = (n // rows, n // cols) if x_rows else (n // cols, n // rows)
        mod.get_function(name)(grid, block, (np.int32(n), np.float32(1.0), da, db, np.float32(0.0), dc))
    tmod = module("transpose_ladder.ptx")
    src, dst = cp.zeros(4096 * 4096, cp.float32), cp.zeros(4096 * 4096, cp.float32)
    for name, block in TRANSPOSE.items():
        tmod.get_function(name)((128, 128), block, (src, dst, np.int32(4096)))
    mmod = module("memory.ptx")
    nbytes = 64 << 20
    a, b = cp.zeros(nbytes, cp.uint8), cp.zeros(nbytes, cp.uint8)
    for width in (1, 4, 16):
        mmod.get_function(f"copy_w{width}")((nbytes // width // 1024,), (1024,), (b, a, np.uint64(nbytes)))
    cp.cuda.Device().synchronize()


def counters():
    """Nsight Compute's counters for ncu_target's kernels (ncu --clock-control none), as CSV in the JSON."""
    cmd = ["ncu", "--clock-control", "none", "--csv", "--metrics", ",".join(NCU_METRICS), "--kernel-name",
           "regex:sgemm|tr_|copy_w", sys.executable, str(Path(__file__).resolve()), "--ncu-target"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
    RESULT["ncu"] = {"command": " ".join(cmd[:8]) + " ...", "returncode": proc.returncode,
                     "csv": proc.stdout[-400000:], "stderr": proc.stderr[-4000:]}
    print(f"  ncu rc {proc.returncode}, {proc.stdout.count(chr(10))} lines", flush=True)


SECTIONS = [("clock", sm_clock), ("latencies", probe_latencies), ("chase", chase), ("l1_lines", probe_l1_lines),
            ("blocks", probe_blocks), ("bandwidth", probe_bandwidth), ("loaded_latency", probe_loaded_latency),
            ("copy_width", copy_width), ("reduce", reduce), ("stream", stream), ("mma", mma),
            ("sgemm", sgemm), ("hgemm", hgemm), ("transpose", transpose), ("wgmma", wgmma_gemm),
            ("clock_after", lambda: sm_clock("sm_clock_mhz_spin_after")), ("copy_latency", probe_copy_latency),
            ("mma_clock", mma_clock), ("counters", counters),
            ("shared_partial", probe_shared_and_partial)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file to write (rewritten after every section)")
    parser.add_argument("--host-costs", default=None, help="a built validation/kernels/host_costs.cu")
    parser.add_argument("--only", nargs="*", help="run only these sections")
    parser.add_argument("--ncu-target", action="store_true", help=argparse.SUPPRESS)
    if "--ncu-target" in (argv if argv is not None else sys.argv[1:]):
        ncu_target()
        return
    args = parser.parse_args(argv)
    if cp is None:
        sys.exit("validation/hardware.py needs CuPy and an NVIDIA GPU")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    device_meta()
    sections = SECTIONS + [("host_costs", lambda: host_costs(args.host_costs))]
    for name, fn in sections:
        if args.only and name not in args.only and not name.startswith("clock"):
            continue
        section(name, fn, out)
    print(f"wrote {out}", flush=True)


if __name__ == "__main__":
    main()
