"""The first launch after installing gpusim's platform wheel (issue target: <= 20 s on a 2-core machine).

    python benchmarks/bench_wheel.py                  # build the wheel (scripts/build_wheel.py), then measure
    python benchmarks/bench_wheel.py --wheel dist/gpusim-...whl
    python benchmarks/bench_wheel.py --record         # also write benchmarks/results/wheel.json

It installs the wheel into a new virtual environment (its dependencies from pip's usual sources) and
times, from an empty directory outside any checkout and with an empty engine cache each time:

* ``seeded``  ``gpusim run vecadd`` as a new user's first command: the engine comes from the wheel's seed;
* ``warm``    the same command again with the cache that run left (nothing is compiled either way);
* ``cold``    the same first command with the seed ignored (``GPUSIM_ENGINE_SEED=0``): what a pure
  wheel's (``pip install .``) first launch costs, for comparison.

Each figure is the wall time of the whole command (interpreter start to exit), and whether it
compiled anything (the engine's compile notice on stderr).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "wheel.json"
NOTICE = "compiling the simulation engine once"


def _venv(where: Path, wheel: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    python = where / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True)
    return where / "bin" / "gpusim"


def _launch(gpusim: Path, cache: Path, cwd: Path, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "GPUSIM_", "PYTHON"))}
    environ.update({"GPUSIM_CACHE_DIR": str(cache), **env})
    start = time.perf_counter()
    out = subprocess.run([str(gpusim), "run", "vecadd"], cwd=cwd, env=environ, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if out.returncode or "check c: ok" not in out.stdout:
        raise SystemExit(f"bench_wheel: gpusim run vecadd failed:\n{out.stdout}{out.stderr}")
    return {"wall_s": round(wall, 2), "compiled": NOTICE in out.stderr}


def measure(wheel: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        gpusim = _venv(tmp_path / "venv", wheel)
        cwd = tmp_path / "work"
        cwd.mkdir()
        figures = {"seeded": _launch(gpusim, tmp_path / "cache-seeded", cwd)}
        figures["warm"] = _launch(gpusim, tmp_path / "cache-seeded", cwd)
        figures["cold"] = _launch(gpusim, tmp_path / "cache-cold", cwd, GPUSIM_ENGINE_SEED="0")
    for name, figure in figures.items():
        print(f"{name:7s} {figure['wall_s']:7.2f} s  {'compiled the engine' if figure['compiled'] else 'no compile'}")
    return figures


def sources_stamp() -> str:
    """Hash of this benchmark's and the wheel builder's sources: wheel.json's figures are from them as written."""
    import hashlib

    digest = hashlib.sha256()
    for path in (ROOT / "benchmarks" / "bench_wheel.py", ROOT / "scripts" / "build_wheel.py"):
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:24]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="a platform wheel (default: build one into a temporary dir)")
    parser.add_argument("--record", action="store_true", help=f"write the figures to {RESULTS.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel
        if wheel is None:
            sys.path.insert(0, str(ROOT / "scripts"))
            from build_wheel import build

            wheel = build(Path(tmp))
        figures = measure(wheel.resolve())
        wheel_name = wheel.name
    if args.record:
        record = {"stamp": sources_stamp(), "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
                  "wheel": wheel_name, "python": sys.version.split()[0],
                  "cpus": os.cpu_count(), "load_average_1min": round(os.getloadavg()[0], 1), "figures": figures}
        RESULTS.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
