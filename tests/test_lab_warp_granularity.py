import pytest

from gpusim.labs import warp_granularity


def test_250_threads_are_8_warps_with_26_lanes_in_the_last():
    values = warp_granularity.run(progress=False, blocks=4).values
    r250, r256 = values["threads_250"], values["threads_256"]
    assert r250["warps_per_block"] == r256["warps_per_block"] == 8
    assert r250["last_warp_lanes"] == 250 - 7 * 32
    assert r250["correct"] and r256["correct"]
    assert r250["simd_efficiency"] == pytest.approx(250 / 256)
    assert r250["warp_instructions_per_block"] == r256["warp_instructions_per_block"]
