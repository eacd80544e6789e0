"""`compare` at a corpus's size: exact counts from one columnar pass, rich diagnostics on a stated sample.

For a monolingual corpus of files above :data:`tokstat.compare.DIAG_EXACT_BELOW` bytes of text
(or ``--diagnostics sample``), :func:`compare_sampled` reads the corpus once
(:mod:`tokstat.engine.scan`) and:

* takes **segments, characters, bytes and tokens** per (tokenizer, language) from that pass —
  exact — and with them ``tokens_per_char``, ``tokens_per_byte``, ``chars_per_token`` and
  ``bytes_per_token``; their intervals and the paired replicates (``tokens_per_char_boot``) are a
  percentile bootstrap over the units read (row groups, blocks), bucketed by unit number
  (:data:`~tokstat.engine.scan.UNIT_BUCKETS`): a cluster bootstrap, since documents of one unit
  are not independent draws; a calibrated premium uses the same exact sums;
* computes **every other column** (words, split words and characters, boundary agreement, unknown
  and byte-fallback rates, round-trip, entropies, percentiles) with the ordinary compare engine on
  the pass's document sample: per language, its documents in the order of their seeded random
  keys up to an equal share of :data:`DIAG_BYTES` (each kept while those before it hold less
  than the share: at least one document of every language) — a uniform sample without
  replacement, stratified by language, whose size in bytes grows neither with the corpus nor
  with the number of languages (at most ``DIAG_BYTES`` plus one document per language);
* gives the fragmentation rates 95 % **ratio-estimator intervals** (Cochran 1977, §6.4: the
  linearised variance of Σy/Σx over the sampled documents, with the finite-population correction
  n/N from the exact document count), in ``*_ci_low``/``*_ci_high`` columns;
* marks it: ``words`` is null (not counted on every document), ``diag_documents`` is the sample's
  size, and the signature ends ``diag:sample-N-seedS``.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from .adapters import Adapter
from .corpus import Corpus, Segment
from .engine.scan import plan_for, run_scan
from .metrics import bootstrap_premium, null_rates_without_tokens, paired_tpc_replicates, replicates_text
from .progress import Meter

#: bytes of text in the diagnostic sample, over all languages, in equal shares (about 1,000
#: FineWeb-2 documents; the words, spans and round-trip of 3 MiB cost a few CPU seconds)
DIAG_BYTES = 3 << 20
#: the fragmentation rates with a ratio-estimator interval: column -> (numerator, denominator) per document
SAMPLED_RATES = {"tokens_per_word": ("tokens", "words"), "continued_word_rate": ("continued_words", "words"),
                 "split_char_rate": ("split_chars", "chars")}
EXACT_COLUMNS = ("segments", "chars", "bytes", "tokens", "tokens_per_char", "tokens_per_byte", "chars_per_token",
                 "bytes_per_token")


def sample_share(n_langs: int) -> int:
    """Bytes per language in the diagnostic sample (each language's share of :data:`DIAG_BYTES`).

    >>> sample_share(12), sample_share(200)
    (262144, 15728)
    """
    return DIAG_BYTES // max(1, n_langs)


def ratio_interval(y: np.ndarray, x: np.ndarray, N: int) -> tuple[float | None, float | None]:
    """95 % interval of R = Σy/Σx from ``n`` sampled units of ``N`` (linearised variance with the
    finite-population correction; t quantile with n − 1 degrees of freedom).

    >>> ratio_interval(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.0]), 100)   # no spread: zero width
    (0.5, 0.5)
    """
    from .sampling import _t975

    n = len(x)
    if n < 2 or x.sum() <= 0:
        return None, None
    r = float(y.sum() / x.sum())
    d = y - r * x
    f = min(1.0, n / N) if N else 1.0
    se = math.sqrt(max(0.0, (1 - f) * float(d.var(ddof=1)) / n)) / float(x.mean())
    h = _t975(n - 1) * se
    return max(0.0, r - h), r + h


def compare_sampled(c: Corpus, adapters: list[Adapter], *, pivot, segmenters, words, cal: dict | None, n_boot,
                    boot_seed, seed, workers: int, engine, address, progress, max_chars, batch_size) -> pl.DataFrame:
    """See the module docstring. ``cal``: the calibration set :func:`tokstat.compare.compare` loaded."""
    from .compare import calibrated_premium, calibration_tokens, compare

    langs = list(c.languages)
    plan = plan_for(c, adapters, buckets=True, sample_bytes=sample_share(len(langs)), seed=seed, max_chars=max_chars,
                    max_chars_option=True)
    with Meter(f"compare {c.name}: one pass", enabled=progress) as meter:
        scan = run_scan(plan, list(range(len(plan.units))), workers=workers, engine=engine, address=address,
                        progress=meter)
    fp = scan.fingerprint()
    segs = [Segment(did, {langs[li]: text}) for li in sorted(scan.sample.docs) for _, did, text, _ in scan.sample.docs[li]]
    n_sample = len(segs)
    meta = {**c.meta, "files": None}
    sample = Corpus(c.name, langs, lambda: iter(segs), c.sources, meta, c.gold_words)
    sample._fingerprint = fp        # the signatures name the corpus read, not the sample (not hashed again)
    # n_boot=0: the sample's own bootstrap intervals would be replaced by the pass's (its tokens per
    # character) and by the ratio intervals below (the rates); none is computed twice
    df, rows = compare(sample, adapters, pivot=pivot, n_boot=0, boot_seed=boot_seed, return_segments=True,
                       workers=1, engine="local", progress=False, max_chars=max_chars,
                       words=words, backend=None, segmenters=segmenters, diagnostics="exact", batch_size=batch_size)
    cal_tokens = {a.id: calibration_tokens(a, cal) for a in adapters} if cal is not None else {}   # once per tokenizer
    tot = scan.totals
    li = {lang: i for i, lang in enumerate(langs)}
    ai = {a.id: i for i, a in enumerate(adapters)}
    live_rows = rows.filter(pl.col("chars") > 0)
    parts = live_rows.partition_by(["tokenizer", "language"], as_dict=True)
    empty = live_rows.clear()
    out = []
    for r in df.iter_rows(named=True):
        a, lang = ai[r["tokenizer"]], li[r["language"]]
        t, ch, by = int(tot.tokens[a, lang]), int(tot.chars[lang]), int(tot.bytes[lang])
        r.update(segments=int(tot.live[lang]), chars=ch, bytes=by, tokens=t, words=None,
                 tokens_per_char=t / ch if ch else None, tokens_per_byte=t / by if by else None,
                 chars_per_token=ch / t if t else None, bytes_per_token=by / t if t else None)
        bt, bc, bb = scan.bucket_tokens[a, lang], scan.bucket_chars[lang], scan.bucket_bytes[lang]
        live = bc > 0
        lo = hi = blo = bhi = None
        if n_boot:
            lo, hi = bootstrap_premium(bt[live], bc[live], n_boot=n_boot, seed=boot_seed)
            blo, bhi = bootstrap_premium(bt[live], bb[live], n_boot=n_boot, seed=boot_seed)
        r.update(tokens_per_char_ci_low=lo, tokens_per_char_ci_high=hi, tokens_per_byte_ci_low=blo,
                 tokens_per_byte_ci_high=bhi)
        reps = paired_tpc_replicates(bt, bc, seed=boot_seed) if n_boot else None
        r["tokens_per_char_boot"] = replicates_text(reps)
        mine = parts.get((r["tokenizer"], r["language"]), empty)
        for col, (num, den) in SAMPLED_RATES.items():
            ok = mine.filter(pl.col(den) >= 0) if den == "words" else mine
            lo_, hi_ = (ratio_interval(ok[num].to_numpy().astype(float), ok[den].to_numpy().astype(float),
                                       int(tot.live[lang]))
                        if r[col] is not None and ok.height else (None, None))
            r[f"{col}_ci_low"], r[f"{col}_ci_high"] = lo_, hi_
        r["diag_documents"] = mine.height
        if cal is not None:
            own = _Own(bt, bc)
            piv = own if r["language"] == pivot else _Own(scan.bucket_tokens[a, li[pivot]], scan.bucket_chars[li[pivot]])
            r.update(calibrated_premium(own, piv, cal, r["language"], n_boot=n_boot, seed=boot_seed,
                                        cal_tokens=cal_tokens[r["tokenizer"]].get(r["language"])))
        head, _, version = r["signature"].rpartition("|")
        r["signature"] = f"{head}|diag:sample-{n_sample}-seed{seed}|{version}"
        out.append(null_rates_without_tokens(r))
    return pl.DataFrame(out, schema=df.schema | {f"{c}_{e}": pl.Float64 for c in SAMPLED_RATES
                                                 for e in ("ci_low", "ci_high")} | {"diag_documents": pl.Int64},
                        infer_schema_length=None).select(df.columns)


class _Own:
    """The per-bucket sums :func:`tokstat.compare.calibrated_premium` reads, from the pass's unit buckets."""

    def __init__(self, tokens: np.ndarray, chars: np.ndarray):
        self.own_tokens, self.own_chars = tokens, chars


__all__ = ["compare_sampled", "ratio_interval", "sample_share", "DIAG_BYTES", "SAMPLED_RATES"]
