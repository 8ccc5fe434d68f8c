import pytest

from gpusim.labs import LABS, latency_hiding

MODES = ("ptxas", "none")


@pytest.fixture(scope="module", params=MODES)
def result(request):
    return latency_hiding.run(progress=False, sms=1, warps=(1, 2, 8, 32), iterations=4, codegen=request.param)


@pytest.fixture(scope="module")
def both():
    return {mode: latency_hiding.run(progress=False, sms=1, warps=(1, 2, 8, 32), iterations=4, codegen=mode)
            for mode in MODES}


def test_registered():
    assert LABS["latency-hiding"] is latency_hiding


def test_loads_in_flight_are_the_instruction_streams():
    # 4 float4 loads per iteration as written; ptxas unrolls the counted loop 4 times (codegen.unroll) and
    # issues all 16 loads before the first add reads one
    per_iteration = latency_hiding.LOADS_PER_ITERATION
    for mode, loads in (("none", per_iteration), ("ptxas", 4 * per_iteration)):
        values = latency_hiding.run(progress=False, sms=1, warps=(1,), iterations=4, codegen=mode).values
        assert values["codegen"] == mode
        assert values["loads_in_flight_per_warp"] == loads
        assert values["bytes_in_flight_per_warp"] == loads * latency_hiding.BYTES_PER_LANE_PER_LOAD * 32


def test_throughput_follows_littles_law(result):
    """Exact away from the corner; within a factor 2 of the knee queueing adds to the latency (the lab's
    stated simplification), so those points round the corner."""
    knee = result.values["predicted_knee_warps"]
    for point in result.values["points"]:
        assert point["correct"]
        if knee / 2 < point["warps"] < 2 * knee:
            assert point["bytes_per_cycle_per_sm"] <= point["predicted_bytes_per_cycle_per_sm"] * 1.05
            continue
        assert point["bytes_per_cycle_per_sm"] == pytest.approx(
            point["predicted_bytes_per_cycle_per_sm"], rel=0.2
        )


def test_linear_then_saturated_where_littles_law_says(result):
    by_warps = {p["warps"]: p["bytes_per_cycle_per_sm"] for p in result.values["points"]}
    if result.values["predicted_knee_warps"] >= 4:       # both points below the knee
        assert by_warps[2] > 1.8 * by_warps[1]  # linear below the knee
    assert by_warps[32] == pytest.approx(result.values["predicted_plateau"], rel=0.1)  # flat above it
    assert result.values["measured_knee_warps"] == pytest.approx(
        result.values["predicted_knee_warps"], rel=0.2
    )


def test_compiled_code_needs_fewer_warps(both):
    """4x the bytes in flight per warp: the knee moves to the warps Little's law gives for 8 KiB."""
    ptxas, plain = both["ptxas"].values, both["none"].values
    assert ptxas["measured_knee_warps"] < plain["measured_knee_warps"] / 2
    one = {mode: both[mode].values["points"][0]["bytes_per_cycle_per_sm"] for mode in MODES}
    assert one["ptxas"] > 2 * one["none"]


def test_gaps_close(result):
    points = result.values["points"]
    idle_dram = [p["dram_idle_pct"] for p in points]
    idle_issue = [p["idle_issue"] for p in points]
    assert idle_dram == sorted(idle_dram, reverse=True) and idle_dram[-1] < idle_dram[0] / 3
    # this kernel issues little (a few instructions per 2 KiB): its schedulers stay mostly idle; more warps
    # fill some of the issue gaps, but near the knee (2 warps with ptxas's 8 KiB in flight) not monotonically
    assert idle_issue[-1] < idle_issue[0] and min(idle_issue) > 0.8
    # one warp: it issues a few instructions per iteration, then waits a whole round trip
    assert idle_issue[0] > 0.9


def test_figure(tmp_path):
    pytest.importorskip("matplotlib")
    lab = latency_hiding.run(
        progress=False, plot_dir=tmp_path, warps=(1, 4), iterations=2, timeline_warps=(1, 4)
    )
    assert sorted(path.name for path in lab.figures) == ["latency_hiding.png"]
    assert all(path.is_file() and path.parent == tmp_path for path in lab.figures)
