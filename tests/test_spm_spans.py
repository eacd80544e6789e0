"""SentencePiece models that do not normalise get their spans from the pieces' own bytes (ids
asked without offsets): the same ids and the same byte spans as the library's offsets, on every
text; any other model, or a text whose pieces do not add up to its bytes, keeps the offsets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat.adapters import load_tokenizer

HOSTILE = ["", " ", "  a  b  ", "\t\n", "語言模型 👍🏽", " leading", "trailing ", "\u2581odd", "a\u0000b", "e\u0301",
           "👨‍👩‍👧", "x" * 5000, "中" * 300, "\r\n\r\n", "ﬁ ligature", "Ａ full-width", "\ufeffbom", "<0x41>",
           "<s></s><unk>", "\u00a0nbsp", "Ünïcödé  mixed 中文 and عربي", "\u200b\u200d", "\ud7ff\ue000"]


@pytest.fixture(scope="module", params=["llama2", "chinese-llama-2", "internlm-7b"])
def model(request, shared_module):
    files = sorted((shared_module / "tokenizers" / request.param).glob("*.model"))
    if not files:
        pytest.skip(f"no {request.param} model")
    a = load_tokenizer(f"spm:{files[0]}")
    assert a.piece_bytes is not None      # these models do not normalise
    return a


def same(a, texts) -> bool:
    x, y = a._encode_by_pieces(texts), a._encode_offsets(texts)
    return all(np.array_equal(u, v) for u, v in zip(x, y))


def test_hostile_texts_one_by_one_and_together(model):
    for t in HOSTILE:
        assert same(model, [t]), repr(t)
    assert same(model, HOSTILE)
    assert same(model, [t for t in HOSTILE if "\u2581" not in t])     # the batch without a fallback


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60), min_size=1, max_size=8))
def test_arbitrary_texts(shared_module, texts):
    files = sorted((shared_module / "tokenizers" / "llama2").glob("*.model"))
    a = load_tokenizer(f"spm:{files[0]}")
    assert same(a, texts)


def test_pud_sentences(model, shared_module):
    from tokstat import load_corpus

    texts = [t for s in load_corpus(shared_module / "corpora/ud-pud") for t in s.texts.values()]
    for i in range(0, len(texts), 256):
        assert same(model, texts[i:i + 256]), i


def test_a_normalising_model_keeps_the_offsets(shared_module):
    a = load_tokenizer(f"spm:{shared_module / 'tokenizers/t5/spiece.model'}")
    assert a.piece_bytes is None
