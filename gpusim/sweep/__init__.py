"""Parameter sweeps: many points (config x overrides x program or kernel) on local cores or a Dask
cluster, with a resumable store and the analytic models checked against every point (docs/sweeps.md).

    df = gpusim.sweep(points, executor=None, store="results.parquet")
    points = gpusim.sweep.grid({"sms": [1, 2], "scheduler": ["gto", "lrr"]}, base={"program": "vecadd"})

Modules: ``points`` (what a point is, ``grid``, content keys), ``worker`` (one point's record),
``store`` (Parquet folder or SQLite), ``runner`` (executors, resuming, the table), ``spec`` (SPEC.toml),
``cli`` (``gpusim sweep``), ``study`` (occupancy x scheduler x L2 size over three regimes).

``gpusim.sweep`` is this package *and* the sweep function of the public API: the package's module object
is callable (``__call__`` runs ``runner.sweep``), so ``gpusim.sweep(points)``, ``gpusim.sweep.grid`` and
``import gpusim.sweep.cli`` all work without one name hiding the other.
"""

from __future__ import annotations

import sys
import types

from gpusim.sweep.points import Task, grid
from gpusim.sweep.runner import SweepResult, run_sweep, sweep
from gpusim.sweep.store import load_store, open_store

__all__ = ["SweepResult", "Task", "grid", "load_store", "open_store", "run_sweep", "sweep"]


class _CallableModule(types.ModuleType):
    """The package's module type: calling the package calls ``sweep``."""

    def __call__(self, *args, **kwargs):
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
