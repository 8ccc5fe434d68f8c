"""bar.arrive (PTX ISA, "bar, barrier"): the arriving threads do not wait for the other participants; their arrival
counts towards the barrier's thread count. Fixture: tests/data/barriers/bar_arrive.cu (nvcc 13, sm_80)."""

from pathlib import Path

import numpy as np
import pytest

import gpusim

FIXTURE = Path(__file__).parent / "data" / "barriers" / "bar_arrive.ptx"
CHAIN = 1000


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
def test_arrival_publishes_what_was_written_before_it(timing):
    """Warp 0 writes a shared word, then arrives; warp 1 waits on the same barrier (64 threads), then reads it."""
    gpu = gpusim.GPU("h100-sxm", sms=1)
    out = gpu.zeros(4, np.int64)
    gpu.launch(gpu.load(str(FIXTURE))["arrive_probe"], grid=1, block=64, timing=timing,
               args=[out, np.int32(CHAIN), np.float32(1.0)])
    assert out.get()[2] == 42


def test_an_arriving_warp_does_not_wait():
    """Timed: warp 1 reaches its bar.sync only after CHAIN dependent FFMAs (at least CHAIN x fp32_latency_cycles);
    warp 0, which arrives, goes on at once: its clock read after the bar.arrive comes within a tenth of that."""
    gpu = gpusim.GPU("h100-sxm", sms=1)
    out = gpu.zeros(4, np.int64)
    gpu.launch(gpu.load(str(FIXTURE))["arrive_probe"], grid=1, block=64,
               args=[out, np.int32(CHAIN), np.float32(1.0)])
    arriver, waiter = out.get()[:2]
    chain = CHAIN * gpu.config.fp32_latency_cycles
    assert waiter >= chain
    assert arriver < chain / 10, (arriver, waiter)


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
def test_ping_pong_on_named_barriers(timing):
    """Two warps take turns (FlashAttention-3's and CUTLASS's ping-pong): warp t waits on barrier 1 + t, appends its
    id to a shared log, then arrives on the other's barrier. The log alternates 0, 1, 0, 1, ... on both paths: each
    arrival completes the other warp's barrier exactly once."""
    gpu = gpusim.GPU("h100-sxm", sms=1)
    rounds = 20
    out = gpu.zeros(2 * rounds, np.int32)
    gpu.launch(gpu.load(str(FIXTURE))["arrive_pingpong"], grid=1, block=64, timing=timing,
               args=[out, np.int32(rounds)])
    assert np.array_equal(out.get(), np.tile([0, 1], rounds))
