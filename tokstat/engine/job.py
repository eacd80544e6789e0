"""The job model and the counting of one batch: segments -> per-(tokenizer, language) statistics.

A *job* holds everything a worker needs: the adapters, the languages, the pivot, the word
segmenters and, per tokenizer, the :class:`~tokstat.split.Split` it is evaluated on (a tokenizer
trained on this corpus is scored on its own held-out segments only; a pretrained one on every
segment). Statistics are exact sums, so any split of the corpus into batches merges to the same result.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice

import numpy as np

from ..adapters.base import Adapter
from ..corpus import Segment
from ..errors import TokstatError
from ..counts import LangStats, TextBatch, buckets, count_batch
from ..segmenters import word_spans
from ..split import Split

Stats = dict[tuple[str, str], LangStats]

#: the longest text of one segment that is counted (characters). Beyond it a tokenizer's memory and
#: time grow without a useful bound (a 50 MB line took 14 GB and 5 minutes); raise it with --max-chars.
MAX_CHARS = 1_000_000


@dataclass
class Job:
    adapters: list[Adapter]
    langs: list[str]
    pivot: str | None
    gold: frozenset
    segnames: dict[str, str | None]
    #: tokenizer id -> the split whose held-out segments it is evaluated on (None or absent: all segments)
    splits: dict[str, Split | None] = field(default_factory=dict)
    join: bool = False
    keep_rows: bool = False         # keep per-segment rows (memory grows with the corpus)
    max_chars: int = MAX_CHARS      # a longer text is an error naming its segment
    keep_text: bool = False         # per-segment rows also carry the segment's text (--segments-text)
    source: str = ""                # the corpus, for error messages
    monolingual: bool = False       # documents each in one language: a language counts its own documents only

    def split_of(self, adapter: Adapter) -> Split | None:
        return None if self.join else self.splits.get(adapter.id)

    @property
    def common_split(self) -> Split | None:
        """The split every tokenizer shares, when all were trained with one: only its held-out
        segments are read at all."""
        s = {self.split_of(a) for a in self.adapters}
        return s.pop() if len(s) == 1 else None

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
    def of(cls, batch: list[Segment], langs: list[str], gold: frozenset, monolingual: bool = False) -> Columns:
        """A monolingual corpus's documents hold None for the languages they are not in (never
        counted as empty segments of those languages)."""
        absent = None if monolingual else ""
        return cls([s.id for s in batch], {lang: [s.texts.get(lang, absent) for s in batch] for lang in langs},
                   {lang: [s.words.get(lang, []) for s in batch] for lang in langs if lang in gold})

    def take(self, idx) -> Columns:
        return Columns([self.ids[i] for i in idx], {k: [v[i] for i in idx] for k, v in self.texts.items()},
                       {k: [v[i] for i in idx] for k, v in self.words.items()})

    def __len__(self) -> int:
        return len(self.ids)


def check_lengths(job: Job, cols: Columns) -> None:
    """Refuse a text longer than ``job.max_chars``, naming its segment, before anything is encoded."""
    for lang, texts in cols.texts.items():
        if texts and max(len(t or "") for t in texts) > job.max_chars:
            i = max(range(len(texts)), key=lambda k: len(texts[k] or ""))
            what = f"the joined {lang} text" if job.join else f"segment {cols.ids[i]} ({lang})"
            raise TokstatError(f"{what} has {len(texts[i]):,} characters, over the limit of {job.max_chars:,} "
                               "per text", path=job.source or None,
                               fix=("drop --join" if job.join else "split long documents into paragraphs")
                                   + f", or raise the limit with --max-chars {len(texts[i])}")


#: a batch of fewer segments than this (``--join``: one) counted on more than one core is encoded
#: and counted on threads (:class:`Ahead`): a few long texts would otherwise leave the cores idle
AHEAD_BELOW = 64


class Ahead:
    """A batch of a few long texts counted on ``threads`` cores. Each tokenizer encodes every
    language's texts in one call, started at once on a background thread (the libraries release the
    GIL) while the caller finds the words; each (tokenizer, language) is then counted on a pool of
    ``threads`` threads (numpy releases the GIL in its loops). Only the order of the work changes:
    the counts are those of the one-thread path."""

    def __init__(self, adapters: list[Adapter], texts: dict[str, list[str]], langs: list[str], threads: int):
        self.n = len(texts[langs[0]])
        self.index = {lang: k for k, lang in enumerate(langs)}
        flat = [t for lang in langs for t in texts[lang]]
        self.encoders = ThreadPoolExecutor(min(threads, len(adapters)))
        self.counters = ThreadPoolExecutor(threads)
        self.encoded = {a.id: self.encoders.submit(a.encode_spans, flat) for a in adapters}
        self.counted: list[Future] = []

    def count(self, adapter: Adapter, lang: str, tb: TextBatch) -> Future:
        """``(encoding, count_batch columns)`` of ``adapter`` on ``lang``'s texts, to come."""
        def run():
            k = self.index[lang]
            enc = self.encoded[adapter.id].result().texts(k * self.n, (k + 1) * self.n)
            return enc, count_batch(tb, enc, adapter)
        self.counted.append(self.counters.submit(run))
        return self.counted[-1]

    def close(self) -> None:
        """Cancel what has not started (after an error) and wait for the rest."""
        for f in [*self.encoded.values(), *self.counted]:
            f.cancel()
        self.counters.shutdown(wait=True)
        self.encoders.shutdown(wait=True)


def threads_of(adapters: list[Adapter]) -> int:
    """Cores a batch counted in this process may use: the adapters' thread cap (``--workers``), else all."""
    return min((a.threads or os.cpu_count() or 1) for a in adapters) if adapters else 1


def count_segments(job: Job, batch: list[Segment] | Columns, seq: int = 0, into: Stats | None = None) -> Stats:
    """Statistics of one batch of segments, for every (tokenizer, language) of the job, added in place
    to ``into`` (a fresh ``job.empty()`` by default); ``seq`` orders the batch's per-segment rows."""
    out = job.empty() if into is None else into
    cols_in = batch if isinstance(batch, Columns) else Columns.of(batch, job.langs, job.gold, job.monolingual)
    common = job.common_split
    if common is not None:
        cols_in = cols_in.take([i for i, sid in enumerate(cols_in.ids) if common.is_heldout(sid)])
    if not len(cols_in):
        return out
    n = len(cols_in)
    ids = cols_in.ids
    check_lengths(job, cols_in)
    # tokenizers trained here, with different splits (or beside pretrained ones): each is scored on its
    # own held-out segments; the positions of those segments in this batch, per split
    keep: dict[Split, np.ndarray] = {}
    if common is None:
        for a in job.adapters:
            s = job.split_of(a)
            if s is not None and s not in keep:
                keep[s] = np.flatnonzero([s.is_heldout(i) for i in ids])
    tokens: dict[tuple[str, str], np.ndarray] = {}
    bkt = buckets(ids)
    threads = threads_of(job.adapters)
    ahead = Ahead(job.adapters, cols_in.texts, job.langs, threads) \
        if n < AHEAD_BELOW and threads > 1 and job.langs and not keep and not job.monolingual else None
    try:
        _count_languages(job, cols_in, keep, bkt, ahead, seq, out, tokens)
    finally:
        if ahead is not None:
            ahead.close()
    if job.pivot is not None and not job.monolingual:
        for a in job.adapters:
            p = tokens[(a.id, job.pivot)]
            for lang in job.langs:
                t = tokens[(a.id, lang)]
                m = (t >= 0) & (p >= 0)
                out[(a.id, lang)].add_pairs(bkt[m], t[m], p[m])
    return out


def _count_languages(job: Job, cols_in: Columns, keep: dict, bkt: np.ndarray, ahead: Ahead | None,
                     seq: int, out: Stats, tokens: dict) -> None:
    """:func:`count_segments`' work per language and tokenizer: every language's words and text
    arrays, then each tokenizer's encoding counted (with ``ahead``: on its threads, while the next
    language's words are found), added to ``out`` in one fixed order."""
    n, ids, common = len(cols_in), cols_in.ids, job.common_split
    plan: list[tuple[Adapter, str, TextBatch, np.ndarray, Future | None]] = []
    for lang in job.langs:
        texts = cols_in.texts[lang]
        # a monolingual batch: this language's documents only (None marks another language's)
        have = np.flatnonzero([t is not None for t in texts]) if job.monolingual else None
        if have is not None and not len(have):
            continue
        gw = cols_in.words.get(lang)
        words = None if job.segnames[lang] is None else [
            word_spans(lang, t or "", gw[i] if gw is not None else None, job.segnames[lang]) for i, t in enumerate(texts)]

        def build(pos):
            return TextBatch.build([texts[i] for i in pos], [ids[i] for i in pos],
                                   [words[i] for i in pos] if words is not None else None)
        full_pos = np.arange(n) if have is None else have
        full = TextBatch.build(texts, ids, words) if have is None else build(have)
        subs: dict[Split, tuple[TextBatch, np.ndarray]] = {}
        work = []
        for a in job.adapters:
            s = job.split_of(a) if common is None else None
            if s is None:
                work.append((a, full, full_pos))
                continue
            if s not in subs:
                pos = keep[s] if have is None else np.intersect1d(keep[s], have)
                subs[s] = (build(pos), pos)
            work.append((a, *subs[s]))
        plan.extend((a, lang, tb, pos, ahead.count(a, lang, tb) if ahead is not None else None)
                    for a, tb, pos in work)        # counted on the threads as soon as its text is ready
    for a, lang, tb, pos, coming in plan:
        if coming is not None:
            enc, cols = coming.result()
        else:
            enc = a.encode_spans(tb.texts)
            cols = count_batch(tb, enc, a)
        out[(a.id, lang)].add(tb, cols, enc, a, seq, bucket=bkt[pos])
        if job.keep_text and out[(a.id, lang)].rows:
            out[(a.id, lang)].rows[-1] = (seq, tb.ids, {**cols, "text": list(tb.texts)})
        t = np.full(n, -1, dtype=np.int64)
        t[pos] = np.where(cols["chars"] > 0, cols["tokens"], -1)
        tokens[(a.id, lang)] = t


def text_size(batch: list[Segment] | Columns) -> int:
    """UTF-8 bytes of a batch's texts (for progress)."""
    if isinstance(batch, Columns):
        return sum(len(t.encode("utf-8", "surrogatepass")) for v in batch.texts.values() for t in v if t)
    return sum(len(t.encode("utf-8")) for s in batch for t in s.texts.values())


def count_batches(job: Job, batch_iter: Iterable[list[Segment]], progress=None, seq0: int = 0) -> Stats:
    """One worker's loop: each batch counted and merged; batch ``k`` orders its rows as ``seq0 + k``."""
    acc = job.empty()
    for k, b in enumerate(batch_iter):
        count_segments(job, b, seq0 + k, into=acc)
        if progress:
            progress.advance(len(b), text_size(b))
    return acc


def count_stream(job: Job, segments: Iterable[Segment], batch_size: int, progress=None, seq0: int = 0) -> Stats:
    """:func:`count_batches` over ``segments`` cut into batches of ``batch_size``."""
    return count_batches(job, batches(segments, batch_size), progress, seq0)
