"""Outputs: every path checked before work starts; several outputs written as one unit."""

from __future__ import annotations

import os

import polars as pl
import pytest

from tokstat import TokstatError
from tokstat.cli import main
from tokstat.io import check_outputs, write_tables


@pytest.mark.parametrize("outputs, inputs, msg", [
    ({"--out": ("r.xlsx", "table")}, [], r"--out must end in \.parquet, \.csv or \.json"),
    ({"--out": ("r.html", "table")}, [], "must end in"),
    ({"--out": ("r.csv", "html")}, [], r"must end in \.html or \.htm"),
    ({"--out": ("d.csv", "table")}, [], "is a folder"),
    ({"--out": ("f.txt/r.csv", "table")}, [], "not a writable folder"),
    ({"--out": ("a.csv", "table"), "--segments-out": ("a.csv", "table")}, [], "are the same file"),
    ({"--out": ("a.csv", "table"), "--segments-out": ("./sub/../a.csv", "table")}, [], "are the same file"),
    ({"--out": ("a.csv", "table"), "--segments-out": ("link.csv", "table")}, [], "are the same file"),
    ({"--out": ("in.csv", "table")}, ["in.csv"], "is an input of this run"),
    ({"--out": ("alias.csv", "table")}, ["in.csv"], "is an input of this run"),
    ({"--out": ("f.txt", "folder")}, [], "is a file, not a folder"),
])
def test_bad_outputs_are_refused_before_work(tmp_path, monkeypatch, outputs, inputs, msg):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "f.txt").write_text("x")
    (tmp_path / "a.csv").write_text("old")
    (tmp_path / "in.csv").write_text("en,zh\na,b\n")
    os.symlink(tmp_path / "a.csv", tmp_path / "link.csv")
    os.symlink(tmp_path / "in.csv", tmp_path / "alias.csv")
    with pytest.raises(TokstatError, match=msg):
        check_outputs(outputs, inputs=inputs)


def test_good_outputs_pass_and_nothing_is_created(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    got = check_outputs({"--out": ("new/deeper/r.parquet", "table"), "--png": ("charts", "folder"),
                         "--segments-out": (None, "table")})
    assert set(got) == {"--out", "--png"}
    assert list(tmp_path.iterdir()) == []     # checking writes nothing (its probe file is removed)


def test_tables_are_written_as_one_unit(tmp_path):
    """The second table cannot be written (nested data in CSV): the first is not replaced either."""
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("old a\n")
    good = pl.DataFrame({"x": [1, 2]})
    bad = pl.DataFrame({"x": [[1, 2]]})
    with pytest.raises(Exception):
        write_tables({a: good, b: bad})
    assert a.read_text() == "old a\n" and not b.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv"]     # no temporary file left
    write_tables({a: good, b: good})
    assert pl.read_csv(a).equals(good) and pl.read_csv(b).equals(good)


def test_a_failed_run_keeps_earlier_outputs(tmp_path, monkeypatch, capsys):
    """A run that exits 2 has not touched an existing --segments-out or --out."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "segs.csv").write_text("earlier\n")
    (tmp_path / "out.csv").write_text("earlier\n")
    rc = main(["compare", "sample", "-t", "magic:nope", "--out", "out.csv", "--segments-out", "segs.csv"])
    assert rc == 2 and "unknown tokenizer kind" in capsys.readouterr().err
    assert (tmp_path / "segs.csv").read_text() == "earlier\n" and (tmp_path / "out.csv").read_text() == "earlier\n"


def test_compare_writes_both_outputs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["compare", "sample", "-t", "train:bpe:300", "--out", "o.parquet", "--segments-out", "s.csv",
                 "--quiet"]) == 0
    assert pl.read_parquet("o.parquet").height == 2 and pl.read_csv("s.csv").height > 0


@pytest.mark.parametrize("err", [28, 13])   # ENOSPC, EACCES
def test_disk_full_or_denied_while_writing_replaces_nothing(tmp_path, monkeypatch, capsys, err):
    """The second output fails mid-write (disk full, permission denied): one line, exit 2, the first
    output is not replaced either, no temporary file is left."""
    import tokstat.io as tio

    monkeypatch.chdir(tmp_path)
    (tmp_path / "o.csv").write_text("earlier\n")
    real = tio._write_df

    def failing(df, path, suf):
        if suf == ".parquet":
            with open(path, "wb") as f:
                f.write(b"partial")
            raise OSError(err, os.strerror(err))
        real(df, path, suf)

    monkeypatch.setattr(tio, "_write_df", failing)
    rc = main(["compare", "sample", "-t", "train:bpe:300", "--out", "o.csv", "--segments-out", "s.parquet", "--quiet"])
    out = capsys.readouterr().err.strip()
    assert rc == 2 and len(out.splitlines()) == 1 and os.strerror(err) in out and "s.parquet" in out, out
    assert (tmp_path / "o.csv").read_text() == "earlier\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.csv"]


@pytest.mark.parametrize("err", [28, 13])   # ENOSPC, EACCES
@pytest.mark.parametrize("cmd", ["train", "report", "cost"])
def test_disk_full_or_denied_in_every_writing_command(tmp_path, monkeypatch, capsys, err, cmd):
    """train (a folder), report (an HTML page and a PNG folder) and cost (a table): a failing write
    is one line, exit 2; the earlier output stays as it was and nothing else is left behind."""
    from pathlib import Path as P

    monkeypatch.chdir(tmp_path)
    if cmd == "cost":
        assert main(["compare", "sample", "-t", "tiktoken:cl100k_base", "--out", "r.csv", "--quiet"]) == 0
    earlier = {"train": "tok/tokenizer.json", "report": "r.html", "cost": "c.csv"}[cmd]
    P(earlier).parent.mkdir(exist_ok=True)
    P(earlier).write_text("earlier\n")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    real = P.write_bytes

    def failing(self, data):
        if ".tmp" in str(self):   # the temporary copies every writer makes first
            real(self, data[: len(data) // 2])
            raise OSError(err, os.strerror(err))
        return real(self, data)

    import tokstat.io as tio

    monkeypatch.setattr(P, "write_bytes", failing)
    monkeypatch.setattr(tio, "_write_df", lambda df, path, suf: failing(P(path), b"partial table"))
    argv = {"train": ["train", "sample", "--algo", "bpe", "--vocab-size", "300", "--out", "tok", "--quiet"],
            "report": ["report", "--corpus", "sample", "-t", "tiktoken:cl100k_base", "--out", "r.html", "--png", "figs",
                       "--quiet"],
            "cost": ["cost", "--results", "r.csv", "--model", "llama2-7b", "--gpu", "h100-sxm", "--train-tokens", "1e12",
                     "--out", "c.csv"]}[cmd]
    rc = main(argv)
    out = capsys.readouterr().err.strip()
    assert rc == 2 and len(out.splitlines()) == 1 and os.strerror(err) in out and "Traceback" not in out, out
    assert P(earlier).read_text() == "earlier\n"
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
