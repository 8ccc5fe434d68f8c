"""PTX text from a Python-kernel compiler to a gpusim ``Kernel``, keeping the module's symbol addresses.

The compilers name their entry points with mangled names (numba) and read or write module-scope
``.global`` variables that the host side must find after a launch (numba's ``<kernel>__errcode__``);
``load_entry`` lowers the PTX the way ``GPU.load_ptx`` does, records where each module-scope
variable was placed, and names the kernel with a readable name (the Python function's) for reports.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util

from gpusim.api.gpu import GPU, Kernel, Module
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
    kernel = Kernel(gpu, module, generate(program, gpu.config, gpu.codegen), None)
    module.kernels[display_name] = kernel
    return LoadedKernel(kernel, ptx_name, dict(zip(names, placed, strict=True)))


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
