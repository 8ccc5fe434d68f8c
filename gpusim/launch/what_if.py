"""What-if, measured: re-simulate a launch with one limit of the model removed at a time (``run.what_if()``).

What it models
    Each limit is a real change of the model, made through the config or an engine switch, never an estimate:

    ================== ===================================================================================
    dram_bandwidth     ``dram_bandwidth_gbs`` x factor (x 1e9 for "x infinity": a sector's DRAM slot lasts
                       < 1e-6 cycles, under the servers' rounding tolerance, so DRAM never queues)
    dram_latency       ``dram_latency_cycles`` = ``l2_latency_cycles`` (a DRAM access costs an L2 hit's time)
    l2_bandwidth       ``l2_bytes_per_cycle``, ``l2_write_bytes_per_cycle`` and ``interconnect_bytes_per_cycle_per_sm``
                       (the SM-to-L2 port) x factor
    shared_bank_conflicts engine switch ``WHATIF_NO_BANK_CONFLICTS``: every shared-memory phase takes
                       ceil(distinct words / banks) wavefronts (broadcasts and the wide-access phases kept)
    coalescing         engine switch ``WHATIF_PERFECT_COALESCING``: a global/local load or store moves only
                       ceil(active lanes x bytes / 32) sectors, the lowest of those it touched (atomics and
                       textures unchanged)
    occupancy          every warp slot filled: resident blocks per SM = max_warps_per_sm // warps per block,
                       the register, shared-memory and block-count limits lifted (the engine gives each
                       block slot its own registers and shared memory; L1 keeps the capacity the launch's
                       carveout left it). A grid smaller than the machine still fills only what it has.
    math_pipes         every math pipe (FMA, ALU, FP64, SFU/XU, tensor) busy ceil(interval / factor) cycles
                       per warp-instruction (1 for "x infinity": one issue per cycle per scheduler remains)
    divergence         engine switch ``WHATIF_NO_DIVERGENCE_COST``: the two paths of a divergent branch run side
                       by side, as one converged stream would: after a warp issues for one path the other
                       goes on top, and its next instruction issues in the same slot when its operands and
                       pipe are ready (``engine.sm.issue_unit``). The same instructions run, with the same
                       results; only the paths' serialization goes.
    launch_overhead    ``block_launch_cycles`` = 0 (a block starts the cycle its slot frees; the kernel's
                       launch latency is already outside ``run.cycles``)
    ================== ===================================================================================

    The re-runs start from the device memory and the L2 contents the launch started from (``GPU.launch``
    keeps a snapshot of the last timed launch's inputs: ``snapshot_inputs``), run on copies of them, and
    never touch the user's arrays; they run the same instruction stream (the launch's code generation is
    not redone). A re-run with no switch reproduces the launch's cycles and metrics exactly (tested).

Simplifications
    * "No divergence cost" pairs a branch's two innermost paths; the paths of an enclosing branch wait
      until those reconverge (as they would on the SIMT stack), and a path's wait after a branch is kept.
    * The snapshot is of the GPU's *latest* timed launch only (memory is bounded to one copy per GPU):
      ``what_if`` on an older run raises ``LaunchError`` naming the fix (``gpu.keep_launch_inputs = "all"``
      keeps every launch's copy, as ``gpusim run --what-if`` does for a program's launches).
    * The speed-up of a limit is baseline cycles / min(variant cycles, baseline cycles), >= 1 by construction:
      a machine without the limit can always follow the baseline's schedule (wait out the block launch,
      the latency, the bandwidth), so the greedy re-run is one schedule it has and the baseline another.
      The engine's schedulers and queues are greedy, so a re-run can come out slower (strided_copy on
      "teaching" without block launch cost: blocks of the second wave start earlier and meet the first
      wave's DRAM queue in another order); the row then keeps the re-run's cycles, says so in its note, and
      quotes 1.00.
    * Variants run in a process pool (``fork``) when more than one CPU is usable and free (the load average)
      and the work is worth it; otherwise one after the other in this process. Results are the same either way.
"""

from __future__ import annotations

import copy
import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from gpusim.arch import isa as I
from gpusim.engine.sm import timing_state as T
from gpusim.errors import LaunchError, NoTimingError
from gpusim.launch.device_memory import VALID_WRITTEN
from gpusim.launch.tensor_map import TensorMap
from gpusim.observe.what_if import WhatIf, WhatIfRow

if TYPE_CHECKING:
    from gpusim.arch.config import GPUConfig
    from gpusim.launch.device_memory import DeviceHeap
    from gpusim.ptx.lower import Program

__all__ = ["LIMITS", "LaunchRecord", "Switches", "WhatIf", "WhatIfRow", "relaunch", "variant_run", "what_if"]

INFINITE_FACTOR = 1e9
"""The factor "x infinity" uses for bandwidths: a 32-byte sector then occupies a server far below the servers'
rounding tolerance (1e-6 cycles) on every shipped config, so no transfer ever waits for one."""

POOL_WORTH_SECONDS = 0.5
"""Variants whose serial run would take less than this (estimated from the launch's own wall time) run in this
process: forking a worker from a process holding large arrays, and collecting its results, costs up to a few
tenths of a second on a loaded machine (measured: a pool made tiny launches' what-if 10x slower)."""

MATH_PIPES = (I.PIPE_FMA, I.PIPE_ALU, I.PIPE_FP64, I.PIPE_SFU, I.PIPE_TENSOR)


@dataclass(frozen=True)
class Switches:
    """What a what-if re-run changes beyond the config (read by ``launch.timed.run_timed_launch``)."""

    engine_bits: int = 0
    """``timing_state.WHATIF_*`` bits for the engine's parameter array"""
    fill_warp_slots: bool = False
    """resident blocks per SM = max_warps_per_sm // warps per block"""
    pipe_factor: float | None = None
    """math pipes' busy interval divided by this (rounded up, at least 1); None: unchanged"""

    def blocks_per_sm(self, occupancy, warps_per_block: int) -> int:
        if not self.fill_warp_slots:
            return occupancy.blocks_per_sm
        return max(1, occupancy.blocks_limit_warps)

    def wgmma_n8_interval(self, config) -> int:
        """The tensor pipe's cycles per 8 columns of a wgmma (the queue books them, not the ISA table's
        interval, which is the queue's issue port): divided like the other math pipes' intervals."""
        base = int(config.wgmma_n8_interval_cycles)
        if self.pipe_factor is None or base == 0:
            return base
        return max(1, int(np.ceil(base / self.pipe_factor)))

    def isa_table(self, config) -> np.ndarray:
        table = _isa_array(config).copy()
        if self.pipe_factor is not None:
            for pipe in MATH_PIPES:
                rows = table[:, I.I_PIPE] == pipe
                table[rows, I.I_INTERVAL] = np.maximum(1, np.ceil(table[rows, I.I_INTERVAL] / self.pipe_factor))
        return table


@functools.cache
def isa_fields() -> tuple[str, ...]:
    """The config fields ``isa.isa_array`` reads: the forms' latency and interval fields, the pipes' lane
    counts, the sub-partitions and the f16-accumulate rate (tests/test_what_if.py checks the table is the
    same for every limit's variant config, so the variants may share it)."""
    names = {"sub_partitions_per_sm", "mma_f16_accumulate_rate_factor", "wgmma_issue_cycles"}
    names |= {name for name in I.PIPE_LANE_FIELDS if name}
    for form in I.FORMS:
        names |= {name for name in (form.latency, form.interval, form.pipe_field) if name}
    return tuple(sorted(names))


_ISA_TABLES: dict[tuple, np.ndarray] = {}


def _isa_array(config) -> np.ndarray:
    """``isa.isa_array`` once per set of the values it reads (a Python loop over the opcode table: a third of a
    tiny re-run; the DRAM, L2 and launch-overhead variants change none of them)."""
    key = tuple(getattr(config, name) for name in isa_fields())
    table = _ISA_TABLES.get(key)
    if table is None:
        if len(_ISA_TABLES) >= 16:
            _ISA_TABLES.clear()
        table = _ISA_TABLES[key] = I.isa_array(config)
    return table


@functools.lru_cache(maxsize=64)
def _variant_config(config, overrides: tuple):
    """``config`` with ``overrides`` (sorted items), built and validated once per what-if of a launch."""
    return config.replace(**dict(overrides)) if overrides else config


@dataclass
class LaunchRecord:
    """What re-running a timed launch needs: the launch itself and a copy of the memory it started from."""

    config: GPUConfig
    program: Program
    regs_per_thread: int
    regs_source: str
    grid: tuple
    block: tuple
    args: list
    shared_bytes: int
    cooperative: bool
    options: dict
    """the GPU's plain attributes (flags a launch reads: synccheck, reconvergence, ...)"""
    heap: DeviceHeap | None = field(repr=False)
    l2: tuple | None = field(repr=False)
    wall_seconds: float = 0.0
    """host wall time of the ``GPU.launch`` call (its checks, this snapshot and the simulation)"""
    missing: str = ""
    """why no snapshot is held ("" while one is)"""
    execute: Callable | None = field(default=None, repr=False)
    """``launch.runner.execute_launch``, given by ``GPU.launch`` (this module does not import the runner: the
    runner builds the Run, whose ``what_if`` comes here)"""


class _Device:
    """The part of a GPU that ``runner.execute_launch`` uses, over a copy of the recorded memory: the GPU's
    plain launch options (``LaunchRecord.options``: synccheck, reconvergence and any other flag a launch
    reads), its config (or the variant's), the memory copies, printf captured, the what-if switches."""

    def __init__(self, config, heap, l2, options, switches):
        self.__dict__.update(options)
        self.printf = "capture"
        self.config = config
        self.heap = heap
        self._l2_state = l2
        self.what_if_switches = switches


class _FixedKernel:
    """The launch's kernel with its registers per thread as resolved for the launch."""

    def __init__(self, program, regs, source):
        self.program = program
        self.name = program.name
        self._regs = (regs, source)

    def registers_per_thread(self, regs=None):
        return self._regs


SNAPSHOT_BUDGET_BYTES = 64 << 20
"""``keep_launch_inputs=True`` (the default) keeps a launch's inputs only up to this many bytes (device memory
in use plus the L2 model): copying them costs about a memory copy of that size per launch. "latest" or "all"
keep them whatever their size."""


def _copy_into(spare, source: np.ndarray) -> np.ndarray:
    """``source`` copied, into ``spare`` when it has the same shape and type (a reused buffer is already
    paged in: a fresh one of hundreds of MiB costs its page faults again on every launch)."""
    if spare is not None and spare.shape == source.shape and spare.dtype == source.dtype:
        np.copyto(spare, source)
        return spare
    return source.copy()


def snapshot_inputs(gpu) -> tuple | str:
    """Copies of what a launch starts from: the device heap (its used bytes) and the persistent L2; or, when
    the GPU keeps none for this launch (``keep_launch_inputs``), the reason why."""
    mode = gpu.keep_launch_inputs
    if mode not in (True, False, "latest", "all"):
        raise LaunchError(f"gpu.keep_launch_inputs must be True, False, 'latest' or 'all', got {mode!r}")
    previous = getattr(gpu, "_what_if_record", None)
    if previous is not None and mode != "all" and previous.heap is not None:
        # one snapshot per GPU: the older run can no longer re-run; its buffers serve this snapshot
        gpu._what_if_spare = (previous.heap.data, previous.l2)
        previous.heap = previous.l2 = None
        previous.missing = ("it is not the latest timed launch on its GPU: the GPU keeps the device memory of its "
                            "latest launch only (to bound memory); call run.what_if() before launching again on "
                            "that GPU, or set gpu.keep_launch_inputs = 'all' before the launches")
    used = max(gpu.heap.top, 1)
    l2_bytes = 0 if gpu._l2_state is None else sum(array.nbytes for array in gpu._l2_state)
    if mode is False:
        return "gpu.keep_launch_inputs is False"
    if mode is True and used + l2_bytes > SNAPSHOT_BUDGET_BYTES:
        return (f"its device memory and L2 ({(used + l2_bytes) / 2**20:.0f} MiB) exceed what GPUs keep by default "
                f"({SNAPSHOT_BUDGET_BYTES >> 20} MiB); set gpu.keep_launch_inputs = 'latest' (or 'all') before "
                "the launch")
    spare = gpu.__dict__.pop("_what_if_spare", None) or (None, None)
    heap = copy.copy(gpu.heap)
    heap.data = _copy_into(spare[0], gpu.heap.data[:used])
    # without initcheck the valid map is exactly the live allocations (rebuilt when needed: no second copy)
    heap.valid = gpu.heap.valid[:used].copy() if gpu.heap.initcheck else None
    for name in ("free_ranges", "sizes", "records", "freed"):
        setattr(heap, name, copy.copy(getattr(gpu.heap, name)))
    l2 = None
    if gpu._l2_state is not None:
        spares = spare[1] or (None,) * len(gpu._l2_state)
        l2 = tuple(_copy_into(old, array) for old, array in zip(spares, gpu._l2_state, strict=True))
    return heap, l2


def _valid_map(heap) -> np.ndarray:
    """A heap's valid map without initcheck: every byte of a live allocation written, nothing else valid."""
    valid = np.zeros(heap.data.size, dtype=np.uint8)
    for offset, (nbytes, _) in heap.records.items():
        valid[offset:offset + nbytes] = VALID_WRITTEN
    return valid


def record_launch(run, gpu, args, shared_bytes, cooperative, snapshot, wall_seconds, execute) -> None:
    """Attach the launch's record to ``run``: the launch, and its memory snapshot (``snapshot_inputs``; a
    string when none was kept: why)."""
    heap, l2 = (None, None) if isinstance(snapshot, str) else snapshot
    record = LaunchRecord(config=gpu.config, program=run.program, regs_per_thread=run.regs_per_thread,
                          regs_source=run.regs_source, grid=run.grid, block=run.block,
                          args=[_plain(value) for value in args], shared_bytes=int(shared_bytes),
                          cooperative=bool(cooperative), options=_options(gpu), heap=heap, l2=l2,
                          wall_seconds=wall_seconds, execute=execute,
                          missing=snapshot if isinstance(snapshot, str) else "")
    gpu._what_if_record = record
    run.__dict__["_launch_record"] = record


def _options(gpu) -> dict:
    """The GPU's public attributes of plain types (its launch options), for a re-run's ``_Device``."""
    plain = (bool, int, float, str, tuple, frozenset, set, type(None))
    return {name: copy.copy(value) for name, value in vars(gpu).items()
            if not name.startswith("_") and isinstance(value, plain)}


def _plain(value):
    """A kernel argument without references to the GPU: a DeviceArray becomes its address, a TensorMap its
    128 bytes (checked against the launching GPU when it launched; a re-run's heap is a copy of that GPU's)."""
    if isinstance(value, TensorMap):
        return value.encode()
    pointer = getattr(value, "ptr", None)
    if pointer is not None and not isinstance(value, int | np.integer):
        return int(pointer)
    if isinstance(value, int) and type(value) is not int and not isinstance(value, bool):
        return int(value)      # a TextureObject (an int subclass holding the device) passes its address
    return value


def launch_record(run) -> LaunchRecord:
    """The record of ``run``'s launch, or one clear error saying why there is none."""
    if not run.timing:
        raise NoTimingError(f"kernel '{run.program.name}' ran functionally (timing=False): a what-if compares "
                            "simulated cycles; launch with timing=True (the default)")
    held = run.__dict__.get("_launch_record")
    if held is None:
        raise LaunchError(f"run of kernel '{run.program.name}' has no launch record: what-if re-runs a launch "
                          "made with gpu.launch (or kernel[grid, block](...)); a Run loaded from JSON or built "
                          "by hand cannot be re-simulated")
    record = held
    if record.heap is None:
        raise LaunchError(f"run of kernel '{run.program.name}' cannot be re-simulated: {record.missing}")
    return record


def relaunch(record: LaunchRecord, overrides: dict | None = None, switches: Switches | None = None):
    """Simulate the recorded launch again with config ``overrides`` and engine ``switches``, on copies of its
    recorded memory and L2 (a pool worker runs several variants: each must start from the record); returns
    its Run."""
    config = _variant_config(record.config, tuple(sorted((overrides or {}).items())))
    heap, l2 = record.heap, record.l2
    assert heap is not None and record.execute is not None    # a held record (held_record checks)
    if heap.valid is None:
        heap.valid = _valid_map(heap)
    heap = copy.copy(heap)
    heap.data, heap.valid = heap.data.copy(), heap.valid.copy()
    l2 = None if l2 is None else tuple(np.copy(array) for array in l2)
    device = _Device(config, heap, l2, record.options, switches)
    kernel = _FixedKernel(record.program, record.regs_per_thread, record.regs_source)
    return record.execute(device, kernel, record.grid, record.block, list(record.args), record.shared_bytes,
                          timing=True, regs=None, trace=False, max_warp_instructions=None, progress=False,
                          cooperative=record.cooperative)


# ------------------------------------------------------------------ the limits
def _times(factor) -> str:
    return "x infinity" if factor is None else f"x{factor:g}"


def _bandwidth(factor) -> float:
    return INFINITE_FACTOR if factor is None else float(factor)


def _no_dram(run) -> str:
    c = run.counters
    return "" if c["dram_read_bytes"] + c["dram_write_bytes"] else "the launch moved no DRAM bytes"


def _no_l2(run) -> str:
    return "" if run.counters["l2_sectors"] else "the launch sent no sector to L2"


def _no_shared(run) -> str:
    c = run.counters
    used = c["shared_load_requests"] + c["shared_store_requests"] + c["shared_atomic_requests"]
    return "" if used else "the launch made no shared-memory access"


def _no_global(run) -> str:
    c = run.counters
    used = sum(c[k] for k in ("global_load_requests", "global_store_requests", "local_load_requests",
                              "local_store_requests"))
    return "" if used else "the launch made no global or local load or store"


def _full_occupancy(run) -> str:
    occ = run.occupancy
    need = -(-int(np.prod(run.grid)) // run.config.sms)
    if min(max(1, occ.blocks_limit_warps), need) == min(occ.blocks_per_sm, need):
        return f"the launch already has every block it can use resident ({min(occ.blocks_per_sm, need)}/SM)"
    return ""


def _no_divergence(run) -> str:
    m = run.metrics
    if m["smsp__thread_inst_executed.sum"] == 32 * m["smsp__inst_executed.sum"]:
        return "every warp-instruction ran with all 32 lanes: no warp diverged"
    return ""


def _no_block_launch(run) -> str:
    return "" if run.config.block_launch_cycles else "block_launch_cycles is already 0"


def _dram_latency_equal(run) -> str:
    if run.config.dram_latency_cycles <= run.config.l2_latency_cycles:
        return "DRAM latency is already no more than L2's"
    return _no_dram(run)


@dataclass(frozen=True)
class Limit:
    """One limit the what-if can remove: its id, sentence, config change, engine switches, metrics it moves."""

    id: str
    describe: Callable
    moved: tuple[str, ...]
    overrides: Callable = lambda config, factor: {}
    switches: Callable = lambda factor: Switches()
    nothing_to_remove: Callable = lambda run: ""


LIMITS = (
    Limit("dram_bandwidth", lambda c, f: f"DRAM bandwidth {_times(f)}", ("dram__bytes.sum.per_second",),
          overrides=lambda c, f: {"dram_bandwidth_gbs": c.dram_bandwidth_gbs * _bandwidth(f)},
          nothing_to_remove=_no_dram),
    Limit("dram_latency", lambda c, f: f"DRAM latency -> L2's ({c.l2_latency_cycles} cycles)",
          ("smsp__pcsamp_warps_issue_stalled_long_scoreboard.sum",),
          overrides=lambda c, f: {"dram_latency_cycles": c.l2_latency_cycles},
          nothing_to_remove=_dram_latency_equal),
    Limit("l2_bandwidth", lambda c, f: f"L2 and SM-to-L2 bandwidth {_times(f)}", ("lts__t_bytes.sum.per_second",),
          overrides=lambda c, f: {"l2_bytes_per_cycle": c.l2_bytes_per_cycle * _bandwidth(f),
                                  "l2_write_bytes_per_cycle": c.l2_write_bytes_per_cycle * _bandwidth(f),
                                  "l2_partial_write_bytes_per_cycle":
                                      c.l2_partial_write_bytes_per_cycle * _bandwidth(f),
                                  "interconnect_bytes_per_cycle_per_sm":
                                      c.interconnect_bytes_per_cycle_per_sm * _bandwidth(f)},
          nothing_to_remove=_no_l2),
    Limit("shared_bank_conflicts", lambda c, f: "no shared-memory bank conflicts",
          ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
          switches=lambda f: Switches(engine_bits=T.WHATIF_NO_BANK_CONFLICTS), nothing_to_remove=_no_shared),
    Limit("coalescing", lambda c, f: "perfect coalescing (fewest sectors per request)",
          ("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio",
           "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio"),
          switches=lambda f: Switches(engine_bits=T.WHATIF_PERFECT_COALESCING), nothing_to_remove=_no_global),
    Limit("occupancy", lambda c, f: "every warp slot filled (occupancy limit lifted)",
          ("sm__warps_active.avg.pct_of_peak_sustained_active",),
          switches=lambda f: Switches(fill_warp_slots=True), nothing_to_remove=_full_occupancy),
    Limit("math_pipes", lambda c, f: f"math pipe throughput {_times(f)}",
          ("smsp__pcsamp_warps_issue_stalled_math_pipe_throttle.sum",),
          switches=lambda f: Switches(pipe_factor=float("inf") if f is None else float(f))),
    Limit("divergence", lambda c, f: "no divergence cost (a branch's paths run side by side)",
          ("gpu__time_duration.sum", "smsp__issue_active.avg.pct_of_peak_sustained_active"),
          switches=lambda f: Switches(engine_bits=T.WHATIF_NO_DIVERGENCE_COST), nothing_to_remove=_no_divergence),
    Limit("launch_overhead", lambda c, f: "no block launch cost (block_launch_cycles 0)",
          ("gpu__time_duration.sum",), overrides=lambda c, f: {"block_launch_cycles": 0},
          nothing_to_remove=_no_block_launch),
)
LIMIT_IDS = tuple(limit.id for limit in LIMITS)


def moved_metrics(metrics: dict) -> dict:
    """``metrics`` plus the Nsight-named ratios the what-if quotes that ``derive_metrics`` does not list."""
    out = dict(metrics)
    seconds = metrics.get("gpu__time_duration.sum", 0.0) * 1e-9
    if seconds:
        out["dram__bytes.sum.per_second"] = (metrics["dram__bytes_read.sum"] + metrics["dram__bytes_write.sum"]) \
            / seconds
        out["lts__t_bytes.sum.per_second"] = metrics["lts__t_bytes.sum"] / seconds
    for op in ("ld", "st"):
        requests = metrics.get(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum", 0)
        sectors = metrics.get(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum", 0)
        out[f"l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_{op}.ratio"] = \
            sectors / requests if requests else 0.0
    return out


def _choose(limits) -> list[Limit]:
    if limits is None:
        return list(LIMITS)
    if isinstance(limits, str):
        limits = [limits]
    chosen = []
    for name in limits:
        if name not in LIMIT_IDS:
            raise LaunchError(f"unknown what-if limit {name!r}; the limits are: {', '.join(LIMIT_IDS)}")
        chosen.append(LIMITS[LIMIT_IDS.index(name)])
    return chosen


def _check_factor(factor):
    if factor is None:
        return None
    if isinstance(factor, bool) or not isinstance(factor, int | float | np.integer | np.floating) \
            or not np.isfinite(factor) or factor <= 1:
        raise LaunchError(f"what_if factor= must be a finite number above 1 (bandwidths and math pipes x factor), "
                          f"or None for x infinity; got {factor!r}")
    return float(factor)


def variant_run(run, limit: str, factor=None):
    """The whole Run of ``run``'s launch with ``limit`` removed (every metric, for a closer look or a test)."""
    record = launch_record(run)
    chosen = _choose([limit])[0]
    factor = _check_factor(factor)
    return relaunch(record, chosen.overrides(record.config, factor), chosen.switches(factor))


# ------------------------------------------------------------------ running the variants
_PENDING: list = []      # (record, overrides, switches) of the variants a forked pool's workers run


def _simulate(index: int) -> tuple[int, dict]:
    record, overrides, switches = _PENDING[index]
    run = relaunch(record, overrides, switches)
    return int(run.cycles), moved_metrics(run.metrics)


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:       # not Linux
        return os.cpu_count() or 1


def _free_cpus() -> int:
    """Usable CPUs not already busy (the 1-minute load average, less this process): a pool on cores that other
    work holds only adds its own cost (forking, collecting results) to the same CPU time (measured: 10.5x a
    launch's time in a pool of 2 on a 2-core machine at load 4, 8-9x serially)."""
    try:
        load = os.getloadavg()[0]
    except OSError:       # no load average on this platform
        load = 0.0
    return max(1, int(_usable_cpus() - max(0.0, load - 1.0)))


def _run_all(record, variants, workers) -> list[tuple[int, dict]]:
    global _PENDING
    if workers <= 1 or len(variants) <= 1:
        results = []
        for overrides, switches in variants:
            run = relaunch(record, overrides, switches)
            results.append((int(run.cycles), moved_metrics(run.metrics)))
        return results
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if "fork" not in multiprocessing.get_all_start_methods():      # the workers inherit the record by fork
        return _run_all(record, variants, 1)
    _PENDING = [(record, overrides, switches) for overrides, switches in variants]
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
            return list(pool.map(_simulate, range(len(variants))))
    finally:
        _PENDING = []


def _slower_note(cycles: int, baseline: int) -> str:
    """Why a variant slower than the baseline counts as speed-up 1 (``what_if``'s construction)."""
    if cycles <= baseline:
        return ""
    return (f"the re-run took {cycles:,} cycles, {cycles - baseline:,} more: starting work earlier or moving it "
            "faster changed the order it meets the other limits in (the engine's greedy scheduling and "
            "first-come queues); a machine without the limit can still run the baseline's schedule, so the "
            "speed-up is 1.00")


def what_if(run, limits=None, factor=None, *, workers: int | None = None) -> WhatIf:
    """Measured speed-up of removing each limit (``LIMITS``) of ``run``'s launch, one at a time.

    ``limits``: ids to try (default all); ``factor``: bandwidths and math pipes x factor instead of x infinity;
    ``workers``: processes (default: the usable CPUs, when the variants are worth a pool)."""
    started = time.perf_counter()
    record = launch_record(run)
    factor = _check_factor(factor)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int | np.integer)
                                or workers < 1):
        raise LaunchError(f"what_if workers= must be a positive int (processes) or None (automatic), got "
                          f"{workers!r}")
    chosen = _choose(limits)
    config = record.config
    base = moved_metrics(run.metrics)
    planned: list[tuple[Limit, str]] = []
    skipped: list[tuple[Limit, str]] = []
    for limit in chosen:
        why = limit.nothing_to_remove(run)
        (skipped if why else planned).append((limit, why))
    variants = [(limit.overrides(config, factor), limit.switches(factor)) for limit, _ in planned]
    if workers is None:
        worth_a_pool = record.wall_seconds * len(variants) > POOL_WORTH_SECONDS and os.name == "posix"
        workers = min(len(variants), _free_cpus()) if worth_a_pool else 1
    results = _run_all(record, variants, max(1, int(workers)))
    rows = []
    for (limit, _), (cycles, metrics) in zip(planned, results, strict=True):
        rows.append(WhatIfRow(limit=limit.id, description=limit.describe(config, factor), cycles=cycles,
                              speedup=run.cycles / min(cycles, run.cycles) if cycles else float("inf"),
                              moved={name: float(metrics.get(name, 0.0)) for name in limit.moved},
                              baseline={name: float(base.get(name, 0.0)) for name in limit.moved},
                              note=_slower_note(cycles, run.cycles)))
    for limit, why in skipped:
        same = {name: float(base.get(name, 0.0)) for name in limit.moved}
        rows.append(WhatIfRow(limit=limit.id, description=limit.describe(config, factor), cycles=int(run.cycles),
                              speedup=1.0, moved=same, baseline=same, measured=False, note=why))
    result = WhatIf(kernel=run.program.name, config=config.name, baseline_cycles=int(run.cycles), rows=rows,
                    factor=factor, run_seconds=record.wall_seconds,
                    what_if_seconds=time.perf_counter() - started, workers=max(1, int(workers)))
    run.__dict__["_what_if"] = result
    return result
