"""A sweep on a Dask cluster of two worker processes gives the local run's table."""

from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pytest

import gpusim

distributed = pytest.importorskip("distributed")


def _warm_ups():
    from gpusim.sweep import worker

    return worker.WARM_UPS


def test_dask_local_cluster_matches_the_local_run(tmp_path):
    points = gpusim.sweep.grid({"sms": [1, 2], "scheduler": ["gto", "lrr"]},
                               {"program": "saxpy", "config": "teaching"})
    local = gpusim.sweep(points, executor=ThreadPoolExecutor(1), store=None)
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        on_dask = gpusim.sweep(points, executor=client, store=tmp_path / "dask.parquet")
        warmed = client.run(_warm_ups)
    # each worker ran the warm-up once, before the points
    assert len(warmed) == 2 and all(count == 1 for count in warmed.values())
    pd.testing.assert_frame_equal(on_dask, local)
    assert (on_dask["status"] == "ok").all()
