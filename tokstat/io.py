"""Atomic output: write to a temporary file beside the target, then rename. No partial files."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from .errors import TokstatError


@contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = ".tmp") -> Iterator[str]:
    """Yield a temporary path beside ``path``; on success rename it onto ``path``, on any error
    (KeyboardInterrupt included) delete it, so no partial file is ever left."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=suffix, dir=p.parent)
    os.close(fd)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)   # mkstemp makes 0600 files; outputs get the usual permissions
        os.replace(tmp, p)
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(data)


def write_files(folder: str | os.PathLike, files: dict[str, bytes]) -> None:
    """Write ``files`` into ``folder`` as one unit: into a temporary sibling folder first, each file
    then renamed into ``folder`` only when all are written (other files in ``folder`` are kept)."""
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{d.name}.", suffix=".tmp", dir=d.parent))
    try:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        for name in files:
            os.replace(tmp / name, d / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_table(df: pl.DataFrame, path: str | os.PathLike) -> Path:
    """Write ``df`` as Parquet, CSV or JSON (by suffix), atomically."""
    p = Path(path)
    suf = p.suffix.lower()
    if suf not in (".parquet", ".csv", ".json"):
        raise TokstatError(f"unknown output format {suf!r}", path=p, fix="use .parquet, .csv or .json")
    with atomic_path(p) as tmp:
        if suf == ".parquet":
            df.write_parquet(tmp, statistics=False)
        elif suf == ".csv":
            df.write_csv(tmp)
        else:
            df.write_json(tmp)
    return p
