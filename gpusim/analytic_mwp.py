"""The MWP-CWP model of Hong & Kim ("An Analytical Model for a GPU Architecture with Memory-level and
Thread-level Parallelism Awareness", ISCA 2009), fed from a run's instruction mix and memory statistics.

What it models: an SM runs N resident warps. MWP (memory warp parallelism) is how many warps' memory
requests can overlap: limited by the memory latency over the departure delay between two warps'
requests (``Mem_L / Departure_delay``), by the bandwidth (``peak bandwidth / (bandwidth per warp x SMs)``)
and by N. CWP (computation warp parallelism) is how many warps compute while one waits
(``(Mem_cycles + Comp_cycles) / Comp_cycles``, capped at N). The paper's three cases then give the cycles
of one "repetition" (N warps on every SM), and the kernel runs ``#Rep = warps / (N x SMs)`` of them:

* MWP = N = CWP (not enough warps to hide anything): Mem + Comp + Comp/#mem_insts x (MWP - 1);
* CWP >= MWP or Comp > Mem (memory-bound): Mem x N / MWP + Comp/#mem_insts x (MWP - 1);
* MWP > CWP (compute-bound): Mem_L + Comp x N.

How it is fed: warp-instructions per warp, global memory instructions per warp and sectors per request
come from the run's counters; Mem_L is the config's unloaded DRAM latency; the departure delay is one
request's bytes over the SM's interconnect port; the bandwidth is the config's sustained DRAM bandwidth.

What it simplifies (as the paper does): every memory instruction is a DRAM access (L1/L2 hits are not
separated), barriers and divergence are folded into the instruction count, and the SM's schedulers are
one issuer of ``sub_partitions_per_sm`` warp-instructions per cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.config import WARP_SIZE


@dataclass(frozen=True)
class MWPCWPPrediction:
    """The model's inputs, its intermediate terms and its predicted cycles."""

    warps_per_sm: float
    """N: resident warps per SM"""
    repetitions: float
    """#Rep: warps / (N x SMs)"""
    instructions_per_warp: float
    memory_instructions_per_warp: float
    bytes_per_memory_instruction: float
    memory_latency_cycles: float
    departure_delay_cycles: float
    mwp: float
    cwp: float
    comp_cycles: float
    mem_cycles: float
    case: str
    """'no_overlap' (MWP = N = CWP), 'memory' (CWP >= MWP) or 'compute' (MWP > CWP)"""
    cycles: float
    """predicted kernel cycles"""

    def predict(self, run) -> dict:
        """Predicted quantities, keyed like the simulated ones in ``gpusim.compare``."""
        del run
        return {"cycles": self.cycles}


def mwp_cwp(run, memory_latency_cycles: float | None = None) -> MWPCWPPrediction:
    """The MWP-CWP prediction for ``run``'s kernel, launch shape and config."""
    config = run.config
    counters = run.counters
    threads_per_block = run.block[0] * run.block[1] * run.block[2]
    blocks = run.grid[0] * run.grid[1] * run.grid[2]
    warps_per_block = -(-threads_per_block // WARP_SIZE)
    total_warps = blocks * warps_per_block
    resident_warps = run.occupancy.blocks_per_sm * warps_per_block
    warps_per_sm = float(max(1, min(resident_warps, -(-total_warps // config.sms))))
    repetitions = total_warps / (warps_per_sm * config.sms)

    instructions = run.warp_instructions / total_warps
    requests = counters["global_load_requests"] + counters["global_store_requests"]
    sectors = counters["global_load_sectors"] + counters["global_store_sectors"]
    memory_instructions = requests / total_warps
    bytes_per_request = sectors * config.sector_bytes / requests if requests else 0.0

    latency = float(config.dram_latency_cycles if memory_latency_cycles is None else memory_latency_cycles)
    issue_cycles = 1.0 / config.sub_partitions_per_sm
    comp_cycles = instructions * issue_cycles
    if memory_instructions == 0:
        cycles = comp_cycles * warps_per_sm * repetitions
        return MWPCWPPrediction(warps_per_sm, repetitions, instructions, 0.0, 0.0, latency, 0.0,
                                warps_per_sm, 1.0, comp_cycles, 0.0, "compute", cycles)
    mem_cycles = latency * memory_instructions
    departure_delay = bytes_per_request / config.interconnect_bytes_per_cycle_per_sm
    mwp_without_bandwidth = latency / departure_delay
    bandwidth_per_warp = bytes_per_request / latency  # bytes per cycle one warp draws
    sustained_bytes_per_cycle = config.dram_bytes_per_cycle * config.dram_efficiency
    mwp_peak_bandwidth = sustained_bytes_per_cycle / (bandwidth_per_warp * config.sms)
    mwp = min(mwp_without_bandwidth, mwp_peak_bandwidth, warps_per_sm)
    cwp = min((mem_cycles + comp_cycles) / comp_cycles, warps_per_sm)
    comp_per_memory = comp_cycles / memory_instructions
    if mwp == warps_per_sm and cwp == warps_per_sm:
        case = "no_overlap"
        per_repetition = mem_cycles + comp_cycles + comp_per_memory * (mwp - 1)
    elif cwp >= mwp or comp_cycles > mem_cycles:
        case = "memory"
        per_repetition = mem_cycles * warps_per_sm / mwp + comp_per_memory * (mwp - 1)
    else:
        case = "compute"
        per_repetition = latency + comp_cycles * warps_per_sm
    return MWPCWPPrediction(
        warps_per_sm=warps_per_sm, repetitions=repetitions, instructions_per_warp=instructions,
        memory_instructions_per_warp=memory_instructions, bytes_per_memory_instruction=bytes_per_request,
        memory_latency_cycles=latency, departure_delay_cycles=departure_delay, mwp=mwp, cwp=cwp,
        comp_cycles=comp_cycles, mem_cycles=mem_cycles, case=case,
        cycles=per_repetition * repetitions)
