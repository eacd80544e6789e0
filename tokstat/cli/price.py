"""Job 2, price it: ``model-info`` (parameters, FLOPs per token, memory) and ``cost`` (GPU-hours,
dollars, memory and serving per tokenizer and language). Thin mappings onto :mod:`tokstat.cost`."""

from __future__ import annotations

import click

from ..errors import TokstatError
from ..fmt import fmt, visible
from ..io import check_outputs
from .options import WIDE, command, mix_options, model_options, read_results_table, wide_option
from .terminal import LOSSY, _mark_lossy, _print, _table, json_for_terminal


@command("model-info")
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

    from ..cost.hardware import gpu
    from ..cost.info import model_info, model_summary
    from ..cost.model import allreduce_seconds, model_config

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


@command("cost")
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
    from .. import parse
    from ..cost.hardware import gpu
    from ..cost.model import model_config
    from ..cost.projection import project
    from ..io import write_tables

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
        from ..fmt import money

        v = r[c]
        if isinstance(v, float) and c in ("dollars", "usd_per_request"):
            return money(v * 1000 if c == "usd_per_request" else v)
        if isinstance(v, bool):
            return "✓" if v else ""
        return fmt(v, c) if isinstance(v, (int, float)) else str(v)

    from ..cost.choice import decide

    fits = bool((cdf["train_fits"] == "fits").all())
    _print(f"tokstat cost — {model_name} on {gpus}× {gpu_name}, the mix "
           f"{cdf['mix_shares'].drop_nulls()[0].partition(' = ')[0] if cdf['mix_shares'].drop_nulls().len() else 'of equal content'}:")
    for line in decide(rdf, None, cdf, max_unk=max_unk, model=model_name).lines():
        _print(f"  {line}")
    if not fits:
        _print(f"  training memory: {model_name} does not fit {gpus}× {gpu_name} at --tp {tp} --pp {pp} "
               "(below: the split that fits, or what to change); the dollars assume it would")
    _print(_table(f"tokstat cost — {model_name} on {gpus}× {gpu_name}, MFU {cdf['mfu'][0]:.3g} "
                  f"({cdf['mfu_source'][0]}), MBU {mbu}", cols, shown, money_or_number,
                  wide_cols=wide))
    if lossy:
        _print(f"{LOSSY} loses text (below: where); never recommended")
    _print(f"volume: {cdf['volume'][0]}; ×pivot: " + ("the same content in every language (the premium, priced)"
                                                       if held == "content" else
                                                       f"the same number of {held} in every language — not the same "
                                                       "content (the premium is that)"))
    mixes = [(r["tokenizer"], *r["mix_shares"].partition(" = tokens ")[::2])
             for r in cdf.filter(cdf["mix_shares"].is_not_null()).iter_rows(named=True)]
    for text in dict.fromkeys(m[1] for m in mixes):        # the same for every tokenizer: once
        _print(f"mix: {text}")
    for t, _, toks in mixes if WIDE["on"] else ():
        _print(f"  in {t}'s tokens: {toks}")
    _print(f"price: ${cdf['price_usd_h'][0]:,.2f} per GPU-hour ({cdf['price_source'][0]}); training memory: "
           f"tp {tp} × pp {pp} × dp {gpus // (tp * pp)}, ZeRO-{zero}, {recompute} recompute, micro-batch {micro_batch}"
           f" × {cdf['seq_len'][0]:,}-token sequences"
           f" ({'fits' if fits else 'does not fit'} in {gpu_name} memory); serving: "
           f"one tensor-parallel replica over all {gpus} GPU(s) (--tp/--pp set the training layout only), "
           f"weights {weight_dtype}, KV {kv_dtype}, requests of {prompt_chars:g} + {output_chars:g} pivot-language characters' "
           f"content, batch {batch}")
    if not fits:
        from ..cost.model import smallest_fitting_split

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


#: the job, as ``tokstat --help`` heads its commands
JOB = "Price it"
#: the commands of this job (registered on the ``tokstat`` group by :mod:`tokstat.cli`)
COMMANDS = [model_info_cmd, cost_cmd]
