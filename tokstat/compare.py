"""``tokstat compare``: corpus -> segments -> adapters -> per-segment counts -> metrics, one row per
(tokenizer, language)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from itertools import islice

import numpy as np
import polars as pl

from . import __version__
from .adapters import Adapter, load_tokenizer
from .corpus import Corpus, Segment
from .counts import LangCounts, TextBatch
from .errors import TokstatError
from .loaders import load_corpus
from .metrics import COMPARE_COLUMNS, summarize
from .segmenters import segmenter_name, word_spans
from .split import is_heldout

UNRELIABLE_UNK = 0.10


def _batches(it: Iterable[Segment], size: int) -> Iterator[list[Segment]]:
    it = iter(it)
    while batch := list(islice(it, size)):
        yield batch


def joined(corpus: Corpus) -> Iterator[Segment]:
    """All segments of each language joined by one space, as one segment (the FLORES-200 convention)."""
    texts = {lang: [] for lang in corpus.languages}
    words = {lang: [] for lang in corpus.languages}
    for s in corpus:
        for lang in corpus.languages:
            t = s.texts.get(lang, "")
            if t:
                texts[lang].append(t)
                words[lang].extend(s.words.get(lang, []))
    yield Segment("joined", {k: " ".join(v) for k, v in texts.items()},
                  {k: v for k, v in words.items() if k in corpus.gold_words})


def single_token_coverage(adapter: Adapter, cps: set[int]) -> float | None:
    """Share of distinct CJK characters that, encoded alone, give exactly one token covering input
    (a zero-width dummy-prefix token such as SentencePiece's ``▁`` is not counted)."""
    if not cps:
        return None
    chars = [chr(c) for c in sorted(cps)]
    enc = adapter.encode_spans(chars)
    nz = (enc.ends > enc.starts).astype(np.int64)
    per = np.add.reduceat(nz, enc.off[:-1]) if len(nz) else np.zeros(len(chars))
    per = np.where(np.diff(enc.off) > 0, per, 0)
    return float(np.mean(per == 1))


def signature(corpus: Corpus, fingerprint: str, adapter: Adapter, segmenter: str | None, join: bool) -> str:
    parts = [f"corpus:{corpus.name}@{fingerprint[:8]}", f"tok:{adapter.signature}",
             f"lib:{adapter.library_version}", f"words:{segmenter or 'none'}", "norm:nfc"]
    if getattr(adapter, "heldout", None):
        frac, seed = adapter.heldout
        parts.append(f"eval:heldout-{frac:g}-seed{seed}")
    if join:
        parts.append("mode:join")
    parts.append(f"tokstat:{__version__}")
    return "|".join(parts)


def compare(corpus: str | Corpus, tokenizers: list[str | Adapter], *, pivot: str | None = "en",
            languages: list[str] | None = None, join: bool = False, batch_size: int = 2048,
            n_boot: int = 1000, seed: int = 0, segments_out: str | None = None,
            return_segments: bool = False):
    """Compare tokenizers on a parallel corpus; returns a polars DataFrame with ``COMPARE_COLUMNS``.

    Each segment is encoded on its own without special tokens (``join=True``: one text per language).
    ``train:`` tokenizers are trained on the corpus's train split and evaluated on the held-out split.
    """
    c = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    if languages:
        c = c.select(languages)
    langs = list(c.languages)
    if pivot is not None and pivot not in langs:
        raise TokstatError(f"pivot language {pivot!r} is not in the corpus ({', '.join(langs)})",
                           fix=f"pass --pivot {langs[0]}")
    if not tokenizers:
        raise TokstatError("no tokenizer given", fix="pass -t SPEC, e.g. -t tiktoken:cl100k_base")
    adapters = [load_tokenizer(t, corpus=c) for t in tokenizers]
    ids = [a.id for a in adapters]
    if len(set(ids)) != len(ids):
        raise TokstatError(f"the same tokenizer id twice: {ids}", fix="pass each tokenizer once")
    segname = {lang: segmenter_name(lang, lang in c.gold_words) for lang in langs}
    counts = {(a.id, lang): LangCounts() for a in adapters for lang in langs}
    source = joined(c) if join else c
    heldout_only = not join and all(getattr(a, "heldout", None) for a in adapters)
    for batch in _batches(source, batch_size):
        if heldout_only:  # every tokenizer was trained here: only the held-out split is evaluated
            batch = [s for s in batch if is_heldout(s.id)]
            if not batch:
                continue
        held = [is_heldout(s.id) for s in batch]
        for lang in langs:
            texts = [s.texts.get(lang, "") for s in batch]
            gold = lang in c.gold_words
            if segname[lang] is None:
                words = None
            else:
                words = [word_spans(lang, t, s.words.get(lang, []) if gold else None) for t, s in zip(texts, batch)]
            full = TextBatch.build(texts, [s.id for s in batch], words)
            sub = None
            for a in adapters:
                if getattr(a, "heldout", None) and not join and not heldout_only:
                    if sub is None:
                        keep = [i for i, h in enumerate(held) if h]
                        sub = TextBatch.build([texts[i] for i in keep], [batch[i].id for i in keep],
                                              [words[i] for i in keep] if words is not None else None)
                    tb = sub
                else:
                    tb = full
                counts[(a.id, lang)].add(tb, a.encode_spans(tb.texts), a)
    fp = c.fingerprint()
    rows, seg_frames = [], []
    for a in adapters:
        pivot_frame = counts[(a.id, pivot)].frame() if pivot else None
        for lang in langs:
            lc = counts[(a.id, lang)]
            frame = lc.frame()
            empty = frame.filter(pl.col("chars") == 0).height
            if empty and a is adapters[0]:
                warnings.warn(f"{lang}: {empty} empty segment(s) left out of its rows (listed in --segments-out)",
                              stacklevel=2)
            row = {"tokenizer": a.id, "language": lang}
            row.update(summarize(frame, pivot_frame, histogram=lc.histogram, vocab_size=a.vocab_size,
                                 coverage=single_token_coverage(a, lc.cjk), n_boot=0 if join else n_boot,
                                 seed=seed))
            row["signature"] = signature(c, fp, a, segname[lang], join)
            if row["unk_rate"] is not None and row["unk_rate"] > UNRELIABLE_UNK:
                warnings.warn(f"{a.id} on {lang}: {row['unk_rate']:.1%} of characters are unknown tokens; "
                              "its other figures are unreliable", stacklevel=2)
            rows.append(row)
            seg_frames.append(frame.with_columns(pl.lit(a.id).alias("tokenizer"), pl.lit(lang).alias("language")))
    df = pl.DataFrame(rows, schema_overrides={k: pl.Float64 for k in (
        "tokens_per_char", "tokens_per_byte", "chars_per_token", "bytes_per_token", "tokens_per_word",
        "continued_word_rate", "split_char_rate", "single_token_char_coverage", "unk_rate", "byte_fallback_rate",
        "boundary_precision", "boundary_recall", "boundary_f1", "renyi_efficiency", "premium",
        "premium_ci_low", "premium_ci_high", "p50_tokens", "p95_tokens")}, infer_schema_length=None)
    df = df.select(COMPARE_COLUMNS)
    segs = pl.concat(seg_frames).select("tokenizer", "language", pl.exclude("tokenizer", "language"))
    if segments_out:
        from .io import write_table

        write_table(segs, segments_out)
    return (df, segs) if return_segments else df
