"""The corpus model: a stream of aligned segments, each with a text per language and optional gold words.

Data flow: corpus -> segments -> tokenizer adapter -> per-segment counts -> metrics -> cost -> report.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Segment:
    """One aligned unit: ``texts[lang]`` is NFC text, ``words[lang]`` the gold words where known."""

    id: str
    texts: dict[str, str]
    words: dict[str, list[str]] = field(default_factory=dict)


def nfc(text: str) -> str:
    """NFC-normalise (counts are on NFC text by default: ``chars`` are its code points)."""
    return unicodedata.normalize("NFC", text)


NORMALIZATIONS = ("nfc", "nfkc", "none")


def unsettled(form: str) -> str:
    """An RE2 pattern (Arrow's ``match_substring_regex``) that finds every text ``unicodedata.normalize``
    would change under ``form`` (``NFC`` or ``NFKC``): a text it does not match is already normalised,
    so a columnar pass normalises only the texts it matches (it may match a few that stay as they
    are: they are normalised and found unchanged). Read from ``data/unsettled.json`` when written for
    this Python's Unicode version (``unicodedata.unidata_version``), else derived here (about 0.4 s):
    see :func:`derive_unsettled`.

    >>> import pyarrow as pa, pyarrow.compute as pc
    >>> pc.match_substring_regex(pa.array(["e\u0301", "\u00e9", "你好", "\u0928\u093c", "\u0915\u093c"]),
    ...                          unsettled("NFC")).to_pylist()
    [True, False, False, True, False]
    """
    import json

    table = Path(__file__).parent / "data" / "unsettled.json"
    try:
        d = json.loads(table.read_text(encoding="utf-8"))
        if d["unidata_version"] == unicodedata.unidata_version:
            return d[form.lower()]
    except (OSError, ValueError, KeyError):
        pass
    return derive_unsettled(form)


def derive_unsettled(form: str) -> str:
    """:func:`unsettled` derived from ``unicodedata`` (UAX #15). A text with no character that ``form``
    changes on its own is in ``form`` unless (1) its canonical decomposition is out of order — a
    character whose decomposition ends in a mark of class ``t`` right before a mark of class
    ``0 < c < t`` — or (2) a character composes with what precedes it: the second character of a
    canonical pair that ``form`` composes, after the pair's first character with only marks in between
    (the Hangul vowel and trailing jamo after a leading jamo or a syllable). The pattern is three
    alternatives, each a superset of its case: a character changed alone; a character ending in a
    mark, then a mark; a first character of a composing pair, marks, a second character. Three
    alternatives keep RE2 on its DFA (the pattern of every case spelt out exactly, about 160
    alternatives, compiled in 0.2 s and scanned more slowly than unicodedata reads)."""
    norm, comb, dec = unicodedata.normalize, unicodedata.combining, unicodedata.decomposition
    alone: set[int] = set()
    ccc: dict[int, int] = {}
    tail: dict[int, int] = {}                 # class of the last character of the canonical decomposition
    firsts: dict[int, set[int]] = {c: set(range(0x1100, 0x1113)) for c in range(0x1161, 0x1176)}
    firsts.update({c: set(range(0xAC00, 0xD7A4)) for c in range(0x11A8, 0x11C3)})
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue
        ch = chr(c)
        if norm(form, ch) != ch:
            alone.add(c)
        if comb(ch):
            ccc[c] = comb(ch)
        t = comb(norm("NFD", ch)[-1])
        if t:
            tail[c] = t
        d = dec(ch)
        if d and d[0] != "<" and len(p := d.split()) == 2:
            x, y = int(p[0], 16), int(p[1], 16)
            if norm(form, chr(x) + chr(y)) != chr(x) + chr(y):
                firsts.setdefault(y, set()).add(x)
    marks = set(ccc)
    parts = [_re_class(alone), _re_class(set(tail)) + _re_class(marks),
             _re_class(set().union(*firsts.values())) + _re_class(marks) + "*" + _re_class(set(firsts))]
    return "|".join(parts)


def _re_class(cs: set[int]) -> str:
    """An RE2 character class of code points ``cs``, as ranges.

    >>> print(_re_class({0x300, 0x301, 0x302, 0x41}))
    [\\x{41}\\x{300}-\\x{302}]
    """
    out, run = [], None
    for c in sorted(cs):
        if run and c == run[1] + 1:
            run[1] = c
            continue
        if run:
            out.append(run)
        run = [c, c]
    if run:
        out.append(run)
    return "[" + "".join(f"\\x{{{a:x}}}" + (f"-\\x{{{b:x}}}" if b > a else "") for a, b in out) + "]"


def normalizer(form: str):
    """The text normalisation of ``--normalize``: ``nfc`` (default), ``nfkc`` or ``none`` (the raw text);
    ``FORM+strip`` (``--strip``) then strips each text's leading and trailing whitespace (Python's
    ``str.strip``: every Unicode white space), as FLORES+ and TokSuite's loaders do.

    >>> normalizer("nfkc")("ｆｕｌｌ①"), normalizer("none")("e\u0301") == "e\u0301"
    ('full1', True)
    >>> normalizer("nfc+strip")("  a b  ")
    'a b'
    """
    from .errors import TokstatError

    if form.endswith("+strip"):
        inner = normalizer(form[: -len("+strip")])
        return lambda t: inner(t).strip()
    if form == "nfc":
        return nfc
    if form == "nfkc":
        return lambda t: unicodedata.normalize("NFKC", t)
    if form == "none":
        return lambda t: t
    raise TokstatError(f"unknown normalisation {form!r}", fix=f"use --normalize {'|'.join(NORMALIZATIONS)}")


@dataclass
class Corpus:
    """A named, re-iterable stream of segments.

    ``factory`` returns a fresh iterator each time, so a corpus can be read twice without holding it
    in memory. ``sources`` are the files read (hashed for the signature) and ``meta`` the loader options.
    """

    name: str
    languages: list[str]
    factory: Callable[[], Iterable[Segment]]
    sources: list[Path] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    gold_words: frozenset[str] = frozenset()
    #: optional loader hook that re-opens the source reading only some languages (CoNLL-U: fewer files)
    narrow: Callable[[list[str]], Corpus] | None = None
    #: independently readable parts (one per file of a sharded corpus), read in this order by ``factory``
    shards: list[Corpus] | None = None

    #: the corpus this one is a language selection of (it shares that corpus's fingerprint)
    parent: Corpus | None = field(default=None, repr=False)
    _fingerprint: str | None = field(default=None, repr=False)
    #: the number of segments, known once the fingerprint pass has read them all (progress totals)
    size: int | None = field(default=None, repr=False)

    def __iter__(self) -> Iterator[Segment]:
        return iter(self.factory())

    @property
    def kind(self) -> str:
        """``parallel`` (aligned segments: premiums) or ``monolingual`` (documents, each in one language)."""
        return self.meta.get("kind", "parallel")

    def fingerprint(self) -> str:
        """The content's sha256 (:func:`content_fingerprint`), computed once: the same segments give
        the same fingerprint in every file format; a language selection has its corpus's."""
        if self._fingerprint is None:
            if self.parent is not None:
                self._fingerprint = self.parent.fingerprint()
                self.size = self.parent.size if self.size is None else self.size   # a held-out part knows its own
            else:
                n = 0

                def counted():
                    nonlocal n
                    for seg in self:
                        n += 1
                        yield seg
                self._fingerprint = content_fingerprint(counted(), self.languages)
                self.size = n
        return self._fingerprint

    def select(self, languages: list[str]) -> Corpus:
        """A view restricted to ``languages`` (error when one is absent)."""
        from .errors import TokstatError
        from .langs import resolve

        # a language named as the corpus names it, or by a code that names one of its languages (eng, en for en-US)
        languages = [resolve(lang, self.languages) or lang for lang in languages]
        dup = sorted({lang for lang in languages if list(languages).count(lang) > 1})
        if dup:
            raise TokstatError(f"language(s) {', '.join(dup)} given twice", fix="name each language once")
        missing = [lang for lang in languages if lang not in self.languages]
        if missing:
            raise TokstatError(f"language(s) {', '.join(missing)} not in corpus {self.name}",
                               fix=f"choose from {', '.join(self.languages)}")
        if self.narrow is not None:
            c = self.narrow(list(languages))
            c.name, c.meta, c.parent = self.name, self.meta, self
            return c
        parent = self.factory

        def gen():
            for s in parent():
                yield Segment(s.id, {k: v for k, v in s.texts.items() if k in languages},
                              {k: v for k, v in s.words.items() if k in languages})

        return Corpus(self.name, list(languages), gen, self.sources, self.meta,
                      frozenset(self.gold_words & set(languages)),
                      shards=[s.select(languages) for s in self.shards] if self.shards else None, parent=self)


def heads_by_language(corpus: Corpus, languages: list[str], per_language: int,
                      max_segments: int = 50_000) -> dict[str, list[str]]:
    """Up to ``per_language`` non-empty texts of every language from the head of the corpus (of each
    shard, for a sharded corpus, so that languages kept in separate files are all covered); at most
    ``max_segments`` segments are read in all."""
    got: dict[str, list[str]] = {lang: [] for lang in languages}
    parts = getattr(corpus, "shards", None) or [corpus]
    budget = max_segments
    for part in parts:
        for seg in part:
            budget -= 1
            for lang, t in seg.texts.items():
                if lang in got and t and len(got[lang]) < per_language:
                    got[lang].append(t)
            if budget <= 0 or all(len(v) >= per_language for v in got.values()):
                break
        if budget <= 0:
            break
    return got


def content_fingerprint(segments: Iterable[Segment], languages: list[str]) -> str:
    """sha256 of the segments in order: each segment's id, and per language (sorted) its code, its
    NFC text and its gold words, as one JSON line. Content only: the file format, file names and
    loader options do not enter, so a corpus saved as TSV, JSONL or Parquet has one fingerprint.

    >>> a = [Segment("1", {"en": "Hi", "zh": "你好"})]
    >>> content_fingerprint(a, ["en", "zh"]) == content_fingerprint(a, ["zh", "en"])
    True
    >>> content_fingerprint(a, ["en", "zh"])[:12]
    'f169c50145a9'
    """
    import json

    langs = sorted(languages)
    h = hashlib.sha256()
    buf: list[str] = []
    for s in segments:
        buf.append(json.dumps([s.id, [[lang, s.texts.get(lang, ""), s.words.get(lang)] for lang in langs]],
                              ensure_ascii=False))
        if len(buf) >= 4096:
            h.update(("\n".join(buf) + "\n").encode("utf-8", "surrogatepass"))
            buf.clear()
    if buf:
        h.update(("\n".join(buf) + "\n").encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def normalized(corpus: Corpus, form: str = "nfc") -> Corpus:
    """The corpus with every text and gold word normalised by ``form`` (:func:`normalizer`), applied
    once, as segments stream (shards and language selections too); ``meta["normalize"]`` records it
    (signatures say ``norm:FORM``)."""
    f = normalizer(form)
    inner = corpus.factory

    def gen():
        for s in inner():
            yield Segment(s.id, {k: f(v) for k, v in s.texts.items()},
                          {k: [f(w) for w in ws] for k, ws in s.words.items()} if s.words else {})

    narrow = corpus.narrow
    return Corpus(corpus.name, corpus.languages, gen, corpus.sources, {**corpus.meta, "normalize": form},
                  corpus.gold_words, narrow=(lambda keep: normalized(narrow(keep), form)) if narrow else None,
                  shards=[normalized(sh, form) for sh in corpus.shards] if corpus.shards else None)


@dataclass
class CorpusInfo:
    """Per-language totals for ``tokstat corpus info``: ``kind``, and per language ``segments``
    (a monolingual corpus's documents in that language) with text, ``empty`` ones, ``chars``, ``bytes``."""

    name: str
    segments: int
    per_language: dict[str, dict[str, int]]
    kind: str = "parallel"
    #: what produced the language codes: the corpus's labels (which) or identification (which identifier)
    languages_from: str = "labels"

    def records(self) -> list[dict]:
        """One record per language, for scripts (``corpus info --json``)."""
        unit = "documents" if self.kind == "monolingual" else "segments"
        return [{"language": lang, unit: d["segments"] + (d["empty"] if self.kind == "monolingual" else 0),
                 "empty": d["empty"], "characters": d["chars"], "bytes": d["bytes"], "kind": self.kind,
                 "languages_from": self.languages_from}
                for lang, d in self.per_language.items()]


def languages_from(corpus: Corpus) -> str:
    """Whether labels or identification produced ``corpus``'s languages, in words.

    >>> languages_from(Corpus("c", [], ["en"], meta={"lang_col": "language"}))
    "labels: column 'language'"
    """
    meta = corpus.meta or {}
    mode = meta.get("lang_id") or "off"
    if mode != "off":
        from .langid import MODEL, THRESHOLD

        unit = "document" if mode == "doc" else "sentence span"
        return (f"identification (--lang-id {mode}): one language per {unit} by fastText lid.176 ({MODEL}), "
                f"und below {THRESHOLD:.0%} confidence")
    if meta.get("lang_col"):
        return f"labels: column {meta['lang_col']!r}"
    if meta.get("doc_lang"):
        return f"labels: --lang {meta['doc_lang']}"
    if corpus.kind == "monolingual":
        return "labels: file or folder names"
    return "labels: the corpus's language columns or files"


def corpus_info(corpus: Corpus) -> CorpusInfo:
    """Count segments, non-empty segments, empty segments, characters and bytes per language; in a
    monolingual corpus a document counts for its own language only (``und``: unidentified)."""
    per = {lang: {"segments": 0, "empty": 0, "chars": 0, "bytes": 0} for lang in corpus.languages}
    mono = corpus.kind == "monolingual"
    n = 0
    for seg in corpus:
        n += 1
        for lang in (seg.texts if mono else corpus.languages):
            if lang not in per:
                continue
            t = seg.texts.get(lang, "")
            d = per[lang]
            if t.strip():
                d["segments"] += 1
                d["chars"] += len(t)
                d["bytes"] += len(t.encode("utf-8", "surrogatepass"))
            else:
                d["empty"] += 1
    return CorpusInfo(corpus.name, n, per, corpus.kind, languages_from(corpus))
