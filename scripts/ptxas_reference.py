"""Regenerates the reference register counts of ``ptxas -v`` that tests/test_regalloc.py compares
gpusim's register allocation with (development time only: the tests never need ptxas).

1. compiles the numba.cuda examples (examples/gpu_puzzles.py, through ``@gpusim.jit``, for sm_90) and the
   Triton examples (examples/triton_kernels.py, for sm_80: Triton's fp16 ``tl.dot`` on sm_90 is wgmma,
   which gpusim does not run) and writes their PTX to tests/data/frontend_ptx/NAME.ptx;
2. runs ``ptxas -arch=ARCH -v`` on those and on every tests/corpus/*.ptx and tests/corpus_llm/*.ptx (ARCH: the
   file's ``.target``; the PTX's own '// gpusim: regs=' lines are ignored: ptxas reads them as comments), writes
   tests/data/ptxas_regs.json: {path: {"arch": ARCH, "kernels": {name: registers}}}.

Usage: python scripts/ptxas_reference.py [--ptxas-only]   (needs ptxas, numba-cuda and triton; --ptxas-only
keeps the committed frontend PTX and only reruns ptxas)
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpusim.api.gpu import ptxas_registers  # noqa: E402  (path set up above so the script runs from a checkout)

OUT_PTX = ROOT / "tests" / "data" / "frontend_ptx"
REFERENCE = ROOT / "tests" / "data" / "ptxas_regs.json"


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def frontend_ptx() -> dict[str, str]:
    """{file name: arch} of the PTX written for the numba.cuda and Triton examples."""
    import numpy as np

    from gpusim.frontends import numba_cuda, triton

    written = {}
    puzzles = _example("gpu_puzzles")
    for puzzle in puzzles.PUZZLES:
        puzzles.solve(puzzle)
    for (pyfunc, _, cc, _), (ptx, _) in numba_cuda._COMPILED.items():
        name = f"numba_{pyfunc.__name__}.ptx"
        (OUT_PTX / name).write_text(ptx)
        written[name] = f"sm_{cc[0]}{cc[1]}"
    examples = _example("triton_kernels")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 200)).astype(np.float32)
    examples.vector_add(x.ravel(), x.ravel(), gpu="a100")
    examples.softmax(x, gpu="a100")
    examples.layer_norm(x, np.ones(200, np.float32), np.zeros(200, np.float32), gpu="a100")
    a = rng.standard_normal((64, 64)).astype(np.float32)
    examples.matmul(a, a, gpu="a100")
    examples.matmul(a.astype(np.float16), a.astype(np.float16), gpu="a100", precision="ieee",
                    block=(64, 64, 32))
    for key, (ptx, _) in triton._COMPILED.items():
        fn, signature, cc = key[0], dict(key[1]), key[4]
        kinds = "_".join(v.lstrip("*") for v in signature.values() if v != "constexpr")
        name = f"triton_{fn.__name__}_{kinds}.ptx"
        (OUT_PTX / name).write_text(ptx)
        written[name] = f"sm_{cc[0]}{cc[1]}"
    return written


PTXAS_VERSION = "9.0"
"""The newest PTX ISA version the CUDA 13.0 ptxas here reads; numba-cuda's NVVM (13.5) writes ``.version 9.5``
for code that uses nothing newer, so its PTX is given to ptxas with this version (the committed file keeps
numba's text)."""


def ptxas_counts(path: Path, arch: str) -> dict[str, int]:
    text = re.sub(r"^\.version\s+9\.[1-9]\b", f".version {PTXAS_VERSION}", path.read_text(), flags=re.MULTILINE)
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as copy:
        copy.write(text)
        copy.flush()
        out = subprocess.run(["ptxas", "-v", f"-arch={arch}", copy.name, "-o", "/dev/null"], capture_output=True,
                             text=True, check=True)
    return ptxas_registers(out.stderr)


def main() -> None:
    if shutil.which("ptxas") is None:
        sys.exit("ptxas_reference.py: ptxas is not on PATH")
    OUT_PTX.mkdir(parents=True, exist_ok=True)
    if "--ptxas-only" not in sys.argv:
        for old in OUT_PTX.glob("*.ptx"):
            old.unlink()
        frontend_ptx()
    files = {}
    for folder in ("tests/data/frontend_ptx", "tests/corpus", "tests/corpus_llm"):
        for path in sorted((ROOT / folder).glob("*.ptx")):
            target = re.search(r"^\.target\s+(sm_\d+)", path.read_text(), re.MULTILINE).group(1)
            files[f"{folder}/{path.name}"] = target
    reference = {rel: {"arch": arch, "kernels": ptxas_counts(ROOT / rel, arch)} for rel, arch in sorted(files.items())}
    REFERENCE.write_text(json.dumps(reference, indent=1, sort_keys=True) + "\n")
    print(f"{REFERENCE.relative_to(ROOT)}: {sum(len(v['kernels']) for v in reference.values())} kernels, "
          f"{len(reference)} files")


if __name__ == "__main__":
    main()
