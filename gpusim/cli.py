"""The ``gpusim`` command: run a program or a PTX kernel, list configs, draw a chip's roofline, run a lab.

    gpusim run programs/vecadd.toml [--config C] [--sms N] [--size NAME=VALUE] [--report] [--json FILE]
                                     [--plot DIR] [--html FILE] [--trace FILE.json] [--functional]
    gpusim run kernel.ptx --kernel K --grid 64 --block 256 --array a=float32:16384:random
               --array c=float32:16384 --scalar 16384 [same output options]
    gpusim configs
    gpusim roofline CONFIG [--sms N] [--plot DIR]
    gpusim lab NAME [--config C] [--plot DIR] | gpusim lab --list

Kernel arguments of a PTX run are given in parameter order by ``--array`` (a device array:
``NAME=DTYPE:N[:INIT]``, INIT one of zeros, ones, arange, random; zeros by default) and ``--scalar``
(a number, converted to the parameter's PTX type). Exit status: 0 ok, 1 a program's check failed,
2 a usage or gpusim error (one line on stderr, never a traceback). docs/cli.md has the details.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from gpusim.errors import GpusimError

ARRAY_INITS = ("zeros", "ones", "arange", "random")


class _OrderedArg(argparse.Action):
    """Appends (kind, text) to ``namespace.kernel_args`` so --array and --scalar keep their order."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = list(getattr(namespace, "kernel_args", None) or [])
        items.append((self.const, values))
        namespace.kernel_args = items


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpusim", description="A cycle-level SIMT GPU simulator.")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run programs/NAME.toml (and check it) or a kernel of a .ptx file")
    run.add_argument("target", help="a program TOML (or the name of one in programs/) or a .ptx file")
    run.add_argument("--config", help="config name or .toml (default: the program's, else h100-sxm)")
    run.add_argument("--sms", type=int, help="simulate only this many SMs (a slice of the chip)")
    run.add_argument(
        "--size",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a program size (repeatable)",
    )
    run.add_argument("--report", action="store_true", help="print the full report")
    run.add_argument("--json", metavar="FILE", help="write metrics, stalls, config, verdict and source view")
    run.add_argument("--plot", metavar="DIR", help="write figures (PNG and SVG) into DIR")
    run.add_argument("--html", metavar="FILE", help="write one self-contained HTML report")
    run.add_argument("--trace", metavar="FILE", help="write a Chrome/Perfetto trace (JSON)")
    run.add_argument("--trace-rows", type=int, metavar="N", help="trace capacity in rows per table")
    run.add_argument("--functional", action="store_true", help="functional run only (no timing)")
    run.add_argument("--kernel", help="kernel name in the .ptx (default: its only kernel)")
    run.add_argument("--grid", help="grid: N or X,Y[,Z]")
    run.add_argument("--block", help="block: N or X,Y[,Z]")
    run.add_argument("--shared-bytes", type=int, default=0, help="dynamic shared memory per block")
    run.add_argument(
        "--array",
        action=_OrderedArg,
        const="array",
        metavar="NAME=DTYPE:N[:INIT]",
        help="a device-array argument",
    )
    run.add_argument(
        "--scalar", action=_OrderedArg, const="scalar", metavar="VALUE", help="a scalar argument"
    )

    commands.add_parser("configs", help="list the GPU configs")

    roof = commands.add_parser("roofline", help="print (and draw) a config's roofline ceilings")
    roof.add_argument("config")
    roof.add_argument("--sms", type=int)
    roof.add_argument("--plot", metavar="DIR")

    lab = commands.add_parser("lab", help="run a lab (an experiment with a table and a lesson)")
    lab.add_argument("name", nargs="?")
    lab.add_argument("--list", action="store_true", help="list the labs")
    lab.add_argument("--config")
    lab.add_argument("--plot", metavar="DIR")
    return parser


def print_report(text: str) -> None:
    """Print a report: through rich (colour, highlighting) when it is installed and stdout is a terminal,
    else as plain text."""
    if sys.stdout.isatty():
        try:
            from rich.console import Console
        except ImportError:
            pass
        else:
            Console().print(text, markup=False, highlight=True)
            return
    print(text)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return {"run": _run, "configs": _configs, "roofline": _roofline, "lab": _lab}[args.command](args)
    except GpusimError as error:
        print(f"gpusim: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into a command that stopped reading (head)
        sys.stderr.close()
        return 0


# ------------------------------------------------------------------------------------------------ run
def _run(args) -> int:
    target = Path(args.target)
    trace = (
        (args.trace_rows or True) if (args.trace or args.plot or args.html) and not args.functional else False
    )
    if target.suffix == ".ptx":
        runs, ok, summary = _run_ptx(args, target, trace)
    else:
        runs, ok, summary = _run_program(args, trace)
    print(summary)
    _outputs(args, runs)
    return 0 if ok else 1


def _overrides(args) -> dict:
    return {"sms": args.sms} if args.sms else {}


def _run_program(args, trace):
    from gpusim.api.gpu import GPU
    from gpusim.programs.catalog import load_program, run_program

    spec = load_program(args.target, sizes=_sizes(args.size) or None)
    gpu = GPU(args.config or spec.config, **_overrides(args))
    result = run_program(spec, gpu=gpu, timing=not args.functional, trace=trace, progress=sys.stderr.isatty())
    return result.runs, result.ok, result.summary()


def _sizes(items: list[str]) -> dict:
    sizes = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise GpusimError(f"--size {item!r}: expected NAME=VALUE")
        sizes[name.strip()] = _number(value, f"--size {item}")
    return sizes


def _number(text: str, what: str):
    try:
        return int(text, 0)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise GpusimError(f"{what}: {text!r} is not a number") from None


def _dims(text: str | None, what: str) -> tuple[int, ...]:
    if not text:
        raise GpusimError(f"a .ptx run needs --{what} (N or X,Y[,Z])")
    try:
        return tuple(int(x) for x in text.replace("x", ",").split(","))
    except ValueError:
        raise GpusimError(f"--{what} {text!r}: expected N or X,Y[,Z] of integers") from None


def _make_array(gpu, text: str, rng):
    name, sep, rest = text.partition("=")
    parts = rest.split(":")
    if not sep or len(parts) not in (2, 3):
        raise GpusimError(f"--array {text!r}: expected NAME=DTYPE:N[:INIT], e.g. a=float32:1024:random")
    try:
        dtype = np.dtype(parts[0])
        count = int(parts[1], 0)
    except (TypeError, ValueError):
        raise GpusimError(
            f"--array {text!r}: {parts[0]!r} is not a numpy dtype or {parts[1]!r} not a count"
        ) from None
    init = parts[2] if len(parts) == 3 else "zeros"
    if init not in ARRAY_INITS:
        raise GpusimError(f"--array {text!r}: init {init!r} is not one of {', '.join(ARRAY_INITS)}")
    host = {
        "zeros": lambda: np.zeros(count, dtype),
        "ones": lambda: np.ones(count, dtype),
        "arange": lambda: np.arange(count).astype(dtype),
        "random": lambda: (rng.random(count) if dtype.kind == "f" else rng.integers(0, 100, count)).astype(
            dtype
        ),
    }[init]()
    return name.strip(), gpu.to_device(host)


def _run_ptx(args, path: Path, trace):
    from gpusim.api.gpu import GPU

    gpu = GPU(args.config or "h100-sxm", **_overrides(args))
    module = gpu.load(path)
    kernels = list(module)
    if args.kernel:
        try:
            kernel = module[args.kernel]
        except KeyError as error:
            raise GpusimError(f"{path}: {error.args[0]}") from None
    elif len(kernels) == 1:
        kernel = kernels[0]
    else:
        raise GpusimError(
            f"{path} has {len(kernels)} kernels; name one with --kernel "
            f"({', '.join(k.program.name for k in kernels)})"
        )
    rng = np.random.default_rng(0)
    arrays, launch_args = {}, []
    for kind, text in getattr(args, "kernel_args", None) or []:
        if kind == "array":
            name, array = _make_array(gpu, text, rng)
            arrays[name] = array
            launch_args.append(array)
        else:
            launch_args.append(_number(text, "--scalar"))
    run = gpu.launch(
        kernel,
        grid=_dims(args.grid, "grid"),
        block=_dims(args.block, "block"),
        args=launch_args,
        shared_bytes=args.shared_bytes,
        timing=not args.functional,
        trace=trace,
        progress=sys.stderr.isatty(),
    )
    lines = [repr(run)]
    for name, array in arrays.items():
        values = np.asarray(array.get())
        lines.append(
            f"  {name}: {values.dtype}[{values.size}] = {np.array2string(values[:8], precision=4)}"
            + (" ..." if values.size > 8 else "")
        )
    return [run], True, "\n".join(lines)


def _outputs(args, runs) -> None:
    many = len(runs) > 1
    for index, run in enumerate(runs):
        tag = f"{index}_{run.program.name}" if many else run.program.name
        if args.report:
            print()
            print_report(run.report())
        elif run.timing:
            from gpusim.observe.report import verdict

            print(f"  {run.program.name}: {verdict(run)}")
        if args.json:
            run.to_json(_numbered(args.json, index, many))
        if args.plot and run.timing:
            from gpusim.observe.plot import save_run_figures

            for figure in save_run_figures(run, args.plot, prefix=tag):
                print(f"  wrote {figure}")
        if args.html:
            path = _numbered(args.html, index, many)
            run.to_html(path)
            print(f"  wrote {path}")
        if args.trace and run.trace is not None:
            path = run.trace.to_chrome(_numbered(args.trace, index, many))
            print(f"  wrote {path} (open it in https://ui.perfetto.dev)")


def _numbered(path: str, index: int, many: bool) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    return p.with_name(f"{p.stem}_{index}{p.suffix}") if many else p


# ------------------------------------------------------------------------------------------------ others
def _configs(args) -> int:
    from gpusim.arch.config import list_configs, load_config

    for name in list_configs():
        config = load_config(name)
        print(f"{name:<12} {config.describe().splitlines()[0].split(': ', 1)[-1]}")
    return 0


def _roofline(args) -> int:
    from gpusim.arch.config import load_config
    from gpusim.observe.plot import chip_ceilings

    config = load_config(args.config, **_overrides(args))
    compute, memory = chip_ceilings(config)
    print(config.describe())
    for name, peak in compute.items():
        print(f"  compute {name:<12} {peak / 1e12:10.3f} TFLOP/s")
    for name, bandwidth in memory.items():
        ridge = compute.get("FP32", 0.0) / bandwidth
        print(f"  memory  {name:<12} {bandwidth / 1e9:10.1f} GB/s   FP32 ridge at {ridge:.2f} FLOP/byte")
    if args.plot:
        from gpusim.observe.plot import chip_roofline, save_figure

        for path in save_figure(chip_roofline(config), args.plot, f"roofline_{config.name}"):
            print(f"  wrote {path}")
    return 0


def _lab(args) -> int:
    from gpusim.labs import LABS, run_lab

    if args.list or not args.name:
        for name, module in sorted(LABS.items()):
            print(f"{name:<18} {module.TITLE}")
        return 0
    if args.name not in LABS:
        raise GpusimError(f"no lab named {args.name!r}; labs: {', '.join(sorted(LABS))}")
    options = {"plot_dir": args.plot}
    if args.config:
        options["config"] = args.config
    result = run_lab(args.name, **options)
    print(result)
    for figure in result.figures:
        print(f"  wrote {figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
