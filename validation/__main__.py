"""``python -m validation [--case NAME ...] [--quick] [--list] [--render] [--sensitivity [--field F ...]]``:
run gpusim's validation suite.

Runs every case (or the named ones) at the case files' [params], stores validation/results.json and regenerates
docs/validation.md. ``--quick`` runs the smaller [quick] parameters and writes nothing (a smoke test);
``--render`` only re-renders docs/validation.md from the stored results. ``--sensitivity`` reruns the cases (or
the named ones) with each config field of validation/sensitivity.py (or the ``--field`` ones) at half and twice
its value, on ``--jobs`` processes, stores validation/sensitivity.json and re-renders the report."""

from __future__ import annotations

import argparse
import os

from validation.cases import load_cases
from validation.sensitivity import SENSITIVITY
from validation.sensitivity import run as run_sensitivity
from validation.suite import REPORT, RESULTS, render_report, run_suite


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m validation", description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", metavar="NAME", help="run only this case (repeatable)")
    parser.add_argument("--quick", action="store_true", help="small [quick] parameters; writes nothing")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--render", action="store_true", help="re-render docs/validation.md from results.json")
    parser.add_argument("--sensitivity", action="store_true",
                        help="rerun the cases with each decisive config field halved and doubled")
    parser.add_argument("--field", action="append", metavar="FIELD", help="with --sensitivity: only this field")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="with --sensitivity: processes")
    args = parser.parse_args(argv)
    if args.list:
        for case in load_cases():
            print(f"{case.name:22s} {case.meta['kind']:12s} {len(case.points):2d} points  {case.meta['config']:9s} "
                  f"{case.meta['title']}")
        return 0
    if args.sensitivity:
        run_sensitivity(args.field, args.case, jobs=max(1, args.jobs))
        render_report()
        print(f"wrote {SENSITIVITY} and {REPORT}")
        return 0
    if args.render:
        render_report()
        print(f"wrote {REPORT}")
        return 0
    run_suite(args.case, quick=args.quick, write=not args.quick)
    if not args.quick:
        print(f"wrote {RESULTS} and {REPORT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
