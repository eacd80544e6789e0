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


def _full(code: str, source: object | None) -> str:
    """The code with its script and region: FLORES ``ace_Arab`` -> ``ace-Arab``, ``en-US`` stays."""
    raw = code.strip()
    parts = raw.replace("_", "-").split("-")
    if raw not in FLORES_SPECIAL and len(parts) == 2 and len(parts[0]) == 3 and len(parts[1]) == 4:
        return f"{normalize_lang(parts[0], source=source)}-{parts[1].title()}"
    return normalize_lang(raw, source=source)


def _short(tag: str) -> str:
    """Language only (``en-US`` -> ``en``, ``sr-Cyrl`` -> ``sr``); Chinese keeps Traditional script."""
    lang = langcodes.Language.get(tag)
    if lang.language == "zh" and lang.script == "Hant":
        return "zh-Hant"
    return lang.language or tag


def normalize_langs(codes: list[str], *, source: object | None = None) -> dict[str, str]:
    """Language codes for the codes of one corpus, the same rule in every loader: the short form
    (``en``, ``zh``, ``zh-Hant``, ``ace``), unless two codes of the corpus would share it; then each
    keeps its script and region (a FLORES folder: ``ace-Arab`` and ``ace-Latn``; ``pt-BR``, ``pt-PT``).
    Spellings of one language (``en``, ``eng``, ``EN``) still map to one code, for the loader to refuse.

    >>> normalize_langs(["eng_Latn", "ace_Arab", "ace_Latn", "zho_Hant"])
    {'eng_Latn': 'en', 'ace_Arab': 'ace-Arab', 'ace_Latn': 'ace-Latn', 'zho_Hant': 'zh-Hant'}
    >>> normalize_langs(["en-US", "zh-CN"]), normalize_langs(["pt-BR", "pt-PT", "en"])
    ({'en-US': 'en', 'zh-CN': 'zh'}, {'pt-BR': 'pt-BR', 'pt-PT': 'pt-PT', 'en': 'en'})
    """
    full = {c: _full(c, source) for c in dict.fromkeys(codes)}
    short = {c: _short(f) for c, f in full.items()}
    variants: dict[str, set[str]] = {}
    for c, f in full.items():
        variants.setdefault(short[c], set()).add(f)
    return {c: short[c] if len(variants[short[c]]) == 1 else full[c] for c in full}


def primary(code: str) -> str:
    """Primary language subtag: ``primary('zh-Hant') == 'zh'``."""
    return code.split("-")[0].lower()
