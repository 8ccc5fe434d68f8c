"""Build the timed engine's state from a config and a checked launch, run it,
and wrap the result in a Run.

L2 contents persist across launches on the same GPU (as on hardware): the L2
state lives on the GPU object and only its fill times are reset (time starts
at 0 in every launch). L1 is rebuilt at each launch with the capacity the
shared-memory carveout leaves it. ``flush_l2`` is Nsight Compute's cache
flush (``--cache-control all``): it drops every L2 line and reports the dirty
sectors a write-back would send to DRAM. The flush happens between launches,
so its write-backs appear in no kernel's counters (the heap already holds the
data: the caches model timing only, never contents).
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import isa as I
from gpusim.engine.memory import memsys as MS
from gpusim.engine.memory import memsys_setup as MSS
from gpusim.engine.memory.cache import make_cache
from gpusim.engine.memory.dram_setup import dram_params_from_config
from gpusim.engine.semantics import state as S
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.schedulers import POLICY_CODES
from gpusim.engine.sm.timing import TIMED_DEADLOCK, TIMED_ERROR, TIMED_LIMIT, TIMED_SLICE, run_timed
from gpusim.errors import DeadlockError, SimulationLimitError
from gpusim.launch.clusters import cluster_size_of
from gpusim.launch.faults import activity_report, divergence_report, raise_engine_error, thread_of, translating, where
from gpusim.launch.printf import deliver_printf
from gpusim.launch.progress import ProgressReporter
from gpusim.launch.run import Run
from gpusim.launch.sanitize import finish as finish_sanitizers
from gpusim.launch.slices import drive
from gpusim.ptx.its_code import engine_code

DEFAULT_TRACE_CAPACITY = 2_000_000
"""Rows per trace table with ``trace=True``; ``trace=N`` sets another capacity. A longer run is cut there."""


def memory_params(config):
    return MSS.make_memsys_params(
        sector_bytes=config.sector_bytes, line_bytes=config.line_bytes,
        l1_latency_cycles=config.l1_latency_cycles, l2_latency_cycles=config.l2_latency_cycles,
        dram_latency_cycles=config.dram_latency_cycles,
        l1_bytes_per_cycle_per_sm=config.l1_bytes_per_cycle_per_sm, l2_slices=config.l2_slices,
        l2_bytes_per_cycle=config.l2_bytes_per_cycle, l2_write_bytes_per_cycle=config.l2_write_bytes_per_cycle,
        l2_partial_write_bytes_per_cycle=config.l2_partial_write_bytes_per_cycle,
        dram_bandwidth_gbs=config.dram_bandwidth_gbs,
        dram_channels=config.dram_channels, dram=dram_params_from_config(config, MS.DRAM_INTERLEAVE_BYTES),
        clock_mhz=config.core_clock_mhz,
        interconnect_bytes_per_cycle_per_sm=config.interconnect_bytes_per_cycle_per_sm,
        mshrs_per_sm=config.mshrs_per_sm,
        atomic_l2_ops_per_cycle_per_slice=config.atomic_l2_ops_per_cycle_per_slice,
        l1_tags_per_cycle=config.l1_tags_per_cycle)


def l2_state(gpu):
    """The GPU's persistent L2, with fill times reset to 'ready' for a new launch."""
    config = gpu.config
    if gpu._l2_state is None:
        gpu._l2_state = make_cache(config.l2_bytes // config.l2_slices, config.line_bytes, config.sector_bytes,
                                   config.l2_assoc, partitions=config.l2_slices, interleaved=True)
    ready = gpu._l2_state[1]
    ready[ready > 0] = 0
    return gpu._l2_state


def flush_l2(gpu) -> int:
    """Write back and invalidate the GPU's L2 (the next launch starts with an empty one); returns the
    dirty sectors written back."""
    if gpu._l2_state is None:
        return 0
    dirty_sectors = int(np.count_nonzero(gpu._l2_state[3]))
    gpu._l2_state = None
    return dirty_sectors


def run_timed_launch(gpu, common: dict, params: np.ndarray, launch: np.ndarray, n_blocks: int, *, trace,
                     progress=False, sampler=None):
    """``sampler``: a gpusim.launch.sampling.WaveSampler that drives the slices instead of ``drive`` (it may
    stop dispatching blocks early: a sampled launch), or None."""
    config = gpu.config
    program = common["program"]
    occ = common["occupancy"]
    wpb = int(launch[S.L_WARPS_PER_BLOCK])
    switches = getattr(gpu, "what_if_switches", None)     # a what-if re-run (gpusim.launch.what_if) or None
    blocks_per_sm = switches.blocks_per_sm(occ, wpb) if switches else occ.blocks_per_sm
    bslots = max(1, min(blocks_per_sm, -(-n_blocks // config.sms)))
    cluster = cluster_size_of(launch)
    gpc = min(config.gpc_sms, config.sms)
    if cluster > 1:      # clusters fill GPC positions (sm/dispatch.py): enough slots for the clusters' waves
        positions = (config.sms // gpc) * (gpc // cluster)
        bslots = max(1, min(blocks_per_sm, -(-(n_blocks // cluster) // positions)))
    slots = bslots * wpb
    nsm = config.sms
    prm = np.zeros(T.N_TP, dtype=np.int64)
    prm[T.TP_NSM] = nsm
    prm[T.TP_NSP] = config.sub_partitions_per_sm
    prm[T.TP_SLOTS] = slots
    prm[T.TP_BSLOTS] = bslots
    prm[T.TP_WPB] = wpb
    prm[T.TP_TPB] = int(launch[S.L_THREADS_PER_BLOCK])
    prm[T.TP_NBLOCKS] = n_blocks
    prm[T.TP_BLOCK_LAUNCH] = config.block_launch_cycles
    prm[T.TP_SHARED_LAT] = config.shared_latency_cycles
    prm[T.TP_SHARED_ATOMIC_LAT] = config.atomic_shared_latency_cycles
    prm[T.TP_MAX_CYCLES] = config.max_cycles
    prm[T.TP_POLICY] = POLICY_CODES[config.scheduler]
    prm[T.TP_TWO_LEVEL_N] = config.two_level_active_warps
    prm[T.TP_BANKS] = config.shared_banks
    prm[T.TP_BANK_BYTES] = config.shared_bank_bytes
    prm[T.TP_SECTOR] = config.sector_bytes
    prm[T.TP_LINE] = config.line_bytes
    prm[T.TP_LOCAL_BYTES] = int(launch[S.L_LOCAL_BYTES])
    prm[T.TP_CLOCK_MHZ] = int(round(config.core_clock_mhz))
    l1_bytes = occ.l1_cache_bytes
    prm[T.TP_USE_L1] = 1 if l1_bytes >= config.line_bytes * config.l1_assoc else 0
    prm[T.TP_SHARED_BYTES_PER_CYCLE] = int(config.shared_bytes_per_cycle_per_sm)
    prm[T.TP_BARRIER_LAT] = config.barrier_latency_cycles
    prm[T.TP_TEX_LAT] = config.texture_latency_cycles
    prm[T.TP_WGMMA_N8_INTERVAL] = switches.wgmma_n8_interval(config) if switches else config.wgmma_n8_interval_cycles
    prm[T.TP_WGMMA_LATENCY] = config.wgmma_latency_cycles
    prm[T.TP_BLOCK_INTERVAL] = max(config.block_dispatch_interval_cycles, round(wpb * config.warp_dispatch_cycles))
    prm[T.TP_BARRIER_PER_WARP] = config.barrier_cycles_per_warp
    prm[T.TP_TMA_INTERVAL] = max(1, round(256 / config.tma_requests_per_cycle))
    prm[T.TP_TMA_DESC_MISS] = config.tma_descriptor_miss_cycles
    prm[T.TP_CLUSTER] = cluster
    prm[T.TP_GPC_SMS] = gpc
    prm[T.TP_DSM_RTT] = config.dsm_round_trip_cycles
    prm[T.TP_DSM_MILLIBYTES] = max(1, int(round(config.dsm_bytes_per_cycle_per_sm * 1000)))
    prm[T.TP_CLUSTER_BAR_LAT] = config.cluster_barrier_latency_cycles
    prm[T.TP_WGMMA_QUEUE] = config.wgmma_queue_depth
    prm[T.TP_WHATIF] = switches.engine_bits if switches else 0
    isa_table = switches.isa_table(config) if switches else I.isa_array(config)
    capacity = 0 if not trace else (DEFAULT_TRACE_CAPACITY if trace is True else int(trace))
    ts = T.make_timing_state(prm=prm, isa_table=isa_table, pipe_interval=I.pipe_intervals(config),
                             n_regs=program.n_regs, n_inst=program.n_inst, trace_capacity=capacity)
    heap = gpu.heap
    m = S.make_machine(warp_slots=nsm * slots, n_regs=program.n_regs, stack_depth=int(launch[S.L_STACK_DEPTH]),
                       block_slots=nsm * bslots, shared_bytes=common["shared_bytes"],
                       local_bytes=int(launch[S.L_LOCAL_BYTES]), heap=heap.data, valid=heap.valid, params=params,
                       launch=launch, n_inst=program.n_inst,
                       printf_bytes=config.printf_fifo_bytes if program.has_printf else 0)
    mparams, rates = memory_params(config)
    l1 = make_cache(max(l1_bytes, config.line_bytes * config.l1_assoc), config.line_bytes, config.sector_bytes,
                    config.l1_assoc, partitions=nsm)
    servers = MSS.make_memsys_servers(sms=nsm, l2_slices=config.l2_slices, params=mparams)
    mshr = np.zeros((nsm, config.mshrs_per_sm), dtype=np.int64)
    mcounters = np.zeros(MS.N_COUNTERS, dtype=np.int64)
    ms = T.MemorySystem(l1=l1, l2=l2_state(gpu), servers=servers, mshr=mshr, params=mparams, rates=rates,
                              counters=mcounters)
    reporter = ProgressReporter(progress, program.name, n_blocks)
    code = engine_code(program, launch[S.L_RECONVERGENCE] == S.RECONV_ITS)

    def call(budget):
        return run_timed(ts, m, ms, code, budget)

    def on_slice():
        reporter.report(ts.ctr[T.TC_BLOCKS_DONE], ts.pipe_issues.sum(), ts.loop[T.LP_CYCLE])

    try:
        with translating(program, m):
            if sampler is None:
                status, end_cycle = drive(call, TIMED_SLICE, on_slice if reporter.active else None)
            else:
                status, end_cycle = sampler.drive(call, ts, m, ms, on_slice if reporter.active else None)
    finally:
        reporter.close()
    if status == TIMED_ERROR:
        raise_engine_error(m, program)
    if status == TIMED_DEADLOCK:
        raise DeadlockError(_stuck_report(ts, m, program, end_cycle))
    if status == TIMED_LIMIT:
        raise SimulationLimitError(_limit_report(ts, m, program, config, n_blocks, end_cycle))
    counters = {name: int(ts.ctr[index]) for name, index in _TIMING_COUNTER_NAMES.items()}
    counters.update({name: int(mcounters[index]) for name, (index, _, _) in MS.COUNTERS.items()})
    counters["sm_active_cycles"] = int(ts.sm_active_cycles.sum())
    counters["sm_active_cycles_max"] = int(ts.sm_active_cycles.max())
    counters["sms_used"] = int(np.count_nonzero(ts.sm_active_cycles))
    for pipe, name in enumerate(I.PIPE_NAMES):
        counters[f"pipe_{name}_issues"] = int(ts.pipe_issues[pipe])
    from gpusim.engine.sm.stalls import STATE_NAMES

    stalls = {name: int(ts.stalls[i]) for i, name in enumerate(STATE_NAMES)}
    run = Run(**common, pc_counts=m.pc_counts.copy(), timing=True, cycles=int(end_cycle), counters=counters,
              stalls=stalls, pc_stalls=ts.pc_stalls.copy(), pc_memory=ts.pc_mem.copy())
    deliver_printf(gpu, run, m, program)
    finish_sanitizers(gpu, run, m, program)
    if capacity:
        from gpusim.observe.trace import Trace

        run.trace = Trace.from_engine(run, ts, slots=slots, bslots=bslots, warp_block=m.warp_block,
                                      warp_index=m.warp_index)
    return run


_TIMING_COUNTER_NAMES = {
    "global_load_requests": T.TC_GLD_REQ, "global_load_sectors": T.TC_GLD_SECTORS,
    "global_load_ideal_sectors": T.TC_GLD_IDEAL, "global_store_requests": T.TC_GST_REQ,
    "global_store_sectors": T.TC_GST_SECTORS, "global_store_ideal_sectors": T.TC_GST_IDEAL,
    "global_atomic_requests": T.TC_GATOM_REQ, "global_atomic_sectors": T.TC_GATOM_SECTORS,
    "local_load_requests": T.TC_LLD_REQ, "local_load_sectors": T.TC_LLD_SECTORS,
    "local_store_requests": T.TC_LST_REQ, "local_store_sectors": T.TC_LST_SECTORS,
    "shared_load_requests": T.TC_SHLD_REQ, "shared_load_wavefronts": T.TC_SHLD_WAVEFRONTS,
    "shared_load_ideal_wavefronts": T.TC_SHLD_IDEAL, "shared_store_requests": T.TC_SHST_REQ,
    "shared_store_wavefronts": T.TC_SHST_WAVEFRONTS, "shared_store_ideal_wavefronts": T.TC_SHST_IDEAL,
    "shared_atomic_requests": T.TC_SHATOM_REQ, "shared_atomic_wavefronts": T.TC_SHATOM_WAVEFRONTS,
    "lg_throttle_cycles": T.TC_LG_THROTTLE_CYCLES, "blocks_done": T.TC_BLOCKS_DONE,
    "texture_requests": T.TC_TEX_REQ, "texture_sectors": T.TC_TEX_SECTORS,
}


def _limit_report(ts, m, program, config, n_blocks, cycle) -> str:
    """The SimulationLimitError of a timed run: how far it got, how to raise the limit, what it was doing."""
    ms = config.max_cycles / (config.core_clock_mhz * 1e3)
    head = (f"kernel '{program.name}' passed the config's max_cycles ({config.max_cycles:,} cycles, {ms:g} ms "
            f"of GPU time at {config.core_clock_mhz:g} MHz) at cycle {cycle:,}, with "
            f"{int(ts.ctr[T.TC_BLOCKS_DONE])} of {n_blocks} blocks done and {int(ts.pipe_issues.sum()):,} "
            f"warp-instructions issued; an endless loop, or a kernel longer than the limit: raise it with "
            f"GPU('{config.name}', max_cycles=N), or max_cycles in the [launch] table of a config TOML "
            f"(gpusim run --config FILE)")
    activity = activity_report(m, program).split("\n")[:4]    # the most executed instructions
    diverged = divergence_report(m, program)
    return "\n".join([head] + activity + [_stuck_report(ts, m, program, cycle, header=False, title=True)]
                     + ([diverged] if diverged else []))


def _stuck_report(ts, m, program, cycle, header=True, title=False) -> str:
    from gpusim.engine.sm.stalls import STATE_NAMES

    lines = [f"kernel '{program.name}': no warp can ever issue again (cycle {cycle}); stuck warps:"] if header \
        else (["resident warps (16 at most):"] if title else [])
    shown = 0
    for w in range(ts.w_resident.shape[0]):
        if ts.w_resident[w] and shown < 16:
            block, _ = thread_of(m, m.launch, w, 0)
            pc = int(m.stk_pc[w, m.sp[w]]) if m.sp[w] >= 0 else -1
            if ts.w_bar[w] and m.bar_red[w, 0]:         # a waiting bar.red keeps its pc
                reason = f"waits at a barrier reduction (bar id {int(ts.w_bar_id[w]) & 0xFFFF}) at {where(program, pc)}"
            elif ts.w_bar[w]:
                reason = f"waits at a barrier (bar id {int(ts.w_bar_id[w]) & 0xFFFF}) just before {where(program, pc)}"
            else:
                reason = f"{STATE_NAMES[int(ts.w_state[w])]} at {where(program, pc)}"
            lines.append(f"  block {block} warp {int(m.warp_index[w])}: {reason}")
            shown += 1
    return "\n".join(lines)
