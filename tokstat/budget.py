"""Token budgets of monolingual corpora at their size: estimated from a sample, with an interval,
or counted exactly.

The sample is a **cluster sample** drawn before any text is read (:mod:`tokstat.sampling`): the
population is every Parquet row group and every block of ``BLOCK`` bytes of every JSONL or text
file; a document belongs to the cluster holding its first byte (a JSONL block is read from the first
line that starts inside it to the last one that does, so every document belongs to exactly one
block). What the files tell of each cluster, its stored bytes and, where known, its documents per
language (a Parquet row group's language column, read with the language discovery), sets the
probability it is drawn with: in proportion to its size, and high enough that every language is in
at least :data:`tokstat.sampling.PER_LANGUAGE` sampled clusters (a language held by fewer clusters
is read whole), in any layout of the shards (shuffled, written language by language, sorted by
length). Pareto πps sampling draws a fixed number of clusters; each language's total is the Hájek
ratio estimator on its known documents, with Rosén's variance and a 95 % t interval; the total over
every language is the sum of the languages' estimates. A language the metadata shows but no sampled
cluster holds prints "not sampled", never 0 [0, 0]. ``fraction_read`` is the share of the text read
(by stored size). ``exact`` counts every document with the compare engine (worker processes, or Ray
actors that read shards themselves) and puts the count beside the estimate.
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
from .sampling import MIN_CLUSTERS, PER_LANGUAGE, Estimate, draw, frame, ratio, ratio_sum
from .errors import TokstatError
from .io import check_inputs_unchanged, run_scope
from .loaders import load_corpus

BUDGET_COLUMNS = ["tokenizer", "language", "documents", "documents_low", "documents_high", "bytes", "bytes_low",
                  "bytes_high", "documents_sampled", "clusters_sampled", "clusters", "clusters_with_language", "tokens",
                  "tokens_low",
                  "tokens_high", "tokens_per_byte", "token_share", "byte_share", "exact", "exact_bytes",
                  "fraction_read", "estimator", "signature"]
#: the language of the per-tokenizer total rows (every language together, with the total's own interval)
TOTAL = "(all)"


def estimates(fr, drawn: list[int], pi: np.ndarray, docs: np.ndarray, nbytes: np.ndarray,
              toks: np.ndarray) -> dict[tuple, dict]:
    """The estimates of a drawn sample: ``{(tokenizer index, language, language index or None):
    {"documents", "bytes", "tokens": Estimate, "token_share", "byte_share"}}`` from the sampled
    clusters' documents and bytes per language (``(m, languages)``) and tokens (``(tokenizers, m,
    languages)``), language by language and for every language together (:data:`TOTAL`)."""
    langs = list(fr.langs)
    xall = np.stack([fr.aux(k) for k in range(len(langs))], axis=1) if langs else np.zeros((len(fr.units), 0))
    Xl = xall.sum(axis=0)
    unsure_any = bool(((xall.sum(axis=1) > 0) & (pi < 1)).any())

    def est(y: np.ndarray, k: int | None) -> Estimate:
        if k is None:           # every language: the sum of the languages' estimates, else the stored sizes' ratio
            got = ratio_sum(y, xall[drawn], pi[drawn], Xl, unsure_any) if y.ndim == 2 else None
            if got is not None:
                return got
            y = y.sum(axis=-1) if y.ndim == 2 else y
        x = fr.aux(k)
        return ratio(y, x[drawn], pi[drawn], float(x.sum()), bool(((x > 0) & (pi < 1)).any()))

    out = {}
    tot_bytes = est(nbytes, None).value
    for ai in range(toks.shape[0]):
        tot_tokens = est(toks[ai], None).value
        for lang, k in [*((lang, k) for k, lang in enumerate(langs)), (TOTAL, None)]:
            pick = (lambda arr: arr) if k is None else (lambda arr, k=k: arr[..., k])
            by, tk = est(pick(nbytes), k), est(pick(toks[ai]), k)
            out[(ai, lang, k)] = {"documents": est(pick(docs), k), "bytes": by, "tokens": tk,
                                  "token_share": tk.value / tot_tokens if tk.value is not None and tot_tokens else None,
                                  "byte_share": by.value / tot_bytes if by.value is not None and tot_bytes else None}
    return out


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
    fr = frame(c, cls, block)
    drawn, pi = draw(fr, min(1.0, max(MIN_CLUSTERS, want) / M), seed)
    m = len(drawn)
    # verified on the probes here and on the corpus's own texts inside the one pass (engine.scan)
    adapters: list[Adapter] = with_backend(resolve_tokenizers(list(tokenizers), c), backend, None, list(c.languages))
    langs = list(c.languages)
    from .progress import Meter

    todo = list(range(M)) if exact else sorted(drawn)
    if workers is None:         # left to the pass: one worker per 64 MiB of the text it reads
        from .engine.scan import default_workers

        workers = default_workers(int(fr.size.sum() if exact else fr.size[drawn].sum()))
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
    out = []
    if exact:       # the hash tree of the one pass (engine.scan): the same with any workers
        sig_corpus = f"corpus:{c.name}@{scan.fingerprint()[:8]}"
    else:   # no full read: the files' identity (names and sizes), not the content's hash
        import hashlib

        h = hashlib.sha256("\n".join(f"{Path(p).name}\t{os.path.getsize(p)}" for p, _ in files).encode()).hexdigest()
        sig_corpus = f"corpus:{c.name}@files-{h[:8]}"
    whole = m == M
    total_size = float(fr.size.sum())
    read = float(fr.size[drawn].sum()) / total_size if total_size > 0 else m / M
    by_docs = bool(fr.known.all()) and (c.meta.get("lang_id") or "off") == "off"
    estimator = (f"every cluster read ({M} of {M}: the sample is the whole corpus): exact counts, no sampling error"
                 if whole else
                 f"cluster sample: {m} of {M} clusters (row groups / {block:,}-byte blocks, {read:.1%} of the text by "
                 f"stored size; Pareto πps, each with probability ≥ {min(1.0, max(MIN_CLUSTERS, want) / M):.3g} × its "
                 f"size over the mean and ≥ {PER_LANGUAGE} × its share of any language), seed {seed}; Hájek ratio estimator "
                 + ("on each cluster's known documents per language" if by_docs else "on the clusters' stored bytes")
                 + " (totals: on the stored bytes), 95% t interval")
    for (ai, lang, k), e in estimates(fr, drawn, pi, docs, nbytes, toks).items():
        a = adapters[ai]
        d, by, tk = e["documents"], e["bytes"], e["tokens"]
        pick = (lambda arr: arr.sum(axis=-1)) if k is None else (lambda arr, k=k: arr[..., k])
        r = {"tokenizer": a.id, "language": lang, "documents": d.value, "documents_low": d.low,
             "documents_high": d.high, "bytes": by.value, "bytes_low": by.low, "bytes_high": by.high,
             "documents_sampled": int(pick(docs).sum()), "clusters_sampled": m, "clusters": M,
             "clusters_with_language": tk.support,
             "tokens": tk.value, "tokens_low": tk.low, "tokens_high": tk.high,
             "tokens_per_byte": tk.value / by.value if tk.value is not None and by.value else None,
             "token_share": e["token_share"], "byte_share": e["byte_share"],
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
                                               "tokens_high": pl.Float64, "tokens": pl.Float64, "bytes": pl.Float64,
                                               "documents": pl.Float64, "clusters_with_language": pl.Int64},
                        infer_schema_length=None).select(BUDGET_COLUMNS)


__all__ = ["budget", "estimates", "clusters", "read_cluster", "BUDGET_COLUMNS", "TOTAL", "BLOCK", "Cluster"]
