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
