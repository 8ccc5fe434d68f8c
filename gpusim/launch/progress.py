"""Progress of a long launch: blocks done of the grid, simulated cycles, warp-instructions.

A launch runs in slices (``gpusim.launch.slices``); after each one the launch reports where it stands.
``progress=`` of ``GPU.launch`` says what becomes of that report:

* ``None`` (the default in Python): ``True`` when stderr is a terminal or the code runs in a Jupyter kernel
  (``interactive()``), else nothing -- so tests and scripts writing to a file or pipe stay quiet.
* ``False``: nothing.
* ``True``: a display on stderr, shown only once the launch has run ``SHOW_AFTER_SECONDS`` of wall time
  (short runs print nothing) and removed when it ends. On a terminal or in Jupyter it is a tqdm bar when
  tqdm is installed (a notebook widget where ipywidgets is), else a rich progress bar when rich is, else
  one line rewritten in place; when stderr is neither, a plain line every ``REPEAT_SECONDS``. The
  ``gpusim run`` command asks for it when stderr is a terminal.
* a callable: called with a :class:`Progress` after every slice (about five times a second), from the
  thread that launched; what it raises ends the launch (a KeyboardInterrupt, for example).

``CountBar`` is the same display for a count of things done (a sweep's points, a lab's steps).

The measure is blocks done / total blocks (a block is done when its last warp has exited; a functional
run executes blocks one at a time), the simulated clock of a timed run, and warp-instructions executed.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from gpusim.errors import LaunchError

if TYPE_CHECKING:                       # rich is an optional extra, imported when a bar is shown
    pass

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


def in_jupyter() -> bool:
    """Whether this runs in a Jupyter (IPython) kernel."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and hasattr(shell, "kernel")


def interactive(stream: TextIO | None = None) -> bool:
    """Whether a progress display is wanted by default: stderr is a terminal, or this is a Jupyter kernel."""
    stream = stream or sys.stderr
    return bool(getattr(stream, "isatty", lambda: False)()) or in_jupyter()


def tqdm_class():
    """tqdm's notebook-aware class (``tqdm.auto`` when ipywidgets is installed), or None without tqdm."""
    from importlib.util import find_spec

    if find_spec("tqdm") is None:
        return None
    if find_spec("ipywidgets") is not None and in_jupyter():
        from tqdm.auto import tqdm as bar
    else:
        from tqdm import tqdm as bar
    return bar


def _count(n: int) -> str:
    for scale, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if n >= scale:
            return f"{n / scale:.2f}{suffix}"
    return str(n)


class _Display:
    """The stderr display of ``progress=True``."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.tty = interactive(stream)
        self.bar: Any = None     # rich Progress, once shown
        self.tqdm: Any = None    # tqdm bar, once shown
        self.task = None
        self.shown = False
        self.last_line = 0.0
        self.width = 0

    def update(self, p: Progress) -> None:
        if p.elapsed_s < SHOW_AFTER_SECONDS:
            return
        if self.tty and (self._tqdm(p) or self._rich(p)):
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

    def _tqdm(self, p: Progress) -> bool:
        if self.tqdm is None:
            bar = tqdm_class()
            if bar is None:
                return False
            self.tqdm = bar(total=max(p.blocks, 1), desc=f"kernel '{p.kernel}'", unit="block", file=self.stream,
                            leave=False)
        counts = (f"{_count(p.cycles)} cycles, " if p.cycles is not None else "") + \
            f"{_count(p.warp_instructions)} warp-inst"
        self.tqdm.n = p.blocks_done
        self.tqdm.set_postfix_str(counts, refresh=False)
        self.tqdm.refresh()
        return True

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
        if self.tqdm is not None:
            self.tqdm.close()
        elif self.bar is not None:
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
        if progress is None:
            progress = interactive(stream)
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


class CountBar:
    """A progress bar for a count of things done: ``bar(done, total)`` after each, ``close()`` at the end.

    tqdm when installed (a notebook widget in Jupyter with ipywidgets), else rich, else one line on
    ``stream`` rewritten in place (a plain line per update when it is not a terminal)."""

    def __init__(self, label: str, stream: TextIO | None = None):
        self.label = label
        self.stream = stream or sys.stderr
        self.backend: Any = None
        self.task: Any = None
        self.width = 0

    def __call__(self, done: int, total: int) -> None:
        if self.backend is None:
            self._start(total)
        if self.task == "tqdm":
            self.backend.total = total
            self.backend.n = done
            self.backend.refresh()
        elif self.task is not None:
            self.backend.update(self.task, completed=done, total=total)
            self.backend.refresh()
        else:
            text = f"{self.label}: {done}/{total}"
            self.stream.write("\r" + text.ljust(self.width))
            self.width = len(text)
            self.stream.flush()

    def _start(self, total: int) -> None:
        bar = tqdm_class()
        if bar is not None:
            self.backend, self.task = bar(total=total, desc=self.label, file=self.stream, leave=False), "tqdm"
            return
        try:
            from rich.console import Console
            from rich.progress import Progress as RichProgress
        except ImportError:
            self.backend = False
            return
        self.backend = RichProgress(console=Console(file=self.stream), transient=True, auto_refresh=False)
        self.backend.start()
        self.task = self.backend.add_task(self.label, total=total)

    def close(self) -> None:
        if self.task == "tqdm":
            self.backend.close()
        elif self.task is not None:
            self.backend.stop()
        elif self.backend is False and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
