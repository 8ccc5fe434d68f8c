"""The validation suite's sensitivity runs (validation/sensitivity.py): a field scaled reaches the simulated slice and
only that field, a scaled latency moves a pointer chase by what the config says, the report's cells are the median
changes, and the committed runs cover every field, factor and case."""

from __future__ import annotations

import dataclasses
import json

import pytest

import gpusim
from validation import runner, sensitivity
from validation.cases import load_cases
from validation.suite import RESULTS


def _case(name):
    return next(case for case in load_cases() if case.name == name)


@pytest.fixture
def scaled():
    yield runner.CONFIG_SCALE
    runner.CONFIG_SCALE.clear()


def test_scaled_values_keep_integer_fields_integers_of_at_least_one():
    assert runner.scaled_value(958, 0.5) == 479 and runner.scaled_value(3, 0.1) == 1
    assert runner.scaled_value(2257.0, 2.0) == 4514.0
    with pytest.raises(TypeError):
        runner.scaled_value(True, 2.0)
    with pytest.raises(TypeError):
        runner.scaled_value("row:column:bank:bankgroup", 2.0)


def test_a_scaled_field_reaches_the_slice_and_nothing_else_changes(scaled):
    case = _case("copy_width_h200")
    plain = runner._gpu(case, case.params).config
    sliced = gpusim.load_config("h200", sms=case.params["sms"])
    scaled.update(l2_bytes_per_cycle=2.0, mshrs_per_sm=0.5)
    config = runner._gpu(case, case.params).config
    # the slice's share of the chip's L2 rate (3815 B/clk x 2 of 132 SMs), doubled; the MSHRs halved
    assert config.l2_bytes_per_cycle == pytest.approx(2.0 * 3815.0 * case.params["sms"] / sliced.chip_sms)
    assert config.mshrs_per_sm == 479
    changed = {f.name for f in dataclasses.fields(config) if getattr(config, f.name) != getattr(plain, f.name)}
    assert changed == {"l2_bytes_per_cycle", "mshrs_per_sm"}


def test_a_doubled_dram_latency_adds_the_config_s_latency_to_a_cold_chase():
    case = _case("latency_chase_h200")
    base = [p["simulated"] for p in json.loads(RESULTS.read_text())["cases"][case.name]["points"]]
    name, field, factor, figures, _ = sensitivity._one((case.name, "dram_latency_cycles", 2.0))
    assert runner.CONFIG_SCALE == {}, "a run leaves the configs as they are"
    added = gpusim.load_config("h200").dram_latency_cycles
    for point, before, after in zip(case.points, base, figures, strict=True):
        if point["label"].startswith("DRAM"):      # every load of a cold chase over 64 MB or 1 GiB goes to DRAM
            assert after - before == pytest.approx(added, rel=0.02), point["label"]
        elif point["label"].startswith("L2"):      # an L2-resident chase never waits for DRAM
            assert after == pytest.approx(before, rel=0.01), point["label"]


def test_cells_are_median_changes_of_normalised_throughput():
    bandwidth, latency = _case("stream_h200"), _case("latency_chase_h200")
    store = {"cases": {
        bandwidth.name: {"gpusim_commit": "abc1234", "baseline": [100.0, 200.0, 300.0, 400.0, 500.0],
                         "scaled": {"mshrs_per_sm": {"0.5": [89.0, 178.0, 267.0, 400.0, 500.0],   # -11 % median
                                                     "2": [100.0, 201.0, 300.0, 400.0, 500.0]}}},  # +0 %
        latency.name: {"gpusim_commit": "abc1234", "baseline": [50.0] * 5,
                       "scaled": {"mshrs_per_sm": {"0.5": [100.0] * 5}}},    # twice the latency: -50 %
    }}
    configs = {"h200": gpusim.load_config("h200")}
    lines = sensitivity.render(store, [bandwidth, latency], configs)
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines if line.startswith("| ")}
    assert rows["stream_h200"].endswith("| -11 / +0 |")       # medians of -11, -11, -11, 0, 0 and 0, +0.5, 0, 0, 0
    assert rows["latency_chase_h200"].endswith("| not run |")  # one factor missing
    assert "| `mshrs_per_sm` |" in "\n".join(lines) and "| 958 |" in "\n".join(lines)
    assert "stream_h200 (11 %)" in "\n".join(lines)           # the cases-moved column: >= 10 %
    flat = {"cases": {bandwidth.name: {**store["cases"][bandwidth.name],
                                       "scaled": {"mshrs_per_sm": {"0.5": [99.0, 199.0, 299.0, 399.0, 499.0],
                                                                   "2": [100.0, 200.0, 300.0, 400.0, 500.0]}}}}}
    assert any(line.endswith("| · |") for line in sensitivity.render(flat, [bandwidth], configs))


def test_the_committed_runs_cover_every_field_factor_and_case():
    store = json.loads(sensitivity.SENSITIVITY.read_text())
    cases = [case for case in load_cases() if case.kind != "counters"]
    assert set(store["cases"]) == {case.name for case in cases}
    for case in cases:
        entry = store["cases"][case.name]
        assert len(entry["baseline"]) == len(case.points)
        for field, _ in sensitivity.FIELDS:
            for factor in sensitivity.FACTORS:
                figures = entry["scaled"][field][f"{factor:g}"]
                assert len(figures) == len(case.points) and all(f > 0 for f in figures), (case.name, field)
