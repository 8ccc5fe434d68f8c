"""programs/labs/decode_hopper.cu through gpusim.labs.tensor_gemm.NarrowHopperGemm: wgmma m64nNk16 with the token
tile as narrow as the batch (N = 64, 128, 256), TMA-fed, against numpy's product within the rigorous bound of
fp32 accumulation and the bf16 rounding of the output, on both engine paths; batches off the tile (1, 72, 200)
and past the widest (300: two 256-token tiles, the second mostly zero-filled by TMA), rows off the 128-row tile;
and the shared-memory size the kernel's Tile<BN> computes, from its formula."""

from __future__ import annotations

import pytest

import gpusim
from gpusim.errors import LaunchError
from gpusim.labs.tensor_gemm import NARROW_TOKENS, NarrowHopperGemm, narrow_shared_bytes


@pytest.fixture(scope="module")
def layer():
    return NarrowHopperGemm(gpusim.GPU("h100-sxm", sms=2), 200, 192)


@pytest.mark.parametrize("timing", [False, True])
@pytest.mark.parametrize("tokens, tile", [(1, 64), (72, 128), (200, 256), (300, 256)])
def test_matches_numpy_with_the_narrowest_tile(layer, tokens, tile, timing):
    run, correct = layer.run(tokens, timing=timing)
    assert correct
    assert layer.kernel_name == f"decode_hopper_n{tile}" == f"decode_hopper_n{layer.tokens_tile(tokens)}"


def test_shared_bytes_follow_the_stage_rule():
    """As many (128 + BN) x 128-byte stages as 200 KB holds, at most 8, plus 1 KB of alignment and two 8-byte
    mbarriers per stage: 8, 6 and 4 stages; each fits a Hopper block's 227 KB."""
    config = gpusim.load_config("h100-sxm")
    assert [narrow_shared_bytes(n) for n in NARROW_TOKENS] == [8 * 192 * 128 + 1024 + 128,
                                                                6 * 256 * 128 + 1024 + 96,
                                                                4 * 384 * 128 + 1024 + 64]
    assert all(narrow_shared_bytes(n) <= config.max_shared_bytes_per_block for n in NARROW_TOKENS)


def test_needs_wgmma():
    with pytest.raises(LaunchError, match="wgmma"):
        NarrowHopperGemm(gpusim.GPU("a100", sms=1), 128, 64)
