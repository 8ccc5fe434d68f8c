import pytest

from gpusim.labs import divergence


def test_only_intra_warp_divergence_costs():
    values = divergence.run(progress=False, sms=1, blocks_per_sm=4, work=48).values
    intra, inter = values["intra-warp"], values["inter-warp"]
    assert intra["simd_efficiency"] == pytest.approx(0.5, abs=0.05)
    assert inter["simd_efficiency"] == pytest.approx(1.0)
    assert intra["time_ratio"] == pytest.approx(intra["instruction_ratio"], rel=0.15)
    assert intra["time_ratio"] > 1.6
    assert inter["time_ratio"] == pytest.approx(1.0, abs=0.05)
