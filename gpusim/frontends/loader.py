"""PTX text from a Python-kernel compiler to a gpusim ``Kernel``, keeping the module's symbol addresses.

The compilers name their entry points with mangled names (numba) and read or write module-scope
``.global`` variables that the host side must find after a launch (numba's ``<kernel>__errcode__``);
``load_entry`` lowers the PTX the way ``GPU.load_ptx`` does, records where each module-scope
variable was placed, and names the kernel with a readable name (the Python function's) for reports.
Registers per thread come from ``ptxas -v`` when ptxas is on PATH and reads the PTX (as ``GPU.load``
does), else from gpusim's register allocation (``gpusim.codegen.regalloc``).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from gpusim.api.gpu import GPU, Kernel, Module, _ptxas_registers, _run_ptxas
from gpusim.codegen import generate
from gpusim.errors import GpusimError, KernelCompileError, UnsupportedPTXError
from gpusim.ptx.lower import lower_module
from gpusim.ptx.parser import parse_ptx


@dataclasses.dataclass
class LoadedKernel:
    """A kernel loaded from compiler output: the gpusim Kernel, its mangled PTX name, symbol addresses."""

    kernel: Kernel
    ptx_name: str
    symbols: dict            # module-scope .global/.const variable name -> device address


def load_entry(gpu: GPU, ptx: str, label: str, display_name: str) -> LoadedKernel:
    """Lower ``ptx`` (one ``.entry``) on ``gpu``; the kernel is called ``display_name`` in reports."""
    module_ast = parse_ptx(ptx, label)
    placed: list[int] = []

    def allocate(nbytes: int, align: int, image: bytes, what: str = "") -> int:
        address = gpu._allocate_global(nbytes, align, image, what)
        placed.append(address)
        return address

    gpu._load_allocations = []            # atomic, as GPU.load: a failed lowering allocates nothing
    top_before = gpu.heap.top
    try:
        programs = lower_module(module_ast, allocate)
    except BaseException:
        gpu.heap.release_all(gpu._load_allocations, top_before)
        raise
    finally:
        gpu._load_allocations = []
    names = [var.name for var in module_ast.globals if var.space in ("global", "const")]
    if len(programs) != 1:
        raise GpusimError(f"{label}: expected one kernel in the compiled PTX, found {len(programs)}")
    ptx_name, program = next(iter(programs.items()))
    if isinstance(program, UnsupportedPTXError):   # lowering hands back a refused kernel's error
        raise program
    program = dataclasses.replace(program, name=display_name)
    module = Module(label, {})
    regs, note = _ptxas_count(gpu, ptx, ptx_name, module_ast.target)
    generated = generate(program, gpu.config, gpu.codegen, spill=regs is None)
    kernel = Kernel(gpu, module, generated, regs, note)
    module.kernels[display_name] = kernel
    return LoadedKernel(kernel, ptx_name, dict(zip(names, placed, strict=True)))


def _ptxas_count(gpu: GPU, ptx: str, name: str, target: str | None) -> tuple[int | None, str]:
    """``ptxas -v``'s registers for the compiled kernel when ptxas is on PATH (as ``GPU.load`` does for a
    file; GPUSIM_NO_PTXAS=1 turns it off), else (None, ...): gpusim's own allocation counts them. A
    compiler newer than the installed ptxas writes a newer ``.version`` than it reads (numba-cuda's NVVM
    13.5: 9.5, Triton 3.9 for sm_90: 9.4); the count then comes from the PTX with the version ptxas names
    as its own, and the source says so."""
    ptxas = shutil.which("ptxas")
    if ptxas is None or os.environ.get("GPUSIM_NO_PTXAS"):
        return None, "ptxas -v"
    arch = f"sm_{gpu.config.cc_major}{gpu.config.cc_minor}"
    with tempfile.TemporaryDirectory(prefix="gpusim-ptxas-") as folder:
        path = Path(folder) / "kernel.ptx"
        path.write_text(ptx)
        note = "ptxas -v"
        try:
            check = subprocess.run([ptxas, f"-arch={target or arch}", str(path), "-o", os.devnull],
                                   capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError):
            return None, note
        newer = re.search(r"Unsupported \.version (\S+); current version is '([\d.]+)'", check.stderr)
        if newer:
            path.write_text(re.sub(r"^\.version\s+\S+", f".version {newer.group(2)}", ptx, count=1,
                                   flags=re.MULTILINE))
            note = f"ptxas -v (the PTX's .version {newer.group(1)} read as {newer.group(2)}, this ptxas's)"
        if target == arch + "a":      # Triton's Hopper PTX targets sm_90a, which ptxas builds only as sm_90a
            found, _ = _run_ptxas(ptxas, path, target)
            note += f" at the PTX's .target {target}"
        else:
            found, where = _ptxas_registers(path, gpu.config.cc_major, gpu.config.cc_minor, target)
            note = note if where == "ptxas -v" else where
    return found.get(name), note


def require(module: str, extra: str, what: str, distribution: str | None = None):
    """Import an optional compiler, or end in one clear error naming the extra that installs it.

    ``distribution`` is the top-level package that must exist (``numba_cuda``: numba itself still ships
    an old, different ``numba.cuda``, which must not be taken for numba-cuda's)."""
    try:
        if distribution is not None and importlib.util.find_spec(distribution) is None:
            raise ImportError(f"no module named '{distribution}'")
        return importlib.import_module(module)
    except ImportError as error:
        raise KernelCompileError(f"{what} needs the '{extra}' package, which is not installed: "
                                 f"pip install 'gpusim[{extra}]' ({error})") from None


def resolve_gpu(gpu) -> GPU:
    """``None`` -> a default GPU("h100-sxm"); a config name or path -> GPU(name); a GPU as is."""
    if gpu is None:
        return GPU("h100-sxm")
    if isinstance(gpu, GPU):
        return gpu
    return GPU(gpu)
