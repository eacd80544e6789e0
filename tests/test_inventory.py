"""Token inventory and vocabulary overlap (issue 28): entries' bytes against each library's own
decoding, classes by script, overlap identities, the commands."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokstat import load_corpus
from tokstat.adapters import load_tokenizer
from tokstat.cli import main
from tokstat.errors import TokstatError
from tokstat.inventory import CLASSES, classify, entries, inventory, overlap
from tokstat.train import train

SAMPLE = load_corpus("sample")
_t = {}


def trained(n=1200):
    if n not in _t:
        _t[n] = train(SAMPLE, "bpe", n).adapter
    return _t[n]


def test_byte_level_entries_are_the_bytes_the_library_decodes():
    a = trained()
    ents = entries(a)
    assert len(ents) == a.vocab_size
    for i, b in ents.items():
        try:
            s = b.decode("utf-8")
        except UnicodeDecodeError:
            continue
        assert a.tok.decode([i]) == s, i


def test_shared_entries_against_each_library(shared):
    t = shared / "tokenizers"
    cl = load_tokenizer(f"tiktoken:{t}/cl100k_base/cl100k_base.tiktoken")
    ents = entries(cl)
    assert all(cl.enc.decode_single_token_bytes(i) == b for i, b in list(ents.items())[::97])
    sp = load_tokenizer(f"spm:{t}/llama2/tokenizer.model")
    ents = entries(sp)
    for i in list(ents)[::53]:
        if sp.sp.is_byte(i):
            assert len(ents[i]) == 1
        else:   # SentencePiece drops a leading space when it decodes a text: put it back to compare
            want = sp.sp.decode_ids([i]) if not sp.sp.id_to_piece(i).startswith("▁") else " " + sp.sp.decode_ids([i])
            assert ents[i].decode() == want, i
    wp = load_tokenizer(f"wordpiece:{t}/bert-base-chinese/vocab.txt")
    e = entries(wp)
    assert e[wp.tok.token_to_id("##们")] == "们".encode() and e[wp.tok.token_to_id("中")] == " 中".encode()


@given(st.text(alphabet=st.characters(whitelist_categories=("Lu", "Ll")), min_size=1, max_size=8))
def test_letters_of_one_script_are_that_script(s):
    from tokstat.inventory import _script_of

    scripts = {_script_of(c) for c in s}
    cls, space, _ = classify(s.encode())
    assert cls == (scripts.pop() if len(scripts) == 1 else "mixed script")
    assert classify((" " + s).encode())[1] is True and space is False


def test_classes_of_examples():
    assert classify(" 123".encode())[0] == "digits"
    assert classify("，。".encode())[0] == "punctuation/symbols"
    assert classify(b"\n\n")[0] == "whitespace"
    assert classify("東京タワー".encode())[0] == "mixed script"
    assert classify("\u0915\u093e".encode())[0] == "Devanagari"          # a letter with its vowel sign
    assert classify("語".encode()[:2])[0] == "partial UTF-8"


def test_inventory_shares_add_up():
    df = inventory([trained()])
    part = df.filter(df["class"].is_in(CLASSES))
    assert part["count"].sum() == trained().vocab_size
    assert part["share"].sum() == pytest.approx(1.0)


def test_overlap_identities():
    small, big = trained(800), trained(1200)
    df = overlap([small, big])
    r = {(x["a"], x["b"]): x for x in df.iter_rows(named=True)}
    assert r[(small.id, small.id)]["jaccard"] == 1.0
    # BPE trained once is cut to smaller sizes: the small vocabulary is inside the big one
    assert r[(small.id, big.id)]["coverage"] == 1.0
    assert r[(big.id, small.id)]["coverage"] == pytest.approx(len(entries(small)) / len(entries(big)))
    assert r[(small.id, big.id)]["jaccard"] == r[(big.id, small.id)]["jaccard"]
    with pytest.raises(TokstatError, match="is given twice"):     # an overlap with itself is 1 by definition: refused
        overlap([small, big, small])


def test_commands(tmp_path, capsys):
    (tmp_path / "a.json").write_text(trained(800).tok.to_str(), encoding="utf-8")
    (tmp_path / "b.json").write_text(trained(1200).tok.to_str(), encoding="utf-8")
    a, b = f"hf:{tmp_path}/a.json", f"hf:{tmp_path}/b.json"
    assert main(["overlap", "-t", a, "-t", b, "--png", str(tmp_path / "o.png"), "--out", str(tmp_path / "o.csv")]) in (0, None)
    assert (tmp_path / "o.png").read_bytes()[:4] == b"\x89PNG" and (tmp_path / "o.csv").stat().st_size > 0
    capsys.readouterr()
    assert main(["overlap", "-t", a, "-t", b, "--json"]) in (0, None)
    rows = json.loads(capsys.readouterr().out)
    assert {r["coverage"] for r in rows if r["a"] != r["b"]} >= {1.0}
    assert main(["overlap", "-t", a]) == 2
    assert "two or more" in capsys.readouterr().err
    assert main(["overlap", "-t", a, "-t", b, "--png", str(tmp_path / "o.jpg")]) == 2   # wrong suffix, nothing written
    assert not (tmp_path / "o.jpg").exists()
    assert main(["inventory", "-t", a, "--json"]) in (0, None)
    assert {r["class"] for r in json.loads(capsys.readouterr().out)} >= set(CLASSES)


def test_hostile_tokenizer_names_stay_plain_text_in_the_heatmap(tmp_path):
    from tokstat.inventory import overlap_png

    d = tmp_path / "$\\frac{$ <b>"
    d.mkdir()
    (d / "tokenizer.json").write_text(trained(800).tok.to_str(), encoding="utf-8")
    df = overlap([load_tokenizer(f"hf:{d}/tokenizer.json"), trained(1200)])
    assert overlap_png(df)[:4] == b"\x89PNG"      # matplotlib would fail on bad math text if it parsed it


# ---------------------------------------------------------------- in the report

def test_the_report_shows_the_inventory_and_the_overlap(tmp_path):
    import re

    import polars as pl

    from tokstat.fmt import fmt

    a, b = trained(), train(SAMPLE, "bpe", 600).adapter
    inv, ov = tmp_path / "inv.parquet", tmp_path / "ov.csv"
    inventory([a, b]).write_parquet(inv)
    overlap([a, b]).write_csv(ov)
    out = tmp_path / "r.html"
    assert main(["report", str(inv), str(ov), "--out", str(out)]) == 0      # no compare table needed
    page = out.read_text(encoding="utf-8")
    assert 'id="vocabularies"' in page and 'data-chart="overlap"' in page
    cells = re.sub(r"<[^>]+>", "|", page[page.index('id="vocabularies"'):])
    for r in pl.read_parquet(inv).filter(pl.col("class") == "Han").iter_rows(named=True):
        assert f"|{fmt(r['share'], 'unk_rate')}|" in cells
    j = pl.read_csv(ov).filter(pl.col("a") != pl.col("b"))["jaccard"][0]
    assert f"|{fmt(j, 'jaccard')}|" in cells


def test_a_damaged_inventory_file_is_refused(tmp_path, capsys):
    bad = tmp_path / "inv.csv"
    bad.write_text("tokenizer,entries,class,count,share\nt,10,Han,many,0.1\n", encoding="utf-8")
    assert main(["report", str(bad), "--out", str(tmp_path / "r.html")]) == 2
    assert "column count holds 'many', not numbers" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()
