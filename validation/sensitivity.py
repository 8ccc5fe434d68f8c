"""``python -m validation --sensitivity``: which results each decisive config number moves, and how far.

Issue 24 asks for every config number that can decide a result (in-flight requests per SM, L1 and L2 tag and
slice rates, interconnect rates, queue depths) with a table of which results each one moves. For every field of
:data:`FIELDS` and every factor of :data:`FACTORS` (half and twice the config's own value), every case of the
suite except the hardware-counter ratios runs again at its full [params] with that one field scaled
(``runner.CONFIG_SCALE``: on the slice the case simulates, an integer field rounded and kept >= 1). Each point's
change is that of its normalised throughput against the baseline run of the same code (``stats.error`` with the
baseline in place of the published figure: +10 % means 10 % faster, latencies inverted), and the report gives
per case the median change over its points.

The baseline is the stored suite result (validation/results.json) at the time of the sensitivity run, copied into
validation/sensitivity.json with the perturbed figures, so the table is always a comparison of one code version
with itself (the engine is deterministic: the same inputs give the same cycles). The runs are spread over
processes (``--jobs``); the figures do not depend on how many.
"""

from __future__ import annotations

import json
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from validation import stats
from validation.cases import load_cases

SENSITIVITY = Path(__file__).resolve().parent / "sensitivity.json"

FIELDS = (
    ("mshrs_per_sm", "misses an SM keeps in flight (MSHRs)"),
    ("l1_tags_per_cycle", "L1TEX tag-stage lookups per cycle"),
    ("interconnect_bytes_per_cycle_per_sm", "SM-to-L2 port, bytes per cycle"),
    ("l2_bytes_per_cycle", "L2 read rate, bytes per cycle (chip, shared by the slice)"),
    ("l2_write_bytes_per_cycle", "L2 write rate, bytes per cycle (chip, shared by the slice)"),
    ("dram_queue_depth", "DRAM scheduler window per channel"),
    ("dram_writes_per_turnaround", "writes drained per DRAM bus turnaround"),
    ("block_launch_cycles", "cycles to dispatch a block"),
)
"""The config numbers the table covers, in its column order: the kinds issue 24 names (in-flight limits, tag and
slice rates, interconnect, queue depths) plus the calibrated DRAM write batch and the unsourced block dispatch."""

FACTORS = (0.5, 2.0)
"""Each field at half and at twice its value."""

MOVED = 0.02
"""A median change below 2 % in both directions is shown as unmoved."""


def _case_names(names=None) -> dict[str, bool]:
    """The cases a sensitivity run covers (the named ones, never the counter ratios): name -> higher is better."""
    return {case.name: case.meta["higher_is_better"] for case in load_cases()
            if case.kind != "counters" and (names is None or case.name in names)}


def _one(task: tuple[str, str, float]) -> tuple[str, str, float, list[float], float]:
    """Run one case with one field scaled: (case, field, factor, each point's simulated figure, wall seconds)."""
    from validation import runner
    from validation.suite import run_case

    name, field, factor = task
    case = next(case for case in load_cases() if case.name == name)
    runner.CONFIG_SCALE.clear()
    runner.CONFIG_SCALE[field] = factor
    start = time.perf_counter()
    try:
        record = run_case(case)
    finally:
        runner.CONFIG_SCALE.clear()
    return name, field, factor, [p["simulated"] for p in record["points"]], time.perf_counter() - start


def run(fields=None, names=None, jobs: int = 2, progress=print) -> dict:
    """Run the perturbations of ``fields`` (all of FIELDS when None) on the named cases (all but the counters)
    and merge them into validation/sensitivity.json; returns its content."""
    from validation.suite import RESULTS

    known = [field for field, _ in FIELDS]
    fields = list(fields or known)
    unknown = [field for field in fields if field not in known]
    if unknown:
        raise SystemExit(f"not a sensitivity field: {', '.join(unknown)}; the fields are {', '.join(known)}")
    cases = _case_names(names)
    if names and set(names) - set(cases):
        raise SystemExit(f"unknown or counter case(s): {', '.join(sorted(set(names) - set(cases)))}")
    results = json.loads(RESULTS.read_text())["cases"]
    store = json.loads(SENSITIVITY.read_text()) if SENSITIVITY.exists() else {"cases": {}}
    walls = {name: sum(p["wall_s"] for p in results[name]["points"]) for name in cases}
    tasks = sorted(((name, field, factor) for name in cases for field in fields for factor in FACTORS),
                   key=lambda task: -walls[task[0]])          # longest first: the pool ends together
    for name in cases:
        record = results[name]
        if record["mode"] != "full":
            raise SystemExit(f"{name}: the stored baseline is a {record['mode']} run; run the suite in full first")
        entry = store["cases"].setdefault(name, {})
        baseline = [p["simulated"] for p in record["points"]]
        if entry.get("baseline") != baseline:     # a new baseline: perturbations of older code are dropped
            entry.clear()
        entry.update(baseline=baseline, gpusim_commit=record["gpusim_commit"])
        entry.setdefault("scaled", {})
    progress(f"{len(tasks)} runs ({len(fields)} fields x {len(FACTORS)} factors x {len(cases)} cases) "
             f"on {jobs} processes")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        for name, field, factor, simulated, wall in pool.map(_one, tasks):
            store["cases"][name]["scaled"].setdefault(field, {})[_key(factor)] = simulated
            progress(f"  {name}: {field} x{factor:g}: median change "
                     f"{100 * _median_change(store['cases'][name]['baseline'], simulated, cases[name]):+.1f} % "
                     f"({wall:.0f} s)")
            SENSITIVITY.write_text(json.dumps(store, indent=1, sort_keys=True) + "\n")   # a kill keeps what ran
    return store


def _key(factor: float) -> str:
    return f"{factor:g}"


def _median_change(baseline: list[float], scaled: list[float], higher: bool) -> float:
    """Median over the points of the scaled run's normalised throughput against the baseline's, minus 1
    (``higher``: whether the case's figure is better when higher)."""
    return statistics.median(stats.error(b, s, higher) for b, s in zip(baseline, scaled, strict=True))


def _cell(changes: list[float | None]) -> str:
    if any(c is None for c in changes):
        return "not run"
    if all(abs(c) < MOVED for c in changes):
        return "·"
    return " / ".join(f"{round(100 * c):+d}" for c in changes)


def render(store: dict | None, cases, configs: dict) -> list[str]:
    """The report's sensitivity section (lines) from validation/sensitivity.json's content; ``configs``: config
    name -> GPUConfig, for the values the factors scale."""
    if not store or not store.get("cases"):
        return []
    shown = [case for case in cases if case.name in store["cases"]]
    fields = [(field, what) for field, what in FIELDS
              if any(field in store["cases"][case.name]["scaled"] for case in shown)]
    if not fields:
        return []
    factors = " and ".join(f"×{f:g}" for f in FACTORS)
    config_names = sorted({case.meta["config"] for case in shown})
    out = ["## Sensitivity to config numbers", "",
           f"Each field at {factors} of its config value, one at a time, every case (not the counter ratios) rerun "
           "at its full parameters (`python -m validation --sensitivity`, validation/sensitivity.py; figures in "
           "validation/sensitivity.json). A cell is the median change over the case's points of its normalised "
           f"throughput against the unperturbed run, in %, at {factors} (+ faster); · : under "
           f"{100 * MOVED:.0f} % both ways.", "",
           "| field | what it is | " + " | ".join(config_names) + " | cases moved ≥ 10 % |",
           "|---|---|" + "---:|" * len(config_names) + "---|"]
    table = {}
    for case in shown:
        entry = store["cases"][case.name]
        row = []
        for field, _ in fields:
            scaled = entry["scaled"].get(field, {})
            row.append([None if _key(f) not in scaled else
                        _median_change(entry["baseline"], scaled[_key(f)], case.meta["higher_is_better"])
                        for f in FACTORS])
        table[case.name] = row
    for column, (field, what) in enumerate(fields):
        moved = sorted(((max(abs(c) for c in table[case.name][column] if c is not None), case.name)
                        for case in shown if any(c is not None for c in table[case.name][column])), reverse=True)
        big = ", ".join(f"{name} ({100 * size:.0f} %)" for size, name in moved if size >= 0.10) or "none"
        values = " | ".join(_value(getattr(configs[name], field)) for name in config_names)
        out.append(f"| `{field}` | {what} | {values} | {big} |")
    out += ["", "| case | " + " | ".join(f"`{field}`" for field, _ in fields) + " |",
            "|---|" + "---:|" * len(fields)]
    for case in shown:
        out.append(f"| {case.name} | " + " | ".join(_cell(c) for c in table[case.name]) + " |")
    still = [f"`{field}`" for column, (field, _) in enumerate(fields)
             if all(c is not None and abs(c) < MOVED for case in shown for c in table[case.name][column])]
    if still:
        out += ["", f"Moving no case by {100 * MOVED:.0f} % or more, either way: {', '.join(still)}. The suite's "
                "measurements do not constrain these numbers; they decide none of its results."]
    commits = sorted({store["cases"][case.name]["gpusim_commit"] for case in shown})
    out += ["", f"Baseline: the suite's stored results (gpusim {', '.join(commits)}).", ""]
    return out


def _value(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
