"""Per-language projection: token counts -> training compute, GPU-hours, dollars, memory, latency, serving cost.

Inputs are the rows of ``compare`` (or ``sweep``): tokens per character, the premium and the
vocabulary per (tokenizer, language). Every tokenizer is priced on the same *content* (see
:func:`volume_tokens`). Roofline for inference: a phase is compute bound when its FLOPs at
peak·MFU take longer than moving its bytes at bandwidth·MBU, else memory-bandwidth bound.
"""

from __future__ import annotations

import math

import polars as pl

from ..errors import TokstatError
from ..metrics import pivot_of
from ..mix import Mix, amounts_from_results, check_languages
from ..mix import parse as parse_mix
from .hardware import GPU, check_goodput, check_mfu, gpu_hours
from .model import (BYTES, ModelConfig, active_params, decode_step_bytes, decode_step_flops, forward_flops_per_token,
                    inference_weight_bytes, kv_cache_bytes_per_token, kv_cache_tokens, tp_allreduce_seconds, train_seq_len,
                    training_flops_per_token, training_memory_per_gpu)

COST_COLUMNS = ["tokenizer", "language", "tokenizer_family", "vocab_size", "vocab_source", "tokens_per_char", "premium",
                "unk_rate", "volume", "training_tokens", "training_flops", "gpu_hours", "wall_clock_days", "dollars",
                "cost_multiplier", "train_memory_gb_per_gpu", "train_fits", "kv_cache_bytes_per_1k_chars",
                "chars_in_context", "prefill_s_per_1k_chars", "prefill_bound", "decode_s_per_1k_chars",
                "decode_bound", "serving_usd_per_m_chars", "request_prefill_s", "request_decode_s",
                "usd_per_request", "serving_multiplier", "fits", "recommended", "not_recommended_because",
                "mfu", "mfu_source", "seq_len", "train_precision", "goodput", "price_usd_h", "price_source",
                "model", "gpu", "gpus", "prompt_chars", "output_chars", "requested_size", "mix_shares", "mix_spec",
                "held_equal", "mix_rank_tokens", "mix_rank_train", "mix_rank_serve", "signature"]
#: above this share of characters read as unknown tokens a tokenizer loses text: never recommended
from ..metrics import MAX_UNK  # noqa: E402 - one threshold for every view
#: the default training budget: Chinchilla's ~20 tokens per parameter (Hoffmann et al. 2022), in
#: tokens of the pivot language counted by the reference tokenizer
TOKENS_PER_PARAM = 20.0
WEIGHT_PRECISIONS = ("bf16", "fp8", "int8", "int4")
KV_PRECISIONS = ("bf16", "fp8", "int8")


def _roofline(flops: float, nbytes: float, g: GPU, gpus: int, mfu: float, mbu: float) -> tuple[float, str]:
    """max(FLOPs / (peak·MFU·n), bytes / (bandwidth·MBU·n)) and which bound it is."""
    tc = flops / (g.bf16_tflops * 1e12 * mfu * gpus)
    tm = nbytes / (g.bandwidth_gb_s * 1e9 * mbu * gpus)
    return (tc, "compute") if tc >= tm else (tm, "memory")


def prefill_seconds(m: ModelConfig, g: GPU, *, batch: int, seq: int, mfu: float, mbu: float, gpus: int = 1,
                    weights: str = "bf16", kv_dtype: str = "bf16") -> tuple[float, str]:
    """Prefill of ``batch`` sequences of ``seq`` tokens: the roofline of their forward FLOPs and the
    bytes of the weights and the KV written (the formula :func:`serving` prices requests with)."""
    kv = kv_cache_bytes_per_token(m, kv_dtype)
    t, bound = _roofline(batch * seq * forward_flops_per_token(m, context=seq),
                         inference_weight_bytes(m, weights) + batch * seq * kv, g, gpus, mfu, mbu)
    return t + tp_allreduce_seconds(m, batch * seq, gpus, g), bound


def decode_step_seconds(m: ModelConfig, g: GPU, *, batch: int, context: int, mfu: float, mbu: float, gpus: int = 1,
                        weights: str = "bf16", kv_dtype: str = "bf16") -> tuple[float, str]:
    """One decoding step of ``batch`` sequences holding ``context`` tokens of cache: the roofline of
    one token's forward FLOPs each and the bytes of the weights and the batch's KV caches read."""
    t, bound = _roofline(decode_step_flops(m, batch, context), decode_step_bytes(m, batch, context, weights, kv_dtype),
                         g, gpus, mfu, mbu)
    return t + tp_allreduce_seconds(m, batch, gpus, g), bound


def serving(tpc: float, m: ModelConfig, g: GPU, *, gpus: int, mfu: float, mbu: float, price: float, batch: int,
            weights: str = "bf16", kv_dtype: str = "bf16", prompt_tokens: float = 250,
            output_tokens: float = 62.5) -> dict:
    """Serving columns for a language with ``tpc`` tokens per character.

    Per 1,000 characters of this language: prefill of them, and decoding them with a batch of
    ``batch`` (each step reads the weights and the batch's KV caches at mid-length). Per request
    (``prompt_tokens`` in, ``output_tokens`` out, this language's tokens for the request's content):
    prefill of the prompt, then the output tokens decoded
    one step at a time at the mean KV length p + o/2, each step shared by ``batch`` requests; the
    GPUs are priced for the prefill and for 1/batch of every step. Tensor-parallel serving over
    ``gpus`` pays two all-reduces per layer (:func:`~tokstat.cost.model.tp_allreduce_seconds`).
    ``weights`` and ``kv_dtype`` are the two precisions."""
    kv = kv_cache_bytes_per_token(m, kv_dtype)
    w = inference_weight_bytes(m, weights)
    comm = g
    t = 1000 * tpc                           # tokens in 1,000 characters
    prefill, pb = _roofline(t * forward_flops_per_token(m, context=max(int(t), 1)), w + t * kv, g, gpus, mfu, mbu)
    prefill += tp_allreduce_seconds(m, t, gpus, comm)
    step, db = _roofline(decode_step_flops(m, batch, t / 2), decode_step_bytes(m, batch, t / 2, weights, kv_dtype),
                         g, gpus, mfu, mbu)
    step += tp_allreduce_seconds(m, batch, gpus, comm)
    p, o = prompt_tokens, output_tokens
    req_prefill, _ = _roofline(p * forward_flops_per_token(m, context=max(int(p), 1)), w + p * kv, g, gpus, mfu, mbu)
    req_prefill += tp_allreduce_seconds(m, p, gpus, comm)
    mid = p + o / 2
    req_step, _ = _roofline(decode_step_flops(m, batch, mid), decode_step_bytes(m, batch, mid, weights, kv_dtype),
                            g, gpus, mfu, mbu)
    req_step += tp_allreduce_seconds(m, batch, gpus, comm)
    per_s = price * gpus / 3600
    fits = w + batch * kv_cache_tokens(m, p + o) * kv <= gpus * g.memory_gb * 1e9   # the batch's requests, not full contexts
    return {"kv_cache_bytes_per_1k_chars": kv * t, "chars_in_context": m.context / tpc,
            "prefill_s_per_1k_chars": prefill, "prefill_bound": pb, "decode_s_per_1k_chars": step * t,
            "decode_bound": db, "serving_usd_per_m_chars": per_s * step / batch * tpc * 1e6,
            "request_prefill_s": req_prefill, "request_decode_s": o * req_step,
            "usd_per_request": per_s * (req_prefill + o * req_step / batch), "fits": "fits" if fits else "does not fit"}


def project_row(tpc: float, tokens: float, m: ModelConfig, g: GPU, *, gpus: int, mfu: float, mbu: float,
                price: float, batch: int, train_layout: dict | None = None, train_mfu: float | None = None,
                precision: str = "bf16", goodput: float = 1.0, seq_len: int | None = None, **serve) -> dict:
    """All cost columns for one language with ``tpc`` tokens per character, trained on ``tokens``
    in sequences of ``seq_len`` tokens (default the preset's pre-training length,
    :func:`~tokstat.cost.model.train_seq_len`) at ``train_mfu`` of the ``precision`` peak, default
    ``mfu``; serving uses ``mfu`` of BF16."""
    s = train_seq_len(m, seq_len)
    flops = tokens * training_flops_per_token(m, context=s)
    hours = gpu_hours(flops, g, train_mfu or mfu, precision, goodput)
    mem = training_memory_per_gpu(m, **(train_layout or {"dp": gpus}), context=s)
    need = sum(mem.values())
    return {"training_tokens": tokens, "training_flops": flops, "gpu_hours": hours, "wall_clock_days": hours / gpus / 24,
            "dollars": hours * price, "train_memory_gb_per_gpu": need / 1e9,
            "train_fits": "fits" if need <= g.memory_gb * 1e9 else "does not fit",
            **serving(tpc, m, g, gpus=gpus, mfu=mfu, mbu=mbu, price=price, batch=batch, **serve)}


def _positive(opt: str, v: float | None, example: str) -> None:
    if v is not None and not (math.isfinite(v) and v > 0):
        raise TokstatError(f"{opt} must be a finite positive number, got {v}", fix=f"e.g. {opt} {example}")


def volume_tokens(results: pl.DataFrame, model: ModelConfig, *, train_chars=None, train_bytes=None, train_tokens=None,
                  tokens_per_param=None, reference: str | None = None):
    """How much each row trains on, the same *content* for every tokenizer, and a sentence saying so.

    Returns ``(f, description)`` where ``f(row_tpc, row_tpb, row_premium, tokenizer_pivot_tpc)`` gives
    the row's training tokens. Exactly one budget: ``train_chars`` (characters per language) or
    ``train_bytes`` (UTF-8 bytes per language) of text; or ``train_tokens`` — or
    ``tokens_per_param`` × the model's parameters (default 20, Chinchilla) — tokens of the pivot
    language *as the reference tokenizer counts them*, i.e. a fixed amount of pivot text, which
    each tokenizer then tokenizes its own way (× its tokens-per-character ratio to the reference on
    the pivot, × its premium in each language). Never "the same number of tokens for every tokenizer".
    """
    given = [k for k, v in (("--train-chars", train_chars), ("--train-bytes", train_bytes),
                            ("--train-tokens", train_tokens), ("--tokens-per-param", tokens_per_param)) if v is not None]
    if len(given) > 1:
        raise TokstatError(f"{' and '.join(given)} both say how much text is trained on",
                           fix="pass exactly one of --train-chars, --train-bytes, --train-tokens, --tokens-per-param")
    for opt, v, ex in (("--train-chars", train_chars, "1e12"), ("--train-bytes", train_bytes, "3e12"),
                       ("--train-tokens", train_tokens, "2e12"), ("--tokens-per-param", tokens_per_param, "20")):
        _positive(opt, v, ex)
    if train_chars is not None:
        return (lambda tpc, tpb, prem, piv: train_chars * tpc), f"{train_chars:.3g} characters of text per language"
    if train_bytes is not None:
        if "tokens_per_byte" not in results.columns:
            raise TokstatError("--train-bytes needs tokens_per_byte in the results", fix="pass compare/sweep output")
        return (lambda tpc, tpb, prem, piv: train_bytes * tpb), f"{train_bytes:.3g} UTF-8 bytes of text per language"
    if train_tokens is None:
        tokens_per_param = TOKENS_PER_PARAM if tokens_per_param is None else tokens_per_param
        train_tokens = tokens_per_param * active_params(model)
        budget = f"{tokens_per_param:g} tokens per parameter ({train_tokens:.3g})"
    else:
        budget = f"{train_tokens:.3g} tokens"
    pivot = pivot_of(results)
    if pivot is None:
        raise TokstatError("the results have no pivot language (premium 1 for every tokenizer)",
                           fix="compare with --pivot LANG, or give the text itself: --train-chars 1e12")
    names = list(dict.fromkeys(results["tokenizer"].to_list()))
    with_pivot = results.filter((pl.col("language") == pivot) & (pl.col("tokens_per_char") > 0))["tokenizer"].to_list()
    reference = reference or next((n for n in names if n in with_pivot), names[0])
    if reference not in names:
        raise TokstatError(f"reference tokenizer {reference!r} is not in the results", fix=f"use one of {', '.join(names)}")
    ref_tpc = results.filter((pl.col("tokenizer") == reference) & (pl.col("language") == pivot))["tokens_per_char"][0]
    if ref_tpc is None or not ref_tpc > 0:
        raise TokstatError(f"{reference} has no tokens per character on the pivot {pivot} in the results (no tokens, or "
                           "an empty cell), so a number of pivot tokens cannot be turned into text",
                           fix=f"pass --reference with one of {', '.join(with_pivot)}" if with_pivot else
                           "give the text itself: --train-chars 1e12")
    pivot_chars = train_tokens / ref_tpc
    return ((lambda tpc, tpb, prem, piv: pivot_chars * piv * (1.0 if prem is None else prem)),
            f"{budget} of {pivot} text as {reference} counts it ({pivot_chars:.3g} {pivot} characters), "
            "the same content for every tokenizer")


#: project()'s numeric inputs that a derived quantity grows or shrinks with: keyword -> (option, a
#: value every model and GPU can price, the value the usable range is searched from)
EDGE_OPTIONS = {"train_chars": ("--train-chars", 1e12), "train_bytes": ("--train-bytes", 3e12),
                "train_tokens": ("--train-tokens", 2e12), "tokens_per_param": ("--tokens-per-param", 20.0),
                "mfu": ("--mfu", 0.4), "goodput": ("--goodput", 1.0), "price": ("--price", 2.5), "mbu": ("--mbu", 0.7),
                "prompt_chars": ("--prompt-chars", 1000.0), "output_chars": ("--output-chars", 250.0),
                "gpus": ("--gpus", 8), "batch": ("--batch", 32)}
#: the derived columns that must stay numbers a reader can use (:func:`tokstat.ranges.meaningful`)
EDGE_COLUMNS = ["training_tokens", "training_flops", "gpu_hours", "wall_clock_days", "dollars", "cost_multiplier",
                "kv_cache_bytes_per_1k_chars", "chars_in_context", "prefill_s_per_1k_chars", "decode_s_per_1k_chars",
                "serving_usd_per_m_chars", "request_prefill_s", "request_decode_s", "usd_per_request",
                "serving_multiplier"]


def _edge_problem(df: pl.DataFrame) -> tuple[str, str, object] | None:
    """The first (column, language, value) of ``df`` that is not a meaningful number, or None."""
    from ..ranges import meaningful

    for col in EDGE_COLUMNS:
        if col not in df.columns:
            continue
        for lang, v in zip(df["language"].to_list(), df[col].to_list()):
            if not meaningful(v):
                return col, lang, v
    return None


def project(results: pl.DataFrame, model: ModelConfig, g: GPU, **kw) -> pl.DataFrame:
    """:func:`_project` (see there), refused where an input makes a derived quantity infinite, NaN,
    or too large or small for a float to carry its digits (``--train-chars 1e308``, ``--mfu 1e-300``):
    one error naming the input, its value and its usable range with this model and GPU, found by
    pricing the same rows with the input moved back towards an ordinary value."""
    df = _project(results, model, g, **kw)
    bad = _edge_problem(df)
    if bad is None:
        return df
    col, lang, v = bad

    def clean(key, value) -> bool:
        try:
            return _edge_problem(_project(results, model, g, **{**kw, key: value})) is None
        except TokstatError:
            return False
    from ..ranges import refuse_derived, usable_edge

    for key, (opt, ordinary) in EDGE_OPTIONS.items():
        given = kw.get(key)
        if given is None or given == ordinary or not clean(key, ordinary):
            continue
        edge = usable_edge(lambda x, key=key: clean(key, x), float(given), float(ordinary))
        raise refuse_derived(opt, float(given), f"the {col.replace('_', ' ')} of {lang}", v, edge,
                             f"with {model.name} on {g.name}")
    raise TokstatError(f"the inputs make {col.replace('_', ' ')} of {lang} {v:g}, beyond what a float carries",
                       fix="bring the volume, MFU, goodput or price closer to ordinary values")


def _project(results: pl.DataFrame, model: ModelConfig, g: GPU, *, gpus: int = 1, mfu: float | None = None,
            mbu: float = 0.7, price: float | None = None, train_chars: float | None = None,
            train_bytes: float | None = None, train_tokens: float | None = None,
            tokens_per_param: float | None = None, reference: str | None = None,
            mix: dict[str, float] | str | Mix | None = None, mix_unit: str = "content", batch: int = 32,
            weights: str = "bf16", kv_dtype: str = "bf16",
            prompt_chars: float = 1000, output_chars: float = 250, tp: int = 1, pp: int = 1, zero: int = 1,
            recompute: str = "selective", micro_batch: int = 1, precision: str = "bf16", goodput: float = 1.0,
            vocab: str = "tokenizer", max_unk: float = MAX_UNK, seq_len: int | None = None) -> pl.DataFrame:
    """One row per (tokenizer, language[, vocab size]) of ``results`` (+ a ``mix`` row per tokenizer).

    Volume (:func:`volume_tokens`): one of ``train_chars``, ``train_bytes``, ``train_tokens`` or
    ``tokens_per_param`` (default 20 per parameter of pivot text counted by ``reference``, default
    the first tokenizer): the ``volume`` column says which. ``vocab="tokenizer"`` (default) prices
    each row with its tokenizer's own vocabulary (the ``vocab_size`` column of compare/sweep
    results); ``vocab="model"`` pins the preset's. ``recommended`` is the cheapest row per language
    among reliable ones: a row whose ``unk_rate`` is above ``max_unk``, or whose ``roundtrip_rate``
    (compare: decode(encode(text)) == text on sampled segments) is below 1, loses text and says so in
    ``not_recommended_because``. ``mfu`` defaults to the accelerator generation's calibrated value
    (:func:`~tokstat.cost.calibration.default_mfu`). Training memory per GPU for ``gpus`` =
    dp·``tp``·``pp`` with ZeRO ``zero`` and ``recompute``; serving with ``weights``/``kv_dtype``
    precisions and a request of ``prompt_chars`` in, ``output_chars`` out — characters of the pivot
    language, i.e. that content, in every language (:func:`serving`). Training at ``precision``
    (``bf16``, or ``fp8`` on its FP8 peak) and ``goodput`` (share of paid hours that train: 1 with a
    calibrated MFU, which already carries the published runs' lost hours). Training compute and
    memory are priced at ``seq_len`` tokens per sequence (default: the preset's pre-training length,
    not its longest context; the ``seq_len`` column says which). ``mix`` (a :class:`~tokstat.mix.Mix`,
    or shares in ``mix_unit``: content by default) adds a ``mix`` row per tokenizer that prices the
    mix's content as one text; its ``mix_shares`` restates the mix in content, characters, bytes and
    that tokenizer's tokens."""
    from .calibration import default_mfu
    from .hardware import peak_tflops

    peak_tflops(g, precision)   # an FP8 run on a GPU without FP8 is an error before any row
    if weights == "fp8" and not g.fp8_tflops:
        raise TokstatError(f"{g.name} has no FP8 support: --weights fp8 cannot be served on it",
                           fix="use --weights int8 or int4 (weight-only), or an FP8 GPU (H100, H200, B200, ...)")
    mfu_source = "given"
    train_mfu = None
    if mfu is None:
        mfu, mfu_source = default_mfu(g.name)
        if precision != "bf16":
            train_mfu, src = default_mfu(g.name, precision)
            mfu_source = f"serving {mfu_source}; training {src}"
    check_mfu(mfu)
    check_goodput(goodput)
    _positive("--price", price, "2.5")
    _positive("--prompt-chars", prompt_chars, "1000")
    _positive("--output-chars", output_chars, "250")
    if not 0 < mbu <= 1:
        raise TokstatError(f"MBU must be in (0, 1], got {mbu}", fix="typical values are 0.6-0.8")
    if vocab not in ("tokenizer", "model"):
        raise TokstatError(f"unknown vocabulary source {vocab!r}", fix="use --vocab tokenizer or --vocab model")
    if not (math.isfinite(max_unk) and 0 <= max_unk < 1):
        raise TokstatError(f"--max-unk must be in [0, 1), got {max_unk}", fix="e.g. --max-unk 0.01")
    if weights not in WEIGHT_PRECISIONS or kv_dtype not in KV_PRECISIONS:
        raise TokstatError(f"unknown precision weights={weights} kv={kv_dtype}",
                           fix=f"--weights {'|'.join(WEIGHT_PRECISIONS)}, --kv {'|'.join(KV_PRECISIONS)}")
    if gpus < 1 or batch < 1:
        raise TokstatError("--gpus and --batch must be at least 1", fix="e.g. --gpus 8 --batch 32")
    if tp < 1 or pp < 1 or gpus % (tp * pp):
        raise TokstatError(f"--gpus {gpus} is not a multiple of --tp {tp} × --pp {pp}",
                           fix="choose tp·pp dividing the GPUs (data parallel takes the rest)")
    layout = {"dp": gpus // (tp * pp), "tp": tp, "pp": pp, "zero": zero, "recompute": recompute,
              "micro_batch": micro_batch}
    seq_len = train_seq_len(model, seq_len)       # checked before any row
    training_memory_per_gpu(model, **layout, context=seq_len)   # the layout is checked before any row
    need = {"tokenizer", "language", "tokens_per_char", "premium"}
    if not need <= set(results.columns):
        raise TokstatError(f"results lack columns {sorted(need - set(results.columns))}",
                           fix="pass the output of tokstat compare or tokstat sweep")
    from ..metrics import check_rates

    check_rates(results, "the results")
    tokens_of, volume = volume_tokens(results, model, train_chars=train_chars, train_bytes=train_bytes,
                                      train_tokens=train_tokens, tokens_per_param=tokens_per_param, reference=reference)
    mix = parse_mix(mix, mix_unit)
    from .choice import mix_spec

    spec = mix_spec(mix)
    # what a row's ×pivot holds equal: the same content (a volume in pivot tokens, or tokens per
    # parameter), or the same characters / bytes in every language (--train-chars / --train-bytes)
    held = "characters" if train_chars is not None else "bytes" if train_bytes is not None else "content"
    price_source = "--price" if price is not None else f"catalogue: indicative on-demand price as of 2026-12 ({g.source})"
    price = g.price_usd_h if price is None else price
    pivot = pivot_of(results)
    rows = []
    own = vocab == "tokenizer" and "vocab_size" in results.columns and results["vocab_size"].is_not_null().all()
    if vocab == "tokenizer" and not own:
        import warnings

        warnings.warn(f"the results carry no vocab_size per tokenizer: every row is priced with {model.name}'s "
                      f"vocabulary ({model.vocab_size:,}); rerun tokstat compare for each tokenizer's own", stacklevel=2)
    has_unk = "unk_rate" in results.columns
    keys = ["tokenizer", "vocab_size"] if "vocab_size" in results.columns else ["tokenizer"]
    serve = {"weights": weights, "kv_dtype": kv_dtype}
    for _, grp in results.group_by(keys, maintain_order=True):
        langs = grp.to_dicts()
        vs = int(langs[0]["vocab_size"]) if own else model.vocab_size
        m = model.with_vocab(vs) if vs != model.vocab_size else model
        fam = langs[0].get("tokenizer_family")
        by = {r["language"]: r for r in langs}
        piv_tpc = by[pivot]["tokens_per_char"] if pivot in by else None
        todo = [(r["language"], r["tokens_per_char"], r.get("tokens_per_byte"), r["premium"], r.get("unk_rate"),
                 r.get("roundtrip_rate")) for r in langs if r["tokens_per_char"]]
        unpriced = [r["language"] for r in langs if not r["tokens_per_char"]]
        if unpriced:
            import warnings

            warnings.warn(f"{langs[0]['tokenizer']} on {', '.join(unpriced)}: no tokens per character (it emitted no "
                          "tokens for the text), so not priced", stacklevel=2)
        mix_line = None
        if mix:
            check_languages(mix, by)
            # one unit of the mix's content: Σ_L w_L × (tokens, characters, bytes per unit of content)
            amounts = amounts_from_results(langs)
            w = mix.content(amounts)
            tok = sum(w[k] * a for k, a in mix.amounts_of(amounts, "tokens").items())
            tpc = tok / sum(w[k] * a for k, a in mix.amounts_of(amounts, "chars").items())
            tpb = (tok / sum(w[k] * a for k, a in mix.amounts_of(amounts, "bytes").items())
                   if all("bytes" in amounts[k] for k in w) else None)
            prem = tok            # tokens per unit of content relative to the pivot's: the mix's premium
            unk = max((by[k].get("unk_rate") or 0.0) for k in w) if has_unk else None
            rts = [by[k].get("roundtrip_rate") for k in w if by[k].get("roundtrip_rate") is not None]
            todo.append(("mix", tpc, tpb, prem, unk, min(rts) if rts else None))
            mix_line = mix.conversion(amounts)
        sigs = {r["language"]: r.get("signature") for r in langs}
        for lang, tpc, tpb, prem, unk, rtr in todo:
            why = "; ".join(w for w in (
                f"unknown tokens on {unk:.1%} of characters (over {max_unk:.1%})" if unk is not None and unk > max_unk
                else None,
                f"its decoder gives back {rtr:.1%} of the sampled texts, not all" if rtr is not None and rtr < 1 else None)
                if w) or None
            why = f"{why}: it loses text" if why else None
            r = {"tokenizer": langs[0]["tokenizer"], "language": lang, "tokenizer_family": fam, "vocab_size": vs,
                 "vocab_source": "tokenizer" if own else f"model ({model.name})", "tokens_per_char": tpc,
                 "premium": prem, "unk_rate": unk, "not_recommended_because": why, "volume": volume,
                 # the input row's signature (the mix row: the pivot's): corpus and tokenizer stay attached
                 "signature": sigs.get(lang, sigs.get(pivot)),
                 "requested_size": langs[0].get("requested_size"),   # a swept size (None: a compared tokenizer)
                 "mix_shares": mix_line if lang == "mix" else None, "mix_spec": spec, "held_equal": held}
            # a request is `prompt_chars` + `output_chars` of pivot-language content: in this language
            # it is that many pivot tokens × the premium (the same content), not that many characters
            per_char = (piv_tpc if piv_tpc else tpc) * (1.0 if prem is None else prem)
            r.update(project_row(tpc, tokens_of(tpc, tpb, prem, piv_tpc), m, g, gpus=gpus, mfu=mfu, mbu=mbu,
                                 price=price, batch=batch, train_layout=layout, train_mfu=train_mfu,
                                 precision=precision, goodput=goodput, seq_len=seq_len,
                                 prompt_tokens=prompt_chars * per_char,
                                 output_tokens=output_chars * per_char, **serve))
            rows.append(r)
    df = pl.DataFrame(rows, schema_overrides={"unk_rate": pl.Float64, "not_recommended_because": pl.String,
                                              "tokenizer_family": pl.String, "requested_size": pl.Int64,
                                              "mix_shares": pl.String, "mix_spec": pl.String},
                      infer_schema_length=None)
    # cost_multiplier: what the same content costs to train in this language relative to the pivot
    # (training is proportional to tokens: the premium); serving_multiplier: the same for a request,
    # where attention and KV reads grow faster than the token count
    piv_req = pl.col("usd_per_request").filter(pl.col("language") == pivot).first().over(keys) if pivot else None
    piv_usd = pl.col("dollars").filter(pl.col("language") == pivot).first().over(keys) if pivot else None
    # cost_multiplier is the ratio of the dollar columns it sits beside: with a volume of the same
    # content (tokens, tokens per parameter) it equals the premium; with the same characters or
    # bytes per language (--train-chars/--train-bytes) it is tokens per character relative to the pivot
    df = df.with_columns((pl.col("dollars") / piv_usd).alias("cost_multiplier") if pivot is not None
                         else pl.lit(None, dtype=pl.Float64).alias("cost_multiplier"),
                         (pl.col("usd_per_request") / piv_req).alias("serving_multiplier") if pivot is not None
                         else pl.lit(None, dtype=pl.Float64).alias("serving_multiplier"))
    # recommended: the cheapest reliable vocabulary per language (sweep results), tokenizer otherwise
    ok = pl.col("not_recommended_because").is_null()
    cheapest = pl.when(ok).then(pl.col("dollars")).otherwise(None).min().over("language")
    df = df.with_columns((ok & (pl.col("dollars") == cheapest)).fill_null(False).alias("recommended"),
                         pl.lit(train_mfu or mfu).alias("mfu"), pl.lit(mfu_source).alias("mfu_source"),
                         pl.lit(seq_len).alias("seq_len"),
                         pl.lit(precision).alias("train_precision"), pl.lit(goodput).alias("goodput"),
                         pl.lit(float(price)).alias("price_usd_h"), pl.lit(price_source).alias("price_source"),
                         pl.lit(model.name).alias("model"), pl.lit(g.name).alias("gpu"), pl.lit(gpus).alias("gpus"),
                         pl.lit(float(prompt_chars)).alias("prompt_chars"),
                         pl.lit(float(output_chars)).alias("output_chars"),
                         pl.col("signature").cast(pl.String))
    return _ranked(results, df, max_unk)


def _ranked(results: pl.DataFrame, df: pl.DataFrame, max_unk: float) -> pl.DataFrame:
    """The mix rows' places (1 = best) for each question of :class:`~tokstat.cost.choice.Decision`:
    fewest tokens, cheapest to train, cheapest to serve (null for languages' rows and for
    tokenizers that lose text)."""
    from .choice import decide

    qs = ("tokens", "train", "serve")
    df = df.with_columns([pl.lit(None, dtype=pl.Int64).alias(f"mix_rank_{q}") for q in qs])
    ranks = decide(results, None, df.select(COST_COLUMNS), max_unk=max_unk).ranks()
    is_mix = pl.col("language") == "mix"
    return df.with_columns([pl.when(is_mix).then(pl.col("tokenizer").replace_strict(
        ranks.get(q, {}), default=None, return_dtype=pl.Int64)).otherwise(None).alias(f"mix_rank_{q}")
        for q in qs]).select(COST_COLUMNS)


__all__ = ["COST_COLUMNS", "MAX_UNK", "BYTES", "project", "project_row", "serving", "volume_tokens", "pivot_of"]
