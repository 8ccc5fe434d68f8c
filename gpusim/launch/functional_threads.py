"""The functional engine on several threads (``GPU(threads=N)``): independent blocks at once, one thread's results.

The functional engine runs a grid one block at a time (engine/semantics/functional.py). Blocks that do not
communicate are independent, so different blocks can run on different threads: each worker has its own
Machine (registers, SIMT stacks, the shared and local memory of its block, its per-pc counts) and all share
the device memory and the code. The engine's entry ``run_functional`` is compiled ``nogil``, so the workers
run in parallel. The first slice (``slices``: a budget of warp-instructions) runs on the launching thread alone,
so a launch that fits in it costs what it costs on one thread; after it, the blocks past the one in progress
are cut into one contiguous range per worker (the first worker keeps its block and the first range), and the
workers run in rounds: each busy worker runs one slice of its range, then the launching thread reports progress
(after a round in which some slice did not finish its range) and adapts the budget; a pending Ctrl-C is raised
there, after the round. What a launch gives is what one thread gives:

* outputs: every block writes what it writes on one thread, since no block reads what another wrote;
* instruction counts: the workers' per-pc counts are summed (integers, in any order);
* a fault, deadlock or endless loop: every chunk before the first failing one runs to its end, and the error
  raised is the one of the lowest failing block (the block where one thread stops). Device memory after a
  failed launch holds what the blocks wrote before they stopped, as on a GPU (blocks past the failing one may
  have run too).

A launch runs on one thread (``one_thread_reason`` says why) when its blocks may communicate or their order
shows: global or generic atomics and reductions (``atom``, ``red``, ``cp.reduce.async.bulk``), fences and
memory barriers wider than the CTA, ``.volatile``/``.relaxed``/``.acquire`` loads (spin-waits on flags),
cooperative or cluster launches (several blocks resident), device printf (its order) and the sanitizers; and
grids too small to share (fewer than two chunks per thread).

Used by functional launches (``timing=False``) and by sampled runs for the blocks they do not time
(gpusim.launch.sampling). The timed engine itself runs on one thread: its SMs share the L2 and DRAM models
cycle by cycle.

Simplified: blocks that race on plain global memory (two blocks storing different values to one address, or
one reading what another stores, without atomics or fences: undefined in CUDA) may give a different winner
from one thread; a launch that reaches ``max_warp_instructions`` reports the warp-instructions all chunks
executed (on one thread, the run stops exactly at the limit).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.engine.semantics import functional as F
from gpusim.errors import ConfigError
from gpusim.launch import slices
from gpusim.launch.faults import translating
from gpusim.launch.slices import FIRST_BUDGET, drive

CHUNKS_PER_THREAD = 1
"""Chunks of blocks per worker. One: each worker runs one contiguous range as one thread runs a grid, so its
slices and its progress are one thread's (a worker that took a second chunk would end a slice at a chunk's end,
and progress would come where one thread's run had not been cut); the blocks of a grid cost about the same."""
ORDERED_MODIFIERS = (".volatile", ".relaxed", ".acquire", ".acq_rel", ".sc")
"""Load modifiers of memory-model operations whose result may depend on another block's stores."""


def resolve_threads(threads: Any) -> int:
    """``GPU(threads=...)``: a positive int, or None for ``$GPUSIM_THREADS`` or else every core this process may
    use."""
    if threads is None:
        env = os.environ.get("GPUSIM_THREADS", "").strip()
        if env:
            if not env.isdigit() or int(env) < 1:
                raise ConfigError(f"GPUSIM_THREADS must be a positive integer, got {env!r}", field="threads")
            return int(env)
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if isinstance(threads, bool) or not isinstance(threads, int | np.integer) or threads < 1:
        raise ConfigError(f"threads must be a positive int (threads the simulator may use), got {threads!r}",
                          field="threads")
    return int(threads)


def communicating_line(program) -> int | None:
    """The PTX line of the first instruction through which blocks may communicate, or None."""
    code = program.code[:program.n_inst]
    ops, spaces = code[:, L.F_OP], code[:, L.F_SPACE]
    global_space = (spaces == L.SP_GLOBAL) | (spaces == L.SP_GENERIC)
    texts = program.texts
    candidates = np.nonzero(((ops == c.OP_ATOM) | (ops == c.OP_RED) | (ops == c.OP_LD)) & global_space
                            | (ops == c.OP_MEMBAR) | (ops == c.OP_BULK_COPY) | (ops == c.OP_BULK_TENSOR))[0]
    for pc in candidates:
        op, text = int(ops[pc]), texts[pc] if pc < len(texts) else ""
        if (op in (c.OP_ATOM, c.OP_RED)
                or (op == c.OP_MEMBAR and ".cta" not in text and "proxy" not in text)
                or (op == c.OP_LD and any(mod in text for mod in ORDERED_MODIFIERS))
                or "cp.reduce.async.bulk" in text):
            return int(code[pc, L.F_LINE])
    return None


def one_thread_reason(gpu, program, n_blocks: int, resident: int) -> str:
    """Why this launch's functional blocks run on one thread ("" when they may share ``gpu.threads``)."""
    threads = getattr(gpu, "threads", 1)
    if threads <= 1:
        return "threads=1"
    if resident > 1:
        return "several blocks resident at once (a cooperative or cluster launch): they wait on each other"
    if program.has_printf:
        return "device printf: its output keeps the blocks' order"
    if getattr(gpu, "sanitize", None):
        return "a sanitizer is on"
    if n_blocks < 2 * threads:
        return f"{n_blocks} blocks: fewer than two per thread"
    line = communicating_line(program)
    if line is not None:
        return (f"blocks may communicate ({program.file}:{line}: a global atomic, fence or ordered load), so their "
                "order may show")
    return ""


@dataclass
class FunctionalResult:
    """What a functional run of some blocks gives: the engine's status, warp-instructions executed, the block of
    an error (or the last), the Machine whose state explains an error, and the per-pc counts."""

    status: int
    executed: int
    bad_block: int
    machine: Any
    pc_counts: np.ndarray


def run_blocks(gpu, make_machine: Callable[[np.ndarray], Any], launch: np.ndarray, program, code, first: int,
               n_blocks: int, limit: int, *, resident: int,
               on_slice: Callable[[int, int], None] | None = None) -> FunctionalResult:
    """Run blocks ``first``..``n_blocks``-1 on the functional engine: on ``gpu.threads`` workers when the blocks
    may share them (``one_thread_reason``), else on this thread, as always. ``make_machine(launch)`` builds a
    fresh Machine over the shared device memory with that launch array (a worker's is a copy: the engine writes
    into it); ``on_slice(blocks done, warp-instructions executed)`` reports progress between slices."""
    threads = 1 if one_thread_reason(gpu, program, n_blocks - first, resident) else gpu.threads
    if threads <= 1:
        m = make_machine(launch)
        ctl, fw = F.make_functional_state(m.regs.shape[0])
        ctl[F.FC_BLOCK] = first

        def call(budget):
            return F.run_functional(m, code, n_blocks, limit, ctl, fw, budget, resident)

        report = (lambda: on_slice(int(ctl[F.FC_BLOCK]) - first, int(ctl[F.FC_EXECUTED]))) if on_slice else None
        with translating(program, m):
            status, executed, bad_block = drive(call, F.RUN_SLICE, report)
        return FunctionalResult(status, executed, bad_block, m, m.pc_counts.copy())
    return _run_parallel(lambda: make_machine(launch.copy()), program, code, first, n_blocks, limit, threads,
                         on_slice)


def _chunks(first: int, n_blocks: int, threads: int) -> list[tuple[int, int]]:
    count = n_blocks - first
    if count <= 0:
        return []
    pieces = min(count, threads * CHUNKS_PER_THREAD)
    bounds = [first + count * i // pieces for i in range(pieces + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(pieces)]


class _Worker:
    """One thread's Machine and loop state, and the chunk of blocks it is running (None: idle)."""

    def __init__(self, machine: Any) -> None:
        self.m = machine
        self.ctl, self.fw = F.make_functional_state(machine.regs.shape[0])
        self.chunk: int | None = None
        self.begin = self.end = 0

    def start(self, index: int, chunk: tuple[int, int]) -> None:
        self.chunk, self.begin, self.end = index, chunk[0], chunk[1]
        self.ctl[:] = 0
        self.fw[:] = 0
        self.ctl[F.FC_BLOCK] = chunk[0]

    def step(self, code, limit: int, budget: int) -> tuple:
        return F.run_functional(self.m, code, self.end, limit, self.ctl, self.fw, budget, 1)


def _run_parallel(make_machine, program, code, first, n_blocks, limit, threads, on_slice) -> FunctionalResult:
    """The first slice on this thread alone (a launch that fits in it never pays for workers); then the blocks
    after the one in progress are cut into ``threads`` ranges, the first worker keeping its block and the first
    range, and the workers run in rounds: each runs one slice of its range (in parallel), then, as
    ``slices.drive`` does after a slice that did not finish, progress is reported and the budget adapted."""
    lead = _Worker(make_machine())
    lead.start(0, (first, n_blocks))
    budget = slices.FIXED_BUDGET or FIRST_BUDGET
    with translating(program, lead.m):
        started = time.perf_counter()
        status, executed, bad_block = lead.step(code, limit, budget)
    if status != F.RUN_SLICE:       # done (or failed) within one slice: exactly what one thread does
        return FunctionalResult(int(status), int(executed), int(bad_block), lead.m, lead.m.pc_counts.copy())
    if on_slice is not None:
        on_slice(int(lead.ctl[F.FC_BLOCK]) - first, int(lead.ctl[F.FC_EXECUTED]))
    if slices.FIXED_BUDGET is None:
        budget = slices.next_budget(budget, time.perf_counter() - started)
    rest = _chunks(int(lead.ctl[F.FC_BLOCK]) + 1, n_blocks, threads)
    chunks = [(first, rest[0][1] if rest else n_blocks)] + rest[1:]
    lead.end = chunks[0][1]
    workers = [lead] + [_Worker(make_machine()) for _ in chunks[1:]]
    for k, worker in enumerate(workers[1:], start=1):
        worker.start(k, chunks[k])
    outcome: list[tuple[int, int, int] | None] = [None] * len(chunks)     # (status, executed, bad block)
    machine_of: list[Any] = [None] * len(chunks)
    failed = len(chunks)
    done_blocks = done_executed = 0
    with translating(program, lead.m), ThreadPoolExecutor(len(workers), "gpusim-functional") as pool:
        try:
            while True:
                busy = [w for w in workers if w.chunk is not None and w.chunk < failed]
                if not busy:
                    break
                started = time.perf_counter()
                results = list(pool.map(lambda worker, b=budget: worker.step(code, limit, b), busy))
                cut = False
                for worker, (status, executed, bad_block) in zip(busy, results, strict=True):
                    if status == F.RUN_SLICE:
                        cut = True
                        continue
                    index = worker.chunk
                    assert index is not None
                    outcome[index] = (int(status), int(executed), int(bad_block))
                    done_blocks += worker.end - worker.begin
                    done_executed += int(executed)
                    worker.chunk = None
                    if status != F.RUN_OK:
                        machine_of[index], failed = worker.m, min(failed, index)
                if cut and on_slice is not None:
                    running = [w for w in busy if w.chunk is not None]
                    on_slice(done_blocks + sum(int(w.ctl[F.FC_BLOCK]) - w.begin for w in running),
                             done_executed + sum(int(w.ctl[F.FC_EXECUTED]) for w in running))
                if slices.FIXED_BUDGET is None:
                    budget = slices.next_budget(budget, time.perf_counter() - started)
        except KeyboardInterrupt:
            raise KeyboardInterrupt() from None
    return _combine(chunks, outcome, machine_of, [w.m for w in workers], limit)


def _combine(chunks, outcome, machine_of, machines, limit) -> FunctionalResult:
    pc_counts = sum(m.pc_counts for m in machines)
    executed = 0
    for k, (start, _end) in enumerate(chunks):
        result = outcome[k]
        assert result is not None, "every chunk up to the first failing one has run"
        status, count, bad_block = result
        executed += count
        if status != F.RUN_OK:
            return FunctionalResult(status, executed, bad_block, machine_of[k], pc_counts)
        if executed >= limit:       # one thread would have stopped inside this chunk
            return FunctionalResult(F.RUN_LIMIT, executed, start, machines[0], pc_counts)
    return FunctionalResult(F.RUN_OK, executed, chunks[-1][1] - 1, machines[0], pc_counts)
