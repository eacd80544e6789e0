"""Malformed input, through the command line: each case exits 2 with one line on stderr that names
the file (and line where there is one), says what is wrong and how to fix it; never a traceback,
and nothing is written."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import polars as pl
import pytest

from tokstat.cli import main

from conftest import ROOT

SAMPLE = str(ROOT / "corpora/sample-zh-en/sample.tsv")
TOK = "tiktoken:cl100k_base"


def w(p: Path, data: str | bytes) -> str:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(p)


def ranks_file(p: Path, n: int = 300) -> str:
    lines = [base64.b64encode(bytes([i])).decode() + f" {i}" for i in range(256)]
    return w(p, "\n".join(lines) + "\n")


def conllu(sent: str) -> str:
    return f"# sent_id = s1\n# text = {sent}\n1\t{sent}\t_\tX\t_\t_\t0\troot\t_\t_\n\n"


def _bad_utf8_parquet(p: Path) -> str:
    """A Parquet file whose string column holds invalid UTF-8 (written without pyarrow's validation)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def col(values):
        return pa.Array.from_buffers(pa.string(), len(values), pa.array(values, type=pa.binary()).buffers())

    pq.write_table(pa.table({"en": col([b"ok", b"\xff\xfebad"]), "zh": col([b"a", b"b"])}), str(p))
    return str(p)


# name -> (build(tmp) -> argv, regex the one stderr line must match)
CASES = {
    # --- corpora: line-based text
    "tsv-invalid-utf8": (lambda t: ["compare", w(t / "c.tsv", b"en\tzh\nhello\t\xff\xfe\n"), "-t", TOK],
                         r"c\.tsv:2: invalid UTF-8 at byte offset 12 \(byte 0xff\).*fix: re-encode"),
    "tsv-gb18030": (lambda t: ["compare", w(t / "c.tsv", "en\tzh\nhi\t你好\n".encode("gb18030")), "-t", TOK],
                    r"c\.tsv:2: invalid UTF-8.*iconv -f GB18030"),
    "tsv-missing-field": (lambda t: ["compare", w(t / "c.tsv", "en\tzh\na\tb\nc\n"), "-t", TOK],
                          r"c\.tsv:3: row has 1 fields, expected 2.*fix:"),
    "tsv-extra-field": (lambda t: ["compare", w(t / "c.tsv", "en\tzh\na\tb\tc\n"), "-t", TOK],
                        r"c\.tsv:2: row has 3 fields, expected 2"),
    "tsv-empty": (lambda t: ["compare", w(t / "c.tsv", b""), "-t", TOK], r"c\.tsv: empty file \(fix: add a header"),
    "tsv-no-language-columns": (lambda t: ["compare", w(t / "c.tsv", "source\ttarget\na\tb\n"), "-t", TOK],
                                r"c\.tsv: no column is named by a language code \(columns: source, target\)"),
    "tsv-columns-count": (lambda t: ["compare", w(t / "c.tsv", "a\tb\nx\ty\n"), "-t", TOK, "--columns", "en,zh,fr"],
                          r"c\.tsv: --columns names 3 columns but the file has 2"),
    "textdir-different-lengths": (lambda t: [w(t / "d/en.txt", "a\nb\nc\n"), w(t / "d/zh.txt", "甲\n乙\n"),
                                             "compare", str(t / "d"), "-t", TOK][2:],
                                  r"d.*(line|lines).*fix:"),
    "textdir-empty": (lambda t: ["compare", str((t / "e").mkdir() or t / "e"), "-t", TOK],
                      r"e: no language files found"),
    "textdir-two-files-one-language": (lambda t: [w(t / "d/en.txt", "a\n"), w(t / "d/eng.txt", "a\n"),
                                                  w(t / "d/zh.txt", "甲\n"), "compare", str(t / "d"), "-t", TOK][3:],
                                       r"two files for language en"),
    # --- corpora: structured formats
    "jsonl-malformed-line": (lambda t: ["compare", w(t / "c.jsonl", '{"en":"a","zh":"b"}\n{"en":"c",\n'), "-t", TOK],
                             r"c\.jsonl:2: malformed JSON.*fix: make every line one JSON object"),
    "jsonl-not-an-object": (lambda t: ["compare", w(t / "c.jsonl", '{"en":"a","zh":"b"}\n["x"]\n'), "-t", TOK],
                            r"c\.jsonl:2: a line is not a JSON object"),
    "jsonl-number-not-text": (lambda t: ["compare", w(t / "c.jsonl", '{"en":"a","zh":"b"}\n{"en":3,"zh":"c"}\n'), "-t", TOK],
                              r"c\.jsonl:2: expected text, found int"),
    "jsonl-invalid-utf8": (lambda t: ["compare", w(t / "c.jsonl", b'{"en":"a","zh":"b"}\n{"en":"\xc3","zh":"c"}\n'), "-t", TOK],
                           r"c\.jsonl:2: invalid UTF-8"),
    "parquet-truncated": (lambda t: ["compare", _truncated_parquet(t / "c.parquet"), "-t", TOK],
                          r"c\.parquet: cannot read Parquet file.*fix: check that the file is complete Parquet"),
    "parquet-not-parquet": (lambda t: ["compare", w(t / "c.parquet", "en,zh\na,b\n"), "-t", TOK],
                            r"c\.parquet: cannot read Parquet file"),
    "tmx-malformed-xml": (lambda t: ["compare", w(t / "c.tmx", "<tmx><body><tu><tuv xml:lang='en'><seg>a</seg>"), "-t", TOK],
                          r"c\.tmx:1: malformed TMX"),
    "tmx-no-units": (lambda t: ["compare", w(t / "c.tmx", "<tmx><body></body></tmx>"), "-t", TOK],
                     r"c\.tmx: no <tu> with <tuv xml:lang=...> found"),
    "conllu-wrong-columns": (lambda t: ["compare", w(t / "x/en_pud-ud-test.conllu", "# sent_id = 1\n1\thello\n\n"), "-t", TOK],
                             r"en_pud-ud-test\.conllu:2: expected 10 tab-separated columns, found 2"),
    "conllu-bad-token-id": (lambda t: ["compare", w(t / "x/en_pud-ud-test.conllu", conllu("hi").replace("1\thi", "x\thi")), "-t", TOK],
                            r"en_pud-ud-test\.conllu:3: bad token id 'x'"),
    "po-malformed": (lambda t: ["compare", w(t / "zh.po", 'msgid "a"\nfoo bar\n'), "-t", TOK],
                     r"zh\.po:2: malformed gettext catalogue"),
    "mo-truncated": (lambda t: ["compare", w(t / "zh.mo", b"\xde\x12\x04\x95\x00\x00"), "-t", TOK],
                     r"zh\.mo: truncated \.mo file \(6 bytes, the header alone is 28\).*msgfmt"),
    "unknown-format": (lambda t: ["compare", w(t / "c.xlsx", b"PK"), "-t", TOK], r"c\.xlsx: unknown corpus format '\.xlsx'"),
    "no-such-corpus": (lambda t: ["compare", str(t / "nope.tsv"), "-t", TOK], r"no corpus .*nope\.tsv.*fix: pass a path"),
    "glob-matches-nothing": (lambda t: ["compare", str(t / "shards/*.parquet"), "-t", TOK], r"no file matches"),
    "glob-wrong-suffix": (lambda t: [w(t / "s/a.txt", "x"), "compare", str(t / "s/*"), "-t", TOK][1:],
                          r"a\.txt: a sharded corpus is JSONL or Parquet files only"),
    "shards-different-languages": (lambda t: [_parquet(t / "s/a.parquet", {"en": ["a"], "zh": ["b"]}),
                                              _parquet(t / "s/b.parquet", {"en": ["a"], "fr": ["b"]}),
                                              "compare", str(t / "s"), "-t", TOK][2:],
                                   r"b\.parquet: shard has languages en, fr"),
    # --- tokenizers
    "spec-without-kind": (lambda t: ["compare", SAMPLE, "-t", "cl100k_base"], r"tokenizer spec 'cl100k_base' has no kind"),
    "spec-unknown-kind": (lambda t: ["compare", SAMPLE, "-t", "bpe:x"], r"unknown tokenizer kind 'bpe'"),
    "spec-bad-option": (lambda t: ["compare", SAMPLE, "-t", "tiktoken:cl100k_base?pattern"], r"option 'pattern'.*is not key=value"),
    "tiktoken-unknown-name": (lambda t: ["compare", SAMPLE, "-t", "tiktoken:cl200k"], r"unknown tiktoken encoding 'cl200k'"),
    "tiktoken-corrupt-ranks": (lambda t: ["compare", SAMPLE, "-t", "tiktoken:" + w(t / "x.tiktoken", "!!notbase64 zz\n") + "?pattern=gpt2"],
                               r"x\.tiktoken: not a tiktoken ranks file"),
    "tiktoken-no-pattern": (lambda t: ["compare", SAMPLE, "-t", "tiktoken:" + ranks_file(t / "mine.tiktoken")],
                            r"mine\.tiktoken: a ranks file needs its split pattern.*\?pattern=NAME"),
    "tiktoken-modified-published": (lambda t: ["compare", SAMPLE, "-t", "tiktoken:" + ranks_file(t / "cl100k_base.tiktoken")],
                                    r"cl100k_base\.tiktoken: sha256 .* does not match the published cl100k_base"),
    "tekken-bad-json": (lambda t: ["compare", SAMPLE, "-t", "tiktoken:" + w(t / "tekken.json", '{"config": {}}')],
                        r"tekken\.json: not a tekken tokenizer JSON"),
    "hf-truncated-json": (lambda t: ["compare", SAMPLE, "-t", "hf:" + w(t / "tokenizer.json", '{"version": "1.0", "model": {')],
                          r"tokenizer\.json: not a valid tokenizer\.json"),
    "hf-json-not-tokenizer": (lambda t: ["compare", SAMPLE, "-t", "hf:" + w(t / "tokenizer.json", json.dumps({"a": 1}))],
                              r"tokenizer\.json: not a valid tokenizer\.json"),
    "hf-missing-file": (lambda t: ["compare", SAMPLE, "-t", "hf:" + str(t / "none/tokenizer.json")],
                        r"tokenizer\.json: tokenizer file not found"),
    "spm-random-bytes": (lambda t: ["compare", SAMPLE, "-t", "spm:" + w(t / "m.model", bytes(range(256)) * 4)],
                         r"m\.model: not a SentencePiece model"),
    "spm-empty": (lambda t: ["compare", SAMPLE, "-t", "spm:" + w(t / "m.model", b"")], r"m\.model: not a SentencePiece model"),
    "wordpiece-missing": (lambda t: ["compare", SAMPLE, "-t", "wordpiece:" + str(t / "vocab.txt")],
                          r"vocab\.txt: vocabulary file not found"),
    "hash-pin-mismatch": (lambda t: ["compare", SAMPLE, "-t", "tiktoken:cl100k_base?sha256=0123456789abcdef"],
                          r"tokenizer files have sha256 223921b76ee99bde.*the spec pins 0123456789abcdef"),
    "hash-pin-not-hex": (lambda t: ["compare", SAMPLE, "-t", "tiktoken:cl100k_base?sha256=xyz"], r"sha256 pin 'xyz'.*is not 8-64 hex"),
    "train-bad-spec": (lambda t: ["compare", SAMPLE, "-t", "train:bpe:big"], r"bad training spec train:bpe:big"),
    "train-unknown-algo": (lambda t: ["train", SAMPLE, "--algo", "lzw", "--vocab-size", "100", "--out", str(t / "o")],
                           r"Invalid value for '--algo': 'lzw' is not one of"),
    "empty-corpus": (lambda t: ["compare", w(t / "c.tsv", "en\tzh\n"), "-t", TOK], r"c\.tsv: the corpus has no segments"),
    # --- options and outputs
    "pivot-absent": (lambda t: ["compare", SAMPLE, "-t", TOK, "--pivot", "fr"], r"pivot language 'fr' is not in the corpus \(en, zh\)"),
    "language-absent": (lambda t: ["compare", SAMPLE, "-t", TOK, "--languages", "en,de"], r"language\(s\) de not in corpus"),
    "workers-zero": (lambda t: ["compare", SAMPLE, "-t", TOK, "--workers", "0"], r"--workers must be at least 1"),
    "output-unknown-format": (lambda t: ["compare", SAMPLE, "-t", TOK, "--out", str(t / "r.xlsx")],
                              r"r\.xlsx: --out must end in \.parquet, \.csv or \.json"),
    "cost-unknown-model": (lambda t: ["model-info", "--model", "gpt-9"], r"unknown model preset 'gpt-9'"),
    "cost-unknown-gpu": (lambda t: ["model-info", "--model", "llama2-7b", "--gpu", "tpu-v9"], r"unknown accelerator 'tpu-v9'"),
    # --- added with the architecture and input-fidelity work
    "jsonl-lone-surrogate": (lambda t: ["corpus", "info", w(t / "s.jsonl", '{"en": "a", "zh": "\\ud800"}\n')],
                             r"s\.jsonl:1: a lone surrogate"),
    "jsonl-empty": (lambda t: ["corpus", "info", w(t / "e.jsonl", "\n\n")], r"e\.jsonl: no JSON object in the file"),
    "tsv-utf16-no-bom": (lambda t: ["corpus", "info", w(t / "u.tsv", "en\tzh\nhello\tworld\n".encode("utf-16-le"))],
                         r"u\.tsv: the file is UTF-16"),
    "csv-utf16-bom": (lambda t: ["corpus", "info", w(t / "u.csv", "en,zh\nhello,你好\n".encode("utf-16"))],
                      r"u\.csv: the file is UTF-16"),
    "csv-cr-line-endings": (lambda t: ["corpus", "info", w(t / "cr.csv", "en,zh\rhello,world\r")],
                            r"cr\.csv:1: a carriage return inside the only line"),
    "languages-twice": (lambda t: ["compare", SAMPLE, "-t", TOK, "--languages", "en,en,zh"], r"en given twice"),
    "sweep-sizes-4k": (lambda t: ["sweep", SAMPLE, "--sizes", "4k"], r"bad --sizes '4k'"),
    "wordpiece-missing-model": (lambda t: ["compare", SAMPLE, "-t", "wordpiece:some.model"], r"some\.model: vocabulary file not found"),
    "mix-not-summing-to-one": (lambda t: ["train", SAMPLE, "--algo", "bpe", "--vocab-size", "300", "--mix", "zh=0.6,en=0.6",
                                          "--out", str(t / "tok")], r"sum to 1\.2, not 1"),
    "train-spec-heldout-nan": (lambda t: ["compare", SAMPLE, "-t", "train:bpe:300?heldout=nan"], r"held-out fraction nan"),
    "out-under-a-file": (lambda t: ["compare", SAMPLE, "-t", TOK, "--out", w(t / "f.txt", "x") + "/r.csv"],
                         r"cannot write --out: .*f\.txt is not a writable folder"),
    "out-is-the-corpus": (lambda t: ["compare", w(t / "c.csv", "en,zh\na,b\n"), "-t", TOK, "--out", str(t / "c.csv")],
                          r"c\.csv: --out is an input of this run"),
    "out-equals-segments-out": (lambda t: ["compare", SAMPLE, "-t", TOK, "--out", str(t / "x.csv"), "--segments-out",
                                           str(t / "x.csv")], r"--segments-out and --out are the same file"),
    "report-png-is-a-file": (lambda t: ["report", "--corpus", SAMPLE, "-t", TOK, "--out", str(t / "r.html"), "--png",
                                        w(t / "p.png", "x")], r"--png is a file, not a folder"),
    "tsv-two-columns-one-language": (lambda t: ["corpus", "info", w(t / "d.tsv", "en\teng\tzh\na\tb\tc\n")],
                                     r"d\.tsv: columns 'en' and 'eng' are both language en"),
    "csv-case-duplicate-language": (lambda t: ["corpus", "info", w(t / "d.csv", "en,EN,zh\na,b,c\n")],
                                    r"columns 'en' and 'EN' are both language en"),
    "columns-language-twice": (lambda t: ["corpus", "info", w(t / "h.tsv", "a\tb\tc\n"), "--columns", "en,en,zh"],
                               r"bad --columns 'en,en,zh': en given twice"),
    "conllu-duplicate-sent-id": (lambda t: ["corpus", "info", w(t / "tb/en_pud-ud-test.conllu", conllu("Hi") + conllu("Ho"))],
                                 r"en_pud-ud-test\.conllu: sent_id 's1' appears twice"),
    "bundled-unknown": (lambda t: ["corpus", "info", "bundled:nope"], r"no bundled corpus 'nope'"),
    "csv-unbalanced-quote": (lambda t: ["corpus", "info", w(t / "q.csv", 'en,zh\nhello,"你好\nworld,世界\nfoo,bar\n')],
                             r"q\.csv:2: CSV: unexpected end of data"),
    "csv-short-row-after-multiline-field": (lambda t: ["corpus", "info", w(t / "m.csv", 'en,zh\n"a\nb",c\nd\n')],
                                            r"m\.csv:4: row has 1 fields, expected 2"),
    "ranks-duplicate-rank": (lambda t: ["compare", SAMPLE, "-t", "tiktoken:" + w(t / "d.tiktoken", open(ranks_file(t / "r.tiktoken")).read()
                                         + base64.b64encode(b"ab").decode() + " 5\n") + "?pattern=gpt2"],
                             r"d\.tiktoken: rank 5 is given to two tokens"),
    "ranks-missing-bytes": (lambda t: ["compare", SAMPLE, "-t", "tiktoken:" + w(t / "m.tiktoken", "\n".join(
        open(ranks_file(t / "r.tiktoken")).read().splitlines()[:200]) + "\n") + "?pattern=gpt2"],
                            r"m\.tiktoken: 56 of the 256 single-byte tokens are missing"),
    "ranks-bad-pattern-regex": (lambda t: ["compare", SAMPLE, "-t", f"tiktoken:{ranks_file(t / 'r.tiktoken')}?pattern=("],
                                r"r\.tiktoken: the split pattern is not a valid regex"),
    "jsonl-dotted-column-missing": (lambda t: ["corpus", "info", w(t / "n.jsonl", '{"tr": {"en": "a", "zh": "b"}}\n'),
                                                "--columns", "en=tr.de,zh=tr.zh"], r"n\.jsonl:1: no field 'tr\.de' for en"),
    "tsv-named-column-missing": (lambda t: ["corpus", "info", w(t / "t.tsv", "a\tb\nx\ty\n"), "--columns", "en=a,zh=c"],
                                 r"t\.tsv: no column 'c' for zh \(columns: a, b\)"),
    "columns-on-a-treebank": (lambda t: ["corpus", "info", w(t / "tb/en_pud-ud-test.conllu", conllu("Hi")), "--columns", "en"],
                              r"--columns does not apply to treebanks"),
    "columns-on-tmx": (lambda t: ["corpus", "info", w(t / "m.tmx", '<tmx><body><tu><tuv xml:lang="en"><seg>a</seg></tuv></tu></body></tmx>'),
                       "--columns", "en,zh"], r"--columns does not apply to TMX"),
    "parquet-invalid-utf8-string": (lambda t: ["corpus", "info", _bad_utf8_parquet(t / "b.parquet")],
                                    r"b\.parquet: invalid UTF-8 in a string column \(in the rows from 1\) \(byte 0xff\)"),
    "wordpiece-binary-vocab": (lambda t: ["compare", SAMPLE, "-t", "wordpiece:" + w(t / "v/vocab.txt", b"\xee\x00\xff" * 100)],
                               r"vocab\.txt: not a WordPiece vocab\.txt: invalid UTF-8"),
    "wordpiece-lowercase-maybe": (lambda t: ["compare", SAMPLE, "-t", "wordpiece:" + w(t / "v/vocab.txt", "[UNK]\n") + "?lowercase=maybe"],
                                  r"\?lowercase=maybe is not true or false"),
    "heldout-out-of-range": (lambda t: ["sweep", SAMPLE, "--heldout", "1.5"], r"held-out fraction 1\.5 is not in"),
}


def _parquet(p: Path, data: dict) -> str:
    p.parent.mkdir(parents=True, exist_ok=True)
    pl.DataFrame(data).write_parquet(p)
    return str(p)


def _truncated_parquet(p: Path) -> str:
    _parquet(p, {"en": ["a"] * 100, "zh": ["b"] * 100})
    p.write_bytes(p.read_bytes()[:-30])
    return str(p)


def test_every_corpus_command_takes_every_corpus_option():
    """One CLI layer: each command that reads a corpus accepts the same corpus options."""
    from tokstat.cli import cli

    wanted = {"--columns", "--split", "--encoding-errors", "--source-lang", "--languages"}
    commands = {"compare": cli.commands["compare"], "train": cli.commands["train"], "sweep": cli.commands["sweep"],
                "report": cli.commands["report"], "corpus info": cli.commands["corpus"].commands["info"]}
    for name, cmd in commands.items():
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
        assert wanted <= opts, (name, wanted - opts)


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_input_gives_one_line(name, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    build, pattern = CASES[name]
    argv = build(tmp_path)
    before = {p for p in tmp_path.rglob("*")}
    rc = main(argv)
    err = capsys.readouterr().err.strip()
    assert rc == 2, (rc, err)
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("tokstat: error: ") and "(fix: " in err, err
    assert re.search(pattern, err), err
    assert {p for p in tmp_path.rglob("*")} == before   # nothing written, no temporary file left


def test_unusual_but_valid_jsonl_loads_correctly(tmp_path):
    """A BOM on line 1 and a language key that first appears after line 1,000 both load, completely."""
    from tokstat import load_corpus

    p = tmp_path / "late.jsonl"
    rows = [json.dumps({"en": f"e{i}"}) for i in range(1500)] + [json.dumps({"en": "last", "zh": "最后"})]
    p.write_bytes(b"\xef\xbb\xbf" + ("\n".join(rows) + "\n").encode("utf-8"))
    c = load_corpus(p)
    assert c.languages == ["en", "zh"]
    segs = list(c)
    assert len(segs) == 1501 and segs[-1].texts == {"en": "last", "zh": "最后"} and segs[0].texts["zh"] == ""


def test_a_local_folder_named_like_the_bundled_corpus_wins(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    w(tmp_path / "sample" / "en.txt", "one\ntwo\n")
    w(tmp_path / "sample" / "zh.txt", "一\n二\n")
    assert main(["corpus", "info", "sample"]) == 0
    cap = capsys.readouterr()
    assert ": 2 segments" in cap.out and "not the bundled corpus" in cap.err
    assert main(["corpus", "info", "bundled:sample"]) == 0
    assert ": 400 segments" in capsys.readouterr().out
