"""SASS listings of the shipped programs, read back: what ptxas made of a PTX kernel.

The listings (``programs/sass/sm_90/NAME.sass``, made at development time by
``scripts/regen_sass.sh``: ``ptxas -arch=sm_90 -O3 -lineinfo`` then ``nvdisasm -c -gp -hex``) give,
per SASS instruction, its offset, guard, mnemonic, the PTX line it came from, and its two 64-bit
encoding words. Nothing here needs NVIDIA's tools: the listings are committed.

Control bits (Volta and later; Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via
Microbenchmarking", 2018): the upper 23 bits of the 128-bit instruction, i.e. bits 41-63 of the
second word, hold from low to high the stall count (4 bits: cycles the scheduler waits before the
warp's next instruction), the yield bit, the write-barrier index (3 bits, 7 = none), the
read-barrier index (3 bits), the wait mask (6 bits: the scoreboard barriers to wait on before
issuing) and the operand-reuse flags (4 bits). A fixed-latency producer's consumer is separated from
it by stall counts only, so the stall counts between them are the latency ptxas assumes.

:func:`dynamic_count` estimates a run's SASS dynamic warp-instruction count from a listing and the
per-PTX-line execution counts of the same run (gpusim's, of the PTX as written): instructions that
are one SASS instruction per PTX instruction (global/shared loads and stores, atomics, shuffles,
FP32/FP64 add/mul/fma, barriers), when unguarded (an if-converted one runs whether or not its PTX
instruction would), anchor their blocks' execution counts (a least-squares fit: an
unrolled loop's four copies of a load and the remainder loop's one together execute as often as the
PTX load); the other blocks take their count from straight-line neighbours, else from the least
executed PTX line among their instructions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

_INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([^;]*?)\s*;\s*/\*\s*0x([0-9a-f]{16})\s*\*/")
_HI = re.compile(r"^\s*/\*\s*0x([0-9a-f]{16})\s*\*/\s*$")
_LINE = re.compile(r'//## File "[^"]*", line (\d+)')
_LABEL = re.compile(r"^(\.L_x_\d+):")
_FUNC = re.compile(r"^\s*\.section\s+\.text\.([\w$]+),")
_TARGET = re.compile(r"`\((\.L_x_\d+)\)")

ANCHOR_OPS = ("LDG", "STG", "LDS", "STS", "LD", "ST", "ATOMG", "ATOMS", "ATOM", "RED", "REDG", "SHFL",
              "FFMA", "FADD", "FMUL", "DFMA", "DADD", "DMUL", "BAR")
"""Mnemonics (before the first dot) that ptxas emits once per PTX instruction of the same kind."""

MEMORY_LOADS = ("LDG", "LDS", "LD")


@dataclass
class SassInstr:
    offset: int
    guard: str | None          # "P0", "!P1" ... or None
    text: str                  # the instruction without its guard
    ptx_line: int | None
    lo: int
    hi: int

    @property
    def opcode(self) -> str:
        return self.text.split()[0] if self.text else ""

    @property
    def base(self) -> str:
        """The mnemonic before its first modifier: LDG of LDG.E.128."""
        return self.opcode.split(".")[0]

    @property
    def stall(self) -> int:
        return (self.hi >> 41) & 0xF

    @property
    def yield_flag(self) -> int:
        return (self.hi >> 45) & 1

    @property
    def write_barrier(self) -> int:
        return (self.hi >> 46) & 0x7

    @property
    def read_barrier(self) -> int:
        return (self.hi >> 49) & 0x7

    @property
    def wait_mask(self) -> int:
        return (self.hi >> 52) & 0x3F

    @property
    def reuse(self) -> int:
        return (self.hi >> 58) & 0xF

    @property
    def target(self) -> str | None:
        match = _TARGET.search(self.text)
        return match.group(1) if match else None

    def is_branch(self) -> bool:
        return self.base in ("BRA", "BRX", "JMP", "JMX")

    def ends_block(self) -> bool:
        return self.is_branch() or self.base in ("EXIT", "RET", "BPT")


@dataclass
class SassBlock:
    label: str | None
    instrs: list = field(default_factory=list)
    succs: list = field(default_factory=list)    # indices of successor blocks

    @property
    def size(self) -> int:
        return len(self.instrs)


@dataclass
class SassFunction:
    name: str
    instrs: list
    labels: dict                  # label -> index of the instruction it precedes
    blocks: list

    def loops(self) -> list[tuple[int, int]]:
        """(head block, latch block) of each back edge (a branch to a block at or before its own)."""
        return [(s, b) for b, block in enumerate(self.blocks) for s in block.succs if s <= b]

    def loop_body(self, head: int, latch: int) -> list:
        """The instructions of blocks head..latch (ptxas lays a loop out contiguously)."""
        return [i for block in self.blocks[head:latch + 1] for i in block.instrs]


def parse_listing(text: str) -> dict[str, SassFunction]:
    """{kernel name: SassFunction} of an ``nvdisasm -c -gp -hex`` listing."""
    functions: dict[str, SassFunction] = {}
    name = None
    instrs: list[SassInstr] = []
    labels: dict[str, int] = {}
    ptx_line = None
    pending: SassInstr | None = None

    def finish():
        if name is not None:
            functions[name] = SassFunction(name, list(instrs), dict(labels), _blocks(instrs, labels))

    for line in text.splitlines():
        match = _FUNC.match(line)
        if match:
            finish()
            name, instrs, labels, ptx_line, pending = match.group(1), [], {}, None, None
            continue
        if name is None:
            continue
        if pending is not None:
            hi = _HI.match(line)
            if hi:
                pending.hi = int(hi.group(1), 16)
                instrs.append(pending)
                pending = None
                continue
        match = _LINE.search(line)
        if match:
            ptx_line = int(match.group(1))
            continue
        match = _LABEL.match(line.strip())
        if match:
            labels[match.group(1)] = len(instrs)
            continue
        match = _INSTR.match(line)
        if match:
            guard = match.group(2).strip()[1:] if match.group(2) else None
            pending = SassInstr(int(match.group(1), 16), guard, match.group(3).strip(), ptx_line,
                                int(match.group(4), 16), 0)
    finish()
    return functions


def _blocks(instrs: list, labels: dict) -> list[SassBlock]:
    n = len(instrs)
    # the padding after the last EXIT: a branch to itself and NOPs, never executed
    end = n
    while end > 0 and (instrs[end - 1].base == "NOP" or
                       (instrs[end - 1].base == "BRA" and labels.get(instrs[end - 1].target) == end - 1)):
        end -= 1
    leaders = {0}
    for i, ins in enumerate(instrs[:end]):
        if ins.ends_block() and i + 1 < end:
            leaders.add(i + 1)
        if ins.target in labels:
            leaders.add(labels[ins.target])
    starts = sorted(x for x in leaders if x < end)
    block_of = {}
    blocks = []
    for b, start in enumerate(starts):
        stop = starts[b + 1] if b + 1 < len(starts) else end
        label = next((lab for lab, at in labels.items() if at == start), None)
        blocks.append(SassBlock(label, instrs[start:stop]))
        for i in range(start, stop):
            block_of[i] = b
    for b, block in enumerate(blocks):
        last = block.instrs[-1]
        out = []
        if last.is_branch() and last.target in labels and labels[last.target] in block_of:
            out.append(block_of[labels[last.target]])
        unconditional_end = last.ends_block() and last.guard is None
        if not unconditional_end and b + 1 < len(blocks):
            out.append(b + 1)
        block.succs = sorted(set(out))
    return blocks


def load_listing(path: str | Path) -> dict[str, SassFunction]:
    """Parse the listing file at ``path`` (e.g. ``programs/sass/sm_90/gemv.sass``)."""
    return parse_listing(Path(path).read_text())


def block_counts(func: SassFunction, line_counts: dict[int, int], warps: int) -> np.ndarray:
    """Estimated executions (warp-level) of each SASS block; see the module docstring."""
    blocks = func.blocks
    nb = len(blocks)
    rows, rhs = [], []
    anchored = [False] * nb
    per_line: dict[int, list[int]] = {}
    for b, block in enumerate(blocks):
        for ins in block.instrs:
            if ins.base in ANCHOR_OPS and ins.guard is None and ins.ptx_line in line_counts:
                per_line.setdefault(ins.ptx_line, []).append(b)
                anchored[b] = True
    for line, owners in sorted(per_line.items()):
        row = np.zeros(nb)
        for b in owners:
            row[b] += 1.0
        rows.append(row)
        rhs.append(float(line_counts[line]))
    entry = np.zeros(nb)
    entry[0] = 1.0
    for _ in range(4):            # the entry block runs once per warp: weigh it as several equations
        rows.append(entry)
        rhs.append(float(warps))
    preds: list[list[int]] = [[] for _ in range(nb)]
    for b, block in enumerate(blocks):
        for s in block.succs:
            preds[s].append(b)
    # straight-line neighbours execute equally often
    for b in range(nb):
        only = blocks[preds[b][0]] if len(preds[b]) == 1 else None
        if only is not None and len(only.succs) == 1 and not (only.instrs[-1].ends_block() and only.instrs[-1].guard):
            row = np.zeros(nb)
            row[b], row[preds[b][0]] = 1.0, -1.0
            rows.append(row)
            rhs.append(0.0)
    fixed = {}
    for b in range(nb):
        if anchored[b] or b == 0:
            continue
        known = [line_counts[i.ptx_line] for i in blocks[b].instrs if i.ptx_line in line_counts]
        if known:
            fixed[b] = float(min(known))
    for b, value in fixed.items():   # weak: only decides blocks the rest leaves free
        row = np.zeros(nb)
        row[b] = 1e-3
        rows.append(row)
        rhs.append(1e-3 * value)
    if not rows:
        return np.zeros(nb)
    solution, *_ = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)
    return np.clip(solution, 0.0, None)


def dynamic_count(func: SassFunction, line_counts: dict[int, int], warps: int) -> float:
    """Estimated SASS dynamic warp-instruction count of a run (``line_counts``: PTX line -> warp count)."""
    counts = block_counts(func, line_counts, warps)
    return float(sum(counts[b] * block.size for b, block in enumerate(func.blocks)))


def fixed_latency_pairs(func: SassFunction, producer: str, consumer_guarded: bool = True) -> list[int]:
    """Cycles ptxas puts between a ``producer`` (e.g. "ISETP") and the next instruction guarded by (or, for
    a branch, testing) the predicate it writes, within one block: the sum of the stall counts from the
    producer up to the consumer. Each pair's figure is what ptxas assumes the latency is at least."""
    out = []
    for block in func.blocks:
        instrs = block.instrs
        for i, ins in enumerate(instrs):
            if ins.base != producer:
                continue
            operands = ins.text.split(None, 1)[1] if " " in ins.text else ""
            pred = operands.split(",")[0].strip()
            if not re.fullmatch(r"P[0-6]", pred):
                continue
            total = 0
            for j in range(i, len(instrs)):
                if j > i and instrs[j].guard in (pred, "!" + pred):
                    out.append(total)
                    break
                total += instrs[j].stall
                if j > i and pred in re.split(r"[ ,]+", instrs[j].text.split(None, 1)[-1])[:1]:
                    break            # the predicate is written again before any use
    return out


_REG = re.compile(r"\bR(\d+)\b")


def _dest_register(ins: SassInstr) -> int | None:
    operands = ins.text.split(None, 1)[1] if " " in ins.text else ""
    first = operands.split(",")[0].strip()
    match = re.fullmatch(r"R(\d+)", first)
    return int(match.group(1)) if match else None


def dependent_stalls(func: SassFunction, producers: tuple[str, ...]) -> list[int]:
    """For each fixed-latency producer (mnemonic in ``producers``, no write barrier: ptxas waits for it with
    stall counts alone) whose destination register is read later in its block: the stall counts from it up
    to that first reader. The smallest is the result latency ptxas assumes for the class."""
    out = []
    for block in func.blocks:
        instrs = block.instrs
        for i, ins in enumerate(instrs):
            if ins.base not in producers or ins.write_barrier != 7 or ".WIDE" in ins.opcode or \
                    ins.opcode.endswith(".64"):
                continue
            dest = _dest_register(ins)
            if dest is None:
                continue
            total = 0
            for j in range(i, len(instrs)):
                if j > i:
                    operands = instrs[j].text.split(None, 1)[1] if " " in instrs[j].text else ""
                    names = [int(r) for r in _REG.findall(operands)]
                    written = _dest_register(instrs[j])
                    reads = names[1:] if written is not None else names
                    if dest in names and instrs[j].base in ("STG", "STS", "ST", "STL", "RED", "ATOM", "ATOMG"):
                        break        # a store reads its data some cycles after it issues: no latency figure
                    if dest in reads:
                        out.append(total)
                        break
                    if written == dest:
                        break
                total += instrs[j].stall
    return out
