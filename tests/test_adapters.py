"""Oracle and property tests: adapter ids equal the library called directly; spans tile the text;
partial-character tokens are flagged exactly where a character's bytes are split."""

from __future__ import annotations

import hashlib
import inspect
import re
import shutil
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokstat import TokstatError, load_corpus, load_tokenizer

from tok_fixtures import published_pattern, CASES, LOSSLESS, SHARED_TOK

pytestmark = pytest.mark.skipif(not SHARED_TOK.is_dir(), reason="../shared is absent")
_cache: dict = {}


def adapter_and_oracle(name):
    if name not in _cache:
        spec, make = CASES[name]
        _cache[name] = (load_tokenizer(spec), make())
    return _cache[name]


def texts_for_oracle():
    if "texts" not in _cache:
        out = [s.texts[lang] for s in load_corpus("sample") for lang in ("en", "zh")]
        pud = SHARED_TOK.parent / "corpora" / "ud-pud"
        c = load_corpus(pud).select(["zh", "en", "ja", "ko", "th", "ar"])
        for i, s in enumerate(c):
            if i >= 150:
                break
            out.extend(s.texts.values())
        _cache["texts"] = out
    return _cache["texts"]


def check_spans(name, adapter, texts):
    enc = adapter.encode_spans(texts)
    for i, t in enumerate(texts):
        b = t.encode("utf-8")
        spans = enc.spans(i)
        part = enc.partial[enc.off[i]:enc.off[i + 1]].tolist()
        prev = 0
        for (s, e), p in zip(spans, part):
            assert 0 <= s <= e <= len(b)
            assert s >= prev or s == e, (name, t, spans)
            prev = max(prev, e)
            if e > s:  # partial exactly when the token's bytes are not whole characters
                try:
                    b[s:e].decode("utf-8")
                    whole = True
                except UnicodeDecodeError:
                    whole = False
                assert p == (not whole), (name, t, s, e)
        if name in LOSSLESS:
            assert b"".join(b[s:e] for s, e in spans) == b, (name, t)
            nz = [(s, e) for s, e in spans if e > s]
            assert all(nz[k][1] == nz[k + 1][0] for k in range(len(nz) - 1))
        else:  # lossy tokenizers still cover every character but spaces and marks (BERT strips accents)
            covered = bytearray(len(b))
            for s, e in spans:
                covered[s:e] = b"\x01" * (e - s)
            for j, ch in enumerate(t):
                pos = len(t[:j].encode())
                if not ch.isspace() and ch.isprintable() and not unicodedata.category(ch).startswith("M"):
                    assert covered[pos], (name, t, ch)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_ids_equal_library_and_spans_tile(name):
    adapter, oracle = adapter_and_oracle(name)
    texts = texts_for_oracle()
    got = adapter.encode_batch(texts)
    for t, ids in zip(texts, got):
        assert ids == list(oracle(t)), (name, t)
    check_spans(name, adapter, texts)
    assert adapter.vocab_size > 1000 and adapter.file_hash and adapter.library_version


TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "qwen3", "llama2", "bert-base-chinese", "t5"])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(TEXT, min_size=1, max_size=4))
def test_property_arbitrary_unicode(name, texts):
    import unicodedata

    texts = [unicodedata.normalize("NFC", t) for t in texts]
    adapter, oracle = adapter_and_oracle(name)
    assert adapter.encode_batch(texts) == [list(oracle(t)) for t in texts]
    check_spans(name, adapter, texts)


def test_cjk_split_flags_on_known_probe():
    adapter, _ = adapter_and_oracle("cl100k_base")
    enc = adapter.encode_spans(["Hello world 你好，世界"])
    # PROVENANCE probe: ['Hello', ' world', ' ', '你', '好', '，', '�', '�', '界'] - 世 is split in two
    assert enc.tokens(0) == [9906, 1917, 220, 57668, 53901, 3922, 3574, 244, 98220]
    assert enc.partial.tolist() == [False] * 6 + [True, True, False]


def test_unk_and_byte_fallback_ids():
    bert, _ = adapter_and_oracle("bert-base-multilingual-cased")
    assert len(bert.unk_ids) == 1
    llama2, _ = adapter_and_oracle("llama2")
    enc = llama2.encode_spans(["𝄞"])
    # dummy prefix "▁" (zero-width), then the character's four UTF-8 bytes, one byte each
    assert len(enc.ids) == 5 and not llama2.byte_fallback[enc.ids[0]] and llama2.byte_fallback[enc.ids[1:]].all()
    assert enc.spans(0) == [(0, 0), (0, 1), (1, 2), (2, 3), (3, 4)]


def test_wordpiece_casing_default_is_stated():
    a = load_tokenizer(f"wordpiece:{SHARED_TOK}/bert-base-chinese/vocab.txt")
    assert a.id.endswith("[lower]") and a.encode_batch(["Hello"])[0] != [100]
    cased = load_tokenizer(f"wordpiece:{SHARED_TOK}/bert-base-chinese/vocab.txt?lowercase=false")
    assert cased.encode_batch(["Hello"])[0] == [100]  # [UNK]: the vocab is lower-case


@pytest.mark.slow
def test_tiktoken_registry_name_offline_from_cache(tmp_path, monkeypatch):
    import tiktoken_ext.openai_public as op

    src = inspect.getsource(op)
    for name in ("cl100k_base", "o200k_base", "r50k_base"):
        url = re.findall(r"https://\S+?/" + name + r"\.tiktoken", src)[0]
        shutil.copy(SHARED_TOK / name / f"{name}.tiktoken", tmp_path / hashlib.sha1(url.encode()).hexdigest())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    import tiktoken

    tiktoken.registry.ENCODINGS.clear()
    for name in ("cl100k_base", "o200k_base", "r50k_base"):
        a = load_tokenizer(f"tiktoken:{name}")
        assert a.id == f"tiktoken/{name}"
        assert a.encode_batch(["Hello world 你好，世界"])[0] == tiktoken.get_encoding(name).encode_ordinary(
            "Hello world 你好，世界")


def test_tiktoken_registry_seeds_cache_from_local_dir(tmp_path, monkeypatch):
    import tiktoken

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TOKSTAT_TOKENIZERS", str(SHARED_TOK))
    tiktoken.registry.ENCODINGS.clear()
    a = load_tokenizer("tiktoken:cl100k_base")
    assert a.file_hash and len(list((tmp_path / "cache").iterdir())) == 1


@pytest.mark.slow
def test_tiktoken_gpt2_seeds_cache_from_encoder_json_and_vocab_bpe(tmp_path, monkeypatch):
    """gpt2 is two files (vocab.bpe, encoder.json; the shared copy is pretty-printed JSON): both seed
    tiktoken's cache, tiktoken checks their published hashes, and the ids equal r50k_base's."""
    import tiktoken

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TOKSTAT_TOKENIZERS", str(SHARED_TOK))
    tiktoken.registry.ENCODINGS.clear()
    a = load_tokenizer("tiktoken:gpt2")
    assert len(list((tmp_path / "cache").iterdir())) == 2
    r50k = tiktoken.Encoding("r50k", pat_str=published_pattern("r50k_base"),
                             mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(SHARED_TOK / "r50k_base/r50k_base.tiktoken")),
                             special_tokens={})
    texts = ["Hello world 你好，世界", "tokstat"]
    assert a.encode_batch(texts) == [r50k.encode_ordinary(t) for t in texts]


@pytest.mark.slow
def test_hf_hub_id_offline_from_cache(tmp_path, monkeypatch):
    snap = tmp_path / "hub" / "models--Qwen--Qwen3-8B" / "snapshots" / ("a" * 40)
    snap.mkdir(parents=True)
    shutil.copy(SHARED_TOK / "qwen3" / "tokenizer.json", snap / "tokenizer.json")
    (tmp_path / "hub" / "models--Qwen--Qwen3-8B" / "refs").mkdir()
    (tmp_path / "hub" / "models--Qwen--Qwen3-8B" / "refs" / "main").write_text("a" * 40)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(c, "HF_HUB_OFFLINE", True)
    a = load_tokenizer("hf:Qwen/Qwen3-8B")
    qwen, oracle = adapter_and_oracle("qwen3")
    assert a.id == "hf/Qwen/Qwen3-8B" and a.encode_batch(["你好，世界"])[0] == oracle("你好，世界")
    with pytest.raises(TokstatError, match="cannot get tokenizer.json for hub id"):
        load_tokenizer("hf:nobody/nothing")


@pytest.mark.parametrize("spec,msg", [
    ("cl100k_base", "has no kind"),
    ("magic:foo", "unknown tokenizer kind 'magic'"),
    ("tiktoken:nope_base", "unknown tiktoken encoding"),
    ("hf:/no/such/tokenizer.json", "tokenizer file not found"),
    ("spm:/no/such.model", "SentencePiece model not found"),
    ("wordpiece:/no/vocab.txt", "vocabulary file not found"),
    ("train:bpe:8000", "is trained on a corpus, not loaded from a file"),
    ("wordpiece:x?lowercase", "is not key=value"),
])
def test_bad_specs(spec, msg):
    with pytest.raises(TokstatError, match=msg):
        load_tokenizer(spec)


@pytest.mark.parametrize("spec,msg", [
    ("train:bpe:lots", "bad training spec"),
    ("train:magic:100", "bad training spec"),
    ("train:bpe:0", "bad training spec"),
    ("train:bpe:300?heldout=2", "held-out fraction 2 is not in"),
    ("train:bpe:300?seed=x", "bad \\?heldout= or \\?seed="),
    ("train:bpe:300?vocab=9", "unknown option"),
])
def test_bad_train_specs_in_the_job_layer(spec, msg):
    """train: specs are resolved by compare (the job layer), with the corpus; bad ones are one line."""
    from tokstat import compare

    with pytest.raises(TokstatError, match=msg) as e:
        compare("sample", [spec])
    assert "\n" not in str(e.value)


def test_corrupt_files_give_one_line(tmp_path):
    (tmp_path / "tokenizer.json").write_text('{"model": {"type": "BPE", "vocab": ', encoding="utf-8")
    (tmp_path / "bad.model").write_bytes(b"\x00garbage" * 10)
    (tmp_path / "bad.tiktoken").write_text("not base64 !!\n")
    for spec, msg in ((f"hf:{tmp_path}/tokenizer.json", "not a valid tokenizer.json"),
                      (f"spm:{tmp_path}/bad.model", "not a SentencePiece model"),
                      (f"tiktoken:{tmp_path}/bad.tiktoken?pattern=cl100k_base", "not a tiktoken ranks file")):
        with pytest.raises(TokstatError, match=msg) as e:
            load_tokenizer(spec)
        assert "\n" not in str(e.value) and "fix:" in str(e.value)


def test_ranks_file_without_pattern_names_fix(tmp_path):
    shutil.copy(SHARED_TOK / "llama3" / "tokenizer.model", tmp_path / "tokenizer.model")
    with pytest.raises(TokstatError, match=r"\?pattern=NAME"):
        load_tokenizer(f"tiktoken:{tmp_path}/tokenizer.model")


def test_spm_algorithm_read_from_model():
    assert adapter_and_oracle("llama2")[0].algorithm == "sentencepiece bpe"
    assert adapter_and_oracle("t5")[0].algorithm == "sentencepiece unigram"


def test_padding_and_truncation_of_a_tokenizer_file_are_turned_off(tmp_path):
    """A tokenizer.json that pads and truncates to 16 tokens (as sentence-transformers files do to 128)
    is counted as the library counts with both off, never 16 tokens per segment."""
    import warnings

    from tokenizers import Tokenizer

    from tokstat import train

    plain = train(load_corpus("sample"), "bpe", 500).adapter.tok
    plain.enable_padding(length=16)
    plain.enable_truncation(max_length=16)
    path = tmp_path / "tokenizer.json"
    plain.save(str(path))
    texts = ["short", "a much longer sentence than sixteen tokens can hold, with 中文 too, and more words after it"]
    assert [len(e.ids) for e in Tokenizer.from_file(str(path)).encode_batch(texts)] == [16, 16]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        a = load_tokenizer(f"hf:{path}")
    assert any("padding and truncation are turned off" in str(x.message) for x in w)
    oracle = Tokenizer.from_file(str(path))
    oracle.no_padding()
    oracle.no_truncation()
    want = [e.ids for e in oracle.encode_batch(texts, add_special_tokens=False)]
    assert a.encode_batch(texts) == want and len(want[1]) > 16


def test_two_tokenizer_files_in_one_folder_get_distinct_readable_ids(tmp_path):
    """hf/<folder> stays the id of a folder's only tokenizer (tokenizer.json, or deepseek's
    deepseek_tokenizer.json beside its config); two tokenizer files in one folder are
    hf/<folder>/<stem>, so compare never refuses them as one id."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    from tokstat.adapters import load_tokenizer

    def save(path, words):
        tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(["[UNK]", *words])}, unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        tok.save(str(path))

    one = tmp_path / "solo"
    one.mkdir()
    save(one / "deepseek_tokenizer.json", ["a"])
    (one / "tokenizer_config.json").write_text("{}")
    assert load_tokenizer(f"hf:{one / 'deepseek_tokenizer.json'}").id == "hf/solo"
    two = tmp_path / "pair"
    two.mkdir()
    save(two / "a.json", ["a"])
    save(two / "b.json", ["b"])
    save(two / "tokenizer.json", ["c"])
    ids = {load_tokenizer(f"hf:{two / n}").id for n in ("a.json", "b.json", "tokenizer.json")}
    assert ids == {"hf/pair/a", "hf/pair/b", "hf/pair"}
