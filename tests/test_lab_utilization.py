import pytest

from gpusim.arch.config import load_config
from gpusim.labs import LABS, utilization


@pytest.fixture(scope="module")
def result():
    return utilization.run(progress=False, sms=1, hops=64, kernels=3)


def test_registered():
    assert LABS["utilization"] is utilization


def test_fully_utilized_in_the_nvidia_smi_sense(result):
    assert result.values["correct"]
    assert result.values["kernels"] == 3
    assert result.values["gpu_utilization_pct"] == pytest.approx(100.0, abs=1.0)


def test_issue_slots_and_dram_sit_idle(result):
    config = load_config("h100-sxm", sms=1)
    # every hop waits one DRAM round trip
    assert result.values["round_trip_cycles"] == pytest.approx(config.dram_latency_cycles, rel=0.1)
    assert result.values["sm_issue_pct"] == pytest.approx(result.values["analytic_issue_pct"], rel=0.25)
    assert result.values["dram_throughput_pct"] == pytest.approx(result.values["analytic_dram_pct"], rel=0.25)
    assert result.values["sm_issue_pct"] < 1 and result.values["dram_throughput_pct"] < 1
