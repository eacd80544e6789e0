"""Reading result files and grouping them into sections: one per corpus, never mixed silently.

Kinds: ``compare``, ``sweep`` (compare columns + ``requested_size``), ``cost`` (priced compare
rows), ``sweep_cost`` (priced sweep rows) and ``segments`` (``compare --segments-out``). Rows are
tied to their corpus by the ``corpus:NAME@HASH`` part of their signature; two tokenizers with one
id but different content (``tok:ID@HASH``) in one corpus's results are an error naming both.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ..errors import TokstatError
from ..io import read_table
from ..metrics import COMPARE_COLUMNS, LATER_COLUMNS, check_rates
from ..parse import corpus_of

KINDS = ("compare", "sweep", "cost", "sweep_cost", "segments", "budget", "extension")
SEGMENT_COLUMNS = {"tokenizer", "language", "segment", "tokens", "chars"}
#: the text columns of result tables; every other column holds numbers (or, for these, booleans)
TEXT_COLUMNS = {"tokenizer", "language", "script", "class", "a", "b", "segment", "text", "pivot_text", "signature", "tokenizer_family",
                "vocab_source", "volume", "train_fits", "prefill_bound", "decode_bound", "fits",
                "not_recommended_because", "mfu_source", "train_precision", "price_source", "model", "gpu", "_file",
                "mix_shares", "mix_spec", "held_equal", "estimator", "base", "assumptions", "name", "rule", "baseline"}
BOOL_COLUMNS = {"recommended", "target"}
#: lists of numbers (a CSV cell holds them space-separated)
LIST_COLUMNS = {"tokens_per_char_boot"}


def check_types(df: pl.DataFrame, path) -> pl.DataFrame:
    """Every column as tokstat writes it: text columns as text (numbers read from CSV become text),
    booleans as booleans, the rest numbers. A column of another type (text where numbers belong, a
    nested struct or list) is one error naming the file, the column and a value.

    >>> check_types(pl.DataFrame({"language": ["en"], "tokens": ["many"]}), "r.csv")
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: r.csv: column tokens holds 'many', not numbers (fix: pass the table as tokstat wrote it)
    """
    casts = []
    for c, t in df.schema.items():
        if t == pl.Null:
            continue
        nested = t.is_nested() or t in (pl.Binary, pl.Object)
        if c in LIST_COLUMNS:
            if t == pl.String:
                try:
                    # "null" (a replicate without a value, metrics.replicates_text) reads back as a null
                    df = df.with_columns(pl.col(c).str.strip_chars().str.split(" ").list.eval(
                        pl.when(pl.element().is_in(["null", "nan"])).then(None).otherwise(pl.element())
                        .cast(pl.Float64)))
                except pl.exceptions.PolarsError:
                    raise TokstatError(f"column {c} holds text that is not space-separated numbers", path=path,
                                       fix="pass the table as tokstat wrote it") from None
            elif not (isinstance(t, pl.List) and t.inner.is_numeric()):
                raise TokstatError(f"column {c} holds {t}, not a list of numbers", path=path,
                                   fix="pass the table as tokstat wrote it")
            continue
        if c in TEXT_COLUMNS:
            if nested:
                raise TokstatError(f"column {c} holds {t}, not text", path=path, fix="pass the table as tokstat wrote it")
            if t != pl.String:
                casts.append(pl.col(c).cast(pl.String))
            continue
        want, ok = ("booleans", t == pl.Boolean) if c in BOOL_COLUMNS else ("numbers", t.is_numeric())
        if not ok and not nested and df[c].null_count() == df.height:   # an empty column, read back as text
            casts.append(pl.col(c).cast(pl.Boolean if c in BOOL_COLUMNS else pl.Float64))
            continue
        if not ok:
            first = df[c].drop_nulls()
            shown = repr(first[0])[:60] if first.len() and not nested else str(t)
            raise TokstatError(f"column {c} holds {shown}, not {want}", path=path, fix="pass the table as tokstat wrote it")
    df = df.with_columns(casts) if casts else df
    for c, t in df.schema.items():       # a number that is not one: NaN or infinity where a number must be
        if c in LIST_COLUMNS or not t.is_float():   # (a bootstrap replicate that drew no text is NaN by design)
            continue
        bad = (df[c].is_nan() | df[c].is_infinite()).fill_null(False)
        if bad.any():
            k = int(bad.arg_true()[0])
            raise TokstatError(f"column {c} holds {df[c][k]} in row {k + 1}: "
                               "tokstat writes a missing number as empty, never NaN or infinity", path=path,
                               fix="pass the table as tokstat wrote it (rerun the command that made it; an empty "
                               "cell is a missing number)")
    return df


def kind_of(df: pl.DataFrame) -> str | None:
    """The kind of a result table (see the module docstring), else None."""
    cols = set(df.columns)
    if {"tokens_low", "tokens_high", "token_share", "byte_share", "clusters"} <= cols:
        return "budget"
    if {"added", "tokens_before", "tokens_after", "break_even_requests"} <= cols:
        return "extension"
    if {"gpu_hours", "cost_multiplier", "dollars"} <= cols:
        swept = "requested_size" in cols and df.height and df["requested_size"].is_not_null().all()
        return "sweep_cost" if swept else "cost"
    if set(COMPARE_COLUMNS) - LATER_COLUMNS <= cols:
        return "sweep" if "requested_size" in cols else "compare"
    if SEGMENT_COLUMNS <= cols:
        return "segments"
    if {"tokenizer", "entries", "class", "count", "share"} <= cols:
        return "inventory"
    if {"a", "b", "a_entries", "b_entries", "shared", "jaccard", "coverage"} <= cols:
        return "overlap"
    return None


def read_results(paths: list[str | os.PathLike]) -> dict[str, pl.DataFrame]:
    """Read result files (.parquet/.csv/.json) and group them by kind (files of one kind are stacked)."""
    if not paths:
        raise TokstatError("no result files given", fix="pass files written by compare/sweep/cost --out")
    out: dict[str, list[pl.DataFrame]] = {}
    for p in map(Path, paths):
        df = check_types(read_table(p, "tokstat compare/sweep/cost --out"), p)
        check_rates(df, p)
        k = kind_of(df)
        if k is None:
            raise TokstatError("not a tokstat compare, sweep, cost, budget, extend, inventory, overlap or segments result (columns: "
                               f"{', '.join(df.columns[:6])}…)", path=p,
                               fix="pass files written by tokstat compare/sweep/cost/inventory/overlap --out, compare "
                                   "--segments-out or extend (extension.parquet)")
        if k == "compare":
            warn_rtc_as_premium(df, p)
        out.setdefault(k, []).append(df.with_columns(pl.lit(str(p)).alias("_file")))
    return {k: pl.concat(v, how="diagonal_relaxed") for k, v in out.items()}


def rtc_as_premium(df: pl.DataFrame) -> list[str]:
    """Languages whose ``premium`` equals their tokens per character over the pivot's (an RTC, a
    peer's "relative tokenization cost") although their characters differ from the pivot's by more
    than 5 %: on the same content the two cannot coincide, so that column holds RTCs, not premiums.

    >>> d = pl.DataFrame({"tokenizer": ["t"] * 2, "language": ["en", "zh"], "tokens_per_char": [0.25, 1.0],
    ...                   "chars": [400, 100], "premium": [1.0, 4.0]})
    >>> rtc_as_premium(d)
    ['zh']
    """
    need = {"tokenizer", "language", "tokens_per_char", "chars", "premium"}
    if not need <= set(df.columns):
        return []
    from ..compare import with_rtc         # the one definition of RTC
    from ..metrics import pivot_of

    pivot = pivot_of(df)
    if pivot is None:
        return []
    d = with_rtc(df.select(sorted(need)), pivot)
    piv = d.filter(pl.col("language") == pivot).select("tokenizer", pl.col("chars").alias("_pivot_chars"))
    hit = d.join(piv, on="tokenizer", how="inner", maintain_order="left").filter(
        (pl.col("language") != pivot) & ((pl.col("premium") / pl.col("rtc") - 1).abs() < 1e-3)
        & ((pl.col("chars") / pl.col("_pivot_chars") - 1).abs() > 0.05))
    return list(dict.fromkeys(hit["language"].to_list()))


def warn_rtc_as_premium(df: pl.DataFrame, path) -> None:
    """One warning when a table's premium column holds RTCs (:func:`rtc_as_premium`)."""
    langs = rtc_as_premium(df)
    if langs:
        import warnings

        warnings.warn(f"{path}: the premium of {', '.join(langs[:5])} equals tokens per character over the pivot's (an "
                      "RTC, relative tokenization cost), not the tokens the same content costs: the answers would rank "
                      "by characters, not content (docs/metrics.md, RTC); give a table tokstat compare wrote",
                      stacklevel=2)


_TOK = re.compile(r"(?:^|\|)tok:([^|]+)")


@dataclass
class Section:
    """The results of one corpus: what the page shows under one heading."""
    corpus: str | None
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)

    def get(self, kind: str) -> pl.DataFrame | None:
        return self.tables.get(kind)


def _check_ids(df: pl.DataFrame, corpus: str | None, kind: str) -> None:
    """One id, one tokenizer: the same id with two different ``tok:ID@HASH`` is refused."""
    if "signature" not in df.columns:
        return
    seen: dict[str, tuple[str, str]] = {}
    for tok, sig, src in zip(df["tokenizer"].to_list(), df["signature"].to_list(),
                             df["_file"].to_list() if "_file" in df.columns else [None] * df.height):
        m = _TOK.search(sig or "")
        if not m:
            continue
        if tok in seen and seen[tok][0] != m.group(1):
            where = "" if not (src or seen[tok][1]) else f" (in {seen[tok][1] or 'the results'} and {src or 'the results'})"
            raise TokstatError(f"two different tokenizers are both called {tok!r} in the {kind} results of corpus "
                               f"{corpus}: {seen[tok][0]} and {m.group(1)}{where}",
                               fix="report them separately (one report per run), or retrain one with other options "
                                   "so that its id differs")
        seen.setdefault(tok, (m.group(1), src))


def sections(results: dict) -> list[Section]:
    """Split ``results`` (kind -> table) into one :class:`Section` per corpus, in the order the
    corpora first appear. Tables without signatures (segments files) join the only corpus, and are
    refused when there are several (they cannot be attributed)."""
    tables = {k: v for k, v in results.items() if k in KINDS and isinstance(v, pl.DataFrame)}
    order: list[str | None] = []
    for k in ("compare", "sweep", "cost", "sweep_cost", "budget", "extension"):
        df = tables.get(k)
        if df is not None and "signature" in df.columns:
            for s in df["signature"].to_list():
                c = corpus_of(s)
                if c not in order:
                    order.append(c)
    named = [c for c in order if c is not None]
    out = {c: Section(c) for c in (named or [None])}
    for k, df in tables.items():
        if "signature" in df.columns and named:
            keyed = df.with_columns(pl.col("signature").map_elements(corpus_of, return_dtype=pl.String).alias("_corpus"))
            if keyed["_corpus"].is_null().any():
                if len(named) > 1:
                    raise TokstatError(f"some {k} rows carry no corpus in their signature while the report holds "
                                       f"{len(named)} corpora ({', '.join(named)})",
                                       fix="report each corpus separately")
                keyed = keyed.with_columns(pl.col("_corpus").fill_null(named[0]))
            for c in named:
                part = keyed.filter(pl.col("_corpus") == c).drop("_corpus")
                if part.height:
                    out[c].tables[k] = part
        else:
            if len(out) > 1:
                raise TokstatError(f"the {k} table carries no signature, and the report holds {len(out)} corpora "
                                   f"({', '.join(named)}): it cannot be attributed to one",
                                   fix="report each corpus separately")
            next(iter(out.values())).tables[k] = df
    for sec in out.values():
        # compared tokenizers and their cost rows, swept sizes and theirs: one id, one tokenizer
        for kinds in (("compare", "cost"), ("sweep", "sweep_cost")):
            parts = [sec.tables[k].select("tokenizer", "signature",
                                          pl.col("_file") if "_file" in sec.tables[k].columns else pl.lit(None).alias("_file"))
                     for k in kinds if sec.get(k) is not None and "signature" in sec.tables[k].columns]
            if parts:
                _check_ids(pl.concat([p.with_columns(pl.col("_file").cast(pl.String)) for p in parts]),
                           sec.corpus, " and ".join(k for k in kinds if sec.get(k) is not None))
        from ..metrics import one_study

        for t in sec.tables.values():
            one_study(t)      # within a corpus: a language twice for a tokenizer (a file given twice, two runs)
    return list(out.values())
