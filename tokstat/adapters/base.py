"""The adapter interface: ids without special tokens, plus the UTF-8 byte span of every token.

Byte spans are the common currency: a CJK character is 3 bytes, and a byte-level BPE token that
holds only some of them has a span that starts or ends inside the character. ``partial`` marks
exactly those tokens.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np


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


def sha256_files(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def text_bytes(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated UTF-8 of ``texts`` as uint8 and the byte offset of each text (length n+1)."""
    enc = [t.encode("utf-8") for t in texts]
    base = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in enc], out=base[1:])
    return np.frombuffer(b"".join(enc), dtype=np.uint8), base


def utf8_lengths(cp: np.ndarray) -> np.ndarray:
    """UTF-8 bytes of each code point: ``utf8_lengths(np.array([0x41, 0xE9, 0x4F60, 0x1D11E]))`` -> 1, 2, 3, 4."""
    return (1 + (cp >= 0x80) + (cp >= 0x800) + (cp >= 0x10000)).astype(np.int64)


def char_boundaries(buf: np.ndarray) -> np.ndarray:
    """``isb[p]`` is True when byte position ``p`` (0..len) is a character boundary."""
    isb = np.ones(len(buf) + 1, dtype=bool)
    isb[:-1] = (buf & 0xC0) != 0x80
    return isb


def finish(ids_list: list, starts_list: list, ends_list: list, texts: list[str]) -> Encoded:
    """Flatten per-text arrays and compute ``partial`` from the texts' character boundaries."""
    counts = np.array([len(x) for x in ids_list], dtype=np.int64)
    off = np.zeros(len(ids_list) + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    cat = (lambda xs: np.concatenate([np.asarray(x, dtype=np.int64) for x in xs]) if xs else
           np.zeros(0, dtype=np.int64))
    ids, starts, ends = cat(ids_list), cat(starts_list), cat(ends_list)
    buf, base = text_bytes(texts)
    isb = char_boundaries(buf)
    seg = np.repeat(np.arange(len(ids_list)), counts)
    g0, g1 = starts + base[seg], ends + base[seg]
    partial = ~(isb[g0] & isb[g1]) if len(ids) else np.zeros(0, dtype=bool)
    return Encoded(ids, off, starts, ends, partial)


class Adapter:
    """Base class. Subclasses set the attributes and implement :meth:`_encode` returning, per text,
    ``(ids, starts, ends)`` with byte spans."""

    id: str = ""
    family: str = ""
    algorithm: str = ""
    vocab_size: int = 0          # regular (non-special) tokens the tokenizer can emit
    n_ids: int = 0               # size of the id space (for histograms)
    library_version: str = ""
    file_hash: str = ""          # sha256 of the files (or of the definition) behind this tokenizer
    unk_ids: frozenset = frozenset()
    byte_fallback: np.ndarray | None = None  # bool mask over ids

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        """Token ids per text, special tokens excluded."""
        enc = self.encode_spans(texts)
        return [enc.tokens(i) for i in range(len(texts))]

    def encode_spans(self, texts: list[str]) -> Encoded:
        ids, starts, ends = self._encode(texts)
        return finish(ids, starts, ends, texts)

    def _encode(self, texts):  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def signature(self) -> str:
        return f"{self.id}@{self.file_hash[:8]}"


def fix_byte_runs(ids, starts, ends, is_byte: np.ndarray):
    """Give each byte-fallback token of a run its own byte: libraries report the whole character
    (or a zero-width span) for each of them. ``<0xE4><0xBD><0xA0>`` at byte 0 -> (0,1), (1,2), (2,3)."""
    ids = np.asarray(ids)
    mask = is_byte[ids]
    if not mask.any():
        return starts, ends
    starts, ends = np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)
    cursor = None
    for k in np.flatnonzero(mask):
        if cursor is None or not (k > 0 and mask[k - 1]):
            cursor = starts[k]
        starts[k], ends[k] = cursor, cursor + 1
        cursor += 1
    return starts, ends


def monotone(starts: np.ndarray, ends: np.ndarray):
    """Make spans non-decreasing and non-overlapping. Normalisers that decompose text (BERT's
    accent stripping turns Hangul syllables into jamo) make libraries report offsets that step back;
    each span is clipped to start where the previous one ended.

    >>> [x.tolist() for x in monotone(np.array([0, 2, 1]), np.array([2, 4, 3]))]
    [[0, 2, 4], [2, 4, 4]]
    """
    if not len(starts):
        return starts, ends
    e = np.maximum.accumulate(ends)
    prev = np.concatenate([[0], e[:-1]])
    s = np.minimum(np.maximum(starts, prev), e)
    return s, e
