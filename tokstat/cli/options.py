"""The options every command shares, declared once: how a corpus is read (:func:`corpus_options`),
which tokenizers (:func:`tokenizer_options`), the split, the bootstrap seed, the mix, the model;
:class:`Command`, which range-checks every number and records every input before a command runs
(so that no output replaces one). Nothing heavy is imported here."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import TokstatError
from .terminal import WIDE

ALGOS = ["bpe", "byte-bpe", "wordpiece", "unigram", "spm-bpe", "spm-unigram", "parity-bpe"]
#: tokstat.train.PRETOKENIZERS, named here so that the CLI's import stays light (tests/test_train_sweep.py checks them equal)
PRETOKENIZER_NAMES = ["o200k", "llama3", "deepseek-v3", "gpt2"]



def read_results_table(path, what: str):
    """A result table given to a command, read and checked as the report reads it: columns of the
    types tokstat writes, rates above zero (one error naming the file otherwise)."""
    from ..io import read_table
    from ..metrics import check_rates
    from ..metrics import one_study
    from ..report.read import check_types

    df = check_types(read_table(path, what), path)
    check_rates(df, path)
    one_study(df, path)         # two corpora, or a language twice for a tokenizer: never priced or grouped as one
    return df




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


def pretokenizer_option(f):
    return click.option("--pretokenizer", type=click.Choice(PRETOKENIZER_NAMES), default=None,
                        help=f"how byte-level BPE cuts text before merging (default {PRETOKENIZER_NAMES[0]}: letters keep "
                        "their combining marks; gpt2 reproduces older results): docs/training.md")(f)


def _parity(value: str | None) -> dict | None:
    """``--parity variant=window,balance=bytes`` -> a dict (checked by :func:`tokstat.train.parity_options`)."""
    if not value:
        return None
    from ..train import parity_options

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
    from .. import parse
    from ..loaders import load_corpus

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

    def parse_args(self, ctx, args):
        """An option that takes one value given twice (``--out a.csv --out b.parquet``) is an error
        naming it: click would keep the last and drop the other silently."""
        opts, _, order = self.make_parser(ctx).parse_args(args=list(args))
        seen = set()
        for prm in order:
            if isinstance(prm, click.Option) and not prm.multiple and not prm.count:
                if prm.name in seen:
                    raise click.UsageError(f"{prm.opts[0]} is given more than once; only one "
                                           "would count (pass it once)", ctx=ctx)
                seen.add(prm.name)
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        from .. import ranges
        from ..io import note_input, run_scope

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



backend_option = click.option(
    "--backend", type=click.Choice(["auto", "fast", "reference"]), default="auto", show_default=True,
    help="who produces the token ids: fast = gigatoken for byte-level BPE (pip install 'tokstat[fast]'), "
         "verified id by id against the reference library on a sample of every language; reference = each "
         "tokenizer's own library; auto = fast where installed and verified. Every number is the same")



def model_options(f):
    return _stack(
        click.option("--model", "model_name", help="preset name (see presets.toml)"),
        click.option("--models-file", help="a TOML file of extra presets"),
    )(f)




def command(name: str | None = None, **kw):
    """``@click.command(name, cls=Command)``: a tokstat command (range-checked numbers, recorded inputs)."""
    return click.command(name, cls=Command, **kw)
