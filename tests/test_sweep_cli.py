"""`gpusim sweep SPEC.toml`: the complete example of docs/sweeps.md runs, resumes from its store, and a
spec mistake is one error (exit 2)."""

import re
from pathlib import Path

import pytest

import gpusim
from gpusim.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "sweeps.md").read_text()


def doc_block(language: str, marker: str) -> str:
    for block in re.findall(rf"```{language}\n(.*?)```", DOC, flags=re.S):
        if marker in block:
            return block
    raise AssertionError(f"no {language} block with {marker!r} in docs/sweeps.md")


def test_the_documented_spec_runs_and_resumes(tmp_path, capsys):
    spec = tmp_path / "sweep.toml"
    spec.write_text(doc_block("toml", "# sweep.toml"))
    assert main(["sweep", str(spec), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "9 points: 9 run, 0 from the store, 0 failed" in out
    assert "cache_control='all'" in out
    assert (tmp_path / "results.parquet").is_dir()
    table_lines = [line for line in out.splitlines() if line.strip().startswith(("1 ", "2 "))]
    assert len(table_lines) == 9   # one summary row per point (sms is the first column)
    assert main(["sweep", str(spec), "--quiet", "--out", str(tmp_path / "results.parquet")]) == 0
    assert "9 points: 0 run, 9 from the store" in capsys.readouterr().out
    frame = gpusim.sweep.load_store(tmp_path / "results.parquet")
    assert len(frame) == 9 and (frame["status"] == "ok").all()


def test_the_documented_kernel_point_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace = {"gpusim": gpusim}
    exec(doc_block("python", "stream_loads_v1"), namespace)
    frame = namespace["df"]
    assert list(frame["sizes.blocks"]) == [8, 32] and (frame["status"] == "ok").all()
    # each thread reads 4 loads x 4 bytes x 2 iterations, once, from DRAM
    assert list(frame["dram__bytes_read.sum"]) == [blocks * 64 * 4 * 4 * 2 for blocks in (8, 32)]


@pytest.mark.parametrize("text, message", [
    ("[sweep]\nworkerz = 2\n[base]\nprogram = 'vecadd'\n", "sweep.workerz"),
    ("[base]\nprogram = 'vecadd'\n[axes]\nsms = 3\n", "axes"),
    ("[base]\nprogram = 'nope'\n", "no such program"),
])
def test_spec_mistakes_exit_2_with_one_line(tmp_path, capsys, text, message):
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    assert main(["sweep", str(spec), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
