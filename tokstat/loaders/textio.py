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
    offset = 0
    with open(path, "rb") as f:
        for no, raw in enumerate(f, 1):
            start = offset
            offset += len(raw)
            if no == 1 and raw.startswith(BOM):
                raw = raw[3:]
                start += 3
            raw = raw.rstrip(b"\n").rstrip(b"\r")
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
