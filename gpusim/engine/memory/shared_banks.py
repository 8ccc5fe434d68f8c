"""Shared-memory banks: how many wavefronts (passes through the banks) one warp access takes.

What it models
    Shared memory is split into ``banks`` banks of ``bank_bytes``-byte words (32 x 4 B on every NVIDIA GPU
    since Maxwell); word ``w`` lives in bank ``w % banks``. Each bank delivers one word per wavefront, so a
    request needs as many wavefronts as the largest number of *distinct* words any one bank must deliver.
    Several lanes reading the same word are served together (broadcast / multicast), so they do not
    conflict.

Wide accesses
    The banks deliver ``banks * bank_bytes`` bytes per wavefront (128 B), so a warp of 64-bit accesses
    (256 B) cannot finish in one. The hardware processes such a request in phases: half a warp at a time for
    8-byte accesses, a quarter warp for 16-byte accesses; in general ``banks * bank_bytes // access_bytes``
    lanes per phase, at most 32. Conflicts are counted inside each phase, and the request's wavefronts are
    the sum over phases that have at least one active lane. A conflict-free warp of ``ld.shared.v2.f32``
    therefore takes 2 wavefronts and of ``ld.shared.v4.f32`` 4, matching Nsight Compute's
    ``l1tex__data_pipe_lsu_wavefronts_mem_shared``.

Uniform pairs (loads)
    The return path carries 128 B, one 32-bit register for the whole warp, per wavefront; a wide load whose
    lanes come in pairs with equal addresses (every active lane ``n`` reads what lane ``n ^ 1`` reads, or
    every one what lane ``n ^ 2`` reads; a warp-wide broadcast is both) packs two lanes' data into one
    return, so its phases take twice as many lanes (NVIDIA, forums.developer.nvidia.com/t/77228/2: "the
    uniform access can achieve 2x ... LDS.128 ... requests/instruction should reduce from 4 to 2"; t/373160:
    an LDS.128 with lanes 0-15 on one address and 16-31 on another takes 2 wavefronts on CC 8.6 and 9.0).
    Measured on an H200 (validation/measured/h200c.json, counters_h200): the SGEMM ladder's broadcast
    ``LDS.128`` of its A tile takes 2 wavefronts, not 4. ``uniform_pairs`` tests the condition; stores and
    atomics do not pack.

The L1 data stage
    L1 and shared memory are one array of these banks, and the L1TEX data stage reads a global or local
    load's words through them the same way (NVIDIA, forums.developer.nvidia.com/t/242776: the data stage's
    bank accesses for a stride-2 L1 load behave exactly as for shared memory). A 128-B line fills one row
    of the 32 banks, so lanes that read *different lines at the same offset* need the same bank and
    serialise; the engine passes ``shared_wavefronts`` of a global load's addresses to
    ``memsys.l1tex_reserve``. Most requests have no conflict; ``_phase_without_conflict`` settles those in
    one pass and only a conflicting phase is counted word by word.

Simplifications
    * Accesses are naturally aligned (PTX requires it), so an access of ``k * bank_bytes`` bytes covers
      exactly ``k`` consecutive words and a narrower access covers one word.
    * Stores are costed like loads (two lanes writing the same word are one bank access; which value wins
      is the functional model's business).
    * Phases are not merged across lanes of different phases even when that would be conflict-free (except
      the uniform pairs' doubling above).
    * ``conflict_free=True`` (what-if only, gpusim.launch.what_if) keeps the phases and the broadcast of
      repeated words, and spreads each phase's distinct words evenly over the banks.
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.jit import compiled_only, engine_jit

WARP_LANES = 32


def make_shared_scratch(banks: int) -> np.ndarray:
    """Return the int64 scratch array ``shared_wavefronts`` needs for ``banks`` banks."""
    return np.empty(shared_scratch_length(banks), dtype=np.int64)


def shared_scratch_length(banks: int) -> int:
    """Entries ``shared_wavefronts``' scratch must hold: one phase's words plus one counter per bank."""
    return max(WARP_LANES, banks) + banks


@compiled_only
def _phase_wavefronts(addresses, active_mask, first_lane, phase_lanes, words_per_lane, banks, bank_bytes,
                      scratch, conflict_free):
    """Wavefronts of one phase: the most distinct words any bank must deliver (0 if no lane is active);
    with ``conflict_free`` (the what-if "no bank conflicts"), ceil(distinct words / banks): the words
    spread evenly over the banks.

    ``scratch[:items]`` holds the words seen so far, ``scratch[word_slots:word_slots + banks]`` the
    distinct-word count per bank.
    """
    word_slots = scratch.shape[0] - banks
    for bank in range(banks):
        scratch[word_slots + bank] = 0
    words_seen = 0
    worst_bank_words = 0
    for lane in range(first_lane, min(first_lane + phase_lanes, WARP_LANES)):
        if (active_mask >> lane) & 1 == 0:
            continue
        first_word = addresses[lane] // bank_bytes
        for offset in range(words_per_lane):
            word = first_word + offset
            duplicate = False
            for seen in range(words_seen):
                if scratch[seen] == word:
                    duplicate = True
                    break
            if duplicate:
                continue
            scratch[words_seen] = word
            words_seen += 1
            bank = word % banks
            scratch[word_slots + bank] += 1
            if scratch[word_slots + bank] > worst_bank_words:
                worst_bank_words = scratch[word_slots + bank]
    if conflict_free:
        return (words_seen + banks - 1) // banks
    return worst_bank_words


@compiled_only
def _phase_without_conflict(addresses, active_mask, first_lane, phase_lanes, words_per_lane, banks, bank_bytes,
                            scratch):
    """The common case of one phase, in one pass: 0 if no lane is active, 1 if no bank must deliver two
    distinct words (one wavefront, with or without ``conflict_free``), -1 if some bank must (the caller then
    counts exactly with ``_phase_wavefronts``). ``scratch[word_slots + bank]`` holds the bank's first word."""
    word_slots = scratch.shape[0] - banks
    for bank in range(banks):
        scratch[word_slots + bank] = -1
    active = 0
    for lane in range(first_lane, min(first_lane + phase_lanes, WARP_LANES)):
        if (active_mask >> lane) & 1 == 0:
            continue
        active = 1
        first_word = addresses[lane] // bank_bytes
        for offset in range(words_per_lane):
            word = first_word + offset
            slot = word_slots + word % banks
            if scratch[slot] < 0:
                scratch[slot] = word
            elif scratch[slot] != word:
                return -1
    return active


@engine_jit
def uniform_pairs(addresses, active_mask):
    """True when the active lanes come in pairs that read one address: every active lane ``n`` whose partner
    ``n ^ 1`` is active reads what the partner reads, or every one whose partner ``n ^ 2`` is active (a lane
    whose partner is inactive imposes nothing). A warp-wide broadcast is uniform."""
    pairs_1 = True
    pairs_2 = True
    for lane in range(WARP_LANES):
        if (active_mask >> lane) & 1 == 0:
            continue
        partner = lane ^ 1
        if (active_mask >> partner) & 1 and addresses[partner] != addresses[lane]:
            pairs_1 = False
        partner = lane ^ 2
        if (active_mask >> partner) & 1 and addresses[partner] != addresses[lane]:
            pairs_2 = False
    return pairs_1 or pairs_2


@engine_jit
def shared_wavefronts(addresses, active_mask, access_bytes, banks, bank_bytes, scratch, conflict_free=False,
                      packed=False):
    """Number of wavefronts a warp's shared-memory access takes.

    addresses     int64[32] per-lane byte offsets in the shared window
    active_mask   uint32 bitmask of participating lanes
    access_bytes  bytes per lane (1, 2, 4, 8 or 16)
    banks         number of banks (32)
    bank_bytes    width of one bank word in bytes (4)
    scratch       int64[>= shared_scratch_length(banks)] work space (see ``make_shared_scratch``)
    conflict_free the what-if switch "no bank conflicts": each phase takes ceil(distinct words / banks)
    packed        a load whose lanes are ``uniform_pairs``: its phases take twice the lanes (at most 32)

    Returns the wavefront count (0 when no lane is active; 1 when conflict-free for accesses up to
    ``bank_bytes``).
    """
    words_per_lane = max(1, access_bytes // bank_bytes)
    phase_lanes = max(1, (banks * bank_bytes) // access_bytes)
    if packed:
        phase_lanes *= 2
    phase_lanes = min(WARP_LANES, phase_lanes)
    wavefronts = 0
    for first_lane in range(0, WARP_LANES, phase_lanes):
        phase = _phase_without_conflict(addresses, active_mask, first_lane, phase_lanes, words_per_lane, banks,
                                        bank_bytes, scratch)
        if phase < 0:
            phase = _phase_wavefronts(addresses, active_mask, first_lane, phase_lanes, words_per_lane, banks,
                                      bank_bytes, scratch, conflict_free)
        wavefronts += phase
    return wavefronts
