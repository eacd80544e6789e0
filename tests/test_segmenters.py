"""Word segmenters: jieba called in pieces stays linear on pathological runs and is jieba itself on
ordinary sentences."""

from __future__ import annotations

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
