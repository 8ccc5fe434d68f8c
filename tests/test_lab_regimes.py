import pytest

from gpusim.labs import LABS, regimes


@pytest.fixture(scope="module")
def result():
    return regimes.run(progress=False, sms=1, stream_iterations=3, fma_rounds=64, hops=32)


def test_registered():
    assert LABS["regimes"] is regimes


def test_each_kernel_lands_in_its_regime_and_the_verdict_agrees(result):
    for regime, case in result.values["cases"].items():
        assert case["analytic"] == regime
        assert case["verdict"] == regimes.VERDICT_OF_REGIME[regime]


def test_the_numbers_behind_the_verdicts(result):
    cases = result.values["cases"]
    assert cases["memory"]["dram_pct"] >= 0.85 * result.values["dram_efficiency_pct"]
    assert cases["compute"]["intensity"] > 2 * result.values["ridge_point"]
    assert cases["compute"]["issue_pct"] >= 70
    assert cases["latency"]["dram_pct"] < 5 and cases["latency"]["issue_pct"] < 5
