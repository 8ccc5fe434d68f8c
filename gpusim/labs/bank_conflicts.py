"""Lab `bank-conflicts`: a shared-memory transpose with a 32 x 32 tile (programs/labs/transpose_shared.cu)
against the same kernel with a 32 x 33 tile (programs/transpose_padded.cu).

Reading a tile column puts all 32 lanes on one bank (row pitch 32 words = 0 mod 32 banks): each shared
load takes 32 wavefronts. One word of padding shifts each row by a bank, so the column spans all 32
banks: 1 wavefront. The lab compares the measured wavefronts with those counts, and the time.

Simplifications: the stores into the tile (row-wise) are conflict-free in both kernels; global traffic
is the same in both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.labs.support import LAB_PROGRAMS_DIR, PROGRAMS_DIR, LabResult, format_table, progress_items, pyplot, save

NAME = "bank-conflicts"
TITLE = "Shared-memory bank conflicts: transpose with and without padding"
DEFAULT_CONFIG = "h100-sxm"
TILE = 32
ROWS_PER_PASS = 8


def analytic_wavefronts_per_load(row_pitch_words: int, banks: int, warp_size: int = 32) -> int:
    """Wavefronts of one warp reading a tile column: lanes on the busiest bank."""
    counts = np.bincount([(lane * row_pitch_words) % banks for lane in range(warp_size)], minlength=banks)
    return int(counts.max())


def run(config: Any = None, plot_dir: str | Path | None = None, progress: bool = True, *, sms: int = 2,
        size: int = 512) -> LabResult:
    from gpusim.api.gpu import GPU

    gpu = GPU(config or DEFAULT_CONFIG, sms=sms)
    cfg = gpu.config
    kernels = {"unpadded": (gpu.load(str(LAB_PROGRAMS_DIR / "transpose_shared.ptx"))["transpose_shared"], TILE),
               "padded": (gpu.load(str(PROGRAMS_DIR / "transpose_padded.ptx"))["transpose_padded"], TILE + 1)}
    matrix = np.random.default_rng(0).random((size, size), dtype=np.float32)
    source = gpu.to_device(matrix)
    results = {}
    for name in progress_items(kernels, NAME, progress):
        kernel, pitch = kernels[name]
        out = gpu.zeros(size * size, np.float32)
        result = gpu.launch(kernel, grid=(size // TILE, size // TILE), block=(TILE, ROWS_PER_PASS),
                            args=[source, out, np.int32(size), np.int32(size)])
        metrics = result.metrics
        loads = metrics["smsp__inst_executed_op_shared_ld.sum"]
        results[name] = {"cycles": result.cycles, "shared_load_requests": loads,
                         "wavefronts": metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"],
                         "bank_conflicts": metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"],
                         "analytic_wavefronts_per_load": analytic_wavefronts_per_load(pitch, cfg.shared_banks),
                         "correct": bool(np.array_equal(out.get().reshape(size, size), matrix.T))}
        results[name]["wavefronts_per_load"] = results[name]["wavefronts"] / loads
    values = {"config": cfg.name, "sms": sms, "size": size, **results,
              "time_ratio": results["unpadded"]["cycles"] / results["padded"]["cycles"]}
    rows = [[name, r["cycles"], r["shared_load_requests"], r["wavefronts"], r["wavefronts_per_load"],
             r["analytic_wavefronts_per_load"], r["bank_conflicts"]] for name, r in results.items()]
    table = format_table(["tile", "cycles", "shared loads", "wavefronts", "wavefronts/load", "analytic",
                          "conflicts"], rows)
    lesson = (f"Shared memory has {cfg.shared_banks} banks of {cfg.shared_bank_bytes} bytes. A column of a "
              f"32 x 32 float tile is 32 words on one bank, so each warp's read is replayed "
              f"{results['unpadded']['wavefronts_per_load']:.0f} times; a 33-word row pitch spreads the column "
              f"over all banks and the read takes {results['padded']['wavefronts_per_load']:.0f} wavefront. "
              f"The unpadded transpose takes {values['time_ratio']:.2f}x the time of the padded one.")
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figure, (left, right) = plt.subplots(1, 2, figsize=(8, 3.5))
        left.bar(list(results), [r["wavefronts_per_load"] for r in results.values()])
        left.set_ylabel("wavefronts per shared load")
        right.bar(list(results), [r["cycles"] for r in results.values()], color="C1")
        right.set_ylabel("cycles")
        figures.append(save(figure, plot_dir, "bank_conflicts.png"))
    return LabResult(NAME, TITLE, table, lesson, values, figures)
