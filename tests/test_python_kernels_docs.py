"""docs/python-kernels.md: every ```python block runs, in order, as one script (its asserts check numpy).

The blocks are written to ``first_kernel.py`` and run from that file, so numba's and Triton's line info
names a real Python file, as in a user's script (skipped without numba-cuda or Triton).
"""

from __future__ import annotations

import importlib.util
import re
import runpy
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "python-kernels.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_page_has_examples():
    blocks = python_blocks(DOC.read_text())
    assert len(blocks) >= 5 and any("gpusim.jit" in b for b in blocks) and any("triton.launch" in b for b in blocks)


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None or importlib.util.find_spec("triton") is None,
                    reason="needs numba-cuda and Triton: pip install 'gpusim[numba-cuda,triton]'")
def test_every_example_runs(tmp_path, capsys):
    script = tmp_path / "first_kernel.py"
    script.write_text("\n\n".join(python_blocks(DOC.read_text())))
    namespace = runpy.run_path(str(script), run_name="__main__")
    printed = capsys.readouterr().out
    assert "cycles" in printed and "raised ValueError('negative input')" in printed
    sources = {row.source for row in namespace["run"].source_view().rows if row.source}
    assert sources and all(source.startswith("first_kernel.py:") for source in sources)


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None, reason="needs numba-cuda")
def test_the_readme_section_runs(tmp_path, capsys):
    readme = (DOC.parents[1] / "README.md").read_text()
    section = readme.split("## Kernels written in Python", 1)[1].split("\n## ", 1)[0]
    (block,) = python_blocks(section)
    script = tmp_path / "readme_kernel.py"
    script.write_text(block)
    namespace = runpy.run_path(str(script), run_name="__main__")
    assert (namespace["out"] == namespace["a"] + 10).all()
    assert "readme_kernel.py:" in capsys.readouterr().out
