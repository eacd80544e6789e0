"""Outputs: every path checked before work starts; several outputs written as one unit."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pytest

from tokstat import TokstatError
from tokstat.cli import main
from tokstat.io import check_outputs, write_outputs, write_tables


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
    (tmp_path / "new").mkdir()
    got = check_outputs({"--out": ("new/r.parquet", "table"), "--png": ("charts", "folder"),
                         "--segments-out": (None, "table")})
    assert set(got) == {"--out", "--png"}
    assert [p.name for p in tmp_path.iterdir()] == ["new"] and not any((tmp_path / "new").iterdir())


@pytest.mark.parametrize("outputs", [{"--out": ("nope/deeper/r.parquet", "table")}, {"--png": ("nope/charts", "folder")},
                                     {"--html": ("nope/v.html", "html")}])
def test_a_missing_folder_is_refused_never_created(tmp_path, monkeypatch, outputs):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TokstatError, match=r"the folder .*nope.* does not exist \(fix: create it first \(mkdir -p"):
        check_outputs(outputs)
    assert list(tmp_path.iterdir()) == []


def test_an_output_that_is_a_fifo_or_device_is_refused(tmp_path):
    os.mkfifo(tmp_path / "f.csv")
    with pytest.raises(TokstatError, match="exists and is not a regular file"):
        check_outputs({"--out": (tmp_path / "f.csv", "table")})
    os.symlink("/dev/null", tmp_path / "n.csv")
    with pytest.raises(TokstatError, match="exists and is not a regular file"):
        check_outputs({"--out": (tmp_path / "n.csv", "table")})


def test_tables_are_written_as_one_unit(tmp_path):
    """The second table cannot be written (a struct in CSV): the first is not replaced either."""
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("old a\n")
    good = pl.DataFrame({"x": [1, 2]})
    bad = pl.DataFrame({"x": [{"a": 1, "b": [2]}]})
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


def test_a_failed_rename_puts_the_earlier_outputs_back(tmp_path, monkeypatch):
    """All files are written; the second rename fails: the first target gets its old bytes back."""
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("old a\n")
    b.write_text("old b\n")
    real, calls = os.replace, []

    def flaky(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, os.strerror(28))
        return real(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(TokstatError, match="No space left on device"):
        write_outputs({a: b"new a", b: b"new b"})
    monkeypatch.undo()
    assert a.read_text() == "old a\n" and b.read_text() == "old b\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv"]


def test_a_short_write_is_an_error(tmp_path, monkeypatch):
    """``os.write`` that writes nothing (as on some full file systems) is never taken for success."""
    monkeypatch.setattr(os, "write", lambda fd, data: 0)
    with pytest.raises(TokstatError, match="cannot write"):
        write_outputs({tmp_path / "a.json": b"[1, 2, 3]"})
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- a real full disk

@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Inputs on the normal disk: a compare table with per-segment text, a sweep, a trained tokenizer."""
    d = tmp_path_factory.mktemp("inputs")
    cwd = os.getcwd()
    os.chdir(d)
    try:
        assert main(["compare", "sample", "-t", "train:bpe:300", "--out", "r.csv", "--segments-out", "segs.parquet",
                     "--segments-text", "--quiet"]) == 0
        assert main(["sweep", "sample", "--sizes", "300,400,500,600", "--out", "sw.csv", "--quiet"]) == 0
        assert main(["train", "sample", "--algo", "bpe", "--vocab-size", "300", "--out", "tok", "--quiet"]) == 0
    finally:
        os.chdir(cwd)
    return d


def _commands(i: Path, D: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Every command that writes, with the outputs it writes into ``D`` and their earlier contents."""
    tok = f"hf:{i / 'tok' / 'tokenizer.json'}"
    return {
        "compare-json": (["compare", "sample", "-t", "train:bpe:300", "--out", f"{D}/o.json", "--quiet"], {"o.json": "earlier"}),
        "compare-two": (["compare", "sample", "-t", "train:bpe:300", "--out", f"{D}/o.csv", "--segments-out", f"{D}/s.parquet",
                         "--quiet"], {"o.csv": "earlier", "s.parquet": "earlier"}),
        "train": (["train", "sample", "--algo", "bpe", "--vocab-size", "300", "--out", f"{D}/tok", "--quiet"],
                  {"tok/tokenizer.json": "earlier", "tok/metadata.json": "earlier"}),
        "sweep": (["sweep", "sample", "--sizes", "300,400", "--out", f"{D}/sw.csv", "--plot", f"{D}/sw.png", "--quiet"],
                  {"sw.csv": "earlier", "sw.png": "earlier"}),
        "vocab-plan": (["vocab-plan", "--sweep", f"{i}/sw.csv", "--model", "llama2-7b", "--out", f"{D}/p.csv", "--png", f"{D}/p.png"],
                       {"p.csv": "earlier", "p.png": "earlier"}),
        "cost": (["cost", "--results", f"{i}/r.csv", "--model", "llama2-7b", "--gpu", "h100-sxm", "--out", f"{D}/c.json"],
                 {"c.json": "earlier"}),
        "report": (["report", f"{i}/r.csv", "--out", f"{D}/r.html", "--png", f"{D}/figs"], {"r.html": "earlier"}),
        "show": (["show", "語言模型 tokens", "-t", tok, "--html", f"{D}/v.html"], {"v.html": "earlier"}),
        "robustness": (["robustness", "sample", "-t", tok, "--out", f"{D}/rb.csv"], {"rb.csv": "earlier"}),
        "worst": (["worst", f"{i}/segs.parquet", "--out", f"{D}/w.csv"], {"w.csv": "earlier"}),
    }


@contextmanager
def small_disk(path: Path, size: str = "1m"):
    """A tmpfs of ``size`` mounted at ``path`` (the tests run as root in CI)."""
    path.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {r.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill(D: Path, leave: int = 0) -> None:
    """Fill the file system of ``D`` until it is full; then free ``leave`` bytes (a planted slack file)."""
    with open(D / ".slack", "wb") as f:
        f.write(b"s" * leave)
    fd = os.open(D / ".filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    if leave:
        os.unlink(D / ".slack")


def _snapshot(D: Path) -> dict[str, bytes]:
    return {str(p.relative_to(D)): p.read_bytes() if p.is_file() else b"<dir>" for p in sorted(D.rglob("*"))}


@pytest.mark.slow
@pytest.mark.parametrize("cmd", ["compare-json", "compare-two", "train", "sweep", "vocab-plan", "cost", "report", "show",
                                 "robustness", "worst"])
def test_a_full_disk_fails_loudly_and_replaces_nothing(made, tmp_path, capsys, cmd):
    """On a file system with no space left, every command that writes exits 2 with one line naming
    the output, and every earlier output keeps its bytes; no temporary or empty file is left."""
    with small_disk(tmp_path / "disk") as D:
        argv, earlier = _commands(made, D)[cmd]
        for name, text in earlier.items():
            (D / name).parent.mkdir(exist_ok=True)
            (D / name).write_text(text)
        _fill(D)
        before = _snapshot(D)
        rc = main(argv)
        err = capsys.readouterr().err.strip()
        assert rc == 2 and len(err.splitlines()) == 1 and "No space left on device" in err and "internal" not in err, err
        assert _snapshot(D) == before


@pytest.mark.slow
@pytest.mark.parametrize("cmd", ["compare-two", "sweep", "vocab-plan"])
def test_when_only_the_first_output_fits_neither_is_replaced(made, tmp_path, capsys, cmd):
    """Room for the small first output, not for the second: a set of outputs is all or nothing."""
    with small_disk(tmp_path / "disk") as D:
        argv, earlier = _commands(made, D)[cmd]
        for name, text in earlier.items():
            (D / name).write_text(text)
        _fill(D, leave=8192)
        before = _snapshot(D)
        rc = main(argv)
        err = capsys.readouterr().err.strip()
        assert rc == 2 and "No space left on device" in err, err
        assert _snapshot(D) == before


@pytest.mark.slow
def test_a_file_size_limit_fails_loudly_and_replaces_nothing(made, tmp_path):
    """RLIMIT_FSIZE (a quota, ulimit -f): the write fails with EFBIG; the earlier output stays."""
    (tmp_path / "c.json").write_text("earlier")
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000)); "
            "from tokstat.cli import main; sys.exit(main(sys.argv[1:]))")
    r = subprocess.run([sys.executable, "-c", code, "cost", "--results", f"{made}/r.csv", "--model", "llama2-7b",
                        "--gpu", "h100-sxm", "--out", str(tmp_path / "c.json")], capture_output=True, text=True)
    assert r.returncode == 2 and "File too large" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert (tmp_path / "c.json").read_text() == "earlier" and [p.name for p in tmp_path.iterdir()] == ["c.json"]
