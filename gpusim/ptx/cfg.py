"""Control-flow graph of a lowered kernel and the reconvergence point of each branch.

Basic blocks are split at branch targets and after branches and exits. The
reconvergence pc of a conditional branch is the first pc of the block that
immediately post-dominates the branch's block (the classic PDOM rule of SIMT
stacks). A branch whose paths only meet at kernel exit reconverges at
``n_inst`` (never, in practice: its lanes finish separately). A function's return row (``OP_FRET``,
gpusim.ptx.calls) ends its paths like an exit; a call falls through (control comes back after it).
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import layout as L


def basic_blocks(code: np.ndarray) -> tuple[list[int], list[list[int]]]:
    """(first pc of each block, successor block indices); block ``len(starts)`` is the virtual exit."""
    n = code.shape[0]
    leaders = {0} if n else set()
    for pc in range(n):
        op = code[pc, L.F_OP]
        if op == c.OP_BRA:
            leaders.add(int(code[pc, L.F_TARGET]))
            if pc + 1 < n:
                leaders.add(pc + 1)
        elif op in (c.OP_EXIT, c.OP_TRAP, c.OP_FRET) and pc + 1 < n:
            leaders.add(pc + 1)
    starts = sorted(x for x in leaders if x < n)
    block_of = {}
    for b, start in enumerate(starts):
        end = starts[b + 1] if b + 1 < len(starts) else n
        for pc in range(start, end):
            block_of[pc] = b
    exit_block = len(starts)
    succs: list[list[int]] = []
    for b in range(len(starts)):
        end = starts[b + 1] if b + 1 < len(starts) else n
        last = end - 1
        op = code[last, L.F_OP]
        out = []
        guarded = code[last, L.F_GUARD] >= 0
        if op == c.OP_BRA:
            target = int(code[last, L.F_TARGET])
            out.append(block_of.get(target, exit_block))
            if guarded:
                out.append(block_of.get(end, exit_block))
        elif op in (c.OP_EXIT, c.OP_TRAP, c.OP_FRET):
            out.append(exit_block)
            if guarded:
                out.append(block_of.get(end, exit_block))
        else:
            out.append(block_of.get(end, exit_block))
        succs.append(sorted(set(out)))
    return starts, succs


def immediate_post_dominators(n_blocks: int, succs: list[list[int]]) -> list[int]:
    """ipdom of each block (index ``n_blocks`` is the exit).

    Cooper, Harvey and Kennedy's iterative algorithm ("A Simple, Fast Dominance Algorithm") on the
    reverse CFG: near-linear in the number of blocks (the set-based dataflow it replaces was quadratic:
    a 2,000-branch kernel took seconds to load). A block from which the exit cannot be reached (an
    endless loop) gets the exit as its ipdom: its lanes never reconverge."""
    exit_block = n_blocks
    preds: list[list[int]] = [[] for _ in range(n_blocks + 1)]   # predecessors in the reverse CFG
    for b in range(n_blocks):
        for s in (succs[b] or [exit_block]):
            preds[s].append(b)
    # post-order of the reverse CFG from the exit (iterative DFS)
    order: list[int] = []
    seen = [False] * (n_blocks + 1)
    seen[exit_block] = True
    stack = [(exit_block, 0)]
    while stack:
        node, i = stack.pop()
        if i < len(preds[node]):
            stack.append((node, i + 1))
            nxt = preds[node][i]
            if not seen[nxt]:
                seen[nxt] = True
                stack.append((nxt, 0))
        else:
            order.append(node)
    rank = [-1] * (n_blocks + 1)
    for i, node in enumerate(order):
        rank[node] = i
    idom = [-1] * (n_blocks + 1)
    idom[exit_block] = exit_block
    reverse_post = order[::-1][1:]        # the exit first, skipped
    changed = True
    while changed:
        changed = False
        for b in reverse_post:
            new = -1
            for s in (succs[b] or [exit_block]):     # b's predecessors in the reverse CFG
                if idom[s] < 0:
                    continue
                if new < 0:
                    new = s
                    continue
                x, y = s, new
                while x != y:
                    while rank[x] < rank[y]:
                        x = idom[x]
                    while rank[y] < rank[x]:
                        y = idom[y]
                new = x
            if new != idom[b]:
                idom[b] = new
                changed = True
    return [idom[b] if idom[b] >= 0 else exit_block for b in range(n_blocks)]


def reconvergence_points(code: np.ndarray) -> np.ndarray:
    """For each pc: the reconvergence pc if it is a branch, else -1."""
    n = code.shape[0]
    out = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return out
    starts, succs = basic_blocks(code)
    ipdom = immediate_post_dominators(len(starts), succs)
    for b in range(len(starts)):
        end = starts[b + 1] if b + 1 < len(starts) else n
        last = end - 1
        if code[last, L.F_OP] in (c.OP_BRA, c.OP_EXIT):
            target_block = ipdom[b]
            out[last] = starts[target_block] if target_block < len(starts) else n
    return out
