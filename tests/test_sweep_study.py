"""The occupancy x scheduler x L2 study (gpusim/sweep/study.py), at a small size: its outcomes against
figures derived from the config."""

import pytest

from gpusim.arch.config import load_config
from gpusim.arch.occupancy import occupancy
from gpusim.sweep import study

CHAIN_LINES = 4096   # 512 KiB: more than L1 can hold, between the two L2 sizes
L2_SIZES = (256 * 1024, 2 * 1024 * 1024)


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return study.run(progress=False, workers=2, occupancies=(0.25, 1.0), schedulers=("gto", "lrr"),
                     l2_sizes=L2_SIZES, chain_lines=CHAIN_LINES, plot_dir=tmp_path_factory.mktemp("fig"))


def test_occupancy_axis_sets_the_resident_blocks():
    config = load_config("h100-sxm", sms=1)
    for threads in (study.MEMORY_BLOCK_THREADS, study.COMPUTE_BLOCK_THREADS):
        most = occupancy(config, threads, study.BASE_REGS, 0).blocks_per_sm
        for target in (1, most // 4, most // 2):
            shared = study.shared_bytes_for_blocks(config, threads, target)
            assert occupancy(config, threads, study.BASE_REGS, shared).blocks_per_sm == target


def test_pointer_chase_per_hop_is_dram_latency_unless_the_chain_fits_in_l2(result):
    config = load_config("h100-sxm", sms=1)
    per_hop = result.values["cycles_per_hop"]
    assert result.values["chain_bytes"] > L2_SIZES[0] and result.values["chain_bytes"] < L2_SIZES[1]
    # the loop's own instructions add a few cycles per hop on top of the load-to-use latency
    assert per_hop[L2_SIZES[0]] == pytest.approx(config.dram_latency_cycles, rel=0.05)
    assert per_hop[L2_SIZES[1]] == pytest.approx((config.dram_latency_cycles + config.l2_latency_cycles) / 2,
                                                 rel=0.05)


def test_models_and_verdicts_where_their_assumptions_hold(result):
    frame = result.values["frame"]
    assert len(frame) == 3 * 2 * 2 * 2 and (frame["status"] == "ok").all()
    latency = frame[frame["tags.kernel"] == "latency"]
    assert (latency["verdict"] == "latency-bound").all()
    assert (latency["roofline.error"] < -0.9).all()        # the roofline knows no latency
    assert (latency["mwp_cwp.error"].abs() < 0.1).all()   # one warp, one load per period: MWP-CWP's case
    for kernel in ("memory", "compute"):
        part = frame[frame["tags.kernel"] == kernel]
        assert (part["roofline.seconds"] <= part["seconds"]).all()   # a lower bound everywhere
        assert set(part[part["tags.occupancy"] == 1.0]["verdict"]) == {f"{kernel}-bound"}
        # the L2 size changes nothing for kernels that touch each byte once
        by_l2 = part.groupby(["tags.occupancy", "scheduler"])["cycles"].nunique()
        assert (by_l2 == 1).all()
    assert len(result.figures) == 4 and all(path.stat().st_size > 0 for path in result.figures)
