"""Shared-memory wavefronts: the worst bank's distinct words, per phase for wide accesses."""

from math import gcd

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusim.engine.memory.shared_banks import make_shared_scratch, shared_wavefronts, uniform_pairs

FULL_MASK = np.uint32(0xFFFFFFFF)


def reference_wavefronts(addresses, mask, access_bytes, banks, bank_bytes, packed=False):
    words_per_lane = max(1, access_bytes // bank_bytes)
    phase_lanes = min(32, max(1, banks * bank_bytes // access_bytes) * (2 if packed else 1))
    total = 0
    for first in range(0, 32, phase_lanes):
        words_by_bank = {}
        for lane in range(first, min(first + phase_lanes, 32)):
            if mask >> lane & 1:
                for offset in range(words_per_lane):
                    word = addresses[lane] // bank_bytes + offset
                    words_by_bank.setdefault(word % banks, set()).add(word)
        total += max((len(words) for words in words_by_bank.values()), default=0)
    return total


def wavefronts(addresses, mask=FULL_MASK, access_bytes=4, banks=32, bank_bytes=4, packed=False):
    return shared_wavefronts(np.asarray(addresses, dtype=np.int64), np.uint32(mask), access_bytes, banks,
                             bank_bytes, make_shared_scratch(banks), False, packed)


def reference_uniform_pairs(addresses, mask):
    active = [lane for lane in range(32) if mask >> lane & 1]
    return any(all(addresses[lane] == addresses[lane ^ step] for lane in active if mask >> (lane ^ step) & 1)
               for step in (1, 2))


def load_wavefronts(addresses, access_bytes=16, mask=FULL_MASK):
    """What the engine charges a shared load: packed when its lanes are uniform pairs."""
    addresses = np.asarray(addresses, dtype=np.int64)
    return wavefronts(addresses, mask, access_bytes, packed=uniform_pairs(addresses, np.uint32(mask)))


def test_word_strides_and_broadcast():
    for stride in (1, 2, 32, 33):
        # lanes at word stride s fill 32 / gcd(s, 32) banks, gcd(s, 32) distinct words each
        assert wavefronts([4 * stride * lane for lane in range(32)]) == gcd(stride, 32)
    assert wavefronts([64] * 32) == 1


def test_wide_accesses_take_one_wavefront_per_phase():
    # conflict-free 8-byte accesses: 256 B, 2 phases; 16-byte: 512 B, 4 phases
    assert wavefronts([8 * lane for lane in range(32)], access_bytes=8) == 32 * 8 // (32 * 4)
    assert wavefronts([16 * lane for lane in range(32)], access_bytes=16) == 32 * 16 // (32 * 4)
    # only the first half-warp active: one phase
    assert wavefronts([8 * lane for lane in range(32)], mask=0xFFFF, access_bytes=8) == 1


def test_no_active_lane_takes_no_wavefront():
    assert wavefronts([0] * 32, mask=0) == 0


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 4096), min_size=32, max_size=32), st.integers(0, 0xFFFFFFFF),
       st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([(32, 4), (16, 4), (32, 8), (64, 4)]))
def test_matches_reference(raw_addresses, mask, access_bytes, geometry):
    banks, bank_bytes = geometry
    addresses = [address - address % access_bytes for address in raw_addresses]
    assert wavefronts(addresses, mask, access_bytes, banks, bank_bytes) == reference_wavefronts(
        addresses, mask, access_bytes, banks, bank_bytes)


def test_uniform_pairs_pack_wide_loads():
    # NVIDIA forum t/373160 (CC 8.6 and 9.0): an LDS.128 with lanes 0-15 on offset 0 and 16-31 on offset 32
    # takes 2 wavefronts; lanes n and n + 16 sharing offset 32 n (pairs n ^ 1 differ) takes 8 (2-way per phase)
    assert load_wavefronts([0] * 16 + [32] * 16) == 2
    assert load_wavefronts([32 * (lane % 16) for lane in range(32)]) == 8
    # a warp-wide broadcast LDS.128 (the SGEMM ladder's A tile; 2 on an H200, counters_h200) and LDS.64
    assert load_wavefronts([256] * 32) == 2
    assert load_wavefronts([256] * 32, access_bytes=8) == 1
    # pairs n ^ 2: lanes 0, 2 | 1, 3 | ... on consecutive 16-byte words, conflict-free: 16 lanes per phase
    assert load_wavefronts([16 * ((lane // 4) * 2 + (lane & 1)) for lane in range(32)]) == 2
    # a 32-bit load is one register per lane: nothing to pack
    assert load_wavefronts([0] * 32, access_bytes=4) == 1


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 64), min_size=16, max_size=16), st.integers(0, 0xFFFFFFFF), st.booleans(),
       st.sampled_from([8, 16]))
def test_uniform_pairs_match_reference(raw_pairs, mask, partner_two, access_bytes):
    # build addresses from pairs, then perturb one lane half of the time
    addresses = [0] * 32
    for index, raw in enumerate(raw_pairs):
        first = (index // 2) * 4 + (index % 2) if partner_two else 2 * index
        second = first ^ (2 if partner_two else 1)
        addresses[first] = addresses[second] = raw * access_bytes
    if mask & 1:
        addresses[mask % 32] += access_bytes
    assert uniform_pairs(np.asarray(addresses, dtype=np.int64), np.uint32(mask)) == reference_uniform_pairs(
        addresses, mask)
    packed = reference_uniform_pairs(addresses, mask)
    assert wavefronts(addresses, mask, access_bytes, packed=packed) == reference_wavefronts(
        addresses, mask, access_bytes, 32, 4, packed)
