"""The span store of the system model: what the host, each stream and each engine did, and when.

A span is one interval on one track (``host``, ``stream 1``, ``compute``, ``copy H2D``, ``copy D2H``)
with a name, a category and free-form arguments (a kernel span carries its cycles and its Nsight-style
metrics). From the spans the timeline derives the numbers a profiler shows over a window of time:

- ``gpu_utilization_pct``: the share of the window during which at least one kernel runs. This is what
  ``nvidia-smi`` calls GPU utilization; it says nothing about how busy the SMs are.
- ``sm_issue_pct``: the SM issue activity over the same window (each kernel's
  ``smsp__issue_active.avg.pct_of_peak_sustained_active`` weighted by its time in the window; idle time
  counts as zero).
- ``dram_throughput_pct``: the same for ``dram__throughput.avg.pct_of_peak_sustained_elapsed``.

Export: ``to_chrome(path)`` writes the Chrome trace event format (complete events, ``"ph": "X"``,
timestamps in microseconds), which Perfetto and chrome://tracing open. Host, streams and engines are three
processes, each track a thread of its process.

Simplifications: spans are recorded once, when their end is known; nothing is sampled, so the
utilization is exact over any window rather than averaged over nvidia-smi's 1/6 s .. 1 s sample period.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

ISSUE_METRIC = "smsp__issue_active.avg.pct_of_peak_sustained_active"
DRAM_METRIC = "dram__throughput.avg.pct_of_peak_sustained_elapsed"

HOST_TRACK = "host"
COMPUTE_TRACK = "compute"
H2D_TRACK = "copy H2D"
D2H_TRACK = "copy D2H"
ENGINE_TRACKS = (COMPUTE_TRACK, H2D_TRACK, D2H_TRACK)

KERNEL_CATEGORY = "kernel"

# Chrome trace process ids: one process per group of tracks.
_PROCESS_OF_GROUP = {"host": 1, "streams": 2, "engines": 3}


@dataclass(frozen=True)
class Span:
    """One interval of activity on one track; times in seconds from the start of the system model."""

    track: str
    name: str
    category: str
    start_s: float
    end_s: float
    args: dict = field(default_factory=dict)

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s

    def overlap_s(self, window_start_s: float, window_end_s: float) -> float:
        """Seconds of this span inside [window_start_s, window_end_s]."""
        return max(0.0, min(self.end_s, window_end_s) - max(self.start_s, window_start_s))


def _track_group(track: str) -> str:
    if track == HOST_TRACK:
        return "host"
    if track in ENGINE_TRACKS:
        return "engines"
    return "streams"


def _union_seconds(intervals: list[tuple[float, float]]) -> float:
    """Length of the union of closed intervals."""
    total_s = 0.0
    covered_until_s = float("-inf")
    for start_s, end_s in sorted(intervals):
        if end_s <= covered_until_s:
            continue
        total_s += end_s - max(start_s, covered_until_s)
        covered_until_s = end_s
    return total_s


class Timeline:
    """All spans of one GPU's system model, in the order they were recorded."""

    def __init__(self) -> None:
        self.spans: list[Span] = []

    def add(self, track: str, name: str, category: str, start_s: float, end_s: float,
            args: dict | None = None) -> Span:
        span = Span(track=track, name=name, category=category, start_s=start_s, end_s=end_s,
                    args=dict(args or {}))
        self.spans.append(span)
        return span

    def clear(self) -> None:
        self.spans.clear()

    def on_track(self, track: str) -> list[Span]:
        return [span for span in self.spans if span.track == track]

    def kernels(self, start_s: float = 0.0, end_s: float = float("inf")) -> list[Span]:
        """Kernel spans on the compute engine that overlap [start_s, end_s], in start order."""
        found = [span for span in self.spans
                 if span.track == COMPUTE_TRACK and span.category == KERNEL_CATEGORY
                 and span.end_s > start_s and span.start_s < end_s]
        return sorted(found, key=lambda span: span.start_s)

    @property
    def end_s(self) -> float:
        return max((span.end_s for span in self.spans), default=0.0)

    def busy_seconds(self, track: str, start_s: float, end_s: float, category: str | None = None) -> float:
        """Seconds of [start_s, end_s] during which the track has a span (of the category, if given)."""
        intervals = [(max(span.start_s, start_s), min(span.end_s, end_s)) for span in self.spans
                     if span.track == track and (category is None or span.category == category)
                     and span.end_s > start_s and span.start_s < end_s]
        return _union_seconds(intervals)

    def utilization(self, start_s: float = 0.0, end_s: float | None = None) -> dict[str, float]:
        """nvidia-smi-style utilization beside SM issue activity and DRAM throughput, in percent."""
        window_end_s = self.end_s if end_s is None else end_s
        window_s = window_end_s - start_s
        if window_s <= 0.0:
            return {"gpu_utilization_pct": 0.0, "sm_issue_pct": 0.0, "dram_throughput_pct": 0.0,
                    "window_s": 0.0}
        kernel_intervals = []
        issue_weighted = 0.0
        dram_weighted = 0.0
        for span in self.kernels(start_s, window_end_s):
            inside_s = span.overlap_s(start_s, window_end_s)
            kernel_intervals.append((max(span.start_s, start_s), min(span.end_s, window_end_s)))
            metrics = span.args.get("metrics", {})
            issue_weighted += float(metrics.get(ISSUE_METRIC, 0.0)) * inside_s
            dram_weighted += float(metrics.get(DRAM_METRIC, 0.0)) * inside_s
        busy_s = _union_seconds(kernel_intervals)
        return {
            "gpu_utilization_pct": 100.0 * busy_s / window_s,
            "sm_issue_pct": issue_weighted / window_s,
            "dram_throughput_pct": dram_weighted / window_s,
            "window_s": window_s,
        }

    def to_chrome_events(self) -> list[dict]:
        """The spans as Chrome trace events (plus process/thread name metadata)."""
        tracks: list[str] = []
        for span in self.spans:
            if span.track not in tracks:
                tracks.append(span.track)
        events: list[dict] = []
        for group, pid in _PROCESS_OF_GROUP.items():
            events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": group}})
            events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                           "args": {"sort_index": pid}})
        thread_ids = {track: index + 1 for index, track in enumerate(tracks)}
        for track, tid in thread_ids.items():
            events.append({"ph": "M", "name": "thread_name", "pid": _PROCESS_OF_GROUP[_track_group(track)],
                           "tid": tid, "args": {"name": track}})
        for span in self.spans:
            events.append({
                "name": span.name, "cat": span.category, "ph": "X",
                "ts": span.start_s * 1e6, "dur": span.duration_s * 1e6,
                "pid": _PROCESS_OF_GROUP[_track_group(span.track)], "tid": thread_ids[span.track],
                "args": _json_safe(span.args),
            })
        return events

    def to_chrome(self, path: str | Path) -> Path:
        """Write the timeline as a Chrome trace event file (opens in Perfetto / chrome://tracing)."""
        out_path = Path(path)
        out_path.write_text(json.dumps({"traceEvents": self.to_chrome_events(), "displayTimeUnit": "ns"}))
        return out_path


def _json_safe(value: object) -> object:
    """Arguments as JSON: dicts and lists recursively, numbers as float/int, anything else as text."""
    if isinstance(value, dict):
        return {str(key): _json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    try:
        return float(value)  # type: ignore[arg-type]  # numpy scalars; anything else falls to str
    except (TypeError, ValueError):
        return str(value)
