"""HTML views of a run: the notebook summary (``Run._repr_html_``) and one self-contained report file.

The report file holds the verdict and the suggestions, the figures as inline SVG (when matplotlib is
installed), the source view as a table (CUDA source beside each PTX line, the hottest lines coloured by
stall cycles) and the text report; it needs no network and no other file. Without matplotlib the
figures are left out with a line that says how to get them.

Both views sit in one ``<div class="gpusim-report">`` and every style rule is scoped under it
(``gpusim.observe.source_html``; the figures' own SVG style rules too), so showing a run in a notebook
restyles nothing else. The figures are
drawn at the container's width, up to 900 px, one under the other.
"""

from __future__ import annotations

import html
import io
import re
from pathlib import Path

from gpusim.errors import GpusimError
from gpusim.observe.source_html import SCOPE, scoped, source_table_html

_STYLE_ELEMENT = re.compile(r"(<style[^>]*>)(.*?)(</style>)", re.S)
_CSS_RULE = re.compile(r"([^{}]+)\{([^}]*)\}")


def _svg(fig) -> str:
    from gpusim.observe.plot import pyplot

    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    pyplot().close(fig)
    text = buffer.getvalue()
    return scope_svg_styles(text[text.index("<svg") :])


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


def _figures_html(run) -> str:
    try:
        from gpusim.observe.plot import run_figures

        figures = run_figures(run)
    except GpusimError as error:
        return f"<p><i>figures left out: {html.escape(str(error))}</i></p>"
    return "\n".join(
        f'<div class="figure" data-figure="{html.escape(name)}"><h3>{html.escape(name)}</h3>{_svg(fig)}</div>'
        for name, fig in figures.items()
    )


def _verdict_html(v, label: str) -> str:
    text = f'<div class="verdict"><b>{html.escape(v.kind)}</b>: {html.escape(v.reason)}'
    if v.suggestion:
        text += f"<br><b>{label}</b> [{html.escape(v.top.kind)}]: {html.escape(v.suggestion)}"
    return text + "</div>"


def _suggestions_html(v) -> str:
    if len(v.findings) < 2:
        return ""
    items = "".join(
        f'<li data-kind="{html.escape(f.kind)}"><b>{html.escape(f.kind)}</b>: {html.escape(f.text)}</li>'
        for f in v.findings
    )
    return f"<h2>Suggestions (fixes for a {html.escape(v.kind)} run first)</h2><ol class='suggestions'>{items}</ol>"


def _headline(run) -> str:
    config = run.config
    timing = f"{run.cycles} cycles, {run.seconds * 1e6:.3f} us" if run.timing else "functional run"
    return (
        f'<div class="headline"><b>{html.escape(run.program.name)}</b> on {html.escape(config.name)} '
        f"({config.sms} SMs): {timing}; code generation: {html.escape(run.codegen)}"
        f"{' (' + html.escape(run.codegen_reason) + ')' if run.codegen_reason else ''}</div>"
    )


def run_summary_html(run) -> str:
    """The notebook view: headline, verdict, key metrics and (when matplotlib is installed) figures."""
    from gpusim.observe.report import speed_of_light, verdict

    v = verdict(run)
    parts = [_headline(run), _verdict_html(v, "suggestion")]
    if run.timing:
        rows = "".join(
            f"<tr><td class='text'>{html.escape(k)}</td><td>{pct:.1f}%</td></tr>"
            for k, pct in speed_of_light(run).items()
        )
        parts.append(
            f'<table class="gpusim"><tr><th>speed of light</th><th>% of peak</th></tr>{rows}</table>'
        )
        parts.append(_figures_html(run))
    return scoped("\n".join(parts))


def report_html(run) -> str:
    """The whole report as one self-contained HTML document."""
    from gpusim.observe.report import report_text, verdict

    view = run.source_view()
    v = verdict(run, view)
    title = f"gpusim: {run.program.name} on {run.config.name}"
    inner = "\n".join(
        [
            f"<h1>{html.escape(title)}</h1>",
            _headline(run),
            _verdict_html(v, "top suggestion"),
            _suggestions_html(v),
            "<h2>Figures</h2>",
            _figures_html(run) if run.timing else "<p><i>functional run: no figures</i></p>",
            "<h2>Source view (executed PTX instructions)</h2>",
            "<p class='legend-note'>CUDA source beside each PTX instruction; rows coloured by their stall "
            "warp-cycles (darker = more), the five hottest marked on the left.</p>",
            source_table_html(view),
            "<h2>Report</h2>",
            f"<pre>{html.escape(report_text(run))}</pre>",
        ]
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{html.escape(title)}</title></head><body>",
            scoped(inner),
            "</body></html>",
        ]
    )


def write_html(run, path) -> Path:
    """Write ``report_html(run)`` to path."""
    path = Path(path)
    path.write_text(report_html(run), encoding="utf-8")
    return path
