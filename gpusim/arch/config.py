"""GPUConfig: the immutable description (Spec) of a simulated GPU, and its loading from configs/*.toml.

What it models: every number the simulator needs about a chip -- SM count and clock, the CUDA launch and
occupancy limits of its compute capability, pipe widths and latencies, the memory hierarchy (shared
memory banks, sectored L1, sliced L2, DRAM channels), launch costs on the GPU side and host-side API costs
for the system model. Each field carries its unit in its name and a one-line description in its metadata;
the .toml files group the fields in tables ([chip] [limits] [pipes] [memory] [launch] [host]) and cite a
source beside every value.

What it simplifies: a config is a flat set of scalars. Clock domains are one (the core clock; L2 and DRAM
rates are expressed per core cycle). A config "sliced" to fewer SMs (``sms=N``) keeps each SM's share of
L2 and DRAM (capacity per slice, bandwidth per SM) rather than modelling a real cut-down part. The warp size
is the constant 32 and not configurable.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib.resources
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpusim.errors import ConfigError

WARP_SIZE = 32
"""Threads per warp: a constant of every NVIDIA GPU the simulator models, deliberately not a config field."""

SCHEDULER_POLICIES = ("gto", "lrr", "two_level", "oldest_first")
"""Warp-scheduler policies the engine implements (gpusim/engine/sm/schedulers.py, same order): greedy-then-oldest,
loose round-robin, two-level, oldest-first."""
INT_TO_FP32_PIPES = ("sfu", "alu", "fma")
"""Pipes an int32 -> fp32 conversion may issue to (gpusim.arch.isa.PIPE_NAMES)."""
DRAM_REFRESH_MODES = ("per_bank", "all_bank")
"""DRAM refresh modes (engine/memory/dram.py): the banks of a channel in turn, or a whole channel at once."""

TABLES = ("chip", "limits", "pipes", "memory", "launch", "host")
"""The TOML tables a config file groups its fields in, in order."""

OVERRIDE_SOURCE = "<override>"

MAX_CONFIG_INT = 1 << 53
"""Largest integer a config field may hold (every value must stay exact in int64 and float64 arithmetic)."""


def _spec(table: str, unit: str, doc: str, *, minimum: float | None = 1, loader_set: bool = False) -> Any:
    """Declare one config field: its TOML table, unit, description and smallest allowed value.

    ``minimum`` is inclusive for integers and for floats 0 means "not negative", 1 means "positive";
    ``None`` skips the check. ``loader_set`` fields are filled in by the loader, never by a file.
    """
    return field(metadata={"table": table, "unit": unit, "doc": doc, "minimum": minimum,
                           "loader_set": loader_set})


@dataclass(frozen=True)
class GPUConfig:
    """A validated, immutable GPU description. Build it with ``load_config``; change it with ``replace``."""

    # [chip]
    name: str = _spec("chip", "", "short name of the config, e.g. 'h100-sxm'", minimum=None)
    description: str = _spec("chip", "", "one-line description of the modelled product", minimum=None)
    compute_capability: str = _spec("chip", "", "CUDA compute capability 'major.minor'", minimum=None)
    sms: int = _spec("chip", "SMs", "streaming multiprocessors simulated (fewer than chip_sms: a slice)")
    chip_sms: int = _spec("chip", "SMs", "SMs of the whole chip in the file (set by the loader)",
                          loader_set=True)
    core_clock_mhz: float = _spec("chip", "MHz", "SM clock; every *_cycles field counts these cycles")
    gpc_sms: int = _spec("chip", "SMs", "SMs of one GPC (graphics processing cluster): the CTAs of a thread-block "
                         "cluster are placed on SMs of one GPC")
    sub_partitions_per_sm: int = _spec("chip", "sub-partitions", "SM quarters, each a warp scheduler "
                                       "with its own register file slice")
    # [limits]
    max_threads_per_block: int = _spec("limits", "threads", "largest block a launch may use")
    max_block_dims: tuple[int, ...] = _spec("limits", "threads", "largest block size in x, y, z")
    max_grid_dims: tuple[int, ...] = _spec("limits", "blocks", "largest grid size in x, y, z")
    max_warps_per_sm: int = _spec("limits", "warps", "resident warps per SM")
    max_blocks_per_sm: int = _spec("limits", "blocks", "resident blocks per SM")
    registers_per_sm: int = _spec("limits", "32-bit registers", "register file per SM")
    max_registers_per_block: int = _spec("limits", "32-bit registers", "registers one block may hold")
    max_registers_per_thread: int = _spec("limits", "32-bit registers", "registers one thread may use")
    register_allocation_unit: int = _spec("limits", "32-bit registers", "granule of a warp's register "
                                          "allocation")
    l1_shared_bytes_per_sm: int = _spec("limits", "bytes", "unified L1 data cache + shared memory per SM")
    max_shared_bytes_per_sm: int = _spec("limits", "bytes", "largest shared-memory carveout per SM")
    shared_carveouts_kb: tuple[int, ...] = _spec("limits", "KiB", "supported shared-memory carveouts, "
                                                 "increasing", minimum=0)
    max_shared_bytes_per_block: int = _spec("limits", "bytes", "shared memory one block may use "
                                            "(with the opt-in attribute)")
    default_max_shared_bytes_per_block: int = _spec("limits", "bytes", "shared memory one block may use "
                                                    "without opting in")
    shared_allocation_unit_bytes: int = _spec("limits", "bytes", "granule of a block's shared allocation")
    shared_reserved_bytes_per_block: int = _spec("limits", "bytes", "shared memory the driver reserves "
                                                 "per block", minimum=0)
    # calls and printf (issue 12: calls)
    max_cluster_blocks: int = _spec("limits", "blocks", "largest portable thread-block cluster (0: the GPU has no "
                                    "clusters, a cluster launch is refused)", minimum=0)
    max_cluster_blocks_nonportable: int = _spec("limits", "blocks", "largest cluster with "
                                                "cluster_nonportable=True (cudaFuncAttributeNonPortable"
                                                "ClusterSizeAllowed)", minimum=0)
    max_call_depth: int = _spec("limits", "calls", "nested .func calls a thread may be inside (deeper: "
                                "CallStackOverflowError, as CUDA's stack overflow)")
    printf_fifo_bytes: int = _spec("limits", "bytes", "device printf buffer per launch "
                                   "(cudaLimitPrintfFifoSize); records past it are dropped")
    # [pipes]
    fp32_lanes_per_sm: int = _spec("pipes", "lanes", "FP32 FMA lanes per SM")
    fp64_lanes_per_sm: int = _spec("pipes", "lanes", "FP64 FMA lanes per SM")
    int32_lanes_per_sm: int = _spec("pipes", "lanes", "INT32 lanes per SM")
    sfu_lanes_per_sm: int = _spec("pipes", "lanes", "special-function (rsqrt, sin, ex2) lanes per SM")
    int_to_fp32_pipe: str = _spec("pipes", "", "pipe of cvt.rn.f32.{s32,u32}: " + ", ".join(INT_TO_FP32_PIPES)
                                  + " (I2F on the conversion unit, or I2FP, which ptxas emits from sm_86 on)",
                                  minimum=None)
    lsu_lanes_per_sm: int = _spec("pipes", "lanes", "load/store address lanes per SM")
    tensor_flops_per_cycle_per_sm: int = _spec("pipes", "FLOP/cycle", "dense FP16 tensor-core rate per SM")
    # ---- tensor cores (issue 14): dense peaks per precision, and the mma.sync timing per class (0: the GPU
    # has no such instruction; a kernel that uses it is refused at launch). docs/tensor-cores.md
    tensor_tf32_flops_per_cycle_per_sm: int = _spec("pipes", "FLOP/cycle", "dense TF32 tensor-core rate per "
                                                    "SM (0: none)", minimum=0)
    tensor_int8_ops_per_cycle_per_sm: int = _spec("pipes", "OP/cycle", "dense INT8 tensor-core rate per SM "
                                                  "(0: none)", minimum=0)
    tensor_fp8_flops_per_cycle_per_sm: int = _spec("pipes", "FLOP/cycle", "dense FP8 tensor-core rate per SM "
                                                   "(0: none)", minimum=0)
    mma_f16_m16n8k16_interval_cycles: int = _spec("pipes", "cycles", "tensor pipe busy per mma.sync "
                                                  "m16n8k16 f16/bf16 (f32 accumulate), per sub-partition",
                                                  minimum=0)
    mma_f16_m16n8k16_latency_cycles: int = _spec("pipes", "cycles", "mma.sync m16n8k16 f16/bf16 result",
                                                 minimum=0)
    mma_f16_m16n8k8_interval_cycles: int = _spec("pipes", "cycles", "tensor pipe busy per mma.sync m16n8k8 "
                                                 "f16/bf16 (f32 accumulate)", minimum=0)
    mma_f16_m16n8k8_latency_cycles: int = _spec("pipes", "cycles", "mma.sync m16n8k8 f16/bf16 result",
                                                minimum=0)
    mma_tf32_m16n8k8_interval_cycles: int = _spec("pipes", "cycles", "tensor pipe busy per mma.sync m16n8k8 "
                                                  "tf32", minimum=0)
    mma_tf32_m16n8k8_latency_cycles: int = _spec("pipes", "cycles", "mma.sync m16n8k8 tf32 result", minimum=0)
    mma_int8_m16n8k32_interval_cycles: int = _spec("pipes", "cycles", "tensor pipe busy per mma.sync "
                                                   "m16n8k32 s8/u8", minimum=0)
    mma_int8_m16n8k32_latency_cycles: int = _spec("pipes", "cycles", "mma.sync m16n8k32 s8/u8 result",
                                                  minimum=0)
    mma_fp8_m16n8k32_interval_cycles: int = _spec("pipes", "cycles", "tensor pipe busy per mma.sync "
                                                  "m16n8k32 e4m3/e5m2 (f32 accumulate)", minimum=0)
    mma_fp8_m16n8k32_latency_cycles: int = _spec("pipes", "cycles", "mma.sync m16n8k32 e4m3/e5m2 result",
                                                 minimum=0)
    mma_f16_accumulate_rate_factor: int = _spec("pipes", "x", "how many times faster an f16-accumulate "
                                                "mma runs than an f32-accumulate one (GeForce: 2)")
    # ---- wgmma (Hopper, sm_90a): 0 = the GPU has no wgmma (a kernel that uses it is refused at launch)
    wgmma_n8_interval_cycles: int = _spec("pipes", "cycles", "tensor pipe busy per warp per 8 columns of a "
                                          "wgmma m64nNk (each warp of the warpgroup: 16 rows)", minimum=0)
    wgmma_latency_cycles: int = _spec("pipes", "cycles", "wgmma result after its first 8 columns (the rest: "
                                      "one interval per further 8 columns)", minimum=0)
    wgmma_issue_cycles: int = _spec("pipes", "cycles", "a sub-partition queues one wgmma per this many cycles "
                                    "(the warp goes on; the tensor pipe takes the queue in order)", minimum=0)
    wgmma_queue_depth: int = _spec("pipes", "wgmma instructions", "wgmmas a sub-partition's tensor pipe holds "
                                   "queued (its own included): a warp issuing the next waits for a place",
                                   minimum=0)
    fp32_latency_cycles: int = _spec("pipes", "cycles", "dependent FP32 add/mul/FMA")
    int32_latency_cycles: int = _spec("pipes", "cycles", "dependent INT32 add/logic/shift")
    imad_latency_cycles: int = _spec("pipes", "cycles", "dependent 32-bit integer multiply(-add)")
    fp64_latency_cycles: int = _spec("pipes", "cycles", "dependent FP64 add/mul/FMA")
    sfu_latency_cycles: int = _spec("pipes", "cycles", "special-function result")
    conversion_latency_cycles: int = _spec("pipes", "cycles", "type conversion (cvt) result")
    branch_latency_cycles: int = _spec("pipes", "cycles", "branch resolution before the warp fetches again")
    shuffle_latency_cycles: int = _spec("pipes", "cycles", "warp shuffle / vote result")
    barrier_latency_cycles: int = _spec("pipes", "cycles", "release after the last warp reaches bar.sync")
    barrier_cycles_per_warp: int = _spec("pipes", "cycles", "added to the release per warp that waited at the "
                                         "barrier (the barrier unit takes the arrivals one after another)",
                                         minimum=0)
    # calls (issue 12: calls)
    call_latency_cycles: int = _spec("pipes", "cycles", "a call of a .func (or vprintf) before the warp fetches "
                                     "the callee")
    ret_latency_cycles: int = _spec("pipes", "cycles", "a return from a .func before the warp fetches again")
    # codegen (issue 11): latencies read from ptxas's schedule
    predicate_latency_cycles: int = _spec("pipes", "cycles", "setp result to the guard or branch reading it, "
                                          "as ptxas's control bits time it (codegen=\"ptxas\" only)")
    taken_branch_cycles: int = _spec("pipes", "cycles", "a taken branch (the warp's next instruction is not the "
                                     "one after it) before the warp fetches again, as ptxas's control bits "
                                     "time it (codegen=\"ptxas\" only; else branch_latency_cycles)")
    # [memory]
    sector_bytes: int = _spec("memory", "bytes", "cache sector: the unit of transfer below L1")
    line_bytes: int = _spec("memory", "bytes", "cache line (a whole number of sectors)")
    shared_banks: int = _spec("memory", "banks", "shared-memory banks")
    shared_bank_bytes: int = _spec("memory", "bytes", "width of one shared-memory bank")
    shared_latency_cycles: int = _spec("memory", "cycles", "shared-memory load to use, no conflict")
    shared_bytes_per_cycle_per_sm: float = _spec("memory", "bytes/cycle", "shared-memory data path per SM")
    l1_latency_cycles: int = _spec("memory", "cycles", "global load to use on an L1 hit")
    l1_assoc: int = _spec("memory", "ways", "L1 associativity (sets follow from the capacity left by "
                          "the carveout)")
    l1_bytes_per_cycle_per_sm: float = _spec("memory", "bytes/cycle", "L1 data path per SM")
    l1_tags_per_cycle: int = _spec("memory", "lines/cycle", "L1TEX tag stage per SM: distinct 128-B lines "
                                   "a warp request resolves per cycle (ceil(lines / this) cycles a request)")
    l2_bytes: int = _spec("memory", "bytes", "L2 capacity (of the slice when sms < chip_sms)")
    l2_slices: int = _spec("memory", "slices", "L2 slices, addresses hashed across them")
    chip_l2_slices: int = _spec("memory", "slices", "L2 slices of the whole chip (set by the loader)",
                                loader_set=True)
    l2_assoc: int = _spec("memory", "ways", "L2 associativity")
    l2_latency_cycles: int = _spec("memory", "cycles", "global load to use on an L2 hit")
    l2_bytes_per_cycle: float = _spec("memory", "bytes/cycle", "L2 bandwidth of all slices together")
    l2_write_bytes_per_cycle: float = _spec("memory", "bytes/cycle", "L2 bandwidth of all slices together for "
                                            "store sectors (writes)")
    l2_partial_write_bytes_per_cycle: float = _spec("memory", "bytes/cycle", "L2 bandwidth of all slices together "
                                                    "for store sectors a request writes only part of (byte-masked)")
    dram_bytes: int = _spec("memory", "bytes", "device memory capacity (not scaled by slicing)")
    dram_bandwidth_gbs: float = _spec("memory", "GB/s (1e9 B/s)", "peak DRAM bandwidth (of the slice)")
    dram_channels: int = _spec("memory", "channels", "independent DRAM channels (pseudo-channels on HBM), "
                               "addresses hashed across")
    chip_dram_channels: int = _spec("memory", "channels", "DRAM channels of the whole chip (set by the "
                                    "loader)", loader_set=True)
    dram_latency_cycles: int = _spec("memory", "cycles", "global load to use on a DRAM access (unloaded, a row "
                                     "conflict: what a pointer chase measures)")
    # DRAM banks, rows and timing (engine/memory/dram.py); column spacings in bursts (one sector each)
    dram_bank_groups: int = _spec("memory", "bank groups", "bank groups per channel (all stack IDs together)")
    dram_banks_per_group: int = _spec("memory", "banks", "banks per bank group")
    dram_row_bytes: int = _spec("memory", "bytes", "row (page) of one bank of a channel")
    dram_address_map: str = _spec("memory", "", "fields of the channel-local address, most significant "
                                  "first, row first: e.g. 'row:bank:column:bankgroup'", minimum=None)
    dram_trcd_ns: float = _spec("memory", "ns", "ACT to column command (tRCD)", minimum=0)
    dram_trp_ns: float = _spec("memory", "ns", "PRE to ACT (tRP)", minimum=0)
    dram_tras_ns: float = _spec("memory", "ns", "ACT to PRE of the same bank (tRAS)", minimum=0)
    dram_tccd_s_bursts: float = _spec("memory", "bursts", "column to column, different bank groups (tCCD_S), "
                                      "in burst times")
    dram_tccd_l_bursts: float = _spec("memory", "bursts", "column to column, same bank group (tCCD_L), in "
                                      "burst times")
    dram_twtr_ns: float = _spec("memory", "ns", "bus turnaround write to read (tWTR)", minimum=0)
    dram_trtw_ns: float = _spec("memory", "ns", "bus turnaround read to write (tRTW)", minimum=0)
    dram_trefi_ns: float = _spec("memory", "ns", "refresh interval of each bank, or of each channel under "
                                 "all-bank refresh (tREFI; 0: no refresh)", minimum=0)
    dram_trfc_ns: float = _spec("memory", "ns", "one refresh (tRFC: per-bank or all-bank, as dram_refresh "
                                "says)", minimum=0)
    dram_refresh: str = _spec("memory", "", "refresh mode: per_bank (banks in turn, hidden by the scheduler) or "
                              "all_bank (a whole channel at once, its bus idle for dram_trfc_ns)", minimum=None)
    dram_queue_depth: int = _spec("memory", "requests", "scheduler window per channel (FR-FCFS)")
    dram_writes_per_turnaround: int = _spec("memory", "writes", "writes a channel buffers and then drains "
                                            "at once, reads waiting (its write buffer's watermark span)")
    interconnect_bytes_per_cycle_per_sm: float = _spec("memory", "bytes/cycle", "SM-to-L2 port per SM")
    tma_requests_per_cycle: float = _spec("memory", "requests/cycle", "TMA unit (Hopper): box rows (one "
                                          "memory request each, up to 128 B) it issues per cycle per SM")
    tma_descriptor_miss_cycles: int = _spec("memory", "cycles", "TMA unit (Hopper): fetching a tensor map "
                                            "missing from the SM's descriptor cache (8 entries)", minimum=0)
    mshrs_per_sm: int = _spec("memory", "sectors", "outstanding L1 miss sectors per SM")
    atomic_l2_ops_per_cycle_per_slice: float = _spec("memory", "ops/cycle", "global atomics an L2 slice "
                                                     "performs per cycle")
    atomic_shared_latency_cycles: int = _spec("memory", "cycles", "shared-memory atomic to use")
    dsm_round_trip_cycles: int = _spec("memory", "cycles", "distributed shared memory: a load from another CTA "
                                       "of the cluster (SM-to-SM request and reply)", minimum=0)
    dsm_bytes_per_cycle_per_sm: float = _spec("memory", "bytes/cycle", "distributed shared memory bandwidth "
                                              "an SM sends or receives", minimum=0)
    cluster_barrier_latency_cycles: int = _spec("memory", "cycles", "barrier.cluster.wait: release after the "
                                                "last thread of the cluster arrived", minimum=0)
    texture_latency_cycles: int = _spec("memory", "cycles", "texture fetch: addressing and filtering "
                                        "on top of the L1/L2/DRAM latency of its texels", minimum=0)
    # [launch]
    kernel_launch_latency_cycles: int = _spec("launch", "cycles", "GPU-side cost from a stream launch "
                                              "to the first block", minimum=0)
    block_launch_cycles: int = _spec("launch", "cycles", "cost for a block to start on an SM", minimum=0)
    block_dispatch_interval_cycles: int = _spec("launch", "cycles", "an SM starts at most one block per this "
                                                "many cycles (the work distributor's rate)", minimum=0)
    warp_dispatch_cycles: float = _spec("launch", "cycles", "and at most one warp per this many cycles: a block "
                                        "of w warps holds the SM's dispatch for max(interval, w x this)",
                                        minimum=0)
    scheduler: str = _spec("launch", "", "warp-scheduler policy: " + ", ".join(SCHEDULER_POLICIES),
                           minimum=None)
    two_level_active_warps: int = _spec("launch", "warps", "active-set size per scheduler under "
                                        "'two_level'")
    max_cycles: int = _spec("launch", "cycles", "simulation limit; a kernel past it is an error")
    # [host]
    launch_cpu_us: float = _spec("host", "us", "CPU time of one kernel launch call", minimum=0)
    sync_cpu_us: float = _spec("host", "us", "CPU time to return from a synchronize once the GPU is idle",
                               minimum=0)
    graph_launch_cpu_us: float = _spec("host", "us", "CPU time of one graph launch call", minimum=0)
    graph_instantiate_us_per_kernel: float = _spec("host", "us", "CPU time to instantiate a graph, per "
                                                   "kernel node", minimum=0)
    graph_kernel_gpu_us: float = _spec("host", "us", "GPU-side cost per kernel inside a graph (replaces "
                                       "kernel_launch_latency_cycles)", minimum=0)
    memcpy_setup_cpu_us: float = _spec("host", "us", "CPU time of one memcpy call", minimum=0)
    link_bandwidth_gbs: float = _spec("host", "GB/s (1e9 B/s)", "host<->device link, achievable, per "
                                      "direction")
    link_latency_us: float = _spec("host", "us", "host<->device link latency per copy", minimum=0)
    copy_engines: int = _spec("host", "engines", "copy engines (copies in flight at once)")

    # ------------------------------------------------------------ derived (computed, not stored)
    @property
    def warp_size(self) -> int:
        return WARP_SIZE

    @property
    def clock_hz(self) -> float:
        return self.core_clock_mhz * 1e6

    @property
    def cc_major(self) -> int:
        return int(self.compute_capability.split(".")[0])

    @property
    def cc_minor(self) -> int:
        return int(self.compute_capability.split(".")[1])

    @property
    def warps_per_sub_partition(self) -> int:
        return self.max_warps_per_sm // self.sub_partitions_per_sm

    @property
    def registers_per_sub_partition(self) -> int:
        return self.registers_per_sm // self.sub_partitions_per_sm

    @property
    def shared_carveouts_bytes(self) -> tuple[int, ...]:
        return tuple(kib * 1024 for kib in self.shared_carveouts_kb)

    @property
    def sectors_per_line(self) -> int:
        return self.line_bytes // self.sector_bytes

    @property
    def l2_bytes_per_slice(self) -> int:
        return self.l2_bytes // self.l2_slices

    @property
    def l2_sets_per_slice(self) -> int:
        return self.l2_bytes_per_slice // (self.l2_assoc * self.line_bytes)

    @property
    def l2_bytes_per_cycle_per_slice(self) -> float:
        return self.l2_bytes_per_cycle / self.l2_slices

    @property
    def dram_bytes_per_cycle(self) -> float:
        return self.dram_bandwidth_gbs * 1e9 / self.clock_hz

    @property
    def dram_bytes_per_cycle_per_channel(self) -> float:
        return self.dram_bytes_per_cycle / self.dram_channels

    @property
    def dram_efficiency(self) -> float:
        """Share of peak a sequential read stream can sustain by the DRAM timing (derived, not a config field):
        the data bus carries a burst every max(1, tCCD_S) burst times, and a channel opens at most one row per
        bank every tRAS + tRP, each row giving row_bytes / sector_bytes bursts:
        ``min(1, 1 / tCCD_S) x min(1, banks x row bursts x burst time / (tRAS + tRP))``. Per-bank refresh is
        hidden by the other banks; all-bank refresh idles the channel for tRFC of every tREFI, a further factor
        ``1 - tRFC / tREFI``. The simulator measures its own figure (hashing, conflicts between streams,
        write turnarounds), at or below this one."""
        burst_ns = self.sector_bytes / (self.dram_bandwidth_gbs / self.dram_channels)
        banks = self.dram_bank_groups * self.dram_banks_per_group
        row_bursts = self.dram_row_bytes // self.sector_bytes
        cycle_ns = self.dram_tras_ns + self.dram_trp_ns
        activation = min(1.0, banks * row_bursts * burst_ns / cycle_ns) if cycle_ns > 0 else 1.0
        refresh = 1.0
        if self.dram_refresh == "all_bank" and self.dram_trefi_ns > 0:
            refresh = 1.0 - self.dram_trfc_ns / self.dram_trefi_ns
        return min(1.0, 1.0 / self.dram_tccd_s_bursts) * activation * refresh

    @property
    def peak_fp32_flops(self) -> float:
        return 2.0 * self.fp32_lanes_per_sm * self.sms * self.clock_hz

    @property
    def peak_fp64_flops(self) -> float:
        return 2.0 * self.fp64_lanes_per_sm * self.sms * self.clock_hz

    @property
    def peak_tensor_flops(self) -> float:
        return float(self.tensor_flops_per_cycle_per_sm) * self.sms * self.clock_hz

    # ---- tensor cores (issue 14)
    def tensor_peak_flops_per_cycle_per_sm(self, precision: str) -> int:
        """Dense tensor-core peak per SM and cycle for ``precision``: fp16, bf16, tf32, int8 or fp8."""
        return {"fp16": self.tensor_flops_per_cycle_per_sm, "bf16": self.tensor_flops_per_cycle_per_sm,
                "tf32": self.tensor_tf32_flops_per_cycle_per_sm, "int8": self.tensor_int8_ops_per_cycle_per_sm,
                "fp8": self.tensor_fp8_flops_per_cycle_per_sm}[precision]

    def mma_sync_flops_per_cycle_per_sm(self, precision: str) -> float:
        """The rate mma.sync reaches per SM and cycle with the tensor pipe always busy, from the config's
        issue intervals: FLOPs per instruction x sub-partitions / interval (m16n8k16 for fp16/bf16, m16n8k8
        tf32, m16n8k32 int8 and fp8); 0 when the GPU has no such instruction."""
        flops, field_name = {"fp16": (4096, "mma_f16_m16n8k16_interval_cycles"),
                             "bf16": (4096, "mma_f16_m16n8k16_interval_cycles"),
                             "tf32": (2048, "mma_tf32_m16n8k8_interval_cycles"),
                             "int8": (8192, "mma_int8_m16n8k32_interval_cycles"),
                             "fp8": (8192, "mma_fp8_m16n8k32_interval_cycles")}[precision]
        interval = getattr(self, field_name)
        return flops * self.sub_partitions_per_sm / interval if interval else 0.0

    def l1_cache_bytes(self, shared_carveout_bytes: int) -> int:
        """L1 data-cache capacity left when the SM runs with this shared-memory carveout."""
        return self.l1_shared_bytes_per_sm - shared_carveout_bytes

    # ------------------------------------------------------------ API
    def replace(self, **overrides: Any) -> GPUConfig:
        """A copy with some fields changed, validated like a file; ``sms=N`` slices the chip."""
        return _apply_overrides(self, overrides, OVERRIDE_SOURCE)

    def to_dict(self) -> dict[str, Any]:
        """Every stored field by name (lists for the tuple fields): plain data for JSON or a table."""
        return {spec.name: (list(value) if isinstance(value, tuple) else value)
                for spec in dataclasses.fields(self) for value in [getattr(self, spec.name)]}

    @classmethod
    def from_dict(cls, values: dict[str, Any], source: str = "<dict>") -> GPUConfig:
        """Build from a flat mapping of every field (e.g. ``to_dict()`` output), validated."""
        return _build(dict(values), source)

    def describe(self) -> str:
        """A few lines naming the chip, its size and its peaks."""
        share = f"{self.sms} of {self.chip_sms} SMs" if self.sms != self.chip_sms else f"{self.sms} SMs"
        return "\n".join([
            f"{self.name}: {self.description} (compute capability {self.compute_capability})",
            f"  {share} @ {self.core_clock_mhz:g} MHz, {self.max_warps_per_sm} warps/SM, "
            f"scheduler {self.scheduler}",
            f"  peak {_flops_text(self.peak_fp32_flops)} FP32, {_flops_text(self.peak_fp64_flops)} FP64, "
            f"{_flops_text(self.peak_tensor_flops)} tensor FP16",
            f"  DRAM {self.dram_bandwidth_gbs:.4g} GB/s over {self.dram_channels} channels, "
            f"L2 {self.l2_bytes / 2**20:g} MiB in {self.l2_slices} slices, "
            f"L1+shared {self.l1_shared_bytes_per_sm // 1024} KiB/SM",
        ])


def _flops_text(flops_per_second: float) -> str:
    """A FLOP/s figure in T or G units, three significant digits."""
    if flops_per_second >= 1e12:
        return f"{flops_per_second / 1e12:.3g} TFLOP/s"
    return f"{flops_per_second / 1e9:.3g} GFLOP/s"


FIELDS = {spec.name: spec for spec in dataclasses.fields(GPUConfig)}
"""Every config field by name, with its metadata (table, unit, doc, minimum, loader_set)."""

_KIND = {"str": str, "int": int, "float": float, "tuple[int, ...]": tuple}


# ---------------------------------------------------------------- finding and loading files
def _source_configs_dir() -> Path | None:
    """configs/ of a source checkout (next to pyproject.toml), or None when running from an install."""
    root = Path(__file__).resolve().parents[2]     # gpusim/arch/config.py -> the checkout
    directory = root / "configs"
    return directory if directory.is_dir() and (root / "pyproject.toml").is_file() else None


def _packaged_configs() -> Any:
    """The installed ``gpusim.configs`` resource folder, or None when it is not installed."""
    try:
        return importlib.resources.files("gpusim.configs")
    except ModuleNotFoundError:
        return None


def list_configs() -> list[str]:
    """Names of the configs shipped with gpusim (usable as ``load_config(name)``)."""
    names: set[str] = set()
    source = _source_configs_dir()
    if source is not None:
        names.update(path.stem for path in source.glob("*.toml"))
    packaged = _packaged_configs()
    if packaged is not None:
        names.update(entry.name[:-5] for entry in packaged.iterdir() if entry.name.endswith(".toml"))
    return sorted(names)


def _read_config_text(name_or_path: str | Path) -> tuple[str, str]:
    """(TOML text, file name for messages) of a config given by name or path."""
    text_form = str(name_or_path)
    is_path = isinstance(name_or_path, Path) or "/" in text_form or "\\" in text_form \
        or text_form.endswith(".toml")
    if is_path:
        path = Path(name_or_path)
        if not path.is_file():
            raise ConfigError("no such config file", file=text_form)
        return path.read_text(encoding="utf-8"), text_form
    source = _source_configs_dir()
    if source is not None and (source / f"{text_form}.toml").is_file():
        path = source / f"{text_form}.toml"
        return path.read_text(encoding="utf-8"), str(path)
    packaged = _packaged_configs()
    if packaged is not None:
        entry = packaged.joinpath(f"{text_form}.toml")
        if entry.is_file():
            return entry.read_text(encoding="utf-8"), f"gpusim/configs/{text_form}.toml"
    available = ", ".join(list_configs()) or "(none found)"
    raise ConfigError(f"unknown config name '{text_form}'; available: {available} "
                      "(or give a path to a .toml file)", file=text_form)


def load_config(name_or_path: str | Path, **overrides: Any) -> GPUConfig:
    """Load a config by name (``"h100-sxm"``) or path, then apply keyword overrides (``sms=8``)."""
    text, file = _read_config_text(name_or_path)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"not valid TOML: {error}", file=file) from None
    values: dict[str, Any] = {}
    for table, content in document.items():
        if table not in TABLES:
            if table in FIELDS:
                raise ConfigError(f"must be inside the table [{FIELDS[table].metadata['table']}]",
                                  file=file, field=table)
            raise ConfigError(f"unknown table [{table}]; expected tables: {', '.join(TABLES)}", file=file)
        if not isinstance(content, dict):
            raise ConfigError(f"[{table}] must be a table of fields", file=file)
        for key, value in content.items():
            _check_known(key, file)
            if FIELDS[key].metadata["loader_set"]:
                raise ConfigError("is set by the loader and cannot appear in a file", file=file, field=key)
            if FIELDS[key].metadata["table"] != table:
                raise ConfigError(f"belongs in [{FIELDS[key].metadata['table']}], not [{table}]",
                                  file=file, field=key)
            values[key] = value
    missing = [name for name, spec in FIELDS.items()
               if name not in values and not spec.metadata["loader_set"]]
    if missing:
        others = ", ".join(missing[1:]) or "nothing else"
        raise ConfigError(f"missing (also missing: {others}); expected in "
                          f"[{FIELDS[missing[0]].metadata['table']}]", file=file, field=missing[0])
    for name, value in values.items():
        values[name] = _coerce(name, value, file)
    values["chip_sms"] = values["sms"]
    values["chip_l2_slices"] = values["l2_slices"]
    values["chip_dram_channels"] = values["dram_channels"]
    config = _build(values, file)
    return _apply_overrides(config, overrides, OVERRIDE_SOURCE) if overrides else config


# ---------------------------------------------------------------- overrides and slicing
def _check_known(name: str, file: str) -> None:
    if name not in FIELDS:
        close = difflib.get_close_matches(name, list(FIELDS), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ConfigError(f"unknown field{hint}", file=file, field=name)


def _apply_overrides(config: GPUConfig, overrides: dict[str, Any], file: str) -> GPUConfig:
    """Change fields by keyword; a new ``sms`` scales L2 and DRAM in proportion (the chip's per-SM share)."""
    changes: dict[str, Any] = {}
    for name, value in overrides.items():
        _check_known(name, file)
        if FIELDS[name].metadata["loader_set"]:
            raise ConfigError("is set by the loader and cannot be overridden", file=file, field=name)
        changes[name] = _coerce(name, value, file)
    values = {spec.name: getattr(config, spec.name) for spec in dataclasses.fields(config)}
    new_sms = changes.get("sms", config.sms)
    if new_sms != config.sms:
        if not 1 <= new_sms <= config.chip_sms:
            raise ConfigError(f"must be between 1 and the chip's {config.chip_sms} SMs (a slice of "
                              f"the chip); got {new_sms}", file=file, field="sms")
        values.update(_slice_values(config, new_sms))
    values.update(changes)
    if values["sms"] == values["chip_sms"]:
        values["chip_l2_slices"] = values["l2_slices"]
        values["chip_dram_channels"] = values["dram_channels"]
    return _build(values, file)


def _slice_values(config: GPUConfig, new_sms: int) -> dict[str, Any]:
    """L2 and DRAM of an ``new_sms``-SM slice: per-SM bandwidth and per-slice L2 capacity kept."""
    fraction_of_chip = new_sms / config.chip_sms
    l2_slices = max(1, math.floor(config.chip_l2_slices * fraction_of_chip + 0.5))
    dram_channels = max(1, math.floor(config.chip_dram_channels * fraction_of_chip + 0.5))
    return {
        "sms": new_sms,
        "l2_slices": l2_slices,
        "l2_bytes": config.l2_bytes_per_slice * l2_slices,
        "l2_bytes_per_cycle": config.l2_bytes_per_cycle * new_sms / config.sms,
        "l2_write_bytes_per_cycle": config.l2_write_bytes_per_cycle * new_sms / config.sms,
        "l2_partial_write_bytes_per_cycle": config.l2_partial_write_bytes_per_cycle * new_sms / config.sms,
        "dram_bandwidth_gbs": config.dram_bandwidth_gbs * new_sms / config.sms,
        "dram_channels": dram_channels,
    }


# ---------------------------------------------------------------- validation
def _coerce(name: str, value: Any, file: str) -> Any:
    """Check a value's type against the field's; ints are accepted for floats, lists for tuples."""
    kind = _KIND[str(FIELDS[name].type)]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind is tuple:
        if not isinstance(value, list | tuple) or not all(
                isinstance(item, int) and not isinstance(item, bool) for item in value):
            raise ConfigError(f"expected a list of integers, got {value!r}", file=file, field=name)
        return tuple(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ConfigError(f"expected {kind.__name__}, got {type(value).__name__} {value!r}",
                          file=file, field=name)
    return value


def validated(config: GPUConfig, file: str = "<GPUConfig>") -> GPUConfig:
    """``config`` after the checks a loaded config gets (a GPUConfig built by hand skips the loader): the
    same object when every field is right, else a ConfigError naming the first wrong field."""
    if not isinstance(config, GPUConfig):
        raise ConfigError(f"a config is a name, a path or a GPUConfig, got {type(config).__name__}")
    rebuilt = _build({spec.name: getattr(config, spec.name) for spec in dataclasses.fields(GPUConfig)}, file)
    return config if rebuilt == config else rebuilt


def _build(values: dict[str, Any], file: str) -> GPUConfig:
    """Validate a complete flat mapping of fields and construct the config."""
    for name in values:
        _check_known(name, file)
    missing = [name for name in FIELDS if name not in values]
    if missing:
        raise ConfigError("missing", file=file, field=missing[0])
    for name in FIELDS:
        values[name] = _coerce(name, values[name], file)
    _validate(values, file)
    return GPUConfig(**values)


def _validate_dram(v: dict[str, Any], fail: Any) -> None:
    """The DRAM fields: address map, row size, refresh and a latency that covers a row conflict."""
    names = [part.strip() for part in v["dram_address_map"].split(":")]
    if sorted(names) != ["bank", "bankgroup", "column", "row"] or names[0] != "row":
        fail("dram_address_map", "expected bank, bankgroup, column and row once each, separated by ':', most "
             f"significant first with 'row' first (e.g. 'row:bank:column:bankgroup'); got {v['dram_address_map']!r}")
    if v["dram_row_bytes"] % 256:
        fail("dram_row_bytes", f"must be a multiple of the 256-byte channel interleave, got {v['dram_row_bytes']}")
    if v["dram_trefi_ns"] > 0 and not v["dram_trfc_ns"] < v["dram_trefi_ns"]:
        fail("dram_trfc_ns", f"must be shorter than dram_trefi_ns ({v['dram_trefi_ns']}); got {v['dram_trfc_ns']}")
    burst_ns = v["sector_bytes"] / (v["dram_bandwidth_gbs"] / v["dram_channels"])
    conflict_cycles = (v["dram_trp_ns"] + v["dram_trcd_ns"] + burst_ns) * v["core_clock_mhz"] / 1000
    if v["dram_latency_cycles"] < conflict_cycles:
        fail("dram_latency_cycles", f"a row conflict alone (tRP + tRCD + a burst) takes {conflict_cycles:.1f} "
             f"cycles; got {v['dram_latency_cycles']}")


def _validate(values: dict[str, Any], file: str) -> None:
    """Every value possible, every relation between fields consistent; else ConfigError naming the field."""
    def fail(field_name: str, message: str) -> None:
        raise ConfigError(message, file=file, field=field_name)

    for name, spec in FIELDS.items():
        minimum, value = spec.metadata["minimum"], values[name]
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            if isinstance(item, float) and not math.isfinite(item):
                fail(name, f"must be a finite number ({spec.metadata['unit']}), got {value!r}")
            if isinstance(item, int) and abs(item) > MAX_CONFIG_INT:
                fail(name, f"{item} is beyond any GPU (at most {MAX_CONFIG_INT})")
        if isinstance(value, str) and len(value) > 1000:
            fail(name, "is longer than 1000 characters")
        if minimum is None:
            continue
        for item in items:
            too_small = item <= 0 if (isinstance(item, float) and minimum == 1) else item < minimum
            if too_small:
                bound = "positive" if minimum == 1 else "at least 0"
                fail(name, f"must be {bound} ({spec.metadata['unit']}), got {value!r}")
    v = values
    if not re.fullmatch(r"\d+\.\d+", v["compute_capability"]):
        fail("compute_capability", f"expected 'major.minor' like '9.0', got {v['compute_capability']!r}")
    if v["scheduler"] not in SCHEDULER_POLICIES:
        fail("scheduler", f"expected one of {', '.join(SCHEDULER_POLICIES)}, got {v['scheduler']!r}")
    if v["dram_refresh"] not in DRAM_REFRESH_MODES:
        fail("dram_refresh", f"expected one of {', '.join(DRAM_REFRESH_MODES)}, got {v['dram_refresh']!r}")
    if v["int_to_fp32_pipe"] not in INT_TO_FP32_PIPES:
        fail("int_to_fp32_pipe", f"expected one of {', '.join(INT_TO_FP32_PIPES)}, got {v['int_to_fp32_pipe']!r}")
    if v["sms"] > v["chip_sms"]:
        fail("sms", f"the chip has {v['chip_sms']} SMs; got {v['sms']}")
    for name in ("max_block_dims", "max_grid_dims"):
        if len(v[name]) != 3:
            fail(name, f"expected 3 values (x, y, z), got {list(v[name])}")
    if v["max_warps_per_sm"] % v["sub_partitions_per_sm"]:
        fail("sub_partitions_per_sm", f"{v['sub_partitions_per_sm']} does not divide max_warps_per_sm "
             f"{v['max_warps_per_sm']}")
    if v["registers_per_sm"] % v["sub_partitions_per_sm"]:
        fail("registers_per_sm", "must divide evenly among the sub-partitions")
    if v["max_threads_per_block"] > v["max_warps_per_sm"] * WARP_SIZE:
        fail("max_threads_per_block", f"a block of {v['max_threads_per_block']} threads would not fit in "
             f"{v['max_warps_per_sm']} warps per SM")
    if v["max_registers_per_block"] > v["registers_per_sm"]:
        fail("max_registers_per_block", "exceeds registers_per_sm")
    if v["two_level_active_warps"] > v["max_warps_per_sm"] // v["sub_partitions_per_sm"]:
        fail("two_level_active_warps", "exceeds the warps one scheduler holds "
             "(max_warps_per_sm / sub_partitions_per_sm)")
    _validate_dram(v, fail)
    for name in ("sector_bytes", "line_bytes"):
        if v[name] & (v[name] - 1):
            fail(name, f"must be a power of two, got {v[name]}")
    if v["line_bytes"] % v["sector_bytes"]:
        fail("line_bytes", f"{v['line_bytes']} is not a multiple of sector_bytes {v['sector_bytes']}")
    if v["l2_slices"] > v["chip_l2_slices"] and v["sms"] < v["chip_sms"]:
        fail("l2_slices", "a slice cannot have more L2 slices than the whole chip")
    set_bytes = v["l2_slices"] * v["l2_assoc"] * v["line_bytes"]
    if v["l2_bytes"] % set_bytes:
        fail("l2_bytes", f"{v['l2_bytes']} does not divide into l2_slices x l2_assoc x line_bytes = "
             f"{set_bytes}-byte sets")
    carveouts = v["shared_carveouts_kb"]
    pairs = zip(carveouts, carveouts[1:], strict=False)
    if not carveouts or any(later <= earlier for earlier, later in pairs):
        fail("shared_carveouts_kb", f"must be strictly increasing, got {list(carveouts)}")
    if carveouts[-1] * 1024 != v["max_shared_bytes_per_sm"]:
        fail("shared_carveouts_kb", f"the largest carveout ({carveouts[-1]} KiB) must equal "
             f"max_shared_bytes_per_sm ({v['max_shared_bytes_per_sm']} bytes)")
    if v["max_shared_bytes_per_sm"] > v["l1_shared_bytes_per_sm"]:
        fail("max_shared_bytes_per_sm", f"exceeds the unified l1_shared_bytes_per_sm "
             f"{v['l1_shared_bytes_per_sm']}")
    l1_set_bytes = v["l1_assoc"] * v["line_bytes"]
    for carveout_kb in carveouts:
        if (v["l1_shared_bytes_per_sm"] - carveout_kb * 1024) % l1_set_bytes:
            fail("l1_assoc", f"with a {carveout_kb} KiB carveout the L1 left does not divide into "
                 f"l1_assoc x line_bytes = {l1_set_bytes}-byte sets")
    if v["max_shared_bytes_per_block"] + v["shared_reserved_bytes_per_block"] > v["max_shared_bytes_per_sm"]:
        fail("max_shared_bytes_per_block", "plus shared_reserved_bytes_per_block exceeds "
             "max_shared_bytes_per_sm")
    if v["default_max_shared_bytes_per_block"] > v["max_shared_bytes_per_block"]:
        fail("default_max_shared_bytes_per_block", "exceeds the opt-in max_shared_bytes_per_block")
