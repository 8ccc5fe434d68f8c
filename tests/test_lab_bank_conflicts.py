import pytest

from gpusim.labs import bank_conflicts


@pytest.fixture(scope="module")
def values():
    return bank_conflicts.run(progress=False, sms=1, size=128).values


def test_wavefronts_match_the_bank_count(values):
    assert bank_conflicts.analytic_wavefronts_per_load(32, 32) == 32
    assert bank_conflicts.analytic_wavefronts_per_load(33, 32) == 1
    for name in ("unpadded", "padded"):
        assert values[name]["correct"]
        assert values[name]["wavefronts_per_load"] == values[name]["analytic_wavefronts_per_load"]


def test_conflicts_cost_time(values):
    # at this size the kernel is not DRAM-bound, so 32 wavefronts per load show up in the time
    assert values["time_ratio"] > 1.2
