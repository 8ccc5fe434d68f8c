"""PTX load-time benchmarks: load time must be linear in the file size (issue targets in brackets).

    python benchmarks/bench_load.py

* tables     a ~1 MB PTX of .global/.const data tables (u32 and f32 initializers)   [<= 1 s]
* branches   kernels of 1,000 / 2,000 / 8,000 conditional branches: seconds per KB stays flat
* gemv       programs/labs/decode_gemv.ptx, 1 MB of real nvcc output (7 kernels)

Each figure is the best of three loads in one process (a fresh GPU each time).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gpusim  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


def tables_ptx(target_bytes: int = 1 << 20) -> str:
    parts, size, i = [HEADER], 0, 0
    while size < target_bytes:
        ints = ", ".join(str((k * 2654435761) % 100000) for k in range(2000))
        floats = ", ".join(f"0f{(k * 40503) & 0x3FFFFFFF:08X}" for k in range(2000))
        parts.append(f".global .align 4 .u32 t{i}[2000] = {{{ints}}};\n")
        parts.append(f".global .align 4 .f32 f{i}[2000] = {{{floats}}};\n")
        size += len(parts[-1]) + len(parts[-2])
        i += 1
    parts.append(".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %rd<2>;\n  ld.param.u64 %rd1, [p];\n  ret;\n}\n")
    return "".join(parts)


def branches_ptx(n: int) -> str:
    body = "\n".join(f"  setp.lt.u32 %p1, %r{i % 500}, {i};\n  @%p1 bra L{i};\n  add.u32 %r{i % 500}, "
                     f"%r{(i + 1) % 500}, 1;\nL{i}:" for i in range(n))
    decls = "  .reg .pred %p<2>; .reg .b32 %r<501>;"
    return HEADER + f".visible .entry k(.param .u64 p)\n{{\n{decls}\n{body}\n  ret;\n}}\n"


def best_load(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        gpu = gpusim.GPU("teaching", sms=1)
        start = time.perf_counter()
        gpu.load_ptx(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    text = tables_ptx()
    seconds = best_load(text)
    print(f"tables    {len(text) / 1e6:.2f} MB  {seconds:.3f} s   [<= 1 s] {'ok' if seconds <= 1 else 'MISSED'}")
    for n in (1000, 2000, 8000):
        text = branches_ptx(n)
        seconds = best_load(text)
        print(f"branches  {n:5d} ({len(text) / 1e3:.0f} KB)  {seconds:.3f} s  {seconds / len(text) * 1e6:.2f} us/byte")
    text = (ROOT / "programs/labs/decode_gemv.ptx").read_text()
    seconds = best_load(text)
    print(f"gemv      {len(text) / 1e6:.2f} MB  {seconds:.3f} s  {seconds / len(text) * 1e6:.2f} us/byte")


if __name__ == "__main__":
    main()
