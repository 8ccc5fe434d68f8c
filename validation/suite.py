"""Runs the cases (validation.cases) with validation.runner and stores what each run produced.

``run_case`` returns one case's record: per point the published figure (copied from the case file), the
simulated figure, the analytic overlay's figure where one exists, cycles, the launch's shape and the wall time.
``run_suite`` runs the selected cases, writes validation/results.json and renders docs/validation.md (with the
sensitivity runs of validation/sensitivity.json, when there are any)."""

from __future__ import annotations

import json
import platform
import subprocess
import time
from pathlib import Path

from validation.cases import Case, load_cases
from validation.runner import FAMILIES

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results.json"
REPORT = ROOT / "docs" / "validation.md"


def run_case(case: Case, quick: bool = False, progress=None) -> dict:
    """Simulate every point of `case` (its [quick] parameters when `quick`)."""
    params = case.quick if quick and case.quick else case.params
    family = FAMILIES[case.meta["family"]]
    points = []
    for point in case.points:
        start = time.perf_counter()
        run, simulated, analytic, detail = family(case, point, params)
        wall = time.perf_counter() - start
        points.append({"label": point["label"], "simulated": float(simulated),
                       "analytic": None if analytic is None else float(analytic),
                       "cycles": int(run.cycles), "wall_s": round(wall, 1), "detail": detail})
        if progress:
            progress(f"  {case.name}: {point['label']}: published {point['published']} simulated "
                     f"{simulated:.4g} {case.meta['unit']} ({wall:.0f} s)")
    return {"mode": "quick" if quick else "full", "params": dict(params), "points": points}


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_suite(names=None, quick=False, progress=print, write=True) -> dict:
    """Run the named cases (all when None); merge them into results.json and re-render the report."""
    cases = [case for case in load_cases() if names is None or case.name in names]
    unknown = set(names or ()) - {case.name for case in cases}
    if unknown:
        raise SystemExit(f"unknown case(s): {', '.join(sorted(unknown))}; `python -m validation --list` names them")
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() and write else {"cases": {}}
    for case in cases:
        progress(f"{case.name} ({case.meta['kind']}, {len(case.points)} points, config {case.meta['config']})")
        results["cases"][case.name] = run_case(case, quick=quick, progress=progress)
        results["cases"][case.name]["gpusim_commit"] = _commit()
        results["cases"][case.name]["python"] = platform.python_version()
    if write:
        RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
        render_report()
    return results


def report_text() -> str:
    """docs/validation.md as the stored results, case files and sensitivity runs make it."""
    from validation.report import render
    from validation.sensitivity import SENSITIVITY

    sensitivity = json.loads(SENSITIVITY.read_text()) if SENSITIVITY.exists() else None
    return render(json.loads(RESULTS.read_text()), load_cases(), sensitivity)


def render_report() -> None:
    """Write docs/validation.md (``report_text``)."""
    REPORT.write_text(report_text())
