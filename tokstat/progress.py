"""A rich progress bar for long runs: segments, segments/s and MB/s (off when not a TTY or ``--quiet``)."""

from __future__ import annotations

import sys
import time

from rich.progress import (BarColumn, Progress, ProgressColumn, SpinnerColumn, Task, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.text import Text


class _Rate(ProgressColumn):
    def render(self, task: Task) -> Text:
        el = task.elapsed or 0.0
        if el <= 0:
            return Text("")
        mb = task.fields.get("bytes", 0) / 1e6
        return Text(f"{task.completed / el:,.0f} seg/s  {mb / el:,.1f} MB/s  {mb:,.1f} MB", style="cyan")


class Phase:
    """A spinner naming a step whose progress cannot be counted (training a vocabulary), with its
    elapsed time; a context manager, off when not a TTY or ``enabled`` is False."""

    total: int | None = None

    def __init__(self, description: str, enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.description = description
        self._p = self._task = None

    def columns(self) -> tuple:
        return (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())

    def __enter__(self):
        if self.enabled:
            self._p = Progress(*self.columns(), transient=True)
            self._p.__enter__()
            self._task = self._p.add_task(self.description, total=self.total, bytes=0)
        return self

    def __exit__(self, *exc) -> None:
        if self._p is not None:
            self._p.__exit__(*exc)


class Meter(Phase):
    """``advance(segments, nbytes)`` as work completes; a context manager that draws a bar when
    enabled: with ``total`` (segments), a bar, done/total and the time remaining."""

    def __init__(self, description: str, enabled: bool | None = None, total: int | None = None):
        super().__init__(description, enabled)
        self.segments = self.bytes = 0
        self.t0 = time.perf_counter()
        self.total = total

    def columns(self) -> tuple:
        counted = (BarColumn(bar_width=24), TextColumn("{task.completed:,}/{task.total:,} segments")) \
            if self.total else (TextColumn("{task.completed:,} segments"),)
        eta = (TextColumn("ETA"), TimeRemainingColumn()) if self.total else ()
        return (SpinnerColumn(), TextColumn("{task.description}"), *counted, _Rate(), TimeElapsedColumn(), *eta)

    def advance(self, segments: int, nbytes: int) -> None:
        self.segments += segments
        self.bytes += nbytes
        if self._p is not None:
            self._p.update(self._task, advance=segments, bytes=self.bytes)
