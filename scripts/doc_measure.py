"""The measurements behind the generated tables of docs/codegen.md and docs/tensor-cores.md.

Each ``measure_*`` function runs the simulator the way the doc's prose describes and returns plain data
(JSON-able) that ``scripts/doc_tables.py`` stores and renders. This file is part of the stored figures'
stamp: editing a measurement makes the stored figures stale until ``python scripts/doc_tables.py`` reruns it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# ------------------------------------------------------------------------------------- docs/codegen.md


def measure_sass_counts() -> dict:
    from gpusim.labs import sass_counts

    rows = {}
    for mode in ("none", "ptxas"):
        for row in sass_counts.table(mode):
            entry = rows.setdefault(f"{row.program}/{row.kernel}", {"program": row.program, "kernel": row.kernel,
                                                                     "sass": row.sass})
            entry[mode] = row.gpusim
            entry["sass_vector"] = row.sass_vector
            entry[f"{mode}_vector"] = row.gpusim_vector
    return {"rows": list(rows.values())}


def error(count: float, sass: float) -> float:
    return 100.0 * (count - sass) / sass if sass else 0.0


GEMV_WARPS = (1, 16, 64)
GEMV_MODES = ("PTX as written", "codegen=ptxas", "SASS order by hand")


def measure_gemv() -> dict:
    from gpusim.labs import compiler

    values = compiler.run(progress=False, warps=GEMV_WARPS).values
    return {"warps": list(GEMV_WARPS), "cycles": {label: values["modes"][label]["cycles"] for label in GEMV_MODES}}


FMA_BLOCK = 256
FMA_PER_ROUND = 16
FMA_FADDS = 6              # x + 1, x + 2, x + 3 before the loop; a + b + c + d after it
FMA_ROUNDS = (1, 2, 3, 4, 5, 6, 8, 12, 16, 32, 64)
FMA_SCHEDULERS = ("gto", "lrr")


def fma_sass_instructions_per_warp(rounds: int) -> int:
    """Dynamic SASS instructions of one warp of ``fma_plain`` (all lanes in range) for ``rounds`` >= 1, from
    the listing's blocks: entry, parameter loads, trip-count split, [x4 set-up, x4 loop], remainder test,
    [x1 loop], exit."""
    from gpusim.codegen.sass import load_listing
    from gpusim.programs.catalog import programs_dir

    func = load_listing(programs_dir() / "sass" / "sm_90" / "codegen" / "fma_plain.sass")["fma_plain"]
    (main_head, main_latch), (rem_head, rem_latch) = sorted(func.loops())
    size = [b.size for b in func.blocks]
    assert main_head == main_latch and rem_head == rem_latch      # each loop one block, as ptxas lays it out
    setup, split = main_head - 1, main_head + 1
    straight = sum(size[:setup]) + size[split] + sum(size[rem_latch + 1:])
    return (straight + (size[setup] if rounds >= 4 else 0) + (rounds // 4) * size[main_head]
            + (rounds % 4) * size[rem_head])


def fma_ceiling_fraction_of_peak(rounds: int, config: Any) -> float:
    """FP32 rate of ``fma_plain``'s SASS with every issue slot filled: one warp-instruction per scheduler per
    cycle, and a scheduler's FP32 lanes are one warp wide, so the peak is one FFMA per slot."""
    assert config.fp32_lanes_per_sm // config.sub_partitions_per_sm == 32
    return (FMA_PER_ROUND * rounds + FMA_FADDS / 2) / fma_sass_instructions_per_warp(rounds)


def fma_plain_sweep(rounds_list: tuple[int, ...], scheduler: str | None = None) -> tuple[Any, Any, int, dict]:
    """``programs/codegen/fma_plain`` on a 2-SM slice of h100-sxm over 1.5 x the slice's L2 (every byte from
    DRAM), at each round count (tests/test_codegen_roofline.py): ``(config, roofline, n, points)``, a point
    holding the run, its DRAM intensity, FLOP/s achieved, the roof and the SASS ceiling in FLOP/s."""
    import numpy as np

    from gpusim.analytic.models import roofline
    from gpusim.api.gpu import GPU
    from gpusim.programs.catalog import programs_dir

    gpu = GPU("h100-sxm", sms=2) if scheduler is None else GPU("h100-sxm", sms=2, scheduler=scheduler)
    cfg = gpu.config
    kernel = gpu.load(str(programs_dir() / "codegen" / "fma_plain.ptx"))["fma_plain"]
    n = int(1.5 * cfg.l2_bytes / 4) // FMA_BLOCK * FMA_BLOCK
    x = gpu.to_device(np.random.default_rng(0).random(n, dtype=np.float32))
    out = gpu.zeros(n, np.float32)
    roofs = roofline(cfg)
    points = {}
    # one launch first: a launch leaves part of its output dirty in L2, and the next one's DRAM traffic
    # writes it back, so from the second launch on each moves 8 DRAM bytes per element as the roof counts
    gpu.launch(kernel, grid=n // FMA_BLOCK, block=FMA_BLOCK, args=[x, out, np.int32(n), np.int32(1)])
    for rounds in rounds_list:
        run = gpu.launch(kernel, grid=n // FMA_BLOCK, block=FMA_BLOCK, args=[x, out, np.int32(n), np.int32(rounds)])
        intensity = run.metrics["gpusim__arithmetic_intensity"]
        points[rounds] = {"run": run, "intensity": intensity, "achieved": run.metrics["gpusim__flop_per_second"],
                          "roof": roofs.attainable(intensity, "fp32", "dram_sustained"),
                          "ceiling": fma_ceiling_fraction_of_peak(rounds, cfg) * roofs.peak_flops["fp32"]}
    return cfg, roofs, n, points


def measure_fma_plain() -> dict:
    rows = {}
    for scheduler in FMA_SCHEDULERS:
        _, _, _, points = fma_plain_sweep(FMA_ROUNDS, scheduler)
        rows[scheduler] = [[round(100 * p["achieved"] / p["roof"]), round(100 * p["achieved"] / min(p["roof"],
                                                                                               p["ceiling"]))]
                           for p in points.values()]
    return {"rounds": list(FMA_ROUNDS), "rows": rows}


STREAM_WARPS = (1, 8, 32)
STREAM_ITERATIONS = 17


def stream_cycles(path: Path, mode: str, warps: int, iterations: int) -> int:
    """Cycles of ``stream_loads_v1`` from ``path`` on one SM of h100-sxm (its result checked against the
    count it must reach; tests/test_codegen.py uses the same run)."""
    import numpy as np

    from gpusim.api.gpu import GPU

    gpu = GPU("h100-sxm", sms=1, codegen=mode)
    kernel = gpu.load(str(path))["stream_loads_v1"]
    block = 32 * min(warps, 4)
    grid = warps * 32 // block
    threads = grid * block
    src = gpu.to_device(np.ones(threads * 4 * iterations + 16, np.float32))
    out = gpu.zeros(threads, np.float32)
    run = gpu.launch(kernel, grid=grid, block=block, args=[src, out, np.uint32(iterations)])
    np.testing.assert_array_equal(out.get(), np.full(threads, 4 * iterations, np.float32))
    return int(run.cycles)


def measure_stream_loads() -> dict:
    from gpusim.programs.catalog import programs_dir

    original = programs_dir() / "labs" / "stream_loads.ptx"
    variant = programs_dir() / "codegen" / "stream_loads_sass_order.ptx"
    rows = [{"warps": w, "written": stream_cycles(original, "none", w, STREAM_ITERATIONS),
             "ptxas": stream_cycles(original, "ptxas", w, STREAM_ITERATIONS),
             "sass": stream_cycles(variant, "none", w, STREAM_ITERATIONS)} for w in STREAM_WARPS]
    return {"rows": rows}


def matmul_cycles(path: Path, mode: str) -> int:
    """Cycles of the 64 x 64 x 256 tiled matmul in ``path`` on one SM of h100-sxm (its product checked
    against numpy; tests/test_codegen.py uses the same run)."""
    import numpy as np

    from gpusim.api.gpu import GPU

    gpu = GPU("h100-sxm", sms=1, codegen=mode)
    kernel = list(gpu.load(str(path)))[0]
    m, n, k = 64, 64, 256
    rng = np.random.default_rng(2)
    a, b = rng.random((m, k), dtype=np.float32), rng.random((k, n), dtype=np.float32)
    out = gpu.zeros((m, n))
    run = gpu.launch(kernel, grid=(n // 16, m // 16), block=(16, 16),
                     args=[gpu.to_device(a), gpu.to_device(b), out, m, n, k])
    np.testing.assert_allclose(out.get(), a.astype(np.float64) @ b, rtol=1e-4)
    return int(run.cycles)


def measure_matmul_tiled() -> dict:
    from gpusim.programs.catalog import programs_dir

    return {"written": matmul_cycles(programs_dir() / "matmul_tiled.ptx", "none"),
            "ptxas": matmul_cycles(programs_dir() / "matmul_tiled.ptx", "ptxas"),
            "sass": matmul_cycles(programs_dir() / "codegen" / "matmul_tiled_sass_order.ptx", "none")}


# -------------------------------------------------------------------------------- docs/tensor-cores.md

L2_CAP_ROWS = (("gemm_bf16_mma_4stage", 128, 128, "fp32"),
               ("gemm_bf16_mma_128x256", 128, 256, "fp32 (128 registers per thread)"),
               ("gemm_f16_mma_256x256", 256, 256, "f16, two per register (128 registers)"))


def _l2_cap_pct(config: Any, bm: int, bn: int) -> float:
    flop_per_l2_byte = 2 * bm * bn / ((bm + bn) * 2)
    return 100.0 * flop_per_l2_byte * config.l2_bytes_per_cycle / (
        config.mma_sync_flops_per_cycle_per_sm("fp16") * config.sms)


def measure_l2_caps() -> dict:
    from gpusim.arch.config import load_config

    config = load_config("h100-sxm")
    return {"rows": [{"kernel": name, "bm": bm, "bn": bn, "accumulators": acc, "flop_per_l2_byte": bm * bn / (bm + bn),
                      "cap_pct": _l2_cap_pct(config, bm, bn)} for name, bm, bn, acc in L2_CAP_ROWS]}


WIDE_KERNELS = {"gemm_f16_mma_256x256": (256, 256, 3), "gemm_bf16_mma_128x256": (128, 256, 3),
                "gemm_f16_mma_256x256_2stage": (256, 256, 2)}
WIDE_RUNS = (("h100-sxm", "gemm_f16_mma_256x256", 512, 512, 8192, 4),
             ("h100-sxm", "gemm_bf16_mma_128x256", 512, 1024, 4096, 8),
             ("h200", "gemm_f16_mma_256x256", 512, 512, 8192, 4),
             ("h200", "gemm_bf16_mma_128x256", 512, 1024, 4096, 8),
             ("a100", "gemm_f16_mma_256x256_2stage", 512, 512, 8192, 4),
             ("a100", "gemm_bf16_mma_128x256", 512, 1024, 4096, 8))
"""(config, kernel, M, N, K, SMs) as tests/test_tensor_gemm_wide.py runs them (cold caches)."""


def _wide_run(config_name: str, name: str, m: int, n: int, k: int, sms: int) -> dict:
    import numpy as np

    from gpusim.api.gpu import GPU
    from gpusim.labs.support import PROGRAMS_DIR

    gpu = GPU(config_name, sms=sms)
    bm, bn, stages = WIDE_KERNELS[name]
    rng = np.random.default_rng(7 if "f16_mma" in name else 8)
    if "f16_mma" in name:       # multiples of 1/64 in [-1, 1] (as the tests use)
        a = (rng.integers(-64, 65, (m, k)) / 64).astype(np.float16).view(np.uint16)
        b = (rng.integers(-64, 65, (n, k)) / 64).astype(np.float16).view(np.uint16)
    else:                       # bf16 bits of uniform [-1, 1)
        a = (rng.uniform(-1, 1, (m, k)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        b = (rng.uniform(-1, 1, (n, k)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    kernel = gpu.load(str(PROGRAMS_DIR / "gemm_mma_wide.ptx"))[name]
    run = gpu.launch(kernel, grid=(-(-n // bn), -(-m // bm)), block=256, shared_bytes=stages * (bm + bn) * (128 + 16),
                     cache_control="all", args=[gpu.to_device(a), gpu.to_device(b), gpu.zeros(m * n, np.uint16),
                                                np.int32(m), np.int32(n), np.int32(k)])
    config = gpu.config
    rate = config.mma_sync_flops_per_cycle_per_sm("fp16") * config.sms
    return {"config": config_name, "kernel": name, "size": f"{m} x {n} x {k}", "sms": sms,
            "pct_of_mma_sync": 100.0 * 2 * m * n * k / run.cycles / rate, "cap_pct": _l2_cap_pct(config, bm, bn),
            "l2_pct": run.metrics["lts__throughput.avg.pct_of_peak_sustained_elapsed"],
            "dram_pct": run.metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"]}


def measure_wide_gemms() -> dict:
    return {"rows": [_wide_run(*run) for run in WIDE_RUNS]}


# ------------------------------------------------------------------------------------- docs/kernels.md


def measure_registers() -> dict:
    """gpusim's register allocation (no ptxas) against the committed ``ptxas -v`` counts of every kernel of
    the conformance corpus and the numba.cuda/Triton examples (tests/data/ptxas_regs.json), as
    tests/test_regalloc.py compares them."""
    import json

    import gpusim
    from gpusim.codegen.regalloc import register_cap

    root = Path(__file__).resolve().parent.parent
    reference = json.loads((root / "tests" / "data" / "ptxas_regs.json").read_text())
    gpus = {"sm_90": gpusim.GPU("h100-sxm"), "sm_80": gpusim.GPU("a100")}
    rows: list[dict[str, Any]] = []
    for rel, entry in sorted(reference.items()):
        gpu = gpus[entry["arch"]]
        module = gpu.load_ptx((root / rel).read_text(), rel)
        for name, ptxas in sorted(entry["kernels"].items()):
            program = module[name].program
            cap, _ = register_cap(program.directives, gpu.config)
            rows.append({"file": rel, "kernel": name, "arch": entry["arch"], "ptxas": ptxas,
                         "gpusim": int(program.regs_estimate), "cap": cap})
    return {"rows": rows}


# ---------------------------------------------------------------- docs/tensor-cores.md: the wgmma GEMM

WGMMA_TILE = (128, 256)
WGMMA_SHARED = 4 * (128 + 256) * 128 + 1024
WGMMA_STEADY_K = (256, 512)
WGMMA_WHOLE = ((512, 512, 2048, 8), (1408, 3072, 1024, 132))
"""programs/gemm_wgmma: (M, N, K, SMs) of the whole-GEMM runs on h100-sxm (cold caches; 132: one tile per SM)."""


def _wgmma_launch(gpu: Any, m: int, n: int, k: int, times: int = 1) -> Any:
    import numpy as np

    from gpusim.labs.support import PROGRAMS_DIR

    rng = np.random.default_rng(3)
    bits = [(rng.uniform(-1, 1, (rows, k)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
            for rows in (m, n)]
    kernel = gpu.load(str(PROGRAMS_DIR / "gemm_wgmma.ptx"))["gemm_wgmma"]
    a, b = (gpu.to_device(x) for x in bits)
    c = gpu.zeros(m * n, np.float32)
    bm, bn = WGMMA_TILE
    for _ in range(times):
        run = gpu.launch(kernel, grid=(-(-n // bn), -(-m // bm)), block=256, shared_bytes=WGMMA_SHARED,
                         args=[a, b, c, np.int32(m), np.int32(n), np.int32(k)])
    expect = (bits[0].astype(np.uint32) << 16).view(np.float32).astype(np.float64) @ \
        (bits[1].astype(np.uint32) << 16).view(np.float32).astype(np.float64).T
    assert np.abs(c.get().reshape(m, n) - expect).max() <= -(-k // 16) * k * 2.0 ** -24
    return run


def _wgmma_row(case: str, run: Any, flops: float, sms: int, config: Any, steady: float | None) -> dict:
    metrics = run.metrics
    stalls = {key.split("stalled_")[1].removesuffix(".sum"): value for key, value in metrics.items()
              if "warps_issue_stalled_" in key and key.endswith(".sum")}
    total = sum(stalls.values()) or 1
    top = sorted(((v, k) for k, v in stalls.items() if k != "selected"), reverse=True)[:3]
    bm, bn = WGMMA_TILE
    l2_roof = config.l2_bytes_per_cycle / config.sms * (2 * bm * bn / ((bm + bn) * 2))
    peak = config.tensor_flops_per_cycle_per_sm
    return {"case": case, "sms": sms, "steady_pct": None if steady is None else 100 * steady / peak,
            "whole_pct": 100 * flops / run.cycles / sms / peak,
            "pipe_pct": metrics["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"],
            "l2_pct": metrics["lts__throughput.avg.pct_of_peak_sustained_elapsed"],
            "dram_pct": metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
            "l2_roof_pct": min(100.0, 100 * l2_roof / peak),
            "stalls": [(k, 100 * v / total) for v, k in top]}


def measure_wgmma_gemm() -> dict:
    from gpusim.api.gpu import GPU

    bm, bn = WGMMA_TILE
    rows = []
    base = GPU("h100-sxm", sms=1).config
    port = base.interconnect_bytes_per_cycle_per_sm
    for case, overrides in (("1 SM, L2 at the SM's port rate", {"l2_bytes_per_cycle": port,
                                                                "l2_write_bytes_per_cycle": port}),
                            ("1 SM, h100-sxm as configured", {})):
        gpu = GPU("h100-sxm", sms=1, **overrides)
        short, long = (_wgmma_launch(gpu, bm, bn, k, times=2) for k in WGMMA_STEADY_K)
        k0, k1 = WGMMA_STEADY_K
        steady = 2 * bm * bn * (k1 - k0) / (long.cycles - short.cycles)
        rows.append(_wgmma_row(f"{case}: {bm} x {bn} x {k1}, operands in L2", long, 2 * bm * bn * k1, 1,
                               gpu.config, steady))
    for m, n, k, sms in WGMMA_WHOLE:
        gpu = GPU("h100-sxm", sms=sms)
        run = _wgmma_launch(gpu, m, n, k)
        rows.append(_wgmma_row(f"{sms} SMs, h100-sxm as configured: {m} x {n} x {k}, cold caches", run,
                               2 * m * n * k, sms, gpu.config, None))
    return {"rows": rows}
