"""HTML pieces shared by the notebook views and the report file: scoped styles and the source-view table.

Every style rule is scoped under the report's own container (``<div class="gpusim-report">``), so a
notebook that shows a run keeps its own ``body``, ``pre`` and ``table`` styles; ``scoped(inner)`` wraps
HTML in that container with the rules.

The source-view table puts the CUDA line (``file.cu:12`` and its text, when the file was found) beside
each PTX instruction. The hottest rows -- most stall warp-cycles -- are marked: every row with stalls
gets a background on a colour scale (alpha proportional to its stall cycles over the largest; at least
``HOT_MIN_ALPHA`` for the ranked rows, so they stay visible beside a dominant one), and the
``HOT_ROWS`` hottest get the class ``hot`` and ``data-hot-rank`` (1 = the most stall cycles; ties go
to the lower pc). Each row carries ``data-pc``, ``data-ptx-line`` and ``data-stall-cycles``.

Simplifications: no scripts (no sorting or folding); one row per executed instruction.
"""

from __future__ import annotations

import html

SCOPE = "gpusim-report"
"""The container class every style rule is scoped under."""
HOT_ROWS = 5
HOT_RGB = (214, 39, 40)
HOT_MAX_ALPHA = 0.55
FIGURE_MAX_PX = 900
"""Figures are drawn at the container's width, up to this many pixels."""
HOT_MIN_ALPHA = 0.15
"""The ranked hot rows get at least this background alpha, however far below the hottest they are."""

_RULES = (
    ("", "font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; color: #1f2328; "
         "line-height: 1.4; max-width: 1500px; padding: 0.5em 1em; box-sizing: border-box;"),
    ("h1", "font-size: 1.6em; margin: 0.3em 0 0.5em;"),
    ("h2", "font-size: 1.3em; margin: 1.2em 0 0.4em; border-bottom: 1px solid #d0d7de;"),
    ("h3", "font-size: 1.05em; margin: 0.8em 0 0.2em;"),
    ("pre", "background: #f6f8fa; padding: 0.8em; overflow-x: auto; font-size: 13px; line-height: 1.35;"),
    ("table.gpusim", "border-collapse: collapse; font-size: 13px; margin: 0.4em 0;"),
    ("table.gpusim td, table.gpusim th", "border: 1px solid #d0d7de; padding: 2px 7px; text-align: right;"),
    ("table.gpusim th", "background: #f6f8fa;"),
    ("table.gpusim th.left", "text-align: left;"),
    ("table.gpusim td.text", "text-align: left; font-family: ui-monospace, monospace; white-space: nowrap;"),
    ("table.gpusim td.cu", "text-align: left; font-family: ui-monospace, monospace; white-space: pre-wrap; "
                           "min-width: 24em; max-width: 36em;"),
    ("table.gpusim td.where", "text-align: left; white-space: nowrap; color: #57606a;"),
    ("table.gpusim td.cu.same", "color: #8c959f;"),
    ("table.gpusim tr.hot td.stall", "font-weight: bold;"),
    ("table.gpusim tr.hot td.line", "border-left: 4px solid rgb(214, 39, 40);"),
    (".verdict", "font-size: 1.05em; padding: 0.5em 0.8em; background: #fff4e5; "
                 "border-left: 4px solid #f0a030; margin: 0.5em 0;"),
    (".headline", "font-size: 1.1em; margin: 0.3em 0;"),
    (".figure", f"width: 100%; max-width: {FIGURE_MAX_PX}px; margin: 0.4em 0 1.2em;"),
    (".figure svg", "width: 100%; height: auto; display: block;"),
    (".table-wrap", "overflow-x: auto; max-width: 100%;"),
    (".legend-note", "color: #57606a; font-size: 0.9em;"),
)


def _selector(selector: str) -> str:
    if not selector:
        return f".{SCOPE}"
    return ", ".join(f".{SCOPE} {part.strip()}" for part in selector.split(","))


STYLE = "\n".join(f"{_selector(selector)} {{ {body} }}" for selector, body in _RULES)
"""The report's style sheet: every selector starts with ``.gpusim-report``."""


def scoped(inner: str) -> str:
    """``inner`` inside the report's container, with the scoped style sheet."""
    return f'<div class="{SCOPE}">\n<style>\n{STYLE}\n</style>\n{inner}\n</div>'


def hot_ranks(rows) -> dict[int, int]:
    """{pc: rank} of the ``HOT_ROWS`` rows with the most stall cycles (1 = most; ties: lower pc first)."""
    stalled = sorted((r for r in rows if r.stall_cycles > 0), key=lambda r: (-r.stall_cycles, r.pc))
    return {r.pc: rank for rank, r in enumerate(stalled[:HOT_ROWS], start=1)}


def source_table_html(view, rows=None) -> str:
    """The source view (executed instructions by default) as an HTML table, hot rows marked."""
    rows = [r for r in view.rows if r.warp_inst] if rows is None else rows
    ranks = hot_ranks(rows)
    most = max((r.stall_cycles for r in rows), default=0)
    total = sum(r.stall_cycles for r in rows)
    head = (
        "<tr><th>PTX line</th><th class='left'>CUDA line</th><th class='left'>CUDA source</th>"
        "<th class='left'>PTX instruction</th>"
        "<th>warp inst</th><th>lanes</th><th>stall cycles</th><th>% of stalls</th><th>top stall</th>"
        "<th>sectors/req</th><th>ideal</th><th>bank conflicts</th></tr>"
    )
    body = []
    previous = None
    for r in rows:
        classes, attributes = [], [f'data-pc="{r.pc}"', f'data-ptx-line="{r.ptx_line}"',
                                   f'data-stall-cycles="{r.stall_cycles}"']
        if r.pc in ranks:
            classes.append("hot")
            attributes.append(f'data-hot-rank="{ranks[r.pc]}"')
        if most and r.stall_cycles:
            alpha = HOT_MAX_ALPHA * r.stall_cycles / most
            if r.pc in ranks:
                alpha = max(alpha, HOT_MIN_ALPHA)
            attributes.append(f'style="background-color: rgba{(*HOT_RGB, round(alpha, 3))}"')
        if classes:
            attributes.append(f'class="{" ".join(classes)}"')
        same = r.source and r.source == previous
        previous = r.source
        share = f"{100.0 * r.stall_cycles / total:.1f}" if total and r.stall_cycles else ""
        body.append(
            f"<tr {' '.join(attributes)}><td class='line'>{r.ptx_line}</td>"
            f"<td class='where'>{html.escape(r.source)}</td>"
            f"<td class='cu{' same' if same else ''}'>{html.escape(r.source_text)}</td>"
            f"<td class='text'>{html.escape(r.text)}</td><td>{r.warp_inst}</td>"
            f"<td>{r.active_lanes:.1f}</td><td class='stall'>{r.stall_cycles}</td><td>{share}</td>"
            f"<td>{html.escape(r.top_stall)}</td>"
            f"<td>{f'{r.sectors_per_request:.1f}' if r.requests else ''}</td>"
            f"<td>{f'{r.ideal_sectors_per_request:.1f}' if r.requests else ''}</td>"
            f"<td>{r.bank_conflicts if r.wavefronts else ''}</td></tr>"
        )
    return f'<div class="table-wrap"><table class="gpusim source-view">{head}{"".join(body)}</table></div>'
