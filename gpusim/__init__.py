"""gpusim: a cycle-level SIMT GPU simulator that runs real PTX kernels.

Public API (see docs/design.md): GPU, DeviceArray, Module, Kernel, Run, occupancy,
load_config, list_configs, analytic, compare, sweep, warm_up and the error types; ``gpusim.jit`` (numba.cuda
kernels) and ``gpusim.triton.launch`` (Triton kernels), imported on first use so that ``import gpusim`` loads
neither numba-cuda nor Triton (docs/python-kernels.md).
"""

from typing import Any

from gpusim import analytic, sweep  # sweep: a callable package, gpusim.sweep(points, ...) (docs/sweeps.md)
from gpusim.analytic.compare import Comparison
from gpusim.api.gpu import GPU, Kernel, Module
from gpusim.api.warm_up import warm_up
from gpusim.arch.config import GPUConfig, list_configs, load_config
from gpusim.arch.occupancy import Occupancy, occupancy
from gpusim.errors import (
    BarrierError,
    ConfigError,
    DeadlockError,
    GpusimError,
    IllegalAddressError,
    InternalError,
    KernelCompileError,
    KernelExceptionError,
    KernelNotFoundError,
    LaunchError,
    MbarrierError,
    NoTimingError,
    NoTraceError,
    PTXSyntaxError,
    SimulationLimitError,
    TensorMapError,
    TextureError,
    UninitializedMemoryError,
    UnsupportedPTXError,
    WarpSyncError,
)
from gpusim.launch.device_memory import DeviceArray
from gpusim.launch.run import Run
from gpusim.launch.sampling_policy import SamplingPolicy
from gpusim.launch.tensor_map import TensorMap
from gpusim.observe.compare_runs import RunComparison, compare

__version__ = "0.1.0"

__all__ = [
    "GPU", "GPUConfig", "Kernel", "Module", "DeviceArray", "Run", "SamplingPolicy", "Occupancy", "occupancy",
    "load_config", "list_configs", "analytic", "compare", "Comparison", "RunComparison", "sweep", "jit", "triton",
    "warm_up", "BarrierError", "ConfigError", "DeadlockError", "GpusimError", "IllegalAddressError",
    "InternalError", "KernelCompileError", "KernelExceptionError", "KernelNotFoundError", "LaunchError",
    "NoTimingError", "NoTraceError", "PTXSyntaxError", "SimulationLimitError", "UninitializedMemoryError",
    "UnsupportedPTXError", "WarpSyncError", "TextureError", "MbarrierError", "TensorMap", "TensorMapError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    """``gpusim.jit`` and ``gpusim.triton``: the Python-kernel front ends, loaded when first asked for."""
    if name == "jit":
        from gpusim.frontends.numba_cuda import jit

        return jit
    if name == "triton":
        from gpusim.frontends import triton

        return triton
    raise AttributeError(f"module 'gpusim' has no attribute '{name}'")
