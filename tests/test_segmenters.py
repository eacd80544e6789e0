"""Word segmenters: jieba called in pieces stays linear on pathological runs and is jieba itself on
ordinary sentences."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat.segmenters import JIEBA_CHUNK, jieba_words

HAN = st.text(st.sampled_from("甲乙我来到北京清华大学的了是，。 \tab1"), max_size=1500)


def _direct(text: str) -> list[tuple[int, int]]:
    """jieba itself, called on the whole text."""
    out, pos = [], 0
    for w in _tok().cut(text, HMM=True):
        if w.strip():
            out.append((pos, pos + len(w)))
        pos += len(w)
    return out


_T = None


def _tok():
    global _T
    if _T is None:
        import jieba

        _T = jieba.Tokenizer()
        _T.initialize()
    return _T


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(HAN)
def test_jieba_pieces_tile_the_text_and_equal_jieba_on_short_texts(text):
    spans = jieba_words(text)
    assert all(0 <= a < b <= len(text) for a, b in spans)
    assert all(b <= c for (_, b), (c, _) in zip(spans, spans[1:]))
    covered = {i for a, b in spans for i in range(a, b)}
    assert covered >= {i for i, ch in enumerate(text) if not ch.isspace()}
    if len(text) <= JIEBA_CHUNK:
        assert spans == _direct(text)


def test_a_long_run_of_one_character_is_segmented_completely():
    spans = jieba_words("甲" * 20_000)
    assert spans[0][0] == 0 and spans[-1][1] == 20_000
    assert sum(b - a for a, b in spans) == 20_000


# ---------------------------------------------------------------- Japanese and Thai (the words extra)

def test_mecab_words_are_fugashis_surfaces():
    fugashi = pytest.importorskip("fugashi")
    from tokstat.segmenters import mecab_words

    tagger = fugashi.Tagger()
    for text in ("私は東京の大学で勉強しています。", "今日は いい天気ですね", "ＡＩの研究"):
        spans = mecab_words(text)
        assert [text[a:b] for a, b in spans] == [w.surface for w in tagger(text) if w.surface.strip()]


@pytest.mark.slow
def test_thai_words_are_pythainlps_newmm():
    pytest.importorskip("pythainlp")
    from pythainlp.tokenize import word_tokenize

    from tokstat.segmenters import thai_words

    for text in ("ฉันรักภาษาไทยมาก ครับ", "วันนี้อากาศดี"):
        assert [text[a:b] for a, b in thai_words(text)] == [w for w in word_tokenize(text, engine="newmm") if w.strip()]


def test_a_missing_segmenter_gives_null_words_with_a_warning(monkeypatch):
    import tokstat.segmenters as seg

    monkeypatch.setattr(seg, "_have", lambda dist: None)
    monkeypatch.setattr(seg, "_warned", set())
    with pytest.warns(UserWarning, match=r"ja: no word segmenter installed \(fugashi\).*tokstat\[words\]"):
        assert seg.segmenter_name("ja", False) is None
    assert seg.segmenter_name("ja", True) == "gold"


@pytest.mark.slow
def test_every_pud_language_gets_words_without_gold(shared):
    from tokstat.segmenters import segmenter_name, word_spans
    from tokstat import load_corpus

    c = load_corpus(shared / "corpora/ud-pud")
    seg = next(iter(c))
    for lang in c.languages:
        name = segmenter_name(lang, False)
        assert name is not None, lang
        spans = word_spans(lang, seg.texts[lang], None)
        assert spans and all(0 <= a < b <= len(seg.texts[lang]) for a, b in spans), lang


@pytest.mark.parametrize("lang,text", [
    ("km", "ខ្ញុំស្រឡាញ់ភាសាខ្មែរ ហើយខ្ញុំរៀនវា។"), ("lo", "ຂ້ອຍຮັກພາສາລາວ ແລະ ຂ້ອຍຮຽນມັນ."),
    ("my", "ကျွန်တော်မြန်မာစကားကိုချစ်တယ်။"), ("bo", "བོད་ཀྱི་སྐད་ཡིག་ནི་སྐད་ཡིག་ཡིན། "),
    ("dz", "རྫོང་ཁ་ནི་འབྲུག་གི་སྐད་ཡིག་ཨིན།"), ("km-Khmr", "ខ្ញុំស្រឡាញ់ភាសាខ្មែរ")])
def test_unspaced_scripts_get_words_from_icu(lang, text):
    pytest.importorskip("icu4py")
    from icu4py.breakers import WordBreaker

    from tokstat.segmenters import segmenter_name, word_spans

    name = segmenter_name(lang, False)
    assert name.startswith("icu-") and name.endswith("-syllables") == (lang in ("bo", "dz"))
    spans = word_spans(lang, text, None)
    # the words are ICU's own segments (oracle), whitespace dropped, a Tibetan tsheg joined to its syllable
    icu = [(a, b) for a, b in WordBreaker(text, lang.split("-")[0]).segments()
           if text[a:b].strip()]
    ends = {b for _, b in spans}
    assert {a for a, _ in spans} <= {a for a, _ in icu} and ends <= {b for _, b in icu}
    assert "".join(text[a:b] for a, b in spans) == "".join(text.split())   # every non-space character once
    if lang not in ("bo", "dz"):
        assert spans == icu
    else:
        assert all(not all(c in "་།" for c in text[a:b]) for a, b in spans)   # no word is a bare tsheg
