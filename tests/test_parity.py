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


def _rows(algo, size, tpc, prem, boot):
    return [{"tokenizer": f"train/{algo}-{size}", "requested_size": size, "vocab_size": size, "language": lang,
             "tokens_per_char": tpc[lang], "premium": prem[lang], "tokens_per_char_boot": [tpc[lang] * b for b in boot]}
            for lang in tpc]


def test_the_price_of_fairness_by_hand():
    """Tokens per character of the mix (equal content → character shares through the premiums) for
    each algorithm, parity over plain − 1, the spread and the worst language, computed here."""
    import polars as pl

    from tokstat.sweep import fairness_sentence, price_of_fairness

    boot = [0.98, 1.0, 1.02, 0.99, 1.01] * 20
    plain_t, plain_p = {"en": 0.30, "zh": 0.90}, {"en": 1.0, "zh": 0.80}
    par_t, par_p = {"en": 0.31, "zh": 1.10}, {"en": 1.0, "zh": 0.99}
    df = pl.DataFrame(_rows("bpe", 4000, plain_t, plain_p, boot) + _rows("parity-bpe", 4000, par_t, par_p, boot))
    r = price_of_fairness(df).row(0, named=True)

    def mix_tpc(t, p):          # content 50/50: characters per content = premium / tokens per char
        c = {k: 0.5 * p[k] / t[k] for k in t}
        return sum(c[k] * t[k] for k in t) / sum(c.values())
    assert r["plain_tokens_per_char"] == pytest.approx(mix_tpc(plain_t, plain_p))
    assert r["token_cost"] == pytest.approx(mix_tpc(par_t, par_p) / mix_tpc(plain_t, plain_p) - 1)
    assert r["plain_spread"] == pytest.approx(1 / 0.80) and r["parity_spread"] == pytest.approx(1 / 0.99)
    assert r["language"] == "zh" and r["token_cost_low"] <= r["token_cost"] <= r["token_cost_high"]
    assert fairness_sentence(r).startswith("at 4,000, parity-aware BPE costs +")
    with pytest.raises(TokstatError, match="needs a sweep of both bpe and parity-bpe"):
        price_of_fairness(df.filter(pl.col("tokenizer").str.starts_with("train/bpe")))


@pytest.mark.slow
def test_sweep_fairness_and_the_plan_state_the_price(tmp_path, capsys):
    import polars as pl

    from tokstat.cli import main
    from tokstat.vocabplan import vocab_plan

    out = tmp_path / "fs.parquet"
    assert main(["sweep", "sample", "--fairness", "--sizes", "500,1000,2000,4000", "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("price of fairness: at ") == 4
    df = pl.read_parquet(out)
    plan = vocab_plan(df, n_nv=6.5e9, d_model=4096)
    plain = vocab_plan(df.filter(pl.col("tokenizer").str.starts_with("train/bpe-")), n_nv=6.5e9, d_model=4096)
    assert plan.recommended_vocab_size == plain.recommended_vocab_size      # the curve is plain BPE's
    assert plan.price_of_fairness.startswith("at ") and not plain.price_of_fairness
    assert main(["sweep", "sample", "--fairness", "--algo", "unigram", "--sizes", "500,1000"]) == 2
    assert main(["sweep", "sample", "--fairness", "--mix", "en=0.5,zh=0.5", "--sizes", "500,1000"]) == 2
    # the plan draws the price of fairness beside its curves (fitted on plain BPE's points only)
    png = tmp_path / "plan.png"
    assert main(["vocab-plan", "--sweep", str(out), "--model", "llama2-7b", "--png", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the report draws the price of fairness beside the sweep
    html = tmp_path / "r.html"
    assert main(["report", str(out), "--out", str(html)]) == 0
    page = html.read_text()
    assert "The price of fairness" in page and page.count("<svg") >= 3


# ---------------------------------------------------------------- the trainer's settings

@pytest.mark.parametrize("opts, match", [
    ({"variant": "fast"}, "variant must be base or window"),
    ({"global_merges": "-1"}, "bad global_merges"),
    ({"window_size": "0"}, "bad window_size"),
    ({"alpha": "nan"}, "bad alpha"),
    ({"alpha": "0"}, "bad alpha"),
    ({"balance": "chars"}, "balance must be dev or bytes"),
    ({"windowsize": "3"}, "has no setting 'windowsize'"),
])
def test_bad_parity_settings_are_refused_with_the_fix(opts, match):
    with pytest.raises(TokstatError, match=match):
        train(SAMPLE, "parity-bpe", 800, parity=opts)


def test_parity_settings_are_used_named_and_recorded(parity):
    from tokstat.corpus import nfc

    window = train(SAMPLE, "parity-bpe", 1200, parity={"variant": "window", "window_size": "5", "alpha": "0.5"})
    ratio = train(SAMPLE, "parity-bpe", 1200, parity={"balance": "bytes", "global_merges": 100})
    assert window.adapter.id == "train/parity-bpe-1200-window-w5-a0.5"
    assert ratio.adapter.id == "train/parity-bpe-1200-g100-bytes"
    assert window.metadata["parity"]["variant"] == "window" and window.metadata["parity"]["window_size"] == 5
    r = ratio.metadata["parity"]
    assert r["balance"] == "bytes" and "dev_fraction" not in r
    zh = sum(len(s.texts["zh"].encode()) for s in SAMPLE if not Split().is_heldout(s.id))
    en = sum(len(s.texts["en"].encode()) for s in SAMPLE if not Split().is_heldout(s.id))
    low = min(zh, en)
    assert r["ratio"] == pytest.approx({"en": en / low, "zh": zh / low})     # bytes of the same content, by hand
    vocabs = {t.adapter.tok.to_str() for t in (parity, window, ratio)}
    assert len(vocabs) == 3                                                 # the settings reach the trainer
    for t in (window, ratio):
        text = nfc("混合 text ✓ \x00 𝔘")
        assert t.adapter.decode(t.adapter.encode_batch([text])[0]) == text and t.adapter.vocab_size == 1200


def test_parity_settings_in_a_spec_and_on_the_command_line(tmp_path, capsys):
    from tokstat.cli import main

    df = compare(SAMPLE, ["train:parity-bpe:800?variant=window"], n_boot=0)
    assert set(df["tokenizer"]) == {"train/parity-bpe-800-window"}
    with pytest.raises(TokstatError, match="unknown option"):
        compare(SAMPLE, ["train:bpe:800?variant=window"], n_boot=0)
    assert main(["train", "sample", "--algo", "parity-bpe", "--vocab-size", "800", "--parity", "balance=bytes",
                 "--out", str(tmp_path / "p"), "--quiet"]) == 0
    assert "parity-bpe-800-bytes" in capsys.readouterr().out
    assert main(["train", "sample", "--algo", "parity-bpe", "--vocab-size", "800", "--parity", "variant",
                 "--out", str(tmp_path / "q")]) == 2
    assert "is not KEY=VALUE" in capsys.readouterr().err
    assert main(["train", "sample", "--algo", "bpe", "--vocab-size", "800", "--parity", "variant=window",
                 "--out", str(tmp_path / "r")]) == 2
    assert "apply to parity-bpe, not bpe" in capsys.readouterr().err
    assert main(["sweep", "sample", "--sizes", "500,800", "--parity", "variant=window"]) == 2
    assert "add --algo parity-bpe or --fairness" in capsys.readouterr().err
    assert not any((tmp_path / n).exists() for n in "qr")
