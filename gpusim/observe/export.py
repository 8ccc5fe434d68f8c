"""Exports other tools read: the metrics as Nsight Compute's raw page (``ncu --csv --page raw``), tables for
pandas (metrics, warp states, the source view), the warp-state views, and the versioned JSON layout.

What it models
    * ``metrics_table(run)``: one (metric name, unit, value) row per metric, in ``run.metrics`` order, with
      Nsight Compute's unit names (``byte``, ``cycle``, ``nsecond``, ``%``, ``sector``, ``inst``, ...).
    * ``metrics_csv(run)``: the layout ``ncu --csv --page raw`` prints: a header row (the identification
      columns ``ID``, ``Process ID``, ``Process Name``, ``Host Name``, ``Kernel Name``, ``Context``,
      ``Stream``, ``Block Size``, ``Grid Size``, ``Device``, ``CC``, then one column per metric), a units row
      (empty under the identification columns), and one row of values per kernel, every field quoted. Floats
      are written with Python's shortest round-trip form, so ``pandas.read_csv(path, skiprows=[1])`` gives
      back ``run.metrics`` exactly (tested).
    * Warp-state views (``stall_rows``): ``"not_issued"`` -- the states of warps that did not issue
      (``selected`` left out), the default of Nsight Compute 2025.4's warp-state sampling -- and ``"all"``,
      which keeps ``selected`` (the issuing warp-cycles). Shares are of the view's own total.
    * ``RUN_SCHEMA_VERSION`` and ``run_schema()``: the layout of ``run.to_dict()`` / ``gpusim run --json``
      (``docs/run-schema.json`` is this schema, written by ``scripts/write_run_schema.py`` and checked by a
      test), and ``validate(document, schema)``: the subset of JSON Schema the schema uses (type, required,
      properties, additionalProperties, items, enum, const), so no jsonschema install is needed.

Simplifications: the identification columns hold gpusim's own values (process "gpusim", context 1, stream
7, the config's name as the device); units of gpusim-only metrics (``gpusim__*``) follow the same words.
"""

from __future__ import annotations

import csv
import io

RUN_SCHEMA_VERSION = 1
"""Version of ``run.to_dict()``'s layout (``schema_version``); bumped when a key changes meaning or goes."""

ID_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
              "Grid Size", "Device", "CC")
"""The identification columns ``ncu --csv --page raw`` starts every row with."""

EXACT_UNITS = {
    "gpu__time_duration.sum": "nsecond",
    "launch__grid_size": "",
    "launch__block_size": "",
    "launch__registers_per_thread": "register/thread",
    "launch__shared_mem_per_block": "byte/block",
    "launch__occupancy_limit_blocks": "block",
    "sm__warps_active.avg.per_cycle_active": "warp",
    "smsp__average_warp_latency_per_inst_issued.ratio": "cycle",
    "smsp__thread_inst_executed_per_inst_executed.ratio": "",
    "gpusim__warp_instructions_per_cycle": "inst/cycle",
    "gpusim__arithmetic_intensity": "flop/byte",
    "gpusim__tensor_flops_per_cycle_per_sm": "flop/cycle",
}
"""Units of metrics the rules in ``metric_unit`` would not name right."""


def metric_unit(name: str) -> str:
    """Nsight Compute's unit word for a metric (``EXACT_UNITS`` first, then rules on the name's parts)."""
    if name in EXACT_UNITS:
        return EXACT_UNITS[name]
    if "pct" in name:
        return "%"
    if name.endswith("per_second"):
        if "byte" in name:
            return "byte/second"
        return "flop/second" if "flop" in name else "1/second"
    if "stalled" in name or "cycles" in name:
        return "cycle"      # stall reasons: warp-cycles (gpusim counts every cycle, not samples)
    if "bytes" in name:
        return "byte"
    if "flops" in name:
        return "flop"
    if "sectors_per_request" in name:
        return "sector/request"
    if "sectors" in name:
        return "sector"
    if "requests" in name:
        return "request"
    if "inst_executed" in name:
        return "inst"
    return ""


def metrics_table(run) -> list[tuple[str, str, float]]:
    """(metric name, unit, value) for every metric of ``run``, in ``run.metrics`` order."""
    return [(name, metric_unit(name), value) for name, value in run.metrics.items()]


def _value_text(value) -> str:
    return repr(float(value)) if isinstance(value, float) else str(int(value))


def identification(run) -> list[str]:
    """The values of ``ID_COLUMNS`` for ``run``."""
    return ["0", "0", "gpusim", "gpusim", run.program.name, "1", "7", str(tuple(run.block)), str(tuple(run.grid)),
            run.config.name, run.config.compute_capability]


def metrics_csv(run) -> str:
    """``run``'s metrics as ``ncu --csv --page raw`` lays them out (header, units, one row of values)."""
    rows = metrics_table(run)
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow([*ID_COLUMNS, *(name for name, _, _ in rows)])
    writer.writerow([""] * len(ID_COLUMNS) + [unit for _, unit, _ in rows])
    writer.writerow([*identification(run), *(_value_text(value) for _, _, value in rows)])
    return out.getvalue()


def write_csv(run, path=None) -> str | None:
    """Write ``metrics_csv(run)`` to ``path``; with no path, return the text."""
    text = metrics_csv(run)
    if path is None:
        return text
    from pathlib import Path

    Path(path).write_text(text, encoding="utf-8")
    return None


# ------------------------------------------------------------------------------------------ warp states
STALL_VIEWS = ("not_issued", "all")
"""Warp-state views: stalls only (Nsight Compute 2025.4's default) or every state, issuing included."""


def stall_rows(run, view: str = "not_issued") -> list[tuple[str, int, float]]:
    """(state, warp-cycles, % of the view's total), largest first, for the ``view`` of ``run``'s warp states."""
    from gpusim.errors import GpusimError

    if view not in STALL_VIEWS:
        raise GpusimError(f"warp-state view must be one of {', '.join(map(repr, STALL_VIEWS))} ('not_issued': "
                          f"stalls only, as Nsight Compute 2025.4 shows by default; 'all': issuing too), got {view!r}")
    states = {name: int(value) for name, value in run.stalls.items() if view == "all" or name != "selected"}
    total = sum(states.values())
    ordered = sorted(states.items(), key=lambda item: (-item[1], item[0]))
    return [(name, value, 100.0 * value / total if total else 0.0) for name, value in ordered]


# ------------------------------------------------------------------------------------------ pandas
def to_pandas(run, what: str = "metrics", view: str = "not_issued"):
    """A DataFrame of ``run``'s ``metrics`` (metric, unit, value), ``stalls`` (state, warp_cycles, pct; the
    ``view``) or ``source`` (the source view, one row per PTX line)."""
    from gpusim.errors import GpusimError
    from gpusim.observe.source_view import require_pandas

    pd = require_pandas()
    if what == "metrics":
        return pd.DataFrame(metrics_table(run), columns=["metric", "unit", "value"])
    if what == "stalls":
        return pd.DataFrame(stall_rows(run, view), columns=["state", "warp_cycles", "pct"])
    if what == "source":
        return run.source_view().to_pandas()
    raise GpusimError(f"run.to_pandas() takes 'metrics', 'stalls' or 'source', got {what!r}")


# ------------------------------------------------------------------------------------------ JSON schema
def run_schema() -> dict:
    """The JSON Schema (draft 2020-12 subset) of ``run.to_dict()`` at ``RUN_SCHEMA_VERSION``."""
    number = {"type": "number"}
    string = {"type": "string"}
    finding = {"type": "object", "required": ["kind", "families", "text", "score", "ptx_line"],
               "properties": {"kind": string, "families": {"type": "array", "items": string}, "text": string,
                              "score": number, "ptx_line": {"type": ["integer", "null"]}}}
    verdict = {"type": "object",
               "required": ["kind", "reason", "suggestion", "limiter", "family", "top_kind", "suggestions",
                            "findings"],
               "properties": {"kind": string, "reason": string, "suggestion": string, "limiter": string,
                              "family": string, "top_kind": string,
                              "suggestions": {"type": "array", "items": string},
                              "findings": {"type": "array", "items": finding}}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://gpusim.invalid/run.schema.json",
        "title": "gpusim run (run.to_dict(), gpusim run --json)",
        "type": "object",
        "required": ["schema_version", "kernel", "ptx", "config", "grid", "block", "timing", "codegen",
                     "codegen_passes", "cycles", "seconds", "metrics", "metric_units", "stalls", "verdict",
                     "source_view"],
        "properties": {
            "schema_version": {"const": RUN_SCHEMA_VERSION},
            "kernel": string, "ptx": string, "config": {"type": "object"},
            "grid": {"type": "array", "items": {"type": "integer"}},
            "block": {"type": "array", "items": {"type": "integer"}},
            "timing": {"type": "boolean"}, "codegen": string,
            "codegen_passes": {"type": "array", "items": string},
            "cycles": {"type": ["integer", "null"]}, "seconds": {"type": ["number", "null"]},
            "metrics": {"type": "object", "additionalProperties": number},
            "metric_units": {"type": "object", "additionalProperties": string},
            "stalls": {"type": "object", "additionalProperties": {"type": "integer"}},
            "verdict": verdict,
            "source_view": {"type": "array", "items": {"type": "object"}},
            "what_if": {"type": "object", "required": ["schema_version", "baseline_cycles", "rows"]},
            "sampling": {"type": "object",
                         "required": ["sampled", "reason", "cycles_interval", "confidence", "blocks", "blocks_timed",
                                      "fraction_simulated", "wave_blocks", "samples", "blocks_not_executed",
                                      "extrapolated"],
                         "properties": {"sampled": {"type": "boolean"}, "reason": string,
                                        "cycles_interval": {"type": "array", "items": {"type": "integer"}},
                                        "confidence": number, "fraction_simulated": number,
                                        "extrapolated": {"type": "array", "items": string}}},
        },
    }


_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is_type(value, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def validate(document, schema: dict, path: str = "$") -> list[str]:
    """The places where ``document`` breaks ``schema`` (empty: valid), for the keywords ``run_schema`` uses."""
    errors: list[str] = []
    if "const" in schema and document != schema["const"]:
        errors.append(f"{path}: expected {schema['const']!r}, got {document!r}")
    if "enum" in schema and document not in schema["enum"]:
        errors.append(f"{path}: {document!r} is not one of {schema['enum']!r}")
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_is_type(document, kind) for kind in kinds):
            return errors + [f"{path}: expected {' or '.join(kinds)}, got {type(document).__name__}"]
    if isinstance(document, dict):
        for key in schema.get("required", []):
            if key not in document:
                errors.append(f"{path}: missing key '{key}'")
        properties = schema.get("properties", {})
        for key, value in document.items():
            if key in properties:
                errors += validate(value, properties[key], f"{path}.{key}")
            elif isinstance(schema.get("additionalProperties"), dict):
                errors += validate(value, schema["additionalProperties"], f"{path}.{key}")
    if isinstance(document, list) and "items" in schema:
        for index, item in enumerate(document):
            errors += validate(item, schema["items"], f"{path}[{index}]")
    return errors
