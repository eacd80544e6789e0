"""Parity-aware BPE (train:parity-bpe:SIZE): deterministic, the full byte alphabet (no text lost on
any input), a dev set disjoint from training and evaluation, and the published effect: on PUD
en/zh at 3,000 merges it brings the held-out Chinese premium to parity where plain BPE does not."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat import TokstatError, compare, load_corpus
from tokstat.split import Split
from tokstat.train import PARITY_DEV, parity_texts, train

SAMPLE = load_corpus("sample")


@pytest.fixture(scope="module")
def parity():
    return train(SAMPLE, "parity-bpe", 1200)


def test_deterministic_with_the_size_asked_and_its_settings_recorded(parity, tmp_path):
    again = train(SAMPLE, "parity-bpe", 1200, out=tmp_path / "p")
    assert again.adapter.tok.to_str() == parity.adapter.tok.to_str()
    assert parity.adapter.vocab_size == 1200
    assert parity.metadata["parity"]["dev_fraction"] == PARITY_DEV
    assert (tmp_path / "p" / "tokenizer.json").exists()


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=60))
def test_no_text_is_lost_whatever_the_bytes(parity, text):
    """The 256-byte alphabet is in the vocabulary: bytes never seen in training still encode."""
    a = parity.adapter
    from tokstat.corpus import nfc

    t = nfc(text)
    assert a.decode(a.encode_batch([t])[0]) == t


def test_the_dev_set_is_disjoint_from_training_and_evaluation():
    split = Split(0.1, seed=3)
    tr, dev = parity_texts(SAMPLE, split=split, languages=None)
    held = {s.texts["zh"] for s in SAMPLE if split.is_heldout(s.id)}
    assert dev["zh"] and not (set(dev["zh"]) & set(tr["zh"])) and not (set(dev["zh"]) & held)
    assert not (set(tr["zh"]) & held)


def test_bad_parity_requests(tmp_path):
    with pytest.raises(TokstatError, match="--mix and --sample-bytes do not apply"):
        train(SAMPLE, "parity-bpe", 800, mix={"en": 0.5, "zh": 0.5})
    with pytest.raises(TokstatError, match="at least two languages"):
        train(SAMPLE.select(["en"]), "parity-bpe", 800)
    docs = tmp_path / "d.jsonl"
    docs.write_text('{"text": "hello", "language": "en"}\n{"text": "你好", "language": "zh"}\n', encoding="utf-8")
    with pytest.raises(TokstatError, match="balances languages on parallel dev text"):
        train(load_corpus(str(docs)), "parity-bpe", 800)


@pytest.mark.slow
@pytest.mark.shared
def test_parity_bpe_reaches_parity_on_pud_where_plain_bpe_does_not(shared):
    """PUD en/zh, 3,000 merges (vocabulary 3,256), held-out segments: plain BPE gives Chinese
    0.91 [0.87–0.95] (measured; the issue's reference ~0.85), parity-aware 1.00 [0.96–1.05] (~1.02)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = load_corpus(str(Path(shared) / "corpora" / "ud-pud")).select(["en", "zh"])
        df = compare(c, ["train:bpe:3256", "train:parity-bpe:3256"], n_boot=300)
    zh = {r["tokenizer"]: r for r in df.iter_rows(named=True) if r["language"] == "zh"}
    plain, fair = zh["train/bpe-3256"], zh["train/parity-bpe-3256"]
    assert plain["premium_ci_high"] < 1.0 < fair["premium_ci_high"] and fair["premium_ci_low"] < 1.0
    assert abs(fair["premium"] - 1) < abs(plain["premium"] - 1)
