"""The case files (validation/cases/*.toml): one published ladder or table per file, its points in order.

A case file records the published figures exactly as published, their unit, the GPU, the problem size, the source
(URL or paper + table/figure), the config and the slice gpusim runs, and whether the table is ``calibration``
(a microbenchmark a config number may have been set from: a consistency check) or ``validation`` (an application
ladder no config number was fitted to)."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CASE_DIR = Path(__file__).resolve().parent / "cases"
MEASURED_DIR = Path(__file__).resolve().parent / "measured"
KINDS = ("validation", "calibration", "counters")
REQUIRED = ("title", "kind", "gpu", "config", "unit", "source", "published_size", "simulated_size", "family",
            "ptx", "higher_is_better")


class CaseError(ValueError):
    """A case file that lacks a field or names an unknown kind/family."""


@dataclass(frozen=True)
class Case:
    name: str
    meta: dict
    params: dict
    quick: dict
    points: list

    @property
    def kind(self) -> str:
        return self.meta["kind"]


def load_case(path: Path) -> Case:
    """Parse and check one case file."""
    data = tomllib.loads(path.read_text())
    meta = {key: value for key, value in data.items() if key not in ("params", "quick", "points")}
    for key in REQUIRED:
        if key not in meta:
            raise CaseError(f"{path.name}: missing field {key!r}")
    if meta["kind"] not in KINDS:
        raise CaseError(f"{path.name}: kind must be one of {KINDS}, got {meta['kind']!r}")
    points = data.get("points", [])
    if not points:
        raise CaseError(f"{path.name}: no [[points]]")
    if "measured" in meta:
        for number, point in enumerate(points, 1):
            point["published"] = measured_value(meta["measured"], point.get("match"), f"{path.name}: point {number}",
                                                point.get("measured_field", "value"))
    for number, point in enumerate(points, 1):
        for key in ("label", "kernel", "published"):
            if key not in point:
                raise CaseError(f"{path.name}: point {number} lacks {key!r}")
    return Case(name=path.stem, meta=meta, params=data.get("params", {}), quick=data.get("quick", {}),
                points=points)


@cache
def _measurements(name: str) -> tuple:
    return tuple(json.loads((MEASURED_DIR / name).read_text())["measurements"])


def measured_value(name: str, match: dict | None, where: str, field: str = "value") -> float:
    """The figure of the one measurement in validation/measured/`name` (written by validation/hardware.py on a
    real GPU) whose fields equal `match`: a measured case's "published" figure is read from there, never typed."""
    if not match:
        raise CaseError(f"{where}: a measured case's point needs a match table")
    hits = [m for m in _measurements(name) if all(m.get(key) == value for key, value in match.items())]
    if len(hits) != 1:
        raise CaseError(f"{where}: {len(hits)} measurements in {name} match {match}; exactly one must")
    return float(hits[0][field])


def load_cases() -> list[Case]:
    """Every case file, by name."""
    return [load_case(path) for path in sorted(CASE_DIR.glob("*.toml"))]
