"""The coalescer: distinct sectors per warp access, checked against a brute-force set computation."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusim.engine.memory.coalesce import (
    MAX_SECTORS_PER_REQUEST,
    coalesce,
    count_lines,
    lanes_per_sector,
    make_sector_buffer,
    partial_sectors,
)

FULL_MASK = np.uint32(0xFFFFFFFF)


def reference_sectors(addresses, mask, access_bytes, sector_bytes):
    touched = set()
    for lane in range(32):
        if mask >> lane & 1:
            first = addresses[lane] // sector_bytes
            last = (addresses[lane] + access_bytes - 1) // sector_bytes
            touched.update(sector * sector_bytes for sector in range(first, last + 1))
    return sorted(touched)


def run(addresses, mask, access_bytes, sector_bytes=32, line_bytes=128):
    out = make_sector_buffer()
    n = coalesce(np.asarray(addresses, dtype=np.int64), np.uint32(mask), access_bytes, sector_bytes,
                 line_bytes, out)
    return out[:n].tolist()


def test_float_stride_sector_counts():
    base = 1 << 20
    for stride in (1, 2, 4, 8, 32):
        addresses = [base + 4 * stride * lane for lane in range(32)]
        # 32 lanes x 4 B spread over 32 * 4 * stride bytes; one sector per lane at most
        expected = min(32, (32 * 4 * stride) // 32)
        assert len(run(addresses, FULL_MASK, 4)) == expected


def test_fully_coalesced_warp_is_one_line_of_four_sectors():
    sectors = run([4096 + 4 * lane for lane in range(32)], FULL_MASK, 4)
    assert sectors == [4096, 4128, 4160, 4192]
    buffer = np.asarray(sectors, dtype=np.int64)
    assert count_lines(buffer, len(sectors), 128) == 1


def test_vector_access_wider_than_a_sector_spans_sectors():
    # 16-byte accesses on 8-byte sectors: each lane touches two sectors
    addresses = [16 * lane for lane in range(32)]
    assert run(addresses, FULL_MASK, 16, sector_bytes=8, line_bytes=64) == list(range(0, 512, 8))


def test_inactive_lanes_and_broadcast():
    assert run([0] * 32, 0, 4) == []
    assert run([1000] * 32, FULL_MASK, 8) == [992]
    assert run([32 * lane for lane in range(32)], 0b101, 4) == [0, 64]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 1 << 16), min_size=32, max_size=32), st.integers(0, 0xFFFFFFFF),
       st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([16, 32]))
def test_matches_reference(raw_addresses, mask, access_bytes, sector_bytes):
    addresses = [address - address % access_bytes for address in raw_addresses]  # natural alignment
    got = run(addresses, mask, access_bytes, sector_bytes)
    expected = reference_sectors(addresses, mask, access_bytes, sector_bytes)
    assert got == expected
    assert len(got) <= MAX_SECTORS_PER_REQUEST
    buffer = np.asarray(got + [0], dtype=np.int64)
    assert count_lines(buffer, len(got), 128) == len({sector // 128 for sector in expected})
    counts = np.zeros(MAX_SECTORS_PER_REQUEST, dtype=np.int64)
    lanes_per_sector(np.asarray(addresses, dtype=np.int64), np.uint32(mask), access_bytes, buffer, len(got),
                     sector_bytes, counts)
    for index, sector in enumerate(got):
        lanes = sum(1 for lane in range(32) if mask >> lane & 1
                    and addresses[lane] < sector + sector_bytes and addresses[lane] + access_bytes > sector)
        assert counts[index] == lanes
    flags = np.zeros(MAX_SECTORS_PER_REQUEST, dtype=np.int64)
    partial = partial_sectors(np.asarray(addresses, dtype=np.int64), np.uint32(mask), access_bytes, buffer,
                              len(got), sector_bytes, flags)
    for index, sector in enumerate(got):
        written = {byte for lane in range(32) if mask >> lane & 1
                   for byte in range(addresses[lane], addresses[lane] + access_bytes)
                   if sector <= byte < sector + sector_bytes}
        assert flags[index] == (len(written) < sector_bytes)
    assert partial == sum(flags[:len(got)])


def test_partial_sectors_of_strided_stores():
    # l2_stores_h200's st_spread: lane l writes word l * spread; spread 1 fills 4 sectors, 2/4/8 leave holes
    flags = np.zeros(MAX_SECTORS_PER_REQUEST, dtype=np.int64)
    for spread, expected in ((1, 0), (2, 8), (4, 16), (8, 32)):
        addresses = np.asarray([4 * spread * lane for lane in range(32)], dtype=np.int64)
        sectors = np.asarray(run(addresses, FULL_MASK, 4), dtype=np.int64)
        assert partial_sectors(addresses, FULL_MASK, 4, sectors, len(sectors), 32, flags) == expected
    # two lanes on the same word do not make a sector whole
    sectors = np.asarray([0], dtype=np.int64)
    assert partial_sectors(np.zeros(32, dtype=np.int64), FULL_MASK, 4, sectors, 1, 32, flags) == 1
