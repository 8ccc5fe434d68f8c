"""The code-generation stage (gpusim.codegen): same results as the PTX as written, the SASS instruction
stream's size and order (checked against the committed ptxas listings), and what its scheduling buys."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpusim import GPU
from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.codegen import generate
from gpusim.codegen.regalloc import loop_spans
from gpusim.codegen.sass import dynamic_count, fixed_latency_pairs, load_listing, parse_listing
from gpusim.errors import ConfigError
from gpusim.labs.sass_counts import PROGRAMS, compare
from gpusim.programs.catalog import load_program, programs_dir, run_program
from scripts.doc_measure import matmul_cycles, stream_cycles

SASS = programs_dir() / "sass" / "sm_90"
_HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n"
CLOCK_OUTPUTS = {("pointer_chase", "elapsed_cycles")}    # clock64() differences: timing, not results


def _kernel_program(name: str, kernel: str | None = None, mode: str = "ptxas", config: str = "h100-sxm"):
    module = GPU(config, codegen=mode).load(str(load_program(name).ptx))
    return module[kernel or list(module.kernels)[0]].program


# ------------------------------------------------------------------ functional identity


@pytest.mark.parametrize("name", PROGRAMS)
def test_every_program_gives_the_same_results_in_both_modes(name):
    spec = load_program(name)
    plain = run_program(spec, gpu=GPU("h100-sxm", codegen="none"), timing=False)
    made = run_program(spec, gpu=GPU("h100-sxm", codegen="ptxas"), timing=False)
    assert plain.ok and made.ok
    for array in plain.arrays:
        if (name, array) not in CLOCK_OUTPUTS:
            np.testing.assert_array_equal(made.arrays[array], plain.arrays[array], err_msg=f"{name}: {array}")
    assert all(run.program.codegen == "ptxas" for run in made.runs)


@pytest.mark.parametrize("name", ["reduce_shared", "histogram", "matmul_tiled", "gemv", "transpose_padded"])
def test_timed_runs_give_the_same_results_in_both_modes(name):
    spec = load_program(name)
    plain = run_program(spec, gpu=GPU("h100-sxm", sms=4, codegen="none"))
    made = run_program(spec, gpu=GPU("h100-sxm", sms=4, codegen="ptxas"))
    for array in plain.arrays:
        np.testing.assert_array_equal(made.arrays[array], plain.arrays[array])


@pytest.mark.parametrize("cols", [1, 31, 32, 33, 100, 383, 384, 385, 511, 512, 513, 1000, 2049])
def test_unrolled_gemv_is_exact_for_every_trip_count(cols):
    """The x4 unrolled loop, its entry check and the remainder loop agree with the PTX for every column count
    (trips per lane 0..64, around the 16-column boundaries)."""
    sizes = {"rows": 6, "cols": cols, "threads": 64}
    plain = run_program("gemv", gpu=GPU("h100-sxm", codegen="none"), timing=False, sizes=sizes)
    made = run_program("gemv", gpu=GPU("h100-sxm", codegen="ptxas"), timing=False, sizes=sizes)
    assert made.ok
    np.testing.assert_array_equal(made.arrays["y"], plain.arrays["y"])


def test_mode_is_checked_and_none_is_the_ptx_as_written():
    with pytest.raises(ConfigError, match="codegen must be one of 'ptxas', 'none'"):
        GPU("h100-sxm", codegen="nvcc")
    program = _kernel_program("vecadd", mode="none")
    assert program.codegen == "none" and program.origin is None
    assert generate(program, GPU("h100-sxm").config, "none") is program


# ------------------------------------------------------------------ the listings


def test_control_bits_decode_as_jia_et_al_describe():
    """vecadd's ISETP before `@P0 EXIT`: second word 0x000fda000bf06270 -> stall 13 (bits 41-44), yield 0,
    no write/read barrier (7), wait mask 0 (hand-decoded)."""
    isetp = next(i for i in load_listing(SASS / "vecadd.sass")["vecadd"].instrs if i.base == "ISETP")
    assert isetp.hi == 0x000FDA000BF06270
    assert (isetp.stall, isetp.yield_flag, isetp.write_barrier, isetp.read_barrier, isetp.wait_mask) == \
        (13, 0, 7, 7, 0)


def test_a_predicate_from_isetp_waits_13_cycles_in_every_listing():
    """ptxas control bits, sm_90: the stall counts between an ISETP and the first instruction it guards add
    up to at least 13 in every pair (more where ptxas has other work to put in between)."""
    pairs = []
    for path in sorted(SASS.glob("*.sass")):
        for func in load_listing(path).values():
            pairs += fixed_latency_pairs(func, "ISETP")
    assert len(pairs) > 40
    assert min(pairs) == 13
    assert sum(p == 13 for p in pairs) > len(pairs) // 2


def test_the_dynamic_count_of_vecadd_by_hand():
    """vecadd, n = 5000, 256 threads: 20 blocks, 160 warps; ceil(5000 / 32) = 157 warps have a thread in
    range. The listing: 8 instructions up to `@P0 EXIT` (every warp), 12 after it (157 warps)."""
    spec = load_program("vecadd")
    func = load_listing(SASS / "vecadd.sass")["vecadd"]
    assert [b.size for b in func.blocks] == [8, 12]
    run = run_program(spec, gpu=GPU("h100-sxm", codegen="none"), timing=False).runs[0]
    counts: dict[int, int] = {}
    for pc, line in enumerate(run.program.lines):
        counts[line] = counts.get(line, 0) + int(run.pc_counts[pc, 0])
    assert dynamic_count(func, counts, 160) == pytest.approx(160 * 8 + 157 * 12, abs=0.5)


def test_parse_listing_blocks_and_loops():
    text = """\t.section\t.text.k,"ax",@progbits
        /*0000*/                   MOV R1, RZ ;      /* 0x000000ff00017202 */
                                                     /* 0x000fe20000000f00 */
.L_x_0:
        /*0010*/                   IADD3 R1, R1, 0x1, RZ ;  /* 0x0000000101017810 */
                                                     /* 0x000fca0007ffe0ff */
        /*0020*/                   ISETP.NE.AND P0, PT, R1, 0x4, PT ; /* 0x000000040100780c */
                                                     /* 0x000fda0003f05270 */
        /*0030*/               @P0 BRA `(.L_x_0) ;   /* 0xfffffffc00f00947 */
                                                     /* 0x000fea000383ffff */
        /*0040*/                   EXIT ;            /* 0x000000000000794d */
                                                     /* 0x000fea0003800000 */
"""
    func = parse_listing(text)["k"]
    assert [b.size for b in func.blocks] == [1, 3, 1]
    assert func.loops() == [(1, 1)]
    assert func.blocks[1].instrs[-1].guard == "P0"
    assert func.blocks[1].instrs[1].stall == 13


def test_dynamic_counts_land_on_the_sass_counts():
    """Issue 11's target: >= 14 of the runs within 10 % of the SASS dynamic count, median |error| <= 5 %;
    the PTX as written is further off (the baseline the issue measured)."""
    made, plain = [], []
    for name in PROGRAMS:
        rows = compare(name, "ptxas")
        made += [abs(r.error) for r in rows]
        plain += [abs(r.error) for r in compare(name, "none")]
    assert sum(e <= 10 for e in made) >= 14
    assert float(np.median(made)) <= 5.0
    assert sum(e <= 10 for e in plain) < sum(e <= 10 for e in made)
    assert float(np.median(plain)) > float(np.median(made))


def test_the_unrolled_gemv_loop_matches_the_sass_loop():
    """ptxas's main gemv loop: 32 LDGs, 16 FFMAs, 16 loads before the first FFMA. The stage's: the same
    loads and FMAs, and as many loads issued before the first FMA."""
    func = load_listing(SASS / "gemv.sass")["gemv"]
    head, latch = max(func.loops(), key=lambda hl: sum(i.base == "LDG" for i in func.loop_body(*hl)))
    sass_body = func.loop_body(head, latch)
    sass_loads = sum(i.base == "LDG" for i in sass_body)
    sass_before = next(k for k, i in enumerate(sass_body) if i.base == "FFMA")
    program = _kernel_program("gemv")
    code = program.code
    loops = [(int(code[pc, L.F_TARGET]), pc) for pc in range(program.n_inst)
             if code[pc, L.F_OP] == c.OP_BRA and code[pc, L.F_TARGET] <= pc]
    start, end = max(loops, key=lambda se: sum(code[p, L.F_OP] == c.OP_LD for p in range(se[0], se[1])))
    body = range(start, end + 1)
    loads = [p for p in body if code[p, L.F_OP] == c.OP_LD]
    fmas = [p for p in body if code[p, L.F_OP] == c.OP_FMA]
    assert (len(loads), len(fmas)) == (sass_loads, sum(i.base == "FFMA" for i in sass_body)) == (32, 16)
    assert sum(p < fmas[0] for p in loads) == sass_before == 16
    # the copies' pointer steps fold into offsets: one add per pointer, as SASS's one IADD3 pair
    adds64 = [p for p in body if code[p, L.F_OP] == c.OP_ADD and code[p, L.F_TY] in (c.T_S64, c.T_U64)]
    assert len(adds64) == 2


def test_nounroll_loops_stay_rolled():
    """matmul_naive's loop carries .pragma "nounroll": one loop, its PTX body size, as in its SASS."""
    plain = _kernel_program("matmul_naive", mode="none")
    made = _kernel_program("matmul_naive")
    back = [pc for pc in range(made.n_inst)
            if made.code[pc, L.F_OP] == c.OP_BRA and made.code[pc, L.F_TARGET] <= pc]
    assert len(back) == 1
    assert "unroll: 0 counted loops unrolled x4" in made.codegen_notes
    assert sum(plain.code[:, L.F_OP] == c.OP_LD) == sum(made.code[:, L.F_OP] == c.OP_LD)


STORES = Path(__file__).resolve().parent / "data" / "unroll_stores"


def _memory_ops(rows) -> tuple[int, int, int]:
    """(global loads, global stores, shared stores) among ``rows``."""
    op, space = rows[:, L.F_OP], rows[:, L.F_SPACE]
    return (int(np.sum((op == c.OP_LD) & (space == L.SP_GLOBAL))),
            int(np.sum((op == c.OP_ST) & (space == L.SP_GLOBAL))),
            int(np.sum((op == c.OP_ST) & (space == L.SP_SHARED))))


@pytest.mark.parametrize("kernel", ["indexed_load_sum", "indexed_load_indexed_store", "indexed_read_modify_write",
                                    "pointer_load_indexed_store", "indexed_load_pointer_store",
                                    "pointer_load_pointer_store", "indexed_load_indexed_shared_store"])
def test_loops_with_recomputed_store_addresses_stay_rolled(kernel):
    """ptxas unrolls a counted loop x4 unless a global store in it takes an address recomputed from the
    counter each trip (tests/data/unroll_stores: the hand-written loops and ptxas's SASS of them). The
    stage's busiest loop has the global loads, global stores and shared stores of the SASS's: one trip's
    where ptxas keeps the loop rolled, four trips' where it unrolls."""
    func = load_listing(STORES / "stores.sm_90.sass")[kernel]
    counted = ("LDG", "STG", "STS")
    head, latch = max(func.loops(), key=lambda hl: sum(i.base in counted for i in func.loop_body(*hl)))
    sass = tuple(sum(i.base == base for i in func.loop_body(head, latch)) for base in counted)
    path = STORES / "stores.ptx"
    program = GPU("h100-sxm").load_ptx(path.read_text(), str(path))[kernel].program
    code = program.code
    ours = max((_memory_ops(code[start:end + 1]) for start, end in loop_spans(code)), key=sum)
    assert ours == sass
    # from the PTX: these three store to global through an address made by mul.wide.s32 + add.s64 of i
    rolled = kernel in ("indexed_load_indexed_store", "indexed_read_modify_write", "pointer_load_indexed_store")
    assert sum(sass) in ((2, 3) if rolled else (4, 8))     # one trip's accesses, or four trips' of one or two
    assert any("kept rolled" in note for note in program.codegen_notes) == rolled


def test_if_conversion_guards_the_tree_step_as_ptxas_does():
    """reduce_shared's `if (tid < s)` body: ptxas's SASS runs its LDS, FADD and STS as @!P1 instructions;
    its bounds-checked load `if (i < n) x = in[i]` (cvta.to.global, mul.wide, add, ld.global) is an @!P0
    LDG; the `if (tid == 0)` store before the return keeps its branch (@P0 EXIT)."""
    listing = load_listing(SASS / "reduce_shared.sass")["reduce_shared"].instrs
    assert len([i for i in listing if i.base in ("LDS", "STS", "FADD") and i.guard]) == 4
    assert [i.base for i in listing if i.base in ("LDG", "STG") and i.guard] == ["LDG"]
    made = _kernel_program("reduce_shared")
    guarded = [pc for pc in range(made.n_inst) if made.code[pc, L.F_GUARD] >= 0 and
               made.code[pc, L.F_OP] in (c.OP_LD, c.OP_ST, c.OP_ADD) and made.code[pc, L.F_SPACE] != L.SP_GLOBAL]
    assert len(guarded) >= 4
    memory = [(int(made.code[pc, L.F_OP]), made.code[pc, L.F_GUARD] >= 0) for pc in range(made.n_inst)
              if made.code[pc, L.F_SPACE] == L.SP_GLOBAL and made.code[pc, L.F_OP] in (c.OP_LD, c.OP_ST)]
    assert memory == [(c.OP_LD, True), (c.OP_ST, False)]
    assert not any(made.code[pc, L.F_OP] == c.OP_CVTA for pc in range(made.n_inst))
    plain = _kernel_program("reduce_shared", mode="none")
    bras = lambda p: int(sum(p.code[:, L.F_OP] == c.OP_BRA))   # noqa: E731
    assert bras(made) == bras(plain) - 2


# ------------------------------------------------------------------ scheduling rules


_RULES = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb)
{
    .reg .b64 %rd<4>;
    .reg .f32 %f<8>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.global.f32 %f1, [%rd1];
    add.f32 %f2, %f1, 0f3F800000;
    st.global.f32 [%rd2], %f2;
    ld.global.f32 %f3, [%rd1+4];
    ld.global.f32 %f4, [%rd2+64];
    add.f32 %f5, %f3, %f4;
    bar.sync 0;
    ld.shared.f32 %f6, [0];
    add.f32 %f7, %f6, %f5;
    st.global.f32 [%rd1+8], %f7;
    ret;
}
"""


def test_stores_keep_their_order_with_aliasing_accesses_and_nothing_crosses_a_barrier():
    gpu = GPU("h100-sxm", codegen="ptxas")
    program = gpu.load_ptx(_RULES, "rules.ptx")["k"].program
    lines = program.lines                 # PTX lines: 13 st [%rd2], 14 ld [%rd1+4], 15 ld [%rd2+64], 17 bar
    store = lines.index(13)
    assert lines.index(14) > store        # through another pointer: may alias, stays after the store
    assert lines.index(15) < store        # off the same base, disjoint bytes: loads go first
    barrier = lines.index(17)
    assert all((pc < barrier) == (line < 17) for pc, line in enumerate(lines))
    moved = _RULES.replace("st.global.f32 [%rd2], %f2;", "st.global.f32 [%rd1+64], %f2;")
    lines = gpu.load_ptx(moved, "rules2.ptx")["k"].program.lines
    assert lines.index(14) < lines.index(13) < lines.index(15)


def test_source_view_attributes_scheduled_instructions_to_their_ptx_lines():
    spec = load_program("vecadd")
    made = run_program(spec, gpu=GPU("h100-sxm", codegen="ptxas"), timing=False).runs[0]
    rows = made.source_view().by_ptx_line()
    by_line = {row.ptx_line: row for row in rows}
    loads = [pc for pc in range(made.program.n_inst) if made.program.code[pc, L.F_OP] == c.OP_LD and
             made.program.code[pc, L.F_SPACE] == L.SP_GLOBAL]
    for pc in loads:
        line = made.program.lines[pc]
        assert "ld.global" in made.program.texts[pc] and by_line[line].warp_inst == 157
        assert by_line[line].source.startswith("vecadd.cu:")


def test_report_and_json_say_which_code_generation_ran():
    for mode, words in (("ptxas", "ptxas-like"), ("none", "program order")):
        run = run_program("vecadd", gpu=GPU("h100-sxm", sms=2, codegen=mode)).runs[0]
        assert "code generation: " in run.report() and words in run.report()
        assert run.to_dict()["codegen"] == mode


# ------------------------------------------------------------------ what scheduling buys


def _gemv_cycles(path, mode: str, cols: int, warps: int) -> int:
    gpu = GPU("h100-sxm", sms=2, codegen=mode)
    kernel = list(gpu.load(path))[0]
    rows = 2 * warps
    rng = np.random.default_rng(1)
    a = rng.random((rows, cols), dtype=np.float32)
    x = rng.random(cols, dtype=np.float32)
    y = gpu.zeros(rows)
    run = gpu.launch(kernel, grid=2, block=32 * warps, args=[gpu.to_device(a), gpu.to_device(x), y, rows, cols])
    np.testing.assert_allclose(y.get(), a.astype(np.float64) @ x, rtol=1e-4)
    return int(run.cycles)


def test_gemv_times_like_its_sass_order_variant():
    """Issue 11's target: gemv with 4096 columns at 1 warp per SM within 1.25x of the same kernel written in
    ptxas's SASS order (programs/codegen/gemv_sass_order.ptx, run as written); the PTX as written is several
    times slower (each x4 trip waits for its own loads)."""
    original = programs_dir() / "gemv.ptx"
    variant = programs_dir() / "codegen" / "gemv_sass_order.ptx"
    sass_order = _gemv_cycles(variant, "none", 4096, 1)
    made = _gemv_cycles(original, "ptxas", 4096, 1)
    plain = _gemv_cycles(original, "none", 4096, 1)
    assert 1 / 1.25 <= made / sass_order <= 1.25
    assert plain / sass_order > 4


def test_streaming_loop_times_like_its_sass_order_variant():
    """The streaming loop (programs/labs/stream_loads.ptx, stream_loads_v1: 4 loads, then 4 adds, per
    iteration). ptxas's SASS (programs/sass/sm_90/labs/stream_loads.sass) peels the first iteration, unrolls
    the loop 4 times with all 16 LDGs ahead of the FADDs, and ends with x2 and x1 tails; the variant
    (programs/codegen/stream_loads_sass_order.ptx) is that, hand-written, run as written. With 17
    iterations (the peel and 4 trips in SASS; 4 trips and one remainder iteration in the stage, which does not
    peel), codegen="ptxas" lands within 1.25x of it at 1, 8 and 32 warps; the PTX as written, with 4 loads in
    flight per warp instead of 16, is over 2x slower while the warps are too few to cover the latency."""
    original = programs_dir() / "labs" / "stream_loads.ptx"
    variant = programs_dir() / "codegen" / "stream_loads_sass_order.ptx"
    func = load_listing(SASS / "labs" / "stream_loads.sass")["stream_loads_v1"]
    head, latch = max(func.loops(), key=lambda hl: sum(i.base == "LDG" for i in func.loop_body(*hl)))
    assert sum(i.base == "LDG" for i in func.loop_body(head, latch)) == 16
    for warps in (1, 8, 32):
        sass_order = stream_cycles(variant, "none", warps, 17)
        made = stream_cycles(original, "ptxas", warps, 17)
        assert 1 / 1.25 <= made / sass_order <= 1.25, warps
        if warps == 1:
            assert stream_cycles(original, "none", warps, 17) > 2 * sass_order


def test_shared_loads_vectorize_only_where_alignment_is_proven():
    """matmul_tiled: ptxas's SASS has four LDS.128 (the row As[ty][0..15]); the stage makes four v4 shared
    loads. A base known only to be 4-aligned (tid x 4) stays scalar."""
    sass = [i for i in load_listing(SASS / "matmul_tiled.sass")["matmul_tiled"].instrs if i.opcode == "LDS.128"]
    made = _kernel_program("matmul_tiled")
    v4 = [pc for pc in range(made.n_inst) if made.code[pc, L.F_OP] == c.OP_LD and
          made.code[pc, L.F_SPACE] == L.SP_SHARED and made.code[pc, L.F_VEC] == 4]
    assert len(v4) == len(sass) == 4
    text = _HEADER + """    .reg .b32 %r<5>;
    .reg .f32 %f<6>;
    .reg .b64 %rd<2>;
    .shared .align 16 .b8 tile[1024];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, SHIFT;
    mov.u32 %r3, tile;
    add.s32 %r4, %r3, %r2;
    ld.shared.f32 %f1, [%r4];
    ld.shared.f32 %f2, [%r4+4];
    ld.shared.f32 %f3, [%r4+8];
    ld.shared.f32 %f4, [%r4+12];
    add.f32 %f5, %f1, %f2;
    ld.param.u64 %rd1, [out];
    st.global.f32 [%rd1], %f5;
    ret;
}
"""
    gpu = GPU("h100-sxm", codegen="ptxas")
    unaligned = gpu.load_ptx(text.replace("SHIFT", "2"), "unaligned.ptx")["k"].program
    assert int(sum(unaligned.code[:, L.F_OP] == c.OP_LD)) == 5 and int(unaligned.code[:, L.F_VEC].max()) == 1
    aligned = gpu.load_ptx(text.replace("SHIFT", "4"), "aligned.ptx")["k"].program     # tid x 16
    assert int(sum(aligned.code[:, L.F_OP] == c.OP_LD)) == 2 and int(aligned.code[:, L.F_VEC].max()) == 4


@pytest.mark.parametrize("config, arch", [("h100-sxm", "sm_90"), ("h200", "sm_90"), ("a100", "sm_80"),
                                          ("rtx4090", "sm_89")])
def test_fixed_latencies_are_those_of_ptxas_control_bits(config, arch):
    """The smallest stall-count distance from a fixed-latency producer to its first dependent reader over
    all shipped listings of the config's architecture is the latency ptxas assumes: the config's fields
    must say the same, and so must predicate_latency_cycles (ISETP -> guard: 13) and taken_branch_cycles (a
    loop back-edge BRA's stall count: 5)."""
    from gpusim.arch.config import load_config
    from gpusim.codegen.sass import dependent_stalls

    cfg = load_config(config)
    funcs = [f for p in sorted((programs_dir() / "sass" / arch).glob("*.sass")) for f in load_listing(p).values()]
    for field_name, producers in (("fp32_latency_cycles", ("FFMA", "FADD", "FMUL")),
                                  ("int32_latency_cycles", ("IADD3", "LOP3", "SHF", "LEA")),
                                  ("imad_latency_cycles", ("IMAD",))):
        stalls = [s for f in funcs for s in dependent_stalls(f, producers)]
        assert len(stalls) > 40 and min(stalls) == getattr(cfg, field_name), field_name
    predicate = [s for f in funcs for s in fixed_latency_pairs(f, "ISETP")]
    assert min(predicate) == 13 == cfg.predicate_latency_cycles > cfg.int32_latency_cycles
    # a loop back-edge's BRA (taken on every trip but the last): its own stall count, the most common of them
    back_edges = [f.blocks[latch].instrs[-1].stall for f in funcs for _, latch in f.loops()
                  if f.blocks[latch].instrs[-1].base == "BRA"]
    assert len(back_edges) >= 10
    assert max(set(back_edges), key=back_edges.count) == cfg.taken_branch_cycles == min(back_edges)


_PREDICATE = _HEADER + """    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 add.u32 %r2, %r1, 7;
    @!%p1 add.u32 %r2, %r1, 9;
    st.global.u32 [%rd1], %r2;
    ret;
}
"""


@pytest.mark.parametrize("mode, extra", [("ptxas", 13 - 4), ("none", 0)])
def test_a_guard_waits_for_the_predicate_latency_in_ptxas_mode(mode, extra):
    """One thread; the guarded add waits for setp's predicate: predicate_latency_cycles (13, ptxas control
    bits) in codegen="ptxas", against 4 when the field is set to 4; the PTX-as-written model is unchanged."""
    cycles = {}
    for latency in (13, 4):
        gpu = GPU("h100-sxm", sms=1, codegen=mode, predicate_latency_cycles=latency)
        out = gpu.zeros(1, np.uint32)
        run = gpu.launch(gpu.load_ptx(_PREDICATE, "pred.ptx")["k"], grid=1, block=1, args=[out])
        assert int(out.get()[0]) == 7
        cycles[latency] = int(run.cycles)
    assert cycles[13] - cycles[4] == extra


def test_matmul_tiled_times_like_its_sass_order_variant():
    """programs/codegen/matmul_tiled_sass_order.ptx: the tile product hand-written in the order of ptxas's
    SASS (four LDS.128, the column loads interleaved with the FMA chain), run as written; matmul_tiled.ptx
    under codegen="ptxas" lands within 1.25x of it and is faster than the PTX as written."""
    sass_order = matmul_cycles(programs_dir() / "codegen" / "matmul_tiled_sass_order.ptx", "none")
    made = matmul_cycles(programs_dir() / "matmul_tiled.ptx", "ptxas")
    plain = matmul_cycles(programs_dir() / "matmul_tiled.ptx", "none")
    assert 1 / 1.25 <= made / sass_order <= 1.25
    assert made < plain


_LOOP = _HEADER + """    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    ld.global.u32 %r2, [%rd1];
    mov.u32 %r1, 0;
$L_loop:
    .pragma "nounroll";
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, %r2;
    @%p1 bra $L_loop;
    st.global.u32 [%rd1], %r1;
    ret;
}
"""


@pytest.mark.parametrize("mode", ["ptxas", "none"])
def test_a_loop_grows_by_its_taken_trips_times_the_taken_branch_cost(mode):
    """One thread, a rolled loop of ``trips`` trips: its back-edge is taken trips - 1 times, and in
    codegen="ptxas" each taken one waits taken_branch_cycles (5: a BRA's stall count in ptxas's control
    bits), so the kernel's cycles grow by (trips - 1) x the change of the field; the PTX-as-written model
    waits branch_latency_cycles either way."""
    trips = 37
    cycles = {}
    for taken in (5, 12):
        gpu = GPU("h100-sxm", sms=1, codegen=mode, taken_branch_cycles=taken)
        out = gpu.to_device(np.array([trips], np.uint32))
        run = gpu.launch(gpu.load_ptx(_LOOP, "loop.ptx")["k"], grid=1, block=1, args=[out])
        assert int(out.get()[0]) == trips
        cycles[taken] = int(run.cycles)
    assert cycles[12] - cycles[5] == ((trips - 1) * (12 - 5) if mode == "ptxas" else 0)


def test_the_configs_taken_branch_cost_is_what_a_loop_trip_pays():
    """A trip of the loop above in codegen="ptxas": add -> setp (int32 latency) -> bra (the predicate
    latency) -> taken back-edge (taken_branch_cycles) -> the next add."""
    gpu = GPU("h100-sxm", sms=1, codegen="ptxas")
    cfg = gpu.config
    cycles = []
    for trips in (20, 21):
        out = gpu.to_device(np.array([trips], np.uint32))
        cycles.append(int(gpu.launch(gpu.load_ptx(_LOOP, "loop.ptx")["k"], grid=1, block=1, args=[out]).cycles))
    assert cycles[1] - cycles[0] == (cfg.int32_latency_cycles + cfg.predicate_latency_cycles
                                     + cfg.taken_branch_cycles)


def test_run_says_a_tensor_core_kernel_was_timed_as_written():
    """gemm_bf16_mma has mma.sync/ldmatrix (deps.unmodelled_ops): GPU(codegen="ptxas") leaves it as written, and
    the run, text report, JSON and HTML summary say "none" and name the operations; a plain kernel says ptxas."""
    from gpusim.codegen.deps import unmodelled_ops

    gpu = GPU("h100-sxm", sms=2, codegen="ptxas")
    mma = run_program("gemm_bf16_mma", gpu=gpu, timing=False).runs[0]
    program = mma.program
    unmodelled = unmodelled_ops(program.code)
    assert unmodelled and program.origin is None and program.codegen == "ptxas"   # requested, not applied
    ops = sorted({program.texts[pc].split()[0].rstrip(";") for pc in unmodelled})
    assert mma.codegen == "none" and all(op in mma.codegen_reason for op in ops)
    data = mma.to_dict()
    assert (data["codegen"], data["codegen_requested"], data["codegen_reason"]) == ("none", "ptxas", mma.codegen_reason)
    assert f"code generation: none (the PTX in program order, as written; {mma.codegen_reason})" in mma.report()
    assert "code generation: none" in mma._repr_html_()
    plain = run_program("vecadd", gpu=gpu, timing=False).runs[0]
    assert not unmodelled_ops(plain.program.code)
    assert (plain.codegen, plain.codegen_reason) == ("ptxas", "")
    assert plain.to_dict()["codegen_reason"] == "" and "code generation: ptxas" in plain._repr_html_()
    written = run_program("vecadd", gpu=GPU("h100-sxm", sms=2, codegen="none"), timing=False).runs[0]
    assert written.codegen == "none" and 'codegen="none"' in written.codegen_reason
