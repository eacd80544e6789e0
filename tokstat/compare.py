"""``tokstat compare``: corpus -> segments -> adapters -> per-segment counts -> metrics, one row per
(tokenizer, language)."""

from __future__ import annotations

import math
import warnings
import os
from collections.abc import Iterable, Iterator
from itertools import chain, islice

import numpy as np
import polars as pl

from ._version import __version__
from .adapters import Adapter, load_tokenizer, parse_spec
from pathlib import Path

from .corpus import Corpus, Segment
from .engine import Job, run_local, run_ray
from .engine.job import MAX_CHARS
from .errors import TokstatError
from .langs import resolve
from .integrity import check_pin
from .io import check_outputs, write_tables
from .loaders import load_corpus
from .metrics import (
    COMPARE_COLUMNS,
    INFO_COLUMNS,
    SAMPLE_COLUMNS,
    null_rates_without_tokens,
    paired_tpc_replicates,
    replicates_text,
    summarize,
    versus_baseline,
)
from .progress import Meter
from .segmenters import segmenter_name, warm
from .split import Split

UNRELIABLE_UNK = 0.10
#: segments per (tokenizer, language) whose decoding is checked against the text
ROUNDTRIP_SAMPLE = 100


#: segments at the head of the corpus whose Chinese text is checked for its script
SCRIPT_SAMPLE = 200


def chinese_scripts(segs: list[Segment], langs: list[str]) -> dict[str, str]:
    """For each language coded plain ``zh`` (no script subtag): the script its text is written in
    (:func:`tokstat.langs.chinese_script` on ``segs``, the head of the corpus), with a warning when it
    is not Simplified — UD PUD's "zh" is Traditional, so a "Chinese premium" must say which Chinese."""
    from .langs import chinese_script

    out: dict[str, str] = {}
    for lang in [lang for lang in langs if lang == "zh"]:
        script, share = chinese_script(s.texts.get(lang, "") for s in segs)
        if script is None:
            continue
        out[lang] = script
        if script != "Hans":
            warnings.warn(f"{lang}: the text is {'Traditional' if script == 'Hant' else 'a mix of Simplified and Traditional'} "
                          f"Chinese ({share:.0%} of the characters that differ between the scripts are Traditional): its "
                          f"numbers are that Chinese's (the signature says script:{script}); name the language "
                          f"{'zh-Hant' if script == 'Hant' else 'by script'} to say so", stacklevel=3)
    return out


def text_scripts(c: Corpus, head: list[Segment], langs: list[str], mono: bool) -> dict[str, str | None]:
    """The script each language's text is written in (:func:`tokstat.langs.text_script`), from the
    head of the corpus (a monolingual corpus: from the head of each shard, up to SCRIPT_SAMPLE
    documents per language); None for a language with no letter there."""
    from .corpus import heads_by_language
    from .langs import text_script

    if mono:
        heads = heads_by_language(c, langs, SCRIPT_SAMPLE)
    else:
        heads = {lang: [s.texts.get(lang, "") for s in head] for lang in langs}
    return {lang: text_script(heads[lang]) for lang in langs}


def roundtrip_rates(adapters: list[Adapter], segments: Iterable[Segment], langs: list[str], splits: dict,
                    n: int = ROUNDTRIP_SAMPLE) -> dict[tuple[str, str], float | None]:
    """Share of the first ``n`` non-empty texts per (tokenizer, language) — of the segments the
    tokenizer is scored on — that its own decoder gives back exactly (``decode(encode(t)) == t``).
    Below 1, the tokenizer loses text: unknown tokens, a lossy normaliser (lower-casing, NFKC) or
    a pre-tokenizer that drops whitespace (WordPiece)."""
    texts: dict[tuple[str, str], list[str]] = {(a.id, lang): [] for a in adapters for lang in langs}
    for seg in segments:
        full = True
        for a in adapters:
            sp = splits.get(a.id)
            for lang in langs:
                bucket = texts[(a.id, lang)]
                if len(bucket) < n:
                    full = False
                    t = seg.texts.get(lang, "")
                    if t.strip() and (sp is None or sp.is_heldout(seg.id)):
                        bucket.append(t)
        if full:
            break
    out = {}
    for a in adapters:              # one call per tokenizer for all languages' texts
        flat = [t for lang in langs for t in texts[(a.id, lang)]]
        ids = a.encode_batch(flat) if flat else []
        k = 0
        for lang in langs:
            ts = texts[(a.id, lang)]
            try:
                out[(a.id, lang)] = sum(a.decode(i) == t for i, t in zip(ids[k:k + len(ts)], ts)) / len(ts) \
                    if ts else None
            except NotImplementedError:
                out[(a.id, lang)] = None
            k += len(ts)
    return out


def resolve_tokenizers(tokenizers: list[str | Adapter], corpus: Corpus) -> list[Adapter]:
    """Adapters for ``tokenizers``: files through the registry (:func:`tokstat.adapters.load_tokenizer`),
    ``train:ALGO:SIZE[?heldout=F&seed=N]`` trained here on ``corpus``'s train split (the adapter
    carries its :class:`~tokstat.split.Split`)."""
    from .train import parse_train_spec, train

    out = []
    for t in tokenizers:
        if isinstance(t, str) and t.startswith("train:"):
            _, target, opts = parse_spec(t)
            algo, size, split, parity, pre = parse_train_spec(target, opts)
            a = train(corpus, algo, size, split=split, parity=parity, pretokenizer=pre).adapter
            check_pin(t, a.file_hash, opts.get("sha256"))
            out.append(a)
        else:
            out.append(load_tokenizer(t))
    return out


def with_backend(adapters: list[Adapter], backend: str | None, corpus: Corpus | None, langs: list[str]) -> list[Adapter]:
    """``adapters`` counted by the backend asked for (:func:`tokstat.adapters.fast.select_backend`),
    verified on the head of ``corpus`` (up to ``VERIFY_PER_LANGUAGE`` texts of every language);
    ``corpus`` None: on the probes only, for a run that verifies the corpus's own texts as it reads
    them (:mod:`tokstat.engine.scan`)."""
    from .adapters.fast import FastAdapter, check_backend, select_backend, supports, verification_sample

    if backend is None:             # as given: a caller that chose the backend already
        return adapters
    check_backend(backend)          # before the corpus is read for the verification sample
    if corpus is None or (backend != "reference"
                          and not any(supports(a) is None and not isinstance(a, FastAdapter) for a in adapters)):
        return select_backend(adapters, backend, [])      # nothing to verify here: no need to read the corpus
    return select_backend(adapters, backend, [] if backend == "reference" else verification_sample(corpus, langs))


def joined(corpus: Corpus, split: Split | None = None) -> Iterator[Segment]:
    """All segments of each language joined by one space, as one segment (the FLORES-200 convention);
    with ``split``, only its held-out segments."""
    texts = {lang: [] for lang in corpus.languages}
    words = {lang: [] for lang in corpus.languages}
    for s in corpus:
        if split is not None and not split.is_heldout(s.id):
            continue
        for lang in corpus.languages:
            t = s.texts.get(lang, "")
            if t:
                texts[lang].append(t)
                words[lang].extend(s.words.get(lang, []))
    yield Segment("joined", {k: " ".join(v) for k, v in texts.items()},
                  {k: v for k, v in words.items() if k in corpus.gold_words})


def single_token_chars(adapter: Adapter, cps: set[int]) -> dict[int, bool]:
    """For each CJK code point: does it, encoded alone, give exactly one token covering input (a
    zero-width dummy-prefix token such as SentencePiece's ``▁`` is not counted) that is not the
    unknown token (a character read as ``<unk>`` is not covered: it is lost)?"""
    order = sorted(c for c in cps if adapter.encodes(chr(c)))   # token ids given elsewhere: those it has
    if not order:
        return {}
    enc = adapter.encode_spans([chr(c) for c in order])
    nz = (enc.ends > enc.starts).astype(np.int64)
    unk = np.isin(enc.ids, list(adapter.unk_ids)) if adapter.unk_ids else np.zeros(len(enc.ids), dtype=bool)
    bad = (unk & (nz > 0)).astype(np.int64)
    per = np.add.reduceat(nz, enc.off[:-1]) if len(nz) else np.zeros(len(order), dtype=np.int64)
    per_unk = np.add.reduceat(bad, enc.off[:-1]) if len(nz) else np.zeros(len(order), dtype=np.int64)
    has = np.diff(enc.off) > 0
    per, per_unk = np.where(has, per, 0), np.where(has, per_unk, 0)
    return dict(zip(order, ((per == 1) & (per_unk == 0)).tolist()))


def single_token_coverage(adapter: Adapter, cps: set[int], table: dict[int, bool] | None = None) -> float | None:
    """Share of distinct CJK characters ``cps`` that are one token on their own (see :func:`single_token_chars`)."""
    if not cps:
        return None
    table = table if table is not None else single_token_chars(adapter, cps)
    if any(c not in table for c in cps):     # a character the pretokenized table never encoded alone
        return None
    return float(np.mean([table[c] for c in cps]))


def signature(corpus: Corpus, fingerprint: str, adapter: Adapter, segmenter: str | None, join: bool,
              split: Split | None = None, script: str | None = None, calibration: str | None = None) -> str:
    """sacrebleu-style: corpus@hash|tok:id@hash|lib|words|norm[|pre:P][|script:S][|eval:heldout-F-seedN][|mode:join]
    [|docs][|calib:NAME@HASH]|tokstat:V (``docs``: a monolingual corpus; ``calib``: the parallel corpus
    its premium is calibrated on)."""
    parts = [f"corpus:{corpus.name}@{fingerprint[:8]}", f"tok:{adapter.signature}",
             f"lib:{adapter.library_version}", f"words:{segmenter or 'none'}",
             f"norm:{corpus.meta.get('normalize', 'nfc')}"]
    if getattr(adapter, "pretokenizer", None):
        parts.append(f"pre:{adapter.pretokenizer}")
    if script:
        parts.append(f"script:{script}")
    if split is not None:
        parts.append(f"eval:{split.label}")
    if join:
        parts.append("mode:join")
    if corpus.kind == "monolingual":
        parts.append("docs")
        if corpus.meta.get("lang_id_signature"):
            parts.append(corpus.meta["lang_id_signature"])
    if calibration:
        parts.append(f"calib:{calibration}")
    parts.append(f"tokstat:{__version__}")
    return "|".join(parts)


#: ratio columns: null (never NaN or inf) when their denominator is zero, with a warning
RATIO_COLUMNS = ["tokens_per_char", "tokens_per_byte", "chars_per_token", "bytes_per_token", "tokens_per_word",
                 "continued_word_rate", "split_char_rate", "unk_rate", "byte_fallback_rate", "boundary_precision",
                 "boundary_recall", "boundary_f1", "renyi_efficiency", "premium"]
WORD_COLUMNS = {"tokens_per_word", "continued_word_rate", "boundary_recall", "boundary_f1"}


def _warn_nulls(row: dict, st, has_pivot: bool, first: bool) -> None:
    """Say why a ratio is null: an empty language, no word segmentation, or another zero denominator."""
    nulls = [c for c in RATIO_COLUMNS if row[c] is None and (c != "premium" or has_pivot)]
    if not nulls:
        return
    where = f"{row['tokenizer']} on {row['language']}"
    if st.segments == 0:
        warnings.warn(f"{where}: no non-empty segments, so every ratio is null", stacklevel=3)
        return
    if row.get("tokens") == 0:
        warnings.warn(f"{where}: the tokenizer emits no tokens for this text, so its rates are null", stacklevel=3)
        return
    if not st.words_known:
        if first:
            warnings.warn(f"{row['language']}: no words (no gold segmentation and no segmenter for this "
                          "language), so the per-word columns are null", stacklevel=3)
        nulls = [c for c in nulls if c not in WORD_COLUMNS | {"boundary_precision"}]
    if nulls:
        warnings.warn(f"{where}: zero denominator, reported as null: {', '.join(nulls)}", stacklevel=3)


def family_of(a: Adapter) -> str:
    """``library/algorithm``: ``tiktoken/byte-level BPE``, ``huggingface/WordPiece``, ``sentencepiece/unigram``."""
    algo = a.algorithm.removeprefix(f"{a.family} ")
    return f"{a.family}/{algo}" if algo else a.family


def load_calibration(spec: str | Corpus, langs: list[str], pivot: str) -> dict:
    """A parallel calibration corpus as per-segment characters per language (over segments where
    the language and the pivot both have text): ``{"chars": {lang: array}, "name": ...}``. Every
    language of the monolingual corpus (but ``und``) must be in it."""
    cal = spec if isinstance(spec, Corpus) else load_corpus(spec)
    if cal.kind != "parallel":
        raise TokstatError(f"the calibration corpus {cal.name} is monolingual: it cannot say how much content a "
                           "character carries", fix="give a parallel corpus (FLORES, PUD, your own aligned text)")
    need = [lang for lang in langs if lang != "und"]
    missing = [lang for lang in need if lang not in cal.languages]
    if missing:
        raise TokstatError(f"the calibration corpus {cal.name} lacks {', '.join(missing)}",
                           fix=f"give a parallel corpus with {', '.join(need)}, or --languages to leave them out")
    chars: dict[str, list[int]] = {lang: [] for lang in need}
    texts: dict[str, list[str]] = {lang: [] for lang in need}
    ptexts: list[str] = []
    for seg in cal:
        p = seg.texts.get(pivot, "")
        if not p.strip():
            continue
        for lang in need:
            t = seg.texts.get(lang, "")
            chars[lang].append(len(t) if t.strip() else -1)
            texts[lang].append(t)
        chars.setdefault("_pivot", []).append(len(p))
        ptexts.append(p)
    piv = np.asarray(chars.pop("_pivot", []), dtype=np.int64)
    out, where = {}, {}
    for lang in need:
        a = np.asarray(chars[lang], dtype=np.int64)
        ok = a >= 0
        out[lang] = (a[ok], piv[ok])
        where[lang] = np.flatnonzero(ok)           # the pivot segments this language pairs with
        texts[lang] = [t for t, k in zip(texts[lang], ok) if k]
    if not len(piv):
        raise TokstatError(f"the calibration corpus {cal.name} has no {pivot} text", fix="check the corpus")
    return {"pairs": out, "texts": texts, "pivot_texts": ptexts, "where": where,
            "name": f"{cal.name}@{cal.fingerprint()[:8]}"}


def calibration_tokens(a: Adapter, cal: dict) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per language: the tokens ``a`` gives the calibration set's aligned segments of the language
    and of the pivot (for the transfer check of :func:`calibrated_premium`); the pivot's segments
    are encoded once for every language."""
    ptok = a.token_counts(cal["pivot_texts"]).astype(float)
    return {lang: (a.token_counts(lt).astype(float) if lt else np.zeros(0), ptok[cal["where"][lang]])
            for lang, lt in cal["texts"].items()}


def with_rtc(df: pl.DataFrame, pivot: str | None) -> pl.DataFrame:
    """The ``rtc`` column, a peer's "relative tokenization cost": the pivot's characters per token
    divided by the language's, i.e. tokens per character of the language over the pivot's (same
    tokenizer). It is **not** the premium: on aligned text RTC = premium × chars(pivot) / chars(L),
    so it carries the scripts' character ratio (Chinese needs far fewer characters than English for
    the same content). Null without a pivot (monolingual documents).

    >>> d = pl.DataFrame({"tokenizer": ["t", "t"], "language": ["en", "zh"], "tokens_per_char": [0.25, 1.0]})
    >>> with_rtc(d, "en")["rtc"].to_list()
    [1.0, 4.0]
    """
    if pivot is None:
        return df.with_columns(pl.lit(None, pl.Float64).alias("rtc"))
    piv = df.filter(pl.col("language") == pivot).select("tokenizer", pl.col("tokens_per_char").alias("_piv_tpc"))
    j = df.join(piv, on="tokenizer", how="left", maintain_order="left")
    # divided in numpy, element by element: polars divides by a broadcast scalar (one tokenizer) through its
    # reciprocal, one ulp away from the same rows divided beside other tokenizers
    num = j["tokens_per_char"].cast(pl.Float64).to_numpy()
    den = j["_piv_tpc"].cast(pl.Float64).to_numpy()
    ok = ~np.isnan(num) & ~np.isnan(den) & (den > 0)
    out = np.full(len(num), np.nan)
    np.divide(num, den, out=out, where=ok)
    return j.drop("_piv_tpc").with_columns(pl.Series("rtc", out, dtype=pl.Float64).fill_nan(None))


def _check_aligned(df: pl.DataFrame, c: Corpus, first: str, pivot: str | None, mono: bool,
                   pairs: dict[str, int]) -> None:
    """A parallel corpus in which no language shares a single non-empty segment with the pivot has
    no premium at all: an error naming the corpus (the rows do not pair translations), not a table
    of nulls with a division warning."""
    if pivot is None or mono:
        return
    rows = df.filter(pl.col("tokenizer") == first)
    others = rows.filter(pl.col("language") != pivot)
    # an empty language, or aligned text without tokens, is a null with its own warning; here both
    # sides have tokens and not one segment pairs them
    with_tokens = others.filter(pl.col("tokens") > 0)
    if (with_tokens.height and all(pairs.get(lang, 0) == 0 for lang in others["language"].to_list())
            and rows.filter((pl.col("language") == pivot) & (pl.col("tokens") > 0)).height):
        langs = ", ".join(others["language"].to_list())
        raise TokstatError(f"nothing aligns: no segment has text in both the pivot {pivot} and {langs}, so there is no "
                           "premium", path=c.sources[0] if len(c.sources) == 1 else
                           (Path(c.sources[0]).parent if c.sources and len({Path(q).parent for q in c.sources}) == 1 else None),
                           fix="check that each row holds one text and its translation (an empty cell pairs with "
                           f"nothing; tokstat corpus info {c.name} shows the empty ones), or choose another --pivot")


TRANSFER_WARN = 0.10
#: how far past the calibration set's direct premium the interval reaches, as a power of the transfer
#: ratio: on documents shifted against the calibration set (PUD's contiguous halves, Tatoeba's
#: contiguous thirds) the truth lay 1.2–1.3× the transfer's log-distance from the calibrated premium,
#: past the direct one (analysis/study_coverage_calibrate.py); 2 leaves a margin
TRANSFER_REACH = 2.0


def calibrated_premium(st, piv, cal: dict, lang: str, *, n_boot: int = 1000, seed: int = 0,
                       cal_tokens: tuple[np.ndarray, np.ndarray] | None = None) -> dict:
    """The premium of a monolingual corpus calibrated on a parallel one:

        P_L = (tokens/char of L on your data) × r_L / (tokens/char of the pivot on your data)

    with r_L = characters of L / characters of the pivot on the same parallel segments (how many
    characters of L carry the content of one pivot character). It assumes your documents'
    characters per unit of content are the calibration set's. The **transfer check** measures how
    far your documents are from that set: with ``cal_tokens`` (the tokenizer on the calibration
    segments), s_X = (tokens/char of X on your data) / (tokens/char of X on the calibration set) and

        calibration_transfer = s_L / s_P = P_L / D_L,   D_L = Σ tokens_L / Σ tokens_P on the calibration set,

    i.e. the ratio of the calibrated premium to the direct premium of the calibration set's own
    content (which assumes the opposite: your documents tokenize like that set). 1 means the two
    assumptions agree. The 95 % interval joins the percentile bootstrap intervals of both estimates
    (your documents of L, your pivot documents and the parallel segments resampled independently;
    the calibration segments for D_L) and reaches past D_L to P_L · transfer^−:data:`TRANSFER_REACH`
    (the sampling interval of P_L moved there), and at least P_L · exp(±drift), drift = |ln| of the
    character ratio r_L of the calibration set's first half over its second half (how much r moves
    between parts of one parallel set: a shift in characters per content that tokens per character
    cannot show). So it carries the content shift between your documents and the calibration set as
    well as the sampling error; a shift above
    :data:`TRANSFER_WARN` is warned about. Coverage on split PUD and Tatoeba:
    ``analysis/study_coverage_calibrate.py``."""
    from .metrics import resample_counts

    none = {"premium": None, "premium_ci_low": None, "premium_ci_high": None, "calibration_transfer": None}
    if lang == "und" or lang not in cal["pairs"]:
        return none
    if st is piv:          # the pivot against itself: 1 by definition, as on parallel text
        return {"premium": 1.0, "premium_ci_low": 1.0, "premium_ci_high": 1.0, "calibration_transfer": 1.0}
    lc, pc = cal["pairs"][lang]
    own, pown = st.own_chars > 0, piv.own_chars > 0
    if not own.any() or not pown.any() or not len(lc) or pc.sum() == 0 or piv.own_tokens.sum() == 0:
        return none
    tl, cl = st.own_tokens[own].astype(float), st.own_chars[own].astype(float)
    tp, cp = piv.own_tokens[pown].astype(float), piv.own_chars[pown].astype(float)
    r = lc.sum() / pc.sum()
    premium = float((tl.sum() / cl.sum()) * r / (tp.sum() / cp.sum()))
    lo = hi = transfer = None
    direct = None
    if cal_tokens is not None and len(cal_tokens[0]) == len(lc) and cal_tokens[1].sum() > 0:
        lt_cal, pt_cal = cal_tokens
        direct = float(lt_cal.sum() / pt_cal.sum())
        transfer = premium / direct if direct > 0 else None
    if n_boot and len(tl) > 1 and len(tp) > 1 and len(lc) > 1:
        w1 = resample_counts(len(tl), n_boot, seed)
        w2 = resample_counts(len(tp), n_boot, seed + 1)
        w3 = resample_counts(len(lc), n_boot, seed + 2)
        rep = ((w1 @ tl) / np.maximum(w1 @ cl, 1)) * ((w3 @ lc) / np.maximum(w3 @ pc, 1)) / (
            (w2 @ tp) / np.maximum(w2 @ cp, 1))
        lo, hi = (float(x) for x in np.quantile(rep, [0.025, 0.975]))
        if direct is not None:
            alt = (w3 @ cal_tokens[0]) / np.maximum(w3 @ cal_tokens[1], 1)
            alo, ahi = (float(x) for x in np.quantile(alt, [0.025, 0.975]))
            reach = transfer ** -TRANSFER_REACH if transfer else 1.0
            lo, hi = min(lo, alo, lo * reach), max(hi, ahi, hi * reach)
        h = len(lc) // 2               # how much the character ratio moves between the calibration set's halves
        if direct is not None and h >= 10 and pc[:h].sum() > 0 and pc[h:].sum() > 0 and lc[:h].sum() > 0 and lc[h:].sum() > 0:
            drift = abs(math.log((lc[:h].sum() / pc[:h].sum()) / (lc[h:].sum() / pc[h:].sum())))
            lo, hi = min(lo, premium * math.exp(-drift)), max(hi, premium * math.exp(drift))
    return {"premium": premium, "premium_ci_low": lo, "premium_ci_high": hi, "calibration_transfer": transfer}


#: ``--diagnostics``: ``auto`` samples the rich diagnostics above DIAG_EXACT_BELOW bytes of text
DIAGNOSTICS = ("auto", "exact", "sample")
#: text size (bytes, from the files' metadata: Parquet's uncompressed size, other files' sizes) from
#: which ``--diagnostics auto`` computes the rich diagnostics on a document sample. Every document's
#: words, spans and round-trip cost about 1 CPU s a MB (NTREX-128, 128 languages: 47 CPU s for 50 MB);
#: the sample's are a fixed 3-4 CPU s beside the pass: equal near 5 MB, and from 16 MiB on the exact
#: columns would cost four times the sampled ones (docs/performance.md)
DIAG_EXACT_BELOW = 16 << 20


def text_size_estimate(files: list[tuple[str, str | None]]) -> int:
    """Bytes of the corpus's files as stored uncompressed (Parquet: its row groups' uncompressed
    size, from the metadata only; other files: their size on disk)."""
    from .io import parquet_file

    total = 0
    for path, _ in files:
        if str(path).lower().endswith(".parquet"):
            total += parquet_file(path, "shard").uncompressed_size
        else:
            total += os.path.getsize(path)
    return total


def _sampled_diagnostics(c: Corpus, adapters: list[Adapter], diagnostics: str, join: bool, rows: bool,
                         texts: bool) -> bool:
    """Whether this run counts in one columnar pass with diagnostics on a sample (see :func:`compare`)."""
    if diagnostics == "exact":
        return False
    files = c.meta.get("files")
    why = None
    if c.kind != "monolingual":
        why = "a parallel corpus is counted whole (its premium pairs every aligned segment)"
    elif join:
        why = "--join encodes whole languages"
    elif not files:
        why = "the corpus is not made of files (a Hugging Face dataset streams)"
    elif rows or texts:
        why = "--segments-out needs every document's row"
    elif any(a.split is not None for a in adapters):
        why = "a tokenizer trained here is scored on its held-out documents"
    if why:
        if diagnostics == "sample":
            raise TokstatError(f"--diagnostics sample needs the one columnar pass, and {why}",
                               fix="drop --diagnostics sample (every document is then counted exactly)")
        return False
    return diagnostics == "sample" or text_size_estimate(files) >= DIAG_EXACT_BELOW


def compare(corpus: str | Corpus, tokenizers: list[str | Adapter], *, pivot: str | None = "en",
            languages: list[str] | None = None, join: bool = False, batch_size: int = 256,
            n_boot: int = 1000, boot_seed: int = 0, segments_out: str | None = None,
            return_segments: bool = False, workers: int | None = None, engine: str = "local",
            address: str | None = None, progress: bool | None = None, max_chars: int = MAX_CHARS,
            segments_text: bool = False, calibrate: str | Corpus | None = None, words: bool = True,
            backend: str | None = "auto", segmenters: dict[str, str] | None = None, diagnostics: str = "auto",
            diag_seed: int = 0, baseline: str | None = None):
    """Compare tokenizers on a parallel corpus; returns a polars DataFrame with ``COMPARE_COLUMNS``.

    Each segment is encoded on its own without special tokens (``join=True``: one text per language).
    ``train:`` tokenizers are trained on the corpus's train split and evaluated on its held-out segments
    (an adapter with a ``split`` is scored on that split's held-out segments only, whatever its seed
    and fraction; pretrained tokenizers beside it on every segment). ``boot_seed`` seeds the bootstrap
    intervals only.
    ``workers`` (default: all cores) shard the counting across processes, ``engine="ray"`` across Ray
    actors (``address``: a running cluster); every engine and worker count gives identical results.
    Memory stays bounded unless per-segment rows are asked for (``segments_out``/``return_segments``).
    A text longer than ``max_chars`` characters is an error naming its segment (``--max-chars``).
    ``segments_text``: the per-segment rows also carry each segment's text (for ``tokstat worst``).

    On a *monolingual* corpus (documents, each in one language) every language is counted on its
    own documents, intervals are over documents, and there is no premium (no aligned content)
    unless ``calibrate`` names a parallel corpus: then the premium is calibrated
    (:func:`calibrated_premium`). ``words=False`` skips word segmentation (the per-word columns
    are null): what a token budget needs, several times faster on Chinese (jieba). ``segmenters``
    gives languages another word segmenter (``{"ko": "kiwi"}``: Korean morphemes; names in
    :data:`tokstat.segmenters.CHOICES`), named in the signature.
    ``backend``: ``auto`` (default) counts byte-level BPE tokenizers with gigatoken where it is
    installed and its ids equal the reference library's on a sample of every language
    (:mod:`tokstat.adapters.fast`); ``fast`` insists (and says why a tokenizer stays on the
    reference); ``reference`` uses each tokenizer's own library only. Every number is the same.

    ``diagnostics``: on a monolingual corpus of files larger than :data:`DIAG_EXACT_BELOW` bytes of
    text (``auto``), or always (``sample``), the corpus is read once by the columnar pass
    (:mod:`tokstat.engine.scan`): segments, characters, bytes, tokens and the ratios of tokens to
    them are exact (their intervals a bootstrap over the units read), and every other column is
    computed on a seeded bottom-k sample of documents per language (``diag_seed``), with 95 %
    ratio-estimator intervals for the fragmentation rates; the signature says
    ``diag:sample-N-seedS``. ``exact`` computes everything on every document.
    """
    c = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    check_outputs({"segments_out": (segments_out, "table")}, inputs=c.sources)
    if languages:
        c = c.select(languages)
    langs = list(c.languages)
    if pivot is not None:
        pivot = resolve(pivot, langs) or pivot    # en names en-US where that is the corpus's only English
    if pivot is not None and pivot not in langs:
        raise TokstatError(f"pivot language {pivot!r} is not in the corpus ({', '.join(langs)})",
                           fix=f"pass --pivot {langs[0]}")
    if not tokenizers:
        raise TokstatError("no tokenizer given", fix="pass -t SPEC, e.g. -t tiktoken:cl100k_base")
    if engine not in ("local", "ray"):
        raise TokstatError(f"unknown engine {engine!r}", fix="use --engine local or --engine ray")
    asked_workers = workers
    workers = (os.cpu_count() or 1) if workers is None else workers
    if workers < 1:
        raise TokstatError(f"--workers must be at least 1, not {workers}", fix="pass --workers 1 or more")
    if diagnostics not in DIAGNOSTICS:
        raise TokstatError(f"unknown --diagnostics {diagnostics!r}", fix="use --diagnostics auto, exact or sample")
    resolved = resolve_tokenizers(list(tokenizers), c)
    base_id = None
    if baseline is not None:     # a spec given with -t, an id of one of them, or another tokenizer (added)
        base_id = next((a.id for t, a in zip(tokenizers, resolved) if t == baseline or a.id == baseline), None)
        if base_id is None:
            extra = resolve_tokenizers([baseline], c)[0]
            base_id = extra.id
            if all(a.id != base_id for a in resolved):
                resolved.append(extra)
    one_pass = _sampled_diagnostics(c, resolved, diagnostics, join, bool(segments_out or return_segments),
                                    segments_text)
    # the one pass verifies the fast path on the corpus's texts as it reads them: no head sample here
    adapters = with_backend(resolved, backend, None if one_pass else c, langs)
    ids = [a.id for a in adapters]
    if len(set(ids)) != len(ids):
        raise TokstatError(f"the same tokenizer id twice: {ids}", fix="pass each tokenizer once")
    for lang in segmenters or {}:
        if lang not in langs:
            raise TokstatError(f"--segmenter names {lang!r}, which is not a language of the corpus ({', '.join(langs)})",
                               fix=f"use one of: {', '.join(langs)}")
    segname = {lang: segmenter_name(lang, lang in c.gold_words, (segmenters or {}).get(lang)) if words else None
               for lang in langs}
    warm(segname)       # the segmenters' dictionaries loaded once, before workers are forked
    if max_chars < 1:
        raise TokstatError(f"--max-chars must be at least 1, not {max_chars}", fix="e.g. --max-chars 1000000")
    mono = c.kind == "monolingual"
    if mono and join:
        raise TokstatError("--join encodes each language's aligned segments as one text; a monolingual corpus has "
                           "documents", fix="drop --join")
    if calibrate is not None and not mono:
        raise TokstatError("--calibrate gives a monolingual corpus its content; this corpus is parallel and has its "
                           "own premium", fix="drop --calibrate")
    if calibrate is not None and pivot is None:
        raise TokstatError("--calibrate needs a pivot language", fix="pass --pivot LANG")
    cal = load_calibration(calibrate, langs, pivot) if calibrate is not None else None
    if one_pass:
        from .diagnose import compare_sampled
        from .engine.scan import default_workers

        if asked_workers is None:           # left to the pass: one worker per 64 MiB of text
            workers = default_workers(text_size_estimate(c.meta.get("files") or []), workers)

        df = compare_sampled(c, adapters, pivot=pivot, segmenters=segmenters, words=words,
                             cal=cal, n_boot=n_boot, boot_seed=boot_seed, seed=diag_seed,
                             workers=workers, engine=engine, address=address, progress=progress,
                             max_chars=max_chars, batch_size=batch_size)
        return df if base_id is None else versus_baseline(df, base_id)
    fp = c.fingerprint()
    splits = {}
    for a in adapters:
        if a.split is not None and a.trained_on is not None and a.trained_on.rpartition("@")[2] != fp[:8]:
            # trained on other content (the name may differ: the same segments in another file format
            # are the same corpus): none of these segments was seen in training
            warnings.warn(f"{a.id} was trained on {a.trained_on}, not on this corpus ({c.name}@{fp[:8]}): "
                          "it is scored on every segment", stacklevel=2)
            splits[a.id] = None
            continue
        splits[a.id] = a.split
    join_split = None
    if join and any(splits.values()):
        if len(set(splits.values())) != 1:
            raise TokstatError("--join with tokenizers trained here needs one held-out split for all of them",
                               fix="compare the trained and pretrained tokenizers in separate runs, or drop --join")
        join_split = next(iter(splits.values()))   # the joined text is that split's held-out segments
    cal_tok: dict[str, dict] = {}
    job = Job(adapters, langs, pivot, c.gold_words, segname, splits=splits, join=join,
              keep_rows=bool(segments_out or return_segments), max_chars=max_chars, keep_text=segments_text,
              source=str(c.sources[0]) if len(c.sources) == 1 else c.name, monolingual=mono)
    source = joined(c, join_split) if join else c
    # the fingerprint pass has counted the segments: the bar has a total and an ETA (not for --join,
    # which counts one joined text per language)
    with Meter(f"compare {c.name}", enabled=progress, total=None if join else c.size) as meter:
        if engine == "ray":
            stats = run_ray(job, source, workers=workers, address=address, batch_size=batch_size,
                            shards=None if join else c.shards, progress=meter)
        else:
            stats = run_local(job, source, workers=workers, batch_size=batch_size,
                              progress=meter)
    first = adapters[0].id
    if not any(stats[(first, lang)].segments + stats[(first, lang)].empty for lang in langs):
        if job.common_split is not None or join_split is not None:
            raise TokstatError("no held-out segment to evaluate the trained tokenizers on",
                               fix="use a larger corpus or a larger ?heldout= fraction")
        raise TokstatError("the corpus has no segments", path=c.sources[0] if len(c.sources) == 1 else None,
                           fix=f"check that it holds aligned text: tokstat corpus info {c.name}")
    # one read of the corpus's head serves both checks
    it = iter(c)
    head = list(islice(it, SCRIPT_SAMPLE))
    rt = roundtrip_rates(adapters, chain(head, it), langs, {a.id: job.split_of(a) or join_split for a in adapters})
    scripts = chinese_scripts(head, langs)
    written = text_scripts(c, head, langs, mono)
    rows, seg_frames = [], []
    for a in adapters:
        singles = single_token_chars(a, set().union(*(stats[(a.id, lang)].cjk for lang in langs)))
        for lang in langs:
            st = stats[(a.id, lang)]
            if st.empty and a is adapters[0]:
                warnings.warn(f"{lang}: {st.empty} empty {'document' if mono else 'segment'}(s) left out of its "
                              "rows (listed in --segments-out)", stacklevel=2)
            # the tokenizer's own vocabulary (regular tokens, specials excluded): what cost projections price
            row = {"tokenizer": a.id, "language": lang, "script": written[lang], "vocab_size": a.vocab_size,
                   "tokenizer_family": family_of(a)}
            row.update(summarize(st, vocab_size=a.vocab_size, coverage=single_token_coverage(a, st.cjk, singles),
                                 n_boot=0 if join else n_boot, seed=boot_seed, pivot=pivot is not None and not mono))
            reps = None if join or not n_boot else paired_tpc_replicates(st.own_tokens, st.own_chars, seed=boot_seed)
            # space-separated text: the table stays flat (CSV-writable); tokstat reads it back as numbers
            row["tokens_per_char_boot"] = replicates_text(reps)
            row["calibration_transfer"] = None
            row.update(dict.fromkeys(SAMPLE_COLUMNS))       # every document counted: no sampling error
            if cal is not None:
                if a.id not in cal_tok:
                    cal_tok[a.id] = calibration_tokens(a, cal)
                row.update(calibrated_premium(st, stats[(a.id, pivot)], cal, lang, n_boot=n_boot, seed=boot_seed,
                                              cal_tokens=cal_tok[a.id].get(lang)))
                tr = row["calibration_transfer"]
                if tr is not None and abs(tr - 1) > TRANSFER_WARN:
                    warnings.warn(f"{a.id} on {lang}: your documents differ from the calibration set {cal['name']} "
                                  f"(transfer {tr:.2f}: the calibrated premium {row['premium']:.2f} against "
                                  f"{row['premium'] / tr:.2f} on the calibration set's own content); the interval "
                                  "spans both — calibrate on text like yours", stacklevel=2)
            row["roundtrip_rate"] = rt[(a.id, lang)]
            row["signature"] = signature(c, fp, a, segname[lang], join, job.split_of(a) or join_split, scripts.get(lang),
                                         cal["name"] if cal is not None else None)
            null_rates_without_tokens(row)
            _warn_nulls(row, st, pivot is not None and (not mono or cal is not None), first=a is adapters[0])
            if row["unk_rate"] is not None and row["unk_rate"] > UNRELIABLE_UNK:
                warnings.warn(f"{a.id} on {lang}: {row['unk_rate']:.1%} of characters are unknown tokens; "
                              "its other figures are unreliable", stacklevel=2)
            rows.append(row)
            if job.keep_rows:
                seg_frames.append(st.frame().with_columns(pl.lit(a.id).alias("tokenizer"),
                                                          pl.lit(lang).alias("language")))
    if mono and cal is None and pivot is not None:
        warnings.warn(f"{c.name} is monolingual (documents, no aligned content): no premium; give a parallel corpus "
                      "with --calibrate PARALLEL for a calibrated one", stacklevel=2)
    df = pl.DataFrame(rows, schema_overrides={"script": pl.Utf8} | {k: pl.Float64 for k in (
        "tokens_per_char", "tokens_per_byte", "tokens_per_char_ci_low", "tokens_per_char_ci_high",
        "tokens_per_byte_ci_low", "tokens_per_byte_ci_high", "chars_per_token", "bytes_per_token", "tokens_per_word",
        "continued_word_rate", "split_char_rate", "single_token_char_coverage", "unk_rate", "roundtrip_rate",
        "byte_fallback_rate",
        "boundary_precision", "boundary_recall", "boundary_f1", "renyi_efficiency", "renyi_efficiency_observed",
        *INFO_COLUMNS,
        "premium", "premium_ci_low", "premium_ci_high", "premium_mean_of_ratios", "premium_mor_ci_low",
        "premium_mor_ci_high", "p50_tokens", "p95_tokens", "calibration_transfer", *SAMPLE_COLUMNS[:-1])}
        | {"tokens_per_char_boot": pl.String, "diag_documents": pl.Int64},
        infer_schema_length=None)
    df = with_rtc(df, pivot if not mono else None).select(COMPARE_COLUMNS)
    _check_aligned(df, c, first, pivot, mono, {lang: int(stats[(first, lang)].pair_n.sum()) for lang in langs})
    if base_id is not None:
        df = versus_baseline(df, base_id)
    if not job.keep_rows:
        return df
    segs = pl.concat(seg_frames).select("tokenizer", "language", pl.exclude("tokenizer", "language"))
    if segments_out:
        write_tables({segments_out: segs})
    return (df, segs) if return_segments else df
