"""Kernel traces: per-warp state intervals, issued instructions and memory requests of a timed run.

``gpu.launch(..., trace=True)`` records them (``trace=N`` sets the rows per table; the engine
allocates that capacity up front, so it is also the memory budget: 2,000,000 rows per table, about
350 MB, by default). A run that needs more rows is cut there: ``Trace.truncated`` is True, a
``TraceTruncatedWarning`` says so when the trace is made, and the report repeats it; the run's
counters, metrics and source view are always complete.

This module presents the raw tables (columns in gpusim.engine.sm.timing_state, TR_*/IT_*/MT_*):
``intervals()``, ``instructions()`` and ``memory()`` as pandas DataFrames (the ``table`` extra),
``active_warps()`` and ``bandwidth()`` binned over time, and ``to_chrome(path)``: the Chrome trace
event format that Perfetto UI (ui.perfetto.dev) and chrome://tracing open.

Chrome layout: one process per SM (``SM 0``, ...), one thread per warp slot, named
``sp1 slot 05 blk 3 w1`` and sorted by sub-partition, so the tracks read SM -> sub-partition ->
warp slot; every warp-state interval is a complete ("X") slice named by its state (``selected`` is
one issued instruction); counter tracks give active warps per SM and, in a ``memory`` process,
DRAM and L2 bandwidth in GB/s. Timestamps are microseconds at the config's clock (a cycle is
1/clock_MHz us); every event also carries its cycle in ``args``.

Simplifications: a memory request's bytes are spread over the cycles its level needs to move them
at peak rate, ending at its completion, and counted at the deepest level it reached (a request whose
sectors hit at different levels is counted once, at the deepest).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from gpusim.arch import layout as L
from gpusim.engine.semantics import state as S
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.stalls import STATE_NAMES

KIND_NAMES = {S.MK_LOAD: "load", S.MK_STORE: "store", S.MK_ATOMIC: "atomic", S.MK_TEXTURE: "texture",
              S.MK_ASYNC_COMMIT: "async_commit", S.MK_ASYNC_WAIT: "async_wait", S.MK_WGMMA: "wgmma",
              S.MK_BULK: "bulk", S.MK_BULK_COMMIT: "bulk_commit", S.MK_BULK_WAIT: "bulk_wait"}
"""The memory table's ``kind`` column: every request kind the engine records (engine.semantics.state.MK_*)."""
SPACE_NAMES = L.SPACE_NAMES
"""The memory table's ``space`` column: every space code (arch.layout.SP_*), distributed shared memory too."""
DEFAULT_BINS = 200
"""Time bins of the counter tracks (bandwidth, active warps) when no bin width is given."""


class TraceTruncatedWarning(UserWarning):
    """The trace hit its row capacity (the memory budget) and was cut; ``trace=N`` raises it."""


class Trace:
    """The recorded events of one timed launch (raw numpy tables, columns in gpusim.engine.sm.timing_state)."""

    def __init__(
        self,
        run,
        intervals: np.ndarray,
        issues: np.ndarray,
        memory: np.ndarray,
        truncated: bool,
        slots_per_sm: int,
        capacity: int = 0,
    ):
        self.run = run
        self.raw_intervals = intervals
        self.raw_issues = issues
        self.raw_memory = memory
        self.truncated = truncated
        self.slots_per_sm = slots_per_sm
        self.capacity = capacity

    @classmethod
    def from_engine(cls, run, ts, *, slots: int, bslots: int, warp_block, warp_index) -> Trace:
        truncated = bool(ts.trace_n[1] or ts.issue_trace_n[1] or ts.mem_trace_n[1])
        capacity = int(ts.trace.shape[0])
        if truncated:
            warnings.warn(
                f"kernel '{run.program.name}': the trace hit its capacity of {capacity} rows per table "
                f"and was cut; launch with trace=N (N > {capacity}) for the whole run (about 176 "
                "bytes per row). Metrics and the report are complete.",
                TraceTruncatedWarning,
                stacklevel=4,
            )
        return cls(
            run,
            ts.trace[: ts.trace_n[0]].copy(),
            ts.issue_trace[: ts.issue_trace_n[0]].copy(),
            ts.mem_trace[: ts.mem_trace_n[0]].copy(),
            truncated,
            slots,
            capacity,
        )

    # ------------------------------------------------------------------ warp-slot geometry
    @property
    def warps_per_block(self) -> int:
        block = self.run.block
        return -(-(block[0] * block[1] * block[2]) // self.run.config.warp_size)

    def sm_of(self, slot):
        return np.asarray(slot) // self.slots_per_sm

    def sub_partition_of(self, slot):
        return (np.asarray(slot) % self.slots_per_sm) % self.run.config.sub_partitions_per_sm

    def warp_in_block_of(self, slot):
        return (np.asarray(slot) % self.slots_per_sm) % self.warps_per_block

    def warp_issue_counts(self) -> dict[int, int]:
        """Issued warp-instructions per warp slot."""
        slots, counts = np.unique(self.raw_issues[:, T.IT_WARP], return_counts=True)
        return {int(s): int(n) for s, n in zip(slots, counts, strict=True)}

    # ------------------------------------------------------------------ tables
    def _ptx_lines(self, pcs: np.ndarray) -> np.ndarray:
        lines = np.asarray(self.run.program.lines, dtype=np.int64)
        return lines[pcs] if len(lines) else np.zeros(len(pcs), np.int64)

    def intervals(self):
        """Each warp-state interval: sm, sub-partition, slot, block,, warp, state, start, end, pc, line."""
        r = self.raw_intervals
        slot = r[:, T.TR_WARP]
        return _frame(
            {
                "sm": self.sm_of(slot),
                "sub_partition": self.sub_partition_of(slot),
                "warp_slot": slot,
                "block": r[:, T.TR_BLOCK],
                "warp": self.warp_in_block_of(slot),
                "state": _categorical(r[:, T.TR_STATE], STATE_NAMES),
                "start": r[:, T.TR_START],
                "end": r[:, T.TR_END],
                "pc": r[:, T.TR_PC],
                "ptx_line": self._ptx_lines(r[:, T.TR_PC]),
            }
        )

    def instructions(self):
        """Per issued warp-instruction: cycle, sm, warp, block, pc, PTX line, opcode, lanes, stall before."""
        r = self.raw_issues
        slot = r[:, T.IT_WARP]
        pcs = r[:, T.IT_PC]
        opcodes = _opcodes(self.run.program)
        return _frame(
            {
                "cycle": r[:, T.IT_CYCLE],
                "sm": self.sm_of(slot),
                "sub_partition": self.sub_partition_of(slot),
                "warp_slot": slot,
                "block": r[:, T.IT_BLOCK],
                "warp": self.warp_in_block_of(slot),
                "pc": pcs,
                "ptx_line": self._ptx_lines(pcs),
                "opcode": _categorical(pcs, opcodes),
                "active_lanes": r[:, T.IT_ACTIVE],
                "pred_on_lanes": r[:, T.IT_PRED_ON],
                "stall_before": _categorical(r[:, T.IT_STALL_BEFORE], STATE_NAMES),
            }
        )

    def memory(self):
        """Per memory request: issue/completion cycle, latency, level reached, sectors, bytes, kind."""
        r = self.raw_memory
        slot = r[:, T.MT_WARP]
        levels = tuple(T.LEVEL_NAMES.get(i, str(i)) for i in range(4))
        shared = r[:, T.MT_LEVEL] == T.LEVEL_SHARED
        unit = np.where(
            shared,
            self.run.config.shared_banks * self.run.config.shared_bank_bytes,
            self.run.config.sector_bytes,
        )
        return _frame(
            {
                "issue_cycle": r[:, T.MT_ISSUE],
                "done_cycle": r[:, T.MT_DONE],
                "latency": r[:, T.MT_DONE] - r[:, T.MT_ISSUE],
                "sm": self.sm_of(slot),
                "warp_slot": slot,
                "block": r[:, T.MT_BLOCK],
                "warp": self.warp_in_block_of(slot),
                "pc": r[:, T.MT_PC],
                "ptx_line": self._ptx_lines(r[:, T.MT_PC]),
                "level": _categorical(r[:, T.MT_LEVEL], levels),
                "sectors": r[:, T.MT_SECTORS],
                "bytes": r[:, T.MT_SECTORS] * unit,
                "kind": _named(r[:, T.MT_KIND], KIND_NAMES),
                "space": _named(r[:, T.MT_SPACE], SPACE_NAMES),
            }
        )

    # ------------------------------------------------------------------ binned series
    def bin_edges(self, bin_cycles: int | None = None) -> np.ndarray:
        """Bin edges in cycles covering the run (DEFAULT_BINS bins unless a width is given)."""
        end = max(int(self.run.cycles), 1)
        width = bin_cycles or max(1, -(-end // DEFAULT_BINS))
        return np.arange(0, end + width, width, dtype=np.int64)

    def active_warps(self, bin_cycles: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(bin edges, [sms, bins] average resident warps per SM in each bin)."""
        edges = self.bin_edges(bin_cycles)
        r = self.raw_intervals
        sms = self.run.config.sms
        cycles = _spread(
            r[:, T.TR_START], r[:, T.TR_END], np.ones(len(r)), self.sm_of(r[:, T.TR_WARP]), sms, edges
        )
        return edges, cycles / np.diff(edges)

    def bandwidth(self, bin_cycles: int | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(bin edges, {"DRAM": GB/s, "L2": GB/s} per bin).

        A request's bytes are spread over the cycles the level needs to move them at its peak rate,
        ending at the request's completion (not before its issue; a store, complete when accepted,
        from its issue on). L2 counts every request that reached
        L2 or DRAM (a DRAM request passes through L2)."""
        edges = self.bin_edges(bin_cycles)
        r = self.raw_memory
        config = self.run.config
        nbytes = (r[:, T.MT_SECTORS] * config.sector_bytes).astype(np.float64)
        seconds_per_bin = np.diff(edges) / config.clock_hz
        out = {}
        for name, mask, bytes_per_cycle in (
            ("DRAM", r[:, T.MT_LEVEL] == T.LEVEL_DRAM, config.dram_bytes_per_cycle),
            (
                "L2",
                (r[:, T.MT_LEVEL] == T.LEVEL_L2) | (r[:, T.MT_LEVEL] == T.LEVEL_DRAM),
                config.l2_bytes_per_cycle,
            ),
        ):
            service = nbytes[mask] / bytes_per_cycle
            done = np.maximum(r[mask, T.MT_DONE], r[mask, T.MT_ISSUE] + service)
            start = np.maximum(r[mask, T.MT_ISSUE], done - service)
            moved = _spread(
                start,
                done,
                nbytes[mask] / np.maximum(done - start, 1.0),
                np.zeros(int(mask.sum()), np.int64),
                1,
                edges,
            )[0]
            out[name] = moved / seconds_per_bin / 1e9
        return edges, out

    # ------------------------------------------------------------------ Chrome / Perfetto
    def chrome_events(self, bin_cycles: int | None = None) -> list[dict]:
        """The trace as a list of Chrome trace events (see the module docstring for the layout)."""
        config = self.run.config
        us_per_cycle = 1.0 / config.core_clock_mhz
        events: list[dict] = []
        sms = config.sms
        memory_pid = sms
        for sm in range(sms):
            events.append(
                {
                    "ph": "M",
                    "name": "process_name",
                    "pid": sm,
                    "tid": 0,
                    "ts": 0,
                    "args": {"name": f"SM {sm}"},
                }
            )
            events.append(
                {
                    "ph": "M",
                    "name": "process_sort_index",
                    "pid": sm,
                    "tid": 0,
                    "ts": 0,
                    "args": {"sort_index": sm},
                }
            )
        events.append(
            {
                "ph": "M",
                "name": "process_name",
                "pid": memory_pid,
                "tid": 0,
                "ts": 0,
                "args": {"name": "memory"},
            }
        )
        events.append(
            {
                "ph": "M",
                "name": "process_sort_index",
                "pid": memory_pid,
                "tid": 0,
                "ts": 0,
                "args": {"sort_index": sms},
            }
        )
        r = self.raw_intervals
        slots = np.unique(r[:, T.TR_WARP]) if len(r) else np.zeros(0, np.int64)
        for slot in slots.tolist():
            sm, sp = int(self.sm_of(slot)), int(self.sub_partition_of(slot))
            local = slot % self.slots_per_sm
            events.append(
                {
                    "ph": "M",
                    "name": "thread_name",
                    "pid": sm,
                    "tid": slot,
                    "ts": 0,
                    "args": {"name": f"sp{sp} slot {local:02d} w{int(self.warp_in_block_of(slot))}"},
                }
            )
            events.append(
                {
                    "ph": "M",
                    "name": "thread_sort_index",
                    "pid": sm,
                    "tid": slot,
                    "ts": 0,
                    "args": {"sort_index": sp * self.slots_per_sm + local},
                }
            )
        order = np.lexsort((r[:, T.TR_START], r[:, T.TR_WARP])) if len(r) else np.zeros(0, np.int64)
        lines = self.run.program.lines
        for row in r[order].tolist():
            slot, state, start, end, pc, block = row[:6]
            events.append(
                {
                    "ph": "X",
                    "name": STATE_NAMES[state],
                    "cat": "warp",
                    "pid": slot // self.slots_per_sm,
                    "tid": slot,
                    "ts": start * us_per_cycle,
                    "dur": (end - start) * us_per_cycle,
                    "args": {
                        "cycle": start,
                        "cycles": end - start,
                        "pc": pc,
                        "ptx_line": int(lines[pc]) if pc < len(lines) else -1,
                        "block": block,
                    },
                }
            )
        edges, warps = self.active_warps(bin_cycles)
        for sm in range(sms):
            for i in range(len(edges) - 1):
                events.append(
                    {
                        "ph": "C",
                        "name": "active warps",
                        "pid": sm,
                        "tid": 0,
                        "ts": int(edges[i]) * us_per_cycle,
                        "args": {"warps": round(float(warps[sm, i]), 3)},
                    }
                )
        edges, bandwidth = self.bandwidth(bin_cycles)
        for name, series in bandwidth.items():
            for i in range(len(edges) - 1):
                events.append(
                    {
                        "ph": "C",
                        "name": f"{name} GB/s",
                        "pid": memory_pid,
                        "tid": 0,
                        "ts": int(edges[i]) * us_per_cycle,
                        "args": {"GB/s": round(float(series[i]), 3)},
                    }
                )
        return events

    def to_chrome(self, path, bin_cycles: int | None = None) -> Path:
        """Write the Chrome trace event JSON (open it in ui.perfetto.dev or chrome://tracing)."""
        document = {
            "traceEvents": self.chrome_events(bin_cycles),
            "displayTimeUnit": "ns",
            "otherData": {
                "kernel": self.run.program.name,
                "config": self.run.config.name,
                "cycles": int(self.run.cycles),
                "clock_mhz": self.run.config.core_clock_mhz,
                "truncated": self.truncated,
            },
        }
        path = Path(path)
        path.write_text(json.dumps(document, separators=(",", ":")), encoding="utf-8")
        return path

    def __repr__(self) -> str:
        return (
            f"Trace({len(self.raw_intervals)} intervals, {len(self.raw_issues)} instructions, "
            f"{len(self.raw_memory)} memory requests{', truncated' if self.truncated else ''})"
        )


def _spread(starts, ends, rate, group, n_groups: int, edges: np.ndarray) -> np.ndarray:
    """[n_groups, bins]: sum over intervals of rate x (cycles of [start, end) inside each bin).

    A zero-length interval counts as one cycle at its start (a store accepted at once)."""
    starts = np.asarray(starts, dtype=np.float64)
    ends = np.maximum(np.asarray(ends, dtype=np.float64), starts + 1.0)
    out = np.zeros((n_groups, len(edges) - 1))
    for i in range(len(edges) - 1):
        overlap = np.clip(np.minimum(ends, edges[i + 1]) - np.maximum(starts, edges[i]), 0.0, None)
        out[:, i] = np.bincount(group, weights=overlap * rate, minlength=n_groups)[:n_groups]
    return out


def _opcodes(program) -> tuple[str, ...]:
    from gpusim.arch import isa as I
    from gpusim.arch import layout as L

    return tuple(I.FORMS[int(f)].name for f in program.code[:, L.F_ISA])


def _categorical(codes: np.ndarray, names: tuple[str, ...]):
    """Names for integer codes, as a pandas Categorical (compact for millions of rows)."""
    from gpusim.observe.source_view import require_pandas

    pandas = require_pandas()
    table = np.asarray(names, dtype=object)
    return pandas.Categorical(table[np.asarray(codes, dtype=np.int64)], categories=list(dict.fromkeys(names)))


def _named(codes: np.ndarray, names: dict[int, str]):
    """_categorical over a code-to-name map; a code with no name (none is recorded today) reads ""."""
    top = max([*names, int(codes.max(initial=0))])
    return _categorical(codes, tuple(names.get(i, "") for i in range(top + 1)))


def _frame(columns: dict):
    from gpusim.observe.source_view import require_pandas

    return require_pandas().DataFrame(columns)
