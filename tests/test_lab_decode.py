import pytest

from gpusim.labs import LABS, decode


@pytest.fixture(scope="module")
def result():
    return decode.run(
        progress=False,
        sms=1,
        gemv_rows=1024,
        gemv_k=2048,
        sweep_rows=128,
        sweep_k=2048,
        batches=(1, 2, 16, 64, 256),
    )


def test_registered():
    assert LABS["decode"] is decode


def test_batch_one_gemv_streams_weights_near_dram_peak(result):
    assert result.values["fp16_correct"] and result.values["int8_correct"]
    assert result.values["fp16_pct_of_peak"] >= 80


def test_tokens_per_second_of_a_70b_model(result):
    from gpusim.config import load_config

    config = load_config("h100-sxm")
    bound = config.dram_bandwidth_gbs * 1e9 / (2 * 70e9)  # weight bytes / bandwidth
    assert result.values["analytic_tokens_per_s_fp16"] == pytest.approx(bound)
    assert result.values["tokens_per_s_fp16"] == pytest.approx(bound, rel=0.2)


def test_int8_weights_double_tokens_per_second(result):
    assert result.values["int8_speedup"] == pytest.approx(2.0, rel=0.15)


def test_batching_raises_tokens_per_second_until_the_knee(result):
    points = {p["batch"]: p for p in result.values["points"]}
    assert all(p["correct"] for p in points.values())
    # memory side: more tokens per weight byte fetched, step time grows far slower than the batch
    assert points[16]["tokens_per_s"] > 4 * points[1]["tokens_per_s"]
    # compute side: FLOP/s flat, so the step time grows with the batch
    assert points[256]["flops_per_s"] == pytest.approx(points[64]["flops_per_s"], rel=0.1)
    assert points[256]["seconds"] == pytest.approx(4 * points[64]["seconds"], rel=0.1)
    assert result.values["plateau_flops"] <= result.values["peak_flops"]
    assert 1 < result.values["knee"] < 256
