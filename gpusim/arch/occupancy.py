"""The CUDA occupancy rules: how many blocks of a kernel fit on one SM at once, and what limits them.

What it models: the calculation of NVIDIA's ``cuda_occupancy.h`` (and the occupancy spreadsheet) for
compute capability 7.0 and later, driven entirely by a GPUConfig:

1. warps per block W = ceil(threads / 32); a block larger than ``max_threads_per_block`` fits 0 times;
   warp limit = floor(max_warps_per_sm / W); block limit = max_blocks_per_sm.
2. registers are allocated per warp in units of ``register_allocation_unit``, and per sub-partition: limit =
   floor(sub_partitions * floor(registers_per_sub_partition / per-warp allocation) / W). A block fits 0
   times when a thread needs more than ``max_registers_per_thread`` or the block more than
   ``max_registers_per_block`` -- checked as the hardware does, with W rounded up to a multiple of the
   sub-partitions, and as the software does, with W itself. 0 registers: no limit.
3. shared memory per block S = requested + ``shared_reserved_bytes_per_block``, rounded up to
   ``shared_allocation_unit_bytes``; 0 blocks above ``max_shared_bytes_per_block`` (+ reserved). The SM's
   capacity is the largest carveout by default, or with a carveout preference p% the supported carveout
   at or above floor(p * max / 100) -- but never below S rounded up to a carveout. Limit = capacity // S.
4. blocks per SM = the smallest limit; occupancy = blocks * W / max_warps_per_sm.

What it simplifies: the partitioned-global-caching mode of cc 5.2/6.x is not modelled (it does not exist
from 7.0 on); the request is one shared-memory figure (static + dynamic together).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.arch.config import WARP_SIZE, GPUConfig
from gpusim.errors import LaunchError

LIMITERS = ("warps", "blocks", "registers", "shared_memory")
"""The occupancy limiters, in the order a tie between equal limits is reported."""


@dataclass(frozen=True)
class Occupancy:
    """The result of the occupancy rules for one kernel launch shape on one config."""

    blocks_per_sm: int
    """resident blocks per SM (0: the block cannot run at all; ``limiter`` says why)"""
    warps_per_sm: int
    """resident warps per SM"""
    occupancy: float
    """warps_per_sm / max_warps_per_sm, 0 to 1"""
    limiter: str
    """the limit that sets blocks_per_sm: 'warps', 'blocks', 'registers' or 'shared_memory'"""
    limiters: tuple[str, ...]
    """every limit equal to blocks_per_sm (ties), in LIMITERS order"""
    warps_per_block: int
    blocks_limit_warps: int
    """blocks allowed by the resident-warp slots"""
    blocks_limit_blocks: int
    """blocks allowed by max_blocks_per_sm"""
    blocks_limit_registers: int | None
    """blocks allowed by the register file; None when the kernel uses no registers (no limit)"""
    blocks_limit_shared_memory: int | None
    """blocks allowed by shared memory; None when a block allocates none (no limit)"""
    registers_per_warp: int
    """registers allocated per warp (rounded up to the allocation unit)"""
    shared_bytes_per_block: int
    """shared memory allocated per block (request + reserved, rounded up to the allocation unit)"""
    shared_capacity_bytes: int
    """shared memory per SM the shared-memory limit was computed with (the carveout rule above)"""
    shared_carveout_bytes: int
    """carveout the SM runs with: the preference's when given, else the smallest that holds the blocks"""
    l1_cache_bytes: int
    """L1 data cache left beside that carveout"""
    max_warps_per_sm: int


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def _carveout_at_least(config: GPUConfig, shared_bytes: int) -> int:
    """The smallest supported carveout holding ``shared_bytes`` (the largest one if none does)."""
    for carveout in config.shared_carveouts_bytes:
        if carveout >= shared_bytes:
            return carveout
    return config.shared_carveouts_bytes[-1]


def occupancy(config: GPUConfig, threads_per_block: int, regs_per_thread: int, shared_bytes: int = 0,
              carveout_pct: float | None = None) -> Occupancy:
    """Blocks and warps of a kernel resident per SM, by CUDA's occupancy rules (see the module docstring).

    ``shared_bytes`` is the block's static plus dynamic shared memory; ``carveout_pct`` is the
    ``cudaFuncAttributePreferredSharedMemoryCarveout`` preference (0-100, None for the default).
    A block that cannot fit at all gives ``blocks_per_sm == 0`` with the limiter naming why.
    """
    if threads_per_block < 1:
        raise LaunchError(f"threads_per_block must be at least 1, got {threads_per_block}")
    if regs_per_thread < 0 or shared_bytes < 0:
        raise LaunchError(f"registers ({regs_per_thread}) and shared bytes ({shared_bytes}) "
                          "cannot be negative")
    if carveout_pct is not None and not 0 <= carveout_pct <= 100:
        raise LaunchError(f"carveout_pct is a percentage from 0 to 100, got {carveout_pct}")

    warps_per_block = -(-threads_per_block // WARP_SIZE)
    sub_partitions = config.sub_partitions_per_sm

    # 1. warps and blocks
    if threads_per_block > config.max_threads_per_block:
        limit_warps = 0
    else:
        limit_warps = config.max_warps_per_sm // warps_per_block
    limit_blocks = config.max_blocks_per_sm

    # 2. registers, allocated per warp and per sub-partition
    registers_per_warp = _round_up(regs_per_thread * WARP_SIZE, config.register_allocation_unit)
    hardware_check = registers_per_warp * _round_up(warps_per_block, sub_partitions)
    software_check = registers_per_warp * warps_per_block
    limit_registers: int | None
    if (regs_per_thread > config.max_registers_per_thread or hardware_check > config.max_registers_per_block
            or software_check > config.max_registers_per_block):
        limit_registers = 0
    elif registers_per_warp == 0:
        limit_registers = None
    else:
        warps_per_sub_partition = config.registers_per_sub_partition // registers_per_warp
        limit_registers = warps_per_sub_partition * sub_partitions // warps_per_block

    # 3. shared memory
    shared_per_block = _round_up(shared_bytes + config.shared_reserved_bytes_per_block,
                                 config.shared_allocation_unit_bytes)
    max_per_block = config.max_shared_bytes_per_block + config.shared_reserved_bytes_per_block
    if carveout_pct is None:
        preferred_capacity = config.max_shared_bytes_per_sm
    else:
        preferred_bytes = int(carveout_pct * config.max_shared_bytes_per_sm) // 100
        preferred_capacity = _carveout_at_least(config, preferred_bytes)
    if preferred_capacity >= shared_per_block:
        shared_capacity = preferred_capacity
    else:
        shared_capacity = _carveout_at_least(config, shared_per_block)
    limit_shared: int | None
    if shared_per_block > max_per_block:
        limit_shared = 0
    elif shared_per_block == 0:
        limit_shared = None
    else:
        limit_shared = shared_capacity // shared_per_block

    # 4. the smallest limit
    limits = {"warps": limit_warps, "blocks": limit_blocks, "registers": limit_registers,
              "shared_memory": limit_shared}
    blocks_per_sm = min(limit for limit in limits.values() if limit is not None)
    tied = tuple(name for name in LIMITERS if limits[name] == blocks_per_sm)
    warps_per_sm = blocks_per_sm * warps_per_block

    if carveout_pct is not None:
        carveout = shared_capacity
    else:
        carveout = _carveout_at_least(config, blocks_per_sm * shared_per_block)
    return Occupancy(
        blocks_per_sm=blocks_per_sm,
        warps_per_sm=warps_per_sm,
        occupancy=warps_per_sm / config.max_warps_per_sm,
        limiter=tied[0],
        limiters=tied,
        warps_per_block=warps_per_block,
        blocks_limit_warps=limit_warps,
        blocks_limit_blocks=limit_blocks,
        blocks_limit_registers=limit_registers,
        blocks_limit_shared_memory=limit_shared,
        registers_per_warp=registers_per_warp,
        shared_bytes_per_block=shared_per_block,
        shared_capacity_bytes=shared_capacity,
        shared_carveout_bytes=carveout,
        l1_cache_bytes=config.l1_cache_bytes(carveout),
        max_warps_per_sm=config.max_warps_per_sm,
    )
