"""Command line: each command maps one-to-one onto a function of the Python API; ``main()`` only dispatches.

Options are declared once and shared: every command that reads a corpus takes the same corpus
options (:func:`corpus_options`), every command that writes files checks all its outputs before any
work starts (:func:`check_outputs`), and option values are parsed by :mod:`tokstat.parse`. Nothing
heavy is imported until a command runs, so ``tokstat --help`` is instant.
"""

from __future__ import annotations

import json
import shlex
import signal
import sys
import warnings
from pathlib import Path

import click

from .errors import TokstatError
from .fmt import fmt, visible, with_interval
from .io import check_outputs

ALGOS = ["bpe", "byte-bpe", "wordpiece", "unigram", "spm-bpe", "spm-unigram", "parity-bpe"]


#: width of the terminal output when it is not a terminal (a pipe, a file) and COLUMNS is unset
PIPE_WIDTH = 100
WIDE = {"on": False}      # --wide: every column, lines as long as they need


def width() -> int:
    """The width tables are fitted to: ``COLUMNS`` if set, else the terminal's, else 100."""
    import os
    import shutil

    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    return shutil.get_terminal_size((PIPE_WIDTH, 24)).columns if sys.stdout.isatty() else PIPE_WIDTH


def _console():
    from rich.console import Console

    return Console(width=100_000 if WIDE["on"] else width(), soft_wrap=WIDE["on"])


def json_for_terminal(text: str) -> str:
    """JSON with the C1 controls and bidi overrides a JSON writer may leave raw written as ``\\u`` escapes
    (still the same JSON value).

    >>> json_for_terminal('["a\u009b"]')
    '["a\\\\u009b"]'
    """
    import re

    return re.sub(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]", lambda m: f"\\u{ord(m.group()):04x}", text)


def read_results_table(path, what: str):
    """A result table given to a command, read and checked as the report reads it: columns of the
    types tokstat writes, rates above zero (one error naming the file otherwise)."""
    from .io import read_table
    from .metrics import check_rates
    from .report.read import check_types

    df = check_types(read_table(path, what), path)
    check_rates(df, path)
    return df


def _print(*parts, **kw) -> None:
    """Print to the terminal: strings as plain text (never rich markup) with control characters
    shown as escapes (:func:`~tokstat.fmt.visible`), wrapped by :func:`wrap_prose`; tables and
    texts as they are."""
    from rich.text import Text

    if parts and all(isinstance(p, str) for p in parts) and not WIDE["on"]:
        text = wrap_prose(" ".join(visible(p) for p in parts), width())
        _console().print(Text(text), soft_wrap=True, **kw)
        return
    _console().print(*[Text(visible(p)) if isinstance(p, str) else p for p in parts], **kw)


#: marks that belong to the word after them: never left alone at the end or start of a line
GLYPHS = ("⚠", "✓", "✗", "→", "×", "≈", "≤", "≥")


def wrap_prose(text: str, width: int) -> str:
    """``text`` wrapped at ``width`` columns between words only: a glyph stays with the word after
    it, a number with its unit sign (``1.57×``), an interval in brackets whole (``[1.54–1.61]``);
    a word longer than the line is never cut.

    >>> print(wrap_prose("the ⚠ mark: ⚠ loses text", 14))
    the ⚠ mark:
    ⚠ loses text
    """
    from rich.cells import cell_len

    glue = "\x00"        # visible() has escaped any NUL of the data
    for g in GLYPHS:
        text = text.replace(f"{g} ", f"{g}{glue}")
    out = []
    for para in text.split("\n"):
        line = ""
        for w in para.split(" "):
            cand = f"{line} {w}" if line else w
            if line and cell_len(cand.replace(glue, " ")) > width:
                out.append(line)
                line = w
            else:
                line = cand
        out.append(line)
    return "\n".join(x.replace(glue, " ") for x in out)


# ---------------------------------------------------------------- shared options

def _stack(*decorators):
    def apply(f):
        for d in reversed(decorators):
            f = d(f)
        return f
    return apply


def corpus_options(f):
    """Options of every command that reads a corpus: how its files are read and which languages."""
    return _stack(
        click.option("--columns", help="languages of the columns in order (en,zh,_ skips one) or LANG=COLUMN pairs"),
        click.option("--split", "data_split", help="dataset split to read (hf: corpora; default train)"),
        click.option("--encoding-errors", type=click.Choice(["strict", "replace"]), default="strict", show_default=True,
                     help="invalid UTF-8: stop with the line (strict) or read it as U+FFFD (replace)"),
        click.option("--source-lang", default="en", show_default=True, help="language of gettext msgids"),
        click.option("--quoting", type=click.Choice(["auto", "csv", "none"]), default="auto", show_default=True,
                     help="TSV quoting: csv (spreadsheet-style), none (quotes are text), auto (as the file shows)"),
        click.option("--normalize", type=click.Choice(["nfc", "nfkc", "none"]), default="nfc", show_default=True,
                     help="Unicode normalisation of every text before counting (none: the raw text)"),
        click.option("--strip", is_flag=True, help="strip each segment's leading and trailing whitespace before counting "
                     "(as FLORES+ and TokSuite read FLORES-200; named in the signature)"),
        click.option("--languages", help="comma-separated subset of the corpus's languages"),
        click.option("--kind", "corpus_kind", type=click.Choice(["auto", "parallel", "monolingual"]), default="auto",
                     show_default=True, help="parallel (aligned segments) or monolingual (documents, each in one "
                     "language); auto: monolingual for a table with text and language columns or per-language folders"),
        click.option("--text-col", help="monolingual tables: the text column (default text)"),
        click.option("--lang-col", help="monolingual tables: the language column (default language or lang; "
                     "FineWeb-2's language_script is read with it)"),
        click.option("--lang", "doc_lang", help="monolingual: one language for every document (a file or shards "
                     "without a language column)"),
        click.option("--lang-id", type=click.Choice(["off", "doc", "spans"]), default="off", show_default=True,
                     help="monolingual: identify each document's language (doc), or each span of a code-switched "
                     "document (spans); low confidence is und (needs tokstat[langid])"),
    )(f)


def tokenizer_options(required: bool = True):
    return click.option("-t", "--tokenizer", "tokenizers", multiple=True, required=required,
                        help="tokenizer spec, repeatable: tiktoken:NAME, hf:PATH, wordpiece:PATH, spm:PATH, ids:TABLE?vocab=PATH, "
                        "train:ALGO:SIZE")


def split_options(f):
    """The train/held-out split of commands that train a tokenizer on the corpus."""
    return _stack(
        click.option("--heldout", default=0.1, show_default=True, help="share of segments held out for evaluation"),
        click.option("--seed", default=0, show_default=True, help="split seed (also seeds --mix resampling)"),
    )(f)


def boot_seed_option(f):
    return click.option("--boot-seed", default=0, show_default=True, help="seed of the bootstrap confidence intervals")(f)


def max_chars_option(f):
    return click.option("--max-chars", type=int, default=1_000_000, show_default=True,
                        help="longest text of a segment that is counted; a longer one is an error naming it")(f)


def quiet_option(f):
    return click.option("--quiet", is_flag=True, help="no progress bar")(f)


def _set_wide(ctx, param, value):
    WIDE["on"] = bool(value)
    return value


def parity_option(f):
    return click.option("--parity", "parity", help="parity-aware BPE settings, KEY=VALUE,...: variant=base|window, "
                        "global_merges=N, window_size=N, alpha=F, balance=dev|bytes (default: base, 0, 100, 2, dev)")(f)


def _parity(value: str | None) -> dict | None:
    """``--parity variant=window,balance=bytes`` -> a dict (checked by :func:`tokstat.train.parity_options`)."""
    if not value:
        return None
    from .train import parity_options

    out = {}
    for part in value.split(","):
        k, eq, v = part.partition("=")
        if not eq or not k.strip():
            raise TokstatError(f"bad --parity {value!r}: {part!r} is not KEY=VALUE", fix="e.g. --parity variant=window,global_merges=500")
        out[k.strip()] = v.strip()
    parity_options(out)
    return out


def sample_bytes_option(f):
    return click.option("--sample-bytes", type=float, help="train on a seeded sample of about this many bytes of "
                        "documents (bounded memory on pretraining-sized data; the split's seed draws it)")(f)


def mix_options(what: str):
    """``--mix`` and ``--mix-unit``: one definition of a language mix for every command (tokstat.mix)."""
    return _stack(
        click.option("--mix", help=f"{what}: language shares summing to 1, e.g. zh=0.4,en=0.6 (default: equal content)"),
        click.option("--mix-unit", type=click.Choice(["content", "chars", "bytes", "tokens"]), default="content",
                     show_default=True, help="what the --mix shares are shares of: the same meaning (content, "
                     "as parallel text counts it), characters, UTF-8 bytes or tokens"),
    )


def wide_option(f):
    return click.option("--wide", is_flag=True, expose_value=False, callback=_set_wide, is_eager=True,
                        help="every column, lines as long as they need (default: a table that fits the terminal)")(f)


def load(spec: str, *, columns=None, data_split=None, encoding_errors="strict", source_lang="en", quoting="auto",
         normalize="nfc", languages=None, corpus_kind="auto", text_col=None, lang_col=None, doc_lang=None,
         lang_id="off", strip=False):
    """The corpus of a command's corpus options (its languages selected)."""
    from . import parse
    from .loaders import load_corpus

    c = load_corpus(spec, columns=parse.columns(columns), split=data_split, encoding_errors=encoding_errors,
                    source_lang=source_lang, quoting=quoting, normalize=normalize, kind=corpus_kind,
                    text_col=text_col, lang_col=lang_col, lang=doc_lang, lang_id=lang_id, strip=strip)
    langs = parse.languages(languages)
    return c.select(langs) if langs else c


def inputs_of(spec: str, corpus) -> list[Path]:
    """Files a run reads (an output must never be one of them)."""
    return [*corpus.sources, *([Path(spec)] if Path(spec).exists() else [])]


def _pop_corpus(kw: dict) -> dict:
    return {k: kw.pop(k) for k in ("columns", "data_split", "encoding_errors", "source_lang", "quoting", "normalize",
                                   "languages", "corpus_kind", "text_col", "lang_col", "doc_lang", "lang_id", "strip")}


# ---------------------------------------------------------------- every command: ranges and inputs

#: the options that name what a command writes; every other option that names a file names an input
OUTPUT_PARAMS = ("out", "segments_out", "plot", "png", "html_out")


def paths_named(value) -> list[str]:
    """The existing files and folders an option's value names: the value itself, a tokenizer
    spec's target (``hf:DIR/tokenizer.json``, ``ids:TABLE``) and its ``?key=PATH`` options.

    >>> paths_named(("ids:" + __file__ + "?vocab=/nonexistent", 3)) == [__file__]
    True
    """
    import os
    import re

    out: list[str] = []
    for v in value if isinstance(value, (tuple, list)) else [value]:
        if not isinstance(v, str) or not v:
            continue
        head, _, query = v.partition("?")
        cands = [v, head]
        m = re.match(r"^[A-Za-z][\w-]*:(.+)$", head)
        if m:
            cands.append(m.group(1))
        cands += [kv.partition("=")[2] for kv in query.split("&") if kv.partition("=")[2]]
        out += [c for c in cands if os.path.exists(c)]
    return list(dict.fromkeys(out))


class Command(click.Command):
    """A tokstat command: every numeric option is range-checked (:mod:`tokstat.ranges`) before
    anything runs, and the run keeps one record of its inputs (:func:`tokstat.io.run_scope`) that
    starts with every file or folder its options name: no output may replace one of them, nor
    anything the run opens later."""

    def invoke(self, ctx):
        from . import ranges
        from .io import note_input, run_scope

        for prm in self.params:
            if isinstance(prm.type, (click.types.IntParamType, click.types.FloatParamType)):
                ranges.check(prm.opts[0] if prm.opts else prm.name, ctx.params.get(prm.name))
        with run_scope():
            for name, value in ctx.params.items():
                if name not in OUTPUT_PARAMS:
                    for path in paths_named(value):
                        note_input(path, content=False)
            return super().invoke(ctx)


class Group(click.Group):
    command_class = Command


Group.group_class = Group


# ---------------------------------------------------------------- commands

@click.group(cls=Group)
@click.version_option(package_name="tokstat")
def cli():
    """tokstat: token statistics, language premiums and GPU cost per language."""


@cli.group()
def corpus():
    """Inspect corpora."""


@corpus.command("info")
@click.argument("spec")
@corpus_options
@click.option("--json", "as_json", is_flag=True, help="one JSON record per language instead of the table")
def corpus_info_cmd(spec, as_json, **kw):
    """Segments (or documents), empty ones, characters and bytes per language of corpus SPEC."""
    from rich.table import Table

    from .corpus import corpus_info

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
SHOWN = [("tokenizer", "tokenizer"), ("language", "lang"), ("premium", "premium [95% CI]"),
         ("tokens_per_char", "tok/char"), ("tokens_per_word", "tok/word"), ("split_char_rate", "split"),
         ("unk_rate", "unk"), ("vocab_size", "vocab")]
#: compare --sort: column -> descending
SORTS = {"premium": True, "tokens_per_char": True, "tokens_per_word": True, "unk_rate": True, "vocab_size": False,
         "tokenizer": False, "language": False}
LOSSY = "⚠"
SHOWN_WIDE = [("tokenizer", "tokenizer"), ("language", "lang"), ("tokens", "tokens"), ("tokens_per_char", "tok/char"),
              ("bytes_per_token", "bytes/tok"), ("tokens_per_word", "tok/word"), ("continued_word_rate", "cont.words"),
              ("split_char_rate", "split chars"), ("unk_rate", "unk"), ("roundtrip_rate", "round-trip"),
              ("boundary_f1", "bound.F1"), ("renyi_efficiency", "Rényi"), ("shannon_entropy", "H bits"),
              ("type_token_ratio", "TTR"), ("bits_per_byte", "bits/byte"), ("premium", "premium [95% CI]"),
              ("premium_mean_of_ratios", "mean of ratios [95% CI]"), ("calibration_transfer", "transfer"), ("rtc", "RTC")]


def _premium_cell(r, c):
    """A cell, the premiums with their intervals beside them; a swept vocabulary the corpus could
    not fill says the size asked for (``8,876 (asked 16,000)``)."""
    if c == "vocab_size" and r.get("requested_size") and r.get("vocab_size") and r["vocab_size"] < r["requested_size"]:
        return f"{r['vocab_size']:,} (asked {r['requested_size']:,})"
    if c == "premium":
        return with_interval(r.get("premium"), r.get("premium_ci_low"), r.get("premium_ci_high"))
    if c == "premium_mean_of_ratios":
        return with_interval(r[c], r.get("premium_mor_ci_low"), r.get("premium_mor_ci_high"))
    if c == "vs_baseline":
        return with_interval(r.get(c), r.get("vs_baseline_ci_low"), r.get("vs_baseline_ci_high"), c)
    return fmt(r.get(c), c)


TEXT_COLUMNS = {"text", "pivot_text", "not_recommended_because", "volume", "mfu_source", "price_source"}
LEFT_COLUMNS = {"tokenizer", "language", "segment", "variant", "tokenizer_family", "approach"} | TEXT_COLUMNS


def _table(title: str, cols: list[tuple[str, str]], rows, cell=None, *, wide_cols=None, shorten: str = "tokenizer"):
    """A table that fits the terminal (:func:`width`): columns of ``cols`` (``wide_cols`` with
    ``--wide``); ids in the ``shorten`` column are shortened *from the left* (``…cl100k_base``) as
    far as needed, with a legend under the table, never cut to ``…``; text columns wrap; if it still
    does not fit, the last columns are left out and the caption says so. Cells are
    :class:`rich.text.Text`: names such as ``bert[lower]`` are never read as markup."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from .fmt import short_ids

    rows = list(rows)
    cols = list(wide_cols if WIDE["on"] and wide_cols else cols)
    cells = [{c: cell(r, c) if cell else fmt(r[c], c) for c, _ in cols} for r in rows]
    w = width()
    natural = {c: max([len(h)] + [len(x[c]) for x in cells]) for c, h in cols}
    legend: dict[str, str] = {}
    left_out: list[str] = []

    def total(cs):
        return sum(min(natural[c], 24) if c in TEXT_COLUMNS else natural[c] for c, _ in cs) + 2 * len(cs)

    if not WIDE["on"]:
        if total(cols) > w and any(c == shorten for c, _ in cols):
            room = max(12, natural[shorten] - (total(cols) - w))
            names = short_ids([x[shorten] for x in cells], room)
            for x in cells:
                if names[x[shorten]] != x[shorten]:
                    legend[names[x[shorten]]] = x[shorten]
                x[shorten] = names[x[shorten]]
            natural[shorten] = max([len(dict(cols)[shorten])] + [len(x[shorten]) for x in cells])
        while total(cols) > w and len(cols) > 2:
            left_out.append(cols.pop()[1])
    caption = f"{len(left_out)} more column(s) ({', '.join(reversed(left_out))}): --wide" if left_out else None
    t = Table(title=Text(visible(title)), caption=Text(caption) if caption else None, box=box.SIMPLE_HEAD, padding=(0, 1),
              pad_edge=False, collapse_padding=True)
    for c, head in cols:
        t.add_column(Text(head), justify="left" if c in LEFT_COLUMNS else "right",
                     no_wrap=c not in TEXT_COLUMNS, overflow="fold")
    for x in cells:
        t.add_row(*[Text(visible(x[c])) for c, _ in cols])
    if not legend:
        return t
    return Group(t, *[Text(visible(f"  {k} = {v}"), style="dim") for k, v in legend.items()])


def _signatures(df, every: bool = True) -> None:
    """Every signature (soft-wrapped: one line however narrow the terminal, so that it copies whole),
    or with ``every=False`` one digest line (the signatures are in every --out file)."""
    from rich.text import Text

    from .parse import corpus_of

    sigs = list(dict.fromkeys(df["signature"].to_list()))
    if every:
        for sig in sigs:
            _print(Text(visible(sig), style="dim"), soft_wrap=True)
        return
    corpora = ", ".join(dict.fromkeys(c for c in map(corpus_of, sigs) if c))
    _print(Text(visible(f"{len(sigs)} signature(s), corpus {corpora}: in the --out files; --signatures prints them"),
                style="dim"))


def pl_rows(rows: list[dict]):
    import polars as pl

    return pl.DataFrame(rows, infer_schema_length=None)


def _mark_lossy(rows: list[dict], lossy: set[str]) -> bool:
    """Mark in the tokenizer cell the rows of the tokenizers in ``lossy`` (those that lose text:
    :func:`_lossy_of`, the one rule); whether any row was marked."""
    marked = False
    for r in rows:
        if r["tokenizer"] in lossy:
            r["tokenizer"] = f"{r['tokenizer']} {LOSSY}"
            marked = True
    return marked


def _print_choice(df, mix) -> None:
    """``compare --mix``: the tokenizers ranked for the mix with their totals, and the answer (the one
    criterion of :func:`tokstat.cost.choice.choose`, as the report and cost give it)."""
    import polars as pl

    from .cost.choice import choose

    ch = choose(df, mix)
    chars = {lang: float(df.filter(pl.col("language") == lang)["chars"].max() or 0) for lang in ch.weights}
    total_chars = sum(chars.values())
    rows = [{"tokenizer": t, "score": s, "total": s * total_chars,
             "diff": (s / ch.scores[ch.best] - 1) if ch.best else None}
            for t, s in ch.scores.items()] + [{"tokenizer": t + " " + LOSSY, "score": None, "total": None, "diff": None}
                                              for t in ch.excluded]
    _print(_table(f"ranked for the mix ({mix.describe()}): tokens per character of the mix, and the tokens of "
                  f"{total_chars:,.0f} characters of it", [
                      ("tokenizer", "tokenizer"), ("score", "tok/char of the mix"), ("total", "tokens"),
                      ("diff", "vs best")], rows,
                  lambda r, c: visible(r[c]) if c == "tokenizer" else "–" if r[c] is None else
                  f"{r[c]:.4f}" if c == "score" else f"{r[c]:,.0f}" if c == "total" else f"{r[c]:+.1%}"))
    _print(f"which tokenizer for this mix: {ch.sentence()}")


def _print_switch(df, base: str) -> None:
    """What switching from the baseline changes: per other tokenizer, the languages where tokens
    change least and most (× the baseline's tokens on the same texts, 95 % paired interval)."""
    import polars as pl

    for t in df["tokenizer"].unique(maintain_order=True).to_list():
        if t == base:
            continue
        g = df.filter((pl.col("tokenizer") == t) & pl.col("vs_baseline").is_not_null()).sort("vs_baseline")
        if not g.height:
            continue
        lo, hi = g.row(0, named=True), g.row(-1, named=True)
        span = (f"{_premium_cell(lo, 'vs_baseline')} on {lo['language']}" if g.height == 1 else
                f"from {_premium_cell(lo, 'vs_baseline')} on {lo['language']} to {_premium_cell(hi, 'vs_baseline')} "
                f"on {hi['language']}")
        _print(f"switching {base} → {t}: tokens × the baseline's {span} ({g.height} language(s), same texts)")


def _lossy_of(df) -> set[str]:
    """The tokenizers of a compare table that lose text (:func:`tokstat.metrics.unreliable`)."""
    from .metrics import unreliable

    return set(unreliable(df)) if {"tokenizer", "language"} <= set(df.columns) else set()


def _matrix(df, title: str):
    """A tokenizer × language table of the premium with its interval."""
    langs = list(dict.fromkeys(df["language"].to_list()))
    cells: dict[str, dict] = {}
    for r in df.iter_rows(named=True):
        cells.setdefault(r["tokenizer"], {"tokenizer": r["tokenizer"]})[r["language"]] = _premium_cell(r, "premium")
    return _table(title, [("tokenizer", "tokenizer"), *[(lang, lang) for lang in langs]], list(cells.values()),
                  lambda r, c: r.get(c, "–"))


backend_option = click.option(
    "--backend", type=click.Choice(["auto", "fast", "reference"]), default="auto", show_default=True,
    help="who produces the token ids: fast = gigatoken for byte-level BPE (pip install 'tokstat[fast]'), "
         "verified id by id against the reference library on a sample of every language; reference = each "
         "tokenizer's own library; auto = fast where installed and verified. Every number is the same")


@cli.command()
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
    from .compare import compare as compare_api
    from .io import write_tables

    if segments_text and not segments_out:
        raise TokstatError("--segments-text needs --segments-out", fix="add --segments-out segments.parquet")
    from .groups import parse_dimensions

    dims = parse_dimensions(group_by, "--group-by") if group_by is not None else []
    chosen = _segmenter_choices(segmenter_choices)
    from . import parse
    from .mix import Mix

    mixd = Mix(parse.mix(mix), mix_unit) if mix else None
    c = load(corpus_spec, **_pop_corpus(kw))
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
        from .fmt import export_table

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
        from .metrics import parity_summary

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


@cli.command("budget")
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

    from .budget import budget
    from .io import write_tables

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
        from .fmt import si

        def cell(r, col):
            if col == "tokens":
                if r["tokens_low"] is None:
                    return f"{si(r['tokens'])} [no interval]"
                return f"{si(r['tokens'])} [{si(r['tokens_low'])}–{si(r['tokens_high'])}]" if r["tokens_low"] != \
                    r["tokens_high"] else f"{si(r['tokens'])} (exact)"
            if col == "bytes":
                return f"{si(r['bytes'])}B"
            if col in ("token_share", "byte_share"):
                return "–" if r[col] is None else f"{r[col]:.1%}"
            if col == "exact":
                return "–" if r["exact"] is None else si(r["exact"])
            return fmt(r[col], col)

        cols = [("tokenizer", "tokenizer"), ("language", "lang"), ("bytes", "bytes"), ("tokens", "tokens [95% CI]"),
                ("token_share", "of tokens"), ("byte_share", "of bytes")] + ([("exact", "exact")] if exact else [])
        _print(_table(f"tokstat budget — {c.name}", cols, df.iter_rows(named=True), cell))
        _print(f"estimator: {df['estimator'][0]}")
        from .budget import TOTAL

        for r in df.filter(pl.col("language") == TOTAL).iter_rows(named=True):
            _print(f"total for {r['tokenizer']}: {cell(r, 'tokens')} tokens over every language"
                   + (f"; counted: {si(r['exact'])}" if r["exact"] is not None else ""))
    if out:
        write_tables({out: df})
        if not as_json:
            _print(f"wrote {out}")


@cli.command("train")
@click.argument("corpus_spec")
@corpus_options
@click.option("--algo", type=click.Choice(ALGOS), required=True)
@click.option("--vocab-size", type=int, required=True)
@mix_options("the training text's languages")
@sample_bytes_option
@parity_option
@click.option("--out", required=True, help="output folder (tokenizer.json or tokenizer.model + metadata.json)")
@split_options
@quiet_option
def train_cmd(corpus_spec, algo, vocab_size, mix, mix_unit, sample_bytes, parity, out, seed, heldout, quiet, **kw):
    """Train a tokenizer on the train split of CORPUS_SPEC and save it with its metadata."""
    from . import parse
    from .split import Split
    from .train import train

    c = load(corpus_spec, **_pop_corpus(kw))
    check_outputs({"--out": (out, "folder")}, inputs=inputs_of(corpus_spec, c))
    r = train(c, algo, vocab_size, languages=list(c.languages), mix=parse.mix(mix), mix_unit=mix_unit, out=out,
              split=Split(heldout, seed), sample_bytes=sample_bytes, parity=_parity(parity))
    sp = r.metadata["split"]
    _print(f"trained {r.metadata['tokenizer_id']} (vocabulary {r.metadata['actual_vocab_size']:,}) on "
           f"{sp['train_segments']:,} segments; {sp['heldout_segments']:,} held out (seed {seed})")
    for f in r.files:
        _print(f"wrote {f}")


@cli.command("sweep")
@click.argument("corpus_spec")
@corpus_options
@click.option("--algo", type=click.Choice(ALGOS), default="bpe", show_default=True)
@click.option("--sizes", default="4000,8000,16000,32000,64000", show_default=True, help="vocabulary sizes")
@mix_options("the training text's languages")
@sample_bytes_option
@click.option("--eval", "eval_spec", help="a parallel corpus for the premiums of a sweep trained on monolingual documents")
@click.option("--fairness", is_flag=True, help="sweep plain and parity-aware BPE and print the price of fairness per size")
@parity_option
@click.option("--pivot", default="en", show_default=True)
@click.option("--d-model", default=4096, show_default=True, help="model width for embedding_params")
@click.option("--tied/--untied", default=False, show_default=True, help="tied input/output embeddings")
@split_options
@boot_seed_option
@click.option("--out", help="write the table (.parquet, .csv or .json)")
@click.option("--plot", help="write a PNG of tokens per character and premium against vocabulary size")
@backend_option
@max_chars_option
@quiet_option
@wide_option
def sweep_cmd(corpus_spec, algo, sizes, mix, mix_unit, sample_bytes, eval_spec, fairness, parity, pivot, d_model, tied, seed,
              heldout, boot_seed, out, plot, backend, max_chars, quiet, **kw):
    """Train vocabularies of several sizes and compare them per language on the held-out split."""
    from . import parse
    from .io import table_bytes, write_outputs
    from .split import Split
    from .sweep import plot_sweep, sweep

    size_list, mixd, split = parse.sizes(sizes), parse.mix(mix), Split(heldout, seed)
    c = load(corpus_spec, **_pop_corpus(kw))
    check_outputs({"--out": (out, "table"), "--plot": (plot, "png")}, inputs=inputs_of(corpus_spec, c))
    kw_sweep = dict(mix=mixd, mix_unit=mix_unit, sample_bytes=sample_bytes, eval_corpus=eval_spec, pivot=pivot,
                    d_model=d_model, tied=tied, split=split, boot_seed=boot_seed, max_chars=max_chars,
                    progress=False if quiet else None, parity=_parity(parity), backend=backend)
    if parity and not fairness and algo != "parity-bpe":
        raise TokstatError("--parity sets parity-aware BPE", fix="add --algo parity-bpe or --fairness, or drop --parity")
    if fairness:
        from .sweep import fairness_sentence, fairness_sweep, price_of_fairness

        if algo != "bpe":
            raise TokstatError("--fairness sweeps plain and parity-aware BPE", fix="drop --algo (or use --algo bpe)")
        if mixd is not None or sample_bytes:
            raise TokstatError("--fairness compares the algorithms on the corpus as it is: --mix and --sample-bytes "
                               "would train the two differently", fix="drop --mix/--sample-bytes")
        df = fairness_sweep(c, size_list, **kw_sweep)
    else:
        df = sweep(c, algo, size_list, **kw_sweep)
    cols = [("vocab_size", "vocab"), ("language", "lang"), ("tokens_per_char", "tok/char"),
            ("tokens_per_word", "tok/word"), ("premium", "premium [95% CI]"), ("embedding_params", "embedding")]
    wide = cols[:2] + [("tokens", "tokens")] + cols[2:4] + [("continued_word_rate", "cont.words"),
                                                            ("split_char_rate", "split chars")] + cols[4:]
    if fairness:
        cols = [("tokenizer", "tokenizer")] + cols
    _print(_table(f"tokstat sweep — {'bpe and parity-bpe' if fairness else algo}, pivot {pivot}, held-out split "
                  f"{split.label}", cols, df.iter_rows(named=True), _premium_cell, wide_cols=wide))
    if fairness:
        for r in price_of_fairness(df).iter_rows(named=True):
            _print(f"price of fairness: {fairness_sentence(r)}")
    _signatures(df.head(1))
    outputs = {}
    if out:
        outputs[out] = table_bytes(df, Path(out).suffix)
    if plot:
        outputs[plot] = plot_sweep(df)
    write_outputs(outputs)        # both appear together, or neither does
    for p_ in outputs:
        _print(f"wrote {p_}")


@cli.command("extend")
@click.argument("base")
@click.option("--corpus", "corpus_spec", required=True, help="the corpus whose target-language text the new tokens are "
              "learned on (its train split; its held-out split evaluates them unless --eval)")
@corpus_options
@click.option("--add", "add", required=True, help="new tokens, or several sizes for the curve: e.g. 8000 or 1000,4000,16000")
@click.option("--out", required=True, help="a new folder: the extended tokenizer(s) in the base's format, metadata.json "
              "and extension.parquet (the table for tokstat report)")
@click.option("--eval", "eval_spec", help="a parallel corpus to measure on instead of the held-out split (e.g. PUD)")
@click.option("--pivot", default="en", show_default=True, help="language the premium is measured against")
@click.option("--model", "model_name", default="llama2-7b", show_default=True, help="model preset that prices the new rows")
@click.option("--gpu", "gpu_name", default="h100-sxm", show_default=True, help="accelerator from the catalogue")
@click.option("--gpus", default=1, show_default=True, help="GPUs serving (tensor parallel)")
@click.option("--mfu", type=float, help="model FLOPs utilisation (default: calibrated per accelerator generation)")
@click.option("--price", type=float, help="USD per GPU-hour (default: the catalogue's)")
@click.option("--adapt-bytes", type=float, default=20e9, show_default=True,
              help="continued-pretraining text that teaches the new embeddings, in bytes of the language "
                   "(Chinese-LLaMA: 20 GB)")
@click.option("--prompt-chars", default=1000.0, show_default=True, help="a request's prompt, in characters of the language")
@click.option("--output-chars", default=250.0, show_default=True, help="a request's output, in characters of the language")
@click.option("--batch", default=32, show_default=True, help="serving batch size")
@split_options
@boot_seed_option
@quiet_option
@wide_option
def extend_cmd(base, corpus_spec, add, out, eval_spec, pivot, model_name, gpu_name, gpus, mfu, price, adapt_bytes,
               prompt_chars, output_chars, batch, seed, heldout, boot_seed, quiet, **kw):
    """Extend tokenizer BASE for --languages with --add new tokens learned on --corpus, keeping every
    base id and merge; measure the tokens saved and price them (new rows, continued pretraining,
    serving, break-even)."""
    import json

    import polars as pl

    from . import parse
    from .extend import extension_plan
    from .io import table_bytes, write_outputs
    from .split import Split

    sizes = parse.sizes(add, "--add")
    copts = _pop_corpus(kw)
    # --languages names the languages extended for; the corpus keeps the others (the pivot) to measure on
    targets = [x.strip() for x in (copts.pop("languages") or "").split(",") if x.strip()]
    if not targets:
        raise TokstatError("--languages names the languages to extend the tokenizer for", fix="e.g. --languages zh")
    c = load(corpus_spec, **copts)
    check_outputs({"--out": (out, "folder")}, inputs=inputs_of(corpus_spec, c) + ([Path(eval_spec)] if eval_spec else []))
    if Path(out).exists():
        raise TokstatError("--out exists: an extension is written into a new folder (nothing is overwritten)",
                           path=out, fix="name a new folder")
    ev = load(eval_spec) if eval_spec else None
    df, exts = extension_plan(base, c, languages=targets, sizes=sizes, split=Split(heldout, seed), eval_corpus=ev,
                              pivot=pivot, model=model_name, gpu=gpu_name, gpus=gpus, mfu=mfu, price=price,
                              adapt_bytes=adapt_bytes, prompt_chars=prompt_chars, output_chars=output_chars, batch=batch,
                              boot_seed=boot_seed, progress=False if quiet else None)
    files, metas = {}, {}
    for e in exts:
        name = e.filename
        if len(exts) > 1:
            stem, dot, suffix = name.partition(".")
            name = f"{stem}-add{e.metadata['add']}{dot}{suffix}"
        files[name] = e.data
        metas[name] = e.metadata
    first = exts[0].metadata
    shared = {k: first[k] for k in ("base", "base_id", "languages", "corpus", "split", "training_sha256", "tokstat")}
    meta = {**shared, "files": {n: m["files"][exts[i].filename] for i, (n, m) in enumerate(metas.items())},
            "extensions": {n: {k: v for k, v in m.items() if k not in shared and k != "files"} for n, m in metas.items()}}
    files["metadata.json"] = (json.dumps(meta, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode()
    files["extension.parquet"] = table_bytes(df, ".parquet")
    tgt = df.filter(pl.col("target"))
    cols = [("added", "added"), ("language", "lang"), ("tokens_saved", "tokens saved"),
            ("premium_before", "premium before"), ("premium_after", "premium after [95% CI]"),
            ("break_even_requests", "break-even (requests)"), ("saving_usd_per_1k_requests", "saved/1k req"),
            ("adapt_usd", "adaptation"), ("new_params", "new params")]

    def cell(r, col):
        if col == "premium_after":
            return with_interval(r.get(col), r.get("premium_after_ci_low"), r.get("premium_after_ci_high"))
        return fmt(r.get(col), col)

    where = f"on {ev.name}" if ev is not None else f"on the held-out split {Split(heldout, seed).label}"
    _print(_table(f"tokstat extend — {exts[0].metadata['base_id']} for {', '.join(targets)}, measured {where}, "
                  f"pivot {pivot}", cols, tgt.iter_rows(named=True), cell))
    _print(f"assumptions: {df['assumptions'][0]}")
    write_outputs({out: files})
    for n in files:
        _print(f"wrote {Path(out) / n}")


def model_options(f):
    return _stack(
        click.option("--model", "model_name", help="preset name (see presets.toml)"),
        click.option("--models-file", help="a TOML file of extra presets"),
    )(f)


@cli.command("inventory")
@tokenizer_options()
@click.option("--out", help="write the table (.parquet, .csv or .json)")
@click.option("--json", "as_json", is_flag=True, help="print the rows as JSON records")
def inventory_cmd(tokenizers, out, as_json):
    """What each vocabulary holds: its entries by script, digits, punctuation, whitespace and partial
    UTF-8 (bytes of a character), and the shares of space-prefixed entries and of entries with whitespace."""
    from .inventory import inventory
    from .io import write_tables

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


@cli.command("morphscore")
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
    from . import parse
    from .io import write_tables
    from .morphscore import morphscore

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


@cli.command("fit-estimator")
@click.argument("corpus_spec")
@corpus_options
@click.option("-t", "--tokenizer", "tokenizer_spec", required=True, help="the tokenizer whose counts are estimated (one spec)")
@click.option("--heldout", default=0.2, show_default=True, help="share of segments held out to measure the error")
@click.option("--seed", default=0, show_default=True, help="split seed")
@click.option("--out", required=True, help="write the model (.json: weights per script, held-out errors)")
def fit_estimator_cmd(corpus_spec, tokenizer_spec, heldout, seed, out, **kw):
    """Fit a fast token estimator, tokens ≈ Σ per-script weight × characters (+ an intercept if it
    helps), on a train split, and report its error per language on the held-out documents (beside
    characters / 4). For estimates, not billing."""
    from .estimator import fit_estimator
    from .io import write_bytes

    c = load(corpus_spec, **_pop_corpus(kw))
    check_outputs({"--out": (out, "json")}, inputs=inputs_of(corpus_spec, c))
    model = fit_estimator(c, tokenizer_spec, heldout=heldout, seed=seed)
    w = ", ".join(f"{s} {v:.3f}" for s, v in sorted(model["weights"].items(), key=lambda kv: -kv[1]))
    _print(f"{model['tokenizer']}: tokens per character by script: {w}; any other script {model['default']:.3f}"
           + (f"; + {model['intercept']:.2f} per document" if model["intercept"] else ""))

    def pct(x):
        return "–" if x is None else f"{x:+.1%}" if x < 0 or x > 0 else "0.0%"
    _print(_table(f"held-out error ({model['fitted_on']['split']}, {sum(r['documents'] for r in model['heldout']):,} "
                  "documents)", [("language", "lang"), ("documents", "docs"), ("median_rel_error", "median |err|/doc"),
                                 ("p95_rel_error", "p95 |err|/doc"), ("total_rel_error", "total err"),
                                 ("chars4_total_rel_error", "chars/4 total err")], model["heldout"],
                  lambda r, c: pct(r[c]) if "total" in c else f"{r[c]:.1%}" if "rel" in c and r[c] is not None
                  else f"{r[c]:,}" if isinstance(r[c], int) else visible(str(r[c])), shorten=""))
    write_bytes(out, (json.dumps(model, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    _print(f"wrote {out} (estimates, not billing; docs/estimator.md has the schema and reference implementations)")


@cli.command("overlap")
@tokenizer_options()
@click.option("--out", help="write the table (.parquet, .csv or .json)")
@click.option("--png", help="write a heatmap of the coverage (PNG)")
@click.option("--json", "as_json", is_flag=True, help="print the rows as JSON records")
def overlap_cmd(tokenizers, out, png, as_json):
    """How much vocabularies share, compared on the bytes each entry stands for: Jaccard, and the
    share of A's entries that B also has (coverage, asymmetric)."""
    from .inventory import overlap, overlap_png
    from .io import table_bytes, write_outputs

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
    from .langs import normalize_lang
    from .segmenters import CHOICES, check_choice

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
    from .groups import group_summary, read_groups

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
            from .fmt import export_table

            click.echo(export_table(rows, GROUP_SHOWN, _group_cell, table_format, caption=title), nl=False)
        else:
            _print(_table(title, GROUP_SHOWN, rows, _group_cell))
    if shown and table_format == "table":
        _print(f"{LOSSY} loses text (tokstat compare says where): its premiums are not comparable")


@cli.command("groups")
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

    from .groups import lorenz_table, parse_dimensions
    from .io import figure_bytes, table_bytes, write_outputs

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
        from .report.charts import lorenz_curves

        outputs[png] = figure_bytes(lorenz_curves(lz))
    if outputs:
        write_outputs(outputs)
        for p in outputs:
            _print(f"wrote {p}")


@cli.command("model-info")
@model_options
@click.option("--d-model", type=int)
@click.option("--layers", type=int)
@click.option("--heads", type=int)
@click.option("--kv-heads", type=int)
@click.option("--d-ff", type=int)
@click.option("--vocab-size", type=int)
@click.option("--context", type=int)
@click.option("--tied/--untied", default=None)
@click.option("--mlp", type=click.Choice(["gelu", "swiglu"]))
@click.option("--head-dim", type=int, help="width of one attention head when it is not d_model/heads")
@click.option("--gpu", "gpu_name", default="a100-80gb-sxm", show_default=True, help="for the all-reduce time")
@click.option("--gpus", default=8, show_default=True, help="data-parallel GPUs for the all-reduce time")
@click.option("--seq-len", type=int, help="training sequence length (default: the preset's pre-training length)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object (keys in docs/cost-model.md)")
def model_info_cmd(model_name, models_file, gpu_name, gpus, seq_len, as_json, **shape):
    """Parameters, FLOPs per token and memory of a model preset or explicit shape."""
    from rich.table import Table

    from .cost.hardware import gpu
    from .cost.info import model_info, model_summary
    from .cost.model import allreduce_seconds, model_config

    m = model_config(model_name, models_file, **shape)
    g = gpu(gpu_name)
    if as_json:
        import json

        d = model_summary(m, seq_len=seq_len)
        d.update(gpu=gpu_name, gpus=gpus, gradient_allreduce_seconds=allreduce_seconds(m, gpus, g))
        click.echo(json.dumps(d, indent=2))
        return
    from rich.text import Text

    t = Table(title=Text(visible(f"{m.name}: {m.source or 'custom shape'}")))
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_column("formula")
    for q, v, f in model_info(m, seq_len):
        t.add_row(Text(visible(q)), Text(visible(v)), Text(visible(f)))
    t.add_row(f"gradient all-reduce, {gpus}× {gpu_name}", f"{allreduce_seconds(m, gpus, g):.3f} s",
              f"2·(n−1)/n·2·params B / {g.link_gb_s_per_direction:g} GB/s each way + NCCL ring latency")
    _print(t)


@cli.command("cost")
@click.option("--results", required=True, help="output of tokstat compare or tokstat sweep (.parquet/.csv/.json)")
@model_options
@click.option("--gpu", "gpu_name", required=True, help="accelerator from the catalogue")
@click.option("--gpus", default=1, show_default=True)
@click.option("--mfu", type=float, help="model FLOPs utilisation in (0, 1] (default: calibrated per accelerator generation)")
@click.option("--mbu", default=0.7, show_default=True, help="memory-bandwidth utilisation in (0, 1]")
@click.option("--price", type=float, help="USD per GPU-hour (default: the catalogue's)")
@click.option("--train-chars", type=float, help="characters of text trained on, per language")
@click.option("--train-bytes", type=float, help="UTF-8 bytes of text trained on, per language")
@click.option("--train-tokens", type=float, help="pivot-language tokens as --reference counts them (a fixed amount of text)")
@click.option("--tokens-per-param", type=float, help="Chinchilla-style budget in --reference pivot tokens (default 20)")
@click.option("--reference", help="tokenizer that counts --train-tokens/--tokens-per-param (default: the first)")
@mix_options("a mix row priced as one text")
@click.option("--batch", default=32, show_default=True, help="serving batch size")
@click.option("--weights", "weight_dtype", type=click.Choice(["bf16", "fp8", "int8", "int4"]), default="bf16",
              show_default=True, help="serving weight precision (weight-only: int8/int4/fp8 weights, compute in bf16)")
@click.option("--kv", "kv_dtype", type=click.Choice(["bf16", "fp8", "int8"]), default="bf16", show_default=True,
              help="KV-cache precision")
@click.option("--prompt-chars", default=1000.0, show_default=True,
              help="a request's prompt, in characters of the pivot language (the same content in every language)")
@click.option("--output-chars", default=250.0, show_default=True, help="a request's output, in pivot-language characters")
@click.option("--seq-len", type=int, help="training sequence length (default: the preset's pre-training length, e.g. "
              "8,192 for llama3.1-405b, not its 131,072-token context)")
@click.option("--tp", default=1, show_default=True, help="tensor-parallel degree for training memory")
@click.option("--pp", default=1, show_default=True, help="pipeline-parallel degree for training memory")
@click.option("--zero", default=1, show_default=True, help="ZeRO stage 0-3 for training memory")
@click.option("--recompute", type=click.Choice(["none", "selective", "full"]), default="selective", show_default=True,
              help="activation recomputation for training memory")
@click.option("--micro-batch", default=1, show_default=True, help="sequences per GPU per step for training memory")
@click.option("--train-precision", type=click.Choice(["bf16", "fp8"]), default="bf16", show_default=True,
              help="training precision: the peak the MFU applies to (fp8 where the GPU has it)")
@click.option("--goodput", default=1.0, show_default=True,
              help="share of paid GPU-hours that train (1 with the calibrated MFU, which already includes lost hours)")
@click.option("--vocab", type=click.Choice(["tokenizer", "model"]), default="tokenizer", show_default=True,
              help="price each row with its tokenizer's own vocabulary, or pin the model preset's")
@click.option("--max-unk", default=0.01, show_default=True,
              help="a row with more unknown-token characters loses text and is never recommended")
@click.option("--out", help="write the table (.parquet, .csv or .json)")
@click.option("--json", "as_json", is_flag=True, help="print the rows as JSON records instead of the table")
@wide_option
def cost_cmd(results, model_name, models_file, gpu_name, gpus, mfu, mbu, price, train_chars, train_bytes, train_tokens,
             tokens_per_param, reference, mix, mix_unit, batch, weight_dtype, kv_dtype, prompt_chars, output_chars, tp, pp, zero,
             recompute, micro_batch, train_precision, goodput, vocab, max_unk, out, as_json, seq_len):
    """Training and serving cost per (tokenizer, language) from compare/sweep results."""
    from . import parse
    from .cost.hardware import gpu
    from .cost.model import model_config
    from .cost.projection import project
    from .io import write_tables

    if not model_name:
        raise TokstatError("cost needs a model", fix="pass --model PRESET (see tokstat model-info --help)")
    check_outputs({"--out": (out, "table")}, inputs=[results])
    model, g = model_config(model_name, models_file), gpu(gpu_name)
    rdf = read_results_table(results, "tokstat compare --out or tokstat sweep --out")
    cdf = project(rdf, model,
                  g, gpus=gpus, mfu=mfu, mbu=mbu, price=price, train_chars=train_chars,
                  train_bytes=train_bytes, train_tokens=train_tokens, tokens_per_param=tokens_per_param,
                  reference=reference, mix=parse.mix(mix), mix_unit=mix_unit, batch=batch, weights=weight_dtype, kv_dtype=kv_dtype,
                  prompt_chars=prompt_chars, output_chars=output_chars, tp=tp, pp=pp, zero=zero, recompute=recompute,
                  micro_batch=micro_batch, precision=train_precision, goodput=goodput, vocab=vocab, max_unk=max_unk,
                  seq_len=seq_len)
    if as_json:
        click.echo(json_for_terminal(cdf.write_json()))
        if out:
            write_tables({out: cdf})
        return
    held = cdf["held_equal"][0]
    xp = "×pivot" + ("" if held == "content" else f" (same {held})")
    wide = [("tokenizer", "tokenizer"), ("language", "lang"), ("vocab_size", "vocab"),
            ("training_tokens", "train tokens"), ("gpu_hours", "GPU-h"), ("wall_clock_days", "days"),
            ("dollars", "train USD"), ("cost_multiplier", xp), ("train_memory_gb_per_gpu", "train GB/GPU"),
            ("kv_cache_bytes_per_1k_chars", "KV B/1k ch"), ("chars_in_context", "chars/ctx"),
            ("request_prefill_s", "prefill s"), ("request_decode_s", "decode s"), ("usd_per_request", "USD/1k req"),
            ("serving_multiplier", "serve ×pivot"), ("fits", "serves"), ("recommended", "best")]
    cols = [("tokenizer", "tokenizer"), ("language", "lang"), ("vocab_size", "vocab"), ("dollars", "train USD"),
            ("cost_multiplier", xp), ("usd_per_request", "USD/1k req"), ("serving_multiplier", "serve ×"),
            ("recommended", "best")]
    shown = list(cdf.iter_rows(named=True))
    lossy = _mark_lossy(shown, {r["tokenizer"] for r in shown if r["not_recommended_because"]})

    def money_or_number(r, c):
        from .fmt import money

        v = r[c]
        if isinstance(v, float) and c in ("dollars", "usd_per_request"):
            return money(v * 1000 if c == "usd_per_request" else v)
        if isinstance(v, bool):
            return "✓" if v else ""
        return fmt(v, c) if isinstance(v, (int, float)) else str(v)

    _print(_table(f"tokstat cost — {model_name} on {gpus}× {gpu_name}, MFU {cdf['mfu'][0]:.3g} "
                  f"({cdf['mfu_source'][0]}), MBU {mbu}", cols, shown, money_or_number,
                  wide_cols=wide))
    if lossy:
        _print(f"{LOSSY} loses text (below: where); never recommended")
    from .cost.choice import choose

    _print(f"which tokenizer: {choose(rdf, None, cdf, max_unk=max_unk).sentence()}")
    _print(f"volume: {cdf['volume'][0]}; ×pivot: " + ("the same content in every language (the premium, priced)"
                                                       if held == "content" else
                                                       f"the same number of {held} in every language — not the same "
                                                       "content (the premium is that)"))
    for r in cdf.filter(cdf["mix_shares"].is_not_null()).iter_rows(named=True):
        _print(f"mix for {r['tokenizer']}: {r['mix_shares']}")
    _print(f"price: ${cdf['price_usd_h'][0]:,.2f} per GPU-hour ({cdf['price_source'][0]}); training memory: "
           f"tp {tp} × pp {pp} × dp {gpus // (tp * pp)}, ZeRO-{zero}, {recompute} recompute, micro-batch {micro_batch}"
           f" × {cdf['seq_len'][0]:,}-token sequences"
           f" ({'fits' if (cdf['train_fits'] == 'fits').all() else 'does not fit'} in {gpu_name} memory); serving: "
           f"one tensor-parallel replica over all {gpus} GPU(s) (--tp/--pp set the training layout only), "
           f"weights {weight_dtype}, KV {kv_dtype}, requests of {prompt_chars:g} + {output_chars:g} pivot-language characters' "
           f"content, batch {batch}")
    if not (cdf["train_fits"] == "fits").all():
        from .cost.model import smallest_fitting_split

        best = smallest_fitting_split(model.with_vocab(int(cdf["vocab_size"].max())), g.memory_gb * 1e9, gpus,
                                      zero=zero, recompute=recompute, micro_batch=micro_batch, context=int(cdf["seq_len"][0]))
        _print(f"training memory does not fit at --tp {tp} --pp {pp}: " + (
            f"the smallest split of {gpus} GPUs that fits is --tp {best[0]} --pp {best[1]} ({best[2] / 1e9:.1f} GB per GPU)"
            if best else f"no tensor × pipeline split of {gpus} GPUs fits; add GPUs, use --zero 3 or --recompute full"))
    _print(f"vocabulary: {'each tokenizer' + chr(39) + 's own' if vocab == 'tokenizer' else 'the model preset' + chr(39) + 's'}"
           f"; best = cheapest per language among rows that keep the text (at most {max_unk:.1%} unknown-token "
           "characters, and a decoder that gives every sampled text back)")
    for r in cdf.filter(cdf["not_recommended_because"].is_not_null()).iter_rows(named=True):
        _print(f"not recommended: {r['tokenizer']} on {r['language']}: {r['not_recommended_because']}")
    if out:
        write_tables({out: cdf})
        _print(f"wrote {out}")


@cli.command("vocab-plan")
@click.option("--sweep", "sweep_file", help="a tokstat sweep --out table (instant); or --corpus to run one")
@click.option("--corpus", "corpus_spec", help="sweep this corpus first (one BPE training at the largest size)")
@corpus_options
@click.option("--algo", type=click.Choice(ALGOS), default="bpe", show_default=True, help="with --corpus")
@click.option("--sizes", default="2000,4000,8000,16000,32000,64000", show_default=True, help="with --corpus")
@model_options
@click.option("--non-vocab-params", type=float, help="instead of --model: non-vocabulary parameters N_nv")
@click.option("--d-model", type=int, help="instead of --model: the model width")
@mix_options("the languages the vocabulary is chosen for")
@sample_bytes_option
@click.option("--eval", "eval_spec", help="with --corpus of documents: a parallel corpus for the premiums")
@click.option("--flops", type=float, help="training budget in FLOPs for approach 3 (default: compute-optimal for N_nv)")
@click.option("--max-premium", type=float, help="also report the smallest swept size with every premium at most this")
@click.option("--serve-chars", type=float, help="also the size minimising training + serving these characters")
@click.option("--train-chars", type=float, help="with --serve-chars: characters trained on (default 20 tokens/param)")
@click.option("--gpu", "gpu_name", default="h100-sxm", show_default=True, help="with --serve-chars")
@click.option("--seq-len", type=int, help="with --serve-chars: training sequence length (default: the preset's pre-training length)")
@split_options
@click.option("--out", help="write the per-size table (.parquet, .csv or .json)")
@click.option("--png", help="write the curves and costs as a PNG")
@click.option("--json", "as_json", is_flag=True, help="print the plan as one JSON object")
@quiet_option
def vocab_plan_cmd(sweep_file, corpus_spec, algo, sizes, model_name, models_file, non_vocab_params, d_model, mix,
                   mix_unit, sample_bytes, eval_spec, flops,
                   max_premium, serve_chars, train_chars, gpu_name, seed, heldout, out, png, as_json, quiet, seq_len, **kw):
    """The vocabulary size for a model and language mix: Tao et al. 2024's three approaches under
    your corpus's tokens-per-character curves, with the flat region, fairness and serving variants."""
    import json

    from . import parse
    from .cost.model import model_config
    from .io import table_bytes, write_outputs
    from .split import Split
    from .vocabplan import per_size_table, plan_from, plot_plan

    copts = _pop_corpus(kw)
    if sweep_file and corpus_spec:
        raise TokstatError("pass --sweep or --corpus, not both", fix="drop one of them")
    if out and not (sweep_file or corpus_spec):
        raise TokstatError("--out writes the per-size table of a sweep: there is none", fix="add --sweep FILE or --corpus SPEC")
    model = model_config(model_name, models_file) if model_name else None
    mixd = parse.mix(mix)
    size_list = parse.sizes(sizes) if corpus_spec else None
    inputs = [Path(sweep_file)] if sweep_file else []
    c = None
    if corpus_spec:
        c = load(corpus_spec, **copts)
        inputs = inputs_of(corpus_spec, c)
    check_outputs({"--out": (out, "table"), "--png": (png, "png")}, inputs=inputs)
    sw = read_results_table(sweep_file, "tokstat sweep --out") if sweep_file else None
    plan, sw, alloc = plan_from(sw, corpus=c, algo=algo, sizes=size_list, model=model, n_nv=non_vocab_params,
                                d_model=d_model, mix=mixd, mix_unit=mix_unit, max_premium=max_premium, serve_chars=serve_chars,
                                train_chars=train_chars, gpu_name=gpu_name, flops=flops, split=Split(heldout, seed),
                                seq_len=seq_len, sample_bytes=sample_bytes, eval_corpus=eval_spec)
    if as_json:
        click.echo(json.dumps(plan.to_dict(), indent=2, default=str))
    else:
        from rich.table import Table

        from rich.text import Text

        t = Table(title=f"tokstat vocab-plan — recommended vocabulary {plan.answer_text()}")
        t.add_column("approach (Tao et al. 2024)")
        t.add_column("their curve", justify="right")
        t.add_column("your curve", justify="right")
        for k, v in plan.approaches.items():
            t.add_row(k.replace("_", " "), f"{plan.tao_approaches[k]:,}", f"{v:,}")
        for lang in plan.per_language:
            t.add_row(Text(visible(f"{lang} alone")), "", plan.size_text(lang))
        _print(t)
        _print(f"answer: {plan.answer_text()}" + ("" if plan.no_answer else f", inside the flat region "
               f"{plan.flat_region[0]:,}–{plan.flat_region[1]:,} (training FLOPs within 1% of the least)"))
        if plan.answer_reason:
            _print(f"why not {plan.approaches_median:,}: {plan.answer_reason}")
        if plan.interval_note:
            _print(f"interval: {plan.interval_note}")
        if plan.support_note:
            _print(f"data: {plan.support_note}")
        if plan.mix_conversion:
            _print(f"mix: {plan.mix_conversion}")
        if plan.price_of_fairness:
            _print(f"price of fairness: {plan.price_of_fairness}")
        if plan.fairness:
            f = plan.fairness
            _print(f"fairness: smallest swept size with every premium ≤ {f['max_premium']:g}: "
                   f"{f['smallest_fair_size']:,}" if f["smallest_fair_size"] else
                   f"fairness: no swept size has every premium ≤ {f['max_premium']:g}")
        if plan.serving:
            sv = plan.serving
            _print(f"serving {sv['serve_chars']:.3g} characters after training on {sv['train_chars']:.3g}: "
                   f"{sv['recommended_vocab_size']:,} (training alone: {sv['training_only_optimum']:,})")
        for a in plan.assumptions:
            _print(f"assumption: {a}")
        for w in plan.warnings:
            _print(f"note: {w}")
        if not plan.no_answer:
            _print(f"to train it: {plan.training_command}")
        if alloc is not None:
            cols = [(k, k) for k in alloc.columns]
            _print(_table("vocabulary allocation along the merge order (share of the first V tokens)", cols,
                          alloc.iter_rows(named=True), lambda r, k: f"{r[k]:.1%}" if isinstance(r[k], float) else f"{r[k]:,}"))
    outputs = {}
    if out:
        outputs[out] = table_bytes(per_size_table(sw, alloc), Path(out).suffix)
    if png:
        outputs[png] = plot_plan(plan, sw, None, plan.n_nv, plan.d_model, alloc)
    write_outputs(outputs)        # both appear together, or neither does
    for p_ in outputs:
        if not as_json:
            _print(f"wrote {p_}")


@cli.command("show")
@click.argument("text")
@tokenizer_options()
@click.option("--ids", is_flag=True, help="also print the token ids")
@click.option("--html", "html_out", help="also write the view as a page (.html): tokenizers side by side, id and bytes on hover")
@click.option("--normalize", type=click.Choice(["nfc", "nfkc", "none"]), default="nfc", show_default=True,
              help="normalisation of TEXT, as for counting")
def show_cmd(text, tokenizers, ids, html_out, normalize):
    """TEXT split into each tokenizer's tokens: one colour per token id, characters cut across tokens
    in red (as bytes), byte-fallback tokens in magenta, unknown tokens white on red."""
    from .io import write_bytes
    from .show import html_page, rich_lines, show

    check_outputs({"--html": (html_out, "html")}, inputs=[])
    res = show(text, list(tokenizers), normalize=normalize)
    console = _console()
    for line in rich_lines(text, res, ids=ids, plain=console.color_system is None):
        console.print(line)
    if html_out:
        write_bytes(html_out, html_page(text, res, ids=ids))
        _print(f"wrote {html_out}")


@cli.command("robustness")
@click.argument("corpus_spec")
@corpus_options
@tokenizer_options()
@click.option("--max-segments", default=2000, show_default=True, help="segments read")
@click.option("--out", help="write the table (.parquet, .csv or .json)")
def robustness_cmd(corpus_spec, tokenizers, max_segments, out, **kw):
    """How much each tokenizer's count moves under NFKC, full-width → half-width and, for Chinese,
    the other script (the same content, written differently)."""
    from .io import write_tables
    from .show import robustness

    c = load(corpus_spec, **_pop_corpus(kw))
    check_outputs({"--out": (out, "table")}, inputs=inputs_of(corpus_spec, c))
    df = robustness(c, list(tokenizers), max_segments=max_segments)
    cols = [(k, k) for k in df.columns]
    _print(_table(f"tokstat robustness — {c.name}", cols, df.iter_rows(named=True),
                  lambda r, k: f"{r[k]:.3f}" if isinstance(r[k], float) else f"{r[k]:,}" if isinstance(r[k], int) else str(r[k])))
    if out:
        write_tables({out: df})
        _print(f"wrote {out}")


@cli.command("worst")
@click.argument("segments_file")
@click.option("-t", "--tokenizer", help="tokenizer id in the table (default: the first)")
@click.option("--language", help="language to rank (default: the first that is not the pivot)")
@click.option("--pivot", default="en", show_default=True)
@click.option("--by", type=click.Choice(["premium", "tokens_per_char"]), default="premium", show_default=True)
@click.option("-n", "n", default=20, show_default=True, help="how many segments")
@click.option("--out", help="write the table (.parquet, .csv or .json)")
def worst_cmd(segments_file, tokenizer, language, pivot, by, n, out):
    """The segments of a compare --segments-out file where a tokenizer does worst against the pivot."""
    from .io import write_tables
    from .show import worst_of

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


@cli.command("report")
@click.argument("results", nargs=-1)
@click.option("--out", required=True, help="the HTML file to write")
@click.option("--png", help="also write each chart as DIR/NAME.png")
@click.option("--title", default="tokstat report", show_default=True)
@click.option("--corpus", "corpus_spec", help="run compare (+ sweep + cost) on this corpus first")
@corpus_options
@tokenizer_options(required=False)
@click.option("--sweep", "sweep_spec", help="with --corpus: a vocabulary sweep, ALGO:SIZE,SIZE,... (e.g. bpe:4000,8000)")
@click.option("--model", "model_name", help="model preset to price (--corpus; default llama2-7b) and to plan the "
              "vocabulary for (default: the cost files' model)")
@click.option("--gpu", "gpu_name", default="h100-sxm", show_default=True, help="with --corpus: accelerator")
@click.option("--train-tokens", type=float, help="with --corpus: pivot-language tokens (default, as in cost: 20 per parameter)")
@click.option("--gpus", default=1, show_default=True, help="with --corpus: GPUs (as in cost)")
@click.option("--seq-len", type=int, help="with --corpus: training sequence length (default: the preset's pre-training length)")
@mix_options("the languages the tokenizer, vocabulary and mix row are chosen for")
@sample_bytes_option
@click.option("--eval", "eval_spec", help="with --corpus of documents: a parallel corpus for the sweep's premiums")
@click.option("--pivot", default="en", show_default=True, help="with --corpus: language the premium is measured against")
@split_options
@boot_seed_option
@max_chars_option
@quiet_option
def report_cmd(results, out, png, title, corpus_spec, tokenizers, sweep_spec, model_name, gpu_name, train_tokens, gpus, mix,
               mix_unit, sample_bytes, eval_spec, pivot, seed, heldout, boot_seed, max_chars, quiet, seq_len, **kw):
    """One self-contained HTML report from RESULTS files (compare/sweep/cost --out, compare
    --segments-out), or from a fresh run on --corpus: the answers first (which tokenizer, what each
    language costs, which vocabulary size) with their assumptions, then the evidence per corpus."""
    from .report import read_results, report
    from .split import Split

    model_flag, model_name = model_name, model_name or "llama2-7b"
    copts = _pop_corpus(kw)
    if corpus_spec:
        if results:
            raise TokstatError("pass result files or --corpus, not both", fix="drop the RESULTS arguments")
        if not tokenizers:
            raise TokstatError("--corpus needs at least one tokenizer", fix="add -t SPEC, e.g. -t tiktoken:cl100k_base")
        from .study import study

        c = load(corpus_spec, **copts)
        check_outputs({"--out": (out, "html"), "--png": (png, "folder")}, inputs=inputs_of(corpus_spec, c))
        data = study(c, list(tokenizers), sweep=sweep_spec, model=model_name, gpu=gpu_name, train_tokens=train_tokens,
                     mix=mix, mix_unit=mix_unit, pivot=pivot, split=Split(heldout, seed), boot_seed=boot_seed,
                     progress=False if quiet else None, max_chars=max_chars, seq_len=seq_len, gpus=gpus,
                     sample_bytes=sample_bytes, eval_corpus=eval_spec)
    else:
        if (tokenizers or sweep_spec or seq_len is not None or train_tokens is not None or gpus != 1
                or sample_bytes is not None or eval_spec):
            raise TokstatError("-t, --sweep, --seq-len, --train-tokens, --gpus, --sample-bytes and --eval need --corpus "
                               "(result files carry their own)",
                               fix="add --corpus SPEC, or pass result files only")
        check_outputs({"--out": (out, "html"), "--png": (png, "folder")}, inputs=list(results))
        data = read_results(list(results))
    path = report(data, out, png=png, title=title, model=None if corpus_spec else model_flag,
                  mix=None if corpus_spec else mix, mix_unit=mix_unit)
    _print(f"wrote {path}" + (f" and the charts as PNG in {png}" if png else ""))


# ---------------------------------------------------------------- entry point

class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that every ``finally`` (temporary files, workers) runs."""


def _on_sigterm(signum, frame):
    raise Terminated


def _warning(message, category, filename, lineno, file=None, line=None):
    """Warnings as one line, ``tokstat: warning: ...`` (not Python's ``path:line: UserWarning``).
    A library's deprecation notice is for tokstat's developers, not its users: shown only with
    ``TOKSTAT_DEBUG=1``."""
    import os

    if issubclass(category, (DeprecationWarning, PendingDeprecationWarning)) and not os.environ.get("TOKSTAT_DEBUG"):
        return
    text = visible(str(message))
    if text in _WARNED:          # once per run, whichever line or worker raised it
        return
    _WARNED.add(text)
    click.echo(f"tokstat: warning: {text}", err=True)


#: the warnings this run has shown (:func:`_warning`; emptied by :func:`main`)
_WARNED: set[str] = set()


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the click group; a :class:`TokstatError` becomes one line on stderr and exit 2.
    Ctrl-C (exit 130) and SIGTERM (exit 143) remove temporary files, stop the workers and say what
    to rerun; no output file is ever left half-written (they are renamed into place when complete).
    Any other exception is a bug: one line naming it, exit 1 (``TOKSTAT_DEBUG=1`` shows the traceback)."""
    import os

    args = sys.argv[1:] if argv is None else argv
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    caught = warnings.catch_warnings()
    caught.__enter__()
    warnings.simplefilter("default")   # each run shows its own warnings once (a fresh registry per run)
    warnings.showwarning = _warning
    _WARNED.clear()
    try:
        cli.main(args=args, standalone_mode=False)
    except TokstatError as e:
        click.echo(f"tokstat: error: {visible(e)}", err=True)
        return 2
    except (click.exceptions.Abort, KeyboardInterrupt) as e:
        term = isinstance(e, Terminated) or isinstance(e.__cause__ or e.__context__, Terminated)
        click.echo(f"tokstat: {'terminated' if term else 'interrupted'}; no output was written, rerun: "
                   f"tokstat {visible(shlex.join(args))}", err=True)
        return 143 if term else 130
    except click.UsageError as e:
        cmd = e.ctx.command_path.replace("python -m tokstat.cli", "tokstat") if e.ctx else "tokstat"
        msg = " ".join(e.format_message().split())     # click lists choices on lines of their own: one line
        click.echo(f"tokstat: error: {visible(msg)} (fix: see {visible(cmd)} --help)", err=True)
        return 2
    except click.ClickException as e:
        e.show()
        return e.exit_code
    except MemoryError:
        click.echo("tokstat: error: out of memory (fix: lower --max-chars, use fewer --workers or fewer segments "
                   "at once, or run on a machine with more memory; no output was written)", err=True)
        return 2
    except (SystemExit, GeneratorExit):
        raise
    except BaseException as e:  # noqa: BLE001 - a bug (or a Rust panic, a BaseException), in one line
        if os.environ.get("TOKSTAT_DEBUG"):
            raise
        msg = str(e).splitlines()[0][:200] if str(e) else ""
        click.echo(f"tokstat: internal error: {type(e).__name__}: {visible(msg)} (fix: rerun with TOKSTAT_DEBUG=1 for "
                   "the traceback and report it)", err=True)
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
        caught.__exit__(None, None, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
