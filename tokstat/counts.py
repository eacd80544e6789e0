"""Per-segment sufficient statistics, computed for a whole batch with flat numpy arrays.

Everything downstream is a sum of these columns (plus a token histogram and a set of CJK
characters), so two shards' counts merge exactly: concatenating rows and adding histograms gives
the counts of the union.
"""

from __future__ import annotations

import zlib
from itertools import chain
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import polars as pl

from .adapters.base import Adapter, Encoded
from .utf8 import char_boundaries, text_bytes, utf8_lengths

#: Unicode White_Space code points
WHITESPACE = np.array([9, 10, 11, 12, 13, 32, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
                       0x202F, 0x205F, 0x3000], dtype=np.uint32)
#: Han, kana and Hangul ranges counted as "CJK characters"
CJK_RANGES = [(0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF),
              (0x20000, 0x3134F)]
COLUMNS = ["chars", "bytes", "words", "tokens", "continued_words", "split_chars", "unk_chars",
           "byte_fallback_tokens", "boundary_tp", "token_boundaries", "word_boundaries"]


def is_cjk(cp: np.ndarray) -> np.ndarray:
    m = np.zeros(cp.shape, dtype=bool)
    for a, b in CJK_RANGES:
        m |= (cp >= a) & (cp <= b)
    return m


@dataclass
class TextBatch:
    """Texts of one language, prepared once and shared by every tokenizer."""

    texts: list[str]
    ids: list[str]
    buf: np.ndarray            # concatenated UTF-8
    base: np.ndarray           # byte offset of each text (n+1)
    cp: np.ndarray             # code points of the concatenation
    nw: np.ndarray             # number of non-whitespace bytes before each byte position
    word_starts: np.ndarray | None  # global byte spans of words
    word_ends: np.ndarray | None
    word_seg: np.ndarray | None

    @classmethod
    def build(cls, texts: list[str], ids: list[str], words: list[list[tuple[int, int]]] | None) -> TextBatch:
        buf, base = text_bytes(texts)
        joined = "".join(texts)
        cp = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
        blen = utf8_lengths(cp)
        nonws = np.repeat(~np.isin(cp, WHITESPACE), blen)
        nw = np.zeros(len(buf) + 1, dtype=np.int64)
        np.cumsum(nonws, out=nw[1:])
        ws = we = wseg = None
        if words is not None:
            cbyte = np.zeros(len(cp) + 1, dtype=np.int64)
            np.cumsum(blen, out=cbyte[1:])
            cbase = np.zeros(len(texts) + 1, dtype=np.int64)
            np.cumsum([len(t) for t in texts], out=cbase[1:])
            nwords = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
            flat = np.fromiter(chain.from_iterable(chain.from_iterable(words)), dtype=np.int64,
                               count=2 * int(nwords.sum())).reshape(-1, 2)
            wseg = np.repeat(np.arange(len(texts)), nwords)
            ws = cbyte[flat[:, 0] + cbase[wseg]]
            we = cbyte[flat[:, 1] + cbase[wseg]]
        return cls(texts, ids, buf, base, cp, nw, ws, we, wseg)

    # what every tokenizer's counts need of the text, computed once per batch (not per tokenizer)
    @cached_property
    def isb(self) -> np.ndarray:
        """Is each byte position (and the end) a character boundary?"""
        return char_boundaries(self.buf)

    @cached_property
    def ccum(self) -> np.ndarray:
        """Characters starting before each byte position."""
        c = np.zeros(len(self.buf) + 1, dtype=np.int64)
        np.cumsum(self.isb[:-1], out=c[1:])
        return c

    @cached_property
    def first_byte(self) -> np.ndarray:
        """Byte position of each character."""
        return np.flatnonzero(self.isb[:-1])

    @cached_property
    def word_keys(self) -> np.ndarray | None:
        """:meth:`boundary_keys` of the words."""
        return None if self.word_starts is None else self.boundary_keys(self.word_starts, self.word_ends, self.word_seg)

    def boundary_keys(self, starts: np.ndarray, ends: np.ndarray, sseg: np.ndarray) -> np.ndarray:
        """Sorted unique ``segment << 32 | position`` of the span boundaries ``starts``/``ends``
        (global bytes; ``sseg`` their segments) in whitespace-free coordinates, both text ends
        excluded; a cut inside a character is an odd half-position, distinct from every character
        boundary."""
        seg_nw0 = self.nw[self.base[:-1]]
        seg_nwt = self.nw[self.base[1:]] - seg_nw0
        pos = np.column_stack([starts, ends]).ravel()     # interleaved: in text order
        s2 = np.repeat(sseg, 2)
        q = self.nw[pos] - seg_nw0[s2]
        q2 = 2 * q + (~self.isb[pos]).astype(np.int64)
        keep = (q > 0) & (q < seg_nwt[s2])
        return _unique_keys(s2[keep], q2[keep])


def _unique_keys(seg: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Sorted unique ``seg << 32 | pos`` keys; linear when the keys already come sorted (they do for
    spans in text order), a sort otherwise."""
    keys = seg.astype(np.int64) << 32 | pos.astype(np.int64)
    if len(keys) < 2:
        return keys
    d = np.diff(keys)
    if (d < 0).any():
        return np.unique(keys)
    return keys[np.concatenate([[True], d != 0])]


def _intersect_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elements of sorted unique ``a`` that are in sorted unique ``b``."""
    if not len(b):
        return b
    i = np.minimum(np.searchsorted(b, a), len(b) - 1)
    return a[b[i] == a]


def count_batch(tb: TextBatch, enc: Encoded, adapter: Adapter) -> dict[str, np.ndarray]:
    """Per-segment columns (see ``COLUMNS``) for one language batch and one tokenizer."""
    n = len(tb.texts)
    isb, ccum = tb.isb, tb.ccum
    counts = np.diff(enc.off)
    seg = np.repeat(np.arange(n), counts)
    gs, ge = enc.starts + tb.base[seg], enc.ends + tb.base[seg]
    nz = ge > gs
    ts, te, tseg = gs[nz], ge[nz], seg[nz]
    out = {"chars": np.diff(ccum[tb.base]), "bytes": np.diff(tb.base), "tokens": counts}
    # characters cut by a token boundary that falls inside them
    cuts = np.concatenate([ts, te])
    inner = cuts[~isb[cuts]]
    split_chars = np.unique(ccum[inner] - 1)   # index of the character containing each cut
    out["split_chars"] = np.bincount(np.searchsorted(tb.base, tb.first_byte[split_chars], "right") - 1,
                                     minlength=n)
    unk = np.isin(enc.ids, list(adapter.unk_ids)) if adapter.unk_ids else np.zeros(len(enc.ids), bool)
    out["unk_chars"] = np.bincount(seg[unk], weights=ccum[ge[unk]] - ccum[gs[unk]], minlength=n).astype(np.int64)
    bf = adapter.byte_fallback[enc.ids] if adapter.byte_fallback is not None else np.zeros(len(enc.ids), bool)
    out["byte_fallback_tokens"] = np.bincount(seg[bf], minlength=n)
    bt = tb.boundary_keys(ts, te, tseg)
    out["token_boundaries"] = np.bincount(bt >> 32, minlength=n)
    if tb.word_starts is not None:
        first = np.searchsorted(te, tb.word_starts, "right")
        last = np.searchsorted(ts, tb.word_ends, "left")
        bw = tb.word_keys
        out["words"] = np.bincount(tb.word_seg, minlength=n)
        out["continued_words"] = np.bincount(tb.word_seg[(last - first) >= 2], minlength=n)
        out["word_boundaries"] = np.bincount(bw >> 32, minlength=n)
        out["boundary_tp"] = np.bincount(_intersect_sorted(bt, bw) >> 32, minlength=n)
    else:
        for k in ("words", "continued_words", "word_boundaries", "boundary_tp"):
            out[k] = np.full(n, -1, dtype=np.int64)
    return {k: np.asarray(out[k], dtype=np.int64) for k in COLUMNS}


#: segments are grouped into this many hash buckets (by id) for the premium's bootstrap
BUCKETS = 4096
#: per-segment ratios are summed in fixed point (exact, order-independent integer sums): 2^-20 ≈ 1e-6
RATIO_SCALE = 1 << 20
_IDX = {c: i for i, c in enumerate(COLUMNS)}


def buckets(ids: list[str]) -> np.ndarray:
    """Bootstrap bucket of each segment id: crc32(id) mod ``BUCKETS`` (order- and shard-independent)."""
    return np.fromiter((zlib.crc32(i.encode()) for i in ids), dtype=np.int64, count=len(ids)) % BUCKETS


@dataclass
class LangStats:
    """Exact, mergeable statistics of one (tokenizer, language); memory does not grow with the corpus.

    * ``sums``: column totals (``COLUMNS``) over live (non-empty) segments; ``segments``/``empty``
      count them; ``words_known`` is False when the language has no word segmentation;
    * ``histogram``: tokens per id; ``cjk``: distinct CJK code points seen;
    * ``lengths``: number of live segments per token count (exact percentiles);
    * ``pair_*``: per bootstrap bucket, tokens of this language and of the pivot on segments where
      both are live, and how many such segments (the premium and its bootstrap); the sum of the
      per-segment ratios in fixed point and their count (the mean-of-ratios premium);
    * ``rows``: per-segment rows as ``(batch sequence number, ids, columns)``, kept only when asked for
      (``--segments-out``); :meth:`frame` puts them in corpus order.

    ``a.merge(b)`` equals the statistics of the union of their segments, in any order.
    """

    sums: np.ndarray = field(default_factory=lambda: np.zeros(len(COLUMNS), dtype=np.int64))
    segments: int = 0
    empty: int = 0
    words_known: bool = True
    histogram: np.ndarray | None = None
    cjk: set[int] = field(default_factory=set)
    lengths: dict[int, int] = field(default_factory=dict)
    pair_lang: np.ndarray = field(default_factory=lambda: np.zeros(BUCKETS, dtype=np.int64))
    pair_pivot: np.ndarray = field(default_factory=lambda: np.zeros(BUCKETS, dtype=np.int64))
    pair_n: np.ndarray = field(default_factory=lambda: np.zeros(BUCKETS, dtype=np.int64))
    #: per bucket: Σ round(tokens/pivot tokens · RATIO_SCALE) and the number of such segments (pivot > 0)
    pair_ratio: np.ndarray = field(default_factory=lambda: np.zeros(BUCKETS, dtype=np.int64))
    pair_rn: np.ndarray = field(default_factory=lambda: np.zeros(BUCKETS, dtype=np.int64))
    rows: list[tuple[int, list[str], dict[str, np.ndarray]]] | None = None
    #: per bucket: this language's tokens, characters and bytes (intervals over segments/documents)
    own_tokens: np.ndarray = field(default_factory=lambda: np.zeros(BUCKETS, dtype=np.int64))
    own_chars: np.ndarray = field(default_factory=lambda: np.zeros(BUCKETS, dtype=np.int64))
    own_bytes: np.ndarray = field(default_factory=lambda: np.zeros(BUCKETS, dtype=np.int64))

    def add(self, tb: TextBatch, cols: dict[str, np.ndarray], enc: Encoded, adapter: Adapter, seq: int = 0,
            bucket: np.ndarray | None = None) -> None:
        """Add one batch: ``cols`` from :func:`count_batch` on ``tb`` and ``enc``; ``bucket``: each
        segment's hash bucket (:func:`buckets` of its id; computed here when not given)."""
        live = cols["chars"] > 0
        b = (buckets(tb.ids) if bucket is None else bucket)[live]
        for arr, c in ((self.own_tokens, "tokens"), (self.own_chars, "chars"), (self.own_bytes, "bytes")):
            arr += np.bincount(b, weights=cols[c][live], minlength=BUCKETS).astype(np.int64)
        self.segments += int(live.sum())
        self.empty += int((~live).sum())
        if live.any():
            self.words_known &= bool(cols["words"][live].min() >= 0)
        self.sums += np.array([int(cols[c][live].sum()) for c in COLUMNS], dtype=np.int64)
        h = np.bincount(enc.ids, minlength=adapter.n_ids)
        if self.histogram is None:
            self.histogram = h
        else:
            self.histogram += h
        self.cjk.update(np.unique(tb.cp[is_cjk(tb.cp)]).tolist())
        v, n = np.unique(cols["tokens"][live], return_counts=True)
        for a, b in zip(v.tolist(), n.tolist()):
            self.lengths[a] = self.lengths.get(a, 0) + b
        if self.rows is not None:
            self.rows.append((seq, tb.ids, cols))   # plain arrays: worker processes never touch polars

    def add_pairs(self, bucket: np.ndarray, lang_tokens: np.ndarray, pivot_tokens: np.ndarray) -> None:
        """Segments (already restricted to those live in both languages) for the premium."""
        self.pair_lang += np.bincount(bucket, weights=lang_tokens, minlength=BUCKETS).astype(np.int64)
        self.pair_pivot += np.bincount(bucket, weights=pivot_tokens, minlength=BUCKETS).astype(np.int64)
        self.pair_n += np.bincount(bucket, minlength=BUCKETS)
        ok = pivot_tokens > 0
        fp = np.rint(lang_tokens[ok] / pivot_tokens[ok] * RATIO_SCALE).astype(np.int64)
        np.add.at(self.pair_ratio, bucket[ok], fp)     # integer adds: exact in any order
        self.pair_rn += np.bincount(bucket[ok], minlength=BUCKETS)

    def merge(self, other: LangStats) -> LangStats:
        h = other.histogram if self.histogram is None else (
            self.histogram if other.histogram is None else self.histogram + other.histogram)
        lengths = dict(self.lengths)
        for k, v in other.lengths.items():
            lengths[k] = lengths.get(k, 0) + v
        rows = None if self.rows is None and other.rows is None else (self.rows or []) + (other.rows or [])
        return LangStats(self.sums + other.sums, self.segments + other.segments, self.empty + other.empty,
                         self.words_known and other.words_known, h, self.cjk | other.cjk, lengths,
                         self.pair_lang + other.pair_lang, self.pair_pivot + other.pair_pivot,
                         self.pair_n + other.pair_n, self.pair_ratio + other.pair_ratio, self.pair_rn + other.pair_rn,
                         rows, self.own_tokens + other.own_tokens, self.own_chars + other.own_chars,
                         self.own_bytes + other.own_bytes)

    def __getstate__(self) -> dict:
        """Pickled sparse (a worker's result crosses a process boundary): nonzero histogram entries only."""
        d = dict(self.__dict__)
        h = d.pop("histogram")
        if h is not None:
            nz = np.flatnonzero(h)
            d["_hist"] = (len(h), nz.astype(np.int32), h[nz])
        return d

    def __setstate__(self, d: dict) -> None:
        packed = d.pop("_hist", None)
        self.__dict__.update(d)
        self.histogram = None
        if packed is not None:
            n, nz, v = packed
            self.histogram = np.zeros(n, dtype=np.int64)
            self.histogram[nz] = v

    def total(self, column: str) -> int:
        return int(self.sums[_IDX[column]])

    def frame(self) -> pl.DataFrame:
        """Per-segment rows (only when the stats were built with ``rows=[]``)."""
        if not self.rows:
            return pl.DataFrame(schema={"segment": pl.String, **{c: pl.Int64 for c in COLUMNS}})
        if any("text" in cols for _, _, cols in self.rows):
            return pl.concat([pl.DataFrame({"segment": ids, **{k: v for k, v in cols.items() if k != "text"},
                                            "text": pl.Series(cols.get("text", [None] * len(ids)), dtype=pl.String)})
                              for _, ids, cols in sorted(self.rows, key=lambda r: r[0])])
        return pl.concat([pl.DataFrame({"segment": ids, **cols})
                          for _, ids, cols in sorted(self.rows, key=lambda r: r[0])])


def percentile_from_counts(values: np.ndarray, counts: np.ndarray, q: float) -> float:
    """``np.percentile(np.repeat(values, counts), q)`` (linear interpolation) without the repeat.

    >>> percentile_from_counts(np.array([1, 2, 10]), np.array([2, 1, 1]), 50)
    1.5
    """
    order = np.argsort(values)
    v, c = values[order], np.cumsum(counts[order])
    h = (c[-1] - 1) * q / 100
    lo, hi = int(np.floor(h)), int(np.ceil(h))
    x_lo, x_hi = v[np.searchsorted(c, lo, "right")], v[np.searchsorted(c, hi, "right")]
    return float(x_lo + (h - lo) * (x_hi - x_lo))
