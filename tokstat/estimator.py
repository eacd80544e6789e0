"""A fast token estimator, fitted and checked: tokens ≈ Σ_script w_script · characters_script (+ b).

Apps count tokens approximately (``characters / 4``), which undercounts non-Latin scripts by half or
more. :func:`fit_estimator` fits one weight per Unicode script (tokens per character of that
script, the Unicode ``Script`` property as its ISO 15924 code: ``Latn``, ``Hani``, ``Arab``,
``Zyyy`` for digits, punctuation and spaces, ``Zinh`` for combining marks) by non-negative least
squares (``scipy.optimize.nnls``) on the documents of a train split, keeps a per-document
intercept only where it lowers the error on a validation part of the train split, and reports the
error on the held-out documents per language: the median and 95th percentile of the relative error
per document, and the relative error of the language's total, beside ``characters / 4``.

The model is a small JSON file (``docs/estimator.md`` gives its schema and a 20-line reference
implementation in Python and in JavaScript). It is for **estimates** (budgets, UI counters), not
for billing: a tokenizer's own count is exact and cheap enough for that.

>>> script_counts("Hello, 世界!")
{'Latn': 5, 'Zyyy': 3, 'Hani': 2}
>>> estimate("Hello, 世界!", {"weights": {"Latn": 0.25, "Zyyy": 0.5, "Hani": 1.0}, "default": 2.0, "intercept": 0.0})
4.75
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from .adapters import Adapter
from .corpus import Corpus
from .errors import TokstatError
from .langs import CHAR_SCRIPTS, char_script
from .split import Split

#: the scripts a character is sorted into (each character has exactly one Unicode Script value);
#: a character of none of these counts at the model's ``default`` weight
SCRIPTS = CHAR_SCRIPTS
SCHEMA_VERSION = 1


def script_counts(text: str) -> dict[str, int]:
    """Characters (code points) of ``text`` per script; ``other`` for a script outside :data:`SCRIPTS`."""
    out: dict[str, int] = {}
    for ch, n in Counter(text).items():
        s = char_script(ch) or "other"
        out[s] = out.get(s, 0) + n
    return out


def estimate(text: str, model: dict) -> float:
    """The model's token estimate for ``text`` (what the reference implementations compute)."""
    w = model["weights"]
    total = 0.0
    for s, n in script_counts(text).items():
        total += n * w.get(s, model["default"])
    return total + (model.get("intercept", 0.0) if text else 0.0)


def _design(counts: list[dict[str, int]], cols: list[str], intercept: bool) -> np.ndarray:
    X = np.array([[c.get(s, 0) for s in cols] for c in counts], dtype=np.float64).reshape(len(counts), len(cols))
    return np.hstack([X, np.ones((len(counts), 1))]) if intercept else X


def _nnls(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    from scipy.optimize import nnls

    return nnls(X, y)[0]


def _rel_errors(est: np.ndarray, true: np.ndarray) -> np.ndarray:
    keep = true > 0
    return np.abs(est[keep] - true[keep]) / true[keep]


def fit_estimator(corpus: Corpus, tokenizer: str | Adapter, *, heldout: float = 0.2, seed: int = 0) -> dict:
    """Fit the per-script weights of ``tokenizer`` on the train split of ``corpus`` (every non-empty
    text of every language is a document) and measure them on the held-out split (``heldout``,
    by segment id, as ``train`` splits). Returns the model (a JSON-ready dict)."""
    from ._version import __version__

    from .compare import resolve_tokenizers

    a = resolve_tokenizers([tokenizer], corpus)[0]      # train: specs are trained on the corpus's train split
    split = Split(heldout, seed)
    docs: list[tuple[str, str, bool]] = []          # (language, text, held out)
    for seg in corpus:
        out = split.is_heldout(seg.id)
        for lang, t in seg.texts.items():
            if t:
                docs.append((lang, t, out))
    train = [d for d in docs if not d[2]]
    test = [d for d in docs if d[2]]
    if len(train) < 20 or len(test) < 5:
        raise TokstatError(f"{corpus.name}: {len(train)} training and {len(test)} held-out documents; the fit needs at "
                           "least 20 and 5", fix="use a larger corpus, or a larger --heldout")
    y_all = np.concatenate([a.token_counts([t for _, t, _ in docs[k:k + 512]]) for k in range(0, len(docs), 512)]).astype(float)
    counts = [script_counts(t) for _, t, _ in docs]
    tr = np.array([not d[2] for d in docs])
    cols = sorted({s for c, keep in zip(counts, tr) if keep for s in c}, key=lambda s: (s == "other", s))
    Xtr_counts = [c for c, keep in zip(counts, tr) if keep]
    ytr = y_all[tr]
    # the intercept is kept only if it lowers the median error on a validation fifth of the train split
    rng = np.random.default_rng(seed)
    val = rng.random(len(ytr)) < 0.2
    med = {}
    for b in (False, True):
        coef = _nnls(_design([c for c, v in zip(Xtr_counts, val) if not v], cols, b), ytr[~val])
        pred = _design([c for c, v in zip(Xtr_counts, val) if v], cols, b) @ coef
        med[b] = float(np.median(_rel_errors(pred, ytr[val]))) if val.any() else math.inf
    use_b = med[True] < med[False] * 0.98
    coef = _nnls(_design(Xtr_counts, cols, use_b), ytr)
    weights = {s: float(w) for s, w in zip(cols, coef[: len(cols)]) if s != "other"}
    default = float(coef[cols.index("other")]) if "other" in cols else max(weights.values(), default=1.0)
    model = {"schema": SCHEMA_VERSION, "tokenizer": a.id, "tokenizer_signature": a.signature,
             "weights": weights, "default": default, "intercept": float(coef[-1]) if use_b else 0.0,
             "unit": "Unicode code points per script (Script property, ISO 15924 codes)",
             "fitted_on": {"corpus": f"{corpus.name}@{corpus.fingerprint()[:8]}", "documents": int(tr.sum()),
                           "split": f"heldout-{heldout:g}-seed{seed}", "method": "non-negative least squares"
                           + (" with an intercept per document" if use_b else "")},
             "tokstat": __version__, "purpose": "estimates, not billing: count with the tokenizer for exact numbers"}
    te = ~tr
    langs = sorted({d[0] for d, keep in zip(docs, te) if keep})
    est = np.array([estimate(d[1], model) for d, keep in zip(docs, te) if keep])
    y_te = y_all[te]
    chars = np.array([len(d[1]) for d, keep in zip(docs, te) if keep], dtype=float)
    lang_te = np.array([d[0] for d, keep in zip(docs, te) if keep])
    rows = []
    for lang in langs:
        m = lang_te == lang
        e = _rel_errors(est[m], y_te[m])
        q = _rel_errors(chars[m] / 4, y_te[m])
        tot = float(y_te[m].sum())
        rows.append({"language": lang, "documents": int(m.sum()), "tokens": int(tot),
                     "median_rel_error": float(np.median(e)) if e.size else None,
                     "p95_rel_error": float(np.quantile(e, 0.95)) if e.size else None,
                     "total_rel_error": (float(est[m].sum()) - tot) / tot if tot else None,
                     "chars4_total_rel_error": (float(chars[m].sum() / 4) - tot) / tot if tot else None,
                     "chars4_median_rel_error": float(np.median(q)) if q.size else None})
    model["heldout"] = rows
    return model


__all__ = ["fit_estimator", "estimate", "script_counts", "char_script", "SCRIPTS"]
