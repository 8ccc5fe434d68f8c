"""Building an idle memory system: its parameters from config fields and its empty state.

``make_memsys_params`` packs the config's numbers into ``(params, rates)`` (the layouts ``memsys.PARAMS`` and
``memsys.RATES``); ``make_memsys_state`` and ``make_memsys_servers`` allocate the caches, servers, MSHRs and
counters ``memsys``'s timed functions update.
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.memory.cache import make_cache
from gpusim.engine.memory.dram_setup import ideal_dram_params, make_dram_state
from gpusim.engine.memory.memsys import (
    DRAM_INTERLEAVE_BYTES,
    N_COUNTERS,
    N_INT_PARAMS,
    N_RATE_PARAMS,
    P_DRAM_CHANNELS,
    P_DRAM_GEOMETRY,
    P_DRAM_INTERLEAVE_BYTES,
    P_DRAM_LATENCY_CYCLES,
    P_L1_LATENCY_CYCLES,
    P_L1_TAGS_PER_CYCLE,
    P_L2_LATENCY_CYCLES,
    P_L2_SLICES,
    P_LINE_BYTES,
    P_MSHRS_PER_SM,
    P_SECTOR_BYTES,
    R_ATOMIC_OPS_PER_CYCLE_PER_SLICE,
    R_DRAM_BYTES_PER_CYCLE_PER_CHANNEL,
    R_DRAM_TIMING,
    R_ICNT_BYTES_PER_CYCLE_PER_SM,
    R_L1_BYTES_PER_CYCLE_PER_SM,
    R_L2_BYTES_PER_CYCLE_PER_SLICE,
    R_L2_PARTIAL_WRITE_BYTES_PER_CYCLE_PER_SLICE,
    R_L2_WRITE_BYTES_PER_CYCLE_PER_SLICE,
)
from gpusim.engine.memory.servers import make_servers
from gpusim.errors import ConfigError


def make_memsys_params(*, sector_bytes: int, line_bytes: int, l1_latency_cycles: int, l2_latency_cycles: int,
                       dram_latency_cycles: int, l1_bytes_per_cycle_per_sm: float, l2_slices: int,
                       l2_bytes_per_cycle: float, dram_bandwidth_gbs: float,
                       dram_channels: int, clock_mhz: float, interconnect_bytes_per_cycle_per_sm: float,
                       mshrs_per_sm: int, atomic_l2_ops_per_cycle_per_slice: float, l1_tags_per_cycle: int,
                       dram_interleave_bytes: int = DRAM_INTERLEAVE_BYTES, dram=None,
                       l2_write_bytes_per_cycle: float | None = None,
                       l2_partial_write_bytes_per_cycle: float | None = None):
    """Pack config fields into ``(params int64[N_INT_PARAMS], rates float64[N_RATE_PARAMS])``.

    ``l2_bytes_per_cycle`` is the whole L2's rate (split evenly over slices; stores at ``l2_write_bytes_per_cycle``,
    default the same, and sectors a store writes only part of at ``l2_partial_write_bytes_per_cycle``, default the
    store rate); ``dram_bandwidth_gbs`` the
    peak of all channels in 1e9 bytes/s, converted to bytes per core cycle at ``clock_mhz`` and split evenly
    over channels. ``dram`` is the ``(geometry, timing)`` of ``dram_setup.make_dram_params`` (None: an ideal DRAM,
    ``dram_setup.ideal_dram_params``, whose channels stream at their peak and answer in ``dram_latency_cycles``).
    """
    positive = {"sector_bytes": sector_bytes, "line_bytes": line_bytes, "l2_slices": l2_slices,
                "dram_channels": dram_channels, "mshrs_per_sm": mshrs_per_sm, "clock_mhz": clock_mhz,
                "dram_interleave_bytes": dram_interleave_bytes, "l2_bytes_per_cycle": l2_bytes_per_cycle,
                "l1_bytes_per_cycle_per_sm": l1_bytes_per_cycle_per_sm,
                "dram_bandwidth_gbs": dram_bandwidth_gbs,
                "interconnect_bytes_per_cycle_per_sm": interconnect_bytes_per_cycle_per_sm,
                "atomic_l2_ops_per_cycle_per_slice": atomic_l2_ops_per_cycle_per_slice,
                "l1_tags_per_cycle": l1_tags_per_cycle}
    for name, value in positive.items():
        if not value > 0:
            raise ConfigError(f"must be > 0, got {value}", field=name)
    if not 0 < l1_latency_cycles <= l2_latency_cycles <= dram_latency_cycles:
        raise ConfigError("latencies must satisfy 0 < l1 <= l2 <= dram, got "
                          f"{l1_latency_cycles}, {l2_latency_cycles}, {dram_latency_cycles}",
                          field="l1_latency_cycles")
    params = np.zeros(N_INT_PARAMS, dtype=np.int64)
    params[P_SECTOR_BYTES] = sector_bytes
    params[P_LINE_BYTES] = line_bytes
    params[P_L1_LATENCY_CYCLES] = l1_latency_cycles
    params[P_L2_LATENCY_CYCLES] = l2_latency_cycles
    params[P_DRAM_LATENCY_CYCLES] = dram_latency_cycles
    params[P_L2_SLICES] = l2_slices
    params[P_DRAM_CHANNELS] = dram_channels
    params[P_DRAM_INTERLEAVE_BYTES] = dram_interleave_bytes
    params[P_MSHRS_PER_SM] = mshrs_per_sm
    params[P_L1_TAGS_PER_CYCLE] = l1_tags_per_cycle
    dram_bytes_per_cycle = dram_bandwidth_gbs * 1e9 / (clock_mhz * 1e6)
    if dram is None:
        dram = ideal_dram_params(channels=dram_channels, burst_bytes=sector_bytes,
                                 interleave_bytes=dram_interleave_bytes, clock_mhz=clock_mhz,
                                 bytes_per_cycle_per_channel=dram_bytes_per_cycle / dram_channels,
                                 latency_cycles=dram_latency_cycles)
    params[P_DRAM_GEOMETRY:] = dram[0]
    rates = np.zeros(N_RATE_PARAMS, dtype=np.float64)
    rates[R_L1_BYTES_PER_CYCLE_PER_SM] = l1_bytes_per_cycle_per_sm
    rates[R_ICNT_BYTES_PER_CYCLE_PER_SM] = interconnect_bytes_per_cycle_per_sm
    rates[R_L2_BYTES_PER_CYCLE_PER_SLICE] = l2_bytes_per_cycle / l2_slices
    rates[R_DRAM_BYTES_PER_CYCLE_PER_CHANNEL] = dram_bytes_per_cycle / dram_channels
    rates[R_ATOMIC_OPS_PER_CYCLE_PER_SLICE] = atomic_l2_ops_per_cycle_per_slice
    rates[R_L2_WRITE_BYTES_PER_CYCLE_PER_SLICE] = (l2_write_bytes_per_cycle or l2_bytes_per_cycle) / l2_slices
    rates[R_L2_PARTIAL_WRITE_BYTES_PER_CYCLE_PER_SLICE] = (l2_partial_write_bytes_per_cycle or l2_write_bytes_per_cycle
                                                           or l2_bytes_per_cycle) / l2_slices
    rates[R_DRAM_TIMING:] = dram[1]
    return params, rates


def make_memsys_servers(*, sms: int, l2_slices: int, params):
    """The ``servers`` tuple of an idle memory system (``params`` from ``make_memsys_params``)."""
    channels, banks, groups, queue = make_dram_state(params[P_DRAM_GEOMETRY:])
    return (make_servers(sms), make_servers(sms), make_servers(l2_slices), channels, make_servers(l2_slices),
            banks, groups, queue)


def make_memsys_state(*, sms: int, l1_bytes_per_sm: int, l1_assoc: int, l2_bytes: int, l2_assoc: int,
                      l2_slices: int, sector_bytes: int, line_bytes: int, mshrs_per_sm: int, params):
    """Build ``(l1, l2, servers, mshr_free_cycle, counters)`` for a GPU of ``sms`` SMs, all empty and idle
    (``params`` from ``make_memsys_params``: it sizes the DRAM state)."""
    l1 = make_cache(l1_bytes_per_sm, line_bytes, sector_bytes, l1_assoc, partitions=sms)
    l2 = make_cache(l2_bytes // l2_slices, line_bytes, sector_bytes, l2_assoc, partitions=l2_slices,
                    interleaved=True)
    servers = make_memsys_servers(sms=sms, l2_slices=l2_slices, params=params)
    mshr_free_cycle = np.zeros((sms, mshrs_per_sm), dtype=np.int64)
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    return l1, l2, servers, mshr_free_cycle, counters
