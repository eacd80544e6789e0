"""The vectorised per-segment counts equal the pure-Python reference (tokstat.counts_reference),
segment by segment, for real tokenizers of every family and arbitrary text."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokstat import load_tokenizer
from tokstat.counts import COLUMNS, TextBatch, count_batch
from counts_reference import reference_counts
from tokstat.segmenters import jieba_words, regex_words

from tok_fixtures import CASES, SHARED_TOK

FAMILIES = ["cl100k_base", "qwen3", "llama2", "bert-base-chinese", "t5"]
ALPHABET = st.sampled_from(list("ab Zé ñ 你好世界猫。，、 \u3000\t\n 한국 カタ ع ש 🙂👍🏽 \u200d\u0301 ıİ ß ﬁ x1 2,3"))
TEXTS = st.lists(st.text(ALPHABET, max_size=40), min_size=1, max_size=8)


@pytest.fixture(scope="module", params=FAMILIES)
def adapter(request):
    if not SHARED_TOK.is_dir():
        pytest.skip("../shared is absent")
    return load_tokenizer(CASES[request.param][0])


def _check(adapter, texts, segmenter):
    words = [segmenter(t) for t in texts]
    tb = TextBatch.build(texts, [str(i) for i in range(len(texts))], words)
    enc = adapter.encode_spans(texts)
    got = count_batch(tb, enc, adapter)
    for i, t in enumerate(texts):
        want = reference_counts(t, enc.tokens(i), enc.spans(i), words[i], adapter)
        assert {c: int(got[c][i]) for c in COLUMNS} == want, (t, enc.tokens(i), enc.spans(i))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=TEXTS)
def test_counts_equal_reference_regex_words(adapter, texts):
    _check(adapter, texts, regex_words)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=TEXTS)
def test_counts_equal_reference_jieba_words(adapter, texts):
    _check(adapter, texts, jieba_words)


@pytest.mark.slow
def test_counts_equal_reference_on_pud_sentences(adapter):
    from tokstat import load_corpus

    c = load_corpus(SHARED_TOK.parent / "corpora/ud-pud")
    segs = [s for _, s in zip(range(40), c)]
    for lang in ("zh", "en", "ko", "th", "ar"):
        texts = [s.texts[lang] for s in segs]
        _check(adapter, texts, regex_words)
