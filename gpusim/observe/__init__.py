"""Observability: Nsight-named metrics from engine counters (``metrics``), the text report and its verdict
(``report``), per-PTX-line attribution (``source_view``), trace tables and Chrome/Perfetto export
(``trace``), matplotlib figures (``plot``) and the self-contained HTML report (``html``)."""
