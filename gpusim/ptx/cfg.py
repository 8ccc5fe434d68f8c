"""Control-flow graph of a lowered kernel and the reconvergence point of each branch.

Basic blocks are split at branch targets and after branches and exits. The
reconvergence pc of a conditional branch is the first pc of the block that
immediately post-dominates the branch's block (the classic PDOM rule of SIMT
stacks). A branch whose paths only meet at kernel exit reconverges at
``n_inst`` (never, in practice: its lanes finish separately).
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
        elif op in (c.OP_EXIT, c.OP_TRAP) and pc + 1 < n:
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
        elif op in (c.OP_EXIT, c.OP_TRAP):
            out.append(exit_block)
            if guarded:
                out.append(block_of.get(end, exit_block))
        else:
            out.append(block_of.get(end, exit_block))
        succs.append(sorted(set(out)))
    return starts, succs


def immediate_post_dominators(n_blocks: int, succs: list[list[int]]) -> list[int]:
    """ipdom of each block (index ``n_blocks`` is the exit), by the iterative dataflow algorithm."""
    exit_block = n_blocks
    everything = set(range(n_blocks + 1))
    pdom = [set(everything) for _ in range(n_blocks)] + [{exit_block}]
    changed = True
    while changed:
        changed = False
        for b in reversed(range(n_blocks)):
            succ_sets = [pdom[s] for s in succs[b]] or [{exit_block}]
            new = set.intersection(*succ_sets) | {b}
            if new != pdom[b]:
                pdom[b] = new
                changed = True
    ipdom = []
    for b in range(n_blocks):
        strict = pdom[b] - {b}
        # the immediate post-dominator is the strict post-dominator that all others post-dominate
        best = exit_block
        for candidate in strict:
            if all(other in pdom[candidate] for other in strict):
                best = candidate
                break
        ipdom.append(best)
    return ipdom


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
