"""From mergeable counts to the comparison columns: ratios, premium with bootstrap CI, Rényi efficiency."""

from __future__ import annotations

import math
import warnings
from functools import lru_cache

import numpy as np
import polars as pl

from .counts import RATIO_SCALE, LangStats, percentile_from_counts

#: information-theoretic columns (docs/metrics.md): entropies in bits of the unigram token distribution
INFO_COLUMNS = ["shannon_entropy", "renyi_entropy_2_5", "renyi_entropy_3", "type_token_ratio", "vocab_utilisation",
                "average_token_rank", "bits_per_byte", "bits_per_char"]
COMPARE_COLUMNS = ["tokenizer", "language", "script", "tokenizer_family", "vocab_size", "segments", "chars", "bytes", "words",
                   "tokens", "tokens_per_char",
                   "tokens_per_char_ci_low", "tokens_per_char_ci_high",
                   "tokens_per_byte", "tokens_per_byte_ci_low", "tokens_per_byte_ci_high", "chars_per_token", "bytes_per_token", "tokens_per_word",
                   "continued_word_rate", "split_char_rate", "single_token_char_coverage", "unk_rate", "roundtrip_rate",
                   "byte_fallback_rate", "boundary_precision", "boundary_recall", "boundary_f1",
                   "renyi_efficiency", "renyi_efficiency_observed", "vocab_used", *INFO_COLUMNS, "premium", "premium_ci_low", "premium_ci_high",
                   "premium_mean_of_ratios", "premium_mor_ci_low", "premium_mor_ci_high", "calibration_transfer", "rtc",
                   "p50_tokens", "p95_tokens", "signature", "tokens_per_char_boot",
                   "tokens_per_word_ci_low", "tokens_per_word_ci_high", "continued_word_rate_ci_low",
                   "continued_word_rate_ci_high", "split_char_rate_ci_low", "split_char_rate_ci_high", "diag_documents"]
#: columns of a run whose diagnostics are computed on a document sample (tokstat.diagnose); null when exact
SAMPLE_COLUMNS = ["tokens_per_word_ci_low", "tokens_per_word_ci_high", "continued_word_rate_ci_low",
                  "continued_word_rate_ci_high", "split_char_rate_ci_low", "split_char_rate_ci_high", "diag_documents"]
#: columns added after result files were first written: a file without them is still a compare table
LATER_COLUMNS = {"script", "tokens_per_char_ci_low", "tokens_per_char_ci_high", "tokens_per_byte_ci_low",
                 "tokens_per_byte_ci_high", "rtc", "tokens_per_char_boot", "calibration_transfer", *INFO_COLUMNS,
                 *SAMPLE_COLUMNS}
RENYI_ALPHA = 2.5
#: a tokenizer with unknown tokens on more than this share of a language's characters loses text
MAX_UNK = 0.01


def unreliable(c: pl.DataFrame, max_unk: float = MAX_UNK) -> dict[str, str]:
    """``{tokenizer: why}`` for the tokenizers that lose text on some language: unknown tokens on
    more than ``max_unk`` of its characters, or a decoder that does not give the sampled texts back
    (a tokenizer that drops input, or a broken load). The one rule every view marks (⚠) and every
    answer (report, ``cost``'s ``recommended``) leaves out.

    >>> d = pl.DataFrame({"tokenizer": ["a", "a", "b"], "language": ["en", "zh", "zh"],
    ...                   "unk_rate": [0.0, 0.0, 0.2], "roundtrip_rate": [1.0, 0.0, 1.0]})
    >>> unreliable(d)
    {'a': 'its decoder gives back 0% of sampled zh texts', 'b': '20% of zh characters unknown'}
    """
    why: dict[str, str] = {}
    for (tok,), g in c.group_by("tokenizer", maintain_order=True):
        parts = []
        if "unk_rate" in g.columns:
            u = g.filter(pl.col("unk_rate") > max_unk).sort("unk_rate", descending=True)
            if u.height:
                parts.append(", ".join(f"{r['unk_rate']:.0%} of {r['language']} characters unknown"
                                       for r in u.head(2).iter_rows(named=True)))
        if "roundtrip_rate" in g.columns:
            r = g.filter(pl.col("roundtrip_rate") < 1).sort("roundtrip_rate")
            if r.height:
                w = r.row(0, named=True)
                parts.append(f"its decoder gives back {w['roundtrip_rate']:.0%} of sampled {w['language']} texts")
        if parts:
            why[tok] = "; ".join(parts)
    return why


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


def entropy_bits(histogram: np.ndarray, alpha: float = 1.0) -> float | None:
    """Rényi entropy of order ``alpha`` in bits of the unigram distribution of ``histogram`` (token
    counts by id); ``alpha=1`` is Shannon's: H = −Σ p·log2 p, H_α = log2(Σ p^α) / (1 − α).

    >>> entropy_bits(np.array([1, 1, 1, 1])), entropy_bits(np.array([2, 2, 0]), 3.0)
    (2.0, 1.0)
    """
    total = histogram.sum() if histogram is not None else 0
    if total == 0:
        return None
    p = histogram[histogram > 0] / total
    if alpha == 1.0:
        return float(-np.sum(p * np.log2(p))) + 0.0
    return float(math.log2(float(np.sum(p ** alpha))) / (1 - alpha)) + 0.0


def info_measures(histogram: np.ndarray | None, tokens: int, chars: int, nbytes: int, vocab_size: int) -> dict:
    """The :data:`INFO_COLUMNS` of one (tokenizer, language): Shannon and Rényi (α = 2.5, 3) entropy
    in bits, type–token ratio (distinct tokens / tokens), vocabulary utilisation (distinct tokens /
    ``vocab_size``), average token rank (the frequency-weighted mean of the tokens' ranks, a token's
    rank being its id + 1: the vocabulary's own order, BPE's merge order) and compression in bits,
    tokens × ⌈log2 V⌉ per byte and per character.

    >>> m = info_measures(np.array([3, 1, 0, 0]), 4, 8, 8, 4)
    >>> m["type_token_ratio"], m["vocab_utilisation"], m["average_token_rank"], m["bits_per_byte"]
    (0.5, 0.5, 1.25, 1.0)
    """
    used = int((histogram > 0).sum()) if histogram is not None else 0
    width = math.ceil(math.log2(vocab_size)) if vocab_size > 1 else None
    return {"shannon_entropy": entropy_bits(histogram, 1.0), "renyi_entropy_2_5": entropy_bits(histogram, 2.5),
            "renyi_entropy_3": entropy_bits(histogram, 3.0),
            "type_token_ratio": used / tokens if tokens and histogram is not None else None,
            "vocab_utilisation": used / vocab_size if vocab_size and histogram is not None else None,
            "average_token_rank": (float(np.dot(np.arange(1, len(histogram) + 1), histogram) / histogram.sum())
                                   if histogram is not None and histogram.sum() else None),
            "bits_per_byte": tokens * width / nbytes if width and nbytes else None,
            "bits_per_char": tokens * width / chars if width and chars else None}


@lru_cache(maxsize=4)
def resample_counts(n: int, n_boot: int, seed: int) -> np.ndarray:
    """``W[b, i]``: how often unit ``i`` of ``n`` is drawn in bootstrap replicate ``b`` (seeded). Rows
    that share ``n`` share one matrix, so a replicate's sum is one matrix-vector product."""
    rng = np.random.default_rng(seed)
    w = np.empty((n_boot, n))
    step = max(1, 2_000_000 // n)
    for i in range(0, n_boot, step):
        k = min(step, n_boot - i)
        idx = rng.integers(0, n, size=(k, n))
        w[i:i + k] = np.bincount((idx + n * np.arange(k)[:, None]).ravel(), minlength=k * n).reshape(k, n)
    return w


def bootstrap_premium(lang_tokens: np.ndarray, pivot_tokens: np.ndarray, *, n_boot: int = 1000,
                      seed: int = 0, level: float = 0.95) -> tuple[float | None, float | None]:
    """Percentile bootstrap of Σlang/Σpivot, resampling aligned units (segments or buckets) with
    replacement (seeded: the same seed and ``n`` give the same replicates). Any ratio of sums over
    aligned units: the mean-of-ratios premium is Σratios/Σsegments over the same buckets."""
    n = len(lang_tokens)
    if n < 2 or n_boot <= 0 or pivot_tokens.sum() == 0:
        return None, None
    w = resample_counts(n, n_boot, seed)
    out = (w @ lang_tokens.astype(np.float64)) / np.maximum(w @ pivot_tokens.astype(np.float64), 1)
    a = (1 - level) / 2
    lo, hi = np.quantile(out, [a, 1 - a])
    return float(lo), float(hi)


#: paired bootstrap replicates of tokens per character kept in compare tables (``tokens_per_char_boot``)
PAIRED_BOOT = 200


def paired_tpc_replicates(own_tokens: np.ndarray, own_chars: np.ndarray, *, n_boot: int = PAIRED_BOOT,
                          seed: int = 0) -> list[float] | None:
    """Bootstrap replicates of tokens per character over the segments' hash buckets, with **one**
    resampling of all ``counts.BUCKETS`` buckets for every tokenizer and language (the same seed):
    replicate ``b`` of two tokenizers is the same draw of segments, so differences and mixes of them
    are paired (the interval on "how much better is A than B" is over the same segments).

    >>> paired_tpc_replicates(np.array([2, 4, 6, 8]), np.array([4, 8, 12, 16]), n_boot=3)
    [0.5, 0.5, 0.5]
    """
    if n_boot <= 0 or own_chars.sum() == 0:
        return None
    w = resample_counts(len(own_chars), n_boot, seed)
    c = w @ own_chars.astype(np.float64)
    t = w @ own_tokens.astype(np.float64)
    return [float(x) for x in np.where(c > 0, t / np.where(c > 0, c, 1), np.nan)]


def gini(values) -> float | None:
    """Gini coefficient of non-negative values (0: all equal): Σ_i Σ_j |x_i − x_j| / (2·n²·mean).

    >>> gini([1, 1, 1]), round(gini([1, 2, 3, 4]), 4)
    (0.0, 0.25)
    """
    x = np.asarray([v for v in values if v is not None], dtype=float)
    if len(x) == 0 or x.mean() == 0:
        return None
    return float(np.abs(x[:, None] - x[None, :]).sum() / (2 * len(x) ** 2 * x.mean()))


def pivot_of(results) -> str | None:
    """The language every tokenizer's premium is 1 for (compare's pivot), or None. A tokenizer
    without a premium anywhere (it emitted no tokens for the pivot) says nothing either way."""
    import polars as pl

    langs = None
    for _, grp in results.group_by("tokenizer", maintain_order=True):
        if grp["premium"].null_count() == grp.height:
            continue
        ones = set(grp.filter(pl.col("premium") == 1.0)["language"].to_list())
        langs = ones if langs is None else langs & ones
    return sorted(langs)[0] if langs and len(langs) == 1 else None


def parity_summary(df):
    """Across languages, per tokenizer (compare output): the Gini coefficient of the premiums
    (pivot included, at 1), max/min premium, and the worst language — for both premiums."""
    import polars as pl

    rows = []
    for (tok,), g in df.group_by(["tokenizer"], maintain_order=True):
        row = {"tokenizer": tok}
        for col in ("premium", "premium_mean_of_ratios"):
            d = g.filter(pl.col(col).is_not_null())
            vals = d[col].to_list()
            row[f"{col}_gini"] = gini(vals)
            row[f"{col}_max_over_min"] = (max(vals) / min(vals)) if vals and min(vals) > 0 else None
            row[f"{col}_worst_language"] = d.sort(col, descending=True)["language"][0] if d.height else None
        rows.append(row)
    return pl.DataFrame(rows)


def summarize(st: LangStats, *, vocab_size: int, coverage: float | None, n_boot: int = 1000,
              seed: int = 0, pivot: bool = True) -> dict:
    """One compare row (without ``tokenizer``, ``language``, ``signature``) from mergeable statistics.

    The premium is Σtokens/Σpivot tokens over segments live in both languages; its interval is a
    seeded percentile bootstrap over the segments' hash buckets (``counts.BUCKETS``), which is a
    bootstrap over segments whenever the corpus has fewer segments than buckets.
    """
    s = {c: st.total(c) for c in ("chars", "bytes", "tokens", "split_chars", "unk_chars",
                                  "byte_fallback_tokens", "token_boundaries")}
    has_words = st.segments > 0 and st.words_known
    w = {c: (st.total(c) if has_words else None)
         for c in ("words", "continued_words", "boundary_tp", "word_boundaries")}
    prec = ratio(w["boundary_tp"], s["token_boundaries"]) if has_words else None
    rec = ratio(w["boundary_tp"], w["word_boundaries"]) if has_words else None
    f1 = 2 * prec * rec / (prec + rec) if prec is not None and rec is not None and prec + rec > 0 else None
    premium = lo = hi = mor = mlo = mhi = None
    if pivot:
        live = st.pair_n > 0
        lt, pt = st.pair_lang[live], st.pair_pivot[live]
        if len(lt) and pt.sum() > 0:
            premium = float(lt.sum() / pt.sum())
            lo, hi = bootstrap_premium(lt, pt, n_boot=n_boot, seed=seed)
        rl = st.pair_rn > 0
        if rl.any():
            rs, rn = st.pair_ratio[rl] / RATIO_SCALE, st.pair_rn[rl]
            mor = float(rs.sum() / rn.sum())
            mlo, mhi = bootstrap_premium(rs, rn, n_boot=n_boot, seed=seed)
    # tokens per character and per byte with a percentile bootstrap over the segments' (a
    # monolingual corpus's: documents') hash buckets, as for the premium
    own = st.own_chars > 0
    tc_lo = tc_hi = tb_lo = tb_hi = None
    if own.any() and n_boot:
        tc_lo, tc_hi = bootstrap_premium(st.own_tokens[own], st.own_chars[own], n_boot=n_boot, seed=seed)
        tb_lo, tb_hi = bootstrap_premium(st.own_tokens[own], st.own_bytes[own], n_boot=n_boot, seed=seed)
    if st.lengths:
        lv = np.fromiter(st.lengths.keys(), dtype=np.int64)
        lc = np.fromiter(st.lengths.values(), dtype=np.int64)
        p50, p95 = percentile_from_counts(lv, lc, 50), percentile_from_counts(lv, lc, 95)
    else:
        p50 = p95 = None
    h = st.histogram
    return {
        "segments": st.segments, "chars": s["chars"], "bytes": s["bytes"], "words": w["words"],
        "tokens": s["tokens"],
        "tokens_per_char": ratio(s["tokens"], s["chars"]), "tokens_per_byte": ratio(s["tokens"], s["bytes"]),
        "tokens_per_char_ci_low": tc_lo, "tokens_per_char_ci_high": tc_hi,
        "tokens_per_byte_ci_low": tb_lo, "tokens_per_byte_ci_high": tb_hi,
        "chars_per_token": ratio(s["chars"], s["tokens"]), "bytes_per_token": ratio(s["bytes"], s["tokens"]),
        "tokens_per_word": ratio(s["tokens"], w["words"]) if has_words else None,
        "continued_word_rate": ratio(w["continued_words"], w["words"]) if has_words else None,
        "split_char_rate": ratio(s["split_chars"], s["chars"]),
        "single_token_char_coverage": coverage,
        "unk_rate": ratio(s["unk_chars"], s["chars"]),
        "byte_fallback_rate": ratio(s["byte_fallback_tokens"], s["tokens"]),
        "boundary_precision": prec, "boundary_recall": rec, "boundary_f1": f1,
        "renyi_efficiency": renyi_efficiency(h, vocab_size) if h is not None else None,
        "renyi_efficiency_observed": (renyi_efficiency(h, int((h > 0).sum())) if h is not None else None),
        "vocab_used": int((h > 0).sum()) if h is not None else 0,
        **info_measures(h, s["tokens"], s["chars"], s["bytes"], vocab_size),
        "premium": premium, "premium_ci_low": lo, "premium_ci_high": hi,
        "premium_mean_of_ratios": mor, "premium_mor_ci_low": mlo, "premium_mor_ci_high": mhi,
        "p50_tokens": p50, "p95_tokens": p95,
    }


#: result columns that are a count of tokens per unit of text: positive wherever they are given
POSITIVE_RATES = ("tokens_per_char", "tokens_per_byte", "premium")


def check_rates(df, source: object = None) -> None:
    """A result table read back (an edited file, another tool's output) must hold rates tokstat could
    have written: each of :data:`POSITIVE_RATES` that is given is finite and above zero (a language
    with no tokens has a null, never a 0). One error naming the row otherwise.

    >>> import polars as pl
    >>> check_rates(pl.DataFrame({"tokenizer": ["t"], "language": ["zh"], "tokens_per_char": [0.0]}), "r.csv")
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: r.csv: tokens_per_char is 0.0 for t on zh: a rate of tokens must be above zero (fix: ...)
    """
    from .errors import TokstatError

    for col in POSITIVE_RATES:
        if col not in df.columns:
            continue
        for r in df.select(*[c for c in ("tokenizer", "language") if c in df.columns], col).iter_rows(named=True):
            v = r[col]
            if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise TokstatError(f"{col} is {v} for {r.get('tokenizer')} on {r.get('language')}: a rate of tokens "
                                   "must be above zero", path=source,
                                   fix="pass results written by tokstat compare or sweep, unedited")


#: columns :func:`versus_baseline` adds to a compare table (``compare --baseline``)
BASELINE_COLUMNS = ["baseline", "vs_baseline", "vs_baseline_ci_low", "vs_baseline_ci_high"]


def replicates(value) -> np.ndarray | None:
    """Bootstrap replicates as compare writes them (space-separated text, :func:`replicates_text`;
    ``null`` for a replicate without a value) or as a list of numbers (a table read back), with NaN
    where a replicate has no value.

    >>> replicates("0.5 null 0.25").tolist(), replicates(None), replicates(" "), replicates([0.5, None]).tolist()
    ([0.5, nan, 0.25], None, None, [0.5, nan])
    """
    if value is None:
        return None
    if isinstance(value, str):
        return (np.array([math.nan if x in ("null", "nan") else float(x) for x in value.split()], dtype=float)
                if value.strip() else None)
    return np.array([math.nan if x is None else x for x in value], dtype=float)


def replicates_text(reps) -> str | None:
    """Replicates as compare writes them: space-separated numbers, ``null`` for one without a value
    (a draw with no characters), the one spelling of "undefined" of every tokstat table.

    >>> replicates_text(np.array([0.5, np.nan, 1 / 3])), replicates_text(None)
    ('0.5 null 0.3333333', None)
    """
    if reps is None:
        return None
    return " ".join("null" if not math.isfinite(x) else f"{x:.7g}" for x in reps)


def null_rates_without_tokens(row: dict) -> dict:
    """A language with no tokens has null rates of tokens, never 0 (what :func:`check_rates` reads
    back): its tokenizer emitted nothing for the text, so no rate says what it costs. Its bootstrap
    replicates (``tokens_per_char_boot``) are null with them.

    >>> null_rates_without_tokens({"tokens": 0, "chars": 3, "tokens_per_char": 0.0, "premium": 0.0})["tokens_per_char"]
    """
    if row.get("tokens") == 0 and (row.get("chars") or 0) > 0:
        for col in POSITIVE_RATES:
            if col in row:
                row[col] = None
                for end in ("_ci_low", "_ci_high"):
                    if col + end in row:
                        row[col + end] = None
        if "tokens_per_char_boot" in row:
            row["tokens_per_char_boot"] = None
    return row


def one_study(df: pl.DataFrame, path=None) -> None:
    """Refuse a results table whose rows are not one study, where pricing, ranking or grouping them
    together would count a language twice: rows of two corpora (their signatures' ``corpus:``
    differ), or one tokenizer's language (a cost row: at one vocabulary size; a segments row: one
    segment) twice — two runs' outputs concatenated, or one file given twice.

    >>> t = pl.DataFrame({"tokenizer": ["a", "a"], "language": ["en", "en"], "tokens": [1, 2]})
    >>> one_study(t)
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: the rows are not one study: a on en appears 2 times (two runs' tables stacked, or a file given twice?) (fix: ...)
    """
    from .errors import TokstatError
    from .parse import corpus_of

    if "signature" in df.columns:
        corpora = [c for c in dict.fromkeys(corpus_of(s) for s in df["signature"].drop_nulls().to_list()) if c]
        if len(corpora) > 1:
            raise TokstatError(f"the rows are of {len(corpora)} corpora ({', '.join(corpora[:3])}"
                               f"{', …' if len(corpora) > 3 else ''}): they are not one study", path=path,
                               fix="pass one run's table per command (the signature column says which corpus each row "
                                   "is of), or tokstat report, which gives each corpus its own section")
    key = [k for k in ("tokenizer", "language") if k in df.columns]
    if len(key) < 2:
        return
    if "dollars" in df.columns and "vocab_size" in df.columns:     # a cost table: one row per size priced
        key.append("vocab_size")
    if "segment" in df.columns:                                   # a segments table: one row per segment
        key.append("segment")
    dup = df.group_by(key).agg(pl.len().alias("_n"), *([pl.col("_file").unique().alias("_files")]
                                                        if "_file" in df.columns else [])).filter(pl.col("_n") > 1)
    if dup.height:
        r = dup.row(0, named=True)
        files = r.get("_files") or []
        where = f" (in {' and '.join(files[:2])})" if files else ""
        GUESS = " (two runs' tables stacked, or a file given twice?)"  # noqa: N806
        raise TokstatError(f"the rows are not one study: {r['tokenizer']} on {r['language']}"
                           f"{' at ' + format(r['vocab_size'], ',') if 'vocab_size' in key else ''} appears {r['_n']} "
                           f"times{where or GUESS}", path=path,
                           fix="pass one run's table, or each file once; compare every tokenizer in one run")


def versus_baseline(df: pl.DataFrame, baseline: str, *, level: float = 0.95) -> pl.DataFrame:
    """``df`` (a compare table) with each tokenizer's tokens relative to ``baseline``'s on the same
    texts of each language: ``vs_baseline`` = tokens / baseline's tokens (a ratio of sums, 0.8 =
    20 % fewer tokens), its interval from the paired bootstrap replicates (``tokens_per_char_boot``:
    replicate b of both tokenizers is the same draw of segments, so the ratio of replicates is the
    replicate of the ratio), percentile ``level``. Where the two were scored on different texts (a
    tokenizer trained here is scored on its held-out split), the ratio is null and one warning says
    so: "same texts" is what the number means.

    >>> t = pl.DataFrame({"tokenizer": ["old", "new"], "language": ["en", "en"], "chars": [100, 100],
    ...                   "segments": [2, 2], "tokens": [50, 40], "tokens_per_char_boot": ["0.5 0.6", "0.4 0.45"]})
    >>> versus_baseline(t, "old").select("tokenizer", "vs_baseline").rows()
    [('old', 1.0), ('new', 0.8)]
    """
    one_study(df)          # two corpora or a language twice: the ratios would pair the wrong texts
    have = df["tokenizer"].unique(maintain_order=True).to_list()
    if baseline not in have:
        from .errors import TokstatError

        raise TokstatError(f"the baseline {baseline!r} is not among the tokenizers compared ({', '.join(have)})",
                           fix="pass --baseline with one of the -t tokenizers, or add it with -t")
    base = {r["language"]: r for r in df.filter(pl.col("tokenizer") == baseline).iter_rows(named=True)}
    a = (1 - level) / 2
    out, differ = [], []
    for r in df.iter_rows(named=True):
        b = base.get(r["language"])
        vs = lo = hi = None
        if b is not None and (r["chars"], r["segments"]) != (b["chars"], b["segments"]):
            differ.append(f"{r['tokenizer']} on {r['language']}")
        elif b is not None and b["tokens"]:
            vs = r["tokens"] / b["tokens"]
            rt, rb = replicates(r.get("tokens_per_char_boot")), replicates(b.get("tokens_per_char_boot"))
            if rt is not None and rb is not None and len(rt) == len(rb):
                ok = np.isfinite(rt) & np.isfinite(rb) & (rb > 0)
                if ok.sum() >= 2:
                    lo, hi = (float(x) for x in np.quantile(rt[ok] / rb[ok], [a, 1 - a]))
        out.append((baseline, vs, lo, hi))
    if differ:
        warnings.warn(f"no ratio to the baseline {baseline} for {', '.join(differ[:5])}"
                      f"{f' and {len(differ) - 5} more' if len(differ) > 5 else ''}: scored on other texts "
                      "(a tokenizer trained here is scored on its held-out segments)", stacklevel=2)
    cols = list(zip(*out)) if out else [[]] * 4
    return df.with_columns(pl.Series("baseline", cols[0], dtype=pl.Utf8),
                           *(pl.Series(n, v, dtype=pl.Float64) for n, v in zip(BASELINE_COLUMNS[1:], cols[1:])))
