"""tokstat show and tokstat worst, --normalize, and the metrics added with issue 17: the two premiums,
the parity summary, coverage that excludes unknown tokens, both Rényi efficiencies, Chinese script."""

from __future__ import annotations

import unicodedata

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat import TokstatError, compare, load_corpus, load_tokenizer
from tokstat.cli import main
from tokstat.langs import chinese_script
from tokstat.metrics import gini, parity_summary
from tokstat.show import pieces, show, worst

CL = "tiktoken:cl100k_base"


@settings(max_examples=60, deadline=None)
@given(text=st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=30)
       | st.sampled_from(["你好世界", "語", "👩‍👩‍👧 👍🏽", "e\u0301", "Straße", "한국어", "\u200d"]))
@pytest.mark.slow
def test_pieces_are_the_librarys_tokens_and_cover_the_text(text):
    """The ids are the library's own; the spans tile the text's bytes; a piece is shown as text
    exactly when it holds whole characters."""
    a = load_tokenizer(CL)
    ps = pieces(a, text)
    assert [p.id for p in ps] == a.enc.encode_ordinary(text)
    raw = text.encode("utf-8")
    assert b"".join(raw[p.start:p.end] for p in ps) == raw
    for p in ps:
        if p.kind == "text":
            assert p.shown == raw[p.start:p.end].decode("utf-8")
        elif p.kind == "partial":
            assert "<" in p.shown


def test_byte_fallback_unknown_and_empty_pieces(shared):
    llama = load_tokenizer(f"spm:{shared}/tokenizers/llama2/tokenizer.model")
    t5 = load_tokenizer(f"spm:{shared}/tokenizers/t5/spiece.model")
    kinds = {p.kind for p in pieces(llama, "👍")}
    assert kinds == {"byte", "empty"}          # the dummy prefix ▁ covers no input: ∅
    assert [p.shown for p in pieces(llama, "👍") if p.kind == "byte"] == ["<f0>", "<9f>", "<91>", "<8d>"]
    unk = [p for p in pieces(t5, "你好") if p.kind == "unk"]
    assert unk and "".join(p.shown for p in unk) == "你好"


def test_show_normalises_as_the_counts_do_and_writes_html(tmp_path, capsys):
    a = show("e\u0301", [CL])
    b = show("e\u0301", [CL], normalize="none")
    assert sum(len(p.shown) for p in a["tiktoken/cl100k_base"]) == 1 and len(b["tiktoken/cl100k_base"]) >= 1
    assert main(["show", "你好，世界 👍🏽", "-t", CL, "--ids", "--html", str(tmp_path / "v.html")]) == 0
    out = capsys.readouterr().out
    assert "tiktoken/cl100k_base:" in out and "│" in out and "wrote" in out
    page = (tmp_path / "v.html").read_text()
    assert page.count("<span") == len(pieces(load_tokenizer(CL), "你好，世界 👍🏽")) and "<script" not in page


@pytest.mark.parametrize("argv,msg", [(["show", "", "-t", CL], "the text is empty"),
                                      (["show", "x", "-t", CL, "--html", "v.txt"], "--html must end in .html")])
def test_show_bad_input(argv, msg, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2 and msg in capsys.readouterr().err and list(tmp_path.iterdir()) == []


def test_worst_ranks_segments_by_their_own_premium(tmp_path, capsys):
    df, segs = compare("sample", [CL], n_boot=0, workers=1, return_segments=True, segments_text=True)
    w = worst(segs, n=5)
    zh = segs.filter(pl.col("language") == "zh").select("segment", "tokens")
    en = segs.filter(pl.col("language") == "en").select("segment", pl.col("tokens").alias("p"))
    ref = zh.join(en, on="segment").with_columns((pl.col("tokens") / pl.col("p")).alias("r")).sort(
        ["r", "segment"], descending=[True, False])
    assert w["segment"].to_list() == ref["segment"].head(5).to_list()
    assert w["text"][0] and w["pivot_text"][0] and w["premium"][0] == pytest.approx(ref["r"][0])
    tpc = worst(segs, by="tokens_per_char", n=3)
    assert tpc["tokens_per_char"].to_list() == sorted(tpc["tokens_per_char"].to_list(), reverse=True)
    segs.write_parquet(tmp_path / "s.parquet")
    assert main(["worst", str(tmp_path / "s.parquet"), "-n", "2"]) == 0
    assert w["segment"][0] in capsys.readouterr().out
    with pytest.raises(TokstatError, match="not a compare --segments-out table"):
        worst(df)


def test_segments_text_needs_segments_out(capsys):
    assert main(["compare", "sample", "-t", CL, "--segments-text"]) == 2
    assert "--segments-text needs --segments-out" in capsys.readouterr().err


# ---------------------------------------------------------------- --normalize

def test_normalize_none_counts_the_raw_text(tmp_path):
    """With --normalize none the counts equal the library on the raw file; NFC and NFKC change them."""
    raw = ["Cafe\u0301 ﬁne ｆｕｌｌ①", "e\u0301\u0301 ＡＢＣ"]
    (tmp_path / "en.txt").write_text("\n".join(raw) + "\n", encoding="utf-8")
    (tmp_path / "zh.txt").write_text("甲\n乙\n", encoding="utf-8")
    enc = load_tokenizer(CL).enc
    got = {}
    for form in ("none", "nfc", "nfkc"):
        df = compare(load_corpus(tmp_path, normalize=form), [CL], n_boot=0, workers=1)
        row = df.filter(pl.col("language") == "en").row(0, named=True)
        got[form] = row["tokens"]
        assert f"norm:{form}" in row["signature"]
        norm = (lambda t: t) if form == "none" else (lambda t, f=form.upper(): unicodedata.normalize(f, t))
        assert row["tokens"] == sum(len(enc.encode_ordinary(norm(t))) for t in raw)
        assert row["chars"] == sum(len(norm(t)) for t in raw)
    assert got["none"] != got["nfkc"]
    with pytest.raises(TokstatError, match="unknown normalisation"):
        load_corpus(tmp_path, normalize="nfd")


# ---------------------------------------------------------------- metrics

def test_two_premiums_by_hand():
    """Ratio of sums (Petrov et al.) and mean of per-segment ratios (TokSuite) from the segment rows."""
    df, segs = compare("sample", [CL], n_boot=200, workers=1, return_segments=True)
    zh = segs.filter(pl.col("language") == "zh").select("segment", "tokens")
    en = segs.filter(pl.col("language") == "en").select("segment", pl.col("tokens").alias("p"))
    both = zh.join(en, on="segment").filter((pl.col("tokens") >= 0) & (pl.col("p") > 0))
    row = df.filter(pl.col("language") == "zh").row(0, named=True)
    assert row["premium"] == pytest.approx(both["tokens"].sum() / both["p"].sum())
    assert row["premium_mean_of_ratios"] == pytest.approx((both["tokens"] / both["p"]).mean(), abs=1e-6)
    assert row["premium_mor_ci_low"] < row["premium_mean_of_ratios"] < row["premium_mor_ci_high"]
    assert df.filter(pl.col("language") == "en")["premium_mean_of_ratios"][0] == 1.0


@pytest.mark.slow
def test_mean_of_ratios_is_toksuites_parity_on_pud(shared, tmp_path, monkeypatch):
    """Oracle: TokSuite's compute_parity (r-three/TokSuite, calculate_intrinsic_tokenizer_metrics.py)
    re-implemented with tiktoken called directly, on PUD zh/en: the mean over sentences of
    len(tokens(zh))/len(tokens(en)), sentences with no English tokens skipped."""
    import hashlib
    import shutil

    import tiktoken

    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    shutil.copy(shared / "tokenizers/o200k_base/o200k_base.tiktoken", tmp_path / hashlib.sha1(url.encode()).hexdigest())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    enc = tiktoken.get_encoding("o200k_base")
    segs = list(load_corpus(str(shared / "corpora/ud-pud")).select(["en", "zh"]))
    ratios = [len(enc.encode_ordinary(s.texts["zh"])) / len(enc.encode_ordinary(s.texts["en"]))
              for s in segs if enc.encode_ordinary(s.texts["en"])]
    with pytest.warns(UserWarning, match="Traditional"):
        df = compare(str(shared / "corpora/ud-pud"), ["tiktoken:o200k_base"], languages=["en", "zh"], n_boot=50)
    row = df.filter(pl.col("language") == "zh").row(0, named=True)
    assert row["premium_mean_of_ratios"] == pytest.approx(sum(ratios) / len(ratios), abs=1e-6)
    assert abs(row["premium_mean_of_ratios"] - row["premium"]) > 1e-3   # the two parities differ here


@pytest.mark.slow
def test_mean_of_ratios_is_identical_for_any_worker_count():
    a = compare("sample", [CL], n_boot=100, workers=1)
    b = compare("sample", [CL], n_boot=100, workers=2, batch_size=37)
    assert a.select("premium_mean_of_ratios", "premium_mor_ci_low").equals(b.select("premium_mean_of_ratios", "premium_mor_ci_low"))


def test_gini_and_parity_summary():
    assert gini([2.0, 2.0]) == 0.0 and gini([0, 0, 0, 1]) == pytest.approx(0.75)
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 3, 9)
    ref = sum(abs(a - b) for a in x for b in x) / (2 * len(x) ** 2 * x.mean())
    assert gini(x) == pytest.approx(ref)
    df = pl.DataFrame({"tokenizer": ["a"] * 3 + ["b"] * 3, "language": ["en", "zh", "ja"] * 2,
                       "premium": [1.0, 1.5, 2.0, 1.0, 1.1, 0.9], "premium_mean_of_ratios": [1.0, 1.6, 2.2, 1.0, 1.0, 1.0]})
    s = parity_summary(df).row(0, named=True)
    assert s["premium_worst_language"] == "ja" and s["premium_max_over_min"] == 2.0
    assert s["premium_gini"] == pytest.approx(gini([1.0, 1.5, 2.0]))


def test_coverage_excludes_unknown_and_renyi_has_both_normalisations(shared):
    t5 = load_tokenizer(f"spm:{shared}/tokenizers/t5/spiece.model")
    df = compare("sample", [t5, CL], n_boot=0, workers=1)
    zh = df.filter((pl.col("language") == "zh") & (pl.col("tokenizer") == "spm/t5")).row(0, named=True)
    assert zh["unk_rate"] > 0.5 and zh["single_token_char_coverage"] < 0.2
    for r in df.iter_rows(named=True):
        assert r["renyi_efficiency_observed"] >= r["renyi_efficiency"]   # log(observed) <= log(declared)


@pytest.mark.slow
def test_chinese_script_is_detected_and_named(shared, recwarn):
    assert chinese_script(["這個國家"])[0] == "Hant" and chinese_script(["这个国家"])[0] == "Hans"
    assert chinese_script(["這个"])[0] == "mixed" and chinese_script(["abc"]) == (None, None)
    pud = load_corpus(shared / "corpora/ud-pud").select(["en", "zh"])
    df = compare(pud, [CL], n_boot=0, workers=1)
    assert "script:Hant" in df.filter(pl.col("language") == "zh")["signature"][0]
    assert any("Traditional Chinese" in str(w.message) for w in recwarn)


# ---------------------------------------------------------------- robustness

def test_robustness_counts_the_same_content_written_differently(tmp_path, capsys):
    from opencc import OpenCC

    from tokstat.show import halfwidth, robustness

    assert halfwidth("ＡＢＣ１２３") == "ABC123" and halfwidth("語") == "語"
    (tmp_path / "en.txt").write_text("ＡＩ models\nplain text\n", encoding="utf-8")
    (tmp_path / "zh.txt").write_text("這個國家的語言\n我們學習\n", encoding="utf-8")
    df = robustness(load_corpus(tmp_path), [CL])
    enc = load_tokenizer(CL).enc
    zh = df.filter((pl.col("language") == "zh") & (pl.col("variant") == "to_simplified")).row(0, named=True)
    simp = [OpenCC("t2s").convert(t) for t in ("這個國家的語言", "我們學習")]
    assert zh["tokens_variant"] == sum(len(enc.encode_ordinary(t)) for t in simp)
    assert zh["tokens"] == len(enc.encode_ordinary("這個國家的語言")) + len(enc.encode_ordinary("我們學習"))
    hw = df.filter((pl.col("language") == "en") & (pl.col("variant") == "halfwidth")).row(0, named=True)
    assert hw["changed_segments_share"] == 0.5 and hw["tokens_variant"] == len(enc.encode_ordinary("AI models")) + len(
        enc.encode_ordinary("plain text"))
    assert main(["robustness", str(tmp_path), "-t", CL]) == 0 and "to_simplified" in capsys.readouterr().out


SHOW_PROBE = """<script>
const spans = [...document.querySelectorAll('.tv-text .tv')];
const r = {tokens: spans.length,
  broken: spans.filter(s => s.getClientRects().length > 1 && s.getBoundingClientRect().width < s.parentElement.clientWidth)
               .map(s => s.textContent),
  gaps: spans.map(s => parseFloat(getComputedStyle(s).borderRightWidth)),
  input: (document.querySelector('.tv-input') || {}).textContent,
  ranked: [...document.querySelectorAll('.tv-rank tr')].slice(1).map(tr => tr.children[0].textContent),
  overflow: document.documentElement.scrollWidth - innerWidth};
document.body.insertAdjacentHTML('beforeend', '<pre id="probe">' + JSON.stringify(r).replace(/</g, '\\\\u003c') + '</pre>');
</script>"""


@pytest.mark.browser
@pytest.mark.parametrize("width", [360, 1000])
def test_show_html_keeps_every_token_whole_and_apart_in_chromium(width, tmp_path):
    """A long mixed text at a narrow and a wide window: every token is one box (never broken across
    lines unless wider than its column), a white gap of 2 px after every token (two tokens on one
    colour read as two), the input text and the tokenizers ranked by count on the page."""
    import json
    import re
    import subprocess

    from test_report import FLAGS, chromium

    from tokstat.cli import main

    exe = chromium()
    text = ("貴。貴。" + "The premium each language pays against a pivot, measured on parallel text. " * 3
            + "語言模型很貴。" * 4)
    page = tmp_path / "show.html"
    assert main(["show", text, "-t", "tiktoken:o200k_base", "-t", "tiktoken:cl100k_base", "--html", str(page)]) in (0, None)
    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", SHOW_PROBE + "</body>"), encoding="utf-8")
    dom = subprocess.run([exe, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={width},900",
                          "--virtual-time-budget=3000", "--dump-dom", probed.as_uri()], capture_output=True, text=True,
                         timeout=180)
    found = re.findall(r'<pre id="probe">(.*?)</pre>', dom.stdout, re.S)     # the last: the script's own text comes first
    assert found, dom.stderr[-2000:]
    import html as _html

    r = json.loads(_html.unescape(found[-1]))
    assert r["tokens"] > 40 and r["broken"] == [] and min(r["gaps"]) >= 2 and r["overflow"] <= 0
    assert r["input"] == text
    import tiktoken

    counts = {n: len(tiktoken.get_encoding(n).encode(text)) for n in ("o200k_base", "cl100k_base")}
    assert r["ranked"] == [f"tiktoken/{n}" for n in sorted(counts, key=lambda n: (counts[n], n))]
