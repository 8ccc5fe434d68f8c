"""Turns the Nsight Compute counters validation/hardware.py's `counters` section read on a real GPU (the raw CSV,
kept in the measurement file's "ncu" entry) into per-kernel ratios the counters case compares with gpusim's own
metrics of the same names: ratios of one launch's counters, so gpusim can run a few blocks of the same launch.

    python -m validation.ncu_ratios validation/measured/h200c.json     # rewrites its "measurements" list

RATIOS names each ratio's numerator and denominator metric ("blocks": the launch's block count)."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

RATIOS = {
    "warp instructions per block": ("smsp__inst_executed.sum", "blocks"),
    "sectors per global load request": ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                                        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
    "sectors per global store request": ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                                         "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
    "wavefronts per shared load": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                                   "smsp__inst_executed_op_shared_ld.sum"),
}


def counters(text: str) -> dict:
    """{kernel: {metric: value, "blocks": n}} from ncu's --csv output (the first launch of each kernel)."""
    rows = list(csv.reader(io.StringIO("\n".join(line for line in text.splitlines() if line.startswith('"')))))
    head = rows[0]
    col = {name: head.index(name) for name in ("ID", "Kernel Name", "Grid Size", "Metric Name", "Metric Value")}
    out: dict = {}
    first_id: dict = {}
    for row in rows[1:]:
        kernel = row[col["Kernel Name"]].split("(")[0]
        if first_id.setdefault(kernel, row[col["ID"]]) != row[col["ID"]]:
            continue
        grid = [int(x) for x in row[col["Grid Size"]].strip("()").split(",")]
        entry = out.setdefault(kernel, {"blocks": float(grid[0] * grid[1] * grid[2])})
        entry[row[col["Metric Name"]]] = float(row[col["Metric Value"]].replace(",", ""))
    return out


def ratios(text: str) -> list[dict]:
    """One measurement entry per (kernel, ratio) whose denominator is not zero."""
    entries = []
    for kernel, values in counters(text).items():
        for name, (num, den) in RATIOS.items():
            if values.get(den, 0.0) > 0 and values.get(num, 0.0) > 0:
                entries.append({"family": "ncu_ratio", "kernel": kernel, "ratio": name,
                                "value": values[num] / values[den], "unit": "ratio", "numerator": values[num],
                                "denominator": values[den]})
    return entries


def main(argv=None) -> int:
    path = Path((argv or sys.argv[1:])[0])
    data = json.loads(path.read_text())
    data["measurements"] = ratios(data["ncu"]["csv"])
    path.write_text(json.dumps(data, indent=1))
    print(f"{path}: {len(data['measurements'])} ratios")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
