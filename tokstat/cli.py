"""Command line: each command maps one-to-one onto a function of the Python API; ``main()`` only dispatches."""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.table import Table

from . import api_corpus
from .errors import TokstatError

console = Console()


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
