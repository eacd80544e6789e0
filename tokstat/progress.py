"""A rich progress bar for long runs: segments, segments/s and MB/s (off when not a TTY or ``--quiet``)."""

from __future__ import annotations

import sys
import time

from rich.progress import Progress, ProgressColumn, SpinnerColumn, Task, TextColumn, TimeElapsedColumn
from rich.text import Text


class _Rate(ProgressColumn):
    def render(self, task: Task) -> Text:
        el = task.elapsed or 0.0
        if el <= 0:
            return Text("")
        mb = task.fields.get("bytes", 0) / 1e6
        return Text(f"{task.completed / el:,.0f} seg/s  {mb / el:,.1f} MB/s  {mb:,.1f} MB", style="cyan")


class Meter:
    """``advance(segments, nbytes)`` as work completes; a context manager that draws a bar when enabled."""

    def __init__(self, description: str, enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.segments = self.bytes = 0
        self.t0 = time.perf_counter()
        self._p = self._task = None
        self.description = description

    def __enter__(self) -> Meter:
        if self.enabled:
            self._p = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                               TextColumn("{task.completed:,} segments"), _Rate(), TimeElapsedColumn(),
                               transient=True)
            self._p.__enter__()
            self._task = self._p.add_task(self.description, total=None, bytes=0)
        return self

    def advance(self, segments: int, nbytes: int) -> None:
        self.segments += segments
        self.bytes += nbytes
        if self._p is not None:
            self._p.update(self._task, advance=segments, bytes=self.bytes)

    def __exit__(self, *exc) -> None:
        if self._p is not None:
            self._p.__exit__(*exc)
