"""Hostile input, round 4: the features added since the last round (monolingual shards, budget,
calibrate, ids:, inventory, overlap, extend, groups). Each case exits 2 with one line naming the file
(and line where there is one), what is wrong and the fix; never an internal error, never a hang;
every file under the case's folder byte-identical afterwards. The structural classes have their own
files: outputs against inputs (tests/test_inputs_protected.py), option ranges (tests/test_ranges.py)."""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from pathlib import Path

import pytest

from tokstat.cli import main

from conftest import ROOT

SAMPLE = str(ROOT / "corpora/sample-zh-en/sample.tsv")


@pytest.fixture(scope="module")
def tok(tmp_path_factory) -> str:
    """A small byte-level BPE ``tokenizer.json`` trained on the project's sample (no network, no ../shared)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    d = tmp_path_factory.mktemp("tok")
    text = d / "t.txt"
    text.write_text(Path(SAMPLE).read_text(encoding="utf-8").replace("\t", "\n"), encoding="utf-8")
    t = Tokenizer(models.BPE())
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t.train([str(text)], trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    t.save(str(d / "tokenizer.json"))
    return f"hf:{d / 'tokenizer.json'}"


def w(p: Path, data: str | bytes) -> str:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(p)


def parquet(p: Path, cols: dict, **kw) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    p.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(cols), str(p), **kw)
    return str(p)


def truncated(p: Path) -> str:
    """A Parquet file cut in the middle, its footer's magic kept (the footer points past the end)."""
    parquet(p, {"text": ["hello world"] * 50, "language": ["en"] * 50})
    d = p.read_bytes()
    p.write_bytes(d[: len(d) // 2] + d[-8:])
    return str(p)


def damaged_pages(p: Path) -> str:
    """A Parquet file with an intact footer and garbage in its data pages (fails while rows are read)."""
    parquet(p, {"text": [f"hello world {i}" for i in range(2000)], "language": ["en"] * 2000}, compression="none")
    d = bytearray(p.read_bytes())
    d[200:3000] = b"\xab" * 2800
    p.write_bytes(bytes(d))
    return str(p)


def docs(p: Path, rows: list[tuple[str, str]]) -> str:
    return w(p, "".join(json.dumps({"text": t, "language": lang}, ensure_ascii=False) + "\n" for lang, t in rows))


def snapshot(root: Path) -> dict[str, str]:
    return {str(q): hashlib.sha256(q.read_bytes()).hexdigest() for q in sorted(root.rglob("*")) if q.is_file()}


# name -> (build(tmp, tok) -> argv, regex the one stderr line must match)
CASES = {
    # --- one guarded reader for every Parquet open
    "shard-folder-truncated-parquet": (lambda t, k: [parquet(t / "s/a.parquet", {"text": ["x"], "language": ["en"]}),
                                                     truncated(t / "s/b.parquet"), "compare", str(t / "s"), "-t", k][2:],
                                       r"b\.parquet: cannot read Parquet file \(.*fix: check that the file is complete Parquet"),
    "shard-folder-damaged-pages": (lambda t, k: [parquet(t / "s/a.parquet", {"text": ["x"], "language": ["en"]}),
                                                 damaged_pages(t / "s/b.parquet"), "compare", str(t / "s"), "-t", k][2:],
                                   r"b\.parquet: cannot read (rows|row group \d+) \(.*fix: check that the file is complete"),
    "budget-truncated-parquet": (lambda t, k: [parquet(t / "s/a.parquet", {"text": ["x"], "language": ["en"]}),
                                               truncated(t / "s/b.parquet"), "budget", str(t / "s"), "-t", k][2:],
                                 r"b\.parquet: cannot read Parquet file"),
    "budget-exact-damaged-pages": (lambda t, k: [parquet(t / "s/a.parquet", {"text": ["x"], "language": ["en"]}),
                                                 damaged_pages(t / "s/b.parquet"), "budget", str(t / "s"), "-t", k,
                                                 "--exact"][2:], r"b\.parquet: cannot read"),
    "ids-table-truncated-parquet": (lambda t, k: ["compare", SAMPLE, "-t", f"ids:{truncated(t / 'ids.parquet')}?vocab={k[3:]}"],
                                    r"ids\.parquet: cannot read Parquet file"),
    "ids-table-damaged-pages": (lambda t, k: ["compare", SAMPLE, "-t", f"ids:{damaged_pages(t / 'ids.parquet')}?vocab={k[3:]}"],
                                r"ids\.parquet: cannot read"),
    # --- internal errors before
    "groups-value-text-column": (lambda t, k: ["groups", _results(t, k), "--value", "tokenizer"],
                                 r"--value tokenizer is a column of String, not of numbers"),
    "inventory-empty-vocabulary": (lambda t, k: ["inventory", "-t", "hf:" + w(t / "empty.json", json.dumps(_empty_tok()))],
                                   r"the tokenizer's vocabulary is empty"),
    "vocabulary-id-1e12": (lambda t, k: ["compare", SAMPLE, "-t", "ids:" + w(t / "ids.jsonl", '{"text": "a", "ids": [0]}\n')
                                         + "?vocab=" + w(t / "v.json", '{"a": 1000000000000}')],
                           r"v\.json: token id 1000000000000 in the vocabulary is far beyond its 1 entries"),
    "vocabulary-negative-id": (lambda t, k: ["compare", SAMPLE, "-t", "ids:" + w(t / "ids.jsonl", '{"text": "a", "ids": [0]}\n')
                                             + "?vocab=" + w(t / "v.json", '{"a": -3}')], r"v\.json: token id -3 .* is negative"),
    "budget-seed-negative": (lambda t, k: ["budget", "sample-docs", "-t", k, "--seed", "-1"], r"--seed must be at least 0, got -1"),
    "extend-gpus-zero": (lambda t, k: ["extend", k, "--corpus", SAMPLE, "--languages", "zh", "--add", "5", "--out", str(t / "x"),
                                       "--gpus", "0"], r"--gpus must be at least 1, got 0"),
    "extend-batch-zero": (lambda t, k: ["extend", k, "--corpus", SAMPLE, "--languages", "zh", "--add", "5", "--out", str(t / "x"),
                                        "--batch", "0"], r"--batch must be at least 1, got 0"),
    "extend-price-negative": (lambda t, k: ["extend", k, "--corpus", SAMPLE, "--languages", "zh", "--add", "5", "--out",
                                            str(t / "x"), "--price", "-1"], r"--price must be a finite positive number, got -1"),
    "extend-price-inf": (lambda t, k: ["extend", k, "--corpus", SAMPLE, "--languages", "zh", "--add", "5", "--out",
                                       str(t / "x"), "--price", "inf"], r"--price must be a finite positive number, got inf"),
    # --- two spellings of one language: refused in both corpus kinds
    "folders-en-and-eng_Latn": (lambda t, k: [docs(t / "d/en/a.jsonl", [("en", "one")]), docs(t / "d/eng_Latn/a.jsonl",
                                              [("en", "two")]), docs(t / "d/zh/a.jsonl", [("zh", "三")]),
                                              "compare", str(t / "d"), "-t", k][3:],
                                r"d: two folders for language en: en/ and eng_Latn/"),
    "column-en-and-EN": (lambda t, k: ["compare", docs(t / "d.jsonl", [("en", "one"), ("EN", "two"), ("zh", "三")]), "-t", k],
                         r"d\.jsonl: the language column spells one language two ways: 'en' and 'EN' are both en"),
    "column-en-and-eng_Latn-parquet": (lambda t, k: ["compare", parquet(t / "d.parquet", {
        "text": ["one", "two", "三"], "language": ["en", "eng_Latn", "zh"]}), "-t", k],
        r"d\.parquet: the language column spells one language two ways: 'en' and 'eng_Latn'"),
    "column-spellings-across-shards": (lambda t, k: [docs(t / "s/a.jsonl", [("en", "one"), ("zh", "三")]),
                                                     docs(t / "s/b.jsonl", [("eng", "two")]), "compare", str(t / "s"), "-t", k][2:],
                                       r"b\.jsonl: the language column spells one language two ways: 'en' \(in a\.jsonl\) and 'eng'"),
    "folder-misc-beside-languages": (lambda t, k: [docs(t / "d/en/a.jsonl", [("en", "one")]), docs(t / "d/zh/a.jsonl", [("zh", "三")]),
                                                   docs(t / "d/misc/a.jsonl", [("en", "x")]), "compare", str(t / "d"), "-t", k][3:],
                                     r"misc: the folder misc/ is not named by a language code \(beside en/, zh/\).*fix: rename it"),
    # --- result files: a number that is not one
    "report-budget-with-nan": (lambda t, k: ["report", _nan_table(t, k, "nan"), "--out", str(t / "r.html")],
                               r"b\.parquet: column tokens holds nan in row 1: tokstat writes a missing number as empty"),
    "cost-results-null-pivot-rate": (lambda t, k: ["cost", "--results", _null_pivot(t, k), "--model", "llama2-7b", "--gpu",
                                                   "h100-sxm"], r"hf/\S+ has no tokens per character on the pivot en in the results"),
    "cost-results-with-inf": (lambda t, k: ["cost", "--results", _inf_compare(t, k), "--model", "llama2-7b", "--gpu", "h100-sxm"],
                              r"c\.parquet: column tokens_per_char holds inf in row \d"),
    # --- options that do not apply are refused, not ignored
    "lang-beside-a-language-column": (lambda t, k: ["compare", docs(t / "d.jsonl", [("en", "one"), ("zh", "三")]), "-t", k,
                                                    "--lang", "zh"],
                                      r"d\.jsonl: --lang zh gives every document one language, but the table has a language column"),
    "lang-on-per-language-folders": (lambda t, k: [docs(t / "d/en/a.jsonl", [("en", "one")]), docs(t / "d/zh/a.jsonl", [("zh", "三")]),
                                                   "compare", str(t / "d"), "-t", k, "--lang", "zh"][2:],
                                     r"--lang zh gives one language to a folder of per-language folders \(en, zh\)"),
    "columns-on-a-document-table": (lambda t, k: ["compare", docs(t / "d.jsonl", [("en", "one"), ("zh", "三")]), "-t", k,
                                                  "--columns", "en=text"],
                                    r"d\.jsonl: --columns names the language columns of a parallel corpus, but this table holds documents"),
    "lang-id-on-a-parallel-corpus": (lambda t, k: ["compare", SAMPLE, "-t", k, "--lang-id", "doc"],
                                     r"sample\.tsv: --lang-id applies to a monolingual corpus \(documents\), and sample is parallel"),
    "lang-col-on-a-parallel-corpus": (lambda t, k: ["corpus", "info", SAMPLE, "--lang-col", "language"],
                                      r"--lang-col applies to a monolingual corpus"),
    "overlap-the-same-tokenizer-twice": (lambda t, k: ["overlap", "-t", k, "-t", k],
                                         r"hf/\S+ is given twice .*an overlap with itself is 1 by definition"),
    # --- unclear errors of earlier rounds
    "nothing-aligns": (lambda t, k: ["compare", w(t / "c.jsonl", '{"en": "one", "zh": ""}\n{"en": "", "zh": "二"}\n'), "-t", k],
                       r"c\.jsonl: nothing aligns: no segment has text in both the pivot en and zh"),
    "nothing-aligns-textdir": (lambda t, k: [w(t / "d/en.txt", "a\n\nb\n"), w(t / "d/zh.txt", "\n乙\n\n"), "compare", str(t / "d"),
                                             "-t", k][2:], r"d: nothing aligns"),
    "tmx-tuv-without-lang": (lambda t, k: ["compare", w(t / "c.tmx", '<tmx><body>\n<tu>\n<tuv xml:lang="en"><seg>a</seg></tuv>\n'
                                                                    '<tuv><seg>b</seg></tuv>\n</tu>\n</body></tmx>\n'), "-t", k],
                             r"c\.tmx:2: a <tuv> without xml:lang \(in <tu> number 1\)"),
    "tmx-two-tuvs-one-language": (lambda t, k: ["compare", w(t / "c.tmx", '<tmx><body>\n<tu><tuv xml:lang="en"><seg>a</seg></tuv>'
                                                                         '<tuv xml:lang="zh"><seg>b</seg></tuv></tu>\n\n<tu>\n'
                                                                         '<tuv xml:lang="en"><seg>a</seg></tuv><tuv xml:lang="en">'
                                                                         '<seg>b</seg></tuv></tu></body></tmx>\n'), "-t", k],
                                  r"c\.tmx:4: two <tuv>s of language en in one <tu>"),
    "tmx-unknown-language": (lambda t, k: ["compare", w(t / "c.tmx", '<tmx><body>\n\n<tu><tuv xml:lang="en"><seg>a</seg></tuv>'
                                                                    '<tuv xml:lang="qqqzz"><seg>b</seg></tuv></tu></body></tmx>'), "-t", k],
                             r"c\.tmx:3: unknown language code 'qqqzz'"),
}


def _empty_tok() -> dict:
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "vocab": {}, "unk_token": "[UNK]"}}


def _results(t: Path, k: str) -> str:
    from tokstat import compare

    return w(t / "res.csv", compare(SAMPLE, [k], n_boot=0, workers=1).write_csv())


def _nan_table(t: Path, k: str, value: str) -> str:
    from tokstat import budget

    import polars as pl

    df = budget("sample-docs", [k])
    df = df.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(float(value)).otherwise(pl.col("tokens")).alias("tokens"))
    df.write_parquet(t / "b.parquet")
    return str(t / "b.parquet")


def _null_pivot(t: Path, k: str) -> str:
    import polars as pl

    from tokstat import compare

    df = compare(SAMPLE, [k], n_boot=0, workers=1)
    df = df.with_columns(pl.when(pl.col("language") == "en").then(None).otherwise(pl.col("tokens_per_char")).alias("tokens_per_char"))
    df.write_json(t / "c.json")
    return str(t / "c.json")


def _inf_compare(t: Path, k: str) -> str:
    import polars as pl

    from tokstat import compare

    df = compare(SAMPLE, [k], n_boot=0, workers=1)
    df = df.with_columns(pl.when(pl.col("language") == "en").then(float("inf")).otherwise(pl.col("tokens_per_char"))
                         .alias("tokens_per_char"))
    df.write_parquet(t / "c.parquet")
    return str(t / "c.parquet")


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_input_gives_one_line_and_changes_nothing(name, tok, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    build, pattern = CASES[name]
    argv = build(tmp_path, tok)
    before = snapshot(tmp_path)
    capsys.readouterr()
    rc = main(argv)
    err = capsys.readouterr().err.strip()
    lines = [x for x in err.splitlines() if not x.startswith("tokstat: warning:")]
    assert rc == 2, (rc, err)
    assert len(lines) == 1 and lines[0].startswith("tokstat: error: ") and "(fix: " in lines[0], err
    assert "internal error" not in err and "Traceback" not in err
    assert re.search(pattern, lines[0]), lines[0]
    assert snapshot(tmp_path) == before


def test_enough_round_four_cases():
    assert len(CASES) >= 30


# ---------------------------------------------------------------- exit 0: what the same inputs give when valid

@pytest.mark.parametrize("name", ["U.CSV", "U.PARQUET", "U.JSONL", "S.TSV", "zh.MO"])
def test_upper_case_extensions_are_read_as_their_format(name, tmp_path):
    """``U.CSV`` is CSV, ``U.PARQUET`` Parquet, ``zh.MO`` a compiled catalogue: the same segments as lower case."""
    import polib

    from tokstat import load_corpus

    p = tmp_path / name
    low = tmp_path / name.lower()
    if name.endswith("CSV"):
        data = "en,zh\nHello.,你好。\n"
    elif name.endswith("TSV"):
        data = "en\tzh\nHello.\t你好。\n"
    elif name.endswith("JSONL"):
        data = '{"en": "Hello.", "zh": "你好。"}\n'
    if name.endswith("PARQUET"):
        parquet(p, {"en": ["Hello."], "zh": ["你好。"]})
        parquet(low, {"en": ["Hello."], "zh": ["你好。"]})
    elif name.endswith("MO"):
        po = polib.POFile()
        po.metadata = {"Content-Type": "text/plain; charset=UTF-8", "Language": "zh"}
        po.append(polib.POEntry(msgid="Hello.", msgstr="你好。"))
        po.save_as_mofile(str(p))
        po.save_as_mofile(str(low))
    else:
        w(p, data)
        w(low, data)
    got = [s.texts for s in load_corpus(str(p))]
    assert got == [s.texts for s in load_corpus(str(low))] and got == [{"en": "Hello.", "zh": "你好。"}]


def test_inventory_of_ids_lists_its_vocabulary(tok, tmp_path, capsys):
    """``inventory -t ids:TABLE?vocab=V`` lists V's entries (the same table as inventory of V itself)."""
    import polars as pl

    from tokenizers import Tokenizer

    vocab = tok[3:]
    ids = w(tmp_path / "ids.jsonl", json.dumps({"text": "你好", "ids": Tokenizer.from_file(vocab).encode("你好").ids}) + "\n")
    assert main(["inventory", "-t", f"ids:{ids}?vocab={vocab}", "--out", str(tmp_path / "a.csv")]) in (0, None)
    assert main(["inventory", "-t", tok, "--out", str(tmp_path / "b.csv")]) in (0, None)
    a, b = pl.read_csv(tmp_path / "a.csv"), pl.read_csv(tmp_path / "b.csv")
    assert a.drop("tokenizer").equals(b.drop("tokenizer")) and a["entries"][0] > 256


def test_a_language_column_that_agrees_is_still_one_spelling_per_language(tok, tmp_path):
    """The same spelling in every shard, FineWeb-2's language + language_script, and und for empty or
    null values (two spellings of und are not a clash) load as before."""
    from tokstat import load_corpus

    docs(tmp_path / "s/a.jsonl", [("en", "one"), ("zh", "三"), ("", "?")])
    docs(tmp_path / "s/b.jsonl", [("en", "two")])
    w(tmp_path / "s/c.jsonl", json.dumps({"text": "x", "language": None}) + "\n")
    c = load_corpus(str(tmp_path / "s"))
    assert sorted(c.languages) == ["en", "und", "zh"]
    parquet(tmp_path / "f.parquet", {"text": ["a", "b"], "language": ["cmn", "cmn"], "language_script": ["Hani", "Hani"]})
    assert load_corpus(str(tmp_path / "f.parquet")).languages == ["zh"]


def test_a_shard_that_grows_while_budget_runs_is_refused(tok, tmp_path, monkeypatch, capsys):
    """While the one pass reads the shards a writer appends to one: the run refuses to give an
    estimate and an exact count of a corpus that changed under it."""
    import sys

    scan_mod = sys.modules["tokstat.engine.scan"]

    shard = Path(docs(tmp_path / "d/en/a.jsonl", [("en", f"document {i}") for i in range(50)]))
    docs(tmp_path / "d/zh/a.jsonl", [("zh", f"文件 {i}") for i in range(50)])
    real = scan_mod.count_units

    def grow_then_count(*a, **kw):
        with open(shard, "a", encoding="utf-8") as f:
            f.write(json.dumps({"text": "a late document", "language": "en"}) + "\n")
        return real(*a, **kw)

    monkeypatch.setattr(scan_mod, "count_units", grow_then_count)
    rc = main(["budget", str(tmp_path / "d"), "-t", tok, "--exact", "--workers", "1", "--out", str(tmp_path / "b.csv")])
    err = capsys.readouterr().err
    assert rc == 2 and re.search(r"a\.jsonl: .*changed while this run was reading it \([\d,]+ bytes, then [\d,]+\)", err), err
    assert not (tmp_path / "b.csv").exists()


def _silent_listener():
    """A TCP server on the loopback that accepts and never answers (a firewall that lets the
    connection through to something that is not Ray). Closed by the caller."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    held = []
    stop = threading.Event()

    def accept():
        s.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(s.accept()[0])
            except OSError:
                continue
    th = threading.Thread(target=accept, daemon=True)
    th.start()
    return s, stop, held


def test_an_address_nobody_answers_fails_in_seconds(tok, capsys):
    pytest.importorskip("ray")
    s, stop, held = _silent_listener()
    port = s.getsockname()[1]
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    free = closed.getsockname()[1]
    closed.close()                     # nothing listens there now: connection refused
    try:
        for addr, pattern in [(f"127.0.0.1:{port}", r"does not answer \(nothing within 5 s\)"),
                              (f"ray://127.0.0.1:{port}", r"does not answer"),
                              (f"127.0.0.1:{free}", r"cannot reach the Ray cluster at 127\.0\.0\.1:\d+ \(Connection refused\)")]:
            t0 = time.monotonic()
            rc = main(["compare", SAMPLE, "-t", tok, "--engine", "ray", "--address", addr])
            took = time.monotonic() - t0
            err = capsys.readouterr().err.strip()
            assert rc == 2 and re.search(pattern, err) and len(err.splitlines()) == 1, err
            assert took < 20, took
    finally:
        stop.set()
        s.close()
        for c in held:
            c.close()


def test_a_listener_that_speaks_http2_passes_the_probe():
    """The probe's positive side: a server answering the HTTP/2 preface with a SETTINGS frame (as
    gRPC, and so Ray's GCS and Ray Client, do) is taken for a cluster."""
    from tokstat.engine.ray import probe

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)

    def serve():
        c, _ = s.accept()
        c.recv(64)
        c.sendall(b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        time.sleep(0.2)
        c.close()
    th = threading.Thread(target=serve, daemon=True)
    th.start()
    probe(f"127.0.0.1:{s.getsockname()[1]}")
    th.join(2)
    s.close()
