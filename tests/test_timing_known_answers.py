"""Known-answer tests of the timing model: every expected value is a formula over config fields.

The microbenchmarks (tests/timing_kernels.py) isolate one latency or throughput each; slopes between
two sizes cancel fixed start-up costs, so the expectations are exact where the model is exact.
"""

import math
from math import gcd

import numpy as np
import pytest

import gpusim
from tests import timing_kernels as K

H100 = "h100-sxm"


def _chain_cycles(gpu, count):
    kernel = gpu.load_ptx(K.dependent_ffma(count))["chain"]
    out = gpu.empty(1, np.float32)
    return gpu.launch(kernel, grid=1, block=32, args=[out]).cycles


@pytest.mark.parametrize("config", [H100, "teaching", "v100"])
def test_dependent_ffma_chain_slope_is_the_fp32_latency(config):
    gpu = gpusim.GPU(config, sms=1)
    slope = (_chain_cycles(gpu, 96) - _chain_cycles(gpu, 32)) / 64
    assert slope == gpu.config.fp32_latency_cycles


def test_ffma_latency_follows_the_config():
    gpu = gpusim.GPU(H100, sms=1, fp32_latency_cycles=6)
    assert (_chain_cycles(gpu, 80) - _chain_cycles(gpu, 16)) / 64 == 6


def _chase(gpu, table, hops):
    kernel = gpu.load_ptx(K.POINTER_CHASE)["chase"]
    out = gpu.empty(1, np.uint32)
    run = gpu.launch(kernel, grid=1, block=1, args=[table, out, hops])
    return run


CODEGEN = pytest.mark.parametrize("codegen", ["ptxas", "none"])


def _hop_overhead(config, codegen):
    """Address arithmetic on the chain between two loads. As ptxas compiles it, one IMAD.WIDE
    (programs/sass/sm_90/pointer_chase.sass: ``IMAD.WIDE R2, R11, 0x4, R4`` then ``LDG.E R11, [R2.64]``;
    the loop counter and branch are off the chain); as the PTX is written, mul.wide (IMAD) then add.s64
    (ALU)."""
    if codegen == "ptxas":
        return config.imad_latency_cycles
    return config.imad_latency_cycles + config.int32_latency_cycles


@CODEGEN
def test_pointer_chase_l1_hit_costs_the_l1_latency_plus_address_arithmetic(codegen):
    gpu = gpusim.GPU(H100, sms=1, codegen=codegen)
    ring = 16                                      # 64 bytes: one line, L1-resident after one lap
    table = gpu.to_device(((np.arange(ring) + 1) % ring).astype(np.uint32))
    _chase(gpu, table, ring)                       # warms L2, so both timed launches start alike
    slope = (_chase(gpu, table, 400).cycles - _chase(gpu, table, 200).cycles) / 200
    assert slope == gpu.config.l1_latency_cycles + _hop_overhead(gpu.config, codegen)


@CODEGEN
def test_pointer_chase_l2_hit_costs_the_l2_latency_plus_address_arithmetic(codegen):
    gpu = gpusim.GPU(H100, sms=1, codegen=codegen)
    stride_words = 32                              # one 128-byte line per hop
    lines = 2 * gpu.config.l1_shared_bytes_per_sm // gpu.config.line_bytes   # twice any L1 size
    assert lines * gpu.config.line_bytes < gpu.config.l2_bytes
    entries = lines * stride_words
    nxt = (np.arange(entries) + stride_words) % entries
    table = gpu.to_device(nxt.astype(np.uint32))
    _chase(gpu, table, lines)                      # warms L2 (L2 persists across launches, L1 does not)
    slope = (_chase(gpu, table, 2000).cycles - _chase(gpu, table, 1000).cycles) / 1000
    assert slope == gpu.config.l2_latency_cycles + _hop_overhead(gpu.config, codegen)


@CODEGEN
def test_pointer_chase_dram_access_costs_the_dram_latency_plus_address_arithmetic(codegen):
    """Each hop reads a new 256-byte block, in address order, on one DRAM channel (refresh off here; its cost
    is tested in test_dram.py). The channel-local block b lies in row b // per_row of the bank its position
    b % per_row selects, the first `banks` positions in different banks (address map row:column:bank:bankgroup
    with the bank rotated by the row): the first block of a row in each bank opens it (a conflict, the full DRAM
    latency, or tRP less when the bank was still closed), the rest are row hits (tRP + tRCD less)."""
    stride_words = 64                              # a new 256-byte block each hop: always a cold miss
    hops = (100, 300)
    cycles = []
    for count in hops:
        gpu = gpusim.GPU(H100, sms=1, codegen=codegen, dram_trefi_ns=0.0)   # a fresh GPU: cold L2
        entries = (count + 1) * stride_words
        table = gpu.to_device(((np.arange(entries) + stride_words) % entries).astype(np.uint32))
        cycles.append(_chase(gpu, table, count).cycles)
    c = gpu.config
    assert c.dram_channels == 1 and c.dram_address_map == "row:column:bank:bankgroup"
    banks = c.dram_bank_groups * c.dram_banks_per_group
    per_row = banks * c.dram_row_bytes // (stride_words * 4)        # blocks per row index
    per_ns = c.core_clock_mhz / 1000
    conflict = c.dram_latency_cycles
    empty = math.ceil(conflict - c.dram_trp_ns * per_ns)
    hit = math.ceil(conflict - (c.dram_trp_ns + c.dram_trcd_ns) * per_ns)
    costs = [hit if block % per_row >= banks else (empty if block < per_row else conflict)
             for block in range(hops[0], hops[1])]
    slope = (cycles[1] - cycles[0]) / (hops[1] - hops[0])
    assert slope == pytest.approx(sum(costs) / len(costs) + _hop_overhead(c, codegen), abs=1e-9)


def test_h100_latencies_land_on_published_measurements():
    config = gpusim.load_config(H100)
    assert config.fp32_latency_cycles == 4
    assert 30 <= config.l1_latency_cycles <= 40
    assert 200 <= config.l2_latency_cycles <= 260
    assert 500 <= config.dram_latency_cycles <= 850


def _diverge_cycles(gpu, mask_a, warp_split, chain):
    kernel = gpu.load_ptx(K.diverge(chain))["diverge"]
    out = gpu.empty(64, np.float32)
    run = gpu.launch(kernel, grid=1, block=64, args=[out, mask_a, warp_split])
    return run


def test_intra_warp_divergence_costs_both_paths_inter_warp_costs_nothing():
    gpu = gpusim.GPU(H100, sms=1)
    chain = 64
    uniform = _diverge_cycles(gpu, 0xFFFFFFFF, 0, chain)
    intra = _diverge_cycles(gpu, 0x55555555, 0, chain)
    inter = _diverge_cycles(gpu, 0b01, 5, chain)
    config = gpu.config
    slack = 2 * config.branch_latency_cycles + 2 * config.int32_latency_cycles
    second_path = chain * config.fp32_latency_cycles
    assert abs(intra.cycles - uniform.cycles - second_path) <= slack
    assert abs(inter.cycles - uniform.cycles) <= slack
    # SIMD efficiency shows it too: in the divergent chains half the lanes are idle
    assert intra.metrics["smsp__thread_inst_executed_per_inst_executed.ratio"] < \
        uniform.metrics["smsp__thread_inst_executed_per_inst_executed.ratio"]


@pytest.mark.parametrize("stride", [1, 2, 4, 8, 32])
def test_sectors_per_request_for_float_strides(stride):
    gpu = gpusim.GPU(H100, sms=2)
    threads = 256
    src = gpu.to_device(np.arange(threads * stride, dtype=np.float32))
    dst = gpu.empty(threads, np.float32)
    kernel = gpu.load_ptx(K.STRIDED_LOAD)["strided"]
    run = gpu.launch(kernel, grid=2, block=128, args=[src, dst, stride])
    assert np.array_equal(dst.get(), np.arange(threads * stride, dtype=np.float32)[::stride])
    metrics = run.metrics
    per_request = metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] / \
        metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
    bytes_per_warp = 32 * 4 * stride
    expected = min(32, bytes_per_warp // gpu.config.sector_bytes)
    assert per_request == expected


def _expected_wavefronts(stride, banks=32):
    words = [(lane * stride) % 1024 for lane in range(32)]
    per_bank: dict[int, set] = {}
    for word in words:
        per_bank.setdefault(word % banks, set()).add(word)
    return max(len(v) for v in per_bank.values())


@pytest.mark.parametrize("stride,expected", [(1, 1), (2, 2), (32, 32), (33, 1), (0, 1)])
def test_shared_memory_wavefronts_for_word_strides(stride, expected):
    assert _expected_wavefronts(stride) == expected == (gcd(stride, 32) if stride else 1)
    gpu = gpusim.GPU(H100, sms=1)
    dst = gpu.empty(32, np.float32)
    kernel = gpu.load_ptx(K.SHARED_STRIDE)["shared_stride"]
    run = gpu.launch(kernel, grid=1, block=32, args=[dst, stride])
    metrics = run.metrics
    wavefronts = metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
    assert wavefronts / metrics["smsp__inst_executed_op_shared_ld.sum"] == expected
    assert metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == expected - 1


def _stream_bandwidth(config_name, warps, iters=6, vector_width=4, **overrides):
    gpu = gpusim.GPU(config_name, **overrides)
    block = 64
    grid = max(1, warps * 32 // block) * gpu.config.sms
    threads = grid * block
    src = gpu.to_device(np.ones(threads * vector_width * 4 * iters + 16, np.float32))
    out = gpu.empty(threads, np.float32)
    kernel = gpu.load_ptx(K.stream_loads(vector_width))["stream_loads"]
    run = gpu.launch(kernel, grid=grid, block=block, args=[src, out, iters])
    assert np.all(out.get() == 4 * iters)
    return gpu, run


def test_one_sm_streaming_bandwidth_follows_littles_law():
    """Bandwidth = min(bytes in flight / latency, the SM's share of DRAM bandwidth)."""
    bytes_in_flight_per_warp = 4 * 32 * 4           # four float loads per warp before it waits
    measured = {}
    # the law is about the memory system in steady state: the work distributor's start-up ramp (GH100's
    # measured 172 cycles per block, 6.6 per warp) is a fixed cost this short kernel would otherwise mix in
    no_ramp = {"block_dispatch_interval_cycles": 0, "warp_dispatch_cycles": 0.0}
    for warps in (2, 4, 8, 32, 64):
        gpu, run = _stream_bandwidth(H100, warps, vector_width=1, sms=1, **no_ramp)
        measured[warps] = run.metrics["dram__bytes_read.sum"] / run.cycles
    config = gpu.config
    peak = config.dram_bandwidth_gbs * 1e9 / config.clock_hz * config.dram_efficiency
    for warps, bandwidth in measured.items():
        littles_law = min(warps * bytes_in_flight_per_warp / config.dram_latency_cycles, peak)
        assert bandwidth == pytest.approx(littles_law, rel=0.2), (warps, bandwidth, littles_law)
    assert measured[4] > 1.6 * measured[2]          # linear below the knee
    assert measured[64] == pytest.approx(measured[32], rel=0.1)   # flat above it


def test_streaming_reaches_about_ninety_percent_of_dram_peak():
    gpu, run = _stream_bandwidth(H100, 32, iters=8, sms=4)
    pct = run.metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"]
    assert 80 <= pct <= 100 * gpu.config.dram_efficiency + 1



@pytest.mark.parametrize("sms, pitch_kib", [(1, 2), (1, 4), (1, 8), (1, 16), (8, 2), (8, 16)])
def test_rows_read_16_bytes_at_a_time_fetch_each_sector_from_dram_once(sms, pitch_kib):
    """Each thread streams its own row; a sector's second 16 bytes are read a DRAM latency after its first.

    The rows' current lines (one per thread) fit in L1 and L2 many times over, so every sector comes from
    DRAM once and the stream runs near the sustained peak. With the set index a plain modulo, rows at a
    power-of-two pitch shared a few sets (20 of an L2 slice's 320 at 2 KiB), the lines were evicted between
    the two halves and DRAM read every byte twice."""
    gpu = gpusim.GPU(H100, sms=sms)
    kernel = gpu.load_ptx(K.ROWS_16B)["rows16"]
    blocks, threads = 4 * sms, 256
    rows, pitch = blocks * threads, pitch_kib * 1024
    data = np.random.default_rng(pitch_kib).integers(0, 2**32, size=rows * pitch // 4, dtype=np.uint32)
    out = gpu.zeros(rows, np.uint32)
    run = gpu.launch(kernel, grid=blocks, block=threads,
                     args=[gpu.to_device(data), out, np.uint32(pitch), np.uint32(pitch // 16)])
    assert np.array_equal(out.get(), np.bitwise_xor.reduce(data.reshape(rows, -1), axis=1))
    assert rows // sms <= gpu.config.l1_cache_bytes(0) // gpu.config.line_bytes  # current lines fit in L1
    # one L2 slice: exactly once; several slices index their sets by irregular ranks (cache docstring), which
    # leaves a few sets over-full: 146 sectors of 4 M at 16 KiB on 8 SMs, so allow 0.1 %
    slack = 0 if gpu.config.l2_slices == 1 else data.nbytes // 1000
    assert data.nbytes <= run.metrics["dram__bytes_read.sum"] <= data.nbytes + slack
    pct = run.metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"]
    # every sector read twice would halve the rate; the 1024 rows each SM streams at once also share the DRAM
    # banks (row conflicts between them cost up to a quarter of the peak at a 2 KiB pitch)
    assert 50 <= pct <= 100 * gpu.config.dram_efficiency + 1

def test_compute_bound_kernel_reaches_ninety_percent_of_issue_peak():
    from benchmarks.kernels import FFMA_LOOP

    gpu = gpusim.GPU(H100, sms=2)
    kernel = gpu.load_ptx(FFMA_LOOP)["ffma_loop"]
    out = gpu.empty(64 * 128, np.float32)
    run = gpu.launch(kernel, grid=64, block=128, args=[out, 64])
    assert run.metrics["smsp__issue_active.avg.pct_of_peak_sustained_active"] >= 90


def test_scheduler_policies_change_order_not_results():
    from gpusim.programs.catalog import run_program

    outputs = {}
    orders = {}
    for policy in ("gto", "lrr", "two_level"):
        gpu = gpusim.GPU("teaching", scheduler=policy)
        result = run_program("programs/reduce_shared.toml", gpu=gpu)
        assert result.ok
        outputs[policy] = {name: array.copy() for name, array in result.arrays.items()}
        kernel_run = result.runs[0]
        orders[policy] = kernel_run.cycles
    for name in outputs["gto"]:
        assert np.array_equal(outputs["gto"][name], outputs["lrr"][name])
        assert np.array_equal(outputs["gto"][name], outputs["two_level"][name])
    gto, lrr = (gpusim.GPU("teaching", scheduler=p) for p in ("gto", "lrr"))
    sequences = []
    for gpu in (gto, lrr):
        kernel = gpu.load_ptx(K.dependent_ffma(8))["chain"]
        run = gpu.launch(kernel, grid=1, block=512, args=[gpu.empty(1, np.float32)], trace=True)
        sequences.append(run.trace.raw_issues[:, 1].tolist())
    assert sorted(sequences[0]) == sorted(sequences[1]) and sequences[0] != sequences[1]


def test_gto_falls_back_to_the_oldest_ready_warp():
    """gto (docs/design.md): the last issued warp while it can issue, else the *oldest* ready one. Four warps
    of one block on one scheduler each run a dependent FFMA chain, so the last issued warp can never issue
    the next cycle and every pick is the fallback: the oldest warp (the first of the block) keeps the lead
    and the warps finish in age order, strictly. Loose round-robin has no such order to keep. The traced
    engine (every warp evaluated every cycle) and the lazy one (parked warps) must pick alike."""
    for trace in (False, True):
        gpu = gpusim.GPU("teaching", sms=1, scheduler="gto", sub_partitions_per_sm=1, codegen="none")
        kernel = gpu.load_ptx(K.finish_clock(16))["finish_order"]
        out = gpu.zeros(4, np.uint32)
        gpu.launch(kernel, grid=1, block=128, args=[out], trace=trace)
        finished = out.get()
        assert np.all(np.diff(finished.astype(np.int64)) > 0), (trace, finished)


def test_identical_runs_give_identical_metrics():
    from gpusim.programs.catalog import run_program

    first = run_program("programs/histogram.toml", gpu=gpusim.GPU("teaching"))
    second = run_program("programs/histogram.toml", gpu=gpusim.GPU("teaching"))
    assert [r.cycles for r in first.runs] == [r.cycles for r in second.runs]
    assert [r.metrics for r in first.runs] == [r.metrics for r in second.runs]
    assert [r.stalls for r in first.runs] == [r.stalls for r in second.runs]


def _residencies(run) -> list[tuple[int, int, int]]:
    """(sm, first cycle, end cycle) of every warp's residency (a warp slot holding one block's warp), from the
    trace's state intervals, after checking that they tile it: sorted by start, each begins where the
    previous ended (one state per cycle, no cycle missing or charged twice)."""
    from gpusim.engine.sm import timing_state as T

    rows = run.trace.raw_intervals
    found = []
    for slot, block in np.unique(rows[:, [T.TR_WARP, T.TR_BLOCK]], axis=0):
        mine = rows[(rows[:, T.TR_WARP] == slot) & (rows[:, T.TR_BLOCK] == block)]
        mine = mine[np.argsort(mine[:, T.TR_START], kind="stable")]
        assert np.all(mine[:, T.TR_END] > mine[:, T.TR_START])
        assert np.array_equal(mine[1:, T.TR_START], mine[:-1, T.TR_END]), f"warp slot {slot}: gap or overlap"
        found.append((int(run.trace.sm_of(np.array([slot]))[0]), int(mine[0, T.TR_START]), int(mine[-1, T.TR_END])))
    return found


def _union_length(spans: list[tuple[int, int]]) -> int:
    """Cycles covered by at least one of the half-open spans."""
    total, end = 0, None
    for first, last in sorted(spans):
        if end is None or first > end:
            total, end = total + (last - first), last
        elif last > end:
            total, end = total + (last - end), last
    return total


def _stall_runs():
    gpu = gpusim.GPU("teaching")
    diverge = gpu.load_ptx(K.diverge(16))["diverge"]
    yield "one warp", gpu.launch(diverge, grid=1, block=32, args=[gpu.empty(64, np.float32), 0x0F0F0F0F, 0],
                                 trace=True)
    yield "two diverging warps", gpu.launch(diverge, grid=1, block=64,
                                            args=[gpu.empty(64, np.float32), 0x0F0F0F0F, 0], trace=True)
    vecadd = gpu.load("programs/vecadd.ptx")["vecadd"]
    n = 4096
    ones = gpu.to_device(np.ones(n, np.float32))
    for block in (32, 256):       # waves of blocks: warp slots are reused by later blocks
        yield f"vecadd block {block}", gpu.launch(vecadd, grid=n // block, block=block,
                                                  args=[ones, ones, gpu.empty(n, np.float32), np.int32(n)],
                                                  trace=True)
    reduce = gpu.load("programs/reduce_shared.ptx")["reduce_shared"]
    data = gpu.to_device(np.ones(1000, np.float32))
    yield "reduce_shared (barriers)", gpu.launch(reduce, grid=4, block=256, args=[data, gpu.empty(4, np.float32),
                                                                                   np.int32(1000)],
                                                 shared_bytes=256 * 4, trace=True)


def test_stall_states_add_up_to_resident_warp_cycles_exactly():
    """docs/design.md: every resident warp is in exactly one state every cycle, so ``sum(run.stalls)`` is the
    resident warp-cycles: the sum over warps of (exit - dispatch). Checked exactly on five launches against
    the trace's intervals (which must tile each warp's residency) and against the SM-active-cycles counter,
    which the engine counts apart from the stalls: per SM, the cycles some warp is resident."""
    for what, run in _stall_runs():
        resident = _residencies(run)
        warp_cycles = sum(last - first for _, first, last in resident)
        assert sum(run.stalls.values()) == warp_cycles, what
        active = sum(_union_length([(f, e) for s, f, e in resident if s == sm]) for sm in {s for s, _, _ in resident})
        assert run.counters["sm_active_cycles"] == active, what
        assert run.stalls["selected"] == run.metrics["smsp__inst_executed.sum"], what
        if what == "one warp":        # one warp slot resident from the first cycle to the last
            assert sum(run.stalls.values()) == run.cycles == run.counters["sm_active_cycles"]


def test_l1_hit_bandwidth_is_the_configured_bytes_per_cycle_per_sm():
    gpu = gpusim.GPU(H100, sms=1)
    src = gpu.to_device(np.ones(128 * 4, np.float32))
    out = gpu.empty(1024, np.float32)
    kernel = gpu.load_ptx(K.L1_RESIDENT_LOADS)["l1_loads"]
    iters = 64
    run = gpu.launch(kernel, grid=1, block=1024, args=[src, out, iters])
    assert np.all(out.get() == iters)
    l1_bytes = run.counters["l1_hit_sectors"] * gpu.config.sector_bytes
    per_cycle = l1_bytes / run.cycles
    assert per_cycle <= gpu.config.l1_bytes_per_cycle_per_sm
    assert per_cycle >= 0.8 * gpu.config.l1_bytes_per_cycle_per_sm


def test_bank_conflicts_are_limited_by_the_sms_shared_data_path():
    """Four sub-partitions share one data path: 32-way conflicts from every warp serialise per SM."""
    gpu = gpusim.GPU(H100, sms=1)
    dst = gpu.empty(1024, np.float32)
    kernel = gpu.load_ptx(K.SHARED_STRIDE)["shared_stride"]
    run = gpu.launch(kernel, grid=1, block=1024, args=[dst, 32])
    wavefronts = run.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
    assert wavefronts == 32 * 32
    bytes_per_wavefront = gpu.config.shared_banks * gpu.config.shared_bank_bytes
    assert run.cycles >= wavefronts * bytes_per_wavefront / gpu.config.shared_bytes_per_cycle_per_sm


def _l1tex_cycles_per_request(config, stride_bytes):
    """A 32-lane 4-byte request at ``lane * stride_bytes``: the slower of the tag stage (ceil(distinct lines /
    l1_tags_per_cycle)) and the data stage (the most distinct words any bank delivers, x 128 B, at
    l1_bytes_per_cycle_per_sm)."""
    addresses = np.arange(32) * stride_bytes
    lines = len(set(addresses // config.line_bytes))
    words = addresses // config.shared_bank_bytes
    banks = words % config.shared_banks
    data_wavefronts = max(len(set(words[banks == bank])) for bank in set(banks))
    wavefront_bytes = config.shared_banks * config.shared_bank_bytes
    data_cycles = data_wavefronts * wavefront_bytes / config.l1_bytes_per_cycle_per_sm
    return max(-(-lines // config.l1_tags_per_cycle), data_cycles)


@pytest.mark.parametrize("stride_bytes,tags", [(132, 4), (132, 1), (128, 4), (4, 4), (256, 2)])
def test_l1_hit_requests_cost_their_tag_and_data_stage_cycles(stride_bytes, tags):
    """32 warps re-read 32 L1-resident words at a stride: the SM's L1TEX pipeline is the bottleneck, so the
    slope per warp request is the request's tag-stage or data-stage cycles, whichever is larger: 132 B
    (32 lines, 32 banks) is tag-bound at ceil(32 / tags); 128 B (32 lines, one bank) and 256 B are
    data-bound at 32 wavefronts, as lanes of a naive matmul reading down a column are."""
    gpu = gpusim.GPU(H100, sms=1, l1_tags_per_cycle=tags)
    expected = _l1tex_cycles_per_request(gpu.config, stride_bytes)
    src = gpu.to_device(np.ones(32 * stride_bytes // 4 + 1, np.float32))
    out = gpu.empty(1024, np.float32)
    kernel = gpu.load_ptx(K.L1_STRIDED_LOADS)["l1_strided"]
    # the first launch brings the words into L2 (kept between launches), so the two timed ones start alike
    cycles = [gpu.launch(kernel, grid=1, block=1024, args=[src, out, iters, stride_bytes]).cycles
              for iters in (1, 32, 64)][1:]
    assert np.all(out.get() == 64)
    slope = (cycles[1] - cycles[0]) / (32 * 32)     # cycles per warp request, start-up cancelled
    if expected >= 4:                                # the L1TEX pipeline binds
        assert slope == pytest.approx(expected, rel=0.05)
    else:                                            # a 1-line request: bound by issue, never by L1TEX
        assert slope < 4
