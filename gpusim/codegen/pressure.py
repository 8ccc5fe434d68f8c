"""Register pressure for the scheduler: which registers are live where, what each takes, and the budget.

What ptxas does: its scheduler weighs register pressure against latency. Below a register target it
issues loads and address arithmetic as early as dependences allow; where that would need more
registers than the target it orders instructions so that values are consumed before new ones are made.
The target is the count at which the kernel still reaches the SM's full occupancy (``registers_per_sm``
over the most resident threads: 32 on sm_80..sm_90), or the launch bounds' cap when that is lower:
``ptxas -v`` on the conformance corpus gives at most 32 registers to every kernel without launch bounds
whose code fits it (tests/data/ptxas_regs.json: 52 of the 138 kernels report 29 to 32, none 33 to 39),
and in its SASS for tests/corpus_llm/layernorm.ptx (tests/data/regalloc_sass/layernorm.sass,
``layernorm_forward``, 26 registers) the loop unrolled x4 keeps four loads in flight while gpusim's
pressure-blind schedule of the same loop hoisted every load and 64-bit address of the block (64).

What is modelled: per-block liveness over the code generator's blocks (a bit set per block, iterated
to a fixed point); each register's width (a 64-bit value 2, a predicate 0, a 32-bit parameter 0: a
constant-bank operand, as ``gpusim.ptx.regs`` counts them); the budget in 32-bit registers is the
target less R1 and the ``RESERVED`` registers ptxas adds to its count. Simplified: the pressure the
scheduler tracks counts every register live at a segment's start until its last read in the segment.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import layout as L
from gpusim.codegen import deps
from gpusim.ptx.regs import RESERVED, widths_of


def register_target(kernel, config) -> int:
    """Registers per thread ptxas aims for: full occupancy's count, or the launch bounds' cap if lower."""
    from gpusim.codegen.regalloc import target_for

    return target_for(kernel.program.directives, config)


def register_budget(kernel, config) -> int:
    """32-bit registers the schedule may keep live at once (the target less R1 and RESERVED)."""
    return max(register_target(kernel, config) - RESERVED - 1, 4)     # R1 is the stack pointer


def relaxed_budget(kernel, config) -> int:
    """The budget when the target cannot be kept anywhere in the kernel: only the launch bounds' cap (or
    the per-thread limit), less R1 and RESERVED. ptxas then gives up the occupancy target and schedules
    for latency: validation/kernels/sgemm_ladder.ptx's warp-tiled SGEMM gets 166 registers from
    ``ptxas -v`` (its '// gpusim: regs=' line), and held to the target its loop would lose the overlap of
    loads and FFMAs that makes it fast."""
    from gpusim.codegen.regalloc import register_cap

    most = int(config.max_registers_per_thread)
    cap, _ = register_cap(kernel.program.directives, config)
    most = most if cap is None else min(most, cap)
    return max(most - RESERVED - 1, 4)


def register_widths(kernel) -> list[int]:
    """32-bit registers each register of ``kernel`` takes (0 for predicates and 32-bit parameters)."""
    program = kernel.program
    names = list(program.reg_names) + list(kernel.extra_regs)
    widths = widths_of(names, dict(zip(program.reg_names, program.reg_types, strict=False)))
    param: set[int] = set()
    other: set[int] = set()
    for block in kernel.blocks:
        for inst in block.insts:
            row = inst.row
            is_param = int(row[L.F_OP]) == c.OP_LD and int(row[L.F_SPACE]) == L.SP_PARAM and row[L.F_GUARD] < 0
            (param if is_param else other).update(deps.writes(row))
    for r in param - other:
        if r < len(widths) and widths[r] == 1:
            widths[r] = 0
    return widths


def _successors(kernel) -> list[list[int]]:
    index = {id(block): b for b, block in enumerate(kernel.blocks)}
    out = []
    for b, block in enumerate(kernel.blocks):
        succ = []
        last = block.insts[-1] if block.insts else None
        if last is not None and last.op == c.OP_BRA and last.target is not None and id(last.target) in index:
            succ.append(index[id(last.target)])
        unconditional = last is not None and last.op in (c.OP_EXIT, c.OP_RET, c.OP_TRAP) or (
            last is not None and last.op == c.OP_BRA and last.row[L.F_GUARD] < 0)
        if not unconditional and b + 1 < len(kernel.blocks):
            succ.append(b + 1)
        out.append(succ)
    return out


def _bits(regs) -> int:
    out = 0
    for r in regs:
        out |= 1 << r
    return out


def live_out(kernel) -> list[int]:
    """Per block, the bit set of registers live at its end."""
    succs = _successors(kernel)
    summary = []
    for block in kernel.blocks:
        uses = defs = 0
        for inst in reversed(block.insts):
            w, r = _bits(deps.writes(inst.row)), _bits(deps.reads(inst.row))
            guarded = inst.row[L.F_GUARD] >= 0
            if not guarded:
                uses &= ~w
                defs |= w
            uses |= r
        summary.append((uses, defs))
    live_in = [0] * len(kernel.blocks)
    out = [0] * len(kernel.blocks)
    changed = True
    while changed:
        changed = False
        for b in reversed(range(len(kernel.blocks))):
            live = 0
            for s in succs[b]:
                live |= live_in[s]
            out[b] = live
            uses, defs = summary[b]
            new = (live & ~defs) | uses
            if new != live_in[b]:
                live_in[b] = new
                changed = True
    return out


def live_before(insts: list, live_after: int) -> int:
    """The bit set live before ``insts`` given the set live after them."""
    live = live_after
    for inst in reversed(insts):
        if inst.row[L.F_GUARD] < 0:
            live &= ~_bits(deps.writes(inst.row))
        live |= _bits(deps.reads(inst.row))
    return live
