"""The fast path (tokstat/adapters/fast.py): gigatoken's ids, verified against the reference library.

Oracles: the reference adapter (each tokenizer's own library) on the same texts, every array of the
encoding compared (ids, offsets, byte spans, partial-character flags); and compare's tables and
per-segment rows under ``--backend reference`` and ``--backend fast``.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat import compare, load_corpus
from tokstat.adapters import load_tokenizer
from tokstat.adapters import fast as fastmod
from tokstat.adapters.fast import PROBES, FastAdapter, select_backend, supports
from tokstat.cli import main
from tokstat.errors import TokstatError
from tokstat.train import train

gigatoken = pytest.importorskip("gigatoken")

SAMPLE = load_corpus("sample")
_trained = {}


def trained():
    """A byte-level BPE tokenizer.json tokstat trains here (no ../shared needed)."""
    if "t" not in _trained:
        _trained["t"] = train(SAMPLE, "bpe", 1200).adapter
    return _trained["t"]


def shared_specs(shared):
    t = shared / "tokenizers"
    return [f"tiktoken:{t}/cl100k_base/cl100k_base.tiktoken", f"tiktoken:{t}/o200k_base/o200k_base.tiktoken",
            f"tiktoken:{t}/r50k_base/r50k_base.tiktoken", f"hf:{t}/qwen3/tokenizer.json",
            f"hf:{t}/deepseek-v3/" + next(p.name for p in (t / "deepseek-v3").glob("*.json"))]


def same_encoding(ref, fast, texts):
    r, f = ref.encode_spans(texts), fast.encode_spans(texts)
    for k in ("ids", "off", "starts", "ends", "partial"):
        assert np.array_equal(getattr(r, k), getattr(f, k)), (k, ref.id)


HOSTILE = PROBES + [
    "", " ", "\n", "a", "中", "🙂", "\u0301", "x\u0301\u0302\u0303" * 100,
    "𠀀𠀁𪚥 𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "ﬁ ﬀ Ⅻ ㍿ ｶﾀｶﾅ", "\t" * 700 + "end", "0" * 10_000, "1 2 3 " * 3000,
    "\ud7ff\ue000\uffff", "A\u200dB\u200cC\u2060D", "'s'S'll'LL'Ve'RE" * 50,
]


def test_trained_tokenizer_fast_equals_reference_on_hostile_text():
    ref = trained()
    [fast] = select_backend([ref], "fast", [s.texts["en"] for s in SAMPLE][:50])
    assert isinstance(fast, FastAdapter) and fast.library_version.startswith("gigatoken-")
    same_encoding(ref, fast, HOSTILE)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300), min_size=1, max_size=8))
def test_trained_tokenizer_fast_equals_reference_on_any_text(texts):
    ref = trained()
    same_encoding(ref, FastAdapter(ref), texts)


@pytest.mark.slow
def test_every_supported_shared_tokenizer_is_identical(shared):
    pud = load_corpus(str(shared / "corpora" / "ud-pud"))
    texts = [t for s in pud for t in s.texts.values()][:6000] + HOSTILE
    big = ["".join(HOSTILE[:8]) * 40, ("中文字符 Latin ÄÖÜ 🙂 123 ") * 50_000]     # ~1 MB single texts
    assert all(len(b.encode()) > 1_000_000 for b in big[1:])
    for spec in shared_specs(shared):
        ref = load_tokenizer(spec)
        assert supports(ref) is None, spec
        with warnings.catch_warnings():
            warnings.simplefilter("error")        # verification passes: no warning
            [fast] = select_backend([ref], "fast", texts[:500])
        assert isinstance(fast, FastAdapter), spec
        same_encoding(ref, fast, texts)
        same_encoding(ref, fast, big)


def test_compare_reference_and_fast_give_the_same_numbers(tmp_path):
    ref = trained()
    a, sa = compare(SAMPLE, [ref], n_boot=200, workers=1, backend="reference", return_segments=True, progress=False)
    b, sb = compare(SAMPLE, [ref], n_boot=200, workers=2, backend="fast", return_segments=True, progress=False)
    assert sa.equals(sb)
    assert a.drop("signature").equals(b.drop("signature"))
    assert all("|lib:tokenizers-" in s for s in a["signature"])
    assert all(f"|lib:gigatoken-{fastmod._version('gigatoken')}+tokenizers-" in s for s in b["signature"])


def test_a_difference_on_the_sample_turns_the_fast_path_off(monkeypatch):
    ref = trained()
    real = FastAdapter.encode_fast

    def wrong(self, texts):
        ids, counts = real(self, texts)
        if len(ids):
            ids = ids.copy()
            ids[-1] = (ids[-1] + 1) % self.vocab_size
        return ids, counts

    monkeypatch.setattr(FastAdapter, "encode_fast", wrong)
    with pytest.warns(UserWarning, match=r"differs from tokenizers-.*counted by tokenizers-"):
        [a] = select_backend([ref], "auto", ["hello world"])
    assert a is ref


def test_a_wrong_text_during_the_run_is_caught_and_the_run_continues(monkeypatch):
    ref = trained()
    fast = FastAdapter(ref)
    real = FastAdapter.encode_fast
    texts = [s.texts["en"] for s in SAMPLE][:40]

    def drops_a_token(self, batch):       # a text whose tokens no longer add up to its bytes
        ids, counts = real(self, batch)
        if len(batch) > 1 and counts[0] > 1:
            ids, counts = ids[1:], counts.copy()
            counts[0] -= 1
        return ids, counts

    monkeypatch.setattr(FastAdapter, "encode_fast", drops_a_token)
    with pytest.warns(UserWarning, match="the fast path is off for it"):
        got = fast.encode_spans(texts)
    want = ref.encode_spans(texts)
    assert np.array_equal(got.ids, want.ids) and np.array_equal(got.starts, want.starts)
    assert fast.disabled and fast.library_version == ref.library_version


def test_fast_without_gigatoken_says_how_to_install(monkeypatch):
    monkeypatch.setattr(fastmod, "_gigatoken", lambda: None)
    ref = trained()
    with pytest.raises(TokstatError, match=r"tokstat\[fast\]"):
        select_backend([ref], "fast", [])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert select_backend([ref], "auto", []) == [ref]


def test_reference_and_unknown_backends():
    ref = trained()
    assert select_backend([FastAdapter(ref)], "reference", []) == [ref]
    with pytest.raises(TokstatError, match="--backend auto, fast or reference"):
        select_backend([ref], "turbo", [])


def test_unsupported_kinds_stay_on_the_reference(shared):
    t = shared / "tokenizers"
    spm = load_tokenizer(f"spm:{t}/llama2/tokenizer.model")
    llama3 = load_tokenizer(f"tiktoken:{t}/llama3/tokenizer.model?pattern=llama3")
    assert "byte-level BPE" in supports(spm) and "split pattern" in supports(llama3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                    # auto: silent
        assert select_backend([spm, llama3], "auto", ["x"]) == [spm, llama3]
    with pytest.warns(UserWarning, match="no fast path"):  # fast: says why
        assert select_backend([spm], "fast", ["x"]) == [spm]


def test_a_tokenizer_gigatoken_cannot_load_falls_back(shared):
    t = shared / "tokenizers" / "claude-legacy"
    ref = load_tokenizer(f"hf:{next(t.glob('*.json'))}")
    with pytest.warns(UserWarning, match="cannot load the tokenizer"):
        assert select_backend([ref], "fast", ["x"]) == [ref]


def test_fast_adapter_pickles_for_ray_and_rebuilds_its_tokenizer():
    ref = trained()
    fast = FastAdapter(ref)
    fast.encode_spans(["warm"])
    back = pickle.loads(pickle.dumps(fast))
    assert back._tok is None
    same_encoding(ref, back, HOSTILE[:10])


def test_cli_backend_option(tmp_path, capsys):
    spec = f"hf:{tmp_path}/tok.json"
    (tmp_path / "tok.json").write_text(trained().tok.to_str(), encoding="utf-8")
    outs = {}
    for backend in ("reference", "fast"):
        out = tmp_path / f"{backend}.csv"
        assert main(["compare", "sample", "-t", spec, "--backend", backend, "--out", str(out), "--quiet"]) in (0, None)
        outs[backend] = out.read_text(encoding="utf-8")
    import polars as pl

    a, b = (pl.read_csv(tmp_path / f"{k}.csv") for k in ("reference", "fast"))
    assert a.drop("signature").equals(b.drop("signature"))
    assert "gigatoken-" in outs["fast"] and "gigatoken-" not in outs["reference"]
    capsys.readouterr()
    assert main(["compare", "sample", "-t", spec, "--backend", "turbo"]) == 2
    assert "'turbo' is not one of 'auto', 'fast', 'reference'" in capsys.readouterr().err


def test_budget_and_sweep_take_the_backend(tmp_path):
    from tokstat.budget import budget
    from tokstat.sweep import sweep

    (tmp_path / "tok.json").write_text(trained().tok.to_str(), encoding="utf-8")
    spec = f"hf:{tmp_path}/tok.json"
    a = budget("sample-docs", [spec], sample=1.0, exact=True, workers=1, backend="reference", progress=False)
    b = budget("sample-docs", [spec], sample=1.0, exact=True, workers=1, backend="fast", progress=False)
    assert a.drop("signature").equals(b.drop("signature"))
    assert "gigatoken-" in b["signature"][0] and "gigatoken-" not in a["signature"][0]
    x = sweep(SAMPLE, "bpe", [400, 600, 800, 1000], n_boot=0, backend="reference", progress=False)
    y = sweep(SAMPLE, "bpe", [400, 600, 800, 1000], n_boot=0, backend="fast", progress=False)
    assert x.drop("signature").equals(y.drop("signature"))
    assert "gigatoken-" in y["signature"][0]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**16 - 1), max_size=40), max_size=12),
       st.sampled_from([np.uint8, np.uint16, np.int32, np.int64]), st.sampled_from([1, 2, 3, 7, 256, 257]))
def test_segment_sums_equals_a_running_total(segments, dtype, part):
    """The spelling check's per-text sums (reduceat over the non-empty texts, or over all when none
    is empty) equal the difference of a running total at the texts' offsets, empty texts (first,
    last, in a row) included; narrow lengths (uint8: tiktoken's tokens) add up in uint16 parts of at
    most ``part`` values (texts longer than a part, a part that starts inside a text) and then in int64."""
    from tokstat.adapters.base import segment_sums, unspelt

    top = np.iinfo(dtype).max if dtype in (np.uint8, np.uint16) else 2**16 - 1
    values = np.array([min(v, top) for s in segments for v in s], dtype=dtype)
    counts = np.array([len(s) for s in segments], dtype=np.int64)
    run = np.concatenate([[0], np.cumsum(values.astype(np.int64))])
    off = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    want = run[off[1:]] - run[off[:-1]]
    got = segment_sums(values, counts, part=part)
    assert got.dtype == np.int64 and got.tolist() == want.tolist()
    nbytes = want.copy()
    if len(nbytes):
        nbytes[-1] += 1                 # one text whose tokens do not add up to its bytes
    assert unspelt(values, counts, [], nbytes).tolist() == ([len(nbytes) - 1] if len(nbytes) else [])


def test_segment_sums_of_long_texts_of_long_tokens_do_not_wrap():
    """uint8 lengths add up in uint16 parts: a text of 300,000 tokens of 255 bytes (76.5 MB, far
    past 65,535) and texts that straddle the parts' boundaries sum exactly, as int64 does."""
    from tokstat.adapters.base import segment_sums

    rng = np.random.default_rng(7)
    counts = np.array([300_000, 1, 255, 256, 257, 0, 513, 65_537], dtype=np.int64)
    values = np.full(int(counts.sum()), 255, dtype=np.uint8)
    values[::3] = rng.integers(0, 256, len(values[::3]))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    want = [int(values[s:s + c].astype(np.int64).sum()) for s, c in zip(starts, counts)]
    assert segment_sums(values, counts).tolist() == want
    assert want[0] > 2**16 and want[-1] > 2**16


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=1, max_size=40), st.lists(st.integers(0, 10**6), max_size=200),
       st.integers(1, 64))
def test_gather_in_slices_equals_numpy_indexing(table, picks, step):
    """The spelling check's gather (np.take in slices of ``step`` uint32 ids) equals ``table[idx]``,
    whatever the slice size, and an id out of the table is an IndexError as with plain indexing."""
    t = np.array(table, dtype=np.uint8)
    idx = np.array([p % len(t) for p in picks], dtype=np.uint32)
    got = fastmod.gather(t, idx, step=step)
    assert got.dtype == np.uint8 and got.tolist() == t[idx].tolist()
    with pytest.raises(IndexError):
        fastmod.gather(t, np.append(idx, np.uint32(len(t))), step=step)
