"""List scheduling inside basic blocks.

What ptxas does: it reorders each basic block (and, with unrolling, whole loop bodies) so that
long-latency results are started as early as possible and their consumers come as late as the
dependences allow: in its SASS for ``programs/gemv`` the loop's 32 global loads all issue before the
first FFMA that uses one. Its scheduler is latency-driven list scheduling (the control bits it writes
carry the stall counts it planned with).

What is modelled: classic list scheduling per block. The block's last instruction stays last when it is a
control transfer. *Fences* (``gpusim.codegen.deps.is_fence``: barriers, memory fences, atomics, warp-
synchronous operations, clock reads) split a block into segments that are scheduled separately, so
nothing moves across one. Inside a segment an instruction depends on an earlier one through a register
(read after write, write after read, write after write; a guard and an address base are reads), and a
store keeps its order with every earlier or later load or store that may alias it (different state
spaces never alias; the same base register with disjoint offsets does not; loads reorder freely among
themselves). Each instruction's priority is the longest latency path from it to the end of the segment
(latencies from the config; a global load plans with an L2 hit, a shared load with the shared-memory
latency); one instruction is placed per cycle, the ready one with the highest priority first (ties: the
original order), except that at most :data:`LOAD_WINDOW` loaded 32-bit values wait for their first reader
at a time (ptxas's register pressure: its gemv loop interleaves FFMAs with the LDGs beyond the 16th; an
LDS.128 counts its four values, an LDS.64 two).

Register pressure (``gpusim.codegen.pressure``): the registers live at each step are tracked (those live
after the segment from a liveness analysis of the kernel's blocks; a result nothing reads takes none past
its instruction). Placing the chosen instruction must keep them within the budget (the full-occupancy
register count or the launch bounds' cap, less R1 and ``RESERVED``); when it would not, a ready
instruction that does goes first (waiting out its operands' latency if it must), and when none does, the
segment is scheduled again -- choosing the instruction that adds the fewest registers, and the one that
is the last operand the most waiting readers need; then keeping room for the widest instruction not yet
placed (:class:`_Reserve`) -- and the schedule with the lowest peak is kept. A
segment whose peak still exceeds the budget is scheduled for latency under the launch bounds' cap alone
(ptxas gives up the target there: 166 registers for the warp-tiled SGEMM of validation/kernels). Without
the budget, unrolled loops hoisted every load of the block: the layer norms of tests/corpus_llm needed 64
registers where ptxas gives 26. Not modelled: dual-issue and operand-reuse effects; ptxas's target is
not a hard limit (it gives 34 registers to a kernel with sixteen float4 loads in flight,
tests/test_regalloc.py, and 56 to Triton's fp32 matmul, which gpusim, past the target, schedules for
latency under the load window to 53).
"""

from __future__ import annotations

from typing import NamedTuple

from gpusim.codegen import deps, pressure


def _segments(insts: list) -> list[tuple[list, object]]:
    """(segment, the fence after it or None) in order."""
    out = []
    segment: list = []
    for inst in insts:
        if deps.is_fence(inst.row):
            out.append((segment, inst))
            segment = []
        else:
            segment.append(inst)
    out.append((segment, None))
    return out


def schedule_kernel(kernel, config) -> int:
    """Schedule every block of ``kernel`` in place; returns the number of instructions that moved. Where
    the register budget cannot be kept, the kernel is scheduled again under the launch bounds' cap alone
    (``pressure.relaxed_budget``)."""
    live_out = pressure.live_out(kernel)
    plans = []
    for block, after in zip(kernel.blocks, live_out, strict=True):
        insts = block.insts
        tail = []
        if insts and deps.is_fence(insts[-1].row) and not deps.is_load(insts[-1].row):
            tail = [insts[-1]]
            insts = insts[:-1]
        live = pressure.live_before(tail, after)
        parts = []
        for segment, fence in reversed(_segments(insts)):
            if fence is not None:
                live = pressure.live_before([fence], live)
            parts.append((segment, fence, live))
            live = pressure.live_before(segment, live)
        plans.append((block, tail, parts[::-1]))
    widths = pressure.register_widths(kernel)
    budget = pressure.register_budget(kernel, config)
    outs, _ = _schedule_blocks(plans, config, Pressure(widths, budget, 0), pressure.relaxed_budget(kernel, config))
    moved = 0
    for (block, _, _), out in zip(plans, outs, strict=True):
        moved += sum(a is not b for a, b in zip(out, block.insts, strict=True))
        block.insts = out
    return moved


def _schedule_blocks(plans: list, config, limits: Pressure, relaxed: int) -> tuple[list[list], int]:
    """(each block's new order, the highest register pressure of any segment) under ``limits``; a segment
    that cannot be kept within the budget is scheduled again under ``relaxed``."""
    outs = []
    peak = 0
    for _, tail, parts in plans:
        out: list = []
        for segment, fence, live_after in parts:
            order, top = _schedule(segment, config, limits._replace(live_after=live_after))
            if top > limits.budget and relaxed > limits.budget:
                order, top = _schedule(segment, config, limits._replace(live_after=live_after, budget=relaxed))
            out.extend(order)
            peak = max(peak, top)
            if fence is not None:
                out.append(fence)
        outs.append(out + tail)
    return outs, peak


def dependence_graph(segment: list, config) -> tuple[list[list[tuple[int, int]]], list[int]]:
    """(successors with edge latency per instruction, number of predecessors per instruction)."""
    n = len(segment)
    succs: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    npred = [0] * n
    last_write: dict[int, int] = {}
    readers: dict[int, list[int]] = {}
    memory: list[int] = []
    edges: dict[tuple[int, int], int] = {}

    def edge(i: int, j: int, lat: int) -> None:
        if edges.get((i, j), -1) < lat:
            edges[(i, j)] = lat

    for j, inst in enumerate(segment):
        row = inst.row
        for r in deps.reads(row):
            if r in last_write:
                i = last_write[r]
                edge(i, j, deps.latency(segment[i].row, config))
        for r in deps.writes(row):
            if r in last_write:
                edge(last_write[r], j, 1)
            for i in readers.get(r, ()):
                if i != j:
                    edge(i, j, 0)
        if deps.is_load(row) or deps.is_store(row):
            for i in memory:
                other = segment[i].row
                if (deps.is_store(row) or deps.is_store(other)) and deps.may_alias(other, row):
                    edge(i, j, 1)
            memory.append(j)
        for r in deps.reads(row):
            readers.setdefault(r, []).append(j)
        for r in deps.writes(row):
            last_write[r] = j
            readers[r] = []
    for i in range(n - 1):
        if segment[i].companion:          # a companion stays right before the instruction it belongs to
            edge(i, i + 1, 0)
    for (i, j), lat in sorted(edges.items()):
        succs[i].append((j, lat))
        npred[j] += 1
    return succs, npred


class Pressure(NamedTuple):
    """What the schedule needs to weigh register pressure: each register's width in 32-bit registers,
    the budget (``gpusim.codegen.pressure.register_budget``) and the bit set live after the segment."""

    widths: list
    budget: int
    live_after: int


LOAD_WINDOW = 16
"""Most loaded 32-bit values the schedule keeps waiting for their first reader (ptxas's register-pressure
limit as its SASS for programs/gemv shows: the 16-column loop issues 16 LDGs, then one FFMA per two more
LDGs, never more than 16 loaded values unconsumed). Values, not loads: ptxas's SASS of Triton's fp32
matmul (tests/data/regalloc_sass) keeps about 24 values of its LDS.128 and LDS.64 ahead of the FFMAs that
read them; counted as 16 loads, gpusim's schedule kept 48 values and more ahead (79 registers against
ptxas's 56; 53 counted as values). Only values something reads count: programs/labs/stream_loads.ptx's
``stream_loads_v4`` reads one lane of each float4 load, ptxas narrows them to LDG.E and issues 16 before
the first FADD (programs/sass/sm_90/labs/stream_loads.sass), and so does the schedule."""


class _Live:
    """The registers a partial schedule of a segment keeps live, and what placing one more would change."""

    def __init__(self, segment: list, limits: Pressure):
        self.widths, self.after = limits.widths, limits.live_after
        self.reads = [deps.reads(inst.row) for inst in segment]
        self.writes = [deps.writes(inst.row) for inst in segment]
        self.left: dict[int, int] = {}           # register -> its reads not scheduled yet
        for regs in self.reads:
            for r in regs:
                self.left[r] = self.left.get(r, 0) + 1
        live_in = pressure.live_before(segment, limits.live_after)
        self.live: set[int] = set()
        while live_in:                           # the set bits, lowest first: a loop over the bit length
            low = live_in & -live_in             # would be quadratic in the register numbers a kernel declares
            self.live.add(low.bit_length() - 1)
            live_in ^= low
        self.size = sum(self._width(r) for r in self.live)

    def _width(self, r: int) -> int:
        return self.widths[r] if r < len(self.widths) else 1

    def _read_later(self, r: int, i: int) -> bool:
        """Whether a value ``i`` writes to ``r`` is read (a dead result, such as the unused lanes of a vector
        load, takes no register past its instruction)."""
        return self.left.get(r, 0) - (r in self.reads[i]) > 0 or bool(self.after >> r & 1)

    def _dies(self, r: int) -> bool:
        return self.left.get(r, 0) == 1 and not self.after >> r & 1

    def delta(self, i: int) -> int:
        """32-bit registers placing instruction ``i`` next adds to the live set (negative: frees)."""
        made = sum(self._width(r) for r in self.writes[i] if r not in self.live and self._read_later(r, i))
        freed = sum(self._width(r) for r in self.reads[i] if r in self.live and r not in self.writes[i]
                    and self._dies(r))
        return made - freed

    def place(self, i: int) -> None:
        self.size += self.delta(i)
        for r in self.reads[i]:
            self.left[r] -= 1
            if self.left[r] == 0 and not self.after >> r & 1 and r not in self.writes[i]:
                self.live.discard(r)
        self.live |= {r for r in self.writes[i] if self._read_later(r, i)}


def schedule_segment(segment: list, config, limits: Pressure | None = None) -> list:
    """List-schedule one segment; with ``limits``, an instruction that would take the live registers past
    the budget waits while a ready one adds fewer (Goodman and Hsu's integrated prepass scheduling, ICS
    1988: schedule for latency until pressure reaches the register limit, then to reduce it). Where the
    budget cannot be kept, two ways of choosing what goes next are tried (the fewest registers added; the
    last operand of the most waiting readers) and the schedule with the lower peak is kept."""
    return _schedule(segment, config, limits)[0]


def _schedule(segment: list, config, limits: Pressure | None) -> tuple[list, int]:
    """(``schedule_segment``'s order, its peak register pressure: 0 without ``limits``)."""
    n = len(segment)
    if n < 2:
        return list(segment), 0
    graph = dependence_graph(segment, config)
    height = [0] * n
    for i in range(n - 1, -1, -1):
        own = deps.latency(segment[i].row, config)
        height[i] = max([own] + [lat + height[j] for j, lat in graph[0][i]])
    order, peak = _list(segment, config, graph, height, limits, False)
    for enabling, reserve in ((True, False), (False, True)):
        if limits is not None and peak > limits.budget:
            other, other_peak = _list(segment, config, graph, height, limits, enabling, reserve)
            if other_peak < peak:
                order, peak = other, other_peak
    return [segment[i] for i in order], peak


def _list(segment: list, config, graph, height: list, limits: Pressure | None, enabling: bool,
          reserve: bool = False):
    """(order, peak live registers: 0 without ``limits``) of one list-scheduling pass; with ``reserve``,
    an instruction goes next only if the registers the widest other instruction not yet placed adds would
    still fit after it (:class:`_Reserve`)."""
    n = len(segment)
    succs, npred = graph[0], list(graph[1])
    consumers = [0] * n        # per load: its readers in the segment (read after write)
    used: list[set[int]] = [set() for _ in range(n)]   # per load: its registers read later (not dead lanes)
    after = limits.live_after if limits is not None else 0
    for i in range(n):
        if deps.is_load(segment[i].row):
            written = deps.writes(segment[i].row)
            for j, _ in succs[i]:
                read = written & deps.reads(segment[j].row)
                consumers[i] += bool(read)
                used[i] |= read
            used[i] |= {r for r in written if after >> r & 1}
    unread: set[int] = set()   # registers loaded in the segment that no placed instruction has read yet
    waiting = 0                # the 32-bit values they hold
    earliest = [0] * n
    live = _Live(segment, limits) if limits is not None else None
    held = _Reserve(segment, live) if reserve and live is not None else None
    peak = live.size if live is not None else 0
    ready = [i for i in range(n) if npred[i] == 0]
    order: list[int] = []
    t = 0
    while ready:
        now = [i for i in ready if earliest[i] <= t]
        if waiting >= LOAD_WINDOW:
            loads = [i for i in now if consumers[i]]
            if len(loads) < len(now):
                now = [i for i in now if not consumers[i]]
            elif loads:
                later = [i for i in ready if not consumers[i]]
                if later:
                    t = max(t + 1, min(earliest[i] for i in later))
                    continue
        if not now:
            t = min(earliest[i] for i in ready)
            continue
        chained = [i for i in now if order and segment[order[-1]].companion and i == order[-1] + 1]
        if chained:
            pick = chained[0]
        else:
            pick = max(now, key=lambda i: (height[i], -i))
            if held is not None and limits is not None:
                if not held.fits(pick, limits.budget):
                    fits = [i for i in ready if held.fits(i, limits.budget)]
                    pick = max(fits, key=lambda i: (height[i], -i)) if fits else \
                        _relieve(ready, held.live, height, limits.budget, None)
            elif live is not None and limits is not None and live.size + live.delta(pick) > limits.budget:
                pick = _relieve(ready, live, height, limits.budget, (succs, npred) if enabling else None)
        if live is not None:
            live.place(pick)
            peak = max(peak, live.size)
            t = max(t, earliest[pick])
        if held is not None:
            held.place(pick)
        ready.remove(pick)
        order.append(pick)
        for r in deps.reads(segment[pick].row) & unread:
            unread.discard(r)
            waiting -= _values(r, limits)
        if consumers[pick]:
            for r in used[pick] - unread:
                unread.add(r)
                waiting += _values(r, limits)
        for j, lat in succs[pick]:
            earliest[j] = max(earliest[j], t + lat)
            npred[j] -= 1
            if npred[j] == 0:
                ready.append(j)
        t += 1
    return order, peak


def _values(r: int, limits: Pressure | None) -> int:
    """32-bit values register ``r`` holds (1 without ``limits``' widths)."""
    if limits is None or r >= len(limits.widths):
        return 1
    return max(limits.widths[r], 1)


class _Reserve:
    """Room kept for the widest instruction not yet placed. Scheduling for latency until the live registers
    reach the budget can leave no room for an operand wider than the rest: tests/corpus/matmul_tiled's
    unrolled loop filled the budget with one-value LDS of B's column, and A's LDS.128 (four values) that the
    next FFMA also needs then could not fit (peak 33 against a budget of 29, and the kernel fell back to the
    latency schedule: 45 registers where ptxas, which fits its target, gives 32). Here an instruction may go
    next only if the live registers after it plus what the widest other unplaced instruction adds (its
    written registers' widths) stay within the budget; when none may, ``_relieve`` decides as before."""

    def __init__(self, segment: list, live: _Live):
        self.live = live
        self.adds = [sum(live._width(r) for r in deps.writes(inst.row)) for inst in segment]
        self.pending: dict[int, int] = {}
        for a in self.adds:
            self.pending[a] = self.pending.get(a, 0) + 1

    def _widest_other(self, i: int) -> int:
        own = self.adds[i]
        return max((a for a, k in self.pending.items() if k > (a == own)), default=0)

    def fits(self, i: int, budget: int) -> bool:
        return self.live.size + self.live.delta(i) + self._widest_other(i) <= budget

    def place(self, i: int) -> None:
        self.pending[self.adds[i]] -= 1


def _relieve(ready: list, live: _Live, height: list, budget: int, graph) -> int:
    """Over the budget: the ready instruction (waiting for its operands' latency if need be) that fits
    the budget with the longest path; else, with ``graph`` (successors, predecessors left), the one that
    lets the most readers go next (the last operand they wait for); then the one that adds the fewest
    registers."""
    fits = [i for i in ready if live.size + live.delta(i) <= budget]
    if fits:
        return max(fits, key=lambda i: (height[i], -i))

    def enables(i: int) -> int:
        if graph is None:
            return 0
        succs, npred = graph
        return sum(1 for j, _ in succs[i] if npred[j] == 1)

    return min(ready, key=lambda i: (-enables(i), live.delta(i), -height[i], i))
