"""Tests of the program files and their loader (gpusim.programs.catalog) that need no engine.

They load and validate every programs/*.toml, build its initial arrays and reference
results, check that each program's PTX and CUDA source sit beside it, exercise every
validation error on small broken files, check fma32 against exact rational arithmetic,
and drive run_program with a stand-in GPU that computes vecadd in numpy.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import ConfigError
from gpusim.programs.catalog import (
    CheckResult,
    ProgramSpec,
    fma32,
    list_programs,
    load_program,
    programs_dir,
    run_program,
)

PROGRAMS = list_programs()
PROGRAM_IDS = [path.stem for path in PROGRAMS]

REQUIRED_PROGRAMS = {
    "vecadd", "saxpy", "scale", "elementwise_chain", "elementwise_fused", "reduce_shared", "reduce_shfl",
    "matmul_naive", "matmul_tiled", "transpose_naive", "transpose_padded", "strided_copy", "histogram",
    "divergence", "gemv", "gemm_batched", "pointer_chase", "flops_per_byte", "daxpy", "hash64", "stencil2d",
}


def test_programs_dir_holds_every_required_program():
    assert programs_dir().is_dir()
    assert PROGRAMS == sorted(PROGRAMS)
    assert REQUIRED_PROGRAMS <= set(PROGRAM_IDS)


@pytest.mark.parametrize("path", PROGRAMS, ids=PROGRAM_IDS)
def test_program_loads_and_its_files_exist(path: Path):
    spec = load_program(path)
    assert isinstance(spec, ProgramSpec)
    assert spec.name == path.stem
    assert spec.description
    assert spec.ptx.is_file() and spec.ptx.suffix == ".ptx"
    assert spec.source is not None and spec.source.is_file() and spec.source.suffix == ".cu"
    assert spec.launches and spec.checks
    ptx_text = spec.ptx.read_text()
    source_text = spec.source.read_text()
    assert re.search(r"^\s*\.loc\s+1\s+\d+", ptx_text, re.MULTILINE), "PTX lacks -lineinfo .loc lines"
    assert f'.file\t1 "{spec.source.name}"' in ptx_text, "the .file entry should name the .cu relatively"
    for launch in spec.launches:
        assert re.search(r"\.visible\s+\.entry\s+" + launch.kernel + r"\(", ptx_text)
        assert re.search(r'extern "C" __global__ void\s+(?:__launch_bounds__\([^)]*\)\s+)?' + launch.kernel + r"\(",
                         source_text), f"{launch.kernel} should be an extern \"C\" __global__ function of the .cu"


@pytest.mark.parametrize("path", PROGRAMS, ids=PROGRAM_IDS)
def test_program_initial_arrays_and_expectations(path: Path):
    spec = load_program(path)
    first = spec.initial_arrays()
    second = spec.initial_arrays()
    assert list(first) == [array.name for array in spec.arrays]
    for array in spec.arrays:
        assert first[array.name].dtype == array.dtype
        assert first[array.name].shape == array.shape
        assert first[array.name].flags.c_contiguous
        np.testing.assert_array_equal(first[array.name], second[array.name])
    expected = spec.expected(first)
    shapes = {array.name: array.shape for array in spec.arrays}
    for index, check in enumerate(spec.checks):
        assert expected[f"{index}:{check.array}"].shape == shapes[check.array]
        assert np.all(np.isfinite(expected[f"{index}:{check.array}"].astype(np.float64)))
    # the loader never hands the expectations the arrays it will upload
    np.testing.assert_equal(spec.initial_arrays(), first)


@pytest.mark.parametrize("path", PROGRAMS, ids=PROGRAM_IDS)
def test_program_launch_geometry_is_legal_for_cuda(path: Path):
    """CUDA's limits: 1024 threads, z <= 64, the grid's dimensions; dynamic shared memory up to 48 KB, or up to
    the opt-in maximum of the program's architecture (cudaFuncAttributeMaxDynamicSharedMemorySize: 227 KB on
    sm_90, 163 KB on sm_80), which the program's config states."""
    spec = load_program(path)
    limit = gpusim.load_config(spec.config).max_shared_bytes_per_block
    for launch in spec.launches:
        threads = int(np.prod(launch.block))
        assert 1 <= threads <= 1024
        assert launch.block[2:] in ((), (1,)) or launch.block[2] <= 64
        assert launch.grid[0] < 2**31 and all(dimension < 65536 for dimension in launch.grid[1:])
        assert 0 <= launch.shared_bytes <= max(48 * 1024, limit)


def test_readme_lists_every_program():
    readme = (programs_dir() / "README.md").read_text()
    for name in PROGRAM_IDS:
        assert f"`{name}`" in readme, name


def test_every_source_has_a_program_and_ptx():
    for source in programs_dir().glob("*.cu"):
        assert source.with_suffix(".ptx").is_file(), source.name
        assert source.with_suffix(".toml").is_file(), source.name


def test_bare_name_resolves_in_programs_dir():
    assert load_program("vecadd").path == (programs_dir() / "vecadd.toml").resolve()


def test_size_overrides_rederive_dependent_values():
    spec = load_program("elementwise_chain", sizes={"n": 1000})
    assert spec.sizes["n"] == 1000
    assert spec.sizes["blocks"] == 4
    assert all(launch.grid == (4,) for launch in spec.launches)
    assert spec.arrays[0].shape == (1000,)
    assert spec.launches[0].args[-1] == ("value", 1000)
    assert spec.with_sizes({"n": 10}).sizes["blocks"] == 1


def test_size_override_of_unknown_name_is_refused():
    with pytest.raises(ConfigError, match=r"sizes\.m"):
        load_program("vecadd", sizes={"m": 3})
    with pytest.raises(ConfigError, match="must be a number"):
        load_program("vecadd", sizes={"n": "12"})


def test_program_arguments_are_resolved():
    spec = load_program("saxpy")
    assert spec.launches[0].args == (("value", 3000), ("value", 1.7), ("array", "x"), ("array", "y"))
    spec = load_program("reduce_shared")
    assert spec.launches[0].shared_bytes == 256 * 4


# ---------------------------------------------------------------------------------------------
# fma32


def _round_to_float32(exact: Fraction) -> np.float32:
    """Round an exact rational to the nearest float32, ties to even (reference for fma32)."""
    guess = np.float32(float(exact))
    candidates = [np.nextafter(guess, np.float32(-np.inf)), guess, np.nextafter(guess, np.float32(np.inf))]
    best = min(candidates, key=lambda value: (abs(Fraction(float(value)) - exact),
                                              int(np.array(value).view(np.uint32)) & 1))
    return np.float32(best)


def test_fma32_rounds_once_where_float64_would_round_twice():
    a = np.float32(1 + 2.0**-12)
    c = np.float32(2.0**-60)
    # a * a = 1 + 2^-11 + 2^-24 is a float32 midpoint; the tiny c decides the rounding
    exact = Fraction(float(a)) * Fraction(float(a)) + Fraction(float(c))
    assert fma32(a, a, c) == _round_to_float32(exact) == np.float32(1 + 2.0**-11 + 2.0**-23)
    assert np.float32(float(a) * float(a) + float(c)) != fma32(a, a, c)  # naive float64 gets it wrong
    assert fma32(a, a, -c) == np.float32(1 + 2.0**-11)


def test_fma32_matches_exact_arithmetic_on_random_values():
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(2000) * 2.0 ** rng.integers(-20, 20, 2000)).astype(np.float32)
    b = (rng.standard_normal(2000) * 2.0 ** rng.integers(-20, 20, 2000)).astype(np.float32)
    c = (rng.standard_normal(2000) * 2.0 ** rng.integers(-40, 40, 2000)).astype(np.float32)
    result = fma32(a, b, c)
    assert result.dtype == np.float32
    for index in range(a.size):
        exact = Fraction(float(a[index])) * Fraction(float(b[index])) + Fraction(float(c[index]))
        assert result[index] == _round_to_float32(exact), index


def test_fma32_broadcasts_scalars_and_keeps_special_values():
    assert fma32(2.0, np.float32(3), 1.0) == np.float32(7)
    result = fma32(np.array([np.inf, np.nan, 1.0], np.float32), np.float32(2), np.float32(1))
    assert np.isinf(result[0]) and np.isnan(result[1]) and result[2] == 3


# ---------------------------------------------------------------------------------------------
# validation errors

VALID_PTX = """
.version 9.0
.target sm_80
.address_size 64
.visible .entry copy(
	.param .u64 copy_param_0,
	.param .u64 copy_param_1,
	.param .u32 copy_param_2,
	.param .f32 copy_param_3
)
{
	ret;
}
"""

VALID_TOML = """
description = "copy"
ptx = "copy.ptx"

[sizes]
n = 100
threads = 32
scale = 0.5

[[arrays]]
name = "a"
dtype = "float32"
shape = ["n"]
init = "random"

[[arrays]]
name = "b"
dtype = "float32"
shape = ["n"]

[[launch]]
kernel = "copy"
grid = ["(n + threads - 1) // threads"]
block = ["threads"]
args = ["a", "b", "n", "scale"]

[[check]]
array = "b"
expect = "a"
"""


def _write(tmp_path: Path, toml_text: str, ptx_text: str = VALID_PTX) -> Path:
    (tmp_path / "copy.ptx").write_text(ptx_text)
    path = tmp_path / "copy.toml"
    path.write_text(toml_text)
    return path


def test_valid_minimal_program(tmp_path: Path):
    spec = load_program(_write(tmp_path, VALID_TOML))
    assert spec.config == "teaching"
    assert spec.seed == 0
    assert spec.source is None
    assert spec.launches[0].grid == (4,)
    assert spec.launches[0].block == (32,)
    assert spec.launches[0].args == (("array", "a"), ("array", "b"), ("value", 100), ("value", 0.5))
    assert spec.checks[0].rtol == 0.0 and spec.checks[0].atol == 0.0
    initial = spec.initial_arrays()
    assert initial["b"].dtype == np.float32 and not initial["b"].any()
    assert 0 <= initial["a"].min() and initial["a"].max() < 1


BROKEN_PROGRAMS = [
    ("missing description", ('description = "copy"\n', ""), "'description'.*missing required key"),
    ("unknown top key", ('ptx = "copy.ptx"', 'ptx = "copy.ptx"\nthreads = 3'), "'threads'.*unknown key"),
    ("missing ptx file", ('ptx = "copy.ptx"', 'ptx = "other.ptx"'), "'ptx'.*other.ptx"),
    ("missing source file", ('ptx = "copy.ptx"', 'ptx = "copy.ptx"\nsource = "copy.cu"'), "'source'"),
    ("wrong type", ('ptx = "copy.ptx"', 'ptx = "copy.ptx"\nseed = "x"'), "'seed'.*an integer"),
    ("negative seed", ('ptx = "copy.ptx"', 'ptx = "copy.ptx"\nseed = -1'), "'seed'"),
    ("bad dtype", ('dtype = "float32"\nshape = ["n"]\ninit', 'dtype = "float33"\nshape = ["n"]\ninit'),
     r"arrays\[0\]\.dtype.*float33"),
    ("unknown array key", ('init = "random"', 'init = "random"\nfill = 1'), r"arrays\[0\]\.fill"),
    ("duplicate array", ('name = "b"', 'name = "a"'), r"arrays\[1\]\.name.*already used"),
    ("array named like a size", ('name = "b"', 'name = "n"'), r"arrays\[1\]\.name"),
    ("array named like a helper", ('name = "b"', 'name = "np"'), r"arrays\[1\]\.name"),
    ("bad identifier", ('name = "b"', 'name = "b-c"'), r"arrays\[1\]\.name.*not a valid name"),
    ("missing shape", ('shape = ["n"]\ninit = "random"', 'init = "random"'), r"arrays\[0\]\.shape"),
    ("zero shape", ('shape = ["n"]\ninit = "random"', 'shape = ["n - 100"]\ninit = "random"'),
     r"arrays\[0\]\.shape\[0\].*at least 1"),
    ("unknown init name", ('init = "random"', 'init = "rand()"'), r"arrays\[0\]\.init.*unknown name.*rand"),
    ("init uses later array", ('init = "random"', 'init = "b"'), r"arrays\[0\]\.init.*unknown name.*b"),
    ("syntax error", ('grid = ["(n + threads - 1) // threads"]', 'grid = ["(n + "]'),
     r"launch\[0\]\.grid\[0\].*not a valid expression"),
    ("private attribute", ('init = "random"', 'init = "np.__class__"'), "private attribute"),
    ("size evaluation error", ("scale = 0.5", 'scale = 0.5\nbad = "n // 0"'),
     r"sizes\.bad.*ZeroDivisionError"),
    ("size of wrong type", ("scale = 0.5", "scale = [1]"), r"sizes\.scale"),
    ("size uses later size", ("n = 100", 'n = "threads"'), r"sizes\.n.*unknown name"),
    ("four grid dimensions", ('grid = ["(n + threads - 1) // threads"]', "grid = [1, 1, 1, 1]"),
     r"launch\[0\]\.grid.*1 to 3"),
    ("zero block", ('block = ["threads"]', "block = [0]"), r"launch\[0\]\.block\[0\].*at least 1"),
    ("fractional grid", ('grid = ["(n + threads - 1) // threads"]', 'grid = ["n / 3"]'),
     r"launch\[0\]\.grid\[0\].*integer"),
    ("missing grid", ('grid = ["(n + threads - 1) // threads"]\n', ""), r"launch\[0\]\.grid"),
    ("negative shared bytes", ('block = ["threads"]', 'block = ["threads"]\nshared_bytes = -4'),
     r"launch\[0\]\.shared_bytes"),
    ("unknown kernel", ('kernel = "copy"', 'kernel = "kopy"'), r"launch\[0\]\.kernel.*kopy.*copy"),
    ("unknown launch key", ('kernel = "copy"', 'kernel = "copy"\nstream = 1'), r"launch\[0\]\.stream"),
    ("too few args", ('args = ["a", "b", "n", "scale"]', 'args = ["a", "b", "n"]'),
     r"launch\[0\]\.args.*4 parameters, 3 given"),
    ("array to scalar", ('args = ["a", "b", "n", "scale"]', 'args = ["a", "b", "a", "scale"]'),
     r"launch\[0\]\.args\[2\].*\.u32"),
    ("float to integer", ('args = ["a", "b", "n", "scale"]', 'args = ["a", "b", "scale", "scale"]'),
     r"launch\[0\]\.args\[2\].*integer"),
    ("unknown arg name", ('args = ["a", "b", "n", "scale"]', 'args = ["a", "c", "n", "scale"]'),
     r"launch\[0\]\.args\[1\].*unknown name.*c"),
    ("boolean arg", ('args = ["a", "b", "n", "scale"]', 'args = ["a", "b", true, "scale"]'),
     r"launch\[0\]\.args\[2\]"),
    ("launch table renamed", ("[[launch]]", "[[launches]]"), "'launches'.*unknown key"),
    ("check of unknown array", ('array = "b"', 'array = "z"'), r"check\[0\]\.array.*no array 'z'"),
    ("check with unknown name", ('expect = "a"', 'expect = "a + q"'), r"check\[0\]\.expect.*q"),
    ("negative tolerance", ('expect = "a"', 'expect = "a"\nrtol = -1.0'), r"check\[0\]\.rtol"),
    ("unknown check key", ('expect = "a"', 'expect = "a"\ntolerance = 1'), r"check\[0\]\.tolerance"),
    ("invalid toml", ("[sizes]", "[sizes"), "not valid TOML"),
]


@pytest.mark.parametrize(("change", "message"), [(case[1], case[2]) for case in BROKEN_PROGRAMS],
                         ids=[case[0] for case in BROKEN_PROGRAMS])
def test_broken_program_gives_one_config_error_naming_file_and_key(tmp_path: Path, change, message):
    old, new = change
    assert old in VALID_TOML
    path = _write(tmp_path, VALID_TOML.replace(old, new, 1))
    with pytest.raises(ConfigError, match=message) as caught:
        load_program(path)
    assert str(path) in str(caught.value)


def test_program_without_launches_or_arrays(tmp_path: Path):
    start = VALID_TOML.index("[[launch]]")
    end = VALID_TOML.index("[[check]]")
    path = _write(tmp_path, "launch = []\n" + VALID_TOML[:start] + VALID_TOML[end:])
    with pytest.raises(ConfigError, match="'launch'.*at least one"):
        load_program(path)
    path = _write(tmp_path, 'description = "x"\nptx = "copy.ptx"\narrays = []\n')
    with pytest.raises(ConfigError, match="'arrays'.*at least one array"):
        load_program(path)


def test_missing_program_file(tmp_path: Path):
    with pytest.raises(ConfigError, match="no such program file"):
        load_program(tmp_path / "absent.toml")
    with pytest.raises(ConfigError, match="no such program file"):
        load_program("no_program_has_this_name")


def test_init_errors_surface_when_arrays_are_built(tmp_path: Path):
    spec = load_program(_write(tmp_path, VALID_TOML.replace('init = "random"', 'init = "np.zeros(7)"')))
    with pytest.raises(ConfigError, match=r"arrays\[a\]\.init.*shape \(7,\)"):
        spec.initial_arrays()
    spec = load_program(_write(tmp_path, VALID_TOML.replace('init = "random"', 'init = "uniform(1)"')))
    with pytest.raises(ConfigError, match=r"arrays\[0\]\.init.*TypeError"):
        spec.initial_arrays()


def test_check_shape_mismatch_is_a_config_error(tmp_path: Path):
    spec = load_program(_write(tmp_path, VALID_TOML.replace('expect = "a"', 'expect = "a[:3]"')))
    with pytest.raises(ConfigError, match=r"check\[0\]\.expect.*shape"):
        spec.expected(spec.initial_arrays())


def test_init_helpers_and_reference_table(tmp_path: Path):
    text = VALID_TOML.replace('init = "random"', 'init = "arange() * 2"').replace(
        "[[check]]", '[reference]\ndoubled = "a * 2"\nquadrupled = "doubled * 2"\n\n[[check]]').replace(
        'expect = "a"', 'expect = "quadrupled / 4"')
    spec = load_program(_write(tmp_path, text))
    initial = spec.initial_arrays()
    np.testing.assert_array_equal(initial["a"], np.arange(100, dtype=np.float32) * 2)
    assert list(spec.reference_values(initial)) == ["doubled", "quadrupled"]
    np.testing.assert_array_equal(spec.expected(initial)["0:b"], initial["a"])


def test_seed_changes_random_contents(tmp_path: Path):
    first = load_program(_write(tmp_path, VALID_TOML)).initial_arrays()["a"]
    second = load_program(_write(tmp_path, 'seed = 5\n' + VALID_TOML)).initial_arrays()["a"]
    assert not np.array_equal(first, second)


def test_random_integers_cover_the_dtype():
    spec = load_program("hash64")
    keys = spec.initial_arrays()["keys"]
    assert keys.dtype == np.uint64 and int(keys.max()) > 2**63


# ---------------------------------------------------------------------------------------------
# checks and run_program with a stand-in GPU


def test_checks_report_errors(tmp_path: Path):
    spec = load_program(_write(tmp_path, VALID_TOML.replace('expect = "a"', 'expect = "a"\nrtol = 1e-3')))
    initial = spec.initial_arrays()
    near = initial["a"] * np.float32(1.0001)
    [result] = spec.check(initial, {"a": initial["a"], "b": near})
    assert isinstance(result, CheckResult) and result.ok
    assert 0 < result.max_rel_error < 2e-4
    far = initial["a"] + 1
    [result] = spec.check(initial, {"a": initial["a"], "b": far})
    assert not result.ok and result.max_abs_error == pytest.approx(1.0)
    with_nan = initial["a"].copy()
    with_nan[3] = np.nan
    [result] = spec.check(initial, {"a": initial["a"], "b": with_nan})
    assert not result.ok and result.max_abs_error == np.inf


def test_integer_checks_are_exact():
    spec = load_program("histogram")
    initial = spec.initial_arrays()
    counts = np.bincount(initial["data"], minlength=256).astype(np.uint32)
    [result] = spec.check(initial, {"data": initial["data"], "counts": counts})
    assert result.ok and result.max_abs_error == 0
    counts[5] += 1
    [result] = spec.check(initial, {"data": initial["data"], "counts": counts})
    assert not result.ok and result.max_abs_error == 1


class _StandInArray:
    def __init__(self, values: np.ndarray):
        self.values = values

    def get(self) -> np.ndarray:
        return self.values.copy()


class _StandInRun:
    timing = True  # a Run says whether it was timed; the counts below are made up
    cycles = 10
    seconds = 1e-8
    metrics: dict = {}
    sampling = None  # a Run carries its sampling record (None: GPU(sampling="off"))


class _StandInGPU:
    """Just enough of the public GPU API to run vecadd, computing it in numpy."""

    def __init__(self, wrong: bool = False):
        self.wrong = wrong
        self.launches: list[dict] = []
        self.loaded: list[str] = []

    def load(self, path: str):
        self.loaded.append(path)
        return {"vecadd": "vecadd-kernel"}

    def to_device(self, values: np.ndarray) -> _StandInArray:
        return _StandInArray(values.copy())

    def launch(self, kernel, grid, block, args, shared_bytes=0, timing=True, **keywords):
        self.launches.append({"kernel": kernel, "grid": grid, "block": block, "args": args,
                              "shared_bytes": shared_bytes, "timing": timing, **keywords})
        a, b, c, n = args
        c.values[:n] = a.values[:n] + b.values[:n] + (1 if self.wrong else 0)
        return _StandInRun()


def test_run_program_drives_the_public_api():
    gpu = _StandInGPU()
    result = run_program("vecadd", gpu=gpu, timing=False, trace=True)
    assert result.ok
    assert gpu.loaded == [str(programs_dir().resolve() / "vecadd.ptx")]
    [launch] = gpu.launches
    assert launch["kernel"] == "vecadd-kernel"
    assert launch["grid"] == (20,) and launch["block"] == (256,)
    assert launch["args"][3] == 5000 and launch["timing"] is False and launch["trace"] is True
    assert result.cycles == 10 and len(result.runs) == 1
    np.testing.assert_array_equal(result.arrays["c"], result.arrays["a"] + result.arrays["b"])
    assert "vecadd" in result.summary() and "ok" in result.summary()


def test_run_program_reports_a_mismatch():
    result = run_program(load_program("vecadd"), gpu=_StandInGPU(wrong=True), sizes={"n": 300})
    assert not result.ok
    assert result.arrays["c"].shape == (300,)
    assert result.checks[0].max_abs_error == pytest.approx(1.0)
    assert "MISMATCH" in result.summary()


def test_run_program_refuses_gpu_and_config_together():
    with pytest.raises(ConfigError, match="either"):
        run_program("vecadd", gpu=_StandInGPU(), config="teaching")
