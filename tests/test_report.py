"""The HTML report as a decision document: the answers are right (never an unreliable tokenizer, a
real vocabulary size) and equal to the result tables, results from different corpora are never
merged, two tokenizers with one id are refused, the page is self-contained and deterministic, and in
headless Chromium at 800 and 1400 px it has no horizontal overflow, every chart is drawn and no
text is smaller than 11 px."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import numpy as np
import polars as pl
import pytest
from PIL import Image

from tokstat import compare
from tokstat.cli import main
from tokstat.cost.hardware import gpu
from tokstat.cost.model import non_embedding_params, preset
from tokstat.cost.projection import MAX_UNK, project
from tokstat.errors import TokstatError
from tokstat.io import write_table
from tokstat.report import read_results, report
from tokstat.report.read import sections
from tokstat.sweep import sweep
from tokstat.vocabplan import vocab_plan

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars"]
README_CHARTS = {"premium", "tokens_per_char", "continued_words", "split_chars", "entropy", "segment_premium", "segment_tokens",
                 "serving_multiplier", "vocab_plan", "sweep", "allocation"}


@pytest.fixture(scope="module")
def readme_report(tmp_path_factory):
    """The README's one-command report, through the command line."""
    d = tmp_path_factory.mktemp("readme")
    out, png = d / "report.html", d / "charts"
    assert main(["report", "--corpus", "sample", "-t", "tiktoken:cl100k_base", "-t", "train:bpe:8000",
                 "--sweep", "bpe:1000,2000,4000,8000", "--mix", "zh=0.5,en=0.5", "--model", "llama2-7b",
                 "--gpu", "h100-sxm", "--out", str(out), "--png", str(png), "--quiet"]) == 0
    return out, png


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("results")
    cmp, segs = compare("sample", ["train:bpe:1500", "train:spm-unigram:2000", "tiktoken:cl100k_base"], n_boot=200,
                        return_segments=True, segments_text=True)
    sw = sweep("sample", "bpe", [800, 1200, 1600, 2400], n_boot=200)
    m, g = preset("llama2-7b"), gpu("h100-sxm")
    paths = {"compare": d / "compare.parquet", "segments": d / "segments.parquet", "sweep": d / "sweep.csv",
             "cost": d / "cost.json", "sweep_cost": d / "sweep_cost.parquet"}
    tables = {"compare": cmp, "segments": segs, "sweep": sw, "cost": project(cmp, m, g, train_tokens=2e12),
              "sweep_cost": project(sw, m, g, train_tokens=2e12, mix={"zh": 0.5, "en": 0.5})}
    for k, p in paths.items():
        write_table(tables[k], p)
    return paths, tables


CARD = re.compile(r'<div class="answer" data-answer="(\w+)"><h3>.*?</h3><div class="lead">(.*?)</div>'
                  r'(?:<figure class="chart" data-chart="[\w-]+">.*?</figure>)?'
                  r'(?:<details><summary>details</summary><div>(.*?)</div></details>)?<a class="ev"', re.S)


def _answers(page: str) -> dict[str, str]:
    """Each answer in full (the card's folded details; the lead where there are none)."""
    return {m.group(1): re.sub(r"<[^>]+>", "", m.group(3) if m.group(3) is not None else m.group(2))
            for m in CARD.finditer(page)}


def _leads(page: str) -> dict[str, str]:
    """Each answer's one sentence on the first screen."""
    import html

    return {m.group(1): html.unescape(re.sub(r"<[^>]+>", "", m.group(2))) for m in CARD.finditer(page)}


def _answer_charts(page: str) -> list[str]:
    return re.findall(r'<figure class="chart" data-chart="([\w-]*answer-\w+)">', page)


def _charts(page: str) -> list[str]:
    return re.findall(r'<figure class="chart" id="chart-([\w-]+)"', page)


@pytest.mark.slow
def test_readme_report_answers_and_charts(readme_report):
    page = readme_report[0].read_text()
    assert set(_charts(page)) == README_CHARTS
    ans = _answers(page)
    assert set(ans) == {"tokenizer", "cost", "vocab"}
    # the bundled sample supports none of the swept sizes (its newest merges occur < 10 times): no size
    assert ans["vocab"].startswith("No size for llama2-7b") and "supports none of the swept sizes" in ans["vocab"]
    for sec in ("tokenizers", "cost", "vocabulary", "distributions", "worst", "view", "assumptions"):
        assert f'id="{sec}"' in page, sec
    for a in re.findall(r'href="#([\w-]+)"', page):
        assert f'id="{a}"' in page or f'id="chart-{a}"' in page, a       # every evidence link lands


@pytest.mark.slow
def test_answers_equal_the_tables(files, tmp_path):
    """The recommended tokenizer is the reliable one with the fewest tokens for the mix (computed
    here from the compare table), its premiums and the vocabulary size are the tables'/plan's."""
    paths, t = files
    out = report(list(paths.values()), tmp_path / "r.html", mix="zh=0.5,en=0.5")
    page = out.read_text()
    ans = _answers(page)
    c = t["compare"]
    bad = set(c.filter((pl.col("unk_rate") > MAX_UNK) | (pl.col("roundtrip_rate") < 1))["tokenizer"].to_list())
    # half the content in each language: tokens of that content / its characters, with characters per
    # unit of content = premium / tokens per character (the same parallel text, counted per tokenizer)
    def tokens_per_char_of_mix(g):
        r = {lang: g.filter(pl.col("language") == lang).row(0, named=True) for lang in ("zh", "en")}
        return (sum(0.5 * x["premium"] for x in r.values())
                / sum(0.5 * x["premium"] / x["tokens_per_char"] for x in r.values()))
    score = {tok: tokens_per_char_of_mix(g) for (tok,), g in c.group_by("tokenizer") if tok not in bad}
    # with a model the criterion is dollars: half the volume of content in each language (the cost rows
    # hold content equal), each tokenizer with its own vocabulary
    k = t["cost"]
    dollars = {tok: 0.5 * sum(k.filter((pl.col("tokenizer") == tok) & (pl.col("language") == lang))["dollars"][0]
                              for lang in ("zh", "en")) for tok in score}
    best = min(dollars, key=lambda x: (dollars[x], x))
    assert ans["tokenizer"].startswith(f"{best}: the lowest training cost for this mix ("), ans["tokenizer"]
    assert f"{score[best]:.3f} tokens per character of the mix: content zh 50% · en 50% = characters zh " \
        in ans["tokenizer"]
    zh = c.filter((pl.col("tokenizer") == best) & (pl.col("language") == "zh")).row(0, named=True)
    assert f"{zh['premium']:.2f}× the en tokens in zh (95 % CI {zh['premium_ci_low']:.2f}–{zh['premium_ci_high']:.2f})" \
        in ans["tokenizer"]
    k = t["cost"].filter((pl.col("tokenizer") == best) & (pl.col("language") == "zh")).row(0, named=True)
    assert f"({k['cost_multiplier']:.2f}×)" in ans["cost"] and f"({k['serving_multiplier']:.2f}×)" in ans["cost"]
    m = preset("llama2-7b")
    plan = vocab_plan(t["sweep"], n_nv=non_embedding_params(m), d_model=m.d_model, mix={"zh": 0.5, "en": 0.5})
    if plan.no_answer:           # the sample's text supports none of the swept sizes: the plan says so, no size
        assert ans["vocab"].startswith("No size for llama2-7b") and plan.no_answer in ans["vocab"], ans["vocab"]
    else:
        assert ans["vocab"].startswith(f"{plan.answer_text()} tokens for llama2-7b"), ans["vocab"]
    assert plan.flat_region[0] <= plan.recommended_vocab_size <= plan.flat_region[1]
    # one vocabulary answer per page: the cost per size is not another ("cheapest" names only the
    # tokenizer answer's questions: cheapest to train / to serve)
    assert "cheapest" not in page.replace("cheapest to train", "").replace("Cheapest to train", "") \
        .replace("cheapest to serve", "").replace("Cheapest to serve", "")
    assert "segment_premium" in _charts(page) and "worst" in page     # the segments file was used


@pytest.mark.slow
def test_unreliable_tokenizer_is_never_the_answer(tmp_path):
    """A tokenizer with the lowest premium that loses text (here: a vocabulary with no Chinese, so
    nearly every Chinese character is unknown) is named as not recommended, never recommended."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0, **{ch: i + 1 for i, ch in enumerate("abcdefghijklmnopqrstuvwxyz ")}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    p = tmp_path / "lossy.json"
    tok.save(str(p))
    c = compare("sample", [f"hf:{p}", "tiktoken:cl100k_base"], n_boot=100)
    lossy = c.filter(pl.col("tokenizer") != "tiktoken/cl100k_base")["tokenizer"][0]
    cheap = c.filter(pl.col("language") == "zh").sort("tokens_per_char")["tokenizer"][0]
    assert cheap == lossy                                            # the trap: it looks cheapest
    out = report({"compare": c}, tmp_path / "r.html")
    ans = _answers(out.read_text())
    assert ans["tokenizer"].startswith("tiktoken/cl100k_base:")
    assert f"Not recommended, as they lose text: {lossy}" in ans["tokenizer"]


@pytest.mark.slow
def test_corpora_are_never_merged(tmp_path, shared):
    a = compare("sample", ["tiktoken:cl100k_base"], n_boot=50)
    b = compare(str(shared / "corpora/tatoeba-cmn-eng/cmn.txt"), ["tiktoken:cl100k_base"], n_boot=50)
    pa, pb = tmp_path / "a.csv", tmp_path / "b.csv"
    write_table(a, pa)
    write_table(b, pb)
    secs = sections(read_results([pa, pb]))
    assert len(secs) == 2 and {s.corpus.split("@")[0] for s in secs} == {"sample-zh-en", "cmn"}
    page = report([pa, pb], tmp_path / "r.html").read_text()
    assert page.count('data-answer="tokenizer"') == 2 and 'id="s1-corpus"' in page and 'id="s2-corpus"' in page
    for s, df in zip(secs, (a, b)):
        assert s.get("compare")["tokens"].to_list() == df["tokens"].to_list()


@pytest.mark.slow
def test_two_tokenizers_with_one_id_are_refused(tmp_path):
    plain = compare("sample", ["train:bpe:1500"], n_boot=50)
    mixed = compare("sample", ["train:bpe:1500?heldout=0.2"], n_boot=50)
    assert plain["tokenizer"][0] == mixed["tokenizer"][0]
    pa, pb = tmp_path / "plain.csv", tmp_path / "other.csv"
    write_table(plain, pa)
    write_table(mixed, pb)
    with pytest.raises(TokstatError, match=r"two different tokenizers are both called 'train/bpe-1500'.*plain\.csv.*"
                                           r"other\.csv"):
        report([pa, pb], tmp_path / "r.html")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.slow
def test_report_is_self_contained_and_deterministic(files, tmp_path, monkeypatch):
    paths, _ = files
    # the page's one date (under its title) is $SOURCE_DATE_EPOCH's where set: pinned, two runs on
    # any two days are byte-identical
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796601600")
    a = report(list(paths.values()), tmp_path / "a.html")
    b = report(list(paths.values()), tmp_path / "b.html")
    assert a.read_bytes() == b.read_bytes()
    page = a.read_text()
    assert "date: 2026-12-07" in page and page.count("2026-12-07") == 1
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)      # nothing fetched from anywhere
    assert "<link" not in page and "<script src" not in page and "@import" not in page
    assert page.count("<script") == 1                                           # the inline table sorter only
    assert page.count("corpus:sample-zh-en@") >= 4                               # the signatures


@pytest.mark.slow
def test_compact_table_and_full_table(files, tmp_path):
    paths, t = files
    page = report([paths["compare"]], tmp_path / "r.html").read_text()
    compact = re.search(r'id="table-compare">(.*?)</table>', page, re.S).group(1)
    heads = re.findall(r"<th(?: [^>]*)?>(.*?)</th>", compact)
    assert heads == ["tokenizer", "language", "premium [95 % CI]", "tokens/char", "tokens/word", "split chars",
                     "unknown"]
    assert "<details><summary>Full comparison table" in page
    r = t["compare"].filter(pl.col("language") == "zh").row(0, named=True)
    assert f"{r['premium']:.2f}× [{r['premium_ci_low']:.2f}–{r['premium_ci_high']:.2f}]" in compact
    assert f"{r['unk_rate']:.1%}" in compact                                     # rates as %


@pytest.mark.slow
def test_png_charts(readme_report):
    pngs = sorted(p.name for p in readme_report[1].iterdir())
    assert pngs == sorted(f"{n}.png" for n in README_CHARTS | {"answer-tokenizer", "answer-cost", "answer-vocab"})
    for p in readme_report[1].iterdir():
        im = np.asarray(Image.open(p).convert("RGB"))
        wide = 700 if p.name.startswith("answer-") else 1000          # a card's chart is 3.9 in wide, the others 5.4
        assert im.shape[1] >= wide and (im < 250).any(axis=2).mean() > 0.02, p    # 200 dpi, not blank


def test_unusable_results_are_refused(tmp_path):
    p = tmp_path / "x.csv"
    pl.DataFrame({"a": [1]}).write_csv(p)
    with pytest.raises(TokstatError, match=r"x\.csv: not a tokstat compare, sweep, cost, budget, extend, inventory, overlap or segments result"):
        read_results([p])
    with pytest.raises(TokstatError, match="result file not found"):
        read_results([tmp_path / "none.parquet"])


# ---------------------------------------------------------------- in a browser

def chromium() -> str | None:
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    if os.environ.get("TOKSTAT_REQUIRE_BROWSER"):
        pytest.fail("Chromium is required here (TOKSTAT_REQUIRE_BROWSER is set) but was not found")
    pytest.skip("Chromium is not installed (.ci/run installs it)")


PROBE = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
window.addEventListener('load', () => {
  const first = {height: document.documentElement.scrollHeight,
    answers: [...document.querySelectorAll('.answer')].map(e => { const r = e.getBoundingClientRect();
      return [e.dataset.answer, r.top + scrollY, r.bottom + scrollY, r.right]; })};
  document.querySelectorAll('details').forEach(d => d.open = true);       // the evidence, unfolded
  const boxes = [...document.querySelectorAll('figure.chart svg')].map(s => {
    const r = s.getBoundingClientRect();
    return {name: s.parentElement.dataset.chart, x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height,
            texts: s.querySelectorAll('text').length};
  });
  const small = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const n = walk.currentNode, el = n.parentElement;
    if (!n.textContent.trim() || el.closest('#probe') || el.closest('script,style')) continue;
    if (!el.getClientRects().length) continue;                       // not rendered (a closed <details>)
    let px = parseFloat(getComputedStyle(el).fontSize);
    if (el instanceof SVGElement) { const m = el.getScreenCTM(); px *= Math.hypot(m.a, m.b); }
    if (px < 11) small.push([n.textContent.trim().slice(0, 40), px]);
  }
  const compact = document.querySelector('[id$="table-compare"]');
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify({first, boxes, small, errors: window.__errors, inner: innerWidth,
    scrollWidth: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight,
    compactOverflow: compact ? compact.scrollWidth - compact.clientWidth : 0});
  document.body.appendChild(out);
});
</script>"""


OPEN = "<script>document.querySelectorAll('details').forEach(d => d.open = true)</script>"


def check_in_browser(html_path, tmp_path, width: int, expect_charts: int, height: int = 900, unfold: bool = True) -> dict:
    """Load the page in headless Chromium at ``width``×``height``: no script error, no horizontal
    overflow, no text under 11 px, the compact table fits, ``expect_charts`` evidence charts (plus
    the answers' own) drawn inside the page with the evidence unfolded; the three answers' cards
    come first, inside the first screen at 1440 px. Returns the probe (``first``: the page as it
    opens, evidence folded)."""
    exe = chromium()
    probed = tmp_path / f"probed-{width}.html"
    page = html_path.read_text()
    expect_charts += len(_answer_charts(page))
    probed.write_text(page.replace("</body>", PROBE + "</body>"))
    dom = subprocess.run([exe, *FLAGS, f"--user-data-dir={tmp_path / f'profile-{width}'}", f"--window-size={width},{height}",
                          "--virtual-time-budget=5000", "--dump-dom", probed.as_uri()],
                         capture_output=True, text=True, timeout=180)
    m = re.search(r'<pre id="probe">(.*?)</pre>', dom.stdout, re.S)
    assert m, dom.stderr[-2000:]
    probe = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    assert probe["errors"] == []
    assert probe["scrollWidth"] <= probe["inner"], (width, probe["scrollWidth"])   # no horizontal overflow
    assert probe["small"] == [], (width, probe["small"][:10])                       # no text under 11 px
    assert probe["compactOverflow"] <= 0, width                                     # the compact table fits
    boxes = probe["boxes"]
    assert len(boxes) == expect_charts and all(b["w"] > 250 and b["h"] > 120 and b["texts"] > 3 for b in boxes), boxes
    assert all(b["x"] + b["w"] <= width for b in boxes)
    cards = probe["first"]["answers"]
    assert all(right <= width for _, _, _, right in cards), cards
    if width >= 1440 and len(cards) <= 3:
        assert all(bottom <= height for _, _, bottom, _ in cards), cards            # all three on the first screen
    shot = tmp_path / f"shot-{width}.png"
    opened = tmp_path / f"opened-{width}.html"
    # the screenshot: the whole page unfolded, or (a page too long for one bitmap) its first screen as it opens
    opened.write_text(page.replace("</body>", OPEN + "</body>") if unfold else page)
    r = subprocess.run([exe, *FLAGS, f"--user-data-dir={tmp_path / f'profile-s{width}'}",
                        f"--window-size={width},{int(probe['height']) + 50 if unfold else height}", f"--screenshot={shot}",
                        opened.as_uri()], capture_output=True, text=True, timeout=180)
    if not unfold:
        boxes = [b for b in boxes if b["y"] + b["h"] <= height]
    assert shot.exists(), r.stderr[-2000:]
    im = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    for b in boxes:
        crop = im[int(b["y"]):int(b["y"] + b["h"]), int(b["x"]):int(b["x"] + b["w"])]
        inked = (crop.min(axis=2) < 200).mean()
        colours = {tuple(c) for c in crop[::3, ::3].reshape(-1, 3) if max(c) - min(c) > 60}
        assert inked > 0.01 and len(colours) >= 2, (width, b["name"], inked, len(colours))   # drawn, in colour
    return probe


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("width,height", [(800, 1200), (1440, 900)])
def test_readme_report_in_chromium(readme_report, tmp_path, width, height):
    check_in_browser(readme_report[0], tmp_path, width, len(README_CHARTS), height)


@pytest.fixture(scope="module")
def pud_report(tmp_path_factory, shared_module):
    """Ten pretrained tokenizers on PUD en/zh/ja/ko, two of which lose text (t5, an English BERT)."""
    shared = shared_module
    T = shared / "tokenizers"
    specs = [f"tiktoken:{T}/cl100k_base/cl100k_base.tiktoken", f"tiktoken:{T}/o200k_base/o200k_base.tiktoken",
             f"tiktoken:{T}/r50k_base/r50k_base.tiktoken", f"tiktoken:{T}/llama3/tokenizer.model?pattern=llama3",
             f"hf:{T}/qwen3/tokenizer.json", f"hf:{T}/deepseek-v3/deepseek_tokenizer.json",
             f"spm:{T}/llama2/tokenizer.model", f"spm:{T}/t5/spiece.model",
             f"wordpiece:{T}/bert-base-cased/vocab.txt", f"wordpiece:{T}/bert-base-multilingual-cased/vocab.txt"]
    d = tmp_path_factory.mktemp("pud")
    out = d / "pud.html"
    args = ["report", "--corpus", str(shared / "corpora/ud-pud"), "--languages", "en,zh,ja,ko",
            *sum((["-t", s] for s in specs), []), "--out", str(out), "--quiet"]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(args) == 0
    return out


@pytest.mark.slow
def test_pud_report_answers(pud_report):
    page = pud_report.read_text()
    ans = _answers(page)
    assert re.search(r"the lowest training cost for this mix \(\$\S+ for the volume, [\d.]+ tokens per character of the "
                     r"mix: content en 25% · "
                     r"zh 25% · ja 25% · ko 25% = characters en \d+% · zh \d+% · ja \d+% · ko \d+%", ans["tokenizer"]), \
        ans["tokenizer"]
    best = ans["tokenizer"].split(":")[0]
    assert "t5" not in best and "bert" not in best
    lossy = ans["tokenizer"].split("Not recommended, as they lose text:")[1]
    assert "spm/t5" in lossy and "bert-base-cased" in lossy
    assert re.search(r"[\d,]+ tokens for llama2-7b by Tao et al\.'s", ans["vocab"])   # no sweep: said so
    assert len(set(_charts(page))) == len(_charts(page))


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("width", [800, 1400])
def test_pud_report_in_chromium(pud_report, tmp_path, width):
    check_in_browser(pud_report, tmp_path, width, len(_charts(pud_report.read_text())))


@pytest.fixture(scope="module")
def many_report(tmp_path_factory):
    """24 tokenizers with long ids (one real comparison, relabelled with distinct ids, hashes and
    premiums): the charts must stay readable and inside the page."""
    base = compare("sample", ["tiktoken:cl100k_base"], n_boot=50)
    parts = []
    for i in range(24):
        tok = f"vendor-{i:02d}/a-rather-long-tokenizer-name-{i:02d}"
        k = 0.6 + 0.05 * i
        scaled = [pl.when(pl.col("language") == "zh").then(pl.col(c) * k).otherwise(pl.col(c)).alias(c)
                  for c in ("premium", "premium_ci_low", "premium_ci_high", "tokens_per_char", "tokens")]
        parts.append(base.with_columns(pl.lit(tok).alias("tokenizer"), *scaled)
                     .with_columns(pl.col("signature").str.replace(r"tok:[^|]+", f"tok:{tok}@{i:08x}")))
    c = pl.concat(parts)
    d = tmp_path_factory.mktemp("many")
    return report({"compare": c}, d / "many.html"), c


@pytest.mark.slow
def test_many_tokenizers_answer(many_report):
    out, c = many_report
    page = out.read_text()
    best = c.filter(pl.col("language") == "zh").sort("tokens_per_char")["tokenizer"][0]
    assert _answers(page)["tokenizer"].startswith(best + ":")
    assert len(_charts(page)) >= 3


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("width", [800, 1400])
def test_many_tokenizers_in_chromium(many_report, tmp_path, width):
    check_in_browser(many_report[0], tmp_path, width, len(_charts(many_report[0].read_text())))


@pytest.mark.slow
def test_cost_of_another_tokenizer_with_the_same_id_is_refused(tmp_path):
    """A cost file priced from a different run's ``train/bpe-1500`` next to this comparison."""
    a = compare("sample", ["train:bpe:1500"], n_boot=50)
    b = compare("sample", ["train:bpe:1500?heldout=0.2"], n_boot=50)
    pa, pk = tmp_path / "cmp.csv", tmp_path / "cost.json"
    write_table(a, pa)
    write_table(project(b, preset("llama2-7b"), gpu("h100-sxm"), train_tokens=2e12), pk)
    with pytest.raises(TokstatError, match=r"both called 'train/bpe-1500' in the compare and cost results"):
        report([pa, pk], tmp_path / "r.html")
    write_table(project(a, preset("llama2-7b"), gpu("h100-sxm"), train_tokens=2e12), pk)
    assert report([pa, pk], tmp_path / "r.html").exists()       # its own cost: fine


@pytest.mark.slow
def test_report_without_a_pivot(tmp_path):
    """compare --pivot none: no premium anywhere, the tokenizer answer by tokens for the corpus's own
    character shares, which are the compare table's."""
    c = compare("sample", ["tiktoken:cl100k_base", "train:bpe:1500"], n_boot=10, pivot=None)
    page = report({"compare": c}, tmp_path / "r.html").read_text()
    chars = c.group_by("language").agg(pl.col("chars").max())
    share = dict(zip(chars["language"], chars["chars"] / chars["chars"].sum()))
    score = {t: sum(share[r["language"]] * r["tokens_per_char"] for r in g.iter_rows(named=True))
             for (t,), g in c.group_by("tokenizer")}
    best = min(score, key=score.get)
    assert _answers(page)["tokenizer"].startswith(f"{best}: the fewest tokens for this mix ({score[best]:.3f}")
    assert "premium" not in _charts(page) and "×" not in _answers(page)["tokenizer"]


def test_a_premium_without_an_interval_is_drawn(tmp_path):
    """A premium on too few segments to resample has no interval: its bar is drawn, the axis spans
    the longest bar (this was an internal error when no language had an interval)."""
    from tokstat.report.charts import bars

    c = compare("sample", ["train:bpe:1500"], n_boot=10)
    nulls = c.with_columns(pl.lit(None, dtype=pl.Float64).alias("premium_ci_low"),
                           pl.lit(None, dtype=pl.Float64).alias("premium_ci_high"))
    fig = bars(nulls, "premium", "premium", languages=["zh"], lo="premium_ci_low", hi="premium_ci_high", ref=1.0)
    ax = fig.axes[0]
    assert ax.get_xlim()[1] >= nulls.filter(pl.col("language") == "zh")["premium"][0]
    page = report({"compare": nulls}, tmp_path / "r.html").read_text()
    assert 'data-chart="premium"' in page


# ---------------------------------------------------------------- the charts' layout, checked on the figures

def _sweep_like(langs=("en", "ja", "ko", "zh"), sizes=(8000, 16000, 32000, 48000, 64000)):
    rows = []
    for i, lang in enumerate(langs):
        for k, v in enumerate(sizes):
            # ja and ko nearly equal: their end labels would sit on one another
            y = 0.9 - 0.05 * k + (0.001 if lang == "ko" else 0) + (0.3 if lang == "en" else 0) + 0.02 * i
            rows.append({"vocab_size": v, "language": lang, "tokens_per_char": y, "premium": 1 + 0.1 * i})
    return pl.DataFrame(rows)


def _label_boxes(ax):
    from matplotlib.text import Text

    ax.figure.canvas.draw()
    r = ax.figure.canvas.get_renderer()
    return {t.get_text(): Text.get_window_extent(t, r) for t in ax.texts}     # the text, not its leader line


def test_line_end_labels_never_overlap_and_ticks_never_collide():
    from tokstat.report.charts import sweep_curves

    fig = sweep_curves(_sweep_like())
    for ax in fig.axes:
        boxes = _label_boxes(ax)
        assert set(boxes) == {"en", "ja", "ko", "zh"}
        names = sorted(boxes)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                assert not boxes[a].overlaps(boxes[b]), (a, b)
        labels = [t.get_text() for t in ax.get_xticklabels()]
        assert "32k" in labels and "48k" not in labels and "64k" in labels   # 48k would touch 32k
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_a_language_has_one_colour_in_every_chart():
    """As the page draws them: the sweep with every language in the table's order, the histograms
    with the non-pivot languages first (another order), both from one mapping by language code."""
    import matplotlib.colors as mc
    import matplotlib.pyplot as plt

    from tokstat.report.charts import histograms, language_colours, sweep_curves

    colours = language_colours(["zh", "ko", "ja", "en"])
    assert colours == language_colours(["en", "ja", "ko", "zh"])       # the order given never matters
    fig = sweep_curves(_sweep_like(), colours)
    seen = {t.get_text(): mc.to_hex(t.get_color()) for t in fig.axes[0].texts}
    segs = pl.DataFrame({"tokenizer": ["t"] * 6, "language": ["zh", "zh", "ko", "ko", "en", "en"],
                         "chars": [5] * 6, "tokens": [3, 4, 5, 6, 2, 3]})
    fig2 = histograms(segs, "t", ["zh", "ko", "en"], colours)        # a subset, in another order
    hist = {p.get_label().split(" ")[0]: mc.to_hex(p.get_edgecolor()) for p in fig2.axes[0].patches}
    for lang in ("en", "ko", "zh"):
        assert seen[lang] == hist[lang] == colours[lang], lang
    plt.close(fig)
    plt.close(fig2)


def test_lossy_tokenizers_are_drawn_last_and_marked():
    import matplotlib.pyplot as plt

    from tokstat.report.charts import bars

    df = pl.DataFrame({"tokenizer": ["good/a", "lossy/t5", "good/b"], "language": ["zh"] * 3,
                       "premium": [1.5, 0.6, 1.2]})       # the lossy one has the "best" value
    fig = bars(df, "premium", "premium", languages=["zh"], bad={"lossy/t5"})
    ax = fig.axes[0]
    labels = {t.get_text(): y for t, y in zip(ax.get_yticklabels(), ax.get_yticks())}
    assert labels["lossy/t5 ⚠"] == min(labels.values())          # the bottom row, marked
    assert labels["good/b"] > labels["good/a"]                      # the others sorted, lowest on top
    plt.close(fig)


def test_extrapolated_stretches_of_the_plan_curves_are_dashed():
    import matplotlib.pyplot as plt

    from tokstat.report.charts import plan_curves

    m = preset("llama2-7b")
    sw = _sweep_like(("en", "zh"), (2000, 4000, 8000, 16000))
    plan = vocab_plan(sw, n_nv=non_embedding_params(m), d_model=m.d_model)
    fig = plan_curves(plan, sw)
    lines = [ln for ln in fig.axes[0].get_lines() if len(ln.get_xdata()) > 10]     # not the recommendation's rule
    solid = [ln for ln in lines if ln.get_linestyle() == "-" and np.isfinite(ln.get_xdata()).any()]
    dashed = [ln for ln in lines if ln.get_linestyle() == "--" and np.isfinite(ln.get_xdata()).any()]
    assert len(dashed) >= 3 and len(solid) >= 3                     # en, zh and the mix: fitted and extrapolated
    for ln in solid:
        x = np.asarray(ln.get_xdata(), dtype=float)
        x = x[np.isfinite(x)]
        if len(x) > 10:
            assert x.min() >= 2000 * 0.99 and x.max() <= 16000 * 1.01    # solid only over the swept sizes
    plt.close(fig)


def test_the_cost_table_neither_duplicates_the_premium_nor_clips_its_reasons():
    from tokstat.report.page import COST_COMPACT, table

    assert "premium" not in [c for c, _ in COST_COMPACT]
    df = pl.DataFrame({"tokenizer": ["hf/some-long-name-v2"], "language": ["zh"], "dollars": [1.0],
                       "not_recommended_because": ["unknown tokens on 12% of characters (over 1.0%): it loses text"]})
    html = str(table(df, COST_COMPACT))
    assert '<td class="why">' in html and "hf/<wbr>some-long-name-v2<wbr>" in html


def test_the_vocabulary_answer_is_reconciled_with_the_recommended_tokenizer():
    """What the recommended tokenizer and the recommended size each cost on the same mix: the
    tokenizer's tokens per character of the mix (its rows, the plan's character shares) against the
    plan's fitted curve at its answer, and the embedding tables' size ratio."""
    from tokstat.report.answers import verdict, vocab_answer

    m = preset("llama2-7b")
    sw = _sweep_like(("en", "zh"), (2000, 4000, 8000, 16000, 32000))
    plan = vocab_plan(sw, n_nv=non_embedding_params(m), d_model=m.d_model)
    c = pl.DataFrame({"tokenizer": ["big/t", "big/t"], "language": ["en", "zh"], "tokens_per_char": [0.22, 1.05],
                      "premium": [1.0, 1.5], "vocab_size": [128000, 128000], "unk_rate": [0.0, 0.0],
                      "roundtrip_rate": [1.0, 1.0]})
    v = verdict(c, None)
    a = vocab_answer(plan, "llama2-7b", c=c, v=v)
    # one value per quantity: the mix's character shares and the tokenizer's tokens per character
    # are the first card's (the choice's), and the plan's curves are weighted by the same shares
    from tokstat.vocabplan import Curve, mix_curve

    w = v.weights
    theirs = sum(x * {"en": 0.22, "zh": 1.05}[k] for k, x in w.items())
    assert theirs == pytest.approx(v.choice.tokens["big/t"])
    curves = {k: Curve(f["a"], f["b"], f["c"], f["r2"], tuple(f["swept_sizes"])) for k, f in plan.fit.items()}
    ours = float(mix_curve(curves, w)(plan.recommended_vocab_size))
    assert a.numbers["tokenizer_tpc"] == pytest.approx(theirs) and a.numbers["plan_tpc"] == pytest.approx(ours)
    text = str(a.html)
    assert "Against <b>big/t</b> (128,000 tokens)" in text
    assert f"{abs(1 - theirs / ours):.0%} {'fewer' if theirs < ours else 'more'} tokens" in text
    assert f"{128000 / plan.recommended_vocab_size:.1f}× as large" in text


def flores_size_table(n_lang: int = 200, n_tok: int = 20, seed: int = 0) -> pl.DataFrame:
    """A FLORES-200-size comparison (``n_lang`` languages × ``n_tok`` tokenizers) made from one real
    run on the bundled corpus: every row keeps the real columns, premiums and tokens per character
    drawn (seeded), the paired replicates scaled with them."""
    base = compare("sample", ["train:bpe:1500"], n_boot=50, workers=1, progress=False)
    en = base.filter(pl.col("language") == "en").row(0, named=True)
    zh = base.filter(pl.col("language") == "zh").row(0, named=True)
    rng = np.random.default_rng(seed)
    reps = np.array(en["tokens_per_char_boot"].split(), dtype=float) / en["tokens_per_char"]
    rows = []
    for t in range(n_tok):
        f = 1 + 0.05 * t
        for j in range(n_lang):
            lang = "en" if j == 0 else f"x{j:03d}"
            r = dict(en if j == 0 else zh, tokenizer=f"vendor{t:02d}/tokenizer-{t:02d}", language=lang)
            p = 1.0 if j == 0 else float(np.exp(rng.normal(0.4, 0.3))) * f
            r["premium"], r["premium_ci_low"], r["premium_ci_high"] = p, p * 0.97, p * 1.03
            r["tokens_per_char"] = en["tokens_per_char"] * f * (1 if j == 0 else p * 4)
            r["tokens_per_char_boot"] = " ".join(f"{x:.7g}" for x in reps * r["tokens_per_char"])
            r["signature"] = r["signature"].replace("bpe-1500", f"tokenizer-{t:02d}")
            rows.append(r)
    return pl.DataFrame(rows, schema=base.schema)


@pytest.fixture(scope="module")
def flores_report(tmp_path_factory):
    d = tmp_path_factory.mktemp("flores")
    c = flores_size_table()
    return report({"compare": c}, d / "flores.html"), c


@pytest.mark.slow
def test_flores_size_report_stays_a_page(flores_report):
    """200 languages × 20 tokenizers: the answers' charts draw the top of the ranking and the highest
    premiums, the evidence charts at most TOP_LANGUAGES panels of TOP_TOKENIZERS bars, every row in
    the tables, the page a few MB."""
    from tokstat.report.page import TOP_LANGUAGES, TOP_TOKENIZERS

    out, c = flores_report
    page = out.read_text()
    assert out.stat().st_size < 6_000_000
    assert 'id="filter"' in page and '<details class="evidence"' in page
    assert "top 12 of 20" in page and "12 highest of 199" in page
    assert f"The {TOP_LANGUAGES} highest of 199 languages" in page
    assert f"The {TOP_TOKENIZERS} best-ranked of 20 tokenizers" in page
    compact = re.search(r'id="table-compare">(.*?)</table>', page, re.S).group(1)
    assert compact.count("<tr") - 1 == c.filter(pl.col("language") != "en").height     # every row, filterable
    leads = _leads(page)
    assert set(leads) == {"tokenizer", "cost", "vocab"}
    assert leads["tokenizer"].startswith("Fewest tokens: vendor00/tokenizer-00 (")


def test_first_screen_sentences_are_short(readme_report):
    """Each answer on the first screen is one sentence of at most 40 words; the details are folded under it."""
    from tokstat.report.answers import words
    from tokstat.markup import Markup

    leads = _leads(readme_report[0].read_text())
    assert set(leads) == {"tokenizer", "cost", "vocab"}
    for k, s in leads.items():
        assert words(Markup(s)) <= 40, (k, s)
        assert s.count(". ") == 0 and s.endswith("."), (k, s)          # one sentence


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("width,height", [(800, 1200), (1440, 900)])
def test_flores_size_report_in_chromium(flores_report, tmp_path, width, height):
    """The bound the page states: as it opens, at most PAGE_HEIGHT_BOUND px tall at 1440 px
    (PAGE_HEIGHT_BOUND_NARROW at 800), no horizontal overflow, the three answers first."""
    from tokstat.report.page import PAGE_HEIGHT_BOUND, PAGE_HEIGHT_BOUND_NARROW

    probe = check_in_browser(flores_report[0], tmp_path, width, len(_charts(flores_report[0].read_text())), height,
                             unfold=False)
    bound = PAGE_HEIGHT_BOUND if width >= 1440 else PAGE_HEIGHT_BOUND_NARROW
    assert probe["first"]["height"] <= bound, probe["first"]
