"""Job 3, choose or build a vocabulary: ``train``, ``sweep``, ``vocab-plan`` and ``extend``. Thin
mappings onto :mod:`tokstat.train`, :mod:`tokstat.sweep`, :mod:`tokstat.vocabplan` and
:mod:`tokstat.extend`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import TokstatError
from ..fmt import fmt, visible, with_interval
from ..io import check_outputs
from .options import (
    ALGOS,
    _parity,
    _pop_corpus,
    backend_option,
    boot_seed_option,
    command,
    corpus_options,
    inputs_of,
    load,
    max_chars_option,
    mix_options,
    model_options,
    parity_option,
    pretokenizer_option,
    quiet_option,
    read_results_table,
    sample_bytes_option,
    split_options,
    wide_option,
)
from .terminal import _premium_cell, _print, _signatures, _table


@command("train")
@click.argument("corpus_spec")
@corpus_options
@click.option("--algo", type=click.Choice(ALGOS), required=True)
@click.option("--vocab-size", type=int, required=True)
@mix_options("the training text's languages")
@sample_bytes_option
@parity_option
@pretokenizer_option
@click.option("--out", required=True, help="output folder (tokenizer.json or tokenizer.model + metadata.json)")
@split_options
@quiet_option
def train_cmd(corpus_spec, algo, vocab_size, mix, mix_unit, sample_bytes, parity, pretokenizer, out, seed, heldout, quiet,
              **kw):
    """Train a tokenizer on the train split of CORPUS_SPEC and save it with its metadata."""
    from .. import parse
    from ..split import Split
    from ..train import train

    c = load(corpus_spec, **_pop_corpus(kw))
    check_outputs({"--out": (out, "folder")}, inputs=inputs_of(corpus_spec, c))
    r = train(c, algo, vocab_size, languages=list(c.languages), mix=parse.mix(mix), mix_unit=mix_unit, out=out,
              split=Split(heldout, seed), sample_bytes=sample_bytes, parity=_parity(parity), pretokenizer=pretokenizer)
    sp = r.metadata["split"]
    _print(f"trained {r.metadata['tokenizer_id']} (vocabulary {r.metadata['actual_vocab_size']:,}) on "
           f"{sp['train_segments']:,} segments; {sp['heldout_segments']:,} held out (seed {seed})")
    for f in r.files:
        _print(f"wrote {f}")


@command("sweep")
@click.argument("corpus_spec")
@corpus_options
@click.option("--algo", type=click.Choice(ALGOS), default="bpe", show_default=True)
@click.option("--sizes", default="4000,8000,16000,32000,64000", show_default=True, help="vocabulary sizes")
@mix_options("the training text's languages")
@sample_bytes_option
@click.option("--eval", "eval_spec", help="a parallel corpus for the premiums of a sweep trained on monolingual documents")
@click.option("--fairness", is_flag=True, help="sweep plain and parity-aware BPE and print the price of fairness per size")
@parity_option
@pretokenizer_option
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
def sweep_cmd(corpus_spec, algo, sizes, mix, mix_unit, sample_bytes, eval_spec, fairness, parity, pretokenizer, pivot, d_model,
              tied, seed, heldout, boot_seed, out, plot, backend, max_chars, quiet, **kw):
    """Train vocabularies of several sizes and compare them per language on the held-out split."""
    from .. import parse
    from ..io import table_bytes, write_outputs
    from ..split import Split
    from ..sweep import plot_sweep, sweep

    size_list, mixd, split = parse.sizes(sizes), parse.mix(mix), Split(heldout, seed)
    c = load(corpus_spec, **_pop_corpus(kw))
    check_outputs({"--out": (out, "table"), "--plot": (plot, "png")}, inputs=inputs_of(corpus_spec, c))
    kw_sweep = dict(mix=mixd, mix_unit=mix_unit, sample_bytes=sample_bytes, eval_corpus=eval_spec, pivot=pivot,
                    d_model=d_model, tied=tied, split=split, boot_seed=boot_seed, max_chars=max_chars,
                    progress=False if quiet else None, parity=_parity(parity), backend=backend,
                    pretokenizer=pretokenizer)
    if parity and not fairness and algo != "parity-bpe":
        raise TokstatError("--parity sets parity-aware BPE", fix="add --algo parity-bpe or --fairness, or drop --parity")
    if fairness:
        from ..sweep import fairness_sentence, fairness_sweep, price_of_fairness

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


@command("extend")
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

    import polars as pl

    from .. import parse
    from ..extend import extension_plan
    from ..io import table_bytes, write_outputs
    from ..split import Split

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



@command("vocab-plan")
@click.option("--sweep", "sweep_file", help="a tokstat sweep --out table (instant); or --corpus to run one")
@click.option("--corpus", "corpus_spec", help="sweep this corpus first (one BPE training at the largest size)")
@corpus_options
@click.option("--algo", type=click.Choice(ALGOS), default="bpe", show_default=True, help="with --corpus")
@click.option("--sizes", default="2000,4000,8000,16000,32000,64000", show_default=True, help="with --corpus")
@pretokenizer_option
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
def vocab_plan_cmd(sweep_file, corpus_spec, algo, sizes, pretokenizer, model_name, models_file, non_vocab_params, d_model, mix,
                   mix_unit, sample_bytes, eval_spec, flops,
                   max_premium, serve_chars, train_chars, gpu_name, seed, heldout, out, png, as_json, quiet, seq_len, **kw):
    """The vocabulary size for a model and language mix: Tao et al. 2024's three approaches under
    your corpus's tokens-per-character curves, with the flat region, fairness and serving variants."""

    from .. import parse
    from ..cost.model import model_config
    from ..io import table_bytes, write_outputs
    from ..split import Split
    from ..vocabplan import per_size_table, plan_from, plot_plan

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
                                seq_len=seq_len, sample_bytes=sample_bytes, eval_corpus=eval_spec, pretokenizer=pretokenizer)
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


#: the job, as ``tokstat --help`` heads its commands
JOB = "Choose or build a vocabulary"
#: the commands of this job (registered on the ``tokstat`` group by :mod:`tokstat.cli`)
COMMANDS = [train_cmd, sweep_cmd, vocab_plan_cmd, extend_cmd]
