"""Figures are written and non-empty; the warp-state image and roofline ceilings are right."""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.observe.plot import chip_ceilings, state_image

matplotlib = pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def traced():
    from gpusim.programs.catalog import run_program

    return run_program("divergence", trace=True).runs[0]


def test_state_image_reads_the_intervals():
    # slot 3: state 2 over [0, 4), state 0 over [4, 5); slot 7: state 5 over [2, 6)
    intervals = np.array([[3, 2, 0, 4, 0, 0], [3, 0, 4, 5, 1, 0], [7, 5, 2, 6, 0, 0]])
    image = state_image(intervals, np.array([3, 7]), np.arange(7) + 0.5)
    assert image.tolist() == [[2, 2, 2, 2, 0, -1, -1], [-1, -1, 5, 5, 5, 5, -1]]


def test_chip_ceilings_come_from_the_config():
    config = gpusim.load_config("h100-sxm")
    compute, memory = chip_ceilings(config)
    assert compute["FP32"] == config.peak_fp32_flops
    assert compute["FP64"] == config.peak_fp64_flops
    assert memory["DRAM"] == config.dram_bandwidth_gbs * 1e9
    assert memory["L2"] == config.l2_bytes_per_cycle * config.clock_hz
    assert memory["L1/shared"] == config.l1_bytes_per_cycle_per_sm * config.sms * config.clock_hz


def test_run_figures_are_written(traced, tmp_path):
    from gpusim.observe.plot import save_run_figures

    paths = save_run_figures(traced, tmp_path)
    names = sorted(p.name for p in paths)
    assert names == sorted(
        f"divergence_{n}.{e}" for n in ("roofline", "stalls", "timeline") for e in ("png", "svg")
    )
    for p in paths:
        assert p.stat().st_size > 1000
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        else:
            assert "<svg" in p.read_text()


def test_chip_roofline_and_occupancy_curve(tmp_path):
    from gpusim.observe.plot import chip_roofline, occupancy_vs_throughput, save_figure
    from gpusim.programs.catalog import run_program

    paths = save_figure(chip_roofline(gpusim.load_config("a100")), tmp_path, "roof")
    assert all(p.stat().st_size > 1000 for p in paths)
    runs = [run_program("vecadd", sizes={"threads": t}).runs[0] for t in (64, 256)]
    paths = save_figure(occupancy_vs_throughput(runs), tmp_path, "occ")
    assert all(p.stat().st_size > 1000 for p in paths)


def test_timeline_without_a_trace_says_how_to_get_one():
    from gpusim.observe.plot import warp_timeline
    from gpusim.programs.catalog import run_program

    run = run_program("vecadd").runs[0]
    with pytest.raises(gpusim.GpusimError, match="trace=True"):
        warp_timeline(run)
