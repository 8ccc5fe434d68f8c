"""Vector loads and full unrolling as ptxas makes them (gpusim.codegen.knownbits, .vectorize, .unroll).

The reference is ptxas's own SASS, committed: tests/data/vectorize/ (the SGEMM ladder of validation/kernels
for sm_86, the corpus of tests/corpus and the attention lab's kernels for their .target;
scripts/regen_vector_sass.sh) and tests/data/unroll/
(a sweep of constant-trip loops and ptxas's verdicts; scripts/unroll_sweep.py)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from gpusim import GPU
from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.codegen.sass import load_listing, parse_listing
from scripts.unroll_sweep import loop_ptx, point_name

ROOT = Path(__file__).resolve().parent.parent
VECTOR = ROOT / "tests" / "data" / "vectorize"
UNROLL = ROOT / "tests" / "data" / "unroll"
LISTINGS = sorted(VECTOR.glob("*.sass"))


def _source(listing: Path) -> tuple[Path, str]:
    name, arch = listing.name.split(".")[:2]
    if name == "sgemm_ladder":
        return ROOT / "validation" / "kernels" / "sgemm_ladder.ptx", "h100-sxm" if arch == "sm_90" else "a6000"
    if name == "attention":
        return ROOT / "programs" / "labs" / "attention.ptx", "h100-sxm"
    return ROOT / "tests" / "corpus" / f"{name}.ptx", "h100-sxm"


def _sass_vector_loads(function) -> dict[tuple[str, int], int]:
    """(LDS|LDG, bytes) -> count of 8- and 16-byte loads (LDG.E.128.CONSTANT is a 16-byte LDG)."""
    out = {(base, size): 0 for base in ("LDS", "LDG") for size in (8, 16)}
    for instr in function.instrs:
        mods = instr.opcode.split(".")
        size = 16 if "128" in mods else 8 if "64" in mods else 0
        if (instr.base, size) in out:
            out[instr.base, size] += 1
    return out


def _gpusim_vector_loads(program) -> dict[tuple[str, int], int]:
    out = {(base, size): 0 for base in ("LDS", "LDG") for size in (8, 16)}
    for row in program.code:
        space = {L.SP_SHARED: "LDS", L.SP_GLOBAL: "LDG"}.get(int(row[L.F_SPACE]))
        key = (space, int(row[L.F_VEC]) * int(row[L.F_SIZE]))
        if int(row[L.F_OP]) == c.OP_LD and key in out:
            out[key] += 1
    return out


KNOWN_DIVERGENCES = {
    # (listing, kernel): what ptxas does that gpusim's code generation does not (yet)
    ("sgemm_ladder.sm_90", "sgemm_vectorized"):
        "ptxas unrolls step 6's 8-trip k loop fully for sm_90 (32 LDS.128) and keeps steps 7 and 8's rolled; the "
        "sm_90 rule of full_unroll_fits (nested loops as top-level ones: all 180 loops of the sm_90 sweep) keeps "
        "step 6's rolled too (4 LDS.128)",
    ("sgemm_ladder", "sgemm_autotuned"):
        "ptxas unrolls step 9's 16-trip k loop (82 instructions, nested) fully: 64 LDS.128; full_unroll_fits "
        "keeps it rolled (4 LDS.128), as for the sweep's nested loops of 4 loads x 64 FMAs x 16 trips",
}


@pytest.mark.parametrize("listing", LISTINGS, ids=[p.name.split(".")[0] for p in LISTINGS])
def test_vector_loads_are_those_of_ptxas(listing):
    """Per kernel, the 8- and 16-byte shared and global loads after code generation are ptxas's LDS.64,
    LDS.128, LDG.E.64 and LDG.E.128 in its SASS. Before the known-bits analysis and full unrolling, the
    SGEMM ladder's smem, 1D-blocktiling and vectorized kernels had 0, 0 and 4 LDS.128 where ptxas has 8, 16
    and 32. The kernels of KNOWN_DIVERGENCES must still differ: a fix that closes one removes its entry."""
    ptx, config = _source(listing)
    sass = load_listing(listing)
    module = GPU(config, codegen="ptxas").load(str(ptx))
    for name in module.kernels:
        assert name in sass, name
        same = _gpusim_vector_loads(module[name].program) == _sass_vector_loads(sass[name])
        stem = listing.name.split(".")[0] + (".sm_90" if listing.name.startswith("sgemm_ladder.sm_90") else "")
        if (stem, name) in KNOWN_DIVERGENCES:
            assert not same, f"{name} now has ptxas's vector loads: remove it from KNOWN_DIVERGENCES"
        else:
            assert same, name


def test_the_sgemm_ladder_listing_has_the_vector_loads_the_issue_names():
    """The reference is not trivially zero: ptxas merges the ladder's shared loads into LDS.128."""
    sass = load_listing(VECTOR / "sgemm_ladder.sm_86.sass")
    counts = {name: _sass_vector_loads(f)["LDS", 16] for name, f in sass.items()}
    assert counts["sgemm_smem"] > 0 and counts["sgemm_blocktile_1d"] > 0 and counts["sgemm_vectorized"] > 0


_HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n"
_STORE_F2 = """    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd2, %rd2, %rd3;
    st.global.f32 [%rd2], %f2;
    ret;
}
"""
"""The kernels' last lines: thread tid stores %f2 to out[tid]."""
_MASKED = _HEADER + """    .reg .b32 %r<8>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<3>;
    .shared .align 4 .b8 tile[4096];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    OP.b32 %r3, %r2, MASK;
    mov.u32 %r4, tile;
    add.s32 %r5, %r4, %r3;
    ld.shared.f32 %f1, [%r5];
    ld.shared.f32 %f2, [%r5+4];
    ld.shared.f32 %f3, [%r5+8];
    ld.shared.f32 %f4, [%r5+12];
    add.f32 %f5, %f1, %f2;
    add.f32 %f6, %f3, %f4;
    add.f32 %f7, %f5, %f6;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd1, %r1, 4;
    add.s64 %rd2, %rd2, %rd1;
    st.global.f32 [%rd2], %f7;
    ret;
}
"""


def _same_in_both_modes(text: str, config: str, threads: int, timing: bool = False, **gpu_options):
    """Run the one-block kernel ``k(out)`` of ``text`` as written and as gpusim's code generation makes it;
    assert the outputs are bit-identical; return the generated kernel."""
    results, made = [], None
    for mode in ("none", "ptxas"):
        gpu = GPU(config, sms=1, codegen=mode, **gpu_options)
        made = gpu.load_ptx(text, "k.ptx")["k"]
        out = gpu.zeros(threads, np.float32)
        gpu.launch(made, grid=1, block=threads, args=[out], timing=timing)
        results.append(out.get())
    np.testing.assert_array_equal(results[0], results[1])
    return made


@pytest.mark.parametrize("op, mask, width", [("and", "-128", 4), ("and", "-8", 2), ("and", "-4", 1),
                                             ("or", "0", 1), ("or", "16", 1), ("and", "1073741760", 4)])
def test_alignment_follows_masks(op, mask, width):
    """``(tid * 4) & -128`` is 128-aligned: four loads become one v4; ``& -8``: two v2; ``| 16`` or
    ``& -4``: only 4-aligned, the loads stay scalar (a vector access there would fault). The results
    are the PTX's, bit for bit."""
    text = _MASKED.replace("OP", op).replace("MASK", mask)
    made = GPU("h100-sxm", codegen="ptxas").load_ptx(text, "masked.ptx")["k"]
    code = made.program.code
    shared = code[(code[:, L.F_OP] == c.OP_LD) & (code[:, L.F_SPACE] == L.SP_SHARED)]
    assert sorted(int(v) for v in shared[:, L.F_VEC]) == [width] * (4 // width)
    _same_in_both_modes(text, "h100-sxm", 64)


_CONSTANT_LOOP = _HEADER + """    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<4>;
    .shared .align 16 .b8 tile[2048];
    mov.u32 %r1, %tid.x;
    cvt.rn.f32.u32 %f1, %r1;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, tile;
    add.s32 %r4, %r3, %r2;
    st.shared.f32 [%r4], %f1;
    st.shared.f32 [%r4+1024], %f1;
    bar.sync 0;
    and.b32 %r5, %r2, -64;
    add.s32 %r6, %r3, %r5;
    mov.f32 %f2, 0f3F800000;
    mov.u32 %r7, START;
$L_loop:
    ld.shared.f32 %f3, [%r6];
    ld.shared.f32 %f4, [%r6+4];
    fma.rn.f32 %f2, %f3, %f4, %f2;
    mul.f32 %f2, %f2, 0f3F000000;
    cvt.rn.f32.s32 %f5, %r7;
    add.f32 %f2, %f2, %f5;
    add.s32 %r6, %r6, 8;
    add.s32 %r7, %r7, STEP;
    setp.CMP.s32 %p1, %r7, BOUND;
    @%p1 bra $L_loop;
""" + _STORE_F2


@pytest.mark.parametrize("start, step, cmp, bound, trips", [
    (0, 1, "lt", 4, 4), (0, 1, "lt", 1, 1), (256, 512, "ne", 2304, 4), (-3, 2, "le", 3, 4), (0, 1, "lt", 3, 3),
    (0, 1, "ne", 6, 6)])
def test_constant_loops_unroll_fully_and_stay_exact(start, step, cmp, bound, trips):
    """A few constant trips (``setp.ne`` too, as nvcc writes the SGEMM k loop): the loop becomes ``trips``
    copies, its pointer steps fold into the loads' offsets and the pairs merge into v2 loads once unrolled
    (offsets 0, 4 | 8, 12 ...); the counter still feeds arithmetic. Results bit-identical to the PTX."""
    text = _CONSTANT_LOOP.replace("START", str(start)).replace("STEP", str(step)).replace("CMP", cmp) \
        .replace("BOUND", str(bound))
    code = _same_in_both_modes(text, "h100-sxm", 256).program.code
    back = [pc for pc in range(len(code)) if code[pc, L.F_OP] == c.OP_BRA and code[pc, L.F_TARGET] <= pc]
    assert back == []
    loads = code[(code[:, L.F_OP] == c.OP_LD) & (code[:, L.F_SPACE] == L.SP_SHARED)]
    assert sum(int(v) for v in loads[:, L.F_VEC]) == 2 * trips
    assert len(loads) == trips // 2 + trips % 2


SWEEP_CONFIGS = {"sm_86": "a6000", "sm_90": "h100-sxm"}
"""The config whose compute capability each sweep's SASS was made for."""


def _sweep(arch: str = "sm_86") -> list[dict]:
    with open(UNROLL / ("sweep.csv" if arch == "sm_86" else f"sweep.{arch}.csv")) as f:
        return [{k: int(v) for k, v in row.items()} for row in csv.DictReader(f)]


def test_sweep_listings_show_the_verdicts_recorded():
    """The committed listings next to the boundary have the back edges their arch's CSV verdict implies."""
    listings = sorted(UNROLL.glob("*.sass"))
    assert {path.name.split(".")[1] for path in listings} == set(SWEEP_CONFIGS)
    assert len(listings) >= 12
    for path in listings:
        name, arch = path.name.split(".")[:2]
        rows = {point_name(r["trips"], r["loads"], r["fmas"], bool(r["nested"])): r for r in _sweep(arch)}
        row = rows[name]
        ptx = loop_ptx(row["trips"], row["loads"], row["fmas"], bool(row["nested"]))
        assert (UNROLL / f"{name}.ptx").read_text() == ptx
        loops = len(parse_listing(path.read_text())["k"].loops())
        assert loops == (row["nested"] + (0 if row["full"] else 1)), path.name


def test_ptxas_unrolls_nested_loops_less_for_sm_90():
    """The two sweeps differ only in nested loops that sm_86 unrolls and sm_90 keeps rolled (23 of 90)."""
    key = ("nested", "loads", "fmas", "trips")
    sm86 = {tuple(r[k] for k in key): r["full"] for r in _sweep("sm_86")}
    sm90 = {tuple(r[k] for k in key): r["full"] for r in _sweep("sm_90")}
    differ = [point for point in sm86 if sm86[point] != sm90[point]]
    assert differ and all(point[0] == 1 and sm86[point] and not sm90[point] for point in differ)


@pytest.mark.parametrize("arch", sorted(SWEEP_CONFIGS))
@pytest.mark.parametrize("every", [3, pytest.param(1, marks=pytest.mark.slow)], ids=["third", "all"])
def test_full_unrolling_follows_ptxas_on_the_sweep(every, arch):
    """gpusim's rule against ptxas's verdict on the loops of the sweep (every third in the default run, all
    with -m slow), on a config of the sweep's arch: every top-level loop, and all nested ones but at most 7
    on sm_86 (of the 90: the fit's known misses are loops ptxas unrolls and gpusim keeps), all on sm_90."""
    agree, total = {0: 0, 1: 0}, {0: 0, 1: 0}
    wrongly_unrolled = 0
    gpu = GPU(SWEEP_CONFIGS[arch], codegen="ptxas")
    for row in _sweep(arch)[::every]:
        text = loop_ptx(row["trips"], row["loads"], row["fmas"], bool(row["nested"]), arch)
        program = gpu.load_ptx(text, "sweep.ptx")["k"].program
        full = any("unrolled fully" in note for note in program.codegen_notes)
        agree[row["nested"]] += full == bool(row["full"])
        total[row["nested"]] += 1
        wrongly_unrolled += full and not row["full"]
    assert min(total.values()) >= 90 // every                # the sweep's 90 top-level and 90 nested loops
    misses = 7 if arch == "sm_86" else 0
    assert agree[0] == total[0] and agree[1] >= total[1] - misses and wrongly_unrolled == 0


@pytest.mark.slow
@pytest.mark.parametrize("kernel, block, rows, cols", [
    ("sgemm_smem", (1024,), 32, 32), ("sgemm_blocktile_1d", (512,), 64, 64),
    ("sgemm_blocktile_2d", (256,), 128, 128), ("sgemm_vectorized", (256,), 128, 128),
    ("sgemm_bank_linear", (256,), 128, 128), ("sgemm_bank_offset", (256,), 128, 128),
    ("sgemm_autotuned", (256,), 128, 128)])
def test_sgemm_ladder_is_bit_identical_in_both_modes(kernel, block, rows, cols):
    n = 128
    rng = np.random.default_rng(7)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    results = []
    for mode in ("none", "ptxas"):
        gpu = GPU("a6000", sms=1, codegen=mode)
        k = gpu.load(str(ROOT / "validation" / "kernels" / "sgemm_ladder.ptx"))[kernel]
        dc = gpu.zeros(n * n, np.float32)
        grid = (n // cols, n // rows) if kernel != "sgemm_smem" else (n // 32, n // 32)
        gpu.launch(k, grid=grid, block=block, args=[np.int32(n), np.float32(1.0), gpu.to_device(a),
                                                    gpu.to_device(b), np.float32(0.0), dc], timing=False)
        results.append(dc.get().reshape(n, n))
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_allclose(results[1], a @ b, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("name", ["daxpy", "hash64", "matmul_tiled", "transpose_padded", "reduce_shared", "gemv"])
def test_shipped_programs_have_ptxas_vector_loads(name):
    """The shipped programs against their committed sm_90 listings (the docs/codegen.md table's last columns)."""
    from gpusim.labs.sass_counts import sass_vector_loads, vector_loads
    from gpusim.programs.catalog import load_program, programs_dir

    spec = load_program(name)
    sass = load_listing(programs_dir() / "sass" / "sm_90" / f"{spec.ptx.stem}.sass")
    module = GPU("h100-sxm", codegen="ptxas").load(str(spec.ptx))
    for kernel in module.kernels:
        assert vector_loads(module[kernel].program) == sass_vector_loads(sass[kernel]), kernel


def test_unrolled_copies_read_the_counter_as_a_constant():
    """ptxas's copies of a fully unrolled loop read its counter as a constant (the SGEMM ladder's step 8
    addresses row k of its B tile as ``[R85.X4+0x1214]``, k = 1, with no counter register): in the constant
    loop above, no instruction of the unrolled code writes the counter, and each copy's ``cvt`` reads its own
    value as an immediate (start, start + step, ...). Results bit-identical to the PTX."""
    start, step, trips = -3, 2, 4
    text = _CONSTANT_LOOP.replace("START", str(start)).replace("STEP", str(step)).replace("CMP", "le") \
        .replace("BOUND", "3")
    kernel = GPU("h100-sxm", codegen="ptxas").load_ptx(text, "loop.ptx")["k"]
    program = kernel.program
    counter = program.reg_names.index("%r7")
    code = program.code
    writers = [pc for pc in range(len(code))
               if code[pc, L.F_NDST] >= 1 and counter in code[pc, L.F_DST0:L.F_DST0 + 4]]
    assert all(int(code[pc, L.F_OP]) == c.OP_MOV for pc in writers)     # only its initial value, if anything
    converted = [int(code[pc, L.F_SK0 + 1]) for pc in range(len(code))
                 if code[pc, L.F_OP] == c.OP_CVT and code[pc, L.F_SK0] == L.SK_IMM]
    assert sorted(np.int32(np.uint32(v & 0xFFFFFFFF)) for v in converted) == [start + j * step for j in range(trips)]


_PADDED_ROWS = _HEADER + """    .reg .pred %p<3>;
    .reg .b32 %r<16>;
    .reg .f32 %f<16>;
    .reg .b64 %rd<4>;
    DECL
    mov.u32 %r1, %tid.x;
    cvt.rn.f32.u32 %f1, %r1;
    mov.u32 %r2, bs;
    shl.b32 %r3, %r1, 2;
    add.s32 %r4, %r2, %r3;
    st.shared.f32 [%r4], %f1;
    st.shared.f32 [%r4+1024], %f1;
    st.shared.f32 [%r4+2048], %f1;
    st.shared.f32 [%r4+3072], %f1;
    bar.sync 0;
    and.b32 %r5, %r1, 15;
    shl.b32 %r6, %r5, 3;
    mov.f32 %f2, 0f00000000;
    mov.u32 %r7, 0;
$L_k:
    mad.lo.s32 %r8, %r7, 133, %r6;
    shl.b32 %r9, %r8, 2;
    add.s32 %r10, %r2, %r9;
    ld.shared.f32 %f3, [%r10];
    ld.shared.f32 %f4, [%r10+4];
    ld.shared.f32 %f5, [%r10+8];
    ld.shared.f32 %f6, [%r10+12];
    ld.shared.f32 %f7, [%r10+16];
    ld.shared.f32 %f8, [%r10+20];
    ld.shared.f32 %f9, [%r10+24];
    ld.shared.f32 %f10, [%r10+28];
    add.f32 %f11, %f3, %f4;
    add.f32 %f12, %f5, %f6;
    add.f32 %f13, %f7, %f8;
    add.f32 %f14, %f9, %f10;
    add.f32 %f11, %f11, %f12;
    add.f32 %f13, %f13, %f14;
    add.f32 %f11, %f11, %f13;
    fma.rn.f32 %f2, %f2, 0f3F000000, %f11;
    add.s32 %r7, %r7, 1;
    setp.lt.s32 %p1, %r7, 4;
    @%p1 bra $L_k;
""" + _STORE_F2


def _shared_load_shapes(program) -> list[tuple[int, tuple[bool, ...]]]:
    """(vector width, which lanes have a destination) of each shared load, in program order."""
    code = program.code
    rows = code[(code[:, L.F_OP] == c.OP_LD) & (code[:, L.F_SPACE] == L.SP_SHARED)]
    return [(int(r[L.F_VEC]), tuple(bool(r[L.F_DST0 + i] >= 0) for i in range(int(r[L.F_VEC])))) for r in rows]


def test_padded_rows_take_16_byte_loads_by_their_residue():
    """Eight words per row, rows 133 words apart (the SGEMM ladder's step 8): row k starts 4k mod 16 bytes
    into a 16-byte chunk, and ptxas's sm_86 SASS of that kernel (tests/data/vectorize/sgemm_ladder.sm_86.sass)
    loads the rows as residue 0: LDS.128 x2; 4: an LDS.128 that over-fetches the word before the row, an
    LDS.128, an LDS; 8: LDS.64, LDS.128, LDS.64; 12: LDS, LDS.128, an LDS.128 that over-fetches the word after
    it. gpusim's code generation makes the same loads (a dropped word has no destination) off one base
    register, as ptxas does, they stay inside
    the declared shared memory, and the results are the PTX's bit for bit. With dynamic shared memory, whose
    size only the launch knows, nothing is over-fetched (the word could lie past the allocation)."""
    text = _PADDED_ROWS.replace("DECL", ".shared .align 16 .b8 bs[4256];")
    program = GPU("a6000", codegen="ptxas").load_ptx(text, "padded.ptx")["k"].program
    full, first_dropped, last_dropped = (True,) * 4, (False, True, True, True), (True, True, True, False)
    shapes = _shared_load_shapes(program)
    assert sorted(shapes) == sorted([(4, full)] * 2 + [(4, first_dropped), (4, full), (1, (True,))]
                                    + [(2, (True, True)), (4, full), (2, (True, True))]
                                    + [(1, (True,)), (4, full), (4, last_dropped)])
    code = program.code
    rows = code[(code[:, L.F_OP] == c.OP_LD) & (code[:, L.F_SPACE] == L.SP_SHARED)]
    # one base register for every row, each row's start 532 k bytes in as an immediate offset (ptxas:
    # [R85.X4+0x1000], [R85.X4+0x1210], ...): the copies' (x + 133 k) * 4 reassociated, then merged
    assert len(set(rows[:, L.F_ABASE].tolist())) == 1
    assert sorted(rows[:, L.F_AOFF].tolist()) == [0, 16, 528, 544, 560, 1064, 1072, 1088, 1596, 1600, 1616]
    # memcheck: an over-fetched word past the declared bytes would raise
    _same_in_both_modes(text, "a6000", 256, timing=True, sanitize="memcheck")
    dynamic = _PADDED_ROWS.replace("DECL", ".extern .shared .align 16 .b8 bs[];")
    program = GPU("a6000", codegen="ptxas").load_ptx(dynamic, "padded_dynamic.ptx")["k"].program
    assert all(all(lanes) for _, lanes in _shared_load_shapes(program))
