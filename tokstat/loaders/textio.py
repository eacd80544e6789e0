"""Streaming, strict UTF-8 line reading shared by the line-based loaders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..errors import TokstatError
from ..io import regular_file

BOM = b"\xef\xbb\xbf"


#: a longer line is refused before it is read whole (memory stays bounded whatever the file)
MAX_LINE_BYTES = 256 << 20


def _line_end(raw: bytes) -> int:
    """Length of ``raw``'s line ending (``\\r\\n`` or ``\\n``; 0 on a last line without one)."""
    return 2 if raw.endswith(b"\r\n") else 1 if raw.endswith(b"\n") else 0


def read_lines(path: Path, *, errors: str = "strict", keepends: bool = False,
               max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)``, lines split on LF only; without ``keepends`` the line's own
    ending (LF or CRLF) is removed and nothing else: a CR, U+2028 or U+0085 inside a line is text.
    A BOM on line 1 is dropped.

    Refused with the file and line: invalid UTF-8 (unless ``errors="replace"``), UTF-16/32, a line
    over ``max_line_bytes``, and a file that is one line holding CRs (classic Mac line endings,
    which would read as one segment).
    """
    regular_file(path, "corpus file")   # a FIFO or a device would be read forever
    check_not_utf16(path)
    offset = 0
    with open(path, "rb") as f:
        no = 0
        held = None   # line 1 when it holds a CR: kept back until a second line shows LF endings
        while True:
            raw = f.readline(max_line_bytes + 1)
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                raise TokstatError(f"line {no + 1} is longer than {max_line_bytes:,} bytes", path=path, line=no + 1,
                                   fix="split it into one segment per line (sentences or paragraphs)")
            if held is not None:
                if not raw:
                    raise TokstatError("a carriage return inside the only line (CR-only line endings?)",
                                       path=path, line=1, fix="convert the line endings to LF: tr '\\r' '\\n' < IN > OUT")
                yield held
                held = None
            if not raw:
                return
            no += 1
            start = offset
            offset += len(raw)
            if no == 1 and raw.startswith(BOM):
                raw = raw[3:]
                start += 3
            content = raw[:len(raw) - _line_end(raw)]
            body = raw if keepends else content
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError as e:
                if errors != "replace":
                    raise TokstatError(
                        f"invalid UTF-8 at byte offset {start + e.start} (byte 0x{body[e.start]:02x})",
                        path=path, line=no,
                        fix="re-encode the file as UTF-8 (iconv -f GB18030 -t UTF-8), "
                            "or pass --encoding-errors replace") from None
                text = body.decode("utf-8", errors="replace")
            if no == 1 and b"\r" in content:
                held = (no, text)
                continue
            yield no, text


def check_utf8_file(path: Path) -> None:
    """Raise the ``read_lines`` error for the first invalid line of ``path`` (used after a parser fails)."""
    for _ in read_lines(path):
        pass


def looks_utf16(path: Path) -> bool:
    """Whether ``path`` holds UTF-16 or UTF-32 text (see :func:`check_not_utf16`)."""
    with open(path, "rb") as f:
        head = f.read(4096)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    nuls = head.count(0)
    if len(head) < 4 or nuls <= len(head) // 4:
        return False
    even = head[0::2].count(0)
    if max(even, nuls - even) >= 0.95 * nuls:                    # UTF-16: NULs at one parity
        return True
    by4 = [head[k::4].count(0) for k in range(4)]                 # UTF-32: three of four offsets
    return len(head) >= 16 and nuls > len(head) // 2 and min(by4) <= 0.05 * nuls and sum(by4) - min(by4) >= 0.95 * nuls


def check_not_utf16(path: Path) -> None:
    """Refuse UTF-16/32 (with or without a BOM): read as UTF-8 it would give NULs between letters.

    Without a BOM, UTF-16 text of any script written mostly in ASCII or Latin has a NUL in every
    other byte: a file whose first 4 KiB are more than a quarter NUL bytes, nearly all (95 %) at even
    offsets or nearly all at odd ones, is taken for it. UTF-8 text that merely holds NUL characters
    has them at both parities and is read as text.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.txt"
    >>> _ = p.write_bytes("hello world\\n".encode("utf-16-le")); looks_utf16(p)
    True
    >>> _ = p.write_bytes("hello world\\n".encode("utf-32-le")); looks_utf16(p)
    True
    >>> _ = p.write_bytes(b"\\0\\0\\0a\\0\\0\\n" * 4); looks_utf16(p)
    False
    """
    if looks_utf16(path):
        raise TokstatError("the file is UTF-16 (or UTF-32), not UTF-8", path=path,
                           fix="re-encode it: iconv -f UTF-16 -t UTF-8 IN > OUT")
