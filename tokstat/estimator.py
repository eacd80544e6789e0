"""A fast token estimator, fitted and checked: tokens ≈ Σ_class w_class · characters_class (+ b).

Apps count tokens approximately (``characters / 4``), which undercounts non-Latin scripts by half or
more. :func:`fit_estimator` fits, for every language of the corpus, one weight per character class
(tokens per character: the Unicode ``Script`` property as its ISO 15924 code, ``Latn``, ``Hani``,
``Arab``, ``Zinh`` for combining marks, with Latin letters outside ASCII apart as ``Latn+`` and the
Common script's ``space`` and ``digit`` apart from its punctuation and symbols, ``Zyyy``: see
:func:`char_class`) by non-negative least squares (``scipy.optimize.nnls``) on the language's documents of a
train split, with a per-document intercept only where it lowers the error on a validation part of
the train split. Three levels estimate a text:

1. its **language's** own weights, where the language was fitted;
2. else the **script's** weight: the median of the fitted languages' weights for that script (a
   language the fit never saw is estimated as the typical language of its script);
3. a character of a script **no fitted language writes** counts as its UTF-8 bytes, plus one token
   for each run of such characters: a byte-level BPE spends at most one token per byte of a
   pre-tokenization piece, and the run's piece may carry one character before it (a space), so an
   unseen script is never undercounted (SentencePiece's byte fallback and WordPiece's unknown
   token stay under the same bound).

The fit reports its error on the held-out documents per language (the language's own weights) and,
leaving whole languages out (``folds`` groups of languages, each estimated from the others as an
unseen language), per language and per script: the numbers to expect on a language it never saw.

The model is a small JSON file (``docs/estimator.md`` gives its schema and a reference
implementation in Python and in JavaScript). It is for **estimates** (budgets, UI counters), not
for billing: a tokenizer's own count is exact and cheap enough for that.

>>> script_counts("Hello, 世界!")
{'Latn': 5, 'Zyyy': 2, 'space': 1, 'Hani': 2}
>>> m = {"weights": {"Latn": 0.25, "Zyyy": 0.5, "space": 0.5, "Hani": 1.0}, "intercept": 0.0,
...      "languages": {"en": {"weights": {"Latn": 0.2, "Zyyy": 0.4, "space": 0.4}, "intercept": 0.0}}}
>>> estimate("Hello, 世界!", m), estimate("Hello, 世界!", m, "en"), estimate("Hello ᱚᱞ", m)
(4.75, 4.2, 8.75)
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from .adapters import Adapter
from .corpus import Corpus
from .errors import TokstatError
from .langs import CHAR_SCRIPTS, char_script, text_script
from .split import Split

#: the scripts a character is sorted into (each character has exactly one Unicode Script value);
#: a character of none of these is ``other``
SCRIPTS = CHAR_SCRIPTS
SCHEMA_VERSION = 2
#: languages are left out in this many groups to measure the error on a language the fit never saw
FOLDS = 5
#: a language's weight for a script joins that script's median when the script holds at least this
#: share of the language's characters (a few Latin names in Hindi text do not speak for Latin)
SUPPORT = 0.01
UNSEEN_RULE = "utf8_bytes_plus_one_per_run"


_class_cache: dict[str, str] = {}


def char_class(ch: str) -> str:
    """The class a character is weighted by: its Unicode script (ISO 15924), with Latin letters
    outside ASCII (diacritics, ß, ŋ) as ``Latn+`` and the Common script's white space and digits as
    ``space`` and ``digit`` (the rest of Common, punctuation, symbols and emoji, stays ``Zyyy``);
    ``other`` for a script outside :data:`SCRIPTS`. The Latin and Common splits carry what one weight
    per script cannot: how many words and how many accented letters a language writes.

    >>> [char_class(c) for c in "aé 7,中\u0301ᚠ"]
    ['Latn', 'Latn+', 'space', 'digit', 'Zyyy', 'Hani', 'Zinh', 'other']
    """
    k = _class_cache.get(ch)
    if k is None:
        k = char_script(ch) or "other"
        if k == "Latn" and ord(ch) > 127:
            k = "Latn+"
        elif k == "Zyyy":
            import regex

            k = "space" if regex.match(r"\p{White_Space}", ch) else "digit" if regex.match(r"\p{Nd}", ch) else "Zyyy"
        _class_cache[ch] = k
    return k


def script_counts(text: str) -> dict[str, int]:
    """Characters (code points) of ``text`` per class (:func:`char_class`)."""
    out: dict[str, int] = {}
    for ch, n in Counter(text).items():
        s = char_class(ch)
        out[s] = out.get(s, 0) + n
    return out


def _weights_for(model: dict, language: str | None) -> tuple[dict, float]:
    w = model["weights"]
    lang = (model.get("languages") or {}).get(language) if language is not None else None
    if lang is None:
        return w, model.get("intercept", 0.0)
    return {**w, **lang["weights"]}, lang.get("intercept", 0.0)


def estimate(text: str, model: dict, language: str | None = None) -> float:
    """The model's token estimate for ``text`` (what the reference implementations compute):
    ``language``'s own weights where the model has them, else the per-script weights, and a
    character of a script without a weight at its UTF-8 bytes plus one per run of such characters."""
    if not text:
        return 0.0
    w, b = _weights_for(model, language)
    total = 0.0
    unseen = False
    for s, n in script_counts(text).items():
        if s in w:
            total += n * w[s]
        else:
            unseen = True
    if unseen:
        run = False
        for ch in text:
            if char_class(ch) in w:
                run = False
                continue
            total += len(ch.encode("utf-8", "surrogatepass")) + (0 if run else 1)
            run = True
    return total + b


def _design(counts: list[dict[str, int]], cols: list[str], intercept: bool) -> np.ndarray:
    X = np.array([[c.get(s, 0) for s in cols] for c in counts], dtype=np.float64).reshape(len(counts), len(cols))
    return np.hstack([X, np.ones((len(counts), 1))]) if intercept else X


def _nnls(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    from scipy.optimize import nnls

    if not len(y):
        return np.zeros(X.shape[1])
    return nnls(X, y)[0]


def _rel_errors(est: np.ndarray, true: np.ndarray) -> np.ndarray:
    keep = true > 0
    return np.abs(est[keep] - true[keep]) / true[keep]


def _fit_language(counts: list[dict], y: np.ndarray, intercept: bool) -> dict:
    """One language's weights (its classes) and intercept, by non-negative least squares. Characters
    of a script outside :data:`SCRIPTS` (``other``) are fitted but get no weight: they count as
    unseen (their UTF-8 bound), the same in every implementation."""
    cols = sorted({s for c in counts for s in c})
    coef = _nnls(_design(counts, cols, intercept), y)
    return {"weights": {s: float(v) for s, v in zip(cols, coef[:len(cols)]) if s != "other"},
            "intercept": float(coef[-1]) if intercept else 0.0}


def _script_weights(per_lang: dict[str, dict], chars: dict[str, Counter]) -> tuple[dict[str, float], float]:
    """The per-class weights of a language the fit did not see: for each class, the median of the
    weights of the languages that write it (at least :data:`SUPPORT` of their characters: a weight
    fitted on a few stray characters says nothing), and the median intercept. A class no language
    writes that much has no weight: it is unseen (:func:`estimate`'s UTF-8 bound)."""
    scripts = sorted({s for lw in per_lang.values() for s in lw["weights"]})
    out = {}
    for s in scripts:
        strong = [lang for lang in per_lang if s in per_lang[lang]["weights"]
                  and chars[lang][s] >= SUPPORT * sum(chars[lang].values())]
        if strong:
            out[s] = float(np.median([per_lang[lang]["weights"][s] for lang in strong]))
    return out, float(np.median([lw["intercept"] for lw in per_lang.values()])) if per_lang else 0.0


def lossy_languages(a: Adapter, docs: list[tuple[str, str, bool]], n: int = 50) -> dict[str, float]:
    """The languages whose first ``n`` documents the tokenizer does not all give back (``decode(encode(t))
    != t``: unknown tokens, a lossy normaliser, dropped whitespace), with the share it does give back;
    empty for a lossless tokenizer (or one without a decoder)."""
    first: dict[str, list[str]] = {}
    for lang, t, _ in docs:
        if len(first.setdefault(lang, [])) < n and t.strip():
            first[lang].append(t)
    flat = [t for ts in first.values() for t in ts]
    if not flat:
        return {}
    ids = a.encode_batch(flat)
    out, k = {}, 0
    try:
        for lang, ts in first.items():
            ok = sum(a.decode(i) == t for i, t in zip(ids[k:k + len(ts)], ts)) / len(ts)
            k += len(ts)
            if ok < 1:
                out[lang] = ok
    except NotImplementedError:
        return {}
    return dict(sorted(out.items()))


def fit_estimator(corpus: Corpus, tokenizer: str | Adapter, *, heldout: float = 0.2, seed: int = 0,
                  folds: int = FOLDS) -> dict:
    """Fit per-language and per-script weights of ``tokenizer`` on the train split of ``corpus``
    (every non-empty text of every language is a document) and measure them on the held-out split
    (``heldout``, by segment id, as ``train`` splits): per language with its own weights, and with
    languages left out in ``folds`` seeded groups (each group estimated from the others' per-script
    weights, as languages the fit never saw). Returns the model (a JSON-ready dict)."""
    from ._version import __version__

    from .compare import resolve_tokenizers

    if isinstance(tokenizer, (list, tuple)):
        if len(tokenizer) != 1:
            raise TokstatError(f"an estimator fits one tokenizer's counts, not {len(tokenizer)} tokenizers'",
                               fix="fit one estimator per tokenizer (one run each)")
        tokenizer = tokenizer[0]
    a = resolve_tokenizers([tokenizer], corpus)[0]      # train: specs are trained on the corpus's train split
    split = Split(heldout, seed)
    docs: list[tuple[str, str, bool]] = []          # (language, text, held out)
    for seg in corpus:
        out = split.is_heldout(seg.id)
        for lang, t in seg.texts.items():
            if t:
                docs.append((lang, t, out))
    n_train = sum(1 for d in docs if not d[2])
    if n_train < 20 or len(docs) - n_train < 5:
        raise TokstatError(f"{corpus.name}: {n_train} training and {len(docs) - n_train} held-out documents; the fit "
                           "needs at least 20 and 5", fix="use a larger corpus, or a larger --heldout")
    lossy = lossy_languages(a, docs)
    if lossy:
        import warnings

        warnings.warn(f"{a.id} loses text ({', '.join(f'{k}: {v:.0%} of sampled texts decode back' for k, v in lossy.items())}): "
                      "the estimator fits the counts of its lossy encoding (the model records it under 'lossy')",
                      stacklevel=2)
    y_all = np.concatenate([a.token_counts([t for _, t, _ in docs[k:k + 512]]) for k in range(0, len(docs), 512)]).astype(float)
    counts = [script_counts(t) for _, t, _ in docs]
    lang_of = np.array([d[0] for d in docs])
    tr = np.array([not d[2] for d in docs])
    langs = sorted(set(lang_of.tolist()))
    rows_of = {lang: np.flatnonzero((lang_of == lang) & tr) for lang in langs}
    # the intercept is kept only if it lowers the median error on a validation fifth of every language's train split
    rng = np.random.default_rng(seed)
    val = rng.random(len(docs)) < 0.2
    med = {}
    for b in (False, True):
        errs = []
        for lang in langs:
            fit_rows = [i for i in rows_of[lang] if not val[i]]
            chk = [i for i in rows_of[lang] if val[i]]
            if not fit_rows or not chk:
                continue
            m = _fit_language([counts[i] for i in fit_rows], y_all[fit_rows], b)
            errs.append(_rel_errors(np.array([estimate(docs[i][1], {"weights": m["weights"], "intercept": m["intercept"]})
                                              for i in chk]), y_all[chk]))
        med[b] = float(np.median(np.concatenate(errs))) if errs and np.concatenate(errs).size else math.inf
    use_b = med[True] < med[False] * 0.98
    per_lang = {lang: _fit_language([counts[i] for i in rows_of[lang]], y_all[rows_of[lang]], use_b)
                for lang in langs if len(rows_of[lang])}
    chars = {lang: Counter() for lang in langs}
    for i in np.flatnonzero(tr):
        chars[docs[i][0]].update(counts[i])
    weights, intercept = _script_weights(per_lang, chars)
    model = {"schema": SCHEMA_VERSION, "tokenizer": a.id, "tokenizer_signature": a.signature,
             "weights": weights, "intercept": intercept, "languages": per_lang, "unseen": UNSEEN_RULE,
             "unit": "Unicode code points per script (Script property, ISO 15924 codes)",
             "fitted_on": {"corpus": f"{corpus.name}@{corpus.fingerprint()[:8]}", "documents": int(tr.sum()),
                           "languages": len(per_lang), "split": f"heldout-{heldout:g}-seed{seed}",
                           "method": "non-negative least squares per language" + (
                               " with an intercept per document" if use_b else "")
                           + "; per script, the median of the languages' weights"},
             "tokstat": __version__, "purpose": "estimates, not billing: count with the tokenizer for exact numbers",
             "lossy": lossy}
    te = ~tr
    # languages left out: each group's held-out documents estimated from the other groups' script weights
    order = np.random.default_rng(seed + 1).permutation(len(langs))
    k = max(1, min(folds, len(langs)))
    group = {langs[j]: int(pos % k) for pos, j in enumerate(order)}
    unseen_est: dict[str, float] = {}
    unseen_scripts: dict[str, bool] = {}
    if len(langs) > 1:
        for g in range(k):
            others = {lang: v for lang, v in per_lang.items() if group[lang] != g}
            if not others:
                continue
            w_g, b_g = _script_weights(others, chars)
            sub = {"weights": w_g, "intercept": b_g}
            for lang in langs:
                if group[lang] != g:
                    continue
                idx = np.flatnonzero(te & (lang_of == lang))
                unseen_est[lang] = float(sum(estimate(docs[i][1], sub) for i in idx))
                unseen_scripts[lang] = main_class(counts[i] for i in rows_of[lang]) not in w_g
    script_of = {lang: text_script([docs[i][1] for i in rows_of[lang][:200]]) or "Zyyy" for lang in langs}
    rows = []
    for lang in langs:
        idx = np.flatnonzero(te & (lang_of == lang))
        est = np.array([estimate(docs[i][1], model, lang) for i in idx])
        y_te = y_all[idx]
        tchars = np.array([len(docs[i][1]) for i in idx], dtype=float)
        e = _rel_errors(est, y_te)
        q = _rel_errors(tchars / 4, y_te)
        tot = float(y_te.sum())
        rows.append({"language": lang, "script": script_of[lang], "documents": int(len(idx)), "tokens": int(tot),
                     "median_rel_error": float(np.median(e)) if e.size else None,
                     "p95_rel_error": float(np.quantile(e, 0.95)) if e.size else None,
                     "total_rel_error": (float(est.sum()) - tot) / tot if tot else None,
                     "unseen_total_rel_error": (unseen_est[lang] - tot) / tot if tot and lang in unseen_est else None,
                     "unseen_script": unseen_scripts.get(lang),
                     "chars4_total_rel_error": (float(tchars.sum() / 4) - tot) / tot if tot else None,
                     "chars4_median_rel_error": float(np.median(q)) if q.size else None})
    model["heldout"] = rows
    model["leave_languages_out"] = leave_out_summary(rows, k if len(langs) > 1 else 0, seed + 1)
    return model


def main_class(counts) -> str:
    """The class most of the letters of some documents' class counts are in (Common, Inherited,
    space and digits left aside): a language's script, as the estimator sees it.

    >>> main_class([{"Latn": 5, "Latn+": 2, "space": 9}, {"Zyyy": 20, "Zinh": 30}])
    'Latn'
    """
    tot: Counter = Counter()
    for c in counts:
        tot.update({k: n for k, n in c.items() if k not in ("Zyyy", "Zinh", "space", "digit")})
    return max(tot, key=lambda k: (tot[k], k)) if tot else "Zyyy"


def leave_out_summary(rows: list[dict], folds: int, seed: int) -> dict:
    """The leave-languages-out errors in brief: over languages, the median absolute error of the
    total (all, and those whose script another language shows), and per script the median, lowest
    and highest error of the total of its languages.

    >>> r = [{"language": "a", "script": "Latn", "unseen_total_rel_error": 0.1, "unseen_script": False},
    ...      {"language": "b", "script": "Latn", "unseen_total_rel_error": -0.3, "unseen_script": False},
    ...      {"language": "c", "script": "Olck", "unseen_total_rel_error": 0.6, "unseen_script": True}]
    >>> s = leave_out_summary(r, 3, 0)
    >>> s["median_abs_total_rel_error"], s["median_abs_total_rel_error_seen_scripts"], s["by_script"][0]["script"]
    (0.3, 0.2, 'Latn')
    """
    got = [r for r in rows if r.get("unseen_total_rel_error") is not None]
    out: dict = {"folds": folds, "seed": seed, "languages": len(got)}
    if not got:
        return {**out, "median_abs_total_rel_error": None, "median_abs_total_rel_error_seen_scripts": None,
                "by_script": []}
    seen = [abs(r["unseen_total_rel_error"]) for r in got if not r["unseen_script"]]
    out["median_abs_total_rel_error"] = float(np.median([abs(r["unseen_total_rel_error"]) for r in got]))
    out["median_abs_total_rel_error_seen_scripts"] = float(np.median(seen)) if seen else None
    by: dict[str, list] = {}
    for r in got:
        by.setdefault(r["script"], []).append(r)
    out["by_script"] = [{"script": s, "languages": len(rs), "script_unseen": any(r["unseen_script"] for r in rs),
                         "median_total_rel_error": float(np.median([r["unseen_total_rel_error"] for r in rs])),
                         "lowest_total_rel_error": float(min(r["unseen_total_rel_error"] for r in rs)),
                         "highest_total_rel_error": float(max(r["unseen_total_rel_error"] for r in rs))}
                        for s, rs in sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
    return out


__all__ = ["fit_estimator", "estimate", "script_counts", "char_script", "SCRIPTS"]
