"""The HTML report: self-contained, every chart rendered in a real browser (headless Chromium),
readable at laptop width, PNG charts; and result files it cannot use are refused."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest
from PIL import Image

from tokstat import compare, load_corpus
from tokstat.cost.hardware import gpu
from tokstat.cost.model import preset
from tokstat.cost.projection import project
from tokstat.errors import TokstatError
from tokstat.io import write_table
from tokstat.report import read_results, report
from tokstat.sweep import sweep

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--hide-scrollbars"]
WIDTH = 1366          # a laptop screen


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    d = tmp_path_factory.mktemp("results")
    c = load_corpus("sample")
    cmp = compare(c, ["train:bpe:1500", "train:spm-unigram:2000"], n_boot=200)
    sw = sweep(c, "bpe", [800, 1600], n_boot=200)
    cost = project(sw, preset("llama2-7b"), gpu("h100-sxm"), train_tokens=2e12, mix={"zh": 0.5, "en": 0.5})
    paths = [d / "compare.parquet", d / "sweep.csv", d / "cost.json"]
    for df, p in zip((cmp, sw, cost), paths):
        write_table(df, p)
    return paths


@pytest.fixture(scope="module")
def page(results, tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    out = report(results, d / "report.html", png=d / "png")
    return out, d / "png"


def test_report_is_self_contained(page):
    html = page[0].read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)      # nothing fetched from anywhere
    assert "<script" not in html and "<link" not in html
    assert html.count("<svg") == 6 and html.count('<figure class="chart') == 6
    for q in ("Which tokenizer?", "What does Chinese cost me?", "Which vocabulary size?"):
        assert q in html
    assert html.count("corpus:sample-zh-en@") >= 4                               # the signatures


def test_report_is_deterministic(results, tmp_path):
    a, b = report(results, tmp_path / "a.html"), report(results, tmp_path / "b.html")
    assert a.read_bytes() == b.read_bytes()


def test_png_charts(page):
    pngs = sorted(p.name for p in page[1].iterdir())
    assert pngs == sorted(f"{n}.png" for n in ("tokens_per_char", "premium", "continued_words", "split_chars",
                                               "sweep", "cost_multiplier"))
    for p in page[1].iterdir():
        im = np.asarray(Image.open(p).convert("RGB"))
        assert im.shape[1] >= 1000 and (im < 250).any(axis=2).mean() > 0.03, p    # 200 dpi, not blank


def test_unusable_results_are_refused(tmp_path):
    import polars as pl

    p = tmp_path / "x.csv"
    pl.DataFrame({"a": [1]}).write_csv(p)
    with pytest.raises(TokstatError, match=r"x\.csv: not a tokstat compare, sweep or cost result"):
        read_results([p])
    with pytest.raises(TokstatError, match="result file not found"):
        read_results([tmp_path / "none.parquet"])


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
  const boxes = [...document.querySelectorAll('figure.chart svg')].map(s => {
    const r = s.getBoundingClientRect();
    return {name: s.parentElement.dataset.chart, x: r.left, y: r.top + scrollY, w: r.width, h: r.height};
  });
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify({boxes, errors: window.__errors,
                                    scrollWidth: document.documentElement.scrollWidth,
                                    height: document.documentElement.scrollHeight});
  document.body.appendChild(out);
});
</script>"""


@pytest.mark.slow
@pytest.mark.browser
def test_report_renders_in_chromium(page, tmp_path):
    exe = chromium()
    probed = tmp_path / "probed.html"
    probed.write_text(page[0].read_text().replace("</body>", PROBE + "</body>"))
    url = probed.as_uri()
    dom = subprocess.run([exe, *FLAGS, f"--window-size={WIDTH},900", "--virtual-time-budget=5000", "--dump-dom", url],
                         capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="probe">(.*?)</pre>', dom.stdout, re.S)
    assert m, dom.stderr[-2000:]
    probe = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert probe["errors"] == []
    assert probe["scrollWidth"] <= WIDTH                     # no sideways scrolling on a laptop screen
    boxes = probe["boxes"]
    assert len(boxes) == 6 and all(b["w"] > 300 and b["h"] > 150 for b in boxes), boxes
    shot = tmp_path / "shot.png"
    r = subprocess.run([exe, *FLAGS, f"--window-size={WIDTH},{int(probe['height']) + 50}", "--enable-logging=stderr",
                        "--v=0", f"--screenshot={shot}", page[0].as_uri()], capture_output=True, text=True, timeout=120)
    assert shot.exists(), r.stderr[-2000:]
    assert not re.search(r"CONSOLE.*(Uncaught|Error)", r.stderr), r.stderr[-2000:]
    im = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    for b in boxes:
        crop = im[int(b["y"]):int(b["y"] + b["h"]), int(b["x"]):int(b["x"] + b["w"])]
        inked = (crop.min(axis=2) < 200).mean()
        colours = {tuple(c) for c in crop[::4, ::4].reshape(-1, 3) if max(c) - min(c) > 60}
        assert inked > 0.02 and len(colours) >= 2, (b["name"], inked, len(colours))   # bars/lines drawn in colour
