"""Build gpusim's platform wheel: the package plus its engine compiled ahead of time (the *seed*).

    python scripts/build_wheel.py                 # dist/gpusim-<version>-cp3XX-none-<platform>.whl
    python scripts/build_wheel.py --cpu generic   # code for any CPU of the platform (default x86-64-v3)
    python scripts/build_wheel.py --out DIR

``pip install .`` builds a pure wheel: the first launch after it compiles the engine (one to two
minutes on a 2-core machine). The wheel this script builds carries that compile's result, so the first
launch after installing it loads the engine instead (a second or two). It

1. builds the pure wheel (``pip wheel --no-deps``) and unpacks it;
2. runs ``gpusim.api.warm_up`` on the unpacked package in a new process with numba generating code for
   ``--cpu`` (``NUMBA_CPU_NAME``, no extra features) and the engine cache pointed at the package's
   ``_engine_seed`` directory, then describes that stamp directory (``compile_seed.write_seed_manifest``);
3. pins numba and llvmlite to the versions that compiled the seed (a seed is only used by the numba that
   built it), and tags the wheel for this Python minor version and platform.

At run time the seed is used only where it fits (``gpusim/engine/compile_seed.py``): same source stamp,
same numba, and a CPU with the features ``--cpu`` assumes; anything else compiles as before.
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUILD_SEED = """
import json, sys
import gpusim
from gpusim.api.warm_up import warm_up
from gpusim.engine import compile_cache as cc, compile_seed
warm_up()
manifest = compile_seed.write_seed_manifest(cc.stamp_dir(), sys.argv[1])
print(json.dumps({"package": gpusim.__file__, "stamp_dir": str(cc.stamp_dir()), "manifest": str(manifest)}))
"""

PINNED = ("numba", "llvmlite")


def _pure_wheel(work: Path) -> Path:
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work), str(ROOT)],
                         capture_output=True, text=True)     # setuptools' warnings only on failure
    if out.returncode:
        raise SystemExit(f"build_wheel: pip wheel failed:\n{out.stdout}{out.stderr}")
    wheels = list(work.glob("gpusim-*-py3-none-any.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"build_wheel: expected one pure wheel in {work}, found {[w.name for w in wheels]}")
    return wheels[0]


def _build_seed(unpacked: Path, cpu: str) -> Path:
    """Compile the engine of the package in ``unpacked`` for ``cpu`` into its seed directory."""
    seed_root = unpacked / "gpusim" / "_engine_seed"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "GPUSIM_"))}
    env.update({"PYTHONPATH": str(unpacked), "GPUSIM_CACHE_DIR": str(seed_root), "GPUSIM_ENGINE_SEED": "0",
                "NUMBA_CPU_NAME": cpu, "NUMBA_CPU_FEATURES": ""})
    out = subprocess.run([sys.executable, "-c", BUILD_SEED, cpu], cwd=unpacked, env=env, check=True,
                         stdout=subprocess.PIPE, text=True)
    import json

    built = json.loads(out.stdout.strip().splitlines()[-1])
    if Path(built["package"]).resolve() != (unpacked / "gpusim" / "__init__.py").resolve():
        raise SystemExit(f"build_wheel: the seed was built from {built['package']}, not the unpacked wheel")
    stamp_dir = Path(built["stamp_dir"])
    for path in seed_root.iterdir():          # only the stamp directory the seed describes
        if path != stamp_dir:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    for path in list(stamp_dir.rglob("*")):   # the cache's lock and compile-session files
        if path.name.startswith("."):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    return stamp_dir


def _pin(metadata: str) -> str:
    """``Requires-Dist`` for numba and llvmlite pinned to the installed (seed-building) versions."""
    from importlib.metadata import version

    for name in PINNED:
        metadata, count = re.subn(rf"^Requires-Dist: {re.escape(name)}(?![\w.-])[^;\n]*$",
                                  f"Requires-Dist: {name}=={version(name)}", metadata, flags=re.MULTILINE)
        if count != 1:
            raise SystemExit(f"build_wheel: no single Requires-Dist line for {name} in METADATA")
    return metadata


def _record_line(relative: str, data: bytes) -> list[str]:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [relative, f"sha256={digest}", str(len(data))]


def _write_wheel(unpacked: Path, dist_info: Path, out_dir: Path, tag: str) -> Path:
    name, version = dist_info.name[:-len(".dist-info")].split("-")
    wheel_file = dist_info / "WHEEL"
    text = wheel_file.read_text(encoding="utf-8")
    text = re.sub(r"^Root-Is-Purelib: .*$", "Root-Is-Purelib: false", text, flags=re.MULTILINE)
    text = re.sub(r"^Tag: .*\n", "", text, flags=re.MULTILINE).rstrip("\n") + f"\nTag: {tag}\n"
    wheel_file.write_text(text, encoding="utf-8")
    metadata = dist_info / "METADATA"
    metadata.write_text(_pin(metadata.read_text(encoding="utf-8")), encoding="utf-8")
    record = dist_info / "RECORD"
    files = sorted(p for p in unpacked.rglob("*") if p.is_file() and p != record)
    rows = [_record_line(p.relative_to(unpacked).as_posix(), p.read_bytes()) for p in files]
    rows.append([record.relative_to(unpacked).as_posix(), "", ""])
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    record.write_text(buffer.getvalue(), encoding="utf-8")
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files + [record]:
            archive.write(path, path.relative_to(unpacked).as_posix())
    return target


def wheel_tag() -> str:
    """This interpreter's minor version (the seed's numba cache files are per minor version), no ABI of
    its own (no extension module), and this platform."""
    python = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    target = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{python}-none-{target}"


def build(out_dir: Path, cpu: str | None = None) -> Path:
    """Build the platform wheel into ``out_dir`` with a seed for ``cpu`` (default ``default_cpu()``)."""
    from gpusim.engine.compile_seed import SEED_TARGETS

    cpu = cpu or default_cpu()
    if cpu not in SEED_TARGETS:
        raise SystemExit(f"build_wheel: --cpu {cpu!r} is not one of {', '.join(SEED_TARGETS)}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        pure = _pure_wheel(work / "pure")
        unpacked = work / "unpacked"
        with zipfile.ZipFile(pure) as archive:
            archive.extractall(unpacked)
        stamp_dir = _build_seed(unpacked, cpu)
        files = sum(1 for path in stamp_dir.rglob("*") if path.is_file())
        dist_info = next(unpacked.glob("gpusim-*.dist-info"))
        target = _write_wheel(unpacked, dist_info, out_dir, wheel_tag())
    print(f"wrote {target} ({target.stat().st_size / 2**20:.1f} MiB; engine seed {stamp_dir.name} for {cpu}, "
          f"{files} files)")
    return target


def default_cpu() -> str:
    """x86-64-v3 on x86-64 (AVX2-class CPUs, 2013 on), else any CPU of the platform."""
    return "x86-64-v3" if platform.machine().lower() in ("x86_64", "amd64") else "generic"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="directory for the wheel (dist/)")
    parser.add_argument("--cpu", default=default_cpu(),
                        help=f"CPU the seed's code is built for (default here: {default_cpu()})")
    args = parser.parse_args(argv)
    build(args.out, args.cpu)


if __name__ == "__main__":
    main()
