"""Measures the field cites: MorphScore (byte-exact, F1, and the reference rule), --strip (FLORES+ and
TokSuite's stripped lines), RTC beside the premium, and a degenerate tokenizer marked everywhere."""

from __future__ import annotations

import csv
import json
import random
import unicodedata
from pathlib import Path

import polars as pl
import pytest

from tokstat import compare
from tokstat.cli import main
from tokstat.morphscore import LANGUAGES, morphscore, reference_point

from conftest import ROOT

SAMPLE = str(ROOT / "corpora/sample-zh-en/sample.tsv")


def morph_items(shared: Path) -> dict[str, list[tuple[str, str, str]]]:
    out = {}
    for f in sorted((shared / "corpora/morphscore").glob("*_morph_data.csv")):
        with open(f, encoding="utf-8") as fh:
            out[f.name.split("_morph_data")[0]] = [(r["full_word"], r["pt1"], r["rest"]) for r in csv.DictReader(fh)]
    return out


def reference_score(items, encode, decode_one) -> float:
    """The reference code's get_morphscore, re-implemented on the library called directly: tokenize
    the word alone, decode every token on its own, morph_eval, drop the zeros, mean."""
    points = []
    for word, p1, rest in items:
        pieces = [decode_one(t) for t in encode(word)]
        if len(pieces) == 1:
            points.append(0)
            continue
        hits = sum(1 for t in range(len(pieces) - 1) if ["".join(pieces[:t + 1]), "".join(pieces[t + 1:])] == [p1, rest])
        points.append(1 if hits == 1 else -1)
    kept = [p for p in points if p != 0]
    return sum(p == 1 for p in kept) / len(kept)


def libraries(shared: Path, tiktoken_encoding):
    from tokenizers import Tokenizer

    out = {}
    for name in ("cl100k_base", "o200k_base"):
        enc = tiktoken_encoding(name)
        out[f"tiktoken:{name}"] = (enc.encode_ordinary, lambda t, enc=enc: enc.decode([t]),
                                   lambda t, enc=enc: enc.decode_single_token_bytes(t))
    q = Tokenizer.from_file(str(shared / "tokenizers/qwen3/tokenizer.json"))
    out[f"hf:{shared / 'tokenizers/qwen3/tokenizer.json'}"] = (lambda w: q.encode(w, add_special_tokens=False).ids,
                                                                 lambda t: q.decode([t], skip_special_tokens=False), None)
    return out


def test_compat_equals_the_reference_rule_on_all_22_languages(shared, tiktoken_encoding):
    items = morph_items(shared)
    assert len(items) == 22
    libs = libraries(shared, tiktoken_encoding)
    df = morphscore(list(libs), shared / "corpora/morphscore", compat=True)
    assert df.height == 3 * 22 and set(df["language"]) == set(LANGUAGES.values())
    ids = {"tiktoken:cl100k_base": "tiktoken/cl100k_base", "tiktoken:o200k_base": "tiktoken/o200k_base"}
    for spec, (encode, decode_one, _) in libs.items():
        rows = df.filter(pl.col("tokenizer") == ids.get(spec, "hf/qwen3"))
        assert rows.height == 22
        for r in rows.iter_rows(named=True):
            want = reference_score(items[r["name"]], encode, decode_one)
            assert r["morphscore"] == pytest.approx(want, abs=1e-12), (spec, r["name"])


def test_byte_exact_equals_boundaries_from_token_bytes(shared, tiktoken_encoding):
    """The default score against an oracle built from tiktoken's own token bytes: the first part's
    byte length must be a cumulative token length; precision pools the words' boundaries."""
    items = morph_items(shared)
    libs = {k: v for k, v in libraries(shared, tiktoken_encoding).items() if k.startswith("tiktoken")}
    df = morphscore(list(libs), shared / "corpora/morphscore")
    for spec, (encode, _, token_bytes) in libs.items():
        for name, its in items.items():
            hits = cuts = scored = 0
            for word, p1, rest in its:
                if not p1 or not rest or p1 + rest != word:
                    continue
                lens = [len(token_bytes(t)) for t in encode(word)]
                b = set()
                acc = 0
                for n in lens[:-1]:
                    acc += n
                    b.add(acc)
                if not b:
                    continue
                scored += 1
                hits += len(p1.encode()) in b
                cuts += len(b)
            r = df.filter((pl.col("tokenizer") == spec.replace(":", "/")) & (pl.col("name") == name)).row(0, named=True)
            assert r["items"] == scored and r["morphscore"] == pytest.approx(hits / scored) and \
                r["precision"] == pytest.approx(hits / cuts), (spec, name)


def test_the_issue_numbers(shared):
    """cl100k_base: 0.0000 on Armenian and Georgian as coded, 1.0000 byte-exact; Korean 0.1990 vs
    0.9900; Japanese 0.3495 vs 0.9965; the 191 shifted Gujarati rows are named."""
    d = shared / "corpora/morphscore"
    exact = morphscore(["tiktoken:cl100k_base"], d, languages=["hye", "kat", "kor", "jpn", "guj"])
    compat = morphscore(["tiktoken:cl100k_base"], d, languages=["hye", "kat", "kor", "jpn", "guj"], compat=True)
    e = {r["language"]: r for r in exact.iter_rows(named=True)}
    c = {r["language"]: r for r in compat.iter_rows(named=True)}
    assert c["hye"]["morphscore"] == 0.0 and e["hye"]["morphscore"] == 1.0
    assert c["kat"]["morphscore"] == 0.0 and e["kat"]["morphscore"] == 1.0
    assert round(c["kor"]["morphscore"], 4) == 0.1990 and round(e["kor"]["morphscore"], 4) == 0.9900
    assert round(c["jpn"]["morphscore"], 4) == 0.3495 and round(e["jpn"]["morphscore"], 4) == 0.9965
    assert e["guj"]["inconsistent"] == 191 and c["guj"]["inconsistent"] == 191


def test_shattering_into_bytes_has_full_recall_and_low_precision(tmp_path):
    """The recall-only trap: a tokenizer of single bytes has every boundary, the gold one included
    (MorphScore 1), and precision 1/(bytes−1) per word; F1 tells it apart."""
    import base64

    ranks = tmp_path / "bytes.tiktoken"
    ranks.write_text("".join(base64.b64encode(bytes([i])).decode() + f" {i}\n" for i in range(256)))
    d = tmp_path / "m"
    d.mkdir()
    words = [("walked", "walk", "ed"), ("cats", "cat", "s"), ("uploads", "upload", "s")]
    (d / "english_morph_data.csv").write_text(",full_word,pt1,rest\n" + "".join(f"{i},{w},{a},{b}\n" for i, (w, a, b)
                                                                                 in enumerate(words)))
    r = morphscore([f"tiktoken:{ranks}?pattern=gpt2"], d).row(0, named=True)
    assert r["morphscore"] == 1.0 and r["items"] == 3
    assert r["precision"] == pytest.approx(3 / sum(len(w) - 1 for w, _, _ in words))
    assert r["f1"] == pytest.approx(2 * r["precision"] / (1 + r["precision"]))


def test_reference_point_is_the_published_morph_eval():
    assert reference_point(["light", "ed"], "light", "ed") == 1
    assert reference_point(["lighted"], "light", "ed") == 0
    assert reference_point(["li", "ghted"], "light", "ed") == -1
    assert reference_point(["\ufffd", "\ufffd"], "ա", "բ") == -1


@pytest.mark.parametrize("argv, pattern", [
    (["--data", "{t}/none"], r"no MorphScore data folder"),
    (["--data", "{t}/empty"], r"no \*_morph_data\.csv file in the folder"),
    (["--data", "{t}/bad"], r"english_morph_data\.csv: not a MorphScore file"),
    (["--data", "{t}/odd"], r"klingon_morph_data\.csv: no ISO 639-3 code known"),
    (["--data", "{t}/ok", "--languages", "eng,tur"], r"tur not in the data \(eng\)"),
    (["--data", "{t}/ragged"], r"english_morph_data\.csv:3: row has 2 fields, expected 4"),
])
def test_morphscore_refuses_bad_data_with_one_line(tmp_path, capsys, argv, pattern):
    import base64
    import re

    for sub in ("empty", "bad", "odd", "ok", "ragged"):
        (tmp_path / sub).mkdir()
    (tmp_path / "bad/english_morph_data.csv").write_text("a,b\n1,2\n")
    (tmp_path / "odd/klingon_morph_data.csv").write_text(",full_word,pt1,rest\n0,ab,a,b\n")
    (tmp_path / "ok/english_morph_data.csv").write_text(",full_word,pt1,rest\n0,ab,a,b\n")
    (tmp_path / "ragged/english_morph_data.csv").write_text(",full_word,pt1,rest\n0,ab,a,b\n1,cd\n")
    ranks = tmp_path / "b.tiktoken"
    ranks.write_text("".join(base64.b64encode(bytes([i])).decode() + f" {i}\n" for i in range(256)))
    rc = main(["morphscore", "-t", f"tiktoken:{ranks}?pattern=gpt2"] + [a.format(t=tmp_path) for a in argv])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and re.search(pattern, err), err


# ---------------------------------------------------------------- --strip

EDGES = [" ", "  ", "\t", "\u3000", "\xa0", " \u2009", "\n"]


def test_strip_equals_the_library_on_stripped_text(shared, tmp_path, tiktoken_encoding, capsys):
    """PUD with edge whitespace injected: with --strip the counts equal tiktoken on the stripped
    (NFC) text; without it they differ by the edge characters; the signature says so."""
    from tokstat import load_corpus

    pud = load_corpus("ud-pud").select(["en", "zh", "ja"])
    rnd = random.Random(7)
    rows = []
    for k, seg in enumerate(pud):
        if k == 300:
            break
        rows.append({lang: rnd.choice(EDGES) * rnd.randint(0, 2) + t + rnd.choice(EDGES) * rnd.randint(0, 2)
                     for lang, t in seg.texts.items()})
    f = tmp_path / "pud-edges.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    enc = tiktoken_encoding("cl100k_base")
    out = tmp_path / "s.csv"
    assert main(["compare", str(f), "-t", "tiktoken:cl100k_base", "--strip", "--out", str(out)]) in (0, None)
    stripped = pl.read_csv(out)
    plain = compare(str(f), ["tiktoken:cl100k_base"], n_boot=0, workers=1)
    for lang in ("en", "zh", "ja"):
        want = sum(len(enc.encode_ordinary(unicodedata.normalize("NFC", r[lang]).strip())) for r in rows)
        raw = sum(len(enc.encode_ordinary(unicodedata.normalize("NFC", r[lang]))) for r in rows)
        got = stripped.filter(pl.col("language") == lang).row(0, named=True)
        assert got["tokens"] == want, lang
        assert plain.filter(pl.col("language") == lang)["tokens"][0] == raw != want
        assert "norm:nfc+strip" in got["signature"]
    capsys.readouterr()


def test_strip_is_an_option_of_every_command_that_reads_a_corpus():
    import click

    from tokstat.cli import cli

    def walk(g):
        for c in g.commands.values():
            yield from walk(c) if isinstance(c, click.Group) else [c]
    readers = [c for c in walk(cli) if any(p.name == "encoding_errors" for p in c.params)]
    assert len(readers) >= 8 and all(any(p.name == "strip" for p in c.params) for c in readers)


# ---------------------------------------------------------------- RTC

def test_rtc_is_the_premium_times_the_character_ratio(shared):
    """RTC = premium × chars(pivot) / chars(L) on fully aligned text (PUD: no empty segment), and 1 for
    the pivot; Chinese RTC is far above its premium (the scripts' character ratio)."""
    df = compare("ud-pud", ["tiktoken:cl100k_base", "tiktoken:o200k_base"], languages=["en", "zh", "ja", "de", "ar"],
                 n_boot=0, workers=1)
    for r in df.iter_rows(named=True):
        piv = df.filter((pl.col("tokenizer") == r["tokenizer"]) & (pl.col("language") == "en")).row(0, named=True)
        assert r["rtc"] == pytest.approx(r["premium"] * piv["chars"] / r["chars"], rel=1e-12)
        assert r["rtc"] == pytest.approx(piv["chars_per_token"] / r["chars_per_token"], rel=1e-12)
    zh = df.filter((pl.col("language") == "zh") & (pl.col("tokenizer") == "tiktoken/o200k_base")).row(0, named=True)
    assert zh["rtc"] > 2.5 * zh["premium"]
    assert df.filter(pl.col("language") == "en")["rtc"].to_list() == [1.0, 1.0]


def test_rtc_is_in_the_wide_view(capsys):
    assert main(["compare", SAMPLE, "-t", "train:bpe:600", "--wide"]) in (0, None)
    assert " RTC" in capsys.readouterr().out


# ---------------------------------------------------------------- a degenerate tokenizer

@pytest.fixture(scope="module")
def dropping(tmp_path_factory) -> str:
    """A byte-level BPE whose normaliser deletes every non-ASCII character: Chinese all but vanishes
    (a broken load or a wrong normaliser), so it looks by far the cheapest on Chinese."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    d = tmp_path_factory.mktemp("drop")
    (d / "t.txt").write_text(Path(SAMPLE).read_text(encoding="utf-8").replace("\t", "\n"), encoding="utf-8")
    t = Tokenizer(models.BPE())
    t.normalizer = normalizers.Replace(Regex(r"[^\x00-\x7f]"), "")
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t.decoder = decoders.ByteLevel()
    t.train([str(d / "t.txt")], trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    t.save(str(d / "drop.json"))
    return f"hf:{d / 'drop.json'}"


def test_a_tokenizer_that_drops_its_input_is_marked_everywhere_and_never_an_answer(dropping, tmp_path, capsys):
    from tokstat import gpu, preset, project
    from tokstat.metrics import unreliable
    from tokstat.report.answers import verdict

    c = compare(SAMPLE, [dropping, "train:bpe:800"], n_boot=20, workers=1)
    drop = c.filter(pl.col("tokenizer") != "train/bpe-800")["tokenizer"][0]
    zh = c.filter(pl.col("language") == "zh").sort("premium")
    assert zh["tokenizer"][0] == drop and zh["premium"][0] < 0.2        # the trap: the cheapest by far
    assert drop in unreliable(c) and "train/bpe-800" not in unreliable(c)
    assert verdict(c, None).best == "train/bpe-800"                     # the report's answer
    costs = project(c, preset("llama2-7b"), gpu("h100-sxm"), train_chars=1e12)
    rec = costs.filter(pl.col("recommended"))
    assert rec.height and drop not in rec["tokenizer"].to_list()
    res = tmp_path / "c.csv"
    c.write_csv(res)
    for argv in (["compare", SAMPLE, "-t", dropping, "-t", "train:bpe:800", "--group-by", "script"],
                 ["compare", SAMPLE, "-t", dropping, "-t", "train:bpe:800", "--matrix"],
                 ["compare", SAMPLE, "-t", dropping, "-t", "train:bpe:800", "--format", "md"],
                 ["groups", str(res), "--by", "script"]):
        assert main(argv) in (0, None)
        out = capsys.readouterr().out
        lines = [x for x in out.splitlines() if drop in x]
        assert lines and all("⚠" in x for x in lines), (argv, out)


def test_a_table_whose_premium_is_an_rtc_is_warned_about_once(tmp_path, capsys):
    """Someone passes a peer's RTC table as a premium: the report warns in one line (and not for a
    table tokstat wrote)."""
    c = compare(SAMPLE, ["train:bpe:600"], workers=1, n_boot=20)
    good, bad = tmp_path / "good.parquet", tmp_path / "rtc.parquet"
    c.write_parquet(good)
    c.with_columns(pl.col("rtc").alias("premium")).write_parquet(bad)
    assert main(["report", str(good), "--out", str(tmp_path / "a.html")]) in (0, None)
    assert "RTC" not in capsys.readouterr().err
    assert main(["report", str(bad), "--out", str(tmp_path / "b.html")]) in (0, None)
    err = [x for x in capsys.readouterr().err.splitlines() if "RTC" in x]
    assert len(err) == 1 and "rtc.parquet: the premium of zh equals tokens per character over the pivot's" in err[0]


def test_a_sweep_of_documents_hints_at_its_own_option(capsys):
    """A fix hint names an option the command has: sweep on documents says --eval, not compare's --calibrate."""
    assert main(["sweep", "sample-docs", "--sizes", "500,1000,2000,4000", "--quiet"]) in (0, None)
    err = " ".join(capsys.readouterr().err.split())
    assert "--eval PARALLEL" in err and "--calibrate" not in err
