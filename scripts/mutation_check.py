"""Mutation spot-check: break the timing model on purpose and see which known-answer tests notice.

    python scripts/mutation_check.py                 # every mutation, then rewrite docs/mutation.md
    python scripts/mutation_check.py dram_latency    # only these: their rows are replaced, the rest kept
    python scripts/mutation_check.py --list          # the mutations and what each breaks

Each mutation is one deliberate edit of the model (a latency, a pipe rate, a scheduler policy, a cache's
hit path and associativity, a DRAM rate, the shared-memory bank rule, the coalescing rule) applied to a
copy of the tracked tree in a temporary directory; the engine's known-answer tests (``TESTS``) run
against that copy, and the tests that fail are the ones that caught it. A mutation no test catches is a
gap in the tests. An unmutated copy runs first and must pass every test (else the harness itself is
wrong and the script stops).

This is slow and not part of the default test run: a mutation of an engine source recompiles the engine
(a cold compile, minutes on a loaded 2-core machine) and every mutation runs the whole set of tests. The
copies share one engine cache (``<cache root>-mutation``, seeded with this tree's compiled engine), so the
mutations outside the compiled engine (``launch/timed.py``) reuse it. Where an edit's text is not found
in the tree exactly once, the script stops and names the mutation: update its ``old`` text.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "mutation.md"
RESULTS = ROOT / "docs" / "generated" / "mutation.json"
"""Each mutation's last result (the doc is rendered from it; a run of some mutations replaces their rows)."""

TESTS = ("tests/test_timing_known_answers.py", "tests/test_shared_banks.py", "tests/test_coalesce.py",
         "tests/test_cache.py", "tests/test_memory.py")
"""The engine's known-answer tests: expected cycles, bytes and wavefronts derived from the config and the
hardware rules, never pasted from a run."""


@dataclass(frozen=True)
class Mutation:
    name: str
    path: str
    old: str
    new: str
    what: str


MUTATIONS = (
    Mutation("dram_latency", "gpusim/launch/timed.py",
             "dram_latency_cycles=config.dram_latency_cycles,",
             "dram_latency_cycles=config.dram_latency_cycles + 40,",
             "DRAM latency 40 cycles longer than the config says"),
    Mutation("l2_hit_latency", "gpusim/launch/timed.py",
             "l2_latency_cycles=config.l2_latency_cycles,",
             "l2_latency_cycles=config.l2_latency_cycles + 30,",
             "L2 hit path 30 cycles slower than the config says"),
    Mutation("dram_rate", "gpusim/launch/timed.py",
             "dram_bandwidth_gbs=config.dram_bandwidth_gbs,",
             "dram_bandwidth_gbs=config.dram_bandwidth_gbs * 0.75,",
             "DRAM bandwidth 3/4 of the config's"),
    Mutation("l1_associativity", "gpusim/launch/timed.py",
             "config.l1_assoc, partitions=nsm)",
             "1, partitions=nsm)",
             "L1 direct-mapped instead of the config's associativity"),
    Mutation("scheduler_policy", "gpusim/launch/timed.py",
             "prm[T.TP_POLICY] = T.POLICY_CODES[config.scheduler]",
             "prm[T.TP_POLICY] = T.POLICY_CODES[\"lrr\"]",
             "every config's scheduler run as loose round-robin (the policy field ignored)"),
    Mutation("gto_youngest", "gpusim/engine/sm/timing.py",
             "if best < 0 or w_age[w] < w_age[best]:",
             "if best < 0 or w_age[w] > w_age[best]:",
             "gto falls back to the youngest ready warp, not the oldest (engine: recompiles)"),
    Mutation("fixed_latency", "gpusim/arch/isa.py",
             "    latency = int(getattr(config, form.latency))\n",
             "    latency = int(getattr(config, form.latency)) + 1\n",
             "every fixed-latency result one cycle later than the config (recompiles: the engine reads isa.py)"),
    Mutation("pipe_rate", "gpusim/arch/isa.py",
             "out[pipe] = max(1, int(np.ceil(32 / lanes)))",
             "out[pipe] = max(1, int(np.ceil(16 / lanes)))",
             "every pipe issues a warp-instruction in half its cycles (twice the lanes; recompiles)"),
    Mutation("bank_rule", "gpusim/engine/memory/shared_banks.py",
             "            bank = word % banks\n",
             "            bank = (word // 2) % banks\n",
             "shared-memory banks 8 bytes wide instead of 4 (engine: recompiles)"),
    Mutation("coalescing_rule", "gpusim/engine/memory/coalesce.py",
             "        first_sector = quotient(addresses[lane], sector_bytes)\n",
             "        first_sector = quotient(addresses[lane], 2 * sector_bytes) * 2\n",
             "each lane's access fetched from the start of its 64-byte pair of sectors (engine: recompiles)"),
)


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in out.decode().split("\0") if name]


def copy_tree(destination: Path) -> None:
    """The tracked files of this checkout as they are on disk now (uncommitted edits included)."""
    for name in tracked_files():
        source = ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def apply(tree: Path, mutation: Mutation) -> None:
    path = tree / mutation.path
    text = path.read_text(encoding="utf-8")
    found = text.count(mutation.old)
    if found != 1:
        sys.exit(f"mutation {mutation.name}: its text occurs {found} times in {mutation.path} (expected once); "
                 f"update Mutation.old in scripts/mutation_check.py")
    path.write_text(text.replace(mutation.old, mutation.new), encoding="utf-8")


FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+?)(?: - .*)?$")


def run_tests(tree: Path, cache: Path) -> tuple[list[str], int, float, str]:
    """(failed test ids, passed count, seconds, pytest's last line) of ``TESTS`` in ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "GPUSIM_CACHE_DIR": str(cache), "GPUSIM_COMPILE_NOTICE": "0"}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                           "-rfE", *TESTS], cwd=tree, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    lines = done.stdout.splitlines()
    failed = sorted({match[1] for line in lines if (match := FAILED.match(line))})
    summary = next((line for line in reversed(lines) if " in " in line and ("passed" in line or "failed" in line)),
                   lines[-1] if lines else done.stderr[-300:])
    passed = int(m[1]) if (m := re.search(r"(\d+) passed", summary)) else 0
    return failed, passed, seconds, summary


def seed_cache(cache: Path) -> None:
    """Copy this tree's compiled engine (its stamp directory) into the mutation cache, if compiled."""
    sys.path.insert(0, str(ROOT))
    from gpusim.engine import compile_cache

    source = compile_cache.stamp_dir()
    target = cache / source.name
    if source.is_dir() and not target.exists():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(".compiling", ".lock"))


def short(test_id: str) -> str:
    file, _, name = test_id.partition("::")
    return f"{Path(file).stem}::{name}"


def render(results: list[dict]) -> str:
    caught = sum(1 for r in results if r["failed"])
    dates = sorted({r["date"] for r in results})
    lines = [
        "# Mutation spot-check",
        "",
        "<!-- generated by scripts/mutation_check.py: do not edit; rerun the script -->",
        "",
        "Each row is one deliberate breakage of the timing model, applied to a copy of the tree, and the",
        f"known-answer tests ({', '.join(f'`{t}`' for t in TESTS)}) run against it: the tests that fail are the",
        "ones that caught it. `python scripts/mutation_check.py` reruns it. It is slow (a mutation of an engine",
        "source recompiles the engine; every mutation runs all of those tests) and not part of the default test",
        "run.",
        "",
        f"Run {' and '.join(dates)} (each run first checks that the unmutated copy passes every test): "
        f"**{caught} of {len(results)} mutations caught**.",
        "",
        "| mutation | file | what it breaks | tests failed | caught by (first 4) |",
        "| --- | --- | --- | ---: | --- |",
    ]
    for r in results:
        names = ", ".join(f"`{short(t)}`" for t in r["failed"][:4]) or "**not caught**"
        more = f" and {len(r['failed']) - 4} more" if len(r["failed"]) > 4 else ""
        lines.append(f"| `{r['name']}` | `{r['path']}` | {r['what']} | {len(r['failed'])} of "
                     f"{len(r['failed']) + r['passed']} | {names}{more} |")
    missing = [m.name for m in MUTATIONS if m.name not in {r["name"] for r in results}]
    if missing:
        lines += ["", "Not run yet: " + ", ".join(f"`{n}`" for n in missing) + "."]
    survivors = [r["name"] for r in results if not r["failed"]]
    lines += ["", "Mutations no test caught: " + (", ".join(f"`{n}`" for n in survivors) if survivors else "none.")
              + ("" if not survivors else " (a gap in the known-answer tests)."), ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="mutations to run (default: all, and docs/mutation.md rewritten)")
    parser.add_argument("--list", action="store_true", help="list the mutations")
    args = parser.parse_args(argv)
    if args.list:
        for m in MUTATIONS:
            print(f"{m.name:18} {m.path:40} {m.what}")
        return 0
    unknown = set(args.names) - {m.name for m in MUTATIONS}
    if unknown:
        sys.exit(f"unknown mutations: {sorted(unknown)}; --list shows them")
    chosen = [m for m in MUTATIONS if not args.names or m.name in args.names]
    # outside-the-engine mutations first: they reuse the seeded compile, the engine ones each compile anew
    chosen.sort(key=lambda m: m.path.startswith(("gpusim/engine", "gpusim/arch")))
    root_cache = Path(os.environ.get("GPUSIM_CACHE_DIR") or Path.home() / ".cache" / "gpusim")
    cache = root_cache.with_name(root_cache.name + "-mutation")
    cache.mkdir(parents=True, exist_ok=True)
    seed_cache(cache)
    with tempfile.TemporaryDirectory(prefix="gpusim-mutation-") as tmp:
        base = Path(tmp) / "base"
        copy_tree(base)
        failed, passed, seconds, summary = run_tests(base, cache)
        print(f"baseline: {summary}", flush=True)
        if failed or not passed:
            sys.exit(f"the unmutated copy fails {failed or summary}: fix the tests or the harness first")
        baseline = {"passed": passed, "seconds": seconds,
                    "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")}
        results = []
        for mutation in chosen:
            tree = Path(tmp) / mutation.name
            shutil.copytree(base, tree)
            apply(tree, mutation)
            failed, passed, seconds, summary = run_tests(tree, cache)
            print(f"{mutation.name}: {len(failed)} failed, {passed} passed ({seconds:.0f} s)", flush=True)
            results.append({"name": mutation.name, "path": mutation.path, "what": mutation.what,
                            "failed": failed, "passed": passed, "date": baseline["date"]})
            shutil.rmtree(tree, ignore_errors=True)
    stored = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
    stored = {name: row for name, row in stored.items() if name in {m.name for m in MUTATIONS}}
    stored.update({r["name"]: r for r in results})
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    rows = [stored[m.name] for m in MUTATIONS if m.name in stored]
    DOC.write_text(render(rows), encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)} ({len(rows)} of {len(MUTATIONS)} mutations run)")
    return 0 if all(r["failed"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
