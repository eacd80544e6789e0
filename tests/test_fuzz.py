"""Fuzz and edge cases for every loader and adapter: arbitrary bytes (what surrogate-escaped input
stands for), control characters, zero-width joiners, emoji sequences, right-to-left text, BOMs,
CRLF, files without a final newline, empty files and a 10 MB line. Each input either loads or fails
with a TokstatError naming the file; nothing else escapes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokstat import load_corpus, load_tokenizer
from tokstat.errors import TokstatError

from tok_fixtures import CASES, SHARED_TOK

TRICKY = ["\u200d", "👩‍👩‍👧", "🏳️‍🌈", "👍🏽", "\u202e", "שלום", "مرحبا", "\u0000", "\x07", "\x1b[31m", "\u2028",
          "\ufeff", "e\u0301", "한국어", "\U0010ffff", "\ud7ff", "\t", " ", "\u3000", "你好", "x"]
TEXT = st.lists(st.sampled_from(TRICKY) | st.text(st.characters(exclude_categories=("Cs",)), max_size=5),
                max_size=12).map("".join)
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _load_all(spec):
    c = load_corpus(spec)
    return [s for s in c]


def _loads_or_names_file(path):
    try:
        return _load_all(path)
    except TokstatError as e:
        assert path.name in str(e) or (e.path is not None), str(e)
        return None


# ---------------------------------------------------------------- arbitrary bytes in every format

def _tsv(b):
    return b"en\tzh\n" + b


def _jsonl(b):
    return b'{"en": "a", "zh": "b"}\n' + b


def _tmx(b):
    return b"<tmx><body><tu><tuv xml:lang='en'><seg>" + b + b"</seg></tuv><tuv xml:lang='zh'><seg>x</seg></tuv></tu></body></tmx>"


def _conllu(b):
    return b"# sent_id = 1\n# text = x\n1\t" + b + b"\t_\tX\t_\t_\t0\troot\t_\t_\n\n"


def _po(b):
    return b'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "a"\nmsgstr "' + b + b'"\n'


FORMATS = {"c.tsv": _tsv, "c.jsonl": _jsonl, "c.tmx": _tmx, "en_pud-ud-test.conllu": _conllu, "zh.po": _po,
           "c.csv": lambda b: b"en,zh\n" + b, "c.parquet": lambda b: b"PAR1" + b + b"PAR1",
           "zh.mo": lambda b: b"\xde\x12\x04\x95" + b}


@pytest.mark.parametrize("name", sorted(FORMATS))
@FUZZ
@given(data=st.binary(max_size=64))
def test_arbitrary_bytes_load_or_fail_cleanly(tmp_path_factory, name, data):
    p = tmp_path_factory.mktemp("f") / name
    p.write_bytes(FORMATS[name](data))
    _loads_or_names_file(p)


@FUZZ
@given(texts=st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=5))
def test_textdir_arbitrary_unicode_round_trips(tmp_path_factory, texts):
    d = tmp_path_factory.mktemp("d")
    clean = [(a.replace("\n", " ").replace("\r", " ").replace("\u2028", " ").replace("\x85", " ")
              .replace("\x0b", " ").replace("\x0c", " ").replace("\x1c", " ").replace("\x1d", " ")
              .replace("\x1e", " ").replace("\u2029", " "), b) for a, b in texts]
    en = "\n".join(a for a, _ in clean) + "\n"
    (d / "en.txt").write_text(en, encoding="utf-8")
    (d / "zh.txt").write_text("\n".join("z" for _ in clean) + "\n", encoding="utf-8")
    segs = _loads_or_names_file(d)
    if segs is not None:
        import unicodedata

        assert [s.texts["en"] for s in segs] == [unicodedata.normalize("NFC", a[1:] if i == 0 and a.startswith("\ufeff") else a)
                                                 for i, (a, _) in enumerate(clean)]


@FUZZ
@given(texts=st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=5))
def test_jsonl_arbitrary_unicode_round_trips(tmp_path_factory, texts):
    import unicodedata

    p = tmp_path_factory.mktemp("j") / "c.jsonl"
    p.write_text("".join(json.dumps({"en": a, "zh": b}) + "\n" for a, b in texts), encoding="utf-8")
    segs = _load_all(p)
    assert [(s.texts["en"], s.texts["zh"]) for s in segs] == [
        (unicodedata.normalize("NFC", a), unicodedata.normalize("NFC", b)) for a, b in texts]


# ---------------------------------------------------------------- line-level edge cases

EDGE = {
    "bom": b"\xef\xbb\xbfen\tzh\nhello\t\xe4\xbd\xa0\xe5\xa5\xbd\n",
    "crlf": b"en\tzh\r\nhello\t\xe4\xbd\xa0\xe5\xa5\xbd\r\n",
    "no-final-newline": b"en\tzh\nhello\t\xe4\xbd\xa0\xe5\xa5\xbd",
    "bom-crlf-no-newline": b"\xef\xbb\xbfen\tzh\r\nhello\t\xe4\xbd\xa0\xe5\xa5\xbd",
}


@pytest.mark.parametrize("name", sorted(EDGE))
def test_edge_files_load_the_same_segment(tmp_path, name):
    p = tmp_path / "c.tsv"
    p.write_bytes(EDGE[name])
    segs = _load_all(p)
    assert [(s.texts["en"], s.texts["zh"]) for s in segs] == [("hello", "你好")]


def test_empty_text_file_in_a_folder(tmp_path):
    (tmp_path / "en.txt").write_bytes(b"")
    (tmp_path / "zh.txt").write_bytes(b"")
    assert _load_all(tmp_path) == []


@pytest.mark.slow
def test_ten_megabyte_line(tmp_path):
    from tokstat import compare

    line = ("The quick brown fox 你好世界。" * 420_000)[:10_000_000]
    p = tmp_path / "c.tsv"
    p.write_text(f"en\tzh\n{line}\t{line}\n", encoding="utf-8")
    with pytest.raises(TokstatError, match=r"segment 1 \(en\) has 10,000,000 characters, over the limit of 1,000,000"):
        compare(str(p), [load_tokenizer("tiktoken:cl100k_base")], n_boot=0, workers=1)
    df = compare(str(p), [load_tokenizer("tiktoken:cl100k_base")], n_boot=0, workers=1, max_chars=len(line))
    assert df["chars"].to_list() == [len(line), len(line)] and df["tokens"].min() > 1_000_000


# ---------------------------------------------------------------- adapters on arbitrary text

@pytest.fixture(scope="module", params=sorted(CASES))
def adapter(request):
    if not SHARED_TOK.is_dir():
        pytest.skip("../shared is absent")
    return load_tokenizer(CASES[request.param][0])


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(TEXT, min_size=1, max_size=6))
def test_adapters_give_valid_spans_on_any_text(adapter, texts):
    enc = adapter.encode_spans(texts)
    assert len(enc.off) == len(texts) + 1 and enc.off[-1] == len(enc.ids)
    for i, t in enumerate(texts):
        n = len(t.encode("utf-8"))
        s, e = enc.starts[enc.off[i]:enc.off[i + 1]], enc.ends[enc.off[i]:enc.off[i + 1]]
        assert ((0 <= s) & (s <= e) & (e <= n)).all(), (t, s, e)
        assert (np.diff(s) >= 0).all() and (s[1:] >= e[:-1]).all() if len(s) > 1 else True
    assert (0 <= enc.ids).all() and (enc.ids < adapter.n_ids).all()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=4))
def test_hf_dataset_arbitrary_unicode_round_trips(tmp_path_factory, texts):
    import unicodedata

    from datasets import Dataset

    d = tmp_path_factory.mktemp("hf") / "saved"
    Dataset.from_dict({"en": [a for a, _ in texts], "zh": [b for _, b in texts]}).save_to_disk(str(d))
    segs = list(load_corpus(d, columns={"en": "en", "zh": "zh"}))
    assert [(s.texts["en"], s.texts["zh"]) for s in segs] == [
        (unicodedata.normalize("NFC", a), unicodedata.normalize("NFC", b)) for a, b in texts]
