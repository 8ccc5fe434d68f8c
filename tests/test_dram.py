"""The DRAM bank model against the datasheet timing in the configs: row-hit streams reach one burst per
tCCD, row conflicts pay tRP + tRCD, a bank cycles no faster than tRAS + tRP, write batches pay the bus
turnarounds, refresh closes rows and blocks its window, FR-FCFS groups row hits, and loaded latency grows
with load. Every expected value is computed from the config's fields, never taken from a run."""

import math

import numpy as np
import pytest

from gpusim.arch.config import load_config
from gpusim.engine.memory.dram import (
    CH_ROW_CONFLICTS,
    CH_ROW_EMPTY,
    CH_ROW_HITS,
    G_WRITE_BATCH,
    T_BURST,
    T_CCD_L,
    T_CCD_S,
    T_FIXED,
    T_RAS,
    T_RCD,
    T_REFI,
    T_RFC,
    T_RP,
    T_RTW,
    T_WTR,
    dram_access,
    dram_completion_cycle,
    dram_decode,
)
from gpusim.engine.memory.dram_setup import (
    dram_params_from_config,
    make_dram_params,
    make_dram_state,
    parse_address_map,
)
from gpusim.errors import ConfigError

INTERLEAVE = 256
CONFIGS = ["v100", "a100", "h100-sxm", "h200", "a6000", "rtx4090"]


class Dram:
    """One channel of a config's DRAM (so a channel-local address is the address itself)."""

    def __init__(self, name="h100-sxm", refresh=False, **overrides):
        chip = load_config(name)
        self.config = load_config(name, dram_channels=1, **overrides,
                                  dram_bandwidth_gbs=chip.dram_bandwidth_gbs / chip.dram_channels)
        if not refresh:
            self.config = self.config.replace(dram_trefi_ns=0.0)
        self.geometry, self.timing = dram_params_from_config(self.config, INTERLEAVE)
        self.state = make_dram_state(self.geometry)
        c = self.config
        self.groups, self.banks_per_group = c.dram_bank_groups, c.dram_banks_per_group
        self.columns_per_row = c.dram_row_bytes // INTERLEAVE     # interleave blocks per row

    def address(self, *, group=0, bank=0, row=0, block=0, burst=0):
        """The address of a burst in bank ``bank`` of bank group ``group``, built from the config's map
        'row:column:bank:bankgroup' and the rotation of the bank by the row (dram docstring)."""
        assert self.config.dram_address_map == "row:column:bank:bankgroup"
        banks = self.groups * self.banks_per_group
        logical_group, logical_bank = divmod((group * self.banks_per_group + bank - row) % banks,
                                             self.banks_per_group)
        index = ((row * self.columns_per_row + block) * self.banks_per_group + logical_bank) * self.groups \
            + logical_group
        return index * INTERLEAVE + burst * self.config.sector_bytes

    def access(self, address, arrival, write=False):
        return dram_access(*self.state, self.geometry, self.timing, address, arrival, write)

    def counts(self):
        channel = self.state[0]
        return int(channel[CH_ROW_HITS]), int(channel[CH_ROW_EMPTY]), int(channel[CH_ROW_CONFLICTS])


def test_timing_is_the_config_converted_to_core_cycles():
    dram = Dram()
    c = dram.config
    per_ns = c.core_clock_mhz / 1000
    burst = c.sector_bytes / c.dram_bytes_per_cycle_per_channel
    assert dram.timing[T_RCD] == pytest.approx(c.dram_trcd_ns * per_ns)
    assert dram.timing[T_RP] == pytest.approx(c.dram_trp_ns * per_ns)
    assert dram.timing[T_BURST] == pytest.approx(burst)
    assert dram.timing[T_CCD_L] == pytest.approx(c.dram_tccd_l_bursts * burst)
    assert dram.timing[T_FIXED] == pytest.approx(c.dram_latency_cycles - (c.dram_trp_ns + c.dram_trcd_ns) * per_ns
                                                 - burst)


def test_address_map_decodes_by_the_configured_fields():
    dram = Dram()
    banks = dram.groups * dram.banks_per_group
    for group, bank, row, block in [(0, 0, 0, 0), (3, 2, 7, 1), (7, 3, 12345, 3)]:
        address = dram.address(group=group, bank=bank, row=row, block=block, burst=5)
        assert tuple(dram_decode(address, dram.geometry)) == (0, group, group * dram.banks_per_group + bank, row)
    # rows at a power-of-two pitch in the same logical bank land in different banks
    pitch = dram.config.dram_row_bytes * banks
    assert len({dram_decode(k * pitch, dram.geometry)[2] for k in range(banks)}) == banks
    assert parse_address_map("row:bankgroup:bank:column") == [0, 2, 1, 3]     # least significant first
    for wrong in ["row:bank:column", "column:row:bank:bankgroup", "row:bank:bank:column"]:
        with pytest.raises(ConfigError, match="dram_address_map"):
            load_config("h100-sxm", dram_address_map=wrong)


@pytest.mark.parametrize("name", CONFIGS)
def test_row_hits_in_one_bank_group_run_at_one_burst_per_tccd_l(name):
    dram = Dram(name)
    n = dram.config.dram_row_bytes // dram.config.sector_bytes          # every burst of one row
    done = [dram.access(dram.address(block=k // 8, burst=k % 8), 0.0) for k in range(n)]
    # the bank was closed: ACT at 0, first column at tRCD; column slots are work-conserving from the
    # arrival (module docstring), so burst k issues at max(tRCD, k x tCCD_L)
    spacing = max(dram.timing[T_CCD_L], dram.timing[T_CCD_S])
    assert (n - 1) * spacing > dram.timing[T_RCD]
    assert done[-1] == pytest.approx((n - 1) * spacing + dram.timing[T_BURST])
    assert dram.counts() == (n - 1, 1, 0)


@pytest.mark.parametrize("name", CONFIGS)
def test_row_hits_alternating_bank_groups_reach_one_burst_per_tccd_s(name):
    dram = Dram(name)
    groups = dram.groups
    n = 16 * groups
    done = [dram.access(dram.address(group=k % groups, burst=(k // groups) % 8), 0.0) for k in range(n)]
    # each bank group's bursts stay tCCD_L apart; with more groups than tCCD_L / tCCD_S the bus binds
    assert groups * dram.timing[T_CCD_S] >= dram.timing[T_CCD_L]
    assert (n - 1) * dram.timing[T_CCD_S] > dram.timing[T_RCD]
    assert done[-1] == pytest.approx((n - 1) * dram.timing[T_CCD_S] + dram.timing[T_BURST])


@pytest.mark.parametrize("name", CONFIGS)
def test_isolated_row_conflict_pays_trp_plus_trcd(name):
    dram = Dram(name)
    t = dram.timing
    first = dram.access(dram.address(row=1), 0.0)
    assert first == pytest.approx(t[T_RCD] + t[T_BURST])                    # closed bank: ACT, tRCD
    late = float(math.ceil(10 * (t[T_RAS] + t[T_RP] + t[T_RCD])))            # long after: tRAS is met
    conflict = dram.access(dram.address(row=2), late)
    assert conflict - late == pytest.approx(t[T_RP] + t[T_RCD] + t[T_BURST])
    hit = dram.access(dram.address(row=2, burst=1), 2 * late)
    assert hit - 2 * late == pytest.approx(t[T_BURST])
    # the load-to-use latency of the conflict is the config's DRAM latency
    assert dram_completion_cycle(int(late), conflict, t) == int(late) + dram.config.dram_latency_cycles
    assert dram.counts() == (1, 1, 1)


def test_all_row_conflicts_in_one_bank_cycle_at_tras_plus_trp():
    dram = Dram("h100-sxm")
    t = dram.timing
    n = 12
    done = [dram.access(dram.address(row=k), 0.0) for k in range(n)]
    assert t[T_RAS] > t[T_RCD] + t[T_BURST]          # so tRAS, not the last column, sets the precharge
    gaps = np.diff(done)
    assert gaps == pytest.approx(np.full(n - 1, t[T_RAS] + t[T_RP]))
    assert dram.counts() == (0, 1, n - 1)


@pytest.mark.parametrize("name", CONFIGS)
def test_a_write_batch_drains_at_once_and_reads_wait_for_it(name):
    """Writes are buffered until a batch is full; then the batch drains back to back (tRTW, one column slot
    each, tWTR) and a read arriving during the drain waits for all of it."""
    dram = Dram(name)
    t = dram.timing
    batch = int(dram.geometry[G_WRITE_BATCH])
    groups = dram.groups
    reads = 64

    def address(k):
        return dram.address(group=k % groups, burst=(k // groups) % 8)

    def read_after(writes):
        state = make_dram_state(dram.geometry)
        for k in range(reads):                       # the rows the writes use are open: only the bus counts
            dram_access(*state, dram.geometry, dram.timing, address(k), 0.0, False)
        accepted = [dram_access(*state, dram.geometry, dram.timing, address(reads + k), 0.0, True)
                    for k in range(writes)]
        assert accepted == [0.0] * writes           # the controller's buffer takes them at once
        return dram_access(*state, dram.geometry, dram.timing, address(reads + writes), 0.0, False)
    assert read_after(batch - 1) == pytest.approx(read_after(0))       # buffered: the bus is untouched
    assert read_after(batch) - read_after(0) == pytest.approx(batch * t[T_CCD_S] + t[T_RTW] + t[T_WTR])


@pytest.mark.parametrize("name", ["h200", "a100"])
def test_writes_wait_once_two_batches_are_pending(name):
    """One batch drains while the next fills: a write finding both taken is accepted when the first drain ends."""
    dram = Dram(name)
    t = dram.timing
    batch = int(dram.geometry[G_WRITE_BATCH])
    accepted = [dram.access(dram.address(group=k % dram.groups, burst=(k // dram.groups) % 8), 0.0, write=True)
                for k in range(2 * batch + 1)]
    assert accepted[:2 * batch] == [0.0] * (2 * batch)
    # the first drain (rows closed: the first write to each bank activates it) ends after tRTW, the batch's
    # column slots and tWTR, and no earlier than its first activation + tRCD + a burst
    first_drain = max(t[T_RTW] + batch * t[T_CCD_S], t[T_RTW] + t[T_RCD] + t[T_BURST]) + t[T_WTR]
    assert accepted[-1] >= first_drain - 1e-9
    assert accepted[-1] <= first_drain + t[T_RCD] + t[T_BURST]


def test_refresh_blocks_its_window_and_closes_the_row():
    dram = Dram("h100-sxm", refresh=True, dram_refresh="per_bank", dram_trfc_ns=200.0)
    t = dram.timing
    banks = dram.groups * dram.banks_per_group
    bank = 5
    group, bank_in_group = divmod(bank, dram.banks_per_group)      # bank index = group * banks_per_group + bank
    address = dram.address(group=group, bank=bank_in_group, row=3)
    window = t[T_REFI] * (1 + bank / banks)                          # the bank's first refresh
    assert dram.access(dram.address(group=group, bank=bank_in_group, row=9), 1.0) < t[T_RCD] + 2 * t[T_BURST]
    dram.access(address, window - 10 * t[T_RAS])                   # opens row 3 before the refresh
    inside = window + t[T_RFC] / 2
    done = dram.access(address, inside)
    # the refresh closed row 3: the access waits for the window's end, then activates again
    assert done == pytest.approx(window + t[T_RFC] + t[T_RCD] + t[T_BURST])
    assert dram.counts() == (0, 2, 1)


def test_all_bank_refresh_idles_the_channel_for_trfc_of_every_trefi():
    """A sequential read stream offered all at once: under per-bank refresh the other banks hide each window;
    under all-bank refresh the channel's bus carries nothing for tRFC of every tREFI, so the stream takes
    1 / (1 - tRFC / tREFI) as long (the config's dram_efficiency factor)."""
    finish = {}
    for mode in ("per_bank", "all_bank"):
        dram = Dram("h200", refresh=True, dram_refresh=mode, dram_trfc_ns=350.0)
        t = dram.timing
        bursts = int(40 * t[T_REFI] / t[T_BURST])                  # ~40 refresh intervals of data
        finish[mode] = max(dram.access(k * dram.config.sector_bytes, 0.0) for k in range(bursts))
        assert dram.config.dram_refresh == mode
    loss = 350.0 / dram.config.dram_trefi_ns
    assert finish["all_bank"] / finish["per_bank"] == pytest.approx(1.0 / (1.0 - loss), rel=0.02)
    assert load_config("h200", dram_refresh="all_bank").dram_efficiency == pytest.approx(
        load_config("h200", dram_refresh="per_bank").dram_efficiency * (1.0 - load_config("h200").dram_trfc_ns
                                                                       / load_config("h200").dram_trefi_ns))


def test_fr_fcfs_serves_queued_row_hits_before_reopening():
    dram = Dram("h100-sxm")
    n = 8
    for k in range(n):                  # two rows of one bank, interleaved, all queued at once
        dram.access(dram.address(row=1, burst=k), 0.0)
        dram.access(dram.address(row=2, burst=k), 0.0)
    # row 1 opens, row 2 closes it once; every later request finds its row open or queued
    assert dram.counts() == (2 * n - 2, 1, 1)


def test_without_a_scheduler_window_rows_ping_pong():
    dram = Dram("h100-sxm", dram_queue_depth=1)
    n = 8
    for k in range(n):
        dram.access(dram.address(row=1, burst=k), 0.0)
        dram.access(dram.address(row=2, burst=k), 0.0)
    hits, empty, conflicts = dram.counts()
    assert (empty, conflicts) == (1, 2 * n - 1)


def test_loaded_latency_grows_with_load_and_throughput_saturates():
    """Random reads over a channel at rising offered load: latency rises, throughput stays under the peak
    (per-bank refresh, which the other banks hide, so light load costs about one row conflict)."""
    dram = Dram("h100-sxm", refresh=True, dram_refresh="per_bank", dram_trfc_ns=200.0)
    t = dram.timing
    rng = np.random.default_rng(7)
    results = []
    for load in (0.1, 0.5, 0.9, 1.5):
        state = make_dram_state(dram.geometry)
        n = 4000
        spacing = t[T_BURST] / load
        addresses = rng.integers(0, 1 << 30, n) // 32 * 32
        latencies, last = [], 0.0
        for k in range(n):
            arrival = k * spacing
            done = dram_access(*state, dram.geometry, dram.timing, int(addresses[k]), arrival, False)
            latencies.append(done - arrival)
            last = max(last, done)
        results.append((float(np.mean(latencies)), n * t[T_BURST] / last))
    means = [mean for mean, _ in results]
    assert means == sorted(means) and means[-1] > 3 * means[0]
    assert all(share <= 1.0 for _, share in results)
    assert results[0][0] < 1.25 * (t[T_RP] + t[T_RCD] + t[T_BURST])   # light load: about one conflict each


def test_ideal_timing_is_a_constant_rate_server():
    geometry, timing = make_dram_params(
        channels=1, bank_groups=1, banks_per_group=1, burst_bytes=32, row_bytes=256, interleave_bytes=256,
        queue_depth=1, write_batch=1, address_map="row:bank:column:bankgroup", clock_mhz=1000.0,
        bytes_per_cycle_per_channel=8.0,
        trcd_ns=0.0, trp_ns=0.0, tras_ns=0.0, tccd_s_bursts=1.0, tccd_l_bursts=1.0, twtr_ns=0.0, trtw_ns=0.0,
        trefi_ns=0.0, trfc_ns=0.0, latency_cycles=100)
    state = make_dram_state(geometry)
    done = [dram_access(*state, geometry, timing, k * 4096, 0.0, False) for k in range(10)]
    assert done == pytest.approx([4.0 * (k + 1) for k in range(10)])


@pytest.mark.parametrize("name", CONFIGS)
def test_derived_efficiency_is_the_bus_and_activation_bound(name):
    c = load_config(name)
    burst_ns = c.sector_bytes / (c.dram_bandwidth_gbs / c.dram_channels)
    activations = c.dram_bank_groups * c.dram_banks_per_group * (c.dram_row_bytes / c.sector_bytes) * burst_ns \
        / (c.dram_tras_ns + c.dram_trp_ns)
    refresh = 1.0 - c.dram_trfc_ns / c.dram_trefi_ns if c.dram_refresh == "all_bank" else 1.0
    assert c.dram_efficiency == pytest.approx(min(1.0, 1.0 / c.dram_tccd_s_bursts) * min(1.0, activations) * refresh)
    # a part with one bank of 256-byte rows is activation-bound: eight bursts per tRAS + tRP
    small = load_config(name, dram_bank_groups=1, dram_banks_per_group=1, dram_row_bytes=256)
    assert small.dram_efficiency == pytest.approx(8 * burst_ns / (c.dram_tras_ns + c.dram_trp_ns) * refresh)


def test_impossible_dram_fields_are_config_errors():
    with pytest.raises(ConfigError, match="dram_trfc_ns"):
        load_config("h100-sxm", dram_trfc_ns=5000.0)
    with pytest.raises(ConfigError, match="dram_refresh"):
        load_config("h100-sxm", dram_refresh="sometimes")
    with pytest.raises(ConfigError, match="dram_latency_cycles"):
        load_config("h100-sxm", dram_latency_cycles=20)
    with pytest.raises(ConfigError, match="dram_row_bytes"):
        load_config("h100-sxm", dram_row_bytes=1000)
    assert math.isfinite(load_config("h100-sxm").dram_efficiency)
