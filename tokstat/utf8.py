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


def numpy_of(arr) -> np.ndarray:
    """An Arrow array of integers or booleans without nulls as numpy, read from its buffers: pyarrow's
    own ``to_numpy`` (and ``pa.array`` on Python objects) imports pandas, 0.25 CPU s in every worker.

    >>> import pyarrow as pa
    >>> numpy_of(pa.array([True, False, True]).slice(1)).tolist(), numpy_of(pa.array([5, 6], pa.int32())).tolist()
    ([False, True], [5, 6])
    """
    import pyarrow as pa

    if arr.null_count:
        raise ValueError("an array with nulls has no numpy view")
    n, at = len(arr), arr.offset
    if pa.types.is_boolean(arr.type):
        bits = np.frombuffer(arr.buffers()[1], dtype=np.uint8) if n else np.zeros(0, dtype=np.uint8)
        return np.unpackbits(bits, count=at + n, bitorder="little")[at:].astype(bool)
    t = arr.type
    dt = np.dtype(f"{'i' if pa.types.is_signed_integer(t) else 'u'}{t.bit_width // 8}")
    return np.frombuffer(arr.buffers()[1], dtype=dt)[at:at + n] if n else np.zeros(0, dtype=dt)


def arrow_of(values: np.ndarray):
    """A numpy array of booleans or int64 as an Arrow array, without pyarrow's Python-object path."""
    import pyarrow as pa

    if values.dtype == bool:
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(np.packbits(values, bitorder="little"))])
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(np.ascontiguousarray(values, np.int64))])


class FlatTexts:
    """Texts held as one UTF-8 buffer with offsets (an Arrow ``large_string`` array, no nulls), as a
    Parquet column is read: byte and character lengths come from Arrow's kernels, a batch goes to a
    library that takes flat buffers (gigatoken's awkward input) without one Python string per text,
    and a text becomes a Python string only when asked for (``texts[i]``, :meth:`tolist`).

    >>> import pyarrow as pa
    >>> t = FlatTexts(pa.array(["a", "你好"], pa.large_string()))
    >>> len(t), t[1], t.nbytes().tolist(), t.nchars().tolist(), bytes(t.buffer())
    (2, '你好', [1, 6], [1, 2], b'a\\xe4\\xbd\\xa0\\xe5\\xa5\\xbd')
    """

    def __init__(self, arr, texts: list[str] | None = None):
        self.arr = arr
        self._list: list[str] | None = texts

    @classmethod
    def of(cls, texts: list[str]) -> FlatTexts:
        """Python strings held flat (and kept: :meth:`tolist` returns them, no second conversion)."""
        import pyarrow as pa

        buf, base = text_bytes(texts)
        return cls(pa.Array.from_buffers(pa.large_string(), len(texts), [None, pa.py_buffer(base), pa.py_buffer(buf)]),
                   texts)

    def __len__(self) -> int:
        return len(self.arr)

    def __getitem__(self, i: int) -> str:
        if self._list is not None:
            return self._list[i]
        return self.arr[int(i)].as_py()

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list[str]:
        """Every text as a Python string (made once)."""
        if self._list is None:
            self._list = self.arr.to_pylist()
        return self._list

    def offsets(self) -> np.ndarray:
        """Byte offset of each text in the Arrow buffer (n+1, int64; the first need not be 0)."""
        a = self.arr
        return np.frombuffer(a.buffers()[1], dtype=np.int64)[a.offset:a.offset + len(a) + 1]

    def nbytes(self) -> np.ndarray:
        """UTF-8 bytes of each text (int64)."""
        return np.diff(self.offsets())

    def nchars(self) -> np.ndarray:
        """Code points of each text (int64)."""
        import pyarrow.compute as pc

        return numpy_of(pc.utf8_length(self.arr)).astype(np.int64)

    def buffer(self) -> memoryview:
        """The texts' UTF-8, concatenated (``b"".join(t.encode() for t in texts)``), without a copy."""
        off = self.offsets()
        values = self.arr.buffers()[2]
        return memoryview(values)[int(off[0]):int(off[-1])] if values is not None else memoryview(b"")

    def filter(self, mask: np.ndarray) -> FlatTexts:
        """The texts where ``mask`` is true."""
        lst = None if self._list is None else [t for t, m in zip(self._list, mask.tolist()) if m]
        return FlatTexts(self.arr.filter(arrow_of(np.asarray(mask, dtype=bool))), lst)

    def awkward(self):
        """The texts as an awkward array of strings over the same buffers (gigatoken's flat input)."""
        import awkward as ak

        values = self.arr.buffers()[2]
        data = np.frombuffer(values, dtype=np.uint8) if values is not None else np.zeros(0, dtype=np.uint8)
        return ak.Array(ak.contents.ListOffsetArray(ak.index.Index64(self.offsets()), ak.contents.NumpyArray(
            data, parameters={"__array__": "char"}), parameters={"__array__": "string"}))
