"""Labs: experiments that reproduce the classic GPU performance facts, each a table, a lesson and figures.

Every lab module has ``NAME``, ``TITLE`` and ``run(config=None, plot_dir=None, progress=True) -> LabResult``
(labs may add keyword-only parameters with defaults). ``LABS`` maps each lab's NAME to its module;
``run_lab(name, ...)`` runs one by name. ``LabResult`` and ``format_table`` live in ``gpusim.labs.support``
with the other helpers the labs share.
"""

from __future__ import annotations

from types import ModuleType

from gpusim.labs import (
    bank_conflicts,
    coalescing,
    decode,
    divergence,
    fusion,
    latency_hiding,
    llm_step,
    occupancy,
    overhead,
    regimes,
    roofline,
    tiling,
    utilization,
    warp_granularity,
)
from gpusim.labs.support import LabResult, format_table

LABS: dict[str, ModuleType] = {module.NAME: module for module in (
    overhead, llm_step, roofline, divergence, coalescing, bank_conflicts, fusion, tiling, warp_granularity,
    latency_hiding, occupancy, decode, utilization, regimes)}

__all__ = ["LABS", "LabResult", "format_table", "run_lab"]


def run_lab(name: str, **options: object) -> LabResult:
    """Run the lab called ``name`` (a key of LABS) with the given options."""
    if name not in LABS:
        raise KeyError(f"no lab named {name!r}; labs: {', '.join(sorted(LABS))}")
    return LABS[name].run(**options)
