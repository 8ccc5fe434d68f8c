"""Bandwidth-limited reservation servers: the L1 data path, interconnect ports, L2 slices, DRAM channels.

What it models
    Every bandwidth-limited thing in the memory system is a *server* with a rate in bytes per cycle and a
    next-free time. A transfer that arrives at ``arrival_cycle`` starts at ``max(arrival, next_free)``,
    occupies the server for ``bytes / bytes_per_cycle`` cycles and pushes ``next_free`` to its end.
    Queueing delay, saturation at the rate and Little's law follow from this one rule. Fixed latencies are
    not part of a server; the caller adds them (see ``memsys``).

State layout
    ``next_free``: float64[count], the instant (in cycles, fractional) each server becomes free.

Choices and simplifications
    * Time inside a server is kept in float64 cycles so that a rate such as 10.7 bytes/cycle is honoured
      exactly over a long stream (a per-transfer rounding to whole cycles would turn 32 B at 64 B/cycle into
      a full cycle and halve the bandwidth). IEEE-754 double arithmetic without fast-math is deterministic
      for a fixed order of operations, so the same calls give the same results bit for bit.
    * The returned cycles are whole cycles: ``start_cycle`` is the cycle during which service begins
      (floor of the start instant, never earlier than the arrival) and ``done_cycle`` the first cycle by
      which the transfer has completed (ceiling of the end instant). Both are taken with a tolerance of
      ``ROUNDING_TOLERANCE_CYCLES`` so that an instant that is a whole cycle in exact arithmetic (say
      3 x 32 B at 12 B/cycle = 8) but came out as 7.999999999 after repeated additions still rounds to it.
    * Service is first-come-first-served in *call* order: a call whose arrival is earlier than an already
      reserved interval queues behind it (no back-filling of idle gaps). The engine calls in time order.
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.jit import engine_jit

ROUNDING_TOLERANCE_CYCLES = 1e-6


def make_servers(count: int) -> np.ndarray:
    """Return the state of ``count`` idle servers: next-free instants, float64[count], all 0."""
    if count < 1:
        raise ValueError(f"a server bank needs at least one server, got {count}")
    return np.zeros(count, dtype=np.float64)


@engine_jit(inline="always")
def server_reserve(next_free, index, arrival_cycle, transfer_bytes, bytes_per_cycle):
    """Reserve server ``index`` for one transfer.

    next_free        float64[count] next-free instants (updated in place)
    index            which server
    arrival_cycle    int cycle the transfer arrives at the server
    transfer_bytes   bytes moved (or operations, with ``bytes_per_cycle`` in operations per cycle)
    bytes_per_cycle  the server's rate, > 0

    Returns ``(start_cycle, done_cycle)``: the cycle service begins (>= arrival_cycle) and the first whole
    cycle by which the transfer is complete.
    """
    start = max(np.float64(arrival_cycle), next_free[index])
    done = start + transfer_bytes / bytes_per_cycle
    next_free[index] = done
    start_cycle = max(np.int64(arrival_cycle), np.int64(np.floor(start + ROUNDING_TOLERANCE_CYCLES)))
    return start_cycle, max(start_cycle, np.int64(np.ceil(done - ROUNDING_TOLERANCE_CYCLES)))


@engine_jit(inline="always")
def server_queue_delay(next_free, index, arrival_cycle, transfer_bytes, bytes_per_cycle):
    """Reserve like ``server_reserve`` and return only the queueing delay in whole cycles (>= 0)."""
    start_cycle, _ = server_reserve(next_free, index, arrival_cycle, transfer_bytes, bytes_per_cycle)
    return start_cycle - arrival_cycle


@engine_jit
def servers_reset(next_free):
    """Make every server idle again (next-free instant 0)."""
    for index in range(next_free.shape[0]):
        next_free[index] = 0.0
