"""Nothing lost, round 5: numbers at the edge of float are refused through the quantities they
derive, every pricing command and numeric option walked at the extremes of its own range."""

from __future__ import annotations

import json
import re
import math

import click
import pytest

from tokstat.cli import cli, main
from tokstat.ranges import RANGES, meaningful

from conftest import ROOT

SAMPLE = ROOT / "corpora/sample-zh-en/sample.tsv"


def _numbers(obj):
    """Every number in a JSON value."""
    if isinstance(obj, bool) or obj is None:
        return
    if isinstance(obj, (int, float)):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _numbers(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _numbers(v)


def extremes(opt: str, is_int: bool) -> list:
    """The values at the edges of an option's own range: its bounds, or 5e-324 and 1e308 where it
    has none (what ``ranges.check`` lets through, and where a derived quantity breaks)."""
    r = RANGES[opt]
    lo = (5e-324 if r.lo == 0 else r.lo * (1 + 1e-12)) if r.open_lo else r.lo
    hi = r.hi if math.isfinite(r.hi) else 1e308
    if r.open_hi:
        hi = hi * (1 - 1e-12)
    vals = [lo, hi]
    if is_int:
        vals = sorted({int(math.ceil(lo)), int(hi)})
    return vals


def options_of(name: str) -> list[tuple[str, bool]]:
    cmd = cli.commands[name]
    return [(p.opts[0], isinstance(p.type, click.types.IntParamType)) for p in cmd.params
            if isinstance(p.type, (click.types.IntParamType, click.types.FloatParamType))]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from tokstat import compare, sweep
    from tokstat.io import write_tables

    d = tmp_path_factory.mktemp("r5")
    write_tables({d / "cmp.parquet": compare(str(SAMPLE), ["tiktoken:cl100k_base"], n_boot=20),
                  d / "sweep.parquet": sweep(str(SAMPLE), "bpe", [400, 800, 1600, 3200], n_boot=0, progress=False)})
    return d


SKIP = {"--seed", "--boot-seed", "--diag-seed", "--workers"}      # not priced; walked by tests/test_ranges.py


def _walk(argv: list[str], name: str, capsys, extra: dict | None = None):
    seen = []
    for opt, is_int in options_of(name):
        if opt in SKIP:
            continue
        for v in extremes(opt, is_int):
            args = argv + [opt, str(v)] + (extra or {}).get(opt, [])
            rc = main(args)
            out, err = capsys.readouterr()
            assert "internal error" not in err, (opt, v, err)
            if rc == 0:
                # the input itself, echoed in the output, is what was asked for; what it derived must be usable
                bad = [x for x in _numbers(json.loads(out)) if not meaningful(float(x)) and float(x) != float(v)]
                assert not bad, (name, opt, v, bad[:3])
            else:
                named = opt in err or opt.lstrip("-").replace("-", "_") in err     # --d-model, or d_model
                assert rc == 2 and len(err.strip().splitlines()) == 1 and named, (name, opt, v, err)
            seen.append((opt, v, rc))
    return seen


def test_cost_at_every_extreme_prices_or_names_the_option(results, capsys):
    """The issue's cases (--train-chars 1e308, --mfu 1e-300 with a large volume, --goodput 5e-324, ...)
    and every other numeric option of cost: a table of usable numbers, or one line naming the option
    and its usable range."""
    base = ["cost", "--results", str(results / "cmp.parquet"), "--model", "llama2-7b", "--gpu", "h100-sxm", "--json"]
    seen = _walk(base, "cost", capsys, {"--mfu": ["--train-chars", "1e30"], "--tp": ["--gpus", str(10**6)],
                                        "--pp": ["--gpus", str(10**6)]})
    refused = {opt for opt, v, rc in seen if rc == 2}
    assert {"--train-chars", "--train-tokens", "--tokens-per-param", "--train-bytes", "--mfu", "--goodput", "--price"} <= refused
    assert main(base + ["--train-chars", "1e308"]) == 2
    err = capsys.readouterr().err
    assert "--train-chars 1e+308 makes the training tokens of en" in err and "usable up to" in err


def test_vocab_plan_at_every_extreme_plans_or_names_the_option(results, capsys):
    base = ["vocab-plan", "--sweep", str(results / "sweep.parquet"), "--model", "llama2-7b", "--json"]
    seen = _walk(base, "vocab-plan", capsys, {"--train-chars": ["--serve-chars", "1e9"], "--seq-len": ["--serve-chars", "1e9"]})
    assert ("--train-chars", 1e308, 2) in seen and ("--serve-chars", 1e308, 2) in seen
    # the planner's own laws: a model of under a million non-vocabulary parameters is refused by its range
    assert main(["vocab-plan", "--sweep", str(results / "sweep.parquet"), "--non-vocab-params", "1e-300",
                 "--d-model", "64"]) == 2
    assert "--non-vocab-params must be" in capsys.readouterr().err


def test_model_info_at_every_extreme(capsys):
    _walk(["model-info", "--model", "llama2-7b", "--json"], "model-info", capsys)


@pytest.mark.slow
def test_extend_refuses_a_meaningless_price_before_it_trains(tmp_path, capsys):
    """extend's pricing inputs at their extremes: refused before the training (the price of an
    ordinary tokenizer, 0.05 and 4 tokens a character, already breaks), or a table of usable numbers."""
    import polars as pl

    for opt, is_int in options_of("extend"):
        if opt in SKIP or opt in ("--heldout",):
            continue
        for v in extremes(opt, is_int):
            out = tmp_path / f"x{opt}{v}"
            rc = main(["extend", "tiktoken:cl100k_base", "--corpus", str(SAMPLE), "--languages", "zh", "--add", "50",
                       "--out", str(out), "--quiet", opt, str(v)])
            err = capsys.readouterr().err
            assert "internal error" not in err, (opt, v, err)
            if rc == 0:
                t = pl.read_parquet(out / "extension.parquet")
                bad = [x for c in t.columns if t[c].dtype == pl.Float64 for x in t[c].to_list()
                       if not meaningful(x) and x != float(v)]
                assert not bad, (opt, v, bad[:3])
            else:
                assert rc == 2 and opt in err and not out.exists(), (opt, v, err)


# ------------------------------------------------------------------------------------------ one study

@pytest.fixture(scope="module")
def two(tmp_path_factory):
    """Tables of two corpora (the sample, and a second of its own sentences), and their concatenations."""
    import polars as pl

    from tokstat import compare, sweep

    d = tmp_path_factory.mktemp("two")
    other = d / "other.tsv"
    rows = SAMPLE.read_text(encoding="utf-8").splitlines()
    other.write_text("\n".join([rows[0]] + rows[1:120][::-1]) + "\n", encoding="utf-8")
    out = {}
    for name, spec in (("a", str(SAMPLE)), ("b", str(other))):
        df, segs = compare(spec, ["tiktoken:cl100k_base"], n_boot=20, return_segments=True, segments_text=True)
        out[name], out[name + "_segs"] = df, segs
        out[name + "_sweep"] = sweep(spec, "bpe", [400, 800, 1600, 3200], n_boot=0, progress=False)
    files = {}
    for k in ("", "_segs", "_sweep"):
        both = pl.concat([out["a" + k], out["b" + k]], how="diagonal_relaxed")
        files["both" + k] = d / f"both{k}.parquet"
        both.write_parquet(files["both" + k])
        files["a" + k] = d / f"a{k}.parquet"
        out["a" + k].write_parquet(files["a" + k])
    return {k: str(v) for k, v in files.items()}, out


@pytest.mark.parametrize("argv", [
    ["cost", "--results", "{both}", "--model", "llama2-7b", "--gpu", "h100-sxm"],
    ["groups", "{both}", "--by", "script"],
    ["worst", "{both_segs}", "-t", "tiktoken/cl100k_base"],
    ["vocab-plan", "--sweep", "{both_sweep}", "--model", "llama2-7b"]])
def test_a_table_of_two_corpora_is_never_read_as_one(two, argv, capsys):
    files, _ = two
    rc = main([a.format(**files) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2 and "not one study" in err and len(err.strip().splitlines()) == 1 and "internal" not in err, err


@pytest.mark.parametrize("argv", [
    ["cost", "--results", "{dup}", "--model", "llama2-7b", "--gpu", "h100-sxm"], ["groups", "{dup}", "--by", "script"]])
def test_a_language_twice_for_a_tokenizer_is_refused(two, argv, tmp_path, capsys):
    """The same corpus's rows stacked twice (one signature, so no corpus differs): refused too."""
    import polars as pl

    files, out = two
    dup = tmp_path / "dup.parquet"
    pl.concat([out["a"], out["a"]]).write_parquet(dup)
    rc = main([a.format(dup=str(dup)) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2 and re.search(r"tiktoken/cl100k_base on (en|zh) appears 2 times", err), err


def test_the_report_gives_two_corpora_two_sections_and_refuses_a_file_twice(two, tmp_path, capsys):
    files, _ = two
    page = tmp_path / "r.html"
    assert main(["report", files["both"], "--out", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert html.count('id="s1-corpus"') + html.count('class="evidence"') >= 2
    capsys.readouterr()
    rc = main(["report", files["a"], "./" + files["a"] if not files["a"].startswith("/") else files["a"],
               "--out", str(tmp_path / "r2.html")])
    err = capsys.readouterr().err
    assert rc == 2 and "appears 2 times" in err and not (tmp_path / "r2.html").exists(), err


def test_baseline_ratios_refuse_two_corpora(two):
    import polars as pl

    from tokstat import TokstatError
    from tokstat.metrics import versus_baseline

    _, out = two
    with pytest.raises(TokstatError, match="not one study"):
        versus_baseline(pl.concat([out["a"], out["b"]]), "tiktoken/cl100k_base")


def test_groups_of_a_budget_table_count_languages_not_its_total(tmp_path):
    from tokstat import budget
    from tokstat.groups import group_summary

    df = budget("sample-docs", ["tiktoken:cl100k_base"], sample=1.0)
    g = group_summary(df, "script", value="tokens_per_byte")
    assert g["n_languages"].sum() == df.filter(df["language"] != "(all)").height
    assert "(all)" not in ",".join(g["languages"].to_list())


# ------------------------------------------------------------------------------- undefined, one way

def test_an_unterminated_po_string_is_refused_with_its_line(tmp_path, capsys):
    """polib reads ``msgstr "打开`` (no closing quote) as a translation; tokstat refuses it, naming the
    line, for an open msgid, msgstr, plural form and continuation line alike."""
    head = 'msgid ""\nmsgstr ""\n"Language: zh\\n"\n\n'
    for bad, line in (('msgid "Open"\nmsgstr "打开\n', 6), ('msgid "Open\nmsgstr "打开"\n', 5),
                      ('msgid "Open"\nmsgstr ""\n"打开\n', 7), ('msgid "a"\nmsgid_plural "as"\nmsgstr[0] "一\n', 7)):
        po = tmp_path / "zh.po"
        po.write_text(head + bad, encoding="utf-8")
        before = po.read_bytes()
        rc = main(["corpus", "info", str(po)])
        err = capsys.readouterr().err
        assert rc == 2 and f"zh.po:{line}:" in err and "not closed" in err and len(err.strip().splitlines()) == 1, err
        assert po.read_bytes() == before
    po.write_text(head + 'msgid "Say \\"hi\\""\nmsgstr "说\\"你好\\""\n', encoding="utf-8")   # escaped quotes: fine
    assert main(["corpus", "info", str(po)]) == 0, capsys.readouterr().err


def test_undefined_is_null_everywhere_and_tokstat_reads_its_own_output(tmp_path, capsys):
    """A whitespace-only language: WordPiece emits no tokens for it (its rates are null, not 0) and
    bootstrap draws of empty pivot segments have no characters (their replicates are ``null``, not
    ``nan``). Both formats of that table are read back by cost and report, which name the row they
    cannot price."""
    import polars as pl

    from tok_fixtures import tiny_files

    from tokstat.metrics import PAIRED_BOOT, replicates

    files = tiny_files(tmp_path)
    corpus = tmp_path / "ws.tsv"
    corpus.write_text("en\tzh\nthe cat\t \n \t  \nthe\t \n", encoding="utf-8")
    for ext in ("csv", "parquet"):
        out = tmp_path / f"r.{ext}"
        assert main(["compare", str(corpus), "-t", f"wordpiece:{files['wordpiece']}", "-t", "tiktoken:cl100k_base",
                     "--out", str(out)]) == 0
        df = pl.read_csv(out) if ext == "csv" else pl.read_parquet(out)
        wp = df.filter(pl.col("tokenizer").str.starts_with("wordpiece"))
        zh = wp.filter(pl.col("language") == "zh").row(0, named=True)
        assert zh["tokens"] == 0 and zh["tokens_per_char"] is None and zh["tokens_per_char_boot"] is None
        boots = " ".join(x for x in df["tokens_per_char_boot"].to_list() if x)
        assert "nan" not in boots and "null" in boots      # some draws hold only empty en segments
        assert all(r is None or len(r) == PAIRED_BOOT for r in map(replicates, df["tokens_per_char_boot"].to_list()))
        capsys.readouterr()
        assert main(["cost", "--results", str(out), "--model", "llama2-7b", "--gpu", "h100-sxm"]) == 0
        err = capsys.readouterr().err
        assert "wordpiece/wp[lower] on zh: no tokens per character" in err, err
        assert main(["report", str(out), "--out", str(tmp_path / f"r-{ext}.html")]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["compare", str(SAMPLE), "-t", "tiktoken:cl100k_base", "--out", "{d}/a.csv", "--out", "{d}/b.parquet"],
    ["cost", "--results", "x.csv", "--model", "llama2-7b", "--model", "llama3-8b", "--gpu", "h100-sxm"],
    ["compare", str(SAMPLE), "-t", "tiktoken:cl100k_base", "--strip", "--strip"]])
def test_an_option_of_one_value_given_twice_is_refused(argv, tmp_path, capsys):
    rc = main([a.format(d=tmp_path) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2 and "given more than once" in err and len(err.strip().splitlines()) == 1, err
    assert not list(tmp_path.iterdir())


# ------------------------------------------------------------------------------- internal errors (E)

def _one_line(rc, err, *needles):
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "internal" not in err, err
    for n in needles:
        assert n in err, (n, err)


@pytest.fixture(scope="module")
def bad_shards(tmp_path_factory):
    """Shard folders whose second shard lacks a column the first has: the language, or the text
    column spelled ``Text``; and its JSONL twin."""
    import polars as pl

    d = tmp_path_factory.mktemp("shards")
    out = {}
    for name, second in (("nolang", {"text": ["hi there"] * 5}),
                         ("Text", {"Text": ["hi there"] * 5, "language": ["en"] * 5})):
        f = d / name
        f.mkdir()
        pl.DataFrame({"text": ["hello world"] * 5, "language": ["en"] * 5}).write_parquet(f / "s0.parquet")
        pl.DataFrame(second).write_parquet(f / "s1.parquet")
        out[name] = f
        j = d / f"{name}-jsonl"
        j.mkdir()
        (j / "s0.jsonl").write_text('{"text": "hello world", "language": "en"}\n' * 5, encoding="utf-8")
        (j / "s1.jsonl").write_text(json.dumps({k: v[0] for k, v in second.items()}) + "\n", encoding="utf-8")
        out[name + "-jsonl"] = j
    return out


@pytest.mark.parametrize("layout,column", [("nolang", "no language column 'language'"), ("Text", "no text column 'text'"),
                                           ("nolang-jsonl", "no language column"), ("Text-jsonl", "no text column")])
@pytest.mark.parametrize("argv", [["corpus", "info"], ["compare", "-t", "tiktoken:cl100k_base"],
                                  ["budget", "-t", "tiktoken:cl100k_base"],
                                  ["budget", "-t", "tiktoken:cl100k_base", "--exact", "--workers", "2"]])
def test_a_shard_without_a_column_the_first_has_is_named(bad_shards, layout, column, argv, capsys):
    d = bad_shards[layout]
    rc = main([argv[0], *argv[1:2], str(d), *argv[2:]] if argv[0] == "corpus" else [argv[0], str(d), *argv[1:]])
    _one_line(rc, capsys.readouterr().err, "s1.", column)


def test_a_renamed_text_column_gets_the_rename_as_its_fix(bad_shards, capsys):
    rc = main(["corpus", "info", str(bad_shards["Text"])])
    _one_line(rc, capsys.readouterr().err, "rename 'Text' to 'text'")


@pytest.fixture()
def ms_folder(tmp_path):
    d = tmp_path / "ms"
    d.mkdir()
    (d / "english_morph_data.csv").write_text(",full_word,pt1,rest\n0,cats,cat,s\n1,dogs,dog,s\n", encoding="utf-8")
    return d


@pytest.mark.parametrize("body,needle", [
    (b",full_word,pt1,rest\n0,ev,e,v\n1," + b"a" * 200_000 + b",a,b\n", "turkish_morph_data.csv:3: full_word has 200,000 characters: not a word"),
    (b",full_word,pt1,rest\n0,ev,e,v\n1," + b"a" * 2_000 + b",a,b\n", "turkish_morph_data.csv:3: full_word has 2,000"),
    (b",full_word,pt1,rest\n0,ev,e,v\n1,d\xffe,d,e\n", "turkish_morph_data.csv:3: invalid UTF-8"),
    (b",full_word,pt1,rest\n0,ev,e,v\n1,e\x00v,e,v\n", "turkish_morph_data.csv:3:")])
def test_a_damaged_morphscore_file_is_one_line_with_its_row(ms_folder, body, needle, capsys):
    (ms_folder / "turkish_morph_data.csv").write_bytes(body)
    before = {p.name: p.read_bytes() for p in ms_folder.iterdir()}
    rc = main(["morphscore", "-t", "tiktoken:cl100k_base", "--data", str(ms_folder), "--out", str(ms_folder / "r.csv")])
    _one_line(rc, capsys.readouterr().err, needle)
    assert {p.name: p.read_bytes() for p in ms_folder.iterdir()} == before


@pytest.mark.parametrize("argv,needle", [
    (["sweep", str(SAMPLE), "--algo", "bpe", "--sizes", "300,4000000000"], "4,000,000,000 is above the largest"),
    (["compare", str(SAMPLE), "-t", "train:bpe:4000000000"], "train:bpe:4000000000: a vocabulary size"),
    (["train", str(SAMPLE), "--algo", "bpe", "--vocab-size", "4000000000", "--out", "{d}/t"], "--vocab-size must be"),
    (["extend", "tiktoken:cl100k_base", "--corpus", str(SAMPLE), "--languages", "zh", "--add", "4000000000",
      "--out", "{d}/x"], "--add"),
    (["vocab-plan", "--corpus", str(SAMPLE), "--sizes", "400,800,1600,20000000", "--model", "llama2-7b"],
     "above the largest"),
    (["compare", str(SAMPLE), "-t", "train:bpe:300?seed=-1"], "train:bpe:300: split seed -1"),
    (["compare", str(SAMPLE), "-t", "train:bpe:300?seed=4294967296"], "split seed 4294967296")])
def test_a_trained_size_or_seed_beyond_its_range_is_one_line(argv, needle, tmp_path, capsys):
    rc = main([a.format(d=tmp_path) for a in argv])
    _one_line(rc, capsys.readouterr().err, needle)
    assert not list(tmp_path.iterdir())


def test_the_python_api_bounds_trained_sizes_too():
    from tokstat import TokstatError, sweep, train

    with pytest.raises(TokstatError, match="above the largest"):
        sweep(str(SAMPLE), "bpe", [300, 4_000_000_000], progress=False)
    with pytest.raises(TokstatError, match="vocabulary size must be in"):
        train(str(SAMPLE), "bpe", 4_000_000_000)


# ------------------------------------------------------------------------------------ links (F)

@pytest.mark.parametrize("link,needle", [("nowhere.csv", "a symbolic link to a file that does not exist (nowhere.csv)"),
                                         ("turkish_morph_data.csv", "a symbolic link that loops")])
def test_a_broken_link_in_the_data_folder_is_named(ms_folder, link, needle, capsys):
    import os

    os.symlink(link, ms_folder / "turkish_morph_data.csv")
    rc = main(["morphscore", "-t", "tiktoken:cl100k_base", "--data", str(ms_folder)])
    _one_line(rc, capsys.readouterr().err, "turkish_morph_data.csv", needle)
    # a link the run is not asked to read is left alone, and never written through
    assert main(["morphscore", "-t", "tiktoken:cl100k_base", "--data", str(ms_folder), "--languages", "eng"]) == 0
    capsys.readouterr()
    rc = main(["morphscore", "-t", "tiktoken:cl100k_base", "--data", str(ms_folder), "--languages", "eng",
               "--out", str(ms_folder / "turkish_morph_data.csv")])
    _one_line(rc, capsys.readouterr().err, "--out exists")
    assert not (ms_folder / "nowhere.csv").exists()


@pytest.mark.parametrize("layout", ["textdir", "shards"])
@pytest.mark.parametrize("link,needle", [("nowhere", "does not exist"), ("self", "loops")])
def test_a_broken_link_in_a_corpus_folder_is_named(tmp_path, layout, link, needle, capsys):
    import os

    import polars as pl

    if layout == "textdir":
        (tmp_path / "en.txt").write_text("hello\n", encoding="utf-8")
        (tmp_path / "zh.txt").write_text("你好\n", encoding="utf-8")
        bad = tmp_path / "fr.txt"
    else:
        for lang, t in (("en", "hello"), ("zh", "你好")):
            (tmp_path / lang).mkdir()
            pl.DataFrame({"text": [t] * 3}).write_parquet(tmp_path / lang / "s0.parquet")
        bad = tmp_path / "zh" / "s1.parquet"
    os.symlink(bad.name if link == "self" else "nowhere", bad)
    for argv in (["corpus", "info", str(tmp_path)], ["compare", str(tmp_path), "-t", "tiktoken:cl100k_base"]):
        rc = main(argv)
        _one_line(rc, capsys.readouterr().err, bad.name, needle)


# ---------------------------------------------------------------------------------------- minor (H)

def test_a_dictionary_encoded_text_column_is_read_by_every_pass(tmp_path):
    """Budget's columnar pass reads Arrow dictionary-encoded text as compare does: the same tokens."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tokstat import budget, compare

    texts = ["hello world", "你好，世界", "hello world", "the cat sat"] * 40
    langs = ["en", "zh", "en", "en"] * 40
    pq.write_table(pa.table({"text": pa.array(texts).dictionary_encode(), "language": langs}), tmp_path / "d.parquet")
    cmp = compare(str(tmp_path / "d.parquet"), ["tiktoken:cl100k_base"], n_boot=0)
    for exact in (False, True):
        b = budget(str(tmp_path / "d.parquet"), ["tiktoken:cl100k_base"], exact=exact, sample=1.0)
        got = {r["language"]: r["tokens"] for r in b.iter_rows(named=True) if r["language"] != "(all)"}
        assert got == dict(zip(cmp["language"], cmp["tokens"]))


def test_one_morphscore_language_in_two_files_or_twice_in_languages_is_refused(ms_folder, capsys):
    import shutil

    rc = main(["morphscore", "-t", "tiktoken:cl100k_base", "--data", str(ms_folder), "--languages", "eng,english"])
    _one_line(rc, capsys.readouterr().err, "--languages names eng 2 times")
    shutil.copy(ms_folder / "english_morph_data.csv", ms_folder / "ENGLISH_morph_data.csv")
    rc = main(["morphscore", "-t", "tiktoken:cl100k_base", "--data", str(ms_folder)])
    _one_line(rc, capsys.readouterr().err, "ENGLISH_morph_data.csv and english_morph_data.csv are both english")


def test_fit_estimator_says_when_it_fits_a_lossy_tokenizer_and_fits_one(tmp_path):
    from tok_fixtures import tiny_files

    from tokstat import TokstatError
    from tokstat.estimator import fit_estimator
    from tokstat.loaders import load_corpus

    c = load_corpus(str(SAMPLE))
    wp = f"wordpiece:{tiny_files(tmp_path)['wordpiece']}"     # ten tokens: most text is [UNK]
    with pytest.warns(UserWarning, match="loses text .*the estimator fits the counts of its lossy encoding"):
        m = fit_estimator(c, wp)
    assert set(m["lossy"]) == {"en", "zh"} and all(0 <= v < 1 for v in m["lossy"].values())
    assert fit_estimator(c, "tiktoken:cl100k_base")["lossy"] == {}
    with pytest.raises(TokstatError, match="one tokenizer's counts, not 2"):
        fit_estimator(c, ["tiktoken:cl100k_base", "tiktoken:o200k_base"])
