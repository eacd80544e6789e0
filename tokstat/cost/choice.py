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

#: the questions a ranking answers, in the words every output uses
QUESTIONS = {"tokens": "fewest tokens", "train": "cheapest to train", "serve": "cheapest to serve"}


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

    def number(self, t: str | None = None) -> str:
        """A tokenizer's score as the outputs print it (``$20,424``, ``$0.025``, ``0.410``)."""
        from ..fmt import money

        t = t or self.best
        return money(self.scores[t]) if self.criterion == "dollars" else f"{self.scores[t]:.3f}"

    def sentence(self) -> str:
        """One plain-text sentence: the choice, its number, the criterion, the runner-up."""
        if self.best is None:
            return "no tokenizer keeps the text of every language of the mix"
        num = (f"${self.scores[self.best]:,.0f}" if self.criterion == "dollars" and self.scores[self.best] >= 10
               else self.number())
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


@dataclass
class _Measured:
    """What every question ranks from, measured once per results table (:func:`_measure`): per
    reliable tokenizer its tokens per character of the mix, their bootstrap replicates and the mix
    in the unit the cost rows hold equal."""
    mix: Mix | None
    source: str
    bad: dict[str, str]
    tokens: dict[str, float]
    reps: dict[str, np.ndarray | None]
    weights: dict[str, float]
    volume_shares: dict[str, dict[str, float]]


def _measure(results: pl.DataFrame, mix: Mix | dict | None, costs: pl.DataFrame | None, max_unk: float) -> _Measured:
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
    return _Measured(mix, source, bad, tokens, reps, weights, volume_shares)


def choose(results: pl.DataFrame, mix: Mix | dict | None = None, costs: pl.DataFrame | None = None, *,
           max_unk: float = MAX_UNK, question: str | None = None) -> Choice:
    """The tokenizer for ``mix`` (a :class:`Mix`, content shares as a dict, or None: the mix the
    ``costs`` carry, else equal content) for one ``question`` of :data:`QUESTIONS` (default:
    ``train`` with cost rows, else ``tokens``)."""
    question = question or ("train" if costs is not None and costs.height else "tokens")
    return _rank(_measure(results, mix, costs, max_unk), costs, question)


def _rank(m: _Measured, costs: pl.DataFrame | None, question: str) -> Choice:
    """The :class:`Choice` for ``question`` from what :func:`_measure` measured."""
    if question not in QUESTIONS:
        raise ValueError(f"question {question!r}: one of {', '.join(QUESTIONS)}")
    tokens, reps = m.tokens, m.reps
    criterion, unit, scores = "tokens", "tokens per character of the mix", dict(tokens)
    if costs is not None and costs.height and question != "tokens":
        col = "dollars" if question == "train" else "usd_per_request"
        dollars = _dollars(costs, m.volume_shares, set(tokens), col)
        if dollars and question == "serve":
            dollars = {t: v * 1000 for t, v in dollars.items()}
        if dollars:
            criterion, unit, scores = ("dollars", "to train on the volume of the mix" if question == "train"
                                       else "per 1,000 requests of the mix", dollars)
            reps = {t: (None if reps.get(t) is None else reps[t] * dollars[t] / tokens[t]) for t in dollars}
            tokens = {t: tokens[t] for t in dollars}
    order = sorted(scores, key=lambda t: (scores[t], t))
    ch = Choice(criterion, unit, {t: scores[t] for t in order}, {t: tokens[t] for t in order}, m.bad, m.mix, m.source,
                weights=m.weights)
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
                ch.diff_low, ch.diff_high = (float(x) for x in np.quantile(d, [q, 1 - q]))
    return ch


def _dollars(costs: pl.DataFrame, shares: dict[str, dict[str, float]], tokenizers: set[str],
             col: str = "dollars") -> dict[str, float]:
    """Dollars of the mix per tokenizer (``col``: training ``dollars`` or serving ``usd_per_request``):
    the ``mix`` row, else the languages' rows weighted by the mix's shares in the unit the rows hold
    equal (the same content, characters or bytes in every language's row: the mix of one volume of
    that unit)."""
    out: dict[str, float] = {}
    if col not in costs.columns:
        return out
    for (tok,), g in costs.group_by("tokenizer", maintain_order=True):
        if tok not in tokenizers:
            continue
        m = g.filter(pl.col("language") == "mix")
        by = {r["language"]: r[col] for r in g.iter_rows(named=True)}
        s = shares.get(tok) or {}
        if m.height and m[col][0] is not None:
            out[tok] = float(m[col][0])
        elif s and all(by.get(lang) is not None for lang in s):
            out[tok] = float(sum(v * by[lang] for lang, v in s.items()))
    return out if set(out) == tokenizers else {}


@dataclass
class Decision:
    """The answers to the three questions a lead asks of a mix — **fewest tokens**, **cheapest to
    train** and **cheapest to serve** a model on it — each a :class:`Choice` (the dollar ones only
    with cost rows), and why they differ when they do.

    The winners differ when a tokenizer's vocabulary costs more per token than its fewer tokens
    save: the embedding and the 2·d·V unembedding grow with the vocabulary, so a model's FLOPs per
    token (and its serving time per token) do too. :meth:`why` quantifies it from the cost rows.
    """

    tokens: Choice
    train: Choice | None = None
    serve: Choice | None = None
    model: str | None = None
    costs: pl.DataFrame | None = field(default=None, repr=False)

    def choices(self) -> dict[str, Choice]:
        """The questions answered, in :data:`QUESTIONS` order."""
        out = {"tokens": self.tokens, "train": self.train, "serve": self.serve}
        return {q: c for q, c in out.items() if c is not None and c.criterion == ("tokens" if q == "tokens" else "dollars")}

    @property
    def agree(self) -> bool:
        return len({c.best for c in self.choices().values()}) <= 1

    def question(self, q: str) -> str:
        """The question in words: ``fewest tokens for this mix``, ``cheapest to train llama2-7b on it``."""
        if q == "tokens":
            return "fewest tokens for this mix"
        return f"{QUESTIONS[q]} {self.model or 'the model'} on it"

    def per_token(self, t: str, q: str) -> float | None:
        """Dollars per token of the mix for tokenizer ``t`` (``q``: train or serve): the score over
        the tokens, both per character of the same mix."""
        c = self.choices().get(q)
        if c is None or t not in c.scores or not c.tokens.get(t):
            return None
        return c.scores[t] / c.tokens[t]

    def _vocab(self, t: str) -> int | None:
        if self.costs is None or "vocab_size" not in self.costs.columns:
            return None
        v = self.costs.filter(pl.col("tokenizer") == t)["vocab_size"].drop_nulls()
        return int(v[0]) if v.len() else None

    def why(self) -> str | None:
        """Why the dollar winners are not the fewest-tokens winner, quantified: the fewest-tokens
        tokenizer's cost per token against the dollar winner's, beside the extra tokens the dollar
        winner needs (one sentence for training and serving where they name the same winner)."""
        a = self.tokens.best
        if a is None:
            return None
        parts: dict[str, list[str]] = {}
        for q, c in self.choices().items():
            b = c.best
            if q == "tokens" or b is None or b == a or a not in c.scores:
                continue
            pa, pb = self.per_token(a, q), self.per_token(b, q)
            if pa is None or pb is None or pb <= 0:
                continue
            parts.setdefault(b, []).append(f"{pa / pb - 1:+.1%} per token to {q}")
        if not parts:
            return None
        out = []
        va = self._vocab(a)
        for b, what in parts.items():
            vb = self._vocab(b)
            more = self.tokens.scores[b] / self.tokens.scores[a] - 1
            out.append(f"they differ because {a}'s {f'{va:,}-entry ' if va else ''}vocabulary costs "
                       f"{' and '.join(what)} against {b}'s{f' {vb:,}' if vb else ''} (the embedding and the "
                       f"2·d·V unembedding grow with the vocabulary), more than the {more:.1%} more tokens "
                       f"{b} needs")
        return "; ".join(out)

    def lines(self) -> list[str]:
        """The answers in plain text: one line where the questions agree, else one per question
        and why they differ."""
        cs = self.choices()
        if self.tokens.best is None:
            return [self.tokens.sentence()]
        if self.agree:
            qs = [QUESTIONS[q] for q in cs]
            head = (qs[0] if len(qs) == 1 else ", ".join(qs[:-1]) + " and " + qs[-1])
            nums = "; ".join(f"{c.number()} {c.unit}" for c in cs.values())
            who = f" ({self.model})" if len(cs) > 1 and self.model else ""
            return [f"{head}{who} for this mix: {self.tokens.best}: {nums}; {self.tokens.closeness()}"]
        out = [f"{self.question(q)}: {c.best}: {c.number()} {c.unit}; {c.closeness()}" for q, c in cs.items()]
        return out + ([w] if (w := self.why()) else [])

    def record(self) -> dict:
        """The answers as data (JSON outputs): per question the winner, its score and unit, the
        runner-up and the paired interval of the difference."""
        out = {}
        for q, c in self.choices().items():
            out[q] = {"question": self.question(q), "best": c.best, "score": c.scores.get(c.best) if c.best else None,
                      "unit": c.unit, "runner_up": c.runner_up, "runner_up_diff": c.diff,
                      "runner_up_diff_low": c.diff_low, "runner_up_diff_high": c.diff_high,
                      "meaningful": c.meaningful, "ranking": list(c.scores)}
        if (w := self.why()) is not None:
            out["why_they_differ"] = w
        return out

    def ranks(self) -> dict[str, dict[str, int]]:
        """Per question, each ranked tokenizer's place (1 = best)."""
        return {q: {t: i + 1 for i, t in enumerate(c.scores)} for q, c in self.choices().items()}


def decide(results: pl.DataFrame, mix: Mix | dict | None = None, costs: pl.DataFrame | None = None, *,
           max_unk: float = MAX_UNK, model: str | None = None) -> Decision:
    """The three answers for ``mix``: fewest tokens always; cheapest to train and to serve with
    ``costs`` (cost rows; ``model`` names the model they price, default their ``model`` column)."""
    if costs is not None and not costs.height:
        costs = None
    if model is None and costs is not None and "model" in costs.columns and costs["model"].drop_nulls().len():
        model = str(costs["model"].drop_nulls()[0])
    m = _measure(results, mix, costs, max_unk)          # once: the three questions rank the same measurements
    tok = _rank(m, costs, "tokens")
    if costs is None:
        return Decision(tok, model=model)
    return Decision(tok, _rank(m, costs, "train"), _rank(m, costs, "serve"), model, costs)


__all__ = ["Choice", "Decision", "QUESTIONS", "decide", "choose", "mix_of_costs", "mix_spec", "char_shares", "replicates"]
