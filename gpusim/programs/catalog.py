"""Ready-to-run kernel programs: a TOML file that says how to launch a PTX kernel and check it.

A program (``programs/NAME.toml``) names a PTX file, the integer and float sizes of the
problem, the device arrays with their initial contents, one or more launches that run in
order on those arrays, and numpy reference expressions the final arrays are checked
against. ``programs/README.md`` documents the format; this module loads and validates it
(``load_program``), and runs a program through the public API only (``run_program``):
``GPU``, ``GPU.load``, ``GPU.to_device``, ``GPU.launch`` and ``DeviceArray.get``.

Expressions (sizes, shapes, grids, arguments, initial contents, references, expected
results) are Python expressions evaluated with no builtins, in a namespace of ``np``, the
sizes, the arrays and a few helpers (``fma32`` for the single-rounding fp32 fused
multiply-add a GPU does; ``rng`` and the init helpers while creating arrays). Every
problem in a file, including an expression that fails when it is evaluated, is reported
as one ``ConfigError`` that names the file and the key.

Simplifications: the kernel's parameter list is read from the PTX with a regular
expression (enough to count parameters and tell pointers from floats), not with the full
PTX parser; the restricted namespace guards against mistakes, not against a hostile file.
"""

from __future__ import annotations

import importlib.resources
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from gpusim.errors import ConfigError
from gpusim.programs.spec import (
    _TOP_KEYS,
    ArraySpec,
    CheckSpec,
    Expression,
    LaunchSpec,
    TensorMapSpec,
    _base_namespace,
    _evaluate_sizes,
    _optional,
    _parse_arrays,
    _parse_check,
    _parse_launch,
    _parse_reference,
    _parse_tensor_maps,
    _reject_unknown,
    _require,
    fma32,
)

__all__ = [
    "ArraySpec",
    "CheckResult",
    "CheckSpec",
    "Expression",
    "LaunchSpec",
    "ProgramResult",
    "ProgramSpec",
    "fma32",
    "list_programs",
    "load_program",
    "program_from_document",
    "programs_dir",
    "run_program",
]

DEFAULT_CONFIG = "teaching"


def programs_dir() -> Path:
    """The folder of shipped programs: ``programs/`` of the source checkout this package was loaded from,
    else the copy installed with the package (``gpusim.programs.files``, package data like the configs)."""
    root = Path(__file__).resolve().parents[2]
    source = root / "programs"
    if source.is_dir() and (root / "pyproject.toml").is_file():
        return source
    try:
        return Path(str(importlib.resources.files("gpusim.programs.files")))
    except ModuleNotFoundError:
        return source


def list_programs() -> list[Path]:
    """Every program TOML in ``programs_dir()``, sorted by name (empty if there is none)."""
    directory = programs_dir()
    if not directory.is_dir():
        return []
    return sorted(directory.glob("*.toml"))


class CheckResult(NamedTuple):
    """The outcome of one check: array name, pass/fail, largest absolute and relative error."""

    array: str
    ok: bool
    max_abs_error: float
    max_rel_error: float


@dataclass(frozen=True)
class ProgramSpec:
    """A validated program file with its sizes evaluated."""

    path: Path
    name: str
    description: str
    ptx: Path
    source: Path | None
    config: str
    seed: int
    sizes: dict[str, int | float]
    arrays: tuple[ArraySpec, ...]
    reference: tuple[tuple[str, Expression], ...]
    launches: tuple[LaunchSpec, ...]
    checks: tuple[CheckSpec, ...]
    tensor_maps: tuple[TensorMapSpec, ...] = ()

    def with_sizes(self, sizes: dict[str, int | float]) -> ProgramSpec:
        """The same program with some sizes changed (everything that depends on them re-derived)."""
        return load_program(self.path, sizes=sizes)

    def initial_arrays(self) -> dict[str, np.ndarray]:
        """The arrays' initial contents, deterministic for the program's seed."""
        rng = np.random.default_rng(self.seed)
        arrays: dict[str, np.ndarray] = {}
        for array in self.arrays:
            namespace = _base_namespace(self.sizes)
            namespace.update(arrays)
            namespace["rng"] = rng
            namespace.update(_init_helpers(rng, array.shape, array.dtype))
            value = array.init.evaluate(namespace)
            if callable(value):
                value = value()
            arrays[array.name] = _coerce_initial(value, array, str(self.path))
        return arrays

    def reference_values(self, initial: dict[str, np.ndarray]) -> dict[str, Any]:
        """The ``[reference]`` names evaluated in order over the initial arrays."""
        namespace = _base_namespace(self.sizes)
        namespace.update({name: value.copy() for name, value in initial.items()})
        values: dict[str, Any] = {}
        for name, expression in self.reference:
            values[name] = expression.evaluate(namespace)
            namespace[name] = values[name]
        return values

    def expected(self, initial: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The expected final contents of every checked array, keyed by check position and name."""
        namespace = _base_namespace(self.sizes)
        namespace.update({name: value.copy() for name, value in initial.items()})
        namespace.update(self.reference_values(initial))
        expected: dict[str, np.ndarray] = {}
        shapes = {array.name: array.shape for array in self.arrays}
        for index, check in enumerate(self.checks):
            value = np.asarray(check.expect.evaluate(namespace))
            try:
                value = np.broadcast_to(value, shapes[check.array])
            except ValueError:
                raise ConfigError(
                    f"expected value has shape {value.shape}, array '{check.array}' has shape "
                    f"{shapes[check.array]}", file=str(self.path), field=f"check[{index}].expect") from None
            expected[f"{index}:{check.array}"] = value
        return expected

    def check(self, initial: dict[str, np.ndarray], final: dict[str, np.ndarray]) -> list[CheckResult]:
        """Compare the final arrays with the expectations computed from the initial ones."""
        expected = self.expected(initial)
        results = []
        for index, check in enumerate(self.checks):
            results.append(_compare(check, final[check.array], expected[f"{index}:{check.array}"]))
        return results


@dataclass
class ProgramResult:
    """What running a program gave: the Runs of its launches, its checks and its final arrays."""

    spec: ProgramSpec
    runs: list[Any]
    checks: list[CheckResult]
    arrays: dict[str, np.ndarray]

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    @property
    def cycles(self) -> int:
        """Total cycles over all launches."""
        return sum(int(run.cycles) for run in self.runs)

    def summary(self) -> str:
        """A few lines: the program, each launch's cycles and each check's outcome."""
        lines = [f"{self.spec.name}: {self.spec.description}"]
        for launch, run in zip(self.spec.launches, self.runs, strict=True):
            timing = (f"{int(run.cycles)} cycles, {float(run.seconds) * 1e6:.3f} us" if run.timing
                      else "functional run: no timing")
            lines.append(f"  {launch.kernel} grid={launch.grid} block={launch.block}: {timing}")
            if run.timing and run.sampling is not None:      # GPU(sampling=...): sampled or why in full
                lines.append(f"    {run.sampling.summary()}")
        for check in self.checks:
            verdict = "ok" if check.ok else "MISMATCH"
            lines.append(f"  check {check.array}: {verdict} (max abs error {check.max_abs_error:.3g}, "
                         f"max rel error {check.max_rel_error:.3g})")
        return "\n".join(lines)


def load_program(path: str | Path, sizes: dict[str, int | float] | None = None) -> ProgramSpec:
    """Read and validate a program TOML (a path, or the bare name of one in ``programs_dir()``).

    ``sizes`` overrides values of the file's ``[sizes]`` table; sizes defined by expressions
    over overridden ones are re-derived.
    """
    path = _resolve_program_path(path)
    file = str(path)
    try:
        with path.open("rb") as handle:
            document = tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"not valid TOML: {error}", file=file) from None
    except OSError as error:
        raise ConfigError(f"cannot read program file: {error.strerror}", file=file) from None
    return _build_spec(document, path, sizes or {})


def program_from_document(document: dict[str, Any], path: str | Path,
                          sizes: dict[str, int | float] | None = None) -> ProgramSpec:
    """Validate a program given as a parsed TOML document (what ``load_program`` reads from a file).
    ``path`` names it (its stem is the program's name) in errors and anchors its relative ``ptx`` path."""
    return _build_spec(document, Path(path).resolve(), sizes or {})


def run_program(program: ProgramSpec | str | Path, gpu: Any = None, config: str | None = None,
                timing: bool = True, *, sizes: dict[str, int | float] | None = None,
                **launch_kw: Any) -> ProgramResult:
    """Run a program's launches in order on a GPU and check the results against numpy.

    ``gpu`` is a ``gpusim.GPU`` to use; without one a GPU is made from ``config`` (a config
    name or path), else from the program's own ``config``. Extra keywords go to every
    ``GPU.launch`` call.
    """
    spec = program if isinstance(program, ProgramSpec) else load_program(program, sizes=sizes)
    if isinstance(program, ProgramSpec) and sizes:
        spec = spec.with_sizes(sizes)
    if gpu is not None and config is not None:
        raise ConfigError("give either a GPU or a config name, not both", file=str(spec.path), field="config")
    if gpu is None:
        from gpusim.api.gpu import GPU  # deferred: the programs module must load without the engine

        gpu = GPU(config if config is not None else spec.config)
    module = gpu.load(str(spec.ptx))
    initial = spec.initial_arrays()
    device = {name: gpu.to_device(np.ascontiguousarray(value.copy())) for name, value in initial.items()}
    maps = {tm.name: gpu.tensor_map(device[tm.array], box=tm.box, swizzle=tm.swizzle) for tm in spec.tensor_maps}
    runs = []
    for launch in spec.launches:
        kernel = module[launch.kernel]
        args = [device[value] if kind == "array" else maps[value] if kind == "tensor_map" else value
                for kind, value in launch.args]
        cluster = {} if launch.cluster is None else {"cluster": launch.cluster}
        runs.append(gpu.launch(kernel, grid=launch.grid, block=launch.block, args=args,
                               shared_bytes=launch.shared_bytes, timing=timing, **cluster, **launch_kw))
    final = {name: np.asarray(array.get()).reshape(initial[name].shape) for name, array in device.items()}
    checks = spec.check(initial, final)
    return ProgramResult(spec=spec, runs=runs, checks=checks, arrays=final)


# ---------------------------------------------------------------------------------------------
# Loading and validation


def _resolve_program_path(path: str | Path) -> Path:
    candidate = Path(path)
    if (candidate.suffix == "" and len(candidate.parts) == 1 and not candidate.exists()):
        candidate = programs_dir() / f"{candidate.name}.toml"
    if not candidate.is_file():
        raise ConfigError("no such program file", file=str(candidate))
    return candidate.resolve()


def _build_spec(document: dict[str, Any], path: Path, size_overrides: dict[str, Any]) -> ProgramSpec:
    file = str(path)
    _reject_unknown(document, _TOP_KEYS, file, "")
    description = _require(document, "description", str, file, "")
    ptx_name = _require(document, "ptx", str, file, "")
    ptx = (path.parent / ptx_name).resolve()
    if not ptx.is_file():
        raise ConfigError(f"PTX file '{ptx_name}' not found next to the program", file=file, field="ptx")
    source = None
    if "source" in document:
        source_name = _require(document, "source", str, file, "")
        source = (path.parent / source_name).resolve()
        if not source.is_file():
            raise ConfigError(f"source file '{source_name}' not found next to the program",
                              file=file, field="source")
    config = _optional(document, "config", str, DEFAULT_CONFIG, file, "")
    seed = _optional(document, "seed", int, 0, file, "")
    if seed < 0:
        raise ConfigError("must be a non-negative integer", file=file, field="seed")

    size_table = _optional(document, "sizes", dict, {}, file, "")
    sizes = _evaluate_sizes(size_table, size_overrides, file)

    array_tables = _require(document, "arrays", list, file, "")
    if not array_tables:
        raise ConfigError("a program needs at least one array", file=file, field="arrays")
    arrays = _parse_arrays(array_tables, sizes, file)
    array_names = [array.name for array in arrays]

    reference = _parse_reference(_optional(document, "reference", dict, {}, file, ""),
                                 sizes, array_names, file)

    maps = _parse_tensor_maps(_optional(document, "tensor_maps", list, [], file, ""), sizes, array_names, file)
    ptx_text = ptx.read_text(encoding="utf-8", errors="replace")
    launch_tables = _require(document, "launch", list, file, "")
    if not launch_tables:
        raise ConfigError("a program needs at least one [[launch]]", file=file, field="launch")
    launches = tuple(_parse_launch(table, index, sizes, array_names, ptx_text, ptx_name, file,
                                   tuple(m.name for m in maps))
                     for index, table in enumerate(launch_tables))

    check_tables = _optional(document, "check", list, [], file, "")
    known_for_checks = set(array_names) | {name for name, _ in reference}
    checks = tuple(_parse_check(table, index, sizes, array_names, known_for_checks, file)
                   for index, table in enumerate(check_tables))

    return ProgramSpec(path=path, name=path.stem, description=description, ptx=ptx, source=source,
                       config=config, seed=seed, sizes=sizes, arrays=arrays, reference=reference,
                       launches=launches, checks=checks, tensor_maps=maps)


# ---------------------------------------------------------------------------------------------
# Initial contents and checks


def _init_helpers(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> dict[str, Any]:
    """The init helpers bound to one array's shape and dtype."""

    def random() -> np.ndarray:
        if dtype.kind == "f":
            return rng.random(shape)
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)

    def uniform(low: float, high: float) -> np.ndarray:
        return rng.uniform(low, high, size=shape)

    def randint(low: int, high: int) -> np.ndarray:
        return rng.integers(low, high, size=shape)

    def arange() -> np.ndarray:
        return np.arange(math.prod(shape)).reshape(shape)

    def zeros() -> np.ndarray:
        return np.zeros(shape, dtype=dtype)

    def ones() -> np.ndarray:
        return np.ones(shape, dtype=dtype)

    def full(value: float) -> np.ndarray:
        return np.full(shape, value, dtype=dtype)

    return {"random": random, "uniform": uniform, "randint": randint, "arange": arange,
            "zeros": zeros, "ones": ones, "full": full}


def _coerce_initial(value: Any, array: ArraySpec, file: str) -> np.ndarray:
    field_name = f"arrays[{array.name}].init"
    result = np.asarray(value)
    if result.dtype == object or result.dtype.kind not in "biuf":
        raise ConfigError(f"'{array.init.text}' does not give numbers", file=file, field=field_name)
    if result.shape == ():
        result = np.full(array.shape, result)
    elif result.size == math.prod(array.shape) and result.shape != array.shape:
        result = result.reshape(array.shape)
    if result.shape != array.shape:
        raise ConfigError(f"'{array.init.text}' gives shape {result.shape}, the array's shape is "
                          f"{array.shape}",
                          file=file, field=field_name)
    return np.ascontiguousarray(result.astype(array.dtype))


def _compare(check: CheckSpec, actual: np.ndarray, expected: np.ndarray) -> CheckResult:
    actual = np.asarray(actual)
    if actual.size == 0:
        return CheckResult(check.array, True, 0.0, 0.0)
    exact_kinds = "biu"
    if actual.dtype.kind in exact_kinds and np.asarray(expected).dtype.kind in exact_kinds:
        equal = actual == expected
        difference = np.abs(actual.astype(np.float64) - np.asarray(expected).astype(np.float64))
        max_abs = float(difference.max())
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.abs(np.asarray(expected).astype(np.float64))
            relative = np.where(difference == 0, 0.0, difference / scale)
        max_rel = float(np.nan_to_num(relative, nan=np.inf).max())
        return CheckResult(check.array, bool(equal.all()), max_abs, max_rel)
    actual64 = actual.astype(np.float64)
    expected64 = np.asarray(expected).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        both_nan = np.isnan(actual64) & np.isnan(expected64)
        same = (actual64 == expected64) | both_nan
        difference = np.where(same, 0.0, np.abs(actual64 - expected64))
        difference = np.where(np.isnan(difference), np.inf, difference)
        within = difference <= check.atol + check.rtol * np.abs(expected64)
        relative = np.where(difference == 0, 0.0, difference / np.abs(expected64))
    return CheckResult(check.array, bool(within.all()), float(difference.max()),
                       float(np.nan_to_num(relative, nan=np.inf).max()))

