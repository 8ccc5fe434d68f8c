"""`gpusim run --what-if / --csv / --stalls` (gpusim.cli_exports)."""

from __future__ import annotations

import csv
import io

from gpusim.cli import main
from gpusim.launch.what_if import LIMIT_IDS
from gpusim.observe.export import ID_COLUMNS
from gpusim.programs.catalog import programs_dir


def test_run_what_if_prints_every_limit_and_the_report_quotes_it(capsys):
    assert main(["run", str(programs_dir() / "vecadd.toml"), "--sms", "2", "--what-if", "--report"]) == 0
    out = capsys.readouterr().out
    assert "What-if (vecadd" in out
    assert out.count("DRAM bandwidth x infinity") >= 1
    assert "measured (what-if)" in out
    table = out.split("What-if (vecadd", 1)[1].split("\n\n", 1)[0]
    assert sum(1 for line in table.splitlines() if line.strip().endswith(")") or "x " in line) >= len(LIMIT_IDS)


def test_run_what_if_factor(capsys):
    assert main(["run", str(programs_dir() / "vecadd.toml"), "--sms", "2", "--what-if", "2"]) == 0
    assert "DRAM bandwidth x2" in capsys.readouterr().out
    assert main(["run", str(programs_dir() / "vecadd.toml"), "--what-if", "fast"]) == 2


def test_run_csv_to_stdout_is_only_csv(capsys):
    assert main(["run", str(programs_dir() / "vecadd.toml"), "--sms", "2", "--csv"]) == 0
    captured = capsys.readouterr()
    rows = list(csv.reader(io.StringIO(captured.out)))
    assert len(rows) == 3 and rows[0][:len(ID_COLUMNS)] == list(ID_COLUMNS)
    assert rows[2][ID_COLUMNS.index("Kernel Name")] == "vecadd"
    assert "check c: ok" in captured.err


def test_run_csv_file_and_stall_views(tmp_path, capsys):
    path = tmp_path / "m.csv"
    assert main(["run", str(programs_dir() / "vecadd.toml"), "--sms", "2", "--csv", str(path),
                 "--stalls", "all"]) == 0
    out = capsys.readouterr().out
    assert f"wrote {path}" in out and "selected" in out
    assert path.read_text().startswith('"ID"')
    assert main(["run", str(programs_dir() / "vecadd.toml"), "--sms", "2", "--stalls", "not_issued"]) == 0
    table = capsys.readouterr().out.split("warp states (not_issued", 1)[1]
    assert "selected" not in table.replace("not_selected", "")
