"""Token budgets of monolingual corpora at their size: estimated from a sample, with an interval,
or counted exactly.

The sample is a **cluster sample** drawn without reading the corpus: the population is every
Parquet row group (from the files' metadata) and every block of ``BLOCK`` bytes of every JSONL or
text file (from the file sizes); a document belongs to the cluster holding its first byte (a
JSONL block is read from the first line that starts inside it to the last one that does, so every
document belongs to exactly one block). ``m`` of the ``M`` clusters are drawn uniformly without
replacement (seeded) and read whole, **stratified** by the files' language where the layout gives
one (per-language folders: each language's clusters are a stratum, sampled in proportion, at least
:data:`MIN_PER_STRATUM` each; documents with a language column are one stratum). For any
per-document total y (tokens of tokenizer T in
language L, documents, characters, bytes) the estimator is the expansion estimator of cluster
sampling with equal probabilities (Cochran 1977, §9.2), unbiased whatever the clusters' sizes:

    Ŷ = Σ_h (M_h/m_h) · Σ_{j∈s_h} y_j,     Var(Ŷ) = Σ_h M_h² (1 − m_h/M_h) s²_h / m_h,

with s²_h the variance of stratum h's sampled cluster totals; the 95 % interval is
Ŷ ± t_{0.975, Σ(m_h−1)}·SE.
Nothing is length-biased: clusters are drawn with equal probability and read whole. ``exact``
counts every document with the compare engine (worker processes, or Ray actors that read shards
themselves) and puts the count beside the estimate.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import polars as pl

from .adapters import Adapter
from .corpus import Corpus
from .engine.scan import BLOCK, Cluster, clusters, plan_for, read_cluster, run_scan
from .errors import TokstatError
from .io import check_inputs_unchanged, run_scope
from .loaders import load_corpus

#: at least this many clusters are drawn (all of them when the corpus has fewer)
MIN_CLUSTERS = 30
#: and at least this many in each stratum (a language's own files), or all of them
MIN_PER_STRATUM = 10
BUDGET_COLUMNS = ["tokenizer", "language", "documents", "documents_low", "documents_high", "bytes", "bytes_low",
                  "bytes_high", "documents_sampled", "clusters_sampled", "clusters", "tokens", "tokens_low",
                  "tokens_high", "tokens_per_byte", "token_share", "byte_share", "exact", "exact_bytes",
                  "fraction_read", "estimator", "signature"]
#: the language of the per-tokenizer total rows (every language together, with the total's own interval)
TOTAL = "(all)"


def _t975(df: int) -> float:
    """Student's t quantile 0.975 (a table, then the normal)."""
    table = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
             12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}
    if df <= 0:
        return float("inf")
    for k in sorted(table):
        if df <= k:
            return table[k]
    return 1.96


def expand(totals: np.ndarray, M: int) -> tuple[float, float | None, float | None]:
    """``(estimate, low, high)`` of the population total from the sampled cluster totals (no
    interval, ``None``, from a single sampled cluster of several: its variance is unknown).

    >>> expand(np.array([10.0, 12.0, 8.0, 10.0]), 4)          # every cluster: exact, zero width
    (40.0, 40.0, 40.0)
    """
    m = len(totals)
    est = M / m * float(totals.sum())
    if m >= M:
        return est, est, est
    if m < 2:
        return est, None, None
    se = M * math.sqrt((1 - m / M) * float(totals.var(ddof=1)) / m)
    h = _t975(m - 1) * se
    return est, max(0.0, est - h), est + h


def expand_strata(parts: list[tuple[np.ndarray, int]]) -> tuple[float, float | None, float | None]:
    """Stratified version of :func:`expand`: ``parts`` are (sampled cluster totals, clusters) per
    stratum; estimates and variances add, the t quantile has Σ(m_h − 1) degrees of freedom.

    >>> expand_strata([(np.array([3.0, 5.0]), 2), (np.array([10.0]), 1)])   # every cluster of both strata
    (18.0, 18.0, 18.0)
    """
    total = var = 0.0
    dof = 0
    exact = True
    for y, M_h in parts:
        m_h = len(y)
        if m_h == 0:
            continue
        total += M_h / m_h * float(y.sum())
        if m_h < M_h:
            exact = False
            var += M_h ** 2 * (1 - m_h / M_h) * (float(y.var(ddof=1)) if m_h > 1 else float("inf")) / m_h
            dof += m_h - 1
    if exact:
        return total, total, total
    if math.isinf(var) or dof <= 0:       # a stratum sampled by one cluster of several: no interval
        return total, None, None
    h = _t975(dof) * math.sqrt(var)
    return total, max(0.0, total - h), total + h


def budget(corpus: str | Corpus, tokenizers: list, *, sample: float | int = 0.01, seed: int = 0,
           exact: bool = False, block: int = BLOCK, engine: str = "local", workers: int | None = None,
           address: str | None = None, progress: bool | None = None, backend: str = "auto",
           **load_kw) -> pl.DataFrame:
    """Per (tokenizer, language): documents, bytes and tokens of a monolingual corpus, estimated
    from a cluster sample (``sample``: a fraction of the clusters, or a number of them; at least
    :data:`MIN_CLUSTERS`) with 95 % intervals; ``exact`` also counts every document (the
    ``exact`` and ``exact_bytes`` columns). ``token_share``/``byte_share``: the language's share of
    the tokenizer's tokens and of the bytes. ``backend``: as in :func:`tokstat.compare.compare`."""
    with run_scope():
        df = _budget(corpus, tokenizers, sample=sample, seed=seed, exact=exact, block=block, engine=engine,
                     workers=workers, address=address, progress=progress, backend=backend, **load_kw)
        check_inputs_unchanged()      # the estimate and the exact count are of one corpus, as it was first read
    return df


def _budget(corpus, tokenizers, *, sample, seed, exact, block, engine, workers, address, progress, backend, **load_kw):
    from .compare import resolve_tokenizers, with_backend

    c = corpus if isinstance(corpus, Corpus) else load_corpus(corpus, **load_kw)
    if c.kind != "monolingual":
        raise TokstatError(f"{c.name} is a parallel corpus: budget estimates the tokens of monolingual data",
                           fix="run tokstat compare on it (exact counts), or pass --kind monolingual for documents")
    if not (isinstance(sample, (int, float)) and sample > 0 and math.isfinite(sample)):
        raise TokstatError(f"--sample must be a fraction in (0, 1] or a number of clusters, got {sample}",
                           fix="e.g. --sample 0.01 or --sample 200")
    if isinstance(sample, float) and sample > 1 and not sample.is_integer():
        raise TokstatError(f"--sample {sample}: a fraction is at most 1, a number of clusters is whole",
                           fix="e.g. --sample 0.01 or --sample 200")
    files = c.meta.get("files") or []
    cls = clusters(files, block)
    M = len(cls)
    if not M:
        raise TokstatError(f"{c.name} is not made of files budget can sample (Parquet, JSONL or text shards): a "
                           "Hugging Face dataset streams", fix="count it with tokstat compare (exact), or save it "
                           "as Parquet shards (Dataset.to_parquet) and budget those")
    want = math.ceil(sample * M) if sample <= 1 else int(sample)
    m = min(M, max(MIN_CLUSTERS, want))
    rng = np.random.default_rng(seed)
    # strata: the clusters of each file language (per-language folders), and one of documents whose
    # language is read from a column; each sampled in proportion, at least MIN_PER_STRATUM (or all)
    strata: dict[str, list[int]] = {}
    for i, cl in enumerate(cls):
        strata.setdefault(cl.lang or "*", []).append(i)
    drawn_by: dict[str, list[int]] = {}
    for h, idx in strata.items():
        m_h = min(len(idx), max(MIN_PER_STRATUM, round(m * len(idx) / M)))
        drawn_by[h] = sorted(rng.choice(idx, size=m_h, replace=False).tolist())
    drawn = [k for h in strata for k in drawn_by[h]]
    stratum_of = {k: h for h in strata for k in drawn_by[h]}
    m = len(drawn)
    # verified on the probes here and on the corpus's own texts inside the one pass (engine.scan)
    adapters: list[Adapter] = with_backend(resolve_tokenizers(list(tokenizers), c), backend, None, list(c.languages))
    langs = list(c.languages)
    li = {lang: k for k, lang in enumerate(langs)}
    from .progress import Meter

    todo = list(range(M)) if exact else sorted(drawn)
    plan = plan_for(c, adapters, cls, block=block, keep=frozenset(drawn))
    label = f"budget {c.name}: {'every cluster' if exact else f'{m:,} of {M:,} clusters'}"
    with Meter(label, enabled=progress, total=None) as meter:
        scan = run_scan(plan, todo, workers=workers, engine=engine, address=address, progress=meter)
    # per sampled cluster: documents and bytes per language; tokens per (tokenizer, language)
    docs = np.array([scan.units[k].docs for k in drawn], dtype=np.float64).reshape(m, len(langs))
    nbytes = np.array([scan.units[k].bytes for k in drawn], dtype=np.float64).reshape(m, len(langs))
    toks = np.array([scan.units[k].tokens for k in drawn], dtype=np.float64).reshape(m, len(adapters), len(langs))
    toks = toks.transpose(1, 0, 2)
    ex = scan.totals if exact else None
    rows_of = {h: [j for j, k in enumerate(drawn) if stratum_of[k] == h] for h in strata}

    def est(y: np.ndarray) -> tuple[float, float, float]:
        return expand_strata([(y[rows_of[h]], len(strata[h])) for h in strata])

    out = []
    if exact:       # the hash tree of the one pass (engine.scan): the same with any workers
        sig_corpus = f"corpus:{c.name}@{scan.fingerprint()[:8]}"
    else:   # no full read: the files' identity (names and sizes), not the content's hash
        import hashlib

        h = hashlib.sha256("\n".join(f"{Path(p).name}\t{os.path.getsize(p)}" for p, _ in files).encode()).hexdigest()
        sig_corpus = f"corpus:{c.name}@files-{h[:8]}"
    whole = m == M
    tot_bytes = est(nbytes.sum(axis=1))[0]
    read = float(nbytes.sum()) / tot_bytes if tot_bytes > 0 else None
    estimator = (f"every cluster read ({M} of {M}: the sample is the whole corpus): exact counts, no sampling error"
                 if whole else
                 f"cluster sample: {m} of {M} clusters (row groups / {block:,}-byte blocks, {read:.1%} of the text) in "
                 f"{len(strata)} strata (file languages), seed {seed}, stratified expansion estimator, 95% t interval")
    for ai, a in enumerate(adapters):
        tot_tokens = est(toks[ai].sum(axis=1))[0]
        for lang, k in [*li.items(), (TOTAL, None)]:
            pick = (lambda arr: arr.sum(axis=-1)) if k is None else (lambda arr, k=k: arr[..., k])
            d = est(pick(docs))
            by = est(pick(nbytes))
            tk = est(pick(toks[ai]))
            r = {"tokenizer": a.id, "language": lang, "documents": d[0], "documents_low": d[1], "documents_high": d[2],
                 "bytes": by[0], "bytes_low": by[1], "bytes_high": by[2], "documents_sampled": int(pick(docs).sum()),
                 "clusters_sampled": m, "clusters": M, "tokens": tk[0], "tokens_low": tk[1], "tokens_high": tk[2],
                 "tokens_per_byte": tk[0] / by[0] if by[0] > 0 else None,
                 "token_share": tk[0] / tot_tokens if tot_tokens > 0 else None,
                 "byte_share": by[0] / tot_bytes if tot_bytes > 0 else None,
                 "exact": None, "exact_bytes": None, "fraction_read": read, "estimator": estimator,
                 "signature": f"{sig_corpus}|tok:{a.signature}|lib:{a.library_version}|"
                              f"norm:{c.meta.get('normalize', 'nfc')}|sample:{m}/{M}-seed{seed}"
                              + (f"|{c.meta['lang_id_signature']}" if c.meta.get("lang_id_signature") else "")}
            if ex is not None:
                r["exact"] = int(ex.tokens[ai].sum() if k is None else ex.tokens[ai, k])
                r["exact_bytes"] = int(ex.bytes.sum() if k is None else ex.bytes[k])
            out.append(r)
    return pl.DataFrame(out, schema_overrides={"exact": pl.Int64, "exact_bytes": pl.Int64, "tokens_per_byte": pl.Float64,
                                               "token_share": pl.Float64, "byte_share": pl.Float64,
                                               "fraction_read": pl.Float64, "documents_low": pl.Float64,
                                               "documents_high": pl.Float64, "bytes_low": pl.Float64,
                                               "bytes_high": pl.Float64, "tokens_low": pl.Float64,
                                               "tokens_high": pl.Float64},
                        infer_schema_length=None).select(BUDGET_COLUMNS)


__all__ = ["budget", "clusters", "read_cluster", "expand", "BUDGET_COLUMNS", "TOTAL", "BLOCK", "Cluster"]
