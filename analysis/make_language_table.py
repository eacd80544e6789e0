"""Write tokstat/data/languages.csv and tokstat/data/cldr_coverage.csv, the language metadata that
``tokstat.groups`` groups results by, from two public sources (cited in docs/metrics.md):

- Glottolog 5.1 (Hammarström, Forkel, Haspelmath & Bank 2024, CC BY 4.0), ``cldf/languages.csv`` of
  https://github.com/glottolog/glottolog-cldf (release 5.1, commit b6d3ea2): every languoid with an
  ISO 639-3 code (language level; a dialect-level one such as Bokmål or Croatian where no language
  has its key), its top-level family (an isolate is its own family) and macroarea.
- Unicode CLDR ``common/properties/coverageLevels.txt`` (https://github.com/unicode-org/cldr, commit
  000db8b, 2022): the locales at Basic coverage or above, with their level (basic, moderate, modern).

The key of a language is its BCP-47 language subtag as ``langcodes.standardize_tag`` gives it
(``jpn`` -> ``ja``); the member of a macrolanguage that CLDR normalises to it (``cmn`` -> ``zh``,
``arb`` -> ``ar``, ``pes`` -> ``fa``) also stands for the macrolanguage. Where two ISO codes share a
key (a retired code merged into another), the code that is the key's own ISO 639-3 form wins.

    python analysis/make_language_table.py GLOTTOLOG_LANGUAGES_CSV CLDR_COVERAGE_LEVELS_TXT

Deterministic: the same sources give the same bytes.
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import langcodes

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tokstat" / "data"
FIELDS = ["tag", "iso639_3", "glottocode", "name", "family", "macroarea"]


def languages(path: Path) -> list[dict]:
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    by_id = {r["ID"]: r for r in rows}
    langs = [r for r in rows if r["ISO639P3code"] and r["Level"] == "language"]
    dialects = [r for r in rows if r["ISO639P3code"] and r["Level"] == "dialect"]
    out: dict[str, dict] = {}
    rank: dict[str, int] = {}

    def put(tag: str, r: dict, score: int) -> None:
        if tag not in out or score > rank[tag] or (score == rank[tag] and r["ISO639P3code"] < out[tag]["iso639_3"]):
            fam = by_id[r["Family_ID"]]["Name"] if r["Family_ID"] else r["Name"]
            out[tag] = {"tag": tag, "iso639_3": r["ISO639P3code"], "glottocode": r["Glottocode"], "name": r["Name"],
                        "family": fam, "macroarea": r["Macroarea"]}
            rank[tag] = score

    for r in langs:
        code = r["ISO639P3code"]
        tag = langcodes.standardize_tag(code)
        own = langcodes.Language.get(tag).to_alpha3() == code
        put(tag, r, 2 if own else 1)
    for r in dialects:  # ISO codes Glottolog ranks as dialects (Bokmål, Croatian, Serbian, Tagalog, ...)
        tag = langcodes.standardize_tag(r["ISO639P3code"])
        if tag not in out:
            put(tag, r, -1)
    for r in langs:     # a macrolanguage by the member CLDR normalises to it, where it has no row of its own
        code = r["ISO639P3code"]
        macro = langcodes.standardize_tag(code, macro=True)
        if macro != langcodes.standardize_tag(code) and rank.get(macro, -9) < 0:
            put(macro, r, 0)
    return sorted(out.values(), key=lambda d: d["tag"])


def coverage(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        locale, level = (p.strip() for p in line.split(";"))
        out.append({"locale": langcodes.standardize_tag(locale), "level": level})
    return sorted(out, key=lambda d: d["locale"])


def write(path: Path, fields: list[str], rows: list[dict]) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    OUT.mkdir(exist_ok=True)
    langs = languages(Path(argv[0]))
    write(OUT / "languages.csv", FIELDS, langs)
    cov = coverage(Path(argv[1]))
    write(OUT / "cldr_coverage.csv", ["locale", "level"], cov)
    print(f"{len(langs)} languages, {len(cov)} CLDR locales -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
