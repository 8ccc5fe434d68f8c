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
original order), except that at most :data:`LOAD_WINDOW` loaded values wait for their first reader at a
time (ptxas's register pressure: its gemv loop interleaves FFMAs with the LDGs beyond the 16th). Not
modelled: register pressure (ptxas weighs it; here registers per thread come from ptxas -v or the PTX's
own line, not from this schedule), dual-issue and operand-reuse effects.
"""

from __future__ import annotations

from gpusim.codegen import deps


def schedule_kernel(kernel, config) -> int:
    """Schedule every block of ``kernel`` in place; returns the number of instructions that moved."""
    moved = 0
    for block in kernel.blocks:
        insts = block.insts
        tail = []
        if insts and deps.is_fence(insts[-1].row) and not deps.is_load(insts[-1].row):
            tail = [insts[-1]]
            insts = insts[:-1]
        out: list = []
        segment: list = []
        for inst in insts:
            if deps.is_fence(inst.row):
                out.extend(schedule_segment(segment, config))
                out.append(inst)
                segment = []
            else:
                segment.append(inst)
        out.extend(schedule_segment(segment, config))
        out.extend(tail)
        moved += sum(a is not b for a, b in zip(out, block.insts, strict=True))
        block.insts = out
    return moved


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


LOAD_WINDOW = 16
"""Most load results the schedule keeps waiting for their first use (ptxas's register-pressure limit as its
SASS for programs/gemv shows: the 16-column loop issues 16 LDGs, then one FFMA per two more LDGs,
never more than 16 loaded values unconsumed)."""


def schedule_segment(segment: list, config) -> list:
    n = len(segment)
    if n < 2:
        return list(segment)
    succs, npred = dependence_graph(segment, config)
    consumers = [0] * n        # per load: its readers in the segment (read after write)
    producer_of: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        if deps.is_load(segment[i].row):
            written = deps.writes(segment[i].row)
            for j, _ in succs[i]:
                if written & deps.reads(segment[j].row):
                    consumers[i] += 1
                    producer_of[j].append(i)
    waiting = 0                # loads scheduled whose readers are not all scheduled yet
    height = [0] * n
    for i in range(n - 1, -1, -1):
        own = deps.latency(segment[i].row, config)
        height[i] = max([own] + [lat + height[j] for j, lat in succs[i]])
    earliest = [0] * n
    ready = [i for i in range(n) if npred[i] == 0]
    order: list[int] = []
    t = 0
    while ready:
        now = [i for i in ready if earliest[i] <= t]
        if waiting >= LOAD_WINDOW:
            held = [i for i in now if consumers[i]]
            if len(held) < len(now):
                now = [i for i in now if not consumers[i]]
            elif held:
                later = [i for i in ready if not consumers[i]]
                if later:
                    t = max(t + 1, min(earliest[i] for i in later))
                    continue
        if not now:
            t = min(earliest[i] for i in ready)
            continue
        chained = [i for i in now if order and segment[order[-1]].companion and i == order[-1] + 1]
        pick = chained[0] if chained else max(now, key=lambda i: (height[i], -i))
        ready.remove(pick)
        order.append(pick)
        if consumers[pick]:
            waiting += 1
        for load in producer_of[pick]:
            consumers[load] -= 1
            if consumers[load] == 0:
                waiting -= 1
        for j, lat in succs[pick]:
            earliest[j] = max(earliest[j], t + lat)
            npred[j] -= 1
            if npred[j] == 0:
                ready.append(j)
        t += 1
    return [segment[i] for i in order]
