"""Timing of the tensor pipe, cp.async groups and ldmatrix (issue 14). Expected figures come from the
config's fields (issue interval, latency, sub-partitions), never from a previous run."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import gpusim
from gpusim.arch import isa

HERE = Path(__file__).parent / "ptx" / "tensor"


def _loop_run(gpu, name, warps_per_sm, iterations):
    kernel = gpu.load(HERE / "mma_loop.ptx")[name]
    a = gpu.to_device(np.arange(64, dtype=np.uint32) * 0x00010001)
    blocks = gpu.config.sms * warps_per_sm // 4
    d = gpu.zeros(blocks * 128, np.float32)
    return gpu.launch(kernel, grid=blocks, block=128, args=[a, d, np.int32(iterations)])


def test_register_resident_mma_loop_reaches_the_configured_rate():
    """Steady state of the loop (two lengths, so that the launch, the first global load and the tail
    drop out): FLOPs per SM-cycle within 10 % of the pipe's rate from the config."""
    gpu = gpusim.GPU("h100-sxm", sms=2)
    config = gpu.config
    short = _loop_run(gpu, "mma_loop_f16_f32", warps_per_sm=16, iterations=32)
    long = _loop_run(gpu, "mma_loop_f16_f32", warps_per_sm=16, iterations=96)
    expected = config.mma_sync_flops_per_cycle_per_sm("fp16")       # 4096 x 4 / interval
    assert expected == 4096 * config.sub_partitions_per_sm / config.mma_f16_m16n8k16_interval_cycles
    flops = long.metrics["gpusim__tensor_flops.sum"] - short.metrics["gpusim__tensor_flops.sum"]
    assert flops == 2 * 16 * 8 * 16 * 4 * (96 - 32) * 16 * config.sms
    got = flops / ((long.cycles - short.cycles) * config.sms)
    assert abs(got / expected - 1) < 0.10, (got, expected)
    assert got <= expected * 1.0001       # never above the pipe's rate
    # ~67 % of the dense peak on H100, as measured (not more)
    assert got / config.tensor_peak_flops_per_cycle_per_sm("fp16") < 0.70
    assert long.metrics["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"] > 80
    assert long.metrics["sm__inst_executed_pipe_tensor_op_hmma.sum"] == 4 * 96 * 16 * config.sms


def test_dependent_mma_chain_pays_the_latency():
    gpu = gpusim.GPU("h100-sxm", sms=1)
    iterations = 40
    run = _loop_run(gpu, "mma_chain_f16_f32", warps_per_sm=4, iterations=iterations)   # 1 warp per sub-partition
    latency = gpu.config.mma_f16_m16n8k16_latency_cycles
    assert iterations * latency <= run.cycles <= iterations * latency * 1.3 + 2000
    assert run.stalls["wait"] >= 4 * iterations * (latency - 1) * 0.9     # HMMA: fixed latency (no SB in SASS)


def test_rate_follows_the_config_interval():
    """Doubling the issue interval halves the throughput: the field really drives the timing."""
    base = gpusim.GPU("h100-sxm", sms=1)
    slow = gpusim.GPU("h100-sxm", sms=1, mma_f16_m16n8k16_interval_cycles=12)
    fast = [_loop_run(base, "mma_loop_f16_f32", 16, n).cycles for n in (16, 48)]
    slow = [_loop_run(slow, "mma_loop_f16_f32", 16, n).cycles for n in (16, 48)]
    assert abs((slow[1] - slow[0]) / (fast[1] - fast[0]) - 2.0) < 0.1


def test_wmma_priced_as_two_hmma():
    config = gpusim.GPU("h100-sxm").config
    table = isa.isa_array(config)
    wmma = isa.isa_row(isa.c.OP_WMMA_MMA, 0, "wmma.mma.f16")
    mma = isa.isa_row(isa.c.OP_MMA, 0, "mma.m16n8k16.f16")
    assert table[wmma, isa.I_INTERVAL] == 2 * table[mma, isa.I_INTERVAL]
    assert table[wmma, isa.I_LATENCY] == table[mma, isa.I_LATENCY] + table[mma, isa.I_INTERVAL]


def test_cp_async_wait_group_waits_for_the_copy():
    """The copy's global latency is paid at wait_group, as long_scoreboard, and not at issue."""
    gpu = gpusim.GPU("h100-sxm", sms=1)
    mod = gpu.load(HERE / "mma_sync.ptx")
    src = gpu.to_device(np.arange(160, dtype=np.uint32))
    dst = gpu.zeros(160, np.uint32)
    gpu.flush_caches()
    run = gpu.launch(mod["cp_async_zero_fill"], grid=1, block=32, args=[src, dst, np.int32(16)])
    # every sector comes from DRAM: at least a DRAM row hit's latency (the DRAM latency, a row conflict's,
    # less tRP + tRCD; engine/memory/dram.py)
    c = gpu.config
    cold = math.ceil(c.dram_latency_cycles - (c.dram_trp_ns + c.dram_trcd_ns) * c.core_clock_mhz / 1000)
    assert run.stalls["long_scoreboard"] >= cold
    assert run.cycles >= cold


def _ldmatrix_wavefronts(row_offsets: list[int], banks: int = 32, bank_bytes: int = 4) -> int:
    """Wavefronts of one 8 x 16-byte ldmatrix matrix: the most distinct 4-byte words any bank serves."""
    per_bank: dict[int, set] = {}
    for offset in row_offsets:
        for word in range(offset // bank_bytes, (offset + 16) // bank_bytes):
            per_bank.setdefault(word % banks, set()).add(word)
    return max(len(words) for words in per_bank.values())


def test_ldmatrix_wavefronts_follow_the_row_addresses():
    """ldmatrix.x4 of a 16 x 16 f16 tile (rows 32 bytes apart) and .x2 of an 8 x 16 one: the row addresses
    of each 8 x 8 matrix decide its bank conflicts (computed here from the kernel's addressing)."""
    gpu = gpusim.GPU("h100-sxm", sms=1)
    mod = gpu.load(HERE / "mma_sync.ptx")
    a = np.ones((16, 16), np.float16)
    b = np.ones((8, 16), np.float16)
    d = gpu.zeros(128, np.float32)
    run = gpu.launch(mod["ldmatrix_cp_async_mma"], grid=1, block=32,
                     args=[gpu.to_device(a), gpu.to_device(b), d, np.int32(0)])
    a_rows = [((lane % 16) * 16 + (lane // 16) * 8) * 2 for lane in range(32)]         # bytes, kernel's formula
    b_rows = [512 + ((lane % 8) * 16 + ((lane // 8) % 2) * 8) * 2 for lane in range(16)]
    expected = sum(_ldmatrix_wavefronts(a_rows[8 * j:8 * j + 8]) for j in range(4)) + \
        sum(_ldmatrix_wavefronts(b_rows[8 * j:8 * j + 8]) for j in range(2))
    assert expected == 12        # every matrix 2-way conflicted: 8 rows 32 bytes apart span the banks twice
    assert run.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == expected
    assert run.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == expected - (4 + 2)
