"""gpusim: a cycle-level SIMT GPU simulator that runs real PTX kernels.

Public API (see docs/design.md): GPU, DeviceArray, Module, Kernel, Run, occupancy,
load_config, list_configs, analytic, compare, sweep and the error types.
"""

from gpusim import analytic, sweep  # sweep: a callable package, gpusim.sweep(points, ...) (docs/sweeps.md)
from gpusim.analytic.compare import Comparison, compare
from gpusim.api.gpu import GPU, Kernel, Module
from gpusim.arch.config import GPUConfig, list_configs, load_config
from gpusim.arch.occupancy import Occupancy, occupancy
from gpusim.errors import (
    ConfigError,
    DeadlockError,
    GpusimError,
    IllegalAddressError,
    KernelNotFoundError,
    LaunchError,
    NoTimingError,
    NoTraceError,
    PTXSyntaxError,
    SimulationLimitError,
    UnsupportedPTXError,
    WarpSyncError,
)
from gpusim.launch.device_memory import DeviceArray
from gpusim.launch.run import Run

__version__ = "0.1.0"

__all__ = [
    "GPU", "GPUConfig", "Kernel", "Module", "DeviceArray", "Run", "Occupancy", "occupancy",
    "load_config", "list_configs", "analytic", "compare", "Comparison", "sweep",
    "ConfigError", "DeadlockError", "GpusimError", "IllegalAddressError", "KernelNotFoundError",
    "LaunchError", "NoTimingError", "NoTraceError", "PTXSyntaxError", "SimulationLimitError",
    "UnsupportedPTXError", "WarpSyncError", "__version__",
]
