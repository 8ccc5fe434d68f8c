"""The policy of sampled simulation (``GPU(..., sampling="auto" | "off" | SamplingPolicy(...))``): when to stop
sampling and what to do with the blocks not timed. Kept apart from gpusim.launch.sampling (which needs the engine)
so that ``import gpusim`` stays light; the method itself is described there.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    min_samples: int = 3
    """Sampled waves needed before the stopping rule may stop (at least 2: a variance needs two)."""
    min_waves: int = 8
    """Grids of fewer waves run in full."""
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
