"""HTML views of a run: the notebook summary (``Run._repr_html_``) and one self-contained report file.

The report file holds the text report, the figures as inline SVG (when matplotlib is installed) and
the source view as a table; it needs no network and no other file. Without matplotlib the figures
are left out with a line that says how to get them.
"""

from __future__ import annotations

import html
import io
from pathlib import Path

from gpusim.errors import GpusimError
from gpusim.observe.source_view import source_table_html

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; max-width: 1200px; }
pre { background: #f6f8fa; padding: 0.8em; overflow-x: auto; font-size: 12px; }
table.gpusim { border-collapse: collapse; font-size: 12px; }
table.gpusim td, table.gpusim th { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
table.gpusim td.text { text-align: left; font-family: monospace; }
.verdict { font-size: 1.1em; padding: 0.5em; background: #fff4e5; border-left: 4px solid #f0a030; }
.figure svg { max-width: 100%; height: auto; }
"""


def _svg(fig) -> str:
    from gpusim.observe.plot import pyplot

    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    pyplot().close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _figures_html(run) -> str:
    try:
        from gpusim.observe.plot import run_figures

        figures = run_figures(run)
    except GpusimError as error:
        return f"<p><i>figures left out: {html.escape(str(error))}</i></p>"
    return "\n".join(
        f'<div class="figure"><h3>{html.escape(name)}</h3>{_svg(fig)}</div>' for name, fig in figures.items()
    )


def run_summary_html(run) -> str:
    """The notebook view: headline, verdict, key metrics and (when matplotlib is installed) figures."""
    from gpusim.observe.report import speed_of_light, verdict

    v = verdict(run)
    parts = [
        f"<div><b>{html.escape(run.program.name)}</b> on {html.escape(run.config.name)}: "
        + (f"{run.cycles} cycles, {run.seconds * 1e6:.3f} us" if run.timing else "functional run")
        + "</div>",
        f'<div class="verdict"><b>{html.escape(v.kind)}</b>: {html.escape(v.reason)}'
        + (f"<br>suggestion: {html.escape(v.suggestion)}" if v.suggestion else "")
        + "</div>",
    ]
    if run.timing:
        rows = "".join(
            f"<tr><td class='text'>{html.escape(k)}</td><td>{pct:.1f}%</td></tr>"
            for k, pct in speed_of_light(run).items()
        )
        parts.append(
            f'<table class="gpusim"><tr><th>speed of light</th><th>% of peak</th></tr>{rows}</table>'
        )
        parts.append(_figures_html(run))
    return f"<style>{_STYLE}</style>" + "\n".join(parts)


def report_html(run) -> str:
    """The whole report as one self-contained HTML document."""
    from gpusim.observe.report import report_text, verdict

    view = run.source_view()
    v = verdict(run, view)
    title = f"gpusim: {run.program.name} on {run.config.name}"
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{html.escape(title)}</title>",
            f"<style>{_STYLE}</style></head><body>",
            f"<h1>{html.escape(title)}</h1>",
            f'<div class="verdict"><b>{html.escape(v.kind)}</b>: {html.escape(v.reason)}'
            + (f"<br><b>top suggestion</b>: {html.escape(v.suggestion)}" if v.suggestion else "")
            + "</div>",
            "<h2>Figures</h2>",
            _figures_html(run) if run.timing else "<p><i>functional run: no figures</i></p>",
            "<h2>Source view (executed PTX lines)</h2>",
            source_table_html(view),
            "<h2>Report</h2>",
            f"<pre>{html.escape(report_text(run))}</pre>",
            "</body></html>",
        ]
    )


def write_html(run, path) -> Path:
    """Write ``report_html(run)`` to path."""
    path = Path(path)
    path.write_text(report_html(run), encoding="utf-8")
    return path
