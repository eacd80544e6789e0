"""From mergeable counts to the comparison columns: ratios, premium with bootstrap CI, Rényi efficiency."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl

COMPARE_COLUMNS = ["tokenizer", "language", "segments", "chars", "bytes", "words", "tokens", "tokens_per_char",
                   "tokens_per_byte", "chars_per_token", "bytes_per_token", "tokens_per_word",
                   "continued_word_rate", "split_char_rate", "single_token_char_coverage", "unk_rate",
                   "byte_fallback_rate", "boundary_precision", "boundary_recall", "boundary_f1",
                   "renyi_efficiency", "vocab_used", "premium", "premium_ci_low", "premium_ci_high",
                   "p50_tokens", "p95_tokens", "signature"]
RENYI_ALPHA = 2.5


def ratio(num: float, den: float, what: str = "") -> float | None:
    """``num / den``, or None (with a warning) when the denominator is zero: never NaN or inf.

    >>> ratio(3, 4), ratio(1, 0)
    (0.75, None)
    """
    if den is None or num is None or den <= 0 or num < 0:
        if what:
            warnings.warn(f"{what}: zero denominator, reported as null", stacklevel=2)
        return None
    return num / den


def renyi_efficiency(histogram: np.ndarray, vocab_size: int, alpha: float = RENYI_ALPHA) -> float | None:
    """Rényi entropy of order ``alpha`` of the unigram distribution over log(vocab_size) (Zouhar et al. 2023).

    H_α(p) = log(Σ p_i^α) / (1 − α). A uniform distribution over the whole vocabulary gives 1.

    >>> round(renyi_efficiency(np.array([5, 5, 5, 5]), 4), 6)
    1.0
    """
    total = histogram.sum()
    if total == 0 or vocab_size <= 1:
        return None
    p = histogram[histogram > 0] / total
    h = math.log(float(np.sum(p ** alpha))) / (1 - alpha)
    return h / math.log(vocab_size)


def bootstrap_premium(lang_tokens: np.ndarray, pivot_tokens: np.ndarray, *, n_boot: int = 1000,
                      seed: int = 0, level: float = 0.95) -> tuple[float | None, float | None]:
    """Percentile bootstrap of Σlang/Σpivot, resampling aligned segments with replacement (seeded)."""
    n = len(lang_tokens)
    if n < 2 or n_boot <= 0 or pivot_tokens.sum() == 0:
        return None, None
    rng = np.random.default_rng(seed)
    out = np.empty(n_boot)
    step = max(1, 2_000_000 // n)
    for i in range(0, n_boot, step):
        k = min(step, n_boot - i)
        idx = rng.integers(0, n, size=(k, n))
        out[i:i + k] = lang_tokens[idx].sum(axis=1) / np.maximum(pivot_tokens[idx].sum(axis=1), 1)
    a = (1 - level) / 2
    lo, hi = np.quantile(out, [a, 1 - a])
    return float(lo), float(hi)


def summarize(frame: pl.DataFrame, pivot_frame: pl.DataFrame | None, *, histogram, vocab_size: int,
              coverage: float | None, n_boot: int = 1000, seed: int = 0) -> dict:
    """One compare row (without ``tokenizer``, ``language``, ``signature``) from per-segment counts."""
    live = frame.filter(pl.col("chars") > 0)
    s = {c: int(live[c].sum()) for c in ("chars", "bytes", "tokens", "split_chars", "unk_chars",
                                          "byte_fallback_tokens", "token_boundaries")}
    has_words = live.height > 0 and int(live["words"].min()) >= 0
    w = {c: (int(live[c].sum()) if has_words else None)
         for c in ("words", "continued_words", "boundary_tp", "word_boundaries")}
    prec = ratio(w["boundary_tp"], s["token_boundaries"]) if has_words else None
    rec = ratio(w["boundary_tp"], w["word_boundaries"]) if has_words else None
    f1 = 2 * prec * rec / (prec + rec) if prec is not None and rec is not None and prec + rec > 0 else None
    premium = lo = hi = None
    if pivot_frame is not None:
        j = live.select("segment", "tokens").join(
            pivot_frame.filter(pl.col("chars") > 0).select("segment", pl.col("tokens").alias("pivot")),
            on="segment", how="inner")
        lt, pt = j["tokens"].to_numpy(), j["pivot"].to_numpy()
        if len(lt) and pt.sum() > 0:
            premium = float(lt.sum() / pt.sum())
            lo, hi = bootstrap_premium(lt, pt, n_boot=n_boot, seed=seed)
    toks = live["tokens"].to_numpy()
    return {
        "segments": live.height, "chars": s["chars"], "bytes": s["bytes"], "words": w["words"],
        "tokens": s["tokens"],
        "tokens_per_char": ratio(s["tokens"], s["chars"]), "tokens_per_byte": ratio(s["tokens"], s["bytes"]),
        "chars_per_token": ratio(s["chars"], s["tokens"]), "bytes_per_token": ratio(s["bytes"], s["tokens"]),
        "tokens_per_word": ratio(s["tokens"], w["words"]) if has_words else None,
        "continued_word_rate": ratio(w["continued_words"], w["words"]) if has_words else None,
        "split_char_rate": ratio(s["split_chars"], s["chars"]),
        "single_token_char_coverage": coverage,
        "unk_rate": ratio(s["unk_chars"], s["chars"]),
        "byte_fallback_rate": ratio(s["byte_fallback_tokens"], s["tokens"]),
        "boundary_precision": prec, "boundary_recall": rec, "boundary_f1": f1,
        "renyi_efficiency": renyi_efficiency(histogram, vocab_size) if histogram is not None else None,
        "vocab_used": int((histogram > 0).sum()) if histogram is not None else 0,
        "premium": premium, "premium_ci_low": lo, "premium_ci_high": hi,
        "p50_tokens": float(np.percentile(toks, 50)) if len(toks) else None,
        "p95_tokens": float(np.percentile(toks, 95)) if len(toks) else None,
    }
