"""HTML views of runs and results: the notebook cards (``_repr_html_``) and the interactive report file.

* ``report_html(run, what_if=None)`` / ``write_html(run, path, what_if=None)`` (``run.to_html``): the
  interactive report, one self-contained file (``gpusim.observe.html_report``).
* ``run_summary_html(run)`` (``Run._repr_html_``): a compact card -- headline, verdict and top
  suggestion, speed of light as bars, occupancy and the top stall.
* ``render_what_if_html(what_if)``, ``render_comparison_html(comparison)``, ``lab_result_html(result)``:
  the notebook views of ``run.what_if()``, ``gpusim.compare(a, b)`` and a lab's result.

Every view sits in one ``<div class="gpusim-report">`` and every style rule is scoped under it
(``gpusim.observe.source_html``), so showing a result in a notebook restyles nothing else.

Simplifications: the notebook views have no script (Jupyter may not run one); sorting and zooming are
the report file's.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from gpusim.observe.glossary import term_link
from gpusim.observe.html_report.summary import headline_html, suggestions_html, verdict_html
from gpusim.observe.source_html import SCOPE

__all__ = ["headline_html", "lab_result_html", "notebook_scoped", "render_comparison_html", "render_what_if_html",
           "report_html", "run_summary_html", "scope_svg_styles", "suggestions_html", "verdict_html", "write_html"]

_STYLE_ELEMENT = re.compile(r"(<style[^>]*>)(.*?)(</style>)", re.S)
_CSS_RULE = re.compile(r"([^{}]+)\{([^}]*)\}")
EMBED_FIGURE_MAX_BYTES = 2_000_000
"""A lab's PNG figures are embedded in its notebook view up to this size each."""


def scope_svg_styles(svg: str) -> str:
    """Scope the rules of the SVG's own ``<style>`` (matplotlib writes ``*{stroke-linejoin: round; ...}``,
    which inline would restyle the whole page) under the report's figures."""

    def scope(match: re.Match) -> str:
        css = match.group(2).replace("<![CDATA[", "").replace("]]>", "")
        rules = " ".join(
            ", ".join(f".{SCOPE} .figure svg {part.strip()}" for part in selectors.split(",")) + f" {{{body}}}"
            for selectors, body in _CSS_RULE.findall(css)
        )
        return match.group(1) + rules + match.group(3)

    return _STYLE_ELEMENT.sub(scope, svg)


_TERM_LINK = re.compile(r'<a class="term" href="#[^"]*"( title="[^"]*")>(.*?)</a>', re.S)


def notebook_scoped(inner: str) -> str:
    """``inner`` in the report's container with the base and the report's style sheets (no script). A notebook
    has no glossary section to link to: each term keeps its meaning as a tooltip instead of a link."""
    from gpusim.observe.html_report import style_sheet
    from gpusim.observe.source_html import STYLE

    inner = _TERM_LINK.sub(r'<span class="term"\1>\2</span>', inner)
    return f'<div class="{SCOPE}">\n<style>\n{STYLE}\n{style_sheet()}\n</style>\n{inner}\n</div>'


def _sol_bars(run) -> str:
    from gpusim.observe.report import speed_of_light

    rows = []
    for name, pct in speed_of_light(run).items():
        width = max(0.0, min(100.0, pct))
        rows.append(f'<span class="text">{html.escape(name)}</span><span class="bar-track"><span class="bar" '
                    f'style="width: {width:.1f}%"></span></span><span data-sol="{html.escape(name)}">'
                    f"{pct:.1f}%</span>")
    return f'<div class="sol">{"".join(rows)}</div>'


def run_summary_html(run) -> str:
    """The notebook card of a run: headline, verdict, speed of light, occupancy and the top stall."""
    from gpusim.observe.report import top_stall, verdict

    v = verdict(run)
    parts = [headline_html(run), verdict_html(v, "suggestion")]
    if run.timing:
        m = run.metrics
        stall, share = top_stall(run)
        stall_text = f"top stall {term_link(stall)} {100 * share:.1f}% of warp-cycles" if stall else "no stalls"
        parts += [
            "<div><b>speed of light</b> (% of peak)</div>", _sol_bars(run),
            f'<div class="kv">achieved {term_link("occupancy")} '
            f'{m["sm__warps_active.avg.pct_of_peak_sustained_active"]:.1f}% (theoretical '
            f"{100 * run.occupancy.occupancy:.1f}%) \u00b7 {stall_text} \u00b7 "
            f'{m["smsp__inst_executed.sum"]:,.0f} warp-instructions</div>',
        ]
    parts.append('<div class="kv">the whole report: <code>run.report()</code>; the interactive one: '
                 "<code>run.to_html(\"report.html\")</code></div>")
    return notebook_scoped(f'<div class="card">{"".join(parts)}</div>')


def render_what_if_html(what_if) -> str:
    """The notebook view of a ``run.what_if()`` result: one bar per removed limit, its measured speed-up."""
    from gpusim.observe.html_report import what_if_bars

    return notebook_scoped(f'<div class="card"><b>What-if</b>{what_if_bars(what_if)}</div>')


def render_comparison_html(comparison) -> str:
    """The notebook view of ``gpusim.compare(a, b)``: metrics, warp states and per-line deltas as tables."""
    from gpusim.observe.html_report import comparison_tables

    return notebook_scoped(comparison_tables(comparison))


def _figure_html(path: Path) -> str:
    if path.suffix.lower() != ".png" or not path.is_file() or path.stat().st_size > EMBED_FIGURE_MAX_BYTES:
        return f"<div class='kv'>figure: <code>{html.escape(str(path))}</code></div>"
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<div class="figure"><img alt="{html.escape(path.name)}" style="max-width: 100%" '
            f'src="data:image/png;base64,{data}"></div>')


def lab_result_html(result) -> str:
    """The notebook view of a lab's result: title, table, lesson and its PNG figures embedded."""
    figures = "".join(_figure_html(Path(p)) for p in result.figures)
    return notebook_scoped(
        f"<h3>{html.escape(result.title)}</h3><pre>{html.escape(result.table)}</pre>"
        f"<p>{html.escape(result.lesson)}</p>{figures}"
    )


def report_html(run, what_if=None) -> str:
    """The interactive report as one self-contained HTML document (``what_if``: a ``run.what_if()``)."""
    from gpusim.observe.html_report import interactive_report_html

    return interactive_report_html(run, what_if)


def write_html(run, path, what_if=None) -> Path:
    """Write ``report_html(run, what_if)`` to path."""
    path = Path(path)
    path.write_text(report_html(run, what_if), encoding="utf-8")
    return path
