"""The engine runs un-jitted (``NUMBA_DISABLE_JIT=1``), for stepping through it in a debugger.

The design promises that the same engine code runs as plain Python; numba reads the variable at import,
so the check runs in a fresh interpreter: ``import gpusim``, then one tiny timed launch and one
functional launch, whose outputs must match numpy and whose cycles must equal the jitted engine's for the
same launch (the same code, only not compiled).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import gpusim

ROOT = Path(__file__).resolve().parent.parent
N = 64

SCRIPT = f"""
import json, numpy as np, gpusim
from numba.core import config
gpu = gpusim.GPU("teaching", sms=1)
kernel = gpu.load("programs/vecadd.ptx")["vecadd"]
a = gpu.to_device(np.arange({N}, dtype=np.float32)); b = gpu.to_device(np.full({N}, 2.0, np.float32))
timed, functional = gpu.empty({N}, np.float32), gpu.empty({N}, np.float32)
run = gpu.launch(kernel, grid=1, block={N}, args=[a, b, timed, np.int32({N})])
gpu.launch(kernel, grid=1, block={N}, args=[a, b, functional, np.int32({N})], timing=False)
print(json.dumps({{"disabled": bool(config.DISABLE_JIT), "cycles": run.cycles, "stalls": run.stalls,
                  "timed": timed.get().tolist(), "functional": functional.get().tolist()}}))
"""


def _jitted_run():
    gpu = gpusim.GPU("teaching", sms=1)
    kernel = gpu.load(str(ROOT / "programs" / "vecadd.ptx"))["vecadd"]
    a = gpu.to_device(np.arange(N, dtype=np.float32))
    b = gpu.to_device(np.full(N, 2.0, np.float32))
    return gpu.launch(kernel, grid=1, block=N, args=[a, b, gpu.empty(N, np.float32), np.int32(N)])


def test_import_and_a_small_launch_work_with_numba_jit_disabled():
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["disabled"]
    expected = (np.arange(N) + 2.0).tolist()
    assert result["timed"] == expected and result["functional"] == expected
    jitted = _jitted_run()
    assert result["cycles"] == jitted.cycles
    assert result["stalls"] == {name: int(value) for name, value in jitted.stalls.items()}
