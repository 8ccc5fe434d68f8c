"""The policy of sampled simulation (``GPU(..., sampling="auto" | "off" | SamplingPolicy(...))``): when to stop
sampling and what to do with the blocks not timed; and ``SamplingInfo``, what sampling did in a launch
(``run.sampling``). Kept apart from gpusim.launch.sampling (which needs the engine) so that ``import gpusim``
stays light and the Run can name the type; the method itself is described there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpusim.errors import ConfigError

SAMPLING_MODES = ("off", "auto")


@dataclass(frozen=True)
class SamplingPolicy:
    """How a launch is sampled (``GPU(..., sampling=SamplingPolicy(...))``; ``"auto"`` is the defaults)."""

    tolerance: float = 0.02
    """Stop once the interval's half-width is at most this fraction of the estimated cycles."""
    confidence: float = 0.95
    """Confidence level of ``run.cycles_interval``."""
    warmup_waves: int = 1
    """Waves simulated before samples count (the first wave starts in lockstep, with cold caches)."""
    min_samples: int = 5
    """Samples needed before the stopping rule may stop (at least 2: a variance needs two). Five, not fewer: a
    variance from three samples is too often far below the true one (measured: a full-chip grid whose three
    samples agreed to 0.3 % while its waves vary by 2 %, benchmarks/bench_sampling.py)."""
    min_waves: int = 12
    """Grids of fewer waves run in full: a warm-up wave, ``min_samples`` sampled and the drain are half of 12."""
    max_fraction: float = 0.5
    """Past this fraction of the grid's blocks dispatched without the interval narrowing, run in full."""
    execute_rest: bool = True
    """Run the blocks not timed on the functional engine (outputs correct); False leaves them unexecuted."""

    def __post_init__(self) -> None:
        checks = [("tolerance", 0 < self.tolerance < 1, "a fraction in (0, 1)"),
                  ("confidence", 0 < self.confidence < 1, "a probability in (0, 1)"),
                  ("warmup_waves", isinstance(self.warmup_waves, int) and self.warmup_waves >= 0, "an int >= 0"),
                  ("min_samples", isinstance(self.min_samples, int) and self.min_samples >= 2, "an int >= 2"),
                  ("min_waves", isinstance(self.min_waves, int) and self.min_waves >= 2, "an int >= 2"),
                  ("max_fraction", 0 < self.max_fraction <= 1, "a fraction in (0, 1]"),
                  ("execute_rest", isinstance(self.execute_rest, bool), "True or False")]
        for name, ok, expected in checks:
            if not ok:
                raise ConfigError(f"SamplingPolicy.{name} must be {expected}, got {getattr(self, name)!r}",
                                  field=f"sampling.{name}")


def parse_sampling(value) -> SamplingPolicy | None:
    """``GPU(sampling=...)``: "off" (None), "auto" (the default policy) or a SamplingPolicy."""
    if isinstance(value, SamplingPolicy):
        return value
    if value == "off" or value is None or value is False:
        return None
    if value == "auto" or value is True:
        return SamplingPolicy()
    raise ConfigError(f"sampling must be \"off\", \"auto\" or a gpusim.SamplingPolicy(...), got {value!r}",
                      field="sampling")


@dataclass
class SamplingInfo:
    """What sampling did in one launch (``run.sampling``)."""

    sampled: bool
    """True when part of the grid was extrapolated; False when it ran in full (``reason`` says why)."""
    reason: str
    """Why the launch ran in full ("" for a sampled one)."""
    interval: tuple[int, int]
    """The ``confidence`` interval of the kernel's cycles (low, high); (cycles, cycles) when run in full."""
    confidence: float
    blocks: int
    """Blocks in the grid."""
    blocks_timed: int
    """Blocks simulated in detail (the first ``blocks_timed`` in grid order)."""
    wave_blocks: int
    """Blocks per wave (resident blocks per SM x SMs)."""
    samples: int = 0
    """Sampled waves in the estimate."""
    timed_cycles: int = 0
    """Cycles of the timed part alone (its K blocks from start to drain)."""
    cycles_per_instruction: float = 0.0
    """Steady-state cycles per warp-instruction measured over the samples (the ratio estimator)."""
    timed_instructions: int = 0
    rest_instructions: int = 0
    """Warp-instructions of the blocks not timed (exact when they were executed, else estimated)."""
    blocks_not_executed: int = 0
    """Blocks not executed at all (``execute_rest=False``): their outputs were not computed."""
    extrapolated: list[str] = field(default_factory=list)
    """Metric names whose values are extrapolated (the rest are exact)."""

    @property
    def fraction_simulated(self) -> float:
        """Fraction of the grid's blocks simulated in detail."""
        return self.blocks_timed / self.blocks if self.blocks else 1.0

    def summary(self) -> str:
        """One line for reports."""
        if not self.sampled:
            return f"simulated in full ({self.reason})"
        low, high = self.interval
        confidence = f"{100 * self.confidence:g} %"
        text = (f"sampled: {self.blocks_timed} of {self.blocks} blocks ({100 * self.fraction_simulated:.1f} %, "
                f"{self.samples} samples, waves of {self.wave_blocks} blocks) timed in detail, the rest "
                f"extrapolated; {confidence} interval of cycles [{low:,}, {high:,}]")
        if self.blocks_not_executed:
            text += f"; {self.blocks_not_executed} blocks NOT executed (their outputs were not computed)"
        return text

    def to_dict(self) -> dict:
        return {"sampled": self.sampled, "reason": self.reason, "cycles_interval": list(self.interval),
                "confidence": self.confidence, "blocks": self.blocks, "blocks_timed": self.blocks_timed,
                "fraction_simulated": self.fraction_simulated, "wave_blocks": self.wave_blocks,
                "samples": self.samples, "blocks_not_executed": self.blocks_not_executed,
                "extrapolated": list(self.extrapolated)}
