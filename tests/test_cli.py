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


# ------------------------------------------------------------------------------------------- polish (issue 16)
VECADD_ARGS = ["--config", "teaching", "--grid", "2", "--block", "256", "--array", "a=float32:300:random",
               "--array", "b=float32:300:arange", "--array", "c=float32:300", "--scalar", "300"]


def test_version_and_python_dash_m(capsys):
    import subprocess
    import sys

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"gpusim {gpusim.__version__}"
    out = subprocess.run([sys.executable, "-m", "gpusim", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"gpusim {gpusim.__version__}"


def test_check_and_save_after_a_ptx_run(tmp_path, capsys):
    import numpy as np

    code = main(["run", str(programs_dir() / "vecadd.ptx"), *VECADD_ARGS, "--check", "c == a + b",
                 "--save", str(tmp_path)])
    assert code == 0
    assert "check c == a + b: ok (300 true)" in capsys.readouterr().out
    a, b, c = (np.load(tmp_path / f"{name}.npy") for name in "abc")
    assert b.tolist() == list(range(300)) and np.array_equal(c, a + b)
    assert main(["run", str(programs_dir() / "vecadd.ptx"), *VECADD_ARGS, "--check", "c == a"]) == 1
    false = int(np.count_nonzero(c != a))  # b[0] = 0, so element 0 holds
    assert false == 299 and f"MISMATCH ({false} of 300 false)" in capsys.readouterr().out


@pytest.mark.parametrize("check, message", [
    ("c + 1", "expected booleans"),
    ("d == c", "unknown name(s) d"),
    ("c.__class__ == 1", "private attribute"),
    ("open('x') == 1", "unknown name(s) open"),
])
def test_bad_check_expressions_are_one_error(check, message, capsys):
    assert main(["run", str(programs_dir() / "vecadd.ptx"), *VECADD_ARGS, "--check", check]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpusim: error:") and message in err


def test_cu_without_nvcc_names_the_fix(monkeypatch, capsys):
    import gpusim.cli as cli

    monkeypatch.setattr(cli.shutil, "which", lambda name: None)
    assert main(["run", str(programs_dir() / "vecadd.cu"), *VECADD_ARGS]) == 2
    err = capsys.readouterr().err
    assert "needs nvcc" in err and str(programs_dir() / "vecadd.ptx") in err


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_cu_with_nvcc_runs_like_gpu_load(capsys):
    assert main(["run", str(programs_dir() / "vecadd.cu"), *VECADD_ARGS, "--check", "c == a + b"]) == 0
    assert "check c == a + b: ok" in capsys.readouterr().out


def test_functional_program_run_says_no_timing(capsys):
    assert main(["run", "vecadd", "--functional"]) == 0
    out = capsys.readouterr().out
    assert "functional run: no timing" in out and " 0 cycles" not in out


def test_other_suffix_is_not_read_as_toml(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("hello")
    assert main(["run", str(tmp_path / "notes.txt")]) == 2
    assert "expected a program .toml" in capsys.readouterr().err


def test_configs_name_shows_every_field_with_unit_and_doc(capsys):
    from gpusim.arch.config import FIELDS

    assert main(["configs", "teaching"]) == 0
    out = capsys.readouterr().out
    config = gpusim.load_config("teaching")
    for name, spec in FIELDS.items():
        unit = spec.metadata["unit"]
        value = getattr(config, name)
        shown = (repr(value) if isinstance(value, str) else str(value)) + (f" {unit}" if unit else "")
        assert f"{name} = {shown}" in out and spec.metadata["doc"] in out
    assert f"[{spec.metadata['table']}]" in out


def test_lab_help_lists_options_with_defaults(capsys):
    import inspect

    from gpusim.labs import LABS

    for name, module in LABS.items():
        assert main(["lab", name, "--help"]) == 0
        out = capsys.readouterr().out
        for key, parameter in inspect.signature(module.run).parameters.items():
            if key in ("config", "plot_dir", "progress"):
                assert f"  {key}=" not in out
            else:
                default = parameter.default
                shown = ",".join(map(str, default)) if isinstance(default, tuple) else (
                    repr(default) if isinstance(default, str) else str(default))  # strings quoted
                assert f"  {key}={shown}" in out
    assert main(["lab", "--help"]) == 0
    assert "bank-conflicts" in capsys.readouterr().out


def test_lab_set_passes_typed_values(monkeypatch, capsys):
    from gpusim.labs import LABS
    from gpusim.labs.support import LabResult

    seen = {}

    def fake_run(config=None, plot_dir=None, progress=True, *, sms: int = 2, size: int = 512,
                 ratio: float = 1.0, strides: tuple = (1, 2), note: str = "x", fast: bool = False):
        seen.update(sms=sms, size=size, ratio=ratio, strides=strides, note=note, fast=fast)
        return LabResult("fake", "Fake", "table", "lesson")

    monkeypatch.setattr(LABS["bank-conflicts"], "run", fake_run)
    argv = ["lab", "bank-conflicts", "--set", "size=128", "--set", "ratio=2", "--set", "strides=4,8",
            "--set", "note=hi", "--set", "fast=true"]
    assert main(argv) == 0
    assert seen == {"sms": 2, "size": 128, "ratio": 2.0, "strides": (4, 8), "note": "hi", "fast": True}
    assert type(seen["ratio"]) is float


@pytest.mark.parametrize("argv, message", [
    (["lab", "bank-conflics"], "did you mean 'bank-conflicts'"),
    (["lab", "bank-conflicts", "--set", "sise=128"], "its options: sms, size"),
    (["lab", "bank-conflicts", "--set", "size=1.5"], "expected int"),
    (["lab", "bank-conflicts", "--set", "size"], "expected KEY=VALUE"),
    (["lab", "bank-conflicts", "--set", "config=a100"], "use --config"),
    (["lab", "llm-step", "--set", "overrides=1"], "only be set from Python"),
    (["lab", "coalescing", "--set", "strides=a,b"], "comma-separated numbers"),
])
def test_lab_mistakes_are_one_error(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpusim: error:") and message in err and err.count("\n") == 1


def test_run_lab_refuses_unknown_names():
    from gpusim.labs import run_lab

    with pytest.raises(gpusim.GpusimError, match="no lab named 'tilling'; did you mean 'tiling'"):
        run_lab("tilling")
    with pytest.raises(gpusim.GpusimError, match="has no option 'sise'"):
        run_lab("bank-conflicts", sise=3)
