"""Speed-up of ``GPU(threads=N)`` over one thread (issue 26), with the results checked identical. Not a test.

Cases, each a launch run alternately on 1 and N threads in this process (``--repeat`` pairs, after a warm-up):

- ``copy``: a functional-only streaming copy, 8 Mi floats on h100-sxm (2048 blocks of 256 threads);
- ``sgemm``: a functional-only 1024^3 SGEMM (validation/kernels/sgemm_ladder.cu ``sgemm_blocktile_2d``, 64 blocks);
- ``sampled``: a sampled timed daxpy of 384 waves on a 4-SM h100-sxm slice (``sampling="auto"``): the timed
  waves on one thread, the blocks it does not time on N.

Per case: median host seconds on 1 and N threads, the ratio, and whether outputs, per-pc counts and (sampled)
cycles and interval were identical in every pair.

    python benchmarks/bench_threads.py [--threads N] [--repeat 3] [--only copy,sgemm,sampled]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gpusim  # noqa: E402  (path set up above so the script runs from a checkout)
from benchmarks.kernels import STREAM_COPY  # noqa: E402
from gpusim.programs.catalog import run_program  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _copy(threads: int):
    gpu = gpusim.GPU("h100-sxm", threads=threads)
    kernel = gpu.load_ptx(STREAM_COPY)["stream_copy"]
    n = 1 << 23
    src = gpu.to_device(np.arange(n, dtype=np.float32))
    dst = gpu.empty(n, np.float32)
    start = time.perf_counter()
    run = gpu.launch(kernel, grid=n // 256 // 16, block=256, args=[src, dst, n], timing=False)
    return time.perf_counter() - start, (run.pc_counts, dst.get())


def _sgemm(threads: int):
    gpu = gpusim.GPU("a100", threads=threads)
    kernel = gpu.load(str(ROOT / "validation" / "kernels" / "sgemm_ladder.ptx"))["sgemm_blocktile_2d"]
    n = 1024
    a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    dc = gpu.zeros(n * n, np.float32)
    args = [np.int32(n), np.float32(1.0), gpu.to_device(a), gpu.to_device(a), np.float32(0.0), dc]
    start = time.perf_counter()
    run = gpu.launch(kernel, grid=(n // 128, n // 128), block=(256,), args=args, timing=False)
    return time.perf_counter() - start, (run.pc_counts, dc.get())


def _sampled(threads: int):
    gpu = gpusim.GPU("h100-sxm", sms=4, sampling="auto", threads=threads)
    start = time.perf_counter()
    result = run_program("daxpy", gpu=gpu, sizes={"n": 256 * 8 * 4 * 384})
    seconds = time.perf_counter() - start
    run = result.runs[0]
    assert result.ok and run.sampled
    return seconds, (run.pc_counts, np.array([run.cycles, *run.cycles_interval]))


CASES = {"copy": _copy, "sgemm": _sgemm, "sampled": _sampled}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=0, help="N (default: every core)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    threads = args.threads or gpusim.GPU("teaching").threads
    gpusim.warm_up()
    for name in args.only.split(",") if args.only else list(CASES):
        case = CASES[name]
        case(1)     # warm-up: the engine's entry loaded, numpy's pages touched
        times: dict[int, list[float]] = {1: [], threads: []}
        identical = True
        for _ in range(args.repeat):
            one_s, one = case(1)
            many_s, many = case(threads)
            times[1].append(one_s)
            times[threads].append(many_s)
            identical &= all(np.array_equal(x, y) for x, y in zip(one, many, strict=True))
        t1, tn = statistics.median(times[1]), statistics.median(times[threads])
        print(f"{name:8s} 1 thread {t1:7.2f} s   {threads} threads {tn:7.2f} s   x{t1 / tn:4.2f}   "
              f"identical={identical}", flush=True)


if __name__ == "__main__":
    main()
