"""Per-language projection: token counts -> training compute, GPU-hours, dollars, KV cache, latency, serving cost.

Inputs are the rows of ``compare`` (or ``sweep``): tokens per character and the premium per
(tokenizer, language). Roofline for inference: a phase is compute bound when its FLOPs at
peak·MFU take longer than moving its bytes at bandwidth·MBU, else memory-bandwidth bound.
"""

from __future__ import annotations

import math

import polars as pl

from ..errors import TokstatError
from ..parse import mix as parse_mix
from .hardware import GPU, check_mfu, gpu_hours
from .model import (ModelConfig, forward_flops_per_token, inference_weight_bytes, kv_cache_bytes_per_token,
                    training_flops_per_token)

COST_COLUMNS = ["tokenizer", "language", "tokenizer_family", "vocab_size", "vocab_source", "tokens_per_char", "premium",
                "unk_rate", "training_tokens",
                "training_flops", "gpu_hours", "dollars", "cost_multiplier", "kv_cache_bytes_per_1k_chars",
                "chars_in_context", "prefill_s_per_1k_chars", "prefill_bound", "decode_s_per_1k_chars",
                "decode_bound", "serving_usd_per_m_chars", "fits", "recommended", "not_recommended_because",
                "wall_clock_days", "mfu", "mfu_source"]
#: above this share of characters read as unknown tokens a tokenizer loses text: never recommended
MAX_UNK = 0.01


def _roofline(flops: float, nbytes: float, g: GPU, gpus: int, mfu: float, mbu: float) -> tuple[float, str]:
    """max(FLOPs / (peak·MFU·n), bytes / (bandwidth·MBU·n)) and which bound it is."""
    tc = flops / (g.bf16_tflops * 1e12 * mfu * gpus)
    tm = nbytes / (g.bandwidth_gb_s * 1e9 * mbu * gpus)
    return (tc, "compute") if tc >= tm else (tm, "memory")


def project_row(tpc: float, premium: float | None, m: ModelConfig, g: GPU, *, gpus: int, mfu: float, mbu: float,
                price: float, train_chars: float | None, train_tokens: float | None, batch: int,
                dtype: str) -> dict:
    """All cost columns for one language with ``tpc`` tokens per character."""
    if train_chars is not None:
        tokens = train_chars * tpc          # the same text, in this language
    else:
        tokens = train_tokens * (premium if premium is not None else 1.0)  # pivot tokens -> this language
    flops = tokens * training_flops_per_token(m)
    hours = gpu_hours(flops, g, mfu)
    kv = kv_cache_bytes_per_token(m, dtype)
    w = inference_weight_bytes(m, dtype)
    t = 1000 * tpc                           # tokens in 1,000 characters
    prefill, pb = _roofline(t * forward_flops_per_token(m, context=max(int(t), 1)), w + t * kv, g, gpus, mfu, mbu)
    # one decode step serves `batch` sequences: all weights plus their KV caches (mid-length) are read
    step, db = _roofline(batch * forward_flops_per_token(m, context=max(int(t), 1)), w + batch * kv * t / 2,
                         g, gpus, mfu, mbu)
    serving = price * gpus / 3600 * step / batch * tpc * 1e6
    fits = w + batch * m.context * kv <= gpus * g.memory_gb * 1e9
    return {"training_tokens": tokens, "training_flops": flops, "gpu_hours": hours, "dollars": hours * price,
            "kv_cache_bytes_per_1k_chars": kv * t, "chars_in_context": m.context / tpc,
            "prefill_s_per_1k_chars": prefill, "prefill_bound": pb, "decode_s_per_1k_chars": step * t,
            "decode_bound": db, "serving_usd_per_m_chars": serving, "fits": "fits" if fits else "does not fit"}


def project(results: pl.DataFrame, model: ModelConfig, g: GPU, *, gpus: int = 1, mfu: float | None = None,
            mbu: float = 0.7, price: float | None = None, train_chars: float | None = None,
            train_tokens: float | None = None, mix: dict[str, float] | None = None, batch: int = 32,
            dtype: str = "bf16", vocab: str = "tokenizer", max_unk: float = MAX_UNK) -> pl.DataFrame:
    """One row per (tokenizer, language[, vocab size]) of ``results`` (+ a ``mix`` row per tokenizer).

    ``vocab="tokenizer"`` (default) prices each row with its tokenizer's own vocabulary (the
    ``vocab_size`` column of compare/sweep results: embedding and unembedding parameters, the
    2·d·V logits FLOPs, weight memory and decode bytes); ``vocab="model"`` pins the preset's.
    ``recommended`` is the cheapest row per language among reliable ones: a row whose ``unk_rate``
    is above ``max_unk`` loses text and says so in ``not_recommended_because``. ``mfu`` defaults to
    the accelerator generation's calibrated value (:func:`~tokstat.cost.calibration.default_mfu`);
    the MFU used and its source are columns of every row."""
    from .calibration import default_mfu

    mfu_source = "given"
    if mfu is None:
        mfu, mfu_source = default_mfu(g.name)
    if (train_chars is None) == (train_tokens is None):
        raise TokstatError("say how much text is trained on", fix="pass exactly one of --train-chars, --train-tokens")
    check_mfu(mfu)
    for opt, v in (("--train-chars", train_chars), ("--train-tokens", train_tokens), ("--price", price)):
        if v is not None and not (math.isfinite(v) and v > 0):
            raise TokstatError(f"{opt} must be a finite positive number, got {v}", fix=f"e.g. {opt} "
                               + {"--train-chars": "1e12", "--train-tokens": "2e12", "--price": "2.5"}[opt])
    if not 0 < mbu <= 1:
        raise TokstatError(f"MBU must be in (0, 1], got {mbu}", fix="typical values are 0.6-0.8")
    if vocab not in ("tokenizer", "model"):
        raise TokstatError(f"unknown vocabulary source {vocab!r}", fix="use --vocab tokenizer or --vocab model")
    if not (math.isfinite(max_unk) and 0 <= max_unk < 1):
        raise TokstatError(f"--max-unk must be in [0, 1), got {max_unk}", fix="e.g. --max-unk 0.01")
    if gpus < 1 or batch < 1:
        raise TokstatError("--gpus and --batch must be at least 1", fix="e.g. --gpus 8 --batch 32")
    need = {"tokenizer", "language", "tokens_per_char", "premium"}
    if not need <= set(results.columns):
        raise TokstatError(f"results lack columns {sorted(need - set(results.columns))}",
                           fix="pass the output of tokstat compare or tokstat sweep")
    mix = parse_mix(mix)
    price = g.price_usd_h if price is None else price
    rows = []
    own = vocab == "tokenizer" and "vocab_size" in results.columns and results["vocab_size"].is_not_null().all()
    if vocab == "tokenizer" and not own:
        import warnings

        warnings.warn(f"the results carry no vocab_size per tokenizer: every row is priced with {model.name}'s "
                      f"vocabulary ({model.vocab_size:,}); rerun tokstat compare for each tokenizer's own", stacklevel=2)
    has_unk = "unk_rate" in results.columns
    keys = ["tokenizer", "vocab_size"] if "vocab_size" in results.columns else ["tokenizer"]
    for _, grp in results.group_by(keys, maintain_order=True):
        langs = grp.to_dicts()
        vs = int(langs[0]["vocab_size"]) if own else model.vocab_size
        m = model.with_vocab(vs) if vs != model.vocab_size else model
        fam = langs[0].get("tokenizer_family")
        todo = [(r["language"], r["tokens_per_char"], r["premium"], r.get("unk_rate")) for r in langs if r["tokens_per_char"]]
        if mix:
            by = {r["language"]: r for r in langs}
            missing = set(mix) - set(by)
            if missing:
                raise TokstatError(f"--mix names languages not in the results: {', '.join(sorted(missing))}",
                                   fix=f"use {', '.join(sorted(by))}")
            wsum = sum(mix.values())
            tpc = sum(w * by[k]["tokens_per_char"] for k, w in mix.items()) / wsum
            prem = sum(w * (by[k]["premium"] or 1.0) for k, w in mix.items()) / wsum
            unk = max((by[k].get("unk_rate") or 0.0) for k in mix) if has_unk else None
            todo.append(("mix", tpc, prem, unk))
        for lang, tpc, prem, unk in todo:
            why = (f"unknown tokens on {unk:.1%} of characters (over {max_unk:.1%}): it loses text"
                   if unk is not None and unk > max_unk else None)
            r = {"tokenizer": langs[0]["tokenizer"], "language": lang, "tokenizer_family": fam, "vocab_size": vs,
                 "vocab_source": "tokenizer" if own else f"model ({model.name})", "tokens_per_char": tpc,
                 "premium": prem, "unk_rate": unk, "not_recommended_because": why}
            r.update(project_row(tpc, prem, m, g, gpus=gpus, mfu=mfu, mbu=mbu, price=price, train_chars=train_chars,
                                 train_tokens=train_tokens, batch=batch, dtype=dtype))
            rows.append(r)
    # what the same content costs in this language relative to the pivot, with the same model and
    # hardware: every cost term is proportional to the token count, so it is the premium
    df = pl.DataFrame(rows, schema_overrides={"unk_rate": pl.Float64, "not_recommended_because": pl.String,
                                              "tokenizer_family": pl.String},
                      infer_schema_length=None).with_columns(pl.col("premium").fill_null(1.0).alias("cost_multiplier"))
    # recommended: the cheapest reliable vocabulary per language (sweep results), tokenizer otherwise
    ok = pl.col("not_recommended_because").is_null()
    cheapest = pl.when(ok).then(pl.col("dollars")).otherwise(None).min().over("language")
    df = df.with_columns((ok & (pl.col("dollars") == cheapest)).fill_null(False).alias("recommended"))
    df = df.with_columns((pl.col("gpu_hours") / gpus / 24).alias("wall_clock_days"), pl.lit(mfu).alias("mfu"),
                         pl.lit(mfu_source).alias("mfu_source"))
    return df.select(COST_COLUMNS)
