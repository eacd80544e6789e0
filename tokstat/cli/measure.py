"""Job 1, measure a corpus: ``corpus info``, ``compare``, ``budget``, ``groups``, ``show``,
``worst``, ``robustness``, ``inventory``, ``overlap``, ``morphscore``, ``fit-estimator``. Each
command is a thin mapping onto one function of the Python API."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import TokstatError
from ..fmt import fmt, visible
from ..io import check_outputs
from .options import (
    Group,
    _pop_corpus,
    backend_option,
    boot_seed_option,
    command,
    corpus_options,
    inputs_of,
    load,
    max_chars_option,
    mix_options,
    quiet_option,
    read_results_table,
    tokenizer_options,
    wide_option,
)
from .terminal import (
    LOSSY,
    SHOWN,
    SHOWN_WIDE,
    SORTS,
    _console,
    _lossy_of,
    _mark_lossy,
    _matrix,
    _premium_cell,
    _print,
    _print_choice,
    _print_switch,
    _signatures,
    _table,
    json_for_terminal,
    pl_rows,
)


@click.group(cls=Group)
def corpus():
    """Inspect corpora."""


@corpus.command("info")
@click.argument("spec")
@corpus_options
@click.option("--json", "as_json", is_flag=True, help="one JSON record per language instead of the table")
def corpus_info_cmd(spec, as_json, **kw):
    """Segments (or documents), empty ones, characters and bytes per language of corpus SPEC."""
    from rich.table import Table

    from ..corpus import corpus_info

    info = corpus_info(load(spec, **_pop_corpus(kw)))
    if as_json:
        click.echo(json_for_terminal(json.dumps(info.records(), ensure_ascii=False)))
        return
    from rich.text import Text

    unit = "documents" if info.kind == "monolingual" else "segments"
    t = Table(title=Text(visible(f"{info.name}: {info.segments:,} {unit} ({info.kind})")))
    for col in ("language", unit, "empty", "chars", "bytes"):
        t.add_column(col, justify="right" if col != "language" else "left")
    for r in info.records():
        t.add_row(Text(visible(r["language"])), *(f"{r[k]:,}" for k in (unit, "empty", "characters", "bytes")))
    _print(t)
    _print(Text(visible(f"languages from {info.languages_from}")))


#: compare's compact table (fits 80-100 columns) and its --wide table

@command("compare")
@click.argument("corpus_spec")
@corpus_options
@tokenizer_options()
@click.option("--pivot", default="en", show_default=True, help="language the premium is measured against")
@click.option("--out", help="write the table (.parquet, .csv or .json)")
@click.option("--segments-out", help="write per-segment counts (.parquet, .csv or .json)")
@click.option("--segments-text", is_flag=True, help="with --segments-out: also each segment's text (for tokstat worst)")
@click.option("--join", is_flag=True, help="encode each language's segments joined by a space as one text")
@click.option("--sort", "sort_by", type=click.Choice(list(SORTS)), help="order the rows by this column")
@click.option("--matrix", is_flag=True, help="a tokenizer × language table of premiums instead of one row per pair")
@click.option("--signatures", "show_signatures", is_flag=True, help="print every signature (default: one digest line)")
@click.option("--calibrate", help="monolingual corpus: a parallel corpus whose characters per unit of content give "
              "a calibrated premium")
@click.option("--format", "table_format", type=click.Choice(["table", "md", "latex"]), default="table",
              show_default=True, help="print the compact table as a terminal table, Markdown or LaTeX (booktabs)")
@click.option("--group-by", help="also the results by script, family, macroarea or resource level (comma-separated; "
              "as tokstat groups)")
@click.option("--segmenter", "segmenter_choices", multiple=True, metavar="LANG=NAME",
              help="another word segmenter for a language, repeatable: regex, icu (ICU's dictionary word break), "
                   "kiwi (Korean morphemes), default")
@mix_options("rank the tokenizers for this mix (the answer the report and cost give)")
@boot_seed_option
@click.option("--workers", type=int, help="worker processes (default: all cores); results do not depend on it")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="where the per-shard counting runs")
@click.option("--address", help="Ray cluster address for --engine ray (default: start a local instance)")
@backend_option
@click.option("--diagnostics", type=click.Choice(["auto", "exact", "sample"]), default="auto", show_default=True,
              help="monolingual files: tokens, characters and bytes are always exact (one pass); the other columns "
                   "on a seeded document sample above 64 MiB of text (auto), always (sample) or never (exact)")
@click.option("--diag-seed", type=int, default=0, show_default=True, help="seed of the diagnostic document sample")
@click.option("--baseline", metavar="TOKENIZER", help="each tokenizer's tokens relative to this one's on the same texts "
              "(a -t spec or id; added when not given with -t)")
@max_chars_option
@quiet_option
@wide_option
def compare(corpus_spec, tokenizers, pivot, out, segments_out, segments_text, join, sort_by, matrix, show_signatures,
            calibrate, table_format, group_by, segmenter_choices, boot_seed, workers, engine, address, backend,
            diagnostics, diag_seed, baseline, max_chars, quiet, mix, mix_unit, **kw):
    """Token statistics and the premium per (tokenizer, language) on CORPUS_SPEC."""
    from ..compare import compare as compare_api
    from ..io import write_tables

    if segments_text and not segments_out:
        raise TokstatError("--segments-text needs --segments-out", fix="add --segments-out segments.parquet")
    from ..groups import parse_dimensions

    dims = parse_dimensions(group_by, "--group-by") if group_by is not None else []
    chosen = _segmenter_choices(segmenter_choices)
    from .. import parse
    from ..mix import Mix

    mixd = Mix(parse.mix(mix), mix_unit) if mix else None
    c = load(corpus_spec, **_pop_corpus(kw))
    from ..mix import check_languages

    check_languages(mixd, c.languages, f"the corpus {c.name}")     # before counting: a typo fails at once
    check_outputs({"--out": (out, "table"), "--segments-out": (segments_out, "table")}, inputs=inputs_of(corpus_spec, c))
    res = compare_api(c, list(tokenizers), pivot=pivot, join=join, boot_seed=boot_seed,
                      return_segments=bool(segments_out), workers=workers, engine=engine, address=address,
                      progress=False if quiet else None, max_chars=max_chars, segments_text=segments_text,
                      calibrate=calibrate, backend=backend, segmenters=chosen, diagnostics=diagnostics,
                      diag_seed=diag_seed, baseline=baseline)
    df, segs = res if segments_out else (res, None)
    shown_cols, wide_cols = SHOWN, SHOWN_WIDE
    if baseline is not None:
        base = df["baseline"][0]
        vs = ("vs_baseline", "× baseline [95% CI]")
        shown_cols = [*SHOWN[:3], vs, *SHOWN[3:]]
        wide_cols = [*SHOWN_WIDE[:3], vs, *SHOWN_WIDE[3:]]
    shown = df.sort(sort_by, descending=SORTS[sort_by], nulls_last=True, maintain_order=True) if sort_by else df
    rows = list(shown.iter_rows(named=True))
    bad = _lossy_of(df)
    lossy = _mark_lossy(rows, bad)
    title = f"tokstat compare — {c.name}, pivot {pivot}"
    if table_format != "table":
        from ..fmt import export_table

        if matrix:
            raise TokstatError("--matrix is a terminal view", fix="drop --matrix with --format md|latex")
        click.echo(export_table(rows, shown_cols, _premium_cell, table_format,
                                caption=f"{title}; {len(set(df['signature'].to_list()))} signature(s) in the --out files"),
                   nl=False)
        _print_groups(_group_rows(df, dims, None, None), table_format, bad)
        tables = {p: t for p, t in ((out, df), (segments_out, segs)) if p}
        if tables:
            write_tables(tables)
        return
    if matrix:
        _print(_matrix(pl_rows(rows), title))
    else:
        _print(_table(title, shown_cols, rows, _premium_cell, wide_cols=wide_cols))
    if baseline is not None:
        _print_switch(df, base)
    if lossy:
        _print(f"{LOSSY} loses text: unknown tokens on over 1% of a language's characters, or a decoder that does not "
               "give the sampled texts back; its other figures are unreliable")
    if pivot is not None and df["language"].n_unique() > 2:
        from ..metrics import parity_summary

        for r in parity_summary(df).iter_rows(named=True):
            if r["premium_gini"] is not None:
                _print(f"parity across languages, {r['tokenizer']}: Gini {r['premium_gini']:.3f} (mean of ratios "
                       f"{r['premium_mean_of_ratios_gini']:.3f}), max/min {r['premium_max_over_min']:.2f}, "
                       f"worst {r['premium_worst_language']}")
    _print_groups(_group_rows(df, dims, None, None), lossy=bad)
    if mixd is not None:
        _print_choice(df, mixd)
    _signatures(df, every=show_signatures)
    tables = {p: t for p, t in ((out, df), (segments_out, segs)) if p}
    if tables:
        write_tables(tables)       # every output of the run appears together, or none does
        for p in tables:
            _print(f"wrote {p}")


@command("budget")
@click.argument("corpus_spec")
@corpus_options
@tokenizer_options()
@click.option("--sample", "sample", default="0.01", show_default=True,
              help="a fraction of the clusters (Parquet row groups, 1 MiB JSONL blocks), or a number of them")
@click.option("--seed", default=0, show_default=True, help="seed of the sample")
@click.option("--exact", is_flag=True, help="also count every document (beside the estimate)")
@click.option("--workers", type=int, help="--exact: worker processes (default: all cores)")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="--exact: where the counting runs (ray: actors read the shards themselves)")
@click.option("--address", help="Ray cluster address for --engine ray")
@click.option("--out", help="write the table (.parquet, .csv or .json)")
@click.option("--json", "as_json", is_flag=True, help="print the rows as JSON records")
@backend_option
@quiet_option
def budget_cmd(corpus_spec, tokenizers, sample, seed, exact, workers, engine, address, out, as_json, backend, quiet,
               **kw):
    """Tokens of a monolingual corpus per tokenizer and language: estimated from a cluster sample
    with a 95 % interval (no full read), or counted exactly beside it (--exact)."""
    import polars as pl

    from ..budget import budget
    from ..io import write_tables

    try:
        frac = float(sample)
    except ValueError:
        raise TokstatError(f"bad --sample {sample!r}", fix="a fraction like 0.01 or a number of clusters like 200") from None
    c = load(corpus_spec, **_pop_corpus(kw))
    check_outputs({"--out": (out, "table")}, inputs=inputs_of(corpus_spec, c))
    df = budget(c, list(tokenizers), sample=int(frac) if frac > 1 and frac.is_integer() else frac, seed=seed,
                exact=exact, engine=engine, workers=workers, address=address, progress=False if quiet else None,
                backend=backend)
    if as_json:
        click.echo(json_for_terminal(df.write_json()))
    else:
        from ..fmt import si

        def cell(r, col):
            if col == "tokens":
                if r["tokens"] is None:
                    return f"not sampled ({si(r['documents'])} documents)" if r["documents"] is not None else "not sampled"
                if r["tokens_low"] is None:
                    return f"{si(r['tokens'])} [no interval]"
                return f"{si(r['tokens'])} [{si(r['tokens_low'])}–{si(r['tokens_high'])}]" if r["tokens_low"] != \
                    r["tokens_high"] else f"{si(r['tokens'])} (exact)"
            if col == "bytes":
                return "–" if r["bytes"] is None else f"{si(r['bytes'])}B"
            if col in ("token_share", "byte_share"):
                return "–" if r[col] is None else f"{r[col]:.1%}"
            if col == "exact":
                return "–" if r["exact"] is None else si(r["exact"])
            return fmt(r[col], col)

        cols = [("tokenizer", "tokenizer"), ("language", "lang"), ("bytes", "bytes"), ("tokens", "tokens [95% CI]"),
                ("token_share", "of tokens"), ("byte_share", "of bytes")] + ([("exact", "exact")] if exact else [])
        _print(_table(f"tokstat budget — {c.name}", cols, df.iter_rows(named=True), cell))
        _print(f"estimator: {df['estimator'][0]}")
        from ..budget import TOTAL

        for r in df.filter(pl.col("language") == TOTAL).iter_rows(named=True):
            _print(f"total for {r['tokenizer']}: {cell(r, 'tokens')} tokens over every language"
                   + (f"; counted: {si(r['exact'])}" if r["exact"] is not None else ""))
    if out:
        write_tables({out: df})
        if not as_json:
            _print(f"wrote {out}")



@command("inventory")
@tokenizer_options()
@click.option("--out", help="write the table (.parquet, .csv or .json)")
@click.option("--json", "as_json", is_flag=True, help="print the rows as JSON records")
def inventory_cmd(tokenizers, out, as_json):
    """What each vocabulary holds: its entries by script, digits, punctuation, whitespace and partial
    UTF-8 (bytes of a character), and the shares of space-prefixed entries and of entries with whitespace."""
    from ..inventory import inventory
    from ..io import write_tables

    check_outputs({"--out": (out, "table")})
    df = inventory(list(tokenizers))
    if as_json:
        click.echo(json_for_terminal(df.write_json()))
    else:
        ids = list(dict.fromkeys(df["tokenizer"].to_list()))
        rows = []
        for c in dict.fromkeys(df["class"].to_list()):
            part = df.filter(df["class"] == c)
            if part["count"].sum() == 0:
                continue
            rows.append({"class": c, **{i: part.filter(part["tokenizer"] == i)["share"][0] for i in ids}})
        _print(_table("tokstat inventory — share of each vocabulary's entries", [("class", "entries")] +
                      [(i, i) for i in ids], rows, lambda r, c: r[c] if c == "class" else f"{r[c]:.1%}", shorten=""))
    if out:
        write_tables({out: df})
        _print(f"wrote {out}")


@command("morphscore")
@tokenizer_options()
@click.option("--data", "data_dir", help="folder of MorphScore's *_morph_data.csv (default: $TOKSTAT_DATA/morphscore)")
@click.option("--compat", is_flag=True, help="the reference code's rule (tokens decoded one by one; a byte-level token "
              "cut inside a character scores 0) instead of byte-exact boundaries")
@click.option("--languages", help="comma-separated ISO 639-3 codes (default: every file)")
@click.option("--out", help="write the table (.parquet, .csv or .json)")
@click.option("--json", "as_json", is_flag=True, help="print the rows as JSON records")
def morphscore_cmd(tokenizers, data_dir, compat, languages, out, as_json):
    """MorphScore (Arnett & Bergen 2025): the share of words whose token boundaries include the gold
    morpheme boundary (words left whole excluded), byte-exact by default, with precision and F1."""
    from .. import parse
    from ..io import write_tables
    from ..morphscore import morphscore

    check_outputs({"--out": (out, "table")})
    df = morphscore(list(tokenizers), data_dir, compat=compat, languages=parse.languages(languages, "--languages"))
    if as_json:
        click.echo(json_for_terminal(df.write_json()))
    else:
        rule = "the reference code's rule (--compat)" if compat else "byte-exact boundaries"
        _print(_table(f"tokstat morphscore — {rule}", [("tokenizer", "tokenizer"), ("language", "lang"),
                      ("morphscore", "MorphScore"), ("precision", "precision"), ("f1", "F1"), ("items", "items"),
                      ("whole", "whole"), ("inconsistent", "inconsistent")], df.iter_rows(named=True),
                      lambda r, c: "–" if r[c] is None else f"{r[c]:.4f}" if c in ("morphscore", "precision", "f1")
                      else f"{r[c]:,}" if isinstance(r[c], int) else visible(str(r[c]))))
        bad = df.filter(df["inconsistent"] > 0)
        if bad.height:
            _print(f"{', '.join(dict.fromkeys(bad['name'].to_list()))}: items whose parts do not spell the word "
                   + ("are scored 0, as the reference does" if compat else "are left out (column inconsistent)"))
    if out:
        write_tables({out: df})
        _print(f"wrote {out}")


@command("fit-estimator")
@click.argument("corpus_spec")
@corpus_options
@click.option("-t", "--tokenizer", "tokenizer_spec", required=True, help="the tokenizer whose counts are estimated (one spec)")
@click.option("--heldout", default=0.2, show_default=True, help="share of segments held out to measure the error")
@click.option("--seed", default=0, show_default=True, help="split seed")
@click.option("--out", required=True, help="write the model (.json: weights per language and script, held-out errors)")
def fit_estimator_cmd(corpus_spec, tokenizer_spec, heldout, seed, out, **kw):
    """Fit a fast token estimator, tokens ≈ Σ weight × characters per script (+ an intercept if it
    helps), per language and, for languages it never saw, per script, on a train split; report its
    error per language on the held-out documents (beside characters / 4) and with languages left
    out. For estimates, not billing."""
    from ..estimator import fit_estimator
    from ..io import write_bytes

    c = load(corpus_spec, **_pop_corpus(kw))
    check_outputs({"--out": (out, "json")}, inputs=inputs_of(corpus_spec, c))
    model = fit_estimator(c, tokenizer_spec, heldout=heldout, seed=seed)
    w = ", ".join(f"{s} {v:.3f}" for s, v in sorted(model["weights"].items(), key=lambda kv: -kv[1]))
    _print(f"{model['tokenizer']}: {len(model['languages'])} languages with their own weights; for any other, tokens "
           f"per character by class (the median language): {visible(w)}; a script without a weight counts as its "
           "UTF-8 bytes + 1 per run (an upper bound)" + (f"; + {model['intercept']:.2f} per document" if model["intercept"] else ""))

    def pct(x):
        return "–" if x is None else f"{x:+.1%}" if x < 0 or x > 0 else "0.0%"

    def cell(r, c):
        if c == "unseen_total_rel_error":
            return pct(r[c]) + (" (script unseen)" if r.get("unseen_script") else "")
        return pct(r[c]) if "total" in c else f"{r[c]:.1%}" if "rel" in c and r[c] is not None \
            else f"{r[c]:,}" if isinstance(r[c], int) else visible(str(r[c]))
    _print(_table(f"held-out error ({model['fitted_on']['split']}, {sum(r['documents'] for r in model['heldout']):,} "
                  "documents)", [("language", "lang"), ("documents", "docs"), ("median_rel_error", "median |err|/doc"),
                                 ("p95_rel_error", "p95 |err|/doc"), ("total_rel_error", "total err"),
                                 ("unseen_total_rel_error", "total err, language left out"),
                                 ("chars4_total_rel_error", "chars/4 total err")], model["heldout"], cell, shorten=""))
    lo = model["leave_languages_out"]
    if lo["by_script"]:
        _print(_table(f"languages left out ({lo['folds']} groups), by script: median |total err| "
                      f"{lo['median_abs_total_rel_error']:.1%}"
                      + (f", {lo['median_abs_total_rel_error_seen_scripts']:.1%} where another language writes the script"
                         if lo["median_abs_total_rel_error_seen_scripts"] is not None else ""),
                      [("script", "script"), ("languages", "languages"), ("median_total_rel_error", "median"),
                       ("lowest_total_rel_error", "lowest"), ("highest_total_rel_error", "highest")], lo["by_script"],
                      lambda r, c: pct(r[c]) if "total" in c else visible(str(r[c])) + (
                          " (unseen)" if c == "script" and r["script_unseen"] else ""), shorten=""))
    write_bytes(out, (json.dumps(model, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    _print(f"wrote {out} (estimates, not billing; docs/estimator.md has the schema and reference implementations)")


@command("overlap")
@tokenizer_options()
@click.option("--out", help="write the table (.parquet, .csv or .json)")
@click.option("--png", help="write a heatmap of the coverage (PNG)")
@click.option("--json", "as_json", is_flag=True, help="print the rows as JSON records")
def overlap_cmd(tokenizers, out, png, as_json):
    """How much vocabularies share, compared on the bytes each entry stands for: Jaccard, and the
    share of A's entries that B also has (coverage, asymmetric)."""
    from ..inventory import overlap, overlap_png
    from ..io import table_bytes, write_outputs

    if len(tokenizers) < 2:
        raise TokstatError("overlap compares two or more tokenizers", fix="pass -t A -t B")
    check_outputs({"--out": (out, "table"), "--png": (png, "png")})
    df = overlap(list(tokenizers))
    if as_json:
        click.echo(json_for_terminal(df.write_json()))
    else:
        rows = [r for r in df.iter_rows(named=True) if r["a"] != r["b"]]
        _print(_table("tokstat overlap — entries compared as bytes", [
            ("a", "A"), ("b", "B"), ("a_entries", "A entries"), ("shared", "shared"), ("jaccard", "Jaccard"),
            ("coverage", "of A in B")], rows,
            lambda r, c: f"{r[c]:.1%}" if c in ("jaccard", "coverage") else (f"{r[c]:,}" if isinstance(r[c], int) else r[c]),
            shorten=""))
    outputs = {}
    if out:
        outputs[out] = table_bytes(df, Path(out).suffix)
    if png:
        outputs[png] = overlap_png(df)
    if outputs:
        write_outputs(outputs)
        for p in outputs:
            _print(f"wrote {p}")


def _segmenter_choices(items) -> dict[str, str]:
    """``--segmenter LANG=NAME`` options as a dict (codes normalised; a language twice is an error)."""
    from ..langs import normalize_lang
    from ..segmenters import CHOICES, check_choice

    out: dict[str, str] = {}
    for item in items:
        lang, eq, name = item.partition("=")
        if not eq or not lang.strip() or not name.strip():
            raise TokstatError(f"--segmenter {item!r} is not LANG=NAME", fix=f"e.g. --segmenter ko=kiwi ({', '.join(CHOICES)})")
        code = normalize_lang(lang.strip())
        if code in out:
            raise TokstatError(f"--segmenter names {code} twice", fix="give each language one segmenter")
        check_choice(code, name.strip())
        out[code] = name.strip()
    return out


def _group_rows(df, dims: list[str], value, groups_file) -> list:
    """The group_summary tables of ``dims`` (``custom`` needs ``groups_file``)."""
    from ..groups import group_summary, read_groups

    if "custom" in dims and groups_file is None:
        raise TokstatError("--by custom needs --groups FILE", fix="pass --groups with language,group lines")
    groups = read_groups(groups_file) if groups_file else None
    return [group_summary(df, by, value=value, groups=groups) for by in dims]


GROUP_SHOWN = [("tokenizer", "tokenizer"), ("group", "group"), ("n_languages", "n"), ("languages", "languages"),
               ("geo_mean", "geo. mean"), ("median", "median"), ("min", "min"), ("max", "max"),
               ("worst_language", "worst")]


def _group_cell(r: dict, c: str) -> str:
    v = r[c]
    return f"{v:.3f}" if isinstance(v, float) else ("–" if v is None else str(v))


def _print_groups(tables: list, table_format: str = "table", lossy: set[str] = frozenset()) -> None:
    """The grouped tables; the rows of a tokenizer that loses text (``lossy``) marked as in compare."""
    shown = False
    for g in tables:
        if not g.height:
            continue
        title = f"by {g['dimension'][0]} — {g['value'][0]}, geometric mean over each group's languages"
        rows = list(g.iter_rows(named=True))
        shown |= _mark_lossy(rows, lossy)
        if table_format != "table":
            from ..fmt import export_table

            click.echo(export_table(rows, GROUP_SHOWN, _group_cell, table_format, caption=title), nl=False)
        else:
            _print(_table(title, GROUP_SHOWN, rows, _group_cell))
    if shown and table_format == "table":
        _print(f"{LOSSY} loses text (tokstat compare says where): its premiums are not comparable")


@command("groups")
@click.argument("results")
@click.option("--by", default="script,family,resource", show_default=True,
              help="comma-separated: script, family, macroarea, resource (CLDR coverage level), custom (--groups)")
@click.option("--value", help="the column summarised (default: premium, or tokens_per_byte without one)")
@click.option("--groups", "groups_file", help="CSV/TSV with language and group columns: your own grouping (--by custom)")
@click.option("--out", help="write every grouped table as one table (.parquet, .csv or .json)")
@click.option("--png", help="write the Lorenz curve of the premiums (PNG)")
@click.option("--format", "table_format", type=click.Choice(["table", "md", "latex"]), default="table", show_default=True,
              help="print the tables as terminal tables, Markdown or LaTeX")
def groups_cmd(results, by, value, groups_file, out, png, table_format):
    """A compare --out table by script, language family, macroarea and resource level (geometric
    mean, median, extremes per group), with the Gini coefficient and Lorenz curve of the premiums."""
    import polars as pl

    from ..groups import lorenz_table, parse_dimensions
    from ..io import figure_bytes, table_bytes, write_outputs

    check_outputs({"--out": (out, "table"), "--png": (png, "png")}, inputs=[results, *([groups_file] if groups_file else [])])
    df = read_results_table(results, "tokstat compare --out")
    missing = {"tokenizer", "language"} - set(df.columns)
    if missing:
        raise TokstatError(f"no {', '.join(sorted(missing))} column: not a compare table", path=results,
                           fix="pass a file written by tokstat compare --out")
    tables = _group_rows(df, parse_dimensions(by, "--by", custom=True), value, groups_file)
    lossy = _lossy_of(df)
    _print_groups(tables, table_format, lossy)
    has_premium = "premium" in df.columns and df["premium"].drop_nulls().len() > 0
    lz = lorenz_table(df, value="premium") if has_premium else None
    if lz is not None and lz.height and table_format == "table":
        for (tok,), g in lz.group_by(["tokenizer"], maintain_order=True):
            _print(f"Lorenz curve of the premiums, {tok}{' ' + LOSSY if tok in lossy else ''}: Gini {g['gini'][0]:.3f} "
                   f"over {g.height} languages")
    if png and lz is None:
        raise TokstatError("--png draws the premiums' Lorenz curve; this table has no premium",
                           fix="run compare on a parallel corpus with a --pivot, or drop --png")
    outputs = {}
    if out:
        outputs[out] = table_bytes(pl.concat(tables, how="vertical"), Path(out).suffix)
    if png:
        from ..report.charts import lorenz_curves

        outputs[png] = figure_bytes(lorenz_curves(lz))
    if outputs:
        write_outputs(outputs)
        for p in outputs:
            _print(f"wrote {p}")



@command("show")
@click.argument("text")
@tokenizer_options()
@click.option("--ids", is_flag=True, help="also print the token ids")
@click.option("--html", "html_out", help="also write the view as a page (.html): tokenizers side by side, id and bytes on hover")
@click.option("--normalize", type=click.Choice(["nfc", "nfkc", "none"]), default="nfc", show_default=True,
              help="normalisation of TEXT, as for counting")
def show_cmd(text, tokenizers, ids, html_out, normalize):
    """TEXT split into each tokenizer's tokens: one colour per token id, characters cut across tokens
    in red (as bytes), byte-fallback tokens in magenta, unknown tokens white on red."""
    from ..io import write_bytes
    from ..show import html_page, rich_lines, show

    check_outputs({"--html": (html_out, "html")}, inputs=[])
    res = show(text, list(tokenizers), normalize=normalize)
    console = _console()
    for line in rich_lines(text, res, ids=ids, plain=console.color_system is None):
        console.print(line)
    if html_out:
        write_bytes(html_out, html_page(text, res, ids=ids))
        _print(f"wrote {html_out}")


@command("robustness")
@click.argument("corpus_spec")
@corpus_options
@tokenizer_options()
@click.option("--max-segments", default=2000, show_default=True, help="segments read")
@click.option("--out", help="write the table (.parquet, .csv or .json)")
def robustness_cmd(corpus_spec, tokenizers, max_segments, out, **kw):
    """How much each tokenizer's count moves under NFKC, full-width → half-width and, for Chinese,
    the other script (the same content, written differently)."""
    from ..io import write_tables
    from ..show import robustness

    c = load(corpus_spec, **_pop_corpus(kw))
    check_outputs({"--out": (out, "table")}, inputs=inputs_of(corpus_spec, c))
    df = robustness(c, list(tokenizers), max_segments=max_segments)
    cols = [(k, k) for k in df.columns]
    _print(_table(f"tokstat robustness — {c.name}", cols, df.iter_rows(named=True),
                  lambda r, k: f"{r[k]:.3f}" if isinstance(r[k], float) else f"{r[k]:,}" if isinstance(r[k], int) else str(r[k])))
    if out:
        write_tables({out: df})
        _print(f"wrote {out}")


@command("worst")
@click.argument("segments_file")
@click.option("-t", "--tokenizer", help="tokenizer id in the table (default: the first)")
@click.option("--language", help="language to rank (default: the first that is not the pivot)")
@click.option("--pivot", default="en", show_default=True)
@click.option("--by", type=click.Choice(["premium", "tokens_per_char"]), default="premium", show_default=True)
@click.option("-n", "n", default=20, show_default=True, help="how many segments")
@click.option("--out", help="write the table (.parquet, .csv or .json)")
def worst_cmd(segments_file, tokenizer, language, pivot, by, n, out):
    """The segments of a compare --segments-out file where a tokenizer does worst against the pivot."""
    from ..io import write_tables
    from ..show import worst_of

    check_outputs({"--out": (out, "table")}, inputs=[segments_file])
    df, tok, lang = worst_of(read_results_table(segments_file, "tokstat compare --segments-out"), tokenizer=tokenizer,
                             language=language, pivot=pivot, by=by, n=n)
    cols = [(c, c) for c in df.columns]
    against = f" against {pivot}" if by == "premium" else ""
    _print(_table(f"tokstat worst — {tok} on {lang}, by {by}{against}", cols, df.iter_rows(named=True),
                  lambda r, c: f"{r[c]:.3f}" if isinstance(r[c], float) else str(r[c]), shorten="segment"))
    if out:
        write_tables({out: df})
        _print(f"wrote {out}")


#: the job, as ``tokstat --help`` heads its commands
JOB = "Measure a corpus"
#: the commands of this job (registered on the ``tokstat`` group by :mod:`tokstat.cli`)
COMMANDS = [corpus, compare, budget_cmd, groups_cmd, show_cmd, worst_cmd, robustness_cmd, inventory_cmd, overlap_cmd,
            morphscore_cmd, fit_estimator_cmd]
