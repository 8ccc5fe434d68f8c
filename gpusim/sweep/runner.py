"""``sweep(points, executor=None, store=...)``: run many points in parallel and return one table.

Where the points run:

* ``executor=None``: a local ``ProcessPoolExecutor`` with ``workers`` processes (default: one per core),
  started with ``spawn`` (no inherited state) and warmed by ``worker.warm_up`` as each starts;
* any ``concurrent.futures.Executor`` (a ``ThreadPoolExecutor``, an MPI or cloud pool...): points are
  submitted to it as they are (no per-worker warm-up: such an executor cannot address its workers);
* a ``dask.distributed.Client``: ``client.run(warm_up)`` on every worker first, then one task per point.

Every point is prepared here (``points.prepare``: one ConfigError for any mistake, before anything runs)
and carries its config, program and PTX by value, so workers need gpusim and nothing else. Workers return
records; this process writes each to the store as it arrives (``store.open_store``), so the store has one
writer. Points whose key is already stored are not run again (errors included, unless ``retry_errors``);
two points with the same key run once.

Determinism: a record depends only on its task (the engine is deterministic and each point gets a new
GPU), and rows are ordered by point, so the same sweep gives the same table whatever the executor, the
number of workers, the order points finish in, or how many of them came from the store.

Caches: every launch of every point runs with ``cache_control="all"`` by default (L1 and L2 flushed
before it, as Nsight Compute does), so points do not depend on what ran before them; the table says so in
its ``cache_control`` column and ``frame.attrs``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpusim.errors import ConfigError, GpusimError
from gpusim.sweep.points import Task, parameters, prepare
from gpusim.sweep.store import open_store
from gpusim.sweep.worker import run_task, warm_up

if TYPE_CHECKING:                  # pandas is an optional extra, imported when a sweep runs
    import pandas as pd

DEFAULT_STORE = "results.parquet"


@dataclass
class SweepResult:
    """The table and what happened: points run now, taken from the store, failed (error records)."""

    frame: Any
    ran: int
    reused: int
    failed: int
    store: str | None


def sweep(points: Iterable[dict], executor: Any = None, store: str | Path | None = DEFAULT_STORE, *,
          workers: int | None = None, cache_control: str = "all", base_dir: str | Path | None = None,
          retry_errors: bool = False, progress: Callable[[int, int], None] | bool | None = None) -> pd.DataFrame:
    """Run ``points`` (dicts, see ``gpusim.sweep.points``) and return a pandas DataFrame, one row per point
    in point order: the point's parameters, ``key``, ``status`` (``ok`` or ``error`` with ``error_type``
    and ``error``), cycles, seconds, verdict, model predictions and errors, ``stalls.*`` and every metric.

    ``store`` (a folder of Parquet files, or a ``.sqlite`` file; None for none) keeps each finished point,
    so running the same sweep again runs only what is missing. ``base_dir`` anchors relative paths in the
    points (default: the current directory). ``progress(done, total)`` is called as points finish;
    ``progress=True`` shows a bar (tqdm, else rich, else a line) on stderr, ``None`` (the default) does so when
    stderr is a terminal or in Jupyter, ``False`` never."""
    from gpusim.launch.progress import CountBar, interactive

    bar = CountBar("sweep") if progress is True or (progress is None and interactive()) else None
    try:
        return run_sweep(points, executor, store, workers=workers, cache_control=cache_control, base_dir=base_dir,
                         retry_errors=retry_errors, progress=bar or (progress if callable(progress) else None)).frame
    finally:
        if bar is not None:
            bar.close()


def run_sweep(points: Iterable[dict], executor: Any = None, store: str | Path | None = DEFAULT_STORE, *,
              workers: int | None = None, cache_control: str = "all", base_dir: str | Path | None = None,
              retry_errors: bool = False, progress: Callable[[int, int], None] | None = None) -> SweepResult:
    """``sweep`` with the counts of points run, reused and failed (what the CLI summarises)."""
    import pandas as pd

    points = list(points)
    if not points:
        raise ConfigError("a sweep needs at least one point", field="points")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ConfigError(f"must be a positive integer, got {workers!r}", field="workers")
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    tasks = [prepare(point, index, base, cache_control) for index, point in enumerate(points)]
    opened = open_store(store) if store is not None else None
    try:
        records = opened.load() if opened is not None else {}
        wanted = {task.key for task in tasks}
        records = {key: record for key, record in records.items() if key in wanted
                   and not (retry_errors and record.get("status") == "error")}
        pending: dict[str, Task] = {}
        for task in tasks:
            if task.key not in records:
                pending.setdefault(task.key, task)
        reused = len(wanted) - len(pending)
        if progress is not None:
            progress(reused, len(wanted))

        def finished(task: Task, record: dict) -> None:
            records[task.key] = record
            if opened is not None:
                opened.put(task.key, record)
            if progress is not None:
                progress(len(records), len(wanted))

        lost = _execute(list(pending.values()), executor, workers, finished)
    finally:
        if opened is not None:
            opened.close()
    if lost:
        key, error = lost[0]
        raise GpusimError(f"{len(lost)} of {len(pending)} points did not finish (the executor failed them: "
                          f"{type(error).__name__}: {error}); the {len(records)} finished ones are stored: run "
                          f"the sweep again to resume")
    rows = [{**parameters(point), "key": task.key, "cache_control": task.launch["cache_control"],
             **records[task.key]} for point, task in zip(points, tasks, strict=True)]
    frame = pd.DataFrame(rows)
    frame.attrs["cache_control"] = cache_control
    frame.attrs["store"] = str(opened.path) if opened is not None else None
    failed = sum(1 for key in wanted if records[key].get("status") == "error")
    return SweepResult(frame=frame, ran=len(pending), reused=reused, failed=failed,
                       store=frame.attrs["store"])


def _is_dask_client(executor: Any) -> bool:
    return type(executor).__module__.split(".")[0] == "distributed" and hasattr(executor, "submit") \
        and hasattr(executor, "run")


def _warm_worker() -> None:
    try:
        warm_up()
    except Exception:  # noqa: BLE001, S110 -- a failed warm-up only costs the first point its compile time
        pass


def _execute(tasks: list[Task], executor: Any, workers: int | None,
             finished: Callable[[Task, dict], None]) -> list[tuple[str, BaseException]]:
    """Run ``tasks``; ``finished`` gets each record as it arrives; returns the tasks the executor lost."""
    if not tasks:
        return []
    if _is_dask_client(executor):
        return _execute_dask(tasks, executor, finished)
    own = executor is None
    if own:
        count = min(workers or os.cpu_count() or 1, len(tasks))
        executor = ProcessPoolExecutor(max_workers=count, mp_context=get_context("spawn"),
                                       initializer=_warm_worker)
    elif not isinstance(executor, Executor):
        raise ConfigError(f"executor must be a concurrent.futures.Executor or a dask.distributed.Client, got "
                          f"{type(executor).__name__}", field="executor")
    lost: list[tuple[str, BaseException]] = []
    futures = {}
    try:
        futures = {executor.submit(run_task, task): task for task in tasks}
        for future in as_completed(futures):
            task = futures[future]
            try:
                record = future.result()
            except Exception as error:  # noqa: BLE001 -- a worker died or the executor broke: not a result
                lost.append((task.key, error))
                continue
            finished(task, record)
    except BaseException:
        for future in futures:
            future.cancel()
        if own:
            executor.shutdown(wait=False, cancel_futures=True)
        raise
    if own:
        executor.shutdown(wait=True)
    return lost


def _execute_dask(tasks: list[Task], client: Any,
                  finished: Callable[[Task, dict], None]) -> list[tuple[str, BaseException]]:
    from distributed import as_completed as dask_as_completed

    client.run(_warm_worker)
    futures = {}
    lost: list[tuple[str, BaseException]] = []
    try:
        for task in tasks:
            futures[client.submit(run_task, task, pure=False)] = task
        for future in dask_as_completed(list(futures)):
            task = futures[future]
            try:
                record = future.result()
            except Exception as error:  # noqa: BLE001 -- a worker died (KilledWorker...): not a result
                lost.append((task.key, error))
                continue
            finished(task, record)
    except BaseException:
        client.cancel(list(futures))
        raise
    return lost
