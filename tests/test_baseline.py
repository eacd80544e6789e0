"""compare --baseline: each tokenizer's tokens relative to a baseline's on the same texts, with a
paired interval (cl100k -> o200k, a vendor's old and new tokenizer)."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat import compare, load_corpus
from tokstat.cli import main
from tokstat.errors import TokstatError
from tokstat.metrics import BASELINE_COLUMNS, versus_baseline

from conftest import ROOT
from tok_fixtures import sample_bpe

SAMPLE = str(ROOT / "corpora/sample-zh-en/sample.tsv")


@pytest.fixture(scope="module")
def toks(tmp_path_factory) -> dict[str, str]:
    """Two byte-level BPEs of different sizes trained on the bundled corpus (the 'old' and 'new' tokenizer)."""
    d = tmp_path_factory.mktemp("toks")
    return {name: sample_bpe(d, name, size) for name, size in (("old", 600), ("new", 1500))}


@pytest.fixture(scope="module")
def table(toks):
    return compare(SAMPLE, [toks["old"], toks["new"]], baseline=toks["old"], workers=1, progress=False)


def direct_tokens(spec: str) -> dict[str, int]:
    """The oracle: the tokenizers library called directly, segment by segment, no special tokens."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(spec[3:])
    out: dict[str, int] = {}
    for s in load_corpus(SAMPLE):
        for lang, t in s.texts.items():
            out[lang] = out.get(lang, 0) + len(tok.encode(t, add_special_tokens=False).ids)
    return out


def test_ratio_equals_the_libraries_called_directly(table, toks):
    old, new = direct_tokens(toks["old"]), direct_tokens(toks["new"])
    rows = {(r["tokenizer"], r["language"]): r for r in table.iter_rows(named=True)}
    ids = table["tokenizer"].unique(maintain_order=True).to_list()
    assert set(table["baseline"].to_list()) == {ids[0]}
    for lang in old:
        assert rows[(ids[0], lang)]["vs_baseline"] == 1.0
        assert rows[(ids[1], lang)]["vs_baseline"] == pytest.approx(new[lang] / old[lang], rel=1e-12)
    # a larger vocabulary of the same corpus needs fewer tokens: the direction is right, not just the value
    assert all(rows[(ids[1], lang)]["vs_baseline"] < 1 for lang in old)


def test_interval_is_the_paired_replicates_percentiles(table):
    ids = table["tokenizer"].unique(maintain_order=True).to_list()
    for lang in table["language"].unique().to_list():
        b = table.filter((pl.col("tokenizer") == ids[0]) & (pl.col("language") == lang)).row(0, named=True)
        r = table.filter((pl.col("tokenizer") == ids[1]) & (pl.col("language") == lang)).row(0, named=True)
        rb = np.array(b["tokens_per_char_boot"].split(), dtype=float)
        rt = np.array(r["tokens_per_char_boot"].split(), dtype=float)
        lo, hi = np.quantile(rt / rb, [0.025, 0.975])
        assert (r["vs_baseline_ci_low"], r["vs_baseline_ci_high"]) == pytest.approx((lo, hi))
        assert r["vs_baseline_ci_low"] < r["vs_baseline"] < r["vs_baseline_ci_high"]
        # paired: narrower than the interval two independent tokens-per-char intervals would give
        naive = (r["tokens_per_char_ci_high"] / b["tokens_per_char_ci_low"]
                 - r["tokens_per_char_ci_low"] / b["tokens_per_char_ci_high"])
        assert r["vs_baseline_ci_high"] - r["vs_baseline_ci_low"] < naive


def test_baseline_not_given_with_t_is_added_and_an_id_works(toks, table):
    only_new = compare(SAMPLE, [toks["new"]], baseline=toks["old"], workers=1, progress=False)
    assert only_new["tokenizer"].n_unique() == 2
    by_id = compare(SAMPLE, [toks["old"], toks["new"]], baseline=table["baseline"][0], workers=1, progress=False)
    for df in (only_new, by_id):
        got = {(r["tokenizer"], r["language"]): r["vs_baseline"] for r in df.iter_rows(named=True)}
        want = {(r["tokenizer"], r["language"]): r["vs_baseline"] for r in table.iter_rows(named=True)}
        assert got == want


def test_no_baseline_no_columns(toks):
    df = compare(SAMPLE, [toks["old"]], workers=1, progress=False, n_boot=0)
    assert not set(BASELINE_COLUMNS) & set(df.columns)


def test_unknown_baseline_is_a_named_error(table):
    with pytest.raises(TokstatError, match="not among the tokenizers compared"):
        versus_baseline(table, "nope/tokenizer")
    with pytest.raises(TokstatError):
        compare(SAMPLE, [table["tokenizer"][0]], baseline="hf:/no/such/tokenizer.json", workers=1, progress=False)


def test_other_texts_give_null_and_one_warning(toks):
    """A tokenizer trained here is scored on its held-out split: not the baseline's texts."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        df = compare(SAMPLE, [toks["old"], "train:bpe:400"], baseline=toks["old"], workers=1, progress=False)
    trained = df.filter(pl.col("tokenizer").str.contains("train|bpe") & (pl.col("tokenizer") != df["baseline"][0]))
    assert trained.height and trained["vs_baseline"].null_count() == trained.height
    assert sum("no ratio to the baseline" in str(x.message) for x in w) == 1


def test_monolingual_one_pass_has_the_ratio(tmp_path, toks):
    """The columnar pass (diagnostics on a sample) gives the same exact ratio as the exact run."""
    docs = [{"text": t, "language": lang} for s in load_corpus(SAMPLE) for lang, t in s.texts.items()]
    pl.DataFrame(docs).write_parquet(tmp_path / "docs.parquet")
    exact = compare(str(tmp_path / "docs.parquet"), [toks["old"], toks["new"]], baseline=toks["old"], workers=1,
                    progress=False, pivot=None, diagnostics="exact")
    sampled = compare(str(tmp_path / "docs.parquet"), [toks["old"], toks["new"]], baseline=toks["old"], workers=1,
                      progress=False, pivot=None, diagnostics="sample")
    key = ["tokenizer", "language"]
    a = exact.sort(key).select(*key, "vs_baseline")
    b = sampled.sort(key).select(*key, "vs_baseline")
    assert a.equals(b)
    assert sampled["vs_baseline_ci_low"].null_count() == 0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 500), st.integers(1, 500)), min_size=1, max_size=6))
def test_property_ratio_of_sums(pairs):
    """On any table, vs_baseline is tokens over the baseline's tokens of the same language."""
    rows = []
    for i, (a, b) in enumerate(pairs):
        rows += [{"tokenizer": "base", "language": f"l{i}", "chars": 1000, "segments": 5, "tokens": a,
                  "tokens_per_char_boot": None},
                 {"tokenizer": "other", "language": f"l{i}", "chars": 1000, "segments": 5, "tokens": b,
                  "tokens_per_char_boot": None}]
    df = versus_baseline(pl.DataFrame(rows), "base")
    for (a, b), r in zip(pairs, df.filter(pl.col("tokenizer") == "other").iter_rows(named=True)):
        assert r["vs_baseline"] == b / a and r["vs_baseline_ci_low"] is None


def test_cli_prints_the_switch(toks, tmp_path, capsys):
    out = tmp_path / "cmp.csv"
    rc = main(["compare", SAMPLE, "-t", toks["new"], "--baseline", toks["old"], "--quiet", "--out", str(out)])
    text = capsys.readouterr().out
    assert rc in (0, None)
    assert "× baseline" in text and "switching" in text
    back = pl.read_csv(out)
    assert set(BASELINE_COLUMNS) <= set(back.columns)
    from tokstat.report import read_results

    assert "compare" in read_results([out])           # the report reads it back as a compare table
