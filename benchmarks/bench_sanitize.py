"""racecheck's cost per shipped program: CPU time of the program with ``sanitize="racecheck"`` over the same
program with the sanitizers off (issue 27's target: <= 5x).

    python benchmarks/bench_sanitize.py                    # every programs/*.toml, timed path
    python benchmarks/bench_sanitize.py vecadd gemv --repeats 5
    python benchmarks/bench_sanitize.py --functional       # the functional path

Each figure is the minimum of ``--repeats`` alternated measurements (off, racecheck, off, ...) in CPU time
of this process: the machine's load drifts, and the minimum is the least disturbed. The engine is compiled
and warm before any measurement. Every program's outputs are checked in both runs (``run_program``), and the
racecheck run must report no error hazard (the shipped programs are race-free). A speed figure, never
asserted by a test. Exit status 1 when a program misses the target or reports a race.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import gpusim  # noqa: E402  (path set up above so the script runs from a checkout)
from gpusim.errors import GpusimError  # noqa: E402
from gpusim.programs.catalog import list_programs, load_program, run_program  # noqa: E402

RATIO_TARGET = 5.0


def _timed(spec, gpu, timing: bool) -> tuple[float, object]:
    started = time.process_time()
    result = run_program(spec, gpu=gpu, timing=timing)
    return time.process_time() - started, result


def measure(spec, repeats: int, timing: bool) -> tuple[float, float, int]:
    """(CPU seconds off, CPU seconds with racecheck, error hazards found), minima of alternated runs."""
    off = gpusim.GPU(spec.config)
    on = gpusim.GPU(spec.config, sanitize="racecheck", sanitize_action="report")
    best_off = best_on = float("inf")
    errors = 0
    for _ in range(repeats):
        seconds, _ = _timed(spec, off, timing)
        best_off = min(best_off, seconds)
        seconds, result = _timed(spec, on, timing)
        best_on = min(best_on, seconds)
        errors = sum(1 for run in result.runs for hazard in run.hazards if hazard["severity"] == "error")
    return best_off, best_on, errors


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("programs", nargs="*", help="program names (programs/NAME.toml); default: all")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--functional", action="store_true", help="measure the functional path")
    args = parser.parse_args(argv)
    paths = [ROOT / "programs" / f"{name}.toml" for name in args.programs] or list_programs()
    timing = not args.functional
    for sanitize in (None, "racecheck"):       # compile and warm the engine outside every measurement
        warm = gpusim.GPU("teaching", sanitize=sanitize, sanitize_action="report")
        run_program(load_program(ROOT / "programs" / "vecadd.toml"), gpu=warm, timing=timing)
    print(f"{'timed' if timing else 'functional'} path; target: racecheck <= {RATIO_TARGET:g}x the CPU time "
          "of the run without sanitizers")
    print(f"{'program':<22} {'off ms':>9} {'racecheck ms':>12} {'ratio':>6} {'races':>5}")
    ratios, failed = [], False
    for path in paths:
        spec = load_program(path)
        try:
            off, on, errors = measure(spec, args.repeats, timing)
        except GpusimError as error:            # e.g. the shadow memory past the engine-memory budget
            print(f"{spec.name:<22} not measured: {str(error).splitlines()[0]}")
            continue
        ratios.append(on / max(off, 1e-9))
        missed = ratios[-1] > RATIO_TARGET or errors > 0
        failed |= missed
        print(f"{spec.name:<22} {off * 1e3:>9.1f} {on * 1e3:>12.1f} {ratios[-1]:>6.2f} {errors:>5}"
              + ("  MISSES THE TARGET" if missed else ""), flush=True)
    ordered = sorted(ratios)
    print(f"{len(ratios)} programs: ratio median {ordered[len(ordered) // 2]:.2f}, worst {ordered[-1]:.2f} "
          f"(target <= {RATIO_TARGET:g})")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
