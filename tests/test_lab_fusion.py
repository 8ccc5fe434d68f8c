import pytest

from gpusim.labs import fusion


def test_fusion_removes_two_thirds_of_dram_traffic_and_time():
    values = fusion.run(progress=False, sms=1, l2_multiple=2.0).values
    assert values["outputs_equal"]
    assert fusion.ARRAYS_MOVED_FUSED / fusion.ARRAYS_MOVED_CHAIN == pytest.approx(1 / 3)
    assert values["bytes_ratio"] == pytest.approx(fusion.ARRAYS_MOVED_FUSED / fusion.ARRAYS_MOVED_CHAIN, rel=0.1)
    assert values["chain_dram_bytes"] == pytest.approx(values["chain_analytic_bytes"], rel=0.15)
    assert values["time_ratio"] == pytest.approx(values["bytes_ratio"], rel=0.15)
