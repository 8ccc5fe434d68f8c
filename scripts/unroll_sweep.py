"""The loops ptxas unrolls fully: a sweep of constant-trip loops, their SASS, and the verdicts.

    python scripts/unroll_sweep.py [ARCH]   # sm_86 (default) or sm_90; needs ptxas and nvdisasm (NVDISASM=path);
                                            # writes tests/data/unroll/

Each point is a single-block loop of ``trips`` trips (counter from 0, step 1, ``setp.lt`` against an
immediate) whose body has ``loads`` shared loads off a pointer stepped each trip and ``fmas`` FMAs into
independent accumulators; ``nested`` puts it inside an outer loop with barriers (as in a tiled GEMM's k
loop). ptxas unrolled it fully when the SASS has no back edge left for it (one fewer than the PTX's loops).
``sweep.csv`` (sm_86) and ``sweep.sm_90.csv`` record every point; the listings of the points next to the
fitted boundary are kept as ``NAME.ptx`` / ``NAME.sm_86.sass`` and ``NAME.sm_90.sass`` (whose PTX is
``NAME.ptx`` with ``.target sm_90``). ptxas 13.0 unrolls 23 of the 90 nested loops fully for sm_86 that it
keeps rolled for sm_90 (gpusim.codegen.unroll.full_unroll_fits has a rule for each); its sm_80 verdicts are
sm_86's. Development-time only: tests/test_vectorize.py reads the CSVs and regenerates the PTX with
:func:`loop_ptx`; nothing at test time needs ptxas.
"""

from __future__ import annotations

import csv
import itertools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "unroll"
ARCH = "sm_86"
LOADS = (1, 4, 8)
FMAS = (4, 16, 32, 64, 128)
TRIPS = (2, 4, 8, 16, 32, 64)


def loop_ptx(trips: int, loads: int, fmas: int, nested: bool, arch: str = ARCH) -> str:
    """The PTX of one sweep point (kernel ``k``) for ``arch``."""
    body = [f"    ld.shared.f32 %f{10 + i}, [%r3+{4 * i}];" for i in range(loads)]
    body += [f"    fma.rn.f32 %f{100 + i}, %f{10 + i % loads}, %f{10 + (i + 1) % loads}, %f{100 + i};"
             for i in range(fmas)]
    inits = [f"    mov.f32 %f{100 + i}, 0f00000000;" for i in range(fmas)]
    stores = [f"    st.global.f32 [%rd2+{4 * i}], %f{100 + i};" for i in range(fmas)]
    outer_head = ["    mov.u32 %r8, 0;", "$L0:", "    bar.sync 0;"] if nested else []
    outer_tail = ["    bar.sync 0;", "    add.s32 %r8, %r8, 1;", "    setp.lt.s32 %p2, %r8, %r9;",
                  "    @%p2 bra $L0;"] if nested else []
    lines = [".version 8.0", f".target {arch}", ".address_size 64",
             ".visible .entry k(.param .u64 out, .param .u32 n)", "{",
             "    .reg .pred %p<3>;", "    .reg .b32 %r<10>;", "    .reg .f32 %f<300>;", "    .reg .b64 %rd<3>;",
             "    .shared .align 16 .b8 tile[32768];", "    ld.param.u32 %r9, [n];", "    mov.u32 %r1, %tid.x;",
             "    shl.b32 %r2, %r1, 2;", "    mov.u32 %r4, tile;", "    add.s32 %r3, %r4, %r2;", *inits,
             *outer_head, "    mov.u32 %r5, 0;", "$L1:", *body, f"    add.s32 %r3, %r3, {4 * loads};",
             "    add.s32 %r5, %r5, 1;", f"    setp.lt.s32 %p1, %r5, {trips};", "    @%p1 bra $L1;", *outer_tail,
             "    ld.param.u64 %rd1, [out];", "    cvta.to.global.u64 %rd2, %rd1;", *stores, "    ret;", "}", ""]
    return "\n".join(lines)


def point_name(trips: int, loads: int, fmas: int, nested: bool) -> str:
    return f"{'nested' if nested else 'top'}_l{loads}_f{fmas}_t{trips}"


def sweep_csv(arch: str) -> Path:
    return OUT / ("sweep.csv" if arch == ARCH else f"sweep.{arch}.csv")


def _sass(ptx: str, work: Path, arch: str) -> str:
    from gpusim.codegen.sass import parse_listing  # noqa: F401  (checked importable before the sweep)

    src, cubin = work / "k.ptx", work / "k.cubin"
    src.write_text(ptx)
    subprocess.run([os.environ.get("PTXAS", "ptxas"), f"-arch={arch}", "-O3", str(src), "-o", str(cubin)],
                   check=True)
    return subprocess.run([os.environ.get("NVDISASM", "nvdisasm"), "-c", "-hex", str(cubin)], check=True,
                          capture_output=True, text=True).stdout


def main() -> int:
    arch = sys.argv[1] if len(sys.argv) > 1 else ARCH
    sys.path.insert(0, str(ROOT))
    from gpusim.codegen.sass import parse_listing

    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for nested, loads, fmas, trips in itertools.product((False, True), LOADS, FMAS, TRIPS):
            ptx = loop_ptx(trips, loads, fmas, nested, arch)
            listing = _sass(ptx, Path(tmp), arch)
            loops = len(parse_listing(listing)["k"].loops())
            full = loops == (1 if nested else 0)
            rows.append({"nested": int(nested), "loads": loads, "fmas": fmas, "trips": trips, "full": int(full),
                         "lds": sum(i.base == "LDS" for i in parse_listing(listing)["k"].instrs)})
            if (trips, fmas) in ((8, 64), (16, 64), (4, 128), (8, 128)) and loads == 4:
                name = point_name(trips, loads, fmas, nested)
                if arch == ARCH:
                    (OUT / f"{name}.ptx").write_text(ptx)
                (OUT / f"{name}.{arch}.sass").write_text(f"// {name}.ptx (.target {arch}): ptxas -arch={arch} -O3, "
                                                          "nvdisasm -c -hex\n" + listing)
    with open(sweep_csv(arch), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"{len(rows)} points, {sum(r['full'] for r in rows)} fully unrolled -> {sweep_csv(arch)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
