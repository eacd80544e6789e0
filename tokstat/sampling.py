"""The cluster sample behind ``budget``: what the files tell before any text is read, the design
drawn from it, and its estimators.

A **unit** (cluster) is a Parquet row group, a ``BLOCK``-byte block of a JSONL or text file, or a
whole gzip file (:func:`tokstat.engine.scan.clusters`). Before any text is read, the files tell,
per unit (:func:`frame`):

* its **stored size**: the text column's uncompressed bytes from the Parquet footer, a block's
  bytes, a gzip file's size;
* its **documents per language**, where they are known without reading text: a Parquet row group's
  language column (read once, with the language discovery, :func:`tokstat.loaders.mono._languages`),
  its row count where the file has one language, a JSONL file's language field (one pass over the
  lines, no text kept); a block of a one-language file holds that language only.

The **design** (:func:`draw`) is Pareto πps sampling (Rosén 1997), a fixed number of units each
read with probability π_j = min(1, max(f · s_j / s̄, k · max_L x_{L,j} / X_L)), where f is the fraction asked
for (``--sample``), s_j / s̄ the unit's stored size over the mean, x_{L,j} / X_L its share of language
L's documents (of its stored bytes where documents are not known) and k = :data:`PER_LANGUAGE`: every
language is expected in at least k sampled units, and a language whose documents sit in fewer than
k units is read whole, whatever the layout (a dump written language by language, or shuffled).

The **estimators** (:func:`ratio`): per language, the Hájek ratio estimator on the language's
known documents, Ŷ_L = X_L · Σ_s y_j/π_j / Σ_s x_{L,j}/π_j, with Rosén's variance of its linearised
residuals e_j = y_j − R̂ x_{L,j}, (X_L/X̂_L)² · n/(n − 1) · m/(m − 1) Σ_s (1 − π_j)(e_j/π_j − A)² (m:
uncertain sampled units, A the (1 − π)-weighted mean of e/π, n: those holding the language, whose
residuals shrink about a ratio fitted on them), and a t interval on n − 1 degrees of freedom. A total over every language is the sum of
the languages' estimates (:func:`ratio_sum`), or the ratio estimate on the stored sizes where a
language is not sampled. A language read whole (every unit holding it certain) is exact; one that the
metadata shows but no sampled unit holds is **not sampled** (no number); one in a single uncertain
sampled unit has an estimate but no interval. With identified languages (``--lang-id``) nothing is
known per unit before reading: every language's auxiliary is the stored size.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .engine.scan import Cluster
from .errors import TokstatError
from .io import parquet_file, regular_file

#: at least this many units are expected in the sample (all of them when the corpus has fewer)
MIN_CLUSTERS = 30
#: every language is expected in at least this many sampled units (all of its units when it has fewer)
PER_LANGUAGE = 20


@dataclass
class Frame:
    """What the files tell of every unit before its text is read."""

    units: list[Cluster]
    langs: list[str]
    size: np.ndarray            # stored bytes of text per unit
    docs: np.ndarray            # (units, languages) documents; NaN rows: not known before reading

    @property
    def known(self) -> np.ndarray:
        return ~np.isnan(self.docs[:, 0]) if self.docs.shape[1] else np.ones(len(self.units), bool)

    def aux(self, k: int | None) -> np.ndarray:
        """The auxiliary of language ``k`` per unit (its documents where every unit that can hold
        it says how many; else stored bytes, shared out by documents where known; the stored bytes
        of every unit where nothing is known, identified languages), or of every language together
        (``k`` None: stored bytes)."""
        if k is None:
            return self.size.astype(float)
        known = self.known
        own = np.array([u.lang for u in self.units], dtype=object)
        could = ~known & ((own == None) | (own == self.langs[k]))  # noqa: E711
        if not could.any():
            return np.where(known, self.docs[:, k], 0.0)
        if (~known & (own == None)).any():  # noqa: E711   identified languages: nothing known per language
            return self.size.astype(float)
        tot = np.where(known, np.nansum(self.docs, axis=1), 1.0)
        share = np.where(known, np.nan_to_num(self.docs[:, k]) / np.where(tot > 0, tot, 1.0),
                         (own == self.langs[k]).astype(float))
        return self.size * share


def _jsonl_blocks(path: str, lang_col: str, block: int, li: dict, n_units: int, cache: dict) -> np.ndarray:
    """Documents per language of every block of a JSONL file with a language field: one pass over
    its lines (a line belongs to the block holding its first byte), the text never kept."""
    from .loaders.mono import SCRIPT_COLUMN, _lang_of

    out = np.zeros((n_units, len(li)))
    pos = 0
    with open(regular_file(Path(path), "shard"), "rb") as f:
        for no, raw in enumerate(f, 1):
            start, pos = pos, pos + len(raw)
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                raise TokstatError("a line is not one JSON object in UTF-8", path=path, line=no,
                                   fix="make every line one JSON object") from None
            if not isinstance(obj, dict):
                raise TokstatError("a line is not a JSON object", path=path, line=no, fix="make every line one JSON object")
            code = _lang_of(obj.get(lang_col), obj.get(SCRIPT_COLUMN) if lang_col == "language" else None, Path(path), cache)
            if code in li:
                out[min(start // block, n_units - 1), li[code]] += 1
    return out


def frame(corpus, units: list[Cluster], block: int) -> Frame:
    """The stored size, the documents per language (where known) and the stratum of every unit."""
    meta = corpus.meta
    langs = list(corpus.languages)
    li = {lang: k for k, lang in enumerate(langs)}
    comp = meta.get("composition") or {}
    text_col = meta.get("text_col") or "text"
    lang_col = meta.get("lang_col")
    identified = (meta.get("lang_id") or "off") != "off"
    size = np.zeros(len(units))
    docs = np.full((len(units), len(langs)), np.nan)
    md_cache: dict[str, tuple] = {}
    jsonl: dict[str, list[int]] = {}
    cache: dict = {}
    for j, u in enumerate(units):
        if u.kind == "rowgroup":
            if u.path not in md_cache:
                md_cache[u.path] = parquet_file(u.path, "shard").column_sizes(text_col)
            rows, size[j] = md_cache[u.path][u.index]
            if identified:
                continue
            if u.lang is not None:
                docs[j] = 0.0
                if u.lang in li:
                    docs[j, li[u.lang]] = rows
            elif u.path in comp and u.index < len(comp[u.path]):
                docs[j] = 0.0
                for code, n in comp[u.path][u.index].items():
                    if code in li:
                        docs[j, li[code]] = n
        elif u.kind == "block":
            size[j] = max(0, min(block, os.path.getsize(u.path) - u.index * block))
            if not identified and u.lang is None and lang_col:
                jsonl.setdefault(u.path, []).append(j)
        else:
            size[j] = os.path.getsize(u.path)
            if not identified and u.lang is None and lang_col:
                from .loaders.mono import documents

                docs[j] = 0.0
                for _, code, _ in documents(Path(u.path), text_col=text_col, lang_col=lang_col, lang=None, cache=cache):
                    if code in li:
                        docs[j, li[code]] += 1
    for path, js in jsonl.items():
        counts = _jsonl_blocks(path, lang_col, block, li, max(units[j].index for j in js) + 1, cache)
        for j in js:
            docs[j] = counts[units[j].index]
    return Frame(units, langs, size, docs)


def probabilities(fr: Frame, fraction: float) -> np.ndarray:
    """π_j of every unit: ``fraction`` of the units in proportion to their stored size, raised so that
    every language is expected in :data:`PER_LANGUAGE` sampled units (capped at 1).

    >>> u = [Cluster("f", None, "rowgroup", i) for i in range(4)]
    >>> fr = Frame(u, ["a", "b"], np.array([1.0, 1.0, 1.0, 1.0]), np.array([[5.0, 0.0], [5.0, 0.0], [5.0, 0.0], [4.0, 1.0]]))
    >>> probabilities(fr, 0.25).tolist()          # b lives in one unit: read for sure
    [1.0, 1.0, 1.0, 1.0]
    """
    if fraction >= 1:
        return np.ones(len(fr.units))
    mean = float(fr.size.mean()) if len(fr.size) and fr.size.mean() > 0 else 1.0
    pi = fraction * (fr.size / mean if fr.size.sum() > 0 else np.ones(len(fr.units)))
    for k in range(len(fr.langs)):
        x = fr.aux(k)
        if x.sum() <= 0:
            continue
        pi = np.maximum(pi, PER_LANGUAGE * x / x.sum())
    pi = np.minimum(pi, 1.0)
    want = fraction * len(fr.units)          # what capping at 1 took away goes to the other units
    for _ in range(50):
        free = pi < 1
        short = want - float(pi.sum())
        if short <= 0.5 or not free.any() or pi[free].sum() <= 0:
            break
        pi[free] = np.minimum(1.0, pi[free] * (1 + short / float(pi[free].sum())))
    return pi


def draw(fr: Frame, fraction: float, seed: int) -> tuple[list[int], np.ndarray]:
    """The units drawn and every unit's inclusion probability π (:func:`probabilities`): Pareto πps
    sampling (Rosén 1997), seeded: n = round(Σ π) units, every certain one (π = 1) and the others of
    smallest u(1 − π) / (π(1 − u)) for uniform u; each unit is drawn with probability π, closely, and
    the sample's size is fixed (``--sample 40`` reads 40 units, more where a language needs them)."""
    pi = probabilities(fr, fraction)
    u = np.random.default_rng(seed).random(len(pi))
    certain = pi >= 1
    n = int(round(float(pi.sum())))
    rest = n - int(certain.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(certain | (pi <= 0), np.inf, u * (1 - pi) / (pi * (1 - u)))
    picked = np.flatnonzero(certain).tolist()
    if rest > 0:
        picked += np.argsort(q, kind="stable")[:rest].tolist()
    return sorted(picked), pi


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


@dataclass
class Estimate:
    value: float | None         # None: not sampled
    low: float | None           # None: no interval
    high: float | None
    support: int | None         # sampled units holding the language (None: not known)


def _pareto_var(e: np.ndarray, pi: np.ndarray, among: np.ndarray, n: int) -> float:
    """Rosén's variance estimator of a Pareto πps total of residuals ``e`` over the uncertain sampled
    units ``among`` (m of them): m/(m − 1) Σ (1 − π)(e/π − A)², A the (1 − π)-weighted mean of e/π;
    times n/(n − 1) where the residuals are about a ratio fitted on ``n`` of the units (1: none)."""
    w = (1 - pi)[among]
    z = e[among] / pi[among]
    if w.sum() <= 0:
        return 0.0
    A = float((w * z).sum() / w.sum())
    m = int(among.sum())
    v = m / max(m - 1, 1) * float((w * (z - A) ** 2).sum())
    return v * (n / (n - 1) if n > 1 else 1.0)


def ratio(y: np.ndarray, x: np.ndarray, pi: np.ndarray, X: float, uncertain: bool) -> Estimate:
    """The Hájek ratio estimate of a total from the sampled units' values ``y``, auxiliaries ``x``
    and inclusion probabilities ``pi`` (``X``: the auxiliary's known total; ``uncertain``: some unit
    that can hold the quantity was not certain to be read).

    >>> ratio(np.array([2.0, 4.0]), np.array([1.0, 2.0]), np.array([1.0, 1.0]), 3.0, False).value   # read whole
    6.0
    >>> e = ratio(np.array([2.0, 4.0, 3.0]), np.array([1.0, 2.0, 1.0]), np.array([0.5, 0.5, 0.5]), 10.0, True)
    >>> round(e.value, 3), e.low < e.value < e.high
    (22.5, True)
    """
    if X <= 0:
        return Estimate(0.0, 0.0, 0.0, 0)
    holds = x > 0
    support = int(holds.sum())
    Xh = float((x / pi).sum())
    if Xh <= 0:
        return Estimate(None, None, None, support)
    Yh = float((y / pi).sum())
    if not uncertain:           # every unit that can hold it read (π = 1): the sum itself
        return Estimate(Yh, Yh, Yh, support)
    R = Yh / Xh
    est = R * X
    unsure = holds & (pi < 1)
    n = int(unsure.sum())
    if n < 2:
        return Estimate(est, None, None, support)
    var = _pareto_var(y - R * x, pi, pi < 1, n) * (X / Xh) ** 2
    h = _t975(n - 1) * math.sqrt(var)
    return Estimate(est, max(0.0, est - h), est + h, support)


def ratio_sum(y: np.ndarray, x: np.ndarray, pi: np.ndarray, X: np.ndarray, uncertain: bool) -> Estimate | None:
    """The sum over languages of their ratio estimates (:func:`ratio`), from the sampled units'
    values ``y`` and auxiliaries ``x`` per language (``(units, languages)``) and the auxiliaries'
    known totals ``X``: a total that knows how each language's units differ (tokens per byte of
    Hindi are not those of English). Its variance is the linearised one of the summed residuals
    Σ_L c_L (X_L/X̂_L)(y_L − R̂_L x_L) of each unit, c_L² = n_L / (n_L − 1) (n_L: the uncertain sampled
    units holding L, as in :func:`ratio`). None where a language present is not sampled.

    >>> y = np.array([[2.0, 0.0], [4.0, 6.0], [3.0, 3.0]]); x = np.array([[1.0, 0.0], [2.0, 2.0], [1.0, 1.0]])
    >>> e = ratio_sum(y, x, np.full(3, 0.5), np.array([10.0, 6.0]), True)
    >>> round(e.value, 3), e.low < e.value < e.high, round(e.value - 22.5 - 6 * 3.0, 9)
    (40.5, True, 0.0)
    """
    Xh = (x / pi[:, None]).sum(axis=0)
    present = X > 0
    if (Xh[present] <= 0).any():
        return None
    g = np.where(present, X / np.where(Xh > 0, Xh, 1.0), 0.0)
    Yh = (y / pi[:, None]).sum(axis=0)
    R = np.where(present, Yh / np.where(Xh > 0, Xh, 1.0), 0.0)
    if not uncertain:
        v = float(Yh.sum())
        return Estimate(v, v, v, int((x.sum(axis=1) > 0).sum()))
    est = float((R * X).sum())
    unsure = (x.sum(axis=1) > 0) & (pi < 1)
    n = int(unsure.sum())
    if n < 2:
        return Estimate(est, None, None, int((x.sum(axis=1) > 0).sum()))
    # each language's residuals shrink by (n_L − 1) / n_L about its own fitted ratio: undone language by language
    n_l = ((x > 0) & (pi < 1)[:, None]).sum(axis=0)
    c = np.sqrt(np.where(n_l > 1, n_l / np.maximum(n_l - 1, 1), 1.0))
    e = ((y - R * x) * g * c).sum(axis=1)
    var = _pareto_var(e, pi, pi < 1, 1)
    h = _t975(n - 1) * math.sqrt(var)
    return Estimate(est, max(0.0, est - h), est + h, int((x.sum(axis=1) > 0).sum()))


__all__ = ["Frame", "frame", "probabilities", "draw", "ratio", "ratio_sum", "Estimate", "MIN_CLUSTERS", "PER_LANGUAGE"]
