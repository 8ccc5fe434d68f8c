"""Sweep scaling and overheads (docs/sweeps.md, "Measured"): not a test, prints figures.

1. A 200-point sweep (vecadd on the teaching config, n from 200k to 400k elements, ~0.1-0.2 s a point) on
   the default process pool with 1 and with 2 workers, no store: wall time and speed-up (pool start and
   warm-up included, as a user sees it).
2. Per-point overhead of the store: the time to write one real record (Parquet and SQLite), against the
   simulation time of a point of >= 1 s (vecadd, n = 3M).
3. Per-point overhead of Dask: the same >= 1 s points through a LocalCluster with one worker process
   against the same worker function called in this process, after warm-up on both sides.

    python benchmarks/bench_sweep.py [--points 200] [--long-points 4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import gpusim
from gpusim.sweep.points import prepare
from gpusim.sweep.store import open_store
from gpusim.sweep.worker import run_task, warm_up

BASE = {"program": "vecadd", "config": "teaching"}


def scaling(count: int) -> dict[int, float]:
    points = gpusim.sweep.grid({"sizes.n": [200_000 + 1_000 * i for i in range(count)]}, BASE)
    times = {}
    for workers in (1, 2):
        start = time.perf_counter()
        frame = gpusim.sweep(points, workers=workers, store=None)
        times[workers] = time.perf_counter() - start
        assert (frame["status"] == "ok").all()
        print(f"{count} points, {workers} worker(s): {times[workers]:.1f} s "
              f"({count / times[workers]:.2f} points/s)")
    print(f"speed-up 1 -> 2 workers: {times[1] / times[2]:.2f}x (cores: {os.cpu_count()})")
    return times


def long_tasks(count: int):
    points = gpusim.sweep.grid({"sizes.n": [3_000_000 + 4_096 * i for i in range(count)]}, BASE)
    return [prepare(point, index, Path.cwd(), "all") for index, point in enumerate(points)]


def store_overhead(tasks) -> None:
    warm_up()
    simulated = []
    records = []
    for task in tasks:
        start = time.perf_counter()
        records.append(run_task(task))
        simulated.append(time.perf_counter() - start)
    point_s = statistics.median(simulated)
    print(f"a long point simulates in {point_s:.2f} s (median of {len(tasks)})")
    with tempfile.TemporaryDirectory() as folder:
        for suffix in (".parquet", ".sqlite"):
            store = open_store(Path(folder) / f"results{suffix}")
            writes = []
            for task, record in zip(tasks, records, strict=True):
                start = time.perf_counter()
                store.put(task.key, record)
                writes.append(time.perf_counter() - start)
            start = time.perf_counter()
            store.load()
            load_s = (time.perf_counter() - start) / len(tasks)
            store.close()
            write_s = statistics.median(writes)
            print(f"store {suffix[1:]}: write {1e3 * write_s:.1f} ms + load {1e3 * load_s:.2f} ms per point = "
                  f"{100 * (write_s + load_s) / point_s:.2f} % of a point")


def dask_overhead(tasks) -> None:
    """Each long point run in this process and on a one-worker Dask cluster, alternately (the machine's
    speed drifts: alternating keeps both sides under the same load); median of the differences."""
    try:
        import distributed
    except ImportError:
        print("dask overhead: distributed is not installed")
        return
    warm_up()
    with distributed.LocalCluster(processes=True, n_workers=1, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        client.run(warm_up)
        local, remote = [], []
        for task in tasks:
            start = time.perf_counter()
            here = run_task(task)
            local.append(time.perf_counter() - start)
            start = time.perf_counter()
            there = client.submit(run_task, task, pure=False).result()
            remote.append(time.perf_counter() - start)
            assert here["cycles"] == there["cycles"]
    differences = [r - h for r, h in zip(remote, local, strict=True)]
    overhead = statistics.median(differences)
    point_s = statistics.median(local)
    print(f"dask: a {point_s:.2f} s point takes {1e3 * overhead:+.0f} ms more on a one-worker LocalCluster "
          f"(median of {len(tasks)}, alternating) = {100 * overhead / point_s:+.1f} % of a point")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--long-points", type=int, default=4)
    parser.add_argument("--skip-scaling", action="store_true")
    args = parser.parse_args()
    if not args.skip_scaling:
        scaling(args.points)
    tasks = long_tasks(args.long_points)
    store_overhead(tasks)
    dask_overhead(tasks)


if __name__ == "__main__":
    main()
