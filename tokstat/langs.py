"""Language codes: normalise to BCP-47, map FLORES/ISO 639-3 names, reject unknown codes."""

from __future__ import annotations

from collections import Counter

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
    """The code with its script and region: FLORES ``ace_Arab`` -> ``ace-Arab``, ``en-US`` stays;
    a FLORES name whose language standardises with a region keeps it after the script
    (``prs_Arab``, Dari -> ``fa-Arab-AF``).

    >>> _full("ace_Arab", None), _full("prs_Arab", None), _full("en-US", None)
    ('ace-Arab', 'fa-Arab-AF', 'en-US')
    """
    raw = code.strip()
    parts = raw.replace("_", "-").split("-")
    if raw not in FLORES_SPECIAL and len(parts) == 2 and len(parts[0]) == 3 and len(parts[1]) == 4:
        base = langcodes.Language.get(normalize_lang(parts[0], source=source))
        return langcodes.Language.make(language=base.language, script=parts[1].title(),
                                       territory=base.territory).to_tag()
    return normalize_lang(raw, source=source)


def _key(tag: str) -> tuple:
    """What makes two codes the same language of one corpus: language, script (the language's
    likely script when none is written: ``en`` and ``en-Latn`` are one), region and variants.

    >>> _key("en") == _key("en-Latn"), _key("zh") == _key("zh-Hans"), _key("en") == _key("en-GB")
    (True, True, False)
    """
    lang = langcodes.Language.get(tag)
    script = lang.script or langcodes.Language.make(language=lang.language).maximize().script
    return lang.language, script, lang.territory, tuple(lang.variants or ())


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
    >>> normalize_langs(["en", "eng_Latn", "zh"]), normalize_langs(["en", "en-Latn", "en-GB"])
    ({'en': 'en', 'eng_Latn': 'en', 'zh': 'zh'}, {'en': 'en', 'en-Latn': 'en', 'en-GB': 'en-GB'})
    """
    full = {c: _full(c, source) for c in dict.fromkeys(codes)}
    short = {c: _short(f) for c, f in full.items()}
    key = {c: _key(f) for c, f in full.items()}
    first: dict[tuple, str] = {}               # one spelling per language: en and eng_Latn share one code
    variants: dict[str, set[tuple]] = {}
    for c in full:
        first.setdefault(key[c], full[c])
        variants.setdefault(short[c], set()).add(key[c])
    return {c: short[c] if len(variants[short[c]]) == 1 else first[key[c]] for c in full}


def primary(code: str) -> str:
    """Primary language subtag: ``primary('zh-Hant') == 'zh'``."""
    return code.split("-")[0].lower()


#: common characters written differently in Traditional and Simplified Chinese (Traditional, Simplified)
_HANT_HANS = ("們们這这個个來来說说時时會会對对經经國国學学為为發发還还過过點点進进開开關关問问題题現现實实長长後后"
              "當当從从動动應应機机電电話话氣气樣样種种請请讓让認认識识義义業业與与見见幾几車车東东門门書书錢钱"
              "買买賣卖馬马鳥鸟魚鱼飛飞頭头體体聽听寫写讀读語语號号園园圖图場场處处歲岁愛爱熱热風风雲云難难區区"
              "醫医藥药總总統统報报紙纸線线級级練练歡欢親亲華华萬万億亿員员們们邊边歷历灣湾變变")
HANT_ONLY = frozenset(_HANT_HANS[0::2])
HANS_ONLY = frozenset(_HANT_HANS[1::2])


def chinese_script(texts) -> tuple[str | None, float | None]:
    """Which Chinese a sample of texts is written in, from the characters that differ between the
    two scripts: ``("Hant", share)`` when at least 80 % of them are Traditional, ``("Hans", share)``
    when at most 20 % are, ``("mixed", share)`` between, ``(None, None)`` without any.

    >>> chinese_script(["這是我們的書"]), chinese_script(["这是我们的书"])
    (('Hant', 1.0), ('Hans', 0.0))
    """
    t = s = 0
    for text in texts:
        for ch in text:
            if ch in HANT_ONLY:
                t += 1
            elif ch in HANS_ONLY:
                s += 1
    if t + s == 0:
        return None, None
    share = t / (t + s)
    return ("Hant" if share >= 0.8 else "Hans" if share <= 0.2 else "mixed"), share


#: Unicode scripts a text's script is chosen among (ISO 15924 codes; Han, kana and Hangul are
#: refined to Hans/Hant, Jpan and Kore as CLDR writes Chinese, Japanese and Korean)
TEXT_SCRIPTS = ("Latn", "Cyrl", "Grek", "Armn", "Geor", "Arab", "Hebr", "Syrc", "Thaa", "Nkoo", "Tfng", "Ethi", "Deva",
                "Beng", "Guru", "Gujr", "Orya", "Taml", "Telu", "Knda", "Mlym", "Sinh", "Olck", "Mtei", "Tibt", "Thai",
                "Laoo", "Khmr", "Mymr", "Hani", "Hira", "Kana", "Hang", "Mong", "Cher", "Cans", "Vaii", "Adlm", "Copt")
#: the scripts a character is looked up among: the text scripts, Common (Zyyy: digits, punctuation,
#: spaces, emoji) and Inherited (Zinh: combining marks); each character has exactly one Script value
CHAR_SCRIPTS = TEXT_SCRIPTS + ("Zyyy", "Zinh")
_SCRIPT_OF = None
_script_cache: dict[str, str | None] = {}


def char_script(ch: str) -> str | None:
    """The Unicode Script value (ISO 15924) of ``ch`` among :data:`CHAR_SCRIPTS`, else None.

    >>> char_script("a"), char_script("中"), char_script(","), char_script("\u0301"), char_script("ᚠ")
    ('Latn', 'Hani', 'Zyyy', 'Zinh', None)
    """
    global _SCRIPT_OF
    if ch not in _script_cache:
        if _SCRIPT_OF is None:
            import regex

            _SCRIPT_OF = regex.compile("|".join(rf"(?P<{s}>\p{{Script={s}}})" for s in CHAR_SCRIPTS))
        m = _SCRIPT_OF.match(ch)
        _script_cache[ch] = m.lastgroup if m else None
    return _script_cache[ch]


def text_script(texts, max_chars: int = 10_000) -> str | None:
    """The script most of the letters of ``texts`` are written in (the first ``max_chars``
    characters), as an ISO 15924 code: Han as Hans or Hant (:func:`chinese_script`; ``Hani`` when
    the sample has no character that tells them apart or has both), Han with kana as Jpan, Hangul as
    Kore; None without a letter of :data:`TEXT_SCRIPTS`.

    >>> text_script(["ٱلْعَرَبِيَّة abc"]), text_script(["這是我們的書"]), text_script(["私は東京の大学で勉強しています"])
    ('Arab', 'Hant', 'Jpan')
    >>> text_script(["한국어 文字"]), text_script(["123 !?"])
    ('Kore', None)
    """
    counts: dict[str, int] = {}
    sample = []
    n = 0
    for t in texts:
        if n >= max_chars:
            break
        t = t[:max_chars - n]
        n += len(t)
        sample.append(t)
    for ch, k in Counter("".join(sample)).items():     # each distinct character looked up once
        if ch.isalpha():
            sc = char_script(ch)
            if sc in TEXT_SCRIPTS:
                counts[sc] = counts.get(sc, 0) + k
    if not counts:
        return None
    kana = counts.get("Hira", 0) + counts.get("Kana", 0)
    cjk = counts.get("Hani", 0) + kana
    best = max(counts, key=lambda k: (counts[k], k))
    if kana and cjk >= max(counts.values()) and kana >= 0.05 * cjk:
        return "Jpan"
    if best == "Hang":
        return "Kore"
    if best in ("Hira", "Kana"):
        return "Jpan"
    if best == "Hani":
        script, _ = chinese_script(sample)
        return script if script in ("Hans", "Hant") else "Hani"
    return best
