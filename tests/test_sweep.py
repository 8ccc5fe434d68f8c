"""gpusim.sweep: grid order, one row per point with values derived independently, errors as rows, the
store (Parquet and SQLite) and resuming, keys, executors (threads, the default process pool) giving the
same table."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import gpusim
from gpusim.errors import ConfigError
from gpusim.programs.catalog import run_program
from gpusim.sweep.points import prepare
from gpusim.sweep.runner import run_sweep

BASE = {"program": "vecadd", "config": "teaching"}
AXES = {"sms": [1, 2], "sizes.n": [4096, 8192]}


def points():
    return gpusim.sweep.grid(AXES, BASE)


@pytest.fixture(scope="module")
def table():
    return gpusim.sweep(points(), executor=ThreadPoolExecutor(1), store=None)


def test_grid_is_the_cartesian_product_last_axis_fastest():
    got = [(p["sms"], p["sizes"]["n"]) for p in points()]
    assert got == [(1, 4096), (1, 8192), (2, 4096), (2, 8192)]
    assert all(p["program"] == "vecadd" for p in points())


def test_rows_match_direct_runs_and_array_sizes(table):
    assert list(table["sms"]) == [1, 1, 2, 2] and list(table["sizes.n"]) == [4096, 8192, 4096, 8192]
    assert (table["status"] == "ok").all() and table["check_ok"].all()
    assert (table["cache_control"] == "all").all() and table.attrs["cache_control"] == "all"
    for _, row in table.iterrows():
        n = int(row["sizes.n"])
        direct = run_program("vecadd", gpu=gpusim.GPU("teaching", sms=int(row["sms"])), sizes={"n": n},
                             cache_control="all").runs[0]
        assert row["cycles"] == direct.cycles
        assert row["dram__bytes_read.sum"] == 2 * n * 4    # a and b, read once from a cold L2
        assert row["stalls.long_scoreboard"] == direct.stalls["long_scoreboard"]
        assert row["verdict"] in ("memory-bound", "compute-bound", "latency-bound")
        assert row["mwp_cwp.error"] == pytest.approx((row["mwp_cwp.cycles"] - row["cycles"]) / row["cycles"])
        assert row["roofline.seconds"] <= row["seconds"]   # the roofline is a lower bound on time


def test_a_failing_point_is_a_row_and_the_others_run():
    bad = {**BASE, "sizes": {"n": 256}, "launch": {"regs": 100_000}}
    frame = gpusim.sweep([bad, {**BASE, "sizes": {"n": 256}}], executor=ThreadPoolExecutor(1), store=None)
    assert list(frame["status"]) == ["error", "ok"]
    assert frame["error_type"][0] == "LaunchError" and "registers" in frame["error"][0]


@pytest.mark.parametrize("suffix", [".parquet", ".sqlite"])
def test_store_resumes_and_gives_the_same_table(tmp_path, table, suffix):
    store = tmp_path / f"results{suffix}"
    first = run_sweep(points()[:2], ThreadPoolExecutor(1), store)
    assert (first.ran, first.reused) == (2, 0)
    calls = []
    second = run_sweep(points(), ThreadPoolExecutor(2), store, progress=lambda done, total: calls.append(done))
    assert (second.ran, second.reused) == (2, 2)
    assert calls[0] == 2 and calls[-1] == 4
    pd.testing.assert_frame_equal(second.frame, table)
    again = run_sweep(points(), ThreadPoolExecutor(1), store)
    assert again.ran == 0
    pd.testing.assert_frame_equal(again.frame, table)
    assert len(gpusim.sweep.load_store(store)) == 4


def test_key_follows_what_decides_the_result(tmp_path):
    def key(point):
        return prepare(point, 0, tmp_path, "all").key

    assert key(BASE) == key({**BASE, "tags": {"label": "x"}})
    assert key(BASE) != key({**BASE, "scheduler": "gto"})
    assert key(BASE) != key({**BASE, "sizes": {"n": 4000}})
    assert key(BASE) != key({**BASE, "launch": {"cache_control": "none"}})
    assert key(BASE) == key({**BASE, "l2_bytes": gpusim.load_config("teaching").l2_bytes})


def test_kernel_points_run_a_ptx_kernel_with_array_specs():
    kernel = {"ptx": "programs/vecadd.ptx", "name": "vecadd", "grid": ["n // 128"], "block": 128,
              "args": ["a", "b", "c", "n"],
              "arrays": [{"name": "a", "dtype": "float32", "shape": ["n"], "init": "ones"},
                         {"name": "b", "dtype": "float32", "shape": ["n"], "init": "ones"},
                         {"name": "c", "dtype": "float32", "shape": ["n"]}]}
    frame = gpusim.sweep([{"config": "teaching", "kernel": kernel, "sizes": {"n": 2048}}],
                         executor=ThreadPoolExecutor(1), store=None)
    assert frame["status"][0] == "ok"
    assert frame["dram__bytes_read.sum"][0] == 2 * 2048 * 4
    assert frame["dram__bytes_write.sum"][0] == 0          # c stays in L2 (write-back) until a flush


@pytest.mark.parametrize("point, field", [
    ({**BASE, "smz": 2}, "smz"),
    ({"config": "teaching"}, ""),
    ({**BASE, "launch": {"grid": 2}}, "launch.grid"),
    ({**BASE, "sizes": {"nn": 3}}, "sizes.nn"),
    ({**BASE, "scheduler": "fifo"}, "scheduler"),
])
def test_mistakes_are_one_config_error_before_anything_runs(point, field):
    with pytest.raises(ConfigError) as error:
        gpusim.sweep([BASE, point], executor=ThreadPoolExecutor(1), store=None)
    assert error.value.field == field


def test_default_process_pool_gives_the_same_table(table):
    frame = gpusim.sweep(points(), workers=2, store=None)
    pd.testing.assert_frame_equal(frame, table)
    assert np.array_equal(frame["cycles"].to_numpy(), table["cycles"].to_numpy())
