"""Local execution: in this process (``workers=1``) or ``workers`` forked processes fed numbered batches.

This process reads the corpus and streams batches; each worker accumulates its own statistics and
sends them back once; the driver merges them (exact sums, so the worker count never changes a result).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import traceback
from collections.abc import Iterable
from contextlib import contextmanager
from itertools import chain, islice

from ..corpus import Segment
from ..errors import TokstatError
from .job import Columns, Job, Stats, batches, count_batches, count_segments, merge, text_size


def _single_threaded(job: Job) -> None:
    """Inside a worker: the libraries' own thread pools stay at one thread (the workers use the cores)."""
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    os.environ["RAYON_NUM_THREADS"] = "1"
    for a in job.adapters:
        a.threads = 1


@contextmanager
def _cores(job: Job, n: int):
    """Count in this process on ``n`` cores: the libraries' thread pools (and tokstat's own, for a
    batch of a few long texts) get ``n`` threads, so ``--workers N`` means N cores whether the corpus
    is one batch or many (restored afterwards)."""
    threads = [a.threads for a in job.adapters]
    env = {k: os.environ.get(k) for k in ("TOKENIZERS_PARALLELISM", "RAYON_NUM_THREADS")}
    if n <= 1:
        _single_threaded(job)
    else:
        os.environ["RAYON_NUM_THREADS"] = str(n)
        for a in job.adapters:
            a.threads = n
    try:
        yield
    finally:
        for a, t in zip(job.adapters, threads):
            a.threads = t
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def die_with_parent(parent: int) -> None:
    """Make this worker end when the process that started it ends, however it ends (``kill -9``
    included): Linux's ``PR_SET_PDEATHSIG`` where there is one, and everywhere a watchdog thread that
    exits when the parent is gone (a worker blocked on its queue would otherwise wait forever)."""
    import sys
    import threading
    import time

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)   # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:      # the parent died before the line above
        os._exit(1)

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="tokstat-parent-watch").start()


def _worker(job: Job, inq, outq, parent: int | None = None) -> None:
    # Ctrl-C reaches the whole process group: the driver handles it and stops the workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if parent is not None:
        die_with_parent(parent)
    try:
        _single_threaded(job)
        acc = job.empty()
        while (item := inq.get()) is not None:
            seq, b = item
            count_segments(job, b, seq, into=acc)
            outq.put(("tick", len(b), text_size(b)))
        outq.put(("done", acc))
    except BaseException as e:  # noqa: BLE001 - reported to the driver, which raises it
        outq.put(("error", e if isinstance(e, TokstatError) else RuntimeError(traceback.format_exc())))


def _context():
    # fork: workers inherit the loaded adapters (and jieba's dictionary) without pickling them. They
    # only run the tokenizers (single-threaded) and numpy, never polars, whose thread pool does not
    # survive a fork; reading the corpus stays in this process.
    return mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")


def run_local(job: Job, corpus: Iterable[Segment], *, workers: int = 1, batch_size: int = 256,
              progress=None) -> Stats:
    """Count with ``workers`` processes (1: in this process, on one core). This process reads the
    corpus and streams numbered batches to the workers (a sharded corpus is read shard after shard).
    A corpus of one batch (``--join``: one segment) is counted here on ``workers`` threads: no
    process is started for it (the result is the same)."""
    it = batches(corpus, batch_size)
    head = list(islice(it, 2))        # read before any fork: a bad first batch fails without workers
    if workers <= 1 or len(head) < 2:
        with _cores(job, workers):
            return count_batches(job, chain(head, it), progress)
    ctx = _context()
    inq, outq = ctx.Queue(maxsize=2 * workers), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(job, inq, outq, os.getpid()), daemon=True)
             for _ in range(workers)]
    for p in procs:
        p.start()
    acc, done = job.empty(), 0

    def drain(block: bool) -> None:
        nonlocal acc, done
        while True:
            try:
                msg = outq.get(timeout=0.5) if block else outq.get_nowait()
            except queue.Empty:
                dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
                if block and dead:
                    raise TokstatError(f"a worker process died (exit code {dead[0]})",
                                       fix="rerun with --workers 1 to see the error") from None
                return
            if msg[0] == "error":
                raise msg[1]
            if msg[0] == "done":
                acc = merge(acc, msg[1])
                done += 1
            elif progress:
                progress.advance(msg[1], msg[2])
            if block:
                return

    def put(item) -> None:
        while True:
            try:
                inq.put(item, timeout=0.5)
                return
            except queue.Full:
                drain(False)
                if any(p.exitcode not in (None, 0) for p in procs):
                    drain(True)

    try:
        items = enumerate(Columns.of(b, job.langs, job.gold, job.monolingual) for b in chain(head, it))
        for item in items:
            put(item)
            drain(False)
        for _ in procs:
            put(None)
        while done < workers:
            drain(True)
    finally:
        if done < workers:   # interrupted or failed: stop the workers, drop what is still queued
            for p in procs:
                if p.is_alive():
                    p.terminate()
            inq.cancel_join_thread()
            outq.cancel_join_thread()
            for p in procs:
                p.join(timeout=2)
                if p.is_alive():   # a worker blocked on a queue lock its killed sibling held
                    p.kill()
        for p in procs:
            p.join()
    return acc
