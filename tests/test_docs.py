"""Docs that cannot drift: every Python block and every ``gpusim`` command in README.md and docs/*.md runs.

* ```python blocks are executed, each in a fresh namespace, from a temporary directory where ``programs/``
  and ``configs/`` resolve (a symlink to the checkout's), so files a block writes land there;
* ```bash blocks: each ``gpusim ...`` (or ``python -m gpusim ...``) line goes through ``gpusim.cli.main`` and
  must exit 0; ``pip install`` lines are skipped; any other command is an error (mark the block);
* ```toml blocks of programs/README.md are loaded and run as a program (beside a copy of the PTX they name);
* a block preceded by ``<!-- not-run: reason -->`` is skipped. The exceptions are listed in NOT_RUN below
  and a test keeps that list exact, so a new one is a visible decision.

Fences without a language, ``text`` and ``toml`` outside programs/README.md are prose (diagrams, synopses).
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpusim.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "programs" / "README.md"]

NOT_RUN: dict[str, int] = {"docs/sweeps.md": 1, "README.md": 1}
"""file (relative to the checkout) -> how many blocks it marks not-run (sweeps.md: the block that connects to
the reader's own Dask cluster; README.md: the platform wheel's build, a cold engine compile that
tests/test_build_wheel.py runs under -m slow)."""

_FENCE = re.compile(r"^```(\w*)\s*$")
_NOT_RUN = re.compile(r"<!--\s*not-run:\s*(.+?)\s*-->")


@dataclass(frozen=True)
class Block:
    file: str
    line: int
    language: str
    text: str
    not_run: str | None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


def extract_blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, with the not-run marker just above each (if any)."""
    blocks, lines = [], path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        start = index
        index += 1
        body = []
        while index < len(lines) and not lines[index].startswith("```"):
            body.append(lines[index])
            index += 1
        above = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        marker = _NOT_RUN.search(above)
        blocks.append(Block(str(path.relative_to(ROOT)), start + 1, match.group(1), "\n".join(body) + "\n",
                            marker.group(1) if marker else None))
        index += 1
    return blocks


ALL_BLOCKS = [block for path in DOCS for block in extract_blocks(path)]


def _ids(blocks):
    return [str(block) for block in blocks]


RUN_ELSEWHERE = {"docs/python-kernels.md": "tests/test_python_kernels_docs.py"}
"""Docs whose blocks another test runs: numba reads a kernel's Python source, so those blocks run as .py files."""


def _runnable(language: str, only_programs_toml: bool = False):
    chosen = [b for b in ALL_BLOCKS if b.language == language and b.not_run is None
              and not (language == "python" and b.file in RUN_ELSEWHERE)]
    if only_programs_toml:
        chosen = [b for b in chosen if b.file == "programs/README.md"]
    return chosen


@pytest.fixture
def doc_cwd(tmp_path, monkeypatch):
    """A temporary working directory where the docs' relative paths (programs/..., configs/...) resolve."""
    for name in ("programs", "configs"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("block", _runnable("python"), ids=_ids(_runnable("python")))
def test_python_block_runs(block, doc_cwd):
    code = compile(block.text, f"{block.file}:{block.line}", "exec")
    with contextlib.redirect_stdout(io.StringIO()):
        exec(code, {"__name__": "__docs__"})  # noqa: S102 - the project's own documentation


def commands(block: Block) -> list[list[str]]:
    """The gpusim command lines of a bash block as argv lists (continuations joined, comments dropped)."""
    joined, pending = [], ""
    for raw in block.text.splitlines():
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        joined.append(pending + raw)
        pending = ""
    argvs = []
    for line in joined:
        words = shlex.split(line, comments=True)
        if not words or words[0] == "pip":
            continue
        if words[:3] == ["python", "-m", "gpusim"]:
            words = ["gpusim", *words[3:]]
        if words[0] != "gpusim" or "&&" in words or "|" in words:
            raise AssertionError(f"{block}: '{line.strip()}' is not a plain gpusim command; write one or mark "
                                 "the block <!-- not-run: reason -->")
        argvs.append(words[1:])
    return argvs


@pytest.mark.parametrize("block", _runnable("bash"), ids=_ids(_runnable("bash")))
def test_bash_block_commands_run(block, doc_cwd, capsys):
    argvs = commands(block)
    for argv in argvs:
        try:
            code = main(argv)
        except SystemExit as stop:  # argparse refuses the command line
            code = stop.code
        err = capsys.readouterr().err
        assert code == 0, f"{block}: gpusim {shlex.join(argv)} exited {code}: {err}"


@pytest.mark.parametrize("block", _runnable("toml", True), ids=_ids(_runnable("toml", True)))
def test_program_toml_block_is_a_working_program(block, tmp_path):
    from gpusim.programs.catalog import load_program, programs_dir, run_program

    for key in ("ptx", "source"):  # the files the program names, beside it
        named = re.search(rf'^{key}\s*=\s*"([^"]+)"', block.text, re.MULTILINE)
        if named:
            shutil.copy(programs_dir() / named.group(1), tmp_path / named.group(1))
    (tmp_path / "example.toml").write_text(block.text, encoding="utf-8")
    result = run_program(load_program(tmp_path / "example.toml"), timing=False)
    assert result.ok and result.checks


def test_not_run_exceptions_are_the_listed_ones():
    marked: dict[str, int] = {}
    for block in ALL_BLOCKS:
        if block.not_run is not None:
            assert block.not_run.strip(), f"{block}: a not-run marker needs a reason"
            marked[block.file] = marked.get(block.file, 0) + 1
    assert marked == NOT_RUN


def test_docs_have_blocks_and_the_extractor_sees_them():
    """The runnable kinds are present (an extractor that found nothing would make every test above vacuous)."""
    kinds = {block.language for block in ALL_BLOCKS}
    assert {"python", "bash", "toml"} <= kinds
    counted = sum(path.read_text(encoding="utf-8").count("\n```") for path in DOCS)
    assert 2 * len(ALL_BLOCKS) == counted + sum(path.read_text().startswith("```") for path in DOCS)


def test_commands_parse_continuations_and_refuse_others():
    block = Block("x.md", 1, "bash", "gpusim run a \\\n  --grid 2   # c\npip install .\n", None)
    assert commands(block) == [["run", "a", "--grid", "2"]]
    with pytest.raises(AssertionError, match="not a plain gpusim command"):
        commands(Block("x.md", 1, "bash", "ls -l\n", None))
