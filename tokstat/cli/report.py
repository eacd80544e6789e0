"""Job 4, report: ``report``, one page from result files or from a corpus run end to end
(:func:`tokstat.study.study`, :func:`tokstat.report.report`)."""

from __future__ import annotations

import click

from ..errors import TokstatError
from ..io import check_outputs
from .options import (
    _pop_corpus,
    boot_seed_option,
    command,
    corpus_options,
    inputs_of,
    load,
    max_chars_option,
    mix_options,
    pretokenizer_option,
    quiet_option,
    sample_bytes_option,
    split_options,
    tokenizer_options,
)
from .terminal import _print


@command("report")
@click.argument("results", nargs=-1)
@click.option("--out", required=True, help="the file to write: the HTML page (.html), or its answers as Markdown "
              "(.md) or JSON (.json)")
@click.option("--format", "report_format", type=click.Choice(["html", "md", "json"]),
              help="html (the page), md or json (the answers with their numbers, intervals and evidence, text a "
                   "lead pastes into a decision document); default: from --out's suffix")
@click.option("--png", help="also write each chart as DIR/NAME.png")
@click.option("--title", default="tokstat report", show_default=True)
@click.option("--corpus", "corpus_spec", help="run compare (+ sweep + cost) on this corpus first")
@corpus_options
@tokenizer_options(required=False)
@click.option("--sweep", "sweep_spec", help="with --corpus: a vocabulary sweep, ALGO:SIZE,SIZE,... (e.g. bpe:4000,8000)")
@pretokenizer_option
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
def report_cmd(results, out, report_format, png, title, corpus_spec, tokenizers, sweep_spec, pretokenizer, model_name,
               gpu_name, train_tokens, gpus, mix,
               mix_unit, sample_bytes, eval_spec, pivot, seed, heldout, boot_seed, max_chars, quiet, seq_len, **kw):
    """One self-contained HTML report from RESULTS files (compare/sweep/cost --out, compare
    --segments-out), or from a fresh run on --corpus: the answers first (which tokenizer, what each
    language costs, which vocabulary size) with their assumptions, then the evidence per corpus."""
    from ..report import read_results, report
    from ..split import Split

    from ..report import format_of

    model_flag, model_name = model_name, model_name or "llama2-7b"
    copts = _pop_corpus(kw)
    kind = format_of(out, report_format, png)        # before any work
    if corpus_spec:
        if results:
            raise TokstatError("pass result files or --corpus, not both", fix="drop the RESULTS arguments")
        if not tokenizers:
            raise TokstatError("--corpus needs at least one tokenizer", fix="add -t SPEC, e.g. -t tiktoken:cl100k_base")
        from ..study import study

        c = load(corpus_spec, **copts)
        check_outputs({"--out": (out, kind), "--png": (png, "folder")}, inputs=inputs_of(corpus_spec, c))
        data = study(c, list(tokenizers), sweep=sweep_spec, model=model_name, gpu=gpu_name, train_tokens=train_tokens,
                     mix=mix, mix_unit=mix_unit, pivot=pivot, split=Split(heldout, seed), boot_seed=boot_seed,
                     progress=False if quiet else None, max_chars=max_chars, seq_len=seq_len, gpus=gpus,
                     sample_bytes=sample_bytes, eval_corpus=eval_spec, pretokenizer=pretokenizer)
    else:
        if (tokenizers or sweep_spec or seq_len is not None or train_tokens is not None or gpus != 1
                or sample_bytes is not None or eval_spec or pretokenizer):
            raise TokstatError("-t, --sweep, --pretokenizer, --seq-len, --train-tokens, --gpus, --sample-bytes and --eval "
                               "need --corpus "
                               "(result files carry their own)",
                               fix="add --corpus SPEC, or pass result files only")
        check_outputs({"--out": (out, kind), "--png": (png, "folder")}, inputs=list(results))
        data = read_results(list(results))
    path = report(data, out, png=png, title=title, model=None if corpus_spec else model_flag,
                  mix=None if corpus_spec else mix, mix_unit=mix_unit, fmt=kind)
    _print(f"wrote {path}" + (f" and the charts as PNG in {png}" if png else ""))


# ---------------------------------------------------------------- entry point


#: the job, as ``tokstat --help`` heads its commands
JOB = "Report"
#: the commands of this job (registered on the ``tokstat`` group by :mod:`tokstat.cli`)
COMMANDS = [report_cmd]
