"""Per-segment sufficient statistics, computed for a whole batch with flat numpy arrays.

Everything downstream is a sum of these columns (plus a token histogram and a set of CJK
characters), so two shards' counts merge exactly: concatenating rows and adding histograms gives
the counts of the union.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from .adapters.base import Adapter, Encoded, char_boundaries, text_bytes, utf8_lengths

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
            nwords = np.array([len(w) for w in words], dtype=np.int64)
            flat = np.array([x for w in words for x in w], dtype=np.int64).reshape(-1, 2)
            wseg = np.repeat(np.arange(len(texts)), nwords)
            ws = cbyte[flat[:, 0] + cbase[wseg]]
            we = cbyte[flat[:, 1] + cbase[wseg]]
        return cls(texts, ids, buf, base, cp, nw, ws, we, wseg)


def _unique_keys(seg: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return np.unique(seg.astype(np.int64) << 32 | pos.astype(np.int64))


def count_batch(tb: TextBatch, enc: Encoded, adapter: Adapter) -> dict[str, np.ndarray]:
    """Per-segment columns (see ``COLUMNS``) for one language batch and one tokenizer."""
    n = len(tb.texts)
    isb = char_boundaries(tb.buf)
    ccum = np.zeros(len(tb.buf) + 1, dtype=np.int64)
    np.cumsum(isb[:-1], out=ccum[1:])          # characters starting before each byte position
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
    first_byte = np.flatnonzero(isb[:-1])
    out["split_chars"] = np.bincount(np.searchsorted(tb.base, first_byte[split_chars], "right") - 1,
                                     minlength=n)
    unk = np.isin(enc.ids, list(adapter.unk_ids)) if adapter.unk_ids else np.zeros(len(enc.ids), bool)
    out["unk_chars"] = np.bincount(seg[unk], weights=ccum[ge[unk]] - ccum[gs[unk]], minlength=n).astype(np.int64)
    bf = adapter.byte_fallback[enc.ids] if adapter.byte_fallback is not None else np.zeros(len(enc.ids), bool)
    out["byte_fallback_tokens"] = np.bincount(seg[bf], minlength=n)
    # token boundaries in whitespace-free coordinates, excluding both text ends
    seg_nw0 = tb.nw[tb.base[:-1]]
    seg_nwt = tb.nw[tb.base[1:]] - seg_nw0

    def boundaries(starts, ends, sseg):
        pos = np.concatenate([starts, ends])
        s2 = np.concatenate([sseg, sseg])
        q = tb.nw[pos] - seg_nw0[s2]
        # a cut inside a character is made distinct from character boundaries (odd half-positions)
        q2 = 2 * q + (~isb[pos]).astype(np.int64)
        keep = (q > 0) & (q < seg_nwt[s2])
        return _unique_keys(s2[keep], q2[keep])

    bt = boundaries(ts, te, tseg)
    out["token_boundaries"] = np.bincount(bt >> 32, minlength=n)
    if tb.word_starts is not None:
        first = np.searchsorted(te, tb.word_starts, "right")
        last = np.searchsorted(ts, tb.word_ends, "left")
        out["words"] = np.bincount(tb.word_seg, minlength=n)
        out["continued_words"] = np.bincount(tb.word_seg[(last - first) >= 2], minlength=n)
        bw = boundaries(tb.word_starts, tb.word_ends, tb.word_seg)
        out["word_boundaries"] = np.bincount(bw >> 32, minlength=n)
        out["boundary_tp"] = np.bincount(np.intersect1d(bt, bw, assume_unique=True) >> 32, minlength=n)
    else:
        for k in ("words", "continued_words", "word_boundaries", "boundary_tp"):
            out[k] = np.full(n, -1, dtype=np.int64)
    return {k: np.asarray(out[k], dtype=np.int64) for k in COLUMNS}


@dataclass
class LangCounts:
    """Mergeable counts of one (tokenizer, language): per-segment rows, token histogram, CJK chars."""

    rows: list[pl.DataFrame] = field(default_factory=list)
    histogram: np.ndarray | None = None
    cjk: set[int] = field(default_factory=set)

    def add(self, tb: TextBatch, enc: Encoded, adapter: Adapter) -> None:
        cols = count_batch(tb, enc, adapter)
        self.rows.append(pl.DataFrame({"segment": tb.ids, **cols}))
        h = np.bincount(enc.ids, minlength=adapter.n_ids)
        self.histogram = h if self.histogram is None else self.histogram + h
        self.cjk.update(np.unique(tb.cp[is_cjk(tb.cp)]).tolist())

    def merge(self, other: LangCounts) -> LangCounts:
        h = other.histogram if self.histogram is None else (
            self.histogram if other.histogram is None else self.histogram + other.histogram)
        return LangCounts(self.rows + other.rows, h, self.cjk | other.cjk)

    def frame(self) -> pl.DataFrame:
        if not self.rows:
            return pl.DataFrame(schema={"segment": pl.String, **{c: pl.Int64 for c in COLUMNS}})
        return pl.concat(self.rows)
