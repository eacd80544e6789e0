"""Numbers never go NaN or inf silently: a zero denominator (no words, an empty language, no tokens)
gives a null and a warning that says why."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat import compare
from tokstat.errors import TokstatError
from tokstat.adapters.base import Adapter, from_lists
from tokstat.compare import RATIO_COLUMNS
from tokstat.corpus import Corpus, Segment


class Chars(Adapter):
    """One token per character, id = code point mod 512; no tokens at all for whitespace."""

    id, family, algorithm, vocab_size, n_ids = "test/chars", "test", "chars", 512, 512
    byte_fallback = np.zeros(512, dtype=bool)

    def _encode(self, texts):
        ids, ss, es = [], [], []
        for t in texts:
            i, s, e, pos = [], [], [], 0
            for ch in t:
                n = len(ch.encode())
                if not ch.isspace():
                    i.append(ord(ch) % 512)
                    s.append(pos)
                    e.append(pos + n)
                pos += n
            ids.append(i)
            ss.append(s)
            es.append(e)
        return from_lists(ids, ss, es)


def corpus(rows: list[dict[str, str]], langs=("en", "zh")) -> Corpus:
    segs = [Segment(str(i), r) for i, r in enumerate(rows)]
    return Corpus("t", list(langs), lambda: iter(segs))


def finite(df: pl.DataFrame) -> bool:
    for c, dt in df.schema.items():
        if dt.is_float():
            for v in df[c].to_list():
                if v is not None and not math.isfinite(v):
                    return False
    return True


def test_empty_language_gives_nulls_and_a_warning():
    c = corpus([{"en": "hello there", "zh": ""}, {"en": "more", "zh": ""}])
    with pytest.warns(UserWarning, match="test/chars on zh: no non-empty segments, so every ratio is null"):
        df = compare(c, [Chars()], workers=1)
    zh = df.filter(pl.col("language") == "zh").row(0, named=True)
    assert all(zh[k] is None for k in RATIO_COLUMNS) and zh["segments"] == 0 and finite(df)


def test_no_word_segmenter_gives_null_per_word_columns(monkeypatch):
    """Khmer without its segmenter (icu4py, the words extra) has no words."""
    import tokstat.segmenters as seg

    have = seg._have
    monkeypatch.setattr(seg, "_have", lambda dist: None if dist == "icu4py" else have(dist))
    monkeypatch.setattr(seg, "_warned", set())
    c = corpus([{"en": "hello", "km": "សួស្តី"}], langs=("en", "km"))
    with pytest.warns(UserWarning, match="km: no words .* per-word columns are null"):
        df = compare(c, [Chars()], workers=1)
    km = df.filter(pl.col("language") == "km").row(0, named=True)
    assert km["tokens_per_word"] is None and km["words"] is None and km["tokens_per_char"] == 1.0


def test_whitespace_only_text_has_no_tokens():
    c = corpus([{"en": "   ", "zh": "你好"}])
    with pytest.warns(UserWarning, match="test/chars on en: the tokenizer emits no tokens for this text, so its rates"):
        df = compare(c, [Chars()], workers=1)
    en = df.filter(pl.col("language") == "en").row(0, named=True)
    # no tokens: every rate of tokens is null (never 0, which check_rates refuses when read back)
    assert en["tokens"] == 0 and en["chars_per_token"] is None and en["tokens_per_char"] is None
    assert en["tokens_per_byte"] is None and en["tokens_per_char_boot"] is None
    zh = df.filter(pl.col("language") == "zh").row(0, named=True)
    assert zh["premium"] is None    # the pivot has no tokens


def test_no_warning_when_every_ratio_is_defined():
    c = corpus([{"en": "a cat", "zh": "一只猫"}, {"en": "two dogs", "zh": "两只狗"}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compare(c, [Chars()], workers=1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.fixed_dictionaries({"en": st.sampled_from(["", " ", "a", "a b", "x\ty"]),
                                       "zh": st.sampled_from(["", "\u3000", "你", "你 好", "。"])}),
                min_size=1, max_size=6))
def test_never_nan_or_inf(rows):
    """Never NaN or inf; a corpus in which no segment has text in both languages is one error instead."""
    aligned = any(r["en"] and r["zh"] for r in rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            df = compare(corpus(rows), [Chars()], workers=1, n_boot=50)
        except TokstatError as e:
            assert "nothing aligns" in str(e) and not aligned, e
            return
    assert finite(df)
