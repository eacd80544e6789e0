"""Information-theoretic columns (issue 28) against tokenization-scorer's own functions (Zouhar et al.
2023's package) on the same token sequences, and against a direct computation."""

from __future__ import annotations

import contextlib
import io
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokstat import compare, load_corpus
from tokstat.metrics import INFO_COLUMNS, entropy_bits, info_measures

SAMPLE = load_corpus("sample")
TOK = "train:bpe:1500"


def test_every_info_column_is_in_compare_and_matches_tokenization_scorer():
    ts = pytest.importorskip("tokenization_scorer")
    df, segs = compare(SAMPLE, [TOK], n_boot=0, return_segments=True, progress=False, workers=1)
    from tokstat.compare import resolve_tokenizers

    [a] = resolve_tokenizers([TOK], SAMPLE)
    for row in df.iter_rows(named=True):
        lang = row["language"]
        held = [s.texts[lang] for s in SAMPLE if a.split.is_heldout(s.id) and s.texts.get(lang)]
        seqs = [" ".join(map(str, ids)) for ids in a.encode_batch(held)]
        with contextlib.redirect_stderr(io.StringIO()):   # the package prints its settings there
            want = {"shannon_entropy": ts.score("\n".join(seqs), metric="shannon_entropy"),
                    "renyi_entropy_2_5": ts.score("\n".join(seqs), metric="renyi_entropy", power=2.5),
                    "renyi_entropy_3": ts.score("\n".join(seqs), metric="renyi_entropy", power=3.0),
                    "renyi_efficiency_observed": ts.score("\n".join(seqs), metric="renyi", power=2.5)}
        for k, v in want.items():
            assert row[k] == pytest.approx(v, rel=1e-9), (lang, k)
        flat = [t for s in seqs for t in s.split()]
        assert row["type_token_ratio"] == pytest.approx(len(set(flat)) / len(flat))
        assert row["vocab_utilisation"] == pytest.approx(len(set(flat)) / a.vocab_size)
        assert row["average_token_rank"] == pytest.approx(sum(int(t) + 1 for t in flat) / len(flat))
        width = math.ceil(math.log2(a.vocab_size))
        assert row["bits_per_byte"] == pytest.approx(len(flat) * width / sum(len(t.encode()) for t in held))
        assert row["bits_per_char"] == pytest.approx(len(flat) * width / sum(len(t) for t in held))
    assert set(INFO_COLUMNS) <= set(df.columns)


@given(st.lists(st.integers(0, 30), min_size=1, max_size=200))
def test_entropies_against_a_direct_computation(ids):
    h = np.bincount(ids, minlength=31)
    p = [c / len(ids) for c in Counter(ids).values()]
    assert entropy_bits(h) == pytest.approx(-sum(x * math.log2(x) for x in p), abs=1e-9)
    for alpha in (2.5, 3.0):
        assert entropy_bits(h, alpha) == pytest.approx(math.log2(sum(x ** alpha for x in p)) / (1 - alpha), abs=1e-9)
    # Rényi entropy is non-increasing in its order and at most log2 of the types
    assert entropy_bits(h, 3.0) <= entropy_bits(h, 2.5) + 1e-9 <= entropy_bits(h) + 2e-9
    assert entropy_bits(h) <= math.log2(len(set(ids))) + 1e-9


def test_no_tokens_gives_nulls_not_zeros():
    m = info_measures(np.zeros(4, dtype=np.int64), 0, 0, 0, 4)
    assert m["shannon_entropy"] is None and m["type_token_ratio"] is None and m["bits_per_byte"] is None
