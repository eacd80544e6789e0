"""Option values written as text (on the command line, in sweep specs), parsed in one place each.

Every parser raises one :class:`~tokstat.errors.TokstatError` line that names the option and the fix.
"""

from __future__ import annotations

import re

from .errors import TokstatError
from .ranges import VOCAB


def sizes(value: str | list[int], option: str = "--sizes") -> list[int]:
    """``"4000,8000"`` -> ``[4000, 8000]`` (sorted, distinct, positive integers).

    >>> sizes("16000, 4000,8000")
    [4000, 8000, 16000]
    >>> sizes("4k")
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: bad --sizes '4k': '4k' is not a whole number (fix: write whole numbers, e.g. --sizes 4000,8000,16000)
    """
    parts = value if isinstance(value, list) else [p.strip() for p in str(value).split(",") if p.strip()]
    out = []
    for p in parts:
        try:
            n = int(p)
        except (TypeError, ValueError):
            raise TokstatError(f"bad {option} {value!r}: {p!r} is not a whole number",
                               fix=f"write whole numbers, e.g. {option} 4000,8000,16000") from None
        if n < 1:
            raise TokstatError(f"bad {option} {value!r}: {n} is not positive", fix=f"e.g. {option} 4000,8000,16000")
        if n > VOCAB.hi:
            raise TokstatError(f"bad {option} {value!r}: {n:,} is above the largest vocabulary tokstat trains "
                               f"({VOCAB.hi:,})", fix=f"e.g. {option} 4000,8000,16000")
        out.append(n)
    if not out:
        raise TokstatError(f"no vocabulary sizes in {option}", fix=f"e.g. {option} 4000,8000,16000")
    return sorted(set(out))


def mix(value: str | dict | None, option: str = "--mix") -> dict[str, float] | None:
    """``"zh=0.5,en=0.5"`` -> ``{"zh": 0.5, "en": 0.5}``: shares that are non-negative, sum to 1 and name
    each language once.

    >>> mix("zh=0.7, en=0.3")
    {'zh': 0.7, 'en': 0.3}
    >>> mix("zh=0.5,zh=0.5")
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: bad --mix 'zh=0.5,zh=0.5': zh given twice (fix: write --mix zh=0.5,en=0.5)
    """
    if value is None or value == "" or value == {}:
        return None
    if isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    else:
        items = []
        for kv in str(value).split(","):
            k, eq, v = kv.partition("=")
            if not eq or not k.strip():
                raise TokstatError(f"bad {option} {value!r}: {kv!r} is not LANG=WEIGHT", fix=f"write {option} zh=0.5,en=0.5")
            items.append((k.strip(), v.strip()))
    out: dict[str, float] = {}
    for k, v in items:
        try:
            w = float(v)
        except (TypeError, ValueError):
            raise TokstatError(f"bad {option} {value!r}: {v!r} is not a number", fix=f"write {option} zh=0.5,en=0.5") from None
        if k in out:
            raise TokstatError(f"bad {option} {value!r}: {k} given twice", fix=f"write {option} zh=0.5,en=0.5")
        if not w >= 0 or w == float("inf"):
            raise TokstatError(f"bad {option} {value!r}: weight {v} is not a finite non-negative number",
                               fix=f"write {option} zh=0.5,en=0.5")
        out[k] = w
    total = sum(out.values())
    if total <= 0:
        raise TokstatError(f"bad {option} {value!r}: the weights are all zero", fix=f"write {option} zh=0.5,en=0.5")
    if abs(total - 1) > 1e-6:
        raise TokstatError(f"bad {option} {value!r}: the shares sum to {total:g}, not 1 (they are never rescaled "
                           "silently)", fix=f"write shares that sum to 1, e.g. {option} zh=0.5,en=0.5")
    return out


def languages(value: str | list[str] | None, option: str = "--languages") -> list[str] | None:
    """``"en,zh"`` -> ``["en", "zh"]``; a language named twice is an error (it would be counted twice).

    >>> languages("en, zh")
    ['en', 'zh']
    """
    if value is None or value == "" or value == []:
        return None
    out = value if isinstance(value, list) else [x.strip() for x in str(value).split(",")]
    if any(not x for x in out):
        raise TokstatError(f"bad {option} {value!r}: an empty language code", fix=f"e.g. {option} en,zh")
    dup = sorted({x for x in out if out.count(x) > 1})
    if dup:
        raise TokstatError(f"bad {option} {value!r}: {', '.join(dup)} given twice", fix="name each language once")
    return list(out)


def columns(value: str | None, option: str = "--columns") -> list[str] | dict[str, str] | None:
    """``"en,zh,_"`` (languages of the columns in order) or ``"en=text_en,zh=text_zh"`` (language=COLUMN).

    >>> columns("en,zh,_"), columns("en=a,zh=b")
    (['en', 'zh', '_'], {'en': 'a', 'zh': 'b'})
    """
    if not value:
        return None
    parts = [p.strip() for p in value.split(",")]
    if any("=" in p for p in parts):
        if not all("=" in p for p in parts):
            raise TokstatError(f"bad {option} {value!r}: mix of LANG and LANG=COLUMN", fix=f"write {option} en=text_en,zh=text_zh")
        out: dict[str, str] = {}
        for p in parts:
            k, _, v = p.partition("=")
            if not k or not v:
                raise TokstatError(f"bad {option} {value!r}: {p!r} is not LANG=COLUMN", fix=f"write {option} en=text_en,zh=text_zh")
            if k in out:
                raise TokstatError(f"bad {option} {value!r}: {k} given twice", fix="name each language once")
            out[k] = v
        return out
    if any(not p for p in parts):
        raise TokstatError(f"bad {option} {value!r}: an empty column name", fix=f"write {option} en,zh,_")
    named = [p for p in parts if p != "_"]
    dup = sorted({p for p in named if named.count(p) > 1})
    if dup:
        raise TokstatError(f"bad {option} {value!r}: {', '.join(dup)} given twice", fix="name each language once (_ skips a column)")
    return parts


def sweep_spec(value: str, option: str = "--sweep") -> tuple[str, list[int]]:
    """``"bpe:4000,8000"`` -> ``("bpe", [4000, 8000])``.

    >>> sweep_spec("bpe:8000,4000")
    ('bpe', [4000, 8000])
    >>> sweep_spec("bpe:4k")
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: bad --sweep 'bpe:4k': '4k' is not a whole number (fix: write ALGO:SIZE,SIZE e.g. --sweep bpe:4000,8000,16000)
    """
    fix = f"write ALGO:SIZE,SIZE e.g. {option} bpe:4000,8000,16000"
    algo, sep, rest = value.partition(":")
    if not sep or not algo:
        raise TokstatError(f"bad {option} {value!r}", fix=fix)
    try:
        return algo, sizes(rest, option)
    except TokstatError as e:    # name the whole spec and its form, not only the sizes part
        raise TokstatError(f"bad {option} {value!r}: {e.message.split(': ', 1)[-1]}", fix=fix) from None


_CORPUS = re.compile(r"(?:^|\|)corpus:([^|]+)")


def corpus_of(signature: str | None) -> str | None:
    """``NAME@HASH`` of a signature's corpus part.

    >>> corpus_of("corpus:sample-zh-en@f2f09ee4|tok:tiktoken/cl100k_base@223921b7|tokstat:0.1.0")
    'sample-zh-en@f2f09ee4'
    """
    m = _CORPUS.search(signature or "")
    return m.group(1) if m else None
