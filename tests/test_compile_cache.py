"""The engine's on-disk compile cache: where it lives, what invalidates it, what a user sees.

The cache tests run copies of the gpusim package in subprocesses, each with its own cache directory,
and read numba's own hit/miss counters; none of them asserts a time.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import types as pytypes
from pathlib import Path

import numpy as np
import pytest
from numba.core import config as numba_config

import gpusim
from gpusim.api.warm_up import WARM_UP_PTX, warm_up
from gpusim.engine import compile_cache as cc
from gpusim.engine import compile_seed
from gpusim.engine import source_stamp as stamps
from gpusim.engine.semantics import functional
from gpusim.engine.sm import timing

CHECKOUT = Path(gpusim.__file__).resolve().parent.parent

PROBE = '''"""A caller in one module of a callee in another (bits.popcount64), for the cache tests."""
from gpusim.engine.bits import popcount64
from gpusim.engine.jit import engine_jit


@engine_jit
def ones_plus_one(x):
    return popcount64(x) + 1
'''

PROBE_RUN = '''
import json, sys
import numpy as np
import gpusim
from gpusim.engine import compile_cache, probe
compile_cache.NOTICE_MIN_FUNCTIONS = 1
value = int(probe.ones_plus_one(np.uint64(int(sys.argv[1]))))
stats = probe.ones_plus_one.stats
print(json.dumps({"file": gpusim.__file__, "value": value, "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values()), "seed": compile_cache.seed_status()[1]}))
'''

X = 0xF0F0_0000_1234_5678


def _env(cache_dir: Path, pythonpath: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "GPUSIM_COMPILE_NOTICE")}
    return {**env, "GPUSIM_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(pythonpath)}


def _copy_package(dest: Path) -> Path:
    shutil.copytree(CHECKOUT / "gpusim", dest / "gpusim", ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "gpusim" / "engine" / "probe.py").write_text(PROBE)
    return dest


def _run_probe(copy: Path, cache_dir: Path, tmp_path: Path) -> tuple[dict, str]:
    out = subprocess.run([sys.executable, "-c", PROBE_RUN, str(X)], cwd=tmp_path, env=_env(cache_dir, copy),
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def _numba_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.suffix in (".nbi", ".nbc")]


def test_cache_dir_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setattr(numba_config, "CACHE_DIR", str(tmp_path / "numba"))
    assert cc.cache_root() == tmp_path / "explicit"
    monkeypatch.delenv("GPUSIM_CACHE_DIR")
    assert cc.cache_root() == tmp_path / "numba" / "gpusim"
    monkeypatch.setattr(numba_config, "CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cc.cache_root() == tmp_path / "xdg" / "gpusim"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cc.cache_root() == tmp_path / "home" / ".cache" / "gpusim"


def test_stamp_covers_every_module_compiled_code_reads():
    """Each engine function's own file, and every gpusim module its globals name (their constants
    are frozen into the machine code), is part of the stamp."""
    sources = set(stamps.engine_sources())
    engine = [d for d in cc._ENGINE.values() if Path(d.py_func.__code__.co_filename).resolve().is_relative_to(
        cc.PACKAGE_ROOT)]
    assert functional.run_functional in engine and timing.run_timed in engine
    for dispatcher in engine:
        assert Path(dispatcher.py_func.__code__.co_filename).resolve() in sources
        for value in dispatcher.py_func.__globals__.values():
            if isinstance(value, pytypes.ModuleType) and value.__name__.startswith("gpusim."):
                assert Path(value.__file__).resolve() in sources, (dispatcher, value)


def test_stamp_depends_on_content_not_location(tmp_path):
    copy = _copy_package(tmp_path / "a") / "gpusim"
    (copy / "engine" / "probe.py").unlink()
    assert cc.source_stamp(copy) == cc.source_stamp(cc.PACKAGE_ROOT)
    outside = next(p for p in sorted(copy.rglob("*.py")) if p.resolve() not in set(stamps.engine_sources(copy)))
    outside.write_text(outside.read_text() + "\n# not engine code\n")
    assert cc.source_stamp.__wrapped__(copy) == cc.source_stamp(cc.PACKAGE_ROOT)
    callee = copy / "engine" / "bits.py"
    callee.write_text(callee.read_text() + "\n# an edit\n")
    assert cc.source_stamp.__wrapped__(copy) != cc.source_stamp(cc.PACKAGE_ROOT)


def test_two_copies_share_one_cache_and_a_callee_edit_recompiles_its_callers(tmp_path):
    cache_dir = tmp_path / "cache"
    first = _copy_package(tmp_path / "checkout")
    second = _copy_package(tmp_path / "site-packages")
    expected = bin(X).count("1") + 1

    cold, notice = _run_probe(first, cache_dir, tmp_path)
    assert cold["file"] == str(first / "gpusim" / "__init__.py")
    assert (cold["value"], cold["hits"]) == (expected, 0) and cold["misses"] > 0
    assert "compiling the simulation engine once" in notice and "done in" in notice

    warm, quiet = _run_probe(second, cache_dir, tmp_path)
    assert warm["file"] == str(second / "gpusim" / "__init__.py")
    assert (warm["value"], warm["misses"]) == (expected, 0) and warm["hits"] > 0
    assert quiet == ""

    # the callee lives in another file than its caller: numba's own per-file stamp would keep the caller
    bits = second / "gpusim" / "engine" / "bits.py"
    bits.write_text(bits.read_text().replace("return _ctpop_u64(np.uint64(bits))",
                                             "return _ctpop_u64(np.uint64(bits)) + np.uint64(1)"))
    edited, _ = _run_probe(second, cache_dir, tmp_path)
    assert edited["value"] == expected + 1 and edited["misses"] > 0

    assert _numba_files(first) == [] and _numba_files(second) == []
    assert _numba_files(cache_dir)


def test_unwritable_cache_dir_warns_once_and_still_runs(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    script = ("import numpy as np\nfrom gpusim.engine import bits\n"
              "print(int(bits.popcount64(np.uint64(255))), int(bits.leading_zeros64(np.uint64(1))))")
    out = subprocess.run([sys.executable, "-W", "always", "-c", script], cwd=tmp_path,
                         env=_env(blocker / "cache", CHECKOUT), capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(bin(255).count("1")), str(64 - (1).bit_length())]
    assert out.stderr.count("cannot use the engine cache directory") == 1
    assert blocker.read_text() == "not a directory"


def test_reachable_keeps_the_two_launch_paths_apart():
    functional_tree = {d.py_func.__name__ for d in cc.reachable(functional.run_functional)}
    timed_tree = {d.py_func.__name__ for d in cc.reachable(timing.run_timed)}
    assert {"step_warp", "step_fast", "start_block", "release_barriers", "alu_eval"} <= functional_tree
    assert "run_timed" not in functional_tree and "memory_timing" not in functional_tree
    assert {"step_warp", "memory_timing", "book_issue", "dispatch_block"} <= timed_tree
    assert "run_functional" not in timed_tree


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_notice_on_a_pipe_appends_percentages():
    stream = io.StringIO()
    notice = cc.Notice(20, stream)
    for _ in range(20):
        notice.advance()
    notice.finish()
    text = stream.getvalue()
    assert text.startswith("gpusim: compiling the simulation engine once (about ")
    assert str(cc.cache_root().name) in text
    steps = [f" {10 * k}%" for k in range(1, 10)]
    positions = [text.index(step) for step in steps]
    assert positions == sorted(positions)
    assert text.rstrip().endswith("s") and " done in " in text and text.count("\n") == 1


def test_notice_on_a_terminal_counts_functions():
    stream = _Terminal()
    notice = cc.Notice(7, stream, use_rich=False)
    for _ in range(7):
        notice.advance()
    notice.finish()
    text = stream.getvalue()
    for done in range(8):
        assert f"\rgpusim: {done}/7 engine functions ({100 * done // 7}%)" in text
    assert "engine compiled in" in text


def test_notice_uses_rich_on_a_terminal_when_installed():
    pytest.importorskip("rich")
    stream = _Terminal()
    notice = cc.Notice(5, stream)
    assert notice._mode == "rich"
    for _ in range(5):
        notice.advance()
    notice.finish()
    text = stream.getvalue()
    assert "compiling the simulation engine once" in text and "5/5" in text and "engine compiled in" in text


def test_warm_up_compiles_both_launch_paths():
    warm_up()
    assert functional.run_functional.overloads and timing.run_timed.overloads
    gpu = gpusim.GPU("teaching")
    kernel = gpu.load_ptx(WARM_UP_PTX)["warm_up"]
    out = gpu.empty(1, np.uint32)
    before = (len(functional.run_functional.overloads), len(timing.run_timed.overloads))
    gpu.launch(kernel, grid=1, block=32, args=[out], timing=True)
    gpu.launch(kernel, grid=1, block=32, args=[out], timing=False)
    assert (len(functional.run_functional.overloads), len(timing.run_timed.overloads)) == before


# ---------------------------------------------------------------------------------------------------
# the seed: a platform wheel's engine compiled ahead of time for a baseline CPU (scripts/build_wheel.py)


def _seeded_copy(tmp_path: Path, cpu: str = "generic") -> tuple[Path, Path]:
    """A package copy whose probe is compiled for ``cpu`` into its seed directory, as build_wheel does;
    returns (the copy, the seed's stamp directory)."""
    copy = _copy_package(tmp_path / "pkg")
    seed_root = copy / "gpusim" / compile_seed.SEED_DIRNAME
    env = {**_env(seed_root, copy), "GPUSIM_ENGINE_SEED": "0", "NUMBA_CPU_NAME": cpu, "NUMBA_CPU_FEATURES": ""}
    out = subprocess.run([sys.executable, "-c", PROBE_RUN, str(X)], cwd=tmp_path, env=env, capture_output=True,
                         text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1])["misses"] > 0
    (stamp_dir,) = [p for p in seed_root.iterdir() if p.is_dir()]
    assert stamp_dir.name == cc.source_stamp.__wrapped__(copy / "gpusim")
    compile_seed.write_seed_manifest(stamp_dir, cpu)
    return copy, stamp_dir


def test_a_seed_serves_an_empty_cache_only_where_it_fits(tmp_path):
    copy, stamp_dir = _seeded_copy(tmp_path)
    expected = bin(X).count("1") + 1
    manifest = json.loads((stamp_dir / compile_seed.SEED_MANIFEST).read_text())
    assert manifest["cpu"] == "generic" and manifest["requires"] == [] and manifest["stamp"] == stamp_dir.name

    seeded, notice = _run_probe(copy, tmp_path / "user-cache", tmp_path)
    assert (seeded["value"], seeded["misses"]) == (expected, 0) and seeded["hits"] > 0
    assert notice == "" and _numba_files(tmp_path / "user-cache") == []     # loaded, nothing compiled or saved
    seed_path = copy / "gpusim" / compile_seed.SEED_DIRNAME / stamp_dir.name
    assert seeded["seed"] == f"generic code in {seed_path}: used for what the cache lacks"

    def misses(**changes) -> tuple[int, str]:
        cache_dir = tmp_path / f"cache-{len(list(tmp_path.iterdir()))}"
        env = _env(cache_dir, copy)
        if "env" in changes:
            env.update(changes["env"])
        else:
            (stamp_dir / compile_seed.SEED_MANIFEST).write_text(json.dumps({**manifest, **changes}))
        out = subprocess.run([sys.executable, "-c", PROBE_RUN, str(X)], cwd=tmp_path, env=env,
                             capture_output=True, text=True, check=True)
        (stamp_dir / compile_seed.SEED_MANIFEST).write_text(json.dumps(manifest))
        result = json.loads(out.stdout.strip().splitlines()[-1])
        assert result["value"] == expected
        return result["misses"], result["seed"]

    def refused(why: str, **changes) -> bool:
        count, status = misses(**changes)
        return count > 0 and why in status

    assert refused("ignored (GPUSIM_ENGINE_SEED=0)", env={"GPUSIM_ENGINE_SEED": "0"})
    assert refused("needs CPU features this CPU lacks (no-such-cpu-feature)", requires=["no-such-cpu-feature"])
    assert refused("built by numba 0.0.0", numba="0.0.0")
    assert refused("built for riscv64-unknown-linux-gnu", triple="riscv64-unknown-linux-gnu")
    assert refused("names source stamp 0", stamp="0")
    count, status = misses(cpu="x86-64-v9")       # the index is keyed by the CPU the code was built for
    assert count > 0 and status.startswith("x86-64-v9 code in")
    assert misses()[0] == 0


def test_a_seed_serves_a_process_whose_cache_root_changed_after_import(tmp_path):
    """The seed's file is found from the function's place in the package, not from the user-cache path the
    locator computed at import: a cache root changed since (an environment edit) still finds it."""
    copy, _ = _seeded_copy(tmp_path)
    moved = PROBE_RUN.replace("compile_cache.NOTICE_MIN_FUNCTIONS = 1\n", "compile_cache.NOTICE_MIN_FUNCTIONS = 1\n"
                              f"import os; os.environ['GPUSIM_CACHE_DIR'] = {str(tmp_path / 'moved')!r}\n")
    assert moved != PROBE_RUN
    out = subprocess.run([sys.executable, "-c", moved, str(X)], cwd=tmp_path, env=_env(tmp_path / "first", copy),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert (result["value"], result["misses"]) == (bin(X).count("1") + 1, 0) and result["hits"] > 0


def test_a_seed_of_other_source_is_not_used(tmp_path):
    copy, _ = _seeded_copy(tmp_path)
    bits = copy / "gpusim" / "engine" / "bits.py"
    bits.write_text(bits.read_text().replace("return _ctpop_u64(np.uint64(bits))",
                                             "return _ctpop_u64(np.uint64(bits)) + np.uint64(1)"))
    edited, _ = _run_probe(copy, tmp_path / "user-cache", tmp_path)
    assert edited["value"] == bin(X).count("1") + 2 and edited["misses"] > 0
    assert edited["seed"].startswith("none for this source (the package holds seeds of other sources: ")


def test_seed_targets_are_checked():
    with pytest.raises(ValueError, match="no seed target 'pentium'"):
        compile_seed.write_seed_manifest(Path("unused"), "pentium")
    assert set(compile_seed.SEED_TARGETS["x86-64-v2"]) < set(compile_seed.SEED_TARGETS["x86-64-v3"])
    assert compile_seed.SEED_TARGETS["generic"] == ()


def test_notice_estimates_from_the_rate_measured_here(monkeypatch, tmp_path):
    """The header's estimate is total x the last large compile's measured seconds per function x the helper's
    speedup, rounded to 5 s; a large compile records its own rate for the next notice."""
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path))
    assert cc.measured_seconds_per_function() == cc.SECONDS_PER_FUNCTION       # nothing measured yet
    (tmp_path / cc.RATE_FILE).write_text(json.dumps({"seconds_per_function": 0.5}))
    stream = io.StringIO()
    cc.Notice(300, stream, speedup=0.6)
    assert "(about 90 s;" in stream.getvalue()                                # 300 x 0.5 x 0.6
    (tmp_path / cc.RATE_FILE).write_text("not json")
    assert cc.measured_seconds_per_function() == cc.SECONDS_PER_FUNCTION

    notice = cc.Notice(cc.RATE_MIN_FUNCTIONS, io.StringIO(), speedup=0.5)
    notice.start -= 10.0                                                       # as if it had run 10 s
    seconds = notice.finish()
    recorded = json.loads((tmp_path / cc.RATE_FILE).read_text())["seconds_per_function"]
    assert recorded == pytest.approx(seconds / (cc.RATE_MIN_FUNCTIONS * 0.5), abs=1e-4)
    small = cc.Notice(cc.RATE_MIN_FUNCTIONS - 1, io.StringIO())
    small.start -= 100.0
    small.finish()                                                             # too small to be typical
    assert json.loads((tmp_path / cc.RATE_FILE).read_text())["seconds_per_function"] == recorded


def test_engine_command_names_the_cache_and_the_seed(capsys, monkeypatch, tmp_path):
    from gpusim.cli import main

    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path))
    assert main(["engine"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"engine cache: {tmp_path / cc.source_stamp()} (nothing compiled yet for this source)",
                     f"engine seed: {cc.seed_status()[1]}"]


def test_engine_command_warms_up_both_paths(capsys):
    from gpusim.cli import main

    assert main(["engine", "--warm-up"]) == 0
    warmed, cache, seed_line = capsys.readouterr().out.splitlines()
    assert warmed.startswith("engine compiled or loaded in ") and warmed.endswith(" s")
    assert functional.run_functional.overloads and timing.run_timed.overloads
    index_files = len(list(cc.stamp_dir().rglob("*.nbi")))
    assert index_files > 0 and cache == f"engine cache: {cc.stamp_dir()} ({index_files} functions compiled)"
    assert seed_line.startswith("engine seed: ")
