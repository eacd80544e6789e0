"""Streaming, strict UTF-8 line reading shared by the line-based loaders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..errors import TokstatError

BOM = b"\xef\xbb\xbf"


def read_lines(path: Path, *, errors: str = "strict") -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` without the line ending; a BOM on line 1 is dropped.

    Invalid UTF-8 raises an error naming the file, line and byte offset, unless ``errors="replace"``.
    """
    if not path.exists():
        raise TokstatError("file not found", path=path, fix="check the path")
    check_not_utf16(path)
    offset = 0
    with open(path, "rb") as f:
        for no, raw in enumerate(f, 1):
            start = offset
            offset += len(raw)
            if no == 1 and raw.startswith(BOM):
                raw = raw[3:]
                start += 3
            raw = raw.rstrip(b"\n").rstrip(b"\r")
            if no == 1 and b"\r" in raw:
                # classic Mac line endings: the whole file would read as one line
                raise TokstatError("a carriage return inside the first line (CR-only line endings?)",
                                   path=path, line=no, fix="convert the line endings to LF: tr '\\r' '\\n' < IN > OUT")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                if errors != "replace":
                    raise TokstatError(
                        f"invalid UTF-8 at byte offset {start + e.start} (byte 0x{raw[e.start]:02x})",
                        path=path, line=no,
                        fix="re-encode the file as UTF-8 (iconv -f GB18030 -t UTF-8), "
                            "or pass --encoding-errors replace") from None
                text = raw.decode("utf-8", errors="replace")
            yield no, text


def check_utf8_file(path: Path) -> None:
    """Raise the ``read_lines`` error for the first invalid line of ``path`` (used after a parser fails)."""
    for _ in read_lines(path):
        pass


def check_not_utf16(path: Path) -> None:
    """Refuse UTF-16/32 (with or without a BOM): read as UTF-8 it would give NULs between letters.

    Without a BOM, UTF-16 text of any script written mostly in ASCII or Latin has a NUL in every
    other byte; a file whose first 4 KiB are more than a quarter NUL bytes is taken for it.
    """
    with open(path, "rb") as f:
        head = f.read(4096)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(head) >= 4 and head.count(0) > len(head) // 4):
        raise TokstatError("the file is UTF-16 (or UTF-32), not UTF-8", path=path,
                           fix="re-encode it: iconv -f UTF-16 -t UTF-8 IN > OUT")
