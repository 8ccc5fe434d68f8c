"""Sweep points: what one point of a sweep is, the grid helper, and a point's content key.

A point is a plain dict (so a TOML table, a JSON object or a Python literal can be one):

``config``
    a config name or ``.toml`` path (default: a program's own ``config``, else ``h100-sxm``);
``program``
    a ready program: a name of ``programs/*.toml`` or a path to a program TOML;
``kernel``
    or a kernel: ``{ptx, name, grid, block, shared_bytes, args, arrays}``: the ``[[launch]]`` and
    ``[[arrays]]`` tables of the program format (programs/README.md) for one launch of ``name`` from the
    PTX file ``ptx``;
``sizes``
    values of the program's ``[sizes]`` (overrides), or a kernel's whole ``[sizes]`` table;
``launch``
    keywords of every ``GPU.launch``: ``regs``, ``timing``, ``cache_control``, ``max_warp_instructions``;
``tags``
    labels shown as columns and not passed to the simulator (they do not change the key);

and any other key is a keyword of ``GPU(config, **keywords)``: a config field (``sms``, ``scheduler``,
``l2_bytes``, ``dram_bandwidth_gbs``...) or any other keyword ``GPU`` accepts. An unknown key is an
error before anything runs.

``prepare`` turns a point into a ``Task``: everything a worker needs, carried by value (the resolved
config, the program document, the PTX text), so a worker needs no file of the sweep, only gpusim. Its
``key`` is the SHA-256 of (the config's fields after overrides, the other GPU keywords, the program
document, the PTX text, the sizes after overrides, the launch keywords, the gpusim version): what decides
the result, and nothing else (not ``tags``, not the point's position).

Simplifications: a file a program's expressions might read is not part of the key (they read none: the
expression namespace has no I/O); a config given as a path is resolved in the process that prepares the
sweep and shipped as values.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import itertools
import json
import tomllib
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from gpusim.api.gpu import CACHE_CONTROLS, GPU
from gpusim.arch.config import FIELDS, GPUConfig, load_config
from gpusim.errors import ConfigError
from gpusim.programs.catalog import load_program, program_from_document

DEFAULT_CONFIG = "h100-sxm"
POINT_KEYS = ("config", "program", "kernel", "sizes", "launch", "tags")
KERNEL_KEYS = ("ptx", "name", "grid", "block", "shared_bytes", "args", "arrays")
LAUNCH_KEYS = ("regs", "timing", "cache_control", "max_warp_instructions")


def gpusim_version() -> str:
    """The installed gpusim's version (part of every key: a new simulator may time a point differently)."""
    try:
        return metadata.version("gpusim")
    except metadata.PackageNotFoundError:
        return "unknown"


def grid(axes: dict[str, list], base: dict | None = None) -> list[dict]:
    """The cartesian product of ``axes`` over ``base``: one point per combination, the last axis varying
    fastest (``itertools.product`` order). A dotted axis name sets a nested key: ``"sizes.n"``,
    ``"kernel.grid"``, ``"launch.regs"``, ``"tags.regime"``."""
    if not isinstance(axes, dict):
        raise ConfigError("axes must be a table of name = [values]", field="axes")
    for name, values in axes.items():
        if not isinstance(values, list | tuple) or not values:
            raise ConfigError(f"an axis is a non-empty list of values, got {values!r}", field=f"axes.{name}")
    points = []
    for combination in itertools.product(*axes.values()):
        point = copy.deepcopy(base) if base else {}
        for name, value in zip(axes, combination, strict=True):
            _set_dotted(point, name, copy.deepcopy(value))
        points.append(point)
    return points


def _set_dotted(point: dict, name: str, value: Any) -> None:
    *parents, leaf = name.split(".")
    target = point
    for part in parents:
        target = target.setdefault(part, {})
        if not isinstance(target, dict):
            raise ConfigError(f"'{part}' is not a table, so '{name}' cannot be set", field=f"axes.{name}")
    target[leaf] = value


@dataclass(frozen=True)
class Task:
    """One point, resolved: what a worker runs (``gpusim.sweep.worker.run_task``)."""

    index: int
    key: str
    config: GPUConfig
    gpu_keywords: dict
    program_name: str
    document: dict
    ptx_name: str
    ptx_text: str
    sizes: dict
    launch: dict = field(default_factory=dict)


def _gpu_keywords() -> set[str]:
    """Keywords ``GPU(...)`` takes besides config fields (none today; any it grows work as axes)."""
    parameters = inspect.signature(GPU.__init__).parameters
    return {name for name, p in parameters.items()
            if name not in ("self", "config") and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def prepare(point: dict, index: int, base_dir: Path, cache_control: str) -> Task:
    """Resolve point ``index`` (relative paths from ``base_dir``); every mistake is one ConfigError."""
    where = f"point {index}"
    if not isinstance(point, dict):
        raise ConfigError(f"a point is a table (dict), got {type(point).__name__}", file=where)
    extra_keywords = _gpu_keywords()
    field_overrides, other_keywords = {}, {}
    for name, value in point.items():
        if name in POINT_KEYS:
            continue
        if name in FIELDS:
            field_overrides[name] = value
        elif name in extra_keywords:
            other_keywords[name] = value
        else:
            raise ConfigError(f"unknown key: a point has {', '.join(POINT_KEYS)} and GPU keywords (config "
                              f"fields such as sms, scheduler, l2_bytes)", file=where, field=name)
    has_program, has_kernel = "program" in point, "kernel" in point
    if has_program == has_kernel:
        raise ConfigError("a point needs exactly one of 'program' and 'kernel'", file=where)
    sizes = point.get("sizes", {})
    if not isinstance(sizes, dict):
        raise ConfigError("must be a table of name = number", file=where, field="sizes")
    launch = _launch_keywords(point.get("launch", {}), where, cache_control)
    if has_program:
        document, path = _program_document(point["program"], base_dir, where)
        size_overrides = dict(sizes)
    else:
        document, path = _kernel_document(point["kernel"], sizes, base_dir, where)
        size_overrides = {}
    spec = program_from_document(document, path, size_overrides)   # validates everything once, here
    ptx_text = spec.ptx.read_text(encoding="utf-8", errors="replace")
    document = {name: value for name, value in document.items() if name != "source"}
    document["ptx"] = spec.ptx.name
    config_name = point.get("config", spec.config if has_program else DEFAULT_CONFIG)
    if not isinstance(config_name, str):
        raise ConfigError("must be a config name or a path to a .toml", file=where, field="config")
    if config_name.endswith(".toml") and not Path(config_name).is_absolute():
        config_name = str((base_dir / config_name).resolve())
    config = load_config(config_name, **field_overrides)
    key_material = {
        "version": gpusim_version(), "config": config.to_dict(), "gpu": other_keywords, "document": document,
        "ptx": ptx_text, "sizes": spec.sizes, "launch": launch,
    }
    key = hashlib.sha256(json.dumps(key_material, sort_keys=True, default=repr).encode()).hexdigest()[:32]
    return Task(index=index, key=key, config=config, gpu_keywords=other_keywords, program_name=spec.name,
                document=document, ptx_name=spec.ptx.name, ptx_text=ptx_text, sizes=size_overrides,
                launch=launch)


def _launch_keywords(launch: Any, where: str, cache_control: str) -> dict:
    if not isinstance(launch, dict):
        raise ConfigError("must be a table of launch keywords", file=where, field="launch")
    for name in launch:
        if name not in LAUNCH_KEYS:
            raise ConfigError(f"unknown launch keyword (known: {', '.join(LAUNCH_KEYS)})", file=where,
                              field=f"launch.{name}")
    merged = {"cache_control": cache_control, "timing": True, **launch}
    if merged["cache_control"] not in CACHE_CONTROLS:
        raise ConfigError(f"must be one of {', '.join(CACHE_CONTROLS)}", file=where, field="launch.cache_control")
    return merged


def _program_document(program: Any, base_dir: Path, where: str) -> tuple[dict, Path]:
    if not isinstance(program, str):
        raise ConfigError("must be a program name or a path to a program TOML", file=where, field="program")
    candidate = Path(program)
    if candidate.suffix == ".toml" and not candidate.is_absolute():
        program = str(base_dir / candidate)
    path = load_program(program).path   # resolves a bare name to programs/NAME.toml, checks the file
    with path.open("rb") as handle:
        return tomllib.load(handle), path


def _kernel_document(kernel: Any, sizes: dict, base_dir: Path, where: str) -> tuple[dict, Path]:
    if not isinstance(kernel, dict):
        raise ConfigError("must be a table {ptx, name, grid, block, args, arrays}", file=where, field="kernel")
    for name in kernel:
        if name not in KERNEL_KEYS:
            raise ConfigError(f"unknown key (known: {', '.join(KERNEL_KEYS)})", file=where, field=f"kernel.{name}")
    for name in ("ptx", "name", "grid", "block"):
        if name not in kernel:
            raise ConfigError("missing", file=where, field=f"kernel.{name}")
    ptx = Path(kernel["ptx"])
    ptx = ptx if ptx.is_absolute() else (base_dir / ptx).resolve()
    if not ptx.is_file():
        raise ConfigError(f"no such PTX file: {ptx}", file=where, field="kernel.ptx")
    launch = {"kernel": kernel["name"], "grid": kernel["grid"], "block": kernel["block"],
              "shared_bytes": kernel.get("shared_bytes", 0), "args": kernel.get("args", [])}
    document = {"description": f"sweep kernel {kernel['name']}", "ptx": str(ptx), "sizes": dict(sizes),
                "arrays": kernel.get("arrays", []), "launch": [launch]}
    if not document["arrays"]:
        # the program format needs an array; a kernel without one gets a placeholder nobody passes
        document["arrays"] = [{"name": "unused", "dtype": "uint8", "shape": [1]}]
    return document, ptx.with_suffix(".toml")


def parameters(point: dict) -> dict:
    """The point as table columns: nested tables flattened with dots, lists as JSON text."""
    columns: dict[str, Any] = {}

    def add(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for name, item in value.items():
                add(f"{prefix}.{name}" if prefix else name, item)
        elif isinstance(value, list | tuple):
            columns[prefix] = json.dumps(list(value))
        else:
            columns[prefix] = value

    add("", point)
    return columns
