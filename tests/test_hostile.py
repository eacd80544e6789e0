"""Hostile input, through the command line: every corpus format, tokenizer kind, command and option.
Each case exits 2 with one line on stderr that names the file (and line where there is one), says
what is wrong and how to fix it; never a traceback; no file is created, and no file — input or an
earlier output, which several cases plant where the run would write — is changed (sha256 before and
after). The exit-0 cases at the end assert the data that unusual but valid input must give."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import polars as pl
import pytest

from tokstat.cli import main
from tokstat.io import write_tables

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


def hf_disk(p: Path, data: dict) -> str:
    """A ``datasets`` ``save_to_disk`` folder."""
    import datasets

    datasets.disable_progress_bar()
    datasets.Dataset.from_dict(data).save_to_disk(str(p))
    return str(p)


def damaged_arrow(p: Path) -> str:
    hf_disk(p, {"en": ["a"] * 50, "zh": ["b"] * 50})
    f = next(p.glob("*.arrow"))
    f.write_bytes(f.read_bytes()[:100])
    return str(p)


def mo_bad_offset(p: Path) -> str:
    """A .mo file whose one msgid points past the end of the file."""
    import struct

    return w(p, struct.pack("<7I", 0x950412DE, 0, 1, 28, 36, 0, 0) + struct.pack("<4I", 5, 9999, 1, 44) + b"ab")


def results_csv(p: Path) -> str:
    """A real compare result (to feed cost/report), computed once per session."""
    src = _RESULTS.get("csv")
    if src is None:
        from tokstat import compare

        _RESULTS["csv"] = src = compare(SAMPLE, [TOK], n_boot=0, workers=1).write_csv()
    return w(p, src)


_RESULTS: dict[str, str] = {}


def _clashing_results(t: Path) -> list[str]:
    """Two compare results of the sample with a ``train/bpe-1500`` each, trained on different splits
    (one id, two tokenizers)."""
    if "clash" not in _RESULTS:
        from tokstat import compare

        _RESULTS["clash"] = [compare(SAMPLE, [spec], n_boot=0, workers=1).write_csv()
                             for spec in ("train:bpe:1500", "train:bpe:1500?heldout=0.2")]
    return [w(t / "a.csv", _RESULTS["clash"][0]), w(t / "b.csv", _RESULTS["clash"][1])]


def _other_corpus_results(t: Path) -> str:
    """A compare result of another corpus (a small TSV of the project's own)."""
    if "other" not in _RESULTS:
        from tokstat import compare

        d = t / "other-corpus"
        d.mkdir()
        corpus = w(d / "pairs.tsv", "en\tzh\nGood morning.\t早上好。\nThank you.\t谢谢。\n")
        _RESULTS["other"] = compare(corpus, [TOK], n_boot=0, workers=1).write_csv()
        (d / "pairs.tsv").unlink()
        d.rmdir()
    return w(t / "other.csv", _RESULTS["other"])


def _segments_file(p: Path) -> str:
    """A compare --segments-out table of the bundled sample (computed once)."""
    if "segs" not in _RESULTS:
        from tokstat import compare

        _, segs = compare(SAMPLE, [TOK], n_boot=0, workers=1, return_segments=True)
        _RESULTS["segs"] = segs
    write_tables({p: _RESULTS["segs"]})
    return str(p)


def _sweep_file(p: Path, sizes: int = 4) -> str:
    """A small sweep-like table (vocab_size, language, tokens_per_char, premium)."""
    rows = [{"vocab_size": v, "language": lang, "tokens_per_char": 1.2 - 0.1 * k + (0.3 if lang == "zh" else 0),
             "premium": 1.0 if lang == "en" else 0.9} for k, v in enumerate([2000, 4000, 8000, 16000][:sizes])
            for lang in ("en", "zh")]
    write_tables({p: pl.DataFrame(rows)})
    return str(p)
EARLIER = "an earlier output\n"
COST = ["--model", "llama2-7b", "--gpu", "h100-sxm"]


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
    "heldout-out-of-range": (lambda t: ["sweep", SAMPLE, "--heldout", "1.5"], r"--heldout must be below 1, got 1\.5"),
    # --- every format, tokenizer kind and command (added with the input-fidelity issue)
    "tatoeba-invalid-utf8": (lambda t: ["corpus", "info", w(t / "cmn.txt", b"Hi.\t\xff\tCC-BY 2.0 (France) x\n")],
                             r"cmn\.txt:1: invalid UTF-8 at byte offset 4"),
    "hf-disk-missing-column": (lambda t: ["corpus", "info", hf_disk(t / "d", {"en": ["a"], "zh": ["b"]}), "--columns", "en=en,zh=nope"],
                               r"d: no column 'nope' for zh \(the rows have: en, zh\)"),
    "hf-disk-int-column": (lambda t: ["corpus", "info", hf_disk(t / "d", {"en": ["a"], "zh": [1]}), "--columns", "en=en,zh=zh"],
                           r"d: column 'zh' \(zh\) holds int values, not text \(row 1\)"),
    "hf-disk-struct-column": (lambda t: ["corpus", "info", hf_disk(t / "d", {"en": ["a"], "zh": [{"x": "b"}]}),
                                         "--columns", "en=en,zh=zh"], r"holds dict values, not text.*dotted names"),
    "hf-disk-damaged-arrow": (lambda t: ["corpus", "info", damaged_arrow(t / "d"), "--columns", "en=en,zh=zh"],
                              r"d: cannot read the saved dataset.*fix: save it again"),
    "hf-disk-no-columns": (lambda t: ["corpus", "info", hf_disk(t / "d", {"en": ["a"], "zh": ["b"]})],
                           r"say which column holds which language"),
    "hf-disk-language-twice": (lambda t: ["corpus", "info", hf_disk(t / "d", {"en": ["a"], "zh": ["b"]}), "--columns", "en=en,eng=zh"],
                               r"d: 'en' and 'eng' are both language en"),
    "hf-disk-unknown-split": (lambda t: ["corpus", "info", _hf_dict(t / "dd"), "--columns", "en=en,zh=zh", "--split", "test"],
                              r"dd: split 'test' not in \['train'\]"),
    "hf-hub-not-cached": (lambda t: ["corpus", "info", "hf:nobody/no-such-dataset", "--columns", "en=en,zh=zh"],
                          r"cannot load Hugging Face dataset 'nobody/no-such-dataset'.*fix:"),
    "hf-columns-not-pairs": (lambda t: ["corpus", "info", "hf:nobody/x", "--columns", "en,zh"],
                             r"for hf: corpora give columns as lang=COLUMN"),
    "mo-bad-offset": (lambda t: ["corpus", "info", mo_bad_offset(t / "zh.mo")],
                      r"zh\.mo: msgid 1 of 1 points at bytes 9999-10004, past the end of the file \(46 bytes\)"),
    "mo-bad-magic": (lambda t: ["corpus", "info", w(t / "zh.mo", b"\x00" * 40)], r"zh\.mo: not a compiled gettext catalogue"),
    "po-two-catalogues-one-language": (lambda t: [w(t / "p/zh.po", 'msgid "a"\nmsgstr "甲"\n'),
                                                  w(t / "p/zho_Hans.po", 'msgid "a"\nmsgstr "甲"\n'), "corpus", "info", str(t / "p")][2:],
                                       r"two catalogues for language zh: .*zh\.po and .*zho_Hans\.po"),
    "po-only-source-language": (lambda t: ["corpus", "info", w(t / "en.po", 'msgid ""\nmsgstr "Language: en\\n"\n\nmsgid "a"\nmsgstr "a"\n')],
                                r"en\.po: no translated catalogue found"),
    "po-unknown-language": (lambda t: ["corpus", "info", w(t / "xx_bogus1.po", 'msgid "a"\nmsgstr "b"\n')],
                            r"xx_bogus1\.po: unknown language code"),
    "tmx-invalid-utf8": (lambda t: ["corpus", "info", w(t / "c.tmx", b'<tmx><body><tu><tuv xml:lang="en"><seg>\xff</seg></tuv></tu></body></tmx>')],
                         r"c\.tmx:1: invalid UTF-8 at byte offset 39"),
    "tmx-two-tuvs-one-language": (lambda t: ["corpus", "info", w(t / "c.tmx", '<tmx><body><tu tuid="7"><tuv xml:lang="en"><seg>a</seg></tuv>'
                                                                      '<tuv xml:lang="EN"><seg>b</seg></tuv></tu></body></tmx>')],
                                  r"c\.tmx:\d+: two <tuv>s of language en in one <tu> \(tu 7\)"),
    "tmx-unknown-language": (lambda t: ["corpus", "info", w(t / "c.tmx", '<tmx><body><tu><tuv xml:lang="qqqqq1"><seg>a</seg>'
                                                                      '</tuv></tu></body></tmx>')],
                             r"c\.tmx:\d+: unknown language code 'qqqqq1'"),
    "tmx-external-entity": (lambda t: ["corpus", "info", w(t / "x.tmx", '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM '
                                                        '"file:///etc/passwd">]><tmx><body><tu><tuv xml:lang="en"><seg>&x;</seg>'
                                                        '</tuv></tu></body></tmx>')], r"x\.tmx:1: malformed TMX: undefined entity &x;"),
    "textdir-unknown-language": (lambda t: [w(t / "d/en.txt", "a\n"), w(t / "d/zzzzzz.txt", "b\n"), "corpus", "info", str(t / "d")][2:],
                                 r"zzzzzz\.txt: unknown language code 'zzzzzz'"),
    "textdir-invalid-utf8-second-file": (lambda t: [w(t / "d/en.txt", "a\nb\n"), w(t / "d/zh.txt", b"x\n\xc3\n"), "corpus", "info",
                                                    str(t / "d")][2:], r"zh\.txt:2: invalid UTF-8 at byte offset 2"),
    "textdir-cr-only": (lambda t: [w(t / "d/en.txt", "a\rb\r"), w(t / "d/zh.txt", "x\ny\n"), "corpus", "info", str(t / "d")][2:],
                        r"en\.txt:1: a carriage return inside the only line"),
    "textdir-utf16": (lambda t: [w(t / "d/en.txt", "a\nb\n"), w(t / "d/zh.txt", "甲\n乙\n".encode("utf-16")), "corpus", "info",
                                 str(t / "d")][2:], r"zh\.txt: the file is UTF-16"),
    "tsv-quoting-csv-unclosed": (lambda t: ["corpus", "info", w(t / "q.tsv", 'en\tzh\n"a\tb\n'), "--quoting", "csv"],
                                 r"q\.tsv:2: quoted TSV: unexpected end of data.*--quoting none reads quotes as text"),
    "quoting-on-jsonl": (lambda t: ["corpus", "info", w(t / "c.jsonl", '{"en":"a","zh":"b"}\n'), "--quoting", "csv"],
                         r"--quoting csv applies to TSV files only"),
    "quoting-none-on-csv": (lambda t: ["corpus", "info", w(t / "c.csv", "en,zh\na,b\n"), "--quoting", "none"],
                            r"--quoting none applies to TSV files only"),
    "split-on-a-tsv": (lambda t: ["corpus", "info", SAMPLE, "--split", "test"], r"--split applies to Hugging Face datasets"),
    "split-on-bundled": (lambda t: ["compare", "sample", "-t", TOK, "--split", "test"], r"--split applies to Hugging Face datasets"),
    "jsonl-list-not-text": (lambda t: ["corpus", "info", w(t / "c.jsonl", '{"en":["a"],"zh":"b"}\n')],
                            r"c\.jsonl:1: expected text, found list"),
    "jsonl-bool-id-language-missing": (lambda t: ["corpus", "info", w(t / "c.jsonl", '{"id": true, "text": "a"}\n')],
                                       r"c\.jsonl: no column is named by a language code"),
    "parquet-int-column": (lambda t: ["corpus", "info", _parquet(t / "i.parquet", {"en": ["a"], "zh": [1]})],
                           r"i\.parquet: expected text, found int"),
    "shard-malformed-second": (lambda t: [w(t / "s/a.jsonl", '{"en":"a","zh":"b"}\n'), w(t / "s/b.jsonl", '{"en":"a",\n'),
                                          "corpus", "info", str(t / "s")][2:], r"b\.jsonl:1: malformed JSON"),
    "shards-all-empty": (lambda t: [w(t / "s/a.jsonl", ""), w(t / "s/b.jsonl", "\n"), "corpus", "info", str(t / "s")][2:],
                         r"a\.jsonl: all 2 shards are empty"),
    "manifest-hub-offline": (lambda t: ["corpus", "info", "news-commentary"],
                             r"news-commentary\.toml: cannot load Hugging Face dataset.*\[manifest news-commentary\.toml\].*download"),
    # --- text too long to count
    "max-chars-exceeded": (lambda t: ["compare", w(t / "l.tsv", "en\tzh\n" + "a" * 200 + "\tb\n"), "-t", TOK, "--max-chars", "100"],
                           r"l\.tsv: segment 1 \(en\) has 200 characters, over the limit of 100.*--max-chars 200"),
    "max-chars-joined": (lambda t: ["compare", SAMPLE, "-t", TOK, "--join", "--max-chars", "1000"],
                         r"the joined en text has [\d,]+ characters.*drop --join"),
    "max-chars-zero": (lambda t: ["compare", SAMPLE, "-t", TOK, "--max-chars", "0"], r"--max-chars must be at least 1"),
    "sweep-max-chars": (lambda t: ["sweep", SAMPLE, "--sizes", "300", "--max-chars", "10"], r"over the limit of 10 per text"),
    # --- tokenizer kinds and their options
    "tiktoken-pattern-on-named-encoding": (lambda t: ["compare", SAMPLE, "-t", "tiktoken:cl100k_base?pattern=nope"],
                                           r"\?pattern= is for ranks files"),
    "tiktoken-unknown-option": (lambda t: ["compare", SAMPLE, "-t", "tiktoken:cl100k_base?lowercase=true"],
                                r"tiktoken: specs take no option lowercase"),
    "option-given-twice": (lambda t: ["compare", SAMPLE, "-t", "tiktoken:cl100k_base?sha256=22&sha256=33"],
                           r"option 'sha256' given twice"),
    "spm-unknown-option": (lambda t: ["compare", SAMPLE, "-t", "spm:x.model?lowercase=1"], r"spm: specs take no option lowercase"),
    "hf-unknown-model-type": (lambda t: ["compare", SAMPLE, "-t", "hf:" + w(t / "tokenizer.json", json.dumps(
        {"version": "1.0", "model": {"type": "Magic"}}))], r"tokenizer\.json: not a valid tokenizer\.json"),
    "hf-hub-tokenizer-not-cached": (lambda t: ["compare", SAMPLE, "-t", "hf:nobody/no-such-model"], r"no-such-model.*fix:"),
    "wordpiece-empty-vocab": (lambda t: ["compare", SAMPLE, "-t", "wordpiece:" + w(t / "v/vocab.txt", "")],
                              r"vocab\.txt: not a WordPiece vocab\.txt"),
    "train-size-zero": (lambda t: ["compare", SAMPLE, "-t", "train:bpe:0"], r"bad training spec train:bpe:0"),
    "train-seed-not-int": (lambda t: ["compare", SAMPLE, "-t", "train:bpe:300?seed=abc"], r"bad \?heldout= or \?seed="),
    "train-unknown-option": (lambda t: ["compare", SAMPLE, "-t", "train:bpe:300?colour=red"], r"unknown option\(s\) colour"),
    # --- train, sweep
    "train-vocab-size-zero": (lambda t: ["train", SAMPLE, "--algo", "bpe", "--vocab-size", "0", "--out", str(t / "o")],
                              r"--vocab-size must be at least 2, got 0"),
    "train-mix-unknown-language": (lambda t: ["train", SAMPLE, "--algo", "bpe", "--vocab-size", "300", "--mix", "fr=0.5,en=0.5",
                                              "--out", str(t / "o")], r"--mix names languages without training text: fr"),
    "train-heldout-zero": (lambda t: ["train", SAMPLE, "--algo", "bpe", "--vocab-size", "300", "--heldout", "0",
                                      "--out", str(t / "o")], r"--heldout must be a finite positive number, got 0"),
    "train-out-is-a-file": (lambda t: ["train", SAMPLE, "--algo", "bpe", "--vocab-size", "300", "--out", w(t / "o", EARLIER)],
                            r"o.*(not a folder|is a file)"),
    "sweep-size-zero": (lambda t: ["sweep", SAMPLE, "--sizes", "0,300"], r"bad --sizes '0,300': 0 is not positive"),
    "sweep-sizes-empty": (lambda t: ["sweep", SAMPLE, "--sizes", ""], r"no vocabulary sizes in --sizes"),
    "sweep-plot-wrong-suffix": (lambda t: ["sweep", SAMPLE, "--sizes", "300", "--plot", str(t / "p.jpg")],
                                r"p\.jpg: --plot must end in \.png"),
    "sweep-out-is-the-corpus": (lambda t: ["sweep", w(t / "c.csv", "en,zh\na,b\n"), "--sizes", "300", "--out", str(t / "c.csv")],
                                r"c\.csv: --out is an input of this run"),
    # --- cost, model-info, report
    "cost-results-missing": (lambda t: ["cost", "--results", str(t / "none.csv"), *COST, "--train-tokens", "1e12"],
                             r"none\.csv: result file not found"),
    "cost-results-not-compare": (lambda t: ["cost", "--results", w(t / "r.csv", "a,b\n1,2\n"), *COST, "--train-tokens", "1e12"],
                                 r"results lack columns"),
    "cost-price-nan": (lambda t: ["cost", "--results", results_csv(t / "r.csv"), *COST, "--train-tokens", "1e12", "--price", "nan"],
                       r"--price must be a finite positive number, got nan"),
    "cost-price-negative": (lambda t: ["cost", "--results", results_csv(t / "r.csv"), *COST, "--train-tokens", "1e12", "--price", "-2"],
                            r"--price must be a finite positive number, got -2"),
    "cost-train-chars-inf": (lambda t: ["cost", "--results", results_csv(t / "r.csv"), *COST, "--train-chars", "inf"],
                             r"train.chars.*(finite|inf)"),
    "cost-both-amounts": (lambda t: ["cost", "--results", results_csv(t / "r.csv"), *COST, "--train-chars", "1e9", "--train-tokens", "1e9"],
                          r"--train-chars and --train-tokens both say how much text is trained on"),
    "cost-mfu-over-one": (lambda t: ["cost", "--results", results_csv(t / "r.csv"), *COST, "--train-tokens", "1e12", "--mfu", "1.5"],
                          r"--mfu must be at most 1, got 1\.5"),
    "cost-gpus-zero": (lambda t: ["cost", "--results", results_csv(t / "r.csv"), *COST, "--train-tokens", "1e12", "--gpus", "0"],
                       r"--gpus must be at least 1, got 0"),
    "cost-mix-negative": (lambda t: ["cost", "--results", results_csv(t / "r.csv"), *COST, "--train-tokens", "1e12", "--mix", "zh=-1,en=2"],
                          r"bad --mix 'zh=-1,en=2': weight -1"),
    "cost-out-is-results": (lambda t: ["cost", "--results", results_csv(t / "r.csv"), *COST, "--train-tokens", "1e12",
                                       "--out", str(t / "r.csv")], r"r\.csv: --out is an input of this run"),
    "cost-earlier-out-kept": (lambda t: ["cost", "--results", results_csv(t / "r.csv"), *COST, "--train-tokens", "1e12",
                                         "--mfu", "0", "--out", w(t / "old.csv", EARLIER)], r"--mfu must be a finite positive number, got 0"),
    "model-info-layers-zero": (lambda t: ["model-info", "--model", "llama2-7b", "--layers", "0"], r"--layers must be at least 1, got 0"),
    "model-info-bad-toml": (lambda t: ["model-info", "--model", "x", "--models-file", w(t / "m.toml", "[x\nd_model=")],
                            r"m\.toml: cannot read model presets"),
    "model-info-models-file-missing": (lambda t: ["model-info", "--model", "x", "--models-file", str(t / "none.toml")],
                                       r"none\.toml: models file not found"),
    "report-nothing": (lambda t: ["report", "--out", str(t / "r.html")], r"no result files given"),
    "report-results-not-a-table": (lambda t: ["report", w(t / "x.csv", "a,b\n1,2\n"), "--out", str(t / "r.html")],
                                   r"x\.csv: not a tokstat compare, sweep, cost, budget, extend, inventory, overlap or segments result"),
    "report-one-id-two-tokenizers": (lambda t: ["report", *_clashing_results(t), "--out", w(t / "r.html", EARLIER)],
                                     r"two different tokenizers are both called 'train/bpe-1500'.*a\.csv.*b\.csv"),
    "report-segments-beside-two-corpora": (lambda t: ["report", results_csv(t / "r.csv"), _other_corpus_results(t),
                                                      _segments_file(t / "s.parquet"), "--out", str(t / "r.html")],
                                           r"the segments table carries no signature.*2 corpora"),
    "report-bad-mix": (lambda t: ["report", results_csv(t / "r.csv"), "--mix", "zh=abc", "--out", str(t / "r.html")],
                       r"bad --mix 'zh=abc'"),
    "report-mix-language-absent": (lambda t: ["report", results_csv(t / "r.csv"), "--mix", "fr=1", "--out",
                                              str(t / "r.html")], r"--mix names languages not in the results: fr"),
    "report-unknown-model": (lambda t: ["report", results_csv(t / "r.csv"), "--model", "nope", "--out",
                                        str(t / "r.html")], r"unknown model preset 'nope'"),
    "report-out-wrong-suffix": (lambda t: ["report", "--corpus", SAMPLE, "-t", TOK, "--out", str(t / "r.pdf")],
                                r"r\.pdf: --out must end in \.html"),
    "report-results-and-corpus": (lambda t: ["report", results_csv(t / "r.csv"), "--corpus", SAMPLE, "-t", TOK, "--out", str(t / "r.html")],
                                  r"pass result files or --corpus, not both"),
    "report-earlier-html-kept": (lambda t: ["report", "--corpus", SAMPLE, "-t", "magic:x", "--out", w(t / "r.html", EARLIER)],
                                 r"unknown tokenizer kind 'magic'"),
    "compare-earlier-outputs-kept": (lambda t: ["compare", SAMPLE, "-t", TOK, "--pivot", "fr", "--out", w(t / "o.csv", EARLIER),
                                                "--segments-out", w(t / "s.parquet", EARLIER)], r"pivot language 'fr'"),
    # --- vocab-plan
    "vocab-plan-no-model": (lambda t: ["vocab-plan", "--sweep", _sweep_file(t / "sw.parquet")],
                            r"say which model the vocabulary is for"),
    "vocab-plan-sweep-and-corpus": (lambda t: ["vocab-plan", "--sweep", _sweep_file(t / "sw.parquet"), "--corpus", SAMPLE,
                                               "--model", "llama2-7b"], r"pass --sweep or --corpus, not both"),
    "vocab-plan-not-a-sweep": (lambda t: ["vocab-plan", "--sweep", w(t / "x.csv", "a,b\n1,2\n"), "--model", "llama2-7b"],
                               r"the sweep lacks columns"),
    "vocab-plan-sweep-missing": (lambda t: ["vocab-plan", "--sweep", str(t / "none.parquet"), "--model", "llama2-7b"],
                                 r"none\.parquet.*not found"),
    "vocab-plan-mix-unknown-language": (lambda t: ["vocab-plan", "--sweep", _sweep_file(t / "sw.parquet"), "--model",
                                                   "llama2-7b", "--mix", "fr=0.5,en=0.5"], r"--mix names languages not in the sweep: fr"),
    "vocab-plan-two-sizes": (lambda t: ["vocab-plan", "--sweep", _sweep_file(t / "sw.parquet", sizes=2), "--model", "llama2-7b"],
                             r"needs at least 4 distinct vocabulary sizes"),
    "vocab-plan-three-sizes": (lambda t: ["vocab-plan", "--sweep", _sweep_file(t / "sw.parquet", sizes=3), "--model",
                                          "llama2-7b"], r"needs at least 4 distinct vocabulary sizes.*got \[\d+, \d+, \d+\]"),
    "vocab-plan-token-mix": (lambda t: ["vocab-plan", "--sweep", _sweep_file(t / "sw.parquet"), "--model", "llama2-7b",
                                        "--mix", "en=0.5,zh=0.5", "--mix-unit", "tokens"],
                             r"a mix in tokens cannot choose a vocabulary"),
    "train-token-mix": (lambda t: ["train", "sample", "--algo", "bpe", "--vocab-size", "500", "--mix", "en=0.5,zh=0.5",
                                   "--mix-unit", "tokens", "--out", str(t / "tok")], r"a mix in tokens cannot steer training"),
    "cost-mix-bad-unit": (lambda t: ["cost", "--results", _sweep_file(t / "sw.parquet"), "--model", "llama2-7b", "--gpu",
                                     "h100-sxm", "--mix", "en=0.5,zh=0.5", "--mix-unit", "words"],
                          r"Invalid value for '--mix-unit'|mix-unit"),
    "vocab-plan-png-suffix": (lambda t: ["vocab-plan", "--sweep", _sweep_file(t / "sw.parquet"), "--model", "llama2-7b",
                                         "--png", str(t / "p.svg")], r"p\.svg: --png must end in \.png"),
    "vocab-plan-serve-without-model": (lambda t: ["vocab-plan", "--sweep", _sweep_file(t / "sw.parquet"), "--non-vocab-params",
                                                  "6e9", "--d-model", "4096", "--serve-chars", "1e12"],
                                       r"--serve-chars needs --model"),
    "vocab-plan-negative-params": (lambda t: ["vocab-plan", "--sweep", _sweep_file(t / "sw.parquet"), "--non-vocab-params",
                                              "-1", "--d-model", "4096"], r"--non-vocab-params must be a finite number in \[1e\+06, 1e\+13\]"),
    "vocab-plan-serve-chars-nan": (lambda t: ["vocab-plan", "--sweep", _sweep_file(t / "sw.parquet"), "--model", "llama2-7b",
                                              "--serve-chars", "nan"], r"--serve-chars must be a finite positive number"),
    "vocab-plan-out-without-sweep": (lambda t: ["vocab-plan", "--model", "llama2-7b", "--out", str(t / "p.csv")],
                                     r"--out writes the per-size table of a sweep: there is none"),
    "vocab-plan-out-is-the-sweep": (lambda t: ["vocab-plan", "--sweep", _sweep_file(t / "sw.csv"), "--model", "llama2-7b",
                                               "--out", str(t / "sw.csv")], r"sw\.csv: --out is an input of this run"),
    # --- show, worst, robustness
    "show-empty-text": (lambda t: ["show", "", "-t", TOK], r"nothing to show: the text is empty"),
    "show-bad-tokenizer": (lambda t: ["show", "hi", "-t", "magic:x"], r"unknown tokenizer kind 'magic'"),
    "show-html-suffix": (lambda t: ["show", "hi", "-t", TOK, "--html", str(t / "v.txt")], r"v\.txt: --html must end in \.html"),
    "worst-not-segments": (lambda t: ["worst", results_csv(t / "r.csv")], r"not a compare --segments-out table"),
    "worst-missing-file": (lambda t: ["worst", str(t / "none.parquet")], r"none\.parquet.*not found"),
    "worst-n-zero": (lambda t: ["worst", _segments_file(t / "s.parquet"), "-n", "0"], r"-n must be at least 1"),
    "worst-unknown-language": (lambda t: ["worst", _segments_file(t / "s.parquet"), "--language", "fr"],
                               r"language 'fr' is not in the table"),
    "worst-out-is-input": (lambda t: ["worst", _segments_file(t / "s.csv"), "--out", str(t / "s.csv")],
                           r"s\.csv: --out is an input of this run"),
    "segments-text-without-segments-out": (lambda t: ["compare", SAMPLE, "-t", TOK, "--segments-text"],
                                           r"--segments-text needs --segments-out"),
    "robustness-no-such-corpus": (lambda t: ["robustness", str(t / "none.tsv"), "-t", TOK], r"no corpus"),
    "robustness-bad-tokenizer": (lambda t: ["robustness", SAMPLE, "-t", "magic:x"], r"unknown tokenizer kind 'magic'"),
    "normalize-unknown": (lambda t: ["corpus", "info", SAMPLE, "--normalize", "nfd"], r"Invalid value for '--normalize'"),
    # --- impossible or meaningless numbers
    "cost-tp-not-dividing-heads": (lambda t: ["cost", "--results", results_csv(t / "r.csv"), *COST, "--gpus", "6", "--tp", "6"],
                                   r"--tp 6 does not divide llama2-7b's 32 attention heads \(fix: use --tp 1, 2, 4, 8, 16 or 32\)"),
    "cost-pp-beyond-layers": (lambda t: ["cost", "--results", results_csv(t / "r.csv"), *COST, "--gpus", "64", "--pp", "64"],
                              r"--pp 64 is more pipeline stages than llama2-7b's 32 layers"),
    "vocab-plan-max-premium-nan": (lambda t: ["vocab-plan", "--sweep", _sweep_file(t / "sw.parquet"), "--model", "llama2-7b",
                                              "--max-premium", "nan"], r"--max-premium must be a finite number of at least 1"),
    "vocab-plan-max-premium-below-parity": (lambda t: ["vocab-plan", "--model", "llama2-7b", "--max-premium", "0.5"],
                                            r"--max-premium must be a finite number of at least 1"),
    "vocab-plan-flops-negative": (lambda t: ["vocab-plan", "--model", "llama2-7b", "--flops", "-1"],
                                  r"--flops must be a finite training budget"),
    "vocab-plan-flops-inf": (lambda t: ["vocab-plan", "--model", "llama2-7b", "--flops", "inf"],
                             r"--flops must be a finite training budget"),
    "vocab-plan-huge-params": (lambda t: ["vocab-plan", "--non-vocab-params", "1e300", "--d-model", "4096"],
                               r"--non-vocab-params must be a finite number in \[1e\+06, 1e\+13\]"),
    "vocab-plan-corpus-huge-params": (lambda t: ["vocab-plan", "--corpus", SAMPLE, "--non-vocab-params", "1e300", "--d-model",
                                                 "4096"], r"--non-vocab-params must be a finite number"),
    "vocab-plan-two-corpora": (lambda t: ["vocab-plan", "--sweep", _two_corpora_sweep(t / "sw.csv"), "--model", "llama2-7b"],
                               r"sw\.csv: the rows are of 2 corpora \(a@11111111, b@22222222\): they are not one study"),
    "robustness-negative-max-segments": (lambda t: ["robustness", SAMPLE, "-t", TOK, "--max-segments", "-1"],
                                         r"--max-segments must be at least 1, got -1"),
    "robustness-zero-max-segments": (lambda t: ["robustness", SAMPLE, "-t", TOK, "--max-segments", "0"],
                                     r"--max-segments must be at least 1"),
}


def _two_corpora_sweep(p: Path) -> str:
    """A sweep table joining two corpora (two sweeps stacked): their signatures say so."""
    _sweep_file(p)
    df = pl.read_csv(p)
    a = df.with_columns(pl.lit("corpus:a@11111111|tok:train/bpe@x|tokstat:0.1.0").alias("signature"))
    b = df.with_columns(pl.lit("corpus:b@22222222|tok:train/bpe@y|tokstat:0.1.0").alias("signature"),
                        pl.col("tokens_per_char") * 1.1)
    write_tables({p: pl.concat([a, b])})
    return str(p)


def _hf_dict(p: Path) -> str:
    import datasets
    from datasets import Dataset, DatasetDict

    datasets.disable_progress_bar()
    DatasetDict({"train": Dataset.from_dict({"en": ["a"], "zh": ["b"]})}).save_to_disk(str(p))
    return str(p)


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


def _snapshot(root: Path) -> dict[str, str | None]:
    """Every path under ``root`` with its content's sha256 (None for a folder)."""
    import hashlib

    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None)
            for p in sorted(root.rglob("*"))}


def test_there_are_enough_cases_across_formats_kinds_and_commands():
    """The issue's floor: at least 80 cases, touching every command and every tokenizer kind."""
    assert len(CASES) >= 80
    src = Path(__file__).read_text(encoding="utf-8")
    for word in ('"corpus", "info"', '"compare"', '"train"', '"sweep"', '"cost"', '"model-info"', '"report"', '"vocab-plan"',
                 '"show"', '"worst"', '"robustness"',
                 "tiktoken:", "hf:", "wordpiece:", "spm:", "train:", ".tsv", ".csv", "cmn.txt", ".jsonl", ".parquet",
                 ".tmx", ".conllu", ".po", ".mo", "hf_disk", "d/en.txt", "s/a."):
        assert src.count(word) >= 2, word


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_input_gives_one_line(name, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    build, pattern = CASES[name]
    argv = build(tmp_path)
    before = _snapshot(tmp_path)
    capsys.readouterr()   # what building the case printed
    rc = main(argv)
    err = capsys.readouterr().err.strip()
    assert rc == 2, (rc, err)
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("tokstat: error: ") and "(fix: " in err, err
    assert re.search(pattern, err), err
    assert _snapshot(tmp_path) == before   # nothing created, changed or left behind


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


# ---------------------------------------------------------------- unusual but valid: the right data

def test_spreadsheet_tsv_is_unquoted_and_tatoeba_style_quotes_stay_text(tmp_path):
    """A TSV from a spreadsheet writer (``"Look," she said.`` written as ``\"\"\"Look,\"\" she said.\"``)
    loads the sentence, not 4 extra characters; literal quotes in a plain TSV stay as they are."""
    import csv
    import io

    from tokstat import load_corpus

    buf = io.StringIO(newline="")
    csv.writer(buf, delimiter="\t", lineterminator="\n").writerows([["en", "zh"], ['"Look," she said.', "“看，”她说。"],
                                                                    ["tab\there", "制表"]])
    q = load_corpus(w(tmp_path / "q.tsv", buf.getvalue()))
    assert [s.texts["en"] for s in q] == ['"Look," she said.', "tab\there"] and q.meta["quoting"] == "csv"
    lit = load_corpus(w(tmp_path / "l.tsv", 'en\tzh\n"Look," she said.\t看\n"More?" "No."\t不\n'))
    assert [s.texts["en"] for s in lit] == ['"Look," she said.', '"More?" "No."'] and lit.meta["quoting"] == "none"
    forced = load_corpus(w(tmp_path / "f.tsv", 'en\tzh\n"Hi."\t"嗨"\n'), quoting="csv")
    assert [s.texts for s in forced] == [{"en": "Hi.", "zh": "嗨"}]


def test_same_pairs_in_two_formats_share_the_signature(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    w(tmp_path / "c.tsv", "id\ten\tzh\n1\thello\t你好\n2\tbye\t再见\n")
    w(tmp_path / "c.jsonl", '{"id": "1", "en": "hello", "zh": "你好"}\n{"id": "2", "en": "bye", "zh": "再见"}\n')
    sigs = []
    for f in ("c.tsv", "c.jsonl"):
        assert main(["compare", f, "-t", TOK, "--quiet", "--signatures"]) == 0
        sigs.append(re.findall(r"corpus:\w+@([0-9a-f]{8})", capsys.readouterr().out))
    assert sigs[0] and sigs[0] == sigs[1]


def test_a_tokenizer_trained_on_tsv_is_scored_held_out_on_the_same_pairs_in_jsonl(tmp_path, monkeypatch, capsys):
    """The fingerprint is the content: the corpus saved as JSONL is the corpus it was trained on."""
    import polars as pl

    from tokstat import load_corpus

    monkeypatch.chdir(tmp_path)
    src = load_corpus(SAMPLE)
    pl.DataFrame([{"id": s.id, **s.texts} for s in src]).write_ndjson(tmp_path / "same.jsonl")
    assert main(["train", SAMPLE, "--algo", "bpe", "--vocab-size", "400", "--out", "tok", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", "same.jsonl", "-t", "hf:tok/tokenizer.json", "--quiet", "--out", "r.csv"]) == 0
    err = capsys.readouterr().err
    assert "trained on" not in err
    held = sum(1 for s in src if __import__("tokstat.split", fromlist=["x"]).Split().is_heldout(s.id))
    assert pl.read_csv("r.csv")["segments"].to_list() == [held, held]


def test_gettext_script_variants_and_regional_english_are_their_own_languages(tmp_path):
    from tokstat import load_corpus

    for loc, text in (("sr", "здраво"), ("sr@latin", "zdravo"), ("en_GB", "colour")):
        w(tmp_path / "p" / f"{loc}.po", f'msgid ""\nmsgstr "Language: {loc}\\n"\n\nmsgid "hello"\nmsgstr "{text}"\n')
    c = load_corpus(tmp_path / "p")
    assert sorted(c.languages) == ["en", "en-GB", "sr", "sr-Latn"]
    (seg,) = list(c)
    assert seg.texts == {"en": "hello", "en-GB": "colour", "sr": "здраво", "sr-Latn": "zdravo"}


def test_cr_inside_lines_is_text_and_an_empty_shard_is_no_loss(tmp_path):
    from tokstat import load_corpus

    w(tmp_path / "d/en.txt", "a\rb\nc\n")
    w(tmp_path / "d/zh.txt", "甲\n乙\r\n")
    assert [s.texts for s in load_corpus(tmp_path / "d")] == [{"en": "a\rb", "zh": "甲"}, {"en": "c", "zh": "乙"}]
    w(tmp_path / "s/a.jsonl", "")
    w(tmp_path / "s/b.jsonl", '{"en": "x", "zh": "乙"}\n')
    assert [s.texts for s in load_corpus(tmp_path / "s")] == [{"en": "x", "zh": "乙"}]
