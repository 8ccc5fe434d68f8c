"""Shared-memory wavefronts: the worst bank's distinct words, per phase for wide accesses."""

from math import gcd

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusim.engine.memory.shared_banks import make_shared_scratch, shared_wavefronts

FULL_MASK = np.uint32(0xFFFFFFFF)


def reference_wavefronts(addresses, mask, access_bytes, banks, bank_bytes):
    words_per_lane = max(1, access_bytes // bank_bytes)
    phase_lanes = min(32, max(1, banks * bank_bytes // access_bytes))
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


def wavefronts(addresses, mask=FULL_MASK, access_bytes=4, banks=32, bank_bytes=4):
    return shared_wavefronts(np.asarray(addresses, dtype=np.int64), np.uint32(mask), access_bytes, banks,
                             bank_bytes, make_shared_scratch(banks))


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
