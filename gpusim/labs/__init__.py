"""Labs: experiments that reproduce the classic GPU performance facts, each a table, a lesson and figures.

Every lab module has ``NAME``, ``TITLE`` and ``run(config=None, plot_dir=None, progress=True) -> LabResult``
(labs may add keyword-only parameters with defaults). ``LABS`` maps each lab's NAME to its module;
``run_lab(name, ...)`` runs one by name, refusing an unknown lab or option with one ``GpusimError`` that lists
what exists. ``lab_options(name)`` are a lab's own keyword parameters (read from ``run``'s signature) and
``parse_option(lab, key, text)`` turns a command-line ``key=value`` into the parameter's type (what
``gpusim lab NAME --set key=value`` uses). ``LabResult`` and ``format_table`` live in ``gpusim.labs.support``
with the other helpers the labs share.
"""

from __future__ import annotations

import difflib
import inspect
from types import ModuleType

from gpusim.errors import GpusimError
from gpusim.labs import (
    bank_conflicts,
    coalescing,
    compiler,
    decode,
    divergence,
    flash_attention,
    fusion,
    latency_hiding,
    llm_step,
    occupancy,
    overhead,
    prefill,
    regimes,
    roofline,
    tensor_roofline,
    tiling,
    utilization,
    warp_granularity,
)
from gpusim.labs.support import LabResult, format_table

LABS: dict[str, ModuleType] = {module.NAME: module for module in (
    overhead, llm_step, roofline, divergence, coalescing, bank_conflicts, fusion, tiling, warp_granularity,
    latency_hiding, occupancy, decode, utilization, regimes,
    tensor_roofline, prefill, compiler, flash_attention)}
# tensor cores (issue 14); compiler: codegen (issue 11); flash-attention (issue 25)

__all__ = ["LABS", "LabResult", "format_table", "lab_module", "lab_options", "parse_option", "run_lab"]

COMMON_PARAMETERS = ("config", "plot_dir", "progress")
"""Parameters every lab's run() has; the CLI sets them with --config and --plot, not --set."""

_TRUE, _FALSE = ("true", "yes", "on"), ("false", "no", "off")


def _did_you_mean(name: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def lab_module(name: str) -> ModuleType:
    """The module of the lab called ``name``; an unknown name is one GpusimError listing the labs."""
    if name not in LABS:
        raise GpusimError(f"no lab named '{name}'{_did_you_mean(name, list(LABS))} "
                          f"(labs: {', '.join(sorted(LABS))})")
    return LABS[name]


def lab_options(name: str) -> dict[str, inspect.Parameter]:
    """A lab's own keyword parameters (beyond config, plot_dir, progress), in signature order."""
    parameters = inspect.signature(lab_module(name).run).parameters
    return {key: p for key, p in parameters.items()
            if key not in COMMON_PARAMETERS and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}


def describe_options(name: str) -> str:
    """One line per option of a lab: ``key=default  (type)``, the type as run()'s annotation names it."""
    lines = []
    for key, parameter in lab_options(name).items():
        kind = parameter.annotation if isinstance(parameter.annotation, str) else getattr(
            parameter.annotation, "__name__", "")
        settable = "" if _settable(parameter) else "  (from Python only)"
        lines.append(f"  {key}={_show(parameter.default)}  ({kind}){settable}")
    return "\n".join(lines) or "  (no options)"


def _show(value: object) -> str:
    if isinstance(value, tuple):
        return ",".join(str(item) for item in value)
    return repr(value) if isinstance(value, str) else str(value)


def _settable(parameter: inspect.Parameter) -> bool:
    default = parameter.default
    if default is None:
        return any(word in str(parameter.annotation) for word in ("int", "float", "str", "bool"))
    return isinstance(default, bool | int | float | str) or (
        isinstance(default, tuple) and all(isinstance(item, int | float) for item in default))


def _scalar(text: str) -> bool | int | float | str:
    """A command-line value as the narrowest of bool, int, float, str."""
    lowered = text.strip().lower()
    if lowered in _TRUE or lowered in _FALSE:
        return lowered in _TRUE
    for convert in (lambda t: int(t, 0), float):
        try:
            return convert(text.strip())
        except ValueError:
            pass
    return text


def parse_option(name: str, key: str, text: str) -> object:
    """``text`` as the value of option ``key`` of lab ``name``, checked against the parameter's default type.

    bool, int, float and str values are read from the text; a tuple of numbers is written ``1,2,4``.
    """
    options = lab_options(name)
    if key not in options:
        if key in COMMON_PARAMETERS:
            flag = {"config": "--config C", "plot_dir": "--plot DIR", "progress": "(always on)"}[key]
            raise GpusimError(f"lab {name}: '{key}' is not set with --set; use {flag}")
        listed = ", ".join(options) or "none"
        raise GpusimError(f"lab {name} has no option '{key}'{_did_you_mean(key, list(options))} "
                          f"(its options: {listed}; see gpusim lab {name} --help)")
    parameter = options[key]
    if not _settable(parameter):
        raise GpusimError(f"lab {name}: option '{key}' ({parameter.annotation}) can only be set from Python "
                          f"(gpusim.labs.run_lab('{name}', {key}=...))")
    default = parameter.default
    if isinstance(default, tuple):
        items = [_scalar(item) for item in text.split(",") if item.strip()]
        if not items or not all(isinstance(item, int | float) and not isinstance(item, bool) for item in items):
            raise GpusimError(f"lab {name}: {key}={text!r}: expected comma-separated numbers, e.g. "
                              f"{key}={_show(default)}")
        return tuple(items)
    value = _scalar(text)
    if default is None:  # typed only by the annotation, e.g. ``int | None``
        allowed = [kind for kind in (bool, int, float, str) if kind.__name__ in str(parameter.annotation)]
        if float in allowed and type(value) is int:
            return float(value) if int not in allowed else value
        if str in allowed or type(value) in allowed:
            return text if str in allowed and type(value) not in allowed else value
        raise GpusimError(f"lab {name}: {key}={text!r}: expected {parameter.annotation}")
    expected = type(default)
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if expected is str:
        return text
    if type(value) is not expected:
        raise GpusimError(f"lab {name}: {key}={text!r}: expected {expected.__name__} "
                          f"(default {_show(default)})")
    return value


def run_lab(name: str, **options: object) -> LabResult:
    """Run the lab called ``name`` (a key of LABS) with the given options (its run()'s keywords)."""
    module = lab_module(name)
    known = {*lab_options(name), *COMMON_PARAMETERS}
    unknown = sorted(set(options) - known)
    if unknown:
        own = ", ".join(lab_options(name)) or "none"
        raise GpusimError(f"lab {name} has no option '{unknown[0]}'{_did_you_mean(unknown[0], list(known))} "
                          f"(its options: {own}, plus {', '.join(COMMON_PARAMETERS)})")
    return module.run(**options)
