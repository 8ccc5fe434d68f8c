"""Lab `compiler`: the same kernel timed as PTX in program order and as the stream ptxas would make of it.

Kernel programs/gemv.cu (``y = A x``, one warp per row, 4096 columns): nvcc's PTX unrolls the column loop
4 times, and each FMA right after its two loads; ptxas's SASS unrolls it 4 times more and issues 16 loads
before the first FFMA (programs/sass/sm_90/gemv.sass). The lab runs it with ``codegen="none"`` (the PTX as
written), ``codegen="ptxas"`` (gpusim.codegen) and, as a reference, the same kernel hand-written in
ptxas's SASS order (programs/codegen/gemv_sass_order.ptx, run as written), at 1 to 64 warps per SM on a
2-SM slice. Per mode: the memory-level parallelism of one warp (loads its main loop issues before the
first use of one), cycles, throughput (matrix elements per cycle), and the latency-hiding knee: the fewest
warps per SM that reach 90 % of the mode's best throughput.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.labs.support import LabResult, format_table, progress_items, pyplot, save
from gpusim.programs.catalog import programs_dir

NAME = "compiler"
TITLE = "Compiler: PTX as written against the stream ptxas would make"
DEFAULT_CONFIG = "h100-sxm"
WARPS = (1, 2, 4, 8, 16, 32, 64)
COLUMNS = 4096
KNEE_FRACTION = 0.9
MODES = (("PTX as written", "gemv.ptx", "none"), ("codegen=ptxas", "gemv.ptx", "ptxas"),
         ("SASS order by hand", "codegen/gemv_sass_order.ptx", "none"))


def loads_before_first_use(program) -> int:
    """In the loop with the most loads: the loads issued before the first instruction reading one of them."""
    code = program.code
    loops = [(int(code[pc, L.F_TARGET]), pc) for pc in range(program.n_inst)
             if code[pc, L.F_OP] == c.OP_BRA and code[pc, L.F_TARGET] <= pc]
    if not loops:
        return 0
    start, end = max(loops, key=lambda se: int(sum(code[p, L.F_OP] == c.OP_LD for p in range(se[0], se[1] + 1))))
    loaded: set[int] = set()
    count = 0
    for pc in range(start, end + 1):
        row = code[pc]
        sources = {int(row[L.F_SK0 + 2 * i + 1]) for i in range(int(row[L.F_NSRC]))
                   if row[L.F_SK0 + 2 * i] in (L.SK_REG, L.SK_REGNEG)}
        if sources & loaded:
            break
        if row[L.F_OP] == c.OP_LD:
            count += 1
            loaded |= {int(row[L.F_DST0 + i]) for i in range(int(row[L.F_NDST]))}
    return count


def run(config: Any = None, plot_dir: str | Path | None = None, progress: bool = True, *, sms: int = 2,
        warps: tuple = WARPS, columns: int = COLUMNS) -> LabResult:
    """Sweep warps per SM for each mode."""
    from gpusim.api.gpu import GPU

    rng = np.random.default_rng(0)
    results: dict[str, dict] = {}
    for label, ptx, mode in MODES:
        gpu = GPU(config or DEFAULT_CONFIG, sms=sms, codegen=mode)
        kernel = list(gpu.load(str(programs_dir() / ptx)))[0]
        cycles = []
        for count in progress_items(warps, f"{NAME} ({label})", progress):
            rows = sms * count
            a = rng.random((rows, columns), dtype=np.float32)
            x = rng.random(columns, dtype=np.float32)
            y = gpu.zeros(rows)
            per_block = min(count, 32)                 # at most 1024 threads per block
            run_ = gpu.launch(kernel, grid=rows // per_block, block=32 * per_block,
                              args=[gpu.to_device(a), gpu.to_device(x), y, np.int32(rows), np.int32(columns)])
            if not np.allclose(y.get(), a.astype(np.float64) @ x, rtol=1e-4):
                raise AssertionError(f"lab {NAME}: {label} computed a wrong y")
            cycles.append(int(run_.cycles))
        throughput = [sms * w * columns / cy for w, cy in zip(warps, cycles, strict=True)]
        best = max(throughput)
        knee = next(w for w, t in zip(warps, throughput, strict=True) if t >= KNEE_FRACTION * best)
        results[label] = {"mode": mode, "ptx": ptx, "cycles": cycles, "throughput": throughput, "knee": knee,
                          "loads_in_flight": loads_before_first_use(kernel.program)}
    labels = [m[0] for m in MODES]
    rows = []
    for k, count in enumerate(warps):
        row: list[object] = [count]
        for label in labels:
            row += [results[label]["cycles"][k], results[label]["throughput"][k]]
        row.append(results[labels[0]]["cycles"][k] / results[labels[1]]["cycles"][k])
        rows.append(row)
    header = ["warps/SM"]
    for label in labels:
        header += [f"cycles ({label})", "elem/cycle"]
    header.append("written / ptxas")
    table = format_table(header, rows)
    table += "\n\n" + format_table(["mode", "loads before first use", "knee (warps/SM)"],
                                   [[label, results[label]["loads_in_flight"], results[label]["knee"]]
                                    for label in labels])
    written, made, sass = (results[label] for label in labels)
    lesson = (f"Each warp of the PTX as written has {written['loads_in_flight']} loads in flight before it "
              f"waits; the stream ptxas would make has {made['loads_in_flight']} (its SASS: 16), so one warp "
              f"per SM runs {written['cycles'][0] / made['cycles'][0]:.1f}x faster "
              f"({made['cycles'][0] / sass['cycles'][0]:.2f}x the hand-written SASS order), and the "
              f"latency-hiding knee moves from {written['knee']} to {made['knee']} warps per SM. With enough "
              f"warps the difference shrinks ({written['cycles'][-1] / made['cycles'][-1]:.2f}x at "
              f"{warps[-1]}): other warps hide what one warp's order does not. Kernels timed in program "
              f"order need more occupancy than compiled code to hide the same latency.")
    values = {"warps": list(warps), "columns": columns, "sms": sms, "modes": results}
    figures = []
    plt = pyplot()
    if plot_dir is not None and plt is not None:
        figure, axes = plt.subplots(figsize=(6, 4))
        for label in labels:
            axes.semilogx(warps, results[label]["throughput"], "o-", label=label, base=2)
        axes.set_xlabel("warps per SM")
        axes.set_ylabel("matrix elements per cycle")
        axes.set_title(f"gemv {columns} columns: program order vs ptxas order")
        axes.legend()
        figures.append(save(figure, plot_dir, "compiler.png"))
    return LabResult(NAME, TITLE, table, lesson, values, figures)
