"""UTF-8 arithmetic on flat numpy arrays, shared by the adapters (byte spans) and the counts.

Byte spans are the common currency of tokstat: every token is a ``[start, end)`` range of its text's
UTF-8, so a token that holds only some bytes of a character (byte-level BPE on CJK) is visible.
"""

from __future__ import annotations

import numpy as np


def text_bytes(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated UTF-8 of ``texts`` as uint8 and the byte offset of each text (length n+1).

    >>> buf, base = text_bytes(["a", "你"])
    >>> len(buf), base.tolist()
    (4, [0, 1, 4])
    """
    enc = [t.encode("utf-8") for t in texts]
    base = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in enc], out=base[1:])
    return np.frombuffer(b"".join(enc), dtype=np.uint8), base


def utf8_lengths(cp: np.ndarray) -> np.ndarray:
    """UTF-8 bytes of each code point.

    >>> utf8_lengths(np.array([0x41, 0xE9, 0x4F60, 0x1D11E])).tolist()
    [1, 2, 3, 4]
    """
    return (1 + (cp >= 0x80) + (cp >= 0x800) + (cp >= 0x10000)).astype(np.int64)


def char_boundaries(buf: np.ndarray) -> np.ndarray:
    """``isb[p]`` is True when byte position ``p`` (0..len) is a character boundary.

    >>> char_boundaries(np.frombuffer("a你".encode(), dtype=np.uint8)).tolist()
    [True, True, False, False, True]
    """
    isb = np.ones(len(buf) + 1, dtype=bool)
    isb[:-1] = (buf & 0xC0) != 0x80
    return isb


def offsets(counts: np.ndarray) -> np.ndarray:
    """Start offsets (length n+1) of runs of ``counts``.

    >>> offsets(np.array([2, 0, 3])).tolist()
    [0, 2, 2, 5]
    """
    off = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    return off


def char_to_byte(texts: list[str], seg: np.ndarray, char_pos: np.ndarray) -> np.ndarray:
    """Byte offsets, within each text, of character offsets ``char_pos`` of texts ``seg`` (any shape).

    >>> char_to_byte(["a你", "é"], np.array([[0, 0], [1, 1]]), np.array([[1, 2], [0, 1]])).tolist()
    [[1, 4], [0, 2]]
    """
    cp = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
    cb = np.zeros(len(cp) + 1, dtype=np.int64)
    np.cumsum(utf8_lengths(cp), out=cb[1:])
    cbase = offsets(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)))
    return cb[cbase[seg] + char_pos] - cb[cbase[seg]]
