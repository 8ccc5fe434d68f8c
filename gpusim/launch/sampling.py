"""Sampled simulation: time the first waves of a grid in detail, extrapolate the rest with an error bar.

``GPU(..., sampling="auto")`` (or a ``SamplingPolicy``; default ``"off"``) and ``gpusim run --sample``. A wave is
the blocks the GPU holds at once (blocks per SM at this occupancy x SMs). The timed engine runs the grid from the
start as usual (``WaveSampler.drive`` replaces the slice driver, in small deterministic slices), watching after
each slice the clock, the blocks dispatched and the warp-instructions issued. After ``warmup_waves`` waves (and,
while the L2 is filling at a rate that fills it before the grid ends, until it is full: a full L2 costs dirty
write-backs and capacity misses that earlier waves do not show), each further wave of dispatched blocks (or as
many waves as make ``MIN_UNIT_BLOCKS``) is one sample: the cycles it took and the warp-instructions issued in it.
Once ``min_samples`` samples are in and the 95 % interval of the kernel's cycles (Student's t on the ratio
estimator over batch means, gpusim.launch.sampling_stats) is narrower than ``tolerance`` of the estimate, and
the samples hold two write drains of every DRAM channel that will drain in the rest (``DramWatch``, which also
adds to the interval what the samples' share of all-bank refreshes can be off by), the engine stops
dispatching: the blocks already on the SMs finish (the same drain the full grid ends with), and the timed run
ends after K of the N blocks. The blocks K..N-1 then run on the functional engine (outputs equal a full run's),
which counts their warp-instructions W exactly; the kernel's cycles are ``cycles(K blocks) + R W`` and the
interval ``+- (t se(R) W + end phase + refresh phase R W)``, the end phase being where the grid's last (maybe
partial) wave ends against the truncated grid's (``WaveSampler.end_phase_cycles``), the refresh phase what the
samples' share of all-bank refreshes can be off by (``DramWatch.refresh_phase``). The caches carry forward
within the timed part; the blocks run functionally touch no cache, so the L2 a later launch finds holds what the
timed blocks left.

Exact in a sampled run: the instruction counts (pc_counts: every block executed) and what derives from them
(flops, instruction mix). Extrapolated (``run.sampling.extrapolated``): cycles, seconds and every metric of time,
stalls, memory counters and pipe issues, scaled by total/timed warp-instructions (time-like SM activity by
estimated/timed cycles), so ratios (hit rates, stall shares) are the timed part's. The trace covers only the
timed blocks. ``SamplingPolicy(execute_rest=False)`` skips the functional run: faster, but the blocks past K
are not executed (their outputs keep what memory held; ``run.sampling.blocks_not_executed``) and W is
estimated from the timed blocks' instructions per block.

Runs in full, with ``run.sampling.reason``: kernels with grid-wide dependencies (gpusim.launch.sampling_deps),
grids of fewer than ``min_waves`` waves, and grids whose interval did not narrow before ``max_fraction`` of the
blocks were dispatched. The decision to stop depends only on simulated quantities, so a sampled run is
deterministic (same inputs, same interval, bit for bit).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gpusim.engine.memory.cache import NO_LINE
from gpusim.engine.memory.dram import (
    CH_DRAIN_END,
    CH_FIELDS,
    CH_ROW_CONFLICTS,
    CH_ROW_HITS,
    CH_WRITES,
    G_REFRESH_ALL,
    G_WRITE_BATCH,
    T_BURST,
    T_REFI,
    T_RFC,
)
from gpusim.engine.memory.memsys import P_DRAM_GEOMETRY, R_DRAM_TIMING, SRV_DRAM_CHANNEL
from gpusim.engine.semantics import state as S
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.timing import TIMED_SLICE
from gpusim.launch.sampling_deps import full_run_reason
from gpusim.launch.sampling_policy import SamplingInfo, SamplingPolicy, parse_sampling  # noqa: F401  (re-exported)
from gpusim.launch.sampling_stats import RatioEstimate, ratio_estimate
from gpusim.launch.slices import FIRST_BUDGET, next_budget


class WaveSampler:
    """Drives the timed loop in small slices, samples waves, and stops dispatching when the interval is narrow."""

    SLICES_PER_WAVE = 16
    """Observations per wave once the first wave's work is known (the sample boundaries' resolution)."""
    MIN_BUDGET = 256
    MIN_UNIT_BLOCKS = 32
    """A sample is one wave of dispatched blocks, or as many whole waves as make at least this many blocks:
    a sample's ends fall between blocks that start and finish at scattered cycles, and that jitter (which does
    not accumulate) must be small against the sample's length."""

    def __init__(self, policy: SamplingPolicy, n_blocks: int):
        self.policy = policy
        self.n_blocks = n_blocks
        self.cycles: list[int] = []
        self.instructions: list[int] = []
        self.blocks: list[int] = []
        self.stopped_at = 0                # blocks dispatched when dispatch was stopped (0: never)
        self.gave_up = False
        self.warm_blocks = 0
        self.l2_seen: tuple[int, int] | None = None
        self.was_warming = False
        """Blocks dispatched when the L2 stopped warming (0: it never was)."""
        self.wave_blocks = 0
        self.dram = DramWatch()
        self.refresh_phase = 0.0
        """At the stop: the relative error of the samples' rate from their share of all-bank refreshes."""

    def drive(self, call, ts, m, ms, on_slice=None):
        """``slices.drive`` with sampling: returns the last call's result (the timed loop's status, cycle)."""
        prm = ts.prm
        wave = int(prm[T.TP_BSLOTS] * prm[T.TP_NSM])
        self.wave_blocks = wave
        unit = wave * -(-self.MIN_UNIT_BLOCKS // wave)
        l2_tags = ms.l2[0]
        channels = ms.servers[SRV_DRAM_CHANNEL].reshape(-1, CH_FIELDS)
        write_batch = int(ms.params[P_DRAM_GEOMETRY + G_WRITE_BATCH])
        timing = ms.rates[R_DRAM_TIMING:]
        if ms.params[P_DRAM_GEOMETRY + G_REFRESH_ALL] and timing[T_REFI] > 0:
            self.dram.refresh = (float(timing[T_RFC]), float(timing[T_BURST]))
        budget = self.MIN_BUDGET
        target = (1 + self.policy.warmup_waves) * wave
        last = None                         # (cycle, blocks dispatched, instructions) at the last boundary
        slices_since = 0
        try:
            while True:
                result = call(budget)
                if result[0] != TIMED_SLICE:
                    return result
                if on_slice is not None:
                    on_slice()
                if self.stopped_at or self.gave_up:
                    budget = next_budget(max(budget, FIRST_BUDGET), 0.0)    # drain: slicing changes nothing
                    continue
                slices_since += 1
                self.dram.watch(channels)
                dispatched = int(ts.loop[T.LP_NEXT_BLOCK])
                if dispatched < target:
                    continue
                point = (int(ts.loop[T.LP_CYCLE]), dispatched, int(m.pc_counts[:, 0].sum()))
                warming = self._l2_warming(l2_tags, dispatched)
                if last is None:
                    budget = max(self.MIN_BUDGET, budget * slices_since // self.SLICES_PER_WAVE)
                    self.dram.start(channels, dispatched, write_batch)
                elif warming or self.was_warming:   # the unit in which the L2 became full is a transition too
                    self.warm_blocks = dispatched          # the samples so far saw an L2 not yet full: drop them
                    self.cycles, self.instructions, self.blocks = [], [], []
                    self.dram.start(channels, dispatched, write_batch)
                else:
                    self.cycles.append(point[0] - last[0])
                    self.instructions.append(point[2] - last[2])
                    self.blocks.append(point[1] - last[1])
                    self._decide(prm, point, channels)
                self.was_warming = warming
                last = point
                while target <= dispatched:        # the next sample ends at the same place in a wave
                    target += unit
                slices_since = 0
        except KeyboardInterrupt:
            raise KeyboardInterrupt() from None

    L2_FULL = 1.0
    """Fraction of the L2's lines valid at which it counts as full. Below 100 % some sets already evict, but the
    cost per block moved only once every line was valid in the programs measured (saxpy, vecadd); when accesses
    use only some sets the valid lines stop growing, and the projection below stops predicting a fill."""

    def _l2_warming(self, l2_tags, dispatched: int) -> bool:
        """True while the L2 is filling and, at the rate it filled over the last wave, will fill before the grid
        ends: the cost per block changes when it is full (dirty evictions, capacity misses), so waves sampled
        before then would not represent the rest."""
        capacity = l2_tags.size
        lines = int(np.count_nonzero(l2_tags != NO_LINE))
        previous, self.l2_seen = self.l2_seen, (dispatched, lines)
        if lines >= self.L2_FULL * capacity or previous is None:
            return False
        rate = (lines - previous[1]) / (dispatched - previous[0])
        return lines + rate * (self.n_blocks - dispatched) >= self.L2_FULL * capacity

    def _decide(self, prm, point, channels) -> None:
        cycle, dispatched, _ = point
        policy = self.policy
        left = self.n_blocks - dispatched
        if dispatched > policy.max_fraction * self.n_blocks or left <= 2 * self.wave_blocks:
            self.gave_up = True
            return
        if len(self.cycles) < policy.min_samples or not self.dram.covered(channels, dispatched, left):
            return
        estimate = ratio_estimate(self.cycles, self.instructions)
        rest = left * sum(self.instructions) / sum(self.blocks)
        total = cycle + estimate.cycles_per_instruction * rest
        cycles_per_block = estimate.cycles_per_instruction * sum(self.instructions) / sum(self.blocks)
        refresh = self.dram.refresh_phase(channels, sum(self.cycles))
        half = (estimate.half_width(rest, policy.confidence) + self.end_phase_cycles(cycles_per_block)
                + refresh * estimate.cycles_per_instruction * rest)
        if half <= policy.tolerance * total:
            prm[T.TP_NBLOCKS] = dispatched      # no block past these is dispatched: the SMs drain
            self.stopped_at = dispatched
            self.refresh_phase = refresh

    def end_phase_cycles(self, cycles_per_block: float) -> float:
        """The part of the interval the statistics do not cover: where the grid's last wave ends against where
        the truncated grid's did, half a wave's cycles either way. The linear extrapolation puts the end at the
        steady rate, but how the last wave's blocks line up (in lockstep or staggered, a partial wave taking
        anything from its share of a wave's time to a whole wave's) the sampled waves do not show; measured
        (benchmarks/bench_sampling.py), the end moved by 0.1 to 0.6 of a wave beyond the statistical interval."""
        return 0.5 * cycles_per_block * self.wave_blocks

    def estimate(self) -> RatioEstimate:
        return ratio_estimate(self.cycles, self.instructions)


class DramWatch:
    """The DRAM's periodic events seen by the samples since they began: write drains and all-bank refreshes.

    Write drains per channel. A channel drains its buffered writes in batches
    (``dram_writes_per_turnaround``, engine/memory/dram.py) and reads wait for a whole drain, so a kernel that
    writes little drains rarely: gemv on 4 H100 SMs drains each channel about every 80 waves, and those waves
    cost ~4 % more. Samples that hold no drain of a channel that will drain in the rest of the grid do not
    represent it, however narrow their interval: the sampler stops only once every such channel has drained
    twice in the samples (a whole period between two drains).

    All-bank refresh: ``refresh_phase`` bounds what the samples' share of refreshes can be off by, a term the
    interval adds (the samples' variance does not show a period longer than a few of them)."""

    def __init__(self):
        self.count: np.ndarray | None = None       # drains per channel since start
        self.seen: np.ndarray | None = None        # each channel's last drain end, as last watched
        self.writes0: np.ndarray | None = None     # each channel's buffered writes at start
        self.blocks0 = 0
        self.batch = 0
        self.bursts0 = 0.0                         # column accesses (bursts) served by all channels at start
        self.refresh: tuple[float, float] | None = None
        """(tRFC, burst) in core cycles under all-bank refresh (None: per-bank refresh, or none)."""

    def start(self, channels: np.ndarray, dispatched: int, batch: int) -> None:
        self.count = np.zeros(channels.shape[0], dtype=np.int64)
        self.seen = channels[:, CH_DRAIN_END].copy()
        self.writes0 = channels[:, CH_WRITES].copy()
        self.blocks0, self.batch = dispatched, batch
        self.bursts0 = float(channels[:, CH_ROW_HITS:CH_ROW_CONFLICTS + 1].sum())

    def refresh_phase(self, channels: np.ndarray, window: float) -> float:
        """The relative error of the samples' cycles per instruction from all-bank refresh: each channel's bus
        stops for tRFC once every tREFI, and a window of samples holds one refresh more or fewer than its share
        depending on where it starts and ends against them (reduce_shfl on 4 H100 SMs: its first 5 waves
        after the L2 warm-up ran 1.5 % cheaper than the grid's mean, and per-bank refresh removed the bias).
        One tRFC over the window, scaled by the bus's busy share in it (a kernel that leaves DRAM idle loses
        nothing to a refresh)."""
        if self.refresh is None or window <= 0:
            return 0.0
        rfc, burst = self.refresh
        bursts = float(channels[:, CH_ROW_HITS:CH_ROW_CONFLICTS + 1].sum()) - self.bursts0
        busy = min(1.0, bursts * burst / (window * channels.shape[0]))
        return busy * rfc / window

    def watch(self, channels: np.ndarray) -> None:
        """After a slice: count the channels whose last drain changed (two drains in one slice count once)."""
        if self.seen is None:
            return
        ends = channels[:, CH_DRAIN_END]
        self.count += ends != self.seen
        self.seen[:] = ends

    def covered(self, channels: np.ndarray, dispatched: int, left: int) -> bool:
        """Whether every channel whose writes, at the samples' rate, fill a batch in the ``left`` blocks still to
        come has drained at least twice in the samples."""
        if self.count is None or self.writes0 is None or self.batch <= 0 or dispatched <= self.blocks0:
            return True
        writes = self.count * self.batch + channels[:, CH_WRITES] - self.writes0
        will_drain = writes * left / (dispatched - self.blocks0) >= self.batch
        return bool(np.all(self.count[will_drain] >= 2))


def run_sampled_launch(gpu, common: dict, params: np.ndarray, launch: np.ndarray, n_blocks: int, *, trace,
                       progress=False, cooperative=False, max_warp_instructions=None, check_functional=None,
                       default_limit=0, clustered=False):
    """A timed launch under ``gpu.sampling``: sampled when it may be, else in full; ``run.sampling`` says which.
    ``check_functional``, ``default_limit``: the runner's status check of a functional run (its errors) and its
    warp-instruction limit, for the blocks not timed (passed in: the runner imports this module)."""
    from gpusim.launch.timed import run_timed_launch

    policy = gpu.sampling
    config = common["config"]
    program = common["program"]
    wave = max(1, min(common["occupancy"].blocks_per_sm, -(-n_blocks // config.sms))) * config.sms
    reason = full_run_reason(gpu, program, n_blocks, wave, cooperative=cooperative, clustered=clustered)
    if not reason and n_blocks < policy.min_waves * wave:
        reason = f"grid of {n_blocks / wave:.1f} waves, fewer than the policy's min_waves ({policy.min_waves})"
    sampler = None if reason else WaveSampler(policy, n_blocks)
    run = run_timed_launch(gpu, common, params, launch, n_blocks, trace=trace, progress=progress, sampler=sampler)
    if sampler is not None and not sampler.stopped_at:
        reason = (f"the {100 * policy.confidence:g} % interval did not narrow to {100 * policy.tolerance:g} % "
                  f"before {100 * policy.max_fraction:g} % of the blocks were dispatched")
    if reason:
        run.sampling = SamplingInfo(False, reason, (run.cycles, run.cycles), policy.confidence, n_blocks,
                                    n_blocks, wave)
        return run
    assert sampler is not None
    limit = max_warp_instructions or default_limit
    return _extrapolate(gpu, run, sampler, params, launch, (limit, max_warp_instructions), check_functional)


def _extrapolate(gpu, run, sampler: WaveSampler, params, launch, limits, check_functional):
    policy = sampler.policy
    k, n = sampler.stopped_at, sampler.n_blocks
    timed_cycles = run.cycles
    timed_instructions = int(run.pc_counts[:, 0].sum())
    estimate = sampler.estimate()
    if policy.execute_rest:
        rest_counts = _run_rest_functionally(gpu, run, params, launch, k, n, limits, check_functional)
        rest = int(rest_counts[:, 0].sum())
        pc_counts = run.pc_counts + rest_counts
    else:
        rest = int(round((n - k) * timed_instructions / k))        # the timed blocks' mean, all k completed
        pc_counts = np.rint(run.pc_counts * ((timed_instructions + rest) / timed_instructions)).astype(np.int64)
    cycles = timed_cycles + estimate.cycles_per_instruction * rest
    per_block = estimate.cycles_per_instruction * sum(sampler.instructions) / sum(sampler.blocks)
    half = (estimate.half_width(rest, policy.confidence) + sampler.end_phase_cycles(per_block)
            + sampler.refresh_phase * estimate.cycles_per_instruction * rest)
    work_scale = (timed_instructions + rest) / timed_instructions
    time_scale = cycles / timed_cycles
    _scale_counters(run, work_scale, time_scale)
    run.pc_counts = pc_counts
    run.cycles = int(round(cycles))
    run._metrics = None
    exact = set() if not policy.execute_rest else set(_instruction_metrics(run))
    run.sampling = SamplingInfo(
        True, "", (int(math.floor(cycles - half)), int(math.ceil(cycles + half))), policy.confidence, n, k,
        sampler.wave_blocks, samples=estimate.n, timed_cycles=timed_cycles,
        cycles_per_instruction=estimate.cycles_per_instruction, timed_instructions=timed_instructions,
        rest_instructions=rest, blocks_not_executed=0 if policy.execute_rest else n - k,
        extrapolated=sorted(name for name in run.metrics if name not in exact))
    return run


_TIME_LIKE = ("sm_active_cycles", "sm_active_cycles_max")
_NOT_SCALED = ("sms_used", "blocks_done")


def _scale_counters(run, work_scale: float, time_scale: float) -> None:
    """Counters, stalls and per-line arrays of the timed part scaled to the whole grid."""
    for name, value in run.counters.items():
        if name in _NOT_SCALED:
            continue
        scale = time_scale if name in _TIME_LIKE else work_scale
        run.counters[name] = int(round(value * scale))
    run.stalls = {name: int(round(value * work_scale)) for name, value in run.stalls.items()}
    for attr in ("pc_stalls", "pc_memory"):
        array = getattr(run, attr)
        if array is not None:
            setattr(run, attr, np.rint(array * work_scale).astype(array.dtype))


def _instruction_metrics(run) -> list[str]:
    """The metrics a functional run has (they derive from pc_counts only: exact when every block executed)."""
    from gpusim.observe.metrics import derive_metrics

    timing = run.timing
    run.timing = False
    try:
        return list(derive_metrics(run))
    finally:
        run.timing = timing


def _run_rest_functionally(gpu, run, params, launch, first: int, n_blocks: int, limits, check_functional):
    """Execute blocks ``first``..``n_blocks``-1 on the functional engine (on ``gpu.threads`` workers when the
    blocks are independent: gpusim.launch.functional_threads); returns their pc_counts."""
    from gpusim.launch.functional_threads import run_blocks
    from gpusim.ptx.its_code import engine_code

    program, config, heap = run.program, run.config, gpu.heap
    wpb = int(launch[S.L_WARPS_PER_BLOCK])

    def machine(launch_array: np.ndarray) -> Any:
        # Any: the Machine record's fields are typed with the engine state (tests/test_typecheck.py NOT_YET_TYPED)
        m: Any = S.make_machine(warp_slots=wpb, n_regs=program.n_regs, stack_depth=int(launch[S.L_STACK_DEPTH]),
                                block_slots=1, shared_bytes=run.shared_bytes,
                                local_bytes=int(launch[S.L_LOCAL_BYTES]), heap=heap.data, valid=heap.valid,
                                params=params, launch=launch_array, n_inst=program.n_inst,
                                printf_bytes=config.printf_fifo_bytes if program.has_printf else 0)
        return m

    limit, given = limits           # the functional path's limit, and the one the launch gave (or None)
    code = engine_code(program, launch[S.L_RECONVERGENCE] == S.RECONV_ITS)
    done = run_blocks(gpu, machine, launch, program, code, first, n_blocks, limit, resident=1)
    check_functional(done.status, done.machine, program, done.bad_block, limit, done.executed, n_blocks,
                     given is not None)
    return done.pc_counts
