"""The interactive HTML report of a run: one self-contained file, opened offline, no server.

Sections: the verdict and suggestions; the warp timeline (from the run's trace: brush to zoom, hover
for the instruction and the state; ``timeline``); the memory chart and the roofline (inline SVG,
``charts``); the what-if bars when a ``run.what_if()`` result is given (``tables``); the warp states;
the sortable source view with per-line stall columns and the CUDA, PTX and scheduled-stream columns
(``tables``); the glossary every linked term points at (``gpusim.observe.glossary``); the text report.

Everything is inline: the style sheet ``report.css`` (every rule scoped under ``.gpusim-report``), the
script ``report.js`` (vanilla JS, no library) and the data as JSON. Opening the file with ``#selftest``
makes the script sort a column, zoom and hover the timeline and check every link, and write what it
saw into ``<pre id="selftest-result">`` (the tests read it from headless Chromium's ``--dump-dom``).

Simplifications: the timeline is aggregated for large traces (``timeline``'s docstring says how, and the
page says when); without a trace, a what-if or timing, those sections say how to get them.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources

from gpusim.engine.sm.stalls import STATE_NAMES
from gpusim.observe.glossary import GLOSSARY, glossary_html, term_link
from gpusim.observe.html_report.charts import memory_chart_svg, roofline_svg
from gpusim.observe.html_report.summary import headline_html, suggestions_html, verdict_html
from gpusim.observe.html_report.tables import comparison_tables, source_table, stall_bars, what_if_bars
from gpusim.observe.html_report.timeline import program_table, timeline_data
from gpusim.observe.source_html import SCOPE

__all__ = ["comparison_tables", "interactive_report_html", "what_if_bars"]

_SECTIONS = (("timeline", "Timeline"), ("memory", "Memory chart"), ("roofline", "Roofline"),
             ("whatif", "What-if"), ("states", "Warp states"), ("source", "Source view"),
             ("glossary", "Glossary"), ("text", "Text report"))
KEY_METRICS = ("sm__cycles_elapsed.max", "gpu__time_duration.sum",
               "smsp__issue_active.avg.pct_of_peak_sustained_active",
               "sm__warps_active.avg.pct_of_peak_sustained_active",
               "l1tex__throughput.avg.pct_of_peak_sustained_active",
               "lts__throughput.avg.pct_of_peak_sustained_elapsed",
               "dram__throughput.avg.pct_of_peak_sustained_elapsed", "gpusim__flop_per_second",
               "gpusim__arithmetic_intensity", "gpusim__warp_instructions_per_cycle")
"""The metrics the report's table shows, each linked to its glossary entry."""


def asset(name: str) -> str:
    """The text of a file shipped beside this module (report.css, report.js)."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def style_sheet() -> str:
    """report.css without its comments (every rule is scoped under .gpusim-report)."""
    return re.sub(r"/\*.*?\*/", "", asset("report.css"), flags=re.S).strip()


def _json_script(data: dict) -> str:
    text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    return f'<script type="application/json" id="gpusim-data">{text}</script>'


def _timeline_section(run, data: dict) -> str:
    if not run.timing:
        return "<p class='note'>A functional run (timing=False) has no timeline.</p>"
    if not run.has_trace:
        return ("<p class='note'>No trace was recorded: launch with <code>trace=True</code> "
                "(<code>gpu.launch(..., trace=True)</code>, or <code>gpusim run PROGRAM --html FILE</code>, "
                "which records one) to see every warp's states here.</p>")
    tl = timeline_data(run)
    data["timeline"] = tl
    data["program"] = program_table(run)
    data["meanings"] = {name: GLOSSARY[name].meaning for name in STATE_NAMES}
    present = sorted({int(k) for k in tl["segments"]["k"]})
    legend = "".join(f'<span><span class="swatch" style="background: {tl["colors"][k]}"></span>'
                     f"{term_link(STATE_NAMES[k])}</span>" for k in present)
    notes = []
    if tl["aggregated"]:
        notes.append(f"<p class='note aggregated'>Aggregated for drawing: {html.escape(tl['note'])}.</p>")
    if tl["truncated"]:
        notes.append("<p class='note aggregated'>The trace hit its row capacity and was cut: launch with "
                     "trace=N (a larger N) to record the whole run.</p>")
    return (
        f"<p class='note'>One row per {term_link('warp_slot')} ({len(tl['rows'])} rows, {tl['n_segments']:,} "
        f"segments from {tl['n_intervals']:,} trace intervals), coloured by {term_link('warp', 'warp')} state. "
        "Drag across the rows or the issue strip to zoom in; double-click or <i>reset</i> to zoom out; hover "
        "for the instruction and the state.</p>" + "".join(notes) +
        f'<div class="legend-states">{legend}</div>'
        '<div class="timeline"><div class="toolbar"><button class="reset" type="button">reset zoom</button>'
        '<span class="view-info"></span></div>'
        '<div class="rows-wrap"><canvas class="rows"></canvas><div class="brush"></div>'
        '<div class="tooltip"></div></div>'
        '<div class="strip-wrap" style="position: relative"><canvas class="strip"></canvas>'
        '<div class="brush"></div></div></div>'
    )


def _metrics_table(run) -> str:
    m = run.metrics
    rows = "".join(f"<tr><td class='text'>{term_link(name, name)}</td><td>{_number(m[name])}</td>"
                   f"<td class='text'>{term_link('unit:' + GLOSSARY[name].unit, GLOSSARY[name].unit)}</td></tr>"
                   for name in KEY_METRICS if name in m)
    return f"<table class='gpusim metrics'><tr><th>metric</th><th>value</th><th>unit</th></tr>{rows}</table>"


def _number(value: float) -> str:
    """An int with thousands separators, a float with four significant digits (scientific above 1e6)."""
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:.4g}" if abs(value) >= 1e6 else f"{value:,.4g}"


def _what_if_section(what_if) -> str:
    if what_if is None:
        return ("<p class='note'>Not measured for this report: pass <code>what_if=run.what_if()</code> to "
                "<code>run.to_html(path, what_if=...)</code> to add the measured speed-up of removing each "
                "limit.</p>")
    return what_if_bars(what_if)


def _timed_sections(run, what_if, data: dict) -> list[str]:
    if not run.timing:
        return ["<p class='note'>A functional run (timing=False) has no timing: no timeline, memory chart, "
                "roofline, what-if or warp states. Launch with timing=True (the default).</p>"]
    return [
        "<h2 id='timeline'>Warp timeline</h2>", _timeline_section(run, data),
        f"<h2 id='memory'>Memory chart</h2><p class='note'>Bytes moved between the units ({term_link('sm')}, "
        f"{term_link('l1')}, {term_link('shared')}, {term_link('l2')}, {term_link('dram')}) and each link's % "
        f"of peak ({term_link('unit:%', '%')}); click a unit for its glossary entry.</p>",
        memory_chart_svg(run), _metrics_table(run),
        f"<h2 id='roofline'>Roofline</h2><p class='note'>The {term_link('roofline')} of {html.escape(run.config.name)} "
        f"with the run's point: {term_link('gpusim__arithmetic_intensity', 'FLOPs per DRAM byte')} against "
        f"{term_link('gpusim__flop_per_second', 'FLOP/s')}.</p>",
        roofline_svg(run),
        "<h2 id='whatif'>What-if: the measured speed-up of removing each limit</h2>", _what_if_section(what_if),
        "<h2 id='states'>Warp states</h2><p class='note'>Share of resident "
        f"{term_link('unit:warp-cycle', 'warp-cycles')} "
        "in each state (hover or click a state for what it means on the hardware).</p>", stall_bars(run),
    ]


def interactive_report_html(run, what_if=None) -> str:
    """The whole interactive report of ``run`` as one HTML document (``what_if``: a ``run.what_if()``)."""
    from gpusim.observe.report import report_text, verdict

    view = run.source_view()
    v = verdict(run, view)
    title = f"gpusim: {run.program.name} on {run.config.name}"
    data: dict = {}
    nav = " ".join(f'<a href="#{key}">{label}</a>' for key, label in _SECTIONS)
    inner = [
        f"<h1>{html.escape(title)}</h1>", f'<nav class="sections">{nav}</nav>', headline_html(run),
        verdict_html(v, "top suggestion"), suggestions_html(v),
        *_timed_sections(run, what_if, data),
        f"<h2 id='source'>Source view</h2><p class='note'>One row per executed instruction of the "
        f"{term_link('stream')}: its {term_link('cuda_line')} and text, its {term_link('ptx')} line and text, its "
        "position in the stream and the form it executes as, and the stall warp-cycles charged to it, one column "
        "per stall reason. Click a header to sort (again to reverse); rows coloured by stall cycles, the five "
        "hottest marked on the left.</p>",
        f'<div class="source-wrap">{source_table(view)}</div>',
        "<h2 id='glossary'>Glossary</h2>", glossary_html(),
        "<h2 id='text'>Text report</h2>", f"<pre>{html.escape(report_text(run))}</pre>",
    ]
    body = (f'<div class="{SCOPE}">\n<style>\n{_base_style()}\n{style_sheet()}\n</style>\n' + "\n".join(inner)
            + "\n</div>")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title></head><body>", body, _json_script(data),
        f"<script>\n{asset('report.js')}\n</script>", "</body></html>",
    ])


def _base_style() -> str:
    from gpusim.observe.source_html import STYLE

    return STYLE
