"""Model versus simulation: ``compare(run, model)`` lines up an analytical model's predictions with the
quantities the simulator measured, with the relative error of each, as a table and a plot.

A model is anything with ``predict(run) -> {quantity: value}`` (``MWPCWPPrediction``), a ``Roofline``
(its attainable FLOP/s at the run's intensity), a ``LatencyHiding`` (its DRAM bytes/s at the run's
resident warps), or a plain ``{quantity: value}`` dict. Quantities are ``cycles``, ``seconds`` or any
metric name of ``run.metrics``.

What it simplifies: the relative error is (model - simulated) / simulated, and a quantity the run did
not measure is an error rather than a silent gap.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpusim.analytic.models import LatencyHiding, Roofline, roofline_point


@dataclass(frozen=True)
class ComparisonRow:
    quantity: str
    model: float
    simulated: float

    @property
    def relative_error(self) -> float:
        """(model - simulated) / simulated; inf when the simulation measured 0 and the model did not."""
        if self.simulated == 0:
            return 0.0 if self.model == 0 else float("inf")
        return (self.model - self.simulated) / self.simulated


@dataclass(frozen=True)
class Comparison:
    """Model vs simulation, one row per quantity."""

    model_name: str
    rows: tuple[ComparisonRow, ...]

    def __getitem__(self, quantity: str) -> ComparisonRow:
        for row in self.rows:
            if row.quantity == quantity:
                return row
        raise KeyError(quantity)

    def table(self) -> str:
        width = max([len("quantity")] + [len(row.quantity) for row in self.rows])
        lines = [f"{'quantity':<{width}}  {'model':>14}  {'simulated':>14}  {'error %':>8}",
                 "-" * (width + 42)]
        for row in self.rows:
            lines.append(f"{row.quantity:<{width}}  {row.model:14.6g}  {row.simulated:14.6g}  "
                         f"{100.0 * row.relative_error:8.1f}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return f"{self.model_name} vs simulation\n{self.table()}"

    def plot(self, path: str | Path) -> Path:
        """A bar chart of model and simulation per quantity (each normalised to the simulated value)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, axes = plt.subplots(figsize=(max(4.0, 1.6 * len(self.rows)), 3.5))
        positions = range(len(self.rows))
        axes.bar([p - 0.2 for p in positions], [1.0] * len(self.rows), width=0.4, label="simulated")
        axes.bar([p + 0.2 for p in positions],
                 [1.0 + row.relative_error for row in self.rows], width=0.4, label=self.model_name)
        axes.set_xticks(list(positions), [row.quantity for row in self.rows], rotation=15, fontsize=8)
        axes.set_ylabel("relative to simulated")
        axes.legend()
        figure.tight_layout()
        path = Path(path)
        figure.savefig(path, dpi=110)
        plt.close(figure)
        return path


def simulated_quantity(run, quantity: str) -> float:
    if quantity == "cycles":
        return float(run.cycles)
    if quantity == "seconds":
        return float(run.seconds)
    if quantity not in run.metrics:
        raise KeyError(f"the run has no quantity {quantity!r} (cycles, seconds or a metric name)")
    return float(run.metrics[quantity])


def _predictions(run, model) -> tuple[str, dict]:
    if isinstance(model, dict):
        return "model", dict(model)
    if isinstance(model, Roofline):
        point = roofline_point(run)
        return "roofline", {"gpusim__flop_per_second": model.attainable(point.arithmetic_intensity,
                                                                        point.precision, "dram_sustained")}
    if isinstance(model, LatencyHiding):
        warps = run.metrics["sm__warps_active.avg.per_cycle_active"]
        return "Little's law", {"gpusim__dram_bytes_per_second":
                                model.throughput(warps, run.config.sms, run.config.clock_hz)}
    if hasattr(model, "predict"):
        return type(model).__name__, model.predict(run)
    raise TypeError("a model is a dict, a Roofline, a LatencyHiding or has predict(run)")


def compare(run, model) -> Comparison:
    """Model vs simulation for every quantity the model predicts."""
    name, predicted = _predictions(run, model)
    rows = tuple(ComparisonRow(quantity, float(value), simulated_quantity(run, quantity))
                 for quantity, value in predicted.items())
    return Comparison(model_name=name, rows=rows)
