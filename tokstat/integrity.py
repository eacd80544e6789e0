"""Tokenizer file integrity: published hashes, user pins, and what a mismatch says.

* ``.tiktoken`` files named like a tiktoken encoding (``cl100k_base.tiktoken``) must have the sha256
  that tiktoken itself publishes for that encoding (read from ``tiktoken_ext.openai_public``);
* any tokenizer spec may pin its files with ``?sha256=HEX`` (the full hash, or a prefix of at least 8
  hex digits, as printed in signatures).
"""

from __future__ import annotations

import inspect
import re
from functools import lru_cache
from pathlib import Path

from .errors import TokstatError


@lru_cache(maxsize=1)
def published_tiktoken_hashes() -> dict[str, str]:
    """``{"cl100k_base": "223921b7…", ...}``: the expected sha256 of each encoding's ranks file, as
    published in tiktoken's own registry."""
    import tiktoken_ext.openai_public as op

    src = inspect.getsource(op)
    out = {}
    for name, h in re.findall(r"/([\w.]+)\.tiktoken\",\s*expected_hash=\"([0-9a-f]{64})\"", src):
        out.setdefault(name, h)
    return out


def check_published(path: Path, digest: str) -> None:
    """Error when ``path`` is named like a published tiktoken encoding but its bytes differ."""
    want = published_tiktoken_hashes().get(path.stem) if path.suffix == ".tiktoken" else None
    if want and digest != want:
        raise TokstatError(f"sha256 {digest[:16]}… does not match the published {path.stem} ({want[:16]}…): "
                           "the file is corrupt or modified", path=path,
                           fix=f"fetch {path.stem}.tiktoken again, or rename a deliberately modified file")


def check_pin(spec: str, digest: str, pin: str | None, path: object | None = None) -> None:
    """Error when a ``?sha256=`` pin does not match the files behind ``spec``."""
    if pin is None:
        return
    pin = pin.lower()
    if not re.fullmatch(r"[0-9a-f]{8,64}", pin):
        raise TokstatError(f"sha256 pin {pin!r} in {spec!r} is not 8-64 hex digits",
                           fix="copy the hash from the signature (tok:ID@HASH) or from sha256sum")
    if not digest.startswith(pin):
        raise TokstatError(f"tokenizer files have sha256 {digest[:16]}…, the spec pins {pin[:16]}…", path=path,
                           fix="use the files the pin was made for, or update ?sha256= after checking them")
