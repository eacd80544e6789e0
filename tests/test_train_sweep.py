"""Training (deterministic, held-out split, language mix) and the vocabulary sweep."""

from __future__ import annotations

import json

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat import load_corpus
from tokstat.cli import main
from tokstat.metrics import COMPARE_COLUMNS
from tokstat.split import is_heldout
from tokstat.sweep import derive_bpe, sweep
from tokstat.train import train, training_texts

SAMPLE = load_corpus("sample")
_big = {}


def big_bpe():
    if "t" not in _big:
        _big["t"] = train(SAMPLE, "bpe", 3000).adapter
    return _big["t"]


@pytest.mark.parametrize("size", [400, 1000, 2000])
def test_derived_bpe_equals_direct_training(size):
    direct = train(SAMPLE, "bpe", size).adapter
    derived = derive_bpe(big_bpe().tok, size)
    assert derived.to_str() == direct.tok.to_str()
    texts = [s.texts["zh"] for s in SAMPLE][:50] + [s.texts["en"] for s in SAMPLE][:50]
    assert [e.ids for e in derived.encode_batch(texts)] == direct.encode_batch(texts)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.text(max_size=80))
def test_bpe_tokens_never_increase_with_size(text):
    tok = big_bpe().tok
    counts = [len(derive_bpe(tok, s).encode(text).ids) for s in (300, 600, 1200, 2400, 3000)]
    assert all(a >= b for a, b in zip(counts, counts[1:])), counts


@pytest.mark.parametrize("algo,fname", [("bpe", "tokenizer.json"), ("wordpiece", "tokenizer.json"),
                                        ("unigram", "tokenizer.json"), ("spm-bpe", "tokenizer.model"),
                                        ("spm-unigram", "tokenizer.model")])
def test_training_is_byte_identical_and_loadable(tmp_path, algo, fname):
    a = train(SAMPLE, algo, 1500, out=tmp_path / "a")
    b = train(SAMPLE, algo, 1500, out=tmp_path / "b")
    for f in (fname, "metadata.json"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
    meta = json.loads((tmp_path / "a" / "metadata.json").read_text())
    assert meta["split"]["heldout_segments"] + meta["split"]["train_segments"] == 400
    assert meta["corpus"].startswith("sample-zh-en@")
    from tokstat import load_tokenizer

    kind = "hf" if fname.endswith(".json") else "spm"
    loaded = load_tokenizer(f"{kind}:{tmp_path / 'a' / fname}")
    assert loaded.encode_batch(["你好，世界。 Hello"]) == a.adapter.encode_batch(["你好，世界。 Hello"])
    assert b.metadata == a.metadata


def test_training_never_sees_heldout_segments():
    held = {s.texts["zh"] for s in SAMPLE if is_heldout(s.id)}
    train_texts = set(training_texts(SAMPLE))
    assert held and not (held & train_texts)
    assert 0.05 < len(held) / 400 < 0.15


def _zh_share(texts):
    zh = sum(len(t) for t in texts if any("\u4e00" <= c <= "\u9fff" for c in t))
    return zh / sum(len(t) for t in texts)


def test_mix_reweights_character_share():
    texts = training_texts(SAMPLE, mix={"zh": 0.8, "en": 0.2}, mix_unit="chars")
    assert 0.75 < _zh_share(texts) < 0.85
    # shares of content (the default): 80 % of the meaning in Chinese is its share of the aligned text's
    # characters, computed here from the raw training segments
    natural = training_texts(SAMPLE)
    c_zh = sum(len(t) for t in natural if any("\u4e00" <= c <= "\u9fff" for c in t))
    c_en = sum(len(t) for t in natural) - c_zh
    want = 0.8 * c_zh / (0.8 * c_zh + 0.2 * c_en)
    assert abs(_zh_share(training_texts(SAMPLE, mix={"zh": 0.8, "en": 0.2})) - want) < 0.03
    # equal content keeps the parallel corpus's own proportions
    assert abs(_zh_share(training_texts(SAMPLE, mix={"zh": 0.5, "en": 0.5})) - _zh_share(natural)) < 0.03
    zh_heavy = sweep(SAMPLE, "bpe", [1500], mix={"zh": 0.9, "en": 0.1}, n_boot=0)
    en_heavy = sweep(SAMPLE, "bpe", [1500], mix={"zh": 0.1, "en": 0.9}, n_boot=0)
    p = lambda df: df.filter(pl.col("language") == "zh")["premium"][0]  # noqa: E731
    assert p(zh_heavy) < p(en_heavy)


def test_sweep_table_columns_and_embedding_params():
    df = sweep(SAMPLE, "bpe", [500, 1000, 2000], d_model=256, n_boot=100)
    assert df.columns[:3] == ["requested_size", "vocab_size", "embedding_params"]
    assert df.columns[3:] == [c for c in COMPARE_COLUMNS if c not in ("vocab_size", "tokens_per_char_boot")] + ["new_merge_count",
                                                                                  "tokens_per_char_boot"]
    assert df.height == 6
    assert (df["embedding_params"] == df["vocab_size"] * 256 * 2).all()
    assert df.filter(pl.col("language") == "en")["premium"].to_list() == [1.0, 1.0, 1.0]
    tpc = df.filter(pl.col("language") == "zh").sort("vocab_size")["tokens"].to_list()
    assert tpc == sorted(tpc, reverse=True)


def test_unigram_sweep_trains_each_size():
    df = sweep(SAMPLE, "spm-unigram", [1600, 2400], n_boot=0)
    assert df["vocab_size"].unique().len() == 2
    from tokstat import TokstatError

    with pytest.raises(TokstatError, match="use a larger vocabulary size"):
        sweep(SAMPLE, "spm-unigram", [800])


@pytest.mark.slow
def test_cli_train_and_sweep(tmp_path, capsys):
    assert main(["train", "sample", "--algo", "bpe", "--vocab-size", "1000", "--out", str(tmp_path / "tok")]) == 0
    assert (tmp_path / "tok" / "tokenizer.json").exists()
    assert main(["sweep", "sample", "--sizes", "500,1000", "--out", str(tmp_path / "s.csv"),
                 "--plot", str(tmp_path / "s.png")]) == 0
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pl.read_csv(tmp_path / "s.csv").height == 4
    assert main(["sweep", "sample", "--mix", "zh=lots"]) == 2


def test_sweep_rows_equal_direct_training_compare():
    from tokstat import compare

    df = sweep(SAMPLE, "bpe", [700, 1400], n_boot=50)
    direct = compare(SAMPLE, [train(SAMPLE, "bpe", 700).adapter], n_boot=50)
    got = df.filter(pl.col("vocab_size") == 700).drop("requested_size", "vocab_size", "embedding_params")
    cols = [c for c in got.columns if c not in ("tokenizer", "signature", "new_merge_count", "tokens_per_char_boot")]
    assert got.select(cols).equals(direct.select(cols))


@pytest.mark.parametrize("fraction, seed", [(0.1, 0), (0.1, 7), (0.25, 3), (0.05, 12345)])
def test_trained_tokenizer_is_scored_on_its_own_heldout_split(fraction, seed):
    """Exactly the segments Split(fraction, seed) holds out, whatever the seed and fraction, and the
    signature names that split."""
    from tokstat import Split, compare

    c = load_corpus("sample")
    want = {s.id for s in c if Split(fraction, seed).is_heldout(s.id)}
    df, segs = compare(c, [f"train:bpe:400?heldout={fraction}&seed={seed}"], return_segments=True, n_boot=10)
    got = set(segs.filter(segs["language"] == "en")["segment"].to_list())
    assert got == want and len(want) > 0
    assert all(f"eval:heldout-{fraction:g}-seed{seed}|" in sig for sig in df["signature"])


def test_each_tokenizer_keeps_its_own_split_beside_pretrained_ones():
    """Two trained tokenizers with different seeds and a pretrained one in one job: each trained one
    on its own held-out segments, the pretrained one on all of them."""
    from tokstat import Split, compare, train

    c = load_corpus("sample")
    a = train(c, "bpe", 400, split=Split(0.1, 1)).adapter
    b = train(c, "bpe", 500, split=Split(0.2, 2)).adapter
    _, segs = compare(c, [a, b, "tiktoken:cl100k_base"], return_segments=True, n_boot=10)
    ids = [s.id for s in c]
    en = segs.filter(segs["language"] == "en")
    for tok, keep in ((a.id, Split(0.1, 1).is_heldout), (b.id, Split(0.2, 2).is_heldout), ("tiktoken/cl100k_base", None)):
        got = set(en.filter(en["tokenizer"] == tok)["segment"].to_list())
        assert got == {i for i in ids if keep is None or keep(i)}, tok


def test_sweep_seed_moves_the_split_and_boot_seed_only_the_interval():
    from tokstat import Split

    c = load_corpus("sample")
    n = {seed: sum(Split(0.1, seed).is_heldout(s.id) for s in c) for seed in (0, 1)}
    d0 = sweep(c, "bpe", [300], split=Split(0.1, 0), n_boot=50)
    d1 = sweep(c, "bpe", [300], split=Split(0.1, 1), n_boot=50)
    assert d0["segments"].to_list() == [n[0]] * 2 and d1["segments"].to_list() == [n[1]] * 2
    b = sweep(c, "bpe", [300], split=Split(0.1, 0), n_boot=50, boot_seed=9)
    assert b["tokens"].to_list() == d0["tokens"].to_list()
    assert b["premium_ci_low"].to_list() != d0["premium_ci_low"].to_list()


@pytest.mark.slow
@pytest.mark.parametrize("algo, fname", [("bpe", "tokenizer.json"), ("spm-bpe", "tokenizer.model")])
def test_a_saved_tokenizer_loaded_later_keeps_its_heldout_split(tmp_path, algo, fname):
    """tokstat train --out, then hf:/spm: on the same corpus: scored on its held-out segments again
    (metadata.json names the file's sha256); on another corpus: every segment, with a warning; with
    metadata that does not describe the file: a pretrained tokenizer."""
    import json
    import warnings

    from tokstat import Split, compare, train

    c = load_corpus("sample")
    train(c, algo, 2000, split=Split(0.2, 5), out=tmp_path / "t")
    spec = f"{'hf' if fname.endswith('json') else 'spm'}:{tmp_path / 't' / fname}"
    df, segs = compare(c, [spec], return_segments=True, n_boot=10)
    want = {s.id for s in c if Split(0.2, 5).is_heldout(s.id)}
    assert set(segs.filter(segs["language"] == "en")["segment"]) == want
    assert "eval:heldout-0.2-seed5" in df["signature"][0]
    other = tmp_path / "other.tsv"
    other.write_text("id\ten\tzh\na\thello\t你好\nb\tworld\t世界\n", encoding="utf-8")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        df2, segs2 = compare(str(other), [spec], return_segments=True, n_boot=10)
    assert any("was trained on sample-zh-en" in str(x.message) for x in w)
    assert segs2.height == 4 and "eval:" not in df2["signature"][0]
    meta = json.loads((tmp_path / "t" / "metadata.json").read_text())
    meta["files"][fname] = "0" * 64
    (tmp_path / "t" / "metadata.json").write_text(json.dumps(meta))
    _, segs3 = compare(c, [spec], return_segments=True, n_boot=10)
    assert segs3.filter(segs3["language"] == "en").height == 400
