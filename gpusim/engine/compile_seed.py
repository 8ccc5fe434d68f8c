"""The seed: a platform wheel's engine, compiled ahead of time (``scripts/build_wheel.py``).

A platform wheel carries the engine compiled for a baseline CPU of the wheel's platform (``SEED_TARGETS``)
under ``gpusim/_engine_seed/<stamp>/``, laid out as a cache stamp directory plus ``seed.json`` (the CPU it
was built for and the instruction-set features that code needs). ``compile_cache.EngineCache`` loads a miss
in the user's cache from the seed when ``seed_status`` says it fits: built from this very source (its stamp),
by this numba, for this triple, and this CPU has every feature it needs. The user's cache is checked first,
so code compiled here for this CPU wins once it exists. ``GPUSIM_ENGINE_SEED=0`` ignores the seed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numba
from llvmlite import binding as ll

from gpusim.engine.source_stamp import PACKAGE_ROOT, source_stamp

SEED_DIRNAME = "_engine_seed"
"""The directory in the installed package that holds a platform wheel's precompiled engine (the seed)."""

SEED_MANIFEST = "seed.json"
"""The seed's description, in its stamp directory: ``{"stamp", "numba", "triple", "cpu", "features",
"requires"}``."""

SEED_TARGETS: dict[str, tuple[str, ...]] = {
    "x86-64-v3": ("avx", "avx2", "bmi", "bmi2", "cx16", "f16c", "fma", "lzcnt", "movbe", "popcnt", "sahf", "sse3",
                  "sse4.1", "sse4.2", "ssse3", "xsave"),
    "x86-64-v2": ("cx16", "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3"),
    "generic": (),
}
"""CPUs a seed may be built for (LLVM's names), each with the host features (LLVM's names) its code may use:
the x86-64 psABI's microarchitecture levels (x86-64-v2: CMPXCHG16B, LAHF/SAHF, POPCNT, SSE3, SSE4.1, SSE4.2,
SSSE3; x86-64-v3 adds AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT, MOVBE, XSAVE), and ``generic``, any CPU of the
triple."""


def seed_dir(package: Path = PACKAGE_ROOT) -> Path:
    """Where a platform wheel's seed for package ``package``'s source stamp would be."""
    return package / SEED_DIRNAME / source_stamp(package)


def seed_status() -> tuple[tuple[str, str, str] | None, str]:
    """Whether this process can use a seed: (the codegen tuple its index is keyed by, or None; why, in words)."""
    if os.environ.get("GPUSIM_ENGINE_SEED", "1") == "0":
        return None, "ignored (GPUSIM_ENGINE_SEED=0)"
    try:
        manifest = json.loads((seed_dir() / SEED_MANIFEST).read_text(encoding="utf-8"))
        magic = (str(manifest["triple"]), str(manifest["cpu"]), str(manifest["features"]))
        requires = {str(name) for name in manifest["requires"]}
    except (OSError, ValueError, KeyError, TypeError):
        if others := sorted(p.name for p in (PACKAGE_ROOT / SEED_DIRNAME).glob("*") if p.is_dir()):
            return None, f"none for this source (the package holds seeds of other sources: {', '.join(others)})"
        return None, "none (a pure install; python scripts/build_wheel.py builds a wheel with one)"
    host = {name[1:] for name in ll.get_host_cpu_features().flatten().split(",") if name.startswith("+")}
    if manifest.get("stamp") != source_stamp():
        return None, f"not used: its manifest names source stamp {manifest.get('stamp')}, not {source_stamp()}"
    if manifest.get("numba") != numba.__version__:
        return None, f"not used: built by numba {manifest.get('numba')}, this is numba {numba.__version__}"
    if magic[0] != ll.get_process_triple():
        return None, f"not used: built for {magic[0]}, this process is {ll.get_process_triple()}"
    if missing := sorted(requires - host):
        return None, f"not used: its {magic[1]} code needs CPU features this CPU lacks ({', '.join(missing)})"
    return magic, f"{magic[1]} code in {seed_dir()}: used for what the cache lacks"


def write_seed_manifest(stamp_directory: Path, cpu: str) -> Path:
    """Describe a stamp directory compiled for ``cpu`` (one of ``SEED_TARGETS``, compiled with numba's
    ``NUMBA_CPU_NAME=cpu`` and ``NUMBA_CPU_FEATURES=`` empty) as a seed; returns the manifest's path."""
    if cpu not in SEED_TARGETS:
        raise ValueError(f"no seed target {cpu!r}: one of {', '.join(SEED_TARGETS)}")
    manifest = {"stamp": stamp_directory.name, "numba": numba.__version__, "triple": ll.get_process_triple(),
                "cpu": cpu, "features": "", "requires": list(SEED_TARGETS[cpu])}
    path = stamp_directory / SEED_MANIFEST
    path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return path
