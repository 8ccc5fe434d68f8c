"""The report's headline, verdict and suggestions as HTML (the report file and the notebook card share them)."""

from __future__ import annotations

import html

from gpusim.observe.glossary import GLOSSARY, term_link


def _kind(key: str, text: str) -> str:
    return term_link(key, text) if key in GLOSSARY else html.escape(text)


def verdict_html(v, label: str) -> str:
    text = f'<div class="verdict"><b>{_kind(v.kind, v.kind)}</b>: {html.escape(v.reason)}'
    if v.suggestion:
        text += f"<br><b>{label}</b> [{_kind('finding:' + v.top.kind, v.top.kind)}]: {html.escape(v.suggestion)}"
    return text + "</div>"


def suggestions_html(v) -> str:
    if len(v.findings) < 2:
        return ""
    items = "".join(
        f'<li data-kind="{html.escape(f.kind)}"><b>{_kind("finding:" + f.kind, f.kind)}</b>: {html.escape(f.text)}</li>'
        for f in v.findings
    )
    return f"<h2>Suggestions (fixes for a {html.escape(v.kind)} run first)</h2><ol class='suggestions'>{items}</ol>"


def headline_html(run) -> str:
    config = run.config
    timing = f"{run.cycles:,} cycles, {run.seconds * 1e6:.3f} us" if run.timing else "functional run"
    sampling = getattr(run, "sampling", None) if run.timing else None
    if sampling is not None and sampling.sampled:          # GPU(sampling=...): gpusim.launch.sampling
        timing += f" <b>(sampled</b>: {html.escape(sampling.summary())})"
    return (
        f'<div class="headline"><b>{html.escape(run.program.name)}</b> on {html.escape(config.name)} '
        f"({config.sms} {term_link('sm', 'SMs')}), {term_link('grid')} {run.grid}, {term_link('block')} "
        f"{run.block}: {timing}; code generation: {html.escape(run.codegen)}"
        f"{' (' + html.escape(run.codegen_reason) + ')' if run.codegen_reason else ''}</div>"
    )
