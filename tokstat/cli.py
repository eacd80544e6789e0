"""Command line: each command maps one-to-one onto a function of the Python API; ``main()`` only dispatches."""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.table import Table

from . import api_corpus
from .compare import compare as compare_api
from .errors import TokstatError

console = Console(width=None if sys.stdout.isatty() else 170)


def _columns(value: str | None):
    if not value:
        return None
    if "=" in value:
        return dict(kv.split("=", 1) for kv in value.split(","))
    return value.split(",")


@click.group()
@click.version_option(package_name="tokstat")
def cli():
    """tokstat: token statistics, language premiums and GPU cost per language."""


@cli.group()
def corpus():
    """Inspect corpora."""


@corpus.command("info")
@click.argument("spec")
@click.option("--columns", help="languages of the columns in order (en,zh,_) or lang=COLUMN pairs")
@click.option("--split", help="dataset split (hf: corpora)")
@click.option("--encoding-errors", type=click.Choice(["strict", "replace"]), default="strict")
def corpus_info_cmd(spec, columns, split, encoding_errors):
    """Segments, empty segments, characters and bytes per language of corpus SPEC."""
    info = api_corpus.info(spec, columns=_columns(columns), split=split, encoding_errors=encoding_errors)
    t = Table(title=f"{info.name}: {info.segments} segments")
    for col in ("language", "segments", "empty", "chars", "bytes"):
        t.add_column(col, justify="right" if col != "language" else "left")
    for lang, d in info.per_language.items():
        t.add_row(lang, *(f"{d[k]:,}" for k in ("segments", "empty", "chars", "bytes")))
    console.print(t)


SHOWN = [("tokenizer", "tokenizer"), ("language", "lang"), ("tokens", "tokens"), ("tokens_per_char", "tok/char"),
         ("bytes_per_token", "bytes/tok"), ("tokens_per_word", "tok/word"), ("continued_word_rate", "cont.words"),
         ("split_char_rate", "split chars"), ("unk_rate", "unk"), ("boundary_f1", "bound.F1"),
         ("renyi_efficiency", "Rényi"), ("premium", "premium"), ("premium_ci_low", "95% CI")]


def _fmt(v, col):
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.3f}" if col not in ("continued_word_rate", "split_char_rate", "unk_rate") else f"{v:.1%}"
    return f"{v:,}" if isinstance(v, int) else str(v)


@cli.command()
@click.argument("corpus_spec")
@click.option("-t", "--tokenizer", "tokenizers", multiple=True, required=True, help="tokenizer spec (repeatable)")
@click.option("--pivot", default="en", show_default=True, help="language the premium is measured against")
@click.option("--languages", help="comma-separated subset of languages")
@click.option("--out", help="write the table (.parquet, .csv or .json)")
@click.option("--segments-out", help="write per-segment counts (.parquet, .csv or .json)")
@click.option("--join", is_flag=True, help="encode each language's segments joined by a space as one text")
@click.option("--seed", default=0, show_default=True, help="bootstrap seed")
@click.option("--columns", help="corpus columns (see corpus info)")
def compare(corpus_spec, tokenizers, pivot, languages, out, segments_out, join, seed, columns):
    """Token statistics and the premium per (tokenizer, language) on CORPUS_SPEC."""
    corpus = api_corpus.load(corpus_spec, columns=_columns(columns))
    df = compare_api(corpus, list(tokenizers), pivot=pivot, languages=languages.split(",") if languages else None,
                     join=join, seed=seed, segments_out=segments_out)
    t = Table(title=f"tokstat compare — {corpus.name}, pivot {pivot}")
    for _, head in SHOWN:
        t.add_column(head, justify="left" if head in ("tokenizer", "lang") else "right")
    for r in df.iter_rows(named=True):
        cells = [_fmt(r[c], c) for c, _ in SHOWN[:-1]]
        lo, hi = r["premium_ci_low"], r["premium_ci_high"]
        cells.append("–" if lo is None else f"{lo:.3f}–{hi:.3f}")
        t.add_row(*cells)
    console.print(t)
    for sig in dict.fromkeys(df["signature"].to_list()):
        console.print(f"[dim]{sig}[/dim]", highlight=False)
    if out:
        from .io import write_table

        write_table(df, out)
        console.print(f"wrote {out}")


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the click group; a :class:`TokstatError` becomes one line on stderr and exit 2."""
    try:
        cli.main(args=argv, standalone_mode=False)
    except TokstatError as e:
        click.echo(f"tokstat: error: {e}", err=True)
        return 2
    except click.exceptions.Abort:
        click.echo("tokstat: interrupted; nothing was written, rerun the same command", err=True)
        return 130
    except click.ClickException as e:
        e.show()
        return e.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
