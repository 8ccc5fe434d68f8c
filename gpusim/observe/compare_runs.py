"""Run versus run (``gpusim.compare(run_a, run_b)``, ``gpusim compare a.json b.json``): Nsight Compute's
baselines for simulated runs -- every metric side by side with its difference and ratio, the warp-state mix,
and per-source-line deltas -- as text, rich, HTML and pandas.

What it models
    * Either side is a ``Run``, a ``run.to_dict()`` document, or the path of a ``gpusim run --json`` file;
      everything is compared through that plain-data form, so a saved run and a live one compare alike.
    * ``rows``: one per metric of either run (``diff`` = b - a, ``ratio`` = b / a; None where a side lacks
      the metric or a is 0), plus ``cycles`` first.
    * ``stalls``: warp-cycles per warp state on each side.
    * ``lines``: per-line deltas. Runs of the same PTX file (another config, another codegen mode) are
      matched by PTX line (the codegen stage keeps every instruction's PTX line, so the lines correspond
      even when the instruction streams differ); runs of different files (another kernel) by the CUDA line's
      text when the PTX carries ``.loc`` lines and the file was found, else by the PTX instruction's text.
      Instructions sharing a key are summed (a PTX line expanded into several SASS-like instructions, or two
      CUDA lines with the same text).

Simplifications: ratios of percentages are plain ratios; a line present on one side only shows None on the
other.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path

from gpusim.errors import GpusimError


@dataclass(frozen=True)
class MetricDelta:
    metric: str
    unit: str
    a: float | None
    b: float | None

    @property
    def diff(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def ratio(self) -> float | None:
        return None if self.a is None or self.b is None or self.a == 0 else self.b / self.a


@dataclass(frozen=True)
class StallDelta:
    reason: str
    a: int
    b: int


@dataclass(frozen=True)
class LineDelta:
    """One source line (or PTX line) on both sides: warp-instructions and stall warp-cycles (issuing left out)."""

    key: str
    where_a: str
    where_b: str
    warp_inst_a: int | None
    warp_inst_b: int | None
    stall_cycles_a: int | None
    stall_cycles_b: int | None

    @property
    def stall_diff(self) -> int:
        return (self.stall_cycles_b or 0) - (self.stall_cycles_a or 0)


@dataclass
class RunComparison:
    """Two runs side by side (``gpusim.compare(a, b)``)."""

    name_a: str
    name_b: str
    rows: list[MetricDelta]
    stalls: list[StallDelta]
    lines: list[LineDelta] = field(default_factory=list)
    matched_by: str = "ptx line"

    def row(self, metric: str) -> MetricDelta:
        for row in self.rows:
            if row.metric == metric:
                return row
        raise KeyError(metric)

    def changed(self) -> list[MetricDelta]:
        """The rows whose values differ (or exist on one side only)."""
        return [row for row in self.rows if row.a != row.b]

    def to_pandas(self, what: str = "metrics"):
        """``"metrics"`` (metric, unit, a, b, diff, ratio), ``"stalls"`` or ``"lines"`` as a DataFrame."""
        from gpusim.observe.source_view import require_pandas

        pd = require_pandas()
        if what == "metrics":
            return pd.DataFrame([(r.metric, r.unit, r.a, r.b, r.diff, r.ratio) for r in self.rows],
                                columns=["metric", "unit", "a", "b", "diff", "ratio"])
        if what == "stalls":
            return pd.DataFrame([(s.reason, s.a, s.b, s.b - s.a) for s in self.stalls],
                                columns=["reason", "a", "b", "diff"])
        if what == "lines":
            return pd.DataFrame([(x.key, x.where_a, x.where_b, x.warp_inst_a, x.warp_inst_b, x.stall_cycles_a,
                                  x.stall_cycles_b, x.stall_diff) for x in self.lines],
                                columns=["line", "where_a", "where_b", "warp_inst_a", "warp_inst_b",
                                         "stall_cycles_a", "stall_cycles_b", "stall_diff"])
        raise GpusimError(f"to_pandas takes 'metrics', 'stalls' or 'lines', got {what!r}")

    def to_text(self, all_metrics: bool = False, lines: int = 10) -> str:
        """Metrics that differ (every metric with ``all_metrics``), the warp states, the ``lines`` lines whose
        stalls moved most."""
        shown = self.rows if all_metrics else [r for r in self.rows if r.a != r.b or r.metric == "cycles"]
        width = max([len(r.metric) for r in shown] + [6])
        out = [f"a: {self.name_a}", f"b: {self.name_b}", "",
               f"{'metric':<{width}}  {'unit':<12} {'a':>14} {'b':>14} {'b - a':>14} {'b / a':>8}"]
        for r in shown:
            out.append(f"{r.metric:<{width}}  {r.unit:<12} {_num(r.a):>14} {_num(r.b):>14} {_num(r.diff):>14} "
                       f"{_ratio(r.ratio):>8}")
        if not all_metrics:
            out.append(f"({len(self.rows) - len(shown)} metrics equal on both sides not shown)")
        out += ["", f"{'warp state':<20} {'a':>14} {'b':>14} {'b - a':>14}"]
        out += [f"{s.reason:<20} {s.a:>14,} {s.b:>14,} {s.b - s.a:>+14,}" for s in self.stalls if s.a or s.b]
        moved = sorted(self.lines, key=lambda x: -abs(x.stall_diff))[:lines]
        if moved:
            out += ["", f"Lines whose stalls moved most (matched by {self.matched_by}):",
                    f"  {'stall a':>12} {'stall b':>12} {'b - a':>12}  line"]
            out += [f"  {_num(x.stall_cycles_a):>12} {_num(x.stall_cycles_b):>12} {x.stall_diff:>+12,}  "
                    f"{x.key[:90]}" for x in moved]
        return "\n".join(out)

    def __str__(self) -> str:
        return self.to_text()

    def to_rich(self):
        """A rich Table of the metrics that differ (rich must be installed)."""
        try:
            from rich.table import Table
        except ImportError:
            raise GpusimError("to_rich needs rich: pip install rich") from None
        table = Table(title=f"a: {self.name_a}   b: {self.name_b}")
        for title in ("metric", "unit", "a", "b", "b - a", "b / a"):
            table.add_column(title, justify="left" if title in ("metric", "unit") else "right")
        for r in self.rows:
            if r.a != r.b or r.metric == "cycles":
                table.add_row(r.metric, r.unit, _num(r.a), _num(r.b), _num(r.diff), _ratio(r.ratio))
        return table

    def to_html(self) -> str:
        """A plain static HTML table of every metric, then the warp states."""
        head = "".join(f"<th>{t}</th>" for t in ("metric", "unit", "a", "b", "b - a", "b / a"))
        body = "".join(f"<tr><td>{html.escape(r.metric)}</td><td>{html.escape(r.unit)}</td><td>{_num(r.a)}</td>"
                       f"<td>{_num(r.b)}</td><td>{_num(r.diff)}</td><td>{_ratio(r.ratio)}</td></tr>"
                       for r in self.rows)
        stalls = "".join(f"<tr><td>{html.escape(s.reason)}</td><td>{s.a:,}</td><td>{s.b:,}</td></tr>"
                         for s in self.stalls)
        return (f"<div class='gpusim-compare'><p>a: {html.escape(self.name_a)}<br>b: {html.escape(self.name_b)}</p>"
                f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
                f"<table><thead><tr><th>warp state</th><th>a</th><th>b</th></tr></thead><tbody>{stalls}</tbody>"
                f"</table></div>")

    def _repr_html_(self) -> str:
        from gpusim.observe.html import render_comparison_html

        return render_comparison_html(self)


def _num(value) -> str:
    if value is None:
        return "-"
    if float(value) == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:.4g}"


def _ratio(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def as_document(run_or_path) -> dict:
    """A Run, a ``to_dict()`` document or a JSON file's path, as the plain-data document."""
    if isinstance(run_or_path, dict):
        return run_or_path
    if isinstance(run_or_path, str | Path):
        path = Path(run_or_path)
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise GpusimError(f"{path}: cannot read it ({exc.strerror})") from None
        except json.JSONDecodeError as exc:
            raise GpusimError(f"{path}: not JSON ({exc.msg} at line {exc.lineno}); compare takes files written "
                              "by `gpusim run --json` or run.to_json()") from None
        if not isinstance(document, dict) or "metrics" not in document:
            raise GpusimError(f"{path}: not a gpusim run (no 'metrics'); compare takes files written by "
                              "`gpusim run --json` or run.to_json()")
        return document
    if hasattr(run_or_path, "to_dict") and hasattr(run_or_path, "metrics"):
        return run_or_path.to_dict()
    raise GpusimError(f"compare takes Runs, run dicts or paths of run JSON files, got {type(run_or_path).__name__}")


def _name(document: dict) -> str:
    config = document.get("config", {})
    cycles = document.get("cycles")
    return (f"{document.get('kernel', '?')} on {config.get('name', '?')} (codegen {document.get('codegen', '?')}"
            f"{f', {cycles:,} cycles' if cycles is not None else ''})")


def _line_key(row: dict, by_ptx: bool) -> str:
    if by_ptx:
        return f"PTX {row['ptx_line']}: {row['text']}"
    if row.get("source_text"):
        return row["source_text"].strip()
    return " ".join(str(row.get("text", "")).split())


def _lines(a: dict, b: dict, by_ptx: bool) -> list[LineDelta]:
    sides = []
    for document in (a, b):
        table: dict[str, list] = {}
        for row in document.get("source_view", []):
            key = _line_key(row, by_ptx)
            entry = table.setdefault(key, [row.get("source") or f"PTX {row['ptx_line']}", 0, 0])
            entry[1] += int(row.get("warp_inst", 0))
            entry[2] += int(row.get("stall_cycles", 0))
        sides.append(table)
    keys = list(sides[0]) + [k for k in sides[1] if k not in sides[0]]
    out = []
    for key in keys:
        left, right = sides[0].get(key), sides[1].get(key)
        out.append(LineDelta(key, left[0] if left else "", right[0] if right else "",
                             left[1] if left else None, right[1] if right else None,
                             left[2] if left else None, right[2] if right else None))
    return out


def compare_runs(run_a, run_b) -> RunComparison:
    """``run_a`` (the baseline) against ``run_b``: metrics, warp states and per-line deltas."""
    from gpusim.observe.export import metric_unit

    a, b = as_document(run_a), as_document(run_b)
    metrics_a, metrics_b = a.get("metrics", {}), b.get("metrics", {})
    names = list(metrics_a) + [name for name in metrics_b if name not in metrics_a]
    rows = [MetricDelta("cycles", "cycle", a.get("cycles"), b.get("cycles"))]
    rows += [MetricDelta(name, metric_unit(name), metrics_a.get(name), metrics_b.get(name)) for name in names]
    stall_a, stall_b = a.get("stalls", {}), b.get("stalls", {})
    reasons = list(stall_a) + [r for r in stall_b if r not in stall_a]
    stalls = [StallDelta(r, int(stall_a.get(r, 0)), int(stall_b.get(r, 0))) for r in reasons]
    by_ptx = a.get("ptx") == b.get("ptx")
    return RunComparison(_name(a), _name(b), rows, stalls, _lines(a, b, by_ptx),
                         "PTX line" if by_ptx else "CUDA source text (else PTX text)")


def _is_run_like(value) -> bool:
    if isinstance(value, str | Path):
        return True
    if isinstance(value, dict):
        return "metrics" in value
    return hasattr(value, "to_dict") and hasattr(value, "metrics") and hasattr(value, "stalls")


def compare(a, b):
    """``compare(run_a, run_b)``: run against run (``RunComparison``; either side a Run, a run dict or a JSON
    path). ``compare(run, model)``: the run against an analytic model (``gpusim.analytic.compare``), chosen by
    the second argument's type."""
    if _is_run_like(b):
        return compare_runs(a, b)
    from gpusim.analytic.compare import compare as compare_model

    return compare_model(a, b)
