"""Which regime a kernel run is in -- memory-, compute-, latency- or launch-bound -- from its metrics alone.

The rules (documented in docs/observability.md, tested in tests/test_report.py and tests/test_advice.py):

1. **memory-bound** when the busiest memory level (DRAM, L2 or L1/shared throughput) runs at
   ``MEMORY_BOUND_PCT`` (60 %) of its peak or more;
2. **compute-bound** when the schedulers issue in ``COMPUTE_BOUND_PCT`` (60 %) of the SMs' active
   cycles or more, or the busiest math pipe is that busy (whichever of 1 and 2 is further above its
   threshold wins when both hold);
3. **launch-bound** when neither holds, the whole grid fits on the chip at once (less than one wave, so
   this launch cannot bring more warps) and the kernel runs shorter than one host launch call
   (``launch_cpu_us``): the work per launch is too small, and back to back such launches are paced by
   the launch calls, not by the GPU;
4. otherwise **latency-bound**: nothing is near its peak, so warps spend their time waiting; the
   reason names the stall that holds them most (``long_scoreboard``, ``barrier``, ...).

``classify(metrics, config)`` needs only the metrics dict (``Run.metrics``, or the ``metrics`` a system
timeline keeps per kernel span) and the config, so a lab can classify every kernel of a timeline the way
the report classifies one run. Missing metrics count as 0 (and skip rule 3).

Simplifications: thresholds are fixed rules of thumb, not a model; the launch rule compares the kernel's
own duration with one launch call's CPU time and ignores what the host does between launches.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.observe.metrics import PIPE_METRICS

MEMORY_BOUND_PCT = 60.0
"""A memory level at or above this % of peak throughput makes a run memory-bound."""
COMPUTE_BOUND_PCT = 60.0
"""Issue slots or a math pipe at or above this % of peak make a run compute-bound."""
MEMORY_LEVELS = ("DRAM", "L2", "L1/shared")
SOL_METRICS = {
    "SM issue": "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "L1/shared": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "L2": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "DRAM": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
}
STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
FAMILY_OF_KIND = {
    "memory-bound": "memory",
    "compute-bound": "compute",
    "latency-bound": "latency",
    "launch-bound": "launch",
    "functional": "",
}
"""Verdict kind -> the family of suggestions that can make such a run faster."""


@dataclass(frozen=True)
class Regime:
    """The classification of one run: ``kind`` (memory-bound, ...), what limits it and why."""

    kind: str
    limiter: str
    reason: str
    memory_level: str = ""
    memory_pct: float = 0.0
    compute_name: str = ""
    compute_pct: float = 0.0
    waves: float | None = None
    microseconds: float | None = None

    @property
    def family(self) -> str:
        """memory, compute, latency or launch: the suggestions that fit this regime."""
        return FAMILY_OF_KIND[self.kind]


def _get(metrics: dict, name: str) -> float:
    return float(metrics.get(name, 0.0) or 0.0)


def sol_from_metrics(metrics: dict) -> dict[str, float]:
    """% of peak: SM issue, L1/shared, L2, DRAM and each math pipe ("fma pipe", ...)."""
    out = {name: _get(metrics, metric) for name, metric in SOL_METRICS.items()}
    out.update({f"{name} pipe": pct for name, pct in pipes_from_metrics(metrics).items()})
    return out


def pipes_from_metrics(metrics: dict) -> dict[str, float]:
    """% of active cycles each math pipe was busy (pipes without a metric are left out)."""
    return {name: _get(metrics, metric) for name, metric in PIPE_METRICS.items() if metric in metrics}


def stalls_from_metrics(metrics: dict) -> dict[str, float]:
    """{state: warp-cycles} from the ``smsp__pcsamp_warps_issue_stalled_<state>.sum`` metrics."""
    return {
        key[len(STALL_PREFIX) : -len(".sum")]: float(value)
        for key, value in metrics.items()
        if key.startswith(STALL_PREFIX) and key.endswith(".sum")
    }


def dominant_stall(stalls: dict) -> tuple[str, float]:
    """The state (other than issuing) warps spend most warp-cycles in, and its share of all of them."""
    total = float(sum(stalls.values()))
    waiting = {k: v for k, v in stalls.items() if k not in ("selected", "not_selected") and v}
    if not waiting or not total:
        return "", 0.0
    name = max(waiting, key=lambda state: waiting[state])
    return name, waiting[name] / total


def launch_waves(metrics: dict, config) -> float | None:
    """Blocks of the grid over the blocks the chip holds at once (None when the metrics lack them)."""
    blocks = metrics.get("launch__grid_size")
    per_sm = metrics.get("launch__occupancy_limit_blocks")
    if not blocks or not per_sm:
        return None
    return float(blocks) / (float(per_sm) * int(config.sms))


def classify(metrics: dict, config, stalls: dict | None = None) -> Regime:
    """The regime of a timed run from its metrics (and stalls; by default read from the metrics)."""
    sol = sol_from_metrics(metrics)
    memory_level = max(MEMORY_LEVELS, key=lambda k: sol[k])
    memory_pct = sol[memory_level]
    pipes = pipes_from_metrics(metrics)
    compute_name, compute_pct = "SM issue", sol["SM issue"]
    if pipes:
        busiest = max(pipes, key=lambda pipe: pipes[pipe])
        if pipes[busiest] > compute_pct:
            compute_name, compute_pct = f"{busiest} pipe", pipes[busiest]
    memory_over = memory_pct - MEMORY_BOUND_PCT
    compute_over = compute_pct - COMPUTE_BOUND_PCT
    stall, share = dominant_stall(stalls if stalls is not None else stalls_from_metrics(metrics))
    waves = launch_waves(metrics, config)
    nanoseconds = metrics.get("gpu__time_duration.sum")
    microseconds = float(nanoseconds) / 1e3 if nanoseconds else None

    def regime(kind: str, limiter: str, reason: str) -> Regime:
        return Regime(kind, limiter, reason, memory_level=memory_level, memory_pct=memory_pct,
                      compute_name=compute_name, compute_pct=compute_pct, waves=waves, microseconds=microseconds)

    if memory_over >= 0 and memory_over >= compute_over:
        reason = f"{memory_level} throughput at {memory_pct:.0f}% of peak (threshold {MEMORY_BOUND_PCT:.0f}%)"
        return regime("memory-bound", memory_level, reason)
    if compute_over >= 0:
        reason = f"{compute_name} busy {compute_pct:.0f}% of active cycles (threshold {COMPUTE_BOUND_PCT:.0f}%)"
        return regime("compute-bound", compute_name, reason)
    busiest = f"busiest: {memory_level} {memory_pct:.0f}%, {compute_name} {compute_pct:.0f}%"
    launch_us = float(getattr(config, "launch_cpu_us", 0.0))
    if waves is not None and waves < 1.0 and microseconds is not None and microseconds < launch_us:
        reason = (
            f"the kernel runs {microseconds:.2f} us, less than one host launch call ({launch_us:g} us), and "
            f"its grid fills {waves:.0%} of one wave; no unit near its peak ({busiest})"
        )
        return regime("launch-bound", "launch", reason)
    reason = f"no unit near its peak ({busiest}); warps wait in {stall or 'no stall'} {share:.0%} of warp-cycles"
    return regime("latency-bound", stall, reason)
