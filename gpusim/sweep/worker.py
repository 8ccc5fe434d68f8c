"""What a sweep worker runs: one point (``run_task``) and the warm-up (``warm_up``).

``run_task(task)`` builds ``GPU(config, **keywords)``, writes the point's PTX into a private temporary
folder, runs the program's launches (``gpusim.programs.run_program``) and returns the point's *record*:
plain scalars only (str, int, float, bool, None), the same in any process and after a trip through the
store. A point that raises records ``status = "error"`` with the exception's type and message instead,
so the rest of the sweep goes on.

The record of a timed point holds the total cycles and seconds of its launches and, for the launch with
the most cycles (the only one, for most programs), every metric by its name, the stall breakdown
(``stalls.<reason>``, warp-cycles), the report's verdict, and three analytic models with their relative
error ((model - simulated) / simulated, ``gpusim.analytic.compare``):

* ``roofline.seconds``: max(FLOPs / peak of the dominant precision, DRAM bytes / sustained DRAM
  bandwidth), the time the roofline allows (a lower bound: latency-bound kernels sit far above it);
* ``littles_law.dram_bytes_per_second``: min(sustained DRAM bandwidth, achieved warps x bytes in flight
  per warp / DRAM latency) per SM, with the bytes in flight per warp those of one MWP-CWP memory period
  (memory requests per period x bytes per request); NaN for a kernel without loads;
* ``mwp_cwp.cycles`` and ``mwp_cwp.case``: Hong & Kim's model (``gpusim.analytic.mwp``).

A model that cannot be evaluated for a point (for example MWP-CWP of a kernel it does not cover) gives NaN
and its reason in ``<model>.note``, not an error of the point.

``warm_up()`` runs ``gpusim.warm_up`` (a one-warp kernel, timed and functional) so that the engine's
compiled code is loaded (or compiled, on a fresh machine) before the worker's first point; the sweep runs
it once per worker.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from gpusim.analytic.compare import compare
from gpusim.analytic.models import latency_hiding, roofline, roofline_point
from gpusim.analytic.mwp import mwp_cwp
from gpusim.api.gpu import GPU
from gpusim.api.warm_up import warm_up as engine_warm_up
from gpusim.observe.report import verdict
from gpusim.programs.catalog import program_from_document, run_program
from gpusim.sweep.points import Task

NAN = float("nan")

WARM_UPS = 0
"""How many times ``warm_up`` ran in this process (the sweep runs it once per worker)."""


def warm_up() -> bool:
    """Load the engine's compiled code in this process (a timed and a functional launch of a tiny kernel)."""
    global WARM_UPS
    engine_warm_up()
    WARM_UPS += 1
    return True


def run_task(task: Task) -> dict:
    """The record of one point (see the module docstring); never raises for a point's own failure."""
    try:
        return _run(task)
    except Exception as error:  # noqa: BLE001 -- a failing point is a result: recorded, the sweep goes on
        return {"status": "error", "error_type": type(error).__name__, "error": str(error)}


def _run(task: Task) -> dict:
    gpu = GPU(task.config, **task.gpu_keywords)
    with tempfile.TemporaryDirectory(prefix="gpusim-sweep-") as folder:
        Path(folder, task.ptx_name).write_text(task.ptx_text, encoding="utf-8")
        spec = program_from_document(task.document, Path(folder, f"{task.program_name}.toml"), task.sizes)
        result = run_program(spec, gpu=gpu, **task.launch)
    runs = result.runs
    record: dict[str, Any] = {
        "status": "ok", "error_type": None, "error": None,
        "cycles": sum(int(run.cycles) for run in runs), "seconds": float(sum(float(run.seconds) for run in runs)),
        "launches": len(runs), "check_ok": bool(result.ok) if result.checks else None,
        "flushed_bytes": int(gpu.flushed_bytes),
    }
    main = max(runs, key=lambda run: int(run.cycles))
    record["kernel_name"] = main.program.name
    if not main.timing:
        return record
    judged = verdict(main)
    record.update({"verdict": judged.kind, "verdict_limiter": judged.limiter, "verdict_reason": judged.reason})
    record.update(_models(main))
    record.update({f"stalls.{name}": int(value) for name, value in main.stalls.items()})
    record.update({name: _scalar(value) for name, value in main.metrics.items()})
    return record


def _scalar(value: Any) -> Any:
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value)
    return str(value)


def _models(run) -> dict:
    out: dict[str, Any] = {}
    try:
        roofs = roofline(run.config)
        point = roofline_point(run)
        metrics = run.metrics
        dram_bytes = metrics["dram__bytes_read.sum"] + metrics["dram__bytes_write.sum"]
        seconds = max(metrics["gpusim__flops.sum"] / roofs.peak_flops[point.precision],
                      dram_bytes / roofs.bandwidth_bytes_per_s["dram_sustained"])
        row = compare(run, {"seconds": seconds})["seconds"]
        out.update({"roofline.seconds": row.model, "roofline.error": row.relative_error, "roofline.note": None})
    except Exception as error:  # noqa: BLE001 -- a model that does not apply is a NaN with its reason
        out.update({"roofline.seconds": NAN, "roofline.error": NAN, "roofline.note": str(error)})
    prediction = None
    try:
        prediction = mwp_cwp(run)
        row = compare(run, prediction)["cycles"]
        out.update({"mwp_cwp.cycles": row.model, "mwp_cwp.error": row.relative_error, "mwp_cwp.case": prediction.case,
                    "mwp_cwp.note": None})
    except Exception as error:  # noqa: BLE001
        out.update({"mwp_cwp.cycles": NAN, "mwp_cwp.error": NAN, "mwp_cwp.case": None, "mwp_cwp.note": str(error)})
    try:
        if prediction is None or prediction.memory_periods_per_warp == 0:
            raise ValueError("no memory periods: the kernel keeps no loads in flight")
        per_warp = (prediction.bytes_per_memory_instruction * prediction.memory_instructions_per_warp
                    / prediction.memory_periods_per_warp)
        row = compare(run, latency_hiding(run.config, per_warp, "dram"))["gpusim__dram_bytes_per_second"]
        out.update({"littles_law.dram_bytes_per_second": row.model, "littles_law.error": row.relative_error,
                    "littles_law.note": None})
    except Exception as error:  # noqa: BLE001
        out.update({"littles_law.dram_bytes_per_second": NAN, "littles_law.error": NAN,
                    "littles_law.note": str(error)})
    return out
