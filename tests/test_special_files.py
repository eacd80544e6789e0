"""Special files never hang a run or vanish: a FIFO, /dev/zero, a character device, a dangling
link or a link that loops, given as a corpus, a language file inside a folder, a shard, a tokenizer
file, a result table or a models file, is one error line naming it before a byte is read (exit 2),
for every command that takes that path. A run that would block is stopped by an alarm and fails."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import pytest

from tokstat.cli import main

from conftest import ROOT

SAMPLE = str(ROOT / "corpora/sample-zh-en/sample.tsv")

#: kind -> how to make it at a path, and what the error must say
SPECIAL = {
    "fifo": (lambda p: os.mkfifo(p), r"is a FIFO \(named pipe\), not a regular file"),
    "dev-zero": (lambda p: os.symlink("/dev/zero", p), r"is a character device, not a regular file"),
    "dev-null": (lambda p: os.symlink("/dev/null", p), r"is a character device, not a regular file"),
    "dangling": (lambda p: os.symlink(p.parent / "gone.txt", p), r"is a symbolic link to a file that does not exist"),
    "loop": (lambda p: os.symlink(p.name, p), r"is a symbolic link that loops"),
}


class Hung(Exception):
    pass


@pytest.fixture
def alarm():
    """Fail (instead of hanging the suite) if a run blocks on a special file for 20 s."""
    def ring(signum, frame):
        raise Hung("the run blocked on a special file")
    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _results(t: Path) -> Path:
    p = t / "r.csv"
    assert main(["compare", SAMPLE, "-t", "train:bpe:300", "--out", str(p), "--quiet"]) == 0
    return p


def _folder(t: Path, special, name: str = "zh.txt") -> Path:
    d = t / "d"
    d.mkdir()
    (d / "en.txt").write_text("Hello.\nGood.\n")
    special(d / name)
    return d


def _lang_folder(tmp, special):
    """Per-language folders of shards (FineWeb-2 style), one shard special."""
    import polars as pl

    d = tmp / "data" / "eng_Latn"
    d.mkdir(parents=True)
    pl.DataFrame({"text": ["Hello.", "Good."]}).write_parquet(d / "000.parquet")
    special(d / "001.parquet")
    return tmp / "data"


def _mono(tmp):
    """A small monolingual table (text + language)."""
    import polars as pl

    p = tmp / "docs.parquet"
    pl.DataFrame({"text": ["Hello.", "你好。"], "language": ["en", "zh"]}).write_parquet(p)
    return p


# command -> build(tmp, make_special) -> (argv, name of the special path)
COMMANDS = {
    "corpus-info": lambda t, mk: (["corpus", "info", str(t / "c.tsv")], mk(t / "c.tsv") or "c.tsv"),
    "compare": lambda t, mk: (["compare", str(t / "c.tsv"), "-t", "train:bpe:300"], mk(t / "c.tsv") or "c.tsv"),
    "compare-jsonl": lambda t, mk: (["compare", str(t / "c.jsonl"), "-t", "train:bpe:300"], mk(t / "c.jsonl") or "c.jsonl"),
    "compare-parquet": lambda t, mk: (["compare", str(t / "c.parquet"), "-t", "train:bpe:300"], mk(t / "c.parquet") or "c.parquet"),
    "compare-tmx": lambda t, mk: (["compare", str(t / "c.tmx"), "-t", "train:bpe:300"], mk(t / "c.tmx") or "c.tmx"),
    "compare-po": lambda t, mk: (["compare", str(t / "zh.po"), "-t", "train:bpe:300"], mk(t / "zh.po") or "zh.po"),
    "compare-conllu": lambda t, mk: (["compare", str(t / "en_pud-ud-test.conllu"), "-t", "train:bpe:300"],
                                     mk(t / "en_pud-ud-test.conllu") or "en_pud-ud-test.conllu"),
    "folder-language-file": lambda t, mk: (["compare", str(_folder(t, mk)), "-t", "train:bpe:300"], "zh.txt"),
    "folder-flores-file": lambda t, mk: (["corpus", "info", str(_folder(t, mk, "zho_Hans.dev"))], "zho_Hans.dev"),
    "folder-shard": lambda t, mk: (["compare", str(_folder(t, mk, "b.parquet")), "-t", "train:bpe:300"], "b.parquet"),
    "mono-lang-folder": lambda t, mk: (["budget", str(_lang_folder(t, mk)), "-t", "tiktoken:cl100k_base"], "001.parquet"),
    "mono-textdir": lambda t, mk: (["corpus", "info", str(_folder(t, mk)), "--kind", "monolingual"], "zh.txt"),
    "mono-budget-shard": lambda t, mk: (["budget", str(_folder(t, mk, "b.jsonl")), "-t", "tiktoken:cl100k_base"],
                                        "b.jsonl"),
    "calibrate": lambda t, mk: (["compare", str(_mono(t)), "-t", "tiktoken:cl100k_base", "--calibrate",
                                 str(t / "cal.tsv")], mk(t / "cal.tsv") or "cal.tsv"),
    "train": lambda t, mk: (["train", str(t / "c.tsv"), "--algo", "bpe", "--vocab-size", "300", "--out", str(t / "tok")],
                            mk(t / "c.tsv") or "c.tsv"),
    "sweep": lambda t, mk: (["sweep", str(t / "c.tsv"), "--sizes", "300,400"], mk(t / "c.tsv") or "c.tsv"),
    "robustness": lambda t, mk: (["robustness", str(t / "c.tsv"), "-t", "train:bpe:300"], mk(t / "c.tsv") or "c.tsv"),
    "report-corpus": lambda t, mk: (["report", "--corpus", str(t / "c.tsv"), "-t", "train:bpe:300", "--out", str(t / "r.html")],
                                    mk(t / "c.tsv") or "c.tsv"),
    "vocab-plan-corpus": lambda t, mk: (["vocab-plan", "--corpus", str(t / "c.tsv"), "--model", "llama2-7b"],
                                        mk(t / "c.tsv") or "c.tsv"),
    "tiktoken-file": lambda t, mk: (["show", "hi", "-t", f"tiktoken:{t / 'x.tiktoken'}?pattern=cl100k_base"],
                                    mk(t / "x.tiktoken") or "x.tiktoken"),
    "tekken-file": lambda t, mk: (["show", "hi", "-t", f"tiktoken:{t / 'tekken.json'}"], mk(t / "tekken.json") or "tekken.json"),
    "hf-file": lambda t, mk: (["show", "hi", "-t", f"hf:{t / 'tokenizer.json'}"], mk(t / "tokenizer.json") or "tokenizer.json"),
    "spm-file": lambda t, mk: (["compare", SAMPLE, "-t", f"spm:{t / 'tokenizer.model'}"], mk(t / "tokenizer.model") or "tokenizer.model"),
    "wordpiece-file": lambda t, mk: (["show", "hi", "-t", f"wordpiece:{t / 'vocab.txt'}"], mk(t / "vocab.txt") or "vocab.txt"),
    "cost-results": lambda t, mk: (["cost", "--results", str(t / "x.csv"), "--model", "llama2-7b", "--gpu", "h100-sxm"],
                                   mk(t / "x.csv") or "x.csv"),
    "report-results": lambda t, mk: (["report", str(t / "x.parquet"), "--out", str(t / "r.html")], mk(t / "x.parquet") or "x.parquet"),
    "worst-segments": lambda t, mk: (["worst", str(t / "x.parquet")], mk(t / "x.parquet") or "x.parquet"),
    "vocab-plan-sweep": lambda t, mk: (["vocab-plan", "--sweep", str(t / "x.csv"), "--model", "llama2-7b"], mk(t / "x.csv") or "x.csv"),
    "models-file": lambda t, mk: (["model-info", "--model", "mine", "--models-file", str(t / "m.toml")], mk(t / "m.toml") or "m.toml"),
}


@pytest.mark.parametrize("kind", sorted(SPECIAL))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_special_file_is_one_error_never_a_hang_or_an_absence(command, kind, tmp_path, capsys, monkeypatch, alarm):
    monkeypatch.chdir(tmp_path)
    make, msg = SPECIAL[kind]
    argv, name = COMMANDS[command](tmp_path, make)
    capsys.readouterr()
    rc = main(argv)
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "internal error" not in err, err
    assert re.search(re.escape(name) + r".*" + msg, err), err
    assert "(fix: " in err, err
