"""The comparisons docs/validation.md reports, as plain functions of published and simulated figures.

- error of a point: simulated / published normalised throughput - 1, where a figure that is better when lower (a
  latency) is inverted first, so +10 % always means "gpusim is 10 % too fast";
- a ladder's step: the ratio of consecutive points' throughputs (within a point's `group`), published vs simulated;
  its error factor max(s/p, p/s); its direction: improvement (> +2 %), regression (< -2 %) or flat, and the
  simulated step is right when it has the published step's direction, a flat step being right within +-5 %;
- Kendall's tau-b of the simulated ranking against the published one (ties counted as tau-b counts them)."""

from __future__ import annotations

import math
import statistics

FLAT = 0.02
"""A published step whose speed-up is within +-2 % is 'flat'."""
FLAT_SIM = 0.05
"""A simulated step is 'flat' within +-5 % (the suite's slices and smaller sizes are not the published run)."""
TARGETS = {"median_abs_error": 0.15, "within_25": 0.80, "step_factor_median": 1.2}
"""Issue 24's targets: median |error| <= 15 %, >= 80 % of points within 25 %, step-ratio error median <= x1.2,
every step's direction right."""


def throughput(value: float, higher_is_better: bool) -> float:
    return value if higher_is_better else 1.0 / value


def error(published: float, simulated: float, higher_is_better: bool) -> float:
    """Signed relative error of the simulated normalised throughput."""
    return throughput(simulated, higher_is_better) / throughput(published, higher_is_better) - 1.0


def direction(ratio: float, flat: float) -> str:
    if ratio > 1.0 + flat:
        return "improvement"
    if ratio < 1.0 - flat:
        return "regression"
    return "flat"


def steps(labels, groups, published, simulated, higher_is_better):
    """Consecutive steps within each group: dicts of from/to labels, both ratios, factor, directions, right."""
    out = []
    for i in range(1, len(labels)):
        if groups[i] != groups[i - 1]:
            continue
        rp = throughput(published[i], higher_is_better) / throughput(published[i - 1], higher_is_better)
        rs = throughput(simulated[i], higher_is_better) / throughput(simulated[i - 1], higher_is_better)
        dp, ds = direction(rp, FLAT), direction(rs, FLAT_SIM)
        out.append({"from": labels[i - 1], "to": labels[i], "published": rp, "simulated": rs,
                    "factor": max(rs / rp, rp / rs), "published_direction": dp, "simulated_direction": ds,
                    "right": dp == ds})
    return out


def kendall_tau_b(x, y) -> float:
    """Kendall's tau-b of two equally long sequences (nan when either is constant)."""
    concordant = discordant = ties_x = ties_y = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                ties_x += 1
            elif dy == 0:
                ties_y += 1
            elif (dx > 0) == (dy > 0):
                concordant += 1
            else:
                discordant += 1
    denominator = math.sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y))
    return (concordant - discordant) / denominator if denominator else float("nan")


def summary(errors) -> dict:
    """Median |error|, share within 25 %, MAPE, count."""
    absolute = [abs(e) for e in errors]
    if not absolute:
        return {"n": 0, "median_abs_error": float("nan"), "within_25": float("nan"), "mape": float("nan")}
    return {"n": len(absolute), "median_abs_error": statistics.median(absolute),
            "within_25": sum(a <= 0.25 for a in absolute) / len(absolute), "mape": statistics.fmean(absolute)}
