import pytest

from gpusim.labs import LABS, latency_hiding


@pytest.fixture(scope="module")
def result():
    return latency_hiding.run(progress=False, sms=1, warps=(1, 2, 8, 32), iterations=4)


def test_registered():
    assert LABS["latency-hiding"] is latency_hiding


def test_throughput_follows_littles_law(result):
    for point in result.values["points"]:
        assert point["correct"]
        assert point["bytes_per_cycle_per_sm"] == pytest.approx(
            point["predicted_bytes_per_cycle_per_sm"], rel=0.2
        )


def test_linear_then_saturated_where_littles_law_says(result):
    by_warps = {p["warps"]: p["bytes_per_cycle_per_sm"] for p in result.values["points"]}
    assert by_warps[2] > 1.8 * by_warps[1]  # linear below the knee
    assert by_warps[32] == pytest.approx(result.values["predicted_plateau"], rel=0.1)  # flat above it
    assert result.values["measured_knee_warps"] == pytest.approx(
        result.values["predicted_knee_warps"], rel=0.2
    )


def test_gaps_close(result):
    points = result.values["points"]
    idle_dram = [p["dram_idle_pct"] for p in points]
    idle_issue = [p["idle_issue"] for p in points]
    assert idle_dram == sorted(idle_dram, reverse=True) and idle_dram[-1] < idle_dram[0] / 3
    assert idle_issue == sorted(idle_issue, reverse=True)
    # one warp: it issues a few instructions per iteration, then waits a whole round trip
    assert idle_issue[0] > 0.9


def test_figure(tmp_path):
    pytest.importorskip("matplotlib")
    lab = latency_hiding.run(
        progress=False, plot_dir=tmp_path, warps=(1, 4), iterations=2, timeline_warps=(1, 4)
    )
    assert all(path.exists() for path in lab.figures)
