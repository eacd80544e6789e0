"""Every loader on realistic files, plus the bad-input errors of the foundation issue."""

from __future__ import annotations

import json

import datasets
import polars as pl
import polib
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat import TokstatError, corpus_info, load_corpus
from tokstat.cli import main
from tokstat.langs import normalize_lang

PAIRS = [("Hello, world.", "你好，世界。"), ("The cat sat on the mat.", "猫坐在垫子上。"),
         ("Price: 4.2 billion yuan", "价格：42亿元")]


def texts(corpus, lang):
    return [s.texts[lang] for s in corpus]


def test_bundled_sample_has_400_pairs_over_seven_domains():
    c = load_corpus("sample")
    segs = list(c)
    assert c.name == "sample-zh-en" and c.languages == ["en", "zh"]
    assert len(segs) >= 400
    assert len({s.id.rsplit("-", 1)[0] for s in segs}) == 7
    assert all(s.texts["en"] and s.texts["zh"] for s in segs)
    assert len({s.texts["zh"] for s in segs}) == len(segs)  # no duplicated sentences


def test_textdir_by_line_and_flores_names(tmp_path):
    d = tmp_path / "plain"
    d.mkdir()
    (d / "en.txt").write_text("\n".join(e for e, _ in PAIRS) + "\n", encoding="utf-8")
    (d / "zh.txt").write_text("\n".join(z for _, z in PAIRS), encoding="utf-8")  # no final newline
    c = load_corpus(d)
    assert texts(c, "en") == [e for e, _ in PAIRS] and texts(c, "zh") == [z for _, z in PAIRS]
    f = tmp_path / "flores"
    f.mkdir()
    (f / "eng_Latn.devtest").write_text("a\nb\n", encoding="utf-8")
    (f / "zho_Hans.devtest").write_text("甲\n乙\n", encoding="utf-8")
    (f / "zho_Hant.devtest").write_text("甲\n乙\n", encoding="utf-8")
    c = load_corpus(f)
    assert sorted(c.languages) == ["en", "zh", "zh-Hant"]
    assert [s.texts["zh-Hant"] for s in c] == ["甲", "乙"]


def test_textdir_crlf_bom_and_nfc(tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    (d / "en.txt").write_bytes("\ufeffcafe\u0301\r\nx\r\n".encode())
    (d / "zh.txt").write_bytes("咖啡\r\n乙\r\n".encode())
    segs = list(load_corpus(d))
    assert segs[0].texts["en"] == "caf\u00e9"  # BOM dropped, CR dropped, NFC applied
    assert segs[1].texts == {"en": "x", "zh": "乙"}


def test_textdir_unequal_line_counts_names_both(tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    (d / "en.txt").write_text("a\nb\nc\n", encoding="utf-8")
    (d / "zh.txt").write_text("甲\n", encoding="utf-8")
    with pytest.raises(TokstatError, match=r"zh.txt has 1, en.txt has 3"):
        list(load_corpus(d))


def test_invalid_utf8_names_file_line_and_offset(tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    (d / "en.txt").write_text("ok\nok\n", encoding="utf-8")
    (d / "zh.txt").write_bytes("好\n".encode() + "坏".encode("gb18030") + b"\n")
    with pytest.raises(TokstatError) as e:
        list(load_corpus(d))
    msg = str(e.value)
    assert "zh.txt:2:" in msg and "byte offset 4" in msg and "replace" in msg
    segs = list(load_corpus(d, encoding_errors="replace"))
    assert "\ufffd" in segs[1].texts["zh"]


def test_empty_segments_are_counted_not_dropped(tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    (d / "en.txt").write_text("a\n\nc\n", encoding="utf-8")
    (d / "zh.txt").write_text("甲\n乙\n\n", encoding="utf-8")
    info = corpus_info(load_corpus(d))
    assert info.segments == 3
    assert info.per_language["en"] == {"segments": 2, "empty": 1, "chars": 2, "bytes": 2}
    assert info.per_language["zh"]["empty"] == 1


def test_unknown_language_code(tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    (d / "en.txt").write_text("a\n", encoding="utf-8")
    (d / "xq.txt").write_text("b\n", encoding="utf-8")
    with pytest.raises(TokstatError, match="unknown language code 'xq'"):
        load_corpus(d)


@pytest.mark.parametrize("code,expected", [("eng_Latn", "en"), ("zho_Hant", "zh-Hant"), ("zh_TW", "zh-TW"),
                                           ("cmn", "zh"), ("ja", "ja"), ("pt-BR", "pt-BR"), ("deu", "de"),
                                           ("srp_Latn", "sr-Latn"), ("srp_Cyrl", "sr"), ("prs_Arab", "fa-AF"),
                                           ("kor_Hang", "ko"), ("arb_Arab", "ar"), ("zh-Hant-TW", "zh-TW")])
def test_language_codes(code, expected):
    assert normalize_lang(code) == expected


def test_missing_file_and_unknown_spec(tmp_path):
    with pytest.raises(TokstatError, match="no corpus"):
        load_corpus(tmp_path / "nothing.tsv")
    with pytest.raises(TokstatError, match="unknown corpus format"):
        (tmp_path / "x.docx").write_text("x")
        load_corpus(tmp_path / "x.docx")


def test_tsv_and_csv_with_header(tmp_path):
    p = tmp_path / "pairs.tsv"
    p.write_text("id\ten\tzh\tnote\n" + "".join(f"s{i}\t{e}\t{z}\tx\n" for i, (e, z) in enumerate(PAIRS)),
                 encoding="utf-8")
    c = load_corpus(p)
    assert c.languages == ["en", "zh"] and [s.id for s in c] == ["s0", "s1", "s2"]
    q = tmp_path / "pairs.csv"
    pl.DataFrame({"en": ['He said "hi, there"', "b"], "zh": ["他说“你好”", "乙"]}).write_csv(q)
    assert texts(load_corpus(q), "en") == ['He said "hi, there"', "b"]


def test_tsv_short_row_names_line(tmp_path):
    p = tmp_path / "pairs.tsv"
    p.write_text("en\tzh\na\t甲\nb\n", encoding="utf-8")
    with pytest.raises(TokstatError, match=r"pairs.tsv:3: row has 1 fields"):
        list(load_corpus(p))


def test_headerless_columns_option(tmp_path):
    p = tmp_path / "pairs.tsv"
    p.write_text("a\t甲\tjunk\nb\t乙\tjunk\n", encoding="utf-8")
    c = load_corpus(p, columns=["en", "zh", "_"])
    assert texts(c, "zh") == ["甲", "乙"]


def test_tatoeba_style_file_is_recognised(tmp_path):
    p = tmp_path / "cmn.txt"
    p.write_text("Hi.\t嗨。\tCC-BY 2.0 (France) Attribution: tatoeba.org #1 (a) & #2 (b)\n"
                 "Run.\t你用跑的。\tCC-BY 2.0 (France) Attribution: tatoeba.org #3 (a) & #4 (b)\n", encoding="utf-8")
    c = load_corpus(p)
    assert c.languages == ["en", "zh"] and texts(c, "zh") == ["嗨。", "你用跑的。"]


def test_shared_tatoeba(shared):
    c = load_corpus(shared / "corpora/tatoeba-cmn-eng/cmn.txt")
    info = corpus_info(c)
    assert info.segments == 26388
    assert info.per_language["zh"]["empty"] == 0
    first = next(iter(c))
    assert first.texts == {"en": "Hi.", "zh": "嗨。"}


def test_jsonl_and_parquet(tmp_path):
    rows = [{"id": i, "en": e, "zh": z} for i, (e, z) in enumerate(PAIRS)]
    j = tmp_path / "p.jsonl"
    j.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    pq = tmp_path / "p.parquet"
    pl.DataFrame(rows).write_parquet(pq)
    for path in (j, pq):
        c = load_corpus(path)
        assert texts(c, "zh") == [z for _, z in PAIRS] and [s.id for s in c] == ["0", "1", "2"]


def test_jsonl_streams_in_batches(tmp_path):
    from tokstat.loaders.table import load_polars

    j = tmp_path / "p.jsonl"
    j.write_text("".join(json.dumps({"en": f"s{i}", "zh": f"句{i}"}, ensure_ascii=False) + "\n"
                         for i in range(2500)), encoding="utf-8")
    segs = list(load_polars(j, batch_size=1000))
    assert len(segs) == 2500 and segs[-1].texts["zh"] == "句2499"


def test_malformed_jsonl_names_line(tmp_path):
    j = tmp_path / "p.jsonl"
    j.write_text('{"en": "a", "zh": "甲"}\n{"en": "b", "zh": \n', encoding="utf-8")
    with pytest.raises(TokstatError, match=r"p.jsonl:2: malformed JSON"):
        list(load_corpus(j))


TMX = """<?xml version="1.0" encoding="UTF-8"?>
<tmx version="1.4"><header srclang="en-US" datatype="plaintext" segtype="sentence" adminlang="en"
 creationtool="test" creationtoolversion="1" o-tmf="x"/>
<body>
<tu tuid="42"><tuv xml:lang="en-US"><seg>Click <bpt i="1">&lt;b&gt;</bpt>Save<ept i="1">&lt;/b&gt;</ept>.</seg></tuv>
<tuv xml:lang="zh-CN"><seg>点击<bpt i="1">&lt;b&gt;</bpt>保存<ept i="1">&lt;/b&gt;</ept>。</seg></tuv></tu>
<tu><tuv lang="EN-US"><seg>Fish &amp; chips</seg></tuv><tuv lang="ZH-CN"><seg>炸鱼和薯条</seg></tuv></tu>
</body></tmx>
"""


def test_tmx(tmp_path):
    p = tmp_path / "memory.tmx"
    p.write_text(TMX, encoding="utf-8")
    c = load_corpus(p)
    segs = list(c)
    assert c.languages == ["en-US", "zh-CN"]  # one label per (language, script, region), whatever else the file holds
    assert segs[0].id == "42" and segs[0].texts == {"en-US": "Click Save.", "zh-CN": "点击保存。"}
    assert segs[1].texts["en-US"] == "Fish & chips"
    # the default pivot en names the file's one English, and --languages zh its one Chinese
    from tokstat import compare

    df = compare(c, ["tiktoken:cl100k_base"], n_boot=0, languages=["en", "zh"])
    assert dict(zip(df["language"], df["premium"]))["en-US"] == 1.0


def test_malformed_tmx_names_line(tmp_path):
    p = tmp_path / "bad.tmx"
    p.write_text(TMX.replace("</tu>\n<tu>", "\n<tu>", 1).replace("Fish &amp;", "Fish &"), encoding="utf-8")
    with pytest.raises(TokstatError, match=r"bad.tmx:\d+: malformed TMX"):
        list(load_corpus(p))


CONLLU_EN = """# sent_id = s1
# text = I went to the market.
1\tI\tI\tPRON\t_\t_\t2\tnsubj\t_\t_
2\twent\tgo\tVERB\t_\t_\t0\troot\t_\t_
3\tto\tto\tADP\t_\t_\t5\tcase\t_\t_
4\tthe\tthe\tDET\t_\t_\t5\tdet\t_\t_
5\tmarket\tmarket\tNOUN\t_\t_\t2\tobl\t_\tSpaceAfter=No
6\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

# sent_id = s2
1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\tSpaceAfter=No
2\t!\t!\tPUNCT\t_\t_\t1\tpunct\t_\t_

"""
CONLLU_DE = """# sent_id = s1
# text = Ich ging zum Markt.
1\tIch\tich\tPRON\t_\t_\t2\tnsubj\t_\t_
2\tging\tgehen\tVERB\t_\t_\t0\troot\t_\t_
3-4\tzum\t_\t_\t_\t_\t_\t_\t_\t_
3\tzu\tzu\tADP\t_\t_\t5\tcase\t_\t_
4\tdem\tder\tDET\t_\t_\t5\tdet\t_\t_
5\tMarkt\tMarkt\tNOUN\t_\t_\t2\tobl\t_\tSpaceAfter=No
5.1\tx\tx\tX\t_\t_\t_\t_\t_\t_
6\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

"""


def test_conllu_multiword_spaceafter_and_alignment(tmp_path):
    (tmp_path / "en_test-ud.conllu").write_text(CONLLU_EN, encoding="utf-8")
    (tmp_path / "de_test-ud.conllu").write_text(CONLLU_DE, encoding="utf-8")
    c = load_corpus(tmp_path)
    segs = {s.id: s for s in c}
    assert c.gold_words == {"en", "de"}
    assert segs["s1"].words["de"] == ["Ich", "ging", "zum", "Markt", "."]
    assert segs["s1"].texts["de"] == "Ich ging zum Markt."
    assert segs["s2"].texts["en"] == "Hi!"  # rebuilt from tokens with SpaceAfter=No
    assert segs["s2"].texts["de"] == "" and segs["s2"].words["de"] == []
    assert corpus_info(c).per_language["de"]["empty"] == 1  # missing: empty, counted


def test_malformed_conllu_names_line(tmp_path):
    p = tmp_path / "en_x.conllu"
    p.write_text(CONLLU_EN.replace("2\twent\tgo\tVERB\t_\t_\t0\troot\t_\t_", "2 went go VERB"), encoding="utf-8")
    with pytest.raises(TokstatError, match=r"en_x.conllu:4: expected 10 tab-separated columns"):
        list(load_corpus(p))


@pytest.mark.slow
def test_shared_pud_twelve_languages(shared):
    c = load_corpus(shared / "corpora/ud-pud")
    assert len(c.languages) == 12 and {"zh", "ja", "th", "en"} <= set(c.languages)
    segs = list(c)
    assert len(segs) == 1000
    for lang in c.languages:
        assert all(s.texts[lang] for s in segs)
        assert all(s.words[lang] for s in segs)
    # gold words reproduce the Chinese text exactly (no spaces in Chinese)
    ok = sum("".join(s.words["zh"]) == s.texts["zh"].replace(" ", "") for s in segs)
    assert ok >= 990


def test_manifest_name_resolves_local_data(shared, monkeypatch):
    from conftest import ROOT

    monkeypatch.chdir(ROOT)
    c = load_corpus("ud-pud")  # corpora/ud-pud.toml: candidates relative to the working directory
    assert c.name == "ud-pud" and len(c.languages) == 12
    monkeypatch.chdir(ROOT.parent.parent)
    monkeypatch.delenv("TOKSTAT_DATA", raising=False)
    with pytest.raises(TokstatError, match="ud-pud.toml.*is not on this machine|not on this machine"):
        load_corpus("ud-pud")


def _po(path, lang, pairs, fuzzy_last=False):
    po = polib.POFile()
    po.metadata = {"Language": lang, "Content-Type": "text/plain; charset=UTF-8"}
    for i, (src, dst) in enumerate(pairs):
        e = polib.POEntry(msgid=src, msgstr=dst)
        if fuzzy_last and i == len(pairs) - 1:
            e.flags.append("fuzzy")
        po.append(e)
    po.append(polib.POEntry(msgid="Untranslated", msgstr=""))
    po.save(str(path))
    return po


def test_gettext_po_mo_and_folder(tmp_path):
    po = _po(tmp_path / "zh_CN.po", "zh_CN", PAIRS, fuzzy_last=True)
    c = load_corpus(tmp_path / "zh_CN.po")
    assert c.languages == ["en", "zh-CN"]
    assert [(s.texts["en"], s.texts["zh-CN"]) for s in c] == PAIRS[:2]  # fuzzy and untranslated skipped
    po.save_as_mofile(str(tmp_path / "zh_CN.mo"))
    mo = list(load_corpus(tmp_path / "zh_CN.mo"))  # compiled like msgfmt: fuzzy entries left out
    assert [(s.texts["en"], s.texts["zh-CN"]) for s in mo] == PAIRS[:2]
    d = tmp_path / "po"
    d.mkdir()
    _po(d / "zh_CN.po", "zh_CN", PAIRS)
    _po(d / "ja.po", "ja", [("Hello, world.", "こんにちは、世界。")])
    c = load_corpus(d)
    assert set(c.languages) == {"en", "zh-CN", "ja"}
    first = next(iter(c))
    assert first.texts["ja"] == "こんにちは、世界。"


def test_gettext_system_catalogue():
    import glob

    mos = sorted(glob.glob("/usr/share/locale/zh_CN/LC_MESSAGES/*.mo"))
    if not mos:
        pytest.skip("no system zh_CN catalogues")
    c = load_corpus(mos[0])
    assert c.languages[0] == "en" and c.languages[1] == "zh-CN"
    assert sum(1 for _ in c) > 0


def test_malformed_po(tmp_path):
    p = tmp_path / "zh.po"
    p.write_text('msgid "a"\nmsgstr "甲"\n\nmsgid "b\nmsgstr\n', encoding="utf-8")
    with pytest.raises(TokstatError, match=r"zh.po:4: a string is not closed"):    # the open msgid "b
        load_corpus(p)
    p.write_text('msgid "a"\nmsgstr "甲"\n\nmsgid "b"\nmsgstr\n', encoding="utf-8")   # closed, but no string
    with pytest.raises(TokstatError, match="malformed gettext catalogue"):
        load_corpus(p)


def test_hf_save_to_disk_and_load_dataset_path(tmp_path):
    ds = datasets.Dataset.from_dict({"translation": [{"en": e, "zh": z} for e, z in PAIRS]})
    ds.save_to_disk(str(tmp_path / "saved"))
    c = load_corpus(tmp_path / "saved", columns={"en": "translation.en", "zh": "translation.zh"})
    assert texts(c, "zh") == [z for _, z in PAIRS]
    # the hub code path (load_dataset) on a local data folder, offline
    data = tmp_path / "hubstyle"
    data.mkdir()
    datasets.Dataset.from_dict({"en": [e for e, _ in PAIRS], "zh": [z for _, z in PAIRS]}).to_parquet(
        str(data / "train.parquet"))
    c = load_corpus(f"hf:{data}", columns={"en": "en", "zh": "zh"})
    assert texts(c, "en") == [e for e, _ in PAIRS]


def test_hf_unreachable_gives_one_line(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    c = load_corpus("hf:no-such-org/no-such-dataset", columns={"en": "en"})
    with pytest.raises(TokstatError, match="cannot load Hugging Face dataset"):
        list(c)


def test_manifests_listed_and_name_the_manifest(monkeypatch):
    from tokstat.loaders import manifests

    ms = manifests()
    assert {"flores", "ud-pud", "tatoeba", "news-commentary"} <= set(ms)
    assert ms["flores"]["licence"] == "CC BY-SA 4.0"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(TokstatError, match=r"flores.toml"):
        list(load_corpus("flores"))


@pytest.mark.slow
def test_cli_corpus_info(capsys, shared):
    assert main(["corpus", "info", "sample"]) == 0
    out = capsys.readouterr().out
    assert "sample-zh-en: 400 segments" in out and "zh" in out
    assert main(["corpus", "info", str(shared / "corpora/ud-pud")]) == 0
    assert "1,000 segments (parallel)" in capsys.readouterr().out
    assert main(["corpus", "info", "no-such-corpus"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tokstat: error:") and "Traceback" not in err


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                                         blacklist_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
                                  max_size=30),
                          st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                                         blacklist_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
                                  max_size=30)), min_size=1, max_size=8))
def test_textdir_roundtrip_property(tmp_path_factory, pairs):
    import unicodedata

    d = tmp_path_factory.mktemp("p")
    (d / "en.txt").write_text("".join(e + "\n" for e, _ in pairs), encoding="utf-8")
    (d / "zh.txt").write_text("".join(z + "\n" for _, z in pairs), encoding="utf-8")
    segs = list(load_corpus(d))
    assert len(segs) == len(pairs)
    for s, (e, z) in zip(segs, pairs):
        assert s.texts["en"] == unicodedata.normalize("NFC", e.lstrip("\ufeff") if s.id == "1" else e)
        assert s.texts["zh"] == unicodedata.normalize("NFC", z.lstrip("\ufeff") if s.id == "1" else z)


@pytest.mark.parametrize("data, columns, msg", [
    ({"en": [1, 2], "zh": ["a", "b"]}, {"en": "en", "zh": "zh"}, "holds int values, not text"),
    ({"en": [["a"], ["b"]], "zh": ["a", "b"]}, {"en": "en", "zh": "zh"}, "holds list values, not text"),
    ({"t": [{"en": "a"}, {"en": "b"}], "zh": ["a", "b"]}, {"en": "t", "zh": "zh"}, "holds dict values, not text"),
    ({"en": ["a", "b"], "zh": ["a", "b"]}, {"en": "en", "zh": "chinese"}, "no column 'chinese' for zh"),
    ({"t": [{"en": "a"}, {"en": "b"}], "zh": ["a", "b"]}, {"en": "t.de", "zh": "zh"}, "no column 't.de' for en"),
])
def test_hf_columns_must_be_text_and_exist(tmp_path, data, columns, msg):
    """Like JSONL and Parquet: never "123" or "{'en': ...}" from a non-text column, never all-empty
    segments from a misspelt column name."""
    import datasets

    datasets.Dataset.from_dict(data).save_to_disk(str(tmp_path / "ds"))
    with pytest.raises(TokstatError, match=msg):
        list(load_corpus(str(tmp_path / "ds"), columns=columns))


def test_hf_dotted_columns_and_nulls_load(tmp_path):
    import datasets

    datasets.Dataset.from_dict({"translation": [{"en": "hi", "zh": "你好"}, {"en": "yo", "zh": None}]}).save_to_disk(
        str(tmp_path / "ds"))
    segs = list(load_corpus(str(tmp_path / "ds"), columns={"en": "translation.en", "zh": "translation.zh"}))
    assert [s.texts for s in segs] == [{"en": "hi", "zh": "你好"}, {"en": "yo", "zh": ""}]


def test_flores_folder_keeps_scripts_where_a_language_has_two(tmp_path):
    """ace_Arab and ace_Latn stay apart; a script is written where it is not the language's usual one
    (Acehnese is written in Latin letters, Serbian in Cyrillic), the same whatever else the folder holds."""
    for stem in ("eng_Latn", "ace_Arab", "ace_Latn", "zho_Hans", "zho_Hant", "srp_Cyrl", "srp_Latn"):
        (tmp_path / f"{stem}.devtest").write_text("x\ny\n", encoding="utf-8")
    c = load_corpus(tmp_path)
    assert sorted(c.languages) == ["ace", "ace-Arab", "en", "sr", "sr-Latn", "zh", "zh-Hant"]
    assert len(list(c)) == 2
    (tmp_path / "ace_Arab.devtest").unlink()
    assert "ace" in load_corpus(tmp_path).languages       # the label does not depend on the other files


def test_tmx_regions_follow_the_same_rule(tmp_path):
    p = tmp_path / "m.tmx"
    tu = '<tu><tuv xml:lang="{a}"><seg>a</seg></tuv><tuv xml:lang="{b}"><seg>b</seg></tuv></tu>'
    p.write_text(f'<tmx><body>{tu.format(a="pt-BR", b="zh-CN")}{tu.format(a="pt-PT", b="zh-CN")}</body></tmx>',
                 encoding="utf-8")
    assert sorted(load_corpus(p).languages) == ["pt-BR", "pt-PT", "zh-CN"]
    p.write_text(f'<tmx><body>{tu.format(a="en", b="EN")}</body></tmx>', encoding="utf-8")
    with pytest.raises(TokstatError, match="two <tuv>s of language en in one <tu>"):
        list(load_corpus(p))


def test_gettext_locale_tree_is_the_union_of_domains(tmp_path):
    """LANG/LC_MESSAGES/DOMAIN.mo for two languages and two domains: every (domain, msgctxt, msgid)
    is one segment; the same msgid in two domains is two segments; a message missing in one
    language is empty there, not dropped."""
    def mo(lang, domain, pairs, ctx=None):
        d = tmp_path / lang / "LC_MESSAGES"
        d.mkdir(parents=True, exist_ok=True)
        po = polib.POFile()
        po.metadata = {"Language": lang, "Content-Type": "text/plain; charset=UTF-8"}
        for src, dst in pairs:
            po.append(polib.POEntry(msgid=src, msgstr=dst, msgctxt=ctx))
        po.save_as_mofile(str(d / f"{domain}.mo"))

    mo("zh_CN", "app", [("Open", "打开"), ("Save", "保存")])
    mo("zh_CN", "lib", [("Open", "开启")])
    mo("de", "app", [("Open", "Öffnen")])
    mo("de", "lib", [("Open", "Öffnen (lib)"), ("Close", "Schließen")])
    mo("de", "ctx", [("Open", "Offen")], ctx="adjective")
    c = load_corpus(tmp_path)
    assert c.languages == ["en", "de", "zh-CN"]
    segs = {s.id: s.texts for s in c}
    assert segs == {
        "app::Open": {"en": "Open", "de": "Öffnen", "zh-CN": "打开"},
        "app::Save": {"en": "Save", "de": "", "zh-CN": "保存"},
        "ctx::adjective\x04Open": {"en": "Open", "de": "Offen", "zh-CN": ""},
        "lib::Open": {"en": "Open", "de": "Öffnen (lib)", "zh-CN": "开启"},
        "lib::Close": {"en": "Close", "de": "Schließen", "zh-CN": ""},
    }


def test_gettext_two_catalogues_of_one_language_are_an_error(tmp_path):
    _po(tmp_path / "zh.po", "zh", [("Open", "打开")])
    _po(tmp_path / "zho.po", "zho", [("Open", "开")])      # one language spelt two ways (zh_CN would be its region)
    with pytest.raises(TokstatError, match=r"two catalogues for language zh: .*zh\.po and .*zho\.po"):
        load_corpus(tmp_path)


def test_csv_quoted_field_keeps_its_newline(tmp_path):
    p = tmp_path / "ml.csv"
    p.write_text('en,zh\n"two\nlines",x\n"say ""hi""",y\n', encoding="utf-8")
    assert [s.texts for s in load_corpus(p)] == [{"en": "two\nlines", "zh": "x"}, {"en": 'say "hi"', "zh": "y"}]


def test_named_columns_for_tables_and_nested_jsonl(tmp_path):
    """--columns LANG=COLUMN works for TSV/CSV (header names) and JSONL, dotted into objects, as for hf:."""
    t = tmp_path / "t.tsv"
    t.write_text("text_en\ttext_zh\tnote\nhello\t你好\tx\n", encoding="utf-8")
    assert [s.texts for s in load_corpus(t, columns={"en": "text_en", "zh": "text_zh"})] == [{"en": "hello", "zh": "你好"}]
    j = tmp_path / "n.jsonl"
    j.write_text('{"translation": {"en": "hi", "zh": "你好"}}\n{"translation": {"en": "yo"}}\n', encoding="utf-8")
    segs = list(load_corpus(j, columns={"en": "translation.en", "zh": "translation.zh"}))
    assert [s.texts for s in segs] == [{"en": "hi", "zh": "你好"}, {"en": "yo", "zh": ""}]


def test_csv_field_larger_than_128_kib_loads(tmp_path):
    p = tmp_path / "big.csv"
    p.write_text(f'en,zh\n"{"x" * 300_000}",y\n', encoding="utf-8")
    assert [len(s.texts["en"]) for s in load_corpus(p)] == [300_000]
