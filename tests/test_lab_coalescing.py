import pytest

from gpusim.labs import coalescing


def test_sectors_and_dram_bytes_follow_the_stride():
    result = coalescing.run(progress=False, sms=1, elements=16384, strides=(1, 2, 4, 8, 32))
    for point in result.values["points"]:
        stride = point["stride"]
        assert point["correct"]
        assert point["sectors_per_request"] == pytest.approx(min(4 * stride, 32))
        assert point["dram_ratio"] == pytest.approx(min(stride, 8), rel=0.1)
    times = [p["time_ratio"] for p in result.values["points"]]
    assert times[3] > 3.0 and times == sorted(times[:4]) + times[4:]
