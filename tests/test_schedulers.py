"""Warp-scheduler policies (gpusim/engine/sm/schedulers.py): the policy table, config validation, and
known answers that follow from each policy's definition.

The kernel ``ROLES`` gives the two warps of a block different work on one scheduler (the config is cut to
one sub-partition per SM): warp 0 runs a chain of dependent FFMAs (each waits ``fp32_latency_cycles`` for
the previous one), warp 1 a burst of independent FFMAs (always ready; each adds its own constant, so code
generation's common-subexpression pass keeps them all). With one sub-partition the FFMA
pipe takes a warp-instruction every cycle (``fp32_lanes_per_sm`` >= 32), so the only thing that can delay
warp 0 is its scheduler choosing warp 1 over it.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.arch.config import SCHEDULER_POLICIES
from gpusim.engine.sm import schedulers
from gpusim.errors import ConfigError

CHAIN = 8
BURST = 24

ROLES = f"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry roles(.param .u64 out)
{{
 .reg .pred %p<2>; .reg .b32 %r<3>; .reg .f32 %f<{BURST + 4}>; .reg .b64 %rd<4>;
 mov.u32 %r1, %tid.x;
 shr.u32 %r2, %r1, 5;
 setp.eq.u32 %p1, %r2, 0;
 mov.f32 %f1, 0f3F800000;
 mov.f32 %f2, 0f3F000000;
 @%p1 bra $L_chain;
{chr(10).join(f" fma.rn.f32 %f{3 + i}, %f2, %f2, 0f{0x3F800000 + i:08X};" for i in range(BURST))}
{chr(10).join(f" add.f32 %f1, %f1, %f{3 + i};" for i in range(BURST))}
 bra.uni $L_done;
$L_chain:
{chr(10).join(" fma.rn.f32 %f1, %f1, %f2, %f2;" for _ in range(CHAIN))}
$L_done:
 ld.param.u64 %rd1, [out];
 mul.wide.u32 %rd2, %r1, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.f32 [%rd3], %f1;
 ret;
}}
"""


def _gpu(policy: str, **overrides) -> gpusim.GPU:
    return gpusim.GPU("teaching", sms=1, sub_partitions_per_sm=1, scheduler=policy, **overrides)


def _issues(gpu: gpusim.GPU, threads: int, trace: bool = True):
    kernel = gpu.load_ptx(ROLES)["roles"]
    run = gpu.launch(kernel, grid=1, block=threads, args=[gpu.empty(threads, np.float32)], trace=trace)
    return run, run.trace.raw_issues if trace else None


def _warp_issue_cycles(issues: np.ndarray, warp: int) -> list[int]:
    return issues[issues[:, 1] == warp, 0].tolist()


def test_policy_table_is_the_configs_list_in_code_order():
    assert tuple(name for name, _ in schedulers.POLICIES) == SCHEDULER_POLICIES
    assert schedulers.POLICY_CODES == {name: code for code, name in enumerate(SCHEDULER_POLICIES)}


def test_an_unknown_policy_is_a_config_error_naming_the_choices():
    with pytest.raises(ConfigError, match="scheduler.*oldest_first.*'youngest_first'"):
        gpusim.GPU("teaching", scheduler="youngest_first")


def test_oldest_first_never_delays_the_oldest_warp():
    """Strict age priority: the oldest warp issues whenever it can, so with the younger warp beside it
    its issue cycles are exactly those it has alone; its dependent FFMAs issue fp32_latency_cycles apart."""
    gpu = _gpu("oldest_first")
    latency = gpu.config.fp32_latency_cycles
    _, alone = _issues(gpu, 32)
    _, shared = _issues(gpu, 64)
    oldest = _warp_issue_cycles(shared, 0)
    assert oldest == _warp_issue_cycles(alone, 0)
    gaps = np.diff(oldest)
    assert np.count_nonzero(gaps == latency) >= CHAIN - 1
    # the younger warp issues only in the cycles the oldest cannot: never in the same cycle; once its
    # burst of always-ready FFMAs runs, it fills each wait of the oldest's chain, latency - 1 cycles
    younger = _warp_issue_cycles(shared, 1)
    assert not set(oldest) & set(younger)
    start = max(i for i in range(len(gaps) - CHAIN + 2) if (gaps[i:i + CHAIN - 1] == latency).all())
    chain = oldest[start:start + CHAIN]                    # the chain's FFMAs, latency apart
    filled = [len([c for c in younger if a < c < b]) for a, b in zip(chain[1:-1], chain[2:], strict=True)]
    assert filled == [latency - 1] * (CHAIN - 2)


def test_gto_keeps_issuing_the_younger_warp_while_the_oldest_is_ready():
    """Greedy then oldest: once the oldest warp stalls and the younger one issues, the scheduler stays with
    the younger (always ready) warp, so the oldest warp's chain is delayed; oldest_first does not."""
    _, alone = _issues(_gpu("gto"), 32)
    _, shared = _issues(_gpu("gto"), 64)
    assert _warp_issue_cycles(shared, 0)[-1] > _warp_issue_cycles(alone, 0)[-1]
    younger = _warp_issue_cycles(shared, 1)
    # the burst's 24 independent FFMAs issue back to back, one per cycle
    assert any(younger[i + BURST - 1] - younger[i] == BURST - 1 for i in range(len(younger) - BURST + 1))


@pytest.mark.parametrize("policy", SCHEDULER_POLICIES)
def test_every_policy_runs_the_same_instructions_with_the_same_results(policy: str):
    gpu = _gpu(policy)
    kernel = gpu.load_ptx(ROLES)["roles"]
    out = gpu.empty(64, np.float32)
    run = gpu.launch(kernel, grid=1, block=64, args=[out])
    got = out.get()
    chain = np.float32(1.0)
    for _ in range(CHAIN):
        chain = np.float32(chain * np.float32(0.5) + np.float32(0.5))
    burst = np.float32(1.0)
    for i in range(BURST):     # each burst FFMA: 0.5 * 0.5 + its own constant (the bits 0x3F800000 + i)
        constant = np.array([0x3F800000 + i], np.uint32).view(np.float32)[0]
        burst = np.float32(burst + np.float32(np.float32(0.25) + constant))
    assert (got[:32] == chain).all() and (got[32:] == burst).all()
    assert run.stalls["selected"] == run.metrics["smsp__inst_executed.sum"]


def test_two_level_active_set_size_changes_the_schedule():
    """Every warp starts in the active set; one that waits on global memory leaves it and rejoins when it
    issues while the set holds fewer than two_level_active_warps warps. A kernel with global loads and
    barriers (reduce_shared) issues in another order under another set size, with the same results."""
    from gpusim.programs.catalog import run_program

    orders, arrays = {}, {}
    for active in (1, 4):
        gpu = gpusim.GPU("teaching", scheduler="two_level", two_level_active_warps=active)
        result = run_program("reduce_shared", gpu=gpu, trace=True)
        assert result.ok, result.summary()
        orders[active] = result.runs[0].trace.raw_issues[:, 1].tolist()
        arrays[active] = result.arrays
    assert sorted(orders[1]) == sorted(orders[4])
    assert orders[1] != orders[4]
    for name in arrays[1]:
        np.testing.assert_array_equal(arrays[1][name], arrays[4][name])


def test_two_level_active_set_size_is_validated():
    with pytest.raises(ConfigError, match="two_level_active_warps"):
        gpusim.GPU("teaching", two_level_active_warps=0)
    with pytest.raises(ConfigError, match="two_level_active_warps"):
        gpusim.GPU("teaching", two_level_active_warps=5)    # a scheduler holds 16 / 4 warps
