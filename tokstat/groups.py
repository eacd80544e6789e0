"""Results grouped by script, language family, macroarea and resource level, and the Lorenz curve of
the premiums (stage 5, after the metrics; issue 28, as TokEval groups its languages).

Where each language's group comes from (docs/metrics.md cites them):

- **script**: the script the text is written in, as compare found it (its ``script`` column:
  :func:`tokstat.langs.text_script` on the head of the corpus); for a table without it, the script
  subtag of the code (``zh-Hant``, ``ace-Arab``), else the language's likely script in Unicode
  CLDR's likely-subtags data (through ``langcodes``; ``zh`` is Hans, ``ja`` Jpan), else unknown.
- **family**, **macroarea**: Glottolog 5.1's top-level family of the language (an isolate is its own
  family; pseudo-families such as ``Artificial Language`` and ``Pidgin`` as Glottolog has them) and
  its macroarea, from ``tokstat/data/languages.csv`` (``analysis/make_language_table.py`` writes it
  from Glottolog's CLDF release, CC BY 4.0).
- **resource**: the language's Unicode CLDR coverage level (``modern`` > ``moderate`` > ``basic`` >
  ``below basic``, from ``coverageLevels.txt``): how much locale data the major platforms maintain
  for it, a public proxy for how well-resourced a language is digitally. It is not Joshi et al.'s
  (2020) six classes; pass your own table (:func:`group_summary`'s ``groups``) to group by those.

The statistic of a group is over its languages' values (a premium, or tokens per byte where a
corpus has no premium): the geometric mean (the mean that treats a premium of 2 and of 1/2 alike),
the median, the extremes, and the worst language. The pivot is not in a group (its premium is 1 by
definition); it is in the Lorenz curve and its Gini coefficient, which are those of
:func:`tokstat.metrics.parity_summary`.

>>> info = language_info("zh-Hant")
>>> info["script"], info["family"], info["resource"]
('Hant', 'Sino-Tibetan', 'modern')
>>> language_info("eus")["family"], language_info("ace-Arab")["script"]
('Basque', 'Arab')
"""

from __future__ import annotations

import csv
import functools
import io
import math
from importlib import resources

import langcodes
import numpy as np
from langcodes.data_dicts import LIKELY_SUBTAGS
import polars as pl

from .errors import TokstatError
from .metrics import gini

DIMENSIONS = ("script", "family", "macroarea", "resource")
RESOURCE_LEVELS = ("modern", "moderate", "basic", "below basic")
UNKNOWN = "unknown"
#: ISO 15924 codes shown by name
SCRIPT_NAMES = {
    "Latn": "Latin", "Cyrl": "Cyrillic", "Grek": "Greek", "Armn": "Armenian", "Geor": "Georgian", "Arab": "Arabic",
    "Hebr": "Hebrew", "Syrc": "Syriac", "Thaa": "Thaana", "Nkoo": "N'Ko", "Tfng": "Tifinagh", "Ethi": "Ethiopic",
    "Deva": "Devanagari", "Beng": "Bengali", "Guru": "Gurmukhi", "Gujr": "Gujarati", "Orya": "Odia", "Taml": "Tamil",
    "Telu": "Telugu", "Knda": "Kannada", "Mlym": "Malayalam", "Sinh": "Sinhala", "Olck": "Ol Chiki", "Mtei": "Meitei",
    "Tibt": "Tibetan", "Thai": "Thai", "Laoo": "Lao", "Khmr": "Khmer", "Mymr": "Myanmar", "Hans": "Han (Simplified)",
    "Hant": "Han (Traditional)", "Hani": "Han", "Jpan": "Japanese", "Kore": "Korean", "Hang": "Hangul", "Mong": "Mongolian",
    "Cher": "Cherokee", "Cans": "Canadian Syllabics", "Vaii": "Vai", "Adlm": "Adlam", "Copt": "Coptic",
}


def _data(name: str) -> list[dict]:
    text = resources.files("tokstat").joinpath("data", name).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


@functools.lru_cache(maxsize=None)
def _languages() -> dict[str, dict]:
    return {r["tag"]: r for r in _data("languages.csv")}


@functools.lru_cache(maxsize=None)
def _coverage() -> dict[str, str]:
    return {r["locale"]: r["level"] for r in _data("cldr_coverage.csv")}


@functools.lru_cache(maxsize=4096)
def language_info(lang: str) -> dict:
    """The groups of one language code (any code tokstat reads; unknown parts are ``unknown``):
    ``script``, ``script_name``, ``family``, ``macroarea``, ``resource``, with the Glottolog
    ``name``, ``glottocode`` and ``iso639_3`` it was found under.

    >>> language_info("en")["macroarea"], language_info("pes")["resource"], language_info("und")["family"]
    ('Eurasia', 'modern', 'unknown')
    """
    try:
        tag = langcodes.Language.get(lang)
    except (ValueError, LookupError):
        tag = langcodes.Language.get("und")
    key = tag.language or "und"
    macro = langcodes.standardize_tag(key, macro=True) if key != "und" else key
    script = tag.script
    if script is None and (key in LIKELY_SUBTAGS or macro in LIKELY_SUBTAGS):   # CLDR knows the language
        script = tag.maximize().script
    row = _languages().get(key) or _languages().get(macro) or {}
    cov = _coverage()
    level = None
    for k in (key, macro):
        level = level or (cov.get(f"{k}-{script}") if script else None) or cov.get(k)
    return {"language": lang, "script": script or UNKNOWN, "script_name": SCRIPT_NAMES.get(script, script or UNKNOWN),
            "family": row.get("family") or UNKNOWN, "macroarea": row.get("macroarea") or UNKNOWN,
            "resource": level or ("below basic" if row else UNKNOWN), "name": row.get("name"),
            "glottocode": row.get("glottocode"), "iso639_3": row.get("iso639_3")}


def read_groups(path) -> dict[str, str]:
    """Your own grouping of languages from a CSV/TSV file with a header naming a ``language`` column
    and a ``group`` column (Joshi et al.'s class, a region, ...). Codes are normalised as tokstat
    normalises a corpus's (``eng_Latn`` is ``en``); a language listed twice with two groups, an empty
    group or an unknown code is an error naming the line.
    """
    from pathlib import Path

    from .io import read_input
    from .langs import normalize_lang

    p = Path(path)
    data = read_input(p, "groups file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise TokstatError(f"not UTF-8 (byte {e.start})", path=p, fix="save the groups file as UTF-8") from None
    lines = text.splitlines()
    if not lines:
        raise TokstatError("empty groups file", path=p, fix="write a header line: language,group")
    dialect = "excel-tab" if "\t" in lines[0] else "excel"
    reader = csv.reader(io.StringIO(text), dialect=dialect)
    head = [c.strip().lower() for c in next(reader)]
    if "language" not in head or "group" not in head:
        raise TokstatError(f"the header {lines[0][:80]!r} names no language and group columns", path=p, line=1,
                           fix="write a header line: language,group")
    li, gi = head.index("language"), head.index("group")
    out: dict[str, str] = {}
    for n, row in enumerate(reader, start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) <= max(li, gi):
            raise TokstatError(f"{len(row)} column(s), the header has {len(head)}", path=p, line=n,
                               fix="give every line a language and a group")
        code, grp = row[li].strip(), row[gi].strip()
        if not grp:
            raise TokstatError(f"{code!r} has an empty group", path=p, line=n, fix="name its group, or drop the line")
        lang = normalize_lang(code, source=f"{p}:{n}")
        if out.get(lang, grp) != grp:
            raise TokstatError(f"{code!r} is in two groups ({out[lang]!r} and {grp!r})", path=p, line=n,
                               fix="keep one line per language")
        out[lang] = grp
    if not out:
        raise TokstatError("no languages in the groups file", path=p, fix="add lines: language,group")
    return out


def parse_dimensions(text: str, option: str, *, custom: bool = False) -> list[str]:
    """The groupings named in a comma-separated option (``custom`` allowed where a groups file can
    be given); an empty list or an unknown name is an error naming the option.

    >>> parse_dimensions("family, script", "--by")
    ['family', 'script']
    """
    dims = [d.strip() for d in text.split(",") if d.strip()]
    allowed = (*DIMENSIONS, "custom") if custom else DIMENSIONS
    if not dims:
        raise TokstatError(f"{option} names no grouping", fix=f"pass {option} {','.join(DIMENSIONS)}")
    for d in dims:
        if d not in allowed:
            raise TokstatError(f"unknown grouping {d!r}", fix=f"{option} takes {', '.join(allowed)}"
                               + ("" if custom else " (your own groups: tokstat groups --by custom --groups FILE)"))
    return dims


def geo_mean(values) -> float | None:
    """The geometric mean of the positive values, or None.

    >>> geo_mean([2.0, 0.5]), geo_mean([])
    (1.0, None)
    """
    x = [v for v in values if v is not None and v > 0]
    return float(math.exp(sum(map(math.log, x)) / len(x))) if x else None


def lorenz(values) -> tuple[np.ndarray, np.ndarray]:
    """The Lorenz curve of non-negative values: the share of languages (x) against the share of the
    total they carry (y), languages in increasing order, from (0, 0) to (1, 1).

    >>> x, y = lorenz([1, 1, 2]); [round(float(v), 3) for v in y]
    [0.0, 0.25, 0.5, 1.0]
    """
    v = np.sort(np.asarray([a for a in values if a is not None], dtype=float))
    if not len(v) or v.sum() <= 0:
        return np.zeros(1), np.zeros(1)
    x = np.arange(len(v) + 1) / len(v)
    y = np.concatenate([[0.0], np.cumsum(v) / v.sum()])
    return x, y


def _value(df: pl.DataFrame, value: str | None) -> str:
    if value is None:
        value = "premium" if "premium" in df.columns and df["premium"].drop_nulls().len() else "tokens_per_byte"
    if value not in df.columns:
        raise TokstatError(f"no column {value!r} to group", fix="pass --value premium, tokens_per_char or tokens_per_byte "
                           "(a tokstat compare table)")
    if not df.schema[value].is_numeric():
        raise TokstatError(f"--value {value} is a column of {df.schema[value]}, not of numbers: groups summarise a "
                           "number per language", fix="pass --value premium, tokens_per_char or tokens_per_byte")
    return value


def _pivot(df: pl.DataFrame) -> str | None:
    from .metrics import pivot_of

    return pivot_of(df) if "premium" in df.columns else None


def _labels(langs: list[str], by: str, groups: dict[str, str] | None, written: dict[str, str]) -> dict[str, str]:
    if by == "custom":
        from .langs import normalize_lang

        def find(lang: str) -> str:
            if lang in (groups or {}):
                return groups[lang]
            try:
                return (groups or {}).get(normalize_lang(lang), UNKNOWN)
            except TokstatError:
                return UNKNOWN
        return {lang: find(lang) for lang in langs}
    if by not in DIMENSIONS:
        raise TokstatError(f"unknown grouping {by!r}", fix=f"group by one of: {', '.join(DIMENSIONS)}, or custom with a "
                           "groups file")
    if by == "script":      # the script the text is written in, where compare found one; else the code's
        def name(lang: str) -> str:
            s = written.get(lang)
            return SCRIPT_NAMES.get(s, s) if s else language_info(lang)["script_name"]
        return {lang: name(lang) for lang in langs}
    return {lang: language_info(lang)[by] for lang in langs}


def _languages_only(df: pl.DataFrame) -> pl.DataFrame:
    """The rows of languages: a budget table's per-tokenizer total (``(all)``) is not a language, and a
    group counts languages."""
    from .budget import TOTAL

    return df.filter(pl.col("language") != TOTAL) if "language" in df.columns else df


def group_summary(df: pl.DataFrame, by: str = "family", *, value: str | None = None,
                  groups: dict[str, str] | None = None, pivot: str | None = None) -> pl.DataFrame:
    """One row per (tokenizer, group) of a compare table: ``n_languages``, ``languages``, and the
    geometric mean, median, min and max of ``value`` (default: the premium, else tokens per byte)
    over the group's languages, the pivot left out, with the worst language.

    ``by`` is one of :data:`DIMENSIONS`, or ``custom`` with ``groups`` mapping each language to a
    group of your own (Joshi et al.'s classes, say); a language missing from it is ``unknown``.
    """
    value = _value(df, value)
    pivot = pivot if pivot is not None else _pivot(df)
    d = _languages_only(df).filter(pl.col(value).is_not_null())
    if pivot is not None and value.startswith("premium"):
        d = d.filter(pl.col("language") != pivot)
    written = ({r["language"]: r["script"] for r in d.select("language", "script").iter_rows(named=True) if r["script"]}
               if "script" in d.columns else {})
    labels = _labels(d["language"].unique().to_list(), by, groups, written)
    d = d.with_columns(pl.col("language").replace_strict(labels, return_dtype=pl.Utf8).alias("group"))
    rows = []
    for (tok, grp), g in d.group_by(["tokenizer", "group"], maintain_order=True):
        vals = g[value].to_list()
        worst = g.sort(value, descending=True)["language"][0]
        rows.append({"tokenizer": tok, "dimension": by, "group": grp, "n_languages": g.height,
                     "languages": ",".join(sorted(g["language"].to_list())), "value": value,
                     "geo_mean": geo_mean(vals), "median": float(np.median(vals)), "min": float(min(vals)),
                     "max": float(max(vals)), "worst_language": worst})
    schema = {"tokenizer": pl.Utf8, "dimension": pl.Utf8, "group": pl.Utf8, "n_languages": pl.Int64,
              "languages": pl.Utf8, "value": pl.Utf8, "geo_mean": pl.Float64, "median": pl.Float64,
              "min": pl.Float64, "max": pl.Float64, "worst_language": pl.Utf8}
    out = pl.DataFrame(rows, schema=schema)
    order = {t: i for i, t in enumerate(dict.fromkeys(df["tokenizer"].to_list()))}
    return out.with_columns(pl.col("tokenizer").replace_strict(order, return_dtype=pl.Int64).alias("_t")) \
        .sort("_t", "geo_mean", descending=[False, True], nulls_last=True).drop("_t")


def lorenz_table(df: pl.DataFrame, *, value: str | None = None) -> pl.DataFrame:
    """Per tokenizer, the points of the Lorenz curve of ``value`` across all languages (the pivot
    at 1 included, as in the Gini coefficient of :func:`tokstat.metrics.parity_summary`): one row per
    language in increasing order with ``share_of_languages``, ``cumulative_share`` and the curve's
    ``gini``."""
    value = _value(df, value)
    rows = []
    for (tok,), g in _languages_only(df).filter(pl.col(value).is_not_null()).group_by(["tokenizer"], maintain_order=True):
        g = g.sort(value, "language")
        x, y = lorenz(g[value].to_list())
        gi = gini(g[value].to_list())      # 1 − twice the area under the curve: the Gini compare prints
        for i, (lang, v) in enumerate(zip(g["language"].to_list(), g[value].to_list()), start=1):
            rows.append({"tokenizer": tok, "language": lang, "value": value, "language_value": float(v),
                         "share_of_languages": float(x[i]), "cumulative_share": float(y[i]), "gini": gi})
    return pl.DataFrame(rows, schema={"tokenizer": pl.Utf8, "language": pl.Utf8, "value": pl.Utf8, "language_value": pl.Float64,
                                      "share_of_languages": pl.Float64, "cumulative_share": pl.Float64,
                                      "gini": pl.Float64})
