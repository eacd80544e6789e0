"""A language mix: one definition for every command (cost, report, vocab-plan, sweep, train).

A mix gives each language a share of the text a model trains on or a product serves. tokstat reads
the shares as shares of **content** by default: ``zh=0.4,en=0.6`` is 40 % of the meaning in Chinese,
60 % in English, the way a parallel corpus counts it (one aligned segment is one unit of content in
every language). Users who state a pretraining mix in characters, UTF-8 bytes or tokens say so with
``unit`` (``--mix-unit chars|bytes|tokens``), and tokstat converts explicitly through what one unit
of content is in each language on the corpus measured::

    amount of unit U per unit of content, language L:   a_U(L)
    content share from shares s in unit U:               w(L) = (s(L) / a_U(L)) / Σ_K s(K) / a_U(K)
    shares in unit U from content shares w:              s(L) = w(L) · a_U(L) / Σ_K w(K) · a_U(K)

On parallel results the amounts follow from each language's premium P(L) (tokens relative to the
pivot's on the same content, a ratio of sums) and its tokens per character and per byte: per unit of
content, tokens ∝ P(L), characters ∝ P(L) / (tokens per character), bytes ∝ P(L) / (tokens per byte).
Characters and bytes do not depend on the tokenizer; tokens do (a token share is a share *for one
tokenizer*), so a token mix is converted per tokenizer and refused where the tokenizer is still to
be chosen (``train``, ``sweep``, ``vocab-plan``).

>>> m = Mix({"zh": 0.4, "en": 0.6})
>>> amounts = {"zh": {"chars": 1.0, "bytes": 3.0, "tokens": 1.5}, "en": {"chars": 3.0, "bytes": 3.0, "tokens": 1.0}}
>>> {k: round(v, 3) for k, v in m.shares_in("chars", amounts).items()}
{'zh': 0.182, 'en': 0.818}
>>> Mix({"zh": 0.182, "en": 0.818}, "chars").content(amounts)["zh"] > 0.39
True
>>> m.conversion(amounts)
'content zh 40% · en 60% = characters zh 18% · en 82% = bytes zh 40% · en 60% = tokens zh 50% · en 50%'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .errors import TokstatError
from .parse import mix as parse_shares

#: what a share can be a share of; "content" (the default) is the same meaning in every language
UNITS = ("content", "chars", "bytes", "tokens")
UNIT_WORDS = {"content": "content", "chars": "characters", "bytes": "bytes", "tokens": "tokens"}


def check_unit(unit: str, option: str = "--mix-unit") -> str:
    """The unit, or one error naming the choices.

    >>> check_unit("bytes")
    'bytes'
    >>> check_unit("words")
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: unknown --mix-unit 'words' (fix: use one of content, chars, bytes, tokens)
    """
    if unit not in UNITS:
        raise TokstatError(f"unknown {option} {unit!r}", fix=f"use one of {', '.join(UNITS)}")
    return unit


@dataclass(frozen=True)
class Mix:
    """Language shares (summing to 1) and what they are shares of (:data:`UNITS`)."""

    shares: Mapping[str, float]
    unit: str = "content"

    def __post_init__(self):
        check_unit(self.unit)
        object.__setattr__(self, "shares", dict(parse_shares(dict(self.shares)) or {}))
        if not self.shares:
            raise TokstatError("a mix needs at least one language", fix="write --mix zh=0.5,en=0.5")

    @property
    def languages(self) -> list[str]:
        return list(self.shares)

    def describe(self) -> str:
        """``"content zh 40% · en 60%"``."""
        return f"{UNIT_WORDS[self.unit]} " + " · ".join(f"{k} {v:.0%}" for k, v in self.shares.items())

    def amounts_of(self, amounts: Mapping[str, Mapping[str, float]], unit: str) -> dict[str, float]:
        missing = [k for k in self.shares if k not in amounts]
        if missing:
            raise TokstatError(f"the mix names languages not measured: {', '.join(missing)}",
                               fix=f"use {', '.join(sorted(amounts))}")
        out = {}
        for k in self.shares:
            if unit == "content":
                out[k] = 1.0
                continue
            a = amounts[k].get(unit)
            if a is None or not a > 0:
                raise TokstatError(f"cannot convert a mix in {UNIT_WORDS[self.unit]} to {UNIT_WORDS[unit]}: "
                                   f"{k} has no {UNIT_WORDS[unit]} per unit of content (content is measured "
                                   "as a premium against a pivot on parallel text)",
                                   fix="compare on a parallel corpus with --pivot, or state the mix in the unit "
                                       "the results measure")
            out[k] = float(a)
        return out

    def content(self, amounts: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
        """Content shares: ``amounts[lang][unit]`` is that unit's amount per unit of content."""
        a = self.amounts_of(amounts, self.unit)
        raw = {k: s / a[k] for k, s in self.shares.items()}
        total = sum(raw.values())
        return {k: v / total for k, v in raw.items()}

    def shares_in(self, unit: str, amounts: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
        """The mix restated in ``unit`` (content, chars, bytes or tokens)."""
        check_unit(unit, "unit")
        if unit == self.unit:
            return dict(self.shares)     # no conversion: true on any data, parallel or not
        w = self.content(amounts)
        a = self.amounts_of(amounts, unit)
        raw = {k: w[k] * a[k] for k in w}
        total = sum(raw.values())
        return {k: v / total for k, v in raw.items()} if total > 0 else dict(w)

    def conversion(self, amounts: Mapping[str, Mapping[str, float]], units=UNITS) -> str:
        """The mix in every unit the amounts allow, the stated unit first: the line printed in the
        assumptions."""
        order = [self.unit] + [u for u in units if u != self.unit]
        parts = []
        for u in order:
            if u not in ("content", self.unit) and any(amounts.get(k, {}).get(u) is None for k in self.shares):
                continue
            try:
                s = self.shares_in(u, amounts)
            except TokstatError:       # not convertible on these results (no premium: no content)
                continue
            parts.append(f"{UNIT_WORDS[u]} " + " · ".join(f"{k} {v:.0%}" for k, v in s.items()))
        return " = ".join(parts)

    def restrict(self, languages) -> "Mix | None":
        """The mix over ``languages`` only, renormalised (None when none is left)."""
        kept = {k: v for k, v in self.shares.items() if k in set(languages)}
        total = sum(kept.values())
        return Mix({k: v / total for k, v in kept.items()}, self.unit) if total > 0 else None

    def signature(self) -> str:
        """``"zh0.4-en0.6"`` (content) or ``"chars-zh0.4-en0.6"``: for ids."""
        body = "-".join(f"{k}{v:g}" for k, v in sorted(self.shares.items()))
        return body if self.unit == "content" else f"{self.unit}-{body}"


def parse(value, unit: str | None = "content", option: str = "--mix") -> Mix | None:
    """A :class:`Mix` from ``"zh=0.4,en=0.6"``, a dict or a Mix (None stays None).

    >>> parse("zh=0.4,en=0.6", "bytes").describe()
    'bytes zh 40% · en 60%'
    """
    if value is None or isinstance(value, Mix):
        if isinstance(value, Mix) and unit not in (None, "content", value.unit):
            raise TokstatError(f"a Mix in {value.unit} given with mix_unit={unit!r}", fix="give the unit once")
        return value
    shares = parse_shares(value, option)
    return None if shares is None else Mix(shares, check_unit(unit or "content"))


def check_languages(mix: Mix | None, have, where: str = "the results", option: str = "--mix") -> None:
    """Refuse a mix naming a language ``have`` lacks (a typo, ``jp`` for ``ja``): one error for
    every command that takes a mix, naming the languages it may use.

    >>> check_languages(Mix({"zh": 0.5, "jp": 0.5}), ["en", "ja", "zh"])
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: --mix names languages not in the results: jp (fix: use en, ja, zh)
    """
    if mix is None:
        return
    have = set(have)
    missing = sorted(set(mix.shares) - have)
    if missing:
        raise TokstatError(f"{option} names languages not in {where}: {', '.join(missing)}",
                           fix=f"use {', '.join(sorted(have))}")


def amounts_from_results(rows) -> dict[str, dict[str, float]]:
    """Per language, characters, bytes and tokens per unit of content (relative to the pivot's
    tokens on the same content) from one tokenizer's compare/sweep rows (dicts with ``language``,
    ``premium``, ``tokens_per_char`` and optionally ``tokens_per_byte``).

    >>> amounts_from_results([{"language": "en", "premium": 1.0, "tokens_per_char": 0.25},
    ...                       {"language": "zh", "premium": 1.5, "tokens_per_char": 1.0}])
    {'en': {'tokens': 1.0, 'chars': 4.0}, 'zh': {'tokens': 1.5, 'chars': 1.5}}
    """
    out: dict[str, dict[str, float]] = {}
    for r in rows:
        p = r.get("premium")
        a: dict[str, float] = {}
        out[r["language"]] = a
        if p is None or not p > 0:
            continue
        a["tokens"] = float(p)
        if r.get("tokens_per_char"):
            a["chars"] = p / r["tokens_per_char"]
        if r.get("tokens_per_byte"):
            a["bytes"] = p / r["tokens_per_byte"]
    return out


def equal(languages) -> Mix:
    """Equal content shares: the default mix."""
    langs = list(dict.fromkeys(languages))
    return Mix({k: 1.0 / len(langs) for k in langs}) if langs else None


__all__ = ["UNITS", "Mix", "parse", "check_unit", "amounts_from_results", "equal"]
