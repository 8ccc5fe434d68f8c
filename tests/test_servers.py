"""Reservation servers: start = max(arrival, next_free), occupancy = bytes / rate, exact over long streams."""

from fractions import Fraction
from math import ceil, floor

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusim.engine.memory.servers import make_servers, server_queue_delay, server_reserve, servers_reset


def exact_reference(arrivals, transfer_bytes, bytes_per_cycle):
    """Exact rational FCFS server: (floor(start), ceil(done)) per transfer."""
    next_free = Fraction(0)
    rate = Fraction(bytes_per_cycle).limit_denominator(10**6)
    results = []
    for arrival, size in zip(arrivals, transfer_bytes, strict=True):
        start = max(Fraction(arrival), next_free)
        next_free = start + Fraction(size) / rate
        results.append((floor(start), ceil(next_free)))
    return results


def test_idle_server_starts_at_arrival_and_takes_bytes_over_rate():
    next_free = make_servers(3)
    start, done = server_reserve(next_free, 1, 100, 64, 16.0)
    assert (start, done) == (100, 100 + 64 // 16)
    assert next_free[0] == 0 and next_free[2] == 0


def test_back_to_back_stream_runs_at_the_rate():
    bytes_per_cycle = 12.0  # 32 B every 8/3 cycles: not representable exactly in binary
    count = 3000
    next_free = make_servers(1)
    results = [server_reserve(next_free, 0, 0, 32, bytes_per_cycle) for _ in range(count)]
    for index, (start, done) in enumerate(results):
        assert start == floor(Fraction(32 * index, 12))
        assert done == ceil(Fraction(32 * (index + 1), 12))


def test_arrival_after_idle_gap_does_not_queue():
    next_free = make_servers(1)
    server_reserve(next_free, 0, 0, 32, 32.0)
    assert server_queue_delay(next_free, 0, 50, 32, 32.0) == 0


def test_queue_delay_is_wait_behind_earlier_transfers():
    next_free = make_servers(1)
    server_reserve(next_free, 0, 10, 320, 32.0)  # busy 10..20
    assert server_queue_delay(next_free, 0, 12, 32, 32.0) == 20 - 12


def test_reset_makes_servers_idle():
    next_free = make_servers(2)
    server_reserve(next_free, 1, 0, 1000, 1.0)
    servers_reset(next_free)
    assert np.all(next_free == 0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 256)), min_size=1, max_size=60),
       st.sampled_from([1.0, 3.0, 7.5, 10.7, 32.0, 64.0]))
def test_matches_exact_rational_server(gaps_and_sizes, bytes_per_cycle):
    arrivals = np.cumsum([gap for gap, _ in gaps_and_sizes]).tolist()
    sizes = [size for _, size in gaps_and_sizes]
    next_free = make_servers(1)
    got = [server_reserve(next_free, 0, arrival, size, bytes_per_cycle)
           for arrival, size in zip(arrivals, sizes, strict=True)]
    assert got == exact_reference(arrivals, sizes, bytes_per_cycle)
