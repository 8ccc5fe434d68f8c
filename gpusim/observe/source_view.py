"""Per-PTX-line attribution of a run: Nsight Compute's source view.

For every instruction of the kernel (one row per pc) the view gives the PTX line and, when the PTX
carries ``.loc``, the CUDA source line and, when that file is found, its text (``SourceFiles``: the
``.file`` path if absolute, relative to the .ptx's folder, its basename next to the .ptx, or -- for a
program whose only ``.cu`` is not found -- the .cu with the .ptx's stem); the warp-instructions and
thread-instructions it executed;
the warp-cycles of every stall reason charged to it (a warp's stall is charged to the instruction it
waits to issue, as Nsight's PC sampling does); and for memory instructions the requests, sectors per
request against the ideal for the lanes' bytes, and shared-memory wavefronts against the
conflict-free count. ``by_ptx_line()`` and ``by_source_line()`` add the rows of one line together
(a line can hold several instructions; a CUDA line usually lowers to many).

Divergence: a conditional branch *splits* a warp when the instructions right after it (the
fall-through and the target, unless that is the reconvergence point) run with fewer active lanes per
warp-instruction than the branch itself; ``lanes_lost_at_branch`` is that drop. This is a reading of
the per-pc counters, not a record of each branch's outcome: a successor also reached from elsewhere
(a loop head) mixes both paths' lane counts.

Simplifications: stall warp-cycles are exact counts of the timing model, not samples; functional
runs have no stall or memory columns (they are zero).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import isa as I
from gpusim.arch import layout as L
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.stalls import STATE_NAMES

WARP_LANES = 32

_NUMERIC_COLUMNS = (
    "warp_inst",
    "thread_inst",
    "pred_on_thread_inst",
    "stall_cycles",
    "requests",
    "sectors",
    "ideal_sectors",
    "wavefronts",
    "ideal_wavefronts",
)


@dataclass
class SourceRow:
    """One instruction (pc) of the kernel with everything the run attributed to it."""

    pc: int
    ptx_line: int
    source: str  # "file.cu:17" from .loc, "" without
    text: str  # the PTX instruction
    opcode: str
    pipe: str
    space: str  # "global", "shared", "local", ... for memory instructions, else ""
    is_branch: bool
    is_conditional_branch: bool
    warp_inst: int
    thread_inst: int
    pred_on_thread_inst: int
    stalls: dict = field(default_factory=dict)  # {state name: warp-cycles}, non-zero only
    requests: int = 0
    sectors: int = 0
    ideal_sectors: int = 0
    wavefronts: int = 0
    ideal_wavefronts: int = 0
    lanes_lost_at_branch: float = 0.0
    source_text: str = ""  # the CUDA line's text (stripped) when the file was found, else ""

    @property
    def stall_cycles(self) -> int:
        """Warp-cycles charged to this instruction, excluding the cycles it was issued (``selected``)."""
        return int(sum(v for k, v in self.stalls.items() if k != "selected"))

    @property
    def active_lanes(self) -> float:
        """Active lanes per executed warp-instruction (32 = no divergence, no partial warp)."""
        return self.thread_inst / self.warp_inst if self.warp_inst else 0.0

    @property
    def sectors_per_request(self) -> float:
        return self.sectors / self.requests if self.requests else 0.0

    @property
    def ideal_sectors_per_request(self) -> float:
        return self.ideal_sectors / self.requests if self.requests else 0.0

    @property
    def bank_conflicts(self) -> int:
        """Shared-memory wavefronts beyond the conflict-free count."""
        return self.wavefronts - self.ideal_wavefronts

    @property
    def top_stall(self) -> str:
        others = {k: v for k, v in self.stalls.items() if k != "selected" and v}
        return max(others, key=lambda state: others[state]) if others else ""

    def as_dict(self) -> dict:
        row = {
            name: getattr(self, name)
            for name in (
                "pc",
                "ptx_line",
                "source",
                "source_text",
                "text",
                "opcode",
                "pipe",
                "space",
                "warp_inst",
                "thread_inst",
                "pred_on_thread_inst",
                "active_lanes",
                "stall_cycles",
                "top_stall",
                "requests",
                "sectors",
                "ideal_sectors",
                "sectors_per_request",
                "ideal_sectors_per_request",
                "wavefronts",
                "ideal_wavefronts",
                "bank_conflicts",
                "lanes_lost_at_branch",
            )
        }
        for state in STATE_NAMES:
            row[f"stall_{state}"] = int(self.stalls.get(state, 0))
        return row


def _space_name(form: I.Form, space: int) -> str:
    if I.PIPE_NAMES[form.pipe] not in ("lsu", "mio") and not form.name.startswith(
        ("ld", "st", "atom", "red")
    ):
        return ""
    return L.SPACE_NAMES.get(int(space), "")


def where(row) -> str:
    """'line 48 (strided_copy.cu:7)' for a row (or an aggregated line)."""
    return f"line {row.ptx_line}" + (f" ({row.source})" if row.source else "")


class SourceView:
    """The per-instruction attribution table of one run (``rows``: one SourceRow per pc)."""

    def __init__(self, run):
        self.run = run
        self.rows = _build_rows(run)

    # ------------------------------------------------------------------ aggregates
    def totals(self) -> dict:
        """Column sums over every row (they equal the run's totals)."""
        return {name: int(sum(getattr(r, name) for r in self.rows)) for name in _NUMERIC_COLUMNS}

    def by_ptx_line(self) -> list[SourceRow]:
        """Rows added together per PTX line, in line order."""
        return _merge(self.rows, key=lambda r: r.ptx_line)

    def by_source_line(self) -> list[SourceRow]:
        """Rows added together per CUDA source line (``.loc``); rows without one are left out."""
        return _merge([r for r in self.rows if r.source], key=lambda r: r.source)

    def hottest(self, n: int = 5) -> list[SourceRow]:
        """The n PTX lines with the most warp-cycles (issued plus stalled) charged to them."""
        lines = self.by_ptx_line()
        return sorted(lines, key=lambda r: -(sum(r.stalls.values()) or r.warp_inst))[:n]

    def divergent_branches(self) -> list[SourceRow]:
        """Conditional branches whose successors run with fewer lanes, most lanes lost first."""
        rows = [r for r in self.rows if r.lanes_lost_at_branch > 0.5]
        return sorted(rows, key=lambda r: -(r.lanes_lost_at_branch * r.warp_inst))

    # ------------------------------------------------------------------ presentation
    def to_records(self) -> list[dict]:
        return [r.as_dict() for r in self.rows]

    def to_pandas(self):
        """The table as a pandas DataFrame (needs the ``table`` extra)."""
        pandas = require_pandas()
        return pandas.DataFrame.from_records(self.to_records())

    def table(self, rows: list[SourceRow] | None = None) -> str:
        """A plain-text table of the given rows (all executed ones by default)."""
        rows = [r for r in self.rows if r.warp_inst] if rows is None else rows
        header = [
            "line",
            "source",
            "warp inst",
            "lanes",
            "stall cyc",
            "top stall",
            "sect/req",
            "ideal",
            "conflicts",
            "instruction",
        ]
        body = []
        for r in rows:
            body.append(
                [
                    str(r.ptx_line),
                    r.source,
                    str(r.warp_inst),
                    f"{r.active_lanes:.1f}",
                    str(r.stall_cycles),
                    r.top_stall,
                    f"{r.sectors_per_request:.1f}" if r.requests else "",
                    f"{r.ideal_sectors_per_request:.1f}" if r.requests else "",
                    str(r.bank_conflicts) if r.wavefronts else "",
                    r.text[:48],
                ]
            )
        widths = [max(len(x[i]) for x in [header] + body) for i in range(len(header))]
        lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
        for x in body:
            lines.append("  ".join(c.ljust(w) for c, w in zip(x, widths, strict=True)).rstrip())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def _repr_html_(self) -> str:
        from gpusim.observe.source_html import scoped, source_table_html

        return scoped(source_table_html(self))


def require_pandas():
    """Import pandas or say which extra installs it."""
    try:
        import pandas
    except ImportError:
        from gpusim.errors import GpusimError

        raise GpusimError(
            "pandas is not installed: pip install 'gpusim[table]' (or pip install pandas)"
        ) from None
    return pandas


class SourceFiles:
    """The source files a program's ``.loc`` lines name, found on disk and read once.

    A ``.file`` path is looked for as written when it is absolute, relative to the .ptx's folder, and by
    its basename next to the .ptx; when the program names exactly one ``.cu``
    and it is found nowhere, the .cu with the .ptx's stem stands in for it. Files not found give "".
    """

    def __init__(self, program):
        ptx = Path(program.file) if program.file and not str(program.file).startswith("<") else None
        names = sorted({src[0] for src in program.src_lines if src})
        cuda = [name for name in names if str(name).endswith(".cu")]
        self.paths: dict[str, Path | None] = {
            name: _find_source(str(name), ptx, same_stem=len(cuda) == 1 and name in cuda) for name in names
        }
        self._lines: dict[str, list[str]] = {}

    def line(self, name: str, number: int) -> str:
        """The text of line ``number`` (1-based) of the file ``.file`` calls ``name``, stripped; "" if none."""
        path = self.paths.get(name)
        if path is None or number < 1:
            return ""
        if name not in self._lines:
            try:
                self._lines[name] = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self._lines[name] = []
        lines = self._lines[name]
        return lines[number - 1].strip() if number <= len(lines) else ""


def _find_source(name: str, ptx: Path | None, same_stem: bool) -> Path | None:
    given = Path(name.replace("\\", "/"))
    candidates = [given] if given.is_absolute() else []
    if ptx is not None:
        candidates += [ptx.parent / given, ptx.parent / given.name]
        if same_stem:
            candidates.append(ptx.with_suffix(".cu"))
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return None


def _build_rows(run) -> list[SourceRow]:
    program = run.program
    files = SourceFiles(program)
    counts = run.pc_counts
    n = program.n_inst
    pc_stalls = run.pc_stalls if run.pc_stalls is not None else np.zeros((n, len(STATE_NAMES)), np.int64)
    pc_memory = run.pc_memory if run.pc_memory is not None else np.zeros((n, T.N_PCMEM), np.int64)
    rows = []
    for pc in range(n):
        form = I.FORMS[int(program.code[pc, L.F_ISA])]
        pipe = I.PIPE_NAMES[I.form_pipe(form, run.config)]
        src = program.src_lines[pc]
        is_branch = form.op == c.OP_BRA          # "bra", or "bra.ptxas" as the code-generation stage times it
        rows.append(
            SourceRow(
                pc=pc,
                ptx_line=int(program.lines[pc]),
                source=f"{_short(src[0])}:{src[1]}" if src else "",
                source_text=files.line(src[0], int(src[1])) if src else "",
                text=program.texts[pc],
                opcode=form.name,
                pipe=pipe,
                space=_space_name(form, program.code[pc, L.F_SPACE]),
                is_branch=is_branch,
                is_conditional_branch=is_branch and int(program.code[pc, L.F_GUARD]) >= 0,
                warp_inst=int(counts[pc, 0]),
                thread_inst=int(counts[pc, 1]),
                pred_on_thread_inst=int(counts[pc, 2]),
                stalls={
                    STATE_NAMES[s]: int(pc_stalls[pc, s]) for s in range(len(STATE_NAMES)) if pc_stalls[pc, s]
                },
                requests=int(pc_memory[pc, T.PM_REQUESTS]),
                sectors=int(pc_memory[pc, T.PM_SECTORS]),
                ideal_sectors=int(pc_memory[pc, T.PM_IDEAL_SECTORS]),
                wavefronts=int(pc_memory[pc, T.PM_WAVEFRONTS]),
                ideal_wavefronts=int(pc_memory[pc, T.PM_IDEAL_WAVEFRONTS]),
            )
        )
    for row in rows:
        if row.is_conditional_branch and row.warp_inst:
            row.lanes_lost_at_branch = _lanes_lost(rows, program, row.pc)
    return rows


def _lanes_lost(rows: list[SourceRow], program, pc: int) -> float:
    """Active lanes at the branch minus the fewest at a successor that is not the reconvergence point."""
    reconverge = int(program.code[pc, L.F_RECONV])
    successors = {pc + 1, int(program.code[pc, L.F_TARGET])} - {reconverge}
    lanes = [rows[s].active_lanes for s in successors if 0 <= s < len(rows) and rows[s].warp_inst]
    return max(0.0, rows[pc].active_lanes - min(lanes)) if lanes else 0.0


def _short(path: str) -> str:
    return str(path).replace("\\", "/").rsplit("/", 1)[-1]


def _merge(rows: list[SourceRow], key) -> list[SourceRow]:
    groups: dict = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    merged = []
    for members in groups.values():
        first = members[0]
        stalls: dict = {}
        for r in members:
            for k, v in r.stalls.items():
                stalls[k] = stalls.get(k, 0) + v
        merged.append(
            SourceRow(
                pc=first.pc,
                ptx_line=first.ptx_line,
                source=first.source,
                source_text=first.source_text,
                text="; ".join(r.text for r in members)
                if len(members) <= 3
                else f"{first.text} (+{len(members) - 1} more)",
                opcode=first.opcode if len({r.opcode for r in members}) == 1 else "mixed",
                pipe=first.pipe if len({r.pipe for r in members}) == 1 else "mixed",
                space=next((r.space for r in members if r.space), ""),
                is_branch=any(r.is_branch for r in members),
                is_conditional_branch=any(r.is_conditional_branch for r in members),
                warp_inst=sum(r.warp_inst for r in members),
                thread_inst=sum(r.thread_inst for r in members),
                pred_on_thread_inst=sum(r.pred_on_thread_inst for r in members),
                stalls=stalls,
                requests=sum(r.requests for r in members),
                sectors=sum(r.sectors for r in members),
                ideal_sectors=sum(r.ideal_sectors for r in members),
                wavefronts=sum(r.wavefronts for r in members),
                ideal_wavefronts=sum(r.ideal_wavefronts for r in members),
                lanes_lost_at_branch=max(r.lanes_lost_at_branch for r in members),
            )
        )
    return sorted(merged, key=lambda r: (r.ptx_line, r.pc))


def source_view(run) -> SourceView:
    """The source view of a run (``Run.source_view()`` calls this)."""
    return SourceView(run)
