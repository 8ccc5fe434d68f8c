"""Registers without ptxas: the linear-scan allocation of the generated code (gpusim.ptx.regs,
gpusim.codegen.regalloc) against ``ptxas -v``, the launch bounds' cap and the spill code above it.

The reference counts (tests/data/ptxas_regs.json) are ``ptxas -arch=ARCH -v`` on every kernel of the
conformance corpus (tests/corpus, tests/corpus_llm, sm_90) and of the numba.cuda and Triton examples
(tests/data/frontend_ptx: numba sm_90, Triton sm_80), written by scripts/ptxas_reference.py; these tests
never run ptxas. The caps are computed here from the config's register file, allocation unit and
threads per block, by the rule ptxas documents for ``__launch_bounds__``.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.codegen.deps import reads, writes
from gpusim.codegen.regalloc import loop_spans, register_cap, target_for
from gpusim.codegen.schedule import LOAD_WINDOW
from gpusim.ptx.regs import STACK_POINTER, Range, linear_scan, live_intervals, pointer_operands, widths_of

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = json.loads((ROOT / "tests" / "data" / "ptxas_regs.json").read_text())
CONFIGS = {"sm_90": "h100-sxm", "sm_80": "a100"}


def _allocations() -> list[tuple[str, str, int, int, int | None]]:
    """(file, kernel, ptxas -v, gpusim's count, the launch bounds' cap) for every reference kernel."""
    gpus = {arch: gpusim.GPU(name) for arch, name in CONFIGS.items()}
    rows = []
    for rel, entry in sorted(REFERENCE.items()):
        gpu = gpus[entry["arch"]]
        module = gpu.load_ptx((ROOT / rel).read_text(), rel)      # load_ptx never runs ptxas
        for name, ptxas in sorted(entry["kernels"].items()):
            program = module[name].program
            cap, _ = register_cap(program.directives, gpu.config)
            rows.append((rel, name, ptxas, program.regs_estimate, cap))
    return rows


@pytest.fixture(scope="module")
def allocations():
    return _allocations()


def test_the_reference_covers_the_corpus_and_the_python_examples():
    corpus = {f"tests/corpus/{p.name}" for p in (ROOT / "tests" / "corpus").glob("*.ptx")}
    corpus |= {f"tests/corpus_llm/{p.name}" for p in (ROOT / "tests" / "corpus_llm").glob("*.ptx")}
    assert corpus <= set(REFERENCE), f"no ptxas reference for {sorted(corpus - set(REFERENCE))}"
    frontends = [rel for rel in REFERENCE if rel.startswith("tests/data/frontend_ptx/")]
    assert any("numba_" in rel for rel in frontends) and any("triton_" in rel for rel in frontends)


def test_counts_never_exceed_the_launch_bounds_cap(allocations):
    """A kernel with __launch_bounds__ never gets more registers than its cap (the 84-registers-refused
    failure of issue 27): above it, values spill."""
    capped = [(rel, name, ours, cap) for rel, name, _, ours, cap in allocations if cap is not None]
    assert len(capped) >= 8
    assert all(ours <= cap for _, _, ours, cap in capped), capped


def test_every_kernel_with_launch_bounds_within_15_percent(allocations):
    """Issue 27's target: every kernel with launch bounds (Triton's kernels carry .reqntid) within 15 % of
    ptxas -v."""
    bounded = [row for row in allocations if row[4] is not None]
    assert len(bounded) >= 15
    off = [row for row in bounded if abs(row[3] - row[2]) > 0.15 * row[2]]
    assert not off


def test_distribution_against_ptxas(allocations, capsys):
    errors = [(ours - ptxas) / ptxas for _, _, ptxas, ours, _ in allocations]
    size = [abs(e) for e in errors]
    within = sum(e <= 0.15 for e in size)
    with capsys.disabled():
        print(f"\nregisters vs ptxas -v on {len(errors)} kernels: {within} within 15 %, median |error| "
              f"{statistics.median(size):.0%}, worst {max(size):.0%}, mean signed {statistics.mean(errors):+.0%}")
    # a regression guard, not the target (the target is the xfail test below): the median error the
    # pressure-aware schedule and the allocation with live-range holes reach (12.5 %) may not grow past 17 %
    assert statistics.median(size) <= 0.17


@pytest.mark.xfail(strict=True, reason="issue 24's target is not met: 86 of 138 kernels within 15 % (median |error| "
                   "12.5 %); most misses are lower than ptxas, whose SASS unrolls some loops further (x16), "
                   "rewrites warp-uniform atomics (REDUX), adds BRA.DIV fallback paths to shuffles and spreads "
                   "values over more registers than a lowest-first allocation; see docs/kernels.md, 'Registers'")
def test_every_kernel_within_15_percent_of_ptxas(allocations):
    off = [row for row in allocations if abs(row[3] - row[2]) > 0.15 * row[2]]
    assert not off


def _cap_by_rule(config, threads: int, blocks: int) -> int:
    """ptxas's __launch_bounds__ rule, written out: the most registers per thread R for which ``blocks``
    blocks of ``threads`` threads fit the register file, a warp's registers rounded up to the unit."""
    warps = -(-threads // 32)
    best = 0
    for regs in range(1, config.max_registers_per_thread + 1):
        per_warp = -(-regs * 32 // config.register_allocation_unit) * config.register_allocation_unit
        if blocks * warps * per_warp <= config.registers_per_sm and warps * per_warp <= config.max_registers_per_block:
            best = regs
    return best


_HEADER = """.version 8.0
.target sm_90
.address_size 64
"""


@pytest.mark.parametrize("bounds, expected", [
    (".maxntid 1024, 1, 1\n.minnctapersm 2", lambda cfg: _cap_by_rule(cfg, 1024, 2)),
    (".maxntid 256, 1, 1\n.minnctapersm 3", lambda cfg: _cap_by_rule(cfg, 256, 3)),
    (".reqntid 128, 1, 1", lambda cfg: _cap_by_rule(cfg, 128, 1)),
    (".maxnreg 40", lambda cfg: 40),
    (".maxntid 1024, 1, 1\n.maxnreg 40", lambda cfg: min(40, _cap_by_rule(cfg, 1024, 1))),
])
def test_launch_bounds_cap(bounds, expected):
    gpu = gpusim.GPU("h100-sxm")
    text = _HEADER + f".visible .entry k(.param .u64 p)\n{bounds}\n{{\nret;\n}}\n"
    program = gpu.load_ptx(text)["k"].program
    cap, reason = register_cap(program.directives, gpu.config)
    assert cap == expected(gpu.config) and reason
    if ".minnctapersm 2" in bounds:
        assert cap == 32          # the example: __launch_bounds__(1024, 2) on a 64 K-register SM


N_VALUES = 24


def _pressure_ptx(bounds: str) -> str:
    """Each thread loads N_VALUES floats, sums them last-loaded first, stores the sum and then each value
    again (to ``copy``): the copies' stores may alias the sum's, so they stay after it, and every value
    stays live until the sum is done, however the loads and adds are scheduled."""
    loads = "\n".join(f"ld.global.f32 %f{i}, [%rd4+{4 * i}];" for i in range(N_VALUES))
    copies = "\n".join(f"st.global.f32 [%rd7+{4 * i}], %f{i};" for i in range(N_VALUES))
    chain = [f"add.f32 %f{N_VALUES}, %f{N_VALUES - 1}, %f{N_VALUES - 2};"]
    chain += [f"add.f32 %f{N_VALUES}, %f{N_VALUES}, %f{i};" for i in range(N_VALUES - 3, -1, -1)]
    return _HEADER + f""".visible .entry pressure(.param .u64 src, .param .u64 dst, .param .u64 copy)
{bounds}
{{
.reg .b32 %r<2>;
.reg .f32 %f<{N_VALUES + 1}>;
.reg .b64 %rd<9>;
mov.u32 %r1, %tid.x;
ld.param.u64 %rd1, [src];
ld.param.u64 %rd2, [dst];
mul.wide.u32 %rd3, %r1, {4 * N_VALUES};
add.s64 %rd4, %rd1, %rd3;
{loads}
{chain[0]}
{chr(10).join(chain[1:])}
mul.wide.u32 %rd5, %r1, 4;
add.s64 %rd6, %rd2, %rd5;
st.global.f32 [%rd6], %f{N_VALUES};
ld.param.u64 %rd8, [copy];
add.s64 %rd7, %rd8, %rd3;
{copies}
ret;
}}
"""


@pytest.mark.parametrize("timing", [False, True])
def test_above_the_cap_values_spill_to_local_memory_and_are_timed(timing):
    threads = 64
    x = np.random.default_rng(3).standard_normal((threads, N_VALUES)).astype(np.float32)
    expected = x.astype(np.float64).sum(axis=1)
    bound = 4 * np.abs(x).astype(np.float64).sum(axis=1) * N_VALUES * 2.0 ** -24   # gamma_k * sum |x|
    results = {}
    for bounds in ("", ".maxnreg 16"):
        gpu = gpusim.GPU("h100-sxm", sms=1)
        kernel = gpu.load_ptx(_pressure_ptx(bounds))["pressure"]
        src, dst, copy = gpu.to_device(x), gpu.zeros(threads, np.float32), gpu.zeros(x.shape, np.float32)
        run = gpu.launch(kernel, 1, threads, [src, dst, copy], timing=timing)
        assert np.all(np.abs(dst.get() - expected) <= bound)
        assert np.array_equal(copy.get(), x)
        results[bounds] = (kernel, run)
    free_kernel, free_run = results[""]
    capped_kernel, capped_run = results[".maxnreg 16"]
    assert free_kernel.program.regs_estimate > 16 + 2     # the values need more than the cap allows
    assert capped_run.regs_per_thread <= 16 and capped_run.regs_per_thread == capped_kernel.program.regs_estimate
    assert capped_kernel.program.local_bytes > free_kernel.program.local_bytes
    assert any(note.startswith("regalloc:") for note in capped_kernel.program.codegen_notes)
    texts = capped_kernel.program.texts
    assert any(t.startswith("st.local (spill") for t in texts) and any(t.startswith("ld.local (spill") for t in texts)
    if timing:
        ld, st = ("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum")
        assert free_run.metrics[ld] == 0 and free_run.metrics[st] == 0
        assert capped_run.metrics[ld] > 0 and capped_run.metrics[st] > 0


def test_a_ptxas_count_turns_the_spill_code_off(tmp_path):
    """Registers from a '// gpusim: regs=' line (ptxas's own count) are ptxas's, spills included: no spill code."""
    path = tmp_path / "pressure.ptx"
    path.write_text("// gpusim: regs=16 kernel=pressure\n" + _pressure_ptx(".maxnreg 16"))
    kernel = gpusim.GPU("h100-sxm").load(path)["pressure"]
    assert not any(t.startswith(("st.local (spill", "ld.local (spill")) for t in kernel.program.texts)
    assert kernel.registers_per_thread() == (16, "'// gpusim: regs=' line in the PTX")


SASS = ROOT / "tests" / "data" / "regalloc_sass"


def _sass_function(listing: str, name: str) -> list[str]:
    """The instructions of one function of an nvdisasm listing, e.g. ['LDC.64 R4, c[0x0][0x210]', ...]."""
    text = (SASS / listing).read_text()
    body = text.split(f".text.{name}:", 1)[1].split(".section", 1)[0]
    return re.findall(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", body)


def _program(rel: str, kernel: str, gpu: str = "h100-sxm"):
    return gpusim.GPU(gpu).load_ptx((ROOT / rel).read_text(), rel)[kernel].program


def test_a_pointer_that_imad_wide_adds_takes_a_register_pair():
    """ptxas's SASS: IMAD.WIDE takes its 64-bit addend from a register pair, loaded by LDC.64 from the
    parameter's constant-bank slot (c[0x0][0x210] on); where ptxas uses LEA instead, the pointer stays in a
    uniform register (ULDC.64) and takes no general register. gpusim's allocation does the same."""
    sass = _sass_function("gaussian.sass", "gauss_fan2")
    loaded = {m.group(1) for line in sass if (m := re.match(r"LDC\.64 (R\d+), c\[0x0\]\[0x2[1-9a-f][0-9a-f]\]", line))}
    addends = {line.split(", ")[-1] for line in sass if line.startswith("IMAD.WIDE ")}
    assert len(loaded & addends) >= 2
    program = _program("tests/corpus/gaussian.ptx", "gauss_fan2")
    widths = widths_of(program.reg_names, dict(zip(program.reg_names, program.reg_types, strict=True)))
    pointers = {program.reg_names[r] for r in pointer_operands(program.code, widths)}
    assert {"%rd1", "%rd2"} <= pointers      # gauss_fan2's params 0 and 1, each the base of an IMAD.WIDE
    ranges = live_intervals(program.code, widths)
    assert all(program.reg_names.index(name) in ranges for name in ("%rd1", "%rd2"))

    numba = _sass_function("numba_map_add10.sass", re.search(
        r"\.text\.(\S+):", (SASS / "numba_map_add10.sass").read_text()).group(1))
    assert not any(line.startswith("IMAD.WIDE") for line in numba) and any("ULDC.64" in line for line in numba)
    rel = "tests/data/frontend_ptx/numba_map_add10.ptx"
    module = gpusim.GPU("h100-sxm").load_ptx((ROOT / rel).read_text(), rel)
    program = module[next(iter(module.kernels))].program
    widths = widths_of(program.reg_names, dict(zip(program.reg_names, program.reg_types, strict=True)))
    assert not pointer_operands(program.code, widths)


def _two_loops_ptx(bounds: str) -> str:
    """Loop 1 sums a[i]; loop 2 adds the sum to w[i]. Both loops are kept rolled (nounroll; loop 2 adds
    with red, an atomic), and the pointer ``w`` is loaded with the other parameters, before loop 1."""
    return _HEADER + f""".visible .entry two_loops(.param .u64 a, .param .u64 w, .param .u32 n)
{bounds}
{{
.reg .pred %p<3>;
.reg .f32 %f<4>;
.reg .b32 %r<4>;
.reg .b64 %rd<9>;
ld.param.u64 %rd1, [a];
ld.param.u64 %rd2, [w];
ld.param.u32 %r1, [n];
cvta.to.global.u64 %rd3, %rd1;
cvta.to.global.u64 %rd4, %rd2;
mov.u32 %r2, %tid.x;
mov.f32 %f1, 0f00000000;
LOOP1:
.pragma "nounroll";
mul.wide.s32 %rd5, %r2, 4;
add.s64 %rd6, %rd3, %rd5;
ld.global.f32 %f2, [%rd6];
add.f32 %f1, %f1, %f2;
add.s32 %r2, %r2, 32;
setp.lt.s32 %p1, %r2, %r1;
@%p1 bra LOOP1;
mov.u32 %r3, %tid.x;
LOOP2:
.pragma "nounroll";
mul.wide.s32 %rd7, %r3, 4;
add.s64 %rd8, %rd4, %rd7;
red.global.add.f32 [%rd8], %f1;
add.s32 %r3, %r3, 32;
setp.lt.s32 %p2, %r3, %r1;
@%p2 bra LOOP2;
ret;
}}
"""


@pytest.mark.parametrize(("bounds", "expected"), [(".maxnreg 10", 9), (".maxnreg 11", 9), ("", 12)])
def test_a_parameter_is_reloaded_after_a_loop_that_does_not_read_it(bounds, expected):
    """ptxas -arch=sm_90 on this kernel (no bounds) loads w with ``LDC.64 R4, c[0x0][0x218]`` just before
    loop 2, into the pair that held a in loop 1, rather than keep it from the start. The count by hand:
    each loop holds one pointer pair (a, then w: each the addend of its IMAD.WIDE), the address pair (the
    loaded value takes its place), the index and the sum: R0 (index), R2:R3, R4:R5, R6 (sum) around R1,
    the stack pointer: 6 + 1 + 2 = 9. Holding w through loop 1 as well puts it in R8:R9: 9 + 1 + 2 = 12.
    Under a cap of 10 or 11 (above 9, below 12) registers are short and w is reloaded: 9, no spills;
    without bounds the 32-register target is far and w stays in its pair: 12."""
    program = gpusim.GPU("h100-sxm").load_ptx(_two_loops_ptx(bounds), "two_loops.ptx")["two_loops"].program
    assert program.regs_estimate == expected
    assert not any(note.startswith("regalloc:") and "spilled" in note for note in program.codegen_notes)


def test_live_ranges_with_holes_share_a_register():
    """A value live in two loops and not between them leaves its register to a value of the gap."""
    def points(*spans):            # pcs lo..hi inclusive, both points of each pc
        return sum(((1 << (2 * hi + 2)) - 1) >> (2 * lo) << (2 * lo) for lo, hi in spans)

    widths = [1, 1, 1]
    ranges = {0: Range(0, 10, points((0, 2), (8, 10))), 1: Range(3, 7, points((3, 7))),
              2: Range(0, 10, points((0, 10)))}
    top, spilled = linear_scan(ranges, widths)
    assert (top, spilled) == (STACK_POINTER + 2, [])      # R0 for 0 and 1, R2 for 2 (R1: stack pointer)
    solid = {r: Range(lo, hi, points((lo, hi))) for r, (lo, hi, _) in ranges.items()}
    assert linear_scan(solid, widths)[0] == STACK_POINTER + 3


LANES = 16      # float4 loads, each thread summing all 64 floats in load order


def _float4_sum_ptx(bounds: str) -> str:
    loads = "\n".join(f"ld.global.v4.f32 {{%f{4 * i}, %f{4 * i + 1}, %f{4 * i + 2}, %f{4 * i + 3}}}, [%rd4+{16 * i}];"
                      for i in range(LANES))
    adds = "\n".join(f"add.f32 %f{4 * LANES}, %f{4 * LANES}, %f{i};" for i in range(1, 4 * LANES))
    return _HEADER + f""".visible .entry sum4(.param .u64 src, .param .u64 dst)
{bounds}
{{
.reg .b32 %r<2>;
.reg .f32 %f<{4 * LANES + 1}>;
.reg .b64 %rd<8>;
mov.u32 %r1, %tid.x;
ld.param.u64 %rd1, [src];
ld.param.u64 %rd2, [dst];
mul.wide.u32 %rd3, %r1, {16 * LANES};
add.s64 %rd4, %rd1, %rd3;
{loads}
mov.f32 %f{4 * LANES}, %f0;
{adds}
mul.wide.u32 %rd5, %r1, 4;
add.s64 %rd6, %rd2, %rd5;
st.global.f32 [%rd6], %f{4 * LANES};
ret;
}}
"""


@pytest.mark.parametrize("bounds", ["", ".maxnreg 24"])
def test_the_schedule_keeps_values_within_the_register_target(bounds):
    """Sixteen float4 loads (64 values) hoisted ahead of their adds would need more than 64 registers (69 in
    gpusim's pressure-blind schedule); ptxas's scheduler keeps the kernel near full occupancy's count
    (registers per SM over the most resident threads: 32 on H100; ``ptxas -arch=sm_90 -v`` gives this
    kernel 34 and no spill) or under its launch bounds' cap (24, where ptxas spills 16 bytes), issuing
    loads as registers free up. gpusim schedules to the same budget."""
    threads = 32
    gpu = gpusim.GPU("h100-sxm", sms=1)
    config = gpu.config
    target = config.registers_per_sm // (config.max_warps_per_sm * 32)
    if bounds:
        target = min(target, 24)
    kernel = gpu.load_ptx(_float4_sum_ptx(bounds))["sum4"]
    assert kernel.program.regs_estimate <= target
    if not bounds:
        assert not any("spilled" in note for note in kernel.program.codegen_notes)
    x = np.random.default_rng(5).standard_normal((threads, 4 * LANES)).astype(np.float32)
    expected = x[:, 0].copy()
    for i in range(1, 4 * LANES):          # the adds' order is fixed by their dependences: float32, in order
        expected = (expected + x[:, i]).astype(np.float32)
    src, dst = gpu.to_device(x), gpu.zeros(threads, np.float32)
    gpu.launch(kernel, 1, threads, [src, dst])
    assert np.array_equal(dst.get(), expected)


_TRITON_FP32 = "tests/data/frontend_ptx/triton_matmul_kernel_fp32_fp32_fp32_i32_i32_i32_i32_i32_i32.ptx"


def _most_loaded_values_unread(steps) -> int:
    """The most 32-bit values that loads have written and nothing has read yet, over ``steps``: (registers
    written by a load, registers read, registers written otherwise) per instruction in order."""
    unread: set = set()
    most = 0
    for loaded, read, written in steps:
        unread -= set(read) | set(written)
        unread |= set(loaded)
        most = max(most, len(unread))
    return most


def _sass_steps(lines: list[str]):
    for line in lines:
        if line.startswith("@"):
            line = line.split(None, 1)[1]
        op, _, operands = line.partition(" ")
        regs = [int(r) for r in re.findall(r"\bR(\d+)\b", operands)]
        if op.startswith("LDS"):
            width = 4 if ".128" in op else 2 if ".64" in op else 1
            yield [regs[0] + k for k in range(width)], regs[1:], []
        elif op.split(".")[0] in ("STS", "STG", "BAR", "BRA") or not regs:
            yield [], regs, []
        else:
            yield [], regs[1:], regs[:1]


def test_the_load_window_counts_loaded_values_as_ptxas_does():
    """Triton's fp32 matmul (8 accumulators, 32 k steps a tile) loads its operands with 32 LDS.128 and 32
    LDS.64 a trip. ptxas's SASS keeps a few of them ahead of the FFMAs that read them (about 24 values
    unread at most) and 56 registers; counting each vector load as one load let gpusim's schedule keep 16
    loads, 48 values and more, ahead (79 registers). The window counts values: gpusim's loop keeps no more
    unread than the SASS's and the count lands within 15 % of ptxas's."""
    sass = _sass_function(Path(_TRITON_FP32).with_suffix(".sass").name, "matmul_kernel")
    start = next(k for k, line in enumerate(sass) if line.startswith("LDS"))
    sass_most = _most_loaded_values_unread(_sass_steps(sass[start:]))
    assert 16 <= sass_most <= 32
    program = _program(_TRITON_FP32, "matmul_kernel", "a100")
    code = program.code
    first, last = max(loop_spans(code), key=lambda span: span[1] - span[0])
    steps = []
    for pc in range(first, last + 1):
        written, read = sorted(writes(code[pc])), sorted(reads(code[pc]))
        if code[pc, L.F_OP] == c.OP_LD and code[pc, L.F_SPACE] == L.SP_SHARED:
            steps.append((written, read, []))
        else:
            steps.append(([], read, written))
    ours = _most_loaded_values_unread(steps)
    assert ours <= sass_most
    assert ours >= LOAD_WINDOW
    assert abs(program.regs_estimate - 56) <= 0.15 * 56


def test_a_schedule_keeps_room_for_the_widest_operand():
    """tests/corpus/matmul_tiled's unrolled inner product: 16 one-value LDS of B's column and 4 LDS.128 of
    A's row feed 16 FFMAs. ptxas fits it in its 32-register target (ptxas -v: 32). Scheduling for latency
    until the budget was full left no room for an LDS.128 (peak 33 against 29) and the kernel fell back to
    the latency schedule (45); keeping room for the widest operand fits the target."""
    program = _program("tests/corpus/matmul_tiled.ptx", "matmul_tiled")
    target = target_for(program.directives, gpusim.GPU("h100-sxm").config)
    assert REFERENCE["tests/corpus/matmul_tiled.ptx"]["kernels"]["matmul_tiled"] == target == 32
    assert program.regs_estimate <= target
    assert abs(program.regs_estimate - 32) <= 0.15 * 32


def test_bounds_checked_loads_are_guarded_as_in_the_sass():
    """reduce5 reads in[i] and in[i + 128] under `if (i < n)`: ptxas's SASS guards both LDGs (and the LDC.64
    and IMAD.WIDE of their addresses) instead of branching, so both are in flight at once (16 registers).
    The cvta.to.global in each body no longer stops the conversion."""
    sass = _sass_function("reduction.sass", "reduce5")
    ldg = [line for line in sass if re.match(r"(@!?P\d )?LDG", line)]
    assert len(ldg) == 2 and all(line.startswith("@") for line in ldg)
    program = _program("tests/corpus/reduction.ptx", "reduce5")
    code = program.code
    loads = [pc for pc in range(program.n_inst) if code[pc, L.F_OP] == c.OP_LD and code[pc, L.F_SPACE] == L.SP_GLOBAL]
    assert len(loads) == 2 and all(code[pc, L.F_GUARD] >= 0 for pc in loads)
    assert not any(code[pc, L.F_OP] == c.OP_BRA for pc in range(loads[-1]))
    assert abs(program.regs_estimate - 16) <= 0.15 * 16
