import pytest

from gpusim.labs import LABS, roofline


@pytest.fixture(scope="module")
def result():
    return roofline.run(progress=False, sms=1, iterations=(0, 2, 8, 32, 128, 256), l2_multiple=1.2)


def test_registered():
    assert LABS["roofline"] is roofline


def test_memory_side_follows_intensity_times_bandwidth(result):
    ridge = result.values["ridge_point"]
    for point in result.values["points"]:
        if point["intensity"] < ridge / 2:
            assert point["achieved_flops"] == pytest.approx(point["roof_flops"], rel=0.15)


def test_compute_side_reaches_the_peak_within_the_bound(result):
    ridge = result.values["ridge_point"]
    far = [p for p in result.values["points"] if p["intensity"] > 4 * ridge]
    assert far
    for point in far:
        assert point["achieved_flops"] == pytest.approx(point["roof_flops"], rel=0.15)


def test_knee_sits_at_the_ridge_point(result):
    assert result.values["knee"] == pytest.approx(result.values["ridge_point"], rel=0.2)


def test_analytic_intensity(result):
    # the only DRAM traffic is the float4 load and store: 32 bytes per thread
    # (dirty output lines still in L2 at the end are not DRAM bytes yet, so measured >= analytic)
    for point in result.values["points"]:
        assert point["intensity"] >= point["analytic_intensity"] * 0.99
        if point["iterations"] >= 8:
            assert point["intensity"] == pytest.approx(point["analytic_intensity"], rel=0.25)


def test_figure(tmp_path):
    pytest.importorskip("matplotlib")
    lab = roofline.run(progress=False, plot_dir=tmp_path, sms=1, iterations=(0, 64), l2_multiple=1.2)
    assert all(path.exists() for path in lab.figures)
