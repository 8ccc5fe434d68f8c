"""Tables and bars of the interactive report: the sortable source view, warp states, what-if, comparison.

The source view has one row per executed instruction of the scheduled stream (the instruction stream
gpusim times: ``codegen='ptxas'``'s output, or the PTX as written) with its CUDA line and text, its PTX
line and text, its position in the stream and the form it executes as, and the warp-cycles of every stall
reason any row has, each in its own column. Every numeric cell carries ``data-v`` (the number to sort by);
``report.js`` sorts on a header click. The hottest rows are coloured as in ``source_html``.

``what_if_bars(what_if)`` and ``comparison_tables(comparison)`` are the report's (and, wrapped by
``gpusim.observe.html.render_what_if_html`` / ``render_comparison_html``, the notebook's) views of
``run.what_if()`` and ``gpusim.compare(a, b)``; they read only the attributes those results document
(rows of limit, description, cycles, speedup; rows of metric, unit, a, b, diff, ratio; stalls of reason,
a, b), so they work with any object that has them.

Simplifications: one row per executed instruction (not folded per CUDA line); rows without executions
are left out.
"""

from __future__ import annotations

import dataclasses
import html

from gpusim.engine.sm.stalls import STATE_NAMES
from gpusim.observe.glossary import GLOSSARY, term_link
from gpusim.observe.source_html import HOT_MAX_ALPHA, HOT_MIN_ALPHA, HOT_RGB, hot_ranks


def _th(label: str, key: str | None = None, kind: str = "num") -> str:
    link = f' <sup>{term_link(key, "?")}</sup>' if key else ""
    return f'<th class="sortable {kind}" data-kind="{kind}">{html.escape(label)}{link}</th>'


def _num(value, shown: str | None = None, cls: str = "") -> str:
    text = str(value) if shown is None else shown
    klass = f' class="{cls}"' if cls else ""
    return f'<td{klass} data-v="{value}">{html.escape(text)}</td>'


def source_table(view) -> str:
    """The sortable source view (executed instructions of the scheduled stream)."""
    rows = [r for r in view.rows if r.warp_inst]
    states = [s for s in STATE_NAMES if s != "selected" and any(r.stalls.get(s) for r in rows)]
    ranks = hot_ranks(rows)
    most = max((r.stall_cycles for r in rows), default=0)
    total = sum(r.stall_cycles for r in rows)
    head = "".join([
        _th("PTX line", "ptx"), _th("CUDA line", "cuda_line", "text"), _th("CUDA source", "cuda_line", "text"),
        _th("PTX instruction", "ptx", "text"), _th("stream #", "stream"), _th("executes as", "stream", "text"),
        _th("pipe", "pipe", "text"), _th("warp inst", "unit:warp-instruction"), _th("lanes", "lanes"),
        _th("stall cycles", "stall_cycles"), _th("% of stalls", "stall_cycles"),
        *(_th(s, s) for s in states),
        _th("sectors/req", "sectors_per_request"), _th("ideal", "sectors_per_request"),
        _th("bank conflicts", "bank_conflict"),
    ])
    body = []
    previous = None
    for r in rows:
        attributes = [f'data-pc="{r.pc}"', f'data-ptx-line="{r.ptx_line}"', f'data-stall-cycles="{r.stall_cycles}"']
        if r.pc in ranks:
            attributes += ['class="hot"', f'data-hot-rank="{ranks[r.pc]}"']
        if most and r.stall_cycles:
            alpha = HOT_MAX_ALPHA * r.stall_cycles / most
            alpha = max(alpha, HOT_MIN_ALPHA) if r.pc in ranks else alpha
            attributes.append(f'style="background-color: rgba{(*HOT_RGB, round(alpha, 3))}"')
        same = r.source and r.source == previous
        previous = r.source
        share = 100.0 * r.stall_cycles / total if total else 0.0
        cells = [
            _num(r.ptx_line, cls="line"),
            f"<td class='where' data-v='{html.escape(r.source)}'>{html.escape(r.source)}</td>",
            f"<td class='cu{' same' if same else ''}' title='{html.escape(r.source_text)}'>"
            f"{html.escape(r.source_text)}</td>",
            f"<td class='text'>{html.escape(r.text)}</td>",
            _num(r.pc), f"<td class='text op'>{html.escape(r.opcode)}</td>", f"<td>{html.escape(r.pipe)}</td>",
            _num(r.warp_inst), _num(round(r.active_lanes, 2), f"{r.active_lanes:.1f}"),
            _num(r.stall_cycles, cls="stall"), _num(round(share, 3), f"{share:.1f}" if r.stall_cycles else ""),
            *(_num(r.stalls.get(s, 0), str(r.stalls.get(s, 0) or "")) for s in states),
            _num(round(r.sectors_per_request, 3), f"{r.sectors_per_request:.1f}" if r.requests else ""),
            _num(round(r.ideal_sectors_per_request, 3), f"{r.ideal_sectors_per_request:.1f}" if r.requests else ""),
            _num(r.bank_conflicts if r.wavefronts else 0, str(r.bank_conflicts) if r.wavefronts else ""),
        ]
        body.append(f"<tr {' '.join(attributes)}>{''.join(cells)}</tr>")
    return (f'<div class="table-wrap"><table class="gpusim source-view sortable-table"><thead><tr>{head}</tr>'
            f'</thead><tbody>{"".join(body)}</tbody></table></div>')


def stall_bars(run) -> str:
    """Warp states as horizontal bars: % of resident warp-cycles, each state linked to its entry."""
    from gpusim.observe.plot import STATE_COLORS

    total = sum(run.stalls.values())
    items = sorted(((k, v) for k, v in run.stalls.items() if v), key=lambda kv: -kv[1])
    rows = []
    for name, cycles in items:
        share = 100.0 * cycles / total
        rows.append(f'<div class="bar-row" data-state="{html.escape(name)}" data-share="{share:.4f}">'
                    f'<span class="bar-label">{term_link(name) if name in GLOSSARY else html.escape(name)}</span>'
                    f'<span class="bar-track"><span class="bar" style="width: {share:.2f}%; background: '
                    f'{STATE_COLORS.get(name, "#808080")}"></span></span>'
                    f'<span class="bar-value">{share:.1f}% ({cycles:,} {term_link("unit:warp-cycle", "warp-cycles")})'
                    "</span></div>")
    return f'<div class="bars stalls">{"".join(rows)}</div>'


def what_if_bars(what_if) -> str:
    """The what-if bars: one per removed limit, its measured speed-up (rows as given: largest first). A bar's
    length is the gain, speed-up - 1, over the largest gain: a limit that buys nothing (1.00x) has none."""
    rows = list(what_if.rows)
    gain = max((row.speedup - 1.0 for row in rows), default=0.0)
    out = []
    for row in rows:
        out.append(
            f'<div class="bar-row whatif" data-limit="{html.escape(row.limit)}" data-speedup="{row.speedup!r}" '
            f'data-cycles="{row.cycles}"><span class="bar-label" title="{html.escape(row.description)}">'
            f"{html.escape(row.limit)}</span><span class=\"bar-track\"><span class=\"bar\" style=\"width: "
            f'{100.0 * max(row.speedup - 1.0, 0.0) / gain if gain > 0 else 0.0:.2f}%"></span></span>'
            f'<span class="bar-value">{row.speedup:.2f}x '
            f'({row.cycles:,} cycles)</span><div class="bar-note">{_what_if_note(row)}</div></div>')
    head = (f'<p>Baseline: {what_if.baseline_cycles:,} cycles. Each bar is the {term_link("what_if")} '
            "speed-up measured by simulating the same launch again with that one limit removed "
            "(bar: the gain over the largest; 1.00x: the limit does not hold this kernel back).</p>")
    return f'<div class="whatif-bars">{head}<div class="bars">{"".join(out)}</div></div>'


def _what_if_note(row) -> str:
    """The row's description and what it moved (baseline -> variant where the baseline is given)."""
    if getattr(row, "measured", True) is False:
        return f"{html.escape(row.description)}; not simulated: {html.escape(getattr(row, 'note', ''))}"
    baseline = dict(getattr(row, "baseline", {}) or {})
    moved = [f"{html.escape(str(name))} {baseline[name]:.4g} \u2192 {value:.4g}" if name in baseline
             else f"{html.escape(str(name))} {value:.4g}"
             for name, value in dict(getattr(row, "moved", {}) or {}).items()]
    return html.escape(row.description) + ("; moved: " + ", ".join(moved) if moved else "")


def _records(items) -> tuple[list[str], list[list]]:
    """(header, rows) of a list of dataclasses, named tuples, dicts or plain tuples."""
    if hasattr(items, "columns") and hasattr(items, "to_dict"):  # a pandas DataFrame
        items = items.to_dict("records")
    items = list(items) if items is not None else []
    if not items:
        return [], []
    first = items[0]
    if dataclasses.is_dataclass(first):
        header = [f.name for f in dataclasses.fields(first)]
        return header, [[getattr(i, h) for h in header] for i in items]
    if hasattr(first, "_fields"):
        return list(first._fields), [list(i) for i in items]
    if isinstance(first, dict):
        header = list(first)
        return header, [[i.get(h, "") for h in header] for i in items]
    return [f"column {n}" for n in range(len(first))], [list(i) for i in items]


def _cell(value) -> str:
    if value is None:
        return '<td data-v="">-</td>'
    if isinstance(value, float):
        return f'<td data-v="{value!r}">{value:.4g}</td>'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'<td data-v="{value}">{value:,}</td>'
    return f"<td class='text'>{html.escape(str(value))}</td>"


def records_table(items, css: str = "") -> str:
    header, rows = _records(items)
    if not header:
        return "<p><i>none</i></p>"
    head = "".join(f'<th class="sortable">{html.escape(h)}</th>' for h in header)
    body = "".join(f"<tr>{''.join(_cell(v) for v in row)}</tr>" for row in rows)
    return (f'<div class="table-wrap"><table class="gpusim sortable-table {css}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def comparison_tables(comparison) -> str:
    """A comparison of two runs: the metric table, the warp states side by side, the per-line deltas."""
    parts = ["<h3>Metrics</h3>", records_table(comparison.rows, "compare-metrics"),
             "<h3>Warp states (warp-cycles)</h3>", records_table(comparison.stalls, "compare-stalls")]
    lines = getattr(comparison, "lines", None)
    if lines is not None:
        parts += ["<h3>Per source line</h3>", records_table(lines, "compare-lines")]
    return "\n".join(parts)
