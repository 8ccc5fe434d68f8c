"""A cold compile with a helper process (engine/parallel_compile.py, engine/sm/compile_split.py).

Each test runs a copy of the package (or the checkout) in a subprocess with an empty cache directory
and reads numba's own per-function hit/miss counters: a function the helper compiled is a cache hit
in the parent, never a compile. No test asserts a time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_compile_cache import CHECKOUT, X, _env

PROBE = '''"""An entry whose split hands leaf_b to the helper; leaf_a's typing waits until the helper is done
(a test's ordering: the parent then finds leaf_b in the cache, whatever the machine's load)."""
import os
import time

from numba import types
from numba.extending import overload

from gpusim.engine import compile_cache
from gpusim.engine.bits import popcount64
from gpusim.engine.jit import compiled_only, engine_jit


def wait_for_helper():
    pass


@overload(wait_for_helper)
def _typing_wait_for_helper():
    failure = os.environ.get("PROBE_FAILS")
    if failure == "error":
        raise TypeError("the probe refuses to compile")
    if failure == "interrupt":
        raise KeyboardInterrupt
    session = compile_cache._state["session"]
    deadline = time.monotonic() + 300     # only a guard against a hung helper, not a speed expectation
    while session is not None and session.other_running() and time.monotonic() < deadline:
        time.sleep(0.02)
    return lambda: None


@compiled_only
def leaf_a(x):
    wait_for_helper()
    return x + 1


@compiled_only
def leaf_b(x):
    return popcount64(x) * 2


@engine_jit
def entry(x):
    return leaf_a(x) + leaf_b(x)


compile_cache.register_split(entry, lambda x: [(leaf_b, (types.uint64,))])
'''

# the helper exits at once / claims leaf_b and then dies holding the claim / never finishes
HELPERS = {
    "exit": "import sys\nsys.exit(7)\n",
    "crash": ("import os, signal, sys\nsys.path.insert(0, sys.argv[1])\nfrom pathlib import Path\n"
              "from numba import types\nfrom gpusim.engine import parallel_compile, probe\n"
              "request = parallel_compile.read_request()\n"
              "session = parallel_compile.Session(Path(request['session']), request['parent'])\n"
              "session.acquire(probe.leaf_b._cache.claim_name((types.uint64,)), lambda: None)\n"
              "os.kill(os.getpid(), signal.SIGKILL)\n"),
    "sleep": "import time\ntime.sleep(120)\n",
}

RUN = '''
import json, os, sys
if os.environ.get("PROBE_PACKAGE"):           # the package found by a path the script adds, not PYTHONPATH
    sys.path.insert(0, os.environ["PROBE_PACKAGE"])
import numpy as np
from gpusim.engine import bits, compile_cache, parallel_compile, probe
compile_cache.NOTICE_MIN_FUNCTIONS = 1
helper = sys.argv[2]
if helper != "normal":
    parallel_compile._HELPER_CODE = json.loads(sys.argv[3])[helper]
try:
    value = int(probe.entry(np.uint64(int(sys.argv[1]))))
except (Exception, KeyboardInterrupt) as error:
    value = type(error).__name__
stats = lambda d: [sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values())]
session = compile_cache._state["last_session"]
out = {"value": value, "entry": stats(probe.entry), "leaf_b": stats(probe.leaf_b),
       "popcount64": stats(bits.popcount64), "session": session is not None}
if session is not None:
    out.update(rc=session.returncode, session_dir=session.directory.exists(),
               helper_alive=parallel_compile._alive(session.helper.pid), claims=len(session.held))
print(json.dumps(out))
'''


def _probe_copy(dest: Path) -> Path:
    shutil.copytree(CHECKOUT / "gpusim", dest / "gpusim", ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "gpusim" / "engine" / "probe.py").write_text(PROBE)
    return dest


def _run(copy: Path, cache_dir: Path, cwd: Path, helper: str = "normal", fails: str = "",
         script_path: bool = False) -> tuple[dict, str]:
    env = {**_env(cache_dir, copy), "PROBE_FAILS": fails}
    env.pop("GPUSIM_PARALLEL_COMPILE", None)
    if script_path:
        env.pop("PYTHONPATH")
        env["PROBE_PACKAGE"] = str(copy)
    out = subprocess.run([sys.executable, "-c", RUN, str(X), helper, json.dumps(HELPERS)], cwd=cwd, env=env,
                         capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


@pytest.fixture(scope="module")
def probe_copy(tmp_path_factory):
    if not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("the helper process is only started with two or more CPUs")
    return _probe_copy(tmp_path_factory.mktemp("probe"))


EXPECTED = (2 * bin(X).count("1") + X + 1) % 2**64 - 2**64   # as numba types it: int64 (wraps)


@pytest.mark.parametrize("script_path", [False, True], ids=["PYTHONPATH", "sys.path"])
def test_helper_compiles_its_roots_and_the_parent_loads_them(probe_copy, tmp_path, script_path):
    """The package is a copy outside the checkout, found through PYTHONPATH (as an install is, through
    site-packages) or through a directory the script puts on ``sys.path`` (the helper then adds it)."""
    cache_dir = tmp_path / "cache"
    cold, notice = _run(probe_copy, cache_dir, tmp_path, script_path=script_path)
    assert cold["value"] == EXPECTED
    assert cold["entry"] == [0, 1]                    # the entry: compiled here
    assert cold["leaf_b"] == [1, 0]                   # the helper's root: loaded, not compiled
    assert cold["popcount64"] == [0, 0]               # its callee: inside the loaded code, not touched
    assert cold["rc"] == 0 and not cold["helper_alive"] and not cold["session_dir"] and cold["claims"] == 0
    assert "compiling the simulation engine once" in notice and "Traceback" not in notice
    # everything is in the cache now: a new process compiles nothing and starts no helper
    warm, quiet = _run(probe_copy, cache_dir, tmp_path)
    assert warm["value"] == EXPECTED and warm["entry"] == [1, 0] and not warm["session"]
    assert quiet == ""


@pytest.mark.parametrize("helper, returncode", [("exit", 7), ("crash", -9)])
def test_a_failing_helper_falls_back_to_compiling_here(probe_copy, tmp_path, helper, returncode):
    """A helper that exits at once, or dies holding its claim on leaf_b: the parent compiles leaf_b."""
    cache_dir = tmp_path / "cache"
    cold, notice = _run(probe_copy, cache_dir, tmp_path, helper)
    assert cold["value"] == EXPECTED
    assert cold["leaf_b"] == [0, 1] and cold["entry"] == [0, 1]
    assert cold["rc"] == returncode and not cold["helper_alive"] and not cold["session_dir"]
    assert "Traceback" not in notice
    warm, _ = _run(probe_copy, cache_dir, tmp_path)
    assert warm["value"] == EXPECTED and warm["entry"] == [1, 0]


@pytest.mark.parametrize("fails, error", [("error", "TypeError"), ("interrupt", "KeyboardInterrupt")])
def test_a_failed_compile_stops_the_helper(probe_copy, tmp_path, fails, error):
    """The parent's compile raises (an error, or Ctrl-C) while the helper still runs: it is stopped."""
    cold, _ = _run(probe_copy, tmp_path / "cache", tmp_path, "sleep", fails)
    assert cold["value"] == error
    assert cold["rc"] == -15 and not cold["helper_alive"] and not cold["session_dir"] and cold["claims"] == 0


TIMED_SPLIT = '''
import json, sys
import numpy as np
from gpusim.engine import compile_cache, parallel_compile
from gpusim.engine.sm import compile_split
from gpusim.engine.semantics import functional
from gpusim.engine.sm import timing
import gpusim
from gpusim.api.warm_up import WARM_UP_PTX

def cached():
    """(function, argument types) of every engine function version in the cache now."""
    return {(d.py_func.__qualname__, str(key[0])) for d in compile_cache._ENGINE.values()
            if isinstance(d._cache, compile_cache.EngineCache) for key in d._cache._cache_file._load_index()}

start = parallel_compile.start_helper
helper_built = set()
def start_and_finish(*args, **kwargs):     # the helper's work first, so that the counts are exact
    session = start(*args, **kwargs)
    session.helper.wait()
    helper_built.update(cached())
    return session
parallel_compile.start_helper = start_and_finish

timed = sys.argv[1] == "timed"
gpu = gpusim.GPU("teaching")
kernel = gpu.load_ptx(WARM_UP_PTX)["warm_up"]
out = gpu.empty(1, np.uint32)
gpu.launch(kernel, grid=1, block=32, args=[out], timing=timed)
entry = timing.run_timed if timed else functional.run_functional
roots = compile_split.timed_roots if timed else compile_split.functional_roots
(args,) = list(entry.overloads)
parent_built = {(d.py_func.__qualname__, str(sig)) for d in compile_cache._ENGINE.values()
                for sig, count in d.stats.cache_misses.items() if count}
session = compile_cache._state["last_session"]
print(json.dumps({
    "rc": session.returncode,
    "roots_built_by_helper": all((root.py_func.__qualname__, str(sig)) in helper_built for root, sig in roots(*args)),
    "built_twice": sorted(map(str, parent_built & helper_built)),
    "roots_loaded": [sum(root.stats.cache_hits.values()) for root, _ in roots(*args)],
    "parent_compiled": sum(sum(d.stats.cache_misses.values()) for d in compile_cache._ENGINE.values()),
}))
'''


@pytest.mark.slow
@pytest.mark.parametrize("path", ["timed", "functional"])
def test_the_engine_split_signatures_are_the_ones_the_entry_compiles(tmp_path, path):
    """A real cold compile: with the helper done first, the parent compiles none of the function
    versions the helper built, and loads its roots (so their argument types, derived from the entry's,
    are the ones the entry's code passes)."""
    env = _env(tmp_path / "cache", CHECKOUT)
    env.pop("GPUSIM_PARALLEL_COMPILE", None)
    out = subprocess.run([sys.executable, "-c", TIMED_SPLIT, path], cwd=tmp_path, env=env, capture_output=True,
                         text=True, check=True, timeout=1200)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["rc"] == 0
    assert result["roots_built_by_helper"] and result["built_twice"] == []
    assert all(hits == 1 for hits in result["roots_loaded"])
    assert result["parent_compiled"] > 0
