"""Vocabulary-size sweep: train once, derive smaller BPE vocabularies, compare each on the held-out split.

A BPE vocabulary of size k trained on some data is the prefix of a larger one's: the trainer picks
merges greedily, and the choice of the i-th merge does not depend on how many follow. So the
sweep trains once at the largest size and cuts the merge list (``derive_bpe``). Unigram,
WordPiece and SentencePiece vocabularies are not prefixes of each other (Unigram prunes a large seed
vocabulary down to the target), so for them each size is trained on its own.
"""

from __future__ import annotations

import json
import math
import os
import threading
import warnings

import numpy as np
import polars as pl
from tokenizers import Tokenizer, models

from .compare import compare
from .engine.job import MAX_CHARS
from .mix import parse as parse_mix
from .parse import sizes as parse_sizes
from .corpus import Corpus
from .errors import TokstatError
from .io import figure_bytes, write_bytes
from .loaders import load_corpus
from .segmenters import jieba_words
from .progress import Phase
from .split import Split
from .train import parity_suffix, pretok_suffix, pretokenizer_for, train

PREFIX_ALGOS = {"bpe", "byte-bpe", "parity-bpe"}   # merges in order: a smaller vocabulary is a prefix
#: the newest merges of a vocabulary whose training-text frequency says whether the data supports it
NEWEST_SHARE = 0.01
#: characters of the training text re-encoded for that frequency (evenly spaced texts; scaled up)
SUPPORT_SAMPLE_CHARS = 4_000_000
#: bootstrap replicates of tokens per character kept per (size, language) for the plan's interval
PLAN_BOOT = 100


def newest_merge_counts(toks: list[Tokenizer], texts: list[str], max_chars: int = SUPPORT_SAMPLE_CHARS) -> list[float]:
    """For each BPE tokenizer (prefixes of one training), how often its newest merges occur in the
    training text: the median count of the last ``NEWEST_SHARE`` of its ids (at least one) when the
    text is encoded with that vocabulary. For the last merge of a vocabulary this is the pair count
    the trainer merged it at; few occurrences mean the merge was fitted on a handful of examples
    (the data does not support that size). Counted on evenly spaced texts of up to ``max_chars``
    characters, scaled to the whole training text."""
    total = sum(len(t) for t in texts)
    step = max(1, math.ceil(total / max_chars)) if total else 1
    sample = texts[::step]
    scale = total / max(1, sum(len(t) for t in sample))
    out = []
    for tok in toks:
        v = tok.get_vocab_size()
        ids = np.fromiter((i for e in tok.encode_batch(sample, add_special_tokens=False) for i in e.ids), dtype=np.int64)
        counts = np.bincount(ids, minlength=v)
        n_new = max(1, int(v * NEWEST_SHARE))
        out.append(float(np.median(counts[v - n_new:v])) * scale)
    return out


def tpc_replicates(segs: pl.DataFrame, n: int = PLAN_BOOT, seed: int = 0) -> dict[tuple[str, str], list[float]]:
    """Bootstrap replicates of tokens per character per (tokenizer, language), resampling *segments*
    (the same draw for every tokenizer and language, so the replicates keep their correlation)."""
    ids = sorted(set(segs["segment"].to_list()))
    if not ids:
        return {}
    index = {s: i for i, s in enumerate(ids)}
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(len(ids), [1 / len(ids)] * len(ids), size=n).astype(float)   # (n, segments)
    out = {}
    for (tok, lang), grp in segs.group_by(["tokenizer", "language"], maintain_order=True):
        t = np.zeros(len(ids))
        c = np.zeros(len(ids))
        where = [index[s] for s in grp["segment"].to_list()]
        t[where] = grp["tokens"].to_numpy()
        c[where] = grp["chars"].to_numpy()
        chars = weights @ c
        out[(tok, lang)] = [float(x) for x in np.where(chars > 0, (weights @ t) / np.where(chars > 0, chars, 1), np.nan)]
    return out


def derive_bpe(tok: Tokenizer, size: int, cfg: dict | None = None) -> Tokenizer:
    """The BPE tokenizer of vocabulary ``size`` contained in ``tok``: ids < size, merges that build them.

    The HF BPE trainer numbers the alphabet first and then each merge's result in merge order, so
    keeping ids below ``size`` keeps the first ``size - len(alphabet)`` merges. ``cfg`` is the parsed
    ``tok.to_str()`` (pass it when deriving several sizes).
    """
    cfg = cfg if cfg is not None else json.loads(tok.to_str())
    model = cfg["model"]
    vocab, merges = model["vocab"], model["merges"]
    n_alpha = len(vocab) - len(merges)
    if size < n_alpha:
        raise TokstatError(f"vocabulary size {size} is below the alphabet ({n_alpha} symbols)",
                           fix=f"use sizes of at least {n_alpha}")
    size = min(size, len(vocab))
    pairs = [tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1)) for m in merges[: size - n_alpha]]
    out = Tokenizer(models.BPE(vocab={t: i for t, i in vocab.items() if i < size}, merges=pairs))
    out.normalizer, out.pre_tokenizer, out.decoder = tok.normalizer, tok.pre_tokenizer, tok.decoder
    return out


def sweep(corpus: str | Corpus, algo: str, sizes: list[int], *, languages: list[str] | None = None,
          mix=None, mix_unit: str = "content", pivot: str = "en", d_model: int = 4096, tied: bool = False,
          split: Split | None = None, n_boot: int = 1000, boot_seed: int = 0,
          max_chars: int = MAX_CHARS, trained: list | None = None, progress: bool | None = None,
          sample_bytes: float | None = None, eval_corpus: str | Corpus | None = None,
          parity: dict | None = None, backend: str = "auto", pretokenizer: str | None = None) -> pl.DataFrame:
    """One row per (size, language): the compare columns plus ``vocab_size`` (the actual size, which
    is smaller when the corpus cannot fill the vocabulary), ``requested_size`` (the size asked for),
    ``embedding_params`` = V·d (×2 untied), ``new_merge_count`` (BPE: how often the vocabulary's
    newest merges occur in the training text, :func:`newest_merge_counts`) and ``tokens_per_char_boot``
    (:data:`PLAN_BOOT` bootstrap replicates over held-out segments, :func:`tpc_replicates`: the plan's
    interval). ``sample_bytes`` bounds the training text (a seeded per-language sample of
    documents, :func:`tokstat.train.train`); ``eval_corpus``, a parallel corpus, gives the premiums
    of a sweep trained on monolingual documents (tokens per character stay the held-out
    documents'; the premium columns are the parallel corpus's, and the signature says so).

    Every size is trained on the train side of ``split`` (default ``Split(0.1, seed=0)``) and scored
    on its held-out side, on ``mix`` (:mod:`tokstat.mix`, shares of content by default; the corpus
    as it is when None); ``boot_seed`` seeds the bootstrap intervals only. ``trained``, a list,
    receives the adapter trained at the largest size (BPE: the others are its prefixes).
    ``backend``: how the trained tokenizers are counted, as in :func:`tokstat.compare.compare`.
    ``pretokenizer``: byte-level BPE's pre-tokenizer (:data:`tokstat.train.PRETOKENIZERS`)."""
    split = Split() if split is None else split
    pretok = pretokenizer_for(algo, pretokenizer)
    mix = parse_mix(mix, mix_unit)
    c = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    if languages:
        c = c.select(languages)
    if not sizes:
        raise TokstatError("no vocabulary sizes", fix="pass --sizes 4000,8000,16000")
    sizes = parse_sizes(list(sizes))      # whole, positive, at most ranges.VOCAB, before any training
    adapters = []
    # the word segmenter's dictionary loads while the (GIL-free) trainer runs
    warm = threading.Thread(target=lambda: jieba_words("预热"), daemon=True)
    warm.start()
    if algo in PREFIX_ALGOS:
        with Phase(f"sweep: training {algo} {sizes[-1]:,} (the smaller sizes are its prefixes)", progress):
            result = train(c, algo, sizes[-1], mix=mix, split=split, keep_heldout=True, keep_texts=True,
                           sample_bytes=sample_bytes, parity=parity, pretokenizer=pretok)
        big = result.adapter
        if trained is not None:
            trained.append(big)
        # evaluation reads the held-out segments kept by the training pass, not the corpus again
        held = result.heldout_segments
        c = Corpus(c.name, c.languages, lambda: iter(held), c.sources, c.meta, c.gold_words, parent=c, size=len(held))
        cfg = json.loads(big.tok.to_str())
        toks = [derive_bpe(big.tok, s, cfg) for s in sizes]
        for s, t in zip(sizes, toks):
            adapters.append(big.prefix(t, f"train/{algo}-{s}{parity_suffix(parity) if algo == 'parity-bpe' else ''}"
                                          f"{pretok_suffix(pretok)}"))
        with Phase("sweep: counting the newest merges in the training text", progress):
            support = dict(zip((a.id for a in adapters), newest_merge_counts(toks, result.training_texts)))
        result.training_texts = None
    else:
        for k, s in enumerate(sizes, 1):
            with Phase(f"sweep: training {algo} {s:,} ({k}/{len(sizes)})", progress):
                adapters.append(train(c, algo, s, mix=mix, split=split, sample_bytes=sample_bytes,
                                      pretokenizer=pretok).adapter)
        if trained is not None:
            trained.append(adapters[-1])
    warm.join()
    with warnings.catch_warnings():      # compare's hint names its own --calibrate; a sweep's is --eval
        warnings.filterwarnings("ignore", message=r".*is monolingual \(documents, no aligned content\): no premium.*")
        df, segs = compare(c, adapters, pivot=pivot, n_boot=n_boot, boot_seed=boot_seed, max_chars=max_chars,
                           progress=progress, return_segments=True, backend=backend)
    if c.kind == "monolingual" and eval_corpus is None and pivot is not None:
        warnings.warn(f"{c.name} is monolingual (documents, no aligned content): no premium; give a parallel corpus "
                      "with --eval PARALLEL for the premiums of the swept sizes", stacklevel=2)
    reps = tpc_replicates(segs.select("tokenizer", "language", "segment", "tokens", "chars"), seed=boot_seed)
    del segs
    if eval_corpus is not None:
        df = _premiums_from(df, eval_corpus, adapters, pivot=pivot, n_boot=n_boot, boot_seed=boot_seed,
                            max_chars=max_chars, backend=backend)
    vs = {a.id: a.vocab_size for a in adapters}
    for a, s in zip(adapters, sizes):
        if vs[a.id] < s:
            warnings.warn(f"the corpus fills only {vs[a.id]:,} of the {s:,} tokens asked for; "
                          "that row is the full vocabulary", stacklevel=2)
    req = {a.id: s for a, s in zip(adapters, sizes)}
    df = df.with_columns(
        pl.col("tokenizer").replace_strict(req, return_dtype=pl.Int64).alias("requested_size"),
        pl.col("tokenizer").replace_strict(vs, return_dtype=pl.Int64).alias("vocab_size"),
    ).with_columns((pl.col("vocab_size") * d_model * (1 if tied else 2)).alias("embedding_params"))
    df = df.drop("tokens_per_char_boot").with_columns(      # the sweep's own replicates (segments) replace compare's
        pl.Series("new_merge_count", [support.get(t) for t in df["tokenizer"].to_list()]
                  if algo in PREFIX_ALGOS else [None] * df.height, dtype=pl.Float64),
        pl.Series("tokens_per_char_boot", [reps.get((t, lang)) for t, lang in zip(df["tokenizer"], df["language"])],
                  dtype=pl.List(pl.Float64)))
    return df.select("requested_size", "vocab_size", "embedding_params", *[x for x in df.columns if x not in (
        "requested_size", "vocab_size", "embedding_params")])


PREMIUM_COLUMNS = ["premium", "premium_ci_low", "premium_ci_high", "premium_mean_of_ratios", "premium_mor_ci_low",
                   "premium_mor_ci_high"]


def _premiums_from(df: pl.DataFrame, eval_corpus, adapters, *, pivot, n_boot, boot_seed, max_chars,
                   backend: str = "auto") -> pl.DataFrame:
    """The premium columns of ``df`` replaced by the same tokenizers' premiums on a parallel corpus
    (every segment: none of it was trained on), the signatures extended with ``premium:NAME@HASH``."""
    ev = eval_corpus if isinstance(eval_corpus, Corpus) else load_corpus(eval_corpus)
    if ev.kind != "parallel":
        raise TokstatError(f"--eval {ev.name} is monolingual: a premium needs aligned content",
                           fix="give a parallel corpus (FLORES, PUD, your own aligned text)")
    langs = sorted(set(df["language"].to_list()))
    missing = [lang for lang in langs if lang not in ev.languages and lang != "und"]
    if missing:
        raise TokstatError(f"--eval {ev.name} lacks {', '.join(missing)}", fix="give a parallel corpus with every language")
    with warnings.catch_warnings():     # trained on other content: scored on every segment, as wanted
        warnings.filterwarnings("ignore", message=".*was trained on .*not on this corpus.*")
        warnings.filterwarnings("ignore", message=".*zero denominator, reported as null.*")
        warnings.filterwarnings("ignore", message=".*so the per-word columns are null.*")
        pe = compare(ev.select([x for x in langs if x in ev.languages]), adapters, pivot=pivot, n_boot=n_boot,
                     boot_seed=boot_seed, max_chars=max_chars, progress=False, words=False, backend=backend)
    tag = f"|premium:{ev.name}@{ev.fingerprint()[:8]}"
    order = df.columns
    df = df.drop(PREMIUM_COLUMNS).join(pe.select("tokenizer", "language", *PREMIUM_COLUMNS),
                                       on=["tokenizer", "language"], how="left")
    return df.with_columns(pl.col("signature").str.replace(r"\|tokstat:", tag + "|tokstat:", literal=False)
                           ).select(order)


def plot_sweep(df: pl.DataFrame, path: str | os.PathLike | None = None) -> bytes:
    """PNG: tokens per character and premium against vocabulary size, one line per language.
    Returns the PNG's bytes; with ``path``, also writes them there (the checked writer)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["text.parse_math"] = False   # a "$" in a language or tokenizer id is text, never math

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), dpi=120)
    algo = algorithm_of(df).fill_null("")
    algos = algo.unique(maintain_order=True).to_list()
    for lang in sorted(df["language"].unique().to_list()):
        for al in algos:      # a fairness sweep: plain and parity-aware BPE, one line each
            d = df.filter((pl.col("language") == lang) & (algo == al)).sort("vocab_size")
            for ax, col in zip(axes, ("tokens_per_char", "premium")):
                ax.plot(d["vocab_size"].to_list(), d[col].to_list(), marker="o", ls="--" if al == "parity-bpe" else "-",
                        label=f"{lang} ({al})" if len(algos) > 1 else lang)
    from matplotlib.ticker import FuncFormatter, NullFormatter

    for ax, title in zip(axes, ("tokens per character", "premium vs pivot")):
        ax.set_xscale("log", base=2)
        # plain tick labels: with math text off (data is never math), the log axis's default is "$2^{10}$"
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("vocabulary size")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    try:
        png = figure_bytes(fig)
    finally:
        plt.close(fig)
    if path is not None:
        write_bytes(path, png)
    return png


_ALGO = r"^train/([a-z-]+?)-\d+"


def algorithm_of(df: pl.DataFrame) -> pl.Series:
    """The training algorithm of each sweep row, from its tokenizer id (``train/parity-bpe-4000``)."""
    return df["tokenizer"].str.extract(_ALGO, 1)


def price_of_fairness(df: pl.DataFrame, mix=None, level: float = 0.95) -> pl.DataFrame:
    """Plain BPE against parity-aware BPE at each swept size (a sweep of both, :func:`fairness_sweep`):
    the premiums' spread (max/min over the languages, Gini) of each, and what parity costs in tokens
    on the mix — tokens per character of the mix (the mix's character shares, :mod:`tokstat.mix`;
    default equal content), parity over plain − 1, with a percentile interval from the paired
    bootstrap replicates of the held-out segments (``tokens_per_char_boot``)."""
    from .metrics import gini
    from .mix import amounts_from_results, equal
    from .mix import parse as parse_mix

    algos = algorithm_of(df)
    d = df.with_columns(algos.alias("_algo"))
    if not {"bpe", "parity-bpe"} <= set(d["_algo"].drop_nulls().to_list()):
        raise TokstatError("the price of fairness needs a sweep of both bpe and parity-bpe",
                           fix="run tokstat sweep --fairness (or sweep both algorithms on the same corpus)")
    m = parse_mix(mix)
    rows = []
    for size in sorted(set(d["requested_size"].to_list())):
        per = {}
        for algo in ("bpe", "parity-bpe"):
            g = d.filter((pl.col("requested_size") == size) & (pl.col("_algo") == algo))
            recs = g.to_dicts()
            langs = [r["language"] for r in recs]
            mm = (m or equal(langs)).restrict(langs) if (m or langs) else None
            w = mm.shares_in("chars", amounts_from_results(recs))
            tpc = sum(w[r["language"]] * r["tokens_per_char"] for r in recs if r["language"] in w)
            reps = None
            if "tokens_per_char_boot" in g.columns and g["tokens_per_char_boot"].null_count() == 0:
                arr = {r["language"]: np.asarray(r["tokens_per_char_boot"], dtype=float) for r in recs}
                reps = sum(w[k] * arr[k] for k in w)
            prem = {r["language"]: r["premium"] for r in recs if r["premium"] is not None}
            per[algo] = (tpc, reps, prem, g)
        (tp, rp, pp, _), (tq, rq, pq_, _) = per["bpe"], per["parity-bpe"]
        cost = tq / tp - 1
        lo = hi = None
        if rp is not None and rq is not None and len(rp) == len(rq):
            a = (1 - level) / 2
            lo, hi = (float(x) for x in np.nanquantile(rq / rp - 1, [a, 1 - a]))
        worst = max(pp, key=lambda k: abs(pp[k] - 1)) if pp else None
        rows.append({"requested_size": size, "plain_tokens_per_char": tp, "parity_tokens_per_char": tq,
                     "token_cost": cost, "token_cost_low": lo, "token_cost_high": hi,
                     "plain_spread": max(pp.values()) / min(pp.values()) if pp else None,
                     "parity_spread": max(pq_.values()) / min(pq_.values()) if pq_ else None,
                     "plain_gini": gini(list(pp.values())), "parity_gini": gini(list(pq_.values())),
                     "language": worst, "plain_premium": pp.get(worst), "parity_premium": pq_.get(worst)})
    return pl.DataFrame(rows)


def fairness_sentence(r: dict) -> str:
    """``"at 4,000, parity-aware BPE costs +1.8 % tokens on the mix [+0.9 %, +2.6 %] and brings the
    zh premium from 0.91 to 1.00 (spread 1.10 → 1.01)"``."""
    ci = (f" [{r['token_cost_low']:+.1%}, {r['token_cost_high']:+.1%}]"
          if r.get("token_cost_low") is not None else "")
    return (f"at {r['requested_size']:,}, parity-aware BPE costs {r['token_cost']:+.1%} tokens on the mix{ci} and "
            f"brings the {r['language']} premium from {r['plain_premium']:.2f} to {r['parity_premium']:.2f} "
            f"(spread across languages {r['plain_spread']:.2f} → {r['parity_spread']:.2f})")


def fairness_sweep(corpus, sizes: list[int], **kw) -> pl.DataFrame:
    """A sweep of plain BPE and of parity-aware BPE on the same split and held-out segments (the
    rows of both, told apart by their tokenizer ids)."""
    parity = kw.pop("parity", None)
    a = sweep(corpus, "bpe", sizes, **kw)
    b = sweep(corpus, "parity-bpe", sizes, parity=parity, **kw)
    return pl.concat([a, b], how="vertical_relaxed")
