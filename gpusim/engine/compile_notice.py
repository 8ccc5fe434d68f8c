"""The notice a user sees while the engine compiles (``compile_cache`` opens and closes it).

One line on stderr naming what is happening, where the result is cached and about how long it takes,
then progress: a rich progress bar when rich is installed and the stream is a terminal, a line rewritten
in place on other terminals, percentages appended to the header line on a pipe or file.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def _shown(path: Path) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home):] if text.startswith(home + os.sep) else text


class CompileNotice:
    """One compile's notice on ``stream``: a header, progress (done of ``total`` functions), the time.

    A rich progress bar when rich is installed and the stream is a terminal; a line rewritten in
    place on other terminals; on a pipe or file, percentages appended to the header line."""

    def __init__(self, total: int, stream=None, *, cache_dir: Path, seconds_per_function: float,
                 use_rich: bool | None = None, speedup: float = 1.0):
        self.total = max(1, total)
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.start = time.perf_counter()
        tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._mode = "line" if tty else "plain"
        self._bar = None
        self._shown_tenths = 0
        estimate = max(5, int(round(self.total * seconds_per_function * speedup / 5.0)) * 5)
        header = (f"gpusim: compiling the simulation engine once (about {estimate} s; cached in "
                  f"{_shown(cache_dir)} for later runs)...")
        if tty and use_rich is not False:
            self._bar = _rich_bar(self.stream, self.total)
            if self._bar is not None:
                self._mode = "rich"
        if self._mode == "rich" and self._bar is not None:
            self._bar[0].console.print(header, highlight=False)
            self._bar[0].start()
        elif self._mode == "line":
            self._write(header + "\n")
            self._line()
        else:
            self._write(header)

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def _line(self) -> None:
        self._write(f"\rgpusim: {self.done}/{self.total} engine functions ({100 * self.done // self.total}%)")

    def advance(self, count: int = 1) -> None:
        self.done = min(self.done + count, self.total)
        if self._mode == "rich" and self._bar is not None:
            progress, task = self._bar
            progress.update(task, completed=self.done)
            progress.refresh()
        elif self._mode == "line":
            self._line()
        else:
            tenths = 10 * self.done // self.total
            while self._shown_tenths < min(tenths, 9):
                self._shown_tenths += 1
                self._write(f" {10 * self._shown_tenths}%")

    def finish(self) -> float:
        seconds = time.perf_counter() - self.start
        self.done = self.total
        if self._mode == "rich" and self._bar is not None:
            progress, task = self._bar
            progress.update(task, completed=self.total)
            progress.stop()
            progress.console.print(f"gpusim: engine compiled in {seconds:.0f} s", highlight=False)
        elif self._mode == "line":
            self._line()
            self._write(f"\ngpusim: engine compiled in {seconds:.0f} s\n")
        else:
            self._write(f" done in {seconds:.0f} s\n")
        return seconds


def _rich_bar(stream, total):
    try:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        return None
    progress = Progress(TextColumn("gpusim: compiling"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("functions"), TimeElapsedColumn(),
                        console=Console(file=stream), auto_refresh=False, transient=False)
    return progress, progress.add_task("compile", total=total)
