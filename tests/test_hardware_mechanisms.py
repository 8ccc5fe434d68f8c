"""Mechanisms added from the H200 measurements (validation/measured/h200.json, validation/hardware.py), each
checked against the number it is defined by (a config field, the PTX ISA), not against a stored run:

- ld.global.cg bypasses L1 (PTX ISA, "Cache operators": .cg caches in L2 only);
- an SM starts at most one block per ``block_dispatch_interval_cycles`` (or warps x ``warp_dispatch_cycles``);
- a barrier's release adds ``barrier_cycles_per_warp`` per waiting warp;
- a store that evicts a dirty L2 line waits for its DRAM write, so a write stream cannot outrun DRAM;
- a measured validation case reads its figures from the measurement file, never typed by hand."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.arch.config import load_config
from validation.cases import MEASURED_DIR, CaseError, load_case, load_cases, measured_value
from validation.runner import chase_table

KERNELS = Path(__file__).resolve().parent.parent / "validation" / "kernels"


def _gpu(sms=1, **fields):
    return gpusim.GPU(dataclasses.replace(load_config("h200"), **fields), sms=sms)


def _chase(gpu, nbytes, bypass):
    """A warm random chase over `nbytes` (validation/kernels/memory.cu `chase`): cycles per load."""
    kernel = gpu.load(str(KERNELS / "memory.ptx"))["chase"]
    slots, nxt = nbytes // 128, chase_table(nbytes, seed=3)
    sink, cyc = gpu.zeros(1, np.uint32), gpu.zeros(1, np.int64)
    gpu.launch(kernel, grid=(1,), block=(1,), args=[gpu.to_device(nxt), np.int32(slots), np.int32(bypass), sink, cyc])
    return float(cyc.get()[0]) / slots


def test_ld_global_cg_bypasses_l1_and_plain_loads_hit_it():
    gpu = _gpu()
    config = gpu.config
    cached, bypassed = _chase(gpu, 16384, 0), _chase(gpu, 16384, 1)   # 16 KB: far inside L1 and the slice's L2
    assert config.l1_latency_cycles <= cached < config.l2_latency_cycles
    assert config.l2_latency_cycles <= bypassed < config.dram_latency_cycles


def _empty_blocks(gpu, per_sm, threads):
    kernel = gpu.load(str(KERNELS / "probe.ptx"))["empty_block"]
    return gpu.launch(kernel, grid=(gpu.config.sms * per_sm,), block=(threads,), args=[gpu.zeros(1, np.float32)]).cycles


@pytest.mark.parametrize("interval, per_warp, threads", [(150, 0.0, 64), (100, 10.0, 512)])
def test_an_sm_starts_one_block_per_dispatch_interval(interval, per_warp, threads):
    gpu = _gpu(block_dispatch_interval_cycles=interval, warp_dispatch_cycles=per_warp)
    expected = max(interval, round(threads // 32 * per_warp))
    per_block = (_empty_blocks(gpu, 400, threads) - _empty_blocks(gpu, 200, threads)) / 200
    assert per_block == pytest.approx(expected, rel=0.02)
    unlimited = _gpu(block_dispatch_interval_cycles=0, warp_dispatch_cycles=0.0)
    assert (_empty_blocks(unlimited, 400, threads) - _empty_blocks(unlimited, 200, threads)) / 200 < expected / 2


def _barrier_round(gpu, threads, iters=64):
    kernel = gpu.load(str(KERNELS / "probe.ptx"))["lat_bar"]
    cycles = gpu.zeros(1, np.int64)
    gpu.launch(kernel, grid=(1,), block=(threads,), args=[np.int32(iters), cycles, gpu.zeros(1024, np.float32)])
    return float(cycles.get()[0]) / iters


@pytest.mark.parametrize("threads", [256, 1024])
def test_barrier_release_adds_its_per_warp_cost(threads):
    base = _barrier_round(_gpu(barrier_cycles_per_warp=0), threads)
    slower = _barrier_round(_gpu(barrier_cycles_per_warp=5), threads)
    assert slower - base == pytest.approx(5 * threads // 32, abs=1.0)


def test_a_write_stream_larger_than_l2_runs_at_dram_bandwidth_not_l2():
    gpu = _gpu(sms=4)
    kernel = gpu.load(str(KERNELS / "probe.ptx"))["write_ws"]
    blocks, threads, ws, iters = 16, 512, 64 << 20, 64
    run = gpu.launch(kernel, grid=(blocks,), block=(threads,),
                     args=[gpu.zeros(ws // 4, np.float32), np.uint64(ws // 16 - 1), np.int32(iters)])
    gbs = 16.0 * blocks * threads * iters / run.seconds / 1e9
    assert gbs <= gpu.config.dram_bandwidth_gbs * 1.02      # the slice's share of DRAM bandwidth
    assert run.metrics["dram__bytes_write.sum"] > 0


def test_measured_cases_take_their_figures_from_the_measurement_file():
    cases = [case for case in load_cases() if "measured" in case.meta]
    assert len(cases) >= 10
    for case in cases:
        data = json.loads((MEASURED_DIR / case.meta["measured"]).read_text())["measurements"]
        for point in case.points:
            field = point.get("measured_field", "value")
            hits = [m for m in data if all(m.get(k) == v for k, v in point["match"].items())]
            assert len(hits) == 1 and point["published"] == float(hits[0][field]), (case.name, point["label"])
        assert "measured by this project" in case.meta["source"]


def test_a_match_that_is_not_exactly_one_measurement_is_an_error(tmp_path):
    with pytest.raises(CaseError, match="0 measurements"):
        measured_value("h200.json", {"family": "sgemm", "kernel": "no_such_kernel"}, "here")
    with pytest.raises(CaseError, match="measurements in h200.json match"):
        measured_value("h200.json", {"family": "sgemm"}, "here")
    text = (Path(__file__).resolve().parent.parent / "validation" / "cases" / "mma_h200.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('kernel = "mma_f16_16816"}', 'kernel = "mma_nothing"}'))
    with pytest.raises(CaseError, match="bad.toml: point 1"):
        load_case(bad)


@pytest.mark.parametrize("spread", [1, 8])
def test_store_sectors_occupy_their_l2_slice_at_the_store_rate(spread):
    """A store-only stream into an L2-resident buffer is bound by l2_write_bytes_per_cycle (set here to a quarter
    of the read rate so it binds): sectors per cycle = that rate / 32 B for whole sectors, and the partial-store
    rate (the config's partial / whole ratio times the same quarter) / 32 B for 4-byte ones."""
    base = load_config("h200")
    whole = base.l2_bytes_per_cycle / 4
    partial = whole * base.l2_partial_write_bytes_per_cycle / base.l2_write_bytes_per_cycle
    gpu = _gpu(sms=4, l2_write_bytes_per_cycle=whole, l2_partial_write_bytes_per_cycle=partial)
    kernel = gpu.load(str(KERNELS / "probe.ptx"))["st_spread"]
    blocks, threads, words = 16, 512, 65536
    buf = gpu.zeros(words, np.float32)

    def sectors_per_cycle(iters):
        run = gpu.launch(kernel, grid=(blocks,), block=(threads,), args=[buf, np.int32(spread), np.uint64(words - 1),
                                                                        np.int32(iters)])
        return run.cycles, run.metrics["lts__t_sectors.sum"]
    c1, s1 = sectors_per_cycle(32)
    c2, s2 = sectors_per_cycle(64)
    rate = (s2 - s1) / (c2 - c1)
    config = gpu.config
    bound = (config.l2_write_bytes_per_cycle if spread == 1 else config.l2_partial_write_bytes_per_cycle) / 32
    assert 0.85 * bound <= rate <= 1.02 * bound
