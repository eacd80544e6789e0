"""Every format round-trips: one random aligned corpus (arbitrary Unicode with CR, CRLF, U+2028,
U+0085, quotes, tabs, BOM-like U+FEFF, markup characters, empty segments) is written in every
supported format by that format's own writer (csv, json, polars, polib, datasets, an XML writer)
and loaded back: the same segments in the same order, and one content fingerprint for all of them.

Formats that name segments their own way are compared on their own ids: gettext (``msgctxt`` +
``msgid``; an untranslated entry is not a segment) and CoNLL-U (``sent_id``, plus gold words).
"""

from __future__ import annotations

import csv
import io
import json
import os
import unicodedata
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokstat import load_corpus
from tokstat.corpus import Segment, content_fingerprint

SPECIALS = ["\t", "\r", "\n", "\r\n", "\x85", "\u2028", "\u2029", "\ufeff", '"', "'", '""', '"x"', "\\", "“", "”",
            "<", "&", ">", "]]>", "&amp;", "\u00a0", "\u3000", " ", "e\u0301", "👩‍👩‍👧", "你好", ",", ";", "#", "\\n"]
#: arbitrary text, less what no text format holds: lone surrogates, unassigned code points and C0/C1
#: controls other than tab, CR, LF and NEL (XML 1.0 forbids them; .mo files use NUL and EOT)
TEXT = st.lists(st.sampled_from(SPECIALS) | st.text(st.characters(exclude_categories=("Cs", "Cc", "Cn")), max_size=4),
                max_size=8).map("".join)
#: what one line of a line-based file holds: no LF, and no CR at the very end (that is a CRLF ending)
LINE = TEXT.map(lambda t: t.replace("\n", " ").rstrip("\r"))
SETTINGS = settings(max_examples=int(os.environ.get("ROUNDTRIP_EXAMPLES", 25)), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def nfc(t: str) -> str:
    return unicodedata.normalize("NFC", t)


def expected(pairs) -> list[Segment]:
    return [Segment(str(i), {"en": nfc(a), "zh": nfc(b)}) for i, (a, b) in enumerate(pairs, 1)]


def rows(pairs):
    return [(str(i), a, b) for i, (a, b) in enumerate(pairs, 1)]


# ---------------------------------------------------------------- writers: pairs -> (spec, load options)

def w_tsv(d: Path, pairs, crlf=False, quoting=csv.QUOTE_MINIMAL):
    """Spreadsheet-style TSV: csv.writer with tabs quotes a field holding a tab, quote or LF (and a
    CR when rows end in CRLF; with LF row ends it leaves a CR unquoted, so a text ending in CR at the
    end of a row cannot be told from a CRLF ending: that writer is in the line-safe test only)."""
    buf = io.StringIO(newline="")
    wr = csv.writer(buf, delimiter="\t", lineterminator="\r\n" if crlf else "\n", quoting=quoting)
    wr.writerow(["id", "en", "zh"])
    wr.writerows(rows(pairs))
    (d / "c.tsv").write_bytes(buf.getvalue().encode())
    return d / "c.tsv", {}


def w_csv(d: Path, pairs):
    buf = io.StringIO(newline="")
    wr = csv.writer(buf)                  # excel dialect: CRLF row ends
    wr.writerow(["id", "en", "zh"])
    wr.writerows(rows(pairs))
    (d / "c.csv").write_bytes(buf.getvalue().encode())
    return d / "c.csv", {}


def w_jsonl(d: Path, pairs, ascii_=False):
    (d / "c.jsonl").write_bytes("".join(json.dumps({"id": i, "en": a, "zh": b}, ensure_ascii=ascii_) + "\n"
                                        for i, a, b in rows(pairs)).encode())
    return d / "c.jsonl", {}


def w_jsonl_nested(d: Path, pairs):
    (d / "c.jsonl").write_bytes("".join(json.dumps({"id": i, "translation": {"en": a, "zh": b}}, ensure_ascii=False)
                                        + "\n" for i, a, b in rows(pairs)).encode())
    return d / "c.jsonl", {"columns": {"en": "translation.en", "zh": "translation.zh"}}


def w_parquet(d: Path, pairs):
    ids, en, zh = zip(*rows(pairs))
    pl.DataFrame({"id": list(ids), "en": list(en), "zh": list(zh)}).write_parquet(d / "c.parquet")
    return d / "c.parquet", {}


def _shards(d: Path, pairs, suffix):
    r = rows(pairs)
    half = len(r) // 2
    (d / "s").mkdir()
    for k, part in enumerate((r[:half], r[half:])):
        df = pl.DataFrame({"id": [x[0] for x in part], "en": [x[1] for x in part], "zh": [x[2] for x in part]},
                          schema={"id": pl.String, "en": pl.String, "zh": pl.String})
        if suffix == ".parquet":
            df.write_parquet(d / "s" / f"part-{k}.parquet")
        else:
            (d / "s" / f"part-{k}.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n"
                                                             for x in df.iter_rows(named=True)), encoding="utf-8")
    return d / "s", {}


def w_tmx(d: Path, pairs):
    def esc(t):
        return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")
    tus = "".join(f'<tu tuid="{i}"><tuv xml:lang="en"><seg>{esc(a)}</seg></tuv>'
                  f'<tuv xml:lang="zho_Hans"><seg>{esc(b)}</seg></tuv></tu>\n' for i, a, b in rows(pairs))
    (d / "c.tmx").write_bytes(f'<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4"><header srclang="en"/>'
                              f"<body>\n{tus}</body></tmx>\n".encode())
    return d / "c.tmx", {}


def w_hf(d: Path, pairs):
    from datasets import Dataset

    Dataset.from_dict({"en": [a for a, _ in pairs], "zh": [b for _, b in pairs]}).save_to_disk(str(d / "hf"))
    return d / "hf", {"columns": {"en": "en", "zh": "zh"}}


def w_textdir(d: Path, pairs, bom=False):
    """One file per language, one segment per line; a file whose first text starts with U+FEFF is
    written with a BOM, as a UTF-8 writer must (else that character reads as the BOM)."""
    (d / "t").mkdir()
    for lang, texts in (("en", [a for a, _ in pairs]), ("zh", [b for _, b in pairs])):
        sig = bom or texts[0].startswith("\ufeff")
        (d / "t" / f"{lang}.txt").write_bytes((b"\xef\xbb\xbf" if sig else b"") + "".join(t + "\n" for t in texts).encode())
    return d / "t", {}


STRUCTURED = {   # formats that hold any text, LF and a trailing CR included
    "tsv-crlf": lambda d, p: w_tsv(d, p, crlf=True), "tsv-quote-all": lambda d, p: w_tsv(d, p, quoting=csv.QUOTE_ALL),
    "csv": w_csv, "jsonl": w_jsonl,
    "jsonl-ascii": lambda d, p: w_jsonl(d, p, ascii_=True), "jsonl-nested": w_jsonl_nested, "parquet": w_parquet,
    "jsonl-shards": lambda d, p: _shards(d, p, ".jsonl"), "parquet-shards": lambda d, p: _shards(d, p, ".parquet"),
    "tmx": w_tmx, "hf-save-to-disk": w_hf,
}
LINE_BASED = {"textdir": w_textdir, "textdir-bom": lambda d, p: w_textdir(d, p, bom=True), "tsv": w_tsv}


def check(tmp: Path, writer, pairs):
    spec, opts = writer(tmp, pairs)
    c = load_corpus(str(spec), **opts)
    got = list(c)
    want = expected(pairs)
    assert sorted(c.languages) == ["en", "zh"]
    assert [(s.id, s.texts) for s in got] == [(s.id, s.texts) for s in want]
    assert c.fingerprint() == content_fingerprint(want, ["en", "zh"])


@pytest.mark.parametrize("fmt", sorted(STRUCTURED) + sorted(LINE_BASED))
@SETTINGS
@given(pairs=st.lists(st.tuples(LINE, LINE), min_size=2, max_size=6))
def test_one_line_safe_corpus_round_trips_through_every_format(tmp_path_factory, fmt, pairs):
    """The corpus every format holds (no LF inside a text): identical segments and fingerprint."""
    check(tmp_path_factory.mktemp(fmt), {**STRUCTURED, **LINE_BASED}[fmt], pairs)


@pytest.mark.parametrize("fmt", sorted(STRUCTURED))
@SETTINGS
@given(pairs=st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=6))
def test_any_text_round_trips_through_structured_formats(tmp_path_factory, fmt, pairs):
    """Texts with LF, CRLF and a trailing CR, through the formats that can hold them."""
    check(tmp_path_factory.mktemp(fmt), STRUCTURED[fmt], pairs)


# ---------------------------------------------------------------- gettext: msgctxt + msgid name a segment

@pytest.mark.parametrize("suffix", [".po", ".mo"])
@SETTINGS
@given(pairs=st.lists(st.tuples(TEXT.filter(bool), TEXT), min_size=1, max_size=6))
def test_gettext_round_trips_through_po_and_mo(tmp_path_factory, suffix, pairs):
    import polib

    d = tmp_path_factory.mktemp("po")
    cat = polib.POFile()
    cat.metadata = {"Language": "zh_Hans", "Content-Type": "text/plain; charset=UTF-8"}
    for i, a, b in rows(pairs):
        cat.append(polib.POEntry(msgctxt=i, msgid=a, msgstr=b))
    p = d / f"zh_Hans{suffix}"
    cat.save(str(p)) if suffix == ".po" else cat.save_as_mofile(str(p))
    c = load_corpus(str(p))
    # an untranslated entry (empty msgstr) is not a translation: not a segment
    want = [(f"{i}\x04{nfc(a)}" if suffix == ".po" else f"{i}\x04{a}", {"en": nfc(a), "zh": nfc(b)})
            for i, a, b in rows(pairs) if b]
    got = [(s.id, s.texts) for s in c]
    assert [(sid.split("\x04")[0], t) for sid, t in got] == [(sid.split("\x04")[0], t) for sid, t in want]
    assert c.languages == ["en", "zh"]


# ---------------------------------------------------------------- CoNLL-U: sent_id, # text and gold words

WORD = st.text(st.characters(exclude_categories=("Cs", "Cc", "Cn", "Zs", "Zl", "Zp")), min_size=1, max_size=5)


@SETTINGS
@given(sents=st.lists(st.tuples(st.lists(WORD, min_size=1, max_size=5), st.lists(WORD, min_size=1, max_size=5)),
                      min_size=1, max_size=5))
def test_conllu_round_trips_texts_and_gold_words(tmp_path_factory, sents):
    d = tmp_path_factory.mktemp("ud")
    for lang, k in (("en", 0), ("zh", 1)):
        out = []
        for i, s in enumerate(sents, 1):
            words = s[k]
            out.append(f"# sent_id = s{i}\n# text = {' '.join(words)}\n")
            out += [f"{j}\t{w}\t_\t_\t_\t_\t0\t_\t_\t_\n" for j, w in enumerate(words, 1)]
            out.append("\n")
        (d / f"{lang}_x-ud-test.conllu").write_text("".join(out), encoding="utf-8")
    c = load_corpus(str(d))
    got = [(s.id, s.texts, s.words) for s in c]
    assert got == [(f"s{i}", {"en": nfc(" ".join(a)), "zh": nfc(" ".join(b))},
                    {"en": [nfc(w) for w in a], "zh": [nfc(w) for w in b]}) for i, (a, b) in enumerate(sents, 1)]
    assert c.fingerprint() == content_fingerprint([Segment(*g) for g in got], ["en", "zh"])


def test_fingerprint_names_content_not_format(tmp_path):
    """The same pairs in all 14 writers' files: one fingerprint; one changed character: another."""
    pairs = [("Hello, \"world\"", "你好，世界"), ("a\tb", "乙\r丙")]
    fps = set()
    for name, wr in {**STRUCTURED, **LINE_BASED}.items():
        d = tmp_path / name
        d.mkdir()
        spec, opts = wr(d, pairs)
        fps.add(load_corpus(str(spec), **opts).fingerprint())
    assert len(fps) == 1
    d = tmp_path / "changed"
    d.mkdir()
    spec, _ = w_tsv(d, [pairs[0], ("a\tb", "乙\r丁")])
    assert load_corpus(str(spec)).fingerprint() not in fps
