"""The adapter interface: ids without special tokens, plus the UTF-8 byte span of every token.

Byte spans are the common currency: a CJK character is 3 bytes, and a byte-level BPE token that
holds only some of them has a span that starts or ends inside the character. ``partial`` marks
exactly those tokens.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
from contextlib import contextmanager
from itertools import chain
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import TokstatError
from ..split import Split
from ..utf8 import char_boundaries, offsets, text_bytes


@dataclass
class Encoded:
    """A batch of encodings as flat arrays.

    ``ids[off[i]:off[i+1]]`` are the tokens of text ``i``; ``starts``/``ends`` their byte spans in
    that text's UTF-8 (zero-width for tokens that cover no input, such as SentencePiece's dummy
    prefix ``▁`` before a CJK character); ``partial`` is True where a span cuts a character.
    """

    ids: np.ndarray
    off: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    partial: np.ndarray

    def tokens(self, i: int) -> list[int]:
        return self.ids[self.off[i]:self.off[i + 1]].tolist()

    def spans(self, i: int) -> list[tuple[int, int]]:
        a, b = self.off[i], self.off[i + 1]
        return list(zip(self.starts[a:b].tolist(), self.ends[a:b].tolist()))

    def texts(self, a: int, b: int) -> Encoded:
        """The encodings of texts ``a`` to ``b - 1``, as their own batch (views, not copies)."""
        lo, hi = self.off[a], self.off[b]
        return Encoded(self.ids[lo:hi], self.off[a:b + 1] - lo, self.starts[lo:hi], self.ends[lo:hi],
                       self.partial[lo:hi])


_STDERR_LOCK = threading.Lock()
_PANIC = re.compile(rb"\n?^thread '[^\n]*' (?:\(\d+\) )?panicked at[^\n]*\n(?:.*\n)*?(?:note: [^\n]*\n|\Z)", re.M)


@contextmanager
def native_errors(ident: str):
    """Run a tokenizer library's native code so that its failures are one tokstat error: a Rust
    panic (a pre-tokenizer regex hitting onig's retry limit, a corrupt model) becomes a
    :class:`TokstatError` naming the tokenizer, and the panic report the library's runtime writes to
    file descriptor 2 is held back (everything else written there meanwhile is passed on)."""
    owner = _STDERR_LOCK.acquire(blocking=False)   # one redirection at a time; others just catch
    saved = tmp = None
    if owner:
        try:
            sys.stderr.flush()
            tmp = tempfile.TemporaryFile()
            saved = os.dup(2)
            os.dup2(tmp.fileno(), 2)
        except (OSError, ValueError, AttributeError):
            saved = None
    try:
        yield
    except BaseException as e:  # noqa: BLE001 - pyo3's PanicException derives from BaseException
        if type(e).__name__ != "PanicException":
            raise
        msg = str(e).splitlines()[0][:160] if str(e) else "a panic"
        raise TokstatError(f"the tokenizer library failed inside {ident} ({msg})",
                           fix="check the tokenizer's pre-tokenizer pattern (a regex that backtracks without "
                               "bound) or the file; shorten the text") from None
    finally:
        if saved is not None:
            try:
                sys.stderr.flush()
            except (OSError, ValueError, AttributeError):
                pass
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            rest = _PANIC.sub(b"", tmp.read())
            if rest:
                os.write(2, rest)
        if tmp is not None:
            tmp.close()
        if owner:
            _STDERR_LOCK.release()


def read_training_metadata(adapter: Adapter, path: Path) -> Adapter:
    """A tokenizer file written by ``tokstat train`` has ``metadata.json`` beside it: when that
    metadata names this very file (its sha256), the adapter gets the split it was trained with and
    the corpus it was trained on, so it is scored on its held-out segments again. Metadata that does
    not describe this file (edited, or another tokenizer's) is ignored."""
    import json

    meta_path = path.parent / "metadata.json"
    if not meta_path.is_file():
        return adapter
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("files", {}).get(path.name) != adapter.file_hash:
            return adapter
        sp = meta["split"]
        adapter.split = Split(float(sp["heldout_fraction"]), int(sp["seed"]))
        adapter.trained_on = str(meta["corpus"])
        pre = meta.get("pretokenizer")
        adapter.pretokenizer = pre if isinstance(pre, str) else None
    except (ValueError, KeyError, TypeError, AttributeError):
        return adapter
    return adapter

_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def id_space(ids, entries: int, where: object, what: str = "the vocabulary") -> int:
    """The size of the id space (largest id + 1) of a vocabulary of ``entries`` entries; an empty
    vocabulary, a negative id or one far beyond the entries (tokstat keeps per-id arrays: an id of
    10^12 would ask for terabytes) is one error naming the file.

    >>> id_space([0, 5, 2], 3, "v.json")
    6
    >>> id_space([10**12], 1, "v.json")
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: v.json: token id 1000000000000 in the vocabulary is far beyond its 1 entries (fix: ...)
    """
    from ..errors import TokstatError

    ids = list(ids)
    if not ids:
        raise TokstatError(f"{what} is empty (no token)", path=where, fix="pass a trained tokenizer with a vocabulary")
    lo, hi = min(ids), max(ids)
    if lo < 0:
        raise TokstatError(f"token id {lo} in {what} is negative", path=where, fix="token ids count from 0")
    if hi >= 16 * entries + 1_000_000:
        raise TokstatError(f"token id {hi} in {what} is far beyond its {entries:,} entries", path=where,
                           fix="renumber the ids from 0 (a vocabulary's ids are 0 .. size - 1, a few gaps at most)")
    return hi + 1


def byte_piece(piece: str) -> int | None:
    """The byte a byte-fallback piece (``<0xE4>``) stands for, or None for any other piece.

    >>> byte_piece("<0xE4>"), byte_piece("<0xZZ>"), byte_piece("ab")
    (228, None, None)
    """
    m = _BYTE_PIECE.fullmatch(piece)
    return int(m.group(1), 16) if m else None


def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, inverted: symbol -> byte.

    >>> byte_decoder()["Ġ"], byte_decoder()["a"]
    (32, 97)
    """
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}



def spans_from_lengths(lens: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Byte spans of consecutive tokens, restarting at 0 for each text.

    >>> [x.tolist() for x in spans_from_lengths(np.array([1, 3, 2, 2]), np.array([2, 2]))]
    [[0, 1, 0, 2], [1, 4, 2, 4]]
    """
    c = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=c[1:])
    ends = c[1:] - np.repeat(c[offsets(counts)[:-1]], counts)
    return ends - lens, ends




def unspelt(lens: np.ndarray, counts: np.ndarray, texts: list[str], nbytes: np.ndarray | None = None) -> np.ndarray:
    """Indices of the texts whose tokens' byte lengths (``lens``, flat; ``counts`` per text) do not
    add up to the text's UTF-8 length (``nbytes`` when the caller has it): a normaliser changed
    them, or the ids are wrong.

    >>> unspelt(np.array([1, 2, 3]), np.array([2, 1]), ["abc", "ab"]).tolist()
    [1]
    """
    if nbytes is None:
        nbytes = np.fromiter((len(t) if t.isascii() else len(t.encode("utf-8")) for t in texts), dtype=np.int64,
                             count=len(texts))
    return np.flatnonzero(segment_sums(lens, counts) != nbytes)


def segment_sums(values: np.ndarray, counts: np.ndarray, part: int = 256) -> np.ndarray:
    """The sum (int64) of each of the consecutive segments of ``values`` that ``counts`` gives,
    without a running total as long as ``values`` (``np.add.reduceat`` over the non-empty ones).

    uint8 values (tiktoken's token lengths) are added in two steps: in uint16 over parts of at most
    ``part`` values cut at every segment start and every ``part``-th value (256 values of at most 255
    add up to 65,280: exact), then the parts of each segment in int64. numpy's reduceat adds uint8
    into uint16 about ten times faster than into int64, which casts every value (10M values in 9,000
    segments, measured: 11.8 ms in one int64 reduceat, 3.1 ms in these two steps).

    >>> segment_sums(np.array([1, 2, 3, 4], dtype=np.uint16), np.array([2, 0, 2, 0])).tolist()
    [3, 0, 7, 0]
    >>> segment_sums(np.full(5, 255, dtype=np.uint8), np.array([3, 2]), part=2).tolist()
    [765, 510]
    """
    out = np.zeros(len(counts), dtype=np.int64)
    some = slice(None) if len(counts) and counts.all() else np.flatnonzero(counts)
    starts = offsets(counts)[:-1][some]
    if not len(starts):
        return out
    if values.dtype == np.uint8 and 0 < part <= 257:
        cuts = np.concatenate([starts, np.arange(0, len(values), part)])
        cuts.sort()                     # (np.union1d, through np.unique: 6.7 ms here against 0.1)
        cuts = cuts[np.concatenate([[True], cuts[1:] != cuts[:-1]])]   # each part <= `part` values
        parts = np.add.reduceat(values, cuts, dtype=np.uint16)
        out[some] = np.add.reduceat(parts, np.searchsorted(cuts, starts), dtype=np.int64)
    else:
        out[some] = np.add.reduceat(values, starts, dtype=np.int64)
    return out


def fix_byte_runs(ids: np.ndarray, counts: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                  is_byte: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Give each byte-fallback token of a run its own byte: libraries report the whole character
    (or a zero-width span) for each of them. ``<0xE4><0xBD><0xA0>`` at byte 0 -> (0,1), (1,2), (2,3).

    >>> [x.tolist() for x in fix_byte_runs(np.array([5, 1, 1, 1]), np.array([1, 3]), np.array([0, 0, 0, 0]),
    ...                                    np.array([2, 3, 3, 3]), np.array([False, True] + [False] * 4))]
    [[0, 0, 1, 2], [2, 1, 2, 3]]
    """
    mask = is_byte[ids]
    if not mask.any():
        return starts, ends
    run_start = mask.copy()
    run_start[1:] &= ~mask[:-1]
    first_tok = offsets(counts)[:-1][counts > 0]
    run_start[first_tok] = mask[first_tok]           # a run never continues into the next text
    idx = np.arange(len(ids))
    first = np.maximum.accumulate(np.where(run_start, idx, 0))
    s, e = starts.copy(), ends.copy()
    s[mask] = starts[first[mask]] + (idx[mask] - first[mask])
    e[mask] = s[mask] + 1
    return s, e


def monotone(starts: np.ndarray, ends: np.ndarray):
    """Make spans non-decreasing and non-overlapping. Normalisers that decompose text (BERT's
    accent stripping turns Hangul syllables into jamo) make libraries report offsets that step back;
    each span is clipped to start where the previous one ended. Works on global (batch) offsets.

    >>> [x.tolist() for x in monotone(np.array([0, 2, 1]), np.array([2, 4, 3]))]
    [[0, 2, 4], [2, 4, 4]]
    """
    if not len(starts):
        return starts, ends
    e = np.maximum.accumulate(ends)
    prev = np.concatenate([[0], e[:-1]])
    s = np.minimum(np.maximum(starts, prev), e)
    return s, e


def from_lists(ids: list[list[int]], starts: list[list[int]], ends: list[list[int]]):
    """The flat ``(ids, counts, starts, ends)`` of :meth:`Adapter._encode` from per-text lists."""
    (i, counts), (s, _), (e, _) = flatten(ids), flatten(starts), flatten(ends)
    return i, counts, s, e


def flatten(lists: list, count: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Flat int64 array and per-list counts of a list of int lists (tokens of each text)."""
    counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    flat = np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=int(counts.sum()))
    return flat, counts


class Adapter:
    """Base class. Subclasses set the attributes and implement :meth:`_encode` returning flat arrays
    ``(ids, counts, starts, ends)`` with byte spans. ``threads`` caps the library's own thread pool
    (0: the library's default; ``--workers`` sets 1 inside each worker process)."""

    id: str = ""
    family: str = ""
    algorithm: str = ""
    vocab_size: int = 0          # regular (non-special) tokens the tokenizer can emit
    n_ids: int = 0               # size of the id space (for histograms)
    library_version: str = ""
    file_hash: str = ""          # sha256 of the files (or of the definition) behind this tokenizer
    unk_ids: frozenset = frozenset()
    byte_fallback: np.ndarray | None = None  # bool mask over ids
    threads: int = 0
    #: for a tokenizer tokstat trained on the corpus: the split it was trained with (it is scored on
    #: that split's held-out segments only); None for a pretrained tokenizer
    split: Split | None = None
    #: ``NAME@FINGERPRINT8`` of the corpus it was trained on (from ``metadata.json``), else None
    trained_on: str | None = None
    #: for byte-level BPE tokstat trained: the pre-tokenizer it was trained with (named in signatures)
    pretokenizer: str | None = None

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        """Token ids per text, special tokens excluded (the ids alone: no character boundaries computed)."""
        if not len(texts):
            return []
        with native_errors(self.id):
            ids, counts = self._encode(texts)[:2]
        ids = np.asarray(ids, dtype=np.int64)
        return [x.tolist() for x in np.split(ids, np.cumsum(np.asarray(counts, dtype=np.int64))[:-1])]

    def token_counts(self, texts: list[str], nbytes: np.ndarray | None = None) -> np.ndarray:
        """Tokens per text (special tokens excluded), without the spans: what a budget counts.
        ``nbytes``: the texts' UTF-8 lengths when the caller has them (saves measuring them again)."""
        with native_errors(self.id):
            return np.asarray(self._encode(texts)[1], dtype=np.int64)

    def encode_spans(self, texts: list[str]) -> Encoded:
        with native_errors(self.id):
            ids, counts, starts, ends = self._encode(texts)
        off = offsets(counts)
        buf, base = text_bytes(texts)
        isb = char_boundaries(buf)
        seg = np.repeat(np.arange(len(texts)), counts)
        partial = ~(isb[starts + base[seg]] & isb[ends + base[seg]])
        return Encoded(ids, off, starts, ends, partial)

    def decode(self, ids: list[int]) -> str:
        """The text the library's own decoder gives back for ``ids`` (special tokens kept)."""
        raise NotImplementedError

    def encodes(self, text: str) -> bool:
        """Can it encode ``text``? Every tokenizer can; token ids given elsewhere only cover their texts."""
        return True

    def _encode(self, texts):  # pragma: no cover - abstract
        """Flat ``(ids, counts, starts, ends)``: ids of all texts, tokens per text, byte spans within each text."""
        raise NotImplementedError

    @property
    def signature(self) -> str:
        return f"{self.id}@{self.file_hash[:8]}"

