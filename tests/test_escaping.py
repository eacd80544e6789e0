"""Stored script injection: a hostile value in every column of every result file ``tokstat report``
reads never becomes markup. Text columns carry the payload and the page shows it as text; a numeric
column holding text is one error naming the file and column. The written page is parsed: no
element or attribute in it came from data."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import polars as pl
import pytest

from tokstat import compare
from tokstat.cli import main
from tokstat.cost.hardware import gpu
from tokstat.cost.model import preset
from tokstat.cost.projection import project
from tokstat.io import write_table
from tokstat.sweep import sweep

PAYLOAD = ('<x-evil evil="1">&amp;\'"</x-evil><script>evil()</script><img src=x onerror=evil()>'
           '<svg onload=evil()><a href="javascript:evil()">x</a>\x1b]0;title\x07')


class Elements(HTMLParser):
    """Every start tag and attribute name of a page (SVG included)."""

    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.scripts = [], set(), 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs |= {a for a, _ in attrs}
        self.attrs |= {f"{a}={v}" for a, v in attrs if v and v.lower().startswith("javascript:")}
        self.scripts += tag == "script"


def assert_no_markup_from_data(page: str) -> None:
    p = Elements()
    p.feed(page)
    assert "x-evil" not in p.tags and "img" not in p.tags, sorted(set(p.tags))
    assert not {"evil", "onerror", "onload"} & p.attrs and not any(a.startswith("href=javascript") for a in p.attrs)
    assert p.scripts == 1                                  # the page's own table sorter only
    assert "\x1b" not in page and "\x07" not in page       # control characters never reach the page raw
    assert "&lt;x-evil" in page                            # the data did reach the page, as text


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Real result files of every kind a report reads (no ../shared needed)."""
    cmp, segs = compare("sample", ["train:bpe:400", "train:bpe:600?heldout=0.2"], n_boot=50, return_segments=True,
                        segments_text=True, workers=1)
    sw = sweep("sample", "bpe", [300, 400, 500, 600], n_boot=50)
    m, g = preset("llama2-7b"), gpu("h100-sxm")
    return {"compare": cmp, "segments": segs, "sweep": sw, "cost": project(cmp, m, g, train_tokens=2e12),
            "sweep_cost": project(sw, m, g, train_tokens=2e12)}


#: columns that name something tokstat looks up (a preset): a hostile value there is an error, tested below
NAMES = {"model"}
#: numbers written as text (bootstrap replicates, space-separated): a hostile value there is refused as
#: not numbers (tests/test_round4.py: a result file with what is not a number where one must be)
NUMBERS_AS_TEXT = {"tokens_per_char_boot"}


def _hostile(df: pl.DataFrame) -> pl.DataFrame:
    """Every text value with the payload appended; in signatures, to every ``key:value`` part."""
    cols = []
    for c, t in df.schema.items():
        if t != pl.String or c in NAMES or c in NUMBERS_AS_TEXT:
            continue
        if c == "signature":
            cols.append(pl.col(c).str.replace_all(r"([^|]+)", "${1}" + PAYLOAD.replace("$", "$$")))
        else:
            cols.append(pl.concat_str(pl.col(c), pl.lit(PAYLOAD)).alias(c))
    return df.with_columns(cols) if cols else df


@pytest.mark.parametrize("suffix", [".csv", pytest.param(".parquet", marks=pytest.mark.slow),
                                    pytest.param(".json", marks=pytest.mark.slow)])
def test_a_hostile_value_in_every_text_column_is_shown_as_text(results, tmp_path, capsys, suffix):
    paths = []
    for k, df in results.items():
        p = tmp_path / f"{k}{suffix}"
        write_table(_hostile(df), p)
        paths.append(str(p))
    rc = main(["report", *paths, "--out", str(tmp_path / "r.html"), "--title", PAYLOAD])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert_no_markup_from_data((tmp_path / "r.html").read_text(encoding="utf-8"))


def _numeric_columns(results) -> list[tuple[str, str]]:
    return [(k, c) for k, df in results.items() for c, t in df.schema.items() if t.is_numeric()]


@pytest.mark.slow
def test_a_numeric_column_holding_text_is_refused_or_escaped(results, tmp_path, capsys):
    """Each numeric column of each kind, in turn, holds the payload (a CSV someone edited): the
    report exits 2 naming the file and column, or (where the column is informative only) shows it
    as text. Never an internal error, never markup."""
    cases = _numeric_columns(results)
    assert len(cases) > 60
    for k, c in cases:
        d = tmp_path / f"{k}-{c}"
        d.mkdir()
        paths = []
        for kind, df in results.items():
            p = d / f"{kind}.csv"
            write_table(df.with_columns(pl.lit(PAYLOAD).alias(c)) if kind == k else df, p)
            paths.append(str(p))
        rc = main(["report", *paths, "--out", str(d / "r.html")])
        err = capsys.readouterr().err.strip()
        if rc == 2:
            assert len(err.splitlines()) == 1 and re.search(rf"{k}\.csv: column {re.escape(c)} ", err), (k, c, err)
            assert not (d / "r.html").exists()
        else:
            assert rc == 0, (k, c, err)
            assert_no_markup_from_data((d / "r.html").read_text(encoding="utf-8"))


def test_show_html_escapes_the_text_and_the_tokenizer(tmp_path):
    """``show --html``: the text shown and the tokenizer id are data."""
    from tok_fixtures import tiny_files

    tok = tiny_files(tmp_path)["hf"]
    assert main(["show", PAYLOAD, "-t", f"hf:{tok}", "--html", str(tmp_path / "v.html")]) == 0
    page = (tmp_path / "v.html").read_text(encoding="utf-8")
    p = Elements()
    p.feed(page)
    assert not {"x-evil", "img", "script", "svg", "a"} & set(p.tags) and not {"evil", "onerror", "onload"} & p.attrs
    assert "\x1b" not in page


def test_a_hostile_model_name_is_one_error_shown_without_control_characters(results, tmp_path, capsys):
    write_table(results["cost"].with_columns(pl.concat_str(pl.col("model"), pl.lit(PAYLOAD)).alias("model")),
                tmp_path / "cost.csv")
    rc = main(["report", str(tmp_path / "cost.csv"), "--out", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert rc == 2 and "unknown model preset" in err and "\x1b" not in err and "\\x1b]0;title\\x07" in err, err
    assert not (tmp_path / "r.html").exists()


# ---------------------------------------------------------------- the terminal

ESC = "\x1b]0;pwned\x07\x1b[2J\u202e\x9b31m"


def _no_control(out: str) -> None:
    assert not any(c in out for c in "\x1b\x07\x9b\u202e"), repr(out[:300])


def test_worst_shows_control_characters_as_escapes(results, tmp_path, capsys):
    """``tokstat worst`` prints corpus text: ESC/OSC (title, clipboard), CSI and bidi overrides in
    it are shown as escapes, never sent to the terminal."""
    segs = results["segments"].with_columns(pl.concat_str(pl.col("text"), pl.lit(ESC)).alias("text"))
    write_table(segs, tmp_path / "s.parquet")
    assert main(["worst", str(tmp_path / "s.parquet"), "-n", "3"]) == 0
    out = capsys.readouterr()
    _no_control(out.out + out.err)
    assert "\\x1b]0;pwned\\x07" in out.out.replace("\n", "")


def test_show_and_names_from_files_show_control_characters_as_escapes(tmp_path, capsys):
    from tok_fixtures import tiny_files

    tok = tiny_files(tmp_path)["hf"]
    assert main(["show", "ab" + ESC, "-t", f"hf:{tok}"]) == 0
    d = tmp_path / ("corpus" + "\x1b]0;t\x07")          # a file name holding an escape: the corpus's name
    d.mkdir()
    (d / "en.txt").write_text("Hello.\n")
    (d / "zh.txt").write_text("你好。\n")
    assert main(["corpus", "info", str(d)]) == 0
    assert main(["compare", str(d / "nope.tsv"), "-t", f"hf:{tok}"]) == 2     # an error naming the path
    out = capsys.readouterr()
    _no_control(out.out + out.err)
    assert "\\x1b]0;t\\x07" in out.err and "\\x1b]0;t\\x07" in out.out.replace("\n", "")
