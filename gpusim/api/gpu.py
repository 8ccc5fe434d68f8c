"""GPU, Module and Kernel: the public face of the simulator.

``GPU(config)`` owns a config, device memory and (lazily) the system model of
streams and graphs. ``gpu.load(path)`` parses and lowers a PTX file (a ``.cu``
is first compiled with nvcc when nvcc is on PATH). ``gpu.launch`` checks the
launch like the CUDA runtime, builds the engine state, runs the kernel
(timed by default, functional-only with ``timing=False``) and returns a
:class:`gpusim.launch.run.Run`.

Caches: L2 persists across launches on one GPU (as on hardware) unless a launch asks
``cache_control="all"``, which flushes L1 and L2 first as ``ncu --cache-control all``
does (``gpu.flush_caches()`` does it by hand). Clocks are always the config's
``core_clock_mhz``, like ``ncu --clock-control base``: there is no boost or throttling.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from gpusim.arch.config import GPUConfig, load_config, validated
from gpusim.arch.reconvergence import check_reconvergence
from gpusim.codegen import DEFAULT_CODEGEN, check_mode, generate
from gpusim.errors import (
    ConfigError,
    GpusimError,
    IllegalAddressError,
    KernelAssertionError,
    KernelAttributeError,
    KernelNotFoundError,
    LaunchError,
    PTXSyntaxError,
    SymbolNotFoundError,
    UnsupportedPTXError,
)
from gpusim.launch.checks import check_launch_options
from gpusim.launch.device_memory import DeviceArray, DeviceHeap, check_usable, symbol_array
from gpusim.launch.faults import internal_error, with_allocation
from gpusim.launch.printf import PRINTF_MODES
from gpusim.launch.sanitize import check_action, parse_sanitize, print_assertion
from gpusim.launch.what_if import record_launch, snapshot_inputs
from gpusim.ptx.lower import Program, lower_module
from gpusim.ptx.parser import parse_ptx

if TYPE_CHECKING:
    from gpusim.host.system import Graph, Stream, System
    from gpusim.host.timeline import Timeline
    from gpusim.launch.progress import Progress
    from gpusim.launch.run import Run
    from gpusim.launch.tensor_map import TensorMap
    from gpusim.launch.textures import TextureObject
    from gpusim.ptx import ast as ptx_ast

Dims = int | tuple[int, ...]
"""A grid or block shape: an int or a 1-3 tuple (CUDA's dim3; the launch checks the length)."""

CACHE_CONTROLS = ("all", "none")
"""``cache_control`` values of ``GPU.launch``, as ``ncu --cache-control``."""


class Kernel:
    """A kernel of a loaded module. ``kernel[grid, block](*args)`` launches it, numba-CUDA style."""

    def __init__(self, gpu: GPU, module: Module, program: Program, ptxas_regs: int | None,
                 ptxas_source: str = "ptxas -v"):
        self.gpu = gpu
        self.module = module
        self.program = program
        self.name = program.name
        self.ptxas_regs = ptxas_regs
        self.ptxas_source = ptxas_source
        self._heap = gpu.heap       # the device memory its module variables live in (gpu.reset() replaces it)

    def registers_per_thread(self, regs: int | None = None) -> tuple[int, str]:
        """Registers per thread and where the figure comes from."""
        if regs is not None:
            if isinstance(regs, bool) or not isinstance(regs, int | np.integer) or regs < 1:
                raise LaunchError(f"regs= must be a positive int (registers per thread), got {regs!r}")
            return int(regs), "launch argument regs="
        arch = f"sm_{self.gpu.config.cc_major}{self.gpu.config.cc_minor}"
        if arch in self.program.gpusim_regs_arch:
            return int(self.program.gpusim_regs_arch[arch]), f"'// gpusim: regs=' line in the PTX, its {arch}= count"
        if self.program.gpusim_regs is not None:
            if self.program.gpusim_regs_arch:
                return int(self.program.gpusim_regs), (f"'// gpusim: regs=' line in the PTX, its plain regs= "
                                                       f"(the line has no {arch}= count)")
            return int(self.program.gpusim_regs), "'// gpusim: regs=' line in the PTX"
        if self.ptxas_regs is not None:
            return self.ptxas_regs, self.ptxas_source
        return self.program.regs_estimate, ("estimate: linear-scan allocation of the generated code under the "
                                            "launch bounds (gpusim.codegen.regalloc)")

    def __getitem__(self, launch_config: tuple[Any, ...]) -> Callable[..., Run]:
        if not isinstance(launch_config, tuple) or len(launch_config) not in (2, 3):
            raise LaunchError("use kernel[grid, block](*args) or kernel[grid, block, shared_bytes](*args)")
        grid, block = launch_config[0], launch_config[1]
        shared_bytes = launch_config[2] if len(launch_config) == 3 else 0

        def launcher(*args: Any, **kwargs: Any) -> Run:
            return self.gpu.launch(self, grid=grid, block=block, args=list(args), shared_bytes=shared_bytes,
                                   **kwargs)

        return launcher

    def __repr__(self) -> str:
        return f"Kernel({self.name!r}, {len(self.program.params)} params, {self.program.n_inst} instructions)"


class Module:
    """A loaded PTX module: ``mod["name"]`` or ``mod.name`` is a Kernel.

    An unknown name raises KernelNotFoundError (also a KeyError; the attribute form also an
    AttributeError) naming the file, its kernels and the closest one."""

    def __init__(self, path: str, kernels: dict[str, Kernel], unsupported: dict | None = None,
                 symbols: dict | None = None, heap: DeviceHeap | None = None) -> None:
        self.path = path
        self.kernels = kernels
        self._symbols = dict(symbols or {})     # name -> (VarDecl, device address) of .global/.const variables
        self._heap = heap
        self.unsupported = dict(unsupported or {})
        """Kernels that use a construct gpusim does not model: name -> their UnsupportedPTXError, raised
        when one is looked up (the module's other kernels load and run)."""

    def __getitem__(self, name: str) -> Kernel:
        if name in self.unsupported:
            raise self.unsupported[name].with_traceback(None)
        if name not in self.kernels:
            raise KernelNotFoundError(str(name), self.path, list(self.kernels))
        return self.kernels[name]

    def symbol(self, name: str, dtype: npt.DTypeLike | None = None) -> DeviceArray:
        """A DeviceArray over the module's ``__constant__`` / ``__device__`` (``.const`` / ``.global``) variable
        ``name``, as cudaGetSymbolAddress gives its address: ``.get()`` reads it (cudaMemcpyFromSymbol),
        ``.set(array)`` writes it (cudaMemcpyToSymbol; the next launch sees it), ``.ptr`` is the device
        pointer to pass as a kernel argument. Its contents start as the PTX initializer (zeros without one).
        nvcc declares arrays and structs as bytes (``.b8 table[32]``): ``dtype=np.int32`` views the variable as
        that type (its size must be a multiple of the item size). An unknown name raises SymbolNotFoundError
        (also a KeyError) with the closest name."""
        if name not in self._symbols:
            raise SymbolNotFoundError(str(name), self.path, list(self._symbols))
        var, address = self._symbols[name]
        assert self._heap is not None     # a module with variables was loaded onto a GPU's heap
        return symbol_array(self._heap, address, var, dtype)

    @property
    def symbols(self) -> list[str]:
        """Names of the module's ``.global`` / ``.const`` variables (what ``symbol()`` takes)."""
        return list(self._symbols)

    def __getattr__(self, name: str) -> Kernel:
        kernels = self.__dict__.get("kernels")
        if kernels is None or name.startswith("__"):  # during unpickling/copy, and dunder probes
            raise AttributeError(name)
        if name in kernels:
            return kernels[name]
        if name in self.__dict__.get("unsupported", {}):
            raise self.unsupported[name].with_traceback(None)
        raise KernelAttributeError(name, self.__dict__.get("path", "<module>"), list(kernels))

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self.__dict__.get("kernels", {})]

    def __iter__(self) -> Iterator[Kernel]:
        return iter(self.kernels.values())

    def __repr__(self) -> str:
        refused = f", unsupported={list(self.unsupported)}" if self.unsupported else ""
        return f"Module({self.path!r}, kernels={list(self.kernels)}{refused})"


def _ptxas_registers(path: Path, cc_major: int, cc_minor: int, target: str | None = None) -> tuple[dict, str]:
    """Registers per kernel from ``ptxas -v`` when ptxas is on PATH (GPUSIM_NO_PTXAS=1 turns it off), and
    where they come from. When this ptxas refuses the config's architecture (CUDA 13 dropped sm_70), it
    runs at the PTX's own ``.target`` instead, and the source says so."""
    ptxas = shutil.which("ptxas")
    if ptxas is None or os.environ.get("GPUSIM_NO_PTXAS"):
        return {}, "ptxas -v"
    arch = f"sm_{cc_major}{cc_minor}"
    found, refused = _run_ptxas(ptxas, path, arch)
    if refused and target and target != arch:
        found, _ = _run_ptxas(ptxas, path, target)
        return found, (f"ptxas -v at the PTX's .target {target} (this ptxas does not support the config's "
                       f"{arch})")
    return found, "ptxas -v"


def _run_ptxas(ptxas: str, path: Path, arch: str) -> tuple[dict[str, int], bool]:
    """(registers per kernel, whether ptxas refused the architecture)."""
    try:
        out = subprocess.run([ptxas, "-v", f"-arch={arch}", str(path), "-o", os.devnull],
                             capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return {}, False
    refused = out.returncode != 0 and "gpu-name" in out.stderr
    return ptxas_registers(out.stderr), refused


def ptxas_registers(report: str) -> dict[str, int]:
    """Registers per kernel from ``ptxas -v``'s report (its "Compiling entry function" and "Used N registers"
    lines)."""
    found: dict[str, int] = {}
    current = None
    for line in report.splitlines():
        match = re.search(r"Compiling entry function '([^']+)'", line)
        if match:
            current = match.group(1)
        match = re.search(r"Used (\d+) registers", line)
        if match and current:
            found[current] = int(match.group(1))
            current = None
    return found


def compile_cu(path: Path) -> Path:
    """Compile a .cu to PTX with nvcc (only when nvcc exists); returns the .ptx path."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise PTXSyntaxError(f"{path.name} is CUDA source and nvcc is not installed: compile it with "
                             f"`nvcc -ptx -O3 {path.name}` elsewhere and load the .ptx", str(path), 0, 0)
    out_dir = Path(tempfile.mkdtemp(prefix="gpusim-nvcc-"))
    ptx = out_dir / (path.stem + ".ptx")
    result = subprocess.run([nvcc, "-ptx", "-O3", "-lineinfo", "-arch=sm_80", str(path), "-o", str(ptx)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise PTXSyntaxError(f"nvcc failed:\n{result.stderr.strip()}", str(path), 0, 0)
    return ptx


def _decode_ptx(raw: bytes, name: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        # the line and column (1-based, in characters, as the parser counts them) of the first bad byte
        line_start = raw.rfind(b"\n", 0, error.start) + 1
        line_end = raw.find(b"\n", error.start)
        line = raw.count(b"\n", 0, error.start) + 1
        column = len(raw[line_start:error.start].decode("utf-8", errors="replace")) + 1
        text = raw[line_start:line_end if line_end >= 0 else len(raw)].decode("utf-8", errors="replace")
        raise PTXSyntaxError(f"not UTF-8 text: byte 0x{raw[error.start]:02x} ({error.reason}) at byte offset "
                             f"{error.start}", name, line, column, text) from None


class GPU:
    """A simulated GPU: a config, device memory, and launches."""

    keep_launch_inputs: bool | str = True
    """Keep a copy of the device memory and L2 each timed launch started from, for ``run.what_if()``: True
    keeps the latest launch's when they take at most 64 MiB (``what_if.SNAPSHOT_BUDGET_BYTES``), "latest"
    the latest launch's whatever their size, "all" every launch's (each run holds its own), False none."""

    def __init__(self, config: str | Path | GPUConfig = "h100-sxm", *, initcheck: bool = False,
                 synccheck: bool | None = None, printf: str = "print", reconvergence: str | None = None,
                 codegen: str = DEFAULT_CODEGEN, sanitize: str | Iterable[str] | None = None,
                 sanitize_action: str = "raise", sampling: Any = "off", threads: int | None = None,
                 **overrides: Any) -> None:
        from gpusim.launch.functional_threads import resolve_threads
        from gpusim.launch.sampling_policy import parse_sampling

        self.threads = resolve_threads(threads)
        """Threads the simulator may use (None: ``$GPUSIM_THREADS``, else every core): the functional engine runs
        independent blocks on them (gpusim.launch.functional_threads), with one thread's results."""
        self.sampling = parse_sampling(sampling)
        """Sampled simulation (gpusim.launch.sampling): None ("off", exact) or the SamplingPolicy of "auto"."""
        check_mode(codegen)
        self.codegen = codegen
        """Code generation: "ptxas" (times the stream ptxas would make, gpusim.codegen) or "none" (PTX as
        written)."""
        if not isinstance(initcheck, bool):
            raise ConfigError(f"initcheck must be True or False, got {initcheck!r}", field="initcheck")
        if synccheck is not None and not isinstance(synccheck, bool):
            raise ConfigError(f"synccheck must be True, False or None (as the hardware), got {synccheck!r}",
                              field="synccheck")
        self.sanitize = parse_sanitize(sanitize)
        """The sanitizers on (memcheck, racecheck, synccheck, initcheck; docs/sanitizers.md)."""
        self.sanitize_action = check_action(sanitize_action)
        """'raise': a sanitizer's findings raise its error at the end of the run; 'report': only reported."""
        initcheck = initcheck or "initcheck" in self.sanitize
        if isinstance(config, GPUConfig):
            config = validated(config)       # a GPUConfig built by hand gets the loader's checks
            self.config = config.replace(**overrides) if overrides else config
        elif isinstance(config, str | Path):
            self.config = load_config(config, **overrides)
        else:
            raise ConfigError(f"a config is a name, a path or a GPUConfig, got {type(config).__name__}")
        if printf not in PRINTF_MODES:
            raise ConfigError(f"printf must be one of {', '.join(map(repr, PRINTF_MODES))} (print device printf "
                              f"output at the end of each launch, or only keep it in run.stdout), got {printf!r}",
                              field="printf")
        self.printf = printf
        """'print': device printf output goes to Python's stdout after each launch (and to run.stdout);
        'capture': only to run.stdout."""
        self.initcheck = initcheck
        self.synccheck = synccheck
        """None: as the hardware (exited threads count as arrived on cc >= 7.0, with a warning); True: a
        synccheck error; False: nothing checked."""
        self.reconvergence = check_reconvergence(reconvergence, self.config)   # "ipdom" or "its"
        self._load_allocations: list[int] = []
        self.heap = DeviceHeap(self.config.dram_bytes, initcheck=initcheck)
        self._l2_state = None
        self._system: System | None = None
        self.launch_count = 0
        self.flushed_bytes = 0
        """Dirty L2 bytes written back to DRAM by flushes (outside every kernel's counters)."""

    def reset(self) -> None:
        """cudaDeviceReset: clear a sticky error (a failed device assert), free every allocation and module
        variable (load modules again) and empty the L2."""
        self.heap = DeviceHeap(self.config.dram_bytes, initcheck=self.initcheck)
        self._load_allocations = []
        self._l2_state = None

    def _check_usable(self) -> None:
        check_usable(self.heap)

    # ------------------------------------------------------------ memory
    def to_device(self, host: npt.ArrayLike) -> DeviceArray:
        self._check_usable()
        if not isinstance(host, np.ndarray | list | tuple | int | float | complex | np.generic) or \
                isinstance(host, bool | str | bytes):
            raise LaunchError(f"to_device takes a numpy array (or a list of numbers), got {type(host).__name__}")
        try:
            host = np.ascontiguousarray(host)
        except (TypeError, ValueError) as exc:
            raise LaunchError(f"to_device: not an array of numbers ({exc})") from None
        array = DeviceArray(self.heap, host.shape, host.dtype)
        array.set(host)
        return array

    def empty(self, shape: int | Sequence[int], dtype: npt.DTypeLike = np.float32) -> DeviceArray:
        """Device memory not written yet (zero-filled, but initcheck reports a kernel reading it)."""
        self._check_usable()
        return DeviceArray(self.heap, shape, dtype)

    def zeros(self, shape: int | Sequence[int], dtype: npt.DTypeLike = np.float32) -> DeviceArray:
        array = self.empty(shape, dtype)
        array.fill_zero()
        return array

    def texture(self, array: np.ndarray, filter: str = "point", address: str = "clamp", normalized: bool = False,
                border: float | Sequence[float] = 0.0, *, channels: int = 1,
                read_mode: str = "element") -> TextureObject:
        """A texture object over a copy of ``array`` (cudaCreateTextureObject): pass it as the kernel's
        ``cudaTextureObject_t`` argument. ``array`` is 1D (width), 2D (height, width) or 3D (depth, height,
        width) of float32, float16, (u)int8, (u)int16 or (u)int32, with a last axis of ``channels`` (2 or 4)
        for vector texels. ``filter`` "point" or "linear"; ``address`` "clamp", "border" (the ``border``
        colour: a number or up to 4), or, with ``normalized=True`` coordinates, "wrap" and "mirror";
        ``read_mode="normalized_float"`` reads 8/16-bit integers as floats in [0, 1] or [-1, 1]
        (cudaReadModeNormalizedFloat). ``tex.destroy()`` frees it. See docs/kernels.md, "Textures"."""
        from gpusim.launch.textures import make_texture

        return make_texture(self.heap, array, filter, address, normalized, border, channels=channels,
                            read_mode=read_mode)

    def tensor_map(self, array: DeviceArray, box: Sequence[int], swizzle: int | str | None = 0,
                   element_strides: Sequence[int] | None = None, oob_fill: str = "zero", dtype: Any = None,
                   interleave: str = "none", shape: Sequence[int] | None = None,
                   strides: Sequence[int] | None = None) -> TensorMap:
        """A TMA tensor map over ``array`` (cuTensorMapEncodeTiled): ``box`` and ``element_strides``
        innermost first (the numpy shape reversed), ``swizzle`` 0/32/64/128 bytes (or "none"/"32B"/"64B"/
        "128B"), ``oob_fill`` "zero" or "nan" (float types); ``shape``/``strides`` (numpy order, elements)
        map a strided view from the array's first element instead of the whole array. Pass it to a
        ``.param .b8 NAME[128]`` (``const __grid_constant__ CUtensorMap``) parameter. Rules:
        gpusim.launch.tensor_map."""
        from gpusim.launch.tensor_map import make_tensor_map

        self._check_usable()
        tmap = make_tensor_map(array, box, swizzle, element_strides, oob_fill, dtype, interleave, shape, strides)
        tmap.check_usable(self.heap, "tensor_map")
        return tmap

    def _allocate_global(self, nbytes: int, align: int, image: bytes, label: str = "") -> int:
        address = self.heap.allocate(nbytes, align, label=label)
        self.heap.view(address, len(image))[:] = np.frombuffer(image, dtype=np.uint8)
        self.heap.mark_written(address, nbytes)     # a module variable is initialized (zeros or its image)
        self._load_allocations.append(address)
        return address

    # ------------------------------------------------------------ modules
    def load(self, path: str | Path) -> Module:
        """Load a .ptx file (or a .cu, compiled with nvcc when nvcc is installed).

        The file's text goes through exactly what ``load_ptx`` does (no newline translation), so both give
        the same module, or the same error, for the same text. A failed load allocates nothing."""
        if not isinstance(path, str | Path):
            raise GpusimError(f"load takes a file path, got {type(path).__name__}")
        path = Path(path)
        if not path.is_file():
            raise GpusimError(f"{path}: no such file")
        if path.suffix == ".cu":
            path = compile_cu(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise GpusimError(f"{path}: cannot read it ({exc.strerror})") from None
        return self._load_text(_decode_ptx(raw, str(path)), str(path), path)

    def load_ptx(self, text: str, name: str = "<ptx>") -> Module:
        """Load PTX given as text (``bytes`` are decoded as UTF-8, as ``load`` does a file)."""
        if isinstance(text, bytes | bytearray):
            text = _decode_ptx(bytes(text), str(name))
        if not isinstance(text, str):
            raise PTXSyntaxError(f"load_ptx takes the PTX text as a str, got {type(text).__name__}", str(name))
        return self._load_text(text, str(name), None)

    def _load_text(self, text: str, name: str, path: Path | None) -> Module:
        """Parse and lower; atomic: on any error every variable the load allocated is released."""
        self._load_allocations = []
        top_before = self.heap.top
        try:
            module_ast = parse_ptx(text, name)
            return self._module_from_ast(module_ast, path)
        except BaseException:
            self.heap.release_all(self._load_allocations, top_before)
            raise
        finally:
            self._load_allocations = []

    def _module_from_ast(self, module_ast: ptx_ast.Module, path: Path | None) -> Module:
        symbols: dict = {}
        programs = lower_module(module_ast, self._allocate_global, symbols)
        unsupported = {name: p for name, p in programs.items() if isinstance(p, UnsupportedPTXError)}
        if unsupported and len(unsupported) == len(programs):
            raise next(iter(unsupported.values()))      # none of its kernels can run: refuse the load
        # the committed '// gpusim: regs=' lines win over ptxas -v: no need to run it when every kernel has one
        lined = all(p.gpusim_regs is not None for n, p in programs.items() if n not in unsupported)
        regs, regs_note = (_ptxas_registers(path, self.config.cc_major, self.config.cc_minor, module_ast.target)
                           if path and not lined else ({}, "ptxas -v"))
        module = Module(str(path) if path else module_ast.file, {}, unsupported, symbols, self.heap)
        for name, program in programs.items():
            if name not in unsupported:
                counted = name in regs or program.gpusim_regs is not None or bool(program.gpusim_regs_arch)
                timed = generate(program, self.config, self.codegen, spill=not counted)
                module.kernels[name] = Kernel(self, module, timed, regs.get(name), regs_note)
        return module

    # ------------------------------------------------------------ launches
    def launch(self, kernel: Kernel, grid: Dims, block: Dims, args: Sequence[Any] = (), shared_bytes: int = 0, *,
               timing: bool = True, regs: int | None = None, trace: bool | int = False,
               max_warp_instructions: int | None = None, cache_control: str = "none",
               progress: bool | Callable[[Progress], object] | None = None, cooperative: bool = False,
               cluster: Dims | None = None, cluster_nonportable: bool = False) -> Run:
        """Run ``kernel`` over ``grid`` x ``block`` threads; returns a Run.

        ``cache_control="all"`` flushes and invalidates L1 and L2 before the launch (Nsight Compute's
        default for a profiled kernel: every launch starts cold); ``"none"`` (the default) keeps what
        earlier launches left in L2.

        ``progress=True`` shows blocks done, simulated cycles and warp-instructions on stderr once the
        launch has run two seconds (a tqdm bar when tqdm is installed); ``None`` (the default) does so
        when stderr is a terminal or in Jupyter, ``False`` never; a function instead receives a
        ``gpusim.launch.progress.Progress`` after every slice (about five times a second). Ctrl-C stops a
        launch within a fraction of a second with KeyboardInterrupt; the GPU stays usable (device memory
        keeps what the kernel wrote).

        ``cooperative=True`` is ``cudaLaunchCooperativeKernel``: the grid must fit on the GPU at once, and a
        kernel using cooperative groups' ``this_grid().sync()`` needs it (docs/kernels.md).

        ``cluster=(x, y, z)`` is ``cudaLaunchKernelEx`` with a cluster dimension (sm_90+): the grid is a whole
        number of clusters, a cluster's blocks run at once on SMs of one GPC and share distributed shared
        memory; ``cluster_nonportable=True`` allows clusters past 8 blocks, up to the config's non-portable
        maximum (docs/kernels.md, Clusters)."""
        import functools

        from gpusim.launch.runner import execute_launch

        if not isinstance(kernel, Kernel):
            raise LaunchError(f"launch expects a Kernel (module['name']), got {type(kernel).__name__}")
        if kernel._heap is not self.heap:
            raise LaunchError(f"kernel '{kernel.name}' was loaded before gpu.reset(), which unloads modules (as "
                              "cudaDeviceReset does): load its module again")
        args, shared_bytes, timing, trace = check_launch_options(
            self.config, kernel.program, args, shared_bytes, timing=timing, regs=regs, trace=trace,
            max_warp_instructions=max_warp_instructions)
        started = time.perf_counter()        # the launch's wall time, for what-if's cost ratio
        if cache_control not in CACHE_CONTROLS:
            raise LaunchError(f"cache_control must be one of {', '.join(map(repr, CACHE_CONTROLS))} "
                              f"(as ncu --cache-control), got {cache_control!r}")
        if cache_control == "all":
            self.flush_caches()
        self._check_usable()
        self.launch_count += 1
        # what-if (gpusim.launch.what_if) re-runs a launch from the memory it started from: keep a copy
        snapshot = snapshot_inputs(self) if timing else None
        try:
            launcher = execute_launch if cluster is None and not cluster_nonportable else functools.partial(
                execute_launch, cluster=cluster, cluster_nonportable=cluster_nonportable)
            run = launcher(self, kernel, grid, block, args, shared_bytes, timing=timing, regs=regs,
                           trace=trace, max_warp_instructions=max_warp_instructions,
                           progress=progress, cooperative=cooperative)
            if snapshot is not None:
                record_launch(run, self, args, shared_bytes, cooperative, snapshot, time.perf_counter() - started,
                              launcher)
            return run
        except IllegalAddressError as exc:
            named = with_allocation(exc, self.heap)
            if named is exc:
                raise
            raise named from None
        except KernelAssertionError as exc:
            self.heap.sticky_error = exc      # CUDA's sticky error: every later call fails until reset()
            print_assertion(exc.messages)
            raise
        except GpusimError:
            raise
        except Exception as exc:   # the safety net: nothing from numba or numpy reaches the user raw
            raise internal_error(kernel.program, exc) from exc

    def max_active_clusters(self, cluster: Dims, blocks_per_sm: int = 1) -> int:
        """How many clusters of shape ``cluster`` are resident at once when ``blocks_per_sm`` blocks fit an SM
        (``cudaOccupancyMaxActiveClusters``): the grid of a persistent cluster kernel (gpusim.launch.clusters)."""
        from gpusim.launch.clusters import _dims, max_active_clusters

        x, y, z = _dims(cluster, "cluster")
        return max_active_clusters(self.config, x * y * z, blocks_per_sm)

    def flush_caches(self) -> int:
        """Write back the dirty L2 lines and invalidate L1 and L2, as Nsight Compute does before a profiled
        kernel; returns the bytes written back (also added to ``flushed_bytes``). The flush runs between
        kernels: its write-backs are in no launch's counters. L1 needs no flush: it is write-through and
        every launch starts with an empty one."""
        from gpusim.launch.timed import flush_l2

        written = flush_l2(self) * self.config.sector_bytes
        self.flushed_bytes += written
        return written

    # ------------------------------------------------------------ host-side model (gpusim.host.system)
    @property
    def system(self) -> System:
        if self._system is None:
            from gpusim.host.system import System

            self._system = System(self)
        return self._system

    def stream(self) -> Stream:
        return self.system.stream()

    def graph(self) -> Graph:
        return self.system.graph()

    def synchronize(self) -> None:
        self.system.synchronize()

    @property
    def timeline(self) -> Timeline:
        return self.system.timeline

    def __repr__(self) -> str:
        return f"GPU({self.config.name!r}, sms={self.config.sms})"
