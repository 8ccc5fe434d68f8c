"""Tests of gpusim.arch.occupancy against NVIDIA's published examples and an independent brute-force count."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusim.arch.config import load_config
from gpusim.arch.occupancy import LIMITERS, occupancy
from gpusim.errors import LaunchError

CONFIGS = {name: load_config(name) for name in ("teaching", "v100", "a100", "h100-sxm", "rtx4090")}
# a config with non-default granules and partitions, so nothing can hide a hard-coded 4, 256 or 64
CONFIGS["odd"] = CONFIGS["teaching"].replace(
    sub_partitions_per_sm=2, max_warps_per_sm=24, max_blocks_per_sm=5, register_allocation_unit=512,
    registers_per_sm=24576, max_registers_per_block=24576, shared_allocation_unit_bytes=512,
    shared_reserved_bytes_per_block=512, max_shared_bytes_per_block=11776, two_level_active_warps=4)


def test_best_practices_guide_examples():
    # BPG, cc 7.0: 128 threads, 37 registers -> 12 blocks, 75%; 320 threads -> 4 blocks, 62.5%
    v100 = CONFIGS["v100"]
    first = occupancy(v100, threads_per_block=128, regs_per_thread=37)
    assert (first.blocks_per_sm, first.occupancy, first.limiter) == (12, 0.75, "registers")
    second = occupancy(v100, threads_per_block=320, regs_per_thread=37)
    assert (second.blocks_per_sm, second.occupancy, second.limiter) == (4, 0.625, "registers")
    assert second.warps_per_sm == 40 and second.registers_per_warp == 1280


def test_programming_guide_carveout_rounding():
    # PG: a 50% carveout preference rounds up to 64 KB on cc 7.0 and to 100 KB on cc 8.0
    assert occupancy(CONFIGS["v100"], 256, 32, carveout_pct=50).shared_capacity_bytes == 64 * 1024
    assert occupancy(CONFIGS["a100"], 256, 32, carveout_pct=50).shared_capacity_bytes == 100 * 1024


def test_carveout_never_below_one_block():
    # a preference smaller than one block's need is raised to the carveout holding that block
    result = occupancy(CONFIGS["a100"], 128, 32, shared_bytes=70 * 1024, carveout_pct=10)
    assert result.shared_capacity_bytes == 100 * 1024 and result.blocks_per_sm == 1


def test_each_limiter_is_reachable():
    h100 = CONFIGS["h100-sxm"]
    assert occupancy(h100, 1024, 32).limiter == "warps"
    assert occupancy(h100, 32, 16).limiter == "blocks"
    assert occupancy(h100, 256, 128).limiter == "registers"
    shared = occupancy(h100, 256, 16, shared_bytes=48 * 1024)
    per_block = 48 * 1024 + h100.shared_reserved_bytes_per_block
    assert shared.limiter == "shared_memory"
    assert shared.blocks_per_sm == h100.max_shared_bytes_per_sm // per_block


@pytest.mark.parametrize("threads, regs, shared, limiter", [
    (1025, 16, 0, "warps"),
    (128, 256, 0, "registers"),
    (1024, 128, 0, "registers"),           # 128 x 1024 registers > 65536 per block
    (128, 16, 228 * 1024, "shared_memory"),  # plus 1 KB reserved > 227 KB + 1 KB
])
def test_block_that_cannot_fit_gives_zero_and_says_why(threads, regs, shared, limiter):
    result = occupancy(CONFIGS["h100-sxm"], threads, regs, shared_bytes=shared)
    assert (result.blocks_per_sm, result.occupancy, result.limiter) == (0, 0.0, limiter)


def test_largest_block_that_fits_exactly():
    h100 = CONFIGS["h100-sxm"]
    most = h100.max_shared_bytes_per_block
    assert occupancy(h100, 128, 16, shared_bytes=most).blocks_per_sm == 1
    assert occupancy(h100, 128, 16, shared_bytes=most + 1).blocks_per_sm == 0
    assert occupancy(h100, 1024, 64).blocks_per_sm == 1


def test_no_registers_and_no_shared_mean_no_limit():
    v100 = CONFIGS["v100"]
    result = occupancy(v100, 64, 0)
    assert result.blocks_limit_registers is None and result.blocks_limit_shared_memory is None
    assert result.blocks_per_sm == min(v100.max_warps_per_sm // 2, v100.max_blocks_per_sm)


def test_driver_carveout_leaves_the_rest_to_l1():
    h100 = CONFIGS["h100-sxm"]
    result = occupancy(h100, 256, 32)  # 8 blocks, each only the 1 KB reserved
    assert result.shared_carveout_bytes == 8 * 1024
    assert result.l1_cache_bytes == h100.l1_shared_bytes_per_sm - 8 * 1024
    preferred = occupancy(h100, 256, 32, carveout_pct=100)
    assert preferred.shared_carveout_bytes == h100.max_shared_bytes_per_sm


def test_bad_inputs_raise_launch_error():
    with pytest.raises(LaunchError):
        occupancy(CONFIGS["v100"], 0, 32)
    with pytest.raises(LaunchError):
        occupancy(CONFIGS["v100"], 32, -1)
    with pytest.raises(LaunchError):
        occupancy(CONFIGS["v100"], 32, 32, carveout_pct=150)


def brute_force_blocks(config, threads, regs, shared, carveout_pct):
    """Add blocks one at a time until one does not fit, placing each warp's registers in a sub-partition."""
    warps = math.ceil(threads / 32)
    regs_per_warp = math.ceil(regs * 32 / config.register_allocation_unit) * config.register_allocation_unit
    shared_per_block = math.ceil((shared + config.shared_reserved_bytes_per_block)
                                 / config.shared_allocation_unit_bytes) * config.shared_allocation_unit_bytes
    if (threads > config.max_threads_per_block or regs > config.max_registers_per_thread
            or regs_per_warp * warps > config.max_registers_per_block
            or shared_per_block > config.max_shared_bytes_per_block + config.shared_reserved_bytes_per_block):
        return 0
    carveouts = [kb * 1024 for kb in config.shared_carveouts_kb]
    if carveout_pct is None:
        capacity = carveouts[-1]
    else:
        wanted = int(carveout_pct * config.max_shared_bytes_per_sm) // 100
        capacity = min(c for c in carveouts if c >= wanted)
        if capacity < shared_per_block:
            capacity = min(c for c in carveouts if c >= shared_per_block)
    free_registers = [config.registers_per_sm // config.sub_partitions_per_sm] * config.sub_partitions_per_sm
    blocks = 0
    while True:
        if (blocks + 1) * warps > config.max_warps_per_sm or blocks + 1 > config.max_blocks_per_sm:
            return blocks
        if (blocks + 1) * shared_per_block > capacity:
            return blocks
        trial = list(free_registers)
        for _ in range(warps):
            fullest = max(range(len(trial)), key=lambda index: trial[index])
            if trial[fullest] < regs_per_warp:
                return blocks
            trial[fullest] -= regs_per_warp
        free_registers = trial
        blocks += 1


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(sorted(CONFIGS)), threads=st.integers(1, 1100), regs=st.integers(0, 260),
       shared=st.integers(0, 240 * 1024) | st.sampled_from([0, 1, 1024, 48 * 1024]),
       carveout_pct=st.none() | st.integers(0, 100))
def test_rules_match_brute_force(name, threads, regs, shared, carveout_pct):
    config = CONFIGS[name]
    result = occupancy(config, threads, regs, shared_bytes=shared, carveout_pct=carveout_pct)
    assert result.blocks_per_sm == brute_force_blocks(config, threads, regs, shared, carveout_pct)
    assert result.warps_per_sm == result.blocks_per_sm * math.ceil(threads / 32)
    assert result.occupancy == result.warps_per_sm / config.max_warps_per_sm
    limits = {"warps": result.blocks_limit_warps, "blocks": result.blocks_limit_blocks,
              "registers": result.blocks_limit_registers, "shared_memory": result.blocks_limit_shared_memory}
    assert limits[result.limiter] == result.blocks_per_sm
    assert result.limiter in LIMITERS and result.limiter == result.limiters[0]
    assert result.blocks_per_sm * result.shared_bytes_per_block <= result.shared_carveout_bytes \
        or result.blocks_per_sm == 0
    assert result.shared_carveout_bytes in config.shared_carveouts_bytes or result.blocks_per_sm == 0
