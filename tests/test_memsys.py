"""The global-memory path: isolated accesses cost exactly the configured load-to-use latencies, contention
adds on top, and streams run at the configured rates (expected values derived from the parameters).

These tests use the ideal DRAM of ``dram.ideal_dram_params`` (no bank, row or refresh timing): a channel
streams at its peak and every access costs ``DRAM_LATENCY``. The bank model is tested in test_dram.py."""

import heapq
from math import ceil, floor

import numpy as np
import pytest

from gpusim.engine.memory.cache import cache_invalidate_partition, cache_partition_of, cache_set_index
from gpusim.engine.memory.memsys import (
    C_DRAM_READ_BYTES,
    C_DRAM_WRITE_BYTES,
    C_L1_HIT_SECTORS,
    C_L1_MISS_SECTORS,
    C_L2_HIT_SECTORS,
    C_L2_MISS_SECTORS,
    C_L2_PARTIAL_STORE_SECTORS,
    C_L2_STORE_SECTORS,
    C_MSHR_WAIT_CYCLES,
    COUNTERS,
    N_COUNTERS,
    R_DRAM_BYTES_PER_CYCLE_PER_CHANNEL,
    dram_channel_of,
    global_atomic,
    global_load,
    global_store,
    l2_slice_of,
    replace_earliest_mshr,
)
from gpusim.engine.memory.memsys_setup import make_memsys_params, make_memsys_state
from gpusim.errors import ConfigError

SECTOR, LINE = 32, 128
L1_LATENCY, L2_LATENCY, DRAM_LATENCY = 38, 219, 600
FAST = 1e9  # a rate that never binds in these tests
TAGS = 4    # L1TEX tag stage: lines per cycle (NVIDIA, GV100+); a request takes at least one cycle


class Memory:
    """One memory system plus helpers that call the engine functions with it."""

    def __init__(self, *, sms=2, l2_slices=4, l2_bytes=1 << 20, l2_assoc=16, dram_channels=4,
                 dram_bandwidth_gbs=32.0, clock_mhz=1000.0, mshrs_per_sm=256,
                 l1_rate=FAST, icnt_rate=FAST, l2_rate=FAST, atomic_rate=1.0, l1_tags=TAGS, l2_write_rate=None,
                 l2_partial_rate=None):
        self.params, self.rates = make_memsys_params(
            sector_bytes=SECTOR, line_bytes=LINE, l1_latency_cycles=L1_LATENCY,
            l2_latency_cycles=L2_LATENCY, dram_latency_cycles=DRAM_LATENCY, l1_bytes_per_cycle_per_sm=l1_rate,
            l2_slices=l2_slices, l2_bytes_per_cycle=l2_rate, dram_bandwidth_gbs=dram_bandwidth_gbs,
            dram_channels=dram_channels, clock_mhz=clock_mhz,
            interconnect_bytes_per_cycle_per_sm=icnt_rate, mshrs_per_sm=mshrs_per_sm,
            atomic_l2_ops_per_cycle_per_slice=atomic_rate, l1_tags_per_cycle=l1_tags,
            l2_write_bytes_per_cycle=l2_write_rate, l2_partial_write_bytes_per_cycle=l2_partial_rate)
        self.l1, self.l2, self.servers, self.mshr, self.counters = make_memsys_state(
            sms=sms, l1_bytes_per_sm=64 * 1024, l1_assoc=4, l2_bytes=l2_bytes, l2_assoc=l2_assoc,
            l2_slices=l2_slices, sector_bytes=SECTOR, line_bytes=LINE, mshrs_per_sm=mshrs_per_sm,
            params=self.params)

    def load(self, sectors, now, sm=0, use_l1=True, data_bytes=-1):
        array = np.asarray(sectors, dtype=np.int64)
        return global_load(array, len(sectors), sm, now, use_l1, self.l1, self.l2, self.servers, self.mshr,
                           self.params, self.rates, self.counters, data_bytes)

    def store(self, sectors, now, sm=0, partial=None):
        array = np.asarray(sectors, dtype=np.int64)
        flags = np.zeros(len(sectors), dtype=np.int64) if partial is None else np.asarray(partial, dtype=np.int64)
        return global_store(array, len(sectors), sm, now, self.l1, self.l2, self.servers, self.params,
                            self.rates, self.counters, flags)

    def atomic(self, sectors, ops, now, sm=0):
        return global_atomic(np.asarray(sectors, dtype=np.int64), np.asarray(ops, dtype=np.int64),
                             len(sectors), sm, now, self.l2, self.servers, self.params, self.rates,
                             self.counters)


def test_pointer_chase_sees_exactly_the_configured_latencies():
    memory = Memory()
    sector = 1 << 20
    assert memory.load([sector], 100) == (100 + DRAM_LATENCY, 0)
    later = 100 + DRAM_LATENCY + 5
    assert memory.load([sector], later) == (later + L1_LATENCY, 0)
    cache_invalidate_partition(memory.l1, 0)
    again = later + 1000
    assert memory.load([sector], again) == (again + L2_LATENCY, 0)
    assert memory.counters[C_DRAM_READ_BYTES] == SECTOR
    assert memory.counters[C_L1_HIT_SECTORS] == 1 and memory.counters[C_L1_MISS_SECTORS] == 2
    assert memory.counters[C_L2_HIT_SECTORS] == 1 and memory.counters[C_L2_MISS_SECTORS] == 1


def test_other_sm_misses_its_own_l1_but_hits_l2():
    memory = Memory()
    memory.load([4096], 0, sm=0)
    assert memory.load([4096], 5000, sm=1) == (5000 + L2_LATENCY, 0)


def test_bypassing_l1_goes_to_l2():
    memory = Memory()
    memory.load([4096], 0)
    assert memory.load([4096], 5000, use_l1=False) == (5000 + L2_LATENCY, 0)


def test_hit_on_in_flight_fill_waits_for_the_fill():
    memory = Memory()
    assert memory.load([8192], 0)[0] == DRAM_LATENCY
    assert memory.load([8192], 10)[0] == max(10 + L1_LATENCY, DRAM_LATENCY)
    assert memory.counters[C_DRAM_READ_BYTES] == SECTOR  # merged, not refetched


def test_stream_through_one_channel_runs_at_its_rate():
    memory = Memory(l2_slices=1, dram_channels=1, mshrs_per_sm=4096)  # enough MSHRs not to throttle
    rate = memory.rates[R_DRAM_BYTES_PER_CYCLE_PER_CHANNEL]
    assert rate == pytest.approx(32.0 * 1e9 / 1000e6)    # the peak: 32 GB/s at 1 GHz, one channel
    requests = 200
    completions = [memory.load([line * LINE + k * SECTOR for k in range(4)], 0)[0]
                   for line in range(requests)]
    # sector i of the stream crosses the bus during [i, i + 1) * 32 / rate; its data is usable the fixed
    # latency (DRAM_LATENCY - one burst) after that, rounded up to a whole cycle
    total_sectors = 4 * requests
    assert completions[-1] == ceil(total_sectors * SECTOR / rate - SECTOR / rate + DRAM_LATENCY - 1e-9)
    assert memory.counters[C_DRAM_READ_BYTES] == total_sectors * SECTOR


@pytest.mark.parametrize("chains", [8, 200, 1000])
def test_littles_law(chains):
    """N dependent chains in flight: throughput = min(N * bytes / latency, rate)."""
    memory = Memory(l2_slices=1, dram_channels=1, mshrs_per_sm=4096)
    rate = memory.rates[R_DRAM_BYTES_PER_CYCLE_PER_CHANNEL]
    rounds = 40
    pending = [(0, chain, 0) for chain in range(chains)]  # (issue cycle, chain, round)
    heapq.heapify(pending)
    finish = 0
    while pending:
        now, chain, round_index = heapq.heappop(pending)
        address = ((round_index * chains + chain) * LINE)
        done, _ = memory.load([address], now)
        finish = max(finish, done)
        if round_index + 1 < rounds:
            heapq.heappush(pending, (done, chain, round_index + 1))
    throughput = chains * rounds * SECTOR / finish
    expected = min(chains * SECTOR / DRAM_LATENCY, rate)
    assert throughput == pytest.approx(expected, rel=0.03)


def test_mshr_limit_throttles_and_reports_the_wait():
    mshrs = 4
    memory = Memory(mshrs_per_sm=mshrs, dram_bandwidth_gbs=FAST)  # only the MSHRs limit
    sectors = [line * LINE + k * SECTOR for line in range(2) for k in range(4)]  # 8 cold sectors
    completion, wait = memory.load(sectors, 0)
    # the first 4 sectors hold every MSHR until DRAM_LATENCY; the rest are issued then
    assert wait == DRAM_LATENCY
    assert completion == 2 * DRAM_LATENCY
    assert memory.counters[C_MSHR_WAIT_CYCLES] == DRAM_LATENCY
    assert memory.load([1 << 24], 2 * DRAM_LATENCY) == (3 * DRAM_LATENCY, 0)


def test_mshr_limit_bounds_memory_parallelism():
    """With M MSHRs and a fast channel, M single-sector chains' worth of misses are in flight at once."""
    mshrs = 16
    memory = Memory(mshrs_per_sm=mshrs, dram_bandwidth_gbs=FAST)
    requests = 4 * mshrs
    completions = [memory.load([k * LINE], 0)[0] for k in range(requests)]
    # request k leaves the L1TEX tag stage at cycle k (one line: one tag wavefront each) and then waits for
    # the (k // mshrs)-th wave of misses to drain: the slot of request k - mshrs frees at its completion
    assert completions == [(k // mshrs + 1) * DRAM_LATENCY + k % mshrs for k in range(requests)]


@pytest.mark.parametrize("slots", [1, 2, 8, 9, 37, 73, 1024])
def test_mshr_heap_always_hands_out_the_earliest_free_slot(slots):
    """The per-SM MSHR heap against a sorted list: after every replacement the root is the earliest
    free cycle and the slots hold exactly the reference multiset (heap depths 1 to 4 for 8 children)."""
    rng = np.random.default_rng(slots)
    heaps = np.zeros((2, slots), dtype=np.int64)
    reference = [0] * slots
    for now in range(0, 40 * slots, 7):
        busy_until = now + int(rng.integers(1, 900))
        replace_earliest_mshr(heaps, 1, busy_until)
        reference.remove(min(reference))
        reference.append(busy_until)
        assert heaps[1, 0] == min(reference)
        assert sorted(heaps[1]) == sorted(reference)
    assert not heaps[0].any()   # another SM's slots are untouched


def test_store_is_write_back_write_allocate_without_dram_read():
    memory = Memory()
    sector = 3 * LINE
    assert memory.store([sector], 50) == 50
    assert memory.load([sector], 100) == (100 + L2_LATENCY, 0)  # L1 did not allocate; L2 has it
    assert memory.counters[C_DRAM_READ_BYTES] == 0


def test_dirty_eviction_writes_back_to_dram():
    assoc = 2
    memory = Memory(l2_slices=1, l2_bytes=assoc * LINE, l2_assoc=assoc)  # one set
    for line in range(assoc + 1):
        memory.store([line * LINE + k * SECTOR for k in range(4)], 10 * line)
    assert memory.counters[C_DRAM_WRITE_BYTES] == 4 * SECTOR  # the first line, all four sectors dirty
    assert memory.counters[C_DRAM_READ_BYTES] == 0


def test_partial_sectors_occupy_their_slice_at_the_partial_store_rate():
    # one slice, 32 B per cycle for whole sectors and 16 for partial ones: 8 stores back to back into one slice
    # are accepted one sector-time apart (1 or 2 cycles), the partial ones counted
    for partial, spacing in ((0, 1), (1, 2)):
        memory = Memory(l2_slices=1, l2_write_rate=32.0, l2_partial_rate=16.0)
        accepted = [memory.store([k * SECTOR], 0, partial=[partial]) for k in range(8)]
        assert np.diff(accepted).tolist() == [spacing] * 7
        assert memory.counters[C_L2_PARTIAL_STORE_SECTORS] == 8 * partial
        assert memory.counters[C_L2_STORE_SECTORS] == 8


def test_store_through_l1_updates_present_sector():
    memory = Memory()
    memory.load([0], 0)
    memory.store([0], DRAM_LATENCY + 1)
    assert memory.load([0], 2000) == (2000 + L1_LATENCY, 0)


@pytest.mark.parametrize("ops, atomic_rate", [(1, 1.0), (32, 1.0), (32, 2.0), (5, 4.0)])
def test_atomic_executes_at_l2_with_its_own_throughput(ops, atomic_rate):
    memory = Memory(atomic_rate=atomic_rate)
    memory.store([LINE], 0)  # make the sector L2-resident
    # the first operation is inside the L2 latency; the unit needs ceil(ops / rate) cycles in all
    assert memory.atomic([LINE], [ops], 1000) == 1000 + L2_LATENCY + ceil(ops / atomic_rate) - 1


def test_cold_atomic_reads_dram():
    memory = Memory()
    assert memory.atomic([LINE], [1], 0) == DRAM_LATENCY


def test_hashes_spread_power_of_two_strides():
    slices, channels = 8, 16
    for stride_lines in (1, 2, 8, 64, 1024):
        lines = [k * stride_lines * LINE for k in range(512)]
        assert len({l2_slice_of(line, LINE, slices) for line in lines}) == slices
        assert len({dram_channel_of(line, 256, channels) for line in lines}) == channels



def test_the_l2_state_is_interleaved_by_the_slice_hash():
    # the L2 cache indexes a slice's sets by the line's rank in that slice, which is only right if the cache
    # and the memory path agree on the slice of every line; a line is then found in the set it was filled to
    slices, sets_per_slice = 5, 64
    memory = Memory(l2_slices=slices, l2_bytes=slices * sets_per_slice * 16 * LINE)
    lines = [k * 37 * LINE for k in range(2000)] + [(1 << 32) + k * 2048 for k in range(2000)]
    used = set()
    for line in lines:
        l2_slice = l2_slice_of(line, LINE, slices)
        assert cache_partition_of(memory.l2, line) == l2_slice
        set_index = cache_set_index(memory.l2, l2_slice, line)
        assert l2_slice * sets_per_slice <= set_index < (l2_slice + 1) * sets_per_slice
        used.add(set_index)
    assert len(used) == slices * sets_per_slice  # 4000 lines reach every set of every slice
    memory.load([(1 << 32) + 2048], 0)
    assert memory.load([(1 << 32) + 2048], 10_000, sm=1)[0] == 10_000 + L2_LATENCY  # the other SM hits L2

def test_deterministic():
    def run_once():
        memory = Memory(l1_rate=128.0, icnt_rate=32.0, l2_rate=256.0, mshrs_per_sm=8)
        rng = np.random.default_rng(7)
        results = []
        for step in range(300):
            sectors = sorted({int(x) * SECTOR for x in rng.integers(0, 4096, size=6)})
            if step % 3 == 0:
                results.append(memory.store(sectors, step * 3))
            else:
                results.append(memory.load(sectors, step * 3, sm=step % 2))
        return results, memory.counters.tolist()

    assert run_once() == run_once()


def test_counters_declared_once_with_units():
    indices = [index for index, _, _ in COUNTERS.values()]
    assert sorted(indices) == list(range(N_COUNTERS))
    assert all(unit and meaning for _, unit, meaning in COUNTERS.values())


def test_impossible_parameters_are_config_errors():
    with pytest.raises(ConfigError):
        Memory(dram_bandwidth_gbs=-1.0)
    with pytest.raises(ConfigError):
        Memory(l2_slices=0)


@pytest.mark.parametrize("lines,tags", [(1, 4), (4, 4), (5, 4), (32, 4), (32, 1), (7, 2)])
def test_tag_stage_takes_ceil_lines_over_tags_per_cycle(lines, tags):
    """Requests touching N distinct lines (one sector each, L1 hits) issued together leave the L1TEX
    pipeline ceil(N / tags) cycles apart; the last sector of the last one is served at the end of its share."""
    memory = Memory(l1_tags=tags)
    sectors = [line * LINE for line in range(lines)]
    memory.load(sectors, 0)                                    # bring the lines into L1
    start = 10 * DRAM_LATENCY
    requests = 6
    completions = [memory.load(sectors, start)[0] for _ in range(requests)]
    occupancy = ceil(lines / tags)
    last_slot = (requests - 1) * occupancy + floor((lines - 1) * occupancy / lines)
    assert completions[-1] == start + last_slot + L1_LATENCY
    assert memory.counters[C_L1_HIT_SECTORS] == requests * lines


@pytest.mark.parametrize("wavefronts", [1, 8, 32])
def test_data_stage_bank_wavefronts_bound_the_request(wavefronts):
    """The caller's data-stage wavefronts (x 128 B at l1_bytes_per_cycle_per_sm) occupy the pipeline when they
    exceed the tag stage: one line with 32-way bank conflicts costs 32 cycles, not ceil(1 / tags)."""
    rate = 128.0
    memory = Memory(l1_rate=rate)
    memory.load([0], 0)
    start = 10 * DRAM_LATENCY
    done = [memory.load([0], start, data_bytes=wavefronts * 128)[0] for _ in range(4)]
    assert done[-1] == start + 3 * max(1, wavefronts * 128 / rate) + L1_LATENCY


def test_a_miss_waiting_for_an_mshr_stalls_the_l1tex_pipeline():
    """The L1TEX pipeline is in order: an L1 hit issued behind a request whose miss waits for an MSHR leaves
    the pipeline only after that wait (one tag cycle each)."""
    mshrs = 4
    memory = Memory(mshrs_per_sm=mshrs, dram_bandwidth_gbs=FAST)
    memory.load([1 << 24], 0)                                   # a line to hit later
    start = 10 * DRAM_LATENCY
    cold = [line * LINE + k * SECTOR for line in range(2) for k in range(4)]   # 8 misses, 4 MSHRs
    _, wait = memory.load(cold, start)
    assert wait == DRAM_LATENCY                                 # sectors 4..7 wait for the first wave
    hit_done, hit_wait = memory.load([1 << 24], start)
    assert hit_wait == 0
    assert hit_done == start + 1 + wait + L1_LATENCY            # behind 1 tag cycle and the stalled wait
