"""The case files (validation/cases/*.toml): one published ladder or table per file, its points in order.

A case file records the published figures exactly as published, their unit, the GPU, the problem size, the source
(URL or paper + table/figure), the config and the slice gpusim runs, and whether the table is ``calibration``
(a microbenchmark a config number may have been set from: a consistency check) or ``validation`` (an application
ladder no config number was fitted to)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

CASE_DIR = Path(__file__).resolve().parent / "cases"
KINDS = ("validation", "calibration")
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
    for number, point in enumerate(points, 1):
        for key in ("label", "kernel", "published"):
            if key not in point:
                raise CaseError(f"{path.name}: point {number} lacks {key!r}")
    return Case(name=path.stem, meta=meta, params=data.get("params", {}), quick=data.get("quick", {}),
                points=points)


def load_cases() -> list[Case]:
    """Every case file, by name."""
    return [load_case(path) for path in sorted(CASE_DIR.glob("*.toml"))]
