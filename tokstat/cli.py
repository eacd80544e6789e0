"""Command line: each command maps one-to-one onto a function of the Python API; ``main()`` only dispatches."""

from __future__ import annotations

import shlex
import signal
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
@click.option("--workers", type=int, help="worker processes (default: all cores); results do not depend on it")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="where the per-shard counting runs")
@click.option("--address", help="Ray cluster address for --engine ray (default: start a local instance)")
@click.option("--quiet", is_flag=True, help="no progress bar")
def compare(corpus_spec, tokenizers, pivot, languages, out, segments_out, join, seed, columns, workers, engine,
            address, quiet):
    """Token statistics and the premium per (tokenizer, language) on CORPUS_SPEC."""
    corpus = api_corpus.load(corpus_spec, columns=_columns(columns))
    df = compare_api(corpus, list(tokenizers), pivot=pivot, languages=languages.split(",") if languages else None,
                     join=join, seed=seed, segments_out=segments_out, workers=workers, engine=engine,
                     address=address, progress=False if quiet else None)
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


def _mix(value: str | None) -> dict[str, float] | None:
    if not value:
        return None
    try:
        return {k.strip(): float(v) for k, v in (kv.split("=", 1) for kv in value.split(","))}
    except ValueError:
        raise TokstatError(f"bad --mix {value!r}", fix="write --mix zh=0.5,en=0.5") from None


@cli.command("train")
@click.argument("corpus_spec")
@click.option("--algo", type=click.Choice(["bpe", "byte-bpe", "wordpiece", "unigram", "spm-bpe", "spm-unigram"]),
              required=True)
@click.option("--vocab-size", type=int, required=True)
@click.option("--languages", help="comma-separated languages to train on (default: all)")
@click.option("--mix", help="character share per language, e.g. zh=0.5,en=0.5")
@click.option("--out", required=True, help="output folder (tokenizer.json or tokenizer.model + metadata.json)")
@click.option("--seed", default=0, show_default=True)
@click.option("--heldout", default=0.1, show_default=True, help="share of segments held out for evaluation")
def train_cmd(corpus_spec, algo, vocab_size, languages, mix, out, seed, heldout):
    """Train a tokenizer on the train split of CORPUS_SPEC and save it with its metadata."""
    from .train import train

    r = train(api_corpus.load(corpus_spec), algo, vocab_size, languages=languages.split(",") if languages else None,
              mix=_mix(mix), out=out, seed=seed, heldout=heldout)
    sp = r.metadata["split"]
    console.print(f"trained {r.metadata['tokenizer_id']} (vocabulary {r.metadata['actual_vocab_size']:,}) on "
                  f"{sp['train_segments']:,} segments; {sp['heldout_segments']:,} held out (seed {seed})")
    for f in r.files:
        console.print(f"wrote {f}")


@cli.command("sweep")
@click.argument("corpus_spec")
@click.option("--algo", type=click.Choice(["bpe", "byte-bpe", "wordpiece", "unigram", "spm-bpe", "spm-unigram"]),
              default="bpe", show_default=True)
@click.option("--sizes", default="4000,8000,16000,32000,64000", show_default=True)
@click.option("--languages", help="comma-separated subset of languages")
@click.option("--mix", help="character share per language in the training data, e.g. zh=0.5,en=0.5")
@click.option("--pivot", default="en", show_default=True)
@click.option("--d-model", default=4096, show_default=True, help="model width for embedding_params")
@click.option("--tied/--untied", default=False, show_default=True, help="tied input/output embeddings")
@click.option("--seed", default=0, show_default=True)
@click.option("--out", help="write the table (.parquet, .csv or .json)")
@click.option("--plot", help="write a PNG of tokens per character and premium against vocabulary size")
def sweep_cmd(corpus_spec, algo, sizes, languages, mix, pivot, d_model, tied, seed, out, plot):
    """Train vocabularies of several sizes and compare them per language on the held-out split."""
    from .sweep import plot_sweep, sweep

    df = sweep(api_corpus.load(corpus_spec), algo, [int(x) for x in sizes.split(",")],
               languages=languages.split(",") if languages else None, mix=_mix(mix), pivot=pivot,
               d_model=d_model, tied=tied, seed=seed)
    t = Table(title=f"tokstat sweep — {algo}, pivot {pivot}, held-out split")
    cols = [("vocab_size", "vocab"), ("language", "lang"), ("tokens", "tokens"), ("tokens_per_char", "tok/char"),
            ("tokens_per_word", "tok/word"), ("premium", "premium"), ("embedding_params", "embedding params")]
    for _, h in cols:
        t.add_column(h, justify="right")
    for r in df.iter_rows(named=True):
        t.add_row(*[_fmt(r[c], c) for c, _ in cols])
    console.print(t)
    console.print(f"[dim]{df['signature'][0]}[/dim]", highlight=False)
    if out:
        from .io import write_table

        write_table(df, out)
        console.print(f"wrote {out}")
    if plot:
        plot_sweep(df, plot)
        console.print(f"wrote {plot}")


@cli.command("model-info")
@click.option("--model", "model_name", help="preset name (see presets.toml)")
@click.option("--models-file", help="a TOML file of extra presets")
@click.option("--d-model", type=int)
@click.option("--layers", type=int)
@click.option("--heads", type=int)
@click.option("--kv-heads", type=int)
@click.option("--d-ff", type=int)
@click.option("--vocab-size", type=int)
@click.option("--context", type=int)
@click.option("--tied/--untied", default=None)
@click.option("--mlp", type=click.Choice(["gelu", "swiglu"]))
@click.option("--gpu", "gpu_name", default="a100-80gb-sxm", show_default=True, help="for the all-reduce time")
@click.option("--gpus", default=8, show_default=True, help="data-parallel GPUs for the all-reduce time")
def model_info_cmd(model_name, models_file, gpu_name, gpus, **fields):
    """Parameters, FLOPs per token and memory of a model preset or explicit shape."""
    from .cost.model import ModelConfig, preset
    from .cost.report import model_info

    given = {k: v for k, v in fields.items() if v is not None}
    if model_name:
        base = preset(model_name, models_file)
        m = base if not given else ModelConfig(**{**base.__dict__, **given})
    else:
        missing = [k for k in ("d_model", "layers", "heads", "d_ff", "vocab_size", "context") if k not in given]
        if missing:
            raise TokstatError(f"missing {', '.join('--' + k.replace('_', '-') for k in missing)}",
                               fix="pass --model PRESET or every shape option")
        given.setdefault("kv_heads", given["heads"])
        m = ModelConfig(**given)
    t = Table(title=f"{m.name}: {m.source or 'custom shape'}")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_column("formula")
    from .cost.hardware import gpu
    from .cost.model import allreduce_seconds

    g = gpu(gpu_name)
    for q, v, f in model_info(m):
        t.add_row(q, v, f)
    t.add_row(f"gradient all-reduce, {gpus}× {gpu_name}", f"{allreduce_seconds(m, gpus, g.interconnect_gb_s):.3f} s",
              f"2·(n−1)/n·2·params B / {g.interconnect_gb_s:g} GB/s (ring)")
    console.print(t)


@cli.command("cost")
@click.option("--results", required=True, help="output of tokstat compare or tokstat sweep (.parquet/.csv/.json)")
@click.option("--model", "model_name", required=True, help="model preset")
@click.option("--models-file", help="a TOML file of extra presets")
@click.option("--gpu", "gpu_name", required=True, help="accelerator from the catalogue")
@click.option("--gpus", default=1, show_default=True)
@click.option("--mfu", default=0.4, show_default=True, help="model FLOPs utilisation in (0, 1]")
@click.option("--mbu", default=0.7, show_default=True, help="memory-bandwidth utilisation in (0, 1]")
@click.option("--price", type=float, help="USD per GPU-hour (default: the catalogue's)")
@click.option("--train-chars", type=float, help="characters of text trained on, per language")
@click.option("--train-tokens", type=float, help="training tokens, counted in the pivot language")
@click.option("--mix", help="language shares for a mixed row, e.g. zh=0.4,en=0.6")
@click.option("--batch", default=32, show_default=True, help="serving batch size")
@click.option("--out", help="write the table (.parquet, .csv or .json)")
def cost_cmd(results, model_name, models_file, gpu_name, gpus, mfu, mbu, price, train_chars, train_tokens, mix,
             batch, out):
    """Training and serving cost per (tokenizer, language) from compare/sweep results."""
    import polars as pl

    from .cost.hardware import gpu
    from .cost.model import preset
    from .cost.projection import project

    p = results.lower()
    try:
        df = pl.read_parquet(results) if p.endswith(".parquet") else (
            pl.read_csv(results) if p.endswith(".csv") else pl.read_json(results))
    except (OSError, pl.exceptions.PolarsError) as e:
        raise TokstatError(f"cannot read results ({str(e).splitlines()[0][:120]})", path=results,
                           fix="pass a file written by tokstat compare --out or tokstat sweep --out") from None
    cdf = project(df, preset(model_name, models_file), gpu(gpu_name), gpus=gpus, mfu=mfu, mbu=mbu, price=price,
                  train_chars=train_chars, train_tokens=train_tokens, mix=_mix(mix), batch=batch)
    t = Table(title=f"tokstat cost — {model_name} on {gpus}× {gpu_name}, MFU {mfu}, MBU {mbu}")
    cols = [("tokenizer", "tokenizer"), ("language", "lang"), ("vocab_size", "vocab"), ("training_tokens", "train tokens"),
            ("gpu_hours", "GPU-h"), ("dollars", "USD"), ("cost_multiplier", "×pivot"),
            ("kv_cache_bytes_per_1k_chars", "KV B/1k ch"), ("chars_in_context", "chars/ctx"),
            ("decode_s_per_1k_chars", "decode s/1k"), ("serving_usd_per_m_chars", "USD/M ch"), ("fits", "fits"),
            ("recommended", "best")]
    for _, h in cols:
        t.add_column(h, justify="right")
    for r in cdf.iter_rows(named=True):
        t.add_row(*[(f"{r[c]:.3g}" if isinstance(r[c], float) else str(r[c])) for c, _ in cols])
    console.print(t)
    if out:
        from .io import write_table

        write_table(cdf, out)
        console.print(f"wrote {out}")


@cli.command("report")
@click.argument("results", nargs=-1)
@click.option("--out", required=True, help="the HTML file to write")
@click.option("--png", help="also write each chart as DIR/NAME.png")
@click.option("--title", default="tokstat report", show_default=True)
@click.option("--corpus", "corpus_spec", help="run compare (+ sweep + cost) on this corpus first")
@click.option("-t", "--tokenizer", "tokenizers", multiple=True, help="with --corpus: tokenizer spec (repeatable)")
@click.option("--sweep", "sweep_spec", help="with --corpus: a vocabulary sweep, ALGO:SIZE,SIZE,... (e.g. bpe:4000,8000)")
@click.option("--model", "model_name", default="llama2-7b", show_default=True, help="with --corpus: model preset to price")
@click.option("--gpu", "gpu_name", default="h100-sxm", show_default=True, help="with --corpus: accelerator")
@click.option("--train-tokens", type=float, default=2e12, show_default=True, help="with --corpus: pivot-language tokens")
@click.option("--mix", help="with --corpus: language shares, e.g. zh=0.5,en=0.5")
def report_cmd(results, out, png, title, corpus_spec, tokenizers, sweep_spec, model_name, gpu_name, train_tokens, mix):
    """One self-contained HTML report from RESULTS files (compare/sweep/cost --out), or from a fresh
    run on --corpus: comparison, charts, sweep curves, cost per language and every signature."""
    from . import report as rep

    if corpus_spec:
        if results:
            raise TokstatError("pass result files or --corpus, not both", fix="drop the RESULTS arguments")
        if not tokenizers:
            raise TokstatError("--corpus needs at least one tokenizer", fix="add -t SPEC, e.g. -t tiktoken:cl100k_base")
        data = rep.study(corpus_spec, list(tokenizers), sweep=sweep_spec, model=model_name, gpu=gpu_name,
                         train_tokens=train_tokens, mix=_mix(mix))
    else:
        data = list(results)
    path = rep.report(data, out, png=png, title=title)
    console.print(f"wrote {path}" + (f" and the charts as PNG in {png}" if png else ""))


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that every ``finally`` (temporary files, workers) runs."""


def _on_sigterm(signum, frame):
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the click group; a :class:`TokstatError` becomes one line on stderr and exit 2.
    Ctrl-C (exit 130) and SIGTERM (exit 143) remove temporary files, stop the workers and say what
    to rerun; no output file is ever left half-written (they are renamed into place when complete)."""
    args = sys.argv[1:] if argv is None else argv
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        cli.main(args=args, standalone_mode=False)
    except TokstatError as e:
        click.echo(f"tokstat: error: {e}", err=True)
        return 2
    except (click.exceptions.Abort, KeyboardInterrupt) as e:
        term = isinstance(e, Terminated) or isinstance(e.__cause__ or e.__context__, Terminated)
        click.echo(f"tokstat: {'terminated' if term else 'interrupted'}; no output was written, rerun: "
                   f"tokstat {shlex.join(args)}", err=True)
        return 143 if term else 130
    except click.UsageError as e:
        cmd = e.ctx.command_path.replace("python -m tokstat.cli", "tokstat") if e.ctx else "tokstat"
        click.echo(f"tokstat: error: {e.format_message()} (fix: see {cmd} --help)", err=True)
        return 2
    except click.ClickException as e:
        e.show()
        return e.exit_code
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


if __name__ == "__main__":
    sys.exit(main())
