"""Shard-parallel counting: segments -> per-shard :class:`~tokstat.counts.LangStats` -> one exact merge.

A *job* holds everything a worker needs (adapters, languages, pivot, word segmenters). Work units are
either batches of segments streamed from the corpus by the driver, or whole shards (files) of a
sharded corpus that each worker reads itself. Every worker accumulates its own statistics and sends
them back once; the statistics are exact sums, so any split of the corpus merges to the same result
as one worker reading everything in order.

Engines: ``local`` (in-process for ``workers=1``, otherwise that many worker processes) and ``ray``
(Ray actors on a local instance or the cluster at ``address``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import traceback
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice

import numpy as np

from .adapters import Adapter
from .corpus import Corpus, Segment
from .counts import LangStats, TextBatch, buckets, count_batch
from .errors import TokstatError
from .segmenters import word_spans
from .split import is_heldout

Stats = dict[tuple[str, str], LangStats]


@dataclass
class Job:
    adapters: list[Adapter]
    langs: list[str]
    pivot: str | None
    gold: frozenset
    segnames: dict[str, str | None]
    heldout_only: bool = False      # every tokenizer was trained here: only held-out segments count
    join: bool = False
    keep_rows: bool = False         # keep per-segment rows (memory grows with the corpus)

    def empty(self) -> Stats:
        return {(a.id, lang): LangStats(rows=[] if self.keep_rows else None)
                for a in self.adapters for lang in self.langs}


def batches(it: Iterable[Segment], size: int) -> Iterator[list[Segment]]:
    it = iter(it)
    while batch := list(islice(it, size)):
        yield batch


def merge(acc: Stats, part: Stats) -> Stats:
    """Key-wise merge of two statistics dicts (exact: sums, histogram additions, set unions)."""
    return {k: acc[k].merge(part[k]) for k in acc}


@dataclass
class Columns:
    """A batch of segments by column: what is sent to a worker (lists of strings pickle fast)."""

    ids: list[str]
    texts: dict[str, list[str]]
    words: dict[str, list[list[str]]]     # gold words, for the languages that have them

    @classmethod
    def of(cls, batch: list[Segment], langs: list[str], gold: frozenset) -> Columns:
        return cls([s.id for s in batch], {lang: [s.texts.get(lang, "") for s in batch] for lang in langs},
                   {lang: [s.words.get(lang, []) for s in batch] for lang in langs if lang in gold})

    def take(self, idx) -> Columns:
        return Columns([self.ids[i] for i in idx], {k: [v[i] for i in idx] for k, v in self.texts.items()},
                       {k: [v[i] for i in idx] for k, v in self.words.items()})

    def __len__(self) -> int:
        return len(self.ids)


def count_segments(job: Job, batch: list[Segment] | Columns, seq: int = 0, into: Stats | None = None) -> Stats:
    """Statistics of one batch of segments, for every (tokenizer, language) of the job, added in place
    to ``into`` (a fresh ``job.empty()`` by default); ``seq`` orders the batch's per-segment rows."""
    out = job.empty() if into is None else into
    cols_in = batch if isinstance(batch, Columns) else Columns.of(batch, job.langs, job.gold)
    if job.heldout_only:
        cols_in = cols_in.take([i for i, sid in enumerate(cols_in.ids) if is_heldout(sid)])
    if not len(cols_in):
        return out
    n = len(cols_in)
    ids = cols_in.ids
    partial = not job.join and not job.heldout_only and any(getattr(a, "heldout", None) for a in job.adapters)
    keep = np.flatnonzero([is_heldout(i) for i in ids]) if partial else None
    tokens: dict[tuple[str, str], np.ndarray] = {}
    for lang in job.langs:
        texts = cols_in.texts[lang]
        gw = cols_in.words.get(lang)
        words = None if job.segnames[lang] is None else [
            word_spans(lang, t, gw[i] if gw is not None else None) for i, t in enumerate(texts)]
        full = TextBatch.build(texts, ids, words)
        sub = None
        for a in job.adapters:
            if partial and getattr(a, "heldout", None):  # trained here: evaluated on held-out segments only
                if sub is None:
                    sub = TextBatch.build([texts[i] for i in keep], [ids[i] for i in keep],
                                          [words[i] for i in keep] if words is not None else None)
                tb, pos = sub, keep
            else:
                tb, pos = full, np.arange(n)
            enc = a.encode_spans(tb.texts)
            cols = count_batch(tb, enc, a)
            out[(a.id, lang)].add(tb, cols, enc, a, seq)
            t = np.full(n, -1, dtype=np.int64)
            t[pos] = np.where(cols["chars"] > 0, cols["tokens"], -1)
            tokens[(a.id, lang)] = t
    if job.pivot is not None:
        bkt = buckets(ids)
        for a in job.adapters:
            p = tokens[(a.id, job.pivot)]
            for lang in job.langs:
                t = tokens[(a.id, lang)]
                m = (t >= 0) & (p >= 0)
                out[(a.id, lang)].add_pairs(bkt[m], t[m], p[m])
    return out


def text_size(batch: list[Segment] | Columns) -> int:
    """UTF-8 bytes of a batch's texts (for progress)."""
    if isinstance(batch, Columns):
        return sum(len(t.encode("utf-8")) for v in batch.texts.values() for t in v)
    return sum(len(t.encode("utf-8")) for s in batch for t in s.texts.values())


def count_stream(job: Job, segments: Iterable[Segment], batch_size: int, progress=None, seq0: int = 0) -> Stats:
    """One worker's loop: batches of ``segments`` counted and merged."""
    acc = job.empty()
    for k, b in enumerate(batches(segments, batch_size)):
        count_segments(job, b, seq0 + k, into=acc)
        if progress:
            progress.advance(len(b), text_size(b))
    return acc


# ---------------------------------------------------------------- local worker processes

def _single_threaded(job: Job) -> None:
    """Inside a worker: the libraries' own thread pools stay at one thread (the workers use the cores)."""
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    os.environ["RAYON_NUM_THREADS"] = "1"
    for a in job.adapters:
        a.threads = 1


@contextmanager
def _one_core(job: Job):
    """``workers=1`` in this process: one core, so N workers mean N cores (restored afterwards)."""
    threads = [a.threads for a in job.adapters]
    env = {k: os.environ.get(k) for k in ("TOKENIZERS_PARALLELISM", "RAYON_NUM_THREADS")}
    _single_threaded(job)
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


def _worker(job: Job, inq, outq) -> None:
    # Ctrl-C reaches the whole process group: the driver handles it and stops the workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
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
    """Count with ``workers`` processes (1: in this process). This process reads the corpus and
    streams numbered batches to the workers (a sharded corpus is read shard after shard)."""
    if workers <= 1:
        with _one_core(job):
            return count_stream(job, corpus, batch_size, progress)
    ctx = _context()
    inq, outq = ctx.Queue(maxsize=2 * workers), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(job, inq, outq), daemon=True)
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
        items = enumerate(Columns.of(b, job.langs, job.gold) for b in batches(corpus, batch_size))
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


# ---------------------------------------------------------------- Ray

def run_ray(job: Job, corpus: Iterable[Segment], *, workers: int | None = None, address: str | None = None,
            batch_size: int = 256, shards: list[Corpus] | None = None, progress=None) -> Stats:
    """The same counting as Ray actors: each actor accumulates the batches (or shards) it is given and
    returns its statistics once; the driver merges them. ``address``: a running cluster
    (``ray://host:10001`` or ``auto``); without it a local instance with ``workers`` CPUs is started."""
    try:
        import ray
    except ImportError:
        raise TokstatError("--engine ray needs Ray", fix="pip install 'tokstat[ray]'") from None
    started = not ray.is_initialized()
    if started:
        kw = {"address": address} if address else {"num_cpus": workers or os.cpu_count()}
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False, **kw)
    try:
        n = workers or int(ray.cluster_resources().get("CPU", 1))

        @ray.remote(num_cpus=1)
        class Counter:
            def __init__(self, job: Job):
                _single_threaded(job)
                self.job, self.acc = job, job.empty()

            def add(self, seq: int, batch: Columns) -> tuple[int, int]:
                count_segments(self.job, batch, seq, into=self.acc)
                return len(batch), text_size(batch)

            def add_shard(self, seq: int, shard: Corpus) -> tuple[int, int]:
                self.acc = merge(self.acc, count_stream(self.job, shard, batch_size, seq0=seq << 32))
                return 0, 0

            def result(self) -> Stats:
                return self.acc

        job_ref = ray.put(job)
        actors = [Counter.remote(job_ref) for _ in range(n)]
        inflight: list = []
        items = shards if shards else (Columns.of(b, job.langs, job.gold) for b in batches(corpus, batch_size))
        for k, payload in enumerate(items):
            actor = actors[k % n]
            inflight.append(actor.add_shard.remote(k, payload) if shards else actor.add.remote(k, payload))
            if len(inflight) >= 2 * n:  # bounded: the driver never holds more than 2n batches
                ready, inflight = ray.wait(inflight, num_returns=1)
                got = ray.get(ready[0])
                if progress:
                    progress.advance(*got)
        for got in ray.get(inflight):
            if progress:
                progress.advance(*got)
        acc = job.empty()
        for part in ray.get([a.result.remote() for a in actors]):
            acc = merge(acc, part)
        for a in actors:
            ray.kill(a)
        return acc
    finally:
        if started:
            ray.shutdown()
