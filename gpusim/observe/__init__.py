"""Observability: Nsight-named metrics from engine counters (``metrics``), the regime of a run from its
metrics (``regime``), the suggestions that follow from it (``advice``), the text report and its verdict
(``report``), per-PTX-line attribution with the CUDA source text (``source_view``), trace tables and
Chrome/Perfetto export (``trace``), matplotlib figures (``plot``), and the HTML views: scoped styles and
the source table (``source_html``), the notebook cards and ``run.to_html`` (``html``), the interactive
report file (``html_report``) and the glossary its terms link to (``glossary``)."""
