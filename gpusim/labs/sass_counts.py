"""gpusim's dynamic warp-instruction counts against ptxas's SASS for the shipped programs.

For each program run (its TOML's default sizes, every launch), the SASS dynamic count is estimated
from the committed listing (``programs/sass/sm_90/NAME.sass``) and the run's per-PTX-line
execution counts (gpusim's functional run of the PTX as written): ``gpusim.codegen.sass``.
gpusim's count is the warp-instructions it issues for the same launch in a given code-generation
mode. ``python -m gpusim.labs.sass_counts`` prints the table docs/codegen.md quotes.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.codegen.sass import dynamic_count, load_listing
from gpusim.programs.catalog import load_program, programs_dir

PROGRAMS = ("vecadd", "saxpy", "scale", "daxpy", "hash64", "strided_copy", "elementwise_chain",
            "elementwise_fused", "reduce_shared", "reduce_shfl", "histogram", "matmul_naive",
            "matmul_tiled", "transpose_naive", "transpose_padded", "stencil2d", "gemv", "gemm_batched",
            "divergence", "flops_per_byte", "pointer_chase")
"""Every shipped program with a TOML (each run: all its launches at its default sizes)."""


@dataclass
class CountRow:
    program: str
    kernel: str
    gpusim: int
    sass: float
    gpusim_vector: int = 0
    """Static count of 8- and 16-byte shared and global loads in the timed instruction stream."""
    sass_vector: int = 0
    """Static count of LDS.64/.128 and LDG.E.64/.128 in the SASS listing."""

    @property
    def error(self) -> float:
        """gpusim's count relative to SASS's, in % (negative: gpusim runs fewer instructions)."""
        return 100.0 * (self.gpusim - self.sass) / self.sass if self.sass else 0.0


def _line_counts(run) -> dict[int, int]:
    counts: dict[int, int] = {}
    for pc, line in enumerate(run.program.lines):
        counts[line] = counts.get(line, 0) + int(run.pc_counts[pc, 0])
    return counts


def _warps(run) -> int:
    blocks = 1
    for g in run.grid:
        blocks *= int(g)
    threads = 1
    for b in run.block:
        threads *= int(b)
    return blocks * -(-threads // 32)


def compare(program: str, codegen: str = "none", config: str = "h100-sxm") -> list[CountRow]:
    """One row per launch of ``program``: gpusim's count in ``codegen`` mode, SASS's estimate."""
    from gpusim.api.gpu import GPU
    from gpusim.programs.catalog import run_program

    spec = load_program(program)
    listing = load_listing(programs_dir() / "sass" / "sm_90" / f"{spec.ptx.stem}.sass")
    plain = run_program(spec, gpu=GPU(config, codegen="none"), timing=False)
    mode = plain if codegen == "none" else run_program(spec, gpu=GPU(config, codegen=codegen), timing=False)
    rows = []
    for run, timed in zip(plain.runs, mode.runs, strict=True):
        sass = dynamic_count(listing[run.program.name], _line_counts(run), _warps(run))
        rows.append(CountRow(program, run.program.name, int(timed.warp_instructions), sass,
                             vector_loads(timed.program), sass_vector_loads(listing[run.program.name])))
    return rows


def vector_loads(program) -> int:
    """8- and 16-byte shared and global loads (``ld.shared.v4.f32``, ``ld.global.f64`` ...) of ``program``."""
    from gpusim.arch import codes as c
    from gpusim.arch import layout as L

    code = program.code
    loads = (code[:, L.F_OP] == c.OP_LD) & ((code[:, L.F_SPACE] == L.SP_SHARED) | (code[:, L.F_SPACE] == L.SP_GLOBAL))
    return int(sum(int(row[L.F_VEC]) * int(row[L.F_SIZE]) in (8, 16) for row in code[loads]))


def sass_vector_loads(function) -> int:
    """LDS.64/.128 and LDG.E.64/.128 (any further modifiers) of a listing's function."""
    return sum(i.base in ("LDS", "LDG") and bool({"64", "128"} & set(i.opcode.split("."))) for i in function.instrs)


def table(codegen: str = "none", programs=PROGRAMS) -> list[CountRow]:
    rows = []
    for name in programs:
        rows.extend(compare(name, codegen))
    return rows


def format_table(rows: list[CountRow]) -> str:
    lines = [f"{'program':<18} {'kernel':<16} {'gpusim':>10} {'SASS':>10} {'error %':>8}"]
    for r in rows:
        lines.append(f"{r.program:<18} {r.kernel:<16} {r.gpusim:>10} {r.sass:>10.0f} {r.error:>+8.1f}")
    errors = sorted(abs(r.error) for r in rows)
    median = errors[len(errors) // 2] if len(errors) % 2 else sum(errors[len(errors) // 2 - 1:][:2]) / 2
    within = sum(e <= 10.0 for e in errors)
    lines.append(f"{within} of {len(rows)} runs within 10 %; median |error| {median:.1f} %")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    print(format_table(table(sys.argv[1] if len(sys.argv) > 1 else "none")))
