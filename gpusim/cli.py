"""The ``gpusim`` command: run a program or a PTX kernel, show configs, draw a chip's roofline, run a lab.

    gpusim run programs/vecadd.toml [--config C] [--sms N] [--size NAME=VALUE] [--report] [--json FILE]
                                     [--plot DIR] [--html FILE] [--trace FILE.json] [--functional] [--save DIR]
    gpusim run kernel.ptx|kernel.cu --kernel K --grid 64 --block 256 --array a=float32:16384:random
               --array c=float32:16384 --scalar 16384 [--check EXPR] [same output options]
    gpusim configs [NAME]
    gpusim roofline CONFIG [--sms N] [--plot DIR]
    gpusim lab NAME [--config C] [--plot DIR] [--set KEY=VALUE ...] | gpusim lab NAME --help | gpusim lab --list
    gpusim --version

Kernel arguments of a PTX run are given in parameter order by ``--array`` (a device array:
``NAME=DTYPE:N[:INIT]``, INIT one of zeros, ones, arange, random; zeros by default) and ``--scalar``
(a number, converted to the parameter's PTX type). ``--check EXPR`` is a numpy expression over the arrays
after the run (``c == a + b``), compiled and evaluated in the restricted namespace of the program TOMLs.
Exit status: 0 ok, 1 a check failed, 2 a usage or gpusim error (one line on stderr, never a traceback).
docs/cli.md has the details.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
from pathlib import Path

import numpy as np

from gpusim.errors import GpusimError
from gpusim.sweep.cli import add_parser as add_sweep_parser
from gpusim.sweep.cli import main as sweep_main

KERNEL_SUFFIXES = (".ptx", ".cu")

ARRAY_INITS = ("zeros", "ones", "arange", "random")


class _OrderedArg(argparse.Action):
    """Appends (kind, text) to ``namespace.kernel_args`` so --array and --scalar keep their order."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = list(getattr(namespace, "kernel_args", None) or [])
        items.append((self.const, values))
        namespace.kernel_args = items


class _Parser(argparse.ArgumentParser):
    """The top-level parser, holding the ``lab`` subcommand's parser for ``gpusim lab --help``."""

    lab_parser: argparse.ArgumentParser | None = None


def build_parser() -> argparse.ArgumentParser:
    from gpusim import __version__

    parser = _Parser(prog="gpusim", description="A cycle-level SIMT GPU simulator.")
    parser.add_argument("--version", action="version", version=f"gpusim {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run programs/NAME.toml (and check it) or a kernel of a .ptx/.cu file")
    run.add_argument("target", help="a program TOML (or the name of one in programs/), a .ptx or a .cu file")
    run.add_argument("--config", help="config name or .toml (default: the program's, else h100-sxm)")
    run.add_argument("--sms", type=int, help="simulate only this many SMs (a slice of the chip)")
    run.add_argument("--codegen", choices=("ptxas", "none"),
                     help="ptxas: time the instruction stream ptxas would make (gpusim.codegen); none: the PTX "
                          "in program order, as written (default: the GPU's default)")
    run.add_argument(
        "--size",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a program size (repeatable)",
    )
    run.add_argument("--report", action="store_true", help="print the full report")
    run.add_argument("--sample", nargs="?", const=0.02, type=float, metavar="TOLERANCE",
                     help="sampled simulation (gpusim.launch.sampling): time the first waves of blocks, "
                          "extrapolate the rest with a 95%% interval; stop sampling when its half-width is below "
                          "TOLERANCE of the cycles (default 0.02)")
    run.add_argument("--threads", type=int, metavar="N",
                     help="threads the simulator may use (default: $GPUSIM_THREADS, else every core): the functional "
                          "engine runs independent blocks on them, with one thread's results")
    run.add_argument("--json", metavar="FILE", help="write metrics, stalls, config, verdict and source view")
    run.add_argument("--plot", metavar="DIR", help="write figures (PNG and SVG) into DIR")
    run.add_argument("--html", metavar="FILE", help="write one self-contained HTML report")
    run.add_argument("--trace", metavar="FILE", help="write a Chrome/Perfetto trace (JSON)")
    run.add_argument("--trace-rows", type=int, metavar="N", help="trace capacity in rows per table")
    run.add_argument("--functional", action="store_true", help="functional run only (no timing)")
    run.add_argument("--sanitize", metavar="TOOLS",
                     help="sanitizers, a comma list of memcheck, racecheck, synccheck, initcheck (docs/sanitizers.md)")
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
    run.add_argument(
        "--check",
        action="append",
        default=[],
        metavar="EXPR",
        help="a .ptx run: numpy expression over the arrays after the run that must hold (repeatable)",
    )
    run.add_argument("--save", metavar="DIR", help="write every device array after the run as DIR/NAME.npy")
    run.add_argument("--csv", nargs="?", const="-", metavar="FILE",
                     help="the metrics as `ncu --csv --page raw` lays them out, to FILE (no FILE: to stdout, the "
                          "summary then goes to stderr)")
    run.add_argument("--what-if", nargs="?", const="inf", metavar="FACTOR",
                     help="re-simulate each launch once per limit removed and print the measured speed-ups "
                          "(bandwidths and math pipes x infinity, or x FACTOR; docs/what-if.md)")
    run.add_argument("--stalls", choices=("not_issued", "all"),
                     help="print the warp-state table: stalls only (Nsight Compute 2025.4's default) or all states")

    cmp = commands.add_parser("compare", help="compare two runs saved with `gpusim run --json` (a is the baseline)")
    cmp.add_argument("a", help="baseline run JSON")
    cmp.add_argument("b", help="run JSON to compare with it")
    cmp.add_argument("--all", action="store_true", help="list every metric, not only those that differ")
    cmp.add_argument("--lines", type=int, default=10, metavar="N", help="source lines to list (default 10)")
    cmp.add_argument("--html", metavar="FILE", help="also write the comparison as an HTML table")
    cmp.add_argument("--csv", metavar="FILE", help="also write the metric rows as CSV")

    configs = commands.add_parser("configs", help="list the GPU configs, or show one config's fields")
    configs.add_argument("name", nargs="?", help="a config name or .toml: print every field with unit and meaning")

    roof = commands.add_parser("roofline", help="print (and draw) a config's roofline ceilings")
    roof.add_argument("config")
    roof.add_argument("--sms", type=int)
    roof.add_argument("--plot", metavar="DIR")

    lab = commands.add_parser(
        "lab", help="run a lab (an experiment with a table and a lesson)", add_help=False
    )
    lab.add_argument("name", nargs="?")
    lab.add_argument("-h", "--help", action="store_true", help="this help, or with NAME the lab's options")
    lab.add_argument("--list", action="store_true", help="list the labs")
    lab.add_argument("--config")
    lab.add_argument("--plot", metavar="DIR")
    lab.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a lab option (repeatable; gpusim lab NAME --help lists them)",
    )
    parser.lab_parser = lab  # for `gpusim lab --help` (the lab parser's own -h is ours: NAME --help)
    add_sweep_parser(commands)
    engine = commands.add_parser("engine", help="where the compiled engine is cached, and whether a seed serves it")
    engine.add_argument("--warm-up", action="store_true", help="compile (or load) both launch paths now")
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
    parser = build_parser()
    args = parser.parse_args(argv)
    args.parser = parser
    try:
        return {"run": _run, "configs": _configs, "roofline": _roofline, "lab": _lab,
                "sweep": sweep_main, "compare": _compare, "engine": _engine}[args.command](args)
    except GpusimError as error:
        print(f"gpusim: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into a command that stopped reading (head)
        sys.stderr.close()
        return 0


def _engine(args) -> int:
    """`gpusim engine`: the engine cache's directory and state, and the seed's (docs/design.md, "The seed")."""
    from gpusim.engine import compile_cache as cc

    if args.warm_up:
        from gpusim.api.warm_up import warm_up

        print(f"engine compiled or loaded in {warm_up():.1f} s")
    compiled = cc.compiled_functions()
    state = f"{compiled} functions compiled" if compiled else "nothing compiled yet for this source"
    print(f"engine cache: {cc.stamp_dir()} ({state})")
    print(f"engine seed: {cc.seed_status()[1]}")
    return 0


# ------------------------------------------------------------------------------------------------ run
def _run(args) -> int:
    target = Path(args.target)
    trace = (
        (args.trace_rows or True) if (args.trace or args.plot or args.html) and not args.functional else False
    )
    if target.suffix in KERNEL_SUFFIXES:
        runs, ok, summary, arrays = _run_kernel_file(args, target, trace)
    elif target.suffix in ("", ".toml"):
        if args.check:
            raise GpusimError("--check is for .ptx/.cu runs; a program's checks are its [[check]] tables")
        runs, ok, summary, arrays = _run_program(args, trace)
    else:
        raise GpusimError(f"{target}: expected a program .toml (or a program name), a .ptx or a .cu file")
    if getattr(args, "csv", None) == "-":        # stdout carries only the CSV; everything else goes to stderr
        args.csv_stream = sys.stdout
        with contextlib.redirect_stdout(sys.stderr):
            print(summary)
            _print_warnings(runs)
            _outputs(args, runs)
    else:
        print(summary)
        _print_warnings(runs)
        _outputs(args, runs)
    if args.save:
        _save_arrays(args.save, arrays)
    return 0 if ok else 1


def _save_arrays(directory: str, arrays: dict) -> None:
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for name, values in arrays.items():
        path = out / f"{name}.npy"
        np.save(path, np.asarray(values))
        print(f"  wrote {path}")


def _overrides(args) -> dict:
    out = {"sms": args.sms} if args.sms else {}
    if getattr(args, "codegen", None):
        out["codegen"] = args.codegen
    if getattr(args, "sanitize", None):
        out["sanitize"] = args.sanitize
    return out


def _sampling(args) -> dict:
    """GPU(sampling=..., threads=...) for ``--sample [TOLERANCE]`` and ``--threads N`` (nothing without them: the
    GPU's defaults)."""
    out = {} if getattr(args, "threads", None) is None else {"threads": args.threads}
    if getattr(args, "sample", None) is None:
        return out
    from gpusim.launch.sampling_policy import SamplingPolicy

    return {**out, "sampling": SamplingPolicy(tolerance=args.sample)}


def _run_program(args, trace):
    from gpusim.api.gpu import GPU
    from gpusim.programs.catalog import load_program, run_program

    spec = load_program(args.target, sizes=_sizes(args.size) or None)
    gpu = GPU(args.config or spec.config, **_overrides(args), **_sampling(args))
    if getattr(args, "what_if", None):
        gpu.keep_launch_inputs = "all"      # every launch of the program keeps its inputs for its what-if
    result = run_program(spec, gpu=gpu, timing=not args.functional, trace=trace, progress=sys.stderr.isatty())
    return result.runs, result.ok, result.summary(), result.arrays


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


def _run_kernel_file(args, path: Path, trace):
    """Run one kernel of a .ptx (or a .cu, compiled by nvcc like gpu.load does) with the --array/--scalar args."""
    from gpusim.api.gpu import GPU

    if path.suffix == ".cu" and path.exists() and shutil.which("nvcc") is None:
        ptx = path.with_suffix(".ptx")
        instead = f"run {ptx} (its committed PTX)" if ptx.exists() else "compile it with `nvcc -ptx` and run the .ptx"
        raise GpusimError(f"{path} is CUDA source: running it needs nvcc (not found on PATH) to compile it to "
                          f"PTX; {instead}")
    gpu = GPU(args.config or "h100-sxm", **_overrides(args), **_sampling(args))
    if getattr(args, "what_if", None):
        gpu.keep_launch_inputs = "all"      # every launch of the program keeps its inputs for its what-if
    module = gpu.load(path)
    kernels = list(module)
    if args.kernel:
        kernel = module[args.kernel]  # KernelNotFoundError names the file and its kernels
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
    final = {name: np.asarray(array.get()) for name, array in arrays.items()}
    for name, values in final.items():
        lines.append(
            f"  {name}: {values.dtype}[{values.size}] = {np.array2string(values[:8], precision=4)}"
            + (" ..." if values.size > 8 else "")
        )
    ok = True
    for text in args.check:
        passed, line = _check(text, final)
        ok &= passed
        lines.append(line)
    return [run], ok, "\n".join(lines), final


def _check(text: str, arrays: dict) -> tuple[bool, str]:
    """Evaluate a --check expression over the final arrays (the program TOMLs' restricted namespace)."""
    from gpusim.programs.spec import _base_namespace, _compile

    expression = _compile(text, "--check", "", {"np", "fma32", *arrays})
    value = np.asarray(expression.evaluate({**_base_namespace({}), **arrays}))
    if value.dtype != np.bool_:
        raise GpusimError(f"--check {text!r} gives {value.dtype} values, expected booleans (e.g. c == a + b)")
    failed = int(value.size - np.count_nonzero(value))
    if failed:
        return False, f"  check {text}: MISMATCH ({failed} of {value.size} false)"
    return True, f"  check {text}: ok ({value.size} true)"


def _outputs(args, runs) -> None:
    many = len(runs) > 1
    from gpusim.cli_exports import export_outputs

    export_outputs(args, runs, many, _numbered)   # --what-if, --stalls, --csv (before the report quotes them)
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
        if args.trace and run.has_trace:
            path = run.trace.to_chrome(_numbered(args.trace, index, many))
            print(f"  wrote {path} (open it in https://ui.perfetto.dev)")


def _print_warnings(runs) -> None:
    """Each run's one-line warnings (hardware-tolerated mistakes) and its sanitizer report, if any."""
    for one in runs:
        for line in getattr(one, "warnings", ()):
            print(f"warning: {line}")
        if getattr(one, "sanitizer_report", ""):
            print(one.sanitizer_report)


def _numbered(path: str, index: int, many: bool) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    return p.with_name(f"{p.stem}_{index}{p.suffix}") if many else p


# ------------------------------------------------------------------------------------------------ others
def _configs(args) -> int:
    from gpusim.arch.config import FIELDS, list_configs, load_config

    if args.name:
        config = load_config(args.name)
        print(config.describe())
        rows: dict[str, list[tuple[str, str, str]]] = {}
        for name, spec in FIELDS.items():
            value, unit = getattr(config, name), spec.metadata["unit"]
            shown = (repr(value) if isinstance(value, str) else str(value)) + (f" {unit}" if unit else "")
            rows.setdefault(spec.metadata["table"], []).append((name, shown, spec.metadata["doc"]))
        width = max(len(f"{name} = {shown}") for table in rows.values() for name, shown, _ in table)
        for table, fields in rows.items():
            print(f"\n[{table}]")
            for name, shown, doc in fields:
                print(f"  {f'{name} = {shown}':<{width}}  # {doc}")
        return 0
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
    dram = memory.get("DRAM", 0.0)
    if dram:
        ridges = ", ".join(f"{name} {peak / dram:.0f}" for name, peak in compute.items())
        print(f"  ridge points against DRAM (FLOP/byte): {ridges}")
    if args.plot:
        from gpusim.observe.plot import chip_roofline, save_figure

        for path in save_figure(chip_roofline(config), args.plot, f"roofline_{config.name}"):
            print(f"  wrote {path}")
    return 0


def _lab(args) -> int:
    from gpusim.labs import LABS, describe_options, lab_module, parse_option, run_lab

    if args.help and not args.name:
        lab_parser = args.parser.lab_parser
        print((lab_parser or args.parser).format_help().rstrip())
        print("\nlabs (gpusim lab NAME --help lists a lab's options):")
        for name, module in sorted(LABS.items()):
            print(f"  {name:<18} {module.TITLE}")
        return 0
    if args.list or not args.name:
        for name, module in sorted(LABS.items()):
            print(f"{name:<18} {module.TITLE}")
        return 0
    module = lab_module(args.name)
    if args.help:
        print(f"gpusim lab {args.name} [--config C] [--plot DIR] [--set KEY=VALUE ...]\n\n{module.TITLE}\n")
        print("options (--set KEY=VALUE; defaults shown):")
        print(describe_options(args.name))
        return 0
    options = {"plot_dir": args.plot}
    if args.config:
        options["config"] = args.config
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise GpusimError(f"--set {item!r}: expected KEY=VALUE (gpusim lab {args.name} --help lists them)")
        options[key.strip()] = parse_option(args.name, key.strip(), value)
    result = run_lab(args.name, **options)
    print(result)
    for figure in result.figures:
        print(f"  wrote {figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


# ------------------------------------------------------------------------------------------------ compare
def _compare(args) -> int:
    from gpusim.cli_exports import compare_command

    return compare_command(args)
