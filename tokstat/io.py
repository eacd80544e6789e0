"""Atomic output: write to a temporary file beside the target, then rename. No partial files."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import polars as pl

from .errors import TokstatError


def write_table(df: pl.DataFrame, path: str | os.PathLike) -> Path:
    """Write ``df`` as Parquet, CSV or JSON (by suffix), atomically."""
    p = Path(path)
    suf = p.suffix.lower()
    if suf not in (".parquet", ".csv", ".json"):
        raise TokstatError(f"unknown output format {suf!r}", path=p, fix="use .parquet, .csv or .json")
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    os.close(fd)
    try:
        if suf == ".parquet":
            df.write_parquet(tmp, statistics=False)
        elif suf == ".csv":
            df.write_csv(tmp)
        else:
            df.write_json(tmp)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p
