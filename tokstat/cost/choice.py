"""Which tokenizer: one criterion, one function, called by ``compare --mix``, ``cost`` and the report.

The criterion (:func:`choose`):

* **with a model** (``cost`` rows): the training **dollars** of the stated volume of the mix, each
  tokenizer with its own vocabulary (``cost``'s ``mix`` row; without one, the languages' rows
  weighted by the mix — default equal content — in the unit the rows hold equal); the tokens are
  shown beside;
* **without a model**: the **tokens** the mix costs, as tokens per character of the mix,
  Σ_L s_L · tokens_per_char_L with s the mix's character shares (the same content mix in every
  tokenizer's characters).

Tokenizers that lose text (:func:`tokstat.metrics.unreliable`) are left out and named. The answer
says how close the runner-up is: the relative difference runner-up/best − 1 with a 95 % paired
bootstrap interval — replicate ``b`` of every tokenizer is the same draw of segments (compare's
``tokens_per_char_boot``), so the interval is over the same text — and "no meaningful difference"
when the interval reaches 0. A dollar replicate scales the tokenizer's dollars by its token
replicate (training cost is proportional to tokens for a given vocabulary).

>>> import polars as pl
>>> c = pl.DataFrame({"tokenizer": ["a", "a", "b", "b"], "language": ["en", "zh", "en", "zh"],
...                   "tokens_per_char": [0.25, 1.0, 0.3, 0.9], "premium": [1.0, 1.4, 1.0, 1.1],
...                   "chars": [400, 100, 400, 100]})
>>> ch = choose(c)
>>> ch.best, ch.criterion, round(ch.scores["a"], 3), round(ch.scores["b"], 3)
('a', 'tokens', 0.444, 0.461)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from ..errors import TokstatError
from ..metrics import MAX_UNK, replicates, unreliable  # noqa: F401 - replicates: part of this module's API
from ..mix import Mix, amounts_from_results, equal

LEVEL = 0.95


@dataclass
class Choice:
    """The answer to "which tokenizer?" and everything its sentence states."""

    criterion: str                      # "dollars" or "tokens"
    unit: str                           # what a score is, in words
    scores: dict[str, float]            # reliable tokenizers, best first
    tokens: dict[str, float]            # tokens per character of the mix (beside dollars)
    excluded: dict[str, str]            # tokenizers that lose text -> why
    mix: Mix | None
    mix_source: str                     # "given", "the cost rows' mix", "equal content"
    diff: float | None = None           # runner-up / best − 1
    diff_low: float | None = None
    diff_high: float | None = None
    weights: dict[str, float] = field(default_factory=dict)   # character shares of the mix
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)   # each score's 95 % bootstrap interval

    @property
    def best(self) -> str | None:
        return next(iter(self.scores), None)

    @property
    def runner_up(self) -> str | None:
        return list(self.scores)[1] if len(self.scores) > 1 else None

    @property
    def meaningful(self) -> bool | None:
        """Whether the runner-up is worse beyond the interval (None: no interval)."""
        if self.diff_low is None:
            return None
        return self.diff_low > 0

    def closeness(self) -> str:
        """The runner-up, how far, and whether the difference is meaningful, in words."""
        if self.runner_up is None:
            return "the only reliable tokenizer"
        d = f"{self.runner_up} {self.diff:+.1%}"
        if self.diff_low is None:
            return f"next: {d} (no interval: the results carry no bootstrap replicates)"
        iv = f"[{self.diff_low:+.1%}, {self.diff_high:+.1%}]"
        return (f"next: {d} {iv}, " + ("a meaningful difference" if self.meaningful
                                       else "no meaningful difference (the interval reaches 0)"))

    def sentence(self) -> str:
        """One plain-text sentence: the choice, its number, the criterion, the runner-up."""
        if self.best is None:
            return "no tokenizer keeps the text of every language of the mix"
        num = (f"${self.scores[self.best]:,.0f}" if self.criterion == "dollars"
               else f"{self.scores[self.best]:.3f}")
        tok = f", {self.tokens[self.best]:.3f} tokens per character" if self.criterion == "dollars" else ""
        return f"{self.best}: {num} {self.unit}{tok}; {self.closeness()}"


def mix_of_costs(costs: pl.DataFrame | None) -> Mix | None:
    """The mix a cost table was priced for (its ``mix_spec`` column), or None."""
    if costs is None or "mix_spec" not in costs.columns:
        return None
    specs = costs["mix_spec"].drop_nulls().unique().to_list()
    if len(specs) != 1:
        return None
    unit, _, body = specs[0].partition(":")
    from ..parse import mix as parse_mix

    return Mix(parse_mix(body), unit)


def mix_spec(mix: Mix | None) -> str | None:
    """``"content:zh=0.3,en=0.7"``: a mix as a result table carries it (read back by :func:`mix_of_costs`)."""
    if mix is None:
        return None
    return f"{mix.unit}:" + ",".join(f"{k}={v:.12g}" for k, v in mix.shares.items())


def char_shares(rows: list[dict], mix: Mix | None) -> dict[str, float] | None:
    """One tokenizer's rows: the mix (default equal content) as shares of characters, converted
    through its premiums (without a pivot, the corpus's own characters)."""
    langs = [r["language"] for r in rows]
    m = mix or equal(langs)
    if any(k not in langs for k in m.shares):
        return None
    if len(m.shares) == 1:
        return dict.fromkeys(m.shares, 1.0)
    amounts = amounts_from_results(rows)
    if m.unit != "tokens" and any("chars" not in amounts[k] for k in m.shares):
        amounts = {r["language"]: {"chars": float(r.get("chars") or 0) or None} for r in rows}
    try:
        return m.shares_in("chars", amounts)
    except TokstatError:
        return None


def choose(results: pl.DataFrame, mix: Mix | dict | None = None, costs: pl.DataFrame | None = None, *,
           max_unk: float = MAX_UNK) -> Choice:
    """The tokenizer for ``mix`` (a :class:`Mix`, content shares as a dict, or None: the mix the
    ``costs`` carry, else equal content) by the one criterion of this module."""
    source = "given"
    if isinstance(mix, dict):
        mix = Mix(mix, "content")
    if mix is None:
        mix = mix_of_costs(costs)
        source = "the cost rows' mix" if mix is not None else "equal content"
    bad = unreliable(results, max_unk)
    held = "content"
    if costs is not None and "held_equal" in costs.columns and costs["held_equal"].drop_nulls().len():
        held = costs["held_equal"].drop_nulls()[0]
    held_unit = {"content": "content", "characters": "chars", "bytes": "bytes"}.get(held, "content")
    volume_shares: dict[str, dict[str, float]] = {}     # per tokenizer: the mix in the unit the cost rows hold equal
    tokens: dict[str, float] = {}
    reps: dict[str, np.ndarray | None] = {}
    weights: dict[str, float] = {}
    for (tok,), grp in results.group_by("tokenizer", maintain_order=True):
        recs = grp.to_dicts()
        by = {r["language"]: r for r in recs}
        w = char_shares(recs, mix)
        if tok in bad or not w or any(by.get(lang, {}).get("tokens_per_char") is None for lang in w if w[lang] > 0):
            continue
        weights = weights or w
        tokens[tok] = sum(v * by[lang]["tokens_per_char"] for lang, v in w.items() if v > 0)
        if costs is not None:
            try:
                volume_shares[tok] = (mix or equal(list(w))).shares_in(held_unit, amounts_from_results(recs))
            except TokstatError:
                volume_shares[tok] = {}
        boot = {lang: replicates(by[lang].get("tokens_per_char_boot")) for lang, v in w.items() if v > 0}
        if all(b is not None and len(b) for b in boot.values()) and len({len(b) for b in boot.values()}) == 1:
            reps[tok] = sum(w[lang] * b for lang, b in boot.items())
        else:
            reps[tok] = None
    criterion, unit, scores = "tokens", "tokens per character of the mix", dict(tokens)
    if costs is not None and costs.height:
        dollars = _dollars(costs, volume_shares, set(tokens))
        if dollars:
            criterion, unit, scores = "dollars", "to train on the volume of the mix", dollars
            reps = {t: (None if reps.get(t) is None else reps[t] * dollars[t] / tokens[t]) for t in dollars}
            tokens = {t: tokens[t] for t in dollars}
    order = sorted(scores, key=lambda t: (scores[t], t))
    ch = Choice(criterion, unit, {t: scores[t] for t in order}, {t: tokens[t] for t in order}, bad, mix, source,
                weights=weights)
    q = (1 - LEVEL) / 2
    for t in order:
        r = reps.get(t)
        if r is not None and np.isfinite(r).sum() >= 20:
            ch.intervals[t] = tuple(float(x) for x in np.quantile(r[np.isfinite(r)], [q, 1 - q]))
    if len(order) > 1:
        a, b = order[0], order[1]
        ch.diff = scores[b] / scores[a] - 1
        ra, rb = reps.get(a), reps.get(b)
        if ra is not None and rb is not None and len(ra) == len(rb):
            ok = np.isfinite(ra) & np.isfinite(rb) & (ra > 0)
            if ok.sum() >= 20:
                d = rb[ok] / ra[ok] - 1
                q = (1 - LEVEL) / 2
                ch.diff_low, ch.diff_high = (float(x) for x in np.quantile(d, [q, 1 - q]))
    return ch


def _dollars(costs: pl.DataFrame, shares: dict[str, dict[str, float]], tokenizers: set[str]) -> dict[str, float]:
    """Training dollars of the mix per tokenizer: the ``mix`` row, else the languages' rows weighted
    by the mix's shares in the unit the rows hold equal (the same content, characters or bytes in
    every language's row: the mix of one volume of that unit)."""
    out: dict[str, float] = {}
    for (tok,), g in costs.group_by("tokenizer", maintain_order=True):
        if tok not in tokenizers:
            continue
        m = g.filter(pl.col("language") == "mix")
        by = {r["language"]: r["dollars"] for r in g.iter_rows(named=True)}
        s = shares.get(tok) or {}
        if m.height and m["dollars"][0] is not None:
            out[tok] = float(m["dollars"][0])
        elif s and all(by.get(lang) is not None for lang in s):
            out[tok] = float(sum(v * by[lang] for lang, v in s.items()))
    return out if set(out) == tokenizers else {}


__all__ = ["Choice", "choose", "mix_of_costs", "mix_spec", "char_shares", "replicates"]
