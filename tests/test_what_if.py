"""What-if, measured (gpusim.launch.what_if): each switch moves what it names and nothing it should not;
re-runs start from the launch's own memory and never touch the user's arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gpusim
from benchmarks.kernels import FFMA_LOOP, STREAM_COPY
from gpusim.errors import LaunchError, NoTimingError
from gpusim.labs.bank_conflicts import ROWS_PER_PASS, TILE
from gpusim.labs.support import LAB_PROGRAMS_DIR, PROGRAMS_DIR
from gpusim.launch.what_if import LIMIT_IDS, launch_record, relaunch, variant_run
from gpusim.observe.what_if import WHAT_IF_SCHEMA_VERSION

INSTRUCTION_METRICS = ("smsp__inst_executed.sum", "smsp__thread_inst_executed.sum",
                       "smsp__thread_inst_executed_pred_on.sum", "gpusim__flops.sum")


def _same_instructions(a, b):
    for name in INSTRUCTION_METRICS:
        assert a.metrics[name] == b.metrics[name], name
    assert np.array_equal(a.pc_counts, b.pc_counts)


@pytest.fixture(scope="module")
def stream():
    gpu = gpusim.GPU("h100-sxm", sms=2)
    kernel = gpu.load_ptx(STREAM_COPY)["stream_copy"]
    n = 1 << 15
    src = gpu.to_device(np.arange(n, dtype=np.float32))
    dst = gpu.empty(n, np.float32)
    run = gpu.launch(kernel, grid=16, block=256, args=[src, dst, n])
    return gpu, run, src, dst


@pytest.fixture(scope="module")
def transpose():
    gpu = gpusim.GPU("h100-sxm", sms=2)
    kernel = gpu.load(str(LAB_PROGRAMS_DIR / "transpose_shared.ptx"))["transpose_shared"]
    size = 128
    source = gpu.to_device(np.arange(size * size, dtype=np.float32))
    out = gpu.zeros(size * size, np.float32)
    run = gpu.launch(kernel, grid=(size // TILE, size // TILE), block=(TILE, ROWS_PER_PASS),
                     args=[source, out, np.int32(size), np.int32(size)])
    return run


@pytest.fixture(scope="module")
def strided():
    gpu = gpusim.GPU("h100-sxm", sms=2)
    kernel = gpu.load(str(PROGRAMS_DIR / "strided_copy.ptx"))["strided_copy"]
    n, stride = 4096, 8
    source = gpu.to_device(np.arange(n * stride, dtype=np.float32))
    out = gpu.zeros(n, np.float32)
    return gpu.launch(kernel, grid=n // 256, block=256, args=[source, out, np.int32(n), np.int32(stride)])


def test_a_rerun_without_switches_reproduces_the_launch_exactly(stream):
    gpu, run, _, _ = stream
    again = relaunch(launch_record(run))
    assert again.cycles == run.cycles
    assert again.metrics == run.metrics
    assert again.stalls == run.stalls


def test_the_rerun_starts_from_the_l2_the_launch_found():
    """A second launch finds the first one's lines in L2; its re-run must find them too."""
    gpu = gpusim.GPU("h100-sxm", sms=2)
    kernel = gpu.load_ptx(STREAM_COPY)["stream_copy"]
    n = 1 << 12
    src, dst = gpu.to_device(np.ones(n, np.float32)), gpu.empty(n, np.float32)
    gpu.launch(kernel, grid=4, block=256, args=[src, dst, n])
    warm = gpu.launch(kernel, grid=4, block=256, args=[src, dst, n])
    assert warm.metrics["dram__bytes_read.sum"] < n * 4          # L2 hits: the first launch left the lines there
    again = relaunch(launch_record(warm))
    assert (again.cycles, again.metrics) == (warm.cycles, warm.metrics)


def test_what_if_leaves_the_users_arrays_and_memory_alone(stream):
    gpu, run, src, dst = stream
    before = gpu.heap.data.copy()
    run.what_if(limits=["dram_bandwidth", "coalescing"], factor=None)
    assert np.array_equal(gpu.heap.data, before)
    assert np.array_equal(dst.get(), src.get())


def test_dram_bandwidth_removed_keeps_instructions_and_bytes():
    # a bandwidth-bound copy: the slice's 2 x 2048 threads keep 2 x 8 KiB in flight per DRAM latency (834
    # cycles, ~20 B/cycle), four times what 10 GB/s gives at 1.98 GHz (~5 B/cycle). (At the h100 slice's own
    # 51 GB/s a scalar copy is latency-bound: the DRAM model adds no queueing and removing it gains nothing.)
    gpu = gpusim.GPU("h100-sxm", sms=2, dram_bandwidth_gbs=10.0)
    assert 2 * 2048 * 4 / gpu.config.dram_latency_cycles > 3 * gpu.config.dram_bytes_per_cycle
    kernel = gpu.load_ptx(STREAM_COPY)["stream_copy"]
    n = 1 << 15
    run = gpu.launch(kernel, grid=16, block=256,
                     args=[gpu.to_device(np.arange(n, dtype=np.float32)), gpu.empty(n, np.float32), n])
    variant = variant_run(run, "dram_bandwidth")
    _same_instructions(run, variant)
    assert variant.metrics["dram__bytes_read.sum"] == run.metrics["dram__bytes_read.sum"]
    assert variant.metrics["lts__t_sectors.sum"] == run.metrics["lts__t_sectors.sum"]
    assert variant.cycles < run.cycles
    # x2: no faster than twice (the kernel's DRAM time halves at most), and faster than the baseline
    doubled = variant_run(run, "dram_bandwidth", factor=2)
    assert run.cycles / 2 <= doubled.cycles < run.cycles


def test_dram_latency_to_l2s_cuts_long_scoreboard_only(stream):
    _, run, _, _ = stream
    variant = variant_run(run, "dram_latency")
    _same_instructions(run, variant)
    assert variant.metrics["dram__bytes_read.sum"] == run.metrics["dram__bytes_read.sum"]
    assert variant.stalls["long_scoreboard"] < run.stalls["long_scoreboard"]
    assert variant.config.dram_latency_cycles == run.config.l2_latency_cycles


def test_no_bank_conflicts_zeroes_the_conflicts_and_keeps_dram(transpose):
    run = transpose
    assert run.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] > 0
    variant = variant_run(run, "shared_bank_conflicts")
    _same_instructions(run, variant)
    assert variant.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0
    assert variant.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"] == 0
    # 4-byte words, 32 distinct per warp access: one wavefront per request
    requests = run.metrics["smsp__inst_executed_op_shared_ld.sum"]
    assert variant.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == requests
    for name in ("dram__bytes_read.sum", "dram__bytes_write.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                 "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"):
        assert variant.metrics[name] == run.metrics[name], name
    assert variant.cycles < run.cycles


def test_perfect_coalescing_makes_sectors_per_request_minimal(strided):
    run = strided
    m = run.metrics
    load = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    ideal = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_ideal.sum"
    assert m[load] > m[ideal]
    variant = variant_run(run, "coalescing")
    v = variant.metrics
    _same_instructions(run, variant)
    requests = m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
    # 32 lanes x 4 bytes = 128 bytes = 4 sectors of 32 bytes per request
    assert v[load] == requests * 128 // run.config.sector_bytes
    assert v[load] == v[ideal]
    for same in ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "smsp__inst_executed_op_shared_ld.sum"):
        assert v[same] == m[same]
    assert v["dram__bytes_read.sum"] < m["dram__bytes_read.sum"]
    assert variant.cycles < run.cycles


def test_filling_the_warp_slots_lifts_occupancy_only(stream):
    gpu = gpusim.GPU("h100-sxm", sms=2)
    kernel = gpu.load_ptx(STREAM_COPY)["stream_copy"]
    n = 1 << 14
    src, dst = gpu.to_device(np.ones(n, np.float32)), gpu.empty(n, np.float32)
    run = gpu.launch(kernel, grid=16, block=256, args=[src, dst, n], regs=255)   # registers: 1 block/SM
    assert run.occupancy.blocks_per_sm == 1
    variant = variant_run(run, "occupancy")
    _same_instructions(run, variant)
    blocks = run.config.max_warps_per_sm // 8                   # 8 warps per block fill the 64 slots
    resident = min(blocks, 16 // run.config.sms)
    assert variant.metrics["sm__warps_active.avg.pct_of_peak_sustained_active"] > \
        run.metrics["sm__warps_active.avg.pct_of_peak_sustained_active"]
    assert variant.metrics["sm__warps_active.avg.per_cycle_active"] <= resident * 8
    assert variant.metrics["dram__bytes_read.sum"] == run.metrics["dram__bytes_read.sum"]
    assert variant.cycles < run.cycles


def test_infinite_math_pipes_remove_the_pipe_throttle():
    gpu = gpusim.GPU("teaching")
    kernel = gpu.load_ptx(FFMA_LOOP)["ffma_loop"]
    out = gpu.empty(8 * 256, np.float32)
    run = gpu.launch(kernel, grid=8, block=256, args=[out, 64])
    assert run.stalls["math_pipe_throttle"] > 0
    variant = variant_run(run, "math_pipes")
    _same_instructions(run, variant)
    assert variant.stalls["math_pipe_throttle"] == 0
    assert variant.cycles < run.cycles


def test_no_block_launch_cost(stream):
    _, run, _, _ = stream
    variant = variant_run(run, "launch_overhead")
    _same_instructions(run, variant)
    assert variant.config.block_launch_cycles == 0
    assert variant.metrics["dram__bytes_read.sum"] == run.metrics["dram__bytes_read.sum"]
    assert variant.cycles <= run.cycles


def test_what_if_rows_sorted_measured_and_exported(stream):
    _, run, _, _ = stream
    wi = run.what_if()
    assert [row.limit for row in wi.rows] == [row.limit for row in sorted(wi.rows, key=lambda r: -r.speedup)]
    assert {row.limit for row in wi.rows} == set(LIMIT_IDS)
    assert wi.baseline_cycles == run.cycles
    for row in wi.rows:
        assert math.isclose(row.speedup, run.cycles / min(row.cycles, run.cycles))
        assert row.moved and row.description
    assert not wi.row("shared_bank_conflicts").measured         # the stream has no shared-memory access
    dram = wi.row("dram_bandwidth")
    assert dram.cycles == variant_run(run, "dram_bandwidth").cycles
    data = wi.to_dict()
    assert data["schema_version"] == WHAT_IF_SCHEMA_VERSION and len(data["rows"]) == len(LIMIT_IDS)
    assert "removing the" in wi.to_text() or "no single limit" in wi.to_text()
    assert str(wi) == wi.to_text()
    frame = wi.to_pandas()
    assert list(frame["limit"]) == [row.limit for row in wi.rows]
    assert "<table" in wi.to_html()
    view = wi._repr_html_()              # the notebook view: one bar per limit, its measured speed-up
    assert all(f'data-limit="{row.limit}"' in view and f"{row.speedup:.2f}x" in view for row in wi.rows)
    # the report and the verdict quote the measurement
    text = run.report()
    assert "measured (what-if)" in text and "What-if (" in text
    assert run.to_dict()["what_if"]["baseline_cycles"] == run.cycles


def test_the_pool_gives_what_one_process_gives():
    """Two workers for five variants: a worker runs several, each from the L2 the launch found (another
    launch's lines, not this one's: a variant that started from its predecessor's L2 would find its data)."""
    gpu = gpusim.GPU("h100-sxm", sms=2)
    kernel = gpu.load_ptx(STREAM_COPY)["stream_copy"]
    n = 1 << 12
    src, dst = gpu.to_device(np.ones(n, np.float32)), gpu.empty(n, np.float32)
    other, other_out = gpu.to_device(np.ones(n, np.float32)), gpu.empty(n, np.float32)
    gpu.launch(kernel, grid=4, block=256, args=[other, other_out, n])
    warm = gpu.launch(kernel, grid=4, block=256, args=[src, dst, n])
    assert warm.metrics["dram__bytes_read.sum"] >= n * 4            # its own data comes from DRAM
    limits = ["dram_bandwidth", "dram_latency", "l2_bandwidth", "coalescing", "launch_overhead"]
    serial = warm.what_if(limits=limits, workers=1)
    pooled = warm.what_if(limits=limits, workers=2)
    assert [(r.limit, r.cycles, r.moved) for r in serial.rows] == [(r.limit, r.cycles, r.moved) for r in pooled.rows]
    for row in serial.rows:
        assert row.cycles == variant_run(warm, row.limit).cycles


def test_what_if_mistakes_are_one_clear_error():
    gpu = gpusim.GPU("h100-sxm", sms=2)       # its own GPU: the launches below retire older runs' inputs
    kernel = gpu.load_ptx(STREAM_COPY)["stream_copy"]
    src, dst = gpu.to_device(np.ones(1024, np.float32)), gpu.empty(1024, np.float32)
    run = gpu.launch(kernel, grid=4, block=256, args=[src, dst, 1024])
    with pytest.raises(LaunchError, match="unknown what-if limit 'dram'"):
        run.what_if(limits=["dram"])
    with pytest.raises(LaunchError, match="factor"):
        run.what_if(factor=0.5)
    with pytest.raises(LaunchError, match="workers"):
        run.what_if(workers=0)
    functional = gpu.launch(run.kernel, grid=1, block=32, args=[src, dst, 32], timing=False)
    with pytest.raises(NoTimingError):
        functional.what_if()
    older = gpu.launch(run.kernel, grid=1, block=32, args=[src, dst, 32])
    gpu.launch(run.kernel, grid=1, block=32, args=[src, dst, 32])
    with pytest.raises(LaunchError, match="latest timed launch"):
        older.what_if()


def test_keep_all_launch_inputs():
    gpu = gpusim.GPU("h100-sxm", sms=2)
    gpu.keep_launch_inputs = "all"
    kernel = gpu.load_ptx(STREAM_COPY)["stream_copy"]
    src, dst = gpu.to_device(np.ones(1024, np.float32)), gpu.empty(1024, np.float32)
    first = gpu.launch(kernel, grid=4, block=256, args=[src, dst, 1024])
    gpu.launch(kernel, grid=4, block=256, args=[src, dst, 1024])
    assert relaunch(launch_record(first)).cycles == first.cycles


def test_l2_bandwidth_removed_keeps_what_reaches_l2(stream):
    _, run, _, _ = stream
    variant = variant_run(run, "l2_bandwidth")
    _same_instructions(run, variant)
    for name in ("lts__t_sectors.sum", "dram__bytes_read.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"):
        assert variant.metrics[name] == run.metrics[name], name
    assert variant.config.l2_bytes_per_cycle == run.config.l2_bytes_per_cycle * 1e9
    assert variant.cycles <= run.cycles


def test_suggestions_quote_the_measured_speedup(strided):
    from gpusim.observe.report import verdict

    before = verdict(strided)
    coalescing = [f for f in before.findings if f.kind == "coalescing"]
    assert coalescing and "Measured" not in coalescing[0].text
    wi = strided.what_if(limits=["coalescing", "dram_bandwidth"])
    after = verdict(strided)
    quoted = [f for f in after.findings if f.kind == "coalescing"][0]
    row = wi.row("coalescing")
    assert f"{row.speedup:.2f}x faster" in quoted.text
    assert quoted.score == pytest.approx(1 - 1 / row.speedup)
    assert wi.headline() in after.reason


def test_the_rebuilt_valid_map_is_the_heaps():
    """Without initcheck the snapshot rebuilds the valid map from the allocations instead of copying it."""
    from gpusim.launch.what_if import _valid_map, snapshot_inputs

    gpu = gpusim.GPU("h100-sxm", sms=2)
    arrays = [gpu.to_device(np.ones(size, np.float32)) for size in (3, 1000, 77)]
    gpu.heap.free(arrays[1].ptr)
    heap, _ = snapshot_inputs(gpu)
    assert heap.valid is None
    assert np.array_equal(_valid_map(heap), gpu.heap.valid[:heap.data.size])


def test_what_the_gpu_keeps_for_what_if(monkeypatch):
    from gpusim.launch import what_if as W

    gpu = gpusim.GPU("h100-sxm", sms=2)
    kernel = gpu.load_ptx(STREAM_COPY)["stream_copy"]
    src, dst = gpu.to_device(np.ones(1024, np.float32)), gpu.empty(1024, np.float32)
    first = gpu.launch(kernel, grid=4, block=256, args=[src, dst, 1024])
    buffer = first.__dict__["_launch_record"].heap.data
    second = gpu.launch(kernel, grid=4, block=256, args=[src, dst, 1024])
    assert second.__dict__["_launch_record"].heap.data is buffer         # the retired snapshot's buffer reused
    monkeypatch.setattr(W, "SNAPSHOT_BUDGET_BYTES", 1024)
    big = gpu.launch(kernel, grid=4, block=256, args=[src, dst, 1024])
    with pytest.raises(LaunchError, match="keep_launch_inputs = 'latest'"):
        big.what_if()
    gpu.keep_launch_inputs = "latest"
    kept = gpu.launch(kernel, grid=4, block=256, args=[src, dst, 1024])
    assert relaunch(launch_record(kept)).cycles == kept.cycles
    gpu.keep_launch_inputs = False
    with pytest.raises(LaunchError, match="is False"):
        gpu.launch(kernel, grid=4, block=256, args=[src, dst, 1024]).what_if()
    gpu.keep_launch_inputs = "some"
    with pytest.raises(LaunchError, match="keep_launch_inputs must be"):
        gpu.launch(kernel, grid=4, block=256, args=[src, dst, 1024])


def test_a_texture_kernels_rerun_reproduces_it():
    """A texture object (an int holding a descriptor's address) and module memory survive the record."""
    from pathlib import Path

    gpu = gpusim.GPU("teaching")
    module = gpu.load(Path(__file__).parent / "ptx" / "texture" / "texture.ptx")
    tex = gpu.texture(np.arange(9 * 13, dtype=np.float32).reshape(9, 13), filter="linear")
    coords = [gpu.to_device(np.linspace(-2, 14, 64, dtype=np.float32)),
              gpu.to_device(np.linspace(-1, 10, 64, dtype=np.float32))]
    out = gpu.zeros((64, 4), np.float32)
    run = gpu.launch(module["fetch2d"], 2, 32, [tex, *coords, out, np.int32(64)])
    again = relaunch(launch_record(run))
    assert (again.cycles, again.metrics) == (run.cycles, run.metrics)
    assert variant_run(run, "dram_latency").metrics["l1tex__t_requests_pipe_tex_mem_texture.sum"] == \
        run.metrics["l1tex__t_requests_pipe_tex_mem_texture.sum"]


def test_a_tensor_map_kernels_rerun_reproduces_it():
    """A TensorMap argument (over the launching GPU's array) is recorded as its 128 bytes: the re-run, on a
    copy of that GPU's memory, loads the same boxes and takes the same cycles."""
    from gpusim.programs.catalog import run_program

    gpu = gpusim.GPU("h100-sxm")
    gpu.keep_launch_inputs = "all"
    run = run_program("gemm_hopper", gpu=gpu).runs[0]
    again = relaunch(launch_record(run))
    assert (again.cycles, again.metrics) == (run.cycles, run.metrics)
    assert run.what_if().rows


CHAIN = 16
"""dependent FMAs on each path of the two-path kernel below"""


def _two_paths_ptx() -> str:
    """Lanes with ``tid & diverge`` odd take one path, the others another; each path is CHAIN dependent FMAs.
    diverge=0: every lane takes the same path (converged); diverge=1: even and odd lanes split. Both paths
    write the same register, as compiled code does (the what-if's scoreboard keeps the paths' writes apart)."""
    odd = "\n".join("  fma.rn.f32 %f1, %f1, 0f3F000000, 0f3F800000;" for _ in range(CHAIN))
    even = "\n".join("  fma.rn.f32 %f1, %f1, 0f3F400000, 0f40000000;" for _ in range(CHAIN))
    return f""".version 7.8
.target sm_90
.address_size 64
.visible .entry two_paths(.param .u64 out, .param .u32 diverge)
{{
  .reg .pred %p<2>; .reg .f32 %f<2>; .reg .b32 %r<4>; .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [diverge];
  and.b32 %r3, %r1, %r2;
  cvt.rn.f32.u32 %f1, %r1;
  setp.eq.u32 %p1, %r3, 0;
  @%p1 bra EVEN;
{odd}
  bra.uni JOIN;
EVEN:
{even}
JOIN:
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.f32 [%rd3], %f1;
  ret;
}}
"""


def test_no_divergence_cost_runs_the_two_paths_side_by_side():
    """One warp, two paths of CHAIN dependent FMAs: run one after the other they cost the second chain's
    CHAIN - 1 FMA latencies more than the converged warp; side by side, the converged warp's time (each FMA of
    one path issues in the slot of the other's)."""
    gpu = gpusim.GPU("h100-sxm", sms=1, codegen="none")
    kernel = gpu.load_ptx(_two_paths_ptx())["two_paths"]
    out = gpu.zeros(32, np.float32)
    converged = gpu.launch(kernel, grid=1, block=32, args=[out, 0])
    run = gpu.launch(kernel, grid=1, block=32, args=[out, 1])
    lanes = np.arange(32, dtype=np.float32)
    expect = lanes.copy()
    for _ in range(CHAIN):
        expect = np.where(lanes % 2 == 1, expect * np.float32(0.5) + 1, expect * np.float32(0.75) + 2)
    np.testing.assert_allclose(out.get(), expect, rtol=1e-6)
    fma = gpu.config.fp32_latency_cycles
    serial = run.cycles - converged.cycles
    assert (CHAIN - 1) * fma <= serial <= CHAIN * fma + 2 * gpu.config.branch_latency_cycles   # the second chain
    variant = variant_run(run, "divergence")
    _same_instructions(run, variant)
    # plus the odd path's closing bra.uni to the join, which the converged (even-path) warp does not run
    assert converged.cycles <= variant.cycles <= converged.cycles + 2 * gpu.config.branch_latency_cycles
    assert variant.metrics["smsp__issue_active.avg.pct_of_peak_sustained_active"] > \
        run.metrics["smsp__issue_active.avg.pct_of_peak_sustained_active"]
    row = run.what_if(["divergence"]).row("divergence")
    assert row.measured and row.cycles == variant.cycles


def test_no_divergence_cost_moves_a_shipped_divergent_kernel_and_not_a_converged_one(stream):
    from gpusim.programs.catalog import run_program

    gpu = gpusim.GPU("h100-sxm", sms=1)
    run = run_program(PROGRAMS_DIR / "divergence.toml", gpu=gpu).runs[0]
    variant = variant_run(run, "divergence")
    _same_instructions(run, variant)
    assert variant.cycles < run.cycles
    _, converged, _, _ = stream
    assert converged.metrics["smsp__thread_inst_executed.sum"] == 32 * converged.metrics["smsp__inst_executed.sum"]
    same = variant_run(converged, "divergence")
    assert same.cycles == converged.cycles
    assert same.metrics == converged.metrics
    assert same.stalls == converged.stalls
    assert not converged.what_if(["divergence"]).row("divergence").measured


def test_a_slower_rerun_counts_as_no_speedup_and_says_why(stream, monkeypatch):
    """A machine without a limit can still follow the baseline's schedule: a greedy re-run that comes out slower
    quotes speed-up 1.00, keeps its own cycles and says why; a faster one quotes baseline / its cycles."""
    import gpusim.launch.what_if as W

    _, run, _, _ = stream
    slower, faster = run.cycles + 74, run.cycles - 50
    monkeypatch.setattr(W, "_run_all", lambda record, variants, workers: [(slower, {}), (faster, {})][:len(variants)])
    wi = run.what_if(["launch_overhead", "dram_latency"])
    late, early = wi.row("launch_overhead"), wi.row("dram_latency")
    assert late.cycles == slower and late.speedup == 1.0 and late.measured
    assert f"{slower:,} cycles, 74 more" in late.note and late.note in wi.to_text()
    assert early.speedup == run.cycles / faster and early.note == ""


def test_every_limit_of_a_shipped_program_quotes_at_least_1():
    from gpusim.programs.catalog import run_program

    gpu = gpusim.GPU("teaching")
    run = run_program(PROGRAMS_DIR / "strided_copy.toml", gpu=gpu).runs[0]
    wi = run.what_if()
    for row in wi.rows:
        assert row.speedup >= 1.0
        assert row.speedup == run.cycles / min(row.cycles, run.cycles)
        assert (row.cycles > run.cycles) == ("more:" in row.note)
    assert wi.row("launch_overhead").cycles == variant_run(run, "launch_overhead").cycles


def test_variants_share_the_isa_table_only_where_it_is_the_same():
    """The what-if caches the opcode table by the config fields isa_array reads: for every limit's variant
    config the cached table is the one isa_array builds from that config."""
    from gpusim.arch import isa as I
    from gpusim.launch.what_if import LIMITS, _isa_array

    for name in ("h100-sxm", "teaching", "a100"):
        config = gpusim.GPU(name).config
        for limit in LIMITS:
            variant = config.replace(**limit.overrides(config, None)) if limit.overrides(config, None) else config
            assert np.array_equal(_isa_array(variant), I.isa_array(variant)), (name, limit.id)
    changed = gpusim.GPU("h100-sxm", fp32_latency_cycles=9).config
    assert not np.array_equal(_isa_array(changed), _isa_array(gpusim.GPU("h100-sxm").config))


def test_the_pool_takes_only_the_cpus_the_load_leaves(monkeypatch):
    import gpusim.launch.what_if as W

    monkeypatch.setattr(W, "_usable_cpus", lambda: 16)
    for load, free in ((0.0, 16), (1.0, 16), (5.5, 11), (17.0, 1), (40.0, 1)):
        monkeypatch.setattr(W.os, "getloadavg", lambda load=load: (load, load, load))
        assert W._free_cpus() == free, load
