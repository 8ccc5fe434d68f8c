"""Simulation speed and memory benchmarks (issue targets in brackets).

    python benchmarks/bench_speed.py            # all
    python benchmarks/bench_speed.py alu stream8

Each case runs once to warm the JIT, then is timed; the figure is simulated
warp-instructions per second of wall time in one process.

* alu        FFMA loop, 512 warps on 4 SMs of h100-sxm, timed        [>= 5 M/s]
* stream8    grid-stride copy, 8-SM slice of h100-sxm, timed         [>= 1 M/s]
* stream132  grid-stride copy, full 132-SM h100-sxm, timed           [>= 1 M/s]
* functional vecadd-like copy, functional only                       [>= 5 M/s]
* firstlaunch  a new process's first launch, numba cache warm        [<= 3 s]
* coldlaunch   a new process's first launch, empty engine cache      [<= 30 s]
* fullchip   128 MB stream on the full h100-sxm: peak RSS beyond device memory [<= 2 GB]
* parse      parse a 5000-line PTX kernel (labels, .loc, vector loads, comments)  [<= 1 s]

    python benchmarks/bench_speed.py --record 3   # every case 3 times into benchmarks/results/speed.json

``--record`` keeps each case's figures (min and max over the repeats, the machine's load average, the
date, numba's version) in ``benchmarks/results/speed.json``; ``scripts/doc_tables.py`` renders the speed
table of docs/design.md from that file, and tests/test_doc_tables.py checks the table is that rendering.
"""

from __future__ import annotations

import datetime
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gpusim  # noqa: E402  (path set up above so the script runs from a checkout)
from benchmarks.kernels import FFMA_LOOP, STREAM_COPY  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "speed.json"


@dataclass
class Measured:
    """One case's figure: ``value`` in ``unit`` (the table's number), the printed line, further figures."""

    value: float
    unit: str
    text: str
    extra: dict[str, float] = field(default_factory=dict)

    def __add__(self, more: str) -> Measured:
        return Measured(self.value, self.unit, self.text + more, dict(self.extra))

    def __str__(self) -> str:
        return self.text


def _rate(run, seconds: float) -> Measured:
    cycles = f", {run.cycles} cycles" if run.timing else ""
    rate = run.warp_instructions / seconds / 1e6
    return Measured(rate, "M warp-inst/s", f"{rate:6.2f} M warp-instructions/s "
                                           f"({run.warp_instructions} in {seconds:.3f} s{cycles})")


def bench_alu() -> Measured:
    gpu = gpusim.GPU("h100-sxm", sms=4)
    kernel = gpu.load_ptx(FFMA_LOOP)["ffma_loop"]
    out = gpu.empty(512 * 32, np.float32)
    gpu.launch(kernel, grid=128, block=128, args=[out, 4])
    start = time.perf_counter()
    run = gpu.launch(kernel, grid=128, block=128, args=[out, 400])
    return _rate(run, time.perf_counter() - start)


def _stream(sms: int | None, n: int, timing: bool = True):
    gpu = gpusim.GPU("h100-sxm", **({"sms": sms} if sms else {}))
    kernel = gpu.load_ptx(STREAM_COPY)["stream_copy"]
    src = gpu.to_device(np.ones(n, np.float32))
    dst = gpu.empty(n, np.float32)
    blocks = gpu.config.sms * 8
    gpu.launch(kernel, grid=blocks, block=256, args=[src, dst, 4096], timing=timing)
    start = time.perf_counter()
    run = gpu.launch(kernel, grid=blocks, block=256, args=[src, dst, n], timing=timing)
    return run, time.perf_counter() - start


def bench_stream8() -> Measured:
    run, seconds = _stream(8, 1 << 21)
    pct = run.metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"]
    result = _rate(run, seconds) + f", DRAM {pct:.1f}% of the slice's peak"
    result.extra["dram_pct"] = pct
    return result


def bench_stream132() -> Measured:
    run, seconds = _stream(None, 1 << 23)
    pct = run.metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"]
    result = _rate(run, seconds) + f", DRAM {pct:.1f}% of peak"
    result.extra["dram_pct"] = pct
    return result


def bench_functional() -> Measured:
    run, seconds = _stream(8, 1 << 22, timing=False)
    return _rate(run, seconds)


FIRST_LAUNCH = ("import time; t=time.perf_counter(); import numpy as np, gpusim; "
                "from benchmarks.kernels import STREAM_COPY; g=gpusim.GPU('h100-sxm', sms=2); "
                "k=g.load_ptx(STREAM_COPY)['stream_copy']; a=g.to_device(np.ones(4096, np.float32)); "
                "b=g.empty(4096, np.float32); g.launch(k, grid=4, block=256, args=[a, b, 4096]); "
                "import resource; r=resource.getrusage(resource.RUSAGE_SELF); "
                "h=resource.getrusage(resource.RUSAGE_CHILDREN); "
                "print(time.perf_counter()-t, r.ru_utime+r.ru_stime, h.ru_utime+h.ru_stime)")


def _first_launch(env: dict | None = None) -> tuple[float, float, float]:
    """A new process's first launch: (wall seconds, its CPU seconds, its helper processes' CPU seconds)."""
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", FIRST_LAUNCH], cwd=root, check=True, capture_output=True,
                         text=True, env=env)
    wall, cpu, helper_cpu = (float(x) for x in out.stdout.split())
    return wall, cpu, helper_cpu


def bench_firstlaunch() -> Measured:
    _first_launch()   # warm the on-disk cache
    wall = _first_launch()[0]
    return Measured(wall, "s", f"{wall:.2f} s from interpreter start to the first timed launch's result")


def bench_coldlaunch() -> Measured:
    """On a busy machine the wall time is inflated; the launching process's CPU time bounds what an idle
    2-core machine takes from below (the helper process, engine/parallel_compile.py, runs beside it)."""
    with tempfile.TemporaryDirectory() as cache_dir:   # an empty engine cache: everything compiles
        wall, cpu, helper_cpu = _first_launch({**os.environ, "NUMBA_CACHE_DIR": cache_dir,
                                               "GPUSIM_CACHE_DIR": cache_dir})
    return Measured(wall, "s", f"{wall:.1f} s from interpreter start to the first timed launch's result, empty "
                               f"engine cache (CPU: {cpu:.1f} s in the process, {helper_cpu:.1f} s in its "
                               "compile helper)",
                    {"cpu_s": cpu, "helper_cpu_s": helper_cpu})


def bench_fullchip() -> Measured:
    n = 128 * (1 << 20) // 4 // 2          # 64 MB source + 64 MB destination = 128 MB streamed
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run, seconds = _stream(None, n)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    heap_bytes = 2 * n * 4
    beyond = peak_kib * 1024 - heap_bytes * 2      # the heap plus its validity map
    rate = _rate(run, seconds)
    return Measured(beyond / 2**30, "GiB", rate.text + f"; peak RSS {peak_kib / 1024:.0f} MiB (was "
                    f"{before / 1024:.0f}), {beyond / 2**30:.2f} GiB beyond the device memory and its validity map",
                    {"rate_m_per_s": rate.value, "peak_rss_mib": peak_kib / 1024})


def _big_ptx(lines_wanted: int) -> str:
    """A PTX module with one kernel of about ``lines_wanted`` lines: repeated 9-line basic blocks."""
    lines = [".version 8.0", ".target sm_80", ".address_size 64", ".visible .entry big(.param .u64 p)", "{",
             "  .reg .pred %p<4>;", "  .reg .b32 %r<100>;", "  .reg .f32 %f<100>;", "  .reg .b64 %rd<100>;",
             "  ld.param.u64 %rd1, [p];"]
    block = 0
    while len(lines) < lines_wanted:
        lines += [f"$L__BB0_{block}:", "  .loc 1 12 3", "  mov.u32 %r1, %tid.x;", "  mad.lo.s32 %r2, %r1, 4, %r3;",
                  "  ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];",
                  "  fma.rn.f32 %f5, %f1, 0f3F800000, %f2;  // a comment", "  setp.lt.s32 %p1, %r2, 100;",
                  f"  @%p1 bra $L__BB0_{block};", "  st.global.f32 [%rd1], %f5;"]
        block += 1
    return "\n".join(lines + ["  ret;", "}"])


def bench_parse() -> Measured:
    from gpusim.ptx.parser import parse_ptx

    text = _big_ptx(5000)
    parse_ptx(_big_ptx(100))
    start = time.perf_counter()
    module = parse_ptx(text)
    seconds = time.perf_counter() - start
    lines = text.count("\n") + 1
    return Measured(seconds, "s", f"{seconds:.3f} s for {lines} lines ({len(module.functions['big'].body)} "
                                  f"instructions), {lines / seconds / 1e3:.1f} k lines/s")


CASES = {"alu": bench_alu, "stream8": bench_stream8, "stream132": bench_stream132,
         "functional": bench_functional, "firstlaunch": bench_firstlaunch, "coldlaunch": bench_coldlaunch,
         "fullchip": bench_fullchip, "parse": bench_parse}


def sources_stamp() -> str:
    """Hash of this benchmark's sources: the speed table's figures are from these cases as written."""
    import hashlib

    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in (here / "bench_speed.py", here / "kernels.py"):
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:24]


def record(names: list[str], repeat: int) -> dict:
    """Run each case ``repeat`` times: per case the min and max of its figure and of each extra figure."""
    cases = {}
    for name in names or list(CASES):
        runs = []
        for _ in range(repeat):
            runs.append(CASES[name]())
            print(f"{name:12s} {runs[-1]}", flush=True)
        cases[name] = {"unit": runs[0].unit, "min": min(r.value for r in runs), "max": max(r.value for r in runs),
                       "extra": {key: [min(r.extra[key] for r in runs), max(r.extra[key] for r in runs)]
                                 for key in runs[0].extra}}
    import numba

    return {"stamp": sources_stamp(), "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
            "repeat": repeat,
            "load_average_1min": round(os.getloadavg()[0], 1), "cpus": os.cpu_count(),
            "numba": numba.__version__, "python": sys.version.split()[0], "cases": cases}


def main(argv: list[str]) -> None:
    if argv[:1] == ["--record"]:
        repeat = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 3
        results = record(argv[2:] if len(argv) > 1 and argv[1].isdigit() else argv[1:], repeat)
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {RESULTS}")
        return
    for name in argv or list(CASES):
        print(f"{name:12s} {CASES[name]()}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
