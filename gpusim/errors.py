"""The project's own exception types.

Every user mistake ends in exactly one of these, with a message that names
where (file, line, column, kernel, block, thread) and what was expected.
Nothing raised from deep inside the engine reaches a user raw: the launch
code translates engine status codes into these.
"""

from __future__ import annotations


class GpusimError(Exception):
    """Base class of every error gpusim raises on purpose."""


class PTXSyntaxError(GpusimError):
    """Malformed PTX: names file:line:column, the offending text and what was expected."""

    def __init__(self, message: str, file: str = "<ptx>", line: int = 0, column: int = 0, text: str = ""):
        self.file = file
        self.line = line
        self.column = column
        self.text = text
        self.detail = message
        where = f"{file}:{line}:{column}"
        shown = f"\n    {text.strip()}" if text else ""
        super().__init__(f"{where}: {message}{shown}")


class UnsupportedPTXError(PTXSyntaxError):
    """Well-formed PTX that gpusim does not (yet) model; the message lists what is supported."""


class ConfigError(GpusimError):
    """A config file or override with a missing, unknown or impossible field."""

    def __init__(self, message: str, file: str = "<config>", field: str = ""):
        self.file = file
        self.field = field
        where = f"{file}: field '{field}'" if field else file
        super().__init__(f"{where}: {message}")


class LaunchError(GpusimError):
    """A launch CUDA would refuse (bad grid/block, too many resources, wrong arguments)."""


class TensorMapError(LaunchError):
    """A TMA tensor map the CUDA driver's cuTensorMapEncodeTiled would refuse, or one passed where it cannot go
    (``GPU.tensor_map``; gpusim.launch.tensor_map)."""


class ClusterError(LaunchError):
    """A thread-block cluster launch CUDA would refuse (cudaLaunchKernelEx with a cluster dimension: a grid not
    a multiple of the cluster, a cluster too large or on a GPU without clusters, a kernel's cluster directives
    contradicted, a cluster that cannot fit in one GPC), naming the rule."""


class MemoryAccessFault(GpusimError):
    """A kernel's memory access gone wrong, located: kernel, block, thread, PTX line and address."""

    def __init__(self, message: str, kernel: str = "", block: tuple = (), thread: tuple = (),
                 line: int = 0, address: int = 0):
        self.kernel = kernel
        self.block = block
        self.thread = thread
        self.line = line
        self.address = address
        super().__init__(message)


class IllegalAddressError(MemoryAccessFault):
    """An out-of-bounds or misaligned memory access, reported like CUDA's illegal address."""

    in_heap: bool = False
    """Set by the launch: the address is outside every allocation (not a window's bounds or an alignment)."""
    access_bytes: int = 1
    """Set by the launch: the size of the faulting access in bytes."""


class WarpSyncError(IllegalAddressError):
    """A warp-wide ``.sync`` instruction whose member mask the PTX ISA leaves undefined (a lane outside its
    own mask, a live member lane that does not execute it, members naming different masks), reported as
    compute-sanitizer's synccheck would. ``address`` holds the other lane concerned."""


class MbarrierError(IllegalAddressError):
    """An mbarrier or bulk-copy operation the PTX ISA leaves undefined (an operation on a word that is not an
    initialised mbarrier, more arrivals than pending, a tx-count out of range, a bulk copy whose address or
    size is not a multiple of 16 bytes), naming the kernel, block, thread, PTX line and address."""

    rule: str = ""
    """Which rule was broken: 'uninitialised', 'arrivals', 'tx-count', 'init count', 'alignment', 'size',
    'noComplete', 'space'."""


class CallStackOverflowError(GpusimError):
    """A call nested deeper than ``max_call_depth`` (CUDA reports a stack overflow: cudaErrorLaunchFailure with
    compute-sanitizer naming it): names the kernel, block, thread, the call's PTX line and the depth."""

    def __init__(self, message: str, kernel: str = "", block: tuple = (), thread: tuple = (), line: int = 0,
                 depth: int = 0):
        self.kernel = kernel
        self.block = block
        self.thread = thread
        self.line = line
        self.depth = depth
        super().__init__(message)
class TextureError(IllegalAddressError):
    """A texture fetch its texture object cannot serve: a handle that is not a texture object, a fetch of
    the wrong geometry (tex.2d on a 1D texture) or result type (.f32 from an integer texture read as
    elements, .s32/.u32 from a float one)."""


class DeadlockError(GpusimError):
    """Warps that can never make progress (a barrier some warps never reach)."""


class SimulationLimitError(GpusimError):
    """A kernel ran past the config's max_cycles (or the functional instruction limit)."""


def _listing(name: str, names: list[str]) -> tuple[str, str]:
    """The names as a list for a message ('none' when empty), and a did-you-mean hint for the closest one."""
    import difflib

    close = difflib.get_close_matches(name, names, n=1)
    return ", ".join(names) or "none", f"; did you mean '{close[0]}'?" if close else ""


class KernelNotFoundError(GpusimError, KeyError):
    """``module["name"]`` or ``module.name`` for a kernel the module does not have.

    A KeyError too, so ``except KeyError`` keeps working; ``Module.__getattr__`` turns it into an
    AttributeError-compatible ``KernelAttributeError`` so ``hasattr``/``getattr(mod, x, default)`` behave.
    """

    def __init__(self, name: str, module: str, kernels: list[str]):
        self.name = name
        self.module = module
        self.kernels = list(kernels)
        listed, hint = _listing(name, self.kernels)
        self.message = f"no kernel '{name}' in {module} (its kernels: {listed}){hint}"
        super().__init__(self.message)

    def __str__(self) -> str:  # KeyError's str() would add quotes around the message
        return self.message


class SymbolNotFoundError(GpusimError, KeyError):
    """``module.symbol("name")`` for a name that is no ``.global``/``.const`` variable of the module; names the
    module, its variables and the closest one."""

    def __init__(self, name: str, module: str, symbols: list[str]):
        self.name = name
        self.module = module
        self.symbols = list(symbols)
        listed, hint = _listing(name, self.symbols)
        self.message = (f"no __device__ or __constant__ variable '{name}' in {module} (its .global/.const "
                        f"variables: {listed}){hint}")
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class KernelAttributeError(KernelNotFoundError, AttributeError):  # type: ignore[misc]
    """The attribute form (``module.name``) of KernelNotFoundError: also an AttributeError.

    (mypy: ``AttributeError.name`` is ``str | None``, ours always a ``str``; the narrower type is deliberate.)"""


class NoTraceError(GpusimError, AttributeError):
    """``run.trace`` of a run launched without ``trace=True`` (nothing was recorded)."""


class NoTimingError(GpusimError):
    """A timing figure (``run.cycles``, ``run.seconds``) asked of a functional run (``timing=False``)."""


class BarrierError(GpusimError):
    """Barrier misuse as compute-sanitizer's synccheck reports it: a ``bar.sync`` that only some threads
    of a block reach. Names the kernel, the block, the barrier's PTX line and the threads that skipped it."""

    def __init__(self, message: str, kernel: str = "", block: tuple = (), line: int = 0,
                 skipped: tuple = ()):
        self.kernel = kernel
        self.block = block
        self.line = line
        self.skipped = skipped
        super().__init__(message)


class UninitializedMemoryError(MemoryAccessFault):
    """With ``GPU(..., initcheck=True)``: a kernel read device memory that nothing wrote (compute-sanitizer's
    initcheck). Names the kernel, block, thread, PTX line, address and the allocation it belongs to."""


class InternalError(GpusimError):
    """A fault inside gpusim itself (not the user's): an unexpected exception in the engine, translated
    so that no numba or numpy traceback reaches the user. Carries the kernel and, when the engine state
    knows them, the block, thread and PTX line it was at; the GPU object stays usable. Please report it."""

    def __init__(self, message: str, kernel: str = "", block: tuple = (), thread: tuple = (), line: int = 0,
                 cause: str = ""):
        self.kernel = kernel
        self.block = block
        self.thread = thread
        self.line = line
        self.cause = cause


class KernelCompileError(GpusimError):
    """A kernel written in Python (numba.cuda, Triton) that its compiler rejects, or a compiler missing."""


class KernelExceptionError(GpusimError):
    """A Python ``raise`` (or ``assert``) inside a numba.cuda kernel, reported with its source line."""

    def __init__(self, message: str, kernel: str = "", exception: type | None = None, args: tuple = (),
                 file: str = "", line: int = 0, block: tuple = (), thread: tuple = ()):
        self.kernel = kernel
        self.exception = exception
        self.exception_args = args
        self.file = file
        self.line = line
        self.block = block
        self.thread = thread
        super().__init__(message)


class KernelAssertionError(GpusimError):
    """A device ``assert()`` that failed (CUDA's ``cudaErrorAssert``). ``messages`` holds one line per thread
    that failed it, as CUDA prints them (``file:line: function: block: [x,y,z], thread: [x,y,z] Assertion
    `cond` failed.``), also printed on stderr (``stdout``: the same lines). The error is
    sticky, as CUDA's: the GPU object refuses every launch and copy until ``gpu.reset()``."""

    def __init__(self, message: str, kernel: str = "", messages: tuple = (), block: tuple = (), thread: tuple = (),
                 line: int = 0, stdout: str = ""):
        self.kernel = kernel
        self.messages = tuple(messages)
        self.block = block
        self.thread = thread
        self.line = line
        self.stdout = stdout or "".join(line + "\n" for line in self.messages)
        super().__init__(message)


class SanitizerError(GpusimError):
    """What one of the sanitizers (``GPU(..., sanitize={...})``, as compute-sanitizer's tools) found.
    ``report`` is the tool's report text."""

    report: str = ""


class MemcheckError(SanitizerError, IllegalAddressError):
    """memcheck: an access outside what the kernel may touch, exactly (a shared access past the declared size,
    even inside the allocation granule the hardware runs it in)."""


class RacecheckError(SanitizerError):
    """racecheck: shared-memory hazards between threads with no barrier between them; ``hazards`` lists them
    (kind, both PTX lines, both threads, block, address, count)."""

    def __init__(self, message: str, kernel: str = "", hazards: tuple = (), report: str = ""):
        self.kernel = kernel
        self.hazards = tuple(hazards)
        self.report = report
        super().__init__(message)


class SynccheckError(SanitizerError, BarrierError):
    """synccheck: a block-wide barrier some threads of the block skip (exited or diverged)."""


class InitcheckError(SanitizerError, UninitializedMemoryError):
    """initcheck: reads of device memory nothing wrote (``gpu.empty``; ``to_device``, ``zeros`` write), raised at
    the end of the run; located at the first one, ``reads`` holds one dict per reading instruction (pc, line,
    thread, block, address, bytes, count) and ``report`` compute-sanitizer's text."""

    reads: tuple = ()
    report: str = ""


class ClusterAccessError(IllegalAddressError, ClusterError):
    """A distributed-shared-memory access or cluster operation the PTX ISA leaves undefined: a rank outside the
    cluster, or the shared memory of a CTA of the cluster that has already exited; names the kernel, block,
    thread, PTX line and address."""
