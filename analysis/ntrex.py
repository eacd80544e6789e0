"""NTREX-128 in the three layouts tokstat reads, for the tests and the studies of the world's languages.

NTREX-128 (``../shared/corpora/ntrex-128``; Federmann et al. 2022, CC BY-SA 4.0) is 1,997 news
sentences translated from English into 128 languages and variants, line-aligned, with each line's
document in ``DOCUMENT_IDS.tsv``. Its files are named ``newstest2019-ref.TAG.txt`` with tags such as
``afr``, ``srp-Cyrl``, ``zho-TW``, ``eng-GB``; the English source is ``newstest2019-src.eng.txt``,
and a second Spanish reference (``newstest2019-ref-2.spa.txt``) is left out (two files of one
language are refused by tokstat, rightly).

The layouts written from it (nothing here is copied into the project; tests write to a temporary
folder):

* :func:`parallel_folder`: one file per language named by its full tag (``srp_Cyrl.txt``,
  ``zho_Hans-CN.txt``), line-aligned: a parallel corpus;
* :func:`fineweb_folders`: FineWeb-2's layout, ``data/{lang}_{Script}/train/000_00000.parquet`` with
  ``text``, ``language`` (ISO 639-3, and the region where NTREX has one: ``zho-CN``) and
  ``language_script`` (``Hans``) columns, one row per *document* (its lines joined by newlines);
* :func:`fineweb_shards`: the same documents in flat shards, every language mixed, in one of three
  orders (``shuffled``, ``language``: written language by language as a dump is, ``length``:
  sorted by length), with row groups of unequal size.

A tag's script is the one NTREX writes (``srp-Latn``), else CLDR's usual script for the language,
else the script the text is written in (``tokstat.langs.text_script``): FineWeb-2 always names one.

Run as a script to write the layouts under a folder::

    python analysis/ntrex.py OUT [--copies K]
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NTREX = ROOT.parent / "shared" / "corpora" / "ntrex-128"
SKIP = {"newstest2019-ref-2.spa.txt"}


def files(root: Path = NTREX) -> dict[str, Path]:
    """NTREX tag -> its file (the English source is ``eng``)."""
    out = {}
    for p in sorted((root / "NTREX-128").glob("newstest2019-*.txt")):
        if p.name in SKIP:
            continue
        out[p.name.split(".")[1]] = p
    return out


def lines(p: Path) -> list[str]:
    text = p.read_text(encoding="utf-8")
    return text.removesuffix("\n").split("\n")


def document_ids(root: Path = NTREX) -> list[str]:
    return [r.split("\t")[0] for r in (root / "DOCUMENT_IDS.tsv").read_text(encoding="utf-8").splitlines()]


def split_tag(tag: str, text: str = "") -> tuple[str, str | None, str]:
    """``(language, region or None, script)`` of an NTREX tag (``zho-TW`` -> ``zho``, ``TW``, ``Hant``)."""
    import langcodes

    from tokstat.langs import likely_script, text_script

    parts = tag.split("-")
    lang = parts[0]
    script = next((x for x in parts[1:] if len(x) == 4), None)
    region = next((x for x in parts[1:] if len(x) == 2), None)
    if script is None:
        std = langcodes.Language.get(langcodes.standardize_tag(lang, macro=True))
        script = likely_script(std.language, region) or text_script([text[:20000]])
    return lang, region, script


def full_tag(tag: str, text: str = "") -> str:
    """The tag with its script written, FineWeb-2/FLORES style: ``afr_Latn``, ``srp_Cyrl``, ``zho_Hans-CN``."""
    lang, region, script = split_tag(tag, text)
    return f"{lang}_{script}" + (f"-{region}" if region else "")


def documents(root: Path = NTREX) -> list[tuple[str, str, str, str]]:
    """``(tag, language value, script, text)`` of every document of every language (its lines joined
    by newlines), in file order."""
    ids = document_ids(root)
    out = []
    for tag, p in files(root).items():
        ls = lines(p)
        assert len(ls) == len(ids), (p, len(ls), len(ids))
        lang, region, script = split_tag(tag, "\n".join(ls[:200]))
        value = lang + (f"-{region}" if region else "")
        start = 0
        for k in range(1, len(ids) + 1):
            if k == len(ids) or ids[k] != ids[start]:
                out.append((tag, value, script, "\n".join(ls[start:k])))
                start = k
    return out


def parallel_folder(out: Path, root: Path = NTREX) -> Path:
    """One file per language named by its full tag, line-aligned (a parallel corpus)."""
    out.mkdir(parents=True, exist_ok=True)
    for tag, p in files(root).items():
        text = p.read_text(encoding="utf-8")
        (out / f"{full_tag(tag, text[:20000])}.txt").write_text(text, encoding="utf-8")
    return out


def _table(rows):
    import pyarrow as pa

    return pa.table({"text": [r[3] for r in rows], "language": [r[1] for r in rows],
                     "language_script": [r[2] for r in rows]})


def fineweb_folders(out: Path, root: Path = NTREX, copies: int = 1) -> Path:
    """``out/data/{lang}_{Script}[-REGION]/train/000_00000.parquet``: FineWeb-2's layout, one folder per
    (language, script, region); ``copies`` repeats every document (a larger corpus of the same languages)."""
    import pyarrow.parquet as pq

    by: dict[str, list] = {}
    for row in documents(root):
        tag, value, script, _ = row
        lang, _, region = value.partition("-")
        by.setdefault(f"{lang}_{script}" + (f"-{region}" if region else ""), []).extend([row] * copies)
    for name, rows in by.items():
        d = out / "data" / name / "train"
        d.mkdir(parents=True, exist_ok=True)
        pq.write_table(_table(rows), d / "000_00000.parquet", row_group_size=64)
    return out / "data"


def fineweb_shards(out: Path, root: Path = NTREX, *, order: str = "shuffled", shards: int = 8, seed: int = 0,
                   copies: int = 1, row_groups: tuple[int, ...] = (40, 97, 250)) -> Path:
    """Flat shards of every language's documents with ``text``, ``language``, ``language_script``, in
    ``order`` (``shuffled``, ``language``, ``length``), cut into ``shards`` files whose row groups
    cycle through the sizes ``row_groups`` (unequal, as real dumps' are)."""
    import pyarrow.parquet as pq

    rows = [r for r in documents(root) for _ in range(copies)]
    rng = random.Random(seed)
    if order == "shuffled":
        rng.shuffle(rows)
    elif order == "language":
        rows.sort(key=lambda r: (r[1], r[2]))        # stable: documents keep their order within a language
    elif order == "length":
        rows.sort(key=lambda r: len(r[3].encode()))
    else:
        raise ValueError(order)
    out.mkdir(parents=True, exist_ok=True)
    per = -(-len(rows) // shards)
    for s in range(shards):
        part = rows[s * per:(s + 1) * per]
        if not part:
            continue
        path = out / f"{s:03d}.parquet"
        with pq.ParquetWriter(path, _table(part[:1]).schema) as w:
            i, g = 0, s
            while i < len(part):
                n = row_groups[g % len(row_groups)]
                w.write_table(_table(part[i:i + n]), row_group_size=n)
                i, g = i + n, g + 1
    return out


if __name__ == "__main__":
    import argparse

    sys.path.insert(0, str(ROOT))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--copies", type=int, default=1)
    a = ap.parse_args()
    if not NTREX.is_dir():
        sys.exit(f"{NTREX} is absent")
    print(parallel_folder(a.out / "parallel"))
    print(fineweb_folders(a.out / "fineweb", copies=a.copies))
    for order in ("shuffled", "language", "length"):
        print(fineweb_shards(a.out / f"shards-{order}", order=order, copies=a.copies))
