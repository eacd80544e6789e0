"""Reading result files: compare, sweep and cost tables, grouped by kind."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from ..errors import TokstatError
from ..io import read_table
from ..metrics import COMPARE_COLUMNS

KINDS = ("compare", "sweep", "cost")


def kind_of(df: pl.DataFrame) -> str | None:
    """``compare``, ``sweep`` (compare columns + ``requested_size``) or ``cost`` (cost columns), else None."""
    cols = set(df.columns)
    if {"gpu_hours", "cost_multiplier", "dollars"} <= cols:
        return "cost"
    if set(COMPARE_COLUMNS) <= cols:
        return "sweep" if "requested_size" in cols else "compare"
    return None


def read_results(paths: list[str | os.PathLike]) -> dict[str, pl.DataFrame]:
    """Read result files (.parquet/.csv/.json) and group them by kind (files of one kind are stacked)."""
    if not paths:
        raise TokstatError("no result files given", fix="pass files written by compare/sweep/cost --out")
    out: dict[str, list[pl.DataFrame]] = {}
    for p in map(Path, paths):
        df = read_table(p, "tokstat compare/sweep/cost --out")
        k = kind_of(df)
        if k is None:
            raise TokstatError("not a tokstat compare, sweep or cost result (columns: "
                               f"{', '.join(df.columns[:6])}…)", path=p,
                               fix="pass files written by tokstat compare/sweep/cost --out")
        out.setdefault(k, []).append(df)
    return {k: pl.concat(v, how="diagonal_relaxed") for k, v in out.items()}
