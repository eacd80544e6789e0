"""Language codes: one label per (language, script, region), the same in every loader.

A language of a corpus is a **(language, script, region)** triple. Its label is the shortest BCP-47
tag that names that triple, whatever the spelling it arrived in and whatever else the corpus holds:

* the language subtag is standardised (ISO 639-3 -> 639-1 where one exists, deprecated codes
  replaced), and an individual language that is what its macrolanguage code means in practice is
  written as the macrolanguage (``cmn`` -> ``zh``, ``arb`` -> ``ar``, ``pes`` -> ``fa``,
  ``zsm`` -> ``ms``), except where the two are distinct varieties side by side in FLORES-200
  (Twi beside Akan);
* the script is written only where it differs from the language's usual script in that region
  (CLDR's likely subtags): ``eng_Latn`` -> ``en``, ``zho_Hant`` -> ``zh-Hant``, ``srp_Latn`` ->
  ``sr-Latn``, ``ace_Arab`` -> ``ace-Arab``, ``zho-TW`` -> ``zh-TW`` (Traditional is Taiwan's usual
  script); a script CLDR writes as a combination counts as that combination (Korean ``Hang`` is
  ``Kore``, Japanese ``Hira``/``Kana``/``Hani`` are ``Jpan``, Chinese ``Hani`` is the region's
  Han); a language CLDR knows no usual script for keeps the script it was given;
* the region is kept as written: ``en``, ``en-GB``, ``en-US`` and ``en-IN`` are four languages.

So two spellings name one language exactly when they have one label (``en``, ``eng``, ``eng_Latn``,
``en-Latn``), and a loader refuses a corpus that spells one language two ways; two scripts or two
regions of one language are always two languages. A tag without a script means the language's
usual script (BCP-47): name a file ``shi_Arab`` when its Tachelhit is written in Arabic letters.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import langcodes

from .errors import TokstatError

UND = "und"
#: individual languages whose macrolanguage code would merge them with a distinct variety of a
#: corpus the field uses (FLORES-200 has Twi ``twi_Latn`` beside Akan ``aka_Latn``)
NOT_MACRO = frozenset({"twi", "tw"})
#: scripts CLDR writes as a combination of others: a text in a part is in the combination
SCRIPT_PARTS = {"Jpan": frozenset({"Hani", "Hira", "Kana", "Hrkt"}), "Kore": frozenset({"Hang", "Hani"}),
                "Hans": frozenset({"Hani"}), "Hant": frozenset({"Hani"})}
_FIX = "use a BCP-47 code such as en, zh, zh-Hant, sr-Latn, pt-BR, or a FLORES name such as eng_Latn"


def _bad(code: str, source: object | None, why: str = "unknown language code") -> TokstatError:
    return TokstatError(f"{why} {code!r}", path=source, fix=_FIX)


@lru_cache(maxsize=None)
def likely_script(language: str, region: str | None = None) -> str | None:
    """The usual script of ``language`` (in ``region``), from CLDR's likely subtags; None where CLDR
    does not know the language.

    >>> likely_script("en"), likely_script("zh"), likely_script("zh", "TW"), likely_script("sr", "ME"), likely_script("mey")
    ('Latn', 'Hans', 'Hant', 'Latn', None)
    """
    from langcodes.data_dicts import LIKELY_SUBTAGS

    for k in ((f"{language}-{region}",) if region else ()) + (language,):
        if k in LIKELY_SUBTAGS:
            return langcodes.Language.get(LIKELY_SUBTAGS[k]).script
    # a code CLDR knows under an alias (Twi, tw); langcodes falls back on und's en-Latn-US for one it does not know
    m = langcodes.Language.make(language=language, territory=region).maximize()
    return m.script if (m.script, m.territory) != ("Latn", "US") else None


@lru_cache(maxsize=65536)
def _parts(code: str, script: str | None) -> tuple[str, str | None, str | None, tuple[str, ...]]:
    """``(language, script, region, variants)`` of a code (script filled in where implied)."""
    raw = code.strip()
    if raw.lower() == UND and not script:
        return UND, None, None, ()
    tag = raw.replace("_", "-")
    if not tag or not langcodes.tag_is_valid(tag):
        raise ValueError
    first = tag.split("-")[0].lower()
    std = langcodes.standardize_tag(tag, macro=first not in NOT_MACRO)
    lang = langcodes.Language.get(std)
    if lang.extensions or lang.private or lang.extlangs:
        raise ValueError
    if lang.language is None:
        if lang.script is None and lang.territory is None:
            raise ValueError
        language = UND
    else:
        language = lang.language
    sc = lang.script
    if script:
        given = script.strip().replace("_", "-").split("-")[-1].title()
        if len(given) != 4 or not given.isalpha():
            raise ValueError
        if sc is not None and sc != given:
            raise KeyError(sc, given)
        sc = given
    usual = likely_script(language, lang.territory) if language != UND else None
    if sc is not None and usual is not None and sc in SCRIPT_PARTS.get(usual, ()):
        sc = usual
    if sc is None:
        sc = usual
    return language, sc, lang.territory, tuple(lang.variants or ())


def key(code: str, *, script: str | None = None, source: object | None = None) -> tuple:
    """What makes two codes one language: ``(language, script, region, variants)``, the script
    filled in from the language and region where not written.

    >>> key("eng_Latn") == key("en") == key("eng"), key("en") == key("en-GB"), key("zho-TW") == key("zh-Hant-TW")
    (True, False, True)
    """
    try:
        return _parts(code, script)
    except KeyError as e:
        raise TokstatError(f"the language {code!r} is written in {e.args[0]}, but its script column says {e.args[1]}",
                           path=source, fix="make the language code and the script column agree") from None
    except (ValueError, langcodes.LanguageTagError):
        raise _bad(code, source) from None


def label(code: str, *, script: str | None = None, source: object | None = None) -> str:
    """The one label of a language code (see the module's docstring); ``script`` is a script given
    apart (FineWeb-2's ``language_script`` column: ``Latn`` or ``eng_Latn``).

    >>> [label(c) for c in ("eng_Latn", "en-US", "zho_Hans", "zho_Hant", "zho-TW", "cmn_Hani", "srp-Cyrl", "srp-Latn")]
    ['en', 'en-US', 'zh', 'zh-Hant', 'zh-TW', 'zh', 'sr', 'sr-Latn']
    >>> [label(c) for c in ("ace_Arab", "ace_Latn", "kas_Deva", "prs", "fas", "arb", "kor_Hang", "jpn_Jpan", "twi")]
    ['ace-Arab', 'ace', 'ks-Deva', 'fa-AF', 'fa', 'ar', 'ko', 'ja', 'tw']
    >>> label("ace", script="Arab"), label("zho-CN", script="Hans"), label("mey", script="Arab"), label("und")
    ('ace-Arab', 'zh-CN', 'mey-Arab', 'und')
    """
    language, sc, region, variants = key(code, script=script, source=source)
    parts = [language]
    if sc is not None and sc != (likely_script(language, region) if language != UND else None):
        parts.append(sc)
    if region:
        parts.append(region)
    parts.extend(variants)
    return "-".join(parts)


def normalize_lang(code: str, *, source: object | None = None) -> str:
    """The label of ``code`` (:func:`label`), or a clear error naming it.

    >>> normalize_lang("eng_Latn"), normalize_lang("zho_Hant"), normalize_lang("zh_CN"), normalize_lang("cmn")
    ('en', 'zh-Hant', 'zh-CN', 'zh')
    """
    return label(code, source=source)


def normalize_langs(codes: list[str], *, source: object | None = None) -> dict[str, str]:
    """The label of every code of one corpus: the same rule in every loader, whatever else the
    corpus holds. Spellings of one language (``en``, ``eng``, ``EN``) map to one label, for the
    loader to refuse; two scripts or regions of a language are two labels.

    >>> normalize_langs(["eng_Latn", "ace_Arab", "ace_Latn", "zho_Hant"])
    {'eng_Latn': 'en', 'ace_Arab': 'ace-Arab', 'ace_Latn': 'ace', 'zho_Hant': 'zh-Hant'}
    >>> normalize_langs(["en-US", "zh-CN"]), normalize_langs(["pt-BR", "pt-PT", "en"])
    ({'en-US': 'en-US', 'zh-CN': 'zh-CN'}, {'pt-BR': 'pt-BR', 'pt-PT': 'pt-PT', 'en': 'en'})
    >>> normalize_langs(["en", "eng_Latn", "zh"]), normalize_langs(["en", "en-Latn", "en-GB"])
    ({'en': 'en', 'eng_Latn': 'en', 'zh': 'zh'}, {'en': 'en', 'en-Latn': 'en', 'en-GB': 'en-GB'})
    """
    return {c: label(c, source=source) for c in dict.fromkeys(codes)}


def resolve(code: str, labels) -> str | None:
    """The label among ``labels`` (a corpus's or a results file's languages) that a user's ``code``
    names: its own label when present, else the one label of that language whose script and region
    fit what ``code`` writes (``en`` names ``en-US`` in a corpus whose only English is ``en-US``;
    ``sr`` names ``sr-Latn`` where that is the only Serbian); None when none fits (or ``code`` is no
    language code); two that fit are an error naming both.

    >>> resolve("eng", ["en", "zh"]), resolve("en", ["en-US", "zh-CN"]), resolve("zh", ["en-US", "zh-CN"]), resolve("de", ["en"])
    ('en', 'en-US', 'zh-CN', None)
    >>> resolve("en", ["en-GB", "en-US"])
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: en names two languages here, en-GB and en-US (fix: name one of them exactly)
    """
    labels = list(labels)
    if code in labels:
        return code
    try:
        own = label(code)
        lang, sc, region, variants = key(own)
    except TokstatError:
        return None
    if own in labels:
        return own
    wrote_script = any(len(p) == 4 and p.isalpha() for p in code.strip().replace("_", "-").split("-")[1:])
    fits = []
    for other in labels:
        try:
            olang, osc, oregion, ovar = key(other)
        except TokstatError:
            continue
        if olang != lang or (wrote_script and osc != sc) or (region and oregion != region) or (variants and ovar != variants):
            continue
        fits.append(other)
    if len(fits) > 1:
        raise TokstatError(f"{code} names {'two' if len(fits) == 2 else len(fits)} languages here, "
                           f"{', '.join(fits[:-1])} and {fits[-1]}", fix="name one of them exactly")
    return fits[0] if fits else None


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
