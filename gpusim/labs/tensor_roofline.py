"""Lab `tensor-roofline`: FP32 and tensor-core ceilings side by side, the 16-bit ridge points of two chips,
and a mma.sync FLOP-intensity sweep whose knee lands on the ridge mma.sync can attain.

1. **Ceilings.** For ``config`` and ``other`` (default h100-sxm and h200: the same GH100 compute, 3.35 vs
   4.8 TB/s), the FP32 peak, the dense tensor peaks per input type (FP16/BF16, TF32, FP8, INT8) and the rate
   mma.sync attains (gpusim.analytic.models.tensor_peaks: FLOPs per mma x sub-partitions / the config's
   tensor-pipe interval per mma), each with its ridge point = peak / DRAM bandwidth. Everything comes from
   the config fields; ``clock_mhz`` overrides both chips' clock (NVIDIA's 989 TFLOP/s dense BF16 figure is at
   1830 MHz, the configs run at the driver's 1980: docs/configs.md).
2. **Sweep** (programs/labs/tensor_intensity.cu on a slice of ``sms`` SMs of each chip): every warp streams
   512-byte tiles, 4 per step, and runs ``rounds`` mma.sync.m16n8k16 bf16 on each (4 independent ones per
   round), loading its next 4 tiles first (2 KiB in flight per warp: with one tile, 512 bytes, the loaded
   DRAM latency held h200's stream at 81 % of its sustained bandwidth); 8 x rounds FLOP per DRAM byte.
   Arrays are about ``l2_multiple`` x the slice's L2 (a whole number of steps for every warp), so every
   tile comes from DRAM. The measured knee is the FLOP/s plateau over the bandwidth measured on the memory side
   (intensities under half the attainable ridge), as in the ``roofline`` lab.
3. **Between the ridges.** The same kernel at the rounds whose intensity is nearest the geometric mean of
   the two chips' attainable ridges: the report's verdict (gpusim.observe.report.verdict) calls it
   memory-bound on the chip with less bandwidth and compute-bound on the other.

Simplifications: the attainable ridge uses the sustained DRAM bandwidth (peak x dram_efficiency), which is
what a streaming kernel reaches; FLOPs are counted from the kernel's arithmetic (tiles x rounds x 4096) and
DRAM bytes from the run's counters. mma.sync reaches ~67 % of H100's dense peak (one HMMA.16816 per
~6 cycles per sub-partition, measured): the last third needs wgmma (Hopper's warpgroup mma from shared
memory), which programs/gemm_wgmma uses (docs/tensor-cores.md, "Hopper: wgmma").
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from gpusim.analytic.models import occupancy, roofline
from gpusim.arch.config import WARP_SIZE, load_config
from gpusim.errors import LaunchError
from gpusim.labs.support import LAB_PROGRAMS_DIR, LabResult, format_table, progress_items, pyplot, save
from gpusim.observe.report import verdict

NAME = "tensor-roofline"
TITLE = "Tensor-core roofline: 16-bit ridges of two chips, a mma.sync intensity sweep and its knee"
DEFAULT_CONFIG = "h100-sxm"
DEFAULT_OTHER = "h200"
PROGRAM = LAB_PROGRAMS_DIR / "tensor_intensity.ptx"
ROUNDS = (4, 8, 12, 16, 24, 32, 64, 128)
BLOCK_THREADS = 256
TILE_BYTES = 512           # 16 bytes per lane (tensor_intensity.cu)
TILES_PER_STEP = 4         # per warp
MMA_PER_TILE_ROUND = 1
FLOPS_PER_MMA = 2 * 16 * 8 * 16
CEILINGS = ("fp32", "tensor_bf16", "tensor_tf32", "tensor_fp8", "tensor_int8", "mma_sync_bf16")
ATTAINABLE = "mma_sync_bf16"
"""The ceiling the sweep's kernel can reach: mma.sync m16n8k16 bf16."""
WGMMA_NOTE = ("mma.sync reaches {pct:.0f}% of the dense BF16 peak; the last third of the peak needs wgmma "
              "(warpgroup mma from shared memory, Hopper), as programs/gemm_wgmma uses it: its K loop keeps the "
              "tensor pipe busy when L2 feeds the SM fast enough (docs/tensor-cores.md)")


def _bf16_tiles(tiles: int) -> np.ndarray:
    """Random bf16 values in [-1, 1) as packed uint32 pairs, 128 words (512 bytes) per tile."""
    values = np.random.default_rng(0).uniform(-1.0, 1.0, tiles * TILE_BYTES // 2).astype(np.float32)
    halves = (values.view(np.uint32) >> 16).astype(np.uint16)
    return halves.view(np.uint32)


def intensity_of(rounds: int) -> float:
    """FLOP per DRAM byte of tensor_intensity at ``rounds``: rounds mma x 4096 FLOPs per 512-byte tile."""
    return rounds * MMA_PER_TILE_ROUND * FLOPS_PER_MMA / TILE_BYTES


def ceilings(chip: Any) -> dict:
    """{precision: (FLOP/s, ridge vs peak DRAM, ridge vs sustained DRAM)} of config ``chip`` for CEILINGS."""
    roofs = roofline(chip)
    return {p: (roofs.peak_flops[p], roofs.ridge_point(p, "dram"), roofs.ridge_point(p, "dram_sustained"))
            for p in CEILINGS if p in roofs.peak_flops}


class _Chip:
    """One chip's slice, its kernel and its input arrays, for the sweep and the between-ridges kernel."""

    def __init__(self, name: str, sms: int, l2_multiple: float, clock_mhz: float | None) -> None:
        from gpusim.api.gpu import GPU

        clock: dict[str, Any] = {} if clock_mhz is None else {"core_clock_mhz": clock_mhz}
        self.chip = load_config(name, **clock)
        self.gpu = GPU(name, sms=sms, **clock)
        cfg = self.gpu.config
        if cfg.mma_f16_m16n8k16_interval_cycles == 0:
            raise LaunchError(f"tensor-roofline lab: {cfg.name} has no mma.sync m16n8k16 bf16 "
                              f"(mma_f16_m16n8k16_interval_cycles = 0)")
        self.kernel = self.gpu.load(str(PROGRAM))["tensor_intensity"]
        self.roofs = roofline(cfg)
        regs, _ = self.kernel.registers_per_thread()
        self.blocks = cfg.sms * occupancy(cfg, BLOCK_THREADS, regs).blocks_per_sm  # one wave, every SM full
        step = TILES_PER_STEP * self.blocks * BLOCK_THREADS // WARP_SIZE  # tiles per grid-wide step
        self.tiles = max(1, round(l2_multiple * cfg.l2_bytes / TILE_BYTES / step)) * step
        self.source = self.gpu.to_device(_bf16_tiles(self.tiles))
        self.out = self.gpu.zeros(4 * self.blocks * BLOCK_THREADS, np.float32)

    def launch(self, rounds: int) -> tuple[Any, dict]:
        run = self.gpu.launch(self.kernel, grid=self.blocks, block=BLOCK_THREADS,
                              args=[self.source, self.out, np.int32(self.tiles), np.int32(rounds)],
                              cache_control="all")
        metrics = run.metrics
        flops = float(self.tiles * rounds * MMA_PER_TILE_ROUND * FLOPS_PER_MMA)
        dram_bytes = metrics["dram__bytes_read.sum"] + metrics["dram__bytes_write.sum"]
        attainable = self.roofs.peak_flops[ATTAINABLE]
        intensity = flops / dram_bytes
        return run, {
            "rounds": rounds, "intensity": intensity, "analytic_intensity": intensity_of(rounds),
            "flops_per_s": flops / run.seconds,
            "pct_of_mma_sync": 100.0 * flops / run.seconds / attainable,
            "pct_of_roof": 100.0 * flops / run.seconds / self.roofs.attainable(intensity, ATTAINABLE,
                                                                               "dram_sustained"),
            "dram_pct": metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
            "tensor_pipe_pct": metrics.get("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", 0.0),
        }


def _sweep(chip: _Chip, rounds: tuple, progress: bool) -> dict:
    roofs = chip.roofs
    ridge = roofs.ridge_point(ATTAINABLE, "dram_sustained")
    points = [chip.launch(int(r))[1] for r in progress_items(rounds, f"{NAME} {chip.gpu.config.name}", progress)]
    memory_side = [p for p in points if p["intensity"] < ridge / 2]
    if not memory_side:
        raise LaunchError(f"tensor-roofline lab: no sweep point under half the ridge ({ridge:.0f} FLOP/B); "
                          f"add smaller rounds (rounds={rounds})")
    bandwidth = float(np.median([p["flops_per_s"] / p["intensity"] for p in memory_side]))
    plateau = max(p["flops_per_s"] for p in points)
    return {"points": points, "attainable_ridge": ridge, "measured_bandwidth": bandwidth,
            "plateau_flops": plateau, "knee": plateau / bandwidth,
            "knee_vs_ridge": plateau / bandwidth / ridge,
            "plateau_pct_of_mma_sync": 100.0 * plateau / roofs.peak_flops[ATTAINABLE],
            "mma_sync_pct_of_dense": 100.0 * roofs.peak_flops[ATTAINABLE] / roofs.peak_flops["tensor_bf16"]}


def between_rounds(ridge_low: float, ridge_high: float) -> int:
    """The rounds whose intensity is nearest the geometric mean of two ridges (at least 1)."""
    middle = math.sqrt(ridge_low * ridge_high)
    return max(1, round(middle / intensity_of(1)))


def run(config: Any = None, plot_dir: str | Path | None = None, progress: bool = True, *, other: str = DEFAULT_OTHER,
        sms: int = 4, rounds: tuple = ROUNDS, l2_multiple: float = 2.0, clock_mhz: float | None = None
        ) -> LabResult:
    """Ceilings and ridges of ``config`` and ``other``, the sweep on each, and the between-ridges kernel."""
    names = [config or DEFAULT_CONFIG, other]
    chips = {name: _Chip(name, sms, l2_multiple, clock_mhz) for name in names}
    configs = {name: chip.chip for name, chip in chips.items()}
    tables = {name: ceilings(cfg) for name, cfg in configs.items()}
    sweeps = {name: _sweep(chip, rounds, progress) for name, chip in chips.items()}
    low, high = sorted(names, key=lambda n: sweeps[n]["attainable_ridge"])
    middle_rounds = between_rounds(sweeps[low]["attainable_ridge"], sweeps[high]["attainable_ridge"])
    between = {}
    for name, chip in chips.items():
        result, point = chip.launch(middle_rounds)
        judged = verdict(result)
        between[name] = {**point, "verdict": judged.kind, "reason": judged.reason}
    values = {"configs": names, "sms": sms, "ceilings": tables, "sweeps": sweeps, "between_rounds": middle_rounds,
              "between_intensity": intensity_of(middle_rounds), "between": between,
              "clock_mhz": {name: cfg.core_clock_mhz for name, cfg in configs.items()}}
    table = _table(values, configs)
    first = names[0]
    lesson = (
        f"The 16-bit tensor cores move the ridge point far right of FP32's: dense BF16 over DRAM is "
        f"{tables[first]['tensor_bf16'][1]:.0f} FLOP/B on {first} and "
        f"{tables[other]['tensor_bf16'][1]:.0f} on {other} (same compute, more bandwidth), against FP32's "
        f"{tables[first]['fp32'][1]:.0f}. A kernel made of mma.sync can only reach "
        f"{sweeps[first]['mma_sync_pct_of_dense']:.0f}% of the dense peak, so its own ridge, against the "
        f"sustained bandwidth, is {sweeps[first]['attainable_ridge']:.0f} and "
        f"{sweeps[other]['attainable_ridge']:.0f}; the sweep's knees land at {sweeps[first]['knee']:.0f} and "
        f"{sweeps[other]['knee']:.0f}. A kernel at {values['between_intensity']:.0f} FLOP/B, between the two "
        f"ridges, is {between[first]['verdict']} on {first} and {between[other]['verdict']} on {other}: "
        f"more bandwidth turns the same kernel compute-bound. "
        + WGMMA_NOTE.format(pct=sweeps[first]["mma_sync_pct_of_dense"]) + "."
    )
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figures.append(_plot(plt, plot_dir, values, chips))
    return LabResult(NAME, TITLE, table, lesson, values, figures)


def _table(values: dict, configs: dict) -> str:
    names = values["configs"]
    rows = []
    for precision in CEILINGS:
        row: list[object] = [precision]
        for name in names:
            peak, ridge, sustained = values["ceilings"][name].get(precision, (0.0, 0.0, 0.0))
            row += [peak / 1e12, ridge, sustained]
        rows.append(row)
    header = ["ceiling"]
    for name in names:
        header += [f"{name} TFLOP/s", "ridge", "vs sustained"]
    clocks = ", ".join(f"{name} {cfg.core_clock_mhz:g} MHz, {cfg.sms} SMs, {cfg.dram_bandwidth_gbs / 1e3:.2f} TB/s"
                       for name, cfg in configs.items())
    text = format_table(header, rows) + f"\n\nwhole chips ({clocks}); ridge = peak / DRAM bandwidth, FLOP/B\n"
    for name in names:
        sweep = values["sweeps"][name]
        text += f"\n{name}, {values['sms']} SMs: tensor_intensity sweep\n"
        text += format_table(
            ["rounds", "FLOP/B", "analytic", "TFLOP/s", "% of mma.sync", "% of roof", "DRAM %", "tensor pipe %"],
            [[p["rounds"], p["intensity"], p["analytic_intensity"], p["flops_per_s"] / 1e12, p["pct_of_mma_sync"],
              p["pct_of_roof"], p["dram_pct"], p["tensor_pipe_pct"]] for p in sweep["points"]])
        text += (f"\nmeasured knee {sweep['knee']:.0f} FLOP/B (plateau {sweep['plateau_flops'] / 1e12:.2f} "
                 f"TFLOP/s / measured {sweep['measured_bandwidth'] / 1e9:.1f} GB/s) against the mma.sync ridge "
                 f"{sweep['attainable_ridge']:.0f}: {sweep['knee_vs_ridge']:.2f}x\n")
    text += f"\nbetween the ridges: rounds {values['between_rounds']} ({values['between_intensity']:.0f} FLOP/B)\n"
    text += format_table(["chip", "DRAM %", "% of mma.sync", "tensor pipe %", "report verdict"],
                         [[name, b["dram_pct"], b["pct_of_mma_sync"], b["tensor_pipe_pct"], b["verdict"]]
                          for name, b in values["between"].items()])
    return text


def _plot(plt: Any, plot_dir: str | Path, values: dict, chips: dict) -> Path:
    figure, axes = plt.subplots(figsize=(7, 4.5))
    grid = np.logspace(0, 3.5, 200)
    for index, (name, chip) in enumerate(chips.items()):
        roofs = chip.roofs
        color = f"C{index}"
        for precision, style in (("fp32", ":"), ("tensor_bf16", "--"), (ATTAINABLE, "-")):
            axes.loglog(grid, [roofs.attainable(x, precision, "dram_sustained") / 1e12 for x in grid],
                        color=color, linestyle=style, lw=1, label=f"{name} {precision}")
        points = values["sweeps"][name]["points"]
        axes.loglog([p["intensity"] for p in points], [p["flops_per_s"] / 1e12 for p in points], "o",
                    color=color, label=f"{name} simulated")
    axes.set_xlabel("FLOP per DRAM byte")
    axes.set_ylabel(f"TFLOP/s ({values['sms']} SMs)")
    axes.set_title("tensor-core roofline: FP32, dense BF16 and mma.sync ceilings")
    axes.legend(fontsize=7)
    return save(figure, plot_dir, "tensor_roofline.png")
