"""The `gpusim` command's export options and its `compare` command (docs/cli.md).

``gpusim run ... --what-if [FACTOR]`` re-simulates every timed launch once per limit removed and prints the
measured speed-ups (``run.what_if``; the report and the verdict then quote them); ``--stalls VIEW`` prints the
warp-state table (``not_issued``: stalls only, Nsight Compute 2025.4's default; ``all``: issuing too);
``--csv [FILE]`` writes the metrics in the layout of ``ncu --csv --page raw`` (to stdout without FILE).
``gpusim compare a.json b.json`` compares two saved runs (``gpusim.compare``).
"""

from __future__ import annotations

import math
import sys

from gpusim.errors import GpusimError


def _factor(text: str):
    if text == "inf":
        return None
    try:
        value = float(text)
    except ValueError:
        raise GpusimError(f"--what-if FACTOR must be a number above 1 (or nothing for x infinity), got {text!r}") \
            from None
    return None if math.isinf(value) else value


def export_outputs(args, runs, many: bool, numbered) -> None:
    """--what-if, --stalls and --csv for each run of a `gpusim run`."""
    from gpusim.observe.export import stall_rows, write_csv

    what_if = getattr(args, "what_if", None)
    out = sys.stdout          # (stderr while a CSV goes to stdout: gpusim.cli redirects it)
    for index, run in enumerate(runs):
        if what_if and run.timing:
            print(file=out)
            print(run.what_if(factor=_factor(what_if)).to_text(), file=out)
        if getattr(args, "stalls", None) and run.timing:
            label = "stalls only" if args.stalls == "not_issued" else "every state, issuing included"
            print(f"\n  {run.program.name}: warp states ({args.stalls}: {label})", file=out)
            for name, cycles, pct in stall_rows(run, args.stalls):
                print(f"    {name:<18} {cycles:>14,} {pct:6.1f}%", file=out)
        if getattr(args, "csv", None):
            if args.csv == "-":
                stream = getattr(args, "csv_stream", sys.stdout)   # one header and units row, a row per run
                text = write_csv(run) or ""
                stream.write(text if index == 0 else text.split("\n", 2)[2])
            else:
                path = numbered(args.csv, index, many)
                write_csv(run, path)
                print(f"  wrote {path}", file=out)


def compare_command(args) -> int:
    """`gpusim compare a.json b.json`: the comparison as text (and HTML / CSV files on request)."""
    from gpusim.observe.compare_runs import compare_runs

    comparison = compare_runs(args.a, args.b)
    print(comparison.to_text(all_metrics=args.all, lines=args.lines))
    if args.html:
        from pathlib import Path

        Path(args.html).write_text(comparison.to_html(), encoding="utf-8")
        print(f"  wrote {args.html}")
    if args.csv:
        comparison.to_pandas().to_csv(args.csv, index=False)
        print(f"  wrote {args.csv}")
    return 0
