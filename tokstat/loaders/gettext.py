"""gettext catalogues (``.po`` and compiled ``.mo``): ``msgid`` (source language) -> ``msgstr``.

One file gives a two-language corpus; a folder of catalogues (``zh_CN.po``, ``ja.po`` or
``<lang>/LC_MESSAGES/<domain>.mo``) is aligned on ``msgid``. Untranslated, fuzzy and obsolete
entries are skipped; plural entries use the singular ``msgid`` and ``msgstr[0]``.
"""

from __future__ import annotations

import re

import struct
from pathlib import Path

import polib

from ..corpus import Corpus, Segment
from ..errors import TokstatError
from ..io import regular_file
from ..langs import normalize_lang, normalize_langs


#: gettext locale modifiers that name a script (``sr@latin``)
SCRIPT_MODIFIERS = {"latin": "Latn", "cyrillic": "Cyrl", "arabic": "Arab", "devanagari": "Deva", "hebrew": "Hebr"}


def locale_tag(locale: str) -> str:
    """A gettext/POSIX locale name as a BCP-47 tag: charset dropped, a script modifier kept.

    >>> locale_tag("sr_RS@latin"), locale_tag("zh_CN.UTF-8"), locale_tag("ca@valencia"), locale_tag("de_DE@euro")
    ('sr-Latn-RS', 'zh-CN', 'ca-valencia', 'de-DE')
    """
    base, _, mod = locale.strip().partition("@")
    parts = base.split(".")[0].replace("_", "-").split("-")
    if mod.lower() in SCRIPT_MODIFIERS:
        parts.insert(1, SCRIPT_MODIFIERS[mod.lower()])
    elif 5 <= len(mod) <= 8 and mod.isalnum():
        parts.append(mod.lower())          # a BCP-47 variant (valencia)
    return "-".join(p for p in parts if p)


def catalogue_locale(path: Path, cat: polib._BaseFile) -> str:
    """The raw locale of a catalogue: its ``Language:`` header, else the file stem (``zh_CN.po``),
    else the locale folder (``zh_CN/LC_MESSAGES/x.mo``); checked to be a language code."""
    lang = (cat.metadata.get("Language") or "").strip()
    if not lang:
        lang = path.stem if path.parent.name != "LC_MESSAGES" else path.parent.parent.name
    tag = locale_tag(lang)
    normalize_lang(tag, source=path)
    return tag


def check_mo(path: Path) -> None:
    """Check a compiled catalogue's string tables before it is read: every string's offset and length
    must lie inside the file (polib reads a string at a bad offset short, silently losing its entry).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.mo"
    >>> _ = p.write_bytes(struct.pack("<7I", 0x950412de, 0, 1, 28, 36, 0, 0) + struct.pack("<4I", 5, 9999, 1, 44) + b"ab")
    >>> check_mo(p)
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: ...x.mo: msgid 1 of 1 points at bytes 9999-10004, past the end of the file (46 bytes)...
    """
    data = path.read_bytes()
    fix = f"recompile the catalogue: msgfmt -o {path.name} {path.stem}.po"
    if len(data) < 28:
        raise TokstatError(f"truncated .mo file ({len(data)} bytes, the header alone is 28)", path=path, fix=fix)
    magic = struct.unpack("<I", data[:4])[0]
    if magic not in (0x950412DE, 0xDE120495):
        raise TokstatError("not a compiled gettext catalogue (bad magic number)", path=path, fix=fix)
    order = "<" if magic == 0x950412DE else ">"
    _, n, o, t = struct.unpack(order + "4I", data[4:20])
    for table, what in ((o, "msgid"), (t, "msgstr")):
        if table + 8 * n > len(data):
            raise TokstatError(f"the {what} table ({n} entries at byte {table}) runs past the end of the file "
                               f"({len(data)} bytes)", path=path, fix=fix)
        for i in range(n):
            length, off = struct.unpack(order + "2I", data[table + 8 * i: table + 8 * i + 8])
            if off + length > len(data):
                raise TokstatError(f"{what} {i + 1} of {n} points at bytes {off}-{off + length}, past the end of "
                                   f"the file ({len(data)} bytes)", path=path, fix=fix)


_KEYWORD = re.compile(r'^\s*(?:#~\s*)?(?:msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?)\s+(".*)$')
_CONT = re.compile(r'^\s*(?:#~\s*)?(".*)$')


def _closed(s: str) -> bool:
    """Whether the quoted string ``s`` (from its opening quote) ends with an unescaped closing quote
    and nothing after it but spaces."""
    s = s.rstrip()
    if len(s) < 2 or not s.endswith('"'):
        return False
    k, i = 0, len(s) - 2
    while i >= 1 and s[i] == "\\":
        k, i = k + 1, i - 1
    return k % 2 == 0


def check_po_strings(path: Path) -> None:
    """Every string of a .po file is closed on its line: polib reads ``msgstr "打开`` (no closing
    quote) as ``打``, a translation that is not the file's. An unterminated one is an error naming its
    line.

    >>> _closed('"ok"'), _closed('"open'), _closed(r'"ends in a quote \\"'), _closed(r'"an escaped \\\\"')
    (True, False, False, True)
    """
    from .textio import read_lines

    for no, line in read_lines(path):
        m = _KEYWORD.match(line) or (_CONT.match(line) if line.lstrip().startswith('"') else None)
        if m and not _closed(m.group(1)):
            raise TokstatError("a string is not closed (no ending quote on its line)", path=path, line=no,
                               fix='end the string with " on the same line (continue it on the next line in quotes)')


def read_catalogue(path: Path) -> polib._BaseFile:
    regular_file(path, "corpus file")   # a FIFO or a device would be read forever
    if path.suffix.lower() == ".mo":
        check_mo(path)
    else:
        check_po_strings(path)
    try:
        return polib.mofile(str(path)) if path.suffix.lower() == ".mo" else polib.pofile(str(path))
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


def catalogue_domain(path: Path, tag: str) -> str:
    """The text domain of a catalogue: its file stem (``LC_MESSAGES/coreutils.mo`` -> ``coreutils``),
    or ``""`` when the stem names its language (``zh_CN.po`` in a folder of one domain)."""
    if path.parent.name == "LC_MESSAGES":
        return path.stem
    try:
        if normalize_lang(locale_tag(path.stem)) == normalize_lang(tag):
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
    read = [(p, cat, catalogue_locale(p, cat)) for p in sorted(paths) for cat in [read_catalogue(p)]]
    # one rule for every catalogue's code (see langs.normalize_langs): sr and sr@latin -> sr, sr-Latn
    codes = normalize_langs([source_lang, *(tag for _, _, tag in read)], source=paths[0].parent if paths else None)
    source_lang = codes[source_lang]
    cats: dict[tuple[str, str], tuple[Path, object]] = {}
    for p, cat, tag in read:
        lang = codes[tag]
        if lang == source_lang:
            continue   # a catalogue of the msgids' own language (en.po): nothing translated
        key = (lang, catalogue_domain(p, tag))
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
            texts = {source_lang: msgid}
            for lang in tlangs:
                texts[lang] = tables[lang].get(key, "")
            yield Segment(key, texts)

    return Corpus(paths[0].stem if len(paths) == 1 else paths[0].parent.name, langs, gen,
                  [p for p, _ in cats.values()], {"loader": "gettext", "source": source_lang})
