"""The warp timeline of the interactive report: the trace's warp-state intervals, made small enough to draw.

One row per warp slot (SM -> sub-partition -> slot, as the Chrome export orders them), one segment per
stretch of one state at one instruction. The data goes into the page as compact JSON (rows as deltas,
each segment's start as the gap after the previous one's end) that ``report.js`` draws on a canvas,
zooms by brushing and explains on hover.

Aggregation, so that a 132-SM trace of millions of intervals opens in a second and stays a few MB:

1. consecutive intervals of one warp slot in the same state at the same pc (and back to back) merge
   into one segment (exact: nothing is lost);
2. at most ``MAX_ROWS`` warp slots are drawn: the slots of the first SMs, whole SMs at a time;
3. if the segments still number more than ``MAX_SEGMENTS``, each row is sampled at evenly spaced
   cycles: a segment is then the state at its column's middle cycle, and neighbouring columns in the
   same state and pc merge again. The columns per row start at ``MAX_SEGMENTS`` / rows and double while
   the merged segments still fit ``MAX_SEGMENTS`` (``sample_cycles`` is the columns' width in cycles).

``timeline_data`` says which of these happened (``aggregated``, ``note``), and the page repeats it.
The issue strip under the rows is exact for every SM: warp-instructions issued per time bin over the
schedulers' issue slots.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import isa as I
from gpusim.arch import layout as L
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.stalls import STATE_NAMES
from gpusim.observe.plot import STATE_COLORS
from gpusim.observe.source_view import _short

MAX_ROWS = 256
"""Warp slots drawn at most (whole SMs, the first ones)."""
MAX_SEGMENTS = 150_000
"""Segments drawn at most; above it rows are sampled (see the module docstring)."""
ISSUE_BINS = 400
"""Time bins of the issue strip."""


def _rows(trace, slots: np.ndarray) -> tuple[np.ndarray, str]:
    """The slots drawn, in SM -> sub-partition -> slot order, and a note when some are left out."""
    sms = trace.sm_of(slots)
    order = np.lexsort((slots % trace.slots_per_sm, trace.sub_partition_of(slots), sms))
    slots = slots[order]
    if len(slots) <= MAX_ROWS:
        return slots, ""
    sms = trace.sm_of(slots)
    per_sm = np.bincount(sms)
    kept_sms: list[int] = []
    rows = 0
    for sm in np.unique(sms).tolist():
        if kept_sms and rows + per_sm[sm] > MAX_ROWS:
            break
        kept_sms.append(sm)
        rows += int(per_sm[sm])
    kept = slots[np.isin(sms, kept_sms)]
    all_sms = len(np.unique(sms))
    note = (f"showing the {len(kept)} warp slots of SM {kept_sms[0]}-{kept_sms[-1]} "
            f"({len(kept_sms)} of {all_sms} SMs, {len(kept)} of {len(slots)} warp slots)")
    return kept, note


def _merge(row, state, start, end, pc):
    """Merge back-to-back runs of one row in one state at one pc (inputs sorted by row, start)."""
    if len(row) == 0:
        return row, state, start, end, pc
    new = np.ones(len(row), bool)
    new[1:] = (row[1:] != row[:-1]) | (state[1:] != state[:-1]) | (pc[1:] != pc[:-1]) | (start[1:] != end[:-1])
    first = np.flatnonzero(new)
    last = np.append(first[1:], len(row)) - 1
    return row[first], state[first], start[first], end[last], pc[first]


def _column_cycles(cycles: int, columns: int) -> int:
    """Cycles per column when ``cycles`` are cut into (at most) ``columns`` equal columns."""
    return max(1, -(-cycles // columns))


def _sample(row, state, start, end, pc, n_rows: int, cycles: int, columns: int):
    """Each row's state at the middle cycle of ``columns`` equal columns, then merged."""
    width = _column_cycles(cycles, columns)
    edges = np.arange(0, cycles + width, width, dtype=np.int64)
    left, right = edges[:-1], np.minimum(edges[1:], cycles)
    middle = (left + right) // 2
    span = np.int64(cycles + 1)
    keys = row.astype(np.int64) * span + start
    query_row = np.repeat(np.arange(n_rows, dtype=np.int64), len(middle))
    query = query_row * span + np.tile(middle, n_rows)
    index = np.searchsorted(keys, query, side="right") - 1
    valid = index >= 0
    safe = np.maximum(index, 0)
    valid &= (row[safe] == query_row) & (np.tile(middle, n_rows) < end[safe])
    s_left = np.tile(left, n_rows)[valid]
    s_right = np.tile(right, n_rows)[valid]
    return _merge(query_row[valid], state[safe[valid]], s_left, s_right, pc[safe[valid]])


def _finest_sampling(columns, n_rows: int, cycles: int):
    """(columns per row, segments): the finest sampling, doubling from MAX_SEGMENTS / rows columns, whose
    merged segments still number at most MAX_SEGMENTS."""
    per_row = max(8, MAX_SEGMENTS // max(n_rows, 1))
    row, state, start, end, pc = columns
    best = _sample(row, state, start, end, pc, n_rows, cycles, per_row)
    while per_row * 2 < cycles:
        finer = _sample(row, state, start, end, pc, n_rows, cycles, per_row * 2)
        if len(finer[0]) > MAX_SEGMENTS:
            break
        per_row, best = per_row * 2, finer
    return per_row, best


def _encode(row, state, start, end, pc) -> dict:
    """Delta-encoded columns: row step, gap after the previous segment of the row, duration, state, pc."""
    if len(row) == 0:
        return {"r": [], "g": [], "d": [], "k": [], "p": []}
    row_step = np.diff(row, prepend=0)
    previous_end = np.concatenate(([0], end[:-1]))
    previous_end[np.flatnonzero(row_step)] = 0
    return {"r": row_step.tolist(), "g": (start - previous_end).tolist(), "d": (end - start).tolist(),
            "k": state.tolist(), "p": pc.tolist()}


def _issue_strip(trace, cycles: int) -> dict:
    config = trace.run.config
    bins = max(1, min(ISSUE_BINS, cycles))
    edges = np.linspace(0, cycles, bins + 1)
    issued, _ = np.histogram(trace.raw_issues[:, T.IT_CYCLE], bins=edges)
    slots = config.sms * config.sub_partitions_per_sm * np.diff(edges)
    return {"edges": [round(float(e), 2) for e in edges],
            "pct": [round(float(x), 2) for x in 100.0 * issued / np.maximum(slots, 1e-9)]}


def timeline_data(run) -> dict:
    """The timeline of a traced run as plain data for the page (see the module docstring)."""
    trace = run.trace
    r = trace.raw_intervals
    cycles = max(int(run.cycles), 1)
    slots, row_note = _rows(trace, np.unique(r[:, T.TR_WARP]) if len(r) else np.zeros(0, np.int64))
    row_of = {int(s): i for i, s in enumerate(slots.tolist())}
    lookup = np.full(int(r[:, T.TR_WARP].max()) + 1 if len(r) else 1, -1, np.int64)
    for slot, index in row_of.items():
        lookup[slot] = index
    rows = lookup[r[:, T.TR_WARP]] if len(r) else np.zeros(0, np.int64)
    mine = r[rows >= 0]
    rows = rows[rows >= 0]
    order = np.lexsort((mine[:, T.TR_START], rows))
    columns = (rows[order], mine[order, T.TR_STATE], mine[order, T.TR_START], mine[order, T.TR_END],
               mine[order, T.TR_PC])
    raw = len(columns[0])
    segments = _merge(*columns)
    notes = [row_note] if row_note else []
    sampled = False
    width = 0
    if len(segments[0]) > MAX_SEGMENTS:
        per_row, segments = _finest_sampling(columns, len(slots), cycles)
        width = _column_cycles(cycles, per_row)
        sampled = True
        notes.append(f"each row sampled every {width} cycles (a segment is the state at the middle cycle of its "
                     f"{width}-cycle columns; the trace's exact intervals are in trace.to_chrome())")
    labels = [f"SM{int(trace.sm_of(s))} sp{int(trace.sub_partition_of(s))} slot {int(s % trace.slots_per_sm)}"
              for s in slots.tolist()]
    return {
        "cycles": cycles,
        "rows": labels,
        "states": list(STATE_NAMES),
        "colors": [STATE_COLORS.get(name, "#808080") for name in STATE_NAMES],
        "segments": _encode(*segments),
        "n_segments": int(len(segments[0])),
        "n_intervals": int(raw),
        "aggregated": bool(row_note or sampled),
        "note": "; ".join(notes),
        "truncated": bool(trace.truncated),
        "issue": _issue_strip(trace, cycles),
        "sample_cycles": width,
    }


def program_table(run) -> dict:
    """Per pc, what the hover shows: PTX line, PTX text, CUDA line, the executed form's name."""
    program = run.program
    sources = [f"{_short(s[0])}:{s[1]}" if s else "" for s in program.src_lines]
    return {"line": [int(x) for x in program.lines], "text": list(program.texts), "src": sources,
            "op": [I.FORMS[int(f)].name for f in program.code[:, L.F_ISA]]}
