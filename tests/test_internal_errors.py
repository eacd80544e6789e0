"""No ``tokstat: internal error`` on user input: each case below used to end in one (an IndexError,
a TypeError from the tokenizer library, an Arrow cast error, a ZeroDivisionError, a Rust panic, a
MemoryError). Each is now one error line naming the input and the fix, exit 2, nothing written."""

from __future__ import annotations

import json
import subprocess
import sys

import polars as pl
import pytest

from tokstat.cli import main

from tok_fixtures import tiny_files


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    return tiny_files(tmp_path_factory.mktemp("tok"))


def _cat_regex(t, tok) -> str:
    """A tokenizer.json whose pre-tokenizer regex backtracks without bound (onig's retry limit)."""
    d = json.loads(open(tok["hf"], encoding="utf-8").read())
    d["pre_tokenizer"] = {"type": "Split", "pattern": {"Regex": "(a+)+$"}, "behavior": "Isolated", "invert": False}
    (t / "cat.json").write_text(json.dumps(d), encoding="utf-8")
    return f"hf:{t / 'cat.json'}"


def _results(t, tok, **cols) -> str:
    from tokstat import compare

    df = compare("sample", [f"hf:{tok['hf']}"], n_boot=0, workers=1)
    df.with_columns(**{k: pl.lit(v) for k, v in cols.items()}).write_csv(t / "r.csv")
    return str(t / "r.csv")


CASES = {
    "segments-header-only": (lambda t, tok: ["worst", (t / "s.csv").write_text("tokenizer,language,segment,tokens,chars\n")
                                             and str(t / "s.csv")], r"the segments table has no rows"),
    "show-lone-surrogate": (lambda t, tok: ["show", "ab\ud800c", "-t", f"hf:{tok['hf']}"],
                            r"the text holds a lone surrogate at character 3 \(U\+D800\)"),
    "show-invalid-utf8-argument": (lambda t, tok: ["show", b"a\xffb".decode("utf-8", "surrogateescape"), "-t", f"hf:{tok['hf']}"],
                                   r"the text holds invalid UTF-8 at character 2 \(U\+DCFF\)"),
    "parquet-struct-id": (lambda t, tok: [pl.DataFrame({"id": [{"a": 1}], "en": ["a"], "zh": ["甲"]}).write_parquet(t / "c.parquet"),
                                          "corpus", "info", str(t / "c.parquet")][1:],
                          r"c\.parquet: the id column 'id' is of type struct<a: int64>, not text or integers"),
    "jsonl-object-id": (lambda t, tok: [(t / "c.jsonl").write_text('{"id": {"a": 1}, "en": "a", "zh": "b"}\n'),
                                        "compare", str(t / "c.jsonl"), "-t", f"hf:{tok['hf']}"][1:],
                        r"c\.jsonl:1: the id column 'id' holds a dict, not a text or an integer"),
    "cost-zero-tokens-per-char": (lambda t, tok: ["cost", "--results", _results(t, tok, tokens_per_char=0.0), "--model",
                                                  "llama2-7b", "--gpu", "h100-sxm"],
                                  r"r\.csv: tokens_per_char is 0\.0 for hf/hf on en: a rate of tokens must be above zero"),
    "report-zero-tokens-per-char": (lambda t, tok: ["report", _results(t, tok, tokens_per_char=0.0), "--out", str(t / "r.html")],
                                    r"r\.csv: tokens_per_char is 0\.0"),
    "report-negative-premium": (lambda t, tok: ["report", _results(t, tok, premium=-1.0), "--out", str(t / "r.html")],
                                r"r\.csv: premium is -1\.0"),
    "vocab-plan-zero-tokens-per-char": (lambda t, tok: [pl.DataFrame([{"vocab_size": v, "language": lang, "tokens_per_char": 0.0,
                                                                       "premium": 1.0} for v in (1000, 2000, 4000, 8000)
                                                                      for lang in ("en", "zh")]).write_csv(t / "sw.csv"),
                                                        "vocab-plan", "--sweep", str(t / "sw.csv"), "--model", "llama2-7b"][1:],
                                        r"sw\.csv: tokens_per_char is 0\.0"),
    "catastrophic-regex-show": (lambda t, tok: ["show", "a" * 5000 + "b", "-t", _cat_regex(t, tok)],
                                r"the tokenizer library failed inside hf/\S+ \(Onig: Regex search error: retry-limit-in-match over\)"),
    "catastrophic-regex-compare": (lambda t, tok: [(t / "c.tsv").write_text("en\tzh\n" + "a" * 30000 + "b\t甲\n"), "compare",
                                                   str(t / "c.tsv"), "-t", _cat_regex(t, tok), "--quiet"][1:],
                                   r"the tokenizer library failed inside hf/"),
    "models-file-invalid-utf8": (lambda t, tok: [(t / "m.toml").write_bytes(b"[x]\nname = '\xff'\n"), "model-info", "--model",
                                                 "x", "--models-file", str(t / "m.toml")][1:],
                                 r"m\.toml: invalid UTF-8 at byte"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_internal_error(name, tok, tmp_path, capsys, monkeypatch):
    import re

    monkeypatch.chdir(tmp_path)
    argv = CASES[name][0](tmp_path, tok)
    capsys.readouterr()
    rc = main(argv)
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "internal error" not in err and len(err.splitlines()) == 1, err
    assert re.search(CASES[name][1], err) and "(fix: " in err, err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.slow
def test_a_rust_panic_is_one_line_on_the_real_stderr(tok, tmp_path):
    """Through a real process (Rust writes its panic report to file descriptor 2 itself), with the
    backtrace switched on: stderr holds exactly tokstat's one line."""
    import os

    spec = _cat_regex(tmp_path, tok)
    (tmp_path / "c.tsv").write_text("en\tzh\n" + "a" * 30000 + "b\t甲\n")
    for workers in ("1", "2"):
        r = subprocess.run([sys.executable, "-m", "tokstat.cli", "compare", str(tmp_path / "c.tsv"), "-t", spec, "--quiet",
                            "--workers", workers], capture_output=True, text=True, env={**os.environ, "RUST_BACKTRACE": "1"})
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "failed inside hf/" in r.stderr, r.stderr


def test_out_of_memory_is_one_line(tmp_path, capsys, monkeypatch):
    """A MemoryError anywhere in a run (here: while counting) is one line saying what to do, exit 2."""
    import importlib

    cmp = importlib.import_module("tokstat.compare")

    def exhausted(*a, **k):
        raise MemoryError

    monkeypatch.setattr(cmp, "compare", exhausted)
    rc = main(["compare", "sample", "-t", "train:bpe:300", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.startswith("tokstat: error: out of memory") and len(err.splitlines()) == 1, err
