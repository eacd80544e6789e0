"""gettext catalogues (``.po`` and compiled ``.mo``): ``msgid`` (source language) -> ``msgstr``.

One file gives a two-language corpus; a folder of catalogues (``zh_CN.po``, ``ja.po`` or
``<lang>/LC_MESSAGES/<domain>.mo``) is aligned on ``msgid``. Untranslated, fuzzy and obsolete
entries are skipped; plural entries use the singular ``msgid`` and ``msgstr[0]``.
"""

from __future__ import annotations

import struct
from pathlib import Path

import polib

from ..corpus import Corpus, Segment, nfc
from ..errors import TokstatError
from ..langs import normalize_lang


def catalogue_language(path: Path, cat: polib._BaseFile) -> str:
    """The ``Language:`` header, else the file stem (``zh_CN.po``), else the locale folder."""
    lang = (cat.metadata.get("Language") or "").strip()
    if not lang:
        lang = path.stem if path.parent.name != "LC_MESSAGES" else path.parent.parent.name
    return normalize_lang(lang.split(".")[0].split("@")[0], source=path)


def read_catalogue(path: Path) -> polib._BaseFile:
    if not path.exists():
        raise TokstatError("file not found", path=path, fix="check the path")
    try:
        return polib.mofile(str(path)) if path.suffix == ".mo" else polib.pofile(str(path))
    except (OSError, ValueError, UnicodeDecodeError, struct.error, IndexError) as e:
        msg = str(e) if not isinstance(e, (struct.error, IndexError)) else f"truncated or damaged file ({e})"
        line = None
        if "line" in msg:
            tail = msg.rsplit("line", 1)[1].strip(" .:)")
            line = int(tail) if tail.isdigit() else None
        raise TokstatError(f"malformed gettext catalogue: {msg}", path=path, line=line,
                           fix="check it with `msgfmt --check`") from None


def entries(cat: polib._BaseFile) -> dict[str, str]:
    out = {}
    for e in cat:
        if e.obsolete or "fuzzy" in e.flags or not e.msgid:
            continue
        text = e.msgstr or (e.msgstr_plural.get(0) if e.msgstr_plural else "")
        if text:
            key = (e.msgctxt + "\x04" if e.msgctxt else "") + e.msgid
            out[key] = text
    return out


def load_gettext(paths: list[Path], *, source_lang: str = "en") -> Corpus:
    """Catalogues -> corpus with ``source_lang`` (the msgids) plus one language per catalogue."""
    cats = {}
    for p in sorted(paths):
        cat = read_catalogue(p)
        lang = catalogue_language(p, cat)
        if lang == source_lang:
            continue
        cats[lang] = (p, cat)
    if not cats:
        raise TokstatError("no translated catalogue found", path=paths[0] if paths else None,
                           fix="point at a .po/.mo file whose Language is not the source language")
    langs = [source_lang, *cats]
    tables = {lang: entries(cat) for lang, (_, cat) in cats.items()}

    def gen():
        first = langs[1]
        for key, text in tables[first].items():
            msgid = key.split("\x04", 1)[-1]
            texts = {source_lang: nfc(msgid), first: nfc(text)}
            for lang in langs[2:]:
                texts[lang] = nfc(tables[lang].get(key, ""))
            yield Segment(key, texts)

    return Corpus(paths[0].stem if len(paths) == 1 else paths[0].parent.name, langs, gen,
                  [p for p, _ in cats.values()], {"loader": "gettext", "source": source_lang})
