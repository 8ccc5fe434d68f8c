"""``@gpusim.jit``: numba.cuda kernels compiled by numba-cuda to PTX and run, timed, on a gpusim GPU.

What it models: the kernel is compiled by numba-cuda's own pipeline (typing, lowering, NVVM) for the
GPU config's compute capability, with line info on, exactly as ``numba.cuda.jit`` would compile it
for a real device, so the PTX gpusim runs is the PTX the GPU would get. One compile per (function,
argument types, compute capability, fastmath), cached in the process. A launch is numba.cuda's:
``kernel[grid, block](*args)`` or ``kernel[grid, block, stream, shared_bytes](*args)``; host arrays are
copied in and back (numba_abi.py). It returns the launch's ``Run`` (numba's returns None) and keeps it
as ``kernel.last_run``.

Exceptions: numba-cuda records a ``raise`` in a kernel in ``<kernel>__errcode__`` only when built with
``debug=True`` (and no optimisation); here the store of the error code is always compiled in and
inlined, at full optimisation, so a ``raise`` (or an ``assert``) ends the launch in
:class:`gpusim.errors.KernelExceptionError` naming the Python exception, its file and line, and the
first thread that raised. A kernel that raises nowhere has the same code as without it.

Simplified: ``stream`` must be 0 or None (gpusim's streams are ``gpu.stream()``); numba's own device
arrays (``cuda.to_device``) need a driver, so pass numpy arrays or ``gpu.to_device`` DeviceArrays.
Eager signatures (``jit("void(float32[:])")``), device functions declared with ``gpusim.jit`` and
``cuda.jit`` options beyond ``fastmath`` are not taken; device functions written with
``numba.cuda.jit(device=True)`` are called as usual.
"""

from __future__ import annotations

import inspect

import numpy as np

from gpusim.errors import GpusimError, KernelCompileError, KernelExceptionError, LaunchError
from gpusim.frontends import numba_abi as abi
from gpusim.frontends.loader import load_entry, require, resolve_gpu

_COMPILED: dict = {}      # (pyfunc, argument types, cc, fastmath) -> (ptx, exceptions)


def _numba_cuda():
    """numba-cuda's modules (imported on first use only)."""
    require("numba.cuda", "numba-cuda", "gpusim.jit", distribution="numba_cuda")
    from numba.cuda import compiler, types
    from numba.cuda.core import sigutils
    from numba.cuda.typing.typeof import Purpose, typeof

    return compiler, types, sigutils, lambda value: typeof(value, Purpose.argument)


def compile_numba_ptx(pyfunc, argtypes: tuple, cc: tuple[int, int], fastmath: bool = False):
    """(PTX text, {error code: (exception class, args, (function, file, line))}) for ``pyfunc``."""
    key = (pyfunc, argtypes, cc, fastmath)
    if key in _COMPILED:
        return _COMPILED[key]
    compiler, types, sigutils, _ = _numba_cuda()
    args, return_type = sigutils.normalize_signature(tuple(argtypes))
    try:
        cres = compiler.compile_cuda(pyfunc, return_type, args, debug=False, lineinfo=True, fastmath=fastmath,
                                     nvvm_options={"fastmath": fastmath, "opt": 3}, cc=cc)
        if cres.signature.return_type not in (None, types.void):
            raise KernelCompileError(f"kernel '{pyfunc.__name__}' returns {cres.signature.return_type}: a "
                                     "CUDA kernel returns nothing (write results into an array)")
        library = cres.library
        entry = library.get_function(cres.fndesc.llvm_func_name)
        library._entry_name = cres.fndesc.llvm_func_name
        compiler.kernel_fixup(entry, True)     # the exception store (numba's debug=True path) ...
        helper = entry.module.get_global(entry.name + "__exc_helper__")
        helper.attributes.add("alwaysinline")  # ... inlined, so the PTX has no .func call
        helper.linkage = "internal"
        ptx = library.get_asm_strs(cc=cc)
    except GpusimError:
        raise
    except Exception as error:  # numba's TypingError, LoweringError, NVVM errors: the user's kernel
        signature = ", ".join(str(t) for t in argtypes)
        raise KernelCompileError(f"numba-cuda could not compile kernel '{pyfunc.__name__}' for ({signature}):"
                                 f"\n{error}") from None
    if len(ptx) != 1:
        raise KernelCompileError(f"kernel '{pyfunc.__name__}' compiled to {len(ptx)} PTX modules; gpusim "
                                 "runs one (kernels that link external code are not supported)")
    result = (ptx[0], dict(cres.call_helper.exceptions))
    _COMPILED[key] = result
    return result


class NumbaKernel:
    """A numba.cuda-syntax kernel on a gpusim GPU: ``kernel[grid, block](*args)`` runs it, timed."""

    def __init__(self, pyfunc, gpu=None, fastmath: bool = False):
        if not inspect.isfunction(pyfunc):
            raise KernelCompileError(f"gpusim.jit decorates a Python function, got {type(pyfunc).__name__}")
        self.py_func = pyfunc
        self.__name__ = pyfunc.__name__
        self.__doc__ = pyfunc.__doc__
        self._gpu = gpu
        self.fastmath = bool(fastmath)
        self._loaded: dict = {}
        self.last_run = None

    @property
    def gpu(self):
        """The GPU this kernel runs on (GPU("h100-sxm") unless ``gpusim.jit(gpu=...)`` named another)."""
        if not hasattr(self._gpu, "config"):
            self._gpu = resolve_gpu(self._gpu)
        return self._gpu

    @property
    def cc(self) -> tuple[int, int]:
        return (self.gpu.config.cc_major, self.gpu.config.cc_minor)

    def argument_types(self, args) -> tuple:
        _, types, _, typeof = _numba_cuda()
        found = []
        for index, value in enumerate(args):
            try:
                found.append(abi.numba_type_of(value, types, typeof))
            except (ValueError, TypeError) as error:
                raise LaunchError(f"argument {index} of kernel '{self.__name__}': numba cannot type a "
                                  f"{type(value).__name__} ({error})") from None
            except GpusimError:
                raise
            except Exception as error:   # numba's NumbaValueError and friends
                raise LaunchError(f"argument {index} of kernel '{self.__name__}': numba cannot type a "
                                  f"{type(value).__name__} ({error})") from None
        return tuple(found)

    def ptx(self, *args) -> str:
        """The PTX numba-cuda emits for these arguments (the text gpusim runs)."""
        return compile_numba_ptx(self.py_func, self.argument_types(args), self.cc, self.fastmath)[0]

    def _load(self, argtypes: tuple):
        if argtypes not in self._loaded:
            ptx, exceptions = compile_numba_ptx(self.py_func, argtypes, self.cc, self.fastmath)
            label = f"{inspect.getsourcefile(self.py_func) or '<python>'}:{self.__name__} (numba-cuda PTX)"
            self._loaded[argtypes] = (load_entry(self.gpu, ptx, label, self.__name__), exceptions)
        return self._loaded[argtypes]

    def __getitem__(self, launch_config):
        if not isinstance(launch_config, tuple) or not 2 <= len(launch_config) <= 4:
            raise LaunchError("launch a numba.cuda kernel as kernel[grid, block](*args) or "
                              "kernel[grid, block, stream, shared_bytes](*args)")
        grid, block = launch_config[0], launch_config[1]
        stream = launch_config[2] if len(launch_config) > 2 else 0
        shared_bytes = launch_config[3] if len(launch_config) > 3 else 0
        if stream not in (0, None):
            raise LaunchError("gpusim.jit kernels launch on the default stream: pass 0 (or None) as the "
                              "stream; for gpusim's modelled streams load the PTX (kernel.ptx(...)) with "
                              "gpu.load_ptx and use gpu.stream()")

        def launcher(*args, **options):
            return self.launch(grid, block, args, int(shared_bytes), **options)

        return launcher

    def __call__(self, *args, **kwargs):
        raise LaunchError(f"kernel '{self.__name__}' needs a launch configuration: "
                          f"{self.__name__}[blocks, threads_per_block](...)")

    def launch(self, grid, block, args, shared_bytes: int = 0, **options):
        """Run the kernel over ``grid`` x ``block`` threads; returns the Run (options as ``GPU.launch``)."""
        argtypes = self.argument_types(args)
        loaded, exceptions = self._load(argtypes)
        _, types, _, _ = _numba_cuda()
        gpu, program = self.gpu, loaded.kernel.program
        placed: list = []
        try:
            flat = []
            for index, (ty, value) in enumerate(zip(argtypes, args, strict=True)):
                where = f"argument {index} of kernel '{self.__name__}'"
                flat += abi.flatten(ty, value, types, gpu, placed, where)
            values = abi.param_values(program, flat)
            errcode = self._symbol(loaded, "errcode")
            if errcode is not None:
                gpu.heap.view(errcode, 4)[:] = 0
            run = gpu.launch(loaded.kernel, grid, block, values, shared_bytes=shared_bytes, **options)
            abi.copy_back(gpu, placed)
            placed = []
        finally:
            for item in placed:
                gpu.heap.free(item.address)
        self.last_run = run
        if errcode is not None:
            self._raise_recorded(loaded, exceptions, errcode)
        return run

    @staticmethod
    def _symbol(loaded, name: str):
        return loaded.symbols.get(f"{loaded.ptx_name}__{name}__")

    def _read_u32(self, address: int) -> int:
        return int(self.gpu.heap.view(address, 4).view(np.uint32)[0])

    def _raise_recorded(self, loaded, exceptions: dict, errcode: int) -> None:
        code = self._read_u32(errcode)
        if code == 0:
            return
        def dims(kind):
            return tuple(self._read_u32(self._symbol(loaded, f"{kind}{axis}")) for axis in "xyz")
        block, thread = dims("ctaid"), dims("tid")
        exc_class, exc_args, location = exceptions.get(code, (Exception, (f"numba error code {code}",), None))
        exc_args = exc_args or ()
        shown = f"{exc_class.__name__}({', '.join(repr(a) for a in exc_args)})"
        file, line = (location[1], int(location[2])) if location else ("", 0)
        where = f" at {file}:{line}" if location else ""
        raise KernelExceptionError(f"kernel '{self.__name__}' raised {shown}{where}, first in block {block} "
                                   f"thread {thread}", kernel=self.__name__, exception=exc_class,
                                   args=tuple(exc_args), file=file, line=line, block=block, thread=thread)

    def __repr__(self) -> str:
        return f"gpusim.jit({self.__name__}, gpu={self._gpu!r})"


def jit(func=None, *, gpu=None, fastmath: bool = False, **numba_options):
    """``@gpusim.jit`` or ``@gpusim.jit(gpu="h100-sxm")``: a numba.cuda kernel that runs on gpusim."""
    if numba_options:
        raise KernelCompileError(f"gpusim.jit takes gpu= and fastmath=; not {', '.join(sorted(numba_options))}")
    if func is not None and not callable(func):
        raise KernelCompileError("gpusim.jit takes no eager signature: decorate the function and launch it; "
                                 "the argument types come from the arguments")
    if func is None:
        return lambda f: NumbaKernel(_python_function(f), gpu=gpu, fastmath=fastmath)
    return NumbaKernel(_python_function(func), gpu=gpu, fastmath=fastmath)


def _python_function(func):
    """The Python function of ``func``, or of a ``numba.cuda.jit`` kernel (``py_func``; the simulator's ``fn``)."""
    if inspect.isfunction(func):
        return func
    for attribute in ("py_func", "fn"):
        inner = getattr(func, attribute, None)
        if inspect.isfunction(inner):
            return inner
    return func
