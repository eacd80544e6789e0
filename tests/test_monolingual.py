"""Monolingual corpora (documents, each in one language) as a first-class corpus kind: every layout
pretraining data comes in loads to the same documents, each language is counted on its own
documents (oracle: the tokenizer library called directly), intervals are over documents, there is
no premium without calibration, and the calibrated premium agrees with the direct one."""

from __future__ import annotations

import json
import warnings
import zlib
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tokstat import TokstatError, compare, load_corpus
from tokstat.cli import main
from tokstat.corpus import corpus_info

SAMPLE = load_corpus("sample")
SEGS = list(SAMPLE)
EN = [s.texts["en"] for s in SEGS[:250]]          # different documents, different counts per language
ZH = [s.texts["zh"] for s in SEGS[180:]]


@pytest.fixture(scope="module")
def layouts(tmp_path_factory):
    """The same 470 documents in five layouts."""
    d = tmp_path_factory.mktemp("mono")
    df = pl.DataFrame({"text": EN + ZH, "language": ["eng"] * len(EN) + ["cmn"] * len(ZH),
                       "language_script": ["Latn"] * len(EN) + ["Hani"] * len(ZH)})
    (d / "fw").mkdir()
    df[:300].write_parquet(d / "fw" / "000.parquet")          # FineWeb-2: language + language_script
    df[300:].write_parquet(d / "fw" / "001.parquet")
    with open(d / "docs.jsonl", "w", encoding="utf-8") as f:
        for t, lang in zip(EN + ZH, ["en"] * len(EN) + ["zh"] * len(ZH)):
            f.write(json.dumps({"id": None, "text": t, "lang": lang}, ensure_ascii=False) + "\n")
    for code, texts in (("eng_Latn", EN), ("cmn_Hani", ZH)):      # per-language folders (FineWeb-2/CulturaX)
        sub = d / "bylang" / code / "train"
        sub.mkdir(parents=True)
        pl.DataFrame({"text": texts}).write_parquet(sub / "000.parquet")
    (d / "files").mkdir()
    (d / "files" / "en.txt").write_text("\n".join(EN) + "\n", encoding="utf-8")
    (d / "files" / "zh.txt").write_text("\n".join(ZH) + "\n", encoding="utf-8")
    return {"fw": (str(d / "fw"), {}), "glob": (str(d / "fw" / "*.parquet"), {}), "jsonl": (str(d / "docs.jsonl"), {}),
            "folders": (str(d / "bylang"), {}), "textdir": (str(d / "files"), {"kind": "monolingual"})}, d


@pytest.mark.parametrize("name", ["fw", "glob", "jsonl", "folders", "textdir"])
def test_every_layout_loads_the_same_documents(layouts, name):
    spec, kw = layouts[0][name]
    c = load_corpus(spec, **kw)
    assert c.kind == "monolingual" and sorted(c.languages) == ["en", "zh"]
    info = corpus_info(c)
    recs = {r["language"]: r for r in info.records()}
    for lang, texts in (("en", EN), ("zh", ZH)):
        assert recs[lang]["documents"] == len(texts)                  # each language counted once
        assert recs[lang]["characters"] == sum(len(t) for t in texts)
        assert recs[lang]["bytes"] == sum(len(t.encode()) for t in texts)
        assert recs[lang]["empty"] == 0                                 # another language's document is not empty


def test_corpus_info_json_has_one_record_per_language(layouts, capsys):
    spec, _ = layouts[0]["fw"]
    assert main(["corpus", "info", spec, "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert [r["language"] for r in recs] == ["en", "zh"]
    assert {"language", "documents", "characters", "bytes"} <= set(recs[0])


def test_unlabelled_and_empty_documents_are_counted_never_dropped(tmp_path):
    p = tmp_path / "d.jsonl"
    rows = [{"text": "hello there", "language": "en"}, {"text": "你好", "language": ""},
            {"text": None, "language": "en"}, {"text": "bonjour", "language": None}]
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    recs = {r["language"]: r for r in corpus_info(load_corpus(str(p))).records()}
    assert recs["und"]["documents"] == 2 and recs["und"]["characters"] == 2 + 7
    assert recs["en"]["documents"] == 2 and recs["en"]["empty"] == 1


@pytest.mark.parametrize("rows,kw,msg", [
    ([{"body": "x", "language": "en"}], {"text_col": "text"}, "no text column 'text'"),
    ([{"text": "x", "language": 5}], {}, "holds a int, not a language code"),
    ([{"text": 5, "language": "en"}], {}, "expected text, found int"),
    ([{"text": "x", "language": "en"}], {"lang_col": "idioma"}, "no language column 'idioma'"),
    ([{"text": "x", "language": "en"}], {"kind": "parallel", "text_col": "text"}, "describe a monolingual corpus"),
    ([{"text": "x", "language": "en"}], {"text_col": "text", "columns": ["en"]}, "a monolingual one has one text column"),
    ([{"text": "x", "language": "xx-not-a-language-code"}], {}, "language"),
])
def test_bad_monolingual_input_is_one_clear_error(tmp_path, rows, kw, msg):
    p = tmp_path / "d.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    with pytest.raises(TokstatError, match=msg):
        c = load_corpus(str(p), **kw)
        list(c)


def test_a_text_file_of_documents_needs_its_language(tmp_path, capsys):
    p = tmp_path / "docs.txt"
    p.write_text("one\ntwo\n", encoding="utf-8")
    assert main(["corpus", "info", str(p), "--kind", "monolingual"]) == 2
    assert "needs its language" in capsys.readouterr().err
    assert main(["corpus", "info", str(p), "--lang", "en", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["documents"] == 2


def test_compare_counts_each_language_on_its_own_documents(layouts, tiktoken_encoding):
    """Oracle: tiktoken called directly on every document; no premium (no aligned content), with a
    warning; tokens per character with a bootstrap interval over documents that brackets it."""
    spec, _ = layouts[0]["fw"]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        df = compare(spec, ["tiktoken:cl100k_base"], workers=1)
    assert any("monolingual" in str(x.message) and "--calibrate" in str(x.message) for x in w)
    assert not any("empty document" in str(x.message) for x in w)
    enc = tiktoken_encoding("cl100k_base")
    for lang, texts in (("en", EN), ("zh", ZH)):
        r = df.filter(pl.col("language") == lang).row(0, named=True)
        assert r["segments"] == len(texts)
        assert r["tokens"] == sum(len(enc.encode_ordinary(t)) for t in texts)
        assert r["premium"] is None
        assert r["tokens_per_char_ci_low"] < r["tokens_per_char"] < r["tokens_per_char_ci_high"]
        assert "|docs|" in r["signature"]
    # every engine and worker count: the same numbers
    assert compare(spec, ["tiktoken:cl100k_base"], workers=2).equals(df)


def test_the_calibrated_premium_is_the_formula(layouts, tiktoken_encoding):
    """(tokens/char of L on the documents) × (chars of L / chars of the pivot on the parallel
    segments) / (tokens/char of the pivot on the documents), computed here by hand."""
    spec, _ = layouts[0]["fw"]
    df = compare(spec, ["tiktoken:cl100k_base"], calibrate="sample", workers=1)
    enc = tiktoken_encoding("cl100k_base")
    tpc = {lang: sum(len(enc.encode_ordinary(t)) for t in texts) / sum(len(t) for t in texts)
           for lang, texts in (("en", EN), ("zh", ZH))}
    r = sum(len(s.texts["zh"]) for s in SEGS) / sum(len(s.texts["en"]) for s in SEGS)
    zh = df.filter(pl.col("language") == "zh").row(0, named=True)
    assert zh["premium"] == pytest.approx(tpc["zh"] * r / tpc["en"])
    assert zh["premium_ci_low"] < zh["premium"] < zh["premium_ci_high"]
    # the transfer check: the calibrated premium over the calibration set's own direct premium, by hand
    direct = (sum(len(enc.encode_ordinary(s.texts["zh"])) for s in SEGS)
              / sum(len(enc.encode_ordinary(s.texts["en"])) for s in SEGS))
    assert zh["calibration_transfer"] == pytest.approx(zh["premium"] / direct)
    assert zh["premium_ci_low"] <= min(zh["premium"], direct) and max(zh["premium"], direct) <= zh["premium_ci_high"]
    assert "|calib:sample-zh-en@" in zh["signature"]
    en = df.filter(pl.col("language") == "en").row(0, named=True)
    assert (en["premium"], en["premium_ci_low"], en["premium_ci_high"]) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize("kw,msg", [({"calibrate": "sample", "join": True}, "drop --join"),
                                    ({"calibrate": "sample", "pivot": None}, "needs a pivot")])
def test_bad_calibration_requests(layouts, kw, msg):
    spec, _ = layouts[0]["fw"]
    with pytest.raises(TokstatError, match=msg):
        compare(spec, ["tiktoken:cl100k_base"], **kw)


def test_calibration_needs_a_parallel_corpus_with_every_language(layouts, tmp_path):
    spec, _ = layouts[0]["fw"]
    with pytest.raises(TokstatError, match="is monolingual"):
        compare(spec, ["tiktoken:cl100k_base"], calibrate=layouts[0]["jsonl"][0])
    only_en = tmp_path / "en_fr.tsv"
    only_en.write_text("en\tfr\nhello\tbonjour\n", encoding="utf-8")
    with pytest.raises(TokstatError, match="lacks zh"):
        compare(spec, ["tiktoken:cl100k_base"], calibrate=str(only_en))
    with pytest.raises(TokstatError, match="this corpus is parallel"):
        compare("sample", ["tiktoken:cl100k_base"], calibrate="sample")


@pytest.mark.slow
@pytest.mark.shared
def test_calibrated_premium_agrees_with_the_direct_one(tmp_path):
    """Tatoeba cmn-eng split three ways by a hash of the pair: English documents from one part,
    Chinese from another, the third as the calibration set. The calibrated premium's interval (it
    carries the three samples' noise) covers the direct premium on the whole corpus, and the two
    agree within 1 %."""
    from conftest import SHARED

    c = load_corpus(str(Path(SHARED) / "corpora/tatoeba-cmn-eng/cmn.txt"))
    segs = list(c)
    part = {s.id: zlib.crc32(("c" + s.id).encode()) % 3 for s in segs}
    en = [s.texts["en"] for s in segs if part[s.id] == 0]
    zh = [s.texts["zh"] for s in segs if part[s.id] == 1]
    cal = [s for s in segs if part[s.id] == 2]
    pl.DataFrame({"text": en + zh, "language": ["en"] * len(en) + ["zh"] * len(zh)}).write_parquet(tmp_path / "d.parquet")
    pl.DataFrame({"en": [s.texts["en"] for s in cal], "zh": [s.texts["zh"] for s in cal]}).write_parquet(
        tmp_path / "cal.parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = compare(c, ["tiktoken:cl100k_base"]).filter(pl.col("language") == "zh").row(0, named=True)
        cal_row = compare(str(tmp_path / "d.parquet"), ["tiktoken:cl100k_base"],
                          calibrate=str(tmp_path / "cal.parquet")).filter(pl.col("language") == "zh").row(0, named=True)
    assert cal_row["premium_ci_low"] <= direct["premium"] <= cal_row["premium_ci_high"]
    assert abs(cal_row["premium"] / direct["premium"] - 1) < 0.01
    assert np.isfinite(cal_row["premium"])


def test_train_and_plan_on_monolingual_documents(layouts, tmp_path):
    """Training on documents: a mix of characters is met as stated; a mix of content needs aligned
    text and says so; the sweep evaluates each language on its held-out documents, and the plan
    weighs the held-out text's own characters when no premium states content."""
    from tokstat.mix import Mix
    from tokstat.sweep import sweep
    from tokstat.train import training_texts
    from tokstat.vocabplan import vocab_plan

    spec, _ = layouts[0]["fw"]
    c = load_corpus(spec)
    texts = training_texts(c, mix={"zh": 0.7, "en": 0.3}, mix_unit="chars")
    zh = sum(len(t) for t in texts if any("\u4e00" <= ch <= "\u9fff" for ch in t))
    assert 0.65 < zh / sum(len(t) for t in texts) < 0.75
    with pytest.raises(TokstatError, match="a mix of content needs segments with text in every mix language"):
        training_texts(c, mix={"zh": 0.5, "en": 0.5})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sw = sweep(c, "bpe", [500, 1000, 2000, 4000], n_boot=0)
    assert sw["premium"].is_null().all() and sw["tokens_per_char"].is_not_null().all()
    assert all("|docs|" in s for s in sw["signature"].to_list())
    plan = vocab_plan(sw, n_nv=6.5e9, d_model=4096)
    held = sw.filter(pl.col("vocab_size") == 4000)
    share = {r["language"]: r["chars"] for r in held.iter_rows(named=True)}
    assert plan.mix_chars == pytest.approx({k: v / sum(share.values()) for k, v in share.items()})
    assert any("monolingual" in w for w in plan.warnings)
    stated = vocab_plan(sw, n_nv=6.5e9, d_model=4096, mix=Mix({"en": 0.3, "zh": 0.7}, "chars"))
    assert stated.mix_chars == {"en": 0.3, "zh": 0.7} and stated.mix_conversion == "characters en 30% · zh 70%"
    with pytest.raises(TokstatError, match="cannot convert a mix in content"):
        vocab_plan(sw, n_nv=6.5e9, d_model=4096, mix={"en": 0.3, "zh": 0.7})


def test_a_hugging_face_dataset_of_documents(tmp_path):
    """A save_to_disk dataset (the same reader as a hub dataset): a text and a language column."""
    import datasets

    ds = datasets.Dataset.from_dict({"text": EN[:30] + ZH[:20] + [None], "language": ["en"] * 30 + ["zh"] * 20 + ["en"]})
    ds.save_to_disk(str(tmp_path / "ds"))
    c = load_corpus(str(tmp_path / "ds"), kind="monolingual")
    recs = {r["language"]: r for r in corpus_info(c).records()}
    assert recs["en"]["documents"] == 31 and recs["en"]["empty"] == 1 and recs["zh"]["documents"] == 20
    assert recs["zh"]["characters"] == sum(len(t) for t in ZH[:20])
    one = load_corpus(str(tmp_path / "ds"), lang="en", text_col="text")
    assert one.languages == ["en"]
    with pytest.raises(TokstatError, match="no text column 'body'"):
        load_corpus(str(tmp_path / "ds"), text_col="body")


def test_a_bounded_training_sample_of_documents(layouts):
    """--sample-bytes: about that many bytes of training text (a seeded Bernoulli sample per
    language), the same sample for the same seed, the mix's shares kept; bad values refused."""
    from tokstat.split import Split
    from tokstat.train import _training_texts, train

    spec, _ = layouts[0]["fw"]
    c = load_corpus(spec)
    full = sum(len(t.encode()) for t in _training_texts(c, split=Split(), languages=None, mix=None)[0])
    texts, _, _ = _training_texts(c, split=Split(), languages=None, mix=None, sample_bytes=full / 4)
    got = sum(len(t.encode()) for t in texts)
    assert 0.6 * full / 4 < got < 1.4 * full / 4
    again, _, _ = _training_texts(c, split=Split(), languages=None, mix=None, sample_bytes=full / 4)
    assert again == texts
    other, _, _ = _training_texts(c, split=Split(0.1, seed=5), languages=None, mix=None, sample_bytes=full / 4)
    assert other != texts
    r = train(c, "bpe", 400, sample_bytes=full / 4)
    assert r.metadata["sample_bytes"] == full / 4 and "-sample" in r.metadata["tokenizer_id"]
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(TokstatError, match="--sample-bytes must be a finite positive number"):
            _training_texts(c, split=Split(), languages=None, mix=None, sample_bytes=bad)


def test_a_sweep_of_documents_takes_its_premiums_from_a_parallel_corpus(layouts):
    """--eval PARALLEL: the premium columns equal the same tokenizers compared on the parallel
    corpus directly (every segment: none was trained on), tokens per character stay the
    held-out documents', and the signature names the parallel corpus."""
    from tokstat.sweep import sweep

    spec, _ = layouts[0]["fw"]
    trained: list = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = sweep(spec, "bpe", [500, 1000, 2000, 4000], n_boot=0)
        sw = sweep(spec, "bpe", [500, 1000, 2000, 4000], n_boot=0, eval_corpus="sample", trained=trained)
    assert sw["tokens_per_char"].to_list() == plain["tokens_per_char"].to_list()
    assert all("|premium:sample-zh-en@" in s for s in sw["signature"].to_list())
    from tokstat.sweep import derive_bpe
    import json as _json

    big = trained[0]
    cfg = _json.loads(big.tok.to_str())
    a = big.prefix(derive_bpe(big.tok, 1000, cfg), "train/bpe-1000")
    a.split = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = compare("sample", [a], n_boot=0).filter(pl.col("language") == "zh")["premium"][0]
    got = sw.filter((pl.col("vocab_size") == 1000) & (pl.col("language") == "zh"))["premium"][0]
    assert got == pytest.approx(direct)
    with pytest.raises(TokstatError, match="is monolingual: a premium needs aligned content"):
        sweep(spec, "bpe", [500, 1000], n_boot=0, eval_corpus=layouts[0]["jsonl"][0])


def test_gzip_json_lines_in_language_folders(tmp_path):
    """MADLAD-400's layout: data/LANG/LANG_clean_NNNN.jsonl.gz; budget reads each archive as one
    cluster; a damaged archive is one error naming it."""
    import gzip

    from tokstat.budget import budget

    for lang, texts in (("en", EN), ("zh", ZH)):
        (tmp_path / "data" / lang).mkdir(parents=True)
        with gzip.open(tmp_path / "data" / lang / f"{lang}_clean_0000.jsonl.gz", "wt", encoding="utf-8") as f:
            for t in texts:
                f.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")
    c = load_corpus(str(tmp_path / "data"))
    recs = {r["language"]: r for r in corpus_info(c).records()}
    assert recs["en"]["documents"] == len(EN) and recs["zh"]["characters"] == sum(len(t) for t in ZH)
    df = budget(c, ["tiktoken:cl100k_base"], sample=1.0, exact=True, workers=1)
    assert (df["tokens"] == df["exact"].cast(pl.Float64)).all() and df["clusters"][0] == 2
    bad = tmp_path / "bad" / "zh"
    bad.mkdir(parents=True)
    (bad / "zh_0.jsonl.gz").write_bytes(gzip.compress(b'{"text": "ok"}\n')[:-8])
    with pytest.raises(TokstatError, match="cannot read the gzip file"):
        list(load_corpus(str(tmp_path / "bad")))


@pytest.mark.slow
def test_one_report_from_documents(layouts, tmp_path):
    """report --corpus on documents: tokens per character per language, a sweep trained on a
    bounded sample whose premiums come from a parallel corpus, and a vocabulary answer."""
    import re

    spec, _ = layouts[0]["fw"]
    out = tmp_path / "r.html"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["report", "--corpus", spec, "-t", "tiktoken:cl100k_base", "--sweep", "bpe:500,1000,2000,4000",
                     "--sample-bytes", "20000", "--eval", "sample", "--out", str(out), "--quiet"]) == 0
    page = out.read_text()
    assert 'data-answer="vocab"' in page and "premium:sample-zh-en@" in page
    assert re.search(r"fitted on the sweep", page)
    # documents have no per-segment premium: the report shows the costliest documents instead
    assert "zh: highest tokens per character" in page and "highest per-segment premium" not in page


def test_a_report_of_documents_without_a_parallel_corpus_says_what_is_missing(layouts, tmp_path, capsys):
    spec, _ = layouts[0]["fw"]
    out = tmp_path / "r.html"
    assert main(["report", "--corpus", spec, "-t", "tiktoken:cl100k_base", "--out", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "needs content" in err and "--eval PARALLEL" in err
    page = out.read_text()
    assert 'data-answer="tokenizer"' in page and 'id="cost"' not in page


def test_worst_on_documents_says_there_is_no_per_segment_premium(layouts, tmp_path, capsys):
    spec, _ = layouts[0]["fw"]
    segs = tmp_path / "s.parquet"
    assert main(["compare", spec, "-t", "tiktoken:cl100k_base", "--segments-out", str(segs), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["worst", str(segs)]) == 2
    assert "use --by tokens_per_char" in capsys.readouterr().err
    assert main(["worst", str(segs), "--by", "tokens_per_char", "-n", "3"]) == 0


def _shard(d: Path, lang, script=None, name: str = "000.parquet", rows: int = 2) -> Path:
    """A one-shard corpus whose language column is ``lang`` (an Arrow array)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    d.mkdir(parents=True, exist_ok=True)
    cols = {"text": pa.array([f"doc {i}" for i in range(len(lang))]), "language": lang}
    if script is not None:
        cols["language_script"] = script
    pq.write_table(pa.table(cols), d / name, row_group_size=rows)
    return d


@pytest.mark.parametrize("lang, want", [
    ("int", "holds a int"), ("list", "holds a list"), ("two", "spells one language two ways: 'eng' and 'en'"),
    ("bad", "zz-not-a-language")])
def test_language_discovery_refuses_a_bad_column_by_name(tmp_path, lang, want):
    """The languages of Parquet shards are found column-wise (distinct pairs, in order of first
    appearance); each bad column is a clear error naming the shard, whatever Arrow can encode."""
    import pyarrow as pa

    col = {"int": pa.array([1, 2, 1]), "list": pa.array([["en"], ["zh"], ["en"]]),
           "two": pa.array(["eng", "zh", "en"]), "bad": pa.array(["en", "zz-not-a-language", "en"])}[lang]
    d = _shard(tmp_path / "c", col)
    with pytest.raises(TokstatError, match=want) as e:
        load_corpus(str(d))
    assert "000.parquet" in str(e.value)


def test_language_discovery_equals_a_row_by_row_reading(tmp_path):
    """Nulls and blanks are ``und``; FineWeb-2's script column joins its language; dictionary and
    plain columns, several batches and shards: the languages found are the row-by-row reading's."""
    import pyarrow as pa

    from tokstat.langs import normalize_lang

    langs = ["cmn", None, "eng", "  ", "cmn", "rus", "eng"] * 3
    scripts = ["Hani", None, "Latn", "Latn", "Hani", "Cyrl", "Latn"] * 3
    _shard(tmp_path / "c", pa.array(langs), pa.array(scripts), rows=4)
    _shard(tmp_path / "c", pa.array(["deu", "cmn"]).dictionary_encode(), pa.array(["Latn", "Hani"]), name="001.parquet")
    want = {"und" if not (v or "").strip() else normalize_lang(f"{v}_{s}")
            for v, s in zip(langs + ["deu", "cmn"], scripts + ["Latn", "Hani"])}
    assert set(load_corpus(str(tmp_path / "c")).languages) == want
