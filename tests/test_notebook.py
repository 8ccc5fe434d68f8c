"""Notebook-friendly results: lab results render as HTML, progress bars appear only on a terminal or in
Jupyter (tqdm, else rich, else a line), and the example notebook examples/tour.ipynb runs."""

from __future__ import annotations

import base64
import io
import sys
from pathlib import Path

import pytest

from gpusim.labs.support import LabResult
from gpusim.launch import progress as P
from gpusim.launch import slices
from gpusim.observe.source_html import SCOPE

ROOT = Path(__file__).resolve().parent.parent
# the smallest valid PNG: 1 x 1 pixel
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJ"
                       "RU5ErkJggg==")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_lab_result_renders_as_html(tmp_path):
    figure = tmp_path / "lab.png"
    figure.write_bytes(PNG)
    result = LabResult("demo", "Demo lab", "a  <b>\n1  2", "fewer sectors, fewer cycles", {}, [figure,
                                                                                             tmp_path / "x.svg"])
    text = result._repr_html_()
    assert text.startswith(f'<div class="{SCOPE}">') and "<script" not in text
    assert "<h3>Demo lab</h3>" in text and "a  &lt;b&gt;" in text and "fewer sectors, fewer cycles" in text
    assert f"data:image/png;base64,{base64.b64encode(PNG).decode()}" in text   # the PNG embedded, inline
    assert "x.svg" in text                                                     # others named


def test_progress_default_follows_the_terminal(monkeypatch):
    monkeypatch.setattr(P, "in_jupyter", lambda: False)
    assert P.ProgressReporter(None, "k", 4, stream=_Terminal()).display is not None
    assert P.ProgressReporter(None, "k", 4, stream=io.StringIO()).display is None      # a file, a pipe, pytest
    assert P.ProgressReporter(False, "k", 4, stream=_Terminal()).display is None
    monkeypatch.setattr(P, "in_jupyter", lambda: True)
    assert P.ProgressReporter(None, "k", 4, stream=io.StringIO()).display is not None  # a Jupyter kernel


def test_in_jupyter_is_false_outside_a_kernel():
    assert P.in_jupyter() is False


def test_launch_shows_nothing_by_default_under_pytest(capfd, monkeypatch):
    import numpy as np

    import gpusim

    monkeypatch.setattr(P, "SHOW_AFTER_SECONDS", 0.0)
    monkeypatch.setattr(slices, "FIXED_BUDGET", 100)                   # several slices, so several reports
    gpu = gpusim.GPU("teaching")
    kernel = gpu.load(str(ROOT / "programs" / "vecadd.ptx"))["vecadd"]
    a = gpu.to_device(np.ones(4096, np.float32))
    gpu.launch(kernel, grid=16, block=256, args=[a, a, gpu.empty(4096, np.float32), 4096])
    assert capfd.readouterr().err == ""
    gpu.launch(kernel, grid=16, block=256, args=[a, a, gpu.empty(4096, np.float32), 4096], progress=True)
    assert "kernel 'vecadd'" in capfd.readouterr().err                 # asked for: shown


def test_launch_display_uses_tqdm_when_installed(monkeypatch):
    pytest.importorskip("tqdm", reason="tqdm is not installed (pip install tqdm)")
    monkeypatch.setattr(P, "SHOW_AFTER_SECONDS", 0.0)
    stream = _Terminal()
    reporter = P.ProgressReporter(True, "k", 10, stream=stream)
    reporter.report(4, 22345, 77890)
    shown = stream.getvalue()
    assert "kernel 'k'" in shown and "4/10" in shown and "77.89 k cycles" in shown
    reporter.close()


def test_count_bar_without_tqdm_or_rich_is_one_line(monkeypatch):
    monkeypatch.setattr(P, "tqdm_class", lambda: None)
    monkeypatch.setitem(sys.modules, "rich", None)             # import rich fails
    monkeypatch.setitem(sys.modules, "rich.progress", None)
    stream = _Terminal()
    bar = P.CountBar("sweep", stream=stream)
    bar(1, 4)
    bar(3, 4)
    assert stream.getvalue() == "\rsweep: 1/4\rsweep: 3/4"
    bar.close()
    assert stream.getvalue().endswith("\r" + " " * len("sweep: 3/4") + "\r")


def test_count_bar_uses_tqdm_when_installed():
    pytest.importorskip("tqdm", reason="tqdm is not installed (pip install tqdm)")
    stream = _Terminal()
    bar = P.CountBar("sweep", stream=stream)
    bar(0, 5)
    bar(3, 5)
    assert "sweep" in stream.getvalue() and "3/5" in stream.getvalue()
    bar.close()


def test_example_notebook_runs(tmp_path):
    for name in ("nbclient", "nbformat", "ipykernel"):
        pytest.importorskip(name, reason=f"{name} is not installed: pip install 'gpusim[dev]' runs the notebook")
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(ROOT / "examples" / "tour.ipynb", as_version=4)
    NotebookClient(notebook, timeout=240, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html_outputs = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("speed of light" in h for h in html_outputs)            # the Run card
    assert any('class="gpusim source-view"' in h for h in html_outputs)  # the source view
    assert any("data:image/png;base64," in h for h in html_outputs)     # the lab with its figure
    report = (tmp_path / "strided_copy.html").read_text()
    assert report.startswith("<!DOCTYPE html>") and "<canvas" in report
