"""A tokenizer that fails inside a worker process, at a chosen stage and in a chosen way: what the
pool tests inject into every executor (forked processes, Ray actors) to check that each one ends,
within a bounded time, with one clear error.

Stages: ``before`` (as the worker starts: the executor sets the adapter's ``threads``), ``during``
(while encoding a text that holds :data:`MARK`), ``after`` (a moment after that text's task, with
the worker back at its queue or on later tasks). Kinds: ``raise`` (a TokstatError), ``bug`` (a
RuntimeError), ``exit`` (``os._exit(3)``), ``kill`` (SIGKILL to itself), ``hang`` (the first worker
to start blocks forever while another raises at :data:`MARK`). Nothing fails in the driver process.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np

from tokstat.adapters.base import Adapter, from_lists
from tokstat.errors import TokstatError

#: the text that triggers a ``during`` or ``after`` fault
MARK = "爆"
STAGES = ("before", "during", "after")
KINDS = ("raise", "bug", "exit", "kill")
#: seconds each encode call takes (the workers stay busy long enough for an ``after`` fault)
SLOW = 0.01


def _fail(kind: str) -> None:
    if kind == "raise":
        raise TokstatError("injected fault", fix="none: a test")
    if kind == "bug":
        raise RuntimeError("injected bug")
    if kind == "exit":
        os._exit(3)
    if kind == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(10)


class Faulty(Adapter):
    """One token per UTF-8 byte, failing in a worker (a process other than ``driver``) at
    ``stage`` in the way ``kind`` says. ``lock``: a path the first starting worker creates to elect
    itself the one that hangs (kind ``hang``)."""

    family, algorithm, vocab_size, n_ids = "test", "bytes", 256, 256
    byte_fallback = np.zeros(256, dtype=bool)

    def __init__(self, stage: str, kind: str, driver: int, lock: str | None = None):
        self.stage, self.kind, self.driver, self.lock = stage, kind, driver, lock
        self.id = f"test/faulty-{stage}-{kind}"
        self.file_hash = "0" * 64
        self._threads = 0

    def _worker(self) -> bool:
        return os.getpid() != self.driver

    @property
    def threads(self) -> int:
        return self._threads

    @threads.setter
    def threads(self, n: int) -> None:          # the executor's first call in a starting worker
        self._threads = n
        if not self._worker():
            return
        if self.kind == "hang":
            try:
                os.close(os.open(self.lock, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                return
            while True:                          # this worker never takes a task
                time.sleep(1)
        if self.stage == "before":
            _fail(self.kind)

    def _encode(self, texts):
        time.sleep(SLOW)
        if self._worker() and any(MARK in t for t in texts):
            if self.kind == "hang" or self.stage == "during":
                _fail("raise" if self.kind == "hang" else self.kind)
            elif self.stage == "after":
                threading.Timer(5 * SLOW, _fail, args=("exit" if self.kind in ("raise", "bug") else self.kind,)).start()
        bs = [list(t.encode()) for t in texts]
        return from_lists(bs, [list(range(len(b))) for b in bs], [list(range(1, len(b) + 1)) for b in bs])

    def decode(self, ids):
        return bytes(ids).decode("utf-8", errors="replace")


def expected(stage: str, kind: str) -> tuple[type, str]:
    """The exception a run must end with, and a pattern of its message."""
    if stage == "after" or kind in ("exit", "kill"):
        code = {"kill": "-9"}.get(kind, "3")
        return TokstatError, f"a worker process died \\(exit code {code}\\)|Ray actor .*died"
    if kind == "bug":
        return RuntimeError, "injected bug"
    return TokstatError, "injected fault"


def cases() -> list[tuple[str, str]]:
    """Every (stage, kind) the pool tests inject: each stage by each kind, and one worker hanging
    while another fails."""
    return [(s, k) for s in STAGES for k in KINDS if not (s == "after" and k in ("raise", "bug"))] + [("during", "hang")]
