"""Language codes: normalise to BCP-47, map FLORES/ISO 639-3 names, reject unknown codes."""

from __future__ import annotations

import langcodes

from .errors import TokstatError

#: FLORES-200 / FLORES+ style names (``eng_Latn``) whose BCP-47 form is not just the 639-1 code.
FLORES_SPECIAL = {"zho_Hans": "zh", "zho_Hant": "zh-Hant", "cmn_Hans": "zh", "cmn_Hant": "zh-Hant",
                  "yue_Hant": "yue"}
#: ISO 639-3 macrolanguage members that users mean as the macrolanguage.
ALIASES = {"cmn": "zh", "zh-cn": "zh", "zh-hans": "zh", "zh-sg": "zh", "zh-tw": "zh-Hant",
           "zh-hk": "zh-Hant", "zh-hant": "zh-Hant"}


def normalize_lang(code: str, *, source: object | None = None) -> str:
    """Return the canonical BCP-47 code for ``code`` or raise a clear error.

    >>> normalize_lang("eng_Latn"), normalize_lang("zho_Hant"), normalize_lang("zh_CN"), normalize_lang("cmn")
    ('en', 'zh-Hant', 'zh', 'zh')
    """
    raw = code.strip()
    if raw in FLORES_SPECIAL:
        return FLORES_SPECIAL[raw]
    tag = raw.replace("_", "-")
    low = tag.lower()
    if low in ALIASES:
        return ALIASES[low]
    parts = tag.split("-")
    # FLORES style: three-letter language + four-letter script (eng-Latn -> en)
    if len(parts) == 2 and len(parts[0]) == 3 and len(parts[1]) == 4:
        tag = parts[0]
    if not langcodes.tag_is_valid(tag):
        raise TokstatError(f"unknown language code {code!r}", path=source,
                           fix="use a BCP-47 code such as en, zh, zh-Hant, ja, or a FLORES name such as eng_Latn")
    std = langcodes.standardize_tag(tag)
    return ALIASES.get(std.lower(), std)


def primary(code: str) -> str:
    """Primary language subtag: ``primary('zh-Hant') == 'zh'``."""
    return code.split("-")[0].lower()
