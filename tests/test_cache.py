"""Sectored LRU cache: checked against a brute-force Python model of the same policy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusim.engine.cache import (
    cache_dirty_sectors,
    cache_fill,
    cache_invalidate_all,
    cache_invalidate_partition,
    cache_lookup,
    cache_set_index,
    cache_write,
    make_cache,
)
from gpusim.errors import ConfigError

LINE, SECTOR = 128, 32


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
    line = 37 * LINE
    assert cache_set_index(cache, 2, line) == 2 * sets_per_partition + 37 % sets_per_partition


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
        assert set_index == line_number % sets
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
