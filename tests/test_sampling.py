"""Sampled simulation (gpusim.launch.sampling, issue 26): every expectation comes from a full run of the same
launch (its cycles, its instruction counts), numpy (the outputs), the config (waves = blocks per SM x SMs) or
a published table (Student's t quantiles). Small grids on the teaching config keep it fast."""

import math

import numpy as np
import pytest

import gpusim
from gpusim.errors import ConfigError
from gpusim.launch.sampling_deps import atomic_steers_control
from gpusim.launch.sampling_stats import ratio_estimate, t_quantile
from gpusim.observe.export import run_schema, validate

PTX = """
.version 7.0
.target sm_80
.address_size 64

.visible .entry lcg(.param .u64 out, .param .u32 iters)
{
  .reg .u32 %r<8>;
  .reg .u64 %rd<4>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [iters];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.u32 %r5, %r2, %r3, %r4;
  mov.u32 %r6, %r5;
  mov.u32 %r7, 0;
LOOP:
  mad.lo.u32 %r6, %r6, 1664525, 1013904223;
  add.u32 %r7, %r7, 1;
  setp.lt.u32 %p1, %r7, %r1;
  @%p1 bra LOOP;
  mul.wide.u32 %rd2, %r5, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r6;
  ret;
}

.visible .entry ticket(.param .u64 counter, .param .u64 out, .param .u32 n)
{
  .reg .u32 %r<4>;
  .reg .u64 %rd<5>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [counter];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r1, [n];
  atom.global.add.u32 %r2, [%rd1], 1;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra DONE;
  mul.wide.u32 %rd3, %r2, 4;
  add.u64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r2;
DONE:
  ret;
}
"""
BLOCKS, THREADS, ITERS = 512, 64, 32


def lcg_reference(n: int, iters: int) -> np.ndarray:
    x = np.arange(n, dtype=np.uint32)
    for _ in range(iters):
        x = x * np.uint32(1664525) + np.uint32(1013904223)
    return x


def launch_lcg(sampling, blocks=BLOCKS, **kw):
    gpu = gpusim.GPU("teaching", sampling=sampling)
    kernel = gpu.load_ptx(PTX)["lcg"]
    out = gpu.zeros(blocks * THREADS, np.uint32)
    run = gpu.launch(kernel, blocks, THREADS, [out, np.uint32(ITERS)], **kw)
    return run, out.get()


@pytest.fixture(scope="module")
def full():
    return launch_lcg("off")


@pytest.fixture(scope="module")
def sampled():
    return launch_lcg("auto")


def test_t_quantiles_match_the_published_table():
    # Student's t two-sided 95 % (p = 0.975) and one-sided 95 % critical values, as printed in any t table
    for p, df, value in ((0.975, 1, 12.706), (0.975, 2, 4.303), (0.975, 10, 2.228), (0.975, 30, 2.042),
                         (0.95, 5, 2.015), (0.975, 10**6, 1.960)):
        assert t_quantile(p, df) == pytest.approx(value, abs=5e-4)


def test_ratio_estimator_is_cochrans():
    rng = np.random.default_rng(3)
    w = rng.integers(900, 1100, 12).astype(float)
    t = 0.7 * w + rng.normal(0, 20, 12)
    est = ratio_estimate(list(t), list(w))
    ratio = t.sum() / w.sum()
    se = math.sqrt(((t - ratio * w) ** 2).sum() / 11 / 12) / w.mean()
    assert est.cycles_per_instruction == pytest.approx(ratio)
    assert est.standard_error == pytest.approx(se)
    assert est.half_width(5000.0, 0.95) == pytest.approx(t_quantile(0.975, 11) * se * 5000.0)


def test_sampling_is_off_by_default_and_checked():
    assert gpusim.GPU("teaching").sampling is None
    assert gpusim.GPU("teaching", sampling="auto").sampling == gpusim.SamplingPolicy()
    with pytest.raises(ConfigError, match="sampling must be"):
        gpusim.GPU("teaching", sampling="sometimes")
    with pytest.raises(ConfigError, match="tolerance"):
        gpusim.SamplingPolicy(tolerance=0)
    with pytest.raises(ConfigError, match="min_samples"):
        gpusim.SamplingPolicy(min_samples=1)


def test_a_full_run_has_a_point_interval(full):
    run, _ = full
    assert run.sampling is None and not run.sampled
    assert run.cycles_interval == (run.cycles, run.cycles)


def test_uniform_grid_sampled_interval_covers_the_full_run(full, sampled):
    full_run, _ = full
    run, out = sampled
    info = run.sampling
    assert run.sampled and info.reason == ""
    low, high = run.cycles_interval
    assert low <= full_run.cycles <= high
    assert abs(run.cycles - full_run.cycles) <= 0.02 * full_run.cycles
    assert (high - low) / 2 <= 0.02 * run.cycles + 1           # the stopping rule's tolerance
    wave = full_run.occupancy.blocks_per_sm * full_run.config.sms
    assert info.wave_blocks == wave and info.blocks == BLOCKS
    assert info.blocks_timed < BLOCKS and info.blocks_timed % wave == 0
    assert info.fraction_simulated == info.blocks_timed / BLOCKS
    # every block executed: outputs and instruction counts are exact
    np.testing.assert_array_equal(out, lcg_reference(BLOCKS * THREADS, ITERS))
    np.testing.assert_array_equal(run.pc_counts, full_run.pc_counts)
    assert "smsp__inst_executed.sum" not in info.extrapolated
    assert "sm__cycles_elapsed.max" in info.extrapolated
    assert run.metrics["sm__cycles_elapsed.max"] == run.cycles


def test_sampled_runs_are_deterministic(sampled):
    again, _ = launch_lcg("auto")
    run, _ = sampled
    assert (again.cycles, again.cycles_interval) == (run.cycles, run.cycles_interval)
    assert again.metrics == run.metrics and again.stalls == run.stalls


def test_skipping_the_rest_leaves_those_blocks_unexecuted(full):
    full_run, _ = full
    run, out = launch_lcg(gpusim.SamplingPolicy(execute_rest=False))
    info = run.sampling
    k = info.blocks_timed * THREADS
    assert info.blocks_not_executed == BLOCKS - info.blocks_timed > 0
    np.testing.assert_array_equal(out[:k], lcg_reference(BLOCKS * THREADS, ITERS)[:k])
    assert not out[k:].any()                               # gpu.zeros: nothing wrote them
    assert "smsp__inst_executed.sum" in info.extrapolated
    assert run.cycles_interval[0] <= full_run.cycles <= run.cycles_interval[1]
    assert "NOT executed" in run.report()


def test_atomic_that_steers_control_flow_runs_in_full():
    gpu = gpusim.GPU("teaching", sampling="auto")
    module = gpu.load_ptx(PTX)
    kernel = module["ticket"]
    line = next(i for i, text in enumerate(PTX.splitlines(), 1) if "atom.global" in text)
    assert atomic_steers_control(kernel.program) == line
    assert atomic_steers_control(module["lcg"].program) is None
    n = BLOCKS * THREADS
    counter, out = gpu.zeros(1, np.uint32), gpu.zeros(n, np.uint32)
    run = gpu.launch(kernel, BLOCKS, THREADS, [counter, out, np.uint32(n)])
    assert not run.sampled and f":{line})" in run.sampling.reason and "atomic" in run.sampling.reason
    assert run.sampling.blocks_timed == BLOCKS and run.cycles_interval == (run.cycles, run.cycles)
    np.testing.assert_array_equal(np.sort(out.get()), np.arange(n, dtype=np.uint32))


def test_histogram_atomics_do_not_steer_control_flow():
    gpu = gpusim.GPU("teaching")
    module = gpu.load(gpusim.programs.catalog.programs_dir() / "histogram.ptx")
    assert atomic_steers_control(module["histogram"].program) is None


def test_cooperative_and_small_grids_run_in_full(full):
    full_run, _ = full
    wave = full_run.occupancy.blocks_per_sm * full_run.config.sms
    run, out = launch_lcg("auto", blocks=wave, cooperative=True)
    assert not run.sampled and "cooperative" in run.sampling.reason
    run, _ = launch_lcg("auto", blocks=wave)
    assert not run.sampled and "persistent-style grid" in run.sampling.reason
    run, out = launch_lcg("auto", blocks=3 * wave)
    assert not run.sampled and "3.0 waves" in run.sampling.reason
    np.testing.assert_array_equal(out, lcg_reference(3 * wave * THREADS, ITERS))


def test_report_json_and_html_say_sampled(sampled, tmp_path):
    run, _ = sampled
    text = run.report()
    assert "(sampled)" in text.splitlines()[0] and "Sampling: sampled:" in text
    document = run.to_dict()
    assert document["sampling"]["sampled"] is True
    assert document["sampling"]["cycles_interval"] == list(run.cycles_interval)
    assert validate(document, run_schema()) == []
    run.to_html(tmp_path / "r.html")
    assert "(sampled</b>" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_trace_covers_only_the_timed_blocks():
    run, _ = launch_lcg("auto", trace=True)
    blocks = np.asarray(run.trace.intervals()["block"])
    assert blocks.size and blocks.max() == run.sampling.blocks_timed - 1 and blocks.min() == 0


def test_cli_sample_flag(capsys):
    from gpusim.cli import main

    # vecadd's 5000 elements in 256-thread blocks: 20 blocks, under 8 waves of the teaching config
    code = main(["run", "vecadd", "--config", "teaching", "--sample", "0.05"])
    out = capsys.readouterr().out
    assert code == 0
    from gpusim.programs.catalog import run_program

    functional = run_program("vecadd", gpu=gpusim.GPU("teaching"), timing=False).runs[0]
    blocks, sms = functional.grid[0], functional.config.sms
    wave = min(functional.occupancy.blocks_per_sm, -(-blocks // sms)) * sms
    min_waves = gpusim.SamplingPolicy().min_waves
    assert blocks == 20 and wave < blocks < min_waves * wave
    assert f"simulated in full (grid of {blocks / wave:.1f} waves, fewer than the policy's min_waves ({min_waves}))" \
        in out
