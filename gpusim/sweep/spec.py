"""SPEC.toml: a sweep as a file (docs/sweeps.md has the format and a complete example).

    [sweep]                     # all optional
    store = "results.parquet"   # relative to this file; a .sqlite path for SQLite
    workers = 2                 # local processes (default: one per core)
    cache_control = "all"       # or "none"
    summary = ["sms", "cycles"] # columns of the summary table

    [base]                      # every point starts from this table (a point: gpusim.sweep.points)
    program = "vecadd"

    [axes]                      # cartesian product in this order, the last axis fastest
    sms = [1, 2]
    "sizes.n" = [4096, 20000]

    [[points]]                  # more points, each over [base], after the grid's
                                # (with neither [axes] nor [[points]], [base] is the only point)

Relative paths inside points (``program``, ``kernel.ptx``, a config ``.toml``) are relative to the spec
file. Every mistake is one ConfigError naming the file and the key.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from gpusim.errors import ConfigError
from gpusim.sweep.points import grid

TOP_KEYS = ("sweep", "base", "axes", "points")
SWEEP_KEYS = ("store", "workers", "cache_control", "summary")


@dataclass
class SweepSpec:
    path: Path
    points: list[dict]
    axes: list[str]
    store: str | None
    workers: int | None
    cache_control: str
    summary: list[str] = field(default_factory=list)


def load_spec(path: str | Path) -> SweepSpec:
    """Read and check a sweep spec; the points are built (grid first, then [[points]])."""
    path = Path(path)
    file = str(path)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read the sweep spec: {error.strerror}", file=file) from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"not valid TOML: {error}", file=file) from None
    for key in document:
        if key not in TOP_KEYS:
            raise ConfigError(f"unknown key (a sweep spec has {', '.join(TOP_KEYS)})", file=file, field=key)
    options = _table(document, "sweep", file)
    for key in options:
        if key not in SWEEP_KEYS:
            raise ConfigError(f"unknown key (known: {', '.join(SWEEP_KEYS)})", file=file, field=f"sweep.{key}")
    base = _table(document, "base", file)
    axes = _table(document, "axes", file)
    extra = document.get("points", [])
    if not isinstance(extra, list) or not all(isinstance(point, dict) for point in extra):
        raise ConfigError("must be an array of tables [[points]]", file=file, field="points")
    try:
        points = grid(axes, base) if axes else []
    except ConfigError as error:
        raise ConfigError(str(error).split(": ", 1)[-1], file=file, field="axes") from None
    points += [{**base, **point} for point in extra]
    if not points and base:
        points = [dict(base)]   # neither axes nor points: [base] is the one point
    if not points:
        raise ConfigError("no points: give [base], [axes] or [[points]]", file=file)
    store = options.get("store", "results.parquet")
    if store is not None and not isinstance(store, str):
        raise ConfigError("must be a path", file=file, field="sweep.store")
    workers = options.get("workers")
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise ConfigError("must be a positive integer", file=file, field="sweep.workers")
    cache_control = options.get("cache_control", "all")
    if cache_control not in ("all", "none"):
        raise ConfigError("must be 'all' or 'none'", file=file, field="sweep.cache_control")
    summary = options.get("summary", [])
    if not isinstance(summary, list) or not all(isinstance(name, str) for name in summary):
        raise ConfigError("must be a list of column names", file=file, field="sweep.summary")
    store_path = str((path.parent / store).resolve()) if store else None
    return SweepSpec(path=path.resolve(), points=points, axes=list(axes), store=store_path, workers=workers,
                     cache_control=cache_control, summary=summary)


def _table(document: dict, key: str, file: str) -> dict:
    value = document.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError("must be a table", file=file, field=key)
    return value
