"""Workers, shards and the Ray engine give results identical to one in-process worker; the
statistics stay bounded in size."""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat import compare, load_corpus
from tokstat.adapters.base import Adapter, from_lists
from tokstat.corpus import Corpus, Segment
from tokstat.counts import BUCKETS, LangStats, TextBatch, count_batch, percentile_from_counts
from tokstat.errors import TokstatError

from conftest import ROOT

SAMPLE = ROOT / "corpora/sample-zh-en/sample.tsv"


class Bytes(Adapter):
    """One token per UTF-8 byte (a reference tokenizer with no library behind it)."""

    id, family, algorithm, vocab_size, n_ids = "test/bytes", "test", "bytes", 256, 256
    byte_fallback = np.zeros(256, dtype=bool)

    def _encode(self, texts):
        if any("爆" in t for t in texts):
            raise ValueError("boom")
        bs = [list(t.encode()) for t in texts]
        return from_lists(bs, [list(range(len(b))) for b in bs], [list(range(1, len(b) + 1)) for b in bs])


def _frame(**kw) -> pl.DataFrame:
    return compare(str(SAMPLE), [Bytes(), "train:bpe:1500"], n_boot=200, **kw)


@pytest.mark.slow
def test_workers_give_identical_results():
    one = _frame(workers=1, batch_size=64)
    for w, bs in ((2, 64), (3, 50), (2, 4096)):
        assert _frame(workers=w, batch_size=bs).equals(one), (w, bs)


def test_segments_out_in_corpus_order_with_workers():
    _, s1 = compare(str(SAMPLE), [Bytes()], workers=1, batch_size=37, return_segments=True, n_boot=0)
    _, s2 = compare(str(SAMPLE), [Bytes()], workers=2, batch_size=37, return_segments=True, n_boot=0)
    assert s1.equals(s2) and s1.height == 2 * 400


def _shards(tmp_path, n: int, suffix: str):
    df = pl.read_csv(SAMPLE, separator="\t", quote_char=None).select("id", "en", "zh")
    paths = []
    for k, part in enumerate(np.array_split(np.arange(df.height), n)):
        p = tmp_path / f"part-{k:03d}{suffix}"
        chunk = df[part.tolist()]
        chunk.write_parquet(p) if suffix == ".parquet" else chunk.write_ndjson(p)
        paths.append(p)
    whole = tmp_path / "whole.parquet"
    df.write_parquet(whole)
    return paths, whole


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_sharded_corpus_equals_one_file(tmp_path, suffix):
    (tmp_path / "s").mkdir()
    _, whole = _shards(tmp_path / "s", 3, suffix)
    whole = whole.rename(tmp_path / "whole.parquet")
    c = load_corpus(tmp_path / "s")
    assert c.shards is not None and len(c.shards) == 3 and c.languages == ["en", "zh"]
    ref = compare(str(whole), [Bytes()], workers=1, n_boot=100)
    for w in (1, 2):
        got = compare(c, [Bytes()], workers=w, n_boot=100)
        assert got.drop("signature").equals(ref.drop("signature"))
    glob = compare(str(tmp_path / "s" / f"part-*{suffix}"), [Bytes()], workers=2, n_boot=100)
    assert glob.drop("signature").equals(ref.drop("signature"))


def test_shards_must_agree_on_languages(tmp_path):
    pl.DataFrame({"en": ["a"], "zh": ["b"]}).write_parquet(tmp_path / "a.parquet")
    pl.DataFrame({"en": ["a"], "fr": ["b"]}).write_parquet(tmp_path / "b.parquet")
    with pytest.raises(TokstatError, match=r"b\.parquet.*same language columns"):
        load_corpus(tmp_path)


def test_worker_error_reaches_the_caller():
    segs = [Segment(str(i), {"en": "x", "zh": "爆" if i == 300 else "好"}) for i in range(400)]
    c = Corpus("boom", ["en", "zh"], lambda: iter(segs))
    # the worker's own exception, whatever the worker count, with the worker's traceback as a note
    with pytest.raises(ValueError, match="boom") as e:
        compare(c, [Bytes()], workers=2, batch_size=16)
    assert any("in a worker process" in n and "_encode" in n for n in getattr(e.value, "__notes__", []))
    with pytest.raises(ValueError, match="boom"):
        compare(c, [Bytes()], workers=1, batch_size=16)


def test_bad_worker_count():
    with pytest.raises(TokstatError, match="--workers must be at least 1"):
        compare(str(SAMPLE), [Bytes()], workers=0)


@pytest.mark.slow
@pytest.mark.ray
def test_ray_engine_equals_local():
    ray = pytest.importorskip("ray")  # in the dev extra, so CI runs it
    # tokenizers Ray's workers can import (not a class defined in this test module)
    toks = ["train:bpe:1500", "train:spm-unigram:2000"]
    ref = compare(str(SAMPLE), toks, n_boot=200, workers=1, batch_size=16)
    got = compare(str(SAMPLE), toks, n_boot=200, workers=2, batch_size=16, engine="ray")
    assert not ray.is_initialized()           # the local instance the run started is shut down again
    assert got.equals(ref)


def test_stats_do_not_grow_with_the_corpus():
    a = Bytes()
    st = LangStats()
    sizes = []
    for k in range(6):
        texts = [f"segment {k}-{i} 你好" for i in range(200)]
        tb = TextBatch.build(texts, [f"{k}-{i}" for i in range(200)], None)
        enc = a.encode_spans(texts)
        st.add(tb, count_batch(tb, enc, a), enc, a)
        sizes.append((st.histogram.nbytes, st.pair_n.nbytes, len(st.lengths), st.rows))
    assert all(s[:2] == (256 * 8, BUCKETS * 8) and s[3] is None for s in sizes)
    assert st.segments == 1200


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=1, max_size=200), st.sampled_from([0, 5, 50, 95, 100]))
def test_percentile_from_counts_equals_numpy(xs, q):
    v, c = np.unique(np.array(xs), return_counts=True)
    assert percentile_from_counts(v, c, q) == pytest.approx(float(np.percentile(xs, q)), abs=1e-9)


def test_progress_meter_counts_segments_and_bytes(capsys):
    from tokstat.progress import Meter

    with Meter("t", enabled=True) as m:
        m.advance(3, 1_000)
        m.advance(2, 500)
    assert (m.segments, m.bytes) == (5, 1_500)
    with Meter("t", enabled=False) as q:    # --quiet / not a TTY: nothing drawn
        q.advance(1, 1)
    assert q._p is None


def test_progress_counts_every_segment_with_workers(monkeypatch):
    from tokstat import progress

    seen = []
    real = progress.Meter.__exit__

    def spy(self, *exc):
        seen.append((self.segments, self.bytes))
        return real(self, *exc)

    monkeypatch.setattr(progress.Meter, "__exit__", spy)
    text_bytes = sum(len(t.encode()) for s in load_corpus(str(SAMPLE)) for t in s.texts.values())
    for w in (1, 2):
        compare(str(SAMPLE), [Bytes()], workers=w, n_boot=0, progress=False)
    assert seen == [(400, text_bytes), (400, text_bytes)]


# --- a batch of a few long texts on more than one core (--join): encoded and counted on threads ---

@pytest.fixture(scope="module")
def tiny_adapters(tmp_path_factory):
    from tok_fixtures import tiny_files

    from tokstat import load_tokenizer

    files = tiny_files(tmp_path_factory.mktemp("tiny"))
    return [Bytes(), load_tokenizer(f"tiktoken:{files['tiktoken']}?pattern=cl100k_base"),
            *(load_tokenizer(f"{kind}:{files[kind]}") for kind in ("hf", "spm"))]


def _threaded_and_not(corpus, adapters, **kw):
    """compare on one core (the one-thread path) and on two (threads for a batch of a few texts)."""
    return [compare(corpus, adapters, workers=w, n_boot=0, return_segments=True, **kw) for w in (1, 2)]


def test_join_on_threads_equals_one_core(tiny_adapters):
    (d1, s1), (d2, s2) = _threaded_and_not(load_corpus(str(SAMPLE)), tiny_adapters, join=True)
    assert d1.equals(d2) and s1.equals(s2)
    assert s1.height == len(tiny_adapters) * 2 and (s1["tokens"] > 1000).all()   # one long text each


_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x30FF, blacklist_categories=("Cs",)), max_size=60)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(_text, _text, _text), min_size=1, max_size=8))
def test_small_batches_on_threads_equal_one_core(tiny_adapters, rows):
    segs = [Segment(str(i), {"en": a, "zh": b, "fr": c}) for i, (a, b, c) in enumerate(rows)]
    corpus = Corpus("tiny", ["en", "zh", "fr"], lambda: iter(segs))
    if not any(t.strip() for s in segs for t in s.texts.values()):
        return
    try:
        (d1, s1), (d2, s2) = _threaded_and_not(corpus, tiny_adapters)
    except TokstatError as e:          # e.g. no segment with text: both paths must refuse alike
        with pytest.raises(TokstatError, match=re.escape(str(e.message)[:40])):
            compare(corpus, tiny_adapters, workers=2, n_boot=0)
        return
    assert d1.equals(d2) and s1.equals(s2)


def test_error_on_a_background_thread_reaches_the_caller():
    import threading

    before = threading.active_count()
    segs = [Segment(str(i), {"en": "x", "zh": "爆" if i == 3 else "好"}) for i in range(10)]
    c = Corpus("boom", ["en", "zh"], lambda: iter(segs))
    for join in (True, False):
        with pytest.raises(ValueError, match="boom"):
            compare(c, [Bytes()], workers=2, join=join)
    assert threading.active_count() == before      # the pools were shut down


def test_encoded_texts_is_the_encoding_of_those_texts(tiny_adapters):
    texts = ["the cat", "", "語言模型 tokens", "hello 中文 world", "x"]
    for a in tiny_adapters:
        whole = a.encode_spans(texts)
        for i, j in ((0, 5), (1, 3), (2, 4), (4, 5), (3, 3)):
            part, direct = whole.texts(i, j), a.encode_spans(texts[i:j])
            for f in ("ids", "off", "starts", "ends", "partial"):
                assert np.array_equal(getattr(part, f), getattr(direct, f)), (a.id, i, j, f)
