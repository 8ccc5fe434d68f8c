"""Sectored LRU cache: checked against a brute-force Python model of the same policy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusim.arch.config import load_config
from gpusim.arch.layout import GLOBAL_BASE
from gpusim.engine.bits import quotient
from gpusim.engine.memory.cache import (
    cache_dirty_sectors,
    cache_fill,
    cache_invalidate_all,
    cache_invalidate_partition,
    cache_lookup,
    cache_partition_of,
    cache_set_index,
    cache_write,
    make_cache,
)
from gpusim.errors import ConfigError

LINE, SECTOR = 128, 32
BASE_LINE = GLOBAL_BASE // LINE  # line index of the first device-heap address


def digit_sum_set(index, sets):
    """Reference set index: the base-``sets`` digits of ``index`` summed, modulo ``sets``."""
    if sets == 1:
        return 0
    digits = []
    while index:
        index, digit = divmod(index, sets)
        digits.append(digit)
    return sum(digits) % sets


def xor_fold(index):
    """Reference 7-bit XOR fold: bit i of the result is the parity of bits i, i + 7, i + 14, ... of ``index``."""
    return sum((sum((index >> source) & 1 for source in range(bit, 64, 7)) % 2) << bit for bit in range(64))


def l2_geometry(sms=None):
    """(slices, sets per slice, ways) of h100-sxm's L2, whole or sliced to ``sms`` SMs."""
    cfg = load_config("h100-sxm", **({"sms": sms} if sms else {}))
    return cfg.l2_slices, cfg.l2_bytes // cfg.l2_slices // (cfg.line_bytes * cfg.l2_assoc), cfg.l2_assoc


def l1_sets():
    """Sets of h100-sxm's L1 for every shared-memory carveout."""
    cfg = load_config("h100-sxm")
    return sorted({cfg.l1_cache_bytes(kib * 1024) // (cfg.line_bytes * cfg.l1_assoc)
                   for kib in cfg.shared_carveouts_kb})


def where(cache, line_index, partitions=1, interleaved=False):
    """(partition, global set index) the engine gives a line of an interleaved or per-SM (partition 0) cache."""
    line_addr = line_index * LINE
    partition = cache_partition_of(cache, line_addr) if interleaved else 0
    return partition, cache_set_index(cache, partition, line_addr)


class ReferenceCache:
    """Per set: list of [line, {sector: ready}, {dirty sectors}] ordered least- to most-recently used."""

    def __init__(self, sets, ways):
        self.sets = [[] for _ in range(sets)]
        self.ways = ways

    def _find(self, set_index, line):
        for entry in self.sets[set_index]:
            if entry[0] == line:
                return entry
        return None

    def _touch(self, set_index, entry):
        self.sets[set_index].remove(entry)
        self.sets[set_index].append(entry)

    def _allocate(self, set_index, line):
        evicted = (-1, 0)
        if len(self.sets[set_index]) == self.ways:
            victim = self.sets[set_index].pop(0)
            evicted = (victim[0], len(victim[2]))
        entry = [line, {}, set()]
        self.sets[set_index].append(entry)
        return entry, evicted

    def lookup(self, set_index, addr, now):
        entry = self._find(set_index, addr // LINE * LINE)
        sector = addr % LINE // SECTOR
        if entry is None or sector not in entry[1]:
            return False, -1
        self._touch(set_index, entry)
        return True, max(now, entry[1][sector])

    def fill(self, set_index, addr, ready):
        entry = self._find(set_index, addr // LINE * LINE)
        evicted = (-1, 0)
        if entry is None:
            entry, evicted = self._allocate(set_index, addr // LINE * LINE)
        sector = addr % LINE // SECTOR
        entry[1][sector] = min(ready, entry[1].get(sector, ready))
        self._touch(set_index, entry)
        return evicted

    def write(self, set_index, addr, now, allocate, mark_dirty):
        entry = self._find(set_index, addr // LINE * LINE)
        sector = addr % LINE // SECTOR
        hit = entry is not None and sector in entry[1]
        evicted = (-1, 0)
        if not hit and not allocate:
            return False, -1, 0
        if entry is None:
            entry, evicted = self._allocate(set_index, addr // LINE * LINE)
        entry[1].setdefault(sector, now)
        if mark_dirty:
            entry[2].add(sector)
        self._touch(set_index, entry)
        return hit, evicted[0], evicted[1]


def test_geometry_and_set_index():
    cache = make_cache(4096, LINE, SECTOR, 4, partitions=3)
    tags, ready, stamps, dirty, _ = cache
    sets_per_partition = 4096 // (LINE * 4)
    assert tags.shape == (3 * sets_per_partition, 4)
    assert ready.shape == dirty.shape == (3 * sets_per_partition, 4, LINE // SECTOR)
    assert np.all(tags == -1) and np.all(ready == -1)
    line = 37 * LINE  # 37 = 0o45: digits 4 and 5 in base 8, 9 % 8 = 1
    assert cache_set_index(cache, 2, line) == 2 * sets_per_partition + 1
    assert digit_sum_set(37, sets_per_partition) == 1
    assert cache_set_index(cache, 1, 5 * LINE) == sets_per_partition + 5  # below S: the line index itself


@pytest.mark.parametrize("sets", [1, 4, 14, 78, 124, 128, 320])
def test_set_index_is_the_digit_sum_and_rotates_every_run_of_sets(sets):
    cache = make_cache(sets * 2 * LINE, LINE, SECTOR, 2)
    for first in (0, 3 * sets, BASE_LINE - BASE_LINE % sets, (1 << 38) // LINE // sets * sets):
        run = [cache_set_index(cache, 0, (first + i) * LINE) for i in range(sets)]
        assert run == [digit_sum_set(first + i, sets) for i in range(sets)]
        assert sorted(run) == list(range(sets))  # an aligned run of S lines is a permutation of the sets


def test_interleaved_cache_partitions_by_xor_fold_and_ranks_lines_within_a_partition():
    partitions, sets = 5, 16
    cache = make_cache(sets * 2 * LINE, LINE, SECTOR, 2, partitions=partitions, interleaved=True)
    for line in [0, 1, 127, 128, 129, 5000] + [BASE_LINE + 37 * k for k in range(40)]:
        folded = xor_fold(line)
        partition, set_index = where(cache, line, partitions, interleaved=True)
        assert partition == folded % partitions
        assert set_index == partition * sets + digit_sum_set(folded // partitions, sets)
    # a per-SM cache with the same geometry indexes every partition by the line index itself
    per_sm = make_cache(sets * 2 * LINE, LINE, SECTOR, 2, partitions=partitions)
    assert cache_set_index(per_sm, 3, (BASE_LINE + 7) * LINE) == 3 * sets + digit_sum_set(BASE_LINE + 7, sets)


def _fill_then_reread(cache, lines, partitions, interleaved):
    """Fill every sector of ``lines`` once, then read them again; returns the second pass's misses."""
    for line in lines:
        partition, set_index = where(cache, line, partitions, interleaved)
        for sector in range(LINE // SECTOR):
            cache_fill(cache, set_index, line * LINE + sector * SECTOR, 0)
    misses = 0
    for line in lines:
        partition, set_index = where(cache, line, partitions, interleaved)
        for sector in range(LINE // SECTOR):
            misses += not cache_lookup(cache, set_index, line * LINE + sector * SECTOR, 1)[0]
    return misses


@pytest.mark.parametrize("sets, ways", [(14, 16), (78, 16), (124, 16), (128, 16), (320, 16), (64, 4)])
@pytest.mark.parametrize("start", [0, 37, 1001])
def test_sequential_array_under_capacity_hits_on_the_second_pass(sets, ways, start):
    # any contiguous (ways - 1) * sets lines fit (module docstring), wherever the array starts
    cache = make_cache(sets * ways * LINE, LINE, SECTOR, ways)
    first = BASE_LINE + start
    assert _fill_then_reread(cache, range(first, first + (ways - 1) * sets), 1, False) == 0


@pytest.mark.parametrize("sms", [1, 8, None])
def test_sequential_array_of_seven_eighths_of_the_l2_hits_on_the_second_pass(sms):
    # h100-sxm's L2 sliced to 1 SM (one slice), to 8 SMs (five) and whole (80): with the slice's sets
    # indexed by the raw line index, 80 slices would overflow about 5 % of these lines
    partitions, sets, ways = l2_geometry(sms)
    cache = make_cache(sets * ways * LINE, LINE, SECTOR, ways, partitions=partitions, interleaved=True)
    first = BASE_LINE + 37
    lines = range(first, first + partitions * sets * ways * 7 // 8)
    assert _fill_then_reread(cache, lines, partitions, True) == 0


@pytest.mark.parametrize("pitch_kib", [2, 4, 8, 16, 32, 64])
@pytest.mark.parametrize("geometry", [("l1", sets) for sets in l1_sets()] + [("l2", 1), ("l2", None)])
def test_rows_at_power_of_two_pitches_spread_over_the_sets(pitch_kib, geometry):
    # the first lines of 2 x (all sets) rows: with n % S they would share S / gcd(pitch, S) sets (20 of 320
    # for 2 KiB). Geometries: every L1 carveout of h100-sxm, its L2 sliced to 1 SM and whole.
    kind, value = geometry
    partitions, sets, ways = (1, value, 16) if kind == "l1" else l2_geometry(value)
    interleaved = kind == "l2"
    cache = make_cache(sets * ways * LINE, LINE, SECTOR, ways, partitions=partitions, interleaved=interleaved)
    total_sets = sets * partitions
    pitch_lines = pitch_kib * 1024 // LINE
    used = {where(cache, BASE_LINE + row * pitch_lines, partitions, interleaved)[1]
            for row in range(2 * total_sets)}
    assert len(used) >= 0.75 * total_sets


def test_bad_geometry_is_a_config_error():
    with pytest.raises(ConfigError):
        make_cache(4096, 100, 32, 4)
    with pytest.raises(ConfigError):
        make_cache(0, 128, 32, 4)


def test_miss_fill_then_hit_and_pending_fill():
    cache = make_cache(4096, LINE, SECTOR, 4)
    addr = 5 * LINE + 2 * SECTOR
    set_index = cache_set_index(cache, 0, addr // LINE * LINE)
    assert cache_lookup(cache, set_index, addr, 10) == (False, -1)
    cache_fill(cache, set_index, addr, 500)
    assert cache_lookup(cache, set_index, addr, 20) == (True, 500)   # fill in flight: wait for it
    assert cache_lookup(cache, set_index, addr, 900) == (True, 900)  # data there: ready now
    assert cache_lookup(cache, set_index, addr + SECTOR, 900) == (False, -1)  # other sector not fetched


def test_lru_evicts_least_recently_used_and_reports_dirty_sectors():
    ways = 2
    cache = make_cache(LINE * ways, LINE, SECTOR, ways)  # one set
    a, b, c = 0, LINE, 2 * LINE
    cache_write(cache, 0, a, 0, True, True)
    cache_write(cache, 0, a + SECTOR, 0, True, True)
    cache_fill(cache, 0, b, 5)
    cache_lookup(cache, 0, a, 6)            # a most recent: b is the victim
    assert cache_fill(cache, 0, c, 7) == (b, 0)
    assert cache_fill(cache, 0, b, 8) == (a, 2)  # a held two dirty sectors
    assert cache_dirty_sectors(cache) == 0


def test_write_through_no_allocate_updates_present_sectors_only():
    cache = make_cache(4096, LINE, SECTOR, 4)
    assert cache_write(cache, 0, 0, 3, False, False) == (False, -1, 0)
    assert cache_lookup(cache, 0, 0, 4) == (False, -1)
    cache_fill(cache, 0, 0, 2)
    assert cache_write(cache, 0, 0, 3, False, False) == (True, -1, 0)
    assert cache_write(cache, 0, SECTOR, 3, False, False) == (False, -1, 0)
    assert cache_lookup(cache, 0, SECTOR, 4) == (False, -1)
    assert cache_dirty_sectors(cache) == 0


def test_invalidate_partition_and_all():
    cache = make_cache(1024, LINE, SECTOR, 2, partitions=2)
    for partition in range(2):
        cache_fill(cache, cache_set_index(cache, partition, 0), 0, 1)
    cache_invalidate_partition(cache, 0)
    assert cache_lookup(cache, cache_set_index(cache, 0, 0), 0, 5)[0] is False
    assert cache_lookup(cache, cache_set_index(cache, 1, 0), 0, 5)[0] is True
    cache_invalidate_all(cache)
    assert cache_lookup(cache, cache_set_index(cache, 1, 0), 0, 5)[0] is False


operation = st.tuples(st.sampled_from(["lookup", "fill", "write_back", "write_through"]),
                      st.integers(0, 40), st.integers(0, 3), st.integers(0, 1000))


@settings(max_examples=60, deadline=None)
@given(st.lists(operation, min_size=1, max_size=120), st.sampled_from([1, 2, 4]))
def test_matches_reference_model(operations, ways):
    sets = 4
    cache = make_cache(sets * ways * LINE, LINE, SECTOR, ways)
    reference = ReferenceCache(sets, ways)
    for kind, line_number, sector, cycle in operations:
        addr = line_number * LINE + sector * SECTOR
        set_index = cache_set_index(cache, 0, addr // LINE * LINE)
        assert set_index == digit_sum_set(line_number, sets)
        if kind == "lookup":
            assert cache_lookup(cache, set_index, addr, cycle) == reference.lookup(set_index, addr, cycle)
        elif kind == "fill":
            assert cache_fill(cache, set_index, addr, cycle) == reference.fill(set_index, addr, cycle)
        elif kind == "write_back":
            assert cache_write(cache, set_index, addr, cycle, True, True) == reference.write(
                set_index, addr, cycle, True, True)
        else:
            assert cache_write(cache, set_index, addr, cycle, False, False) == reference.write(
                set_index, addr, cycle, False, False)
    assert cache_dirty_sectors(cache) == sum(len(entry[2]) for entries in reference.sets for entry in entries)


@pytest.mark.parametrize("divisor", [1, 2, 32, 128, 3, 80, 320])
def test_quotient_is_floor_division(divisor):
    """The shift used for power-of-two sizes and the division used otherwise both equal Python's //."""
    for value in [0, 1, divisor - 1, divisor, 12345, GLOBAL_BASE + 4097, (1 << 40) + 7, -1, -divisor - 3]:
        assert quotient(value, divisor) == value // divisor
