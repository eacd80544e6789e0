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


def test_thai_words_are_icus_by_default_and_newmm_on_request():
    """Thai's default is ICU's dictionary word break (named in the signature); PyThaiNLP's newmm, the
    default before, stays one choice away, for Thai only."""
    pytest.importorskip("icu4py")
    from icu4py.breakers import WordBreaker

    from tokstat import TokstatError
    from tokstat.segmenters import segmenter_name, word_spans

    name = segmenter_name("th", False)
    assert name.startswith("icu-") and not name.endswith("syllables")
    text = "ฉันรักภาษาไทยมาก ครับ"
    want = [(a, b) for a, b in WordBreaker(text, "th").segments() if text[a:b].strip()]
    assert word_spans("th", text, None) == want and len(want) >= 5
    if pytest.importorskip("pythainlp"):
        assert segmenter_name("th", False, "newmm").startswith("pythainlp-newmm-")
        with pytest.raises(TokstatError, match="the newmm segmenter is for th, not ja"):
            segmenter_name("ja", False, "newmm")


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


# ---------------------------------------------------------------- a segmenter chosen per language

@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["저는", "한국어를", "공부합니다", "했어요", "서울에", "살아요", " ", "  ", ".", "!", "2024년",
                                 "AI", "\n", "먹었다", "갔습니다"]), min_size=1, max_size=30))
def test_kiwi_words_are_kiwis_morphemes_as_non_overlapping_spans(parts):
    kiwipiepy = pytest.importorskip("kiwipiepy")
    from tokstat.segmenters import kiwi_words

    text = "".join(parts)
    spans = kiwi_words(text)
    assert all(0 <= a < b <= len(text) for a, b in spans)
    assert all(b1 <= a2 for (_, b1), (a2, _) in zip(spans, spans[1:]))          # sorted, never overlapping
    assert all(text[a:b].strip() for a, b in spans)
    # oracle: every boundary is a boundary of one of Kiwi's own morphemes, and every morpheme lies
    # inside one span (morphemes sharing characters, a contraction, are one span)
    morphs = [(t.start, t.start + t.len) for t in kiwipiepy.Kiwi().tokenize(text) if text[t.start:t.start + t.len].strip()]
    edges = {a for a, _ in morphs} | {b for _, b in morphs}
    assert {a for a, _ in spans} | {b for _, b in spans} <= edges
    assert all(any(a <= m0 and m1 <= b for a, b in spans) for m0, m1 in morphs)


def test_choices_are_checked():
    from tokstat.errors import TokstatError
    from tokstat.segmenters import check_choice, segmenter_name

    with pytest.raises(TokstatError, match="unknown segmenter 'mecab2' for ja"):
        check_choice("ja", "mecab2")
    with pytest.raises(TokstatError, match="the kiwi segmenter is for ko, not en"):
        check_choice("en", "kiwi")
    assert segmenter_name("ko", True, "default") == "gold"
    assert segmenter_name("ko", True, "regex") == "regex"        # a choice wins over gold words


def test_a_missing_chosen_segmenter_names_the_extra(monkeypatch):
    import tokstat.segmenters as seg
    from tokstat.errors import TokstatError

    monkeypatch.setattr(seg, "_have", lambda dist: None)
    with pytest.raises(TokstatError, match=r"needs kiwipiepy.*tokstat\[words\]"):
        seg.check_choice("ko", "kiwi")


def test_compare_segmenter_option(tmp_path, capsys):
    pytest.importorskip("kiwipiepy")
    from tokstat import compare, load_corpus
    from tokstat.cli import main
    from tokstat.segmenters import kiwi_words

    src = tmp_path / "p.tsv"
    src.write_text("en\tko\n" + "".join(f"I studied Korean {i} times.\t저는 한국어를 {i}번 공부했습니다.\n" for i in range(30)),
                   encoding="utf-8")
    c = load_corpus(str(src))
    plain = compare(c, ["tiktoken:cl100k_base"], n_boot=0)
    kiwi = compare(c, ["tiktoken:cl100k_base"], n_boot=0, segmenters={"ko": "kiwi"})
    k = kiwi.filter(kiwi["language"] == "ko").row(0, named=True)
    p = plain.filter(plain["language"] == "ko").row(0, named=True)
    assert "|words:kiwi-" in k["signature"] and "|words:regex" in p["signature"]
    assert k["tokens"] == p["tokens"] and k["words"] > p["words"]
    assert k["words"] == sum(len(kiwi_words(s.texts["ko"])) for s in c)
    for args, match in ((["--segmenter", "ko"], "is not LANG=NAME"), (["--segmenter", "ko=mecab"], "unknown segmenter"),
                        (["--segmenter", "en=kiwi"], "is for ko, not en"), (["--segmenter", "ja=icu"], "not a language of the corpus"),
                        (["--segmenter", "ko=kiwi", "--segmenter", "ko=regex"], "names ko twice"),
                        (["--segmenter", "=kiwi"], "is not LANG=NAME")):
        assert main(["compare", str(src), "-t", "tiktoken:cl100k_base", "--quiet", *args]) != 0, args
        assert match in capsys.readouterr().err, args


# ---------------------------------------------------------------- gold words located fast

@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=6), min_size=1, max_size=40),
       st.lists(st.sampled_from([" ", "", "  ", "\t", "\u3000", "\n", "\u00a0", "x"]), min_size=41, max_size=41))
def test_gold_spans_tiled_equals_the_find_loop(words, seps):
    from tokstat import segmenters
    from tokstat.segmenters import _tiled_spans, find_spans, gold_spans

    text = seps[0] + "".join(w + seps[i + 1] for i, w in enumerate(words))
    tiled = _tiled_spans(text, words)
    if tiled is not None:             # when the layout check accepts, the answer is the loop's
        assert tiled == find_spans(text, words)
    old = segmenters.GOLD_VECTOR_MIN
    try:
        segmenters.GOLD_VECTOR_MIN = 1
        assert gold_spans(text, words) == find_spans(text, words)
    finally:
        segmenters.GOLD_VECTOR_MIN = old


def test_gold_spans_tiled_on_joined_pud(shared):
    from tokstat import load_corpus
    from tokstat.segmenters import _tiled_spans, find_spans

    c = load_corpus(shared / "corpora/ud-pud")
    segs = list(c)
    hits = 0
    for lang in c.languages:
        text = " ".join(s.texts[lang] for s in segs)
        words = [w for s in segs for w in s.words[lang]]
        tiled = _tiled_spans(text, words)
        hits += tiled is not None
        if tiled is not None:
            assert tiled == find_spans(text, words), lang
    assert hits >= 6       # most languages' gold words tile their text


def _child_trie_misses(q) -> None:
    from pythainlp.tokenize import word_dict_trie

    from tokstat.segmenters import thai_words

    thai_words("ภาษาไทย")
    q.put(word_dict_trie.cache_info().misses)


def test_warm_loads_the_dictionaries_once_for_forked_workers(monkeypatch):
    """warm() loads jieba's and PyThaiNLP's dictionaries in this process (a forked worker finds the
    trie built: its cache has no new miss), skips regex, gold and null segmenters, and loads each
    segmenter once however many languages share it."""
    import multiprocessing as mp

    pytest.importorskip("pythainlp")
    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork on this platform")
    from pythainlp.tokenize import word_dict_trie

    import tokstat.segmenters as seg

    monkeypatch.setattr(seg, "_jieba", None)
    word_dict_trie.cache_clear()
    names = {"th": seg.segmenter_name("th", False, "newmm"), "zh": seg.segmenter_name("zh", False),
             "yue": seg.segmenter_name("yue", False), "en": "regex", "de": "gold", "km": None}
    assert seg.warm(names) == [names["th"], names["zh"]]
    assert seg._jieba is not None and word_dict_trie.cache_info().currsize == 1
    misses = word_dict_trie.cache_info().misses
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_trie_misses, args=(q,))
    p.start()
    child = q.get(timeout=60)
    p.join()
    assert child == misses          # the child used the parent's trie


def test_warm_leaves_cold_what_it_does_not_list(monkeypatch):
    """A segmenter warm() does not list (ICU, kiwi) is never called by it."""
    import tokstat.segmenters as seg

    calls = []
    monkeypatch.setattr(seg, "word_spans", lambda *a, **k: calls.append(a))
    assert seg.warm({"km": "icu-74.2", "ko": "kiwi-0.20-morphemes"}) == [] and calls == []
