"""Progress of a long launch: blocks done of the grid, simulated cycles, warp-instructions.

A launch runs in slices (``gpusim.launch.slices``); after each one the launch reports where it stands.
``progress=`` of ``GPU.launch`` says what becomes of that report:

* ``False`` (the default in Python): nothing.
* ``True``: a display on stderr, shown only once the launch has run ``SHOW_AFTER_SECONDS`` of wall time
  (short runs print nothing) and removed when it ends. On a terminal it is a rich progress bar when rich
  is installed, else one line rewritten in place; when stderr is not a terminal, a plain line every
  ``REPEAT_SECONDS``. The ``gpusim run`` command asks for it when stderr is a terminal.
* a callable: called with a :class:`Progress` after every slice (about five times a second), from the
  thread that launched; what it raises ends the launch (a KeyboardInterrupt, for example).

The measure is blocks done / total blocks (a block is done when its last warp has exited; a functional
run executes blocks one at a time), the simulated clock of a timed run, and warp-instructions executed.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from gpusim.errors import LaunchError

if TYPE_CHECKING:                       # rich is an optional extra, imported when a bar is shown
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

SHOW_AFTER_SECONDS = 2.0
"""The display appears only once a launch has run this long."""
REPEAT_SECONDS = 5.0
"""Interval between the lines printed when stderr is not a terminal."""


@dataclass(frozen=True)
class Progress:
    """Where a launch stands after a slice."""

    kernel: str
    blocks_done: int
    blocks: int
    warp_instructions: int
    cycles: int | None
    """The simulated clock of a timed run; None for a functional run."""
    elapsed_s: float
    """Wall time since the launch began."""

    @property
    def fraction(self) -> float:
        return self.blocks_done / self.blocks if self.blocks else 1.0

    def line(self) -> str:
        parts = [f"{self.blocks_done}/{self.blocks} blocks ({100 * self.fraction:.1f}%)"]
        if self.cycles is not None:
            parts.append(f"{_count(self.cycles)} cycles")
        parts.append(f"{_count(self.warp_instructions)} warp-instructions")
        parts.append(f"{self.elapsed_s:.0f} s (Ctrl-C stops)")
        return f"gpusim: kernel '{self.kernel}': " + ", ".join(parts)


def _count(n: int) -> str:
    for scale, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if n >= scale:
            return f"{n / scale:.2f}{suffix}"
    return str(n)


class _Display:
    """The stderr display of ``progress=True``."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.bar: RichProgress | None = None          # rich Progress, once shown
        self.task: TaskID | None = None
        self.shown = False
        self.last_line = 0.0
        self.width = 0

    def update(self, p: Progress) -> None:
        if p.elapsed_s < SHOW_AFTER_SECONDS:
            return
        if self.tty and self._rich(p):
            return
        if self.tty:
            text = p.line()
            self.stream.write("\r" + text.ljust(self.width))
            self.width = len(text)
            self.stream.flush()
            self.shown = True
        elif p.elapsed_s - self.last_line >= REPEAT_SECONDS or not self.shown:
            self.stream.write(p.line() + "\n")
            self.stream.flush()
            self.last_line = p.elapsed_s
            self.shown = True

    def _rich(self, p: Progress) -> bool:
        if self.bar is None:
            try:
                from rich.console import Console
                from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
                from rich.progress import Progress as RichProgress
            except ImportError:
                return False
            self.bar = RichProgress(TextColumn("[bold]{task.description}"), BarColumn(bar_width=24),
                                    TextColumn("{task.completed}/{task.total} blocks"),
                                    TextColumn("{task.fields[counts]}"), TimeElapsedColumn(),
                                    TextColumn("[dim](Ctrl-C stops)"),
                                    console=Console(file=self.stream), transient=True, auto_refresh=False)
            self.bar.start()
            self.task = self.bar.add_task(f"kernel '{p.kernel}'", total=max(p.blocks, 1), counts="")
        counts = (f"{_count(p.cycles)} cycles, " if p.cycles is not None else "") + \
            f"{_count(p.warp_instructions)} warp-inst"
        bar, task = self.bar, self.task
        assert task is not None                # added with the bar, above
        bar.update(task, completed=p.blocks_done, counts=counts)
        bar.refresh()
        return True

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
        elif self.shown and self.tty:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


class ProgressReporter:
    """Turns a launch's slices into ``progress=`` reports; ``close()`` when the launch ends (or fails)."""

    def __init__(self, progress: bool | Callable[[Progress], object] | None, kernel: str, blocks: int,
                 stream: TextIO | None = None):
        if not (progress is None or isinstance(progress, bool) or callable(progress)):
            raise LaunchError(f"progress= takes True, False or a function of a Progress, not {progress!r}")
        self.kernel = kernel
        self.blocks = blocks
        self.start = time.perf_counter()
        self.callback = progress if callable(progress) else None
        self.display = _Display(stream or sys.stderr) if progress is True else None

    @property
    def active(self) -> bool:
        return self.callback is not None or self.display is not None

    def report(self, blocks_done: int, warp_instructions: int, cycles: int | None) -> None:
        p = Progress(kernel=self.kernel, blocks_done=int(blocks_done), blocks=self.blocks,
                     warp_instructions=int(warp_instructions), cycles=None if cycles is None else int(cycles),
                     elapsed_s=time.perf_counter() - self.start)
        if self.display is not None:
            self.display.update(p)
        if self.callback is not None:
            self.callback(p)

    def close(self) -> None:
        if self.display is not None:
            self.display.close()
