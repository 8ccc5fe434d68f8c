"""Measure the tables docs/codegen.md, tensor-cores.md, kernels.md and design.md quote, and write them in.

    python scripts/doc_tables.py                 # measure every table, store it, rewrite the docs' blocks
    python scripts/doc_tables.py codegen-gemv    # only these tables
    python scripts/doc_tables.py --render        # rewrite the docs' blocks from the stored figures only
    python scripts/doc_tables.py --check         # exit 1 naming each stale block or stale stored figure

Each table lives in its doc between ``<!-- doc-table:NAME begin ... -->`` and ``<!-- doc-table:NAME end -->``.
Measuring some of them takes minutes (the wide GEMMs, the SASS-count runs), so the figures are stored in
``docs/generated/doc_tables.json`` with a *stamp*: a hash of every input that can move a simulated figure
(the ``gpusim`` sources, ``configs/``, ``programs/`` and this script). tests/test_doc_tables.py checks, fast,
that each block is the rendering of the stored figures and that the stamp is the current inputs' (so any
change to the simulator asks for a rerun of this script), and, under ``-m slow``, re-measures every table
and compares it with what is stored. The speed table of docs/design.md is rendered from
``benchmarks/results/speed.json``, which ``python benchmarks/bench_speed.py --record`` writes (wall-clock
figures of one machine: stamped with the benchmark's own sources, the date and the machine's load).

The engine's state declarations (``STATE_MODULES``, see gpusim/engine/records.py) are rendered the same way,
from code instead of a measurement: ``--render`` rewrites docs/engine-state.md's block and, in each state
module, the ``# <state-layout:NAME begin>`` blocks that hold the constants and ``NamedTuple`` classes
generated from its declarations; ``--check`` (and tests/test_doc_tables.py) fails on a stale one.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import re
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts import doc_measure as M  # noqa: E402  (path set up above so the script runs from a checkout)

STORE = ROOT / "docs" / "generated" / "doc_tables.json"
SPEED = ROOT / "benchmarks" / "results" / "speed.json"
WORKLOADS = ROOT / "benchmarks" / "results" / "workloads.json"
WHEEL = ROOT / "benchmarks" / "results" / "wheel.json"
BLOCK = re.compile(r"(<!-- doc-table:(?P<name>[\w-]+) begin[^>]*-->\n)(?P<body>.*?)(<!-- doc-table:(?P=name) end -->)",
                   re.S)

STATE_MODULES = ("gpusim.engine.semantics.state", "gpusim.engine.sm.timing_state", "gpusim.engine.memory.memsys",
                 "gpusim.engine.memory.cache", "gpusim.engine.memory.dram")
"""Modules that declare engine state (gpusim.engine.records): their generated blocks and docs/engine-state.md."""
SOURCE_BLOCK = re.compile(r"(# <state-layout:(?P<name>[\w-]+) begin>\n)(?P<body>.*?)(# <state-layout:(?P=name) end>)",
                          re.S)


def _hash_files(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:24]


def simulation_stamp() -> str:
    """Hash of what a simulated figure can depend on: gpusim's sources, the configs, the programs and the
    measurements (scripts/doc_measure.py; the rendering in this file is not part of it)."""
    files = [p for p in (ROOT / "gpusim").rglob("*.py")] + list((ROOT / "configs").glob("*.toml"))
    files += [p for p in (ROOT / "programs").rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return _hash_files([*files, Path(M.__file__).resolve()])


def benchmark_stamp() -> str:
    """Hash of the speed benchmark's sources (benchmarks/results/speed.json records it)."""
    from benchmarks.bench_speed import sources_stamp

    return sources_stamp()


def workloads_stamp() -> str:
    """Hash of the workloads benchmark's source (benchmarks/results/workloads.json records it)."""
    from benchmarks.bench_workloads import sources_stamp

    return sources_stamp()


def wheel_stamp() -> str:
    """Hash of the wheel benchmark's and builder's sources (benchmarks/results/wheel.json records it)."""
    from benchmarks.bench_wheel import sources_stamp

    return sources_stamp()


# ------------------------------------------------------------------------ rendering (figures: doc_measure)


def render_sass_counts(data: dict) -> str:
    lines = ['| program | kernel | SASS (estimated) | codegen="none" | error | codegen="ptxas" | error | '
             'vector loads: SASS | codegen="ptxas" |',
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in data["rows"]:
        plain, made = M.error(r["none"], r["sass"]), M.error(r["ptxas"], r["sass"])
        lines.append(f"| {r['program']} | {r['kernel']} | {r['sass']:.0f} | {r['none']} | {plain:+.1f} % | "
                     f"{r['ptxas']} | {made:+.1f} % | {r['sass_vector']} | {r['ptxas_vector']} |")

    def summary(mode: str) -> tuple[int, int, float, float, float]:
        errors = [M.error(r[mode], r["sass"]) for r in data["rows"]]
        return (sum(abs(e) <= 10.0 for e in errors), len(errors), statistics.median(abs(e) for e in errors),
                min(errors), max(errors))

    made, plain = summary("ptxas"), summary("none")
    lines += ["", f'With `codegen="ptxas"`: **{made[0]} of {made[1]} runs within 10 %, median |error| '
              f"{made[2]:.1f} %** (range {made[3]:+.0f} % .. {made[4]:+.0f} %); with",
              f'`codegen="none"`: {plain[0]} of {plain[1]}, median {plain[2]:.1f} % ({plain[3]:+.0f} % .. '
              f"{plain[4]:+.0f} %).",
              "Vector loads: the static count of 8- and 16-byte shared and global loads (LDS.64/.128, LDG.E.64/.128"
              f" in the SASS); equal in {sum(r['sass_vector'] == r['ptxas_vector'] for r in data['rows'])} of "
              f"{len(data['rows'])} kernels."]
    return "\n".join(lines)


def render_gemv(data: dict) -> str:
    written, made, sass = (data["cycles"][label] for label in M.GEMV_MODES)
    lines = ['| warps/SM | PTX as written | codegen="ptxas" | SASS order by hand | written / ptxas |',
             "| ---: | ---: | ---: | ---: | ---: |"]
    lines += [f"| {w} | {a} | {b} | {c} | {a / b:.2f} |" for w, a, b, c in zip(data["warps"], written, made, sass,
                                                                               strict=True)]
    return "\n".join(lines)


def render_stream_loads(data: dict) -> str:
    lines = ['| warps/SM | PTX as written | codegen="ptxas" | SASS order by hand | ptxas / SASS order |',
             "| ---: | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['warps']} | {r['written']} | {r['ptxas']} | {r['sass']} | {r['ptxas'] / r['sass']:.2f} |"
              for r in data["rows"]]
    return "\n".join(lines)


def render_fma_plain(data: dict) -> str:
    names = {"gto": '`scheduler="gto"` (the configs\')', "lrr": '`scheduler="lrr"`'}
    lines = ["| rounds | " + " | ".join(str(r) for r in data["rounds"]) + " |",
             "| --- | " + " | ".join("---" for _ in data["rounds"]) + " |"]
    lines += [f"| {names[s]} | " + " | ".join(f"{a}/{b}" for a, b in row) + " |" for s, row in data["rows"].items()]
    return "\n".join(lines)


def render_matmul_tiled(data: dict) -> str:
    return (f'64 x 64 x 256 on one SM: {data["written"]} cycles as written, {data["ptxas"]} with `codegen="ptxas"`, '
            f"{data['sass']} for the SASS-order\nvariant ({data['ptxas'] / data['sass']:.2f}x: the stage's scheduler "
            "hoists the column loads further than ptxas did).")


def render_l2_caps(data: dict) -> str:
    lines = ["| kernel | tile | accumulators | FLOP per L2 byte | L2 cap, % of the mma.sync rate (h100-sxm) |",
             "| --- | --- | --- | --- | --- |"]
    lines += [f"| `{r['kernel']}` | {r['bm']} x {r['bn']} | {r['accumulators']} | {r['flop_per_l2_byte']:.0f} | "
              f"{r['cap_pct']:.0f} |" for r in data["rows"]]
    return "\n".join(lines)


def render_wide_gemms(data: dict) -> str:
    lines = ["| config | kernel | size (M x N x K), SMs | % of mma.sync rate | L2 cap | L2 % of peak | DRAM % |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['config']} | `{r['kernel']}` | {r['size']}, {r['sms']} | {r['pct_of_mma_sync']:.1f} | "
              f"{min(100.0, r['cap_pct']):.0f} | {r['l2_pct']:.1f} | {r['dram_pct']:.1f} |" for r in data["rows"]]
    return "\n".join(lines)


def render_wgmma_gemm(data: dict) -> str:
    lines = ["| run (programs/gemm_wgmma) | % of dense BF16 peak, K loop | % of peak, whole run | tensor pipe busy % | "
             "L2 roof, % of peak | L2 % | DRAM % | top stalls (% of warp samples) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in data["rows"]:
        steady = "" if r["steady_pct"] is None else f"{r['steady_pct']:.1f}"
        stalls = ", ".join(f"{name} {pct:.0f}" for name, pct in r["stalls"])
        lines.append(f"| {r['case']} | {steady} | {r['whole_pct']:.1f} | {r['pipe_pct']:.1f} | "
                     f"{r['l2_roof_pct']:.0f} | {r['l2_pct']:.0f} | {r['dram_pct']:.0f} | {stalls} |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------- docs/design.md: speed

SPEED_ROWS = (("alu", "ALU-bound FFMA loop, 512 warps on 4 SMs of h100-sxm, timed", "≥ 5 M warp-inst/s"),
              ("stream8", "streaming copy, 8-SM slice of h100-sxm, timed", "≥ 1 M/s"),
              ("stream132", "streaming copy (32 MB), full 132-SM h100-sxm, timed", "≥ 1 M/s"),
              ("functional", "vecadd-like copy, functional only", "≥ 5 M/s"),
              ("firstlaunch", "first launch in a new process, numba cache warm", "≤ 3 s"),
              ("coldlaunch", "first launch in a new process, cold cache (compiles the engine)", "≤ 30 s"),
              ("fullchip", "128 MB stream on the full h100-sxm: memory beyond the device memory", "≤ 2 GB"),
              ("parse", "parse a 5000-line PTX kernel", "≤ 1 s"))
EXTRA_NAMES = {"dram_pct": "DRAM % of peak", "cpu_s": "CPU s in the process", "helper_cpu_s": "CPU s in its helper",
               "rate_m_per_s": "M warp-inst/s", "peak_rss_mib": "peak RSS MiB"}


REGISTER_GROUPS = (("tests/corpus", lambda r: r["file"].startswith("tests/corpus/")),
                   ("tests/corpus_llm", lambda r: r["file"].startswith("tests/corpus_llm/")),
                   ("numba.cuda examples", lambda r: "/numba_" in r["file"]),
                   ("Triton examples", lambda r: "/triton_" in r["file"]),
                   ("with launch bounds", lambda r: r["cap"] is not None),
                   ("all", lambda r: True))


def render_registers(data: dict) -> str:
    def error(r: dict) -> float:
        return M.error(r["gpusim"], r["ptxas"])

    lines = ["| kernels | count | within 15 % | median abs error | gpusim lower (> 15 %) | gpusim higher (> 15 %) |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for label, member in REGISTER_GROUPS:
        rows = [r for r in data["rows"] if member(r)]
        errors = [error(r) for r in rows]
        lines.append(f"| {label} | {len(rows)} | {sum(abs(e) <= 15.0 for e in errors)} | "
                     f"{statistics.median(abs(e) for e in errors):.1f} % | {sum(e < -15.0 for e in errors)} | "
                     f"{sum(e > 15.0 for e in errors)} |")
    lines += ["", "| kernel (launch bounds) | arch | cap | ptxas -v | gpusim | error |",
              "| --- | --- | ---: | ---: | ---: | ---: |"]
    for r in data["rows"]:
        if r["cap"] is not None:
            kernel = r["kernel"] if len(r["kernel"]) <= 40 else r["kernel"][:37] + "..."
            lines.append(f"| {Path(r['file']).name}: {kernel} | {r['arch']} | {r['cap']} | {r['ptxas']} | "
                         f"{r['gpusim']} | {error(r):+.1f} % |")
    return "\n".join(lines)


def _span(low: float, high: float, digits: int) -> str:
    a, b = f"{low:.{digits}f}", f"{high:.{digits}f}"
    return a if a == b else f"{a}–{b}"


def render_speed(data: dict) -> str:
    runs = "one run" if data["repeat"] == 1 else f"min–max of {data['repeat']} runs"
    lines = [f"Measured {data['date']} with `python benchmarks/bench_speed.py --record {data['repeat']}` "
             f"({runs}; {data['cpus']} CPUs, load average {data['load_average_1min']} at the end; "
             f"numba {data['numba']}):", "", "| case | target | measured |", "| --- | --- | --- |"]
    for name, label, target in SPEED_ROWS:
        case = data["cases"].get(name)
        if case is None:
            lines.append(f"| {label} | {target} | not measured |")
            continue
        digits = 2 if case["unit"] in ("M warp-inst/s", "GiB") or case["max"] < 10 else 1
        extras = "; ".join(f"{EXTRA_NAMES.get(key, key)} {_span(low, high, 1)}"
                           for key, (low, high) in case["extra"].items())
        lines.append(f"| {label} | {target} | {_span(case['min'], case['max'], digits)} {case['unit']}"
                     f"{f' ({extras})' if extras else ''} |")
    return "\n".join(lines)


def render_workloads(data: dict) -> str:
    host = data["host"]
    lines = [f"Measured {host['date']} with `python benchmarks/bench_workloads.py --record` ({host['cpus']} CPUs, "
             f"load average {host['load_average']:.1f} at the end; one run each, host time in `gpu.launch`):", "",
             "| workload | config | size | simulated | host time | M warp-inst/s | M cycles/s | slowdown | sampling |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for name in sorted(data["workloads"]):
        row = data["workloads"][name]
        full = row["full"]
        if "error_pct" in row:
            sampling = (f"{row['error_pct']:+.2f} % of the full cycles ({'covered' if row['covers'] else 'missed'} "
                        f"by its interval), {row['host_ratio']:.1f}x less host time")
        else:
            kinds = sorted({reason.split(':')[0] for reason in row["sampled"]["reasons"]})
            sampling = "declined: " + "; ".join(kinds)
        lines.append(f"| {name} | {row['config']} | {row['what']} | {full['cycles']:,} cycles "
                     f"({1e3 * full['simulated_s']:.2f} ms) | {full['host_s']:.0f} s | "
                     f"{full['m_warp_inst_per_s']:.2f} | {full['m_cycles_per_s']:.3f} | {full['slowdown']:,.0f}x | "
                     f"{sampling} |")
    return "\n".join(lines)


WHEEL_ROWS = (("seeded", "first launch after installing the platform wheel (the engine from its seed)", "≤ 20 s"),
              ("warm", "the same command again", "≤ 3 s"),
              ("cold", "the first launch with the seed ignored (what `pip install .` gives)", "none"))


def render_wheel(data: dict) -> str:
    lines = [f"Measured {data['date']} with `python benchmarks/bench_wheel.py --record` ({data['wheel']}; "
             f"`gpusim run vecadd` in a new virtual environment, from an empty directory, empty engine cache; "
             f"{data['cpus']} CPUs, load average {data['load_average_1min']} at the end):", "",
             "| case | target | wall time | compiled the engine |", "| --- | --- | ---: | --- |"]
    for name, label, target in WHEEL_ROWS:
        figure = data["figures"][name]
        lines.append(f"| {label} | {target} | {figure['wall_s']:.2f} s | {'yes' if figure['compiled'] else 'no'} |")
    return "\n".join(lines)


def state_declarations() -> dict[str, list]:
    """Each state module (its file, relative to the checkout) and the declarations it defines, in order."""
    from gpusim.engine.records import declarations

    out = {}
    for name in STATE_MODULES:
        module = importlib.import_module(name)
        out[str(Path(module.__file__).resolve().relative_to(ROOT))] = declarations(vars(module))
    return out


def render_engine_state(_data: dict) -> str:
    from gpusim.engine.records import render_markdown

    parts = []
    for path, decls in state_declarations().items():
        parts.append(f"### `{path}`\n")
        parts += [render_markdown(decl) for decl in decls]
    return "\n".join(parts).rstrip("\n")


def source_problems(rewrite: bool = False) -> list[str]:
    """Stale ``state-layout`` blocks of the state modules (rewritten when ``rewrite``)."""
    from gpusim.engine.records import render_source

    found = []
    for path, decls in state_declarations().items():
        file = ROOT / path
        text = file.read_text(encoding="utf-8")
        wanted = {decl.name: render_source(decl) for decl in decls}
        present = {m["name"] for m in SOURCE_BLOCK.finditer(text)}
        for name in sorted(set(wanted) - present):
            found.append(f"{path} has no block '# <state-layout:{name} begin>' for its declaration {name}")
        for name in sorted(present - set(wanted)):
            found.append(f"{path}: block state-layout:{name} has no declaration")

        def replace(match: re.Match, wanted: dict = wanted, path: str = path) -> str:
            body = wanted.get(match["name"], match["body"])
            if body != match["body"]:
                found.append(f"{path}: block state-layout:{match['name']} is not generated from its declaration "
                             "(run python scripts/doc_tables.py --render)")
            return match.group(1) + body + match.group(4)

        new = SOURCE_BLOCK.sub(replace, text)
        if rewrite and new != text:
            file.write_text(new, encoding="utf-8")
    return found


# ----------------------------------------------------------------------------------------- the registry


@dataclass(frozen=True)
class Table:
    doc: str
    measure: Callable[[], dict] | None     # None: rendered from a benchmark's results file (``results``)
    render: Callable[[dict], str]
    declared: bool = False                 # rendered from the code's declarations, nothing measured
    results: Path = SPEED                  # the benchmark's results file (measure None)
    results_stamp: Callable[[], str] = benchmark_stamp   # that benchmark's sources' hash
    rerun: str = "python benchmarks/bench_speed.py --record 3"


TABLES = {
    "codegen-sass-counts": Table("docs/codegen.md", M.measure_sass_counts, render_sass_counts),
    "codegen-gemv": Table("docs/codegen.md", M.measure_gemv, render_gemv),
    "codegen-matmul-tiled": Table("docs/codegen.md", M.measure_matmul_tiled, render_matmul_tiled),
    "codegen-stream-loads": Table("docs/codegen.md", M.measure_stream_loads, render_stream_loads),
    "codegen-fma-plain": Table("docs/codegen.md", M.measure_fma_plain, render_fma_plain),
    "tensor-l2-caps": Table("docs/tensor-cores.md", M.measure_l2_caps, render_l2_caps),
    "tensor-wide-gemms": Table("docs/tensor-cores.md", M.measure_wide_gemms, render_wide_gemms),
    "tensor-wgmma-gemm": Table("docs/tensor-cores.md", M.measure_wgmma_gemm, render_wgmma_gemm),
    "design-speed": Table("docs/design.md", None, render_speed),
    "design-wheel": Table("docs/design.md", None, render_wheel, results=WHEEL, results_stamp=wheel_stamp,
                          rerun="python benchmarks/bench_wheel.py --record"),
    "design-workloads": Table("docs/design.md", None, render_workloads, results=WORKLOADS,
                              results_stamp=workloads_stamp, rerun="python benchmarks/bench_workloads.py --record"),
    "kernels-registers": Table("docs/kernels.md", M.measure_registers, render_registers),
    "engine-state": Table("docs/engine-state.md", None, render_engine_state, declared=True),
}


def load_store() -> dict:
    return json.loads(STORE.read_text(encoding="utf-8")) if STORE.exists() else {}


def data_of(name: str, store: dict) -> dict | None:
    if TABLES[name].declared:
        return {}
    if TABLES[name].measure is None:
        results = TABLES[name].results
        return json.loads(results.read_text(encoding="utf-8")) if results.exists() else None
    entry = store.get(name)
    return None if entry is None else entry["data"]


def blocks(doc: str) -> dict[str, str]:
    """The generated blocks of ``doc`` (name -> body)."""
    return {m["name"]: m["body"] for m in BLOCK.finditer((ROOT / doc).read_text(encoding="utf-8"))}


def rendered(name: str, store: dict) -> str | None:
    data = data_of(name, store)
    return None if data is None else TABLES[name].render(data) + "\n"


def rewrite_docs(store: dict) -> list[str]:
    """Rewrite every block from the stored figures; the docs changed."""
    changed = []
    for doc in sorted({t.doc for t in TABLES.values()}):
        path = ROOT / doc
        text = path.read_text(encoding="utf-8")

        def replace(match: re.Match) -> str:
            body = rendered(match["name"], store)
            return match.group(1) + (match["body"] if body is None else body) + match.group(4)

        new = BLOCK.sub(replace, text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(doc)
    return changed


def problems(store: dict) -> list[str]:
    """Why the docs or the stored figures are stale (empty: all current)."""
    found = []
    stamp = simulation_stamp()
    for name, table in TABLES.items():
        body = blocks(table.doc).get(name)
        if body is None:
            found.append(f"{table.doc} has no block doc-table:{name}")
            continue
        if table.declared:
            pass
        elif table.measure is not None:
            entry = store.get(name)
            if entry is None:
                found.append(f"{name}: not measured (run python scripts/doc_tables.py {name})")
                continue
            if entry["stamp"] != stamp:
                found.append(f"{name}: measured with other sources (stamp {entry['stamp']}, now {stamp}): rerun "
                             f"python scripts/doc_tables.py {name}")
        else:
            data = data_of(name, store)
            if data is None or data.get("stamp") != table.results_stamp():
                found.append(f"{name}: {table.results.relative_to(ROOT)} missing or from other benchmark sources: "
                             f"rerun {table.rerun}")
        expected = rendered(name, store)
        if expected is not None and body != expected:
            found.append(f"{table.doc}: block {name} is not the rendering of its stored figures (run "
                         "python scripts/doc_tables.py --render)")
    return found + source_problems()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help=f"tables to measure (default: all): {', '.join(TABLES)}")
    parser.add_argument("--render", action="store_true", help="only rewrite the docs from the stored figures")
    parser.add_argument("--check", action="store_true", help="exit 1 if a block or a stored figure is stale")
    args = parser.parse_args(argv)
    store = load_store()
    if args.check:
        found = problems(store)
        print("\n".join(found) if found else "docs tables are current")
        return 1 if found else 0
    if not args.render:
        unknown = set(args.names) - set(TABLES)
        if unknown:
            raise SystemExit(f"unknown tables {sorted(unknown)}; tables: {', '.join(TABLES)}")
        stamp = simulation_stamp()
        for name in args.names or [n for n, t in TABLES.items() if t.measure is not None]:
            measure = TABLES[name].measure
            if measure is None:
                continue
            print(f"measuring {name} ...", flush=True)
            store[name] = {"stamp": stamp, "data": measure()}
            STORE.parent.mkdir(parents=True, exist_ok=True)
            STORE.write_text(json.dumps(store, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    source_problems(rewrite=True)
    for doc in rewrite_docs(store):
        print(f"rewrote {doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
