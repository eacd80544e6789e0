"""The columnar pass normalises only the texts that :func:`tokstat.corpus.unsettled`'s RE2 pattern
matches (issue 43): a text it does not match must be one ``unicodedata.normalize`` leaves as it is.
Checked against ``unicodedata`` itself, through Arrow's regex engine (the one the pass uses): every
code point alone, every pair of a character that decomposes, composes or is a mark with every mark
and composing second character (and a sample of the rest), random texts weighted towards marks,
jamo and compatibility characters, the real texts of ../shared, and the shipped pattern against its
derivation."""

from __future__ import annotations

import json
import random
import unicodedata
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat.corpus import derive_unsettled, normalizer, unsettled
from tokstat.engine.scan import normalised
from tokstat.utf8 import FlatTexts

FORMS = ("NFC", "NFKC")
TABLE = Path(__file__).resolve().parent.parent / "tokstat" / "data" / "unsettled.json"
SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"


def missed(form: str, texts: list[str]) -> list[str]:
    """The texts the pattern does not match that ``unicodedata`` changes (must be none)."""
    hit = pc.match_substring_regex(pa.array(texts, pa.large_string()), unsettled(form)).to_pylist()
    return [t for t, h in zip(texts, hit) if not h and not unicodedata.is_normalized(form, t)]


def test_the_shipped_pattern_is_the_derivation_for_this_unicode():
    d = json.loads(TABLE.read_text(encoding="utf-8"))
    if d["unidata_version"] != unicodedata.unidata_version:
        pytest.skip(f"pattern for Unicode {d['unidata_version']}, this Python has {unicodedata.unidata_version} "
                    "(unsettled() derives it at run time; rerun analysis/make_unsettled_table.py)")
    for form in FORMS:
        assert d[form.lower()] == derive_unsettled(form)


@pytest.mark.parametrize("form", FORMS)
def test_the_pattern_finds_what_changes_and_passes_what_does_not(form):
    """It can fail both ways: a changing text unmatched, or the common scripts all matched."""
    changing = ["e\u0301", "\u212b", "\u1100\u1161", "\uac00\u11a8", "a\u0302\u0323",
                "\u00ea\u0323", "\u0928\u093c", "\u0b47\u0b3e", "a\u0952\u0301"]
    changing += ["你好，世界", "\uff21"] if form == "NFKC" else []
    assert missed(form, changing) == []
    assert all(pc.match_substring_regex(pa.array(changing), unsettled(form)).to_pylist())
    plain = ["ascii", "你好。世界", "\u00e9t\u00e9", "\ud55c\uad6d\uc5b4", "\u0915\u093c", "привет", "ที่"]
    assert not any(pc.match_substring_regex(pa.array(plain), unsettled(form)).to_pylist())


@pytest.mark.slow
@pytest.mark.parametrize("form", FORMS)
def test_every_code_point_alone(form):
    assert missed(form, [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]) == []


def _kinds():
    """Characters with a canonical decomposition, marks (non-zero class), composing first and second
    characters, Hangul jamo and a few syllables."""
    dec, firsts, seconds, marks = set(), set(), set(), set()
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue
        ch = chr(c)
        if unicodedata.combining(ch):
            marks.add(ch)
        d = unicodedata.decomposition(ch)
        if d and d[0] != "<":
            dec.add(ch)
            p = d.split()
            if len(p) == 2:
                firsts.add(chr(int(p[0], 16)))
                seconds.add(chr(int(p[1], 16)))
    jamo = {chr(c) for c in [*range(0x1100, 0x1113), *range(0x1161, 0x1176), *range(0x11A8, 0x11C3)]}
    return sorted(dec | firsts | marks | jamo | {"\uac00", "\uac01", "\ud7a3"}), sorted(marks | seconds | jamo)


@pytest.mark.slow
@pytest.mark.parametrize("form", FORMS)
def test_every_pair_that_could_reorder_or_compose(form):
    lefts, rights = _kinds()
    rng = random.Random(0)
    rights += [chr(c) for c in rng.sample(range(0x20, 0x30000), 3000) if not 0xD800 <= c <= 0xDFFF]
    bad = missed(form, [x + y for x in lefts for y in rights])
    assert bad == [], [" ".join(f"{ord(c):04X}" for c in t) for t in bad[:10]]


@pytest.mark.slow
@pytest.mark.parametrize("form", FORMS)
def test_the_real_texts_of_shared(form):
    if not SHARED.exists():
        pytest.skip("../shared is absent")
    texts = [line[9:].strip() for f in sorted(SHARED.glob("ud-pud/*/*.conllu")) for line in f.open(encoding="utf-8")
             if line.startswith("# text = ")]
    tat = SHARED / "tatoeba-cmn-eng" / "cmn.txt"
    if tat.exists():
        texts += [x for line in tat.open(encoding="utf-8") for x in line.split("\t")[:2]]
    texts += [unicodedata.normalize("NFD", t) for t in texts[::7]]          # and decomposed ones
    assert len(texts) > 12000
    assert missed(form, texts) == []


INTERESTING = st.sampled_from([chr(c) for c in [*range(0x300, 0x370), *range(0x1100, 0x1200), 0xAC00, 0xAC01, 0xD7A3,
                                                 *range(0x0900, 0x0980), *range(0x0E00, 0x0E60), 0x212B, 0x2126,
                                                 0xFB01, 0xFF21, 0x2460, 0x00C5, 0x00E9, 0x1E9B, 0x0344, 0x0F73,
                                                 0x0B47, 0x0B3E, 0x0B57, 0x0CC6, 0x0CD5, 0x0CC2, 0x3099, 0x304B,
                                                 0x00EA, 0x1EB9, 0x0323, 0x0302, 0x0651, 0x064E, 0x0627, 0x0653,
                                                 0x0E38, 0x0E48, 0x0928, 0x093C, 0x094D, 0x05B4, 0x05B7, 0x05D0]])


@settings(max_examples=600, deadline=None)
@given(texts=st.lists(st.text(INTERESTING | st.characters(exclude_categories=("Cs",)), max_size=12), min_size=1,
                      max_size=20), form=st.sampled_from(FORMS))
def test_a_text_the_pattern_passes_is_already_normalised(texts, form):
    assert missed(form, texts) == []


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(st.text(INTERESTING | st.characters(exclude_categories=("Cs",)), max_size=10), max_size=8),
       form=st.sampled_from(["nfc", "nfkc", "none", "nfc+strip"]))
def test_the_columnar_normalisation_is_the_python_one(texts, form):
    """normalised() on an Arrow column gives what the per-text normaliser gives, text by text."""
    norm = normalizer(form)
    got = normalised(FlatTexts(pa.array(texts, pa.large_string())), form, {})
    assert got.tolist() == [norm(t) for t in texts]
    assert bytes(got.buffer()) == b"".join(norm(t).encode("utf-8") for t in texts)
    assert got.nbytes().tolist() == [len(norm(t).encode("utf-8")) for t in texts]
    assert got.nchars().tolist() == [len(norm(t)) for t in texts]


def test_an_unchanged_column_is_not_copied():
    arr = pa.array(["plain", "你好", "e\u0301"[:1] + "x", "한국어"], pa.large_string())
    t = FlatTexts(arr)
    assert normalised(t, "nfc", {}) is t
    changed = normalised(FlatTexts(pa.array(["e\u0301", "ok"], pa.large_string())), "nfc", {})
    assert changed.tolist() == ["\u00e9", "ok"]
