"""The tiling lab against counts written here from the kernels' access patterns and the config."""

import pytest

import gpusim
from gpusim.errors import LaunchError
from gpusim.labs import tiling

SECTOR = 32
WORD = 4


def l1_load_sectors(size, tiled):
    warps = size * size // 32  # 16 x 16 blocks: a warp is 2 rows x 16 columns
    if tiled:
        return warps * (size // 16) * (2 + 2 + 2 + 2)  # per tile step: 2 rows x 64 B of A and of B
    return warps * size * (2 + 2)  # per k: one A word in each of 2 rows, a 64-byte B segment


@pytest.fixture(scope="module")
def large():
    """size 320 on one SM: B (400 KiB) and a row of blocks' A exceed the L1 (at most 248 KiB) by far more
    than the hashed set index's unevenness of a line or two per set, A + B fit the slice's L2."""
    return tiling.run(progress=False, sms=1, size=320, small_l2_fraction=0.25).values


@pytest.fixture(scope="module")
def small():
    """size 128: B (64 KiB) fits the L1 beside a row of blocks' A."""
    return tiling.run(progress=False, sms=1, size=128, small_l2_fraction=0.25).values


def test_l1_sectors_match_the_formulas_and_tiling_removes_seven_eighths(large, small):
    for values in (large, small):
        size = values["size"]
        for setup in values["setups"].values():
            for name, run in setup.items():
                assert run["correct"]
                assert run["load_sectors"] == l1_load_sectors(size, name == "tiled")
        assert values["slice L2"]["sector_ratio"] == 8 == values["small L2"]["sector_ratio"]


def test_l2_load_sectors_are_what_the_l1_misses_the_same_for_both_kernels(large, small):
    # large: every row of blocks (20 of them) misses its 16 rows of A and all of B again (LRU evicted B)
    size = large["size"]
    a_block_row, b_bytes = 16 * size * WORD, size * size * WORD
    for setup in large["setups"].values():
        for run in setup.values():
            assert a_block_row + b_bytes > run["l1_bytes"]
            # a few sectors re-fetched where two rows of blocks overlap in time: 1 %
            assert run["l2_load_sectors"] == pytest.approx((size // 16) * (a_block_row + b_bytes) // SECTOR,
                                                           rel=0.01)
    # small: everything fits the L1, each sector of A and B misses once
    size = small["size"]
    for setup in small["setups"].values():
        for run in setup.values():
            assert 16 * size * WORD + size * size * WORD <= run["l1_bytes"]
            assert run["l2_load_sectors"] == 2 * size * size * WORD // SECTOR


def test_dram_reads_compulsory_with_the_slice_l2_every_l1_miss_with_a_small_one(large):
    config = gpusim.load_config("h100-sxm", sms=1)
    size = large["size"]
    operands = 2 * size * size * WORD
    for name, run in large["setups"]["slice L2"].items():
        assert run["l2_bytes"] == config.l2_bytes
        assert size * size * WORD + 2 * 16 * size * WORD <= run["l2_bytes"]  # B + a row of blocks of A and C
        assert run["dram_read_bytes"] == pytest.approx(operands, rel=0.01), name
    for name, run in large["setups"]["small L2"].items():
        assert run["l2_bytes"] <= operands / 4
        assert run["dram_read_bytes"] == pytest.approx(run["l2_load_sectors"] * SECTOR, rel=0.01), name
        assert run["dram_read_bytes"] > 8 * operands  # B again for each of the 20 rows of blocks
    for setup in ("slice L2", "small L2"):
        assert large[setup]["dram_ratio"] == pytest.approx(1.0, rel=0.02)


def test_tiling_is_faster_most_when_the_naive_loop_waits_on_dram(large):
    config = gpusim.load_config("h100-sxm", sms=1)
    size = large["size"]
    # the naive loop needs a fresh B segment every iteration and loads nothing ahead: with the small L2
    # each of the size iterations of every wave of 8 resident blocks waits one DRAM latency
    resident_blocks = config.max_warps_per_sm // (16 * 16 // 32)
    waves = (size // 16) ** 2 / resident_blocks
    naive = large["setups"]["small L2"]["naive"]["cycles"]
    assert naive == pytest.approx(waves * size * config.dram_latency_cycles, rel=0.15)
    assert large["slice L2"]["time_ratio"] > 1.5
    # the tiled kernel waits once per 16 iterations: a longer miss latency costs it far less
    assert large["small L2"]["time_ratio"] > 1.5 * large["slice L2"]["time_ratio"]


def test_bad_sizes_are_launch_errors():
    with pytest.raises(LaunchError, match="size=100"):
        tiling.run(progress=False, size=100)
    with pytest.raises(LaunchError, match="small_l2_fraction"):
        tiling.run(progress=False, small_l2_fraction=2.0)
