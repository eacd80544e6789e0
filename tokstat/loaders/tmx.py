"""TMX translation memories, streamed with the standard library's ``iterparse``."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from ..corpus import Corpus, Segment
from ..errors import TokstatError
from ..io import regular_file
from ..langs import normalize_lang, normalize_langs
from .textio import check_utf8_file

XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
#: inline elements whose content is native markup, not translatable text (TMX 1.4b section 3.4)
CODE_TAGS = {"bpt", "ept", "ph", "it", "ut"}


def seg_text(seg: ET.Element) -> str:
    """Text of a ``<seg>``, keeping ``<hi>``/``<sub>`` text and dropping native codes.

    >>> seg_text(ET.fromstring('<seg>Press <bpt i="1">&lt;b&gt;</bpt>OK<ept i="1">&lt;/b&gt;</ept>.</seg>'))
    'Press OK.'
    """
    parts = [seg.text or ""]
    for child in seg:
        if child.tag not in CODE_TAGS:
            parts.append(seg_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def tu_line(path: Path, n: int) -> int | None:
    """The line on which the ``n``-th ``<tu>`` (from 1) of the file starts (ElementTree keeps no line
    numbers; this second, expat-level pass runs only when an error needs the line)."""
    import xml.parsers.expat

    p = xml.parsers.expat.ParserCreate()
    seen, found = [0], [None]

    def start(name, attrs):
        if name == "tu":
            seen[0] += 1
            if seen[0] == n:
                found[0] = p.CurrentLineNumber
                raise StopIteration

    p.StartElementHandler = start
    try:
        with open(path, "rb") as f:
            p.ParseFile(f)
    except (StopIteration, xml.parsers.expat.ExpatError, OSError):
        pass
    return found[0]


def _tuv_lang(tuv: ET.Element, path: Path, n: int, codes: dict[str, str] | None = None) -> str:
    """The language of one ``<tuv>`` of the ``n``-th ``<tu>``; a missing or unknown code is an error
    naming the line of its ``<tu>``."""
    raw = tuv.get(XML_LANG) or tuv.get("lang") or ""
    if codes and raw in codes:
        return codes[raw]
    if not raw.strip():
        raise TokstatError(f"a <tuv> without xml:lang (in <tu> number {n})", path=path, line=tu_line(path, n),
                           fix='give every <tuv> its language, e.g. <tuv xml:lang="en">')
    try:
        return normalize_lang(raw, source=path)
    except TokstatError as e:
        raise TokstatError(e.message, path=path, line=tu_line(path, n), fix=e.fix) from None


def _langs_and_count(path: Path) -> dict[str, str]:
    """Raw ``xml:lang`` values -> language codes (one rule for the whole file, see ``normalize_langs``)."""
    raw: list[str] = []
    for n, (_, el) in enumerate(_iter_tu(path), 1):
        for tuv in el.iter("tuv"):
            lang = tuv.get(XML_LANG) or tuv.get("lang") or ""
            if lang not in raw:
                _tuv_lang(tuv, path, n)
                raw.append(lang)
        el.clear()
    return normalize_langs(raw, source=path)


def _iter_tu(path: Path):
    regular_file(path, "corpus file")   # a FIFO or a device would be read forever
    try:
        for event, el in ET.iterparse(path, events=("end",)):
            if el.tag == "tu":
                yield event, el
    except ET.ParseError as e:
        if "not well-formed" in str(e) or "encoding" in str(e):
            check_utf8_file(path)
        line = e.position[0] if e.position else None
        raise TokstatError(f"malformed TMX: {e.msg if hasattr(e, 'msg') else e}", path=path, line=line,
                           fix="repair the XML (every <tu> closed, & written as &amp;)") from None


def load_tmx(path: Path) -> Corpus:
    """One segment per ``<tu>``; ``tuid`` is the id when present. Languages are those of the ``<tuv>``s."""
    codes = _langs_and_count(path)
    langs = list(dict.fromkeys(codes.values()))
    if not langs:
        raise TokstatError("no <tu> with <tuv xml:lang=...> found", path=path, fix="check that this is TMX")

    def gen():
        for n, (_, tu) in enumerate(_iter_tu(path), 1):
            texts = {}
            for tuv in tu.iter("tuv"):
                lang = _tuv_lang(tuv, path, n, codes)
                if lang in texts:
                    raise TokstatError(f"two <tuv>s of language {lang} in one <tu> (tu {tu.get('tuid') or n})",
                                       path=path, line=tu_line(path, n), fix="keep one <tuv> per language in each <tu>")
                seg = tuv.find("seg")
                texts[lang] = seg_text(seg) if seg is not None else ""
            yield Segment(tu.get("tuid") or str(n), texts)
            tu.clear()

    return Corpus(path.stem, langs, gen, [path], {"loader": "tmx"})
