"""``gpusim sweep SPEC.toml [--workers N] [--scheduler tcp://HOST:PORT] [--out FILE] [--quiet]``.

Runs the sweep a spec file describes (``gpusim.sweep.spec``) on local processes, or on a Dask cluster
when ``--scheduler`` names its scheduler, with a progress line (points done, points per second, time
left; a rich progress bar when rich is installed and stderr is a terminal), then prints what ran, where
the store is, that caches were flushed before every launch, and a summary table: the spec's
``summary`` columns, else the axes, cycles, verdict and the three models' errors.

``--out`` replaces the spec's store (a folder of Parquet files, or a ``.sqlite`` file). Exit status: 0
when every point ran, 1 when some point recorded an error, 2 for a usage or spec error.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

from gpusim.errors import GpusimError
from gpusim.labs.support import format_table
from gpusim.sweep.runner import run_sweep
from gpusim.sweep.spec import load_spec

SUMMARY_ROWS = 40
MODEL_COLUMNS = ("roofline.error", "littles_law.error", "mwp_cwp.error")


def add_parser(subparsers: Any) -> None:
    """Register ``gpusim sweep`` on the ``gpusim`` command's subparsers."""
    parser = subparsers.add_parser("sweep", help="run a parameter sweep described by a SPEC.toml "
                                                 "(docs/sweeps.md)")
    parser.add_argument("spec", help="the sweep spec (TOML)")
    parser.add_argument("--workers", type=int, help="local worker processes (default: the spec's, else one "
                                                    "per core)")
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on this Dask cluster")
    parser.add_argument("--out", metavar="FILE", help="the result store (default: the spec's store)")
    parser.add_argument("--quiet", action="store_true", help="no progress line")


class _Progress:
    """Points done, rate and time left: rich's bar on a terminal, else a plain line on stderr."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.start = time.monotonic()
        self.first_done: int | None = None
        self.last_print = 0.0
        self.bar: Any = None
        self.task: Any = None
        if enabled and sys.stderr.isatty():
            try:
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
            except ImportError:
                return
            self.bar = Progress(TextColumn("[sweep]"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[rate]}"), TimeRemainingColumn(), transient=True)

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if self.first_done is None:
            self.first_done, self.start = done, now
        ran = done - self.first_done
        rate = ran / (now - self.start) if now > self.start and ran else 0.0
        if self.bar is not None:
            if self.task is None:
                self.bar.start()
                self.task = self.bar.add_task("sweep", total=total, rate="")
            self.bar.update(self.task, completed=done, rate=f"{rate:.2f} points/s")
            return
        if done < total and now - self.last_print < 2.0:
            return
        self.last_print = now
        left = f", about {(total - done) / rate:.0f} s left" if rate and done < total else ""
        print(f"[sweep] {done}/{total} points, {rate:.2f} points/s{left}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.stop()


def _executor(args):
    if not args.scheduler:
        return None
    try:
        from distributed import Client
    except ImportError:
        raise GpusimError("--scheduler needs Dask: pip install 'gpusim[dask]'") from None
    try:
        return Client(args.scheduler, timeout="20s")
    except OSError as error:
        raise GpusimError(f"cannot reach the Dask scheduler {args.scheduler}: {error}") from None


def main(args) -> int:
    spec = load_spec(args.spec)
    if args.workers is not None and args.workers < 1:
        raise GpusimError(f"--workers must be positive, got {args.workers}")
    executor = _executor(args)
    progress = _Progress(not args.quiet)
    try:
        result = run_sweep(spec.points, executor, args.out or spec.store, workers=args.workers or spec.workers,
                           cache_control=spec.cache_control, base_dir=spec.path.parent, progress=progress)
    finally:
        progress.close()
        if executor is not None:
            executor.close()
    frame = result.frame
    flush = ("caches flushed before every launch (cache_control='all', like ncu's default)"
             if spec.cache_control == "all" else "caches kept across launches (cache_control='none')")
    print(f"{len(frame)} points: {result.ran} run, {result.reused} from the store, {result.failed} failed; "
          f"{flush}")
    if result.store:
        print(f"store: {result.store} (gpusim.sweep.load_store reads it)")
    print(summary_table(frame, spec.summary or _default_columns(frame, spec.axes)))
    return 1 if result.failed else 0


def _default_columns(frame, axes: list[str]) -> list[str]:
    columns = [axis for axis in axes if axis in frame.columns]
    columns += [name for name in ("status", "cycles", "verdict", *MODEL_COLUMNS) if name in frame.columns]
    return columns


def summary_table(frame, columns: list[str]) -> str:
    """The first ``SUMMARY_ROWS`` rows of ``columns`` as a plain table (model errors in %)."""
    missing = [name for name in columns if name not in frame.columns]
    if missing:
        raise GpusimError(f"summary columns not in the table: {', '.join(missing)}")
    rows = []
    for _, row in frame.head(SUMMARY_ROWS).iterrows():
        rows.append([_cell(name, row[name]) for name in columns])
    header = [f"{name} %" if name.endswith(".error") else name for name in columns]
    text = format_table(header, rows)
    if len(frame) > SUMMARY_ROWS:
        text += f"\n... {len(frame) - SUMMARY_ROWS} more rows in the store"
    return text


def _cell(name: str, value: Any) -> Any:
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if name.endswith(".error"):
            return f"{100 * value:+.1f}"
        if value.is_integer() and abs(value) < 2**53:
            return str(int(value))
    return value
