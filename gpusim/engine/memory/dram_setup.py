"""Building a DRAM: its geometry and timing from config fields, and its idle state (``dram``'s layouts).

``make_dram_params`` converts the config's organisation and ns timings into ``(geometry, timing)``;
``ideal_dram_params`` is the DRAM with no bank, row or refresh timing; ``make_dram_state`` allocates the channel,
bank, bank-group and scheduler state ``dram.dram_access`` updates.
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.memory.dram import (
    BK_FIELDS,
    BK_REFRESH,
    BK_ROW,
    CH_FIELDS,
    G_BANK_GROUPS,
    G_BANKS_PER_GROUP,
    G_BURST_BYTES,
    G_CHANNELS,
    G_INTERLEAVE_BYTES,
    G_MAP,
    G_QUEUE_DEPTH,
    G_REFRESH_ALL,
    G_ROW_BURSTS,
    G_WRITE_BATCH,
    MAP_FIELDS,
    N_GEOMETRY,
    N_TIMING,
    Q_FIELDS,
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
)
from gpusim.errors import ConfigError


def parse_address_map(text: str) -> list[int]:
    """Field codes, least significant first, of an address map written most significant first, e.g.
    ``"row:bank:column:bankgroup"``. Raises ValueError unless it names each field once with ``row`` first."""
    names = [part.strip() for part in text.split(":")]
    if sorted(names) != sorted(MAP_FIELDS) or names[0] != "row":
        raise ValueError(f"expected the fields {', '.join(sorted(MAP_FIELDS))} once each, separated by ':', "
                         f"most significant first and 'row' first (e.g. 'row:bank:column:bankgroup'); "
                         f"got {text!r}")
    return [MAP_FIELDS[name] for name in reversed(names)]


def make_dram_params(*, channels: int, bank_groups: int, banks_per_group: int, burst_bytes: int,
                     row_bytes: int, interleave_bytes: int, queue_depth: int, write_batch: int, address_map: str,
                     clock_mhz: float, bytes_per_cycle_per_channel: float, trcd_ns: float, trp_ns: float,
                     tras_ns: float, tccd_s_bursts: float, tccd_l_bursts: float, twtr_ns: float, trtw_ns: float,
                     trefi_ns: float, trfc_ns: float, latency_cycles: int, refresh_all_banks: bool = False):
    """``(geometry int64[N_GEOMETRY], timing float64[N_TIMING])`` from the config's DRAM fields.

    The burst lasts ``burst_bytes / bytes_per_cycle_per_channel`` core cycles (the channel's peak rate); the
    column spacings are given in bursts, so they scale with the rate; the rest converts from ns."""
    if row_bytes % interleave_bytes or interleave_bytes % burst_bytes:
        raise ConfigError(f"the row ({row_bytes} B) must be a whole number of interleave blocks "
                         f"({interleave_bytes} B), each a whole number of bursts ({burst_bytes} B)",
                          field="dram_row_bytes")
    geometry = np.zeros(N_GEOMETRY, dtype=np.int64)
    geometry[G_CHANNELS] = channels
    geometry[G_BANK_GROUPS] = bank_groups
    geometry[G_BANKS_PER_GROUP] = banks_per_group
    geometry[G_BURST_BYTES] = burst_bytes
    geometry[G_ROW_BURSTS] = row_bytes // burst_bytes
    geometry[G_INTERLEAVE_BYTES] = interleave_bytes
    geometry[G_QUEUE_DEPTH] = queue_depth
    geometry[G_WRITE_BATCH] = write_batch
    geometry[G_REFRESH_ALL] = 1 if refresh_all_banks else 0
    try:
        geometry[G_MAP:G_MAP + 4] = parse_address_map(address_map)
    except ValueError as error:
        raise ConfigError(str(error), field="dram_address_map") from None
    cycles_per_ns = clock_mhz / 1000.0
    burst = burst_bytes / bytes_per_cycle_per_channel
    timing = np.zeros(N_TIMING, dtype=np.float64)
    timing[T_RCD] = trcd_ns * cycles_per_ns
    timing[T_RP] = trp_ns * cycles_per_ns
    timing[T_RAS] = tras_ns * cycles_per_ns
    timing[T_BURST] = burst
    timing[T_CCD_S] = max(1.0, tccd_s_bursts) * burst
    timing[T_CCD_L] = max(1.0, tccd_l_bursts) * burst
    timing[T_WTR] = twtr_ns * cycles_per_ns
    timing[T_RTW] = trtw_ns * cycles_per_ns
    timing[T_REFI] = trefi_ns * cycles_per_ns
    timing[T_RFC] = trfc_ns * cycles_per_ns
    timing[T_FIXED] = latency_cycles - (timing[T_RP] + timing[T_RCD] + burst)
    if timing[T_FIXED] < 0:
        raise ConfigError(f"a row conflict alone takes tRP + tRCD + a burst = "
                         f"{timing[T_RP] + timing[T_RCD] + burst:.1f} cycles, more than the DRAM latency "
                         f"{latency_cycles}", field="dram_latency_cycles")
    if timing[T_REFI] > 0 and not timing[T_RFC] < timing[T_REFI]:
        raise ConfigError(f"tRFC ({trfc_ns} ns) must be shorter than tREFI ({trefi_ns} ns)", field="dram_trfc_ns")
    return geometry, timing


def ideal_dram_params(*, channels: int, burst_bytes: int, interleave_bytes: int, clock_mhz: float,
                      bytes_per_cycle_per_channel: float, latency_cycles: int):
    """A DRAM with no bank, row or refresh timing (one bank per channel, every timing 0): each channel is a
    server at its peak rate and every access costs ``latency_cycles``. For tests of the levels above."""
    return make_dram_params(channels=channels, bank_groups=1, banks_per_group=1, burst_bytes=burst_bytes,
                            row_bytes=interleave_bytes, interleave_bytes=interleave_bytes, queue_depth=1,
                            write_batch=1,
                            address_map="row:bank:column:bankgroup", clock_mhz=clock_mhz,
                            bytes_per_cycle_per_channel=bytes_per_cycle_per_channel, trcd_ns=0.0, trp_ns=0.0,
                            tras_ns=0.0, tccd_s_bursts=1.0, tccd_l_bursts=1.0, twtr_ns=0.0, trtw_ns=0.0,
                            trefi_ns=0.0, trfc_ns=0.0, latency_cycles=latency_cycles)


def dram_params_from_config(config, interleave_bytes: int):
    """``make_dram_params`` for a GPUConfig (its ``dram_*`` fields; the burst is one sector)."""
    return make_dram_params(
        channels=config.dram_channels, bank_groups=config.dram_bank_groups,
        banks_per_group=config.dram_banks_per_group, burst_bytes=config.sector_bytes,
        row_bytes=config.dram_row_bytes, interleave_bytes=interleave_bytes, queue_depth=config.dram_queue_depth,
        write_batch=config.dram_writes_per_turnaround,
        address_map=config.dram_address_map, clock_mhz=config.core_clock_mhz,
        bytes_per_cycle_per_channel=config.dram_bytes_per_cycle_per_channel, trcd_ns=config.dram_trcd_ns,
        trp_ns=config.dram_trp_ns, tras_ns=config.dram_tras_ns, tccd_s_bursts=config.dram_tccd_s_bursts,
        tccd_l_bursts=config.dram_tccd_l_bursts, twtr_ns=config.dram_twtr_ns, trtw_ns=config.dram_trtw_ns,
        trefi_ns=config.dram_trefi_ns, trfc_ns=config.dram_trfc_ns, latency_cycles=config.dram_latency_cycles,
        refresh_all_banks=config.dram_refresh == "all_bank")


def make_dram_state(geometry):
    """``(channels, banks, groups, queue)`` float64 state arrays of idle channels with every bank closed."""
    channels = int(geometry[G_CHANNELS])
    groups = int(geometry[G_BANK_GROUPS])
    banks = groups * int(geometry[G_BANKS_PER_GROUP])
    channel_state = np.zeros(channels * CH_FIELDS, dtype=np.float64)
    bank_state = np.zeros(channels * banks * BK_FIELDS, dtype=np.float64)
    bank_state[BK_ROW::BK_FIELDS] = -1.0
    bank_state[BK_REFRESH::BK_FIELDS] = -1.0
    group_state = np.zeros(channels * groups, dtype=np.float64)
    queue = np.full(channels * (int(geometry[G_QUEUE_DEPTH]) * Q_FIELDS + int(geometry[G_WRITE_BATCH])), -1.0,
                    dtype=np.float64)
    return channel_state, bank_state, group_state, queue
