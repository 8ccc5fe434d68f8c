"""A sweep killed with SIGKILL mid-way loses at most the points in flight, never corrupts its store, and
resuming it gives the table of an uninterrupted run."""

import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd

import gpusim
from gpusim.sweep.runner import run_sweep

ROOT = Path(__file__).resolve().parents[1]
POINTS = 12
HOLD_AT = 4
"""The killed sweep stops taking points once it has stored this many (its progress callback waits to be killed),
so the kill always lands mid-sweep, however fast the machine runs the points."""
SCRIPT = f"""
from concurrent.futures import ThreadPoolExecutor
import sys, time, gpusim
points = gpusim.sweep.grid({{"sizes.n": [40000 + 512 * i for i in range({POINTS})]}},
                           {{"program": "vecadd", "config": "teaching"}})
def hold(done, total):
    if done >= {HOLD_AT}:
        time.sleep(3600)
gpusim.sweep(points, executor=ThreadPoolExecutor(1), store=sys.argv[1], progress=hold)
"""


def points():
    return gpusim.sweep.grid({"sizes.n": [40000 + 512 * i for i in range(POINTS)]},
                             {"program": "vecadd", "config": "teaching"})


def test_sigkill_mid_sweep_then_resume(tmp_path):
    store = tmp_path / "killed.parquet"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", SCRIPT, str(store)], cwd=ROOT, env=env,
                               start_new_session=True, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600     # only a guard against a hung child, not a speed expectation
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if store.is_dir() and len(list(store.glob("*.parquet"))) >= 3:
                break
            time.sleep(0.02)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL, process.stderr.read().decode()
    stored = len(list(store.glob("*.parquet")))
    assert 3 <= stored <= HOLD_AT < POINTS
    resumed = run_sweep(points(), ThreadPoolExecutor(1), store)
    assert resumed.reused == stored and resumed.ran == POINTS - stored
    assert not list(store.glob(".*.tmp"))   # a half-written file of the killed run is cleared
    uninterrupted = gpusim.sweep(points(), executor=ThreadPoolExecutor(1), store=tmp_path / "whole.sqlite")
    pd.testing.assert_frame_equal(resumed.frame, uninterrupted)
    assert (resumed.frame["status"] == "ok").all()
