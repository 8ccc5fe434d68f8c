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


def _samples(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(cycles, warp-instructions) of ``n`` waves: about 0.7 cycles per instruction with noise."""
    rng = np.random.default_rng(seed)
    w = rng.integers(900, 1100, n).astype(float)
    return 0.7 * w + rng.normal(0, 20, n), w


def _cochran_se(t: np.ndarray, w: np.ndarray, ratio: float) -> float:
    """Cochran's standard error of the ratio ``ratio`` over the k pairs (t, w): the residuals' sample variance
    over k, divided by the mean w."""
    k = len(t)
    return math.sqrt(((t - ratio * w) ** 2).sum() / (k - 1) / k) / w.mean()


def test_ratio_estimator_is_cochrans():
    t, w = _samples(3, 12)
    est = ratio_estimate(list(t), list(w))
    ratio = t.sum() / w.sum()
    se = _cochran_se(t, w, ratio)
    assert est.cycles_per_instruction == pytest.approx(ratio)
    assert est.standard_error == pytest.approx(se)
    assert est.half_width(5000.0, 0.95) == pytest.approx(t_quantile(0.975, 11) * se * 5000.0)


def test_batched_ratio_estimator_is_batch_means():
    # the error comes from k = n // b batches of b = max(1, n // 20) consecutive samples (the oldest n - k b
    # left out of the error); R stays the ratio of all samples' sums
    t, w = _samples(5, 45)
    est = ratio_estimate(list(t), list(w))
    ratio = t.sum() / w.sum()
    bt, bw = t[1:].reshape(22, 2).sum(axis=1), w[1:].reshape(22, 2).sum(axis=1)
    se = _cochran_se(bt, bw, ratio)
    assert (est.batches, est.n) == (22, 45)
    assert est.cycles_per_instruction == pytest.approx(ratio)
    assert est.standard_error == pytest.approx(se)
    assert est.half_width(5000.0, 0.95) == pytest.approx(t_quantile(0.975, 21) * se * 5000.0)
    assert ratio_estimate(list(t[:39]), list(w[:39])).batches == 39      # below 40: each sample its own batch


def _coverage(kind: str, rng, n: int = 100, rest: int = 400, reps: int = 1500) -> tuple[float, float, float]:
    """Monte Carlo: how often the 95 % interval of the rest's cycles (R W +- half) holds the rest's true cycles
    (the expected cost 0.47 w plus the process's noise), plain (b = 1) and batched, and the median widths'
    ratio batched / plain. Waves cost ~0.47 cycles per warp-instruction plus noise that is independent
    ('iid'), the difference of boundary jitters ('jitter': t_i = 0.47 w_i + e_i - e_(i-1)), or AR(1) with
    coefficient 0.5 ('ar1')."""
    hits = {1: 0, n // 20: 0}
    widths: dict[int, list[float]] = {1: [], n // 20: []}
    quantile = {b: t_quantile(0.975, n // b - 1) for b in hits}
    for _ in range(reps):
        w = rng.integers(4500, 5500, n + rest).astype(float)
        if kind == "iid":
            noise = rng.normal(0, 300, n + rest)
        elif kind == "jitter":
            e = rng.normal(0, 600, n + rest + 1)
            noise = e[1:] - e[:-1]
        else:
            shocks, noise = rng.normal(0, 300, n + rest), np.zeros(n + rest)
            for i in range(n + rest):
                noise[i] = (0.5 * noise[i - 1] if i else 0.0) + shocks[i]
        t = 0.47 * w + noise
        truth, future = t[n:].sum(), w[n:].sum()
        for b in hits:
            est = ratio_estimate(list(t[:n]), list(w[:n]), batch=b)
            half = quantile[b] * est.standard_error * future
            hits[b] += abs(est.cycles_per_instruction * future - truth) <= half
            widths[b].append(half / truth)
    b = n // 20
    return hits[1] / reps, hits[b] / reps, float(np.median(widths[b]) / np.median(widths[1]))


def test_batch_means_cover_correlated_waves_and_narrow_jittered_ones():
    rng = np.random.default_rng(11)
    plain, batched, ratio = _coverage("iid", rng)
    assert batched >= 0.92 and abs(batched - plain) <= 0.03 and ratio < 1.3     # independent: as before
    plain, batched, ratio = _coverage("jitter", rng)
    assert batched >= 0.95 and ratio < 0.6                                      # jitter: ~2x narrower
    plain, batched, ratio = _coverage("ar1", rng)
    assert plain < 0.75 and batched >= 0.85                                     # correlated: plain under-covers


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


WAVES_4_SMS = 384 * 4          # 384 waves of 8 blocks per SM on 4 h100-sxm SMs (benchmarks/bench_sampling.py)


@pytest.mark.slow
@pytest.mark.parametrize("name, sizes", [("vecadd", {"n": 256 * 8 * WAVES_4_SMS}),
                                         ("gemv", {"rows": 4 * 16 * WAVES_4_SMS, "cols": 64}),
                                         ("reduce_shfl", {"n": 256 * 8 * WAVES_4_SMS, "blocks": 8 * WAVES_4_SMS})])
def test_memory_bound_grids_are_sampled_and_covered(name, sizes):
    # vecadd: DRAM refreshes and write drains make its waves alternate ~1,500 and ~3,200 cycles for the same
    # work, so one sample per batch never narrowed to 2 % before half the grid (it ran in full); over batch
    # means it must stop early and hold the full run's cycles. gemv: each DRAM channel drains its few writes
    # about every 80 waves, waves ~4 % dearer; before the drain watch its interval closed on waves without a
    # drain and missed the full run's cycles (-1.0 %). reduce_shfl: its first waves after the L2 warm-up hold
    # fewer all-bank refreshes than their share (1.5 % cheaper); without the refresh-phase term the interval
    # missed the full run (-1.3 %)
    from gpusim.programs.catalog import load_program, run_program

    spec = load_program(name, sizes=sizes)
    full = run_program(spec, gpu=gpusim.GPU("h100-sxm", sms=4)).runs[0]
    result = run_program(spec, gpu=gpusim.GPU("h100-sxm", sms=4, sampling="auto"))
    run = result.runs[0]
    assert result.ok and run.sampled, run.sampling.reason
    low, high = run.cycles_interval
    assert low <= full.cycles <= high
    assert abs(run.cycles - full.cycles) <= 0.02 * full.cycles
    assert run.sampling.fraction_simulated <= gpusim.SamplingPolicy().max_fraction


def test_drain_watch_waits_for_two_drains_of_every_channel_that_will_drain():
    # engine/memory/dram.py drains a channel's writes in batches; samples must hold a whole period between two
    # drains of every channel whose writes, at the samples' rate, fill a batch in the blocks still to come
    from gpusim.engine.memory.dram import CH_DRAIN_END, CH_FIELDS, CH_WRITES
    from gpusim.launch.sampling import DramWatch

    channels = np.zeros((3, CH_FIELDS))
    watch = DramWatch()
    watch.start(channels, dispatched=100, batch=8)
    channels[0, CH_DRAIN_END] = 50.0                 # channel 0 drains ...
    watch.watch(channels)
    channels[0, CH_DRAIN_END] = 90.0                 # ... twice
    channels[1, CH_DRAIN_END] = 95.0                 # channel 1 once, and holds 3 more writes
    channels[1, CH_WRITES] = 3
    channels[2, CH_WRITES] = 2                       # channel 2 never: 2 writes in 100 blocks
    watch.watch(channels)
    assert list(watch.count) == [2, 1, 0]
    # 100 blocks sampled; channel 1 wrote 8 + 3 = 11, so 100 more blocks fill a batch: it must drain again
    assert not watch.covered(channels, dispatched=200, left=100)
    # 300 blocks to go: channel 2's 2 writes per 100 blocks fill 6 < 8, so it need not have drained
    channels[1, CH_DRAIN_END] = 99.0
    watch.watch(channels)
    assert watch.covered(channels, dispatched=200, left=300)
    # 400 blocks to go: channel 2 fills a batch there, and has not drained once
    assert not watch.covered(channels, dispatched=200, left=400)


def test_refresh_phase_is_one_trfc_over_the_window_at_the_bus_busy_share():
    # under all-bank refresh a window of samples may hold one refresh more or fewer than its share: one tRFC
    # over the window's cycles, scaled by the share of the window the channels' buses were busy
    from gpusim.engine.memory.dram import CH_FIELDS, CH_ROW_CONFLICTS, CH_ROW_HITS
    from gpusim.launch.sampling import DramWatch

    channels = np.zeros((4, CH_FIELDS))
    watch = DramWatch()
    watch.start(channels, dispatched=0, batch=8)
    channels[:, CH_ROW_HITS] = 300            # 4 channels x 500 bursts of 4 cycles in 10,000 cycles: 20 % busy
    channels[:, CH_ROW_CONFLICTS] = 200
    assert watch.refresh_phase(channels, 10_000.0) == 0.0          # per-bank refresh: nothing
    watch.refresh = (600.0, 4.0)
    assert watch.refresh_phase(channels, 10_000.0) == pytest.approx(0.2 * 600.0 / 10_000.0)
    channels[:, CH_ROW_HITS] = 3_000          # saturated: the share is capped at the whole window
    assert watch.refresh_phase(channels, 10_000.0) == pytest.approx(600.0 / 10_000.0)
