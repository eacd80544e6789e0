"""MorphScore (Arnett & Bergen 2025): do a tokenizer's boundaries fall on morpheme boundaries?

Each item is a word and its split into a first part and the rest (``lighted`` = ``light`` +
``ed``). The word is tokenized alone. A word left whole (one token) is excluded. The reference code
(``morphscore.py`` of catherinearnett/morphscore) decodes every token on its own and asks whether
some token boundary splits the decoded pieces into exactly (first part, rest); MorphScore is the
share of such words. Two things go wrong there, and tokstat gives both the reference number and a
corrected one:

* **bytes** — a byte-level token that ends inside a UTF-8 character decodes to U+FFFD, so the
  pieces never spell the word again and the word scores 0 however it is split (cl100k_base scores
  0.0000 on Armenian as coded). tokstat's default takes the boundaries from the tokens' **byte
  spans** in the word: a word scores 1 when the first part's byte length is one of them.
* **recall only** — a tokenizer that shatters words into bytes has every boundary, the gold one
  included. ``precision`` is the share of a word's token boundaries that are the morpheme boundary
  (pooled over the words), and ``f1`` their harmonic mean.

``compat=True`` applies the reference rule exactly (tokens decoded one by one with the library's
own decoder). Items whose parts do not spell the word (191 Gujarati rows of the published data are
shifted by one row) cannot be scored byte-exactly: they are left out and counted in
``inconsistent``; the reference scores them 0.

>>> score_word(b"lighted", [(0, 5), (5, 7)], 5)     # boundary at 5 = len("light")
(1, 1)
>>> score_word(b"lighted", [(0, 3), (3, 5), (5, 7)], 5)   # found, one of two boundaries
(1, 2)
"""

from __future__ import annotations

import csv
import sys
import os
from pathlib import Path

from .adapters import Adapter, load_tokenizer
from .errors import TokstatError
from .io import read_input, regular_file

#: the data's file stem -> ISO 639-3 (MorphScore's Kurdish is Kurmanji, in Latin script)
LANGUAGES = {"armenian": "hye", "basque": "eus", "bulgarian": "bul", "cebuano": "ceb", "english": "eng",
             "georgian": "kat", "greek": "ell", "gujarati": "guj", "hungarian": "hun", "icelandic": "isl",
             "indonesian": "ind", "irish": "gle", "japanese": "jpn", "korean": "kor", "kurdish": "kmr",
             "persian": "fas", "slovenian": "slv", "spanish": "spa", "tamil": "tam", "turkish": "tur", "urdu": "urd",
             "zulu": "zul"}
COLUMNS = ["tokenizer", "language", "name", "morphscore", "precision", "f1", "items", "whole", "inconsistent", "rule",
           "signature"]


def default_dir() -> Path | None:
    """Where the data is looked for without ``--data``: ``$TOKSTAT_DATA/morphscore``, then ``./morphscore``."""
    for root in ([os.environ["TOKSTAT_DATA"]] if os.environ.get("TOKSTAT_DATA") else []) + ["."]:
        p = Path(root) / "morphscore"
        if p.is_dir():
            return p
    return None


def read_items(path: Path) -> list[tuple[str, str, str, int]]:
    """``(word, first part, rest, line)`` of one ``*_morph_data.csv`` (columns ``full_word``, ``pt1``, ``rest``)."""
    regular_file(path, "MorphScore file")    # a dangling or looping link, a folder: named, with the fix
    data = read_input(path, "MorphScore file")
    try:
        text = data.decode("utf-8-sig", errors="strict")
    except UnicodeDecodeError as e:
        raise TokstatError(f"invalid UTF-8 (byte {data[e.start]:#04x})", path=path, line=data.count(b"\n", 0, e.start) + 1,
                           fix="save the file as UTF-8") from None
    # the same field limit as every other reader of CSV (the module's limit is process-wide): a long
    # field reaches the word-length check below, whatever was imported before
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    rows = csv.reader(text.splitlines())
    try:
        return _items(rows, path)
    except csv.Error as e:     # a NUL byte, a quote left open: not a row of words
        raise TokstatError(f"not a CSV row of words ({e})", path=path, line=rows.line_num,
                           fix=f"a MorphScore item is one word of at most {MAX_WORD:,} characters; fix the row") from None


#: the longest word an item may hold (characters): longer is not a word but a damaged row
MAX_WORD = 1000


def _items(rows, path: Path) -> list[tuple[str, str, str, int]]:
    head = next(rows, None)
    if head is None or not {"full_word", "pt1", "rest"} <= set(head):
        raise TokstatError(f"not a MorphScore file: the header is {head}", path=path,
                           fix="pass the folder of MorphScore's data/*_morph_data.csv (columns full_word, pt1, rest)")
    k = {c: head.index(c) for c in ("full_word", "pt1", "rest")}
    out = []
    for no, r in enumerate(rows, 2):
        if not r:
            continue
        if len(r) != len(head):
            raise TokstatError(f"row has {len(r)} fields, expected {len(head)}", path=path, line=no,
                               fix="quote fields that hold commas")
        w = r[k["full_word"]]
        if len(w) > MAX_WORD:
            raise TokstatError(f"full_word has {len(w):,} characters: not a word", path=path, line=no,
                               fix=f"a MorphScore item is one word of at most {MAX_WORD:,} characters; fix the row")
        for c in ("full_word", "pt1", "rest"):
            bad = next((ch for ch in r[k[c]] if ord(ch) < 32 or 127 <= ord(ch) < 160), None)
            if bad is not None:
                raise TokstatError(f"{c} holds the control character U+{ord(bad):04X}: not part of a word", path=path,
                                   line=no, fix="remove it from the row")
        out.append((w, r[k["pt1"]], r[k["rest"]], no))
    return out


def score_word(word: bytes, spans: list[tuple[int, int]], gold: int) -> tuple[int, int]:
    """``(hit, boundaries)``: whether byte offset ``gold`` is one of the word's internal token
    boundaries, and how many internal boundaries there are (token ends inside the word)."""
    cuts = {e for _, e in spans if 0 < e < len(word)}
    return int(gold in cuts), len(cuts)


def reference_point(pieces: list[str], pt1: str, rest: str) -> int:
    """The reference code's ``morph_eval``: 0 for one token (excluded), 1 when exactly one boundary
    splits the decoded pieces into ``[pt1, rest]``, else -1 (scored 0)."""
    if len(pieces) == 1:
        return 0
    hits = sum(1 for t in range(len(pieces) - 1) if ["".join(pieces[:t + 1]), "".join(pieces[t + 1:])] == [pt1, rest])
    return 1 if hits == 1 else -1


def morphscore(tokenizers: list[str | Adapter], data: str | os.PathLike | None = None, *, compat: bool = False,
               languages: list[str] | None = None):
    """One row per (tokenizer, language): ``morphscore`` (recall of the morpheme boundary),
    ``precision``, ``f1``, ``items`` scored, ``whole`` (left as one token, excluded),
    ``inconsistent`` (parts that do not spell the word: left out byte-exactly, 0 under ``compat``),
    ``rule`` (``bytes`` or ``compat``). ``data``: the folder of ``*_morph_data.csv`` (default
    :func:`default_dir`). A polars DataFrame."""
    import polars as pl

    from ._version import __version__

    d = Path(data) if data is not None else default_dir()
    if d is None or not d.is_dir():
        raise TokstatError(f"no MorphScore data folder{f' {d}' if d else ''}", path=d,
                           fix="pass --data DIR (the data/ folder of catherinearnett/morphscore), or put it at "
                               "$TOKSTAT_DATA/morphscore")
    files = sorted(d.glob("*_morph_data.csv"))
    if not files:
        raise TokstatError("no *_morph_data.csv file in the folder", path=d, fix="pass MorphScore's data/ folder")
    unknown = [f.name for f in files if f.name[: -len("_morph_data.csv")].lower() not in LANGUAGES]
    if unknown:
        raise TokstatError(f"no ISO 639-3 code known for {unknown[0]}", path=d / unknown[0],
                           fix=f"name files by one of {', '.join(sorted(LANGUAGES))}")
    have: dict[str, Path] = {}
    for f in files:         # english_ and ENGLISH_morph_data.csv: one language in two files
        name = f.name[: -len("_morph_data.csv")].lower()
        if name in have:
            raise TokstatError(f"{have[name].name} and {f.name} are both {name} ({LANGUAGES[name]})", path=d,
                               fix="keep one file per language in the folder")
        have[name] = f
    if languages:
        codes = {LANGUAGES[n]: n for n in have}
        missing = [x for x in languages if x not in codes and x.lower() not in have]
        if missing:
            raise TokstatError(f"{', '.join(missing)} not in the data ({', '.join(sorted(codes))})", path=d,
                               fix="use the ISO 639-3 codes of the data's files, e.g. --languages eng,tur")
        names = [codes.get(x, x.lower()) for x in languages]
        twice = [x for x, n in zip(languages, names) if names.count(n) > 1]
        if twice:
            raise TokstatError(f"--languages names {LANGUAGES[codes.get(twice[0], twice[0].lower())]} "
                               f"{len(twice)} times ({', '.join(twice)})", fix="name each language once")
        files = [have[n] for n in names]
    adapters = [t if isinstance(t, Adapter) else load_tokenizer(t) for t in tokenizers]
    rows = []
    for f in files:
        name = f.name[: -len("_morph_data.csv")].lower()
        items = read_items(f)
        words = [w for w, _, _, _ in items]
        for a in adapters:
            enc = a.encode_spans(words)
            hits = cuts = scored = whole = bad = 0
            points = []
            for i, (w, p1, rest, _) in enumerate(items):
                ids, spans = enc.tokens(i), enc.spans(i)
                if compat:
                    p = reference_point([a.decode([t]) for t in ids], p1, rest) if ids else 0
                    points.append(p)
                    bad += int(p1 + rest != w)
                    continue
                if not p1 or not rest or p1 + rest != w:
                    bad += 1
                    continue
                wb = w.encode("utf-8")
                h, c = score_word(wb, spans, len(p1.encode("utf-8")))
                if c == 0:
                    whole += 1
                    continue
                scored += 1
                hits += h
                cuts += c
            if compat:
                kept = [p for p in points if p != 0]
                whole = len(points) - len(kept)
                scored = len(kept)
                ms = sum(p == 1 for p in kept) / scored if scored else None
                prec = f1 = None
            else:
                ms = hits / scored if scored else None
                prec = hits / cuts if cuts else None
                f1 = 2 * ms * prec / (ms + prec) if ms and prec else (0.0 if ms == 0 or prec == 0 else None)
            rows.append({"tokenizer": a.id, "language": LANGUAGES[name], "name": name, "morphscore": ms,
                         "precision": prec, "f1": f1, "items": scored, "whole": whole, "inconsistent": bad,
                         "rule": "compat" if compat else "bytes",
                         "signature": f"morphscore:{name}@{len(items)}|tok:{a.signature}|lib:{a.library_version}|"
                                      f"rule:{'compat' if compat else 'bytes'}|tokstat:{__version__}"})
    return pl.DataFrame(rows, schema={"tokenizer": pl.Utf8, "language": pl.Utf8, "name": pl.Utf8, "morphscore": pl.Float64,
                                      "precision": pl.Float64, "f1": pl.Float64, "items": pl.Int64, "whole": pl.Int64,
                                      "inconsistent": pl.Int64, "rule": pl.Utf8, "signature": pl.Utf8})


__all__ = ["morphscore", "score_word", "reference_point", "LANGUAGES", "COLUMNS"]
