"""Metrics against hand-computed examples and independent computations."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from tokstat import compare, load_corpus
from tokstat.adapters.base import Adapter, from_lists
from tokstat.corpus import Corpus, Segment
from tokstat.counts import LangStats, TextBatch, count_batch
from tokstat.metrics import bootstrap_premium, renyi_efficiency
from tokstat.segmenters import jieba_words, regex_words

from tok_fixtures import SHARED_TOK


class Table(Adapter):
    """A reference tokenizer defined by a table of byte-length pieces: greedy longest match over a
    fixed vocabulary of byte strings, falling back to single bytes (ids = 1000 + byte) or [UNK]."""

    def __init__(self, vocab: list[bytes], unk_chars: str = ""):
        self.vocab = {v: i for i, v in enumerate(vocab)}
        self.id, self.family, self.algorithm = "test/table", "test", "greedy"
        self.vocab_size = len(vocab) + 256
        self.n_ids = 1000 + 256 + 1
        self.unk_id = 1256
        self.unk_ids = frozenset({self.unk_id})
        self.unk_chars = unk_chars
        self.byte_fallback = np.zeros(self.n_ids, dtype=bool)
        self.byte_fallback[1000:1256] = True
        self.file_hash, self.library_version = "0" * 64, "test"

    def _encode(self, texts):
        ids, starts, ends = [], [], []
        for t in texts:
            b = t.encode()
            i, a, s, e = 0, [], [], []
            while i < len(b):
                if b[i:i + 1] == b" ":
                    i += 1
                    continue
                ch = b[i:].decode("utf-8", "ignore")[:1]
                if ch and ch in self.unk_chars:
                    n = len(ch.encode())
                    a.append(self.unk_id)
                    s.append(i)
                    e.append(i + n)
                    i += n
                    continue
                for n in range(min(12, len(b) - i), 0, -1):
                    if b[i:i + n] in self.vocab:
                        a.append(self.vocab[b[i:i + n]])
                        break
                else:
                    n = 1
                    a.append(1000 + b[i])
                s.append(i)
                e.append(i + n)
                i += n
            ids.append(a)
            starts.append(s)
            ends.append(e)
        return from_lists(ids, starts, ends)


def one_row(adapter, texts: dict[str, str], words=None):
    seg = Segment("1", texts, words or {})
    c = Corpus("t", list(texts), lambda: [seg], [], {}, frozenset(words or {}))
    return {r["language"]: r for r in compare(c, [adapter], pivot="en").iter_rows(named=True)}


def test_hand_computed_example():
    # en "the cat" -> [the][cat]; zh "猫很好" -> [猫][很 as 3 byte tokens][好]
    a = Table([b"the", b"cat", "猫".encode(), "好".encode()])
    rows = one_row(a, {"en": "the cat", "zh": "猫很好"})
    en, zh = rows["en"], rows["zh"]
    assert (en["chars"], en["bytes"], en["tokens"], en["words"]) == (7, 7, 2, 2)
    assert en["tokens_per_char"] == 2 / 7 and en["bytes_per_token"] == 3.5 and en["tokens_per_word"] == 1.0
    assert en["continued_word_rate"] == 0.0 and en["split_char_rate"] == 0.0
    assert en["boundary_precision"] == 1.0 and en["boundary_recall"] == 1.0 and en["premium"] == 1.0
    assert (zh["chars"], zh["bytes"], zh["tokens"]) == (3, 9, 5)
    # jieba: 猫 / 很 / 好 -> 3 words; "很" is covered by 3 tokens -> continued
    assert zh["words"] == len(jieba_words("猫很好"))
    assert zh["split_char_rate"] == 1 / 3          # 很's bytes fall into three tokens
    assert zh["byte_fallback_rate"] == 3 / 5
    assert zh["premium"] == 5 / 2
    assert zh["single_token_char_coverage"] == 2 / 3  # 猫, 好 single tokens; 很 is three
    assert zh["vocab_used"] == 5 and en["vocab_used"] == 2
    # token boundaries at bytes 3, 4, 5, 6 (4 and 5 inside 很); word boundaries from jieba
    spans = jieba_words("猫很好")
    word_bounds = {e for _, e in spans[:-1]}
    assert zh["boundary_precision"] == len(word_bounds & {1, 2}) / 4
    assert zh["boundary_recall"] == 1.0


def test_unk_rate_counts_characters():
    a = Table([b"a", b"b"], unk_chars="Ω")
    with pytest.warns(UserWarning, match="unreliable"):
        rows = one_row(a, {"en": "aΩΩb"})
    assert rows["en"]["unk_rate"] == 2 / 4


def test_gold_words_boundaries():
    a = Table([b"un", b"do", b"ing", b"x"])
    rows = one_row(a, {"en": "undoing x"}, words={"en": ["undoing", "x"]})
    r = rows["en"]
    assert r["words"] == 2 and r["continued_word_rate"] == 0.5 and r["tokens_per_word"] == 2.0
    # token boundaries (whitespace removed): 2, 4, 7 ; word boundaries: 7
    assert r["boundary_precision"] == 1 / 3 and r["boundary_recall"] == 1.0
    assert math.isclose(r["boundary_f1"], 2 * (1 / 3) / (1 / 3 + 1))


def test_renyi_reference():
    h = np.array([6, 3, 1, 0])
    p = h[h > 0] / h.sum()
    ref = (1 / (1 - 2.5)) * math.log(sum(p ** 2.5)) / math.log(4)
    assert math.isclose(renyi_efficiency(h, 4), ref)


def test_bootstrap_is_seeded_and_brackets():
    rng = np.random.default_rng(1)
    lt, pt = rng.integers(5, 50, 300), rng.integers(5, 50, 300)
    a = bootstrap_premium(lt, pt, seed=3)
    assert a == bootstrap_premium(lt, pt, seed=3)
    assert a[0] < lt.sum() / pt.sum() < a[1]


def test_regex_words_examples():
    assert [("Don't stop, e-mail!"[s:e]) for s, e in regex_words("Don't stop, e-mail!")] == \
        ["Don't", "stop", ",", "e-mail", "!"]


def _stats(a, texts, ids, words) -> LangStats:
    st = LangStats(rows=[])
    tb = TextBatch.build(texts, ids, words)
    enc = a.encode_spans(texts)
    st.add(tb, count_batch(tb, enc, a), enc, a, seq=int(ids[0], 36))
    return st


def test_merge_two_halves_equals_whole():
    a = Table([b"the", b"cat", "猫".encode()])
    texts = ["the cat sat", "猫 and the cat", "tiny", "the the the"]
    words = [regex_words(t) for t in texts]
    whole = _stats(a, texts, ["a", "b", "c", "d"], words)
    h1, h2 = _stats(a, texts[:2], ["a", "b"], words[:2]), _stats(a, texts[2:], ["c", "d"], words[2:])
    for m in (h1.merge(h2), h2.merge(h1)):   # order-independent
        assert m.frame().equals(whole.frame())
        assert (m.histogram == whole.histogram).all() and m.cjk == whole.cjk
        assert (m.sums == whole.sums).all() and m.lengths == whole.lengths and m.segments == whole.segments


@pytest.fixture
def cl100k():
    if not SHARED_TOK.is_dir():
        pytest.skip("../shared is absent")
    return f"tiktoken:{SHARED_TOK}/cl100k_base/cl100k_base.tiktoken"


@pytest.mark.slow
def test_pud_english_totals_equal_library(cl100k):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from tokstat.adapters.tiktoken_ import PATTERNS

    enc = tiktoken.Encoding("c", pat_str=PATTERNS["cl100k_base"],
                            mergeable_ranks=load_tiktoken_bpe(str(SHARED_TOK / "cl100k_base/cl100k_base.tiktoken")),
                            special_tokens={})
    corpus = load_corpus(SHARED_TOK.parent / "corpora/ud-pud")
    df = compare(corpus, [cl100k], pivot="en")
    assert df.height == 12
    en = df.filter(pl.col("language") == "en").row(0, named=True)
    assert en["tokens"] == sum(len(enc.encode_ordinary(s.texts["en"])) for s in corpus)
    assert en["premium"] == 1.0 and en["premium_ci_low"] == 1.0 == en["premium_ci_high"]
    zh = df.filter(pl.col("language") == "zh").row(0, named=True)
    assert zh["premium"] == zh["tokens"] / en["tokens"]
    assert zh["premium_ci_low"] < zh["premium"] < zh["premium_ci_high"]
    assert "words:gold" in zh["signature"] and zh["words"] == sum(len(s.words["zh"]) for s in corpus)
    ja = df.filter(pl.col("language") == "ja").row(0, named=True)
    assert ja["split_char_rate"] > 0 and ja["single_token_char_coverage"] < 1


@pytest.mark.slow
def test_tatoeba_and_sample_and_join(cl100k, tmp_path):
    df, segs = compare(str(SHARED_TOK.parent / "corpora/tatoeba-cmn-eng/cmn.txt"), [cl100k], return_segments=True)
    assert df["segments"].to_list() == [26388, 26388]
    assert segs.filter(pl.col("language") == "zh")["tokens"].sum() == df.filter(pl.col("language") == "zh")["tokens"][0]
    j = compare("sample", [cl100k], join=True)
    assert j["segments"].to_list() == [1, 1] and "mode:join" in j["signature"][0]
    assert j["premium_ci_low"].null_count() == 2


def test_signature_and_train_heldout(cl100k):
    df = compare("sample", [cl100k, "train:bpe:2000"])
    sig = df["signature"].to_list()
    assert sig[0].startswith("corpus:sample-zh-en@") and "|tok:tiktoken/cl100k_base@223921b7|" in sig[0]
    assert "words:regex" in sig[0] and "words:jieba-" in sig[1] and sig[0].endswith("|tokstat:0.1.0")
    trained = df.filter(pl.col("tokenizer") == "train/bpe-2000")
    assert "eval:heldout-0.1-seed0" in trained["signature"][0]
    assert 0 < trained["segments"][0] < 100  # only the held-out 10 % is evaluated


@pytest.mark.slow
def test_cli_compare_writes_atomically(cl100k, tmp_path, capsys):
    from tokstat.cli import main

    out = tmp_path / "r.parquet"
    assert main(["compare", "sample", "-t", cl100k, "--out", str(out), "--segments-out", str(tmp_path / "s.csv")]) == 0
    assert "premium" in capsys.readouterr().out
    df = pl.read_parquet(out)
    assert df.columns[0] == "tokenizer" and df.height == 2
    assert pl.read_csv(tmp_path / "s.csv").height == 800
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    out2 = tmp_path / "r2.parquet"
    main(["compare", "sample", "-t", cl100k, "--out", str(out2)])
    assert out.read_bytes() == out2.read_bytes()  # deterministic, byte-identical
    assert main(["compare", "sample", "-t", cl100k, "--pivot", "fr"]) == 2


def test_empty_segments_are_reported_not_dropped(tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    (d / "en.txt").write_text("the cat\nthe\n", encoding="utf-8")
    (d / "zh.txt").write_text("猫\n\n", encoding="utf-8")
    a = Table([b"the", b"cat", "猫".encode()])
    with pytest.warns(UserWarning, match="zh: 1 empty segment"):
        df, segs = compare(load_corpus(d), [a], return_segments=True)
    zh = df.filter(pl.col("language") == "zh").row(0, named=True)
    assert zh["segments"] == 1 and segs.filter(pl.col("language") == "zh").height == 2
    assert zh["premium"] == 1 / 2  # only the segment non-empty in both languages
