"""The MWP-CWP model of Hong & Kim ("An Analytical Model for a GPU Architecture with Memory-level and
Thread-level Parallelism Awareness", ISCA 2009), fed from a run's instruction mix and memory statistics.

What it models: an SM runs N active warps (active blocks per SM x warps per block). A warp alternates
computation with *memory waiting periods*. MWP (memory warp parallelism) is how many warps' memory periods
can overlap: ``MWP = min(Mem_L / Departure_delay, MWP_peak_BW, N)`` with
``MWP_peak_BW = Mem_Bandwidth / (BW_per_warp x #ActiveSM)`` and ``BW_per_warp = bytes per period / Mem_L``.
CWP (computation warp parallelism) is how many warps compute while one waits:
``CWP = min((Mem_cycles + Comp_cycles) / Comp_cycles, N)``. The paper's three cases give the cycles of one
repetition (N warps on each active SM) and the kernel runs ``#Rep = blocks / (active blocks per SM x
#ActiveSM)`` of them, plus the synchronization cost:

* MWP = N = CWP (not enough warps to saturate anything): Mem + Comp + Comp/#periods x (MWP - 1);
* CWP >= MWP or Comp > Mem (memory-bound): Mem x N / MWP + Comp/#periods x (MWP - 1);
* MWP > CWP (compute-bound): Mem_L + Comp x N;
* barriers: Departure_delay x (MWP - 1) x barriers per warp x active blocks per SM x #Rep.

How it is fed (the paper takes these from the PTX and microbenchmarks; here they come from the run):

* **Memory periods.** The paper charges Mem_L for every memory instruction. A warp waits only for loads
  (and atomics) and only once for loads issued back to back before any of their results is used, so a
  period is a group of consecutive global/local loads in the PTX, closed by the first instruction that
  reads a register one of them writes or by a branch; its dynamic count comes from the per-pc counts.
  Stores do not open a period (the warp does not wait for them); their bytes count towards bandwidth.
* **Mem_L.** Mem_LD is the latency of the level that serves the L1 misses (the L2 and DRAM latencies
  weighted by the L2 hit rate; the L1 latency when nothing misses). Like the paper's uncoalesced case, the
  last sector of a period leaves the SM ``(sectors - 1) x`` one sector's port time after the first:
  Mem_L = Mem_LD + that spread.
* **Departure delay** between two warps' periods: the time the SM's memory path is busy with one period,
  the largest of its requests at one per cycle (the LSU pipes of all sub-partitions), its sectors over the
  L1 data path and its L1-miss sectors over the SM's interconnect port.
* **Bandwidth.** Bytes per period are the DRAM bytes (read + written) per warp per period, against the
  sustained DRAM bandwidth, and the L2 sectors per period against the L2 bandwidth; the tighter sets
  MWP_peak_BW.
* **Comp_cycles** per warp: its warp-instructions over the SM's issue rate (one per sub-partition per
  cycle), or its busiest pipe's occupancy if that is larger (e.g. FP64 or SFU at a fraction of the rate).

Known limits: Mem_L is the unloaded latency (queueing appears only through MWP_peak_BW); L1 hits inside a
period count as misses when other loads of the period miss; the fixed repetitions ignore that a new block
starts as soon as one finishes; divergence is folded into the instruction counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpusim.arch import codes, isa, layout
from gpusim.arch.config import WARP_SIZE
from gpusim.errors import GpusimError


@dataclass(frozen=True)
class MWPCWPPrediction:
    """The model's inputs, its intermediate terms and its predicted cycles."""

    warps_per_sm: float
    """N: active warps per SM (active blocks per SM x warps per block)"""
    active_sms: int
    """#ActiveSM: SMs with at least one block"""
    repetitions: float
    """#Rep: blocks / (active blocks per SM x #ActiveSM)"""
    instructions_per_warp: float
    memory_instructions_per_warp: float
    """global/local loads, stores and atomics per warp"""
    memory_periods_per_warp: float
    """memory waiting periods per warp (groups of loads issued before any of their results is used)"""
    bytes_per_memory_instruction: float
    """bytes of the sectors one memory request touches, on average"""
    dram_bytes_per_period: float
    memory_latency_cycles: float
    """Mem_L: Mem_LD plus the departure spread of one period's sectors"""
    departure_delay_cycles: float
    mwp_without_bandwidth: float
    mwp_peak_bandwidth: float
    mwp: float
    cwp: float
    comp_cycles: float
    mem_cycles: float
    sync_cycles: float
    case: str
    """'no_overlap' (MWP = N = CWP), 'memory' (CWP >= MWP) or 'compute' (MWP > CWP)"""
    cycles: float
    """predicted kernel cycles"""

    def predict(self, run) -> dict:
        """Predicted quantities, keyed like the simulated ones in ``gpusim.analytic.compare``."""
        del run
        return {"cycles": self.cycles}


def memory_periods(program, pc_counts: np.ndarray) -> float:
    """Executed memory waiting periods (warp-level) of ``program``: see the module docstring."""
    code = program.code
    starts = np.zeros(code.shape[0], dtype=bool)
    pending: set[int] = set()
    for pc in range(code.shape[0]):
        row = code[pc]
        reads = {int(row[layout.F_SK0 + 2 * i + 1]) for i in range(int(row[layout.F_NSRC]))
                 if row[layout.F_SK0 + 2 * i] in (layout.SK_REG, layout.SK_REGNEG)}
        reads |= {int(row[layout.F_GUARD]), int(row[layout.F_ABASE])}
        op = int(row[layout.F_OP])
        if pending & reads or op in (codes.OP_BRA, codes.OP_RET, codes.OP_EXIT, codes.OP_BAR):
            pending = set()
        form = isa.FORMS[int(row[layout.F_ISA])]
        if form.pipe == isa.PIPE_LSU and form.op in (codes.OP_LD, codes.OP_ATOM):
            starts[pc] = not pending
            pending |= {int(row[layout.F_DST0 + i]) for i in range(int(row[layout.F_NDST]))} - {-1, -2}
    return float(pc_counts[starts, 0].sum())


def _comp_cycles(run, total_warps: int, instructions: float) -> float:
    from gpusim.arch.isa import pipe_intervals

    config = run.config
    intervals = pipe_intervals(config)
    busiest = max(run.counters.get(f"pipe_{name}_issues", 0) * int(intervals[pipe])
                  for pipe, name in enumerate(isa.PIPE_NAMES))
    return max(instructions, busiest / total_warps) / config.sub_partitions_per_sm


def mwp_cwp(run, memory_latency_cycles: float | None = None) -> MWPCWPPrediction:
    """The MWP-CWP prediction for ``run``'s kernel, launch shape and config (``memory_latency_cycles``
    replaces Mem_LD)."""
    if not run.timing or not run.counters:
        raise GpusimError("mwp_cwp needs a timed run (launch with timing=True): it is fed from its counters")
    config = run.config
    counters = run.counters
    threads_per_block = run.block[0] * run.block[1] * run.block[2]
    blocks = run.grid[0] * run.grid[1] * run.grid[2]
    warps_per_block = -(-threads_per_block // WARP_SIZE)
    total_warps = blocks * warps_per_block
    active_sms = min(config.sms, blocks)
    active_blocks = min(run.occupancy.blocks_per_sm, -(-blocks // active_sms))
    warps_per_sm = float(active_blocks * warps_per_block)
    repetitions = blocks / (active_blocks * active_sms)

    instructions = run.warp_instructions / total_warps
    comp_cycles = _comp_cycles(run, total_warps, instructions)
    requests = counters["global_load_requests"] + counters["global_store_requests"]
    requests += counters.get("global_atomic_requests", 0) + counters.get("local_load_requests", 0)
    requests += counters.get("local_store_requests", 0)
    sectors = counters["global_load_sectors"] + counters["global_store_sectors"]
    sectors += counters.get("global_atomic_sectors", 0) + counters.get("local_load_sectors", 0)
    sectors += counters.get("local_store_sectors", 0)
    bytes_per_request = sectors * config.sector_bytes / requests if requests else 0.0
    periods = memory_periods(run.program, run.pc_counts) / total_warps
    sync = counters.get("pipe_barrier_issues", 0) / total_warps
    if periods == 0:  # nothing to wait for: the paper's compute case without its one memory latency
        cycles = comp_cycles * warps_per_sm * repetitions
        return MWPCWPPrediction(warps_per_sm, active_sms, repetitions, instructions, requests / total_warps, 0.0,
                                bytes_per_request, 0.0, 0.0, 0.0, warps_per_sm, warps_per_sm, warps_per_sm, 1.0,
                                comp_cycles, 0.0, 0.0, "compute", cycles)

    # Mem_LD: the level that serves the L1 misses; Mem_L adds the spread of one period's sectors
    l2_reads = counters["l2_hit_sectors"] + counters["l2_miss_sectors"]
    if counters["l1_miss_sectors"] == 0:
        mem_ld = float(config.l1_latency_cycles)
    else:
        l2_hit_rate = counters["l2_hit_sectors"] / l2_reads if l2_reads else 0.0
        mem_ld = l2_hit_rate * config.l2_latency_cycles + (1 - l2_hit_rate) * config.dram_latency_cycles
    if memory_latency_cycles is not None:
        mem_ld = float(memory_latency_cycles)
    sector_port_cycles = config.sector_bytes / config.interconnect_bytes_per_cycle_per_sm
    requests_per_period = requests / total_warps / periods
    sectors_per_period = sectors / total_warps / periods
    load_misses_per_period = counters["l1_miss_sectors"] / total_warps / periods
    stored_per_period = (counters["global_store_sectors"] + counters.get("local_store_sectors", 0)) / total_warps \
        / periods
    departure_delay = max(requests_per_period,
                          sectors_per_period * config.sector_bytes / config.l1_bytes_per_cycle_per_sm,
                          (load_misses_per_period + stored_per_period) * sector_port_cycles)
    latency = mem_ld + max(0.0, load_misses_per_period - 1) * sector_port_cycles

    # MWP: latency over departure delay, the DRAM and L2 bandwidth shares, N
    dram_bytes = (counters["dram_read_bytes"] + counters["dram_write_bytes"]) / total_warps / periods
    l2_bytes = counters["l2_sectors"] * config.sector_bytes / total_warps / periods
    peaks = []
    for level_bytes, rate in ((dram_bytes, config.dram_bytes_per_cycle * config.dram_efficiency),
                              (l2_bytes, config.l2_bytes_per_cycle)):
        if level_bytes > 0:
            peaks.append(rate / (level_bytes / latency * active_sms))
    mwp_peak_bandwidth = min(peaks) if peaks else float("inf")
    mwp_without_bandwidth = latency / departure_delay
    mwp = max(1.0, min(mwp_without_bandwidth, mwp_peak_bandwidth, warps_per_sm))
    mem_cycles = latency * periods
    cwp = min((mem_cycles + comp_cycles) / comp_cycles, warps_per_sm)
    comp_per_period = comp_cycles / periods
    if mwp == warps_per_sm and cwp == warps_per_sm:
        case = "no_overlap"
        per_repetition = mem_cycles + comp_cycles + comp_per_period * (mwp - 1)
    elif cwp >= mwp:
        case = "memory"
        per_repetition = mem_cycles * warps_per_sm / mwp + comp_per_period * (mwp - 1)
    else:
        case = "compute"
        per_repetition = latency + comp_cycles * warps_per_sm
    sync_cycles = departure_delay * (mwp - 1) * sync * active_blocks * repetitions
    return MWPCWPPrediction(
        warps_per_sm=warps_per_sm, active_sms=active_sms, repetitions=repetitions,
        instructions_per_warp=instructions, memory_instructions_per_warp=requests / total_warps,
        memory_periods_per_warp=periods, bytes_per_memory_instruction=bytes_per_request,
        dram_bytes_per_period=dram_bytes, memory_latency_cycles=latency, departure_delay_cycles=departure_delay,
        mwp_without_bandwidth=mwp_without_bandwidth, mwp_peak_bandwidth=mwp_peak_bandwidth, mwp=mwp, cwp=cwp,
        comp_cycles=comp_cycles, mem_cycles=mem_cycles, sync_cycles=sync_cycles, case=case,
        cycles=per_repetition * repetitions + sync_cycles)
