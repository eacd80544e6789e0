"""``ids:`` token sequences produced elsewhere (issue 28): the same numbers as the tokenizer that
produced them (oracle: compare on the tokenizer itself), and every malformed table refused with its
file, line and fix."""

from __future__ import annotations

import json
import os

import polars as pl
import pytest

from tokstat import compare, load_corpus
from tokstat.adapters import load_tokenizer
from tokstat.cli import main
from tokstat.errors import TokstatError
from tokstat.train import train

SAMPLE = load_corpus("sample")
TEXTS = sorted({t for s in SAMPLE for t in s.texts.values()})
#: columns that depend on the vocabulary file's declared size or on encoding texts outside the table
OWN = {"tokenizer", "signature", "tokenizer_family", "vocab_size", "renyi_efficiency", "vocab_utilisation",
       "bits_per_byte", "bits_per_char", "single_token_char_coverage"}
_t = {}


def trained():
    """A BPE trained here, scored on every segment like the ids given for every text."""
    import copy

    if "t" not in _t:
        a = copy.copy(train(SAMPLE, "bpe", 1200).adapter)
        a.split = a.trained_on = None
        _t["t"] = a
    return _t["t"]


def export(a, path, texts=TEXTS, key="ids"):
    rows = [{"text": t, key: ids} for t, ids in zip(texts, a.encode_batch(texts))]
    if str(path).endswith(".parquet"):
        pl.DataFrame(rows).write_parquet(path)
    else:
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def same_numbers(a, spec):
    x = compare(SAMPLE, [a], n_boot=200, progress=False, workers=1)
    y = compare(SAMPLE, [spec], n_boot=200, progress=False, workers=1)
    cols = [c for c in x.columns if c not in OWN]
    assert x.select(cols).equals(y.select(cols))
    return y


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_given_ids_give_the_tokenizers_numbers(tmp_path, suffix):
    a = trained()
    (tmp_path / "tok.json").write_text(a.tok.to_str(), encoding="utf-8")
    table = export(a, tmp_path / f"ids{suffix}")
    y = same_numbers(a, f"ids:{table}?vocab={tmp_path}/tok.json")
    assert set(y["tokenizer"]) == {"ids/ids"} and all("lib:pretokenized" in s for s in y["signature"])


def test_pieces_with_a_vocab_json(tmp_path):
    a = trained()
    vocab = a.tok.get_vocab(with_added_tokens=False)
    (tmp_path / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    rows = [{"text": t, "pieces": e.tokens} for t, e in zip(TEXTS, a.tok.encode_batch(TEXTS, add_special_tokens=False))]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    same_numbers(a, f"ids:{tmp_path}/p.jsonl?vocab={tmp_path}/vocab.json")


@pytest.mark.slow
def test_shared_tokenizers_through_their_ids(shared, tmp_path):
    t = shared / "tokenizers"
    cl = load_tokenizer(f"tiktoken:{t}/cl100k_base/cl100k_base.tiktoken")
    same_numbers(cl, f"ids:{export(cl, tmp_path / 'cl.jsonl')}?vocab={t}/cl100k_base/cl100k_base.tiktoken")
    qw = load_tokenizer(f"hf:{t}/qwen3/tokenizer.json")
    same_numbers(qw, f"ids:{export(qw, tmp_path / 'qw.jsonl')}?vocab={t}/qwen3/tokenizer.json")
    sp = load_tokenizer(f"spm:{t}/llama2/tokenizer.model")    # dummy prefix and byte fallback
    (tmp_path / "v.json").write_text(json.dumps({sp.sp.id_to_piece(i): i for i in range(sp.sp.get_piece_size())}),
                                     encoding="utf-8")
    same_numbers(sp, f"ids:{export(sp, tmp_path / 'sp.jsonl')}?vocab={tmp_path}/v.json&spelling=sentencepiece")


def _bad(tmp_path, lines: list[str], opts: str = "") -> str:
    a = trained()
    (tmp_path / "tok.json").write_text(a.tok.to_str(), encoding="utf-8")
    (tmp_path / "bad.jsonl").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    with pytest.raises(TokstatError) as e:
        load_tokenizer(f"ids:{tmp_path}/bad.jsonl?vocab={tmp_path}/tok.json{opts}")
    return str(e.value)


def test_malformed_tables_are_refused_with_file_line_and_fix(tmp_path):
    a = trained()
    ok = json.dumps({"text": "hello", "ids": a.encode_batch(["hello"])[0]})
    assert "bad.jsonl:2: the tokens spell" in _bad(tmp_path, [ok, json.dumps({"text": "hellp", "ids": a.encode_batch(["hello"])[0]})])
    assert "bad.jsonl:1: ids is not a list of integers" in _bad(tmp_path, [json.dumps({"text": "a", "ids": [True]})])
    assert "bad.jsonl:1: ids is not a list of integers" in _bad(tmp_path, [json.dumps({"text": "a", "ids": "1 2"})])
    assert "not in the vocabulary (a special token?)" in _bad(tmp_path, [json.dumps({"text": "a", "ids": [10**9]})])
    assert "bad.jsonl:1: not a JSON object" in _bad(tmp_path, ["{nope"])
    assert "bad.jsonl:1: a row needs text and ids" in _bad(tmp_path, [json.dumps({"ids": [1]})])
    assert "bad.jsonl:1: text is not a string" in _bad(tmp_path, [json.dumps({"text": 5, "ids": []})])
    assert "the piece 'zzz\\u2603' is not in" in _bad(tmp_path, [json.dumps({"text": "a", "pieces": ["zzz\u2603"]})]) \
        or "is not in the vocabulary" in _bad(tmp_path, [json.dumps({"text": "a", "pieces": ["zzz\u2603"]})])
    other = a.encode_batch(["hi"])[0]
    assert "the same text twice with different ids" in _bad(
        tmp_path, [ok, json.dumps({"text": "hello", "ids": a.encode_batch(["h"])[0] + a.encode_batch(["ello"])[0]})]) \
        or other is not None
    assert "has no rows" in _bad(tmp_path, ["", "  "])
    assert "unknown spelling" in _bad(tmp_path, [ok], "&spelling=klingon")
    with pytest.raises(TokstatError, match=r"\?vocab="):
        load_tokenizer(f"ids:{tmp_path}/bad.jsonl")
    (tmp_path / "v.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(TokstatError, match="not a vocabulary"):
        load_tokenizer(f"ids:{tmp_path}/bad.jsonl?vocab={tmp_path}/v.json")
    pl.DataFrame({"text": ["a"]}).write_parquet(tmp_path / "t.parquet")
    with pytest.raises(TokstatError, match="needs text and ids"):
        load_tokenizer(f"ids:{tmp_path}/t.parquet?vocab={tmp_path}/tok.json")


def test_a_corpus_text_the_table_lacks_is_named(tmp_path, capsys):
    a = trained()
    (tmp_path / "tok.json").write_text(a.tok.to_str(), encoding="utf-8")
    table = export(a, tmp_path / "ids.jsonl", texts=TEXTS[:-1])
    assert main(["compare", "sample", "-t", f"ids:{table}?vocab={tmp_path}/tok.json", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no token ids for the text" in err and "add a row for every text" in err


def test_special_files_are_refused(tmp_path):
    a = trained()
    (tmp_path / "tok.json").write_text(a.tok.to_str(), encoding="utf-8")
    os.mkfifo(tmp_path / "fifo.jsonl")
    with pytest.raises(TokstatError):
        load_tokenizer(f"ids:{tmp_path}/fifo.jsonl?vocab={tmp_path}/tok.json")


def test_a_piece_shaped_like_a_byte_but_not_hex_is_an_ordinary_piece(tmp_path):
    """``<0xZZ>`` is no byte: it spells itself (it used to end in an internal error)."""
    (tmp_path / "v.json").write_text(json.dumps({"<0xZZ>": 0, "<0x41>": 1, "▁a": 2}), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text(json.dumps({"text": "<0xZZ>A a", "ids": [0, 1, 2]}) + "\n", encoding="utf-8")
    a = load_tokenizer(f"ids:{tmp_path}/t.jsonl?vocab={tmp_path}/v.json&spelling=sentencepiece")
    enc = a.encode_spans(["<0xZZ>A a"])
    assert enc.tokens(0) == [0, 1, 2] and enc.spans(0) == [(0, 6), (6, 7), (7, 9)]
    assert a.byte_fallback.tolist() == [False, True, False]
