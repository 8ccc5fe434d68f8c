"""scripts/build_wheel.py: the platform wheel that carries the engine compiled ahead of time (the seed).

Fast: the wheel's assembly (tag, pins, RECORD) on a stand-in unpacked wheel, checked against the wheel
format's own rules (RECORD hashes recomputed here with hashlib). Slow: the whole build, installed into
a new environment, whose first launch compiles nothing.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

from gpusim.engine import compile_seed
from scripts import build_wheel

METADATA = """Metadata-Version: 2.1
Name: gpusim
Version: 0.1.0
Requires-Dist: numpy>=1.26
Requires-Dist: numba<0.69,>=0.68
Requires-Dist: llvmlite<0.51,>=0.50
Requires-Dist: numba-cuda<0.31,>=0.30; extra == "numba-cuda"
Requires-Dist: simpy>=4.1
"""


def _stand_in(tmp_path: Path) -> tuple[Path, Path]:
    unpacked = tmp_path / "unpacked"
    dist_info = unpacked / "gpusim-0.1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(METADATA)
    (dist_info / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: setuptools\nRoot-Is-Purelib: true\n"
                                     "Tag: py3-none-any\n")
    (dist_info / "RECORD").write_text("stale\n")
    (unpacked / "gpusim" / "_engine_seed" / "abc" / "engine").mkdir(parents=True)
    (unpacked / "gpusim" / "__init__.py").write_text("x = 1\n")
    (unpacked / "gpusim" / "_engine_seed" / "abc" / "engine" / "bits.f-1.py311.nbi").write_bytes(bytes(range(256)))
    return unpacked, dist_info


def test_wheel_is_tagged_for_this_python_and_platform_and_pins_the_seed_compiler(tmp_path):
    unpacked, dist_info = _stand_in(tmp_path)
    tag = build_wheel.wheel_tag()
    python, abi, platform = tag.split("-")
    assert python == f"cp{sys.version_info[0]}{sys.version_info[1]}" and abi == "none"
    assert platform == sysconfig.get_platform().replace("-", "_").replace(".", "_")

    wheel = build_wheel._write_wheel(unpacked, dist_info, tmp_path / "dist", tag)
    assert wheel.name == f"gpusim-0.1.0-{tag}.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        wheel_meta = archive.read("gpusim-0.1.0.dist-info/WHEEL").decode()
        metadata = archive.read("gpusim-0.1.0.dist-info/METADATA").decode()
        record = list(csv.reader(io.StringIO(archive.read("gpusim-0.1.0.dist-info/RECORD").decode())))
        contents = {name: archive.read(name) for name in names}
    assert "Root-Is-Purelib: false" in wheel_meta and wheel_meta.count("Tag: ") == 1 and f"Tag: {tag}" in wheel_meta
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist: ")]
    assert requires == ["Requires-Dist: numpy>=1.26", f"Requires-Dist: numba=={version('numba')}",
                        f"Requires-Dist: llvmlite=={version('llvmlite')}",
                        'Requires-Dist: numba-cuda<0.31,>=0.30; extra == "numba-cuda"', "Requires-Dist: simpy>=4.1"]
    assert {row[0] for row in record} == names          # every file listed once, RECORD itself included
    for path, digest, size in record:
        if path.endswith("RECORD"):
            assert (digest, size) == ("", "")
            continue
        data = contents[path]
        expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert (digest, int(size)) == (f"sha256={expected}", len(data))


def test_pin_refuses_metadata_without_the_pinned_requirement():
    with pytest.raises(SystemExit, match="no single Requires-Dist line for numba"):
        build_wheel._pin(METADATA.replace("Requires-Dist: numba<0.69,>=0.68\n", ""))


def test_unknown_cpu_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="--cpu 'pentium' is not one of"):
        build_wheel.build(tmp_path, "pentium")


@pytest.mark.slow
def test_installed_platform_wheel_launches_without_compiling(tmp_path):
    """The whole build (a cold compile for the generic CPU, minutes), installed into a new environment that
    sees this one's packages: its first launch, from outside the checkout with an empty cache, loads the
    whole engine from the seed (numba's own miss counters stay at zero) and runs the kernel."""
    wheel = build_wheel.build(tmp_path / "dist", "generic")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # this environment's packages (numba, numpy, simpy) after the new one's own: a plain path entry, so this
    # environment's editable gpusim (a .pth import hook) is not installed there
    (Path(site) / "parent_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    script = (
        "import json, numpy as np, gpusim\n"
        "from gpusim.engine import compile_cache as cc\n"
        "from gpusim.api.warm_up import WARM_UP_PTX\n"
        "gpu = gpusim.GPU('teaching')\n"
        "k = gpu.load_ptx(WARM_UP_PTX)['warm_up']\n"
        "out = gpu.empty(1, np.uint32)\n"
        "run = gpu.launch(k, grid=1, block=32, args=[out])\n"
        "gpu.launch(k, grid=1, block=32, args=[out], timing=False)\n"
        "misses = sum(sum(d.stats.cache_misses.values()) for d in cc._ENGINE.values())\n"
        "hits = sum(sum(d.stats.cache_hits.values()) for d in cc._ENGINE.values())\n"
        "print(json.dumps({'file': gpusim.__file__, 'seed': cc.seed_magic(), 'misses': misses, 'hits': hits,\n"
        "                  'out': int(out.get()[0]), 'cycles': run.cycles}))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "GPUSIM_", "PYTHONPATH"))}
    env["GPUSIM_CACHE_DIR"] = str(tmp_path / "empty-cache")
    out = subprocess.run([str(python), "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(result["file"]).resolve().is_relative_to(venv.resolve())
    assert result["seed"][1] == "generic" and result["misses"] == 0 and result["hits"] > 0
    assert 0 <= result["out"] < 32 and result["cycles"] > 0  # one lane's tid.x (all 32 store to one word)
    assert "compiling the simulation engine" not in out.stderr
    assert not any(p.suffix == ".nbi" for p in (tmp_path / "empty-cache").rglob("*"))
    assert compile_seed.SEED_DIRNAME in {p.name for p in Path(result["file"]).parent.iterdir()}
