"""A directory of one file per language, aligned by line (``en.txt``, ``zh.txt``; FLORES ``eng_Latn.dev``)."""

from __future__ import annotations

from pathlib import Path

from ..corpus import Corpus, Segment
from ..errors import TokstatError
from ..io import regular_file
from ..langs import normalize_lang, normalize_langs
from .textio import read_lines

SUFFIXES = {".txt", ".dev", ".devtest", ".test", ".train", ""}


def file_code(p: Path, langmap: dict[str, str] | None = None) -> str:
    """The part of a file's name that is its language: the first dot-separated part of the name
    (``eng_Latn.devtest``, ``zh.txt``), else the first later part that is a language code (NTREX's
    ``newstest2019-ref.afr.txt``); an unknown code is an error naming the file.

    >>> file_code(Path("eng_Latn.devtest")), file_code(Path("newstest2019-ref.zho-TW.txt")), file_code(Path("zh"))
    ('eng_Latn', 'zho-TW', 'zh')
    """
    parts = p.name.split(".")
    if p.suffix.lower() in SUFFIXES - {""} and len(parts) > 1:
        parts = parts[:-1]
    if parts[0] in (langmap or {}):
        return parts[0]
    for part in parts:
        try:
            normalize_lang(part)
        except TokstatError:
            continue
        return part
    normalize_lang(parts[0], source=p)    # the error names the file and its first part
    return parts[0]


def language_files(directory: Path, langmap: dict[str, str] | None = None) -> dict[str, Path]:
    """Map language code -> file: the file stem is the language (``eng_Latn.dev`` -> ``en``).

    ``langmap`` overrides the code for a stem, e.g. ``{"cmn": "zh-Hant"}``. Two files of one
    language (``en.txt`` and ``eng_Latn.txt``; NTREX's two Spanish references) are an error naming both.
    """
    files: dict[str, Path] = {}
    cands = [p for p in sorted(directory.iterdir())
             if not p.is_dir() and not p.name.startswith(".") and p.suffix.lower() in SUFFIXES and p.name.lower() != "readme"]
    for p in cands:   # a language's file that is a FIFO, a device or a broken link is an error, never an absence
        regular_file(p, "language file")
    stems = [file_code(p, langmap) for p in cands]
    codes = normalize_langs([s for s in stems if s not in (langmap or {})], source=directory)
    for p, stem in zip(cands, stems):
        lang = (langmap or {}).get(stem) or codes[stem]
        if lang in files:
            raise TokstatError(f"two files for language {lang}: {files[lang].name} and {p.name}",
                               path=directory, fix=f"move one of them out of {directory.name}/ (tokstat never merges two "
                               "files of one language)")
        files[lang] = p
    if not files:
        raise TokstatError("no language files found", path=directory,
                           fix="name files by language code, e.g. en.txt and zh.txt")
    return files


def load_textdir(directory: Path, *, langmap: dict[str, str] | None = None,
                 encoding_errors: str = "strict") -> Corpus:
    """Load line-aligned files; unequal line counts raise an error naming both counts."""
    files = language_files(directory, langmap)
    langs = list(files)

    def gen():
        iters = {lang: read_lines(p, errors=encoding_errors) for lang, p in files.items()}
        n = 0
        while True:
            row, ended = {}, []
            for lang, it in iters.items():
                item = next(it, None)
                if item is None:
                    ended.append(lang)
                else:
                    row[lang] = item[1]
            if ended and len(ended) < len(langs):
                counts = {lang: n + (0 if lang in ended else 1 + sum(1 for _ in iters[lang]))
                          for lang in langs}
                short, long_ = min(counts, key=counts.get), max(counts, key=counts.get)
                raise TokstatError(
                    f"files have different line counts: {files[short].name} has {counts[short]}, "
                    f"{files[long_].name} has {counts[long_]}", path=files[short],
                    fix="make every language file hold one aligned segment per line")
            if ended:
                return
            n += 1
            yield Segment(str(n), row)

    return Corpus(directory.name, langs, gen, list(files.values()), {"loader": "textdir"})
