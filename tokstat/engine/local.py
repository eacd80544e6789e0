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


#: seconds a stopping worker gets to end after SIGTERM, and again after SIGKILL: every pool ends
#: within a bounded time after an error, whatever its workers were doing
JOIN_S = 2.0


def _pool_worker(k: int, worker, inq, outq, parent: int | None) -> None:
    """Worker ``k`` of :func:`run_pool`: ``worker.start()``, then ``worker.task(item)`` for each item
    until None, then ``worker.final()``. Every message is pickled here, not in the queue's feeder
    thread (which would print an unpicklable result and drop it): a result that cannot be sent is an
    error the driver raises."""
    # Ctrl-C reaches the whole process group: the driver handles it and stops the workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if parent is not None:
        die_with_parent(parent)
    try:
        worker.start()
        while (item := inq.get()) is not None:
            outq.put(("item", k, _dumps(worker.task(item))))
        outq.put(("final", k, _dumps(worker.final())))
    except BaseException as e:  # noqa: BLE001 - reported to the driver, which raises it
        outq.put(("error", k, _error_bytes(e)))


def _dumps(value) -> bytes:
    from multiprocessing.reduction import ForkingPickler

    return bytes(ForkingPickler.dumps(value))


def _error_bytes(e: BaseException) -> bytes:
    """A worker's error for the driver: itself where it pickles (a TokstatError with its path, line
    and fix; the scan's Diverged), with the worker's traceback as a note; else a RuntimeError
    holding that traceback."""
    tb = traceback.format_exc()
    if not isinstance(e, TokstatError):
        try:
            e.add_note(f"in a worker process:\n{tb}")
        except AttributeError:
            pass
    try:
        return _dumps(e)
    except Exception:  # noqa: BLE001 - an exception that does not pickle
        return _dumps(RuntimeError(tb))


def run_pool(worker, items: Iterable, *, workers: int):
    """Run ``worker`` (an object with ``start()``, ``task(item)`` and ``final()``) in ``workers``
    processes fed ``items``; yield ``("item", result)`` for each item (in completion order) and
    ``("final", result)`` for each worker. This process feeds a bounded queue, so items are produced
    as the workers take them.

    Ends within a bounded time whatever happens: a worker's error is raised here as itself; a
    worker that dies (killed, ``os._exit``) is one error naming its exit code, never a wait for a
    result that will not come; on any error, Ctrl-C or an abandoned generator the workers get
    SIGTERM, then SIGKILL after :data:`JOIN_S` seconds, and no queue's feeder thread blocks this
    process's exit. A result that does not come back is an error, never a silent loss."""
    import pickle

    ctx = _context()
    inq, outq = ctx.Queue(maxsize=2 * workers), ctx.Queue()
    procs = [ctx.Process(target=_pool_worker, args=(k, worker, inq, outq, os.getpid()), daemon=True)
             for k in range(workers)]
    finals: set[int] = set()
    sent = got = 0
    clean = False

    def receive(timeout: float):
        """The next message, or None when none came within ``timeout``; a worker's error raised."""
        try:
            msg = outq.get(timeout=timeout) if timeout else outq.get_nowait()
        except queue.Empty:
            dead = [p.exitcode for k, p in enumerate(procs) if p.exitcode is not None and k not in finals]
            if not dead:
                return None
            try:                    # what it sent before it ended is read first
                msg = outq.get(timeout=0.2)
            except queue.Empty:
                raise TokstatError(f"a worker process died (exit code {dead[0]}) before it sent its result",
                                   fix="rerun with --workers 1 to see the error") from None
        kind, k, data = msg
        value = pickle.loads(data)
        if kind == "error":
            raise value
        return kind, k, value

    def handle(m):
        nonlocal got
        kind, k, value = m
        if kind == "final":
            finals.add(k)
        else:
            got += 1
        return kind, value

    def pending():
        """Every message already waiting."""
        while (m := receive(0)) is not None:
            yield handle(m)

    def put(item):
        while True:
            try:
                inq.put(item, timeout=0.2)
                return
            except queue.Full:
                yield from pending()

    try:
        for p in procs:
            p.start()
        for item in chain(items, [None] * workers):
            yield from put(item)
            sent += item is not None
            yield from pending()
        while len(finals) < workers:
            if (m := receive(0.5)) is not None:
                yield handle(m)
        if got != sent:
            raise TokstatError(f"the workers sent {got} of {sent} results back", fix="rerun with --workers 1")
        clean = True
    finally:
        _stop(procs, inq, outq, clean)


def _stop(procs, inq, outq, clean: bool) -> None:
    """End every worker within 2 × :data:`JOIN_S` seconds: SIGTERM (unless they ended cleanly),
    then SIGKILL for any still alive (one blocked on a queue lock its killed sibling held); the
    queues' feeder threads never block this process."""
    if not clean:
        for p in procs:
            if p.is_alive():
                p.terminate()
    inq.cancel_join_thread()
    outq.cancel_join_thread()
    for p in procs:
        if p.pid is None:           # never started
            continue
        p.join(timeout=JOIN_S)
        if p.is_alive():
            p.kill()
            p.join(timeout=JOIN_S)
    inq.close()
    outq.close()


class _Batches:
    """:func:`run_local`'s worker: counts numbered batches into its own statistics, sent back once."""

    def __init__(self, job: Job):
        self.job = job

    def start(self) -> None:
        _single_threaded(self.job)
        self.acc = self.job.empty()

    def task(self, item) -> tuple[int, int]:
        seq, b = item
        count_segments(self.job, b, seq, into=self.acc)
        return len(b), text_size(b)

    def final(self) -> Stats:
        return self.acc


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
    acc = job.empty()
    items = enumerate(Columns.of(b, job.langs, job.gold, job.monolingual) for b in chain(head, it))
    for kind, value in run_pool(_Batches(job), items, workers=workers):
        if kind == "final":
            acc = merge(acc, value)
        elif progress:
            progress.advance(*value)
    return acc
