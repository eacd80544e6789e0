"""Word segmenters: gold words (treebanks), jieba for Chinese, MeCab (fugashi + UniDic Lite) for
Japanese, ICU's dictionary word break (icu4py) for Thai, Khmer, Lao and Burmese and its syllables
for Tibetan and Dzongkha, a Unicode regex for space-delimited scripts (Korean included: its words,
eojeol, are space-delimited).

A language's segmenter can be chosen instead (:data:`CHOICES`; ``compare --segmenter LANG=NAME``):
``regex``, ``icu`` (ICU's dictionary word break, any language), ``kiwi`` (Korean morphemes, Kiwi
through kiwipiepy), ``newmm`` (Thai: PyThaiNLP's maximal matching, the default before ICU, which
scores higher against PUD's gold words and loads in a hundredth of the time), or the default. A
choice is used even where the corpus has gold words.

Never whitespace for Chinese, Japanese or Thai. The Japanese and Thai segmenters are the ``words``
extra (``pip install 'tokstat[words]'``); without it a language written without spaces gets no
words unless the corpus has gold words."""

from __future__ import annotations

import functools
import logging

import regex

from .langs import primary

WORD_RE = regex.compile(r"[\p{L}\p{M}\p{N}]+(?:['’\-][\p{L}\p{M}\p{N}]+)*|[^\s\p{L}\p{M}\p{N}]")
NO_SPACES = {"ja", "th", "km", "lo", "my", "bo", "dz"}
#: segmenters for unspaced scripts, by primary language: (distribution, function name)
DICTIONARY = {"ja": ("fugashi", "mecab_words"),
              **{k: ("icu4py", "icu_words") for k in ("th", "km", "lo", "my", "bo", "dz")}}
#: ICU has no Tibetan dictionary: its word break gives syllables (a syllable with its tsheg)
SYLLABLES = {"bo", "dz"}


def regex_words(text: str) -> list[tuple[int, int]]:
    """Letters/digits runs (with inner apostrophes and hyphens) and single punctuation marks.

    >>> regex_words("Don't stop, e-mail!")
    [(0, 5), (6, 10), (10, 11), (12, 18), (18, 19)]
    """
    return [m.span() for m in WORD_RE.finditer(text)]


#: segmenters a language can be given instead of its default: name -> (distribution, languages or None for any)
CHOICES = {"default": (None, None), "regex": (None, None), "icu": ("icu4py", None), "kiwi": ("kiwipiepy", {"ko"}),
           "newmm": ("pythainlp", {"th"})}

_jieba = None


def jieba_words(text: str) -> list[tuple[int, int]]:
    """jieba's default (accurate) mode; whitespace pieces dropped.

    >>> jieba_words("我来到北京清华大学")
    [(0, 1), (1, 3), (3, 5), (5, 9)]
    """
    global _jieba
    if _jieba is None:
        import jieba

        jieba.setLogLevel(logging.WARNING)
        _jieba = jieba.Tokenizer()
        _jieba.initialize()
    out, pos = [], 0
    for piece in _chunks(text):
        for w in _jieba.cut(piece, HMM=True):
            if w.strip():
                out.append((pos, pos + len(w)))
            pos += len(w)
    return out


JIEBA_CHUNK = 500
_BREAK = regex.compile(r"[\s\p{P}]")


def _chunks(text: str, size: int = JIEBA_CHUNK) -> list[str]:
    """``text`` in pieces of at most ``size`` characters, cut after the last space or punctuation
    mark of each window (hard at ``size`` in a longer unbroken run). jieba's search is quadratic in
    the length of an unbroken run of Han characters (100,000 × 甲 takes about a minute); pieces keep
    it linear. Texts of at most ``size`` characters are one piece, so ordinary sentences segment
    exactly as jieba segments them.

    >>> [len(p) for p in _chunks("甲" * 1200)]
    [500, 500, 200]
    >>> _chunks("短句。")
    ['短句。']
    """
    if len(text) <= size:
        return [text]
    out, start = [], 0
    while len(text) - start > size:
        window = text[start:start + size]
        cut = max((m.end() for m in _BREAK.finditer(window)), default=0) or size
        out.append(text[start:start + cut])
        start += cut
    out.append(text[start:])
    return out


def _locate(text: str, words) -> list[tuple[int, int]]:
    """Spans of ``words`` found left to right in ``text`` (whitespace pieces skipped)."""
    return gold_spans(text, [w for w in words if w.strip()])


_mecab = None


def mecab_words(text: str) -> list[tuple[int, int]]:
    """Japanese words: MeCab's surface forms with UniDic Lite (fugashi), in pieces of at most 500
    characters (linear on long texts).

    >>> mecab_words("私は東京の大学で勉強しています。")[:4]
    [(0, 1), (1, 2), (2, 4), (4, 5)]
    """
    global _mecab
    if _mecab is None:
        import fugashi

        _mecab = fugashi.Tagger()
    out, pos = [], 0
    for piece in _chunks(text):
        out += [(a + pos, b + pos) for a, b in _locate(piece, (w.surface for w in _mecab(piece)))]
        pos += len(piece)
    return out


def thai_words(text: str) -> list[tuple[int, int]]:
    """Thai words: PyThaiNLP's dictionary maximal-matching ``newmm`` (its default engine).

    >>> thai_words("ฉันรักภาษาไทย")
    [(0, 3), (3, 6), (6, 13)]
    """
    from pythainlp.tokenize import word_tokenize

    out, pos = [], 0
    for piece in _chunks(text):
        out += [(a + pos, b + pos) for a, b in _locate(piece, word_tokenize(piece, engine="newmm"))]
        pos += len(piece)
    return out


def icu_words(text: str, lang: str = "km") -> list[tuple[int, int]]:
    """Words from ICU's dictionary-based word break (icu4py: ICU's own library in the wheel), for
    Khmer, Lao and Burmese; for Tibetan and Dzongkha, which ICU has no dictionary for, syllables,
    each with the tsheg (་) or shad that follows it. Whitespace pieces are dropped.

    >>> icu_words("ຂ້ອຍຮັກພາສາລາວ", "lo")
    [(0, 4), (4, 7), (7, 11), (11, 14)]
    >>> icu_words("བོད་ཀྱི་", "bo")
    [(0, 4), (4, 8)]
    """
    from icu4py.breakers import WordBreaker

    out: list[tuple[int, int]] = []
    for a, b in WordBreaker(text, lang).segments():
        piece = text[a:b]
        if not piece.strip():
            continue
        if lang in SYLLABLES and out and out[-1][1] == a and all(c in "་༌།༎" for c in piece):
            out[-1] = (out[-1][0], b)      # the tsheg closes the syllable before it
        else:
            out.append((a, b))
    return out


@functools.lru_cache(maxsize=None)
def _have(dist: str) -> str | None:
    """The installed version of ``dist``, or None (looked up once per process: reading a package's
    metadata takes about a millisecond, once per text it was most of a run's time)."""
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


#: every code point Python counts as whitespace (``str.isspace``)
_WS = None
#: from this many words on, :func:`gold_spans` first tries the vectorised layout check
GOLD_VECTOR_MIN = 256


def _tiled_spans(text: str, words: list[str]) -> list[tuple[int, int]] | None:
    """The spans of ``words`` when the text is exactly the words in order with whitespace between
    them (what a treebank sentence, or sentences joined by spaces, is); None otherwise. Each word then
    starts where the text's non-whitespace characters reach the characters of the words before it,
    which is where :func:`gold_spans` finds it: a word holds no whitespace, so no occurrence of it
    can start inside the whitespace before it."""
    import numpy as np

    global _WS
    if _WS is None:
        _WS = np.array([c for c in range(0x3100) if chr(c).isspace()], dtype=np.uint32)
    lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    if not len(words) or (lens == 0).any():
        return None
    cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    keep = np.flatnonzero(~np.isin(cps, _WS))
    if len(keep) != int(lens.sum()):
        return None
    joined = np.frombuffer("".join(words).encode("utf-32-le"), dtype=np.uint32)
    if np.isin(joined, _WS).any() or not np.array_equal(cps[keep], joined):
        return None
    ends = np.cumsum(lens)
    a, b = keep[ends - lens], keep[ends - 1] + 1
    return list(zip(a.tolist(), b.tolist()))


def gold_spans(text: str, words: list[str]) -> list[tuple[int, int]]:
    """Locate gold words in the text, left to right (words the text does not contain are skipped).

    >>> gold_spans("Ich ging zum Markt.", ["Ich", "ging", "zum", "Markt", "."])
    [(0, 3), (4, 8), (9, 12), (13, 18), (18, 19)]
    """
    if len(words) >= GOLD_VECTOR_MIN:
        tiled = _tiled_spans(text, words)
        if tiled is not None:
            return tiled
    return find_spans(text, words)


def find_spans(text: str, words: list[str]) -> list[tuple[int, int]]:
    """:func:`gold_spans` one ``str.find`` at a time, for any text (the reference the vectorised
    layout check is tested against).

    >>> find_spans("a  b c", ["a", "x", "b"])
    [(0, 1), (3, 4)]
    """
    out, pos = [], 0
    for w in words:
        i = text.find(w, pos)
        if i < 0:
            continue
        out.append((i, i + len(w)))
        pos = i + len(w)
    return out


def check_choice(lang: str, choice: str) -> None:
    """A chosen segmenter exists, fits the language and is installed; else an error naming the fix."""
    from .errors import TokstatError

    if choice not in CHOICES:
        raise TokstatError(f"unknown segmenter {choice!r} for {lang}", fix=f"choose one of: {', '.join(CHOICES)}")
    dist, langs = CHOICES[choice]
    if langs is not None and primary(lang) not in langs:
        raise TokstatError(f"the {choice} segmenter is for {', '.join(sorted(langs))}, not {lang}",
                           fix=f"drop --segmenter {lang}={choice}")
    if dist is not None and _have(dist) is None:
        raise TokstatError(f"the {choice} segmenter needs {dist}, which is not installed",
                           fix="pip install 'tokstat[words]'")


def segmenter_name(lang: str, gold: bool, choice: str | None = None) -> str | None:
    """The name that goes into the signature (``gold``, ``jieba-0.42.1``, ``regex``) or None;
    ``choice`` (:data:`CHOICES`) instead of the default.

    >>> segmenter_name("en", False), segmenter_name("en", True), segmenter_name("en", True, "regex")
    ('regex', 'gold', 'regex')
    """
    if choice is not None and choice != "default":
        check_choice(lang, choice)
        if choice == "regex":
            return "regex"
        if choice == "icu":
            from icu4py._version import icu_version

            return f"icu-{icu_version}" + ("-syllables" if primary(lang) in SYLLABLES else "")
        if choice == "newmm":
            return f"pythainlp-newmm-{_have('pythainlp')}"
        return f"kiwi-{_have('kiwipiepy')}-morphemes"
    if gold:
        return "gold"
    p = primary(lang)
    if p in ("zh", "yue", "wuu"):
        import jieba

        return f"jieba-{jieba.__version__}"
    if p in DICTIONARY:
        dist = DICTIONARY[p][0]
        v = _have(dist)
        if v is not None:
            if p == "ja":
                return f"fugashi-{v}+unidic-lite-{_have('unidic-lite')}"
            from icu4py._version import icu_version

            return f"icu-{icu_version}" + ("-syllables" if p in SYLLABLES else "")
        _warn_missing(lang, dist)
        return None
    if p in NO_SPACES:
        return None
    return "regex"


_warned: set[str] = set()


def _warn_missing(lang: str, dist: str) -> None:
    if lang not in _warned:
        import warnings

        _warned.add(lang)
        warnings.warn(f"{lang}: no word segmenter installed ({dist}): its words and tokens per word are null "
                      "(pip install 'tokstat[words]')", stacklevel=3)


_kiwi = None


def kiwi_words(text: str) -> list[tuple[int, int]]:
    """Korean morphemes from Kiwi (kiwipiepy), as spans of the text: morphemes that share characters
    (a contraction: 했 = 하 + 었) are one span, so spans never overlap.

    >>> kiwi_words("저는 공부합니다.")
    [(0, 1), (1, 2), (3, 5), (5, 8), (8, 9)]
    """
    global _kiwi
    if _kiwi is None:
        from kiwipiepy import Kiwi

        _kiwi = Kiwi()
    out: list[tuple[int, int]] = []
    pos = 0
    for piece in _chunks(text):
        for tok in _kiwi.tokenize(piece):
            a, b = tok.start + pos, tok.start + tok.len + pos
            if not text[a:b].strip():
                continue
            if out and a < out[-1][1]:
                out[-1] = (out[-1][0], max(b, out[-1][1]))
            else:
                out.append((a, b))
        pos += len(piece)
    return out


#: segmenters whose dictionary is loaded once, before workers are forked (they inherit it), and a
#: text of their script that loads it; kiwi is not among them (its model keeps a thread pool, which
#: a fork does not carry over)
WARM = {"jieba": "预热", "pythainlp": "ภาษาไทย", "fugashi": "日本語"}


def warm(names: dict[str, str | None]) -> list[str]:
    """Load the dictionaries of the segmenters in ``names`` (language -> :func:`segmenter_name`) that
    :data:`WARM` lists, in this process: forked workers then share them instead of each building its
    own (PyThaiNLP's trie costs 0.7 CPU s a process, jieba's dictionary 0.5). Returns the names loaded.

    >>> warm({"en": "regex", "de": None, "zh": "gold"})
    []
    """
    done = []
    for lang, name in names.items():
        if not name or name in done:
            continue
        text = next((t for prefix, t in WARM.items() if name.startswith(prefix)), None)
        if text is not None:
            word_spans(lang, text, None, name)
            done.append(name)
    return done


def word_spans(lang: str, text: str, gold: list[str] | None, name: str | None = None) -> list[tuple[int, int]] | None:
    """The words of ``text`` as character spans, by the segmenter ``name`` (:func:`segmenter_name`;
    by default the language's own)."""
    if name is None or (name == "gold" and gold is None):     # a segment without gold words: the default
        name = segmenter_name(lang, gold is not None)
    if name is None:
        return None
    if name == "gold":
        return gold_spans(text, gold)
    if name.startswith("jieba"):
        return jieba_words(text)
    if name.startswith("fugashi"):
        return mecab_words(text)
    if name.startswith("pythainlp"):
        return thai_words(text)
    if name.startswith("icu"):
        return icu_words(text, primary(lang))
    if name.startswith("kiwi"):
        return kiwi_words(text)
    return regex_words(text)
