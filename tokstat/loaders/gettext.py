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


def catalogue_domain(path: Path, lang: str) -> str:
    """The text domain of a catalogue: its file stem (``LC_MESSAGES/coreutils.mo`` -> ``coreutils``),
    or ``""`` when the stem names its language (``zh_CN.po`` in a folder of one domain)."""
    try:
        if normalize_lang(path.stem.split(".")[0].split("@")[0]) == lang:
            return ""
    except TokstatError:
        pass
    return path.stem


def load_gettext(paths: list[Path], *, source_lang: str = "en") -> Corpus:
    """Catalogues -> corpus: ``source_lang`` (the msgids) plus one language per catalogue language.

    A whole locale tree (``LANG/LC_MESSAGES/DOMAIN.mo``, many domains and languages) loads as the
    union of its domains per language, aligned on (domain, msgctxt, msgid); a message translated in
    only some languages is empty in the others (counted, not dropped). Two catalogues of one
    language and domain (``zh.po`` and ``zh_CN.po``) are an error naming both.
    """
    cats: dict[tuple[str, str], tuple[Path, object]] = {}
    for p in sorted(paths):
        cat = read_catalogue(p)
        lang = catalogue_language(p, cat)
        if lang == source_lang:
            continue
        key = (lang, catalogue_domain(p, lang))
        if key in cats:
            raise TokstatError(f"two catalogues for language {lang}{f' and domain {key[1]}' if key[1] else ''}: "
                               f"{cats[key][0]} and {p}", path=p, fix="keep one catalogue per language (and domain)")
        cats[key] = (p, cat)
    if not cats:
        raise TokstatError("no translated catalogue found", path=paths[0] if paths else None,
                           fix="point at a .po/.mo file whose Language is not the source language")
    tlangs = list(dict.fromkeys(lang for lang, _ in cats))
    langs = [source_lang, *tlangs]
    # (lang) -> {segment key: text}; a segment key is DOMAIN::CTX\x04MSGID (no DOMAIN:: for one-domain sets)
    tables: dict[str, dict[str, str]] = {lang: {} for lang in tlangs}
    msgids: dict[str, str] = {}
    for (lang, domain), (_, cat) in cats.items():
        for k, text in entries(cat).items():
            key = f"{domain}::{k}" if domain else k
            tables[lang][key] = text
            msgids.setdefault(key, k.split("\x04", 1)[-1])

    def gen():
        for key, msgid in msgids.items():
            texts = {source_lang: nfc(msgid)}
            for lang in tlangs:
                texts[lang] = nfc(tables[lang].get(key, ""))
            yield Segment(key, texts)

    return Corpus(paths[0].stem if len(paths) == 1 else paths[0].parent.name, langs, gen,
                  [p for p, _ in cats.values()], {"loader": "gettext", "source": source_lang})
