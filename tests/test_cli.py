"""The gpusim command: run (program or PTX), configs, roofline, lab; exit codes and one-line errors."""

from __future__ import annotations

import json
import shutil

import pytest

import gpusim
from gpusim.cli import main
from gpusim.programs.catalog import programs_dir


def test_run_program_with_report_and_json(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["run", str(programs_dir() / "vecadd.toml"), "--report", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "check c: ok" in text and "Verdict:" in text and "Hottest PTX lines" in text
    data = json.loads(out.read_text())
    assert data["kernel"] == "vecadd" and data["metrics"]["smsp__inst_executed.sum"] > 0


def test_wrong_result_exits_1(tmp_path, capsys):
    for name in ("vecadd.ptx", "vecadd.cu"):
        shutil.copy(programs_dir() / name, tmp_path / name)
    toml = (programs_dir() / "vecadd.toml").read_text().replace('expect = "a + b"', 'expect = "a - b"')
    (tmp_path / "wrong.toml").write_text(toml)
    assert main(["run", str(tmp_path / "wrong.toml"), "--functional"]) == 1
    assert "MISMATCH" in capsys.readouterr().out


def test_run_ptx_with_arrays_and_scalars(capsys):
    n = 300
    code = main(
        [
            "run",
            str(programs_dir() / "vecadd.ptx"),
            "--kernel",
            "vecadd",
            "--grid",
            "2",
            "--block",
            "256",
            "--array",
            f"a=float32:{n}:ones",
            "--array",
            f"b=float32:{n}:arange",
            "--array",
            f"c=float32:{n}",
            "--scalar",
            str(n),
            "--sms",
            "2",
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    # c = a + b = 1 + i
    assert f"c: float32[{n}] = [1. 2. 3. 4. 5. 6. 7. 8.] ..." in text


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "programs/no_such_program.toml"], "no such program file"),
        (["run", "programs/vecadd.ptx", "--kernel", "vecadd", "--block", "64"], "needs --grid"),
        (
            ["run", "programs/vecadd.ptx", "--grid", "1", "--block", "32", "--array", "a=float33:4"],
            "not a numpy dtype",
        ),
        (
            ["run", "programs/vecadd.ptx", "--kernel", "nope", "--grid", "1", "--block", "32"],
            "no kernel 'nope'",
        ),
        (["roofline", "no_such_config"], "no_such_config"),
        (["lab", "no_such_lab"], "no lab named"),
    ],
)
def test_errors_are_one_line_exit_2(argv, message, capsys, monkeypatch):
    monkeypatch.chdir(programs_dir().parent)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpusim: error:") and message in err and "Traceback" not in err


def test_configs_lists_every_config(capsys):
    assert main(["configs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == gpusim.list_configs()


def test_roofline_prints_ceilings(tmp_path, capsys):
    config = gpusim.load_config("a100")
    args = ["roofline", "a100"]
    try:
        import matplotlib  # noqa: F401  (only to decide whether to ask for the figure)

        args += ["--plot", str(tmp_path)]
    except ImportError:
        pass
    assert main(args) == 0
    text = capsys.readouterr().out
    assert f"{config.dram_bandwidth_gbs:10.1f} GB/s" in text
    assert f"{config.peak_fp32_flops / 1e12:10.3f} TFLOP/s" in text


def test_lab_list(capsys):
    from gpusim.labs import LABS

    assert main(["lab", "--list"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert names == sorted(LABS)


def test_run_with_every_output(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    code = main(
        [
            "run",
            "divergence",
            "--report",
            "--plot",
            str(tmp_path / "plots"),
            "--html",
            str(tmp_path / "d.html"),
            "--trace",
            str(tmp_path / "d.json"),
        ]
    )
    assert code == 0
    assert len(list((tmp_path / "plots").glob("divergence_*.png"))) == 3
    assert (tmp_path / "d.html").stat().st_size > 0
    assert json.loads((tmp_path / "d.json").read_text())["traceEvents"]
